"""Whole builds of the fixture site.

The good site (every feature) and the broken site (every problem at once) are built once per
session; each test reads one thing of their output. Every message must name the file and
line. The cases that need a build of their own (they stop the build, or change its set-up)
are a table at the end.
"""
import json
import re

import pytest
from conftest import REPO
from sites import GOOD_PROBE

from verified import claims as claimlib

# ---------------------------------------------------------------- the good site

def test_good_site_builds_and_reports(good_site):
    assert good_site.code == 0, good_site.out
    report = good_site.report()
    assert report["torch"]["git_version"] and report["devices"]["ran"][0] == "cpu"
    by_id = {c["id"]: c for c in report["claims"]}
    assert by_id["fixture.add.commutes"]["outcome"]["cpu"] == "passed"
    assert by_id["fixture.add.commutes"]["page"] == "index"
    assert by_id["fixture.add.commutes"]["probes"] == ["probes/test_fixture.py::test_add_commutes"]
    assert by_id["fixture.storage.untyped"]["statement"] == "An untyped storage counts bytes: c10/core/StorageImpl.h StorageImpl."
    if "cuda" not in report["devices"]["ran"]:
        assert by_id["fixture.add.commutes"]["outcome"]["cuda"] == "not run"
        assert by_id["fixture.storage.untyped"]["outcome"]["cuda"] == "not applicable"
    sources = {(s["path"], s["symbol"]): s for s in report["sources"]}
    impl = sources[("c10/core/TensorImpl.h", "TensorImpl")]
    assert impl["status"] == "verified" and impl["url"].endswith(f"/c10/core/TensorImpl.h#L{impl['line']}")
    assert report["torch"]["git_version"] in impl["url"]
    assert sources[("aten/src/ATen/native/TensorShape.cpp", None)]["status"] == "verified"
    html = good_site.html("index.html")
    assert 'id="claim-fixture_add_commutes"' in html  # no dots: a plain CSS selector
    assert '<span id="claim-fixture.add.commutes"></span>' in html  # the old id, so old links still land
    assert "cpu: verified" in html and "Probe: probes/test_fixture.py::test_add_commutes" in html
    assert f"Verified with torch {report['torch']['version']}" in html
    index = good_site.html("claims.html")
    assert 'href="index.html#claim-fixture_add_commutes"' in index


def test_claim_reference_links_with_status(good_site):
    html = good_site.html("claims.html")
    assert 'class="verified-claim-ref verified-mark-verified' in html
    said = "verified on CPU; CUDA not run here"
    assert f'href="index.html#claim-fixture_add_commutes" title="fixture.add.commutes: {said}"' in html
    assert f'<span aria-label="claim fixture.add.commutes: {said}" class="verified-mark verified-mark-verified" ' \
           f'role="img" title="claim fixture.add.commutes: {said}">✓</span></a>' in html


def _claim_html(html, claim_id):
    """(statement, proof): a claim's HTML before its <details>, and from there to the next claim."""
    rest = html[html.index(f'id="claim-{claim_id.replace(".", "_")}"'):]
    statement, proof = rest.split('<details class="verified-claim-details"><summary>', 1)
    return statement, proof.split('<div class="verified-claim ', 1)[0]


def test_a_claim_is_its_statement_with_one_mark_and_its_proof_in_details(good_site):
    html = good_site.html("index.html")
    statement, proof = _claim_html(html, "fixture.add.commutes")
    assert "verified-badge" not in statement and "Probe:" not in statement
    assert proof.startswith('<span aria-label="fixture.add.commutes: verified on CPU; CUDA not run here"')
    assert "✓</span></summary>" in proof
    assert "cpu: verified" in proof and "cuda: not run here" in proof  # a CUDA case: its status is said
    assert "Probe: probes/test_fixture.py::test_add_commutes" in proof
    statement, proof = _claim_html(html, "fixture.storage.untyped")
    assert proof.startswith('<span aria-label="fixture.storage.untyped: verified on CPU" ')
    assert "cpu: verified" in proof and "cuda:" not in proof  # no CUDA case: no CUDA status at all


def test_summary_and_source_index_pages(good_site):
    html = good_site.html("claims.html")
    assert "This build: 2 claims; 2 verified on cpu" in html
    assert "verified-source-index" in html and "c10/core/StorageImpl.h" in html


def test_recorded_runs_make_the_matrix_and_changes(good_site):
    html = good_site.html("claims.html")
    assert ">2.0.0 cpu<" in html and ">2.1.0 cpu<" in html and "default wheel" in html
    assert html.index(">2.1.0 cpu<") < html.index(">2.0.0 cpu<")  # the newest release first
    assert "FAILED: differs" in html  # a failure says what kind of failure it is
    # a claim newer than a recorded run is missing there: counted, not listed as a difference
    assert ">missing<" not in html and "Missing from some column (that run was recorded before the claim " \
        "existed): 1 claim," in html
    assert "2.0.0 → 2.1.0" in html and "differs → holds" in html
    folded = html[html.index("What the probes reported"):]
    assert "old torch disagreed" in folded[:folded.index("</details>")]  # a probe's report only inside a fold
    index = good_site.html("index.html")
    assert "Across releases: " in index and "Since 2.1.0; 2.0.0: differs (old torch disagreed)." in index
    assert '<p class="verified-claim-history no-search">Holds since 2.1.0.</p>' in index  # differs: said under the claim
    report = good_site.report()
    assert report["matrix"]["outcomes"]["fixture.add.commutes"][:2] == ["failed", "passed"]
    change = report["matrix"]["changes"][0]["claims"][0]
    assert (change["kind"], change["before"], change["after"]) == ("starts holding", "differs", "holds")
    claim = next(c for c in report["claims"] if c["id"] == "fixture.add.commutes")
    assert claim["since"] == "2.1.0" and claim["history"]["2.0.0"]["verdict"] == "differs"


# ---------------------------------------------------------------- the broken site

def warnings_of(out):
    """The warning lines of a build, terminal escapes dropped."""
    plain = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", out)
    return [line for line in plain.splitlines() if ": WARNING: " in line]


def at(built, relpath, text):
    """`relpath:<line of text>`, as a warning names a place."""
    return f"{relpath}:{built.site.line_of(relpath, text)}"


def test_the_broken_site_fails_listing_every_problem(broken_site):
    assert broken_site.code != 0
    assert "verification failed: " in broken_site.out


def broken_cases(b):
    """(a short name, the exact warning text) for every problem the broken site holds."""
    index, claims = "docs/index.md", "docs/claims.md"
    return {
        "false-claim": f"{at(b, index, 'fixture.add.commutes')}: WARNING: claim 'fixture.add.commutes' failed on cpu: "
                       f"probes/test_fixture.py::test_add_commutes[cpu] ({probe_at(b, 'test_add_commutes')}, "
                       f"failed at {at(b, GOOD_PROBE, 'a - b')}): assert False",
        "no-probe": f"{at(b, claims, 'fixture.orphan.claim')}: WARNING: claim 'fixture.orphan.claim' has no probe "
                    f"[verified.no-probe]",
        "unknown-claim-in-probe": f"{probe_at(b, 'test_stray')}: WARNING: probe test_stray names unknown claim "
                                  f"'fixture.no.such-claim' [verified.unknown-claim]",
        "probe-without-claim": f"{probe_at(b, 'test_unmarked')}: WARNING: probe test_unmarked names no claim "
                               f"(add @pytest.mark.claim) [verified.no-claim]",
        "duplicate-id": f"{_line_before(b, claims, 'Said twice')}: "
                        f"WARNING: duplicate claim ID 'fixture.twice.said' "
                        f"(first at {at(b, claims, 'fixture.twice.said')}) [verified.duplicate-id]",
        "empty-claim": f"{at(b, claims, 'fixture.add.commutes-too')}: WARNING: claim 'fixture.add.commutes-too' has an "
                       f"empty statement [verified.empty-claim]",
        "bad-id": f"{at(b, claims, 'Fixture.Add')}: WARNING: claim ID 'Fixture.Add' is not lowercase dot-separated words",
        "bad-id-no-probe": f"{at(b, claims, 'Fixture.Add')}: WARNING: claim 'Fixture.Add' has no probe",
        "moved-symbol": f"{at(b, index, 'TensorImplMoved')}: WARNING: broken source reference "
                        f"'c10/core/TensorImpl.h TensorImplMoved': symbol 'TensorImplMoved' not found in",
        "missing-file": f"{at(b, index, 'TensorShapeGone')}: WARNING: broken source reference "
                        f"'aten/src/ATen/native/TensorShapeGone.cpp': not among the source files compiled into "
                        f"this torch's libraries",
        "malformed-src": f"{at(b, index, '../StorageImpl.h')}: WARNING: malformed source reference '../StorageImpl.h'",
        "malformed-source-map": f"{at(b, index, 'c10/core/TensorImpl.h TensorImpl')}: WARNING: malformed source-map "
                                f"line 'c10/core/TensorImpl.h TensorImpl': expected 'path | symbol | what it does' "
                                f"[verified.source-map]",
        "crash": f"{at(b, index, 'fixture.storage.untyped')}: WARNING: claim 'fixture.storage.untyped' crashed on cpu: "
                 f"probes/test_fixture.py::test_crash ({probe_at(b, 'test_crash')}): the probe process died of SIGSEGV",
        "timeout": f"{at(b, claims, 'fixture.hang.forever')}: WARNING: claim 'fixture.hang.forever' timeout on cpu: "
                   f"probes/test_fixture.py::test_hang ({probe_at(b, 'test_hang')}): killed after 2 s",
        "uncollectable": "probes/test_broken.py: probe file could not be collected",
        "unchecked": f"{at(b, claims, 'fixture.skipped.here')}: WARNING: claim 'fixture.skipped.here' is unchecked on cpu, "
                     f"which this machine has: skipped",
        "unknown-error-ref": f"{at(b, claims, 'never printed')}: WARNING: error reference 'never printed' matches no "
                             f"message checked by a probe; it must match exactly one [verified.error-ref]",
        "empty-source-map": f"{at(b, claims, ':::{source-map}')}: WARNING: source-map has no valid lines "
                            f"[verified.source-map]",
        "sphinx-warning": f"claims.md:{b.site.line_of('docs/claims.md', 'missing-page')}: WARNING: unknown document: "
                          f"'missing-page'",
        "unknown-claim-ref": f"{at(b, claims, 'fixture.no.such`')}: WARNING: reference to unknown claim 'fixture.no.such' "
                             f"[verified.unknown-claim]",
        "note-before-note": "docs/broken.md:3: WARNING: note-statement before any official-note on this page: "
                            "which note does it check? [verified.note]",
        "note-revision": "docs/broken.md:8: WARNING: official-note 'fixture-note': :revision: '12345' is not a "
                         "40-digit commit",
        "note-detail": "docs/broken.md:14: WARNING: note-statement with verdict 'nuance' needs :detail:",
        "note-unknown-claim": "docs/broken.md:19: WARNING: reference to unknown claim 'fixture.no-such.claim'",
        "note-on-a-failed-claim": "docs/broken.md:3: WARNING: note-statement's verdict 'holds' rests on claims that "
                                  "failed: fixture.add.commutes [verified.note]",
        "nuance-on-a-failed-claim": "docs/broken.md:14: WARNING: note-statement's verdict 'nuance' rests on claims "
                                    "that failed: fixture.add.commutes",
        "figure-no-script": f"{at(b, 'docs/broken.md', 'plot_no_such_script')}: WARNING: gallery-figure "
                            f"'tensor/plot_no_such_script': no gallery script examples/tensor/plot_no_such_script.py "
                            f"[verified.gallery-figure]",
        "note-cuda-verdict": "docs/broken.md:24: WARNING: note-statement with verdict 'cuda' cites claims with no CUDA "
                             "case: fixture.storage.untyped",
        "change-pair": f"{at(b, claims, 'fixture.never.here')}: WARNING: claim 'fixture.never.here' :replaces: "
                       f"'fixture.gone.before', which is not another claim of the site [verified.change-pair]",
        "note-not-run": "docs/broken.md:29: WARNING: note-statement with verdict 'holds' rests on claims that never ran "
                        "here: fixture.never.here; cite only claims that ran, or give the CUDA part a statement of its "
                        "own with verdict 'cuda' [verified.note-not-run]",
    }


def probe_at(built, name):
    """`file:<line>` of probe `name`: its first decorator, where pytest places it."""
    lines = (built.root / GOOD_PROBE).read_text().splitlines()
    line = next(n for n, text in enumerate(lines) if text.startswith(f"def {name}("))
    while line > 0 and lines[line - 1].startswith("@"):
        line -= 1
    return f"{GOOD_PROBE}:{line + 1}"


def _line_before(b, relpath, text):
    """`relpath:<line>` of the directive line just above `text` (a claim's body names its ID's line)."""
    return f"{relpath}:{b.site.line_of(relpath, text) - 1}"


BROKEN_CASES = ["false-claim", "no-probe", "unknown-claim-in-probe", "probe-without-claim", "duplicate-id",
                "empty-claim", "bad-id", "bad-id-no-probe", "moved-symbol", "missing-file", "malformed-src", "malformed-source-map",
                "crash", "timeout", "uncollectable", "unchecked", "unknown-error-ref", "empty-source-map", "sphinx-warning", "unknown-claim-ref", "note-before-note",
                "note-revision", "note-detail", "note-unknown-claim", "note-on-a-failed-claim", "nuance-on-a-failed-claim",
                "note-cuda-verdict", "note-not-run", "figure-no-script", "change-pair"]


@pytest.mark.parametrize("case", BROKEN_CASES)
def test_each_problem_is_a_warning_at_its_line(broken_site, case):
    expected = broken_cases(broken_site)[case]
    found = [line for line in broken_site.out.splitlines() if expected in line]
    assert found, (expected, "\n".join(warnings_of(broken_site.out)))


def test_the_cases_name_every_problem_the_build_reports(broken_site):
    """Nothing the build warns about is missing from the table above (and so untested)."""
    cases = broken_cases(broken_site)
    assert sorted(cases) == sorted(BROKEN_CASES)
    unexpected = [w for w in warnings_of(broken_site.out) if not any(c in w for c in cases.values())]
    assert not unexpected, "\n".join(unexpected)


def test_each_problem_kind_has_its_subtype(broken_site):
    """Every kind but line-check (a pinned line of the real torch cannot be made wrong here:
    tests/test_source_kinds.py) shows in the broken site as its warning subtype."""
    for kind in sorted(set(claimlib.PROBLEM_KINDS) - {"line-check"}):
        assert f"[verified.{kind}]" in broken_site.out, kind


def test_the_run_goes_on_after_a_crash_and_a_hang(broken_site):
    outcomes = {c["id"]: c["outcome"]["cpu"] for c in broken_site.report()["claims"]}
    assert outcomes["fixture.twice.said"] == "passed" and outcomes["fixture.add.commutes-too"] == "passed"
    assert (outcomes["fixture.storage.untyped"], outcomes["fixture.hang.forever"]) == ("crashed", "timeout")
    assert "No module named 'no_such_module_here'" in broken_site.out


# ---------------------------------------------------------------- builds of their own

def _torch_not_importable(site, tmp_path):
    fake = tmp_path / "no-torch" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('raise ImportError("No module named \'torch\'")\n')
    return {"PYTHONPATH": f"{fake.parent}:{REPO}"}


def _malformed_results_file(site, tmp_path):
    site.write("results/torch-9.9.9-cpu.json", '{"run": {}}')


def _gallery_script_error(site, tmp_path):
    site.append("conf.py", 'extensions.append("sphinx_gallery.gen_gallery")\n'
                           'sphinx_gallery_conf = {"examples_dirs": ["../gallery"], "gallery_dirs": ["gallery"]}\n')
    site.append("docs/index.md", "\n```{toctree}\ngallery/index\n```\n")
    site.write("gallery/GALLERY_HEADER.rst", "Gallery\n=======\n\nScripts.\n")
    site.write("gallery/plot_boom.py", '"""\nBoom\n====\n\nRaises.\n"""\nraise RuntimeError("boom in the gallery")\n')


# (set-up: changes the site, may return environment variables; texts the failing output holds)
OWN_BUILDS = {
    "torch-not-importable": (_torch_not_importable, [
        "torch is not importable by",
        "`make html` (it creates .venv from requirements.txt), or `pip install torch==2.13.0"]),
    "malformed-results-file": (_malformed_results_file, ["results/torch-9.9.9-cpu.json: not a probe results file"]),
    "gallery-script-error": (_gallery_script_error, ["plot_boom.py", "RuntimeError: boom in the gallery"]),
}


@pytest.mark.parametrize("case", sorted(OWN_BUILDS))
def test_a_build_that_stops(site, tmp_path, case):
    set_up, expected = OWN_BUILDS[case]
    code, out = site.build(env=set_up(site, tmp_path))
    assert code != 0
    for text in expected:
        assert text in out, (text, out[-3000:])


def test_warm_build_reuses_probe_results(site):
    assert site.build()[0] == 0
    code, out = site.build()
    assert code == 0, out
    assert "probes: unchanged" in out
    site.append(GOOD_PROBE, "\n# a comment changes the key\n")
    code, out = site.build()
    assert code == 0 and "probes: unchanged" not in out and "2 passed" in out


def test_the_search_index_leaves_out_probe_code_status_lines_and_list_pages(good_site):
    """Probe source, badges and the page status line carry the no-search class; a page with a
    site-wide list (here the matrix and the changes, on the claims page) is left out whole."""
    text = good_site.html("searchindex.js")
    index = json.loads(text[text.index("(") + 1:text.rindex(")")])
    terms = index["terms"]
    assert "def" not in terms and "test_add_commut" not in terms  # probe code
    listing = [i for i, name in enumerate(index["docnames"]) if name == "claims"]
    assert listing, index["docnames"]
    for docs in terms.values():
        assert listing[0] not in ([docs] if isinstance(docs, int) else docs)
    html = good_site.html("index.html")
    assert 'class="verified-claim-proof no-search docutils container"' in html
    assert "verified-page-status no-search" in html
