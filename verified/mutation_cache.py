"""The mutation cache: the verdict on every mutant of a probe file, kept until the file changes.

An entry is keyed like a probe-cache entry (verified.probe_cache.file_key): the probe file, the
helpers and conftest files it can import, the torch build, devices and Python of the run, and the
tooling, here with `verified.mutation` (which makes the mutants) added. A probe file whose key
has an entry is not mutated and run again; its mutants' verdicts are read back. Only complete
verdicts are stored: a mutant that did not import or whose probe the run lost keeps its file out.

    <cache>/files/<file path with / as ~>/<key>.json
    {"format": 1, "file": ..., "key": ..., "date": ..., "mutants": [{"line", "function", "kind",
     "verdict", "outcomes"}, ...]}   # in the order verified.mutation.mutants() makes them
"""
import json
from pathlib import Path

from verified import probe_cache

FORMAT = 1
TOOLING = (*probe_cache.PROBE_PROCESS_MODULES, "mutation")


def tooling_digest():
    return probe_cache.tooling_digest(probe_cache.tooling_modules(TOOLING))


class MutationCache:
    def __init__(self, directory):
        self.store_ = probe_cache.ProbeCache(directory)  # same layout, keeping, atomic writes

    def load(self, relpath, key, mutants):
        """[(verdict, outcomes)] for `mutants` (as made now) if the entry at `key` holds exactly
        them, else None (absent, unreadable, or made from other mutants)."""
        try:
            entry = json.loads(self.store_.path_of(relpath, key).read_text())
        except (OSError, ValueError):
            return None
        kept = entry.get("mutants") if isinstance(entry, dict) and entry.get("format") == FORMAT else None
        if not isinstance(kept, list) or len(kept) != len(mutants):
            return None
        if any(not isinstance(k, dict) or (k.get("line"), k.get("function"), k.get("kind")) !=
               (m.line, m.function, m.kind) for k, m in zip(kept, mutants)):
            return None
        return [(k["verdict"], k["outcomes"]) for k in kept]

    def store(self, relpath, key, date, mutants, verdicts):
        self.store_.store(relpath, key, {
            "format": FORMAT, "file": relpath, "key": key, "date": date,
            "mutants": [{"line": m.line, "function": m.function, "kind": m.kind, "verdict": verdict,
                         "outcomes": outcomes} for m, (verdict, outcomes) in zip(mutants, verdicts)]})
