"""The pasted-message lookup in the built site: its data, and the pages that load it.

``_static/verified-errors-data.js`` holds the normalisation rules (verified.probing.message_rules) and
every index entry, normalised by those rules here; ``_static/verified-errors.js`` reads the
reader's text by the same rules and ranks the entries (how: verified.probing.message_rules). It runs
on Sphinx's search page, where the entries that match a pasted message come before Sphinx's
own results (which stay below it, as Sphinx found them), and in the box on the error index
page. Both files are plain scripts, so the lookup works offline and from ``file://``.

A pasted message that no entry matches still finds pages: on the search page, when the query
reads as a message, the sections whose title it contains word for word ("CUDA out of memory")
come before Sphinx's results and before any entry that matches only weakly (a score below
``STRONG`` in the script, about half of what a real match scores); and when Sphinx finds no
page holding every word (a message carries the reader's own names and numbers), the pages
sharing its rarer words stand in for Sphinx's empty list.

Search hygiene lives here too: the list pages (all claims, the matrix, what changed) are left
out of Sphinx's search index, and a query word of one letter (the "s" of "tensor's") is not
highlighted.
"""
import json
from pathlib import Path

from sphinx.util.fileutil import copy_asset_file

from verified.outcomes import PASSED
from verified.probing import message_rules, messages
from verified.site import build_results as results
from verified.site import render

STATIC = Path(__file__).parent / "static"
SCRIPT, DATA = "verified-errors.js", "verified-errors-data.js"
# pages made of a site-wide list: searching them finds the list, not the page that explains
LIST_TABLES = ("claim-index", "claim-matrix", "version-changes")


def entry_data(item, claims, index_doc):
    """What the browser needs of one index item: short keys, the links ready."""
    links = [[claims[c].docname, render.claim_anchor(c), c] for c in item["claims"] if c in claims]
    cause = next((c for c in item["causes"] if c["cause"] or c["fix"]), None)
    return {"t": item["type"], "k": item["kind"], "m": messages.one_line(item["message"]),
            "n": item["normalised"], "a": messages.anchor(item), "c": links,
            **({"cause": cause["cause"], "fix": cause["fix"]} if cause else {})}


def site_data(items, claims, index_doc):
    return {"index": index_doc, **message_rules.rules_for_browser(),
            "entries": [entry_data(i, claims, index_doc) for i in items]}


def write_assets(app):
    """The lookup's two scripts into _static (build-finished, every build: the data follows the probes)."""
    static = Path(app.outdir, "_static")
    static.mkdir(parents=True, exist_ok=True)
    copy_asset_file(STATIC / SCRIPT, static, force=True)
    data = site_data(results.error_items(app), results.claims_by_id(app), results.error_index_doc(app.env))
    (static / DATA).write_text("window.VERIFIED_ERRORS = " + json.dumps(data, ensure_ascii=False) + ";\n")


def claim_source(root, claim):
    """The lines of a claim's directive in its page (from its opening line to its closing fence)."""
    lines = Path(root, claim.file).read_text().splitlines()[claim.line - 1:]
    fence = lines[0][:len(lines[0]) - len(lines[0].lstrip(":"))] if lines else ":::"
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == fence), len(lines))
    return "\n".join(lines[:end])


def claims_quoting_without_entry(app):
    """[(claim id, type, quoted text)] of each `Type: message` a claim quotes that the index has
    no entry of this claim for (verified.probing.messages.quotes_without_entry)."""
    quotes = {}
    for claim in results.claims_by_id(app).values():
        found = messages.quoted_messages(claim_source(app.confdir, claim))
        if found:
            quotes[claim.id] = found
    ran = {c for c in quotes if PASSED in results.outcomes_of(app, c).values()}
    return quotes, messages.quotes_without_entry(quotes, results.error_items(app), ran)


def summary_line(app):
    """One console line: entries, causes, raise sites, claims that quote a message with no entry."""
    items = results.error_items(app)
    quotes, missing = claims_quoting_without_entry(app)
    line = (f"error index: {len(items)} messages, {sum(1 for i in items if i['causes'])} with a cause or fix, "
            f"{sum(1 for i in items if i['raised_at'])} with a raise site; {len(quotes)} claims quote a message, "
            f"{len({c for c, _, _ in missing})} of those that ran here without its entry")
    return line + "".join(f"\n  {c}: `{t}: {q[:100]}`" for c, t, q in missing)


def on_html_page_context(app, pagename, templatename, context, doctree):
    """The lookup's scripts on the search page and the error index page only."""
    if pagename == "search" or pagename == results.error_index_doc(app.env):
        app.add_js_file(DATA)
        app.add_js_file(SCRIPT, loading_method="defer")  # after searchtools.js, before the search starts


def on_doctree_read(app, doctree):
    """A page holding a site-wide list is left out of the search index (Sphinx's `nosearch`)."""
    from verified.site.directives import site_table

    if any(node["kind"] in LIST_TABLES for node in doctree.findall(site_table)):
        app.env.metadata[app.env.docname]["nosearch"] = True


def setup(app):
    app.connect("html-page-context", on_html_page_context)
    app.connect("doctree-read", on_doctree_read, priority=900)  # after Sphinx's own metadata collector
