"""Run code in a fresh process that has imported torch and done nothing else, without paying
for the import each time.

A probe about process-wide state (TF32 switches, thread counts) needs a process where nothing
has been set yet. Starting ``python -c "import torch; ..."`` gives one, at the price of a torch
import (2–3 s on two cores) per check. Here, one server per probe run imports torch once and
nothing else; each ``run`` forks a child of it, so the child's torch is exactly as a fresh
import leaves it. The server lives in the run's shared folder (``VERIFIED_RUN_SCRATCH``, from
verified.probing.pytest_plugin) and ends when that folder goes; without one, ``run`` starts a new
interpreter as before.

What a fork cannot give is an environment read at import time (``TORCH_LOGS``,
``PYTORCH_CUDA_ALLOC_CONF``): such checks keep starting a new interpreter.
"""
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from verified.probing.pytest_plugin import SCRATCH_VARIABLE  # the run's shared folder

START_SECONDS = 120.0  # the server's torch import, on a loaded machine

# The server: imports torch, then for each connection forks a child that runs the request in a
# grandchild and reports its pid and then its exit status (so a crash is a status, not silence).
SERVER = r'''
import json, os, signal, socket, sys, time, traceback
import torch

path, folder = sys.argv[1], os.path.dirname(sys.argv[1])
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path + ".tmp")
os.replace(path + ".tmp", path)
server.listen(16)
server.settimeout(1.0)
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel


def serve(conn):
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # this child waits for its own child
    request = json.loads(conn.makefile().readline())
    pid = os.fork()
    if pid == 0:
        conn.close()
        for fd, name in ((1, "stdout"), (2, "stderr")):
            os.dup2(os.open(request[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
        code = 0
        try:
            exec(compile(request["code"], "<fresh torch>", "exec"), {"__name__": "__main__"})
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    conn.sendall((json.dumps({"pid": pid}) + "\n").encode())
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    conn.sendall((json.dumps({"returncode": code}) + "\n").encode())


while os.path.isdir(folder):  # the run's folder goes when the run ends: so does the server
    try:
        conn, _ = server.accept()
    except socket.timeout:
        continue
    if os.fork() == 0:
        server.close()
        try:
            serve(conn)
        finally:
            os._exit(0)
    conn.close()
'''


def run(code, timeout=60.0, cwd=None):
    """(returncode, stdout, stderr) of `code` run in a fresh torch process (a negative
    returncode is the signal that ended it, as with subprocess). Raises subprocess.TimeoutExpired."""
    scratch = os.environ.get(SCRATCH_VARIABLE)
    if not scratch:
        proc = subprocess.run([sys.executable, "-c", "import torch\n" + code], capture_output=True, text=True,
                              timeout=timeout, cwd=cwd)
        return proc.returncode, proc.stdout, proc.stderr
    folder = Path(scratch, "fresh-torch")
    path = _server(folder)
    stamp = f"{os.getpid()}-{time.monotonic_ns()}"
    out, err = folder / f"{stamp}.out", folder / f"{stamp}.err"
    if cwd:
        code = f"import os\nos.chdir({str(cwd)!r})\ndel os\n" + code
    deadline = time.monotonic() + timeout
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(path))
        conn.sendall((json.dumps({"code": code, "stdout": str(out), "stderr": str(err)}) + "\n").encode())
        replies = conn.makefile()
        conn.settimeout(max(deadline - time.monotonic(), 0.01))
        pid = json.loads(replies.readline())["pid"]
        try:
            conn.settimeout(max(deadline - time.monotonic(), 0.01))
            returncode = json.loads(replies.readline())["returncode"]
        except TimeoutError:
            os.kill(pid, 9)
            raise subprocess.TimeoutExpired(["<fresh torch>"], timeout) from None
    texts = [p.read_text(errors="replace") for p in (out, err)]
    for p in (out, err):
        p.unlink(missing_ok=True)
    return returncode, *texts


def _server(folder):
    """The server's socket, starting the server if this run has none yet (one starter wins)."""
    path = folder / "server.sock"
    folder.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(folder / "starting", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        log = open(folder / "server.log", "w")
        # not a session of its own: a run that is stopped stops its process group, server included
        subprocess.Popen([sys.executable, "-c", SERVER, str(path)], stdin=subprocess.DEVNULL, stdout=log,
                         stderr=subprocess.STDOUT, close_fds=True)
        log.close()
    except FileExistsError:
        pass  # another probe started it
    deadline = time.monotonic() + START_SECONDS
    while not path.exists():
        if time.monotonic() > deadline:
            log = (folder / "server.log").read_text(errors="replace") if (folder / "server.log").exists() else ""
            raise RuntimeError(f"the fresh-torch server did not start within {START_SECONDS:g} s:\n{log[-2000:]}")
        time.sleep(0.05)
    return path
