"""The gallery-figure directive (verified/site/figures.py) on copies of the fixture site.

The fixture does not run sphinx-gallery: the tests write a script and the image
sphinx-gallery would have made from it (sphinx-gallery's default folders, ``examples/`` and
``docs/auto_examples/``), and a page carrying the label of the script's gallery page.
"""
import base64
import re

import pytest
from test_incremental import reread

PNG = base64.b64decode(  # a 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
GALLERY_PAGE = "(sphx_glr_auto_examples_area_plot_x.py)=\n# The script\n"
FIGURES = """# Figures

Some text the figure illustrates.

:::{gallery-figure} area/plot_x
:alt: the first figure
What the figure shows, with {claim-ref}`fixture.add.commutes`.
:::

:::{gallery-figure} area/plot_x
:image: 2
:device: cuda
A figure that needs a GPU.
:::
"""


def with_figures(site, page=FIGURES):
    site.write("examples/area/plot_x.py", "print('a script')\n")
    (site.root / "docs/auto_examples/area/images").mkdir(parents=True)
    (site.root / "docs/auto_examples/area/images/sphx_glr_plot_x_001.png").write_bytes(PNG)
    site.write("docs/auto_examples/area/plot_x.md", GALLERY_PAGE)
    site.write("docs/figures.md", page)
    site.replace("docs/index.md", "```{toctree}\nclaims\n", "```{toctree}\nclaims\nfigures\nauto_examples/area/plot_x\n")
    return site


@pytest.fixture
def figures(site):
    site = with_figures(site)
    code, out = site.build()
    assert code == 0, out
    return site


def test_the_image_is_placed_copied_and_linked(figures):
    html = (figures.root / "_build/html/figures.html").read_text()
    figure = re.search(r'<figure class="verified-gallery-figure.*?</figure>', html, re.S).group(0)
    assert 'src="_images/sphx_glr_plot_x_001.png"' in figure and 'alt="the first figure"' in figure
    assert '<a class="reference internal image-reference" href="_images/sphx_glr_plot_x_001.png">' in figure
    assert "What the figure shows" in figure and "fixture.add.commutes" in figure
    assert 'href="auto_examples/area/plot_x.html#sphx-glr-auto-examples-area-plot-x-py"' in figure
    assert (figures.root / "_build/html/_images/sphx_glr_plot_x_001.png").read_bytes() == PNG


def test_a_cuda_figure_without_its_image_says_not_run_here(figures):
    html = (figures.root / "_build/html/figures.html").read_text()
    assert "CUDA figure: not run here" in html and "A figure that needs a GPU." in html
    assert html.count("<img") == 1


def test_a_warm_build_reads_no_page_and_a_new_image_rereads_its_page(figures):
    code, out = figures.build()
    assert code == 0 and reread(out) == [], out
    (figures.root / "docs/auto_examples/area/images/sphx_glr_plot_x_001.png").write_bytes(PNG + b"\0")
    code, out = figures.build()
    assert code == 0 and reread(out) == ["figures"], out


def test_a_missing_script_or_image_fails_the_build_at_the_directive(site):
    page = FIGURES.replace("area/plot_x\n:alt:", "area/plot_gone\n:alt:") + \
        "\n:::{gallery-figure} area/plot_x\n:image: 3\n:::\n\n:::{gallery-figure} plot_x\n:::\n"
    site = with_figures(site, page)
    code, out = site.build()
    assert code != 0
    def line(text, nth=0):
        return [n for n, t in enumerate(page.splitlines(), 1) if text in t][nth]
    assert f"docs/figures.md:{line('area/plot_gone')}: WARNING: gallery-figure 'area/plot_gone': no gallery " \
           f"script examples/area/plot_gone.py [verified.gallery-figure]" in out
    assert f"docs/figures.md:{line(':image: 3') - 1}: WARNING: gallery-figure 'area/plot_x': " \
           f"examples/area/plot_x.py made no figure 3 (docs/auto_examples/area/images/sphx_glr_plot_x_003.png " \
           f"does not exist) [verified.gallery-figure]" in out
    assert f"docs/figures.md:{line('gallery-figure} plot_x')}: WARNING: gallery-figure 'plot_x': expected " \
           f"'<area>/plot_<name>'" in out
