"""The build's check of its own source lines: does the pinned line define the symbol?

Independent of the finders (verified.sources.symbols, verified.sources.cpp_lines): it looks only at the one
line the resolver chose, with comments removed, and asks whether the symbol's last name
appears there in a defining form — `def name` / `class name` / `name =` in Python, the
`- func: name(` entry in YAML, and in C/C++ `#define name`, `class|struct|enum ... name`,
`using name =`,
or `name` after a type or `Owner::` and followed by `(`, `;`, `=`, `{`, `[`, `<` or the end
of the line (not a call, an argument or a member access); and a line of kind definition must
not be a whole function declaration without a body. A registration line must be a
`TORCH_LIBRARY` block or a `Library(...)`. Lines of files this build does not ship (`.cpp`
raise sites and registrations) have no text here; their oracle (the error, the dispatcher
record) is the check.
"""
import re

from verified.sources.cpp_lines import strip_comments

_CPP_SUFFIXES = (".h", ".hpp", ".cuh", ".cpp", ".cc", ".c", ".cu", ".mm")
_NOT_A_DEFINITION_START = re.compile(r"^\s*(?:return|throw|if|else|while|for|case|delete|new|goto|co_return)\b")
_REGISTRATION = re.compile(r"TORCH_LIBRARY|\bLibrary\(|\.impl\(|\.fallback\(")


def problem(text, symbol, kind, path):
    """None if line `text` defines `symbol` (as a reference of `kind` into `path`), else why not."""
    if kind == "registration":
        return None if _REGISTRATION.search(text) else "the line is not a library registration"
    if path.endswith(".yaml"):
        name = re.escape(symbol)
        if re.search(rf"^- (?:func|name): {name}\(", text) or re.search(rf"^\s*-?\s*{name}:", text):
            return None
        return f"the line is not the {symbol!r} entry"
    name = re.split(r"::|\.", symbol)[-1]
    if path.endswith(".py"):
        code = text.split("#", 1)[0]
        n = re.escape(name)
        if re.search(rf"^\s*(?:async\s+)?def\s+{n}\b|^\s*class\s+{n}\b|^\s*{n}\s*(?::|=)", code):
            return None
        return f"the line does not define {name!r} (def, class or assignment)"
    if path.endswith(_CPP_SUFFIXES):
        code = strip_comments(text)
        if not defines_cpp(code, name):
            return f"the line does not define {name!r}"
        if kind == "definition" and declares_only(code, name):
            return f"the line only declares {name!r} (no body), but its kind is definition"
        return None
    return None if name in text else f"the line does not contain {name!r}"


def declares_only(code, name):
    """Whether the line is a whole function declaration without a body: `... name(...) ...;`."""
    match = re.search(rf"(?<![\w~]){re.escape(name)}\s*\(", code)
    if not match or code.lstrip().startswith("#") or "{" in code or not code.rstrip().endswith(";"):
        return False
    return not re.search(r"=\s*(?:default|delete)\s*;\s*$", code)


def defines_cpp(code, name):
    """Whether a line of C/C++ code (comments removed) names `name` in a defining form."""
    n = re.escape(name)
    if re.search(rf"^\s*#\s*define\s+{n}\b", code):
        return True
    if re.search(rf"\b(?:class|struct|union|enum)\b[^;()=]*\b{n}\b", code):
        return True
    if re.search(rf"^\s*(?:template\s*<.*>\s*)?using\s+{n}\s*=|^\s*typedef\b.*\b{n}\s*;", code):
        return True
    if _NOT_A_DEFINITION_START.match(code):
        return False
    for match in re.finditer(rf"(?<![\w~]){n}\b", code):
        before, after = code[:match.start()], code[match.end():].lstrip()
        if "=" in before or before.count("(") != before.count(")"):
            continue  # the right-hand side of an initialiser, or an argument
        tail = before.rstrip()
        follows_type = not tail or tail.endswith(("::", "*", "&", ">", "]")) or re.search(r"\w$", tail)
        if follows_type and (not after or after[0] in "(;={[<:"):
            return True
    return False
