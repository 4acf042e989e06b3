"""verified.probing.fresh_torch: fresh torch processes forked from one server per probe run."""
import shutil
import subprocess
import time

import pytest

from verified.probing import fresh_torch


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    folder = tmp_path / "run"
    folder.mkdir()
    monkeypatch.setenv("VERIFIED_RUN_SCRATCH", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)  # the end of the run: the server sees it and ends


def test_each_run_is_a_new_process_where_nothing_was_set(scratch):
    rc, out, err = fresh_torch.run("import os, torch\ntorch.backends.cuda.matmul.fp32_precision = 'tf32'\n"
                                   "print(os.getpid(), torch.backends.cuda.matmul.fp32_precision)")
    assert (rc, err) == (0, "") and out.split()[1] == "tf32"
    rc, out2, _ = fresh_torch.run("import os, sys, torch\nprint(os.getpid(), torch.backends.cuda.matmul.fp32_precision,"
                                  " 'torch.backends.cuda' in sys.modules)")
    assert rc == 0 and out2.split()[1:] == ["none", "True"] and out2.split()[0] != out.split()[0]


def test_exit_codes_signals_tracebacks_and_timeouts_come_back(scratch):
    assert fresh_torch.run("raise SystemExit(3)")[0] == 3
    assert fresh_torch.run("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")[0] == -9
    rc, out, err = fresh_torch.run("print('before')\nraise ValueError('bad input')")
    assert rc == 1 and out == "before\n" and "ValueError: bad input" in err
    with pytest.raises(subprocess.TimeoutExpired):
        fresh_torch.run("import time\ntime.sleep(30)", timeout=1)


def test_the_server_ends_with_the_run_folder(scratch):
    assert fresh_torch.run("pass")[0] == 0
    socket_path = str(scratch / "fresh-torch" / "server.sock")
    assert subprocess.run(["pgrep", "-f", socket_path], capture_output=True).returncode == 0
    shutil.rmtree(scratch)
    deadline = time.monotonic() + 10
    while subprocess.run(["pgrep", "-f", socket_path], capture_output=True).returncode == 0:
        assert time.monotonic() < deadline, "the server outlived its run"
        time.sleep(0.2)


def test_without_a_run_folder_it_starts_a_new_interpreter(monkeypatch):
    monkeypatch.delenv("VERIFIED_RUN_SCRATCH", raising=False)
    assert fresh_torch.run("import sys\nprint(sys.argv)") == (0, "['-c']\n", "")
