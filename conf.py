"""Sphinx configuration. The source folder is docs/; run as `sphinx-build -c . docs _build/html`."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

project = "PyTorch Internals, Verified"
author = "PyTorch Internals, Verified contributors"
copyright = "2026, " + author

extensions = [
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "sphinx_copybutton",
    "verified.sphinx_ext",
]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
exclude_patterns = ["gallery/**/*.ipynb", "gallery/**/*.py", "gallery/**/*.zip", "gallery/**/*.json",
                    "gallery/**/*.md5", "gallery/**/*.codeobj.json"]
suppress_warnings = []

# The claim machinery (verified/sphinx_ext.py): probe folders, relative to this file.
verified_probe_dirs = ["probes"]
verified_cache_dir = "_build/probe-cache"

sphinx_gallery_conf = {
    "examples_dirs": ["../gallery"],  # relative to docs/
    "gallery_dirs": ["gallery"],
    "filename_pattern": r"/plot_",
    "only_warn_on_example_error": False,
    "abort_on_example_error": False,
    "download_all_examples": False,
    "remove_config_comments": True,
    "plot_gallery": "True",
    "matplotlib_animations": False,
    "within_subsection_order": "FileNameSortKey",
    "write_computation_times": False,  # those pages load jQuery from a CDN; the site must work offline
}

html_theme = "pydata_sphinx_theme"
html_title = project
html_static_path = ["docs/_static"]  # relative to this file
html_favicon = "docs/_static/favicon.svg"
html_theme_options = {
    "navigation_with_keys": False,
    # One header row at 1280 px: two area links, the rest under "More", and the search as an icon.
    "header_links_before_dropdown": 2,
    "navbar_persistent": ["search-button"],
    "navbar_end": ["theme-switcher", "navbar-icon-links"],
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_show_sourcelink = False
# Pages with no section navigation get no primary sidebar (the space goes to their tables).
html_sidebars = {"index": [], "reference/*": [], "search": [], "genindex": []}
html_context = {"default_mode": "auto"}
