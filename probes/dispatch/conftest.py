"""Shared pieces of the dispatch probes: reading the dispatcher's own tables, and the C++
extension (dispatch_probe_ext.cpp) compiled once and reused.

Everything here is imported by pytest in the parent process, so nothing at module level
touches tensors or compiles: the work happens inside the fixtures, in each probe's child.
"""
import re
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

from verified import cpp_build

EXTENSION = "dispatch_probe_ext"
EXTENSION_SOURCE = "dispatch_probe_ext.cpp"

# one kernel line of torch._C._dispatch_dump(op)
_DUMP = re.compile(r"^(?P<key>\w+)(?P<alias>\[alias\])?(?P<inactive> \(inactive\))?: "
                   r"registered at (?P<path>\S+):(?P<line>\d+) :: .*\[ (?P<flags>[a-z ]+) \]$")
# one slot of torch._C._dispatch_dump_table(op)
_TABLE = re.compile(r"^(?P<key>\w+): (?P<fallthrough>fallthrough )?registered at (?P<path>\S+):(?P<line>\d+) "
                    r"\[(?P<kind>[a-z ]+)\]$")


def repo_path(path):
    """A registration path as a repository path: `/__w/pytorch/pytorch/aten/src/X.cpp` ->
    `aten/src/X.cpp`, generated files keep `build/`; installed Python files lose their
    site-packages prefix. Anything else (an extension's own file) is returned unchanged."""
    if "site-packages/" in path:
        return path.split("site-packages/", 1)[1]
    for marker in ("/build/", "/aten/src/", "/c10/", "/torch/csrc/", "/torch/"):
        index = path.find(marker)
        if index >= 0:
            return path[index + 1:]
    return path


def is_generated(path):
    """Codegen output: not a file of the repository."""
    return path.startswith("build/") or "/generated/" in path


def registrations(op):
    """The kernels registered for `op`, one dict per line of `_dispatch_dump`, in order."""
    import torch

    found = []
    for line in torch._C._dispatch_dump(op).splitlines():
        match = _DUMP.match(line)
        if match:
            found.append({"key": match["key"], "alias": bool(match["alias"]), "inactive": bool(match["inactive"]),
                          "path": repo_path(match["path"]), "raw_path": match["path"],
                          "flags": match["flags"].split()})
    return found


def active(op):
    """{key: registration} for the kernels the dispatcher uses (inactive ones left out)."""
    return {r["key"]: r for r in registrations(op) if not r["inactive"]}


def table(op):
    """{runtime key: slot} of the computed dispatch table, as `_dispatch_dump_table` prints it."""
    import torch

    slots = {}
    for line in torch._C._dispatch_dump_table(op).splitlines():
        match = _TABLE.match(line)
        if match:
            slots[match["key"]] = {"path": repo_path(match["path"]), "raw_path": match["path"],
                                   "kind": match["kind"], "fallthrough": bool(match["fallthrough"])}
    return slots


@pytest.fixture
def dispatcher():
    """The helpers above, for probes (a probe module cannot import this conftest)."""
    return SimpleNamespace(registrations=registrations, active=active, table=table,
                           repo_path=repo_path, is_generated=is_generated)


# ---------------------------------------------------------------- the C++ extension

def repo_root():
    here = Path(__file__).resolve().parents[2]
    if (here / "probes" / "dispatch" / EXTENSION_SOURCE).is_file():
        return here
    # `python -m verified.mutation` runs a copy of this file from a temporary folder:
    # find the repository through the tooling package that sits at its root.
    import verified

    return Path(verified.__file__).resolve().parents[1]


@dataclass
class Extension:
    library: Path  # the shared library that was loaded
    build_directory: Path
    source: Path  # the source as compiled: build_directory / "main.cpp"
    original: Path  # probes/dispatch/dispatch_probe_ext.cpp
    seconds: float  # how long load_inline took in this process


def load_extension():
    """Compile (or reuse) and load the extension; returns where it lives.

    The source text and the build directory never change, so a second load, in this
    process or another, finds ninja with nothing to do."""
    from torch.utils.cpp_extension import load_inline

    root = repo_root()
    original = root / "probes" / "dispatch" / EXTENSION_SOURCE
    source = original.read_text()
    build = cpp_build.build_directory(root, EXTENSION)
    started = time.monotonic()
    library = load_inline(EXTENSION, source, build_directory=str(build), is_python_module=False,
                          no_implicit_headers=True)
    return Extension(Path(library), build, build / "main.cpp", original, time.monotonic() - started)


@pytest.fixture(scope="module")
def cpp_extension():
    return load_extension()
