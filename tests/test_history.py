"""A claim across recorded releases (verified.releases.history), the what-changed steps
(verified.releases.changes) and the API census diff, from small results fixtures."""
import pytest

from verified.claims import Claim
from verified.releases import census, changes, history, matrix


def column(version, outcomes, census_data=None, source=None):
    """One CPU column; `outcomes` maps claim id -> (outcome, message)."""
    probes = [{"nodeid": f"p.py::test_{cid}[cpu]", "file": "p.py", "line": 1, "function": f"test_{cid}",
               "claims": [cid], "device": "cpu", "outcome": out, "message": message}
              for cid, (out, message) in outcomes.items()]
    results = {"run": {"torch": {"version": version}, "devices": ["cpu"], "suite": "s"}, "probes": probes,
               "sources": []}
    if census_data is not None:
        results["census"] = census_data
    return matrix.columns_of(results, source or f"torch-{version.split('+')[0]}-cpu.json")[0]


PASS = ("passed", "")
ASSERT = ("failed", "AssertionError: assert 'old text' == 'new text'")
MISSING_API = ("failed", "AttributeError: module 'torch' has no attribute '_tensor_iterator'")
UNKNOWN_KWARG = ("failed", "TypeError: grad() got an unexpected keyword argument 'materialize_grads'")
BOUNDED = ("not applicable", "not applicable: torch 2.10.0 is outside >=2.11")


@pytest.mark.parametrize("outcome, expected", [
    (PASS, "holds"), (ASSERT, "differs"), (MISSING_API, "absent"), (UNKNOWN_KWARG, "absent"),
    (("failed", "Failed: DID NOT RAISE <class 'RuntimeError'>"), "differs"),
    (("error", "fixture 'device' not found"), "probe error"),
    (("failed", "AttributeError: 'NoneType' object has no attribute 'group'"), "probe error"), (("crashed", "SIGSEGV"), "probe error"),
    (BOUNDED, "not applicable"),
])
def test_a_failure_is_told_apart_as_differs_absent_or_a_broken_probe(outcome, expected):
    found, _ = history.verdict(column("2.10.0", {"c": outcome}).by_claim["c"], "cpu")
    assert found == expected


def test_since_is_the_start_of_the_unbroken_run_up_to_the_newest():
    columns = [column("2.9.1+cu128", {"c": MISSING_API}), column("2.10.0+cu128", {"c": PASS}),
               column("2.11.0+cu130", {"c": ASSERT}), column("2.12.1+cu130", {"c": PASS}),
               column("2.13.0+cpu", {"c": PASS})]
    steps = history.claim_history("c", columns)
    assert [s["verdict"] for s in steps] == ["absent", "holds", "differs", "holds", "holds"]
    assert history.since(steps) == "2.12.1"
    line = history.history_line(steps)
    assert line.startswith("Since 2.12.1; 2.9.1: absent (AttributeError: module 'torch' has no attribute")
    assert "2.11.0: differs (AssertionError: assert 'old text' == 'new text')" in line


def test_history_lines_for_always_never_and_not_applicable():
    always = history.claim_history("c", [column("2.9.1", {"c": PASS}), column("2.14.1", {"c": PASS})])
    assert history.since(always) == "2.9.1" and history.history_line(always) == \
        "Holds on 2.9.1–2.14.1 (every recorded release)."
    broken_now = history.claim_history("c", [column("2.9.1", {"c": PASS}), column("2.14.1", {"c": ASSERT})])
    assert history.since(broken_now) is None and history.history_line(broken_now).startswith(
        "Does not hold on 2.14.1; 2.14.1: differs")
    cuda_only = history.claim_history("c", [column("2.9.1", {"c": ("not applicable", "")})])
    assert history.history_line(cuda_only) == "No recorded CPU run applies to it."
    assert history.claim_history("gone", [column("2.9.1", {})])[0]["verdict"] == matrix.MISSING


def test_one_column_per_release_prefers_the_runs_own_device_file():
    gpu_run = matrix.columns_of({"run": {"torch": {"version": "2.11.0+cu130"}, "devices": ["cpu", "cuda"]},
                                 "probes": []}, "torch-2.11.0-cuda.json")
    cpu_run = column("2.11.0+cu130", {}, source="torch-2.11.0-cpu.json")
    older = column("2.10.0+cu128", {})
    chosen = matrix.one_per_release(gpu_run + [cpu_run, older], "cpu")
    assert [(c.torch, c.source) for c in chosen] == [("2.10.0+cu128", "torch-2.10.0-cpu.json"),
                                                     ("2.11.0+cu130", "torch-2.11.0-cpu.json")]


def test_a_step_lists_behaviour_first_and_keeps_build_flavour_apart():
    claims = [Claim("a.starts", "p", "p.md", 1, "Starts."), Claim("a.stops", "p", "p.md", 2, "Stops."),
              Claim("a.flavour", "p", "p.md", 3, "NCCL is absent.", flavour_dependent=True),
              Claim("a.same", "p", "p.md", 4, "Same."),
              Claim("a.internal", "p", "p.md", 5, "A file name.", not_user_visible="internal detail: a file name"),
              Claim("a.cpu-wheel", "p", "p.md", 6, "About a CPU-only build.")]
    older = column("2.12.1+cu130", {"a.starts": MISSING_API, "a.stops": PASS, "a.flavour": ASSERT, "a.same": PASS,
                                    "a.internal": PASS, "a.cpu-wheel": ("skipped", "not run here: a CPU-only build")})
    newer = column("2.13.0+cpu", {"a.starts": PASS, "a.stops": ASSERT, "a.flavour": PASS, "a.same": PASS,
                                  "a.internal": ASSERT, "a.cpu-wheel": PASS})
    step = changes.step(claims, older, newer)
    assert (step["from_flavour"], step["to_flavour"]) == ("CUDA 13.0 wheel", "CPU wheel")
    assert [(c["claim"], c["kind"], c["before"], c["after"]) for c in step["claims"]] == [
        ("a.starts", "starts holding", "absent", "holds"), ("a.stops", "stops holding", "holds", "differs"),
        ("a.flavour", "build flavour", "differs", "holds"), ("a.internal", "not user-visible", "holds", "differs"),
        ("a.cpu-wheel", "build flavour", "not run", "holds")]
    assert step["claims"][3]["reason"] == "internal detail: a file name"
    assert changes.tally(step["claims"]) == {"starts holding": 1, "stops holding": 1, "changed": 0,
                                             "build flavour": 2, "not user-visible": 1}
    assert step["census"] is None and step["pairs"] == []


def test_a_claim_declared_only_for_other_releases_is_no_change():
    claims = [Claim("a.pinned", "p", "p.md", 1, "In 2.13, 3110."),
              Claim("a.fails-where-declared", "p", "p.md", 2, "X.")]
    older = column("2.13.0+cpu", {"a.pinned": PASS, "a.fails-where-declared": BOUNDED})
    newer = column("2.14.1+cpu", {"a.pinned": BOUNDED, "a.fails-where-declared": ASSERT})
    assert [(c["claim"], c["kind"]) for c in changes.step(claims, older, newer)["claims"]] == [
        ("a.fails-where-declared", "changed")]  # declared for 2.14.1 and false there: still shown


def test_a_pair_of_bounded_claims_is_the_change_of_its_step_only():
    claims = [Claim("a.until", "p", "p.md", 1, "Until 2.13, clamp passes 1.", api="torch.clamp"),
              Claim("a.since", "p", "p.md", 2, "Since 2.14, clamp passes 0.", replaces="a.until")]
    columns = [column("2.12.1+cpu", {"a.until": PASS, "a.since": BOUNDED}),
               column("2.13.0+cpu", {"a.until": PASS, "a.since": BOUNDED}),
               column("2.14.1+cpu", {"a.until": BOUNDED, "a.since": PASS})]
    found = changes.steps(claims, columns)
    assert [(s["from_version"], s["to_version"]) for s in found] == [("2.13.0", "2.14.1"), ("2.12.1", "2.13.0")]
    assert found[0]["pairs"] == [{"api": "torch.clamp", "before": "a.until", "after": "a.since"}]
    assert found[0]["claims"] == [] and found[1]["pairs"] == [] and found[1]["claims"] == []
    broken = [column("2.13.0+cpu", {"a.until": PASS, "a.since": BOUNDED}),
              column("2.14.1+cpu", {"a.until": BOUNDED, "a.since": ASSERT})]
    step = changes.steps(claims, broken)[0]
    assert step["pairs"] == [] and [c["claim"] for c in step["claims"]] == ["a.since"]  # a side that fails shows


def test_measured_figures_that_moved_and_the_history_line_that_shows_them():
    def with_figure(version, value):
        col = column(version, {"a.count": PASS})
        col.results["probes"][0]["measured"] = {"aten operators": value}
        return col
    columns = [with_figure("2.13.0+cpu", 3110), with_figure("2.14.1+cpu", 3113)]
    claims = [Claim("a.count", "p", "p.md", 1, "Over 3000.")]
    assert changes.steps(claims, columns)[0]["measured"] == [
        {"claim": "a.count", "name": "aten operators", "before": 3110, "after": 3113}]
    line = history.history_line(history.claim_history("a.count", columns))
    assert line == ("Holds on 2.13.0–2.14.1 (every recorded release). Measured per release (a figure, not a "
                    "claim): aten operators: 3110 (2.13.0), 3113 (2.14.1).")


def test_a_not_applicable_release_says_so_once():
    steps = history.claim_history("c", [column("2.10.0", {"c": BOUNDED}), column("2.11.0", {"c": PASS})])
    assert steps[0]["message"] == "torch 2.10.0 is outside >=2.11"
    assert history.history_line(steps) == ("Holds on every recorded release it is declared for (2.11.0); "
                                           "2.10.0: not applicable (torch 2.10.0 is outside >=2.11).")
    assert history.short_line(steps) == "Holds on 2.11.0, the recorded releases it is declared for."


def test_pair_problems_name_the_claim():
    from verified.claims import pair_problems
    claims = [Claim("a.until", "p", "p.md", 1, "Until.", api="torch.clamp"),
              Claim("a.since", "p", "p.md", 5, "Since.", replaces="a.until"),
              Claim("a.self", "p", "p.md", 9, "Self.", replaces="a.self", api="x"),
              Claim("a.no-api", "p", "p.md", 12, "No API.", replaces="a.other"),
              Claim("a.other", "p", "p.md", 15, "Other."),
              Claim("a.hidden", "p", "p.md", 18, "Hidden.", replaces="a.until", not_user_visible="internal")]
    found = [(p.line, p.kind, p.message) for p in pair_problems(claims)]
    assert found == [
        (9, "change-pair", "claim 'a.self' :replaces: 'a.self', which is not another claim of the site"),
        (12, "change-pair", "claim 'a.no-api' replaces 'a.other' but neither says which API changed (:api:)"),
        (18, "change-pair", "claim 'a.hidden' is a side of a before/after pair, which is a user-visible change, "
                            "and says :not-user-visible:")]


def test_census_diff_names_keys_operators_schemas_warnings_and_defaults():
    old = {"dispatch_keys": ["CPU", "XLA"], "aten_schemas": {"add.Tensor": "aten::add.Tensor(Tensor self) -> Tensor",
                                                              "gone": "aten::gone() -> ()"},
           "warnings": {"torch.jit.script(a function)": "none"}, "defaults": {"torch.load(weights_only=)": "False"}}
    new = {"dispatch_keys": ["CPU", "MTIA"],
           "aten_schemas": {"add.Tensor": "aten::add.Tensor(Tensor self, *, Scalar alpha=1) -> Tensor",
                            "new": "aten::new() -> ()"},
           "warnings": {"torch.jit.script(a function)": "DeprecationWarning: `torch.jit.script` is deprecated."},
           "defaults": {"torch.load(weights_only=)": "None"}}
    found = census.diff(old, new)
    assert found["dispatch_keys"] == {"added": ["MTIA"], "removed": ["XLA"]}
    ops = found["operators"]
    assert (ops["before"], ops["after"], ops["added"], ops["removed"]) == (2, 2, ["new"], ["gone"])
    assert [c["name"] for c in ops["changed"]] == ["add.Tensor"]
    assert found["warnings"] == [{"item": "torch.jit.script(a function)", "before": "none",
                                  "after": "DeprecationWarning: `torch.jit.script` is deprecated."}]
    assert found["defaults"] == [{"item": "torch.load(weights_only=)", "before": "False", "after": "None"}]
    step = changes.step([], column("2.9.1", {}, old), column("2.10.0", {}, new))
    assert step["census"] == found


def test_the_census_of_the_installed_torch_has_every_part():
    taken = census.census()
    assert "CPU" in taken["dispatch_keys"] and "AutogradCPU" in taken["dispatch_keys"]
    assert taken["aten_schemas"]["add.Tensor"].startswith("aten::add.Tensor(Tensor self, Tensor other")
    assert set(taken["warnings"]) == set(census.CALLS) and set(taken["defaults"]) == {
        f"{m}.{a}({arg}=)" for m, a, arg in census.DEFAULTS}
    assert taken["defaults"]["torch.nn.Module.load_state_dict(strict=)"] == "True"
    assert taken["warnings"]["Tensor.storage()"].startswith("UserWarning: TypedStorage is deprecated")


def test_the_changes_page_says_a_sentence_and_a_report_once():
    from verified.site.render_changes import first_sentence, reported
    statement = ('From 2.10, `script` emits "`torch.jit.script` is deprecated. Please switch". It works. '
                 "More.\n\nA second paragraph.")
    assert first_sentence(statement) == 'From 2.10, `script` emits "`torch.jit.script` is deprecated. Please switch".'
    assert first_sentence("x" * 300).endswith("…") and len(first_sentence("x" * 300)) == 240
    assert reported("not applicable", "not applicable: torch 2.14.1 is outside ==2.13.0") == \
        "torch 2.14.1 is outside ==2.13.0"
    assert reported("differs", "AssertionError: assert 0.0 == 1.0") == "AssertionError: assert 0.0 == 1.0"


def test_folded_headings_count_in_the_singular_and_the_plural():
    from verified.site.render_changes import counted
    assert counted(1, "statement", "statements") == "1 statement"
    assert counted(6, "statement", "statements") == "6 statements"
