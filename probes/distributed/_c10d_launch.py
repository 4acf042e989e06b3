"""Launch a probe's worker as N real processes that rendezvous on this machine.

`shared_ranks` runs one job once per probe run and hands every probe that asks for the same
job (the same source, world size and environment) the same reports: the claims of a file that
check one job's reports start its ranks once, not once per claim. A failed job is not kept, so
the next probe starts it afresh. `run_ranks` runs a job every time it is called.

Each rank is its own Python process in its own session (process group), started with
`subprocess`; the ranks meet through a FileStore (`file://` in the probe's tmp dir), so
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

from verified.probing import shared

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
    base_env = dict(os.environ, OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME="lo",
                    PROBE_WORLD_SIZE=str(world_size), PROBE_INIT_METHOD=f"file://{tmp_path / 'rendezvous'}")
    base_env.update(env or {})
    procs, logs = [], []
    try:
        for rank in range(world_size):
            log = open(tmp_path / f"rank{rank}.log", "w")
            logs.append(log)
            procs.append(subprocess.Popen(
                [sys.executable, str(script)], stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path,
                env=dict(base_env, PROBE_RANK=str(rank), PROBE_OUT=str(tmp_path / f"rank{rank}.json")),
                start_new_session=True))
        deadline = time.monotonic() + timeout
        for proc in procs:
            left = deadline - time.monotonic()
            try:
                proc.wait(timeout=max(left, 0.01))
            except subprocess.TimeoutExpired:
                raise RankFailed(f"the {world_size}-process job did not finish within {timeout:g} s:\n"
                                 + _tails(tmp_path, world_size)) from None
        bad = [rank for rank, proc in enumerate(procs) if proc.returncode != 0]
        if bad:
            raise RankFailed(f"rank(s) {bad} failed:\n" + _tails(tmp_path, world_size))
        return [json.loads((tmp_path / f"rank{rank}.json").read_text()) for rank in range(world_size)]
    finally:
        for proc in procs:
            _kill(proc)
        for log in logs:
            log.close()


def _tails(tmp_path, world_size, lines=25):
    out = []
    for rank in range(world_size):
        text = (tmp_path / f"rank{rank}.log").read_text(errors="replace").strip().splitlines()
        out.append(f"--- rank {rank} ---\n" + "\n".join(text[-lines:]))
    return "\n".join(out)
