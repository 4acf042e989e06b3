"""The two-rank launcher of probes/distributed: a job shared by the probes of one run."""
import importlib.util
import os
import shutil
from pathlib import Path

import pytest

LAUNCHER = Path(__file__).resolve().parents[1] / "probes/distributed/_c10d_launch.py"
spec = importlib.util.spec_from_file_location("_c10d_launch", LAUNCHER)
launch = importlib.util.module_from_spec(spec)
spec.loader.exec_module(launch)

COUNTED = '''
from pathlib import Path
runs = Path(os.environ["RUNS"])
runs.write_text(runs.read_text() + "x" if runs.exists() else "x")
report({"rank": RANK, "pid": os.getpid()})
'''


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """The run's shared folder; removed at the end, as a run's is, which ends its fresh-torch server."""
    folder = tmp_path / "scratch"
    monkeypatch.setenv("VERIFIED_RUN_SCRATCH", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_job_runs_once_per_run_and_each_probe_gets_its_reports(tmp_path, monkeypatch, scratch):
    monkeypatch.setenv("RUNS", str(tmp_path / "runs"))
    first = launch.shared_ranks(COUNTED, world_size=1, timeout=60)
    assert first == launch.shared_ranks(COUNTED, world_size=1, timeout=60) and first[0]["rank"] == 0
    assert (tmp_path / "runs").read_text() == "x"
    launch.shared_ranks(COUNTED + "\n# another job\n", world_size=1, timeout=60)
    assert (tmp_path / "runs").read_text() == "xx"


def test_a_failed_job_is_not_kept_the_next_probe_runs_it_again(tmp_path, monkeypatch, scratch):
    monkeypatch.setenv("RUNS", str(tmp_path / "runs"))
    failing = COUNTED.replace("report(", "raise SystemExit(3)\nreport(")
    for _ in range(2):
        with pytest.raises(launch.RankFailed, match=r"rank\(s\) \[0\] failed"):
            launch.shared_ranks(failing, world_size=1, timeout=60)
    assert (tmp_path / "runs").read_text() == "xx"
    assert not list((tmp_path / "scratch/c10d-jobs").glob("*.json"))
    assert os.environ["VERIFIED_RUN_SCRATCH"] == str(tmp_path / "scratch")


HOW_STARTED = '''
import sys
imported = "torch" in sys.modules  # before this script imports anything: only a forked rank has torch
import torch
report({"torch_before": imported, "threads": torch.get_num_threads(), "asked": os.environ.get("ASKED")})
'''


def test_ranks_are_forked_from_the_fresh_torch_server_with_the_callers_environment(tmp_path, monkeypatch, scratch):
    monkeypatch.setenv("ASKED", "by the probe")
    (tmp_path / "job").mkdir()
    reports = launch.run_ranks(tmp_path / "job", HOW_STARTED, world_size=2, timeout=60)
    assert reports == [{"torch_before": True, "threads": 1, "asked": "by the probe"}] * 2


def test_a_job_that_sets_variables_or_runs_outside_a_run_gets_new_interpreters(tmp_path, monkeypatch, scratch):
    (tmp_path / "job").mkdir()
    with_env = launch.run_ranks(tmp_path / "job", HOW_STARTED, world_size=1, timeout=60, env={"ASKED": "by the job"})
    assert with_env == [{"torch_before": False, "threads": 1, "asked": "by the job"}]
    monkeypatch.delenv("VERIFIED_RUN_SCRATCH")
    outside = launch.run_ranks(tmp_path / "job", HOW_STARTED, world_size=1, timeout=60)
    assert outside == [{"torch_before": False, "threads": 1, "asked": None}]
