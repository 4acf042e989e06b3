"""`make bench`: the fast loop, measured side by side in one run on this checkout.

(a) a no-change `make html` against a no-change build of the same pages in plain Sphinx
    (the site's directives as plain containers, its roles as literals: verified.plain_markup;
    same Sphinx, MyST, theme and gallery), the two alternating so drift hits both alike;
(b) `make html` after appending a comment to one probe file, against the budget
    "no-change time + that file's probe time + 20 s", and which files it ran;
(c) the cold probe phase (an empty probe cache and fresh C++ extension builds) against
    the sum of the probe durations it reports, and each probe file's share of it.

It prints the figures, the ratios, and one line `bench: {json}`. A benchmark, not a test:
nothing here asserts, and `make test` never runs it.

    python -m verified.bench [--runs 5] [--probe probes/tensor/test_views.py] [--skip-cold]
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from verified.probing import runner

ROOT = Path(__file__).resolve().parent.parent
SPHINX = ["-m", "sphinx", "-b", "html", "-c", ".", "-W", "--keep-going", "-j", "auto", "docs"]  # as `make html`


def build(python, cwd, outdir, env=None):
    """(seconds, output) of one Sphinx build; a failed build stops the benchmark."""
    started = time.monotonic()
    proc = subprocess.run([python, *SPHINX, outdir], cwd=cwd, capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})))
    seconds = time.monotonic() - started
    if proc.returncode != 0:
        sys.exit(f"bench: the build in {cwd} failed:\n{(proc.stdout + proc.stderr)[-3000:]}")
    return seconds, proc.stdout + proc.stderr


def make_plain_site(target, root=ROOT):
    """Copy the site at `root` to `target` as a plain-Sphinx project of the same pages.

    The pages are copied as they are; ``verified.plain_markup`` takes the extension's place
    and shows its directives and roles as plain content (the gallery's captions too).
    """
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(root, target, ignore=shutil.ignore_patterns("_build", ".venv", ".venvs", ".git", "__pycache__",
                                                                 "results"))
    generated = target / "docs" / "gallery"  # sphinx-gallery's output: the plain build makes its own
    if generated.is_dir():
        shutil.rmtree(generated)
    conf = (root / "conf.py").read_text()
    if '"verified.sphinx_ext"' not in conf:
        sys.exit(f"bench: {root / 'conf.py'} does not load verified.sphinx_ext")
    (target / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT)!r})  # bench: the verified package\n"
        + conf.replace('"verified.sphinx_ext"', '"verified.plain_markup"'))


def median(values):
    return round(statistics.median(values), 3)


def no_change(python, runs, plain):
    """(a): medians of both no-change builds and their ratio, pair by pair."""
    build(python, ROOT, "_build/html")  # settle: whatever changed is built now
    build(python, plain, "_build/html")  # the plain site's first build runs its gallery
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(build(python, ROOT, "_build/html")[0])
        theirs.append(build(python, plain, "_build/html")[0])
    ratios = [a / b for a, b in zip(ours, theirs)]
    return {"make_html_s": median(ours), "plain_sphinx_s": median(theirs), "ratio": median(ratios),
            "ratio_min": round(min(ratios), 3), "ratio_max": round(max(ratios), 3)}


def touched_probe(python, probe, nochange_s):
    """(b): a build after appending a comment to `probe`; the file is restored afterwards."""
    path = ROOT / probe
    original = path.read_bytes()
    try:
        with open(path, "a") as handle:
            handle.write(f"# bench: touched at {time.time()}\n")
        seconds, output = build(python, ROOT, "_build/html")
    finally:
        path.write_bytes(original)
    build(python, ROOT, "_build/html")  # back to the cached state (its entry is still there)
    ran = re.search(r"probes: \d+ of \d+ file\(s\) changed or never ran, running them: (.*)", output)
    results = json.loads((ROOT / "_build/probes/results.json").read_text())
    probe_s = sum(e["duration"] for e in results["probes"] if e["file"] == probe)
    budget = nochange_s + probe_s + 20
    return {"file": probe, "make_html_s": round(seconds, 3), "ran": ran.group(1).split(", ") if ran else [],
            "file_probe_s": round(probe_s, 3), "budget_s": round(budget, 3),
            "ratio_to_budget": round(seconds / budget, 3)}


def cold_probes(python, work):
    """(c): every probe from an empty cache, timed, against the sum of the probe durations."""
    os.environ["VERIFIED_CPP_BUILD_DIR"] = str(work / "cpp-extensions")
    try:
        started = time.monotonic()
        run = runner.cached_probe_results(python, [ROOT / "probes"], ROOT, work / "probe-cache",
                                          echo=lambda line: None)
        seconds = time.monotonic() - started
    finally:
        del os.environ["VERIFIED_CPP_BUILD_DIR"]
    total = sum(e["duration"] for e in run.results["probes"])
    per_file = {}
    for entry in run.results["probes"]:
        per_file[entry["file"]] = per_file.get(entry["file"], 0.0) + entry["duration"]
    return {"phase_s": round(seconds, 3), "sum_of_probe_durations_s": round(total, 3),
            "ratio": round(seconds / total, 3), "workers": runner.worker_count(run.ran), "files": len(run.ran),
            "probes": len(run.results["probes"]),
            "file_s": {name: round(s, 2) for name, s in sorted(per_file.items(), key=lambda item: -item[1])}}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="pairs of no-change builds (a)")
    parser.add_argument("--probe", default="probes/tensor/test_views.py", help="the probe file touched in (b)")
    parser.add_argument("--skip-cold", action="store_true", help="leave out (c), which reruns every probe")
    args = parser.parse_args(argv)
    python = sys.executable
    summary = {"cores": runner.cores()}
    with tempfile.TemporaryDirectory(prefix="verified-bench-") as work:
        work = Path(work)
        make_plain_site(work / "plain")
        summary["no_change"] = a = no_change(python, args.runs, work / "plain")
        print(f"(a) no-change rebuild: make html {a['make_html_s']:.2f} s, plain Sphinx {a['plain_sphinx_s']:.2f} s "
              f"(medians of {args.runs}); ratio {a['ratio']:.2f} (min {a['ratio_min']:.2f}, max {a['ratio_max']:.2f})")
        summary["one_probe_touched"] = b = touched_probe(python, args.probe, a["make_html_s"])
        print(f"(b) after touching {b['file']}: make html {b['make_html_s']:.2f} s; "
              f"ran {', '.join(b['ran']) or 'nothing'} "
              f"({b['file_probe_s']:.2f} s of probes); budget {b['budget_s']:.2f} s; ratio {b['ratio_to_budget']:.2f}")
        if not args.skip_cold:
            summary["cold_probes"] = c = cold_probes(python, work)
            print(f"(c) cold probe phase: {c['phase_s']:.1f} s for {c['probes']} probes in {c['files']} files on "
                  f"{c['workers']} workers; sum of probe durations {c['sum_of_probe_durations_s']:.1f} s; "
                  f"ratio {c['ratio']:.2f}")
            print("    each file's probes, slowest first (seconds, summed over its probes):")
            for name, file_s in c["file_s"].items():
                print(f"    {file_s:7.1f}  {name}")
    print("bench: " + json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
