"""The probes' results in a build, and what is computed from them once per build.

The probe run starts at config-inited, in a thread, while sphinx-gallery runs its scripts and
Sphinx reads the pages; pages take nothing from the probes until they are written. The first
caller of ``probe_results`` waits for it. Everything else here is computed on first use and
kept on the Sphinx application for the rest of the build.
"""
import atexit
import hashlib
import json
import sys
import threading
from pathlib import Path

from sphinx.errors import ExtensionError

from verified import claims as claimlib
from verified.outcomes import CPU
from verified.probing import messages, runner
from verified.releases import changes, matrix
from verified.releases import history as historylib
from verified.site import notes as noteslib
from verified.site import records
from verified.sources import raise_sites
from verified.sources import resolver as sources


def start_probe_run(app, config, echo):
    root = Path(app.confdir)
    outcome = {}

    def run():
        try:
            outcome["run"] = runner.cached_probe_results(
                config.verified_python, [root / d for d in config.verified_probe_dirs], root,
                root / config.verified_cache_dir, echo=echo, out=root / config.verified_results_file,
                recorded_dir=config.verified_results_dir)
        except BaseException as exc:  # noqa: BLE001 - raised again in the main thread
            outcome["exception"] = exc

    app.verified_probe_run = (threading.Thread(target=run, name="verified-probes", daemon=True), outcome)
    atexit.register(runner.stop_running)  # a build interrupted (Ctrl-C) while probes run leaves none behind
    app.verified_probe_run[0].start()


def _join(thread):
    """Join in short waits: a Ctrl-C that the kernel hands to another thread of the build (the
    probe thread, a pipe reader) reaches the main thread only when it next wakes up, so an
    untimed join would leave the build deaf to it until the probes end."""
    while thread.is_alive():
        thread.join(timeout=0.2)


def wait_for_probe_run(app, failed=False):
    """Join the probe thread, if it was started: no probe process outlives the build. A build
    that failed stops its probes first instead of waiting for the slowest of them."""
    if hasattr(app, "verified_probe_run"):
        if failed:
            runner.stop_running()
        _join(app.verified_probe_run[0])


def probe_results(app):
    """Wait for the probe run and set up everything that depends on it (once)."""
    if hasattr(app, "verified_results"):
        return
    thread, outcome = app.verified_probe_run
    _join(thread)
    if "exception" in outcome:
        error = outcome["exception"]
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


def _once(app, name, compute):
    if not hasattr(app, name):
        setattr(app, name, compute())
    return getattr(app, name)


# ---------------------------------------------------------------- claims

def all_claims(env):
    return {c.id: c for c in records.every(env, "claims")}


def claims_by_id(app):
    """all_claims once the pages are read, for writing them."""
    return _once(app, "verified_claims_by_id", lambda: all_claims(app.env))


def claim_outcomes(app):
    """{claim id: {device: outcome}} of every claim on the site, computed once per build."""
    return _once(app, "verified_claim_outcomes", lambda: {
        c: claimlib.outcomes(app.verified_by_claim.get(c, [])) for c in claims_by_id(app)})


def outcomes_of(app, claim_id):
    """One claim's {device: outcome}; an ID that is not on the site has no probe entries."""
    found = claim_outcomes(app).get(claim_id)
    return found if found is not None else claimlib.outcomes([])


def recorded_cpu(app):
    """The recorded CPU columns, oldest release first: the ground of every claim's history."""
    return matrix.one_per_release(app.verified_recorded, CPU)


def claim_history(app, claim_id):
    """A claim's history over the recorded CPU releases (verified.releases.history)."""
    histories = _once(app, "verified_histories", dict)
    if claim_id not in histories:
        histories[claim_id] = historylib.claim_history(claim_id, recorded_cpu(app))
    return histories[claim_id]


def history_line(app, claim_id):
    return historylib.history_line(claim_history(app, claim_id))


def release_steps(app, claims):
    """The what-changed steps (verified.releases.changes) between recorded CPU releases, with the
    official-notes statements each one decides otherwise."""
    def compute():
        steps = changes.steps(claims, recorded_cpu(app))
        statements = all_note_statements(app)
        for step in steps:
            step["official_notes"] = noteslib.step_changes(statements, step["from_version"], step["to_version"])
        return steps
    return _once(app, "verified_steps", compute)


def source_records(env):
    return records.every(env, "sources")


def distinct_sources(env):
    """Each distinct source reference of the site (by path and symbol), in path and symbol order:
    its first record, with `pages` listing every page that cites it."""
    merged = {}
    for record in source_records(env):
        entry = merged.setdefault((record["path"], record["symbol"] or ""), dict(record, pages=[]))
        if record["docname"] not in entry["pages"]:
            entry["pages"].append(record["docname"])
    return [merged[key] for key in sorted(merged)]


# ---------------------------------------------------------------- checked messages

def error_items(app):
    """The error-message index of this build (verified.probing.messages.index): C++ messages pinned
    from the raise-site oracle's observations, where this build has made them."""
    git_version = app.verified_results["run"]["torch"]["git_version"]

    def pin(path, line):
        return sources.REPO_URL.format(commit=git_version, path=path) + f"#L{line}"

    def compute():
        cached = Path(app.confdir) / app.config.verified_cache_dir / \
            f"raise-sites-{git_version}-{raise_sites.table_digest()}.json"
        try:
            cpp_sites = raise_sites.observed_sites(json.loads(cached.read_text()))
        except (OSError, ValueError):
            cpp_sites = []
        return messages.index(app.verified_results["probes"], all_claims(app.env), pin, cpp_sites)
    return _once(app, "verified_error_items", compute)


def error_items_by_claim(app):
    """{claim id: the index items its probes checked}."""
    def compute():
        found = {}
        for item in error_items(app):
            for claim_id in item["claims"]:
                found.setdefault(claim_id, []).append(item)
        return found
    return _once(app, "verified_error_items_by_claim", compute)


def error_index_doc(env):
    return next(iter(records.pages_with(env, "error_index")), None)


def matching_error_items(app, text):
    """Index items whose message contains `text` (case and spacing ignored)."""
    wanted = " ".join(text.split()).lower()
    return [i for i in error_items(app) if wanted in " ".join(i["message"].split()).lower()]


# ---------------------------------------------------------------- official notes

def all_notes(env):
    return sorted(records.every(env, "notes"), key=lambda n: n.title.lower())


def all_note_statements(app):
    """Every statement, its note's pages in title order, with its history over the recorded releases."""
    def compute():
        order = {n.docname: i for i, n in enumerate(all_notes(app.env))}
        found = sorted(records.every(app.env, "statements"),
                       key=lambda s: (order.get(s.docname, len(order)), s.docname, s.number))
        for s in found:
            s.history = noteslib.statement_history(s, {c: claim_history(app, c) for c in s.claims})
        return found
    return _once(app, "verified_statement_list", compute)


def _digest(paths):
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()[:12]
