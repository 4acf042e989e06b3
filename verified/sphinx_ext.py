"""Sphinx extension: claims, source references, and the verification of both.

- ``claim`` directive: a statement with an ID, rendered with its status per device,
  its source references and its probes' source.
- ``src`` role and ``source-map`` directive: pinned links into the PyTorch source.
- ``claim-ref`` role: a cross-reference to a claim, with its status (the ``verified`` domain).
- ``claim-index`` and the other site tables: tables computed over the whole site.
- ``error-index`` directive and ``error-ref`` role: the error and warning messages the
  probes observed, as this build's torch produced them, each linked to its claims; a pasted
  message is looked up from the search page and the index page (verified.site.error_search).
- ``official-note`` and ``note-statement`` directives, ``official-notes-summary`` table:
  PyTorch's own notes checked statement by statement (verified.site.notes).
- Every page gets a line saying what verified it. The build writes
  ``verification.json`` and fails, naming file and line, on any problem.

The stages, in the order a build meets them:

1. ``build_results``: the probes run once per build, in their own process
   (``verified.probing.runner``), in a thread started at config-inited;
2. ``directives``: reading a page records what it holds (``records``, the data of the
   ``domain``) and leaves placeholders;
3. ``incremental``: which pages are read and written again;
4. ``page_writer`` (with ``domain.resolve_xref``): placeholders become rendered nodes;
5. ``report``: verification.json and the problems, as typed warnings.
"""
import os
import sys

from sphinx.util import logging

from verified.site import (
    build_lock,
    build_results,
    console,
    directives,
    error_search,
    figures,
    incremental,
    page_writer,
    render,
    report,
)
from verified.site.domain import VerifiedDomain

logger = logging.getLogger(__name__)


def on_config_inited(app, config):
    # before the environment, the gallery or the probes are touched: one build of a checkout at a time
    app.verified_build_lock = build_lock.hold(os.path.join(app.confdir, config.verified_lock_file), logger.info)
    incremental.on_config_inited(app, config)
    build_results.start_probe_run(app, config, echo=logger.info)


def setup(app):
    # the probe thread logs while the main thread prints progress: whole lines only (verified.site.console)
    console.wrap_sphinx_streams()
    app.add_config_value("verified_probe_dirs", ["probes"], "env")
    app.add_config_value("verified_cache_dir", "_build/probe-cache", "env")
    app.add_config_value("verified_results_dir", "results", "env")
    app.add_config_value("verified_python", os.environ.get("VERIFIED_PYTHON") or sys.executable, "env")
    app.add_config_value("verified_results_file", "_build/probes/results.json", "")
    app.add_config_value("verified_lock_file", "_build/build.lock", "")
    app.add_domain(VerifiedDomain)
    app.add_directive("claim", directives.ClaimDirective)
    app.add_directive("source-map", directives.SourceMapDirective)
    for name in page_writer.SITE_TABLES:
        app.add_directive(name, directives.SiteTableDirective)
    app.add_directive("official-note", directives.OfficialNoteDirective)
    app.add_directive("note-statement", directives.NoteStatementDirective)
    app.add_role("src", directives.SourceRole())
    app.add_role("claim-ref", directives.ClaimRefRole())
    app.add_role("error-ref", directives.ErrorRefRole())
    for node in directives.NODES:
        app.add_node(node)
    app.add_node(render.status_mark, html=(render.visit_status_mark, render.depart_status_mark))
    app.connect("config-inited", on_config_inited)
    app.connect("config-inited", incremental.keep_pristine_config, priority=900)
    app.connect("env-updated", incremental.on_env_updated)
    app.connect("env-get-outdated", incremental.pages_to_read)
    app.connect("env-before-read-docs", incremental.on_env_before_read_docs)
    app.connect("env-get-updated", incremental.pages_to_write)
    app.connect("doctree-read", directives.on_doctree_read)
    app.connect("doctree-resolved", page_writer.on_doctree_resolved)
    app.connect("build-finished", report.on_build_finished)
    app.add_css_file("verified.css")
    figures.setup(app)  # the gallery-figure directive
    error_search.setup(app)  # the pasted-message lookup, and what the site search leaves out
    return {"version": "2", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 2}
