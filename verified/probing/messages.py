"""The error and warning messages probes check, for the site's error-message index.

A probe checks a message with ``pytest.raises(Type, match=...)`` or ``pytest.warns(Type,
match=...)``. While probes run, ``record_checked_messages()`` has pytest's own context
managers note every message such a block matched, exactly as torch produced it; the
plugin sends those with the probe's entry (``messages`` in the results file). A block
without ``match=`` checks only a type, and an exception from a ``raise`` in the probe's own
code carries the probe's text, not PyTorch's: neither is recorded.

pytest offers no hook for what a ``raises`` block caught, so its two ``__exit__`` methods are
wrapped (pytest 9.2, pinned in requirements.txt).
"""
import builtins
import hashlib
import linecache
import os
import re
import sys

from _pytest.raises import RaisesExc
from _pytest.recwarn import WarningsChecker

ERROR, WARNING = "error", "warning"
checked = []  # in a probe's process: {"kind", "type", "message"} per matched message, in order


def type_name(cls):
    """`RuntimeError` for builtins, the public dotted name otherwise (`torch.OutOfMemoryError`)."""
    if getattr(builtins, cls.__name__, None) is cls:
        return cls.__name__
    module = cls.__module__
    public = sys.modules.get(module.lstrip("_"))
    if module.startswith("_") and getattr(public, cls.__name__, None) is cls:  # _pickle -> pickle
        module = module.lstrip("_")
    if module.startswith("torch."):  # torch's exceptions are exported at the top level
        import torch

        if getattr(torch, cls.__name__, None) is cls:
            module = "torch"
    return f"{module}.{cls.__qualname__}"


def _note(kind, cls, message):
    record = {"kind": kind, "type": type_name(cls), "message": message}
    if record not in checked:
        checked.append(record)


def _raised_by_own_code(traceback):
    """Whether the exception came from a `raise` statement outside torch: the probe's own text
    (a test module raising "boom"), not a message of PyTorch's."""
    while traceback.tb_next is not None:
        traceback = traceback.tb_next
    filename = traceback.tb_frame.f_code.co_filename
    torch = sys.modules.get("torch")
    inside_torch = torch is not None and filename.startswith(os.path.dirname(torch.__file__) + os.sep)
    return not inside_torch and linecache.getline(filename, traceback.tb_lineno).lstrip().startswith("raise ")


def record_checked_messages():
    """Wrap pytest.raises / pytest.warns so that the messages they match with `match=` are noted."""
    if getattr(RaisesExc.__exit__, "verified_wrapped", False):
        return
    raises_exit, warns_exit = RaisesExc.__exit__, WarningsChecker.__exit__

    def exit_raises(self, exc_type, exc_val, exc_tb):
        __tracebackhide__ = True
        suppressed = raises_exit(self, exc_type, exc_val, exc_tb)
        if suppressed and self.match is not None and not _raised_by_own_code(exc_tb):
            _note(ERROR, exc_type, str(exc_val))
        return suppressed

    def exit_warns(self, exc_type, exc_val, exc_tb):
        __tracebackhide__ = True
        warns_exit(self, exc_type, exc_val, exc_tb)  # raises when no warning matched
        if exc_val is None and self.match_expr is not None:
            for warning in self:
                if self.matches(warning):
                    _note(WARNING, warning.category, str(warning.message))

    exit_raises.verified_wrapped = exit_warns.verified_wrapped = True
    RaisesExc.__exit__, WarningsChecker.__exit__ = exit_raises, exit_warns


# ---------------------------------------------------------------- one entry per message

ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # torch.load's message sets bold with these

_NORMALISERS = [
    (ANSI_ESCAPE, ""),
    (re.compile(r"0x[0-9a-fA-F]+"), "0x…"),                                 # addresses
    (re.compile(r"torch\.Size\(\[[^\]]*\]\)"), "torch.Size([…])"),           # shapes
    (re.compile(r"\[\s*-?\d+(?:\s*,\s*-?\d+)*\s*,?\s*\]"), "[…]"),            # [2, 3]
    (re.compile(r"\(\s*-?\d+(?:\s*,\s*-?\d+)+\s*,?\s*\)"), "(…)"),            # (2, 3)
    (re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w])"), "N"),  # numbers
    (re.compile(r"\s+"), " "),
]


def normalise(message):
    """The message with addresses, shapes and numbers replaced, so one message seen with two
    inputs is one index entry: 'size of tensor a (N) must match the size of tensor b (N)'."""
    text = message.strip()
    for pattern, replacement in _NORMALISERS:
        text = pattern.sub(replacement, text)
    return text


def one_line(message, limit=300):
    """What the index shows of a message: its lines joined, spaces collapsed, at most `limit` characters."""
    line = " ".join(ANSI_ESCAPE.sub("", message).split())
    return line if len(line) <= limit else line[:limit - 1].rstrip() + "…"


def index(entries, claim_pages):
    """The error-message index from the probes' entries: one item per (kind, type, normalised
    message), with the messages as produced, the claims whose probes checked them and their
    pages. `claim_pages` maps each claim on the site to its page; claims not on it are left out."""
    groups = {}
    for entry in entries:
        claims = [c for c in entry.get("claims", []) if c in claim_pages]
        for record in entry.get("messages", []):
            key = (record["kind"], record["type"], normalise(record["message"]))
            item = groups.setdefault(key, {"kind": key[0], "type": key[1], "normalised": key[2],
                                           "examples": set(), "claims": set(), "probes": set()})
            item["examples"].add(record["message"])
            item["claims"].update(claims)
            item["probes"].add(f"{entry['file']}::{entry['function']}")
    items = []
    for item in groups.values():
        if not item["claims"]:
            continue
        examples = sorted(item["examples"], key=lambda m: (len(m), m))
        items.append({"message": examples[0], "type": item["type"], "kind": item["kind"],
                      "normalised": item["normalised"], "variants": examples[1:],
                      "claims": sorted(item["claims"]), "probes": sorted(item["probes"]),
                      "pages": sorted({claim_pages[c] for c in item["claims"]})})
    return sorted(items, key=lambda i: (i["kind"], i["type"], i["normalised"].lower()))


def anchor(item):
    """A stable HTML id for an index item, from its kind, type and normalised message."""
    digest = hashlib.sha256(f"{item['kind']}|{item['type']}|{item['normalised']}".encode()).hexdigest()[:10]
    return f"message-{digest}"
