"""Whole builds of the fixture site: the good case and every strictness case.

Each case changes one thing in a copy of tests/fixture and asserts the exact outcome and
the message, which must name the file and line.
"""
import json

from conftest import REPO

GOOD_PROBE = "probes/test_fixture.py"


def test_good_site_builds_and_reports(site):
    code, out = site.build()
    assert code == 0, out
    report = json.loads((site.root / "_build/html/verification.json").read_text())
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
    html = (site.root / "_build/html/index.html").read_text()
    assert 'id="claim-fixture.add.commutes"' in html
    assert "cpu: verified" in html and "Probe: probes/test_fixture.py::test_add_commutes" in html
    assert f"Verified with torch {report['torch']['version']}" in html
    index = (site.root / "_build/html/claims.html").read_text()
    assert 'href="index.html#claim-fixture.add.commutes"' in index


def test_warm_build_reuses_probe_results(site):
    assert site.build()[0] == 0
    code, out = site.build()
    assert code == 0, out
    assert "probes: unchanged" in out
    site.append(GOOD_PROBE, "\n# a comment changes the key\n")
    code, out = site.build()
    assert code == 0 and "probes: unchanged" not in out and "2 passed" in out


def test_false_claim_fails_naming_claim_and_probe(site):
    site.replace(GOOD_PROBE, "torch.equal(a + b, b + a)", "torch.equal(a + b, a - b)")
    code, out = site.build()
    assert code != 0
    assert "docs/index.md:5: WARNING: claim 'fixture.add.commutes' failed on cpu: probes/test_fixture.py::test_add_commutes[cpu]" in out
    assert "[verified.failed]" in out
    assert "verification failed: 1 problem(s)" in out


def test_claim_without_probe(site):
    site.append("docs/index.md", "\n:::{claim} fixture.orphan.claim\nNothing checks this.\n:::\n")
    code, out = site.build()
    assert code != 0
    assert "docs/index.md:23: WARNING: claim 'fixture.orphan.claim' has no probe [verified.no-probe]" in out


def test_probe_naming_unknown_claim(site):
    site.append(GOOD_PROBE, '\n\n@pytest.mark.claim("fixture.no.such-claim")\ndef test_stray():\n    assert True\n')
    code, out = site.build()
    assert code != 0
    assert "probes/test_fixture.py:17: WARNING: probe test_stray names unknown claim 'fixture.no.such-claim' [verified.unknown-claim]" in out


def test_probe_without_claim(site):
    site.append(GOOD_PROBE, "\n\ndef test_unmarked():\n    assert True\n")
    code, out = site.build()
    assert code != 0
    assert "probes/test_fixture.py:17: WARNING: probe test_unmarked names no claim (add @pytest.mark.claim) [verified.no-claim]" in out


def test_duplicate_claim_id(site):
    site.append("docs/claims.md", "\n:::{claim} fixture.add.commutes\nSaid twice.\n:::\n")
    code, out = site.build()
    assert code != 0
    assert "docs/index.md:5: WARNING: duplicate claim ID 'fixture.add.commutes' (first at docs/claims.md:6) [verified.duplicate-id]" in out


def test_empty_claim_body(site):
    site.append("docs/claims.md", "\n:::{claim} fixture.add.commutes-too\n:::\n")
    site.append(GOOD_PROBE, '\n\n@pytest.mark.claim("fixture.add.commutes-too")\ndef test_too():\n    assert True\n')
    code, out = site.build()
    assert code != 0
    assert "docs/claims.md:6: WARNING: claim 'fixture.add.commutes-too' has an empty statement [verified.empty-claim]" in out


def test_bad_claim_id(site):
    site.replace("docs/index.md", "fixture.add.commutes\n:src:", "Fixture.Add\n:src:")
    code, out = site.build()
    assert code != 0
    assert "docs/index.md:5: WARNING: claim ID 'Fixture.Add' is not lowercase dot-separated words" in out
    assert "[verified.bad-id]" in out


def test_moved_source_symbol_is_broken(site):
    site.replace("docs/index.md", "TensorImpl | The tensor object.", "TensorImplMoved | The tensor object.")
    code, out = site.build()
    assert code != 0
    assert ("docs/index.md:19: WARNING: broken source reference 'c10/core/TensorImpl.h TensorImplMoved': "
            "symbol 'TensorImplMoved' not found in") in out
    assert "[verified.broken-src]" in out


def test_missing_cpp_file_is_broken(site):
    site.replace("docs/index.md", "native/TensorShape.cpp", "native/TensorShapeGone.cpp")
    code, out = site.build()
    assert code != 0
    assert ("docs/index.md:20: WARNING: broken source reference 'aten/src/ATen/native/TensorShapeGone.cpp': "
            "not among the source files compiled into this torch's libraries") in out


def test_malformed_source_reference(site):
    site.replace("docs/index.md", "{src}`c10/core/StorageImpl.h StorageImpl`", "{src}`../StorageImpl.h`")
    code, out = site.build()
    assert code != 0
    assert "docs/index.md:11: WARNING: malformed source reference '../StorageImpl.h'" in out
    assert "[verified.broken-src]" in out


def test_malformed_source_map_line(site):
    site.replace("docs/index.md", "c10/core/TensorImpl.h | TensorImpl | The tensor object.",
                 "c10/core/TensorImpl.h TensorImpl")
    code, out = site.build()
    assert code != 0
    assert ("docs/index.md:19: WARNING: malformed source-map line 'c10/core/TensorImpl.h TensorImpl': "
            "expected 'path | symbol | what it does'") in out
    assert "[verified.source-map]" in out


def test_segfaulting_probe_is_reported_as_crashed(site):
    site.append(GOOD_PROBE, "\n\n@pytest.mark.claim(\"fixture.storage.untyped\")\ndef test_crash():\n"
                            "    import ctypes\n    ctypes.string_at(0)\n")
    code, out = site.build()
    assert code != 0
    assert ("docs/index.md:10: WARNING: claim 'fixture.storage.untyped' crashed on cpu: probes/test_fixture.py::test_crash "
            "(probes/test_fixture.py:17): the probe process died of SIGSEGV") in out
    assert "2 passed" in out  # the run went on after the crash
    assert "[verified.failed]" in out


def test_hanging_probe_is_reported_as_timeout(site):
    site.append(GOOD_PROBE, "\n\n@pytest.mark.timeout(2)\n@pytest.mark.claim(\"fixture.storage.untyped\")\n"
                            "def test_hang():\n    import time\n    time.sleep(60)\n")
    code, out = site.build()
    assert code != 0
    assert ("docs/index.md:10: WARNING: claim 'fixture.storage.untyped' timeout on cpu: probes/test_fixture.py::test_hang "
            "(probes/test_fixture.py:17): killed after 2 s") in out


def test_probe_file_that_cannot_be_imported(site):
    site.write("probes/test_broken.py", "import no_such_module_here\n")
    code, out = site.build()
    assert code != 0
    assert "probes/test_broken.py: probe file could not be collected" in out
    assert "No module named 'no_such_module_here'" in out


def test_sphinx_warning_fails_the_build(site):
    site.append("docs/claims.md", "\nSee {doc}`missing-page`.\n")
    code, out = site.build()
    assert code != 0
    assert "claims.md:6: WARNING: unknown document: 'missing-page'" in out


def test_gallery_script_error_fails_the_build(site):
    site.append("conf.py", 'extensions.append("sphinx_gallery.gen_gallery")\n'
                           'sphinx_gallery_conf = {"examples_dirs": ["../gallery"], "gallery_dirs": ["gallery"]}\n')
    site.append("docs/index.md", "\n```{toctree}\ngallery/index\n```\n")
    site.write("gallery/GALLERY_HEADER.rst", "Gallery\n=======\n\nScripts.\n")
    site.write("gallery/plot_boom.py", '"""\nBoom\n====\n\nRaises.\n"""\nraise RuntimeError("boom in the gallery")\n')
    code, out = site.build()
    assert code != 0
    assert "plot_boom.py" in out and "RuntimeError: boom in the gallery" in out


def test_torch_not_importable_says_how_to_install(site, tmp_path):
    fake = tmp_path / "no-torch" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('raise ImportError("No module named \'torch\'")\n')
    code, out = site.build(env={"PYTHONPATH": f"{fake.parent}:{REPO}"})
    assert code != 0
    assert "torch is not importable by" in out
    assert "`make html` (it creates .venv from requirements.txt), or `pip install torch==2.13.0" in out


def test_claim_reference_links_with_status(site):
    site.append("docs/claims.md", "\nSee {claim-ref}`fixture.add.commutes`.\n")
    code, out = site.build()
    assert code == 0, out
    html = (site.root / "_build/html/claims.html").read_text()
    assert 'class="verified-claim-ref"' in html and 'href="index.html#claim-fixture.add.commutes"' in html


def test_reference_to_unknown_claim(site):
    site.append("docs/claims.md", "\nSee {claim-ref}`fixture.no.such`.\n")
    code, out = site.build()
    assert code != 0
    assert "docs/claims.md:6: WARNING: reference to unknown claim 'fixture.no.such' [verified.unknown-claim]" in out


def test_summary_and_source_index_pages(site):
    site.append("docs/claims.md", "\n:::{claim-summary}\n:::\n\n:::{source-index}\n:::\n")
    code, out = site.build()
    assert code == 0, out
    html = (site.root / "_build/html/claims.html").read_text()
    assert "This build: 2 claims; 2 verified on cpu" in html
    assert "verified-source-index" in html and "c10/core/StorageImpl.h" in html


def _recorded(version, outcome):
    return json.dumps({"run": {"torch": {"version": version}, "devices": ["cpu"], "date": "d",
                               "repository_commit": "c", "suite": "s"},
                       "probes": [{"nodeid": "n", "file": GOOD_PROBE, "line": 5, "function": "test_add_commutes",
                                   "claims": ["fixture.add.commutes"], "device": "cpu", "outcome": outcome,
                                   "message": "old torch disagreed" if outcome == "failed" else ""}],
                       "sources": []})


def test_recorded_runs_make_the_matrix_and_changes(site):
    site.write("results/torch-2.0.0-cpu.json", _recorded("2.0.0", "failed"))
    site.write("results/torch-2.1.0-cpu.json", _recorded("2.1.0", "passed"))
    site.append("docs/claims.md", "\n:::{claim-matrix}\n:::\n\n:::{version-changes}\n:::\n")
    code, out = site.build()
    assert code == 0, out
    html = (site.root / "_build/html/claims.html").read_text()
    assert "2.0.0 cpu, default wheel (recorded)" in html and "2.1.0 cpu, default wheel (recorded)" in html
    assert ">missing<" in html and "FAILED: differs" in html  # a failure says what kind of failure it is
    assert "2.0.0 cpu → 2.1.0 cpu" in html and "differs: old torch disagreed" in html and "starts holding" in html
    index = (site.root / "_build/html/index.html").read_text()
    assert "Across releases: " in index and "Since 2.1.0; 2.0.0: differs (old torch disagreed)." in index
    report = json.loads((site.root / "_build/html/verification.json").read_text())
    assert report["matrix"]["outcomes"]["fixture.add.commutes"][:2] == ["failed", "passed"]
    change = report["matrix"]["changes"][0]["claims"][0]
    assert (change["kind"], change["before"], change["after"]) == ("starts holding", "differs", "holds")
    claim = next(c for c in report["claims"] if c["id"] == "fixture.add.commutes")
    assert claim["since"] == "2.1.0" and claim["history"]["2.0.0"]["verdict"] == "differs"


def test_malformed_results_file_is_named(site):
    site.write("results/torch-9.9.9-cpu.json", '{"run": {}}')
    code, out = site.build()
    assert code != 0
    assert "results/torch-9.9.9-cpu.json: not a probe results file" in out
