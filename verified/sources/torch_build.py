"""What is read off the installed torch build, and a per-commit cache for it.

Where torch and torchgen are installed and the commit they were built from (found from
their files, without importing torch); the C/C++ sources compiled into its libraries; its
preprocessor macros; its dispatcher's dump (this one imports torch). What takes long is
cached as JSON under a cache folder, one file per commit (`cached_json`).
"""
import fcntl
import importlib.util
import json
import mmap
import os
import re
import subprocess
from pathlib import Path

from verified.probing import probe_cache, runinfo
from verified.sources import cpp_preprocessor

_COMPILED = re.compile(rb"/[\w/.+-]*?/((?:aten/src|c10|torch/csrc|caffe2)/[\w/.+-]+\.(?:cpp|cc|cu|c|mm))(?![\w.])")


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


def build_macros(torch_dir):
    """The preprocessor macros this build compiled its headers with (verified.sources.cpp_preprocessor)."""
    constants = runinfo.version_constants(Path(torch_dir) / "version.py")
    return cpp_preprocessor.build_macros(Path(torch_dir) / "include",
                                         device_build=any(constants.get(k) for k in ("cuda", "hip", "rocm", "xpu")))


def dispatch_dump(op):
    """The text of `torch._C._dispatch_dump(op)` (imports torch; parsed by verified.sources.dispatch_dump)."""
    import torch

    return torch._C._dispatch_dump(op)


def environment_checkout():
    """The PyTorch checkout named by PYTORCH_SRC, or None."""
    path = os.environ.get("PYTORCH_SRC")
    return path or None


def checkout_commit(checkout):
    proc = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


def cached_json(path, compute):
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
