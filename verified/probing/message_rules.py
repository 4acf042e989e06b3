"""How an error message is normalised and compared: one table of rules, for the build and the browser.

A message a reader pastes differs from the one a probe saw in what the input decides: numbers,
``64x512`` shapes, ``[3, 4]`` sizes, ``20.00 MiB``, ``cuda:0``, ``0x7f3a…`` addresses, file
paths, quoted names (and how many a list holds), the class of a loaded module.
``RULES`` replaces each with a placeholder, in order; the same table is
written into the built site as data (``rules_for_browser``) and applied there by
``verified/site/static/verified-errors.js``, so the index is grouped and the reader's text is read
by the same rules (a test runs both on the same messages).

Matching ranks index entries by how much they share with the normalised query, not by
whether every word is present: tokens are the words and placeholders of the normalised text,
each weighted by its rarity over the index (inverse document frequency); the score is

    0.6 * (weight of shared tokens / weight of the query's tokens)        how much of the query is explained
  + 0.4 * (cosine of the two token sets, same weights)                      how close the entry is, not only contains
  + 0.2 * (shared adjacent token pairs / the query's pairs)                 word order
  + 0.05 when the exception type named in the query is the entry's

so a number the probes never saw (it is a placeholder on both sides), an extra word or a
missing clause lowers a score but never empties the result.

Why this and not a well-kept tool: Pagefind (a static-site search) needs its own binary at
build time and indexes words, so ``64x512`` or ``20.00`` would still be unknown words to it;
Sphinx's own searchtools.js requires every query word in its index (the reason a pasted
message found nothing) and cannot be taught placeholders. The messages are a few hundred short
texts with structure the rules know; a matcher of about a hundred lines over them, run from
Sphinx's search page (its results are kept below), needs no binary, no network and no new
dependency.
"""
import json
import math
import re

# (name, pattern, replacement): patterns use only what Python's `re` and JavaScript's RegExp
# read alike (no possessive quantifiers, no inline flags; lookbehind is in both).
RULES = [
    ("terminal escapes", r"\x1b\[[0-9;]*[A-Za-z]", ""),
    # what a logger puts before the message: `[rank1]:`, `W0110 12:27:06.332000 158 torch/x.py:12] `,
    # `[E626 06:24:44.903 ProcessGroupNCCL.cpp:616] `, a frame counter `[2/8] `
    ("log prefixes", r"^\s*(?:\[rank\d+\]:\s*)?(?:\[?[IWEF]\d{3,4} [\d:.]+ (?:\d+ )?[^\]\s]+\]\s*)?(?:\[[\d/_]+\]\s*)?",
     ""),
    # a type named ...Error (etc.), or any class with its module (`torch._dynamo.exc.Unsupported:`)
    ("exception type", r"^\s*(?:(?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Z][A-Za-z0-9_]*"
                       r"(?:Error|Exception|Warning|Interrupt|Failed|Unsupported)"
                       r"|(?:[A-Za-z_][A-Za-z0-9_]*\.)+[A-Z][A-Za-z0-9_]*)\s*:\s*", ""),
    ("tensor size", r"torch\.Size\(\[[^\]]*\]\)", "‹shape›"),
    ("sizes with units", r"(?<![\w.])\d+(?:\.\d+)?\s?(?:[KMGTP]i?B|bytes|B)(?![\w])", "‹bytes›"),
    # an address has a letter or six digits: the "0x7" of "10x7" is a shape, and so is "0x5"
    ("hex addresses", r"(?<![\w.])0x(?:[0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*|[0-9]{6,})(?![\w])", "‹address›"),
    ("NxM shapes", r"(?<![\w.])\d+(?:x\d+)+(?![\w.])", "‹shape›"),
    ("devices", r"(?<![\w.])(?:cuda|cpu|mps|xpu|hpu|xla|meta)(?::\d+)?(?![\w])", "‹device›"),
    ("IP addresses", r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?![\w.])", "‹address›"),
    ("paths", r"(?:(?<![\w.\/])(?:~|\.{1,2})?/(?:[\w.+-]+/)*[\w.+-]+|[A-Za-z]:\\(?:[\w.+ -]+\\)*[\w.+-]+)",
     "‹path›"),
    # a source file named from a folder: `torch/_dynamo/eval_frame.py`, `model\\layers.py`
    ("relative source paths", r"(?<![\w./\\‹])(?:[\w.+-]+[/\\])+[\w+-]+\.(?:py|pyi|cpp|cc|cu|cuh|h|hpp|c)(?![\w])",
     "‹path›"),
    ("integer lists", r"[\[(]\s*-?\d+(?:\s*,\s*-?\d+)*\s*,?\s*[\])]", "‹shape›"),
    ("empty lists", r"\[\s*\]|(?<![\w])\(\s*\)", "‹shape›"),
    ("quoted names", r"'\w[\w.:<>-]*'|\"\w[\w.:<>-]*\"|`\w[\w.:<>-]*`", "‹name›"),
    # how many names a list holds is the input's: `Missing key(s) in state_dict: "a", "b"` is one message
    ("lists of names", r"‹name›(?:\s*,\s*‹name›)+", "‹name›"),
    # the class of the module whose state_dict was loaded: `for ResNet:` and `for Linear:` are one message
    ("loaded module's class", r"(?<=state_dict for )[A-Za-z_]\w*(?=:)", "‹name›"),
    ("numbers", r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?:ms|s|us|ns|%|D)?(?![\w])", "‹n›"),
    ("spaces", r"\s+", " "),
]
_COMPILED = [(name, re.compile(pattern, re.ASCII), replacement) for name, pattern, replacement in RULES]
TOKEN = re.compile(r"‹[a-z]+›|[a-z0-9_]+")
_BY_NAME = {name: compiled for name, compiled, _ in _COMPILED}
LOG_PREFIX, TYPE_PREFIX = _BY_NAME["log prefixes"], _BY_NAME["exception type"]
WEIGHTS = {"contained": 0.6, "cosine": 0.4, "order": 0.2, "type": 0.05}


def normalise(message):
    """The message with what the input decides replaced by placeholders, spaces collapsed:
    'mat1 and mat2 shapes cannot be multiplied (‹shape› and ‹shape›)'."""
    text = message
    for _, pattern, replacement in _COMPILED:
        text = pattern.sub(replacement, text)
    return text.strip()


def query_type(text):
    """The exception or warning type a pasted line starts with ('torch.OutOfMemoryError'), or ''."""
    found = TYPE_PREFIX.match(LOG_PREFIX.sub("", text.strip(), count=1))
    return found.group(0).strip().rstrip(":").strip() if found else ""


def tokens(text):
    """The lowercase words and placeholders of a normalised text, in order."""
    return TOKEN.findall(text.lower())


def idf(token_lists):
    """{token: weight}: rarer tokens over the index weigh more (log(1 + N / df))."""
    df = {}
    for toks in token_lists:
        for token in set(toks):
            df[token] = df.get(token, 0) + 1
    total = len(token_lists)
    return {token: math.log(1 + total / count) for token, count in df.items()}


def _pairs(toks):
    return {(a, b) for a, b in zip(toks, toks[1:])}


def score(query_tokens, query_kind, entry_tokens, entry_type, weights):
    """The similarity of a query to an entry (module docstring); 0 when they share nothing."""
    default = max(weights.values(), default=1.0)
    query, entry = set(query_tokens), set(entry_tokens)
    shared = query & entry
    if not shared:
        return 0.0
    w = lambda token: weights.get(token, default)  # noqa: E731 - a word the index never saw is rare
    shared_w, query_w, entry_w = (sum(map(w, s)) for s in (shared, query, entry))
    pairs = _pairs(query_tokens)
    order = len(pairs & _pairs(entry_tokens)) / len(pairs) if pairs else 0.0
    value = WEIGHTS["contained"] * shared_w / query_w + WEIGHTS["cosine"] * shared_w / math.sqrt(query_w * entry_w) \
        + WEIGHTS["order"] * order
    if query_kind and query_kind == entry_type:
        value += WEIGHTS["type"]
    return value


def rank(query, entries):
    """[(score, entry)] best first, for entries with "type" and "normalised"; the scoring the
    browser does, for tests and for the build's own checks."""
    lists = [tokens(e["normalised"]) for e in entries]
    weights = idf(lists)
    query_tokens, kind = tokens(normalise(query)), query_type(query)
    scored = [(score(query_tokens, kind, toks, e["type"], weights), e) for toks, e in zip(lists, entries)]
    return sorted((s for s in scored if s[0] > 0), key=lambda s: -s[0])


def rules_for_browser():
    """The rules and weights as data for verified-errors.js (JSON-able)."""
    return {"rules": [{"name": name, "pattern": pattern, "replacement": replacement}
                      for name, pattern, replacement in RULES],
            "token": TOKEN.pattern, "weights": WEIGHTS}


def rules_json():
    return json.dumps(rules_for_browser(), ensure_ascii=False)
