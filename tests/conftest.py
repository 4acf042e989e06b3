"""Helpers for building copies of tests/fixture: one thing changed, or the good and broken
sites of tests/sites.py built once per session."""
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import sites

REPO = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).resolve().parent / "fixture"

collect_ignore = ["fixture"]  # the fixture site's probes run inside its builds, not here
if not os.environ.get("VERIFIED_BROWSER_TEST"):
    collect_ignore.append("browser")  # needs a built site: `make browser-test`


class Site:
    """A copy of the fixture site in a temporary folder.

    Its builds share `cache_dir` (the probe results per file, the run info and the library
    scan) with every other site of the session, unless made with `cache_dir=None`: then the
    site's own `_build/probe-cache` is used, as `make html` does.
    """

    def __init__(self, root, cache_dir=None):
        self.root = root
        self.cache_dir = cache_dir or root / "_build/probe-cache"
        self._shared = cache_dir is not None
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

    def line_of(self, relpath, text):
        """The 1-based line of the first line in the file that contains `text`."""
        lines = (self.root / relpath).read_text().splitlines()
        return next(number for number, line in enumerate(lines, 1) if text in line)

    def build(self, env=None, report_torch=False):
        """Run sphinx-build as `make html` does; returns (exit code, combined output).

        With `report_torch`, the output ends with whether the build process imported torch.
        """
        command, environ = self.build_command(env, report_torch)
        proc = subprocess.run(command, cwd=self.root, capture_output=True, text=True, env=environ)
        return proc.returncode, proc.stdout + proc.stderr

    def start_build(self, env=None):
        """Start the same build in the background: a Popen whose stdout carries stdout and stderr, line by line.
        Ctrl-C reaches it as from a terminal, even when these tests run as a background job (whose
        shell started them with SIGINT ignored, a disposition children inherit)."""
        command, environ = self.build_command(env)
        return subprocess.Popen(command, cwd=self.root, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, bufsize=1, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))

    def build_command(self, env=None, report_torch=False):
        # one probe worker: the fixture's few files run faster in one process than in xdist's two
        environ = dict(os.environ, PYTHONPATH=str(REPO), VERIFIED_PROBE_WORKERS="1")
        environ.update(env or {})
        arguments = ["-b", "html", "-c", ".", "-W", "--keep-going", "docs", "_build/html"]
        if self._shared:
            arguments[:0] = ["-D", f"verified_cache_dir={self.cache_dir}"]
        command = [sys.executable, "-m", "sphinx", *arguments] if not report_torch else [
            sys.executable, "-c", "import sys; from sphinx.cmd.build import main; code = main(sys.argv[1:]); "
            "print('torch imported in the build process:', 'torch' in sys.modules); sys.exit(code)", *arguments]
        return command, environ


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory):
    """One probe cache for the whole session: a probe file already run by another site's build,
    unchanged, is not run again."""
    return tmp_path_factory.mktemp("probe-cache")


@pytest.fixture(scope="session")
def runinfo_entry(tmp_path_factory):
    """The run info of this Python, collected once (it imports torch in a child): a test can
    seed a fresh probe cache with it."""
    from verified.probing import runner
    folder = tmp_path_factory.mktemp("runinfo")
    runner.describe_python(sys.executable, folder, echo=lambda *_: None)
    (entry,) = folder.glob("runinfo-*.json")
    return entry


@pytest.fixture
def site(tmp_path, shared_cache):
    return Site(tmp_path / "site", shared_cache)


class Built:
    """A site built once: its exit code and output, and its files."""

    def __init__(self, site):
        self.site, self.root = site, site.root
        self.code, self.out = site.build()

    def html(self, page):
        return (self.root / "_build/html" / page).read_text()

    def report(self):
        return json.loads(self.html("verification.json"))


@pytest.fixture(scope="session")
def good_site(tmp_path_factory, shared_cache):
    """The fixture with every feature and nothing broken (sites.make_good), built once."""
    return Built(sites.make_good(Site(tmp_path_factory.mktemp("good") / "site", shared_cache)))


@pytest.fixture(scope="session")
def broken_site(tmp_path_factory, shared_cache):
    """The fixture with every problem at once (sites.make_broken), built once with --keep-going."""
    return Built(sites.make_broken(Site(tmp_path_factory.mktemp("broken") / "site", shared_cache)))
