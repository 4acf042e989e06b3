"""Reading the pages: the directives and roles, and the placeholders they leave.

Reading records what a page holds (verified.site.records) and leaves placeholder nodes; nothing
read depends on the probes, so new results rewrite pages without reading them again
(verified.site.page_writer fills the placeholders when a page is written).
"""
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective, SphinxRole

from verified import claims as claimlib
from verified.site import build_results, records, render
from verified.site import notes as noteslib
from verified.sources import line_check, references
from verified.sources import resolver as sources

# ---------------------------------------------------------------- placeholders

class pending_claim(nodes.General, nodes.Element):
    """A claim's statement, rendered with its outcomes, history and probes when the page is written."""


class page_status(nodes.General, nodes.Element):
    """The page's line saying what verified it, filled when the page is written."""


class error_ref(nodes.Inline, nodes.Element):
    """{error-ref}`part of a message`, resolved once the probes are in."""


class site_table(nodes.General, nodes.Element):
    """A table computed over the whole site (page_writer.SITE_TABLES), made when the page is written."""


class pending_note_header(nodes.General, nodes.Element):
    """A note's header (what was read, computed counts), filled when the page is written."""


class pending_note_statement(nodes.General, nodes.Element):
    """A statement: children body, detail, claim refs; rendered when the page is written."""


NODES = (pending_claim, page_status, error_ref, site_table, pending_note_header, pending_note_statement)


def claim_xref(claim_id, line):
    """A cross-reference to a claim, resolved by the verified domain (domain.resolve_xref)."""
    node = addnodes.pending_xref("", nodes.literal(text=claim_id), refdomain=records.DOMAIN, reftype="claim",
                                 reftarget=claim_id, refexplicit=False, refwarn=False)
    node.line = line
    return node


# ---------------------------------------------------------------- recording

def record_problem(env, docname, line, message, kind):
    records.add(env, "problems", docname, claimlib.Problem(records.page_file(env, docname), line, message, kind))


def resolve_reference(app, env, docname, line, text):
    """A resolved reference record for `text`, recording any problem against docname:line.

    A pinned line of a file this build ships is checked again by verified.sources.line_check: it
    must define the symbol, in the form its kind says; a line that does not is a problem
    (the self-check, in every build)."""
    try:
        ref = references.parse_reference(text)
    except references.MalformedReference as exc:
        record_problem(env, docname, line, str(exc), "broken-src")
        return None
    resolution = build_results.resolver(app).resolve(ref)
    status, reason = resolution.status, resolution.reason
    if status == sources.BROKEN:
        record_problem(env, docname, line, f"broken source reference {str(ref)!r}: {reason}", "broken-src")
    elif resolution.line and resolution.text is not None:
        mismatch = line_check.problem(resolution.text, ref.symbol, resolution.kind, ref.path)
        if mismatch:
            status, reason = sources.BROKEN, f"line check: {mismatch}"
            record_problem(env, docname, line, f"source reference {str(ref)!r} is pinned to line {resolution.line} "
                                        f"{resolution.text.strip()!r}, which fails the line check: {mismatch}",
                    "line-check")
    record = {"path": ref.path, "symbol": ref.symbol, "line": resolution.line, "url": resolution.url,
              "status": status, "reason": reason, "kind": resolution.kind if status != sources.BROKEN else None,
              "docname": docname, "at": line}
    records.add(env, "sources", docname, record)
    return record


# ---------------------------------------------------------------- claims and sources

class ClaimDirective(SphinxDirective):
    required_arguments = 1
    has_content = True
    # cause / fix: for a claim that quotes an error or warning, one line each for the error index
    option_spec = {"src": directives.unchanged, "flavour-dependent": directives.flag,
                   "cause": directives.unchanged, "fix": directives.unchanged}

    def run(self):
        claim_id, env, line = self.arguments[0], self.env, self.lineno
        docname = env.docname
        error = claimlib.check_claim_id(claim_id)
        if error:
            record_problem(env, docname, line, error, "bad-id")
        if not "\n".join(self.content).strip():
            record_problem(env, docname, line, f"claim {claim_id!r} has an empty statement", "empty-claim")
        refs = [resolve_reference(env.app, env, docname, line, text)
                for text in references.option_references(self.options.get("src"))]
        body = nodes.container()
        self.state.nested_parse(self.content, self.content_offset, body)
        claim = claimlib.Claim(claim_id, docname, records.page_file(env, docname), line,
                               body.astext().strip(), [r for r in refs if r],
                               flavour_dependent="flavour-dependent" in self.options,
                               cause=" ".join((self.options.get("cause") or "").split()),
                               fix=" ".join((self.options.get("fix") or "").split()))
        records.add(env, "claims", docname, claim)
        placeholder = pending_claim(claim_id=claim_id, line=line)
        placeholder += body.children
        return [placeholder]


class SourceRole(SphinxRole):
    """{src}`path symbol` or {src}`title <path symbol>`."""

    def run(self):
        title, target = references.role_parts(self.text)
        record = resolve_reference(self.env.app, self.env, self.env.docname, self.lineno, target)
        if record is None:
            return [nodes.literal(self.rawtext, self.text)], []
        return [render.source_link(record, title)], []


class SourceMapDirective(SphinxDirective):
    """Lines of `path | symbol | what it does` (symbol may be empty). "What it does" is inline
    markup: it cites the claim that checks it with {claim-ref}, or says no more than the
    pinned line shows."""

    has_content = True

    def run(self):
        env, docname = self.env, self.env.docname
        rows, messages_ = [], []
        for text, here in self._lines_with_numbers():
            if not text.strip():
                continue
            row = references.source_map_row(text)
            if row is None:
                record_problem(env, docname, here, f"malformed source-map line {text.strip()!r}: "
                                            f"expected 'path | symbol | what it does'", "source-map")
                continue
            record = resolve_reference(env.app, env, docname, here, row[0])
            if record is not None:
                what, problems = self.parse_inline(row[1], lineno=here)  # the description is inline MyST
                rows.append((record, what))
                messages_ += problems
        if not rows:
            record_problem(env, docname, self.lineno, "source-map has no valid lines", "source-map")
            return messages_
        return [render.source_map_table(rows), *messages_]

    def _lines_with_numbers(self):
        """Content lines with their line in the page (MyST reports content offsets from 0)."""
        page = Path(self.env.doc2path(self.env.docname)).read_text().splitlines()
        cursor = self.lineno
        for text in self.content:
            found = next((i for i in range(cursor, len(page)) if page[i].strip() == text.strip()), None)
            if found is not None:
                cursor = found + 1
            yield text, (found + 1 if found is not None else self.lineno)


# ---------------------------------------------------------------- references and site tables

class ClaimRefRole(SphinxRole):
    """{claim-ref}`tensor.view.base-is-root`: a cross-reference to a claim, shown with its status."""

    def run(self):
        records.mark_shows_other_pages(self.env)
        return [claim_xref(self.text.strip(), self.lineno)], []


class ErrorRefRole(SphinxRole):
    """{error-ref}`Trying to backward through the graph a second time`: the one checked message
    containing that text, as this build produced it, linked to its entry in the error index."""

    def run(self):
        records.mark_shows_other_pages(self.env)
        return [error_ref(text=self.text.strip(), line=self.lineno)], []


class SiteTableDirective(SphinxDirective):
    """One of page_writer.SITE_TABLES: a placeholder for a table computed over the whole site."""

    def run(self):
        records.mark_shows_other_pages(self.env)
        if self.name == "error-index":
            records.of(self.env, "error_index")[self.env.docname] = True
        return [site_table(kind=self.name)]


# ---------------------------------------------------------------- official notes

class OfficialNoteDirective(SphinxDirective):
    """The note a checked page is about: ``official-note <key>`` with :title:, :source:, :revision:."""

    required_arguments = 1
    option_spec = {"title": directives.unchanged, "source": directives.unchanged,
                   "revision": directives.unchanged}

    def run(self):
        env, docname, line = self.env, self.env.docname, self.lineno
        records.mark_shows_other_pages(env)
        note = noteslib.Note(self.arguments[0], self.options.get("title", "").strip(),
                             self.options.get("source", "").strip(), self.options.get("revision", "").strip(),
                             docname, records.page_file(env, docname), line)
        for message in noteslib.note_problems(note, self.options):
            record_problem(env, docname, line, message, "note")
        records.add(env, "notes", docname, note)
        return [pending_note_header(key=note.key)]


class NoteStatementDirective(SphinxDirective):
    """``note-statement <verdict>`` with :claims: and, for nuance and out-of-date, :detail:;
    the body paraphrases the note's statement."""

    required_arguments = 1
    has_content = True
    option_spec = {"claims": directives.unchanged, "detail": directives.unchanged}

    def run(self):
        env, docname, line = self.env, self.env.docname, self.lineno
        page_notes = records.of(env, "notes").get(docname, [])
        claim_ids = [c.strip() for c in (self.options.get("claims") or "").split(";") if c.strip()]
        detail_text = self.options.get("detail", "").strip()
        detail_nodes, messages_ = self.parse_inline(detail_text, lineno=line) if detail_text else ([], [])
        body = nodes.container(classes=["body"])
        self.state.nested_parse(self.content, self.content_offset, body)
        statement = noteslib.Statement(
            page_notes[-1].key if page_notes else None, self.arguments[0], claim_ids,
            "".join(n.astext() for n in detail_nodes).strip(), body.astext().strip(), docname,
            records.page_file(env, docname), line, len(records.of(env, "statements").get(docname, [])) + 1)
        for message in noteslib.statement_problems(statement):
            record_problem(env, docname, line, message, "note")
        records.add(env, "statements", docname, statement)
        records.mark_shows_other_pages(env)
        detail = nodes.container(classes=["detail"])
        detail.extend(detail_nodes)
        refs = nodes.container(classes=["claims"])
        refs.extend(claim_xref(claim_id, line) for claim_id in claim_ids)
        return [pending_note_statement("", body, detail, refs, number=statement.number), *messages_]


# ---------------------------------------------------------------- after a page is read

def on_doctree_read(app, doctree):
    """Give each note statement its section, remember the page's references (checked on every
    build, warm ones too), and leave the page's status line under its title."""
    env = app.env
    statements = {s.number: s for s in records.of(env, "statements").get(env.docname, [])}
    for node in doctree.findall(pending_note_statement):
        parent = node.parent
        while parent is not None and not isinstance(parent, nodes.section):
            parent = parent.parent
        if parent is not None and node["number"] in statements:
            statements[node["number"]].section = parent[0].astext() if isinstance(parent[0], nodes.title) else ""
    records.of(env, "claim_refs")[env.docname] = [
        (n["reftarget"], n.line) for n in doctree.findall(addnodes.pending_xref)
        if n.get("refdomain") == records.DOMAIN and n.get("reftype") == "claim"]
    records.of(env, "error_refs")[env.docname] = [(n["text"], n["line"]) for n in doctree.findall(error_ref)]
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is not None and section.children and isinstance(section[0], nodes.title):
        section.insert(1, page_status())
    else:
        doctree.insert(0, page_status())
