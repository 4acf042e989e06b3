"""Where probes build C++ extensions with torch.utils.cpp_extension.

One folder per torch build (the matrix runs several torch versions over the same tree), so
builds never thrash or load a library made for another torch; and a lock file left behind
by a killed build is cleared instead of making every later load wait on it forever.
"""
import os
import time
from pathlib import Path

STALE_LOCK_SECONDS = 600  # far longer than any build here; a lock this old has no owner


def build_directory(root, name):
    """`<root>/_build/cpp-extensions/torch-<version>/<name>`; VERIFIED_CPP_BUILD_DIR moves the
    `cpp-extensions` folder elsewhere (`make bench` times cold builds in a fresh one)."""
    import torch

    base = Path(os.environ.get("VERIFIED_CPP_BUILD_DIR") or Path(root) / "_build" / "cpp-extensions")
    directory = base / f"torch-{torch.__version__}" / name
    directory.mkdir(parents=True, exist_ok=True)
    lock = directory / "lock"
    if lock.exists() and time.time() - lock.stat().st_mtime > STALE_LOCK_SECONDS:
        lock.unlink(missing_ok=True)
    return directory
