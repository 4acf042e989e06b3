"""The compatibility matrix and the drift between versions, computed from results files alone.

A *column* is one device of one recorded run (a results file under results/, or the live
build). A cell is the claim's outcome there, or "missing" when that run has no probe entry
for the claim at all (recorded before the claim existed): missing is not failed.
"""
import json
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from verified import claims as claimlib

MISSING = "missing"


@dataclass
class Column:
    label: str           # "2.14.1 cpu"
    torch: str           # full version, e.g. "2.14.1+cu130"
    device: str
    source: str          # results file name, or "this build"
    date: str
    repository_commit: str | None
    suite: str | None    # digest of the probe files that ran
    results: dict

    @property
    def by_claim(self):
        if not hasattr(self, "_by_claim"):
            self._by_claim = claimlib.probes_by_claim(self.results["probes"])
        return self._by_claim

    def outcome(self, claim_id):
        entries = self.by_claim.get(claim_id)
        return claimlib.outcome(entries, self.device) if entries else MISSING

    def sources(self):
        return {s["ref"]: s for s in self.results.get("sources", [])}

    @property
    def flavour(self):
        """The build: "CPU wheel" (+cpu), "CUDA 13.0 wheel" (+cu130), or "default wheel"."""
        local = self.torch.partition("+")[2]
        if local == "cpu":
            return "CPU wheel"
        if local.startswith("cu") and local[2:].isdigit():
            return f"CUDA {local[2:-1]}.{local[-1]} wheel"
        return f"{local} wheel" if local else "default wheel"


def version_key(version):
    try:
        return Version(version.split("+")[0])
    except InvalidVersion:
        return Version("0")


def columns_of(results, source):
    run = results["run"]
    return [Column(f"{run['torch']['version'].split('+')[0]} {device}", run["torch"]["version"], device, source,
                   run.get("date", ""), run.get("repository_commit"), run.get("suite"), results)
            for device in run["devices"]]


def load_recorded(results_dir):
    """Columns of every results file under `results_dir`, oldest torch first, cpu before cuda."""
    columns = []
    for path in sorted(Path(results_dir).glob("*.json")):
        try:
            results = json.loads(path.read_text())
            columns.extend(columns_of(results, path.name))
        except (ValueError, KeyError) as exc:
            raise ValueError(f"{path}: not a probe results file ({exc})") from exc
    return sorted(columns, key=lambda c: (version_key(c.torch), c.device, c.source))


def one_per_release(columns, device):
    """The columns of `device`, one per torch release, oldest first. A release recorded twice
    (a CPU run and a GPU run, which has a CPU column too) keeps its `-<device>.json` run."""
    chosen = {}
    for column in columns:
        if column.device != device:
            continue
        release = column.torch.split("+")[0]
        if release not in chosen or column.source.endswith(f"-{device}.json"):
            chosen[release] = column
    return sorted(chosen.values(), key=lambda c: version_key(c.torch))


def cells(claim_ids, columns):
    """{claim id: [outcome per column]}."""
    return {claim_id: [column.outcome(claim_id) for column in columns] for claim_id in claim_ids}


def area_totals(claim_ids, columns):
    """{area: [{outcome: count} per column]} where the area is the claim ID's first word."""
    totals = {}
    for claim_id in claim_ids:
        area = claim_id.split(".")[0]
        row = totals.setdefault(area, [{} for _ in columns])
        for tally, column in zip(row, columns):
            result = column.outcome(claim_id)
            tally[result] = tally.get(result, 0) + 1
    return totals


def consecutive_pairs(columns):
    """(older, newer) columns of the same device, adjacent in torch version."""
    pairs = []
    for device in sorted({c.device for c in columns}):
        mine = [c for c in columns if c.device == device]
        pairs.extend(zip(mine, mine[1:]))
    return pairs


def source_changes(older, newer):
    """References whose status or line differs between two runs (either may lack a reference)."""
    before, after = older.sources(), newer.sources()
    changes = []
    for ref in sorted(set(before) | set(after)):
        old, new = before.get(ref), after.get(ref)
        if old is None or new is None:
            continue  # not resolved in one of the runs: nothing to compare
        if (old["status"], old["line"]) != (new["status"], new["line"]):
            changes.append({"ref": ref, "before": _where(old), "after": _where(new),
                            "kind": _kind(old, new), "reason": new["reason"], "url": new["url"],
                            "pages": new.get("pages", [])})
    return changes


def _where(source):
    return f"{source['status']}" + (f" L{source['line']}" if source["line"] else "")


def _kind(old, new):
    if new["status"] == "broken" and old["status"] != "broken":
        return "vanished"
    if old["status"] == "broken" and new["status"] != "broken":
        return "appeared"
    if old["line"] != new["line"]:
        return "moved"
    return "status"


def newest_first(columns):
    """The columns newest release first (the live build before the recorded run of its release),
    so the release a reader upgrades to is the first column after the claim."""
    return sorted(columns, key=lambda c: (version_key(c.torch), c.source == "this build", c.device), reverse=True)


def differs_somewhere(claim_id, columns):
    """Whether the claim's outcome is not the same in every column of some device that has it: a
    run recorded before the claim existed (missing) says nothing of how the release behaves."""
    by_device = {}
    for column in columns:
        by_device.setdefault(column.device, set()).add(column.outcome(claim_id))
    return any(len(seen - {MISSING}) > 1 for seen in by_device.values())


def missing_somewhere(claim_id, columns):
    """Whether some column has no probe entry for the claim."""
    return any(column.outcome(claim_id) == MISSING for column in columns)


def area_of(claim_id):
    return claim_id.split(".")[0]
