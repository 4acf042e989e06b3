"""What a reader sees of the built site, measured in a real browser: how much of the visible
text is verification apparatus, what is wider than its column, and the contrast of the
status marks. Used by tests/browser/test_layout.py, and on its own to print the figures:

    .venv/bin/python tests/browser/layout.py [--shots before|after] [--site _build/html]
"""
import functools
import http.server
import shutil
import sys
import threading
from pathlib import Path
from urllib.parse import quote

SITE = Path(__file__).resolve().parents[2] / "_build" / "html"
SHOTS = SITE.parent / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
NOT_EXPLANATION = {"reference", "gallery", "_static", "_sources", "_downloads", "_images"}
NOT_EXPLANATION_PAGES = {"search.html", "genindex.html", "py-modindex.html"}
SCREENSHOT_PAGES = ["tensor/strides.html", "autograd/engine.html", "dispatch/life-of-a-call.html"]
WIDE, NARROW = 1280, 375

# Verification apparatus, as the pages render it: claim ids, status marks (and the badges of
# earlier builds), history lines, probe labels, source lines of a claim. Text inside a closed
# <details> is not visible and so not counted.
APPARATUS = ", ".join([
    ".verified-claim-id", ".verified-badge", ".verified-mark", ".verified-claim-history", ".verified-probe > summary",
    ".verified-claim-ref", ".verified-claim-sources", ".verified-claim-details > summary",
])

# Words of the article's visible text, and how many of them sit inside apparatus elements. Text
# nodes are joined as the reader sees them: inside one block (or one apparatus element) with
# nothing between them, so `torch/<wbr>_tensor.py` or `a<b>b</b>` stays one word.
WORDS_JS = """(apparatus) => {
  const article = document.querySelector('article.bd-article') || document.querySelector('main');
  const shown = el => el.checkVisibility({visibilityProperty: true, contentVisibilityAuto: true})
    && !el.closest('details:not([open]) > :not(summary)');
  const BLOCK = 'p, li, td, th, pre, div, summary, h1, h2, h3, h4, h5, h6, dt, dd, caption, figcaption';
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  let all = '', inside = '', lastBlock = null, lastApparatus = null;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!el || el.closest('script, style') || !shown(el)) continue;
    const block = el.closest(BLOCK);
    all += (block === lastBlock ? '' : ' ') + node.textContent;
    lastBlock = block;
    const owner = el.closest(apparatus);
    if (owner) {
      inside += (owner === lastApparatus ? '' : ' ') + node.textContent;
      lastApparatus = owner;
    }
  }
  const count = text => text.split(/\\s+/).filter(Boolean).length;
  return {total: count(all), apparatus: count(inside)};
}"""

SIDEWAYS_JS = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"

# Tables and formulas (math, a plain-text block) wider than the text column: an element sticking
# out of the article, or one whose content is wider than the box it is shown in (its own, or the
# wrapper it scrolls in), so that part of it is hidden until scrolled. Code blocks scroll on
# their own by design; `WIDE_CODE` counts those apart.
TABLES_AND_FORMULAS = "table, div.math, mjx-container, div.highlight-text pre"
WIDE_CODE = "div.highlight pre"
TOO_WIDE_JS = """(selector) => {
  const article = document.querySelector('article.bd-article') || document.querySelector('main');
  const right = article.getBoundingClientRect().right + 1;
  const found = [];
  for (const el of article.querySelectorAll(selector)) {
    if (!el.checkVisibility() || el.closest('details:not([open])')) continue;
    const box = el.closest('.pst-scrollable-table-container, .verified-scroll') || el;
    const sticks_out = box.getBoundingClientRect().right > right;
    const cut = (box === el ? el.scrollWidth : el.getBoundingClientRect().width) > box.clientWidth + 1;
    if (sticks_out || cut) found.push(el.tagName.toLowerCase() + '.' + [...el.classList].join('.'));
  }
  return found;
}"""

# Each status mark's text colour against the background actually behind it, as WCAG computes it.
CONTRAST_JS = """(selector) => {
  const rgb = s => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const c = [r, g, b].map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const background = el => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length >= 3 && (c.length < 4 || c[3] > 0.5)) return c;
    }
    return [255, 255, 255];
  };
  const out = [];
  for (const el of document.querySelectorAll(selector)) {
    if (!el.checkVisibility()) continue;
    const fg = lum(rgb(getComputedStyle(el).color)), bg = lum(background(el));
    const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
    out.push({text: el.textContent.trim().slice(0, 40), classes: el.className, ratio: Math.round(ratio * 100) / 100});
  }
  return out;
}"""

MARKS = ".verified-mark, .verified-badge"


def explanation_pages(site=SITE):
    pages = []
    for path in sorted(site.rglob("*.html")):
        rel = path.relative_to(site)
        if NOT_EXPLANATION & set(rel.parts[:-1]) or rel.as_posix() in NOT_EXPLANATION_PAGES:
            continue
        pages.append(rel.as_posix())
    return pages


def serve(site=SITE):
    """An HTTP server of `site` on a free port of 127.0.0.1, in a thread: (base url, server)."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}/", httpd


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def new_tab(browser, width, theme="light"):
    context = browser.new_context(viewport={"width": width, "height": 900})
    # The theme reads its mode from localStorage before the first paint.
    context.add_init_script(f"localStorage.setItem('theme', '{theme}'); localStorage.setItem('mode', '{theme}');")
    return context.new_page()


def search_results(tab, base, query):
    """[(href, text)] of the site search's results for `query`, once the search has finished."""
    tab.goto(base + "search.html?q=" + quote(query))
    tab.wait_for_function("document.querySelector('#search-results p.search-summary')"
                          " && /Search finished|did not match/.test("
                          "document.querySelector('#search-results p.search-summary').innerText)", timeout=30000)
    return tab.eval_on_selector_all("#search-results li", "ls => ls.map(l => [l.querySelector('a')"
                                                          ".getAttribute('href'), l.innerText])")


def measure(browser, base, pages):
    """{page: {words, apparatus, sideways (px at 375), too_wide ([elements at 1280]), wide_code (blocks)}}."""
    wide, narrow = new_tab(browser, WIDE), new_tab(browser, NARROW)
    found = {}
    for relpath in pages:
        wide.goto(base + relpath)
        words = wide.evaluate(WORDS_JS, APPARATUS)
        too_wide = wide.evaluate(TOO_WIDE_JS, TABLES_AND_FORMULAS)
        wide_code = len(wide.evaluate(TOO_WIDE_JS, WIDE_CODE))
        narrow.goto(base + relpath)
        found[relpath] = {"words": words["total"], "apparatus": words["apparatus"],
                          "sideways": narrow.evaluate(SIDEWAYS_JS), "too_wide": too_wide,
                          "wide_code": wide_code}
    wide.context.close()
    narrow.context.close()
    return found


def contrast(browser, base, pages):
    """[(theme, page, text, ratio)] of every visible status mark on `pages`, light and dark."""
    ratios = []
    for theme in ("light", "dark"):
        tab = new_tab(browser, WIDE, theme)
        for relpath in pages:
            tab.goto(base + relpath)
            assert tab.evaluate("document.documentElement.dataset.theme") == theme, (relpath, theme)
            ratios += [(theme, relpath, m["text"], m["ratio"]) for m in tab.evaluate(CONTRAST_JS, MARKS)]
        tab.context.close()
    return ratios


def summary(found):
    words = sum(f["words"] for f in found.values())
    apparatus = sum(f["apparatus"] for f in found.values())
    sideways = sorted(p for p, f in found.items() if f["sideways"] > 0)
    too_wide = sorted(p for p, f in found.items() if f["too_wide"])
    return {"pages": len(found), "words": words, "apparatus": apparatus,
            "share": apparatus / words if words else 0.0, "sideways_at_375": sideways, "too_wide_at_1280": too_wide,
            "code_blocks_scrolling_at_1280": sum(f["wide_code"] for f in found.values()),
            "pages_over_5_percent": sorted(p for p, f in found.items()
                                           if f["words"] and f["apparatus"] / f["words"] > 0.05)}


def screenshots(browser, base, prefix):
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width in (WIDE, NARROW):
        tab = new_tab(browser, width)
        for relpath in SCREENSHOT_PAGES:
            tab.goto(base + relpath)
            name = relpath.removesuffix(".html").replace("/", "-")
            tab.screenshot(path=str(SHOTS / f"{prefix}-{name}-{width}.png"), full_page=False)
        tab.context.close()


def report_line(figures, ratios):
    low = [r for r in ratios if r[3] < 4.5]
    return (f"apparatus share: {figures['apparatus']}/{figures['words']} words = {figures['share']:.1%} over "
            f"{figures['pages']} explanation pages ({len(figures['pages_over_5_percent'])} pages above 5%); "
            f"sideways scroll at {NARROW} px: {len(figures['sideways_at_375'])} pages; "
            f"table/formula wider than the column at {WIDE} px: {len(figures['too_wide_at_1280'])} pages "
            f"({figures['code_blocks_scrolling_at_1280']} code blocks scroll in their own box); "
            f"status marks: {len(ratios)}, lowest contrast "
            + ", ".join(f"{theme} {min((r[3] for r in ratios if r[0] == theme), default=0):.2f}:1"
                        for theme in ("light", "dark"))
            + f", {len(low)} below 4.5:1")


def main(argv):
    from playwright.sync_api import sync_playwright
    prefix = argv[argv.index("--shots") + 1] if "--shots" in argv else None
    site = Path(argv[argv.index("--site") + 1]) if "--site" in argv else SITE
    base, httpd = serve(site)
    pages = explanation_pages(site)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        if prefix:
            screenshots(browser, base, prefix)
        figures = summary(measure(browser, base, pages))
        ratios = contrast(browser, base, SCREENSHOT_PAGES + ["guide/myths.html"])
        browser.close()
    httpd.shutdown()
    print(report_line(figures, ratios))
    for key in ("sideways_at_375", "too_wide_at_1280", "pages_over_5_percent"):
        print(f"{key}: {' '.join(figures[key])}")


if __name__ == "__main__":
    main(sys.argv[1:])
