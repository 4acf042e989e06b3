"""Run the probes in separate processes, on every core, and cache the results per probe file.

A probe file whose key (``probe_cache.file_key``: its content, its helpers, the tooling, the
torch build, devices and Python) has an entry in the cache is not run again; the files
that changed run alone, and every file's entries are merged into one results file in the
format of docs/reference/formats.md. Nothing changed means no probe runs and torch is not
even imported: the torch build is recognised from its files (``runinfo.fingerprint``).

The run itself is pytest with pytest-xdist, a worker per core and one more (``--dist loadfile``: a
file's probes stay in one worker, so its module-level set-up happens once), the slowest
files first. Inside each worker every probe is still forked on its own
(``verified.probing.pytest_plugin``), so a crash or a hang is that probe's outcome only.

    python -m verified.probing.runner [--cache DIR] [--out FILE] [probes ...]
"""
import argparse
import hashlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from verified.outcomes import CPU, ERROR, NOT_CHECKED, PASSED
from verified.probing import probe_cache, runinfo

PROJECT_DIR = Path(__file__).resolve().parents[2]  # the folder that holds the verified package
INSTALL_HINT = ("install the project's pinned environment with `make html` (it creates .venv from "
                "requirements.txt), or `pip install torch==2.13.0 pytest==9.2.0 pytest-xdist==3.8.0`")
HEARTBEAT_SECONDS = 10.0  # the longest silence on the console while probes run
LOST = "the probe run recorded no outcome for this probe (see the pytest output above)"
SLOW_HINTS = ("cpp_extension", "load_inline", "torch.compile", "subprocess", "run_ranks")
HINT_SECONDS = 5.0  # what one hint adds to the guessed time of a file never timed


class ProbeRunError(RuntimeError):
    """The probe run itself failed (not a probe): no results file was written."""


# ---------------------------------------------------------------- what ran where

def describe_python(python, cache_dir=None, echo=print):
    """Run info for `python`, or a ProbeRunError that says how to get torch.

    With `cache_dir`, the info is kept per torch fingerprint, so asking again does not import torch.
    """
    try:
        if cache_dir is None:
            return runinfo.collect_in_subprocess(python)
        fingerprint = runinfo.fingerprint_in_subprocess(python)
        digest = hashlib.sha256(json.dumps(fingerprint, sort_keys=True).encode()).hexdigest()[:16]
        cached = Path(cache_dir) / f"runinfo-{digest}.json"
        try:
            info = json.loads(cached.read_text())
            if isinstance(info, dict) and {"torch", "devices", "device_names", "python"} <= info.keys():
                return info
            echo(f"probes: discarded cache entry {cached}: not a run info object")
        except FileNotFoundError:
            pass
        except ValueError as exc:
            echo(f"probes: discarded cache entry {cached}: not JSON ({exc})")
        info = runinfo.collect_in_subprocess(python)
        cached.parent.mkdir(parents=True, exist_ok=True)
        probe_cache.write_atomically(cached, json.dumps(info, indent=1))
        return info
    except (RuntimeError, OSError) as exc:
        raise ProbeRunError(f"torch is not importable by {python} ({exc}): {INSTALL_HINT}") from exc


def suite_digest(probe_dirs):
    """Which probe suite ran: a digest of every probe file (runs compare cleanly only if equal)."""
    digest = hashlib.sha256()
    for directory in probe_dirs:
        for path in sorted(Path(directory).rglob("*.py")):
            digest.update(path.relative_to(directory).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def cores():
    """The cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def worker_count(files):
    """One pytest-xdist worker per core and one more (or VERIFIED_PROBE_WORKERS), never more than
    there are files. The extra one fills the time a worker waits: on a fork and an exit per probe,
    on the interpreters and ranks its probes start. On two cores, a cold run of every probe file
    took 135 s with three workers against 147 s with two (make bench times it)."""
    wanted = int(os.environ.get("VERIFIED_PROBE_WORKERS") or cores() + 1)
    return max(1, min(wanted, len(files)))


def has_xdist(python):
    """Whether `python` has pytest-xdist (a preinstalled Python, `make probes PYTHON=...`, may not)."""
    return subprocess.run([python, "-c", "import xdist"], capture_output=True).returncode == 0


def slowest_first(files, rootdir, cache, recorded_dir=None):
    """Files by how long they take, longest first, so the run does not end on one long file.

    A file's time is its last duration in the cache. On a cold cache it is a guess: the longer of
    its duration in the newest recorded run under `recorded_dir` (results/: the same probes, timed
    by `make matrix`, whose C++ builds may have been warm) and HINT_SECONDS for each SLOW_HINT in
    its text (building C++, compiling, starting processes).
    """
    recorded = {}

    def order(path):
        name = relpath(path, rootdir)
        seconds = cache.last_duration(name) if cache else None
        if seconds is None:
            if recorded_dir is not None and not recorded:
                recorded.update(recorded_durations(recorded_dir) or {None: None})
            text = Path(path).read_text(errors="replace")
            seconds = max(recorded.get(name) or 0.0, HINT_SECONDS * sum(text.count(h) for h in SLOW_HINTS))
        return (-seconds, str(path))
    return sorted(files, key=order)


def recorded_durations(results_dir):
    """{probe file: seconds} of the newest run recorded in `results_dir`, or {} if there is none."""
    runs = []
    for path in sorted(Path(results_dir).glob("*.json")):
        try:
            data = json.loads(path.read_text())
            runs.append((str(data["run"]["date"]), data["probes"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not a results file: the order is only a guess anyway
    if not runs:
        return {}
    durations = Counter()
    for probe in max(runs, key=lambda run: run[0])[1]:
        durations[probe["file"]] += probe.get("duration", 0.0)
    return dict(durations)


def relpath(path, rootdir):
    return Path(path).resolve().relative_to(Path(rootdir).resolve()).as_posix()


# ---------------------------------------------------------------- one pytest run

def run_probe_files(python, files, rootdir, info, timeout=None, echo=print, on_file_done=None):
    """Run the probes of `files` (in that order) isolated; returns the plugin's results dict.

    `on_file_done(name, probes, collection_errors)` is called as each file finishes, with its
    entries, so a caller can keep them before the run ends (or is interrupted).
    """
    rootdir = Path(rootdir)
    workers = worker_count(files)
    if workers > 1 and not has_xdist(python):
        echo(f"probes: pytest-xdist is not installed for {python}: the probes run on one core")
        workers = 1
    with tempfile.TemporaryDirectory(prefix="verified-run-") as work:
        out, info_file, log_file = Path(work, "results.json"), Path(work, "info.json"), Path(work, "pytest.log")
        info_file.write_text(json.dumps(info))
        read_events, write_events = os.pipe()
        command = [python, "-m", "pytest", "-p", "verified.probing.pytest_plugin", "-p", "no:cacheprovider",
                   "-p", "no:timeout", "-c", os.devnull, "--rootdir", str(rootdir), "-q", "-rfE",
                   "--import-mode=importlib", "-o", "python_files=test_*.py",
                   "--continue-on-collection-errors",  # one unimportable file must not stop the others
                   f"--verified-results={out}", f"--verified-run-info={info_file}",
                   f"--verified-events-fd={write_events}"]
        if workers > 1:  # --no-loadscope-reorder keeps the slowest-first order given here
            command += ["-n", str(workers), "--dist", "loadfile", "--no-loadscope-reorder"]
        else:
            command += ["-p", "no:xdist"]
        if timeout:
            command.append(f"--probe-timeout={timeout}")
        command += [str(Path(f).resolve()) for f in files]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(PROJECT_DIR),
                                                                         os.environ.get("PYTHONPATH")])))
        from verified.probing.pytest_plugin import SCRATCH_VARIABLE  # here: a build that runs no probe needs no pytest

        # the folder this run's probes share (verified.probing.pytest_plugin), removed with `work`
        # even if pytest is killed
        env[SCRATCH_VARIABLE] = str(Path(work, "shared"))
        Path(work, "shared").mkdir()
        started = time.monotonic()
        with open(log_file, "w") as log:
            proc = subprocess.Popen(command, cwd=rootdir, env=env, stdout=log, stderr=subprocess.STDOUT,
                                    pass_fds=(write_events,), start_new_session=True)
        os.close(write_events)
        RUNNING.add(proc)
        try:
            Progress(len(files), workers, started, echo, on_file_done).follow(read_events, proc)
        except BaseException:  # interrupted or terminated: pytest, its workers and probes go too
            stop_group(proc)
            raise
        finally:
            RUNNING.discard(proc)
            os.close(read_events)
        output = log_file.read_text()
        if not out.exists():
            raise ProbeRunError(f"the probe run wrote no results (pytest exit {proc.returncode}):\n{_tail(output)}")
        results = json.loads(out.read_text())
    if proc.returncode not in (0, 1):
        echo(_tail(output))
    for path in files:
        name = relpath(path, rootdir)
        lost = lost_probes(path, name, *part_of(results, name))
        if lost:
            echo(f"probes: {name}: the run recorded no outcome for {', '.join(e['function'] for e in lost)}")
            results["probes"] += lost
    return results


RUNNING = set()  # the pytest processes of the runs in progress in this process


def stop_running():
    """Stop every run in progress (at exit: a build interrupted while its probe thread runs)."""
    for proc in list(RUNNING):
        stop_group(proc)


def stop_group(proc):
    """Kill the process group `proc` leads (pytest, its xdist workers and their forked probes)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def exit_on_terminate():
    """Make SIGTERM raise SystemExit, so a terminated run cleans up as an interrupted one does."""
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


class Progress:
    """Turns the plugin's events into console lines: one per finished file, and a heartbeat."""

    def __init__(self, total, workers, started, echo, on_file_done=None):
        self.total, self.workers, self.started, self.echo = total, workers, started, echo
        self.on_file_done = on_file_done
        self.done, self.running = 0, {}

    def follow(self, fd, proc):
        self.echo(f"probes: running {self.total} file(s) on {self.workers} worker(s)")
        buffer, last_line = b"", time.monotonic()
        while True:
            ready, _, _ = select.select([fd], [], [], 1.0)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line.strip() and self.handle(json.loads(line)):
                        last_line = time.monotonic()
            if time.monotonic() - last_line >= HEARTBEAT_SECONDS:
                self.heartbeat()
                last_line = time.monotonic()
        proc.wait()

    def handle(self, event):
        """Print what `event` says; True if a line was printed."""
        now = time.monotonic()
        if event["event"] == "file-started":
            self.running[event["file"]] = now
            return False
        if event["event"] != "file-done":
            return False
        self.running.pop(event["file"], None)
        self.done += 1
        if self.on_file_done is not None:
            self.on_file_done(event["file"], event.get("probes", []), event.get("collection_errors", []))
        counts = ", ".join(f"{n} {outcome}" for outcome, n in sorted(event["counts"].items())) or "no probes"
        self.echo(f"probes: [{self.done:>{len(str(self.total))}}/{self.total}] {event['file']}: {counts} "
                  f"({event['seconds']:.1f} s); {now - self.started:.0f} s elapsed")
        return True

    def heartbeat(self):
        now = time.monotonic()
        running = ", ".join(f"{name} ({now - since:.0f} s)" for name, since in sorted(self.running.items()))
        self.echo(f"probes: {self.done}/{self.total} files done, {now - self.started:.0f} s elapsed"
                  + (f"; running {running}" if running else "; starting workers"))


# ---------------------------------------------------------------- the cache around it

def run_probes(python, probe_dirs, rootdir, out, timeout=None, echo=print):
    """Run every probe afresh, isolated, writing `out`; returns the results dict (no cache)."""
    info = describe_python(python)
    files = probe_cache.probe_files(probe_dirs)
    results = run_probe_files(python, slowest_first(files, rootdir, None), rootdir, info, timeout, echo)
    results["probes"] = in_file_order(results["probes"], files, rootdir)
    results["run"]["suite"] = suite_digest(probe_dirs)
    probe_cache.write_atomically(_prepared(out), json.dumps(results, indent=1))
    echo(f"probes: {summary(results)}")
    return results


@dataclass
class CachedRun:
    results: dict  # the merged results, as a results file holds them
    key: str  # a digest of every file's key
    file_keys: dict  # probe file (relative to the root) -> its key
    ran: list  # the probe files that ran this time; empty when everything came from the cache


def cached_probe_results(python, probe_dirs, rootdir, cache_dir, echo=print, out=None, timeout=None,
                         recorded_dir="results"):
    """A CachedRun: every probe file's entries, from the cache where its key is there.

    Only the files without an entry run, longest first (`recorded_dir`, relative to `rootdir`:
    the recorded runs whose durations order a cold run). With `out`, the merged results are
    also written there.
    """
    rootdir = Path(rootdir)
    info = describe_python(python, cache_dir, echo)
    cache = probe_cache.ProbeCache(cache_dir)
    identity, tooling = probe_cache.identity_of(info), probe_cache.tooling_digest()
    files = probe_cache.probe_files(probe_dirs)
    keys, entries, stale = {}, {}, []
    for path in files:
        name = relpath(path, rootdir)
        keys[name] = probe_cache.file_key(path, rootdir, identity, tooling)
        try:
            entries[name] = cache.load(name, keys[name])
        except probe_cache.BadEntry as exc:
            echo(f"probes: discarded cache entry {cache.path_of(name, keys[name])}: {exc}")
            cache.discard(name, keys[name])
            entries[name] = None
        if entries[name] is None:
            stale.append(path)
    key = hashlib.sha256(json.dumps(keys, sort_keys=True).encode()).hexdigest()[:16]
    if stale:
        if len(stale) == len(files):
            names = "all of them"
        elif len(stale) <= 12:
            names = ", ".join(relpath(p, rootdir) for p in stale)
        else:
            names = "all but " + ", ".join(sorted(set(keys) - {relpath(p, rootdir) for p in stale}))
        echo(f"probes: {len(stale)} of {len(files)} file(s) changed or never ran, running them: {names}")
        commit = runinfo.repository_commit(str(rootdir))

        def keep(name, probes, collection_errors):
            """Cache a finished file's entries at once: an interrupted run keeps the files that finished."""
            path = rootdir / name
            if name in keys and not lost_probes(path, name, probes, collection_errors):  # else run it next time
                cache.store(name, keys[name], probe_cache.make_entry(
                    name, keys[name], probes, collection_errors, sum(e["duration"] for e in probes),
                    runinfo.now(), commit))

        order = slowest_first(stale, rootdir, cache, rootdir / recorded_dir)
        fresh = run_probe_files(python, order, rootdir, info, timeout, echo, keep)
        for path in stale:
            name = relpath(path, rootdir)
            entries[name] = split_for(fresh, name, keys[name])
            if not any(e["message"] == LOST for e in entries[name]["probes"]):  # else run it again next time
                cache.store(name, keys[name], entries[name])
    else:
        echo(f"probes: unchanged (key {key}), reusing the cached results of {len(files)} file(s)")
    results = merge(info, [entries[relpath(p, rootdir)] for p in files], key, suite_digest(probe_dirs))
    if out is not None:
        probe_cache.write_atomically(_prepared(out), json.dumps(results, indent=1))
    echo(f"probes: {summary(results)}")
    return CachedRun(results, key, keys, [relpath(p, rootdir) for p in stale])


def part_of(results, name):
    """(probe entries, collection errors) of probe file `name` in a run's results."""
    return ([e for e in results["probes"] if e["file"] == name],
            [e for e in results.get("collection_errors", []) if e["nodeid"].split("::")[0] == name])


def split_for(results, name, key):
    """The cache entry of probe file `name` out of a run's results."""
    probes, errors = part_of(results, name)
    run = results["run"]
    return probe_cache.make_entry(name, key, probes, errors, sum(e["duration"] for e in probes),
                                  run.get("date", ""), run.get("repository_commit"))


def lost_probes(path, name, entries, collection_errors):
    """An error entry for each probe declared in `path` that the run returned no entry for."""
    if collection_errors:
        return []
    ran = {e["function"] for e in entries}
    return [{"nodeid": f"{name}::{function}", "file": name, "line": line, "function": function,
             "claims": claim_ids, "device": CPU, "outcome": ERROR, "message": LOST, "messages": [], "duration": 0.0}
            for function, line, claim_ids in probe_cache.declared_probes(path) if function not in ran]


def merge(info, file_entries, key, suite):
    """One results file from the entries of every probe file (their order is kept)."""
    newest = max(file_entries, key=lambda e: e["date"], default=None)
    run = dict(info, date=newest["date"] if newest else runinfo.now(),
               repository_commit=newest["repository_commit"] if newest else None, suite=suite, cache_key=key)
    return {"run": run, "probes": [p for e in file_entries for p in e["probes"]],
            "collection_errors": [c for e in file_entries for c in e["collection_errors"]]}


def in_file_order(entries, files, rootdir):
    """Entries grouped by probe file in collection order (workers finish in any order)."""
    rank = {relpath(p, rootdir): i for i, p in enumerate(files)}
    return sorted(entries, key=lambda e: rank.get(e["file"], len(rank)))


def summary(results):
    counts = Counter(entry["outcome"] for entry in results["probes"])
    text = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items())) or "no probes"
    errors = len(results.get("collection_errors", []))
    return text + (f", {errors} collection errors" if errors else "")


def _prepared(out):
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    return out


def _tail(text, lines=40):
    return "\n".join(text.strip().splitlines()[-lines:])


def main(argv=None):
    parser = argparse.ArgumentParser(description="Run the claim probes, each in its own process.")
    parser.add_argument("probe_dirs", nargs="*", default=["probes"])
    parser.add_argument("--out", default="_build/probes/results.json", help="where the merged results go")
    parser.add_argument("--cache", default=None, metavar="DIR",
                        help="reuse the cached results of unchanged probe files (the cache `make html` uses)")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--timeout", type=float, default=None, help="per-probe limit in seconds")
    args = parser.parse_args(argv)
    exit_on_terminate()
    try:
        if args.cache:
            results = cached_probe_results(args.python, args.probe_dirs, Path.cwd(), args.cache,
                                           out=args.out, timeout=args.timeout).results
        else:
            results = run_probes(args.python, args.probe_dirs, Path.cwd(), args.out, args.timeout)
        print(f"wrote {args.out}")
    except ProbeRunError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    bad = [e for e in results["probes"] if e["outcome"] != PASSED and e["outcome"] not in NOT_CHECKED]
    for entry in bad:
        print(f"{entry['outcome'].upper()} {entry['nodeid']} ({entry['file']}:{entry['line']}): "
              f"{entry['message'].strip().splitlines()[0] if entry['message'].strip() else ''}")
    for error in results.get("collection_errors", []):
        print(f"ERROR collecting {error['nodeid']}: {error['message'].strip().splitlines()[-1]}")
    skipped = sum(e["outcome"] in NOT_CHECKED for e in results["probes"])
    passed = sum(e["outcome"] == PASSED for e in results["probes"])
    print(f"probes: {passed} passed, {len(bad) + len(results.get('collection_errors', []))} failed, {skipped} skipped")
    return 1 if bad or results.get("collection_errors") else 0


if __name__ == "__main__":
    sys.exit(main())
