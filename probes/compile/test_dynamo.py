"""Probes for docs/compile/dynamo.md."""
import warnings

import pytest
import torch
import torch._dynamo
from torch._C._dynamo import eval_frame as c_eval_frame


class CountingBackend:
    """A Dynamo backend that records each graph it is given and runs it unchanged."""

    def __init__(self):
        self.graphs = []
        self.example_inputs = []

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        self.example_inputs.append(example_inputs)
        return gm.forward


def times_two(x):
    return x * 2


def double_plus_one(x):
    return x * 2 + 1


def with_print(x):
    y = x.sin()
    print("inside the compiled function")
    return y.cos() + 1


def add_one(x):
    return x + 1


K = 3


def times_global(x):
    return x * K


def compiled_once(fn, x, **options):
    """Compile fn with the eager backend, call it once on x, and return its one cache entry."""
    torch._dynamo.reset()
    torch.compile(fn, backend="eager", **options)(x)
    (entry,) = c_eval_frame._debug_get_cache_entry_list(fn.__code__)
    return entry


@pytest.mark.claim("compile.dynamo.frame-callback")
def test_eval_frame_callback_installed_while_running():
    torch._dynamo.reset()
    seen = {}

    @torch._dynamo.disable
    def not_compiled():
        seen["disabled"] = c_eval_frame.get_eval_frame_callback()

    def fn(x):
        y = x + 1
        seen["inside"] = c_eval_frame.get_eval_frame_callback()  # not traceable: runs after a graph break
        not_compiled()
        return y * 2

    assert c_eval_frame.get_eval_frame_callback() is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Dynamo warns that it cannot trace the C function
        out = torch.compile(fn, backend="eager")(torch.ones(2))
    assert torch.equal(out, torch.full((2,), 4.0))
    callback = seen["inside"]
    assert type(callback).__name__ == "CatchErrorsWrapper"
    assert type(callback).__module__ == "torch._dynamo.convert_frame"
    assert seen["disabled"] is None
    assert c_eval_frame.get_eval_frame_callback() is None  # uninstalled again on the way out


@pytest.mark.claim("compile.dynamo.cache-entry")
def test_compiled_bytecode_is_cached_on_the_code_object():
    torch._dynamo.reset()
    original_code = times_two.__code__
    assert c_eval_frame._debug_get_cache_entry_list(original_code) == []
    compiled = torch.compile(times_two, backend="eager")
    compiled(torch.ones(2))
    assert times_two.__code__ is original_code  # the function itself is not modified
    assert len(c_eval_frame._debug_get_cache_entry_list(original_code)) == 1


@pytest.mark.claim("compile.dynamo.new-bytecode")
def test_the_entry_holds_new_bytecode_calling_the_graph():
    entry = compiled_once(times_two, torch.ones(2))
    new_code = entry.code
    assert new_code is not times_two.__code__
    assert new_code.co_name == "times_two"
    assert any(name.startswith("__compiled_fn_") for name in new_code.co_names)


@pytest.mark.claim("compile.dynamo.guards-in-cpp")
def test_the_guard_manager_root_is_a_cpp_object():
    entry = compiled_once(times_two, torch.ones(2))
    assert type(entry.guard_manager.root).__module__ == "torch._C._dynamo.guards"
    assert type(entry.guard_manager.root).__name__ == "RootGuardManager"


@pytest.mark.claim("compile.dynamo.second-entry")
def test_failing_the_guards_adds_a_second_entry():
    torch._dynamo.reset()
    compiled = torch.compile(times_two, backend="eager")
    compiled(torch.ones(2))
    assert len(c_eval_frame._debug_get_cache_entry_list(times_two.__code__)) == 1
    compiled(torch.ones(2, dtype=torch.int64))  # fails the guards: a second entry
    assert len(c_eval_frame._debug_get_cache_entry_list(times_two.__code__)) == 2


@pytest.mark.claim("compile.dynamo.graph-break")
def test_print_breaks_the_graph(capsys):
    torch._dynamo.reset()
    backend = CountingBackend()
    x = torch.ones(3)
    out = torch.compile(with_print, backend=backend)(x)
    assert torch.allclose(out, x.sin().cos() + 1)
    assert capsys.readouterr().out.count("inside the compiled function") == 1  # the print ran, in Python
    assert len(backend.graphs) == 2
    first = [n.target for n in backend.graphs[0].graph.nodes if n.op == "call_method"]
    second = [n.target for n in backend.graphs[1].graph.nodes if n.op in ("call_method", "call_function")]
    assert first == ["sin"] and "cos" in second


@pytest.mark.claim("compile.dynamo.explain-counts")
def test_explain_counts_graphs_and_breaks():
    x = torch.ones(3)
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(with_print)(x)
    assert explanation.graph_count == 2 and explanation.graph_break_count == 1
    assert "print" in explanation.break_reasons[0].reason


@pytest.mark.claim("compile.dynamo.fullgraph")
def test_fullgraph_turns_a_break_into_an_error():
    torch._dynamo.reset()
    with pytest.raises(torch._dynamo.exc.Unsupported, match="print"):
        torch.compile(with_print, backend="eager", fullgraph=True)(torch.ones(3))
    assert issubclass(torch._dynamo.exc.Unsupported, RuntimeError)
    torch._dynamo.reset()  # the fix: without fullgraph, the print runs between two graphs
    assert torch.allclose(torch.compile(with_print, backend="eager")(torch.ones(3)), with_print(torch.ones(3)))
    torch._dynamo.reset()


@pytest.mark.claim("compile.dynamo.guards")
def test_guards_check_dtype_and_shape():
    torch._dynamo.reset()
    torch.compile(times_two, backend="eager", dynamic=False)(torch.ones(2))
    (entry,) = c_eval_frame._debug_get_cache_entry_list(times_two.__code__)
    guards = entry.guard_manager
    tensor_guard = [part for part in guards.code_parts if part.startswith("check_tensor(L['x']")]
    assert len(tensor_guard) == 1
    assert "torch.float32" in tensor_guard[0] and "size=[2]" in tensor_guard[0] and "stride=[1]" in tensor_guard[0]


@pytest.mark.claim("compile.dynamo.guard-dispatch-keys")
def test_the_tensor_guard_names_the_dispatch_keys():
    guards = compiled_once(times_two, torch.ones(2), dynamic=False).guard_manager
    (tensor_guard,) = [part for part in guards.code_parts if part.startswith("check_tensor(L['x']")]
    assert "DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU)" in tensor_guard
    assert "requires_grad=False" in tensor_guard
    assert "device=None" in tensor_guard


@pytest.mark.claim("compile.dynamo.guard-check")
def test_the_guards_accept_and_reject():
    guards = compiled_once(times_two, torch.ones(2), dynamic=False).guard_manager
    assert guards.check({"x": torch.zeros(2)})  # other values, same metadata: the guards pass
    assert not guards.check({"x": torch.ones(2, dtype=torch.float64)})
    assert not guards.check({"x": torch.ones(3)})
    assert not guards.check({"x": torch.ones(2, requires_grad=True)})


@pytest.mark.claim("compile.dynamo.guard-explains")
def test_a_failed_guard_explains_itself():
    guards = compiled_once(times_two, torch.ones(2), dynamic=False).guard_manager
    failure = guards.check_verbose({"x": torch.ones(3)})
    assert "size mismatch at index 0. expected 2, actual 3" in failure.verbose_code_parts[0]


@pytest.mark.claim("compile.dynamo.global-value-guard")
def test_a_global_number_is_guarded_by_value():
    guards = compiled_once(times_global, torch.ones(2)).guard_manager
    assert "G['K'] == 3" in guards.code_parts


@pytest.mark.claim("compile.dynamo.recompile")
def test_shape_and_dtype_changes_recompile():
    torch._dynamo.reset()
    backend = CountingBackend()
    compiled = torch.compile(double_plus_one, backend=backend)
    compiled(torch.ones(3))
    compiled(torch.ones(3))
    assert len(backend.graphs) == 1  # same shape and dtype: the guards pass, no recompilation
    compiled(torch.ones(4))
    assert len(backend.graphs) == 2  # a new size: recompiled, now with a symbolic size
    placeholders = [n for n in backend.graphs[1].graph.nodes if n.op == "placeholder"]
    assert isinstance(backend.example_inputs[1][0], torch.SymInt)
    assert len(placeholders) == 2
    assert "SymInt" in backend.graphs[1].code and "SymInt" not in backend.graphs[0].code


def compiled_for_sizes_3_3_4():
    torch._dynamo.reset()
    backend = CountingBackend()
    compiled = torch.compile(double_plus_one, backend=backend)
    for n in (3, 3, 4):
        compiled(torch.ones(n))
    assert len(backend.graphs) == 2
    return compiled, backend


@pytest.mark.claim("compile.dynamo.symbolic-serves-other-sizes")
def test_the_symbolic_graph_serves_size_seven():
    compiled, backend = compiled_for_sizes_3_3_4()
    out = compiled(torch.ones(7))
    assert len(backend.graphs) == 2  # the symbolic graph takes size 7
    assert torch.equal(out, torch.full((7,), 3.0))


@pytest.mark.claim("compile.dynamo.dtype-recompiles")
def test_a_new_dtype_recompiles():
    compiled, backend = compiled_for_sizes_3_3_4()
    out = compiled(torch.ones(7, dtype=torch.float64))
    assert len(backend.graphs) == 3  # a new dtype recompiles
    assert out.dtype == torch.float64


@pytest.mark.claim("compile.dynamo.zero-one-specialised")
def test_sizes_zero_and_one_get_graphs_of_their_own():
    torch._dynamo.reset()
    backend = CountingBackend()
    compiled = torch.compile(double_plus_one, backend=backend)
    for n in (3, 4, 5, 7):
        compiled(torch.ones(n))
    assert len(backend.graphs) == 2  # the first size, then one graph with the size symbolic
    compiled(torch.ones(1))
    assert len(backend.graphs) == 3  # size 1 is specialised: the symbolic graph does not take it
    compiled(torch.ones(0))
    assert len(backend.graphs) == 4  # nor size 0
    compiled(torch.ones(9))
    assert len(backend.graphs) == 4  # any other size: the symbolic graph again


@pytest.mark.claim("compile.dynamo.recompile-limit")
def test_recompile_limit_falls_back_to_eager():
    torch._dynamo.reset()
    limit = torch._dynamo.config.recompile_limit
    assert limit == 8
    backend = CountingBackend()
    compiled = torch.compile(add_one, backend=backend, dynamic=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outputs = [compiled(torch.ones(n)) for n in range(1, limit + 5)]
    assert len(backend.graphs) == limit  # sizes 1..8 compiled; 9..12 ran without compiling
    assert all(torch.equal(out, torch.full((n,), 2.0)) for n, out in enumerate(outputs, start=1))
    assert len(c_eval_frame._debug_get_cache_entry_list(add_one.__code__)) == limit
