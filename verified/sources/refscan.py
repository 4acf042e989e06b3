"""Every source reference written in the pages, read from the Markdown the way the build reads it.

The version matrix resolves these against other torch versions without building the site.
A page is cut into blocks by its fences. A code fence (```` ``` ```` or `~~~`, or a code
directive such as ```` ```{literalinclude} ````) is code: nothing in it is a reference. A
directive fence (`:::{claim}`, ```` ```{glossary} ````) is not code: its body is text, a
`claim`'s `:src:` option holds references, and each line of a `source-map` is one. In text,
a `{src}` role is found with every other inline code span skipped, so an example quoted in
backticks is not read. Each reference's text is read by verified.sources.references, the parser the
build uses.
"""
import re
from pathlib import Path

from verified.sources import references

_FENCE = re.compile(r"^\s*(?P<fence>`{3,}|~{3,}|:{3,})\s*(?P<info>.*?)\s*$")
_DIRECTIVE = re.compile(r"^\{(?P<name>[\w:.+-]+)\}")
_OPTION = re.compile(r"^\s*:(?P<name>[\w-]+):\s*(?P<value>.*?)\s*$")
_YAML_OPTION = re.compile(r"^\s*(?P<name>[\w-]+):\s*(?P<value>.*?)\s*$")
_TICKS = re.compile(r"`+")
_ROLE_NAME = re.compile(r"\{(?P<name>[\w:.+-]+)\}$")
_MAX_ROLE_NAME = 64

CODE_DIRECTIVES = {"code", "code-block", "code-cell", "sourcecode", "literalinclude", "raw", "math"}
TEXT, CODE, CLAIM, SOURCE_MAP = "text", "code", "claim", "source-map"


def references_in(text):
    """Reference texts (`path [symbol]`) in one page, in order, without duplicates."""
    return list(dict.fromkeys(references.canonical(ref) for _, ref in reference_sites(text)))


def site_references(docs_dir):
    """{reference text: [pages]} over every Markdown page under `docs_dir`."""
    pages = {}
    for page in sorted(Path(docs_dir).rglob("*.md")):
        for ref in references_in(page.read_text()):
            pages.setdefault(ref, []).append(page.relative_to(docs_dir).with_suffix("").as_posix())
    return pages


def reference_sites(text):
    """(1-based line, reference text) of every reference in a page, in order."""
    fences = []  # open fences, innermost last: (character, length, kind)
    paragraph = []  # (line, text) of the text lines not yet searched for roles
    options = None  # the open claim's option lines are still being read: "colon" or "yaml"
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        fence = _FENCE.match(line)
        kind = fences[-1][2] if fences else TEXT
        if fence and fences and _closes(fence, fences[-1]):
            found.extend(_roles(paragraph))
            paragraph, options = [], None
            fences.pop()
            continue
        if kind == CODE:
            continue
        if options is not None:
            value, options = _option(line, options)
            if value is not None:
                found.extend((number, ref) for ref in references.option_references(value))
                continue
        if fence and _opens(fence):
            found.extend(_roles(paragraph))
            paragraph = []
            opened = _kind(fence)
            fences.append((fence["fence"][0], len(fence["fence"]), opened))
            options = "start" if opened == CLAIM else None
            continue
        if kind == SOURCE_MAP:
            row = references.source_map_row(line) if line.strip() else None
            if row:
                found.append((number, row[0]))
        elif line.strip():
            paragraph.append((number, line))
        else:
            found.extend(_roles(paragraph))
            paragraph = []
    found.extend(_roles(paragraph))
    return found


def _opens(fence):
    """A fence line that opens a block: a colon fence must name a directive; a backtick
    fence's info string has no backtick."""
    if fence["fence"][0] == ":":
        return bool(_DIRECTIVE.match(fence["info"]))
    return not (fence["fence"][0] == "`" and "`" in fence["info"])


def _closes(fence, open_fence):
    character, length, _ = open_fence
    return not fence["info"] and fence["fence"][0] == character and len(fence["fence"]) >= length


def _kind(fence):
    directive = _DIRECTIVE.match(fence["info"])
    if directive is None:
        return CODE  # a plain ``` or ~~~ block
    name = directive["name"]
    if name in CODE_DIRECTIVES:
        return CODE
    return {"claim": CLAIM, "source-map": SOURCE_MAP}.get(name, TEXT)


def _option(line, state):
    """The `src` value on a claim's option line (or None), and the option state after it.

    Options are `:name: value` lines right after the opening fence, or a `---` YAML block there."""
    if state == "start" and line.strip() == "---":
        return None, "yaml"
    if state == "yaml":
        if line.strip() == "---":
            return "", None
        option = _YAML_OPTION.match(line)
        return (option["value"] if option and option["name"] == "src" else ""), "yaml"
    option = _OPTION.match(line)
    if option is None:
        return None, None
    return (option["value"] if option["name"] == "src" else ""), "colon"


def _roles(lines):
    """(line, reference text) of each `{src}` role in a run of text lines (a paragraph: an
    inline code span may cross its lines)."""
    text = "\n".join(line for _, line in lines)
    first = lines[0][0] if lines else 0
    found = []
    at = 0
    while (ticks := _TICKS.search(text, at)) is not None:
        if ticks.start() > 0 and text[ticks.start() - 1] == "\\":  # an escaped backtick is plain text
            at = ticks.start() + 1
            continue
        closing = re.compile(rf"(?<!`){ticks.group()}(?!`)").search(text, ticks.end())
        if closing is None:  # no closing run of the same length: the backticks are plain text
            at = ticks.end()
            continue
        role = _ROLE_NAME.search(text[max(0, ticks.start() - _MAX_ROLE_NAME):ticks.start()])
        if role is not None and role["name"] == "src":
            _, target = references.role_parts(text[ticks.end():closing.start()])
            found.append((first + text.count("\n", 0, ticks.start()), target))
        at = closing.end()
    return found
