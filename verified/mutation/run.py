"""Mutate each check of each probe, one at a time, and see whether the probe then fails.

A probe that still passes with a check changed does not check it. The mutations:

- ``negate``: an ``assert X`` becomes ``assert not X``;
- ``boundary``: a comparison's ``<`` becomes ``<=`` (and back, and likewise ``>``), so an
  assert that never meets its bound shows;
- ``tolerance``: where the bound is a float (``err < 1e-6``, ``x <= 1e-4 * lr``), flipping
  ``<`` and ``<=`` changes nothing a measurement can see (an equivalent mutant), so the bound
  is made a million times tighter instead (an upper bound smaller, a lower bound larger): a
  tolerance far looser than what the probe measures survives;
- ``constant``: an integer a comparison names is off by one;
- ``no-raise``: the body of a ``pytest.raises`` / ``pytest.warns`` block becomes ``pass``, so
  the block must fail when nothing is raised or warned;
- ``match``: that block's ``match=`` is changed to a text no message has;
- in helper functions of the probe file (the code workers run) and in Python scripts a probe
  passes as a string (``-c`` children), the same mutations, kept with the probes that use them.

Each mutant is a copy of the probe file with the module-level code, the probe function(s)
concerned and that one change; the mutants of one folder run in one isolated probe run, and
with ``--cache`` a probe file's outcomes are kept until it, what it imports or its mutants
change (verified.mutation.cache). A mutant that
only ran on devices this machine lacks (CUDA) is "not run here", never "killed". A probe
function with no check at all is a defect of its own.

    python -m verified.mutation.run probes/module probes/guide/test_x.py
    make mutation MUTATE="probes/module probes/guide"     # cached in _build/mutation-cache
"""
import argparse
import ast
import copy
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from verified.mutation import cache as mutation_cache
from verified.outcomes import BAD, CPU, NOT_RUN_HERE, PASSED
from verified.probing import probe_cache, runner

CHECK_CALLS = {"raises", "warns", "fail", "deprecated_call"}  # pytest's; plus any call named assert*
NO_SUCH_MESSAGE = "mutated: a text no message has 7f3c"
BOUNDARY = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
TIGHTER = 1e-6  # a tolerance mutant multiplies an upper float bound by this (a lower one by 1 / this)


@dataclass
class Mutant:
    file: str       # the probe file it comes from
    line: int       # the line of the changed check
    function: str   # the function it was made in
    kind: str       # negate | boundary | constant | no-raise | match (+ " in script" inside a string)
    source: str     # the mutant probe file


# ---------------------------------------------------------------- where a check is

def _call_name(call):
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _is_expectation(item):
    """A `with pytest.raises(...)` / `pytest.warns(...)` item."""
    return isinstance(item.context_expr, ast.Call) and _call_name(item.context_expr) in ("raises", "warns")


def _script(node):
    """The parsed Python of a string constant holding asserts (a script run as a child), or None."""
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str) and "assert" in node.value):
        return None
    try:
        tree = ast.parse(node.value)
    except SyntaxError:
        return None
    return tree if any(isinstance(n, ast.Assert) for n in ast.walk(tree)) else None


def sites(tree):
    """(kind, line, path) of every mutable check in `tree`; a path locates it in a deep copy."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            found.append(("negate", node.lineno, node))
            for compare in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
                for index, op in enumerate(compare.ops):
                    if type(op) in BOUNDARY:
                        kind = "tolerance" if _float_bound(compare, index) else "boundary"
                        found.append((kind, compare.lineno, (compare, index)))
                for index, value in enumerate([compare.left, *compare.comparators]):
                    if isinstance(value, ast.Constant) and type(value.value) is int:
                        found.append(("constant", compare.lineno, (compare, index)))
        elif isinstance(node, (ast.With, ast.AsyncWith)) and any(_is_expectation(i) for i in node.items):
            found.append(("no-raise", node.lineno, node))
            for item in node.items:
                if _is_expectation(item) and any(k.arg == "match" for k in item.context_expr.keywords):
                    found.append(("match", node.lineno, item))
    return found


def _floats(node):
    return [n for n in ast.walk(node) if isinstance(n, ast.Constant) and type(n.value) is float and n.value]


def _float_bound(compare, index):
    """(the float constants of the bound, whether it is an upper bound) of comparison `index`,
    or None when neither side holds a non-zero float."""
    left, right = ([compare.left, *compare.comparators])[index:index + 2]
    below = isinstance(compare.ops[index], (ast.Lt, ast.LtE))  # left < right
    if _floats(right):
        return _floats(right), below
    if _floats(left):
        return _floats(left), not below
    return None


def _apply(kind, target):
    """Change the node `target` (in a copy) as `kind` says."""
    if kind == "negate":
        target.test = ast.UnaryOp(op=ast.Not(), operand=target.test)
    elif kind == "boundary":
        compare, index = target
        compare.ops[index] = BOUNDARY[type(compare.ops[index])]()
    elif kind == "tolerance":
        constants, upper = _float_bound(*target)
        for constant in constants:
            constant.value *= TIGHTER if upper else 1 / TIGHTER
    elif kind == "constant":
        compare, index = target
        value = compare.left if index == 0 else compare.comparators[index - 1]
        value.value += 1
    elif kind == "no-raise":
        target.body = [ast.Pass()]
    elif kind == "match":
        keyword = next(k for k in target.context_expr.keywords if k.arg == "match")
        keyword.value = ast.Constant(NO_SUCH_MESSAGE)


def _mutated_copies(function):
    """(kind, line, mutated copy of `function`) for each check in it, and in its scripts."""
    count = len(sites(function))
    for index in range(count):
        twin = copy.deepcopy(function)
        kind, line, target = sites(twin)[index]
        _apply(kind, target)
        yield kind, line, twin
    for position, node in enumerate(n for n in ast.walk(function) if _script(n)):
        script = _script(node)
        for index in range(len(sites(script))):
            twin = copy.deepcopy(function)
            holder = [n for n in ast.walk(twin) if _script(n)][position]
            inner = _script(holder)
            kind, line, target = sites(inner)[index]
            _apply(kind, target)
            holder.value = ast.unparse(ast.fix_missing_locations(inner))
            yield f"{kind} in script", node.lineno + line - 1, twin


# ---------------------------------------------------------------- which probes use what

def _module_functions(tree):
    return {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _module_values(tree):
    """Module-level names bound by assignment (a table of check functions a probe is
    parametrized with, say), to follow what a probe refers to through them."""
    return {t.id: n for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}


def _uses(function, functions, values=None):
    """The module-level functions `function` refers to (its decorators included), directly,
    through other functions or through module-level tables."""
    nodes = {**(values or {}), **functions}
    seen, todo = set(), [function]
    while todo:
        names = {n.id for n in ast.walk(todo.pop()) if isinstance(n, ast.Name)}
        for name in names & set(nodes) - seen:
            seen.add(name)
            todo.append(nodes[name])
    return seen & set(functions)


def has_check(function, functions, values=None):
    """Whether a probe checks anything: an assert, a raise, a pytest.raises/warns/fail, a call
    named assert*, in itself, a script it runs or a module-level function it uses."""
    for body in [function, *(functions[n] for n in _uses(function, functions, values))]:
        for node in ast.walk(body):
            if isinstance(node, (ast.Assert, ast.Raise)) or _script(node):
                return True
            if isinstance(node, ast.Call) and (_call_name(node) in CHECK_CALLS
                                               or _call_name(node).startswith("assert")):
                return True
    return False


def probe_functions(tree):
    return [n for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test_")]


def unchecked(probe_file):
    """(line, name) of each probe function that checks nothing."""
    tree = ast.parse(Path(probe_file).read_text())
    functions, values = _module_functions(tree), _module_values(tree)
    return [(p.lineno, p.name) for p in probe_functions(tree) if not has_check(p, functions, values)]


def mutants(probe_file):
    """Every Mutant of one probe file."""
    text = Path(probe_file).read_text()
    tree = ast.parse(text)
    functions, values = _module_functions(tree), _module_values(tree)
    probes = probe_functions(tree)
    users = {name: [p.name for p in probes if name in _uses(p, functions, values)] for name in functions}
    for function in functions.values():
        kept = [function.name] if function in probes else users[function.name]
        if not kept:
            continue  # a helper no probe uses
        for kind, line, twin in _mutated_copies(function):
            module = ast.parse(text)
            body = []
            for node in module.body:
                name = getattr(node, "name", None)
                if name == function.name:
                    body.append(twin)
                elif not (name in {p.name for p in probes} and name not in kept):  # other probes go
                    body.append(node)
            module.body = body
            yield Mutant(str(probe_file), line, function.name, kind, ast.unparse(ast.fix_missing_locations(module)))


# ---------------------------------------------------------------- running them

@dataclass
class Outcome:
    mutants: int
    killed: list
    survived: list    # (Mutant, outcomes) that passed on the CPU
    not_run: list     # Mutants whose probes only ran on devices this machine lacks
    unchecked: list   # (file, line, function) of probe functions with no check
    uncollected: list  # (Mutant, message) whose file did not import: a fault of the run, not a kill


def _targets(paths):
    """(folder, probe files) per given folder or file."""
    found = []
    for path in map(Path, paths):
        if path.is_file():
            found.append((path.parent, [path]))
        else:
            found.append((path, sorted(p for p in path.rglob("test_*.py") if "__pycache__" not in p.parts)))
    return found


KILLED, SURVIVED = "killed", "survived"  # a mutant's verdict, or NOT_RUN_HERE


def verdict_of(outcomes):
    """killed (a probe failed, errored, crashed or hung), survived (passed on the CPU), or not run here."""
    if set(BAD) & set(outcomes):
        return KILLED
    return SURVIVED if PASSED in outcomes else NOT_RUN_HERE


def _root_of(directory):
    """The root cache keys are relative to: the working directory, or the folder outside it."""
    cwd, directory = Path.cwd().resolve(), Path(directory).resolve()
    return cwd if directory == cwd or cwd in directory.parents else directory


def _mirror(directory, mirror):
    """Copy the files of `directory` other than probe files (conftest.py, helpers, C++ sources)."""
    for source in sorted(directory.rglob("*")):
        if source.is_file() and "__pycache__" not in source.parts and not source.name.startswith("test_"):
            target = mirror / source.relative_to(directory)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


def check(paths, python=sys.executable, echo=print, cache_dir=None):
    """Run every mutant of the probe files in `paths` (folders or files).

    Mutants are written into a mirror of each folder that also holds its other files
    (conftest.py, helper modules, C++ sources), so probes import as they do in place. They run
    one folder of probe files at a time, so a run that is stopped keeps the verdicts of the
    folders it finished. With `cache_dir`, a probe file whose verdicts are cached at its current
    key (verified.mutation.cache) is not run again.
    """
    info = runner.describe_python(python)
    identity, tooling = probe_cache.identity_of(info), probe_cache.tooling_digest()
    cache = mutation_cache.MutationCache(cache_dir) if cache_dir else None
    outcome = Outcome(0, [], [], [], [], [])
    batches, reused = {}, 0  # (target folder, probe files' folder) -> [(probe file, relpath, key, mutants)]
    for directory, probe_files in _targets(paths):
        root = _root_of(directory)
        for probe_file in probe_files:
            outcome.unchecked += [(str(probe_file), line, name) for line, name in unchecked(probe_file)]
            made = list(mutants(probe_file))
            outcome.mutants += len(made)
            name = probe_file.resolve().relative_to(root).as_posix()
            key = mutation_cache.key(probe_cache.file_key(probe_file, root, identity, tooling), made)
            try:
                kept = cache.load(name, key, made) if cache else None
            except probe_cache.BadEntry as exc:
                echo(f"mutation: discarded cache entry {cache.path_of(name, key)}: {exc}")
                cache.discard(name, key)
                kept = None
            if kept is None:
                batches.setdefault((directory, probe_file.parent), []).append((probe_file, name, key, made))
                continue
            reused += len(made)
            for mutant, outcomes in zip(made, kept):
                _count(outcome, mutant, outcomes)
    running = sum(len(m) for batch in batches.values() for *_, m in batch)
    echo(f"mutation: running {running} mutants" + (f"; {reused} more have a cached verdict (their probe files "
                                                    f"and what those import are unchanged since they ran)"
                                                    if cache else ""))
    for (directory, folder), files in batches.items():
        _run_batch(python, directory, folder, files, outcome, cache, echo)
    return outcome


def _count(outcome, mutant, outcomes):
    verdict = verdict_of(outcomes)
    {KILLED: outcome.killed, SURVIVED: outcome.survived, NOT_RUN_HERE: outcome.not_run}[verdict].append(
        mutant if verdict != SURVIVED else (mutant, outcomes))


def _run_batch(python, directory, folder, files, outcome, cache, echo):
    """Run the mutants of the probe files of one folder; count them, and cache complete files."""
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        mirror = work / f"m_{directory.name}"
        _mirror(directory, mirror)
        origin = {}  # mutant file, relative to work -> Mutant
        for probe_file, _, _, made in files:
            target_folder = mirror / probe_file.parent.relative_to(directory)
            target_folder.mkdir(parents=True, exist_ok=True)
            for mutant in made:
                target = target_folder / f"test_m{len(origin):05d}_{probe_file.stem.removeprefix('test_')}.py"
                target.write_text(mutant.source)
                origin[target.relative_to(work).as_posix()] = mutant
        echo(f"mutation: {folder}: {len(origin)} mutants of {len(files)} probe file(s)")
        results = runner.run_probes(python, [mirror], work, work / "results.json", echo=echo)
    by_file, lost, collection_errors = {}, set(), {}
    for entry in results["probes"]:
        by_file.setdefault(entry["file"], []).append(entry["outcome"])
        if entry["message"] == runner.LOST:
            lost.add(entry["file"])
    for error in results.get("collection_errors", []):
        collection_errors[error["nodeid"].split("::")[0]] = error["message"]
    names = iter(origin)
    for _probe_file, relpath, key, made in files:
        found, complete = [], True
        for mutant in made:
            name = next(names)
            if name in collection_errors:
                outcome.uncollected.append((mutant, collection_errors[name]))
                complete = False
                continue
            found.append(by_file.get(name, []))
            complete &= name not in lost
            _count(outcome, mutant, found[-1])
        if cache and complete:
            cache.store(relpath, key, results["run"].get("date", ""), made, found)


def summary(outcome):
    return (f"mutation: {outcome.mutants} mutants, {len(outcome.killed)} killed, "
            f"{len(outcome.survived)} survived on {CPU}, {len(outcome.not_run)} {NOT_RUN_HERE}"
            + (f", {len(outcome.uncollected)} not collected" if outcome.uncollected else ""))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=["probes"], help="probe folders or files (default: probes)")
    parser.add_argument("--cache", metavar="DIR", help="keep each probe file's verdicts here, and reuse them "
                                                       "while the file and what it imports are unchanged")
    args = parser.parse_args(argv)
    runner.exit_on_terminate()
    outcome = check(args.paths, cache_dir=args.cache)
    for mutant, outcomes in outcome.survived:
        print(f"{mutant.file}:{mutant.line}: {mutant.function}: the {mutant.kind} mutant still passes ({outcomes})")
    for probe_file, line, function in outcome.unchecked:
        print(f"{probe_file}:{line}: {function} checks nothing (no assert, raise, pytest.raises or pytest.warns)")
    for mutant, message in outcome.uncollected:
        last = message.strip().splitlines()[-1] if message.strip() else ""
        print(f"{mutant.file}:{mutant.line}: {mutant.function}: the {mutant.kind} mutant's file did not import: {last}")
    print(summary(outcome))
    return 1 if outcome.survived or outcome.unchecked or outcome.uncollected else 0


if __name__ == "__main__":
    sys.exit(main())
