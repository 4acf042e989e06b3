"""Builds that share a checkout (verified.site.build_lock) and a build interrupted in its probe
phase (verified.probing.runner keeps each probe file's entries as the file finishes)."""
import os
import queue
import signal
import subprocess
import threading

import pytest
from conftest import Site

from verified.site import build_lock, build_results

SLOW_PROBE = "probes/zz/test_slow.py"


def lines_of(proc):
    """A queue of `proc`'s output lines, read in a thread (None at the end)."""
    lines = queue.Queue()

    def read():
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines


def wait_for(lines, text, seen, timeout=180):
    """Read lines until one contains `text`; every line read is added to `seen`."""
    while True:
        line = lines.get(timeout=timeout)
        if line is None:
            raise AssertionError(f"the build ended without printing {text!r}:\n{''.join(seen)}")
        seen.append(line)
        if text in line:
            return line


def finish(proc, lines, seen, timeout=180):
    try:
        proc.wait(timeout=timeout)
        hung = False
    except subprocess.TimeoutExpired:
        proc.kill()  # its output ends, and so does the reading below
        hung = True
    while (line := lines.get(timeout=timeout)) is not None:
        seen.append(line)
    if hung:  # say what the build printed before it hung
        raise AssertionError(f"the build did not end within {timeout} s; it printed:\n{''.join(seen)}")
    return proc.returncode, "".join(seen)


def test_a_build_waits_while_another_holds_the_checkout_then_passes(site):
    held = build_lock.hold(site.root / "_build/build.lock", echo=lambda line: None)
    proc = site.start_build()
    lines, seen = lines_of(proc), []
    try:
        line = wait_for(lines, "another build of this checkout is running", seen)
        assert f"(pid {os.getpid()}, lock {site.root / '_build/build.lock'}); waiting for it to finish" in line
        assert proc.poll() is None
    finally:
        held.close()
    code, out = finish(proc, lines, seen)
    assert code == 0, out
    assert "build: the other build finished; this one goes on" in out


def test_two_builds_started_at_once_both_pass(site):
    procs = [site.start_build(), site.start_build()]
    results = [finish(proc, lines_of(proc), []) for proc in procs]
    for code, out in results:
        assert code == 0, out


def test_an_interrupted_build_keeps_the_probe_files_that_finished(tmp_path):
    site = Site(tmp_path / "site")  # its own probe cache: nothing of it ran before
    site.write(SLOW_PROBE, 'import time\n\nimport pytest\n\n\n@pytest.mark.claim("fixture.slow.fact")\n'
                           'def test_slow_fact():\n    time.sleep(600)\n')
    site.write("docs/slow.md", "# Slow\n\n:::{claim} fixture.slow.fact\nA slow fact.\n:::\n")
    site.replace("docs/index.md", "claims\n```", "claims\nslow\n```")
    proc = site.start_build()
    lines, seen = lines_of(proc), []
    wait_for(lines, "probes: [1/2] probes/test_fixture.py", seen)  # the fast file runs first (by name)
    proc.send_signal(signal.SIGINT)  # Ctrl-C while the slow file runs
    code, out = finish(proc, lines, seen, timeout=60)
    assert code != 0, out
    entries = list((site.cache_dir / "files/probes~test_fixture.py").glob("*.json"))
    assert len(entries) == 1, out
    assert not list(site.cache_dir.glob("files/probes~zz~test_slow.py/*.json"))
    left = subprocess.run(["pgrep", "-f", str(site.root / SLOW_PROBE)], capture_output=True, text=True)
    assert left.stdout == "", f"probe processes left running: {left.stdout}"
    site.replace(SLOW_PROBE, "time.sleep(600)", "time.sleep(0)")
    code, out = site.build()
    assert code == 0, out
    assert f"probes: 1 of 2 file(s) changed or never ran, running them: {SLOW_PROBE}" in out


@pytest.mark.timeout(30)  # a join deaf to the signal would wait the whole timeout
def test_ctrl_c_handed_to_the_probe_thread_still_stops_the_wait_for_it():
    """The kernel may deliver a process's SIGINT to any of its threads; the main thread, waiting
    for the probe thread, must still raise KeyboardInterrupt (an untimed join would sleep on)."""
    release = threading.Event()
    probe_thread = threading.Thread(target=release.wait, daemon=True)
    probe_thread.start()
    # Python's own handler, as in a terminal (a background job starts with SIGINT ignored)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Timer(0.3, signal.pthread_kill, (probe_thread.ident, signal.SIGINT)).start()
    try:
        with pytest.raises(KeyboardInterrupt):
            build_results._join(probe_thread)
    finally:
        signal.signal(signal.SIGINT, previous)
        release.set()
