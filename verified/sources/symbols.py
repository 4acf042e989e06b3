"""Symbol finders: the line where a file defines a symbol, for C/C++, Python and YAML files.

C/C++ is read by verified.sources.cpp_lines, in the preprocessor branches a build compiles; Python
with `ast`; YAML (native_functions.yaml, derivatives.yaml) by its `- func:` / `- name:`
entries. Files are read and parsed once while they are unchanged: many references point
into one file.
"""
import ast
import functools
import os
import re
from pathlib import Path

from verified.sources import cpp_lines, cpp_preprocessor

CPP_SUFFIXES = (".cpp", ".cc", ".c", ".cu", ".mm")
HEADER_SUFFIXES = (".h", ".hpp", ".cuh")
COMPANION_SUFFIXES = ("_impl.h", "_inl.h", "-inl.h")


def find_symbol(file, symbol, macros=None):
    """1-based line of `symbol`'s definition in `file`, or None."""
    found = locate(file, symbol, macros)
    return found.line if found else None


def locate(file, symbol, macros=None, companions=()):
    """Where `symbol` is defined in `file`: a cpp_lines.Found (line, form, which file), or None.

    `companions` are C++ files that may hold the bodies of what `file` declares (see
    companion_files); `macros` default to those of a Linux x86-64 CPU build.
    """
    suffix = Path(file).suffix
    if suffix in HEADER_SUFFIXES + CPP_SUFFIXES:
        macros = cpp_preprocessor.build_macros(None) if macros is None else macros
        key = tuple(sorted(macros.items()))
        return cpp_lines.find(_cpp_source(str(file), key), symbol, [_cpp_source(str(c), key) for c in companions])
    if suffix == ".py":
        line = _find_python(_python_tree(str(file)), symbol)
    elif suffix == ".yaml":
        line = _find_yaml(file_text(str(file)), symbol)
    else:
        line = _first_line_matching(file_text(str(file)).splitlines(), re.compile(re.escape(symbol)))
    return cpp_lines.Found(line, cpp_lines.DEFINITION) if line else None


def companion_files(file):
    """The installed `X_impl.h`, `X_inl.h`, `X-inl.h` beside a header `X.h`: where its inline bodies may be."""
    file = Path(file)
    if file.suffix != ".h":
        return []
    return [c for c in (file.with_name(file.stem + s) for s in COMPANION_SUFFIXES) if c.is_file()]


def file_text(path):
    """A file's text, read once while it is unchanged."""
    return _read(path, *_version(path))


def first_line(path):
    """The first line of a file, read without reading the rest."""
    with open(path, errors="replace") as handle:
        return handle.readline()


# ---------------------------------------------------------------- reading, cached per file version

def _python_tree(path):
    return _parse(path, *_version(path))


def _cpp_source(path, macros_key):
    return _scan_cpp(path, *_version(path), macros_key)


def _version(path):
    stat = os.stat(path)
    return stat.st_mtime_ns, stat.st_size


@functools.lru_cache(maxsize=256)
def _read(path, mtime_ns, size):
    return Path(path).read_text(errors="replace")


@functools.lru_cache(maxsize=256)
def _parse(path, mtime_ns, size):
    return ast.parse(_read(path, mtime_ns, size))


@functools.lru_cache(maxsize=128)
def _scan_cpp(path, mtime_ns, size, macros_key):
    return cpp_lines.Source(_read(path, mtime_ns, size), dict(macros_key))


# ---------------------------------------------------------------- Python

_OVERLOAD_DECORATORS = {"overload", "_overload", "_overload_method"}


def _find_python(tree, symbol):
    """The line of `symbol` (`name` or `Class.name`): breadth first from the module (or the
    class), the first real definition. An `@overload` stub or a definition under
    `if TYPE_CHECKING:` is taken only if nothing else defines the name, and an assignment of
    None (a placeholder) only if no other definition or assignment does."""
    *owners, name = symbol.split(".")
    scope = tree
    for owner in owners:
        scope = next((n for n in ast.walk(scope) if isinstance(n, ast.ClassDef) and n.name == owner), None)
        if scope is None:
            return None
    best = None
    queue = [(scope, False)]
    while queue:
        node, stub = queue.pop(0)
        rank = _python_rank(node, name, stub) if node is not scope else None
        if rank is not None and (best is None or rank < best[0]):
            best = (rank, node.lineno)
            if rank == 0:
                break
        for field, value in ast.iter_fields(node):
            guarded = stub or (_is_type_checking(node) and field != "orelse")
            queue.extend((child, guarded) for child in (value if isinstance(value, list) else [value])
                         if isinstance(child, ast.AST))
    return best[1] if best else None


def _python_rank(node, name, stub):
    """0: a definition; 1: `name = None` or a bare `name: T`; 2: an overload or TYPE_CHECKING stub;
    None: not `name`."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
        overload = any(_decorator_name(d) in _OVERLOAD_DECORATORS for d in node.decorator_list)
        return 2 if overload or stub else 0
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            if stub:
                return 2
            placeholder = node.value is None or (isinstance(node.value, ast.Constant) and node.value.value is None)
            return 1 if placeholder else 0
    return None


def _decorator_name(decorator):
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)


def _is_type_checking(node):
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


# ---------------------------------------------------------------- YAML and plain text

def _find_yaml(text, symbol):
    name = re.escape(symbol)
    lines = text.splitlines()
    return _first_line_matching(lines, re.compile(rf"^- (?:func|name): {name}\(")) or \
        _first_line_matching(lines, re.compile(rf"^\s*-?\s*{name}:"))


def _first_line_matching(lines, pattern):
    return next((i + 1 for i, line in enumerate(lines) if pattern.search(line)), None)
