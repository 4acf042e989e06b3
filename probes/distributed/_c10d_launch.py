"""Launch a probe's worker as N real processes that rendezvous on this machine.

`shared_ranks` runs one job once per probe run and hands every probe that asks for the same
job (the same source, world size and environment) the same reports: the claims of a file that
check one job's reports start its ranks once, not once per claim. A failed job is not kept, so
the next probe starts it afresh. `run_ranks` runs a job every time it is called.

Each rank is its own Python process in its own session (process group): forked from the probe
run's fresh-torch server (verified.probing.fresh_torch), a process that has imported torch and
done nothing else, so a job does not pay two torch imports; or, outside a probe run or for a job
that sets environment variables (which torch may read at import), a new interpreter started
with `subprocess`. The ranks meet through a FileStore (`file://` in the probe's tmp dir), so
no port has to be guessed. Whatever happens (a failed assertion, a hang, a timeout), every
rank's whole process group is killed before `run_ranks` returns or raises.

A worker is the source of a Python script. It finds, already defined:
``RANK``, ``WORLD_SIZE``, ``INIT_METHOD`` (the file:// URL), ``init()`` (joins the default
Gloo group) and ``report(obj)`` (hands a JSON-able result back to the probe and ends the rank).
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from verified.probing import fresh_torch, shared

PRELUDE = '''
import json, os, sys
from datetime import timedelta
RANK = int(os.environ["PROBE_RANK"])
WORLD_SIZE = int(os.environ["PROBE_WORLD_SIZE"])
INIT_METHOD = os.environ["PROBE_INIT_METHOD"]
_OUT = os.environ["PROBE_OUT"]

def init(backend="gloo"):
    import torch.distributed as dist
    dist.init_process_group(backend, init_method=INIT_METHOD, rank=RANK, world_size=WORLD_SIZE,
                            timeout=timedelta(seconds=60))
    return dist

def report(obj):
    """Hand `obj` back and end this rank: always a worker's last call.

    The rank leaves with os._exit, skipping interpreter teardown: there, Gloo's threads can
    abort a finished rank ("terminate called without an active exception"), seen when the
    probes share the cores with other probes.
    """
    with open(_OUT + ".tmp", "w") as f:
        json.dump(obj, f)
    os.replace(_OUT + ".tmp", _OUT)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
'''


def shared_ranks(worker_source, world_size=2, timeout=120.0, env=None):
    """`run_ranks`' reports for this job, run once per probe run: later probes get the same reports
    (verified.probing.shared). Only a job whose ranks all reported is kept: after a failure, the
    next probe that asks runs the job again."""
    def run_job():
        with tempfile.TemporaryDirectory(prefix="c10d-job-") as work:
            return run_ranks(work, worker_source, world_size, timeout, env)

    job = [PRELUDE, worker_source, world_size, timeout, sorted((env or {}).items())]
    return shared.once(job, run_job, folder="c10d-jobs")


class RankFailed(AssertionError):
    """A rank exited with an error, or the job ran out of time."""


def _kill(proc):
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()


def run_ranks(tmp_path, worker_source, world_size=2, timeout=120.0, env=None):
    """Run `worker_source` as `world_size` processes; return the list of their reports."""
    tmp_path = Path(tmp_path)
    script = tmp_path / "worker.py"
    script.write_text(PRELUDE + "\n" + worker_source)
    job_env = dict(GLOO_SOCKET_IFNAME="lo", PROBE_WORLD_SIZE=str(world_size),
                   PROBE_INIT_METHOD=f"file://{tmp_path / 'rendezvous'}")
    start = _start_interpreter if env or not fresh_torch.available() else _fork_fresh_torch
    ranks = []
    try:
        for rank in range(world_size):
            rank_env = dict(job_env, **(env or {}), PROBE_RANK=str(rank), PROBE_OUT=str(tmp_path / f"rank{rank}.json"))
            ranks.append(start(script, rank_env, tmp_path / f"rank{rank}.log"))
        deadline = time.monotonic() + timeout
        for proc in ranks:
            left = deadline - time.monotonic()
            try:
                proc.wait(timeout=max(left, 0.01))
            except subprocess.TimeoutExpired:
                raise RankFailed(f"the {world_size}-process job did not finish within {timeout:g} s:\n"
                                 + _tails(tmp_path, world_size)) from None
        bad = [rank for rank, proc in enumerate(ranks) if proc.returncode != 0]
        if bad:
            raise RankFailed(f"rank(s) {bad} failed:\n" + _tails(tmp_path, world_size))
        return [json.loads((tmp_path / f"rank{rank}.json").read_text()) for rank in range(world_size)]
    finally:
        for proc in ranks:
            proc.kill()


# One intra-op thread per rank (two ranks share the cores): as an environment variable for a
# new interpreter, by torch.set_num_threads in a forked one, whose OpenMP has read its environment.
# One line, put before the script's first line, so that tracebacks quote the script's lines.
ONE_THREAD = "import torch as _torch; _torch.set_num_threads(1); del _torch; "


def _fork_fresh_torch(script, env, log):
    """A rank forked from the fresh-torch server, with the caller's environment as a new interpreter has it."""
    return fresh_torch.start(ONE_THREAD + script.read_text(), log, env=dict(os.environ, **env), cwd=script.parent,
                             filename=str(script))


class _Interpreter:
    """A rank in a new interpreter, with the `wait` and `kill` of fresh_torch.Forked."""

    def __init__(self, script, env, log):
        with open(log, "w") as out:
            self.proc = subprocess.Popen([sys.executable, str(script)], stdout=out, stderr=subprocess.STDOUT,
                                         cwd=script.parent, env=dict(os.environ, OMP_NUM_THREADS="1", **env),
                                         start_new_session=True)

    @property
    def returncode(self):
        return self.proc.returncode

    def wait(self, timeout):
        return self.proc.wait(timeout=timeout)

    def kill(self):
        _kill(self.proc)


_start_interpreter = _Interpreter


def _tails(tmp_path, world_size, lines=25):
    out = []
    for rank in range(world_size):
        text = (tmp_path / f"rank{rank}.log").read_text(errors="replace").strip().splitlines()
        out.append(f"--- rank {rank} ---\n" + "\n".join(text[-lines:]))
    return "\n".join(out)
