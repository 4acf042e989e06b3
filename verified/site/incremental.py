"""What a warm build reads and writes again.

A page is read again when its source changed, or when the tooling, the torch or PYTORCH_SRC
changed (then every page is). It is written again, without being read, when what it shows
of the probes changed; pages that show other pages' state are written again whenever any
page was read or anything from the probes changed.
"""
import hashlib
import json
import pickle

from verified.probing import messages, probe_cache
from verified.site import build_results as results
from verified.site import records, render, render_measured, render_messages
from verified.sources import torch_build


def on_config_inited(app, config):
    app.verified_checkout = torch_build.environment_checkout()
    app.verified_read_key = f"{probe_cache.package_digest()}-{torch_build.installed_torch_commit()}-" \
                            f"{app.verified_checkout}"


def keep_pristine_config(app, config):
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


def pages_to_read(app, env, added, changed, removed):
    """Every page is read again when the tooling, the torch or PYTORCH_SRC changed."""
    if getattr(env, "verified_read_key", None) != app.verified_read_key:
        return sorted(env.found_docs - added - changed - removed)
    return []


def on_env_before_read_docs(app, env, docnames):
    app.verified_reread = bool(docnames)


def page_inputs(app, claim_ids):
    """A digest of what a written page takes from the probes: the torch build, devices and CPU
    capability, and per claim its outcomes, its history line, the messages it shows, its
    measured figures and the probe files it runs."""
    run = app.verified_results["run"]
    parts = [run["torch"], run["devices"], run.get("cpu_capability")]
    for claim_id in claim_ids:
        entries = app.verified_by_claim.get(claim_id, [])
        parts.append([claim_id, results.outcomes_of(app, claim_id), results.history_line(app, claim_id),
                      [(i["type"], i["message"]) for i in results.error_items_by_claim(app).get(claim_id, [])],
                      render_measured.figures_of(entries),
                      sorted({(e["file"], e["function"], e["line"], app.verified_file_keys.get(e["file"]))
                              for e in entries})])
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def pages_to_write(app, env):
    """Pages to write again without reading, once the probes are in: those whose claims'
    outcomes or probes changed, and the pages that show other pages' state (site tables,
    {claim-ref}, notes) whenever any page was read again or anything from the probes changed."""
    results.probe_results(app)
    env.verified_read_key = app.verified_read_key
    inputs_changed = getattr(env, "verified_inputs", None) != app.verified_inputs
    env.verified_inputs = app.verified_inputs
    stored, page_claims = records.of(env, "page_inputs"), records.of(env, "claims")
    rewrite = set()
    for docname in sorted(env.found_docs):
        digest = page_inputs(app, [claim.id for claim in page_claims.get(docname, [])])
        if stored.get(docname) != digest:
            stored[docname] = digest
            rewrite.add(docname)
    if getattr(app, "verified_reread", False) or inputs_changed:
        rewrite |= set(records.pages_with(env, "index_docs"))
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
    index_doc = results.error_index_doc(env)
    claims = results.all_claims(env)
    for item in results.error_items(app):
        forms = render_messages.search_forms(item)
        targets = [(index_doc, messages.anchor(item))] if index_doc else []
        targets += [(claims[c].docname, render.claim_anchor(c)) for c in item["claims"] if c in claims]
        for docname, target in targets:
            entries.setdefault(docname, set()).update((form, target, "main") for form in forms)
    for docname in env.found_docs:
        if docname in entries:
            stored[docname] = sorted(entries[docname])
