"""Pages that teach, checked on the built site in Chromium (tests/browser/layout.py measures):
on every explanation page (everything outside reference/ and gallery/, search and index
pages) no sideways scroll at 375 px, no table or formula wider than the text column at
1280 px, the verification apparatus at most 5% of the visible words, status marks at a
contrast of at least 4.5:1 in light and dark mode; no empty primary sidebar anywhere; and the
landing page's "Next" goes to the tensor area, where it says to start.
"""
import json

import layout
import pytest

playwright = pytest.importorskip("playwright.sync_api")

MAX_APPARATUS_SHARE = 0.05
MIN_CONTRAST = 4.5


@pytest.fixture(scope="module")
def figures(browser, server):
    """The measurements of every explanation page, printed once for the record."""
    pages = layout.explanation_pages()
    assert len(pages) > 50
    found = layout.measure(browser, server, pages)
    summary = layout.summary(found)
    print("\n" + json.dumps({k: v if not isinstance(v, list) else len(v) for k, v in summary.items()}))
    return found, summary


def test_no_explanation_page_scrolls_sideways_at_375_px(figures):
    found, summary = figures
    assert not summary["sideways_at_375"], {p: found[p]["sideways"] for p in summary["sideways_at_375"]}


def test_no_table_or_formula_is_wider_than_the_column_at_1280_px(figures):
    found, summary = figures
    assert not summary["too_wide_at_1280"], {p: found[p]["too_wide"] for p in summary["too_wide_at_1280"]}


def test_apparatus_is_at_most_five_percent_of_the_visible_words(figures):
    found, summary = figures
    print(f"\napparatus share: {summary['apparatus']}/{summary['words']} = {summary['share']:.2%}")
    assert summary["share"] <= MAX_APPARATUS_SHARE, summary


def test_status_marks_have_enough_contrast_in_both_modes(browser, server):
    ratios = layout.contrast(browser, server, layout.SCREENSHOT_PAGES + ["guide/myths.html", "memory/cuda-streams.html"])
    assert {r[0] for r in ratios} == {"light", "dark"}
    low = [r for r in ratios if r[3] < MIN_CONTRAST]
    print(f"\nstatus marks: {len(ratios)}, lowest " + ", ".join(
        f"{theme} {min(r[3] for r in ratios if r[0] == theme):.2f}:1" for theme in ("light", "dark")))
    assert not low, low[:10]


def test_a_claim_shows_one_mark_and_opens_its_proof(browser, server):
    tab = layout.new_tab(browser, layout.WIDE)
    tab.goto(server + "autograd/engine.html")
    claim = tab.locator("#claim-autograd_engine_cpu-runs-on-caller")  # a probe without a CUDA case
    mark = claim.locator(".verified-claim-details > summary .verified-mark")
    assert mark.get_attribute("aria-label") == "autograd.engine.cpu-runs-on-caller: verified on CPU"
    assert mark.inner_text() == "✓" and not claim.locator(".verified-claim-header").is_visible()
    mark.click()
    facts = claim.locator(".verified-claim-header").inner_text()
    assert "autograd.engine.cpu-runs-on-caller" in facts and "cpu: verified" in facts and "cuda" not in facts
    assert claim.locator(".verified-probe summary").first.is_visible()
    tab.goto(server + "tensor/strides.html")
    citation = tab.locator("a.verified-claim-ref").first
    assert citation.get_attribute("href").endswith("#claim-tensor_strides_index-formula")
    assert citation.get_attribute("title") == "tensor.strides.index-formula: verified on CPU; CUDA not run here"
    tab.context.close()


def test_a_citation_of_a_claim_that_never_ran_reads_not_run_here(browser, server):
    report = json.loads((layout.SITE / "verification.json").read_text())
    never_ran = {c["id"] for c in report["claims"] if "passed" not in c["outcome"].values()
                 and "not run" in c["outcome"].values()}
    tab = layout.new_tab(browser, layout.WIDE)
    checked = 0
    for relpath in ("memory/cuda-streams.html", "memory/cuda-allocator.html", "guide/official-notes/cuda.html"):
        tab.goto(server + relpath)
        for ref in tab.eval_on_selector_all("a.verified-claim-ref", "els => els.map(e => [e.getAttribute('href'),"
                                            " e.getAttribute('title'), e.querySelector('.verified-mark').className])"):
            claim_id = ref[0].split("#claim-", 1)[1].replace("_", ".")
            if claim_id in never_ran:
                checked += 1
                assert ref[1].endswith("not run here") and "verified" not in ref[1], ref
                assert "verified-mark-not-run" in ref[2], ref
    tab.context.close()
    assert checked > 0


KEY_COLUMNS_JS = """(selector) => {
  const table = document.querySelector(selector);
  const box = (table.closest('.pst-scrollable-table-container') || table).getBoundingClientRect();
  const heads = [...table.querySelectorAll('thead th')];
  const shown = heads.filter(th => th.getBoundingClientRect().right <= box.right + 1).map(th => th.innerText.trim());
  return {shown, sticky: getComputedStyle(heads[0]).position};
}"""


@pytest.mark.parametrize("relpath, selector, key_columns", [
    ("reference/claims.html", "table.verified-claim-index", ["Claim", "Statement", "cpu", "cuda"]),
    ("reference/matrix.html", "table.verified-matrix-table", ["Claim"]),
])
def test_reference_tables_keep_their_key_columns_in_view_at_1280_px(browser, server, relpath, selector, key_columns):
    tab = layout.new_tab(browser, layout.WIDE)
    tab.goto(server + relpath)
    found = tab.evaluate(KEY_COLUMNS_JS, selector)
    tab.context.close()
    assert set(key_columns) <= set(found["shown"]) and found["sticky"] == "sticky", found


def test_no_page_has_an_empty_primary_sidebar(browser, server):
    tab = layout.new_tab(browser, layout.WIDE)
    empty = []
    for relpath in layout.explanation_pages() + ["reference/matrix.html", "reference/claims.html", "index.html"]:
        tab.goto(server + relpath)
        links = tab.evaluate("() => { const s = document.querySelector('.bd-sidebar-primary');"
                             " return s && s.checkVisibility() ? s.querySelectorAll('a').length : null; }")
        if links == 0:
            empty.append(relpath)
    tab.context.close()
    assert not empty


def test_the_header_is_one_row_at_1280_px(browser, server):
    tab = layout.new_tab(browser, layout.WIDE)
    tab.goto(server + "tensor/strides.html")
    rows = tab.evaluate("() => new Set([...document.querySelectorAll('.bd-header .navbar-nav > li, "
                        ".bd-header .search-button')].filter(e => e.checkVisibility())"
                        ".map(e => Math.round(e.getBoundingClientRect().top / 10))).size")
    tab.context.close()
    assert rows == 1


def test_next_from_the_landing_page_goes_where_it_says_to_start(browser, server):
    tab = layout.new_tab(browser, layout.WIDE)
    tab.goto(server + "index.html")
    assert tab.get_attribute("a.right-next", "href") == "tensor/index.html"
    tab.context.close()
