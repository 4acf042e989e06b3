"""Source references resolved: find the line in the installed torch, pin a URL, say what kind it is.

A reference (verified.sources.references) names a file by its path in the PyTorch repository. The
resolver looks for it where the wheel installs it (DESIGN.md, "Source references"), finds the
symbol's line there (verified.sources.symbols), and corrects for the guard line that installed C/C++
headers gain at the top. Every resolution has a kind, which says what its line is:

- ``definition``: the line defines the symbol (a Python ``def``/``class``/assignment, not an
  ``@overload`` or ``TYPE_CHECKING`` stub; a C++ class, macro, variable, or a function with
  its body, in a preprocessor branch this build compiles: verified.sources.cpp_lines);
- ``declaration``: a C++ function whose body is in no shipped header (so in a ``.cpp``);
- ``registration``: an ``op@DispatchKey`` symbol, the dispatcher's "registered at" record
  (verified.sources.dispatch_dump);
- ``raise-site``: a line inside a ``.cpp`` function, from an error this build raised there
  (verified.sources.raise_sites);
- ``file``: the file exists in this build (shipped, or among the source paths compiled into
  its libraries); no line.

Anything that cannot be checked here is "unverified", unless a checkout at the same commit
is named by PYTORCH_SRC. What is read off the installed build is in verified.sources.torch_build.
"""
import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from verified.sources import cpp_lines, cpp_preprocessor, dispatch_dump, raise_sites, torch_build
from verified.sources.references import MalformedReference, parse_reference
from verified.sources.symbols import CPP_SUFFIXES, HEADER_SUFFIXES, companion_files, file_text, first_line, locate

VERIFIED, UNVERIFIED, BROKEN = "verified", "unverified", "broken"
DEFINITION, DECLARATION, REGISTRATION, RAISE_SITE, FILE = "definition", "declaration", "registration", "raise-site", \
    "file"
KINDS = (DEFINITION, DECLARATION, REGISTRATION, RAISE_SITE, FILE)
REPO_URL = "https://github.com/pytorch/pytorch/blob/{commit}/{path}"
HEADER_GUARD = "#if !defined(TORCH_STABLE_ONLY)"

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


@dataclass(frozen=True)
class Resolution:
    status: str  # verified | unverified | broken
    line: int | None
    url: str
    reason: str  # how it was checked, or why it failed
    kind: str | None = None  # one of KINDS; None when broken
    text: str | None = None  # the pinned line as this build ships it (None: the file is not shipped)


class Resolver:
    """Resolves references against one installed torch (and optionally a checkout).

    `raise_sites` is called once, on the first reference that needs it, and returns the
    observations of verified.sources.raise_sites.observe(); `macros` are this build's preprocessor
    macros (verified.sources.cpp_preprocessor.build_macros).
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
                              "verified/sources/raise_sites.py, or set PYTORCH_SRC)", FILE)
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
        text = file_text(str(found_file)).splitlines()[found.line - 1]
        line = found.line - (1 if first_line(found_file).startswith(HEADER_GUARD) else 0)
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
        for kernel in dispatch_dump.registrations(dump):
            if kernel.key == key:
                path, line = kernel.path, kernel.line
                if path != ref.path:
                    return Resolution(BROKEN, None, self.url(ref.path),
                                      f"{op} {key} kernel is registered in {path}, not {ref.path}")
                installed = self.installed_file(path)
                text = None
                if installed is not None and installed.is_file():
                    offset = 1 if first_line(installed).startswith(HEADER_GUARD) else 0
                    text = file_text(str(installed)).splitlines()[line - 1 + offset]
                return Resolution(VERIFIED, line, self.url(path, line), "dispatcher registration record",
                                  REGISTRATION, text)
        return Resolution(BROKEN, None, self.url(ref.path), f"{op} has no kernel registered for {key}")


def resolver_for_installed_torch(cache_dir, checkout=None):
    """A Resolver for the torch importable here, with what it reads off that build cached per
    commit under `cache_dir`: the compiled-source list, and (on first need) the raise sites.

    torch is found and identified from its files; it is imported only if a reference needs
    the dispatcher's registration records (``op@DispatchKey``), and run in a child process
    only if one names a ``.cpp`` function in the raise-site table.
    """
    torch_dir, torchgen_dir, git_version = torch_build.installed_torch()
    if checkout:
        head = torch_build.checkout_commit(checkout)
        if head != git_version:
            raise RuntimeError(f"PYTORCH_SRC={checkout} is at {head}, but the installed torch was built "
                               f"from {git_version}: check out that commit")
    compiled = torch_build.cached_json(Path(cache_dir) / f"compiled-sources-{git_version}.json",
                                       lambda: sorted(torch_build.compiled_sources(torch_dir / "lib")))
    observed = Path(cache_dir) / f"raise-sites-{git_version}-{raise_sites.table_digest()}.json"
    return Resolver(torch_dir, torchgen_dir, git_version, compiled, torch_build.dispatch_dump, checkout,
                    lambda: torch_build.cached_json(observed, raise_sites.observe), torch_build.build_macros(torch_dir))


def resolve_texts(texts, cache_dir):
    """Resolve reference texts against the torch importable here, as plain dicts."""
    resolver = resolver_for_installed_torch(cache_dir, torch_build.environment_checkout())
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
