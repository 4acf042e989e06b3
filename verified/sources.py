"""Source references: parse `path [symbol]`, find the line in the installed torch, pin a URL.

A reference names a file by its path in the PyTorch repository. The resolver looks for it
where the wheel installs it (DESIGN.md, "Source references"), finds the symbol's line
there, and corrects for the guard line that installed C/C++ headers gain at the top.
Every resolution has a kind, which says what its line is:

- ``definition``: the line defines the symbol (a Python ``def``/``class``/assignment, not an
  ``@overload`` or ``TYPE_CHECKING`` stub; a C++ class, macro, variable, or a function with
  its body, in a preprocessor branch this build compiles: verified.cpp_lines);
- ``declaration``: a C++ function whose body is in no shipped header (so in a ``.cpp``);
- ``registration``: an ``op@DispatchKey`` symbol, the dispatcher's "registered at" record;
- ``raise-site``: a line inside a ``.cpp`` function, from an error this build raised there
  (verified.raise_sites);
- ``file``: the file exists in this build (shipped, or among the source paths compiled into
  its libraries); no line.

Anything that cannot be checked here is "unverified", unless a checkout at the same commit
is named by PYTORCH_SRC.
"""
import ast
import fcntl
import functools
import importlib.util
import json
import mmap
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from verified import cpp_lines, cpp_preprocessor, probe_cache, raise_sites, runinfo

VERIFIED, UNVERIFIED, BROKEN = "verified", "unverified", "broken"
DEFINITION, DECLARATION, REGISTRATION, RAISE_SITE, FILE = "definition", "declaration", "registration", "raise-site", \
    "file"
KINDS = (DEFINITION, DECLARATION, REGISTRATION, RAISE_SITE, FILE)
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
    kind: str | None = None  # one of KINDS; None when broken
    text: str | None = None  # the pinned line as this build ships it (None: the file is not shipped)


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
    """Resolves references against one installed torch (and optionally a checkout).

    `raise_sites` is called once, on the first reference that needs it, and returns the
    observations of verified.raise_sites.observe(); `macros` are this build's preprocessor
    macros (verified.cpp_preprocessor.build_macros).
    """

    def __init__(self, torch_dir, torchgen_dir, git_version, compiled_sources, dispatch_dump, checkout=None,
                 raise_sites=dict, macros=None):
        self.roots = {"torch": Path(torch_dir), "torchgen": Path(torchgen_dir)}
        self.git_version = git_version
        self.compiled_sources = frozenset(compiled_sources)
        self.dispatch_dump = dispatch_dump  # op name -> text of torch._C._dispatch_dump(op)
        self.checkout = Path(checkout) if checkout else None
        self.macros = macros if macros is not None else cpp_preprocessor.build_macros(Path(torch_dir) / "include")
        self._raise_sites = raise_sites
        self._observed, self._observe_error = None, None  # filled on the first raise-site reference
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
            return self._in_file(ref, installed, "installed torch")
        if self.checkout is not None and (self.checkout / ref.path).is_file():
            return self._in_file(ref, self.checkout / ref.path, "PYTORCH_SRC checkout")
        if ref.path.endswith(CPP_SUFFIXES):
            if ref.path not in self.compiled_sources:
                return Resolution(BROKEN, None, self.url(ref.path),
                                  "not among the source files compiled into this torch's libraries")
            if ref.symbol is None:
                return Resolution(VERIFIED, None, self.url(ref.path), "compiled into this torch's libraries", FILE)
            trigger = raise_sites.BY_REFERENCE.get((ref.path, ref.symbol))
            if trigger is not None:
                return self._raise_site(ref, trigger)
            return Resolution(UNVERIFIED, None, self.url(ref.path),
                              "file compiled into this torch; no line for the symbol (add a trigger to "
                              "verified/raise_sites.py, or set PYTORCH_SRC)", FILE)
        if installed is not None and ref.path.endswith(HEADER_SUFFIXES + (".py", ".yaml")):
            return Resolution(BROKEN, None, self.url(ref.path), f"not found at {installed}")
        return Resolution(UNVERIFIED, None, self.url(ref.path), "the wheel does not ship this file", FILE)

    def _in_file(self, ref, file, where):
        if ref.symbol is None:
            return Resolution(VERIFIED, None, self.url(ref.path), f"file present in the {where}", FILE)
        companions = [(ref.path.rsplit("/", 1)[0] + "/" + c.name, c) for c in companion_files(file)]
        found = locate(file, ref.symbol, self.macros, [c for _, c in companions])
        if found is None:
            return Resolution(BROKEN, None, self.url(ref.path), f"symbol {ref.symbol!r} not found in {file}")
        path, found_file = (ref.path, file) if found.source == 0 else companions[found.source - 1]
        text = _text(str(found_file)).splitlines()[found.line - 1]
        line = found.line - (1 if _first_line(found_file).startswith(HEADER_GUARD) else 0)
        reason = f"found in the {where}" + (f", the body in {path}" if path != ref.path else "")
        if found.form == cpp_lines.DECLARATION:
            reason += "; only a declaration ships: no body in this header or its companions (it is in a .cpp)"
        return Resolution(VERIFIED, line, self.url(path, line), reason, found.form, text)

    def _raise_site(self, ref, trigger):
        if self._observed is None:
            try:
                self._observed, self._observe_error = self._raise_sites(), None
            except (OSError, RuntimeError, ValueError, subprocess.TimeoutExpired) as exc:
                self._observed, self._observe_error = {}, str(exc)
        seen = self._observed.get(raise_sites.key(trigger))
        if seen is None:
            return Resolution(BROKEN, None, self.url(ref.path), "the raise-site trigger did not run"
                              + (f": {self._observe_error}" if self._observe_error else ""))
        raised = raise_sites.parse(seen["message"])
        problem = raise_sites.check(trigger, raised) if seen["type"] else "the trigger raised no error"
        if problem:
            first = (seen["message"].strip().splitlines() or [""])[0][:200]
            return Resolution(BROKEN, None, self.url(ref.path), f"raise-site trigger ({trigger.what}): {problem}"
                                                                f"{': ' + first if first else ''}")
        return Resolution(VERIFIED, raised.line, self.url(ref.path, raised.line),
                          f"inside {ref.symbol}: this build raised {seen['type']} there ({trigger.what})", RAISE_SITE)

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
                installed = self.installed_file(path)
                text = None
                if installed is not None and installed.is_file():
                    offset = 1 if _first_line(installed).startswith(HEADER_GUARD) else 0
                    text = _text(str(installed)).splitlines()[line - 1 + offset]
                return Resolution(VERIFIED, line, self.url(path, line), "dispatcher registration record",
                                  REGISTRATION, text)
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
        line = _find_yaml(_text(str(file)), symbol)
    else:
        line = _first_line_matching(_text(str(file)).splitlines(), re.compile(re.escape(symbol)))
    return cpp_lines.Found(line, DEFINITION) if line else None


COMPANION_SUFFIXES = ("_impl.h", "_inl.h", "-inl.h")


def companion_files(file):
    """The installed `X_impl.h`, `X_inl.h`, `X-inl.h` beside a header `X.h`: where its inline bodies may be."""
    file = Path(file)
    if file.suffix != ".h":
        return []
    return [c for c in (file.with_name(file.stem + s) for s in COMPANION_SUFFIXES) if c.is_file()]


def _text(path):
    """A file's text, read once while it is unchanged (many references point into one file)."""
    return _read(path, *_version(path))


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


def _find_yaml(text, symbol):
    name = re.escape(symbol)
    lines = text.splitlines()
    return _first_line_matching(lines, re.compile(rf"^- (?:func|name): {name}\(")) or \
        _first_line_matching(lines, re.compile(rf"^\s*-?\s*{name}:"))


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
    """A Resolver for the torch importable here, with what it reads off that build cached per
    commit under `cache_dir`: the compiled-source list, and (on first need) the raise sites.

    torch is found and identified from its files; it is imported only if a reference needs
    the dispatcher's registration records (``op@DispatchKey``), and run in a child process
    only if one names a ``.cpp`` function in the raise-site table.
    """
    torch_dir, torchgen_dir, git_version = installed_torch()
    if checkout:
        head = checkout_commit(checkout)
        if head != git_version:
            raise RuntimeError(f"PYTORCH_SRC={checkout} is at {head}, but the installed torch was built "
                               f"from {git_version}: check out that commit")
    compiled = _cached(Path(cache_dir) / f"compiled-sources-{git_version}.json",
                       lambda: sorted(compiled_sources(torch_dir / "lib")))
    constants = runinfo.version_constants(torch_dir / "version.py")
    macros = cpp_preprocessor.build_macros(torch_dir / "include",
                                    device_build=any(constants.get(k) for k in ("cuda", "hip", "rocm", "xpu")))
    observed = Path(cache_dir) / f"raise-sites-{git_version}-{raise_sites.table_digest()}.json"
    return Resolver(torch_dir, torchgen_dir, git_version, compiled, _dispatch_dump, checkout,
                    lambda: _cached(observed, raise_sites.observe), macros)


def _cached(path, compute):
    """The JSON in `path`, or `compute()` written there; one process computes it at a time
    (parallel Sphinx readers wait for the first instead of each running it)."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):  # absent, or cut short by a killed build: recompute it
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return json.loads(path.read_text())  # another process finished it while this one waited
        except (OSError, ValueError):
            value = compute()
            probe_cache.write_atomically(path, json.dumps(value))
            return value


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
                             "url": None, "reason": str(exc), "kind": None})
            continue
        found = resolver.resolve(ref)
        resolved.append({"ref": text, "path": ref.path, "symbol": ref.symbol, "status": found.status,
                         "line": found.line, "url": found.url, "reason": found.reason, "kind": found.kind})
    return resolved


if __name__ == "__main__":  # JSON list of reference texts on stdin -> JSON list of resolutions
    import sys

    json.dump(resolve_texts(json.load(sys.stdin), sys.argv[1]), sys.stdout)
