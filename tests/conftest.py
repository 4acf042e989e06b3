"""Helpers for building copies of tests/fixture with one thing changed."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).resolve().parent / "fixture"

collect_ignore = ["fixture"]  # the fixture site's probes run inside its builds, not here
if not os.environ.get("VERIFIED_BROWSER_TEST"):
    collect_ignore.append("browser")  # needs a built site: `make browser-test`


class Site:
    """A copy of the fixture site in a temporary folder."""

    def __init__(self, root):
        self.root = root
        shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("_build", "__pycache__"))

    def write(self, relpath, text):
        path = self.root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def append(self, relpath, text):
        with open(self.root / relpath, "a") as handle:
            handle.write(text)

    def replace(self, relpath, old, new):
        path = self.root / relpath
        text = path.read_text()
        assert old in text, f"{old!r} not in {relpath}"
        path.write_text(text.replace(old, new))

    def build(self, env=None, report_torch=False):
        """Run sphinx-build as `make html` does; returns (exit code, combined output).

        With `report_torch`, the output ends with whether the build process imported torch.
        """
        environ = dict(os.environ, PYTHONPATH=str(REPO))
        environ.update(env or {})
        arguments = ["-b", "html", "-c", ".", "-W", "--keep-going", "docs", "_build/html"]
        command = [sys.executable, "-m", "sphinx", *arguments] if not report_torch else [
            sys.executable, "-c", "import sys; from sphinx.cmd.build import main; code = main(sys.argv[1:]); "
            "print('torch imported in the build process:', 'torch' in sys.modules); sys.exit(code)", *arguments]
        proc = subprocess.run(command, cwd=self.root, capture_output=True, text=True, env=environ)
        return proc.returncode, proc.stdout + proc.stderr


@pytest.fixture
def site(tmp_path):
    return Site(tmp_path / "site")
