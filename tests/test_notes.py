"""The checked official notes: the rules and counts of verified.site.notes, then what the good
fixture site (tests/sites.py) shows of its note page."""
import pytest
from sites import NOTE_REVISION as REVISION

from verified.site import notes

PASSED = {"cpu": "passed", "cuda": "not run"}
CPU_ONLY = {"cpu": "passed", "cuda": "not applicable"}
CUDA_ONLY = {"cpu": "not applicable", "cuda": "not run"}


def statement(verdict="holds", claims=("a.b",), detail="", text="The note says so.", note="autograd", number=1):
    return notes.Statement(note, verdict, list(claims), detail, text, "guide/n", "docs/guide/n.md", 10 + number,
                           number, "A section")


@pytest.mark.parametrize("kwargs, message", [
    ({"note": None}, "note-statement before any official-note on this page"),
    ({"verdict": "right"}, "verdict 'right' is not one of holds, nuance, deprecated, out-of-date, cuda"),
    ({"text": " "}, "note-statement has no statement"),
    ({"claims": ()}, "note-statement cites no claim"),
    ({"verdict": "nuance"}, "verdict 'nuance' needs :detail: (say which nuance)"),
    ({"verdict": "out-of-date"}, "verdict 'out-of-date' needs :detail: (say what this build does now)"),
    ({"verdict": "deprecated"}, "verdict 'deprecated' needs :detail: (say what the deprecation warning says)"),
    ({"detail": "more"}, "verdict 'holds' takes no :detail:"),
])
def test_statement_problems(kwargs, message):
    found = notes.statement_problems(statement(**kwargs))
    assert len(found) == 1 and message in found[0]


def test_a_good_statement_has_no_problem():
    assert notes.statement_problems(statement("nuance", detail="it also does this")) == []


def test_note_problems():
    note = notes.Note("Autograd", "", "docs/source/notes/autograd.md", "abc", "guide/n", "docs/guide/n.md", 3)
    found = notes.note_problems(note, {"source": note.source, "revision": "abc"})
    assert found == ["official-note key 'Autograd' is not lowercase words joined by '-' (e.g. 'autograd')",
                     "official-note 'Autograd' lacks :title:",
                     "official-note 'Autograd': :revision: 'abc' is not a 40-digit commit"]


def test_a_note_checked_twice_or_two_notes_on_a_page():
    def note(key, docname, line):
        return notes.Note(key, "T", "s.md", REVISION, docname, f"docs/{docname}.md", line)
    found = notes.duplicate_notes([note("a", "p", 1), note("a", "q", 2), note("b", "p", 9)])
    assert [str(p) for p in found] == ["docs/p.md:9: a second official-note on one page; give each note its own page",
                                       "docs/q.md:2: official-note 'a' is checked twice (first at docs/p.md:1)"]


def test_verdicts_shown_and_cuda_only_holds_where_it_ran():
    outcomes = {"a.b": PASSED, "g.pu": CUDA_ONLY}
    assert notes.shown_verdict(statement("out-of-date", detail="x"), outcomes) == "out of date on this build"
    assert notes.shown_verdict(statement("cuda", claims=["g.pu"]), outcomes) == "CUDA, not run here"
    ran = {"g.pu": {"cpu": "not applicable", "cuda": "passed"}}
    assert notes.shown_verdict(statement("cuda", claims=["g.pu"]), ran) == "holds on CUDA"
    assert notes.status(statement("cuda", claims=["g.pu"]), outcomes) == "not run"
    assert notes.status(statement(claims=["a.b", "g.pu"]), outcomes) == "passed"


def test_claim_problems_a_verdict_its_claims_cannot_carry():
    outcomes = {"a.b": PASSED, "g.pu": CUDA_ONLY, "c.only": CPU_ONLY, "bad.one": {"cpu": "failed", "cuda": "not run"}}
    found = notes.claim_problems([statement(claims=["g.pu"]), statement("cuda", claims=["c.only"], number=2),
                                  statement(claims=["a.b", "bad.one"], number=3),
                                  statement(claims=["no.such"], number=4)], outcomes)
    assert [str(p) for p in found] == [
        "docs/guide/n.md:11: note-statement with verdict 'holds' cites no claim checked on the CPU; cite one, "
        "or use verdict 'cuda'",
        "docs/guide/n.md:12: note-statement with verdict 'cuda' cites claims with no CUDA case: c.only",
        "docs/guide/n.md:13: note-statement's verdict 'holds' rests on claims that failed: a.b, bad.one"]


def test_a_verdict_other_than_cuda_rests_only_on_claims_that_ran():
    outcomes = {"a.b": PASSED, "g.pu": CUDA_ONLY, "old.one": {"cpu": "not applicable", "cuda": "not applicable"}}
    found = notes.claim_problems([statement(claims=["a.b", "g.pu"]), statement("deprecated", detail="w",
                                                                                claims=["old.one", "a.b"], number=2),
                                  statement("cuda", claims=["a.b", "g.pu"], number=3)], outcomes)
    assert [(str(p), p.kind) for p in found] == [
        ("docs/guide/n.md:11: note-statement with verdict 'holds' rests on claims that never ran here: g.pu; cite "
         "only claims that ran, or give the CUDA part a statement of its own with verdict 'cuda'", "note-not-run"),
        ("docs/guide/n.md:12: note-statement with verdict 'deprecated' rests on claims that never ran here: old.one; "
         "cite only claims that ran, or give the CUDA part a statement of its own with verdict 'cuda'", "note-not-run")]
    ran_on_a_gpu = dict(outcomes, **{"g.pu": {"cpu": "not applicable", "cuda": "passed"}})
    assert notes.claim_problems([statement(claims=["a.b", "g.pu"])], ran_on_a_gpu) == []


def test_an_every_release_line_needs_each_claim_recorded_somewhere():
    s = statement(claims=["a.b", "g.pu"])
    histories = {"a.b": _history("holds", "holds", "holds"), "g.pu": _history(*["not applicable"] * 3)}
    s.history = notes.statement_history(s, histories)
    assert notes.history_line(s.history).startswith("Its claims hold on every recorded release")
    assert [(str(p), p.kind) for p in notes.history_problems([s], histories)] == [
        ('docs/guide/n.md:11: note-statement says "Its claims hold on every recorded release" but g.pu ran on no '
         'recorded release', "note-not-run")]
    recorded = dict(histories, **{"g.pu": _history("not applicable", "holds", "holds")})
    assert notes.history_problems([s], recorded) == []
    s.history = notes.statement_history(s, {"a.b": _history("differs", "holds", "holds"), "g.pu": histories["g.pu"]})
    assert notes.history_problems([s], histories) == []  # a line that does not say so is no problem


def test_counts_are_computed_from_the_verdicts():
    outcomes = {"a.b": PASSED, "g.pu": CUDA_ONLY}
    found = [statement(), statement(number=2), statement("nuance", detail="d", number=3),
             statement("cuda", claims=["g.pu"], number=4), statement("deprecated", detail="d", number=5),
             statement("deprecated", detail="d", number=6)]
    assert notes.counts(found, outcomes) == {"holds": 2, "holds with a nuance": 1, "deprecated: still works, warns": 2,
                                             "CUDA, not run here": 1}
    assert notes.counts_sentence(found, outcomes) == \
        "6 statements: 2 hold, 1 holds with a nuance, 2 deprecated: still works, warns, 1 CUDA, not run here."
    assert notes.counts_sentence([], outcomes) == "0 statements."


def _history(*verdicts):
    return [{"version": v, "verdict": verdict} for v, verdict in zip(("2.9.1", "2.10.0", "2.11.0"), verdicts)]


def test_a_statement_holds_on_a_release_when_all_its_claims_do():
    s = statement(claims=["a.b", "c.d"])
    s.history = notes.statement_history(s, {"a.b": _history("holds", "holds", "holds"),
                                            "c.d": _history("differs", "not applicable", "holds")})
    assert s.history == [{"version": "2.9.1", "holds": False}, {"version": "2.10.0", "holds": True},
                         {"version": "2.11.0", "holds": True}]
    assert notes.history_line(s.history) == "Its claims do not all hold on 2.9.1 (see the matrix)."
    assert notes.step_changes([s], "2.9.1", "2.10.0") == [
        {"note": "autograd", "page": "guide/n", "anchor": "note-autograd-1", "section": "A section",
         "statement": "The note says so.", "kind": "starts holding"}]
    assert notes.step_changes([s], "2.10.0", "2.11.0") == []


def test_a_release_without_the_claim_decides_nothing():
    s = statement()
    s.history = notes.statement_history(s, {"a.b": _history("missing", "holds", "holds")})
    assert s.history[0]["holds"] is None
    assert notes.history_line(s.history) == "Its claims hold on every recorded release (2.10.0–2.11.0)."
    assert notes.statement_history(statement("cuda"), {"a.b": _history("holds")}) == []


def test_report_entries():
    note = notes.Note("autograd", "Autograd mechanics", "docs/source/notes/autograd.md", REVISION, "guide/n",
                      "docs/guide/n.md", 3)
    s = statement("out-of-date", detail="it now warns")
    entry = notes.report([note], [s], {"a.b": PASSED})[0]
    assert {k: entry[k] for k in ("note", "section", "statement", "verdict", "claims", "status", "revision")} == {
        "note": "autograd", "section": "A section", "statement": "The note says so.",
        "verdict": "out of date on this build", "claims": ["a.b"], "status": "passed", "revision": REVISION}


def test_a_checked_note_page_renders_and_reports(good_site):
    entries = good_site.report()["official_notes"]
    assert [(e["section"], e["verdict"], e["claims"]) for e in entries] == [
        ("Adding", "holds", ["fixture.add.commutes"]),
        ("Adding", "out of date on this build", ["fixture.add.commutes", "fixture.storage.untyped"]),
        ("On the GPU", "CUDA, not run here", ["fixture.add.commutes"])]
    assert entries[1]["detail"] == "this build counts bytes" and entries[0]["revision"] == REVISION
    page = good_site.html("note.html")
    assert "3 statements: 1 holds, 1 out of date on this build, 1 CUDA, not run here." in page
    assert 'id="note-fixture-note-2"' in page and "2. Out of date on this build. " in page
    assert 'href="index.html#claim-fixture_add_commutes"' in page
    summary = good_site.html("claims.html")
    assert "1 note, 3 statements" in summary and 'href="note.html#note-fixture-note-2"' in summary


# The broken entries of a note page are cases of tests/test_build.py (the broken site).


def test_objects_inv_lists_every_claim_and_statement(good_site):
    from sphinx.util.inventory import InventoryFile
    with open(good_site.root / "_build/html/objects.inv", "rb") as handle:
        inventory = InventoryFile.load(handle, "https://example.org/site", lambda base, uri: f"{base}/{uri}")
    claims, statements = inventory["verified:claim"], inventory["verified:statement"]
    assert set(claims) == {"fixture.add.commutes", "fixture.storage.untyped"}
    item = claims["fixture.add.commutes"]
    assert (getattr(item, "uri", None) or item[2]) == "https://example.org/site/index.html#claim-fixture_add_commutes"
    assert set(statements) == {"note-fixture-note-1", "note-fixture-note-2", "note-fixture-note-3"}
