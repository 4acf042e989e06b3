"""Claims, their outcomes per device, and the problems that fail a build.

Pure data: nothing here imports Sphinx or torch, so the rules are tested directly.
"""
import re
from dataclasses import dataclass, field

from verified.outcomes import BAD, DEVICES, NOT_APPLICABLE, NOT_RUN, PASSED, SKIPPED

CLAIM_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*(?:\.[a-z0-9]+(?:-[a-z0-9]+)*)+$")


@dataclass
class Claim:
    id: str
    docname: str
    file: str
    line: int
    statement: str
    sources: list = field(default_factory=list)
    flavour_dependent: bool = False  # its outcome depends on the build (CPU or CUDA wheel), not the version
    cause: str = ""  # of the error or warning the claim quotes: what triggers it, in one line
    fix: str = ""    # and what to do about it
    api: str = ""        # the user API a before/after pair is about (`torch.clamp`), for the what-changed page
    replaces: str = ""   # the claim this one replaces: it said what the API did until this one's releases
    not_user_visible: str = ""  # why a difference of this claim between releases is not one user code notices


@dataclass(frozen=True)
class Problem:
    """A problem that fails the build, where it is; `kind` is its warning subtype
    (Sphinx shows it as ``[verified.<kind>]``: PROBLEM_KINDS)."""
    file: str
    line: int | None
    message: str
    kind: str = "problem"

    def __str__(self):
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


PROBLEM_KINDS = {  # subtype -> what it means; every Problem made by the tooling has one of these
    "no-probe": "a claim that no probe names",
    "failed": "a claim whose probe failed, errored, crashed or timed out",
    "unchecked": "a claim skipped on a device this machine has",
    "unknown-claim": "a probe or a {claim-ref} naming a claim that does not exist",
    "no-claim": "a probe that names no claim",
    "duplicate-id": "a claim ID used twice",
    "bad-id": "a claim ID that breaks the ID rules",
    "empty-claim": "a claim with an empty statement",
    "collection-error": "a probe file that pytest could not collect",
    "broken-src": "a source reference that does not resolve, or is malformed",
    "line-check": "a pinned line that does not define its symbol",
    "source-map": "a malformed or empty source-map",
    "error-ref": "an {error-ref} matching no checked message, or several",
    "gallery-figure": "a gallery-figure whose script or image does not exist",
    "note": "a malformed official-note or note-statement, or a verdict its claims cannot carry",
    "note-not-run": "a note verdict other than cuda, or a note's every-recorded-release line, resting on "
                    "claims that never ran",
    "change-pair": "a :replaces: naming no claim or the claim itself, a pair without :api:, or a claim that is "
                   "both a pair's side and :not-user-visible:",
}


def check_claim_id(claim_id):
    """A message if `claim_id` breaks the ID rules, else None."""
    if not CLAIM_ID.match(claim_id):
        return (f"claim ID {claim_id!r} is not lowercase dot-separated words "
                "(e.g. 'tensor.view.shares-storage')")
    return None


def duplicates(all_claims):
    """A Problem for every claim whose ID was already used elsewhere."""
    first, found = {}, []
    for claim in sorted(all_claims, key=lambda c: (c.file, c.line)):
        if claim.id in first:
            other = first[claim.id]
            found.append(Problem(claim.file, claim.line,
                                 f"duplicate claim ID {claim.id!r} (first at {other.file}:{other.line})",
                                 "duplicate-id"))
        else:
            first[claim.id] = claim
    return found


def pair_problems(claims):
    """A Problem for every malformed before/after pair (:replaces:, :api:, :not-user-visible:)."""
    by_id = {c.id: c for c in claims}
    found = []
    sides = {c.replaces for c in claims if c.replaces} | {c.id for c in claims if c.replaces}
    for claim in sorted(claims, key=lambda c: (c.file, c.line)):
        if claim.replaces and (claim.replaces not in by_id or claim.replaces == claim.id):
            found.append(Problem(claim.file, claim.line, f"claim {claim.id!r} :replaces: {claim.replaces!r}, "
                                 "which is not another claim of the site", "change-pair"))
        elif claim.replaces and not (claim.api or by_id[claim.replaces].api):
            found.append(Problem(claim.file, claim.line, f"claim {claim.id!r} replaces {claim.replaces!r} but "
                                 "neither says which API changed (:api:)", "change-pair"))
        if claim.id in sides and claim.not_user_visible:
            found.append(Problem(claim.file, claim.line, f"claim {claim.id!r} is a side of a before/after pair, "
                                 "which is a user-visible change, and says :not-user-visible:", "change-pair"))
    return found


def probes_by_claim(entries):
    by_claim = {}
    for entry in entries:
        for claim_id in entry["claims"]:
            by_claim.setdefault(claim_id, []).append(entry)
    return by_claim


def outcome(entries, device):
    """A claim's outcome on `device` from the entries of every probe that names it."""
    here = [e["outcome"] for e in entries if e["device"] == device and e["outcome"] != NOT_APPLICABLE]
    if not here:
        return NOT_APPLICABLE
    for bad in BAD:
        if bad in here:
            return bad
    return NOT_RUN if SKIPPED in here else PASSED


def outcomes(entries):
    return {device: outcome(entries, device) for device in DEVICES}


def problems(claims, results):
    """Everything that makes the claims and the probe run disagree, as located Problems.

    `claims` maps ID -> Claim; `results` is a probe results dict (verified.probing.pytest_plugin).
    """
    found = []
    for error in results.get("collection_errors", []):
        found.append(Problem(error["nodeid"], None, f"probe file could not be collected: {error['message']}",
                             "collection-error"))
    entries = results["probes"]
    ran_on = set(results["run"]["devices"])
    by_claim = probes_by_claim(entries)
    reported_unknown = set()
    for entry in entries:
        where = (entry["file"], entry["line"])
        if not entry["claims"] and entry["function"] not in reported_unknown:
            reported_unknown.add(entry["function"])
            found.append(Problem(*where, f"probe {entry['function']} names no claim (add @pytest.mark.claim)",
                                 "no-claim"))
        for claim_id in entry["claims"]:
            if claim_id not in claims and (claim_id, entry["function"]) not in reported_unknown:
                reported_unknown.add((claim_id, entry["function"]))
                found.append(Problem(*where, f"probe {entry['function']} names unknown claim {claim_id!r}",
                                     "unknown-claim"))
    for claim in sorted(claims.values(), key=lambda c: (c.file, c.line)):
        probes = by_claim.get(claim.id)
        if not probes:
            found.append(Problem(claim.file, claim.line, f"claim {claim.id!r} has no probe", "no-probe"))
            continue
        for device, result in outcomes(probes).items():
            if result in BAD:
                bad = [e for e in probes if e["device"] == device and e["outcome"] == result]
                detail = "; ".join(f"{e['nodeid']} ({probe_location(e)}): {first_line(e['message'])}" for e in bad)
                found.append(Problem(claim.file, claim.line, f"claim {claim.id!r} {result} on {device}: {detail}",
                                     "failed"))
            elif result == NOT_RUN and device in ran_on:
                skipped = [e["nodeid"] for e in probes if e["device"] == device and e["outcome"] == SKIPPED]
                found.append(Problem(claim.file, claim.line,
                                     f"claim {claim.id!r} is unchecked on {device}, which this machine has: "
                                     f"skipped {', '.join(skipped)}", "unchecked"))
    return found


def probe_location(entry):
    """'file:line' of a probe, and where it failed when its entry says ('failed_at')."""
    where = f"{entry['file']}:{entry['line']}"
    failed_at = entry.get("failed_at")
    return f"{where}, failed at {failed_at['file']}:{failed_at['line']}" if failed_at else where


def first_line(text):
    return text.strip().splitlines()[0] if text.strip() else ""
