"""The built site in a real browser (Debian's chromium driven by Playwright; no browser download).

Run by `make browser-test` after `make html`: serves _build/html on 127.0.0.1, visits every
page, and fails on console errors, requests to other hosts, or broken internal links.
"""
import json
from pathlib import Path
from urllib.parse import quote, unquote, urljoin, urlparse

import pytest

SITE = Path(__file__).resolve().parents[2] / "_build" / "html"
SHOTS = SITE.parent / "screenshots"
SKIP_DIRS = {"_static", "_sources", "_downloads", "_images", "_sphinx_design_static"}


def pages():
    return sorted(p.relative_to(SITE).as_posix() for p in SITE.rglob("*.html")
                  if not SKIP_DIRS & set(p.relative_to(SITE).parts))


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    tab = context.new_page()
    yield tab
    context.close()


def test_every_page_loads_cleanly_and_links_resolve(server, page):
    problems = []
    page.on("console", lambda m: m.type == "error" and problems.append(f"{page.url}: console: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"{page.url}: page error: {e}"))
    page.on("response", lambda r: r.status >= 400 and problems.append(f"{page.url}: HTTP {r.status} for {r.url}"))
    page.on("request", lambda r: _external(r.url, server) and problems.append(f"{page.url}: external request {r.url}"))
    visited = pages()
    assert len(visited) > 10
    for relpath in visited:
        response = page.goto(server + relpath)
        assert response.status == 200, relpath
        for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))"):
            target = urljoin(server + relpath, href)
            if _external(target, server) or target.startswith(("mailto:", "javascript:")):
                continue
            problem = _broken(target, server)
            if problem:
                problems.append(f"{relpath}: link {href}: {problem}")
    assert not problems, "\n".join(sorted(set(problems))[:50])


def test_search_finds_the_strides_page(server, page):
    page.goto(server + "search.html?q=stride")
    page.wait_for_selector("#search-results li a", timeout=20000)
    hits = page.eval_on_selector_all("#search-results li a", "els => els.map(e => e.getAttribute('href'))")
    assert any("tensor/strides" in h for h in hits), hits


# Real messages as a reader would paste them, each with the claim expected to explain it.
PASTED_MESSAGES = [
    ("RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after "
     "they have already been freed)", "autograd.saved.freed-by-backward"),
    ("RuntimeError: view size is not compatible with input tensor's size and stride (at least one dimension spans "
     "across two contiguous subspaces). Use .reshape(...) instead.", "tensor.view.view-rejects-incompatible"),
    ("RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn",
     "autograd.function.once-differentiable"),
    ("RuntimeError: grad can be implicitly created only for scalar outputs", "autograd.engine.nonscalar-needs-gradient"),
    ("TypeError: cannot assign 'torch.FloatTensor' as parameter 'bias' (torch.nn.Parameter or None expected)",
     "module.registration.parameter-none"),
    ("RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.",
     "autograd.saved.leaf-inplace"),
]


@pytest.mark.parametrize("message, claim_id", PASTED_MESSAGES, ids=[c for _, c in PASTED_MESSAGES])
def test_searching_a_pasted_message_finds_its_index_entry_and_claim_page(server, page, message, claim_id):
    report = json.loads((SITE / "verification.json").read_text())
    claim_page = next(c["page"] for c in report["claims"] if c["id"] == claim_id)
    pasted = message.split(": ", 1)[1]
    entry = next(e for e in report["errors"] if claim_id in e["claims"] and pasted in " ".join(e["message"].split()))
    assert entry["pages"] and claim_page in entry["pages"]
    page.goto(server + "search.html?q=" + quote(message))
    page.wait_for_function("document.querySelector('#search-results p.search-summary')"
                           " && /Search finished|did not match/.test("
                           "document.querySelector('#search-results p.search-summary').innerText)", timeout=30000)
    hits = page.eval_on_selector_all("#search-results li a", "els => els.map(e => e.getAttribute('href'))")
    first = [h.split("?")[0].split("#")[0].removesuffix(".html") for h in hits[:5]]
    assert "reference/errors" in first and claim_page in first, (message, hits[:8])


def test_content_page_shows_badges_and_pinned_sources(server, page):
    page.goto(server + "tensor/views.html")
    marks = page.locator(".verified-claim-details > summary .verified-mark")
    assert marks.first.get_attribute("aria-label").endswith("verified on CPU; CUDA not run here")
    marks.first.click()  # the proof opens: the id, the status per device, the sources, the probes
    badges = page.locator(".verified-claim-details[open] .verified-badge").all_inner_texts()
    assert any(b.startswith("cpu: verified") for b in badges)
    pinned = page.eval_on_selector_all("a[href^='https://github.com/pytorch/pytorch/blob/']",
                                       "els => els.map(e => e.getAttribute('href'))")
    assert any("#L" in href for href in pinned)
    page.locator(".verified-claim-details[open] .verified-probe summary").first.click()
    assert page.locator(".verified-claim-details[open] .verified-probe pre").first.is_visible()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "content-page.png"), full_page=False)
    page.goto(server + "index.html")
    page.screenshot(path=str(SHOTS / "landing-page.png"), full_page=True)
    assert (SHOTS / "landing-page.png").stat().st_size > 10000


def _external(url, server):
    parsed = urlparse(url)
    return parsed.scheme in ("http", "https") and not url.startswith(server)


def _broken(url, server):
    """Why an internal URL is broken, or None: the file must exist, and its #anchor too."""
    parsed = urlparse(url)
    path = SITE / unquote(parsed.path[len(urlparse(server).path):])
    if path.is_dir():
        path = path / "index.html"
    if not path.is_file():
        return "no such file"
    if parsed.fragment and path.suffix == ".html":
        text = path.read_text(errors="replace")
        anchor = unquote(parsed.fragment)
        if f'id="{anchor}"' not in text and f"id='{anchor}'" not in text:
            return f"no element with id {anchor!r}"
    return None
