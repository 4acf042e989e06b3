"""Record probe runs against other torch versions: `make matrix TORCH="2.13.0 2.14.1"`.

For each version: build (or reuse) `.venvs/torch-<version>`, run every probe in it, resolve
every source reference of the site against that version's own files, and write
`results/torch-<version>-<cpu|cuda>.json`. The site's matrix and what-changed pages are
computed from those files alone.

With `--changed-only` (`make matrix TORCH="…" MATRIX=--changed-only`), an existing results file is
brought up to date instead of recorded again: only the probe files that changed since the commit it
records (`run.repository_commit`), with what they import, and the probe files it has no entry for,
run again; their entries replace the old ones, the entries of files that no longer exist go, the
source references and the census are taken afresh, and `run.updated` says when and which files.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from verified.outcomes import CPU, CUDA
from verified.probing import probe_cache, runinfo, runner
from verified.sources import refscan

TEST_PINS = ["pytest==9.2.0", "pytest-timeout==2.4.0", "pytest-xdist==3.8.0", "ninja==1.13.2", "pyyaml==6.0.4",
             "numpy==2.4.6"]  # what the probes need besides torch: the same pins as requirements.txt


class MatrixError(RuntimeError):
    pass


def environment(version, venvs):
    """The Python of a venv holding torch==version, created on first use."""
    venv = Path(venvs) / f"torch-{version}"
    python = venv / "bin" / "python"
    wanted = [f"torch=={version}", *TEST_PINS]
    marker = venv / ".installed"
    if marker.is_file() and marker.read_text().split() == wanted:
        return python
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    proc = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *wanted],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or ["pip failed"])[-1]
        raise MatrixError(f"could not install torch=={version} into {venv}: {reason}\n"
                          f"Only versions available locally install without network; for others "
                          f"this machine needs access to the package index (PyPI).")
    marker.write_text("\n".join(wanted) + "\n")
    return python


def resolve_references(python, references, cache_dir):
    proc = subprocess.run([str(python), "-m", "verified.sources.resolver", str(cache_dir)],
                          input=json.dumps(references), capture_output=True, text=True,
                          env={"PYTHONPATH": str(runner.PROJECT_DIR), "PATH": "/usr/bin:/bin"})
    if proc.returncode != 0:
        raise MatrixError(f"resolving source references with {python} failed:\n{proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout)


def take_census(python):
    proc = subprocess.run([str(python), "-m", "verified.releases.census"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(runner.PROJECT_DIR)))
    if proc.returncode != 0:
        raise MatrixError(f"the API census with {python} failed:\n{proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout)


def record(version, root, probe_dirs=("probes",), docs="docs", results_dir="results", venvs=".venvs", echo=print,
           python=None):
    """Record one run: with `python` None, in the environment of torch==`version` (made on
    first use); else with that Python and the torch it has, as it is (the GPU machine)."""
    root = Path(root)
    python = shutil.which(python) or python if python else environment(version, root / venvs)
    echo(f"torch {version or 'as installed'}: running probes with {python}")
    with tempfile.TemporaryDirectory() as work:
        results = runner.run_probes(str(python), [root / d for d in probe_dirs], root, Path(work) / "r.json",
                                    echo=echo)
    pages = refscan.site_references(root / docs)
    resolved = resolve_references(python, list(pages), root / "_build" / "matrix-cache")
    for item in resolved:
        item["pages"] = pages[item["ref"]]
    results["sources"] = resolved
    results["census"] = take_census(python)
    results["run"]["suite"] = runner.suite_digest([root / d for d in probe_dirs])
    device = CUDA if CUDA in results["run"]["devices"] else CPU
    out = root / results_dir / f"torch-{results['run']['torch']['version'].split('+')[0]}-{device}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1) + "\n")
    broken = sum(1 for s in resolved if s["status"] == "broken")
    echo(f"torch {version or results['run']['torch']['version']}: wrote {out} ({runner.summary(results)}; "
         f"{len(resolved)} source references, {broken} broken)")
    return out


def _git(root, *args):
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:
        raise MatrixError(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return [line for line in proc.stdout.splitlines() if line]


def changed_since(root, commit, folders):
    """The files under `folders` (relative paths) that differ from `commit`: committed since,
    changed in the work tree, or new and not ignored."""
    return set(_git(root, "diff", "--name-only", commit, "--", *folders)) | set(
        _git(root, "ls-files", "--others", "--exclude-standard", "--", *folders))


def files_to_rerun(root, results, probe_dirs=("probes",)):
    """The probe files of the suite whose entries in `results` may be out of date, in collection order."""
    root = Path(root)
    commit = results["run"].get("repository_commit")
    if not commit:
        raise MatrixError("this results file records no project commit: record it in full (without --changed-only)")
    changed = changed_since(root, commit, probe_dirs)
    recorded = {e["file"] for e in results["probes"]} | {e["nodeid"].split("::")[0]
                                                         for e in results.get("collection_errors", [])}

    def relative(path):
        return Path(path).resolve().relative_to(root.resolve()).as_posix()

    return [f for f in probe_cache.probe_files([root / d for d in probe_dirs])
            if relative(f) in changed or relative(f) not in recorded
            or any(relative(h) in changed for h in probe_cache.helper_files(f, root))]


def merged(old, new, rerun, suite):
    """`old` results with the entries of the files in `rerun` (relative paths) replaced by `new`'s,
    and the entries of files not in `suite` (relative paths of every probe file now) dropped."""
    def kept(entries, file_of):
        return [e for e in entries if file_of(e) in suite and file_of(e) not in rerun]
    files = sorted(suite)
    order = {f: i for i, f in enumerate(files)}
    probes = kept(old["probes"], lambda e: e["file"]) + new["probes"]
    errors = kept(old.get("collection_errors", []), lambda e: e["nodeid"].split("::")[0]) + new.get(
        "collection_errors", [])
    result = dict(old, probes=sorted(probes, key=lambda e: order.get(e["file"], len(order))),
                  collection_errors=errors)
    return result


def update(version, root, probe_dirs=("probes",), docs="docs", results_dir="results", venvs=".venvs", echo=print):
    """Bring results/torch-<version>-cpu.json up to date with the probes (--changed-only)."""
    root = Path(root)
    out = root / results_dir / f"torch-{version}-{CPU}.json"
    if not out.is_file():
        echo(f"torch {version}: no {out.name} yet, recording it in full")
        return record(version, root, probe_dirs, docs, results_dir, venvs, echo)
    if _git(root, "status", "--porcelain", "--", *probe_dirs):
        raise MatrixError("the probes have uncommitted changes: commit them first, so that the commit the "
                          "updated file records holds the probes it ran")
    old = json.loads(out.read_text())
    rerun = files_to_rerun(root, old, probe_dirs)
    python = environment(version, root / venvs)
    names = [Path(f).resolve().relative_to(root.resolve()).as_posix() for f in rerun]
    echo(f"torch {version}: running {len(rerun)} changed probe files with {python}")
    new = runner.run_probe_files(str(python), rerun, root, runner.describe_python(str(python)), echo=echo) \
        if rerun else {"probes": [], "collection_errors": []}
    suite = {Path(f).resolve().relative_to(root.resolve()).as_posix()
             for f in probe_cache.probe_files([root / d for d in probe_dirs])}
    results = merged(old, new, set(names), suite)
    pages = refscan.site_references(root / docs)
    resolved = resolve_references(python, list(pages), root / "_build" / "matrix-cache")
    for item in resolved:
        item["pages"] = pages[item["ref"]]
    results["sources"] = resolved
    results["census"] = take_census(python)
    results["run"] = dict(old["run"], suite=runner.suite_digest([root / d for d in probe_dirs]),
                          repository_commit=runinfo.repository_commit(root),
                          updated={"date": runinfo.now(), "from_commit": old["run"].get("repository_commit"),
                                   "files": names})
    out.write_text(json.dumps(results, indent=1) + "\n")
    echo(f"torch {version}: updated {out} ({len(names)} probe files run again; {runner.summary(results)})")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*", help="torch versions, e.g. 2.13.0 2.14.1")
    parser.add_argument("--python", help="record one run with this Python and its torch as installed, "
                                         "creating no environment (a machine with a GPU)")
    parser.add_argument("--out", default="results", help="the folder for the results files (default: results)")
    parser.add_argument("--changed-only", action="store_true",
                        help="update each version's results file: run again only the probe files changed since it "
                             "was recorded, and merge their entries in")
    args = parser.parse_args(argv)
    if bool(args.python) == bool(args.versions):
        parser.error("give torch versions, or --python, not both")
    failed = []
    for version in args.versions or [None]:
        try:
            if args.changed_only and version:
                update(version, Path.cwd(), results_dir=args.out)
            else:
                record(version, Path.cwd(), results_dir=args.out, python=args.python)
        except (MatrixError, runner.ProbeRunError, subprocess.CalledProcessError) as exc:
            print(f"error: torch {version}: {exc}", file=sys.stderr)
            failed.append(version)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
