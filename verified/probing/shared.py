"""A result computed once per probe run and handed to every probe that asks for it.

Each probe runs in a forked child, so a module-level cache dies with the probe. ``once(key,
compute)`` keeps ``compute()``'s JSON-able result as a file in the run's shared folder
(``VERIFIED_RUN_SCRATCH``, which the runner makes and removes with the run), named by a digest
of ``key``: the first probe that asks computes it, the later ones read it. Only a result that
``compute`` returned is kept: after an exception the next probe that asks computes it again.
Without a probe run (plain pytest without the plugin's folder) the result is kept in this process.
"""
import hashlib
import json
import os
from pathlib import Path

from verified.probing.pytest_plugin import SCRATCH_VARIABLE  # the run's shared folder

_IN_PROCESS = {}


def once(key, compute, folder="shared"):
    """`compute()`, computed once per probe run for this JSON-able `key`."""
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
    scratch = os.environ.get(SCRATCH_VARIABLE)
    if not scratch:
        if digest not in _IN_PROCESS:
            _IN_PROCESS[digest] = compute()
        return _IN_PROCESS[digest]
    kept = Path(scratch, folder, f"{digest}.json")
    if kept.is_file():
        return json.loads(kept.read_text())
    result = compute()
    kept.parent.mkdir(parents=True, exist_ok=True)
    partial = kept.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(json.dumps(result))
    os.replace(partial, kept)  # two probes computing at once both write whole files
    return result
