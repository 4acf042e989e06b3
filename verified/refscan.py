"""Every source reference written in the pages, read straight from the Markdown.

The version matrix resolves these against other torch versions without building the site.
"""
import re
from pathlib import Path

_ROLE = re.compile(r"\{src\}`([^`]+)`")
_OPTION = re.compile(r"^:src:\s*(.+)$")
_MAP_START = re.compile(r"^:::+\{source-map\}")


def references_in(text):
    """Reference texts (`path [symbol]`) in one page, in order, without duplicates."""
    found = []
    in_map = False
    for line in text.splitlines():
        stripped = line.strip()
        if in_map:
            if stripped.startswith(":::"):
                in_map = False
            elif stripped.count("|") == 2:
                path, symbol, _ = (cell.strip() for cell in stripped.split("|"))
                found.append(f"{path} {symbol}".strip())
            continue
        if _MAP_START.match(stripped):
            in_map = True
            continue
        option = _OPTION.match(stripped)
        if option:
            found.extend(part.strip() for part in option.group(1).split(";") if part.strip())
        for role in _ROLE.findall(line):
            target = role[:-1].split("<", 1)[1] if role.endswith(">") and "<" in role else role
            found.append(" ".join(target.split()))
    return list(dict.fromkeys(found))


def site_references(docs_dir):
    """{reference text: [pages]} over every Markdown page under `docs_dir`."""
    pages = {}
    for page in sorted(Path(docs_dir).rglob("*.md")):
        for ref in references_in(page.read_text()):
            pages.setdefault(ref, []).append(page.relative_to(docs_dir).with_suffix("").as_posix())
    return pages
