"""What every browser test shares: the built site served on 127.0.0.1, and one headless chromium."""
import layout
import pytest
from playwright.sync_api import sync_playwright


@pytest.fixture(scope="module")
def server():
    """The base URL of _build/html, served for the module's tests."""
    if not (layout.SITE / "index.html").is_file():
        pytest.fail(f"{layout.SITE} has no index.html: run `make html` first")
    url, httpd = layout.serve()
    yield url
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=layout.CHROMIUM, args=layout.FLAGS)
        yield chromium
        chromium.close()
