"""The per-file probe cache: what reruns when something changes, and bad or racing cache data."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from verified.probing import probe_cache, runner

PROBE = 'import pytest\n\n\n@pytest.mark.claim("t.{name}")\ndef test_{name}():\n    assert {expr}\n'
USES_HELPER = ('import pytest\nimport helper_a  # the helper module beside this file\n\n\n'
               '@pytest.mark.claim("t.a")\ndef test_a():\n    assert helper_a.VALUE == 1\n')


@pytest.fixture
def tree(tmp_path, runinfo_entry, monkeypatch):
    """probes/a (a probe, its helper module), probes/b (a probe), probes/conftest.py; the cache
    starts with the session's run info, and the probes run in one worker."""
    (tmp_path / "cache").mkdir()
    shutil.copy(runinfo_entry, tmp_path / "cache")
    monkeypatch.setenv("VERIFIED_PROBE_WORKERS", "1")
    (tmp_path / "probes/a").mkdir(parents=True)
    (tmp_path / "probes/b").mkdir()
    (tmp_path / "probes/a/test_a.py").write_text(USES_HELPER)
    (tmp_path / "probes/a/helper_a.py").write_text("VALUE = 1\n")
    (tmp_path / "probes/b/test_b.py").write_text(PROBE.format(name="b", expr="True"))
    (tmp_path / "probes/conftest.py").write_text("# shared fixtures would live here\n")
    return tmp_path


def build(root, lines=None):
    return runner.cached_probe_results(sys.executable, [root / "probes"], root, root / "cache",
                                       echo=(lines if lines is not None else []).append, out=root / "results.json")


def test_only_changed_files_and_their_dependents_rerun(tree):
    first = build(tree)
    assert sorted(first.ran) == ["probes/a/test_a.py", "probes/b/test_b.py"]
    assert [e["outcome"] for e in first.results["probes"]] == ["passed", "passed"]
    lines = []
    second = build(tree, lines)
    assert (second.ran, second.key, second.results) == ([], first.key, first.results)
    assert f"probes: unchanged (key {first.key}), reusing the cached results of 2 file(s)" in lines

    with open(tree / "probes/b/test_b.py", "a") as handle:
        handle.write("# a comment\n")
    lines = []
    assert build(tree, lines).ran == ["probes/b/test_b.py"]
    assert "probes: 1 of 2 file(s) changed or never ran, running them: probes/b/test_b.py" in lines

    (tree / "probes/a/helper_a.py").write_text("VALUE = 2\n")  # a helper beside a probe: that folder reruns
    changed = build(tree)
    assert changed.ran == ["probes/a/test_a.py"]
    assert {e["file"]: e["outcome"] for e in changed.results["probes"]} == \
        {"probes/a/test_a.py": "failed", "probes/b/test_b.py": "passed"}

    (tree / "probes/conftest.py").write_text("# changed\n")  # a conftest up the chain: everything below reruns
    assert sorted(build(tree).ran) == ["probes/a/test_a.py", "probes/b/test_b.py"]


def test_merged_results_keep_the_file_order_and_the_results_format(tree):
    run = build(tree)
    assert json.loads((tree / "results.json").read_text()) == run.results
    assert [e["file"] for e in run.results["probes"]] == ["probes/a/test_a.py", "probes/b/test_b.py"]
    assert set(run.results["run"]) >= {"torch", "devices", "python", "date", "repository_commit", "suite",
                                       "cache_key"}
    assert run.results["run"]["cache_key"] == run.key
    assert set(run.file_keys) == {"probes/a/test_a.py", "probes/b/test_b.py"}


@pytest.mark.parametrize("damage, why", [
    (lambda text: text[:len(text) // 2], "not JSON"),  # a write cut short
    (lambda text: json.dumps(dict(json.loads(text), probes=[{"nodeid": 1}])), "probe 0: missing or mistyped"),
    (lambda text: json.dumps(dict(json.loads(text), file="elsewhere.py")), "holds 'elsewhere.py'"),
])
def test_a_bad_cache_entry_is_reported_discarded_and_recomputed(tree, damage, why):
    first = build(tree)
    entry = probe_cache.ProbeCache(tree / "cache").path_of("probes/b/test_b.py",
                                                                 first.file_keys["probes/b/test_b.py"])
    entry.write_text(damage(entry.read_text()))
    lines = []
    again = build(tree, lines)
    discarded = [line for line in lines if line.startswith("probes: discarded cache entry")]
    assert len(discarded) == 1 and str(entry) in discarded[0] and why in discarded[0]
    assert again.ran == ["probes/b/test_b.py"]
    assert [e["outcome"] for e in again.results["probes"]] == ["passed", "passed"]
    assert probe_cache.ProbeCache(tree / "cache").load("probes/b/test_b.py", again.file_keys[
        "probes/b/test_b.py"])["probes"][0]["outcome"] == "passed"


def test_a_bad_run_info_entry_is_discarded(tree):
    build(tree)
    (info,) = (tree / "cache").glob("runinfo-*.json")
    info.write_text('{"torch": ')
    lines = []
    assert build(tree, lines).ran == []
    assert any(line.startswith(f"probes: discarded cache entry {info}: not JSON") for line in lines)


def test_two_runs_at_once_share_one_cache(tree):
    command = [sys.executable, "-m", "verified.probing.runner", "--cache", "cache", "--out"]
    env = dict(os.environ, PYTHONPATH=str(runner.PROJECT_DIR))
    procs = [subprocess.Popen(command + [f"r{n}.json", "probes"], cwd=tree, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for n in (1, 2)]
    outputs = [proc.communicate()[0] for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], outputs
    one, two = (json.loads((tree / f"r{n}.json").read_text()) for n in (1, 2))
    assert [e["outcome"] for e in one["probes"]] == [e["outcome"] for e in two["probes"]] == ["passed", "passed"]
    lines = []
    assert build(tree, lines).ran == [] and not any("discarded" in line for line in lines)
    assert not list((tree / "cache").rglob("*.tmp"))


def test_nothing_changed_does_not_import_torch(tree):
    build(tree)
    script = ("import sys\nfrom pathlib import Path\nfrom verified.probing import runner\n"
              "run = runner.cached_probe_results(sys.executable, [Path('probes')], Path('.'), Path('cache'),"
              " echo=lambda *_: None)\nprint(run.ran, 'torch' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", script], cwd=tree, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(runner.PROJECT_DIR)))
    assert proc.stdout.split() == ["[]", "False"], proc.stderr


def test_helper_files_are_the_folder_and_the_conftest_chain(tree):
    assert [p.relative_to(tree).as_posix() for p in probe_cache.helper_files(tree / "probes/a/test_a.py", tree)] \
        == ["probes/a/helper_a.py", "probes/conftest.py"]
    assert [p.relative_to(tree).as_posix() for p in probe_cache.helper_files(tree / "probes/b/test_b.py", tree)] \
        == ["probes/conftest.py"]


def test_slow_files_start_first(tree):
    cache = probe_cache.ProbeCache(tree / "cache")
    (tree / "probes/b/test_slow.py").write_text("from torch.utils import cpp_extension  # builds C++\n")
    files = probe_cache.probe_files([tree / "probes"])
    assert [p.name for p in runner.slowest_first(files, tree, cache)] == ["test_slow.py", "test_a.py", "test_b.py"]
    cache.store("probes/b/test_b.py", "k", probe_cache.make_entry("probes/b/test_b.py", "k", [], [], 9.0, "d", None))
    cache.store("probes/a/test_a.py", "k", probe_cache.make_entry("probes/a/test_a.py", "k", [], [], 1.0, "d", None))
    # a timed file by its time, a file never timed by its guess (one hint: runner.HINT_SECONDS)
    assert [p.name for p in runner.slowest_first(files, tree, cache)] == ["test_b.py", "test_slow.py", "test_a.py"]


def test_a_cold_run_is_ordered_by_the_newest_recorded_run(tree):
    """On an empty cache, results/ gives the order: the newest recorded run's time of each file,
    or the file's guess from its text when that is longer (a recorded C++ build may have been warm)."""
    (tree / "probes/b/test_slow.py").write_text("from torch.utils import cpp_extension  # builds C++\n")
    recorded = tree / "results"
    recorded.mkdir()
    def run(date, seconds):
        return {"run": {"date": date}, "probes": [{"file": f, "duration": t} for f, t in seconds.items()]}
    (recorded / "old.json").write_text(json.dumps(run("2026-01-01", {"probes/a/test_a.py": 50.0})))
    (recorded / "new.json").write_text(json.dumps(run("2026-02-01", {"probes/a/test_a.py": 0.5,
                                                                     "probes/b/test_b.py": 2.0})))
    (recorded / "notes.txt.json").write_text("not a results file")
    files = probe_cache.probe_files([tree / "probes"])
    cache = probe_cache.ProbeCache(tree / "cache")
    assert runner.recorded_durations(recorded) == {"probes/a/test_a.py": 0.5, "probes/b/test_b.py": 2.0}
    assert [p.name for p in runner.slowest_first(files, tree, cache, recorded)] == \
        ["test_slow.py", "test_b.py", "test_a.py"]
    assert runner.recorded_durations(tree / "absent") == {}


def test_the_tooling_key_covers_what_runs_probes_not_the_renderer():
    modules = probe_cache.tooling_modules()
    assert {"probing.pytest_plugin", "probing.runner", "probing.probe_cache", "probing.message_capture",
            "probing.runinfo"} <= set(modules)
    assert not {m for m in modules if m.startswith(("site.", "sources.", "releases.")) or m == "sphinx_ext"}
    assert probe_cache.tooling_digest() != probe_cache.package_digest()


def test_a_probe_that_imports_the_tooling_is_keyed_on_it(tmp_path, monkeypatch):
    (tmp_path / "test_plain.py").write_text("def test_x():\n    assert True\n")
    (tmp_path / "test_uses.py").write_text("from verified.sources import cpp_build\n\ndef test_x():\n    assert cpp_build\n")
    assert probe_cache.verified_imports(tmp_path / "test_uses.py") == {"sources.cpp_build"}
    assert probe_cache.verified_imports(tmp_path / "test_plain.py") == set()
    keys = [(probe_cache.file_key(tmp_path / "test_plain.py", tmp_path, {}, "t"),
             probe_cache.file_key(tmp_path / "test_uses.py", tmp_path, {}, "t"))]
    monkeypatch.setattr(probe_cache, "tooling_digest", lambda modules=None: "cpp_build changed")
    keys.append((probe_cache.file_key(tmp_path / "test_plain.py", tmp_path, {}, "t"),
                 probe_cache.file_key(tmp_path / "test_uses.py", tmp_path, {}, "t")))
    assert keys[0][0] == keys[1][0] and keys[0][1] != keys[1][1]
