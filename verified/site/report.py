"""The end of a build: verification.json, the schemas beside it, and every problem found,
reported as a typed Sphinx warning at its file and line."""
import json
from pathlib import Path

from sphinx.util import logging
from sphinx.util.fileutil import copy_asset_file

from verified import claims as claimlib
from verified.releases import history as historylib
from verified.releases import matrix
from verified.site import build_results as results
from verified.site import error_search, records, render, status_marks
from verified.site import notes as noteslib

logger = logging.getLogger(__name__)
SCHEMA_DIR = Path(__file__).parents[1] / "schemas"
SCHEMAS = ("verification.schema.json", "results.schema.json")  # JSON Schemas of verification.json and results


def verification_report(app):
    env = app.env
    run = app.verified_results["run"]
    claims = results.claims_by_id(app)
    report_claims = []
    for claim in sorted(claims.values(), key=lambda c: c.id):
        entries = app.verified_by_claim.get(claim.id, [])
        history = results.claim_history(app, claim.id)
        report_claims.append({
            "id": claim.id,
            "page": claim.docname,
            "statement": claim.statement,
            "probes": sorted({f"{e['file']}::{e['function']}" for e in entries}),
            "outcome": results.outcomes_of(app, claim.id),
            "status": status_marks.status(results.outcomes_of(app, claim.id))[1],  # its mark, in words
            "flavour_dependent": claim.flavour_dependent,
            **({"cause": claim.cause} if claim.cause else {}),
            **({"fix": claim.fix} if claim.fix else {}),
            **{key: getattr(claim, key) for key in ("api", "replaces", "not_user_visible") if getattr(claim, key)},
            "history": {step["version"]: {k: step[k] for k in ("verdict", "outcome", "message", "flavour")}
                        for step in history},
            "since": historylib.since(history),
        })
    sources = [{k: s.get(k) for k in ("path", "symbol", "line", "url", "status", "kind", "reason", "pages")}
               for s in results.distinct_sources(env)]
    columns = app.verified_recorded + app.verified_live
    ids = [c["id"] for c in report_claims]
    recorded = {
        "columns": [{k: getattr(c, k) for k in ("label", "torch", "flavour", "device", "source", "date",
                                                "repository_commit", "suite")} for c in columns],
        "outcomes": matrix.cells(ids, columns),
        "changes": results.release_steps(app, sorted(claims.values(), key=lambda c: c.id)),
    }
    return {
        "format": 1,
        "matrix": recorded,
        "torch": run["torch"],
        "devices": {"ran": run["devices"], "names": run["device_names"]},
        "run": {k: run.get(k) for k in ("date", "python", "platform", "repository_commit", "cache_key")},
        "claims": report_claims,
        "sources": sources,
        "errors": [{k: item[k] for k in ("message", "type", "kind", "normalised", "variants", "claims", "pages",
                                         "probes", "causes", "raised_at")} for item in results.error_items(app)],
        "official_notes": noteslib.report(results.all_notes(env), results.all_note_statements(app),
                                          results.claim_outcomes(app)),
    }


# ---------------------------------------------------------------- problems

def unknown_claim_refs(app):
    known = results.claims_by_id(app)
    env = app.env
    return [claimlib.Problem(records.page_file(env, docname), line, f"reference to unknown claim {claim_id!r}",
                             "unknown-claim")
            for docname, refs in sorted(records.of(env, "claim_refs").items()) if docname in env.found_docs
            for claim_id, line in refs if claim_id not in known]


def unresolved_error_refs(app):
    """{error-ref}s that name no checked message, or more than one."""
    env, found = app.env, []
    for docname, refs in sorted(records.of(env, "error_refs").items()):
        if docname not in env.found_docs:
            continue
        for text, line in refs:
            matches = results.matching_error_items(app, text)
            if len(matches) != 1:
                what = "no message checked by a probe" if not matches else f"{len(matches)} checked messages"
                found.append(claimlib.Problem(records.page_file(env, docname), line,
                                              f"error reference {text!r} matches {what}; it must match exactly one",
                                              "error-ref"))
    return found


def note_problems(app):
    statements = results.all_note_statements(app)
    histories = {c: results.claim_history(app, c) for s in statements for c in s.claims}
    return noteslib.duplicate_notes(results.all_notes(app.env)) + noteslib.claim_problems(
        statements, results.claim_outcomes(app)) + noteslib.history_problems(statements, histories)


def all_problems(app):
    env = app.env
    found = records.every(env, "problems")
    found += claimlib.duplicates(records.every(env, "claims"))
    found += claimlib.pair_problems(list(results.claims_by_id(app).values()))
    found += unknown_claim_refs(app)
    found += unresolved_error_refs(app)
    found += note_problems(app)
    found += claimlib.problems(results.claims_by_id(app), app.verified_results)
    return found


def report_problem(problem):
    """A typed Sphinx warning at the problem's file and line: ``docs/x.md:12: WARNING: … [verified.no-probe]``.
    With -W the build fails on it as on any warning, and --keep-going collects them all."""
    if problem.line:
        logger.warning(problem.message, type="verified", subtype=problem.kind,
                       location=f"{problem.file}:{problem.line}")
    else:  # a location without a line would be taken for a docname: say the file in the message
        logger.warning(f"{problem.file}: {problem.message}", type="verified", subtype=problem.kind)


def on_build_finished(app, exception):
    results.wait_for_probe_run(app, failed=exception is not None)  # no probe process outlives the build
    if exception is not None or not hasattr(app, "verified_results"):
        return
    if app.builder.format == "html":
        # force: the stylesheet is ours, so a newer one replaces the copy of an earlier build
        copy_asset_file(Path(__file__).parent / "static" / "verified.css", Path(app.outdir, "_static"), force=True)
        error_search.write_assets(app)
    for schema in SCHEMAS:  # served beside verification.json, which follows the first
        copy_asset_file(SCHEMA_DIR / schema, Path(app.outdir), force=True)
    report = verification_report(app)
    Path(app.outdir, "verification.json").write_text(json.dumps(report, indent=1))
    found = all_problems(app)
    logger.info(f"verification: {render.counts(report)}")
    logger.info(error_search.summary_line(app))
    if found:
        for problem in found:
            report_problem(problem)
        logger.error(f"verification failed: {len(found)} problem(s), listed above")
        app.statuscode = 1  # without -W too: a false or unchecked claim always fails the build
