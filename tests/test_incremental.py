"""Warm builds of the fixture site: what a change reruns, re-reads and re-writes, and what it does not."""
import json
import pickle
import re

import pytest

OTHER_PROBE = "probes/other/test_other.py"


@pytest.fixture
def built(site):
    """The fixture with a second page and probe file, built once."""
    site.write(OTHER_PROBE, 'import pytest\n\n\n@pytest.mark.claim("fixture.other.fact")\n'
                            'def test_other_fact():\n    assert 2 * 3 == 6\n')
    site.write("docs/other.md", "# Other\n\n:::{claim} fixture.other.fact\nTwo times three is six.\n:::\n")
    site.replace("docs/index.md", "claims\n```", "claims\nother\n```")
    # as sphinx-gallery and the pydata theme do: a config value changed after the environment was loaded
    site.append("conf.py", "\nhtml_context = {}\n\n\ndef setup(app):\n    app.connect('builder-inited', "
                           "lambda app: app.config.html_context.update(late=True))\n")
    code, out = site.build()
    assert code == 0, out
    return site


def pages(out, phase):
    """The pages a build named in Sphinx's own '<phase>... [ n%] page' lines.

    Terminal escapes are dropped first: with FORCE_COLOR set, Sphinx starts each such line with one.
    """
    plain = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", out)
    return sorted(line.rsplit("] ", 1)[1].strip() for line in plain.splitlines()
                  if line.startswith(f"{phase}... [") and "] " in line)


def reread(out):
    return pages(out, "reading sources")


def test_nothing_changed_reads_no_page_and_does_not_import_torch(built):
    code, out = built.build(report_torch=True)
    assert code == 0, out
    assert "probes: unchanged" in out and "0 added, 0 changed, 0 removed" in out and reread(out) == []
    assert "The configuration has changed" not in out
    assert "torch imported in the build process: False" in out


def test_touching_one_probe_file_reruns_it_alone_and_rewrites_only_its_pages(built):
    built.append(OTHER_PROBE, "# a comment changes this file's key only\n")
    code, out = built.build()
    assert code == 0, out
    assert f"probes: 1 of 2 file(s) changed or never ran, running them: {OTHER_PROBE}" in out
    assert "probes: [1/1] probes/other/test_other.py: 1 passed" in out
    assert reread(out) == []  # pages take their outcomes when written: none needs reading again
    # its claim's page, the claim index, and index, which holds other's toctree entry (Sphinx's own rule)
    assert pages(out, "writing output") == ["claims", "index", "other"]


def test_a_probe_that_starts_failing_fails_the_warm_build(built):
    built.replace(OTHER_PROBE, "2 * 3 == 6", "2 * 3 == 7")
    code, out = built.build()
    assert code != 0
    assert "docs/other.md:3: WARNING: claim 'fixture.other.fact' failed on cpu: probes/other/test_other.py::test_other_fact" \
        in out
    report = json.loads((built.root / "_build/html/verification.json").read_text())
    assert {c["id"]: c["outcome"]["cpu"] for c in report["claims"]}["fixture.other.fact"] == "failed"
    assert "cpu: FAILED" in (built.root / "_build/html/other.html").read_text()
    built.replace(OTHER_PROBE, "2 * 3 == 7", "2 * 3 == 6")  # back: the old entry is reused, the page re-read
    code, out = built.build()
    assert code == 0 and "probes: unchanged" in out and reread(out) == []
    assert pages(out, "writing output") == ["claims", "index", "other"]
    assert "cpu: verified" in (built.root / "_build/html/other.html").read_text()


def test_a_truncated_cache_entry_is_discarded_and_the_build_passes(built):
    built.append(OTHER_PROBE, "# an entry of its own in the session's shared cache\n")
    assert built.build()[0] == 0
    entry = max((built.cache_dir / "files/probes~other~test_other.py").glob("*.json"), key=lambda p: p.stat().st_mtime_ns)
    entry.write_text(entry.read_text()[:40])
    code, out = built.build()
    assert code == 0, out
    assert f"probes: discarded cache entry {entry}: not JSON" in out
    assert f"running them: {OTHER_PROBE}" in out and json.loads(entry.read_text())["probes"][0]["outcome"] == "passed"


def test_a_tooling_change_rereads_every_page(built):
    pickled = built.root / "_build/html/.doctrees/environment.pickle"
    env = pickle.loads(pickled.read_bytes())
    env.verified_read_key = "an older verified package"
    pickled.write_bytes(pickle.dumps(env, pickle.HIGHEST_PROTOCOL))
    code, out = built.build()
    assert code == 0, out
    assert reread(out) == ["claims", "index", "other"]
