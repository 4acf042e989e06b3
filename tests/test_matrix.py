"""The version matrix and the drift report, from small results fixtures (no second torch)."""
import json

import pytest

from verified.releases import matrix
from verified.sources import refscan


def run(version, outcomes, devices=("cpu",), sources=(), suite="s1"):
    """A results dict: `outcomes` maps claim id -> {device: outcome}."""
    probes = [{"nodeid": f"p.py::test_{cid}[{dev}]", "file": "p.py", "line": 1, "function": f"test_{cid}",
               "claims": [cid], "device": dev, "outcome": out, "message": f"{cid} broke" if out == "failed" else ""}
              for cid, per_device in outcomes.items() for dev, out in per_device.items()]
    return {"run": {"torch": {"version": version}, "devices": list(devices), "date": "d", "repository_commit": "c",
                    "suite": suite}, "probes": probes, "sources": list(sources)}


def source(ref, status="verified", line=10):
    return {"ref": ref, "status": status, "line": line, "url": "u", "reason": "r"}


@pytest.fixture
def recorded(tmp_path):
    old = run("2.13.0+cpu", {"a.x": {"cpu": "passed"}, "a.y": {"cpu": "passed"}, "b.z": {"cpu": "passed"}},
              sources=[source("f.h A", line=10), source("f.h B", line=20), source("g.py C")])
    new = run("2.14.1+cu130", {"a.x": {"cpu": "passed"}, "a.y": {"cpu": "failed"}, "a.new": {"cpu": "skipped"}},
              sources=[source("f.h A", line=12), source("f.h B", "broken", None), source("g.py C")])
    for name, data in (("torch-2.13.0-cpu.json", old), ("torch-2.14.1-cpu.json", new)):
        (tmp_path / name).write_text(json.dumps(data))
    return matrix.load_recorded(tmp_path)


def test_columns_are_ordered_by_version(recorded):
    assert [c.label for c in recorded] == ["2.13.0 cpu", "2.14.1 cpu"]


def test_missing_is_distinct_from_failed(recorded):
    cells = matrix.cells(["a.x", "a.y", "b.z", "a.new"], recorded)
    assert cells == {"a.x": ["passed", "passed"], "a.y": ["passed", "failed"], "b.z": ["passed", "missing"],
                     "a.new": ["missing", "not run"]}


def test_area_totals(recorded):
    totals = matrix.area_totals(["a.x", "a.y", "b.z"], recorded)
    assert totals == {"a": [{"passed": 2}, {"passed": 1, "failed": 1}], "b": [{"passed": 1}, {"missing": 1}]}


def test_source_changes_moved_and_vanished(recorded):
    changes = matrix.source_changes(*recorded)
    assert [(c["ref"], c["kind"], c["before"], c["after"]) for c in changes] == [
        ("f.h A", "moved", "verified L10", "verified L12"),
        ("f.h B", "vanished", "verified L20", "broken")]


def test_pairs_are_per_device():
    cpu_only = matrix.columns_of(run("2.13.0", {}), "a")
    both = matrix.columns_of(run("2.14.1", {}, devices=("cpu", "cuda")), "b")
    pairs = matrix.consecutive_pairs(cpu_only + both)
    assert [(o.label, n.label) for o, n in pairs] == [("2.13.0 cpu", "2.14.1 cpu")]


def test_not_a_results_file_names_the_file(tmp_path):
    (tmp_path / "torch-x.json").write_text('{"nothing": 1}')
    with pytest.raises(ValueError, match="torch-x.json: not a probe results file"):
        matrix.load_recorded(tmp_path)


def test_reference_scan_reads_roles_options_and_source_maps():
    page = """Text {src}`c10/core/TensorImpl.h TensorImpl` and {src}`the map <torch/x.py f>`.

:::{claim} a.b
:src: c10/a.h A; c10/b.h
Body {src}`c10/core/TensorImpl.h TensorImpl`.
:::

:::{source-map}
c10/c.h | C | what
aten/src/ATen/native/X.cpp | | kernels
:::
"""
    assert refscan.references_in(page) == ["c10/core/TensorImpl.h TensorImpl", "torch/x.py f", "c10/a.h A",
                                           "c10/b.h", "c10/c.h C", "aten/src/ATen/native/X.cpp"]


def test_the_matrix_shows_by_default_what_differs_newest_first(recorded):
    assert [matrix.differs_somewhere(c, recorded) for c in ("a.x", "a.y", "b.z")] == [False, True, False]
    assert [matrix.missing_somewhere(c, recorded) for c in ("a.x", "a.y", "b.z")] == [False, False, True]
    assert [c.label for c in matrix.newest_first(recorded)] == ["2.14.1 cpu", "2.13.0 cpu"]
