"""What changed from one recorded release to the next, computed from results files alone.

A step between two columns has, for the reader who upgrades:

- ``pairs``: the behaviour changes user code notices, each a pair of claims bounded to releases
  (``torch_version``): the older claim says what the API did until the step, the newer one (whose
  ``:replaces:`` names the older) what it does since. A pair belongs to the step where the older
  claim holds on the older column and is not applicable on the newer, and the newer claim the
  other way round: both sides proven, each on its releases.
- ``claims``: every other claim whose verdict differs between the columns. A claim declared only
  for other releases (not applicable on one side, holding on the other) is no change. What is left
  is told apart as a build-flavour effect (the builds differ and the claim is marked
  ``:flavour-dependent:``, or is not run on one of them), a difference the claim states a reason
  for not being user-visible (``:not-user-visible:``), or a release change not yet explained.
- ``measured``: figures the probes recorded (verified.measured) that differ, per claim.
- source references that vanished, appeared or moved, and the API census diff.
"""
from verified.outcomes import NOT_APPLICABLE, NOT_RUN
from verified.releases import census, history, matrix

STARTS, STOPS, CHANGED = "starts holding", "stops holding", "changed"  # a release change not explained
FLAVOUR, HIDDEN = "build flavour", "not user-visible"
KINDS = (STARTS, STOPS, CHANGED, FLAVOUR, HIDDEN)
UNEXPLAINED = (STARTS, STOPS, CHANGED)
BOUND_AWAY = (NOT_APPLICABLE, matrix.MISSING)  # not declared for that release, or not recorded there


def _step(claim, older, newer):
    before, message_before = history.verdict(older.by_claim.get(claim.id, []), older.device)
    after, message_after = history.verdict(newer.by_claim.get(claim.id, []), newer.device)
    if before == after:
        return None
    if {before, after} & set(BOUND_AWAY) and history.HOLDS in (before, after):
        return None  # declared (or recorded) for one side only, and it holds there: no change
    if before in BOUND_AWAY and after in BOUND_AWAY:
        return None
    flavours_differ = older.flavour != newer.flavour
    if flavours_differ and (claim.flavour_dependent or NOT_RUN in (before, after)):
        kind = FLAVOUR
    elif getattr(claim, "not_user_visible", ""):
        kind = HIDDEN
    elif after == history.HOLDS:
        kind = STARTS
    elif before == history.HOLDS:
        kind = STOPS
    else:
        kind = CHANGED
    change = {"claim": claim.id, "kind": kind, "before": before, "before_message": message_before,
              "after": after, "after_message": message_after}
    if kind == HIDDEN:
        change["reason"] = claim.not_user_visible
    return change


def pairs_of(claims):
    """[(api, older claim, newer claim)] of every claim that names the claim it replaces."""
    by_id = {c.id: c for c in claims}
    return [(c.api or by_id[c.replaces].api, by_id[c.replaces], c)
            for c in claims if getattr(c, "replaces", "") and c.replaces in by_id]


def _pair_in_step(old, new, older, newer):
    def seen(claim, column):
        return history.verdict(column.by_claim.get(claim.id, []), column.device)[0]
    return (seen(old, older), seen(old, newer), seen(new, older), seen(new, newer)) == (
        history.HOLDS, NOT_APPLICABLE, NOT_APPLICABLE, history.HOLDS)


def measured_changes(claims, older, newer):
    """[{claim, name, before, after}] of the measured figures that differ between the columns."""
    def figures(column, claim_id):
        found = {}
        for entry in column.by_claim.get(claim_id, []):
            if entry["device"] == column.device:
                found.update(entry.get("measured") or {})
        return found
    moved = []
    for claim in claims:
        before, after = figures(older, claim.id), figures(newer, claim.id)
        for name in sorted(set(before) & set(after)):
            if before[name] != after[name]:
                moved.append({"claim": claim.id, "name": name, "before": before[name], "after": after[name]})
    return moved


def step(claims, older, newer):
    """One step between two columns of the same device."""
    pairs = [{"api": api, "before": old.id, "after": new.id}
             for api, old, new in pairs_of(claims) if _pair_in_step(old, new, older, newer)]
    behaviour = [change for change in (_step(c, older, newer) for c in claims) if change]
    references = matrix.source_changes(older, newer)
    moved = {}
    for ref in references:
        if ref["kind"] == "moved":
            path = ref["ref"].split(" ", 1)[0]
            moved[path] = moved.get(path, 0) + 1
    older_census, newer_census = older.results.get("census"), newer.results.get("census")
    return {
        "from": older.label, "to": newer.label,
        "from_version": history.version_of(older), "to_version": history.version_of(newer),
        "from_flavour": older.flavour, "to_flavour": newer.flavour,
        "same_suite": older.suite == newer.suite,
        "pairs": pairs,
        "claims": behaviour,
        "measured": measured_changes(claims, older, newer),
        "sources": [r for r in references if r["kind"] != "moved"],
        "moved": [r for r in references if r["kind"] == "moved"],
        "moved_by_file": dict(sorted(moved.items())),
        "census": census.diff(older_census, newer_census) if older_census and newer_census else None,
    }


def steps(claims, columns):
    """Every consecutive step (same device, adjacent releases) of `columns`, the newest first."""
    return [step(claims, older, newer) for older, newer in reversed(matrix.consecutive_pairs(columns))]


def tally(change_list):
    counts = {kind: 0 for kind in KINDS}
    for change in change_list:
        counts[change["kind"]] += 1
    return counts
