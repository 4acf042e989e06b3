"""The pages an upgrading reader opens stay light: the version matrix (and each of its area
pages) and the what-changed page are at most 300 KB of HTML each, on the built site (here, with
the browser tests, because `make browser-test` runs them after `make html`)."""
from pathlib import Path

SITE = Path(__file__).resolve().parents[2] / "_build" / "html"
LIMIT = 300 * 1024


def upgrade_pages():
    pages = [SITE / "reference" / "matrix.html", SITE / "reference" / "changes.html"]
    return pages + sorted((SITE / "reference" / "matrix").glob("*.html"))


def test_matrix_and_changes_pages_are_at_most_300_kb():
    sizes = {p.relative_to(SITE).as_posix(): p.stat().st_size for p in upgrade_pages() if p.is_file()}
    assert len(sizes) >= 3
    assert {page: size for page, size in sizes.items() if size > LIMIT} == {}
