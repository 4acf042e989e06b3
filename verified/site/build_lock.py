"""One build of a checkout at a time: a second `make html` waits for the first, saying so.

Two builds of one checkout write the same pages, doctrees, gallery output and probe cache.
The lock is an exclusive ``flock`` on a file in the build folder, held by the build process
until it exits (the kernel releases it even if the process is killed), holding the owner's
pid for the message.
"""
import fcntl
import os
from pathlib import Path


def hold(path, echo):
    """Take the lock at `path`, waiting (and saying so once) while another process holds it.

    Returns the open file: the lock lasts as long as it stays open.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        owner = handle.read().strip() or "unknown"
        echo(f"build: another build of this checkout is running (pid {owner}, lock {path}); "
             "waiting for it to finish")
        fcntl.flock(handle, fcntl.LOCK_EX)
        echo("build: the other build finished; this one goes on")
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle
