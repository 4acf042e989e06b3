"""The dispatcher's two dumps, parsed from their text (nothing here imports torch).

- `torch._C._dispatch_dump(op)`: what is registered for an operator, one line per kernel,
  `CPU: registered at /__w/pytorch/pytorch/build/aten/src/ATen/RegisterCPU_0.cpp:1297 :: (...) [ boxed unboxed ]`;
- `torch._C._dispatch_dump_table(op)`: the computed slot of every runtime key,
  `AutogradCPU: registered at /__w/.../VariableType_2.cpp:10455 [autograd kernel]`.

The source resolver pins `op@DispatchKey` references with the first; the dispatch probes
read both.
"""
import re
from dataclasses import dataclass

_KERNEL = re.compile(r"^(?P<key>\w+)(?P<alias>\[alias\])?(?P<inactive> \(inactive\))?: "
                     r"registered at (?P<path>\S+):(?P<line>\d+) :: .*\[ (?P<flags>[a-z ]+) \]$")
_SLOT = re.compile(r"^(?P<key>\w+): (?P<fallthrough>fallthrough )?registered at (?P<path>\S+):(?P<line>\d+) "
                   r"\[(?P<kind>[a-z ]+)\]$")

# where a build path's repository part starts, first match wins (then the text after the marker's "/")
_MARKERS = ("/build/", "/aten/src/", "/c10/", "/torch/csrc/", "/torch/", "/caffe2/")


@dataclass(frozen=True)
class Registration:
    """One kernel line of `_dispatch_dump`."""
    key: str
    alias: bool  # registered to an alias key (`Autograd[alias]`)
    inactive: bool  # shadowed by another kernel for the same key (`Meta (inactive)`)
    path: str  # repository path (repository_path)
    raw_path: str  # the path as the dump prints it
    line: int
    flags: tuple  # `boxed`, `unboxed`, `fallthrough`


@dataclass(frozen=True)
class Slot:
    """One runtime key's line of `_dispatch_dump_table`."""
    key: str
    path: str
    raw_path: str
    line: int
    kind: str  # `kernel`, `autograd kernel`, `backend fallback`, `default backend kernel`, ...
    fallthrough: bool


def registrations(dump):
    """The kernel lines of a `_dispatch_dump` text, in order, as Registrations."""
    found = []
    for text in dump.splitlines():
        match = _KERNEL.match(text)
        if match:
            found.append(Registration(match["key"], bool(match["alias"]), bool(match["inactive"]),
                                      repository_path(match["path"]), match["path"], int(match["line"]),
                                      tuple(match["flags"].split())))
    return found


def slots(table):
    """The slot lines of a `_dispatch_dump_table` text, in order, as Slots."""
    found = []
    for text in table.splitlines():
        match = _SLOT.match(text)
        if match:
            found.append(Slot(match["key"], repository_path(match["path"]), match["path"], int(match["line"]),
                              match["kind"], bool(match["fallthrough"])))
    return found


def repository_path(build_path):
    """A registration path as a repository path: `/__w/pytorch/pytorch/aten/src/X.cpp` ->
    `aten/src/X.cpp`; generated files keep `build/`; installed Python files lose their
    `site-packages/` prefix. Anything else (an extension's own file) is returned unchanged."""
    if "site-packages/" in build_path:
        return build_path.split("site-packages/", 1)[1]
    for marker in _MARKERS:
        index = build_path.find(marker)
        if index >= 0:
            return build_path[index + 1:]
    return build_path


def is_generated(path):
    """A repository path of codegen output: not a file of the repository."""
    return path.startswith("build/") or "/generated/" in path
