"""Run the probes once, in a separate process, and cache the results.

The cache key covers the probe files and their helpers (every file under the probe
folders, plus this package's pytest plugin), the torch version and commit, the devices
and the Python version. Nothing changed means the cached results are reused.

    python -m verified.runner --out _build/probes/results.json [probes ...]
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from verified import runinfo

PACKAGE_DIR = Path(__file__).resolve().parent
KEY_FILES = ("pytest_plugin.py", "runinfo.py")
INSTALL_HINT = ("install the project's pinned environment with `make html` (it creates .venv from "
                "requirements.txt), or `pip install torch==2.13.0 pytest==9.2.0`")


class ProbeRunError(RuntimeError):
    """The probe run itself failed (not a probe): no results file was written."""


def describe_python(python):
    """Run info for `python`, or a ProbeRunError that says how to get torch."""
    try:
        return runinfo.collect_in_subprocess(python)
    except (RuntimeError, OSError) as exc:
        raise ProbeRunError(f"torch is not importable by {python} ({exc}): {INSTALL_HINT}") from exc


def cache_key(probe_dirs, info):
    digest = hashlib.sha256()
    for name in KEY_FILES:
        digest.update(name.encode() + (PACKAGE_DIR / name).read_bytes())
    for directory in probe_dirs:
        for path in sorted(Path(directory).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(directory)).encode() + b"\0" + path.read_bytes())
    identity = {k: info[k] for k in ("torch", "devices", "device_names", "python")}
    digest.update(json.dumps(identity, sort_keys=True).encode())
    return digest.hexdigest()[:16]


def suite_digest(probe_dirs):
    """Which probe suite ran: a digest of every probe file (runs compare cleanly only if equal)."""
    digest = hashlib.sha256()
    for directory in probe_dirs:
        for path in sorted(Path(directory).rglob("*.py")):
            digest.update(path.relative_to(directory).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def run_probes(python, probe_dirs, rootdir, out, timeout=None, echo=print):
    """Run every probe isolated, writing `out`; returns the results dict."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists():
        out.unlink()
    command = [python, "-m", "pytest", "-p", "verified.pytest_plugin", "-p", "no:cacheprovider",
               "-p", "no:timeout", "-c", os.devnull, "--rootdir", str(rootdir), "-q", "-rfE",
               "--continue-on-collection-errors",  # one unimportable file must not stop the others
               f"--verified-results={out}", *map(str, probe_dirs)]
    if timeout:
        command.append(f"--probe-timeout={timeout}")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(PACKAGE_DIR.parent),
                                                                     os.environ.get("PYTHONPATH")])))
    started = time.monotonic()
    proc = subprocess.run(command, cwd=rootdir, env=env, capture_output=True, text=True)
    if not out.exists():
        raise ProbeRunError(f"the probe run wrote no results (pytest exit {proc.returncode}):\n"
                            f"{_tail(proc.stdout + proc.stderr)}")
    results = json.loads(out.read_text())
    results["run"]["suite"] = suite_digest(probe_dirs)
    out.write_text(json.dumps(results, indent=1))
    echo(f"probes: {summary(results)} in {time.monotonic() - started:.1f} s")
    if proc.returncode not in (0, 1):
        echo(_tail(proc.stdout + proc.stderr))
    return results


def cached_probe_results(python, probe_dirs, rootdir, cache_dir, echo=print):
    """(results, key, reused): the run for the current key, from the cache when present."""
    info = describe_python(python)
    key = cache_key(probe_dirs, info)
    cached = Path(cache_dir) / f"results-{key}.json"
    if cached.is_file():
        results = json.loads(cached.read_text())
        echo(f"probes: unchanged (key {key}), reusing {cached}: {summary(results)}")
        return results, key, True
    results = run_probes(python, probe_dirs, rootdir, cached.with_suffix(".partial"), echo=echo)
    results["run"]["cache_key"] = key
    cached.write_text(json.dumps(results, indent=1))
    cached.with_suffix(".partial").unlink()
    return results, key, False


def summary(results):
    counts = {}
    for entry in results["probes"]:
        counts[entry["outcome"]] = counts.get(entry["outcome"], 0) + 1
    text = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items())) or "no probes"
    errors = len(results.get("collection_errors", []))
    return text + (f", {errors} collection errors" if errors else "")


def _tail(text, lines=40):
    return "\n".join(text.strip().splitlines()[-lines:])


def main(argv=None):
    parser = argparse.ArgumentParser(description="Run the claim probes, each in its own process.")
    parser.add_argument("probe_dirs", nargs="*", default=["probes"])
    parser.add_argument("--out", default="_build/probes/results.json", help="results file of a fresh run")
    parser.add_argument("--cache", default=None, metavar="DIR",
                        help="reuse the run cached in DIR when nothing changed (the cache `make html` uses)")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--timeout", type=float, default=None, help="per-probe limit in seconds")
    args = parser.parse_args(argv)
    try:
        describe_python(args.python)
        if args.cache:
            results, _, _ = cached_probe_results(args.python, args.probe_dirs, Path.cwd(), args.cache)
        else:
            results = run_probes(args.python, args.probe_dirs, Path.cwd(), args.out, args.timeout)
            print(f"wrote {args.out}")
    except ProbeRunError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    bad = [e for e in results["probes"] if e["outcome"] not in ("passed", "skipped", "not applicable")]
    for entry in bad:
        print(f"{entry['outcome'].upper()} {entry['nodeid']} ({entry['file']}:{entry['line']}): "
              f"{entry['message'].strip().splitlines()[0] if entry['message'].strip() else ''}")
    for error in results.get("collection_errors", []):
        print(f"ERROR collecting {error['nodeid']}: {error['message'].strip().splitlines()[-1]}")
    skipped = sum(e["outcome"] in ("skipped", "not applicable") for e in results["probes"])
    passed = sum(e["outcome"] == "passed" for e in results["probes"])
    print(f"probes: {passed} passed, {len(bad) + len(results.get('collection_errors', []))} failed, {skipped} skipped")
    return 1 if bad or results.get("collection_errors") else 0


if __name__ == "__main__":
    sys.exit(main())
