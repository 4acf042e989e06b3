"""Outcome aggregation and the problems that fail a build, without Sphinx."""
import pytest

from verified import claims as c


def entry(outcome, device="cpu", claims=("a.b",), function="test_x", message=""):
    return {"nodeid": f"p/test_a.py::{function}[{device}]", "file": "p/test_a.py", "line": 3,
            "function": function, "claims": list(claims), "device": device, "outcome": outcome,
            "message": message}


def results(*entries, devices=("cpu",), errors=()):
    return {"run": {"devices": list(devices)}, "probes": list(entries), "collection_errors": list(errors)}


CLAIM = c.Claim("a.b", "page", "docs/page.md", 7, "A is B.")


@pytest.mark.parametrize("outcomes, expected", [
    (["passed", "passed"], "passed"),
    (["passed", "skipped"], "not run"),
    (["skipped", "failed"], "failed"),
    (["failed", "error"], "error"),
    (["timeout", "error"], "timeout"),
    (["failed", "crashed", "timeout"], "crashed"),
    ([], "not applicable"),
])
def test_outcome_is_the_worst_of_all_probes(outcomes, expected):
    assert c.outcome([entry(o) for o in outcomes], "cpu") == expected


def test_outcome_is_per_device():
    entries = [entry("passed", "cpu"), entry("skipped", "cuda")]
    assert c.outcomes(entries) == {"cpu": "passed", "cuda": "not run"}


def test_verified_claim_has_no_problem():
    assert c.problems({"a.b": CLAIM}, results(entry("passed"), entry("skipped", "cuda"))) == []


def test_skipped_on_a_present_device_is_unchecked():
    found = c.problems({"a.b": CLAIM}, results(entry("skipped"), entry("passed", "cuda"), devices=("cpu", "cuda")))
    assert [str(p) for p in found] == [
        "docs/page.md:7: claim 'a.b' is unchecked on cpu, which this machine has: skipped p/test_a.py::test_x[cpu]"]


def test_cuda_not_run_on_a_cpu_machine_is_fine():
    assert c.problems({"a.b": CLAIM}, results(entry("skipped", "cuda"), devices=("cpu",))) == []


def test_failure_names_claim_probe_and_first_message_line():
    found = c.problems({"a.b": CLAIM}, results(entry("failed", message="AssertionError: no\nmore")))
    assert [str(p) for p in found] == [
        "docs/page.md:7: claim 'a.b' failed on cpu: p/test_a.py::test_x[cpu] (p/test_a.py:3): AssertionError: no"]


def test_failure_names_the_line_that_failed_when_the_entry_has_it():
    failed = dict(entry("failed", message="AssertionError: no"), failed_at={"file": "p/test_a.py", "line": 5})
    errored = dict(entry("error", "cuda", message="RuntimeError: fixture"), failed_at={"file": "p/conftest.py",
                                                                                       "line": 9})
    found = c.problems({"a.b": CLAIM}, results(failed, errored, devices=("cpu", "cuda")))
    assert [str(p) for p in found] == [
        "docs/page.md:7: claim 'a.b' failed on cpu: p/test_a.py::test_x[cpu] (p/test_a.py:3, failed at "
        "p/test_a.py:5): AssertionError: no",
        "docs/page.md:7: claim 'a.b' error on cuda: p/test_a.py::test_x[cuda] (p/test_a.py:3, failed at "
        "p/conftest.py:9): RuntimeError: fixture"]


def test_missing_probe_unknown_claim_and_unmarked_probe():
    found = c.problems({"a.b": CLAIM}, results(entry("passed", claims=("a.c",)), entry("passed", claims=(),
                                                                                          function="test_y")))
    assert [str(p) for p in found] == [
        "p/test_a.py:3: probe test_x names unknown claim 'a.c'",
        "p/test_a.py:3: probe test_y names no claim (add @pytest.mark.claim)",
        "docs/page.md:7: claim 'a.b' has no probe",
    ]


def test_unknown_claim_reported_once_across_devices():
    found = c.problems({}, results(entry("passed", "cpu", ("z.z",)), entry("skipped", "cuda", ("z.z",))))
    assert len(found) == 1


def test_collection_error_is_a_problem():
    found = c.problems({}, results(errors=[{"nodeid": "p/test_b.py", "message": "ImportError: x"}]))
    assert [str(p) for p in found] == ["p/test_b.py: probe file could not be collected: ImportError: x"]


def test_duplicates():
    twin = c.Claim("a.b", "other", "docs/other.md", 2, "Again.")
    assert [str(p) for p in c.duplicates([CLAIM, twin])] == [
        "docs/page.md:7: duplicate claim ID 'a.b' (first at docs/other.md:2)"]


@pytest.mark.parametrize("claim_id, ok", [
    ("tensor.view.shares-storage", True), ("a.b", True), ("tensor", False), ("Tensor.view", False),
    ("tensor..view", False), ("tensor.view_x", False), ("tensor.-x", False),
])
def test_claim_id_rules(claim_id, ok):
    assert (c.check_claim_id(claim_id) is None) == ok


def test_every_problem_the_tooling_makes_has_a_known_kind():
    """Each Problem(...) and record_problem(...) call in verified/ ends with a kind from PROBLEM_KINDS,
    which the build shows as the warning subtype [verified.<kind>]."""
    import ast
    from pathlib import Path

    from verified import claims
    kinds = []
    for path in sorted((Path(claims.__file__).parent).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                    "Problem", "record_problem"):
                last = node.args[-1]
                if isinstance(last, ast.Name) and last.id == "kind":
                    continue  # record_problem passing its own argument on
                assert isinstance(last, ast.Constant), f"{path.name}:{node.lineno}: no literal kind"
                kinds.append(last.value)
    assert len(kinds) >= 20 and set(kinds) <= set(claims.PROBLEM_KINDS), set(kinds) - set(claims.PROBLEM_KINDS)
