"""Flip each assertion of each probe, one at a time, and check that the probe then fails.

A probe that still passes with one of its assertions negated asserts nothing there. Each
mutant is a copy of the probe file that keeps the module-level code, one probe function,
and that function's one negated `assert`; all mutants run in one isolated probe run.

    python -m verified.mutation probes/tensor     (or: make mutation)
"""
import argparse
import ast
import shutil
import sys
import tempfile
from pathlib import Path

from verified import runner

FAILING = {"failed", "error", "crashed", "timeout"}


class _Negate(ast.NodeTransformer):
    def __init__(self, target):
        self.target, self.seen = target, -1

    def visit_Assert(self, node):
        self.seen += 1
        if self.seen == self.target:
            node.test = ast.UnaryOp(op=ast.Not(), operand=node.test)
        return node


def mutants(probe_file):
    """(function name, assert line, mutant source) for every assert in every probe function."""
    tree = ast.parse(Path(probe_file).read_text())
    probes = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
    for probe in probes:
        asserts = [n for n in ast.walk(probe) if isinstance(n, ast.Assert)]
        for index, statement in enumerate(asserts):
            module = ast.parse(Path(probe_file).read_text())
            module.body = [n for n in module.body
                           if not (isinstance(n, ast.FunctionDef) and n.name.startswith("test_") and n.name != probe.name)]
            _Negate(index).visit(next(n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == probe.name))
            yield probe.name, statement.lineno, ast.unparse(ast.fix_missing_locations(module))


def check(probe_dirs, python=sys.executable, echo=print):
    """Run every mutant; returns the (file, line, function, outcomes) of those that survived.

    Mutants are written into a mirror of each probe folder that also holds the folder's
    other files (conftest.py, helper modules, C++ sources), so probes import as they do
    in place.
    """
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        origin = {}
        for directory in map(Path, probe_dirs):
            mirror = work / directory.name
            for source in sorted(directory.rglob("*")):
                if source.is_file() and "__pycache__" not in source.parts and not source.name.startswith("test_"):
                    target = mirror / source.relative_to(directory)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(source, target)
            for probe_file in sorted(directory.rglob("test_*.py")):
                folder = mirror / probe_file.parent.relative_to(directory)
                folder.mkdir(parents=True, exist_ok=True)
                for function, line, source in mutants(probe_file):
                    target = folder / f"test_m{len(origin):04d}_{probe_file.stem.removeprefix('test_')}.py"
                    target.write_text(source)
                    origin[target.relative_to(work).as_posix()] = (str(probe_file), line, function)
        echo(f"mutation: {len(origin)} flipped assertions")
        results = runner.run_probes(python, sorted({work / Path(d).name for d in probe_dirs}), work,
                                    work / "results.json", echo=echo)
        by_file = {}
        for entry in results["probes"]:
            by_file.setdefault(entry["file"], []).append(entry["outcome"])
        survivors = []
        for name, (probe_file, line, function) in origin.items():
            outcomes = by_file.get(name, [])
            if not FAILING & set(outcomes):
                survivors.append((probe_file, line, function, outcomes))
        return len(origin), survivors


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("probe_dirs", nargs="*", default=["probes"])
    args = parser.parse_args(argv)
    total, survivors = check(args.probe_dirs)
    for probe_file, line, function, outcomes in survivors:
        print(f"{probe_file}:{line}: {function} still passes with this assertion negated ({outcomes})")
    print(f"mutation: {total - len(survivors)} of {total} flipped assertions made their probe fail")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
