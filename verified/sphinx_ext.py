"""Sphinx extension: claims, source references, and the verification of both.

- ``claim`` directive: a statement with an ID, rendered with its status per device,
  its source references and its probes' source.
- ``src`` role and ``source-map`` directive: pinned links into the PyTorch source.
- ``claim-index`` directive: a table of every claim on the site.
- ``error-index`` directive and ``error-ref`` role: the error and warning messages the
  probes checked, as this build's torch produced them, each linked to its claims.
- ``official-note`` and ``note-statement`` directives, ``official-notes-summary`` table:
  PyTorch's own notes checked statement by statement (verified.notes).
- Every page gets a line saying what verified it. The build writes
  ``verification.json`` and fails, naming file and line, on any problem.

The probes run once per build, in their own process, through ``verified.runner``.
"""
import hashlib
import json
import os
import pickle
import sys
import threading
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.domains import Domain, ObjType
from sphinx.errors import ExtensionError
from sphinx.util import logging
from sphinx.util.fileutil import copy_asset_file
from sphinx.util.docutils import SphinxDirective, SphinxRole

from verified import claims as claimlib
from verified import changes
from verified import history as historylib
from verified import line_check, matrix, messages, notes as noteslib, probe_cache, render, render_changes, \
    render_messages, render_notes, runner, sources

logger = logging.getLogger(__name__)
SCHEMA_DIR = Path(__file__).parent / "schemas"
SCHEMAS = ("verification.schema.json", "results.schema.json")  # JSON Schemas of verification.json and results


# ---------------------------------------------------------------- per-build state

ENV_ATTRS = ("verified_claims", "verified_sources", "verified_problems", "verified_claim_refs",
             "verified_page_inputs", "verified_error_refs", "verified_error_index",
             "verified_notes", "verified_note_statements")  # per-docname, in the env


def on_config_inited(app, config):
    """Start the probe run. It goes on in a thread while sphinx-gallery runs its scripts
    (builder-inited) and Sphinx reads the pages: pages take nothing from the probes until
    they are written, where their claims get their outcomes (on_doctree_resolved)."""
    root = Path(app.confdir)
    app.verified_checkout = sources.environment_checkout()
    # What reading a page depends on besides its source: the tooling that turns it into
    # nodes and the torch whose files its source references resolve against.
    app.verified_read_key = f"{probe_cache.package_digest()}-{sources.installed_torch_commit()}-" \
                            f"{app.verified_checkout}"
    outcome = {}

    def run():
        try:
            outcome["run"] = runner.cached_probe_results(
                config.verified_python, [root / d for d in config.verified_probe_dirs], root,
                root / config.verified_cache_dir, echo=logger.info, out=root / config.verified_results_file)
        except BaseException as exc:  # noqa: BLE001 - raised again in the main thread
            outcome["error"] = exc

    app.verified_probe_run = (threading.Thread(target=run, name="verified-probes", daemon=True), outcome)
    app.verified_probe_run[0].start()


def probe_results(app):
    """Wait for the probe run and set up everything that depends on it (once)."""
    if hasattr(app, "verified_results"):
        return
    thread, outcome = app.verified_probe_run
    thread.join()
    if "error" in outcome:
        error = outcome["error"]
        raise ExtensionError(str(error)) from error if isinstance(error, runner.ProbeRunError) else error
    run, root, config = outcome["run"], Path(app.confdir), app.config
    app.verified_results = results = run.results
    app.verified_file_keys = run.file_keys
    app.verified_by_claim = claimlib.probes_by_claim(results["probes"])
    recorded_dir = root / config.verified_results_dir
    recorded_files = sorted(recorded_dir.glob("*.json")) if recorded_dir.is_dir() else []
    try:
        app.verified_recorded = matrix.load_recorded(recorded_dir) if recorded_files else []
    except ValueError as exc:
        raise ExtensionError(str(exc)) from exc
    app.verified_live = matrix.columns_of(results, "this build")
    app.verified_inputs = f"{run.key}-{_digest(recorded_files)}"  # what the written pages show of the probes


def on_config_inited_last(app, config):
    """Keep the configuration as conf.py and config-inited made it, for the pickled environment.

    sphinx-gallery, sphinx-copybutton and the pydata theme change five config values later
    (at builder-inited: the gallery's filled-in conf, their static and template paths, the
    theme's options). The environment pickles app.config as it is after the build, so the
    next build compared those with fresh values and printed "The configuration has changed"
    every time. Sphinx only compares the pickled values, so pickle what conf.py set: this
    copy goes through Config's own pickling, exactly what the environment would store.
    """
    app.verified_pristine_config = pickle.loads(pickle.dumps(config, pickle.HIGHEST_PROTOCOL))


def on_env_updated(app, env):
    env.config = app.verified_pristine_config  # read by the next build's comparison only (see above)


def resolver(app):
    """The source resolver, made on first use: a build that re-reads no page never needs it."""
    if not hasattr(app, "verified_resolver"):
        try:
            cache_dir = Path(app.confdir) / app.config.verified_cache_dir
            app.verified_resolver = sources.resolver_for_installed_torch(cache_dir, app.verified_checkout)
        except ImportError as exc:
            raise ExtensionError(f"torch is not importable by {sys.executable}, which builds the site "
                                 f"({exc}): {runner.INSTALL_HINT}") from exc
        except RuntimeError as exc:
            raise ExtensionError(str(exc)) from exc
    return app.verified_resolver


def page_inputs(app, claim_ids):
    """A digest of what a written page takes from the probes: the torch build and devices,
    and per claim its outcomes, its history line, the messages it shows and the probe files
    it runs."""
    run = app.verified_results["run"]
    parts = [run["torch"], run["devices"]]
    for claim_id in claim_ids:
        entries = app.verified_by_claim.get(claim_id, [])
        parts.append([claim_id, claimlib.outcomes(entries), history_line(app, claim_id),
                      [(i["type"], i["message"]) for i in error_items_by_claim(app).get(claim_id, [])],
                      sorted({(e["file"], e["function"], e["line"], app.verified_file_keys.get(e["file"]))
                              for e in entries})])
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _claim_ids(env, docname):
    return [claim.id for claim in env.verified_claims.get(docname, [])]


def on_env_get_outdated(app, env, added, changed, removed):
    """Every page is read again when the tooling, the torch or PYTORCH_SRC changed."""
    for attr in ENV_ATTRS:
        if not hasattr(env, attr):
            setattr(env, attr, {})
    if not hasattr(env, "verified_index_docs"):
        env.verified_index_docs = set()
    if getattr(env, "verified_read_key", None) != app.verified_read_key:
        return sorted(env.found_docs - added - changed - removed)
    return []


def on_env_before_read_docs(app, env, docnames):
    app.verified_reread = bool(docnames)


def on_env_get_updated(app, env):
    """Pages to re-write without re-reading, once the probes are in: those whose claims'
    outcomes or probes changed, and the site-wide tables and every {claim-ref} (they show
    other pages' claims) whenever any page was read again or anything from the probes changed."""
    probe_results(app)
    env.verified_read_key = app.verified_read_key
    inputs_changed = getattr(env, "verified_inputs", None) != app.verified_inputs
    env.verified_inputs = app.verified_inputs
    rewrite = set()
    for docname in sorted(env.found_docs):
        digest = page_inputs(app, _claim_ids(env, docname))
        if env.verified_page_inputs.get(docname) != digest:
            env.verified_page_inputs[docname] = digest
            rewrite.add(docname)
    if getattr(app, "verified_reread", False) or inputs_changed:
        rewrite |= env.verified_index_docs & env.found_docs
    store_search_entries(app, env)
    return sorted(rewrite)


def store_search_entries(app, env):
    """Put every page's message entries for the site search (render_messages.search_entries)
    into the environment before Sphinx pickles it.

    Sphinx 9 collects index entries for the search only from pages it writes, keeps them in
    the environment, and pickles the environment before writing; a page not written again
    would therefore lose the entries its placeholders add when written (they depend on the
    probes, so they cannot exist at read time). Stored here, they survive; a page written again
    replaces them with the same entries from its nodes.
    """
    stored = getattr(env, "_search_index_index_entries", None)
    if stored is None:  # another Sphinx: the entries then come from the written pages alone
        return
    entries = {}
    index_doc = error_index_doc(env)
    claims = all_claims(env)
    for item in error_items(app):
        forms = render_messages.search_forms(item)
        targets = [(index_doc, messages.anchor(item))] if index_doc else []
        targets += [(claims[c].docname, render.claim_anchor(c)) for c in item["claims"] if c in claims]
        for docname, target in targets:
            entries.setdefault(docname, set()).update((form, target, "main") for form in forms)
    for docname in env.found_docs:
        if docname in entries:
            stored[docname] = sorted(entries[docname])


def on_env_purge_doc(app, env, docname):
    for attr in ENV_ATTRS:
        getattr(env, attr, {}).pop(docname, None)
    getattr(env, "verified_index_docs", set()).discard(docname)


def on_env_merge_info(app, env, docnames, other):
    for attr in ENV_ATTRS:
        mine = getattr(env, attr)
        for docname in docnames:
            if docname in getattr(other, attr, {}):
                mine[docname] = getattr(other, attr)[docname]
    env.verified_index_docs = getattr(env, "verified_index_docs", set()) | getattr(other, "verified_index_docs", set())


def _record(env, attr, docname, item):
    getattr(env, attr).setdefault(docname, []).append(item)


def _page_file(env, docname):
    """The page's path relative to the project root (where conf.py is), as the user sees it."""
    return Path(env.doc2path(docname)).relative_to(env.app.confdir).as_posix()


def _problem(env, docname, line, message, kind):
    _record(env, "verified_problems", docname, claimlib.Problem(_page_file(env, docname), line, message, kind))


def _location(directive_or_role):
    env = directive_or_role.env
    return env.docname, directive_or_role.lineno


def _resolve(app, env, docname, line, text):
    """A resolved reference record for `text`, recording any problem against docname:line.

    A pinned line of a file this build ships is checked again by verified.line_check: it
    must define the symbol, in the form its kind says; a line that does not is a problem
    (the self-check, in every build)."""
    try:
        ref = sources.parse_reference(text)
    except sources.MalformedReference as exc:
        _problem(env, docname, line, str(exc), "broken-src")
        return None
    resolution = resolver(app).resolve(ref)
    status, reason = resolution.status, resolution.reason
    if status == sources.BROKEN:
        _problem(env, docname, line, f"broken source reference {str(ref)!r}: {reason}", "broken-src")
    elif resolution.line and resolution.text is not None:
        mismatch = line_check.problem(resolution.text, ref.symbol, resolution.kind, ref.path)
        if mismatch:
            status, reason = sources.BROKEN, f"line check: {mismatch}"
            _problem(env, docname, line, f"source reference {str(ref)!r} is pinned to line {resolution.line} "
                                         f"{resolution.text.strip()!r}, which fails the line check: {mismatch}", "line-check")
    record = {"path": ref.path, "symbol": ref.symbol, "line": resolution.line, "url": resolution.url,
              "status": status, "reason": reason, "kind": resolution.kind if status != sources.BROKEN else None,
              "docname": docname, "at": line}
    _record(env, "verified_sources", docname, record)
    return record


# ---------------------------------------------------------------- claims

class ClaimDirective(SphinxDirective):
    required_arguments = 1
    has_content = True
    option_spec = {"src": directives.unchanged, "flavour-dependent": directives.flag}

    def run(self):
        claim_id = self.arguments[0]
        docname, line = _location(self)
        env, app = self.env, self.env.app
        statement = "\n".join(self.content).strip()
        error = claimlib.check_claim_id(claim_id)
        if error:
            _problem(env, docname, line, error, "bad-id")
        if not statement:
            _problem(env, docname, line, f"claim {claim_id!r} has an empty statement", "empty-claim")
        refs = [_resolve(app, env, docname, line, text.strip())
                for text in (self.options.get("src") or "").split(";") if text.strip()]
        body = nodes.container()
        self.state.nested_parse(self.content, self.content_offset, body)
        claim = claimlib.Claim(claim_id, docname, _page_file(env, docname), line,
                               body.astext().strip(), [r for r in refs if r],
                               flavour_dependent="flavour-dependent" in self.options)
        _record(env, "verified_claims", docname, claim)
        placeholder = pending_claim(claim_id=claim_id, line=line)
        placeholder += body.children
        return [placeholder]


class pending_claim(nodes.General, nodes.Element):
    """A claim's statement, rendered with its outcomes, history and probes when the page is written."""


class page_status(nodes.General, nodes.Element):
    """Placeholder for the page's line saying what verified it, filled when the page is written."""


class SourceRole(SphinxRole):
    """{src}`path symbol` or {src}`title <path symbol>`."""

    def run(self):
        title, target = self.text, self.text
        if self.text.endswith(">") and "<" in self.text:
            title, target = self.text[:-1].split("<", 1)
            title, target = title.strip(), target.strip()
        docname, line = self.env.docname, self.lineno
        record = _resolve(self.env.app, self.env, docname, line, target)
        if record is None:
            return [nodes.literal(self.rawtext, self.text)], []
        return [render.source_link(record, title if title != target else None)], []


class SourceMapDirective(SphinxDirective):
    """Lines of `path | symbol | what it does` (symbol may be empty)."""

    has_content = True

    def run(self):
        docname, line = _location(self)
        rows = []
        for text, here in self._lines_with_numbers():
            if not text.strip():
                continue
            cells = [c.strip() for c in text.split("|")]
            if len(cells) != 3 or not cells[0] or not cells[2]:
                _problem(self.env, docname, here,
                         f"malformed source-map line {text.strip()!r}: expected 'path | symbol | what it does'", "source-map")
                continue
            record = _resolve(self.env.app, self.env, docname, here, f"{cells[0]} {cells[1]}".strip())
            if record is not None:
                rows.append((record, cells[2]))
        if not rows:
            _problem(self.env, docname, line, "source-map has no valid lines", "source-map")
            return []
        return [render.source_map_table(rows)]

    def _lines_with_numbers(self):
        """Content lines with their line in the page (MyST reports content offsets from 0)."""
        page = Path(self.env.doc2path(self.env.docname)).read_text().splitlines()
        cursor = self.lineno
        for text in self.content:
            found = next((i for i in range(cursor, len(page)) if page[i].strip() == text.strip()), None)
            if found is not None:
                cursor = found + 1
            yield text, (found + 1 if found is not None else self.lineno)


def _shows_other_pages(env):
    """Mark the page being read as one that shows other pages' claims or the probes' messages:
    it is written again whenever any page is read again or the probes' results change
    (on_env_get_updated)."""
    if not hasattr(env, "verified_index_docs"):
        env.verified_index_docs = set()
    env.verified_index_docs.add(env.docname)


class claim_ref(nodes.Inline, nodes.Element):
    """Placeholder for {claim-ref}`id`, resolved once every page is read."""


class ClaimRefRole(SphinxRole):
    """{claim-ref}`tensor.view.base-is-root`: a link to a claim elsewhere, with its status."""

    def run(self):
        _shows_other_pages(self.env)
        return [claim_ref(claim_id=self.text.strip(), line=self.lineno)], []


class error_ref(nodes.Inline, nodes.Element):
    """Placeholder for {error-ref}`part of a message`, resolved once the probes are in."""


class ErrorRefRole(SphinxRole):
    """{error-ref}`Trying to backward through the graph a second time`: the one checked message
    containing that text, as this build produced it, linked to its entry in the error index."""

    def run(self):
        _shows_other_pages(self.env)
        return [error_ref(text=self.text.strip(), line=self.lineno)], []


class claim_index(nodes.General, nodes.Element):
    """Placeholder replaced by the table of all claims once every page is read."""


class ClaimIndexDirective(SphinxDirective):
    """One of SITE_TABLES: a placeholder for a table computed over the whole site."""

    def run(self):
        _shows_other_pages(self.env)
        if self.name == "error-index":
            self.env.verified_error_index[self.env.docname] = True
        return [claim_index(kind=self.name)]


# ---------------------------------------------------------------- official notes

class OfficialNoteDirective(SphinxDirective):
    """The note a checked page is about: ``official-note <key>`` with :title:, :source:, :revision:."""

    required_arguments = 1
    option_spec = {"title": directives.unchanged, "source": directives.unchanged,
                   "revision": directives.unchanged}

    def run(self):
        env = self.env
        docname, line = _location(self)
        _shows_other_pages(env)
        note = noteslib.Note(self.arguments[0], self.options.get("title", "").strip(),
                             self.options.get("source", "").strip(), self.options.get("revision", "").strip(),
                             docname, _page_file(env, docname), line)
        for message in noteslib.note_problems(note, self.options):
            _problem(env, docname, line, message, "note")
        _record(env, "verified_notes", docname, note)
        return [pending_note_header(key=note.key)]


class NoteStatementDirective(SphinxDirective):
    """``note-statement <verdict>`` with :claims: and, for nuance and out-of-date, :detail:;
    the body paraphrases the note's statement."""

    required_arguments = 1
    has_content = True
    option_spec = {"claims": directives.unchanged, "detail": directives.unchanged}

    def run(self):
        env = self.env
        docname, line = _location(self)
        page_notes = env.verified_notes.get(docname, [])
        claim_ids = [c.strip() for c in (self.options.get("claims") or "").split(";") if c.strip()]
        detail_nodes, messages_ = self.parse_inline(self.options.get("detail", "").strip(), lineno=line) \
            if self.options.get("detail", "").strip() else ([], [])
        body = nodes.container(classes=["body"])
        self.state.nested_parse(self.content, self.content_offset, body)
        statement = noteslib.Statement(
            page_notes[-1].key if page_notes else None, self.arguments[0], claim_ids,
            "".join(n.astext() for n in detail_nodes).strip(), body.astext().strip(), docname,
            _page_file(env, docname), line, len(env.verified_note_statements.get(docname, [])) + 1)
        for message in noteslib.statement_problems(statement):
            _problem(env, docname, line, message, "note")
        _record(env, "verified_note_statements", docname, statement)
        _shows_other_pages(env)
        detail = nodes.container(classes=["detail"])
        detail.extend(detail_nodes)
        refs = nodes.container(classes=["claims"])
        refs.extend(claim_ref(claim_id=claim_id, line=line) for claim_id in claim_ids)
        return [pending_note_statement("", body, detail, refs, number=statement.number), *messages_]


class pending_note_header(nodes.General, nodes.Element):
    """A note's header (what was read, computed counts), filled when the page is written."""


class pending_note_statement(nodes.General, nodes.Element):
    """A statement: children body, detail, claim refs; rendered when the page is written."""


def record_note_sections(env, doctree):
    """Each statement's section: the title of the section it stands in."""
    statements = {s.number: s for s in env.verified_note_statements.get(env.docname, [])}
    for node in doctree.findall(pending_note_statement):
        parent = node.parent
        while parent is not None and not isinstance(parent, nodes.section):
            parent = parent.parent
        if parent is not None and node["number"] in statements:
            statements[node["number"]].section = parent[0].astext() if isinstance(parent[0], nodes.title) else ""


def all_notes(env):
    return sorted((n for doc, found in env.verified_notes.items() if doc in env.found_docs for n in found),
                  key=lambda n: n.title.lower())


def all_note_statements(app):
    """Every statement, its note's pages in title order, with its history over the recorded
    releases, made once per build."""
    if not hasattr(app, "verified_statement_list"):
        env = app.env
        order = {n.docname: i for i, n in enumerate(all_notes(env))}
        found = sorted((s for doc, items in env.verified_note_statements.items() if doc in env.found_docs
                        for s in items), key=lambda s: (order.get(s.docname, len(order)), s.docname, s.number))
        for s in found:
            s.history = noteslib.statement_history(s, {c: claim_history(app, c) for c in s.claims})
        app.verified_statement_list = found
    return app.verified_statement_list


def claim_outcomes(app):
    """{claim id: {device: outcome}} of every claim on the site, made once per build."""
    if not hasattr(app, "verified_claim_outcomes"):
        app.verified_claim_outcomes = {c: claimlib.outcomes(app.verified_by_claim.get(c, []))
                                       for c in all_claims(app.env)}
    return app.verified_claim_outcomes


def resolve_note_nodes(app, doctree, docname):
    outcomes_ = claim_outcomes(app)
    page_statements = {s.number: s for s in all_note_statements(app) if s.docname == docname}
    for node in list(doctree.findall(pending_note_header)):
        note = next(n for n in app.env.verified_notes.get(docname, []) if n.key == node["key"])
        node.replace_self(render_notes.note_header(note, list(page_statements.values()), outcomes_))
    for node in list(doctree.findall(pending_note_statement)):
        statement = page_statements[node["number"]]
        body, detail, refs = node.children
        node.replace_self(render_notes.statement_node(
            statement, noteslib.shown_verdict(statement, outcomes_), body.children, detail.children,
            list(refs.children), noteslib.history_line(statement.history)))


def note_problems(app):
    return noteslib.duplicate_notes(all_notes(app.env)) + noteslib.claim_problems(all_note_statements(app),
                                                                                  claim_outcomes(app))


# ---------------------------------------------------------------- page status line and index

def on_doctree_read(app, doctree):
    record_note_sections(app.env, doctree)
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is not None and section.children and isinstance(section[0], nodes.title):
        section.insert(1, page_status())
    else:
        doctree.insert(0, page_status())


def all_claims(env):
    return {c.id: c for doc in env.verified_claims.values() for c in doc}


def recorded_cpu(app):
    """The recorded CPU columns, oldest release first: the ground of every claim's history."""
    return matrix.one_per_release(app.verified_recorded, "cpu")


def claim_history(app, claim_id):
    """A claim's history over the recorded CPU releases (verified.history), made once per build."""
    if not hasattr(app, "verified_histories"):
        app.verified_histories = {}
    if claim_id not in app.verified_histories:
        app.verified_histories[claim_id] = historylib.claim_history(claim_id, recorded_cpu(app))
    return app.verified_histories[claim_id]


def history_line(app, claim_id):
    return historylib.history_line(claim_history(app, claim_id))


def release_steps(app, claims):
    """The what-changed steps (verified.changes) between recorded CPU releases, with the
    official-notes statements each one decides otherwise, made once per build."""
    if not hasattr(app, "verified_steps"):
        app.verified_steps = changes.steps(claims, recorded_cpu(app))
        statements = all_note_statements(app)
        for step in app.verified_steps:
            step["official_notes"] = noteslib.step_changes(statements, step["from_version"], step["to_version"])
    return app.verified_steps


def error_items(app):
    """The error-message index of this build (verified.messages.index), made once."""
    if not hasattr(app, "verified_error_items"):
        claim_pages = {claim_id: claim.docname for claim_id, claim in all_claims(app.env).items()}
        app.verified_error_items = messages.index(app.verified_results["probes"], claim_pages)
    return app.verified_error_items


def error_items_by_claim(app):
    """{claim id: the index items its probes checked}, made once."""
    if not hasattr(app, "verified_error_items_by_claim"):
        app.verified_error_items_by_claim = {}
        for item in error_items(app):
            for claim_id in item["claims"]:
                app.verified_error_items_by_claim.setdefault(claim_id, []).append(item)
    return app.verified_error_items_by_claim


def error_index_doc(env):
    return next(iter(sorted(d for d in env.verified_error_index if d in env.found_docs)), None)


def matching_error_items(app, text):
    """Index items whose message contains `text` (case and spacing ignored)."""
    wanted = " ".join(text.split()).lower()
    return [i for i in error_items(app) if wanted in " ".join(i["message"].split()).lower()]


def on_doctree_resolved(app, doctree, docname):
    page_claims = app.env.verified_claims.get(docname, [])
    index_doc = error_index_doc(app.env)
    for node in list(doctree.findall(page_status)):
        node.replace_self(render.page_status(app.verified_results["run"], page_claims, app.verified_by_claim,
                                             app.env.verified_sources.get(docname, [])))
    resolve_note_nodes(app, doctree, docname)
    for node in list(doctree.findall(pending_claim)):
        claim = next(c for c in page_claims if (c.id, c.line) == (node["claim_id"], node["line"]))
        entries = app.verified_by_claim.get(claim.id, [])
        history = history_line(app, claim.id)
        checked = error_items_by_claim(app).get(claim.id, [])
        notes = [render_messages.claim_messages(checked, index_doc, app.builder, docname,
                                                render.claim_anchor(claim.id))] if checked else []
        node.replace_self(render.claim_node(claim, claimlib.outcomes(entries), list(node.children), claim.sources,
                                            render.probe_sources(entries, Path(app.confdir)), history, notes))
    claims_here = all_claims(app.env)
    for node in list(doctree.findall(claim_ref)):
        claim = claims_here.get(node["claim_id"])
        if claim is None:
            node.replace_self(nodes.literal(text=node["claim_id"]))
            continue
        node.replace_self(render.claim_reference(claim, claimlib.outcomes(app.verified_by_claim.get(claim.id, [])),
                                                 app.builder, docname))
    for node in list(doctree.findall(error_ref)):
        found = matching_error_items(app, node["text"])
        node.replace_self(render_messages.error_reference(found[0], index_doc, app.builder, docname)
                          if len(found) == 1 else nodes.literal(text=node["text"]))
    claims = sorted(claims_here.values(), key=lambda c: c.id)
    for node in list(doctree.findall(claim_index)):
        node.replace_self(SITE_TABLES[node["kind"]](app, claims, docname))


def _source_records(app):
    return [r for doc in app.env.verified_sources.values() for r in doc]


# Directive name -> what replaces it once every page is read: f(app, all claims sorted, docname).
SITE_TABLES = {
    "claim-index": lambda app, claims, doc: render.claim_index_table(claims, app.verified_by_claim, app.builder, doc),
    "claim-summary": lambda app, claims, doc: render.summary(claims, app.verified_by_claim,
                                                             app.verified_results["run"], _source_records(app)),
    "source-index": lambda app, claims, doc: render.source_index_table(_source_records(app), app.builder, doc),
    "claim-matrix": lambda app, claims, doc: render.matrix_section(claims, app.verified_recorded + app.verified_live,
                                                                   app.builder, doc),
    "version-changes": lambda app, claims, doc: render_changes.changes_section(claims, release_steps(app, claims),
                                                                               app.builder, doc),
    "official-notes-summary": lambda app, claims, doc: render_notes.summary_section(
        all_notes(app.env), all_note_statements(app), claim_outcomes(app), app.builder, doc),
    "error-index": lambda app, claims, doc: render_messages.error_index_section(
        error_items(app), {c.id: c for c in claims},
        lambda claim_id: claimlib.outcomes(app.verified_by_claim.get(claim_id, [])), app.builder, doc),
}


# ---------------------------------------------------------------- objects.inv

class VerifiedDomain(Domain):
    """Lists every claim and official-notes statement in objects.inv, so that another Sphinx
    site can link to one through intersphinx (``:external+verified:verified:claim:`id```).

    The records themselves live in the env attributes above, which Sphinx purges and
    merges per page (on_env_purge_doc, on_env_merge_info); the domain only reads them.
    """

    name = "verified"
    label = "Verified"
    object_types = {"claim": ObjType("claim", "claim"), "statement": ObjType("note statement", "statement")}
    initial_data = {}

    def clear_doc(self, docname):
        pass  # nothing of its own: see on_env_purge_doc

    def merge_domaindata(self, docnames, otherdata):
        pass  # nothing of its own: see on_env_merge_info

    def resolve_xref(self, env, fromdocname, builder, typ, target, node, contnode):
        return None  # {claim-ref} resolves through its placeholder, with the claim's status

    def resolve_any_xref(self, env, fromdocname, builder, target, node, contnode):
        return []

    def get_objects(self):
        env = self.env
        for docname in sorted(getattr(env, "verified_claims", {})):
            for claim in env.verified_claims[docname]:
                yield claim.id, claim.id, "claim", docname, render.claim_anchor(claim.id), 1
        for docname in sorted(getattr(env, "verified_note_statements", {})):
            for statement in env.verified_note_statements[docname]:
                yield statement.anchor, f"{statement.note} {statement.number}", "statement", docname, \
                    statement.anchor, 1


# ---------------------------------------------------------------- verification

def verification_report(app):
    env = app.env
    run = app.verified_results["run"]
    claims = all_claims(env)
    report_claims = []
    for claim in sorted(claims.values(), key=lambda c: c.id):
        entries = app.verified_by_claim.get(claim.id, [])
        history = claim_history(app, claim.id)
        report_claims.append({
            "id": claim.id,
            "page": claim.docname,
            "statement": claim.statement,
            "probes": sorted({f"{e['file']}::{e['function']}" for e in entries}),
            "outcome": claimlib.outcomes(entries),
            "flavour_dependent": claim.flavour_dependent,
            "history": {step["version"]: {k: step[k] for k in ("verdict", "outcome", "message", "flavour")}
                        for step in history},
            "since": historylib.since(history),
        })
    merged = {}
    for docname, records in sorted(env.verified_sources.items()):
        for r in records:
            key = (r["path"], r["symbol"])
            entry = merged.setdefault(key, {k: r.get(k) for k in ("path", "symbol", "line", "url", "status", "kind",
                                                                   "reason")} | {"pages": []})
            if docname not in entry["pages"]:
                entry["pages"].append(docname)
    columns = app.verified_recorded + app.verified_live
    ids = [c["id"] for c in report_claims]
    recorded = {
        "columns": [{k: getattr(c, k) for k in ("label", "torch", "flavour", "device", "source", "date",
                                                "repository_commit", "suite")} for c in columns],
        "outcomes": matrix.cells(ids, columns),
        "changes": release_steps(app, sorted(claims.values(), key=lambda c: c.id)),
    }
    return {
        "format": 1,
        "matrix": recorded,
        "torch": run["torch"],
        "devices": {"ran": run["devices"], "names": run["device_names"]},
        "run": {k: run.get(k) for k in ("date", "python", "platform", "repository_commit", "cache_key")},
        "claims": report_claims,
        "sources": sorted(merged.values(), key=lambda s: (s["path"], s["symbol"] or "")),
        "errors": [{k: item[k] for k in ("message", "type", "kind", "normalised", "variants", "claims", "pages",
                                         "probes")} for item in error_items(app)],
        "official_notes": noteslib.report(all_notes(env), all_note_statements(app), claim_outcomes(app)),
    }


def on_doctree_read_refs(app, doctree):
    """Remember every {claim-ref} of the page, so unknown IDs fail the build even on warm builds."""
    env = app.env
    if not hasattr(env, "verified_claim_refs"):
        env.verified_claim_refs = {}
    env.verified_claim_refs[env.docname] = [(n["claim_id"], n["line"]) for n in doctree.findall(claim_ref)]
    env.verified_error_refs[env.docname] = [(n["text"], n["line"]) for n in doctree.findall(error_ref)]


def unknown_claim_refs(app):
    known = all_claims(app.env)
    return [claimlib.Problem(_page_file(app.env, docname), line, f"reference to unknown claim {claim_id!r}", "unknown-claim")
            for docname, refs in sorted(getattr(app.env, "verified_claim_refs", {}).items())
            for claim_id, line in refs if claim_id not in known and docname in app.env.found_docs]


def unresolved_error_refs(app):
    """{error-ref}s that name no checked message, or more than one."""
    found = []
    for docname, refs in sorted(app.env.verified_error_refs.items()):
        for text, line in refs:
            if docname not in app.env.found_docs:
                continue
            matches = matching_error_items(app, text)
            if len(matches) != 1:
                what = "no message checked by a probe" if not matches else f"{len(matches)} checked messages"
                found.append(claimlib.Problem(_page_file(app.env, docname), line,
                                              f"error reference {text!r} matches {what}; it must match exactly one", "error-ref"))
    return found


def on_build_finished(app, exception):
    if hasattr(app, "verified_probe_run"):
        app.verified_probe_run[0].join()  # even when the build failed: no probe process outlives it
    if exception is not None or not hasattr(app, "verified_results"):
        return
    if app.builder.format == "html":
        # force: the stylesheet is ours, so a newer one replaces the copy of an earlier build
        copy_asset_file(Path(__file__).parent / "static" / "verified.css", Path(app.outdir, "_static"), force=True)
    for schema in SCHEMAS:  # served beside verification.json, which follows the first
        copy_asset_file(SCHEMA_DIR / schema, Path(app.outdir), force=True)
    report = verification_report(app)
    Path(app.outdir, "verification.json").write_text(json.dumps(report, indent=1))
    found = [p for doc in app.env.verified_problems.values() for p in doc]
    found += claimlib.duplicates([c for doc in app.env.verified_claims.values() for c in doc])
    found += unknown_claim_refs(app)
    found += unresolved_error_refs(app)
    found += note_problems(app)
    found += claimlib.problems(all_claims(app.env), app.verified_results)
    counts = render.counts(report)
    logger.info(f"verification: {counts}")
    if found:
        for problem in found:
            report_problem(problem)
        logger.error(f"verification failed: {len(found)} problem(s), listed above")
        app.statuscode = 1  # without -W too: a false or unchecked claim always fails the build


def report_problem(problem):
    """A typed Sphinx warning at the problem's file and line: ``docs/x.md:12: WARNING: … [verified.no-probe]``.
    With -W the build fails on it as on any warning, and --keep-going collects them all."""
    if problem.line:
        logger.warning(problem.message, type="verified", subtype=problem.kind, location=f"{problem.file}:{problem.line}")
    else:  # a location without a line would be taken for a docname: say the file in the message
        logger.warning(f"{problem.file}: {problem.message}", type="verified", subtype=problem.kind)


def setup(app):
    app.add_config_value("verified_probe_dirs", ["probes"], "env")
    app.add_config_value("verified_cache_dir", "_build/probe-cache", "env")
    app.add_config_value("verified_results_dir", "results", "env")
    app.add_config_value("verified_python", os.environ.get("VERIFIED_PYTHON") or _default_python(), "env")
    app.add_config_value("verified_results_file", "_build/probes/results.json", "")
    app.add_domain(VerifiedDomain)
    app.add_directive("claim", ClaimDirective)
    app.add_directive("source-map", SourceMapDirective)
    for name in SITE_TABLES:
        app.add_directive(name, ClaimIndexDirective)
    app.add_directive("official-note", OfficialNoteDirective)
    app.add_directive("note-statement", NoteStatementDirective)
    app.add_role("src", SourceRole())
    app.add_role("claim-ref", ClaimRefRole())
    app.add_role("error-ref", ErrorRefRole())
    app.add_node(claim_index)
    app.add_node(pending_claim)
    app.add_node(page_status)
    app.add_node(claim_ref)
    app.add_node(error_ref)
    app.add_node(pending_note_header)
    app.add_node(pending_note_statement)
    app.connect("config-inited", on_config_inited)
    app.connect("config-inited", on_config_inited_last, priority=900)
    app.connect("env-updated", on_env_updated)
    app.connect("env-get-outdated", on_env_get_outdated)
    app.connect("env-before-read-docs", on_env_before_read_docs)
    app.connect("env-get-updated", on_env_get_updated)
    app.connect("env-purge-doc", on_env_purge_doc)
    app.connect("env-merge-info", on_env_merge_info)
    app.connect("doctree-read", on_doctree_read)
    app.connect("doctree-read", on_doctree_read_refs)
    app.connect("doctree-resolved", on_doctree_resolved)
    app.connect("build-finished", on_build_finished)
    app.add_css_file("verified.css")
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}


def _digest(paths):
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()[:12]


def _default_python():
    import sys
    return sys.executable
