"""The probe cache: one entry per probe file, keyed on everything that file's outcome depends on.

A file's key is a digest of
- the file itself, and the helpers it can import: every ``conftest.py`` up its folder
  chain (to the project root) and every other file in its own folder that is not a probe
  file (helper modules, C++ sources a probe compiles);
- the tooling that runs probes (the plugin, the runner, this module and what they import),
  and any ``verified`` module the file or its helpers import (``sources.cpp_build``, ``sources.raise_sites``...);
- the identity of the run: torch version and commit, devices and their names, Python.

An entry is ``<cache>/files/<file path with / as ~>/<key>.json``: the file's probe entries
and collection errors, as in a results file (docs/reference/formats.md), plus when they ran.
Entries are written atomically (a temporary file, then ``os.replace``), so a killed run or
two builds at once never leave half a file; an entry that is unreadable anyway is reported,
deleted and recomputed by the caller.
"""
import ast
import hashlib
import json
import os
import tempfile
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # verified/
ENTRY_FORMAT = 1
KEPT_PER_FILE = 4  # entries kept per probe file: other torch versions or Pythons reuse theirs
PROBE_KEYS = {"nodeid": str, "file": str, "line": int, "function": str, "claims": list, "device": str,
              "outcome": str, "message": str, "messages": list, "duration": (int, float)}


class BadEntry(ValueError):
    """A cache entry that cannot be used: why, in a few words."""


def probe_files(probe_dirs):
    """Every probe file (``test_*.py``) under the probe folders, in collection order."""
    found = []
    for directory in map(Path, probe_dirs):
        found += [p for p in sorted(directory.rglob("test_*.py")) if "__pycache__" not in p.parts]
    return found


def helper_files(probe_file, root):
    """The files `probe_file` can import besides itself: conftest.py up to `root`, helpers beside it."""
    probe_file, root = Path(probe_file).resolve(), Path(root).resolve()
    helpers = [p for p in sorted(probe_file.parent.iterdir())
               if p.is_file() and p != probe_file and not p.name.startswith("test_") and p.suffix != ".pyc"]
    folder = probe_file.parent.parent
    while folder != folder.parent and (folder == root or root in folder.parents):
        if (folder / "conftest.py").is_file():
            helpers.append(folder / "conftest.py")
        if folder == root:
            break
        folder = folder.parent
    return helpers


# what runs the probes and stores their results
PROBE_PROCESS_MODULES = ("probing.pytest_plugin", "probing.runner", "probing.probe_cache")


def module_path(name):
    """The file of a `verified` module given as its dotted name below the package (``probing.runner``)."""
    return PACKAGE_DIR.joinpath(*name.split(".")).with_suffix(".py")


def verified_imports(path):
    """The modules of the `verified` package that the Python file at `path` imports, as dotted
    names below the package (``sources.cpp_build``)."""
    text = Path(path).read_text()
    if "verified" not in text:  # most probe files: no parse on every build's key computation
        return set()
    found = set()
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "verified":
            below = node.module.split(".")[1:]
            found |= {".".join([*below, alias.name]) for alias in node.names}  # a module, or a name in one
            if below:
                found.add(".".join(below))
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".", 1)[1] for a in node.names if a.name.startswith("verified.")}
    return {name for name in found if module_path(name).is_file()}


def tooling_modules(start=PROBE_PROCESS_MODULES):
    """`start` and every `verified` module they import, directly or not."""
    seen, todo = set(), list(start)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += verified_imports(module_path(name))
    return sorted(seen)


def tooling_digest(modules=None):
    """A digest of the tooling that can change a probe's outcome: the modules that run the
    probes and store their results, with what they import (or the given `modules`). The
    renderer and the Sphinx extension are not in it: changing them reruns no probe."""
    digest = hashlib.sha256()
    for name in sorted(modules if modules is not None else tooling_modules()):
        digest.update(name.encode() + b"\0" + module_path(name).read_bytes())
    return digest.hexdigest()[:16]


def package_digest():
    """A digest of the whole `verified` package (what turns pages into nodes, too)."""
    return tooling_digest([".".join(p.relative_to(PACKAGE_DIR).with_suffix("").parts)
                           for p in PACKAGE_DIR.rglob("*.py") if "__pycache__" not in p.parts])


def identity_of(info):
    """What of the run info decides outcomes: torch build, devices, Python."""
    return {k: info[k] for k in ("torch", "devices", "device_names", "python")}


def file_key(probe_file, root, identity, tooling):
    probe_file, root = Path(probe_file).resolve(), Path(root).resolve()
    digest = hashlib.sha256()
    digest.update(json.dumps({"identity": identity, "tooling": tooling}, sort_keys=True).encode())
    files = [probe_file, *helper_files(probe_file, root)]
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    imported = set().union(*(verified_imports(p) for p in files if p.suffix == ".py"))
    if imported:  # a probe that uses the tooling itself (verified.sources.raise_sites...) depends on it too
        digest.update(tooling_digest(tooling_modules(sorted(imported))).encode())
    return digest.hexdigest()[:16]


class ProbeCache:
    """Reads and writes the per-file entries under `directory`."""

    def __init__(self, directory):
        self.directory = Path(directory) / "files"

    def _folder(self, relpath):
        return self.directory / relpath.replace("/", "~")

    def path_of(self, relpath, key):
        return self._folder(relpath) / f"{key}.json"

    def load(self, relpath, key):
        """The entry for `relpath` at `key`, None if absent; raises BadEntry if it is unusable."""
        path = self.path_of(relpath, key)
        try:
            text = path.read_text()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise BadEntry(f"unreadable ({exc.strerror})") from exc
        try:
            entry = json.loads(text)
        except ValueError as exc:
            raise BadEntry(f"not JSON ({exc})") from exc
        check_entry(entry, relpath, key)
        return entry

    def discard(self, relpath, key):
        self.path_of(relpath, key).unlink(missing_ok=True)

    def store(self, relpath, key, entry):
        folder = self._folder(relpath)
        folder.mkdir(parents=True, exist_ok=True)
        write_atomically(folder / f"{key}.json", json.dumps(entry, indent=1))
        older = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)[KEPT_PER_FILE:]
        for stale in older:
            stale.unlink(missing_ok=True)

    def last_duration(self, relpath):
        """Seconds the newest entry of `relpath` took at any key, or None: to start slow files first."""
        folder = self._folder(relpath)
        for path in sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True):
            try:
                return float(json.loads(path.read_text())["duration"])
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return None


def make_entry(relpath, key, probes, collection_errors, duration, date, repository_commit):
    return {"format": ENTRY_FORMAT, "file": relpath, "key": key, "duration": round(duration, 3), "date": date,
            "repository_commit": repository_commit, "probes": probes, "collection_errors": collection_errors}


def check_entry(entry, relpath, key):
    """Raise BadEntry unless `entry` is a well-formed entry for `relpath` at `key`."""
    if not isinstance(entry, dict):
        raise BadEntry("not an object")
    if entry.get("format") != ENTRY_FORMAT:
        raise BadEntry(f"format {entry.get('format')!r}, expected {ENTRY_FORMAT}")
    if (entry.get("file"), entry.get("key")) != (relpath, key):
        raise BadEntry(f"holds {entry.get('file')!r} at key {entry.get('key')!r}")
    if not isinstance(entry.get("duration"), (int, float)) or not isinstance(entry.get("date"), str):
        raise BadEntry("no duration or date")
    if not isinstance(entry.get("probes"), list) or not isinstance(entry.get("collection_errors"), list):
        raise BadEntry("no probes or collection_errors list")
    for number, probe in enumerate(entry["probes"]):
        for name, kind in PROBE_KEYS.items():
            if not isinstance(probe, dict) or not isinstance(probe.get(name), kind):
                raise BadEntry(f"probe {number}: missing or mistyped {name!r}")
    for number, error in enumerate(entry["collection_errors"]):
        if not isinstance(error, dict) or not all(isinstance(error.get(k), str) for k in ("nodeid", "message")):
            raise BadEntry(f"collection error {number}: missing nodeid or message")


def write_atomically(path, text):
    """Write `text` to `path` so that a reader sees the old file or the new one, never a part."""
    path = Path(path)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def declared_probes(path):
    """(function, line, claim IDs) of each probe in a file, read without importing it."""
    try:
        tree = ast.parse(Path(path).read_text())
    except (OSError, SyntaxError, ValueError):
        return []
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            claim_ids = sorted({d.args[0].value for d in node.decorator_list
                                if isinstance(d, ast.Call) and ast.unparse(d.func).endswith("mark.claim")
                                and d.args and isinstance(d.args[0], ast.Constant)})
            if claim_ids:
                line = min([d.lineno for d in node.decorator_list] + [node.lineno])
                found.append((node.name, line, claim_ids))
    return found
