"""Executed figures inside the explanation pages (issue 25, item 2), in headless chromium.

Each page of the required list shows a loaded gallery image inside its article; every
explanation page (outside reference/ and gallery/) is counted, and at least 25 must show
one. Screenshots of a few pages at 1280 and 375 px go to _build/screenshots/figures-*.png,
and at 375 px no figure is wider than the article.
"""
import layout
import pytest

REQUIRED = [  # the pages issue 25 names, each must show an executed figure
    "tensor/strides", "tensor/views", "autograd/graph", "autograd/engine", "autograd/saved-tensors",
    "autograd/custom-function", "dispatch/life-of-a-call", "dispatch/keys", "module/call-and-hooks",
    "module/state-dict", "memory/graph-retention", "autograd/checkpoint-anomaly",
    "optim/step-and-implementations", "tensor/numpy", "tensor/broadcasting", "distributed/ddp",
    "debugging/profiler", "compile/dynamo", "compile/fx", "compile/aot-autograd", "bridge/crossing-cost",
]
SCREENSHOT_PAGES = ["tensor/strides", "autograd/engine", "distributed/ddp"]

# The loaded, visible gallery images inside the article: [naturalWidth, shown width, article width].
SHOWN_FIGURES = """() => {
  const article = document.querySelector('article') || document.querySelector('main');
  if (!article) return [];
  return [...article.querySelectorAll('figure.verified-gallery-figure img')]
    .filter(img => img.complete && img.naturalWidth > 0 && img.offsetParent !== null
                   && img.getBoundingClientRect().width > 0)
    .map(img => [img.naturalWidth, img.getBoundingClientRect().width, article.getBoundingClientRect().width]);
}"""


def explanation_pages():
    """The explanation pages as tests/browser/layout.py defines them, without ".html"."""
    return [page.removesuffix(".html") for page in layout.explanation_pages()]


@pytest.fixture(scope="module")
def tab(browser):
    """One tab at 1280 px for the page-by-page checks."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    yield context.new_page()
    context.close()


def visit(tab, server, name):
    """Open the page and wait until every image in it has loaded (or failed)."""
    tab.goto(f"{server}{name}.html")
    tab.wait_for_load_state("load")
    for img in tab.query_selector_all("figure.verified-gallery-figure img"):
        img.scroll_into_view_if_needed()  # images load lazily in some themes: make each one load
    tab.wait_for_function("() => [...document.images].every(img => img.complete)")
    return tab


def test_each_required_page_shows_an_executed_figure(server, tab):
    missing = [name for name in REQUIRED if not visit(tab, server, name).evaluate(SHOWN_FIGURES)]
    assert not missing, f"no loaded figure in the article of: {missing}"


def test_at_least_25_explanation_pages_show_an_executed_figure(server, tab):
    pages = explanation_pages()
    with_figure = [name for name in pages if visit(tab, server, name).evaluate(SHOWN_FIGURES)]
    print(f"\nexplanation pages with an executed figure: {len(with_figure)} of {len(pages)}")
    print("\n".join(f"  {name}" for name in with_figure))
    assert len(with_figure) >= 25


@pytest.mark.parametrize("width", [1280, 375])
def test_figures_fit_the_column(server, browser, width):
    layout.SHOTS.mkdir(parents=True, exist_ok=True)
    for name in SCREENSHOT_PAGES:
        context = browser.new_context(viewport={"width": width, "height": 900})
        tab = visit(context.new_page(), server, name)
        figures = tab.evaluate(SHOWN_FIGURES)
        assert figures, name
        for _natural, shown, column in figures:
            assert shown <= column + 1, f"{name} at {width} px: a figure is {shown} px wide in a {column} px article"
        tab.query_selector("figure.verified-gallery-figure").scroll_into_view_if_needed()
        tab.screenshot(path=str(layout.SHOTS / f"figures-{name.replace('/', '-')}-{width}.png"))
        context.close()
