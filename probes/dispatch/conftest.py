"""Shared pieces of the dispatch probes: reading the dispatcher's own tables, and the C++
extension (dispatch_probe_ext.cpp) compiled once and reused.

Everything here is imported by pytest in the parent process, so nothing at module level
touches tensors or compiles: the work happens inside the fixtures, in each probe's child.
"""
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

from verified.sources import cpp_build, dispatch_dump

EXTENSION = "dispatch_probe_ext"
EXTENSION_SOURCE = "dispatch_probe_ext.cpp"

# the dumps are parsed by verified.sources.dispatch_dump, shared with the source resolver
repo_path = dispatch_dump.repository_path
is_generated = dispatch_dump.is_generated


def registrations(op):
    """The kernels registered for `op`, one dict per line of `_dispatch_dump`, in order."""
    import torch

    return [{"key": r.key, "alias": r.alias, "inactive": r.inactive, "path": r.path, "raw_path": r.raw_path,
             "flags": list(r.flags)} for r in dispatch_dump.registrations(torch._C._dispatch_dump(op))]


def active(op):
    """{key: registration} for the kernels the dispatcher uses (inactive ones left out)."""
    return {r["key"]: r for r in registrations(op) if not r["inactive"]}


def table(op):
    """{runtime key: slot} of the computed dispatch table, as `_dispatch_dump_table` prints it."""
    import torch

    return {s.key: {"path": s.path, "raw_path": s.raw_path, "kind": s.kind, "fallthrough": s.fallthrough}
            for s in dispatch_dump.slots(torch._C._dispatch_dump_table(op))}


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
    # `python -m verified.mutation.run` runs a copy of this file from a temporary folder:
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
