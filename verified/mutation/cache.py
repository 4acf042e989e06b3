"""The mutation cache: the outcomes of every mutant of a probe file, kept until its mutants change.

An entry's key digests what those outcomes depend on: the probe-cache key of the probe file
(verified.probing.probe_cache.file_key: the file, the helpers and conftest files it can import, the
tooling that runs probes, the torch build, devices and Python of the run) and the source of
every mutant made from it. So a change to how mutants are made reruns exactly the files whose
mutants changed, and a change to how verdicts are read or reported reruns nothing: a verdict is
computed from the stored outcomes each time (verified.mutation.run.verdict_of). Only complete files
are stored: one with a mutant that did not import, or whose probe the run lost, runs again.

    <cache>/files/<file path with / as ~>/<key>.json
    {"format": 2, "file": ..., "key": ..., "date": ..., "mutants": [{"line", "function", "kind",
     "outcomes"}, ...]}   # in the order verified.mutation.run.mutants() makes them

An entry that cannot be read, or does not have this shape, raises probe_cache.BadEntry; the
caller reports it, discards it and runs the file again.
"""
import hashlib
import json

from verified.probing import probe_cache

FORMAT = 2


def key(file_key, mutants):
    """The entry key of a probe file: its probe-cache key and the source of each of its mutants."""
    digest = hashlib.sha256(file_key.encode())
    for mutant in mutants:
        digest.update(b"\0" + mutant.source.encode())
    return digest.hexdigest()[:16]


class MutationCache:
    def __init__(self, directory):
        self._entries = probe_cache.ProbeCache(directory)  # same layout, keeping, atomic writes

    def path_of(self, relpath, key):
        return self._entries.path_of(relpath, key)

    def load(self, relpath, key, mutants):
        """The stored outcomes of each of `mutants` (as made now), or None if there is no entry."""
        try:
            text = self.path_of(relpath, key).read_text()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise probe_cache.BadEntry(f"unreadable ({exc.strerror})") from exc
        try:
            entry = json.loads(text)
        except ValueError as exc:
            raise probe_cache.BadEntry(f"not JSON ({exc})") from exc
        if not isinstance(entry, dict) or entry.get("format") != FORMAT:
            raise probe_cache.BadEntry(f"not a format-{FORMAT} entry")
        if (entry.get("file"), entry.get("key")) != (relpath, key):
            raise probe_cache.BadEntry(f"holds {entry.get('file')!r} at key {entry.get('key')!r}")
        kept = entry.get("mutants")
        made = [(m.line, m.function, m.kind) for m in mutants]
        if not isinstance(kept, list) or [
                (k.get("line"), k.get("function"), k.get("kind")) if isinstance(k, dict) else None
                for k in kept] != made:
            raise probe_cache.BadEntry(f"holds other mutants than the {len(made)} made from the file now")
        if not all(isinstance(k.get("outcomes"), list) for k in kept):
            raise probe_cache.BadEntry("a mutant without an outcomes list")
        return [k["outcomes"] for k in kept]

    def discard(self, relpath, key):
        self._entries.discard(relpath, key)

    def store(self, relpath, key, date, mutants, outcomes):
        self._entries.store(relpath, key, {
            "format": FORMAT, "file": relpath, "key": key, "date": date,
            "mutants": [{"line": m.line, "function": m.function, "kind": m.kind, "outcomes": found}
                        for m, found in zip(mutants, outcomes)]})
