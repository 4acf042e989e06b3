"""What changed from one recorded release to the next: behaviour first, then source
references, then the API census. Computed from results files alone."""
from verified.releases import census, history, matrix

STARTS, STOPS, CHANGED, FLAVOUR = "starts holding", "stops holding", "changed", "build flavour"


def _step(claim, older, newer):
    before, message_before = history.verdict(older.by_claim.get(claim.id, []), older.device)
    after, message_after = history.verdict(newer.by_claim.get(claim.id, []), newer.device)
    if before == after:
        return None
    if claim.flavour_dependent and older.flavour != newer.flavour:
        kind = FLAVOUR
    elif after == history.HOLDS:
        kind = STARTS
    elif before == history.HOLDS:
        kind = STOPS
    else:
        kind = CHANGED
    return {"claim": claim.id, "kind": kind, "before": before, "before_message": message_before,
            "after": after, "after_message": message_after}


def step(claims, older, newer):
    """One step between two columns of the same device."""
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
        "claims": behaviour,
        "sources": [r for r in references if r["kind"] != "moved"],
        "moved": [r for r in references if r["kind"] == "moved"],
        "moved_by_file": dict(sorted(moved.items())),
        "census": census.diff(older_census, newer_census) if older_census and newer_census else None,
    }


def steps(claims, columns):
    """Every consecutive step (same device, adjacent releases) of `columns`."""
    return [step(claims, older, newer) for older, newer in matrix.consecutive_pairs(columns)]


def tally(change_list):
    counts = {kind: 0 for kind in (STARTS, STOPS, CHANGED, FLAVOUR)}
    for change in change_list:
        counts[change["kind"]] += 1
    return counts
