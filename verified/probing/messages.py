"""The error-message index: one entry per message the probes observed (verified.probing.message_capture).

Messages that differ only in what the input decides (verified.probing.message_rules) are one entry.
An entry keeps every text as torch printed it, whole; the claims whose probes observed it,
their pages, and the cause and fix those claims give (``:cause:``/``:fix:``); and where the
message is raised, when that is known: the ``raise`` line in torch's Python files the
traceback named, or, for a message from C++, the line the raise-site oracle read off this
build (verified.sources.raise_sites).
"""
import ast
import hashlib
import re

from verified.probing import message_rules
from verified.probing.message_capture import ERROR, WARNING  # noqa: F401 - the kinds, for the renderers

ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # torch.load's message sets bold with these
# what follows the message itself when C++ stack traces are shown (TORCH_SHOW_CPP_STACKTRACES=1)
CPP_TRAILER = re.compile(r"\n?Exception raised from .*|\s*\(no backtrace available\)", re.S)


def normalise(message):
    """The message as the index groups it (verified.probing.message_rules.normalise)."""
    return message_rules.normalise(message)


def one_line(message):
    """A message on one line: its lines joined, terminal escapes dropped, spaces collapsed. Whole."""
    return " ".join(ANSI_ESCAPE.sub("", message).split())


def index(entries, claims, pin=None, cpp_sites=()):
    """The error-message index from the probes' entries: one item per (kind, type, normalised
    message), with the messages as produced, the claims whose probes observed them, their pages,
    causes and fixes, and the raise site.

    `claims` maps each claim on the site to its Claim (docname, cause, fix); claims not on it
    are left out. `pin(path, line)` gives the pinned URL of a line of torch's repository.
    `cpp_sites` are [(message, {"path", "line", "function"})] from the raise-site oracle."""
    groups = {}
    for entry in entries:
        entry_claims = [c for c in entry.get("claims", []) if c in claims]
        for record in entry.get("messages", []):
            key = (record["kind"], record["type"], normalise(record["message"]))
            item = groups.setdefault(key, {"examples": set(), "claims": set(), "probes": set(), "raised_at": None})
            item["examples"].add(record["message"])
            item["claims"].update(entry_claims)
            item["probes"].add(f"{entry['file']}::{entry['function']}")
            if record.get("raised_at") and item["raised_at"] is None:
                item["raised_at"] = dict(record["raised_at"], how="python")
    oracle = {normalise(CPP_TRAILER.sub("", message)): site for message, site in cpp_sites}
    items = []
    for (kind, type_name, normalised), item in groups.items():
        if not item["claims"]:
            continue
        examples = sorted(item["examples"], key=lambda m: (len(m), m))
        raised_at = item["raised_at"] or (dict(oracle[normalised], how="c++") if normalised in oracle else None)
        if raised_at and pin:
            raised_at["url"] = pin(raised_at["path"], raised_at["line"])
        ids = sorted(item["claims"])
        items.append({"message": examples[0], "type": type_name, "kind": kind, "normalised": normalised,
                      "variants": examples[1:], "claims": ids, "probes": sorted(item["probes"]),
                      "pages": sorted({claims[c].docname for c in ids}),
                      "causes": [{"claim": c, "cause": claims[c].cause, "fix": claims[c].fix}
                                 for c in ids if claims[c].cause or claims[c].fix],
                      "raised_at": raised_at})
    return sorted(items, key=lambda i: (i["kind"], i["type"], i["normalised"].lower()))


def anchor(item):
    """A stable HTML id for an index item, from its kind, type and normalised message."""
    digest = hashlib.sha256(f"{item['kind']}|{item['type']}|{item['normalised']}".encode()).hexdigest()[:10]
    return f"message-{digest}"


# ---------------------------------------------------------------- claims that quote a message

QUOTED = re.compile(r"`((?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Warning|Exception)): ([^`]{8,})`")


def quoted_messages(text):
    """[(type, text)] of each message a claim's source quotes as ``Type: text`` in backticks
    (a quote that wraps onto the next line is joined)."""
    return [(m.group(1), " ".join(m.group(2).split())) for m in QUOTED.finditer(text)]


# in a quote, what stands for any text: "...", "…", a <placeholder>, a bare N (a number), and a
# bare ns, the pages' name for an operator's namespace (`ns::foo`, `ns.foo.default`), which a
# probe spells with a namespace of its own (each test defines a fresh one)
QUOTE_GAP = re.compile(r"\.\.\.|…|<[^<>]*>|(?<![\w.])(?:N|ns)(?![\w])")


def _quote_parts(text):
    """The normalised, lowercase pieces of a quote between its gaps. The quote is normalised
    whole first, as a message is, so that `'f.<locals>.<lambda>'` is one quoted name, not text
    around two placeholders; then each piece again, for what a gap had kept from its rule
    (the path in `at .../gloo/context.cc:...`)."""
    pieces = QUOTE_GAP.split(normalise(text))
    return [normalise(part).lower().strip(" .,:'\"`") for part in pieces if part.strip(" .,:'\"`")]


def quotes_without_entry(claim_quotes, items, ran=None):
    """The claims whose quoted messages have no index entry listing them: [(claim id, type, text)].
    `claim_quotes`: {claim id: [(type, text)]}; `ran`: the claims whose probes ran here (others,
    CUDA cases on a CPU machine, cannot have observed anything). A quote matches an entry of its
    claim whose message holds every piece of the quote (the text between its gaps, QUOTE_GAP),
    in order, once both are normalised; the type is not compared."""
    by_claim = {}
    for item in items:
        for claim_id in item["claims"]:
            by_claim.setdefault(claim_id, []).append(item)

    def readings(message):
        """The message as printed and, for a KeyError's (the repr of its text), the text itself:
        a page may quote either `KeyError: 'param_groups'` or `KeyError: can't contain "."`."""
        yield message
        if message[:1] in "'\"" and message[-1:] == message[:1]:
            try:
                yield ast.literal_eval(message)
            except (ValueError, SyntaxError):
                pass

    def holds(message, parts):
        text, at = normalise(one_line(message)).lower(), 0
        for part in parts:
            at = text.find(part, at)
            if at < 0:
                return False
            at += len(part)
        return True

    missing = []
    for claim_id, quotes in sorted(claim_quotes.items()):
        if ran is not None and claim_id not in ran:
            continue
        for type_name, text in quotes:
            parts = _quote_parts(text)
            if not any(holds(reading, parts) for i in by_claim.get(claim_id, [])
                       for m in [i["message"], *i["variants"]] for reading in readings(m)):
                missing.append((claim_id, type_name, text))
    return missing
