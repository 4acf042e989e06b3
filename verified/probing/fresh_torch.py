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
``PYTORCH_CUDA_ALLOC_CONF``): such checks keep starting a new interpreter. Variables read later
(by ``init_process_group``, say) can be given with ``env``: the child sets them before the code runs.

``run`` waits for the code; ``start`` returns at once with a ``Forked`` process to wait for or kill
(probes/distributed/_c10d_launch.py starts the ranks of a job this way, side by side).
"""
import hashlib
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
import hashlib, json, os, signal, socket, sys, time, traceback
import torch

path, folder = sys.argv[1], os.path.dirname(sys.argv[1])
ADDRESS = "\0verified-fresh-torch-" + hashlib.sha256(path.encode()).hexdigest()[:24]
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(ADDRESS)  # an abstract socket: a path under a deep temporary folder can be too long
open(path + ".tmp", "w").close()
os.replace(path + ".tmp", path)  # the sign that the server listens
server.listen(16)
server.settimeout(1.0)
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel


def serve(conn):
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # this child waits for its own child
    request = json.loads(conn.makefile().readline())
    pid = os.fork()
    if pid == 0:
        conn.close()
        os.setsid()  # a session of its own: killing its process group ends whatever it started
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        out = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        err = out if request["stderr"] == request["stdout"] else \
            os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(out, 1)
        os.dup2(err, 2)
        if request.get("cwd"):
            os.chdir(request["cwd"])
        os.environ.update(request.get("env") or {})
        code = 0
        try:
            exec(compile(request["code"], request.get("filename") or "<fresh torch>", "exec"),
                 {"__name__": "__main__"})
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
    stamp = f"{os.getpid()}-{time.monotonic_ns()}"
    out, err = folder / f"{stamp}.out", folder / f"{stamp}.err"
    child = start(code, out, err, cwd=cwd)
    try:
        returncode = child.wait(timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        raise
    texts = [p.read_text(errors="replace") for p in (out, err)]
    for p in (out, err):
        p.unlink(missing_ok=True)
    return returncode, *texts


def available():
    """Whether this probe run has a shared folder, where the server lives."""
    return bool(os.environ.get(SCRATCH_VARIABLE))


class Forked:
    """A process forked from the server for one `start`: its pid, `wait` and `kill`."""

    def __init__(self, conn, replies, pid):
        self._conn, self._replies, self.pid, self.returncode = conn, replies, pid, None

    def wait(self, timeout):
        """Its exit status (negative: the signal that ended it); subprocess.TimeoutExpired after `timeout` s."""
        if self.returncode is None:
            self._conn.settimeout(max(timeout, 0.01))
            try:
                self.returncode = json.loads(self._replies.readline())["returncode"]
            except TimeoutError:
                raise subprocess.TimeoutExpired(["<fresh torch>"], timeout) from None
            self._conn.close()
        return self.returncode

    def kill(self):
        """Kill its process group (its session: it and whatever it started), if it still runs."""
        if self.returncode is None:
            for kill in (os.killpg, os.kill):  # the group, and the process itself if it has not made one yet
                try:
                    kill(self.pid, 9)
                except ProcessLookupError:
                    pass
            try:
                self.wait(10)
            except (subprocess.TimeoutExpired, OSError, ValueError):
                self._conn.close()


def start(code, stdout, stderr=None, env=None, cwd=None, filename=None, timeout=START_SECONDS):
    """Fork a fresh torch process that runs `code` as __main__ with its output in the files
    `stdout` and `stderr` (the same file when `stderr` is None), after setting the variables
    `env` and changing to `cwd`; `filename` names the code in tracebacks. Needs `available()`."""
    path = _server(Path(os.environ[SCRATCH_VARIABLE], "fresh-torch"))
    request = {"code": code, "stdout": str(stdout), "stderr": str(stderr or stdout), "env": env or {},
               "cwd": str(cwd) if cwd else None, "filename": filename}
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(timeout)
        conn.connect(address(path))
        conn.sendall((json.dumps(request) + "\n").encode())
        replies = conn.makefile()
        pid = json.loads(replies.readline())["pid"]
    except BaseException:
        conn.close()
        raise
    return Forked(conn, replies, pid)


def address(path):
    """The server's abstract socket name (Linux), from the path of its marker file, as SERVER makes it."""
    return "\0verified-fresh-torch-" + hashlib.sha256(str(path).encode()).hexdigest()[:24]


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
