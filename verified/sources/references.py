"""The text of a source reference, the one parser of it for the build and for `make matrix`.

A reference is `path` or `path symbol`, the path as it is in the PyTorch repository. Pages
write it in three places, each read here:

- a `{src}` role: `path symbol`, or `title <path symbol>`;
- a claim's `:src:` option: references separated by `;`;
- a `source-map` line: `path | symbol | what it does` (the symbol may be empty).
"""
import re
from dataclasses import dataclass

_PATH = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./+-]*$")
_SYMBOL = re.compile(r"^[A-Za-z_~][\w:.~<>@\[\]-]*$")


class MalformedReference(ValueError):
    """The text of a reference is not `path` or `path symbol`."""


@dataclass(frozen=True)
class SourceRef:
    path: str
    symbol: str | None = None

    def __str__(self):
        return f"{self.path} {self.symbol}" if self.symbol else self.path


def parse_reference(text):
    """`"c10/core/TensorImpl.h TensorImpl"` -> SourceRef; raises MalformedReference."""
    parts = text.split()
    if not parts or len(parts) > 2:
        raise MalformedReference(f"malformed source reference {text!r}: expected 'path' or 'path symbol'")
    path = parts[0]
    if not _PATH.match(path) or ".." in path.split("/") or path.endswith("/"):
        raise MalformedReference(f"malformed source reference {text!r}: {path!r} is not a repository file path")
    if "." not in path.rsplit("/", 1)[-1]:
        raise MalformedReference(f"malformed source reference {text!r}: {path!r} has no file extension")
    symbol = parts[1] if len(parts) == 2 else None
    if symbol is not None and not _SYMBOL.match(symbol):
        raise MalformedReference(f"malformed source reference {text!r}: {symbol!r} is not a symbol")
    return SourceRef(path, symbol)


def role_parts(text):
    """The text of a `{src}` role -> (title, reference text); the title is None when there is none."""
    if text.endswith(">") and "<" in text:
        title, target = (part.strip() for part in text[:-1].split("<", 1))
        return (title if title != target else None), target
    return None, text


def option_references(value):
    """A claim's `:src:` value -> its reference texts, in order."""
    return [text.strip() for text in (value or "").split(";") if text.strip()]


def source_map_row(line):
    """A `source-map` line -> (reference text, what it does), or None when it is not
    `path | symbol | what it does` with a path and a description."""
    cells = [cell.strip() for cell in line.split("|")]
    if len(cells) != 3 or not cells[0] or not cells[2]:
        return None
    return f"{cells[0]} {cells[1]}".strip(), cells[2]


def canonical(text):
    """A reference text with its whitespace as `str(SourceRef)` writes it (a malformed one, as given)."""
    try:
        return str(parse_reference(text))
    except MalformedReference:
        return text.strip()
