"""`make matrix` (verified.releases.versions) without installing, downloading or running torch:
subprocess and the probe run are replaced, and what would have run is checked."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from verified.probing import runner
from verified.releases import versions

REPO = Path(__file__).resolve().parent.parent
PAGE = "# Page\n\nA tensor is a {src}`c10/core/TensorImpl.h TensorImpl`.\n"


class FakeRun:
    """Stands in for subprocess.run: records each call, answers with `results` in turn."""

    def __init__(self, *results):
        self.calls, self.results = [], list(results)

    def __call__(self, command, **options):
        self.calls.append((command, options))
        if command[1:3] == ["-m", "venv"]:  # what `python -m venv` leaves: the folder, its bin/python
            (Path(command[3]) / "bin").mkdir(parents=True)
            (Path(command[3]) / "bin/python").touch()
        returncode, stdout, stderr = self.results.pop(0) if self.results else (0, "", "")
        if options.get("check") and returncode:
            raise subprocess.CalledProcessError(returncode, command)
        return subprocess.CompletedProcess(command, returncode, stdout, stderr)

    @property
    def commands(self):
        return [command for command, _ in self.calls]


@pytest.fixture
def fake_run(monkeypatch):
    def install(*results):
        fake = FakeRun(*results)
        monkeypatch.setattr(versions.subprocess, "run", fake)
        return fake
    return install


# ---------------------------------------------------------------- the command line

@pytest.mark.parametrize("argv", [[], ["2.13.0", "--python", "python3"]], ids=["nothing", "both"])
def test_versions_or_python_not_both(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        versions.main(argv)
    assert exit_.value.code == 2
    assert "give torch versions, or --python, not both" in capsys.readouterr().err


def test_each_version_is_recorded_and_a_failure_does_not_stop_the_rest(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)
    calls = []

    def record(version, root, results_dir, python):
        calls.append((version, root, results_dir, python))
        if version == "2.10.0":
            raise versions.MatrixError("could not install")

    monkeypatch.setattr(versions, "record", record)
    assert versions.main(["2.9.1", "2.10.0", "2.11.0"]) == 1
    assert calls == [(v, tmp_path, "results", None) for v in ("2.9.1", "2.10.0", "2.11.0")]
    assert capsys.readouterr().err == "error: torch 2.10.0: could not install\n"
    calls.clear()
    assert versions.main(["--python", "python3", "--out", "out"]) == 0
    assert calls == [(None, tmp_path, "out", "python3")]  # one run, with that Python's torch


@pytest.mark.parametrize("error", [runner.ProbeRunError("no torch"), subprocess.CalledProcessError(1, ["venv"])],
                         ids=["probe run", "venv"])
def test_the_other_failures_a_version_can_have_are_reported(monkeypatch, error):
    def record(*_, **__):
        raise error

    monkeypatch.setattr(versions, "record", record)
    assert versions.main(["2.9.1"]) == 1


# ---------------------------------------------------------------- the environment of a version

def install_command(venv, version):
    return [str(venv / "bin/python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
            f"torch=={version}", *versions.TEST_PINS]


def test_a_new_environment_is_made_and_installed_once(fake_run, tmp_path):
    run = fake_run()
    python = versions.environment("2.10.0", tmp_path / ".venvs")
    venv = tmp_path / ".venvs/torch-2.10.0"
    assert python == venv / "bin/python"
    assert run.commands == [[sys.executable, "-m", "venv", str(venv)], install_command(venv, "2.10.0")]
    assert (venv / ".installed").read_text() == "\n".join(["torch==2.10.0", *versions.TEST_PINS]) + "\n"


def test_an_environment_with_the_same_pins_is_reused(fake_run, tmp_path):
    venv = tmp_path / "torch-2.10.0"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin/python").touch()
    (venv / ".installed").write_text("\n".join(["torch==2.10.0", *versions.TEST_PINS]) + "\n")
    run = fake_run()
    assert versions.environment("2.10.0", tmp_path) == venv / "bin/python"
    assert run.calls == []


def test_an_environment_with_other_pins_is_installed_again_not_made_again(fake_run, tmp_path):
    venv = tmp_path / "torch-2.10.0"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin/python").touch()
    (venv / ".installed").write_text("torch==2.10.0\npytest==8.0.0\n")
    run = fake_run()
    versions.environment("2.10.0", tmp_path)
    assert run.commands == [install_command(venv, "2.10.0")]


def test_a_failed_install_says_why_and_leaves_no_marker(fake_run, tmp_path):
    fake_run((0, "", ""), (1, "", "Collecting torch==9.9.9\nERROR: No matching distribution found for torch==9.9.9\n"))
    with pytest.raises(versions.MatrixError) as error:
        versions.environment("9.9.9", tmp_path)
    message = str(error.value)
    assert message.startswith(f"could not install torch==9.9.9 into {tmp_path / 'torch-9.9.9'}: "
                              "ERROR: No matching distribution found for torch==9.9.9\n")
    assert "access to the package index (PyPI)" in message
    assert not (tmp_path / "torch-9.9.9/.installed").exists()


def test_the_pins_are_those_of_the_main_environment():
    pinned = {line.split("#")[0].strip() for line in (REPO / "requirements.txt").read_text().splitlines()}
    assert set(versions.TEST_PINS) <= pinned


# ---------------------------------------------------------------- the subprocesses of one run

def test_references_are_resolved_by_that_python(fake_run, tmp_path):
    answer = [{"ref": "a.h A", "status": "verified"}]
    run = fake_run((0, json.dumps(answer), ""))
    assert versions.resolve_references("/v/bin/python", ["a.h A"], tmp_path / "cache") == answer
    (command, options), = run.calls
    assert command == ["/v/bin/python", "-m", "verified.sources.resolver", str(tmp_path / "cache")]
    assert json.loads(options["input"]) == ["a.h A"]
    assert options["env"]["PYTHONPATH"] == str(REPO)  # the tooling of this checkout, not one installed there


def test_a_census_is_taken_by_that_python(fake_run):
    run = fake_run((0, '{"torch": "2.10.0"}', ""))
    assert versions.take_census("/v/bin/python") == {"torch": "2.10.0"}
    (command, options), = run.calls
    assert command == ["/v/bin/python", "-m", "verified.releases.census"]
    assert options["env"]["PYTHONPATH"] == str(REPO)


@pytest.mark.parametrize("step, args", [(versions.resolve_references, ("/p", [], "/c")),
                                        (versions.take_census, ("/p",))], ids=["sources", "census"])
def test_a_failed_subprocess_is_a_matrix_error_with_its_stderr(fake_run, step, args):
    fake_run((1, "", "Traceback ...\nImportError: no torch\n"))
    with pytest.raises(versions.MatrixError, match="ImportError: no torch"):
        step(*args)


# ---------------------------------------------------------------- one recorded run

def probe_results(torch_version, devices):
    return {"run": {"torch": {"version": torch_version, "git_version": "0" * 40}, "devices": devices},
            "probes": [{"outcome": "passed"}, {"outcome": "failed"}], "collection_errors": []}


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A root with one page and one probe file; the probe run, the resolver and the census faked."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/page.md").write_text(PAGE)
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes/test_x.py").write_text("def test_x():\n    pass\n")
    seen = {}

    def run_probes(python, probe_dirs, root, out, echo):
        seen["run_probes"] = (python, probe_dirs, root)
        return probe_results(seen.get("torch", "2.10.0+cpu"), seen.get("devices", ["cpu"]))

    def resolve(python, references, cache_dir):
        seen["resolve"] = (python, references, cache_dir)
        return [{"ref": ref, "path": ref.split()[0], "status": "broken" if "Gone" in ref else "verified"}
                for ref in references]

    monkeypatch.setattr(versions.runner, "run_probes", run_probes)
    monkeypatch.setattr(versions, "resolve_references", resolve)
    monkeypatch.setattr(versions, "take_census", lambda python: {"torch": "census of " + str(python)})
    monkeypatch.setattr(versions, "environment", lambda version, venvs: venvs / f"torch-{version}/bin/python")
    return tmp_path, seen


def test_a_version_is_recorded_into_its_results_file(site):
    root, seen = site
    lines = []
    out = versions.record("2.10.0", root, echo=lines.append)
    python = root / ".venvs/torch-2.10.0/bin/python"
    assert out == root / "results/torch-2.10.0-cpu.json"
    assert seen["run_probes"] == (str(python), [root / "probes"], root)
    assert seen["resolve"] == (python, ["c10/core/TensorImpl.h TensorImpl"], root / "_build/matrix-cache")
    written = out.read_text()
    assert written.endswith("}\n")
    expected = probe_results("2.10.0+cpu", ["cpu"])
    expected["run"]["suite"] = runner.suite_digest([root / "probes"])
    expected["sources"] = [{"ref": "c10/core/TensorImpl.h TensorImpl", "path": "c10/core/TensorImpl.h",
                            "status": "verified", "pages": ["page"]}]
    expected["census"] = {"torch": f"census of {python}"}
    assert json.loads(written) == expected
    assert lines == [f"torch 2.10.0: running probes with {python}",
                     f"torch 2.10.0: wrote {out} (1 failed, 1 passed; 1 source references, 0 broken)"]


def test_a_gpu_run_with_an_installed_python_is_the_cuda_file(site, monkeypatch):
    root, seen = site
    seen.update(torch="2.13.0+cu130", devices=["cpu", "cuda"])
    monkeypatch.setattr(versions, "environment", lambda *_: pytest.fail("no environment is made for --python"))
    monkeypatch.setattr(versions.shutil, "which", lambda name: f"/usr/bin/{name}")
    lines = []
    out = versions.record(None, root, results_dir="out", python="python3", echo=lines.append)
    assert out == root / "out/torch-2.13.0-cuda.json"  # the release, without the local +cu130
    assert seen["run_probes"][0] == "/usr/bin/python3"
    assert lines[0] == "torch as installed: running probes with /usr/bin/python3"
    assert lines[-1].startswith(f"torch 2.13.0+cu130: wrote {out} (")


def test_a_python_not_on_path_is_used_as_given(site):
    root, seen = site
    versions.record(None, root, python=str(root / "elsewhere/python"), echo=lambda _: None)
    assert seen["run_probes"][0] == str(root / "elsewhere/python")
