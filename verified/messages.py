"""The error-message index: one entry per message the probes observed (verified.message_capture).

"""
import hashlib
import re

from verified.message_capture import ERROR, WARNING  # noqa: F401 - the kinds, for the renderers

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
