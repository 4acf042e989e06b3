"""The results contract (verified.outcomes) is the one spelling of outcomes and devices."""
import ast
import json
from pathlib import Path

import pytest

from verified import outcomes

PACKAGE = Path(outcomes.__file__).parent
NAMES = set(outcomes.ENTRY_OUTCOMES) | set(outcomes.CLAIM_OUTCOMES)


def literals(node):
    """The string constants of `node`, looking into a tuple, list or set."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [value for element in node.elts for value in literals(element)]
    return []


def spelled_outcomes(path):
    """(line, text) of each outcome name written as a literal in a comparison, and of each
    literal tuple, list or set holding two or more of them (a group spelled again)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                found += [(node.lineno, text) for text in literals(side) if text in NAMES]
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            named = [text for text in literals(node) if text in NAMES]
            if len(named) >= 2:
                found.append((node.lineno, ", ".join(named)))
    return found


@pytest.mark.parametrize("path", sorted(p for p in PACKAGE.rglob("*.py")
                                        if p.name != "outcomes.py"), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_module_spells_an_outcome_of_its_own(path):
    assert spelled_outcomes(path) == []


def test_the_scan_finds_what_it_looks_for(tmp_path):
    probe = tmp_path / "m.py"
    probe.write_text('if x == "passed" or y in ("skipped", "not applicable") or "error" in z:\n    pass\n'
                     'GROUP = {"failed", "crashed"}\nONE = ("timeout",)\n')
    assert sorted(spelled_outcomes(probe)) == [(1, "error"), (1, "not applicable"), (1, "passed"), (1, "skipped"),
                                               (1, "skipped, not applicable"), (3, "failed, crashed")]


def test_groups():
    assert outcomes.BAD == ("crashed", "timeout", "error", "failed")  # worst first: a claim takes the worst
    assert set(outcomes.ENTRY_OUTCOMES) == {outcomes.PASSED, *outcomes.BAD, *outcomes.NOT_CHECKED}
    assert set(outcomes.LABELS) == set(outcomes.CLAIM_OUTCOMES)
    assert outcomes.LABELS[outcomes.NOT_RUN] == outcomes.NOT_RUN_HERE == "not run here"


def schema(name):
    return json.loads((PACKAGE / "schemas" / f"{name}.schema.json").read_text())


def test_results_schema_enums_are_the_contract():
    entry = schema("results")["properties"]["probes"]["items"]["properties"]
    assert set(entry["outcome"]["enum"]) == set(outcomes.ENTRY_OUTCOMES)
    assert len(entry["outcome"]["enum"]) == len(outcomes.ENTRY_OUTCOMES)
    assert entry["device"]["enum"] == list(outcomes.DEVICES)
    assert schema("results")["properties"]["run"]["properties"]["devices"]["items"]["enum"] == list(outcomes.DEVICES)


def test_verification_schema_enums_are_the_contract():
    defs = schema("verification")["$defs"]
    assert set(defs["outcome"]["enum"]) == set(outcomes.CLAIM_OUTCOMES)
    assert len(defs["outcome"]["enum"]) == len(outcomes.CLAIM_OUTCOMES)
    assert defs["per_device"]["required"] == list(outcomes.DEVICES)
