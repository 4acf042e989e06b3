"""The pytest side of probes.

- ``@pytest.mark.claim("tensor.view.shares-storage")`` names the claim a probe checks
  (repeatable).
- A probe that takes a ``device`` argument runs once per device (``cpu``, ``cuda``);
  ``@pytest.mark.devices("cuda")`` narrows that. A device this machine lacks is skipped
  with "not run here". A probe without ``device`` runs once, on the CPU.
- With ``--verified-results=FILE`` every probe runs in a forked child, so a segfault or a
  hang is reported for that probe (``crashed``, ``timeout``) and the run goes on; the
  outcomes are written to FILE (format: docs/reference/formats.md), each with the error and
  warning messages its ``raises``/``warns`` blocks caught (verified.probing.message_capture); a failed or
  error entry names the line in the probe's folder where it failed (``failed_at``), and a probe
  that recorded figures (verified.probing.measured) carries them (``measured``). Outcome and device
  names: verified.outcomes.
- Under pytest-xdist (``-n N``) each worker forks its probes the same way; the entry of each
  probe travels to the controller in its report's ``user_properties``, and the controller
  writes FILE. ``--verified-events-fd`` streams a JSON line per started and finished probe
  file to the caller, for its progress lines; a finished file's line carries its entries, so
  the caller can cache them before the run ends.
- The probes of one run share a folder, named by ``VERIFIED_RUN_SCRATCH`` (the runner makes it;
  without one, it is made here and removed at the end), for set-up that is run once per run
  rather than once per probe (probes/distributed/_c10d_launch.py, verified.probing.fresh_torch).
- Each forked probe starts from random seeds of its own, derived from its node id
  (``seed_random``): its random inputs are the same on every run, so an input that happens to
  sit on a rounding edge fails every time or never, instead of once in a thousand runs.

pytest-forked would do the forking, but it is broken with pytest 9, so it is done here.
"""
import hashlib
import json
import os
import random
import select
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest
from _pytest.reports import TestReport
from _pytest.runner import runtestprotocol
from _pytest.skipping import evaluate_skip_marks  # pytest's own reading of skip/skipif marks

from verified.outcomes import (
    CPU,
    CRASHED,
    CUDA,
    DEVICES,
    ERROR,
    FAILED,
    NOT_APPLICABLE,
    NOT_RUN_HERE,
    PASSED,
    SKIPPED,
    TIMEOUT,
)
from verified.probing import measured, message_capture, runinfo
from verified.probing.probe_cache import declared_probes

DEFAULT_TIMEOUT = 120.0
NO_DEVICE_REASON = NOT_RUN_HERE + ": this machine has no {device} device"  # a skipped entry's message
ENTRY_PROPERTY = "verified_entry"  # the user_properties name carrying a probe's entry to the controller
# A folder that lives as long as this pytest process, for what the probes of one run share
# (probes/distributed runs a two-rank job once per file there, not once per claim).
SCRATCH_VARIABLE = "VERIFIED_RUN_SCRATCH"


def pytest_addoption(parser):
    group = parser.getgroup("verified", "claim probes")
    group.addoption("--verified-results", metavar="FILE", default=None,
                    help="run each probe in a forked child and write the outcomes to FILE")
    group.addoption("--probe-timeout", type=float, default=DEFAULT_TIMEOUT,
                    help="seconds before a probe is killed (a @pytest.mark.timeout overrides)")
    group.addoption("--verified-run-info", metavar="FILE", default=None,
                    help="the run info (JSON) to record, instead of asking torch again at the end")
    group.addoption("--verified-events-fd", type=int, default=None, metavar="FD",
                    help="write a JSON line per started and finished probe file to this file descriptor")


def pytest_configure(config):
    config.addinivalue_line("markers", "claim(id): the claim this probe checks; repeatable")
    config.addinivalue_line("markers", "devices(*names): run this probe only on these devices")
    config.addinivalue_line("markers", "torch_version(spec): the behaviour exists only for torch versions "
                                       "matching spec (e.g. '>=2.14'); elsewhere the probe is 'not applicable'")
    if not config.pluginmanager.hasplugin("timeout"):
        config.addinivalue_line("markers", "timeout(seconds): kill the probe after this long")
    path = config.getoption("verified_results")
    if path:
        config.pluginmanager.register(IsolatedRun(config, path), "verified-isolated-run")


def pytest_collect_file(file_path, parent):
    """Probe files import the helper modules beside them by plain name (``import _c10d_launch``).

    Probes are imported with ``--import-mode=importlib`` (two probe files may share a basename),
    which leaves sys.path alone, so each probe folder is put on it here, before its files import.
    """
    folder = str(file_path.parent)
    if file_path.name.startswith("test_") and file_path.suffix == ".py" and folder not in sys.path:
        sys.path.insert(0, folder)


def available_devices():
    """Devices this machine has. Asks NVML, so CUDA is not initialised before a fork."""
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    import torch

    return (CPU, CUDA) if torch.cuda.is_available() else (CPU,)


def pytest_generate_tests(metafunc):
    if "device" not in metafunc.fixturenames or metafunc.definition.get_closest_marker("claim") is None:
        return
    marker = metafunc.definition.get_closest_marker("devices")
    wanted = marker.args if marker else DEVICES
    unknown = [d for d in wanted if d not in DEVICES]
    if unknown:
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: unknown device(s) {unknown}; known: {DEVICES}")
    present = available_devices()
    params = [
        pytest.param(d, id=d, marks=pytest.mark.skipif(d not in present, reason=NO_DEVICE_REASON.format(device=d)))
        for d in wanted
    ]
    metafunc.parametrize("device", params)


def pytest_collection_modifyitems(config, items):
    """Version-bounded probes outside their range become "not applicable", not failures."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    version = None
    for item in items:
        marker = item.get_closest_marker("torch_version")
        if marker is None:
            continue
        if version is None:
            import torch

            version = Version(torch.__version__.split("+")[0])
        spec = SpecifierSet(marker.args[0])
        if version not in spec:
            item.add_marker(pytest.mark.skip(reason=f"{NOT_APPLICABLE}: torch {version} is outside {spec}"))


def claims_of(item):
    return sorted({mark.args[0] for mark in item.iter_markers("claim") if mark.args})


def device_of(item):
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("device", CPU) if callspec else CPU


def timeout_of(item):
    marker = item.get_closest_marker("timeout")
    if marker and marker.args:
        return float(marker.args[0])
    return item.config.getoption("probe_timeout")


def outcome_of(reports):
    """One outcome for a probe from its setup/call/teardown reports, and its message."""
    for rep in reports:
        if rep.failed:
            return (FAILED if rep.when == "call" else ERROR), _message(rep)
    for rep in reports:
        if rep.skipped:
            if hasattr(rep, "wasxfail"):
                return ERROR, "xfail is not allowed in a probe: a probe must assert its claim"
            message = _message(rep)
            return (NOT_APPLICABLE if message.startswith(NOT_APPLICABLE) else SKIPPED), message
    return PASSED, ""


def failed_at_of(reports):
    """Where the first failed report says its probe failed (IsolatedRun.pytest_runtest_makereport), or None."""
    return next((getattr(rep, "failed_at", None) for rep in reports if rep.failed), None)


def failure_line(traceback, probe_file, root):
    """{"file", "line"} of the innermost frame of `traceback` in `probe_file`, else of the innermost
    one in a file under the probe's folder (a helper beside it), else None; the file relative to `root`."""
    probe_file = Path(probe_file).resolve()
    frames = [(Path(entry.path).resolve(), entry.lineno + 1) for entry in traceback
              if isinstance(entry.path, Path)]  # a str path is code with no file (exec, -c)
    found = next((f for f in reversed(frames) if f[0] == probe_file), None) or \
        next((f for f in reversed(frames) if probe_file.parent in f[0].parents), None)
    if found is None:
        return None
    path, line = found
    root = Path(root).resolve()
    return {"file": path.relative_to(root).as_posix() if root in path.parents else str(path), "line": line}


def _message(rep):
    longrepr = rep.longrepr
    if isinstance(longrepr, (tuple, list)):  # a skip: (file, line, reason)
        return str(longrepr[2]).removeprefix("Skipped: ")
    crash = getattr(longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(longrepr)
    return text[:2000]


class IsolatedRun:
    """Runs each probe in a forked child and records one entry per probe and device.

    In an xdist worker it only runs probes; the process that writes the results (the xdist
    controller, or pytest itself without xdist) gathers the entries from the reports.
    """

    def __init__(self, config, path):
        self.config = config
        self.path = path
        self.is_worker = hasattr(config, "workerinput")
        message_capture.record_checked_messages()
        self.entries = []
        self.collection_errors = []
        fd = config.getoption("verified_events_fd")
        self.events = None if fd is None or self.is_worker else os.fdopen(fd, "w", buffering=1)
        self.expected = Counter()  # probe file -> probes collected there
        self.done, self.first_start = Counter(), {}  # per probe file: probes finished, when it started
        self.scratch = None
        if SCRATCH_VARIABLE not in os.environ:  # run without the runner: this process makes the folder
            self.scratch = os.environ[SCRATCH_VARIABLE] = tempfile.mkdtemp(prefix="verified-probe-run-")

    def pytest_unconfigure(self, config):
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)
            os.environ.pop(SCRATCH_VARIABLE, None)

    # ------------------------------------------------------------ progress events

    def _emit(self, **event):
        if self.events is not None:
            self.events.write(json.dumps(event) + "\n")

    def _collected(self, nodeids):
        if not self.expected:
            self.expected.update(nodeid.split("::", 1)[0] for nodeid in nodeids)
            self._emit(event="collected", files=dict(self.expected))

    def pytest_collection_finish(self, session):
        self._collected([item.nodeid for item in session.items])

    @pytest.hookimpl(optionalhook=True)  # an xdist hook: unknown when xdist is not loaded
    def pytest_xdist_node_collection_finished(self, node, ids):
        self._collected(ids)

    def pytest_runtest_logstart(self, nodeid, location):
        path = nodeid.split("::", 1)[0]
        if path not in self.first_start:
            self.first_start[path] = time.monotonic()
            self._emit(event="file-started", file=path)

    def _finished_one(self, entry):
        path = entry["file"]
        self.done[path] += 1
        if self.done[path] >= self.expected.get(path, 0):
            entries = [e for e in self.entries if e["file"] == path]
            seconds = time.monotonic() - self.first_start.get(path, time.monotonic())
            self._file_done(path, entries, [], seconds)

    def _file_done(self, path, entries, collection_errors, seconds):
        """The event of a finished probe file, with its entries: the caller can keep them at once,
        so an interrupted run loses only the files still running."""
        counts = Counter(e["outcome"] for e in entries)
        self._emit(event="file-done", file=path, counts=dict(counts), seconds=round(seconds, 2),
                   probes=entries, collection_errors=collection_errors)

    # ------------------------------------------------------------ collecting entries

    def pytest_collectreport(self, report):
        if report.failed and not self.is_worker:
            message = str(report.longrepr)[-2000:]
            self.collection_errors.append({"nodeid": report.nodeid, "message": message})
            # Still say which claims this file would have checked, so they show as errors, not missing.
            declared = [{"nodeid": f"{report.nodeid}::{function}", "file": report.nodeid, "line": line,
                         "function": function, "claims": claim_ids, "device": CPU,
                         "outcome": ERROR, "message": first_error_line(message), "messages": [], "duration": 0.0}
                        for function, line, claim_ids in declared_probes(self.config.rootpath / report.nodeid)]
            self.entries += declared
            self._file_done(report.nodeid, declared, [self.collection_errors[-1]], 0.0)

    def pytest_runtest_logreport(self, report):
        for name, value in report.user_properties:
            if name == ENTRY_PROPERTY and not self.is_worker:
                self.entries.append(value)
                self._finished_one(value)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        """A failed report carries the line in the probe where it failed (``failed_at``); pytest
        serializes a report's attributes, so it reaches the parent and the xdist controller."""
        report = yield
        if report.failed and call.excinfo is not None:
            found = failure_line(call.excinfo.traceback, item.path, self.config.rootpath)
            if found:
                report.failed_at = found
        return report

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        started = time.monotonic()
        run = self._run_skipped if evaluate_skip_marks(item) else self._run_forked
        reports, outcome, message, checked, figures = run(item)
        path, line0, _ = item.location
        entry = {
            "nodeid": item.nodeid,
            "file": path,
            "line": line0 + 1,
            "function": item.originalname,
            "claims": claims_of(item),
            "device": device_of(item),
            "outcome": outcome,
            "message": message,
            "messages": checked,
            "duration": round(time.monotonic() - started, 4),
        }
        if figures:
            entry["measured"] = figures
        failed_at = failed_at_of(reports)  # a failed or error entry's line, when it is in the probe's folder
        if failed_at:
            entry["failed_at"] = failed_at
        reports[-1].user_properties.append((ENTRY_PROPERTY, entry))
        for rep in reports:
            item.ihook.pytest_runtest_logreport(report=rep)
        item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True

    def _run_skipped(self, item):
        """A probe its skip marks skip ("not run here", "not applicable") runs no code of its own:
        its reports are made here, without the fork (a fork of a process holding torch costs
        about 20 ms, a third of the probe run for the CUDA cases on a CPU machine)."""
        reports = runtestprotocol(item, log=False, nextitem=None)
        return (reports, *outcome_of(reports), [], {})

    def _run_forked(self, item):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: run the probe, send its reports back, never return
            os.close(read_end)
            code = 0
            try:
                message_capture.checked.clear()
                measured.figures.clear()
                seed_random(item.nodeid)
                reports = runtestprotocol(item, log=False, nextitem=None)
                payload = {"reports": [self.config.hook.pytest_report_to_serializable(config=self.config, report=r)
                                       for r in reports], "messages": message_capture.checked,
                           "measured": measured.figures}
                data = json.dumps(payload).encode()
            except BaseException as exc:  # noqa: BLE001 - the parent reports it
                data, code = json.dumps({"internal_error": repr(exc)}).encode(), 3
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(data)
            os._exit(code)
        os.close(write_end)
        data, timed_out = _read_until(read_end, time.monotonic() + timeout_of(item))
        os.close(read_end)
        if timed_out:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        if timed_out:
            return self._synthetic(item, f"timeout: killed after {timeout_of(item):g} s"), TIMEOUT, \
                f"killed after {timeout_of(item):g} s", [], {}
        if os.WIFSIGNALED(status):
            name = signal.Signals(os.WTERMSIG(status)).name
            return self._synthetic(item, f"crashed: the probe process died of {name}"), CRASHED, \
                f"the probe process died of {name}", [], {}
        try:
            payload = json.loads(data)
        except ValueError:
            payload = {"internal_error": f"exit status {os.WEXITSTATUS(status)}, no report"}
        if "internal_error" in payload:
            message = payload["internal_error"]
            return self._synthetic(item, f"crashed: {message}"), CRASHED, message, [], {}
        reports = [self.config.hook.pytest_report_from_serializable(config=self.config, data=d)
                   for d in payload["reports"]]
        outcome, message = outcome_of(reports)
        return reports, outcome, message, payload["messages"], payload.get("measured", {})

    @staticmethod
    def _synthetic(item, text):
        keywords = {name: 1 for name in item.keywords}
        return [TestReport(item.nodeid, item.location, keywords, "failed", text, "call", [], 0.0)]  # pytest's word

    def pytest_sessionfinish(self, session):
        if self.is_worker:
            return
        given = self.config.getoption("verified_run_info")
        info = json.loads(Path(given).read_text()) if given else \
            runinfo.collect_in_subprocess(cwd=str(session.config.rootpath))
        info["date"] = runinfo.now()
        info["repository_commit"] = runinfo.repository_commit(str(session.config.rootpath))
        results = {"run": info, "probes": self.entries, "collection_errors": self.collection_errors}
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        with open(self.path, "w") as out:
            json.dump(results, out, indent=1)


def seed_for(nodeid):
    """A seed that depends on `nodeid` only (not on the run, the worker or PYTHONHASHSEED)."""
    return int.from_bytes(hashlib.sha256(nodeid.encode()).digest()[:4], "big")


def seed_random(nodeid):
    """Seed Python's `random` and, when the probe module imported it, torch (CPU and CUDA)."""
    seed = seed_for(nodeid)
    random.seed(seed)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)


def first_error_line(text):
    lines = [line for line in text.splitlines() if line.startswith("E ")]
    return (lines[-1][1:].strip() if lines else text.strip().splitlines()[-1]) if text.strip() else ""


def _read_until(fd, deadline):
    """Everything written to `fd` until EOF, or (partial, True) once `deadline` passes."""
    chunks = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return b"".join(chunks), True
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks), False
        chunks.append(chunk)
