"""The two-rank launcher of probes/distributed: a job shared by the probes of one run."""
import importlib.util
import os
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


def test_a_job_runs_once_per_run_and_each_probe_gets_its_reports(tmp_path, monkeypatch):
    monkeypatch.setenv("VERIFIED_RUN_SCRATCH", str(tmp_path / "scratch"))
    monkeypatch.setenv("RUNS", str(tmp_path / "runs"))
    first = launch.shared_ranks(COUNTED, world_size=1, timeout=60)
    assert first == launch.shared_ranks(COUNTED, world_size=1, timeout=60) and first[0]["rank"] == 0
    assert (tmp_path / "runs").read_text() == "x"
    launch.shared_ranks(COUNTED + "\n# another job\n", world_size=1, timeout=60)
    assert (tmp_path / "runs").read_text() == "xx"


def test_a_failed_job_is_not_kept_the_next_probe_runs_it_again(tmp_path, monkeypatch):
    monkeypatch.setenv("VERIFIED_RUN_SCRATCH", str(tmp_path / "scratch"))
    monkeypatch.setenv("RUNS", str(tmp_path / "runs"))
    failing = COUNTED.replace("report(", "raise SystemExit(3)\nreport(")
    for _ in range(2):
        with pytest.raises(launch.RankFailed, match=r"rank\(s\) \[0\] failed"):
            launch.shared_ranks(failing, world_size=1, timeout=60)
    assert (tmp_path / "runs").read_text() == "xx"
    assert not list((tmp_path / "scratch/c10d-jobs").glob("*.json"))
    assert os.environ["VERIFIED_RUN_SCRATCH"] == str(tmp_path / "scratch")
