"""The probe runner: per-probe isolation, outcomes, the results file and its cache."""
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from verified.probing import runner

PROBES = '''
import os, time, ctypes, signal, pytest, torch

@pytest.mark.claim("t.ok")
def test_ok(device):
    assert torch.ones(2, device=device).sum().item() == 2

@pytest.mark.claim("t.fail")
def test_fail():
    assert 1 + 1 == 3, "arithmetic moved"

@pytest.mark.claim("t.crash")
def test_crash():
    ctypes.string_at(0)

@pytest.mark.claim("t.abort")
def test_abort():
    os.kill(os.getpid(), signal.SIGABRT)

@pytest.mark.timeout(1)
@pytest.mark.claim("t.hang")
def test_hang():
    time.sleep(30)

@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")

@pytest.mark.claim("t.error")
def test_error(broken):
    pass

@pytest.mark.xfail
@pytest.mark.claim("t.xfail")
def test_xfail():
    assert False

@pytest.mark.devices("cuda")
@pytest.mark.claim("t.cuda-only")
def test_cuda_only(device):
    assert device == "cuda"

@pytest.mark.claim("t.one")
@pytest.mark.claim("t.two")
def test_two_claims():
    pass

@pytest.mark.torch_version("<1.0")
@pytest.mark.claim("t.ancient")
def test_ancient():
    assert False

@pytest.mark.torch_version(">=1.0")
@pytest.mark.claim("t.modern")
def test_modern():
    pass

@pytest.mark.claim("t.measured")
def test_measured():
    from verified.probing import measured
    measured.record("draws that differ", "3 of 20")
    measured.record("bitwise", False)
'''


LAYOUTS = {
    "one file": ["probes/test_cases.py"],  # one pytest process, no xdist
    # two workers under xdist, and two probe files with one basename (--import-mode=importlib)
    "two folders": ["probes/a/test_cases.py", "probes/b/test_cases.py"],
}


@pytest.fixture(scope="module", params=sorted(LAYOUTS))
def run(tmp_path_factory, request):
    root = tmp_path_factory.mktemp("probe-run")
    for name in LAYOUTS[request.param]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(PROBES)
    lines = []
    results = runner.run_probes(sys.executable, [root / "probes"], root, root / "out.json", echo=lines.append)
    return root, results, request.param, lines


def by_node(results):
    return {e["nodeid"].split("::")[1]: e for e in results["probes"]}


def test_each_outcome(run):
    entries = by_node(run[1])
    assert entries["test_ok[cpu]"]["outcome"] == "passed"
    assert entries["test_fail"]["outcome"] == "failed"
    assert entries["test_fail"]["message"].startswith("AssertionError: arithmetic moved")
    assert (entries["test_crash"]["outcome"], entries["test_crash"]["message"]) == \
        ("crashed", "the probe process died of SIGSEGV")
    assert entries["test_abort"]["message"] == "the probe process died of SIGABRT"
    assert (entries["test_hang"]["outcome"], entries["test_hang"]["message"]) == ("timeout", "killed after 1 s")
    assert entries["test_hang"]["duration"] < 10
    assert entries["test_error"]["outcome"] == "error" and "fixture broke" in entries["test_error"]["message"]
    assert entries["test_xfail"]["outcome"] == "error"
    assert entries["test_two_claims"]["claims"] == ["t.one", "t.two"]


def test_failed_and_error_entries_say_where_they_failed(run):
    """Under xdist too (the "two folders" layout): the line travels with the worker's report."""
    entries = by_node(run[1])
    lines = PROBES.splitlines()
    assert entries["test_fail"]["failed_at"] == {"file": entries["test_fail"]["file"],
                                                 "line": lines.index('    assert 1 + 1 == 3, "arithmetic moved"') + 1}
    assert entries["test_error"]["failed_at"]["line"] == lines.index('    raise RuntimeError("fixture broke")') + 1
    assert not any("failed_at" in entries[name] for name in ("test_crash", "test_hang", "test_xfail", "test_ok[cpu]"))


def test_measured_figures_travel_with_their_entry_only(run):
    """Under xdist too: the figures a probe records reach its entry, and no other entry."""
    entries = by_node(run[1])
    assert entries["test_measured"]["measured"] == {"draws that differ": "3 of 20", "bitwise": False}
    assert [name for name, entry in entries.items() if "measured" in entry] == ["test_measured"]


def torch_cpu_capability():
    proc = subprocess.run([sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
                          capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def test_version_bounds(run):
    entries = by_node(run[1])
    assert entries["test_ancient"]["outcome"] == "not applicable"
    assert entries["test_ancient"]["message"].startswith("not applicable: torch ")
    assert entries["test_modern"]["outcome"] == "passed"


def test_device_axis(run):
    entries = by_node(run[1])
    assert entries["test_fail"]["device"] == "cpu"  # no `device` argument: one run, on the CPU
    assert "test_cuda_only[cpu]" not in entries
    if "cuda" not in run[1]["run"]["devices"]:
        assert entries["test_ok[cuda]"]["outcome"] == "skipped"
        assert entries["test_ok[cuda]"]["message"] == "not run here: this machine has no cuda device"


def test_results_file_has_run_info(run):
    root, results, layout, _ = run
    assert json.loads((root / "out.json").read_text()) == results
    info = results["run"]
    assert info["torch"]["version"] and len(info["torch"]["git_version"]) == 40
    assert info["devices"][0] == "cpu" and info["date"] and info["python"]
    assert sorted({e["file"] for e in results["probes"]}) == LAYOUTS[layout]
    assert info["cpu_capability"] == torch_cpu_capability()
    assert len(results["probes"]) == 13 * len(LAYOUTS[layout])  # every probe of every file, once


def test_progress_line_per_file(run):
    _, _, layout, lines = run
    total = len(LAYOUTS[layout])
    assert f"probes: running {total} file(s) on {total} worker(s)" in lines
    done = [line for line in lines if line.startswith("probes: [")]
    assert len(done) == total and done[-1].startswith(f"probes: [{total}/{total}] probes/")
    assert "test_cases.py: 2 crashed, 2 error, 1 failed, 1 not applicable, 4 passed, 2 skipped, 1 timeout (" \
        in done[-1] and done[-1].endswith(" s elapsed")


def test_command_line_exit_codes(tmp_path):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes/test_one.py").write_text('import pytest\n\n@pytest.mark.claim("t.ok")\ndef test_ok():\n'
                                                 '    assert False\n')
    proc = subprocess.run([sys.executable, "-m", "verified.probing.runner", "--out", "r.json", "probes"], cwd=tmp_path,
                          capture_output=True, text=True, env={"PYTHONPATH": str(runner.PROJECT_DIR),
                                                               "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 1, proc.stderr
    assert "probes: 1 failed" in proc.stdout and (tmp_path / "r.json").is_file()


def test_unimportable_file_errors_its_claims_and_the_rest_still_run(tmp_path):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes/test_ok.py").write_text('import pytest\n\n@pytest.mark.claim("t.ok")\ndef test_ok():\n    pass\n')
    (tmp_path / "probes/test_gone.py").write_text('import pytest\nimport no_such_module_anywhere\n\n\n'
                                                  '@pytest.mark.claim("t.gone")\ndef test_gone():\n    pass\n')
    results = runner.run_probes(sys.executable, [tmp_path / "probes"], tmp_path, tmp_path / "r.json",
                                echo=lambda *_: None)
    entries = by_node(results)
    assert entries["test_ok"]["outcome"] == "passed"
    gone = entries["test_gone"]
    assert (gone["outcome"], gone["claims"], gone["line"]) == ("error", ["t.gone"], 5)
    assert "No module named 'no_such_module_anywhere'" in gone["message"]
    assert results["collection_errors"][0]["nodeid"] == "probes/test_gone.py"


CHECKS = '''
import warnings

import pytest

import _checks_helper


@pytest.mark.claim("t.assert")
def test_assert():
    total = 1 + 1
    assert total == 3, "arithmetic moved"  # fails here


@pytest.mark.claim("t.raises")
def test_raises_did_not_raise():
    int("1")
    with pytest.raises(ValueError, match="invalid literal"):  # fails here
        int("2")


@pytest.mark.claim("t.warns")
def test_warns_did_not_warn():
    with pytest.warns(UserWarning):  # fails here
        warnings.warn("other", DeprecationWarning)


@pytest.mark.claim("t.helper")
def test_helper():
    _checks_helper.check_positive(-1)  # fails here


@pytest.mark.claim("t.fixture")
def test_fixture_from_conftest(broken_here):
    pass


@pytest.mark.claim("t.ok")
def test_passes():
    assert True
'''
HELPER = "def check_positive(n):\n    assert n > 0\n"
CONFTEST = "import pytest\n\n\n@pytest.fixture\ndef broken_here():\n    raise RuntimeError('broke')  # fails here\n"


def marked_lines(text):
    return [number for number, line in enumerate(text.splitlines(), 1) if line.endswith("# fails here")]


def test_a_failed_probe_names_the_line_that_failed(tmp_path):
    folder = tmp_path / "probes/area"
    folder.mkdir(parents=True)
    (folder / "test_checks.py").write_text(CHECKS)
    (folder / "_checks_helper.py").write_text(HELPER)
    (folder / "conftest.py").write_text(CONFTEST)
    results = runner.run_probes(sys.executable, [tmp_path / "probes"], tmp_path, tmp_path / "r.json",
                                echo=lambda *_: None)
    entries = by_node(results)
    probe = "probes/area/test_checks.py"
    assert_line, raises_line, warns_line, helper_line = marked_lines(CHECKS)
    assert {name: (e["outcome"], e.get("failed_at")) for name, e in entries.items()} == {
        "test_assert": ("failed", {"file": probe, "line": assert_line}),
        "test_raises_did_not_raise": ("failed", {"file": probe, "line": raises_line}),
        "test_warns_did_not_warn": ("failed", {"file": probe, "line": warns_line}),
        "test_helper": ("failed", {"file": probe, "line": helper_line}),  # the probe's own line first
        "test_fixture_from_conftest": ("error", {"file": "probes/area/conftest.py", "line": marked_lines(CONFTEST)[0]}),
        "test_passes": ("passed", None),
    }
    assert entries["test_assert"]["line"] == assert_line - 3  # the entry's own line stays the probe's (its decorator)


def test_stop_group_ends_the_children_of_the_run_too():
    proc = subprocess.Popen(["sh", "-c", "sleep 60 & sleep 60"], start_new_session=True)
    time.sleep(0.2)
    runner.stop_group(proc)
    # SIGKILL is delivered when the kernel next runs each process: give the orphaned sleep a moment
    deadline = time.monotonic() + 10
    while _live_members(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _live_members(proc.pid) == []


def _live_members(group):
    """Pids of the processes of process group `group` still running (not zombies awaiting a reaper)."""
    live = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            live.append(int(stat.parent.name))
    return live


SHARED_FOLDER_PROBES = '''import os
from pathlib import Path

import pytest


@pytest.mark.claim("t.first")
def test_first():
    folder = Path(os.environ["VERIFIED_RUN_SCRATCH"])
    (folder / "left-by-first").write_text(str(os.getpid()))
    Path(os.environ["SEEN_AT"]).write_text(str(folder))


@pytest.mark.claim("t.second")
def test_second():  # another forked child of the same run: the same folder, with what the first left
    folder = Path(os.environ["VERIFIED_RUN_SCRATCH"])
    assert Path(os.environ["SEEN_AT"]).read_text() == str(folder)
    assert int((folder / "left-by-first").read_text()) != os.getpid()
'''


def test_the_probes_of_a_run_share_one_folder_that_goes_with_the_run(tmp_path, monkeypatch):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes/test_shared.py").write_text(SHARED_FOLDER_PROBES)
    monkeypatch.setenv("SEEN_AT", str(tmp_path / "seen"))
    monkeypatch.setenv("VERIFIED_RUN_SCRATCH", str(tmp_path / "an outer run's folder"))  # not inherited
    results = runner.run_probes(sys.executable, [tmp_path / "probes"], tmp_path, tmp_path / "r.json",
                                echo=lambda line: None)
    assert [e["outcome"] for e in results["probes"]] == ["passed", "passed"]
    folder = Path((tmp_path / "seen").read_text())
    assert folder.name == "shared" and folder.parent.name.startswith("verified-run-") and not folder.exists()


def test_a_run_keeps_each_file_as_it_finishes(tmp_path):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes/test_one.py").write_text('import pytest\n\n@pytest.mark.claim("t.ok")\ndef test_ok():\n'
                                                 '    pass\n')
    kept = []
    runner.run_probe_files(sys.executable, [tmp_path / "probes/test_one.py"], tmp_path,
                           runner.describe_python(sys.executable), echo=lambda line: None,
                           on_file_done=lambda *args: kept.append(args))
    ((name, probes, errors),) = kept
    assert name == "probes/test_one.py" and [p["function"] for p in probes] == ["test_ok"] and errors == []


SEEDED_PROBES = '''import os, random
from pathlib import Path

import pytest
import torch


def draw(name):
    with open(Path(os.environ["DRAWN_TO"]) / name, "a") as out:
        out.write(f"{random.random()} {torch.randn(3).tolist()}\\n")


@pytest.mark.claim("t.first")
def test_first():
    draw("first")


@pytest.mark.claim("t.second")
def test_second():
    draw("second")
'''


def test_each_probe_draws_the_same_random_numbers_on_every_run(tmp_path, monkeypatch):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes/test_seeded.py").write_text(SEEDED_PROBES)
    monkeypatch.setenv("DRAWN_TO", str(tmp_path))
    for _ in range(2):
        results = runner.run_probes(sys.executable, [tmp_path / "probes"], tmp_path, tmp_path / "r.json",
                                    echo=lambda line: None)
        assert [e["outcome"] for e in results["probes"]] == ["passed", "passed"]
    first, second = ((tmp_path / name).read_text().splitlines() for name in ("first", "second"))
    assert len(first) == len(second) == 2
    assert first[0] == first[1] and second[0] == second[1]  # the same draws on each run
    assert first[0] != second[0]  # and a probe's own: seeded by its node id
