"""verification.json and the results files against the JSON Schemas the site serves."""
import copy
import json

import jsonschema
import pytest
from conftest import REPO

SCHEMAS = REPO / "verified" / "schemas"


def validator(name):
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("path", sorted((REPO / "results").glob("*.json")), ids=lambda p: p.name)
def test_every_recorded_results_file_follows_the_schema(path):
    errors = list(validator("results").iter_errors(json.loads(path.read_text())))
    assert not errors, [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:5]]


def test_the_schema_rejects_what_the_format_does_not_allow():
    results = json.loads(sorted((REPO / "results").glob("*.json"))[0].read_text())
    bad = copy.deepcopy(results)
    bad["probes"][0]["outcome"] = "verified"  # a label, not an outcome
    assert not validator("results").is_valid(bad)
    del bad["run"]
    assert not validator("results").is_valid(bad)


def test_failed_at_is_optional_and_checked():
    results = json.loads(sorted((REPO / "results").glob("*.json"))[0].read_text())
    entry = results["probes"][0]
    entry["failed_at"] = {"file": entry["file"], "line": 12}
    assert validator("results").is_valid(results)
    entry["failed_at"] = {"file": entry["file"], "line": 0}
    assert not validator("results").is_valid(results)


def test_a_build_serves_both_schemas_and_follows_them(good_site):
    html = good_site.root / "_build/html"
    for name in ("verification", "results"):
        assert json.loads((html / f"{name}.schema.json").read_text()) == \
            json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    report = json.loads((html / "verification.json").read_text())
    errors = list(validator("verification").iter_errors(report))
    assert not errors, [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:5]]
    results = json.loads((good_site.root / "_build/probes/results.json").read_text())
    assert validator("results").is_valid(results)
    report["claims"][0]["outcome"]["cpu"] = "verified"
    assert not validator("verification").is_valid(report)
