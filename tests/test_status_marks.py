"""The one status mark of a claim, and citations that read as marks after the sentence."""
from docutils import nodes

from verified.outcomes import NOT_APPLICABLE, NOT_RUN, PASSED
from verified.releases import history
from verified.site import render, status_marks


def test_a_claim_shows_one_status_and_no_device_it_has_no_case_on():
    assert status_marks.status({"cpu": PASSED, "cuda": NOT_APPLICABLE}) == ("verified", "verified on CPU")
    assert status_marks.status({"cpu": PASSED, "cuda": NOT_RUN}) == ("verified", "verified on CPU; CUDA not run here")
    assert status_marks.status({"cpu": PASSED, "cuda": PASSED}) == ("verified", "verified on CPU and CUDA")
    assert status_marks.devices_shown({"cpu": PASSED, "cuda": NOT_APPLICABLE}) == ["cpu"]
    assert status_marks.devices_shown({"cpu": NOT_APPLICABLE, "cuda": NOT_APPLICABLE}) == ["cpu"]


def test_a_claim_that_never_ran_is_not_run_here_and_a_failure_anywhere_wins():
    assert status_marks.status({"cpu": NOT_APPLICABLE, "cuda": NOT_RUN}) == ("not-run", "CUDA only: not run here")
    assert status_marks.status({"cpu": "failed", "cuda": PASSED}) == ("failed", "FAILED on CPU")
    assert status_marks.status({"cpu": NOT_APPLICABLE, "cuda": NOT_APPLICABLE})[0] == "not-applicable"
    assert {status_marks.glyph(k) for k in status_marks.GLYPHS} == {"✓", "✗", "○", "–"}


def _citation(claim_id):
    return nodes.reference("", "", nodes.Text("✓"), refuri=f"#claim-{claim_id}", classes=["verified-claim-ref"])


def test_a_parenthesis_of_citations_gives_way_to_the_marks():
    para = nodes.paragraph("", "", nodes.Text("counted in elements ("), _citation("a"), nodes.Text(", "),
                           _citation("b"), nodes.Text("). Next."))
    render.tidy_citations(para)
    assert para.astext() == "counted in elements✓✓. Next."
    assert [c["refuri"] for c in para.findall(nodes.reference)] == ["#claim-a", "#claim-b"]


def test_a_parenthesis_with_words_in_it_stays():
    para = nodes.paragraph("", "", nodes.Text("as shown (see "), _citation("a"), nodes.Text(") here"))
    render.tidy_citations(para)
    assert para.astext() == "as shown (see ✓) here"
    bare = nodes.paragraph("", "", nodes.Text("a fact "), _citation("a"), nodes.Text("."))
    render.tidy_citations(bare)
    assert bare.astext() == "a fact ✓."


def _steps(*verdicts):
    versions = ["2.9.1", "2.10.0", "2.11.0"]
    return [{"version": v, "verdict": d, "message": ""} for v, d in zip(versions, verdicts)]


def test_the_short_history_line_is_said_only_where_the_history_differs():
    assert history.short_line(_steps("holds", "holds", "holds")) == ""
    assert history.holds_on_every_release(_steps("holds", "holds", "holds"))
    assert history.short_line(_steps("differs", "holds", "holds")) == "Holds since 2.10.0."
    assert history.short_line(_steps("holds", "holds", "differs")) == "Not on 2.11.0 (differs)."
    assert history.short_line(_steps(*["not applicable"] * 3)) == ""
    assert history.short_line([]) == ""


def test_the_page_says_once_whether_its_claims_hold_on_every_release():
    always, newer = _steps("holds", "holds", "holds"), _steps("differs", "holds", "holds")
    assert render.releases_sentence([always, always]) == " All hold on every recorded release (2.9.1–2.11.0)."
    assert render.releases_sentence([always, newer]).startswith(" 1 of them hold on every recorded release")
    assert render.releases_sentence([[], []]) == ""
    unrecorded = _steps("missing", "holds", "holds")
    assert render.releases_sentence([always, unrecorded]) == (" 1 of them hold on every recorded release "
                                                              "(2.9.1–2.11.0); 1 is newer than some recorded runs, "
                                                              "missing there.")
