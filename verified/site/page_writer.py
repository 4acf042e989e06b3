"""Writing a page: each placeholder the reading left becomes its rendered nodes, with this
build's outcomes, histories and messages (doctree-resolved). Claim references were resolved
just before, by the verified domain."""
from pathlib import Path

from docutils import nodes

from verified.releases import history as historylib
from verified.site import build_results as results
from verified.site import notes as noteslib
from verified.site import records, render, render_changes, render_measured, render_messages, render_notes
from verified.site.directives import (
    error_ref,
    page_status,
    pending_claim,
    pending_note_header,
    pending_note_statement,
    site_table,
)

# Directive name -> what replaces it when its page is written: f(app, all claims sorted, docname).
SITE_TABLES = {
    "claim-index": lambda app, claims, doc: render.claim_index_table(claims, app.verified_by_claim, app.builder, doc),
    "claim-summary": lambda app, claims, doc: render.summary(claims, app.verified_by_claim, app.verified_results["run"],
                                                             results.source_records(app.env)),
    "source-index": lambda app, claims, doc: render.source_index_table(results.distinct_sources(app.env), app.builder,
                                                                       doc),
    "claim-matrix": lambda app, claims, doc: render.matrix_section(claims, app.verified_recorded + app.verified_live,
                                                                   app.builder, doc),
    "version-changes": lambda app, claims, doc: render_changes.changes_section(
        claims, results.release_steps(app, claims), app.builder, doc),
    "official-notes-summary": lambda app, claims, doc: render_notes.summary_section(
        results.all_notes(app.env), results.all_note_statements(app), results.claim_outcomes(app), app.builder, doc),
    "error-index": lambda app, claims, doc: render_messages.error_index_section(
        results.error_items(app), {c.id: c for c in claims}, lambda claim_id: results.outcomes_of(app, claim_id),
        app.builder, doc),
}


def on_doctree_resolved(app, doctree, docname):
    env = app.env
    page_claims = records.of(env, "claims").get(docname, [])
    for node in list(doctree.findall(page_status)):
        node.replace_self(render.page_status(app.verified_results["run"], page_claims, app.verified_by_claim,
                                             records.of(env, "sources").get(docname, []),
                                             {c.id: results.claim_history(app, c.id) for c in page_claims}))
    write_note_nodes(app, doctree, docname)
    index_doc = results.error_index_doc(env)
    for node in list(doctree.findall(pending_claim)):
        claim = next(c for c in page_claims if (c.id, c.line) == (node["claim_id"], node["line"]))
        node.replace_self(claim_node(app, claim, list(node.children), index_doc, docname))
    for node in list(doctree.findall(error_ref)):
        found = results.matching_error_items(app, node["text"])
        node.replace_self(render_messages.error_reference(found[0], index_doc, app.builder, docname)
                          if len(found) == 1 else nodes.literal(text=node["text"]))
    render.tidy_citations(doctree)
    tables = list(doctree.findall(site_table))
    if tables:
        claims = sorted(results.claims_by_id(app).values(), key=lambda c: c.id)
        for node in tables:
            node.replace_self(SITE_TABLES[node["kind"]](app, claims, docname))


def claim_node(app, claim, body, index_doc, docname):
    """A claim as shown: statement, outcome per device, history, checked messages, measured
    figures, sources, probes."""
    entries = app.verified_by_claim.get(claim.id, [])
    checked = results.error_items_by_claim(app).get(claim.id, [])
    notes = [render_messages.claim_messages(checked, index_doc, app.builder, docname,
                                            render.claim_anchor(claim.id))] if checked else []
    figures = render_measured.measured_note(entries, app.verified_results["run"])
    if figures is not None:
        notes.append(figures)
    return render.claim_node(claim, results.outcomes_of(app, claim.id), body, claim.sources,
                             render.probe_sources(entries, Path(app.confdir)), results.history_line(app, claim.id),
                             notes, historylib.short_line(results.claim_history(app, claim.id)))


def write_note_nodes(app, doctree, docname):
    outcomes = results.claim_outcomes(app)
    page_statements = {s.number: s for s in results.all_note_statements(app) if s.docname == docname}
    for node in list(doctree.findall(pending_note_header)):
        note = next(n for n in records.of(app.env, "notes").get(docname, []) if n.key == node["key"])
        node.replace_self(render_notes.note_header(note, list(page_statements.values()), outcomes))
    for node in list(doctree.findall(pending_note_statement)):
        statement = page_statements[node["number"]]
        body, detail, refs = node.children
        node.replace_self(render_notes.statement_node(
            statement, noteslib.shown_verdict(statement, outcomes), body.children, detail.children,
            list(refs.children), noteslib.history_line(statement.history)))
