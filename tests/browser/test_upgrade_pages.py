"""The pages for readers who upgrade, in Chromium: at 1280 px the what-changed page's first
screen holds the newest step's before/after table, whole, and the version matrix shows its newest
release column without scrolling sideways; at 375 px each change reads as one block whose API
name is not broken. Screenshots go to _build/screenshots/."""
import layout
import pytest

playwright = pytest.importorskip("playwright.sync_api")

FIRST_SCREEN = 800  # px of height a 1280-px-wide laptop screen shows


def box(page, selector):
    return page.eval_on_selector(selector, "el => { const r = el.getBoundingClientRect(); "
                                           "return {top: r.top, bottom: r.bottom, right: r.right}; }")


def test_the_newest_steps_changes_are_on_the_first_screen(browser, server):
    page = browser.new_page(viewport={"width": layout.WIDE, "height": FIRST_SCREEN})
    page.goto(f"{server}/reference/changes.html")
    first = box(page, "table.verified-changes-pairs")
    assert first["top"] < FIRST_SCREEN and first["right"] <= layout.WIDE, first
    rows = page.eval_on_selector_all("table.verified-changes-pairs:first-of-type tbody tr", "rs => rs.length")
    assert rows >= 1
    heads = page.eval_on_selector("table.verified-changes-pairs",
                                  "t => [...t.querySelectorAll('thead th')].map(th => th.innerText)")
    assert len(heads) == 4 and heads[0] == "API" and heads[-1].startswith("Claims"), heads
    layout.SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(layout.SHOTS / "changes-1280.png"))
    page.close()


def test_the_matrix_shows_the_newest_release_at_1280_px(browser, server):
    page = browser.new_page(viewport={"width": layout.WIDE, "height": FIRST_SCREEN})
    page.goto(f"{server}/reference/matrix.html")
    newest = box(page, "table.verified-matrix-table thead th:nth-child(2)")
    assert newest["right"] <= layout.WIDE, newest
    page.screenshot(path=str(layout.SHOTS / "matrix-1280.png"))
    page.close()


def test_each_change_is_one_readable_block_at_375_px(browser, server):
    page = browser.new_page(viewport={"width": layout.NARROW, "height": FIRST_SCREEN})
    page.goto(f"{server}/reference/changes.html")
    found = page.eval_on_selector("table.verified-changes-pairs", """table => ({
        wide: table.getBoundingClientRect().right,
        display: getComputedStyle(table.querySelector('tbody tr')).display,
        // an inline name broken over lines has one box per line
        apiLines: [...table.querySelectorAll('tbody td:first-child code')].map(c => c.getClientRects().length)})""")
    assert found["display"] == "block" and found["wide"] <= layout.NARROW, found
    assert found["apiLines"] and max(found["apiLines"]) == 1, found
    page.screenshot(path=str(layout.SHOTS / "changes-375.png"))
    page.close()


@pytest.mark.parametrize("api, claim_anchor", [
    ("torch.jit.script", "#claim-compile_torchscript_future-warning"),
    ("clamp", "#claim-autograd_derivatives_clamp-bound-blocks-gradient"),
    ("torch.compile", "#claim-compile_err_invalid-backend-suggests"),
])
def test_searching_an_api_finds_the_claims_of_its_changes(browser, server, api, claim_anchor):
    page = browser.new_page(viewport={"width": layout.WIDE, "height": FIRST_SCREEN})
    hits = layout.search_results(page, server, api)
    page.close()
    found = [text for href, text in hits[:5] if href.endswith(claim_anchor)]
    assert found and "change between releases" in found[0], hits[:5]
