"""Source references: parse `path [symbol]`, find the line in the installed torch, pin a URL.

A reference names a file by its path in the PyTorch repository. The resolver looks for it
where the wheel installs it (DESIGN.md, "Source references"), finds the symbol's line
there, and corrects for the guard line that installed C/C++ headers gain at the top.
`.cpp` files are not shipped: their existence is read from the source paths compiled into
the shared libraries, and `op@DispatchKey` symbols from the dispatcher's registration
records. Anything else that cannot be checked here is "unverified", unless a checkout at
the same commit is named by PYTORCH_SRC.
"""
import ast
import functools
import importlib.util
import json
import mmap
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from verified import probe_cache, runinfo

VERIFIED, UNVERIFIED, BROKEN = "verified", "unverified", "broken"
REPO_URL = "https://github.com/pytorch/pytorch/blob/{commit}/{path}"
HEADER_GUARD = "#if !defined(TORCH_STABLE_ONLY)"
CPP_SUFFIXES = (".cpp", ".cc", ".c", ".cu", ".mm")
HEADER_SUFFIXES = (".h", ".hpp", ".cuh")

_PATH = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./+-]*$")
_SYMBOL = re.compile(r"^[A-Za-z_~][\w:.~<>@\[\]-]*$")
_DISPATCH_SYMBOL = re.compile(r"^(?P<op>[a-z_][\w]*::[\w.]+)@(?P<key>\w+)$")

# repository prefix -> installed location ("torch" or "torchgen" package root), first match wins
_INSTALLED = [
    ("aten/src/ATen/native/native_functions.yaml", "torchgen", "packaged/ATen/native/native_functions.yaml"),
    ("aten/src/ATen/native/tags.yaml", "torchgen", "packaged/ATen/native/tags.yaml"),
    ("aten/src/ATen/templates/", "torchgen", "packaged/ATen/templates/"),
    ("tools/autograd/", "torchgen", "packaged/autograd/"),
    ("c10/", "torch", "include/c10/"),
    ("aten/src/ATen/", "torch", "include/ATen/"),
    ("torch/csrc/", "torch", "include/torch/csrc/"),
    ("torch/headeronly/", "torch", "include/torch/headeronly/"),
    *((f"torch/{name}", "torch", f"include/torch/{name}")  # top-level C++ headers of the repository
      for name in ("library.h", "extension.h", "script.h", "custom_class.h", "custom_class_detail.h")),
    ("caffe2/serialize/", "torch", "include/caffe2/serialize/"),
    ("torch/", "torch", ""),
    ("torchgen/", "torchgen", ""),
]


class MalformedReference(ValueError):
    """The text of a reference is not `path` or `path symbol`."""


@dataclass(frozen=True)
class SourceRef:
    path: str
    symbol: str | None = None

    def __str__(self):
        return f"{self.path} {self.symbol}" if self.symbol else self.path


@dataclass(frozen=True)
class Resolution:
    status: str  # verified | unverified | broken
    line: int | None
    url: str
    reason: str  # how it was checked, or why it failed


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


class Resolver:
    """Resolves references against one installed torch (and optionally a checkout)."""

    def __init__(self, torch_dir, torchgen_dir, git_version, compiled_sources, dispatch_dump, checkout=None):
        self.roots = {"torch": Path(torch_dir), "torchgen": Path(torchgen_dir)}
        self.git_version = git_version
        self.compiled_sources = frozenset(compiled_sources)
        self.dispatch_dump = dispatch_dump  # op name -> text of torch._C._dispatch_dump(op)
        self.checkout = Path(checkout) if checkout else None
        self._cache = {}

    def url(self, path, line=None):
        url = REPO_URL.format(commit=self.git_version, path=path)
        return f"{url}#L{line}" if line else url

    def installed_file(self, path):
        for prefix, root, replacement in _INSTALLED:
            if path.startswith(prefix):
                return self.roots[root] / (replacement + path[len(prefix):])
        return None

    def resolve(self, ref):
        if ref not in self._cache:
            self._cache[ref] = self._resolve(ref)
        return self._cache[ref]

    def _resolve(self, ref):
        dispatch = _DISPATCH_SYMBOL.match(ref.symbol or "")
        if dispatch:
            return self._resolve_registration(ref, dispatch["op"], dispatch["key"])
        installed = self.installed_file(ref.path)
        if installed is not None and installed.is_file():
            offset = -1 if _first_line(installed).startswith(HEADER_GUARD) else 0
            return self._in_file(ref, installed, offset, "installed torch")
        if self.checkout is not None and (self.checkout / ref.path).is_file():
            return self._in_file(ref, self.checkout / ref.path, 0, "PYTORCH_SRC checkout")
        if ref.path.endswith(CPP_SUFFIXES):
            if ref.path not in self.compiled_sources:
                return Resolution(BROKEN, None, self.url(ref.path),
                                  "not among the source files compiled into this torch's libraries")
            if ref.symbol is None:
                return Resolution(VERIFIED, None, self.url(ref.path), "compiled into this torch's libraries")
            return Resolution(UNVERIFIED, None, self.url(ref.path),
                              "file compiled into this torch; symbol not checkable without PYTORCH_SRC")
        if installed is not None and ref.path.endswith(HEADER_SUFFIXES + (".py", ".yaml")):
            return Resolution(BROKEN, None, self.url(ref.path), f"not found at {installed}")
        return Resolution(UNVERIFIED, None, self.url(ref.path), "the wheel does not ship this file")

    def _in_file(self, ref, file, offset, where):
        if ref.symbol is None:
            return Resolution(VERIFIED, None, self.url(ref.path), f"file present in the {where}")
        line = find_symbol(file, ref.symbol)
        if line is None:
            return Resolution(BROKEN, None, self.url(ref.path), f"symbol {ref.symbol!r} not found in {file}")
        line += offset
        return Resolution(VERIFIED, line, self.url(ref.path, line), f"found in the {where}")

    def _resolve_registration(self, ref, op, key):
        try:
            dump = self.dispatch_dump(op)
        except RuntimeError as exc:
            return Resolution(BROKEN, None, self.url(ref.path), f"dispatcher has no {op}: {exc}")
        for entry_key, path, line in registrations(dump):
            if entry_key == key:
                if path != ref.path:
                    return Resolution(BROKEN, None, self.url(ref.path),
                                      f"{op} {key} kernel is registered in {path}, not {ref.path}")
                return Resolution(VERIFIED, line, self.url(path, line), "dispatcher registration record")
        return Resolution(BROKEN, None, self.url(ref.path), f"{op} has no kernel registered for {key}")


_REGISTRATION = re.compile(r"^(?P<key>\w+)(?:\[alias\])?(?: \(inactive\))?: registered at (?P<path>\S+):(?P<line>\d+)")


def registrations(dump):
    """(dispatch key, repository path, line) for each kernel line of a `_dispatch_dump`."""
    for text in dump.splitlines():
        match = _REGISTRATION.match(text)
        if match:
            yield match["key"], repository_path(match["path"]), int(match["line"])


def repository_path(build_path):
    """`/__w/pytorch/pytorch/aten/src/X.cpp` -> `aten/src/X.cpp`; build outputs keep `build/`."""
    for marker in ("/build/", "/aten/src/", "/c10/", "/torch/", "/caffe2/"):
        index = build_path.find(marker)
        if index >= 0:
            return build_path[index + 1:]
    return build_path


# ---------------------------------------------------------------- symbol finders

def find_symbol(file, symbol):
    """1-based line of `symbol`'s definition in `file`, or None."""
    text = _text(str(file))
    suffix = Path(file).suffix
    if suffix == ".py":
        return _find_python(_python_tree(str(file)), symbol)
    if suffix == ".yaml":
        return _find_yaml(text, symbol)
    if suffix in HEADER_SUFFIXES + CPP_SUFFIXES:
        return _find_cpp(text, symbol)
    return _first_line_matching(text.splitlines(), re.compile(re.escape(symbol)))


def _text(path):
    """A file's text, read once while it is unchanged (many references point into one file)."""
    return _read(path, *_version(path))


def _python_tree(path):
    return _parse(path, *_version(path))


def _version(path):
    stat = os.stat(path)
    return stat.st_mtime_ns, stat.st_size


@functools.lru_cache(maxsize=256)
def _read(path, mtime_ns, size):
    return Path(path).read_text(errors="replace")


@functools.lru_cache(maxsize=256)
def _parse(path, mtime_ns, size):
    return ast.parse(_read(path, mtime_ns, size))


def _find_python(tree, symbol):
    *owners, name = symbol.split(".")
    scope = tree
    for owner in owners:
        scope = next((n for n in ast.walk(scope) if isinstance(n, ast.ClassDef) and n.name == owner), None)
        if scope is None:
            return None
    for node in ast.walk(scope):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return node.lineno
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node is not scope:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return node.lineno
    return None


def _find_yaml(text, symbol):
    name = re.escape(symbol)
    lines = text.splitlines()
    return _first_line_matching(lines, re.compile(rf"^- (?:func|name): {name}\(")) or \
        _first_line_matching(lines, re.compile(rf"^\s*-?\s*{name}:"))


_NOT_A_DECLARATION = {"return", "if", "else", "while", "for", "new", "throw", "case", "delete", "co_return", "using"}
_TYPE_TOKENS = r"(?:(?:[\w:<>,*&\[\]]*\w[\w:<>,*&\[\]]*)\s+)"  # words before a name: a type, qualifiers


def _find_cpp(text, symbol):
    """Definition of a C/C++ name, most specific form first.

    Order: a class/struct/enum/union definition, a macro, a member or variable declaration,
    a function declared with a return type, then a bare `name(` at the start of a line (a
    constructor). Constructor initialiser lines (`: x_(...)`, `x_(...),`) never match.
    """
    lines = text.splitlines()
    *owners, name = symbol.split("::")
    start = 0
    for owner in owners:
        found = _cpp_type_definition(lines, owner, start)
        if found is None:
            return None
        start = found  # search after the owner's opening line
    found = _cpp_type_definition(lines, name, start)
    if found is not None:
        return found
    n = re.escape(name)
    patterns = [
        re.compile(rf"^\s*#\s*define\s+{n}\b"),
        re.compile(rf"^\s*{_TYPE_TOKENS}+[*&]*{n}\s*(?:;|=|\{{|\[)"),
        re.compile(rf"^\s*{_TYPE_TOKENS}+[*&]*{n}\s*\("),
        re.compile(rf"^\s*~?{n}\s*\("),
    ]
    for pattern in patterns:
        for index in range(start, len(lines)):
            line = lines[index]
            if name not in line:  # every pattern needs the name: skip the regex on the other lines
                continue
            stripped = line.strip()
            if not pattern.search(line) or stripped.startswith((":", ",")) or stripped.endswith(","):
                continue
            if stripped.split()[0] not in _NOT_A_DECLARATION and "=" not in line.split(name)[0]:
                return index + 1
    return None


def _cpp_type_definition(lines, name, start):
    pattern = re.compile(rf"^\s*(?:template\s*<.*>\s*)?(?:class|struct|union|enum(?:\s+class|\s+struct)?)\s+"
                         rf"(?:[A-Z0-9_]+(?:\([^)]*\))?\s+|alignas\([^)]*\)\s+)*{re.escape(name)}\b")
    for index in range(start, len(lines)):
        line = lines[index]
        if name in line and pattern.search(line) and not (line.rstrip().endswith(";") and "{" not in line):
            return index + 1
    return None


def _first_line_matching(lines, pattern):
    return next((i + 1 for i, line in enumerate(lines) if pattern.search(line)), None)


def _first_line(path):
    with open(path, errors="replace") as handle:
        return handle.readline()


# ---------------------------------------------------------------- facts read off the installed torch

_COMPILED = re.compile(rb"/[\w/.+-]*?/((?:aten/src|c10|torch/csrc|caffe2)/[\w/.+-]+\.(?:cpp|cc|cu|c|mm))(?![\w.])")


def compiled_sources(lib_dir):
    """Repository paths of the C/C++ files whose `__FILE__` strings the libraries embed."""
    found = set()
    for lib in sorted(Path(lib_dir).glob("*.so*")):
        with open(lib, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            for match in _COMPILED.finditer(data):
                full, path = match.group(0).decode(), match.group(1).decode()
                if not full.endswith("/build/" + path) and "/generated/" not in path:
                    found.add(path)
    return found


def checkout_commit(checkout):
    proc = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


def resolver_for_installed_torch(cache_dir, checkout=None):
    """A Resolver for the torch importable here; the compiled-source list is cached per commit.

    torch is found and identified from its files; it is imported only if a reference needs
    the dispatcher's registration records (``op@DispatchKey``).
    """
    torch_dir, torchgen_dir, git_version = installed_torch()
    if checkout:
        head = checkout_commit(checkout)
        if head != git_version:
            raise RuntimeError(f"PYTORCH_SRC={checkout} is at {head}, but the installed torch was built "
                               f"from {git_version}: check out that commit")
    cache = Path(cache_dir) / f"compiled-sources-{git_version}.json"
    try:
        compiled = json.loads(cache.read_text())
    except (OSError, ValueError):  # absent, or cut short by a killed build: recompute it
        compiled = sorted(compiled_sources(torch_dir / "lib"))
        cache.parent.mkdir(parents=True, exist_ok=True)
        probe_cache.write_atomically(cache, json.dumps(compiled))
    return Resolver(torch_dir, torchgen_dir, git_version, compiled, _dispatch_dump, checkout)


def installed_torch():
    """(torch folder, torchgen folder, git commit) of the torch importable here, found without importing it."""
    torch_spec, torchgen_spec = importlib.util.find_spec("torch"), importlib.util.find_spec("torchgen")
    if torch_spec is None or torchgen_spec is None or not torch_spec.origin or not torchgen_spec.origin:
        raise ImportError("No module named 'torch' (or 'torchgen')")
    torch_dir = Path(torch_spec.origin).parent
    try:
        git_version = runinfo.version_constants(torch_dir / "version.py")["git_version"]
    except (OSError, SyntaxError, KeyError) as exc:
        raise ImportError(f"{torch_dir} is not a torch build (no git_version in its version.py)") from exc
    return torch_dir, Path(torchgen_spec.origin).parent, git_version


def installed_torch_commit():
    """The git commit of the torch importable here, or None."""
    try:
        return installed_torch()[2]
    except ImportError:
        return None


def _dispatch_dump(op):
    import torch

    return torch._C._dispatch_dump(op)


def environment_checkout():
    path = os.environ.get("PYTORCH_SRC")
    return path or None


def resolve_texts(texts, cache_dir):
    """Resolve reference texts against the torch importable here, as plain dicts."""
    resolver = resolver_for_installed_torch(cache_dir, environment_checkout())
    resolved = []
    for text in texts:
        try:
            ref = parse_reference(text)
        except MalformedReference as exc:
            resolved.append({"ref": text, "path": None, "symbol": None, "status": BROKEN, "line": None,
                             "url": None, "reason": str(exc)})
            continue
        found = resolver.resolve(ref)
        resolved.append({"ref": text, "path": ref.path, "symbol": ref.symbol, "status": found.status,
                         "line": found.line, "url": found.url, "reason": found.reason})
    return resolved


if __name__ == "__main__":  # JSON list of reference texts on stdin -> JSON list of resolutions
    import sys

    json.dump(resolve_texts(json.load(sys.stdin), sys.argv[1]), sys.stdout)
