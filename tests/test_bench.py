"""`make bench`'s plain-Sphinx copy (verified.bench, verified.plain_markup): it must build the
same pages the real extension does, so the benchmark's baseline never falls behind the markup."""
import subprocess
import sys

import sites
from conftest import REPO, Site

from verified import bench, plain_markup, sphinx_ext


def test_every_directive_and_role_of_the_extension_has_a_plain_stand_in():
    directives, roles, _ = plain_markup.registered_markup()
    assert {"claim", "source-map", "official-note", "note-statement", "claim-index"} <= directives.keys()
    assert {"src", "claim-ref", "error-ref"} <= set(roles)
    assert sphinx_ext.setup.__module__ == "verified.sphinx_ext"


def test_the_plain_copy_of_the_fixture_site_builds_without_a_warning(tmp_path):
    site = sites.make_good(Site(tmp_path / "site"))
    site.append("docs/claims.md", "\nA caption cites {claim-ref}`fixture.add.commutes` as gallery captions do.\n")
    plain = tmp_path / "plain"
    bench.make_plain_site(plain, root=site.root)
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-c", ".", "-W", "--keep-going", "docs",
                           "_build/html"], cwd=plain, capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    page = (plain / "_build/html/claims.html").read_text()
    assert "fixture.add.commutes" in page and "probes:" not in proc.stdout  # no probe ran
