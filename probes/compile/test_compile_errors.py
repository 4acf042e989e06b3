"""Probes for docs/compile/compile-errors.md: torch.compile (Dynamo) graph breaks and settings,
torch.export's input, shape and data-dependence errors, and FX symbolic tracing.

Each probe triggers its message as the claim's cause says and shows that the fix works. Dynamo
probes compile with backend="eager" (no code generation) and reset Dynamo before and after.

Chosen from what users report:
- https://github.com/pytorch/pytorch/pull/107683 (fullgraph=True raises on every graph break)
- https://github.com/pyg-team/pytorch_geometric/issues/8418 (recompilations hitting the cache limit)
- https://github.com/pytorch/pytorch/issues/166589 (error_on_graph_break)
- https://github.com/pytorch/pytorch/issues/116336 and #157355 (data-dependent errors under export)
- https://github.com/pytorch/pytorch/pull/100897 (constraint violations as UserError)
- https://github.com/pytorch/tutorials/pull/3244 (export tutorial: data-dependent errors)
- https://runebook.dev/en/articles/pytorch/fx/torch.fx.Tracer.to_bool (FX and control flow)
"""
import re
import time

import pytest
import torch
import torch._dynamo
from torch._dynamo.exc import Unsupported
from torch.export import Dim, export


def lit(text):
    """A regex matching `text` literally."""
    return re.escape(text)


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def full(fn):
    return torch.compile(fn, backend="eager", fullgraph=True)


def eager_backend(fn):
    return torch.compile(fn, backend="eager")


# ------------------------------------------------------------------ graph breaks under fullgraph=True


def explicit_break(x):
    torch._dynamo.graph_break()
    return x + 1


@pytest.mark.claim("compile.err.graph-break-call")
def test_user_graph_break_under_fullgraph():
    with pytest.raises(Unsupported, match=lit("Call to `torch._dynamo.graph_break()`")) as info:
        full(explicit_break)(torch.ones(2))
    assert "User-inserted graph break." in str(info.value) and "from user code:" in str(info.value)
    assert eager_backend(explicit_break)(torch.ones(2)).tolist() == [2.0, 2.0]  # without fullgraph: two graphs


def opens_a_file(x):
    open("/dev/null").close()
    return x + 1


@pytest.mark.claim("compile.err.builtin-operator")
def test_builtin_dynamo_cannot_trace():
    with pytest.raises(Unsupported, match=lit("Failed to trace builtin operator")) as info:
        full(opens_a_file)(torch.ones(2))
    assert "Dynamo does not know how to trace builtin operator `open`" in str(info.value)
    assert eager_backend(opens_a_file)(torch.ones(2)).tolist() == [2.0, 2.0]


def reads_the_clock(x):
    return x + time.time() * 0


@pytest.mark.claim("compile.err.skipped-function")
def test_c_function_marked_as_skipped():
    with pytest.warns(UserWarning, match=lit("Dynamo does not know how to trace the builtin `time.time.` This "
                                             "function is either a Python builtin")):
        with pytest.raises(Unsupported, match=lit("Attempted to call function marked as skipped")) as info:
            full(reads_the_clock)(torch.ones(2))
    assert "Dynamo does not know how to trace the builtin `time.time.`" in str(info.value)
    start = time.time()  # the fix: read the clock outside the compiled region, pass the number in
    assert full(lambda x, t: x + t * 0)(torch.ones(2), start).tolist() == [1.0, 1.0]


def float_tolist(x):
    return x.tolist()


@pytest.mark.claim("compile.err.tolist-float")
def test_tolist_of_a_float_tensor():
    with pytest.raises(Unsupported, match=lit("Tensor.tolist() with non-integer tensor")):
        full(float_tolist)(torch.ones(2))
    assert full(float_tolist)(torch.ones(2, dtype=torch.int64)) == [1, 1]


def backward_inside(x):
    (x * 2).sum().backward()
    return x.grad


@pytest.mark.claim("compile.err.backward-inside")
def test_backward_inside_the_compiled_function():
    with pytest.raises(Unsupported, match=lit("Unsupported Tensor.backward() call")):
        full(backward_inside)(torch.ones(2, requires_grad=True))
    x = torch.ones(2, requires_grad=True)
    loss = full(lambda x: (x * 2).sum())(x)  # the fix: compile the forward, call backward outside
    loss.backward()
    assert x.grad.tolist() == [2.0, 2.0]


def raises_inside(x):
    raise ValueError("bad input")


@pytest.mark.claim("compile.err.observed-exception")
def test_exception_raised_by_the_compiled_code():
    with pytest.raises(Unsupported, match=lit("Observed exception")) as info:
        full(raises_inside)(torch.ones(2))
    assert "Dynamo found no exception handler at the top-level compiled function" in str(info.value)
    with pytest.raises(ValueError, match="^bad input$"):
        raises_inside(torch.ones(2))  # the same code uncompiled shows the user's own error


@pytest.mark.claim("compile.err.disabled-function")
def test_call_to_a_compiler_disabled_function():
    @torch.compiler.disable
    def helper(x):
        return x + 1

    with pytest.raises(Unsupported, match=lit("Skip calling `torch.compiler.disable()`d function")):
        full(lambda x: helper(x) * 2)(torch.ones(2))
    assert eager_backend(lambda x: helper(x) * 2)(torch.ones(2)).tolist() == [4.0, 4.0]


# ------------------------------------------------------------------ torch.compile settings and recompiles


@pytest.mark.claim("compile.err.invalid-backend")
def test_unknown_backend_mode_and_options():
    with pytest.raises(torch._dynamo.exc.InvalidBackend, match=r"^Invalid backend: 'nobackendzz'"):
        torch.compile(lambda x: x, backend="nobackendzz")
    with pytest.raises(RuntimeError, match=lit("Unrecognized mode=fastest, should be one of: default,")):
        torch.compile(lambda x: x, mode="fastest")
    with pytest.raises(RuntimeError, match=lit("Either mode or options can be specified, but both can't be specified "
                                               "at the same time.")):
        torch.compile(lambda x: x, mode="default", options={"debug": False})
    with pytest.raises(RuntimeError, match=lit("Unexpected optimization option not_an_option, known options are")):
        torch.compile(lambda x: x, options={"not_an_option": 1})(torch.ones(1))
    assert "eager" in torch._dynamo.list_backends(exclude_tags=()) or "eager" in torch._dynamo.list_backends()
    assert torch.compile(lambda x: x + 1, backend="eager", mode=None)(torch.ones(1)).item() == 2.0


@pytest.mark.claim("compile.err.invalid-backend-comma")
@pytest.mark.torch_version("<2.14")
def test_an_unknown_backend_until_2_13():
    for name in ("nobackendzz", "inductr"):  # no suggestion, even one letter away from a backend
        with pytest.raises(torch._dynamo.exc.InvalidBackend, match="^" + lit(
                f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for available backends.") + "$"):
            torch.compile(lambda x: x, backend=name)


@pytest.mark.claim("compile.err.invalid-backend-suggests")
@pytest.mark.torch_version(">=2.14")
def test_an_unknown_backend_since_2_14():
    see = lit(" See `torch._dynamo.list_backends()` for available backends.") + "$"
    with pytest.raises(torch._dynamo.exc.InvalidBackend, match="^" + lit("Invalid backend: 'nobackendzz'.") + see):
        torch.compile(lambda x: x, backend="nobackendzz")
    with pytest.raises(torch._dynamo.exc.InvalidBackend,
                       match="^" + lit("Invalid backend: 'inductr', did you mean: 'inductor'?") + see):
        torch.compile(lambda x: x, backend="inductr")


def hard_failure_on_the_recompile_limit(message):
    add = torch.compile(lambda x, n: x + n, backend="eager", dynamic=False)
    with torch._dynamo.config.patch(recompile_limit=2, fail_on_recompile_limit_hit=True):
        with pytest.raises(torch._dynamo.exc.FailOnRecompileLimitHit, match="^" + lit(message) + "$"):
            for n in range(5):
                add(torch.ones(2), n)
    torch._dynamo.reset()
    add = torch.compile(lambda x, n: x + n, backend="eager", dynamic=False)
    with torch._dynamo.config.patch(recompile_limit=2, fail_on_recompile_limit_hit=True):
        for n in range(5):
            add(torch.ones(2), torch.tensor(n))  # the fix: a tensor argument is not specialised on its value
    assert add(torch.ones(2), torch.tensor(4)).tolist() == [5.0, 5.0]


@pytest.mark.claim("compile.err.recompile-limit-reached-hard")
@pytest.mark.torch_version("<2.11")
def test_hard_failure_on_the_recompile_limit_until_2_10():
    hard_failure_on_the_recompile_limit("recompile_limit reached, because fail_on_recompile_limit_hit = True this is a "
                                        "HARD failure")


@pytest.mark.claim("compile.err.recompile-limit")
@pytest.mark.torch_version(">=2.11")
def test_hard_failure_on_the_recompile_limit():
    hard_failure_on_the_recompile_limit("Hard failure due to fail_on_recompile_limit_hit")


@pytest.mark.claim("compile.err.error-on-recompile")
def test_recompile_error_names_the_failed_guard():
    add = torch.compile(lambda x: x + 1, backend="eager")
    add(torch.ones(2))
    with torch._dynamo.config.patch(error_on_recompile=True):
        with pytest.raises(torch._dynamo.exc.RecompileError, match=lit("triggered by the following guard "
                                                                       "failure(s):")) as info:
            add(torch.ones(2, dtype=torch.float64))
        assert "dtype mismatch. expected Float, actual Double" in str(info.value)
        assert add(torch.zeros(2)).tolist() == [1.0, 1.0]  # the fix: inputs that pass the guards reuse the code


@pytest.mark.claim("compile.err.mark-dynamic-specialized")
def test_mark_dynamic_on_a_dimension_the_code_fixes():
    reshape = torch.compile(lambda x: x.view(2, 2), backend="eager")
    y = torch.ones(4)
    torch._dynamo.mark_dynamic(y, 0)
    from torch.fx.experimental.symbolic_shapes import ConstraintViolationError

    with pytest.raises(ConstraintViolationError, match=lit("You marked L['x'].size()[0] as dynamic but your code "
                                                           "specialized it to be a constant (4).")):
        reshape(y)
    torch._dynamo.reset()
    z = torch.ones(4)
    torch._dynamo.maybe_mark_dynamic(z, 0)  # the fix the message names
    assert reshape(z).shape == (2, 2)


# ------------------------------------------------------------------ torch.export


class AddOne(torch.nn.Module):
    def forward(self, x):
        return x + 1


class FixedView(torch.nn.Module):
    def forward(self, x):
        return x.view(4, 3) + 1


class Branches(torch.nn.Module):
    def forward(self, x):
        return x * 2 if x.sum() > 0 else x


class Conditional(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda x: x * 2, lambda x: x.clone(), (x,))


class ShapeBranch(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] > 2:
            return x + 1
        return x


@pytest.mark.claim("compile.err.export-inputs")
def test_export_needs_a_module_and_a_tuple():
    with pytest.raises(ValueError, match=lit("Expected `mod` to be an instance of `torch.nn.Module`, got <class "
                                             "'function'>.")):
        export(lambda x: x, (torch.ones(1),))
    with pytest.raises(torch._dynamo.exc.UserError, match=lit("Expecting `args` to be a tuple of example positional "
                                                              "inputs, got <class 'torch.Tensor'>")):
        export(AddOne(), torch.ones(1))
    assert export(AddOne(), (torch.ones(1),)).module()(torch.zeros(1)).item() == 1.0


@pytest.mark.claim("compile.err.export-data-dependent")
def test_export_of_a_data_dependent_branch():
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

    x = torch.ones(4, 3)
    with pytest.raises(GuardOnDataDependentSymNode, match=lit("Could not guard on data-dependent expression")):
        export(Branches(), (x,))
    with pytest.raises(Unsupported, match=lit("Data-dependent branching")):
        export(Branches(), (x,), strict=True)
    ep = export(Conditional(), (x,))  # the fix: torch.cond keeps both branches
    assert ep.module()(-x).tolist() == (-x).tolist() and ep.module()(x).tolist() == (2 * x).tolist()


@pytest.mark.claim("compile.err.export-dim-specialized")
def test_dynamic_dim_the_code_specializes():
    x = torch.ones(4, 3)
    with pytest.raises(torch._dynamo.exc.UserError, match=lit("You marked b as dynamic but your code specialized it "
                                                              "to be a constant (4).")) as info:
        export(FixedView(), (x,), dynamic_shapes=({0: Dim("b")},))
    assert "Suggested fixes:\n  b = 4" in str(info.value)
    with pytest.raises(torch._dynamo.exc.UserError, match=lit("Constraints violated (L['x'].size()[0])!")):
        export(FixedView(), (x,), dynamic_shapes=({0: Dim.DYNAMIC},))
    ep = export(FixedView(), (x,), dynamic_shapes=({0: Dim.AUTO},))  # AUTO lets export keep it static
    assert ep.module()(x).shape == (4, 3)


@pytest.mark.claim("compile.err.export-dim-range")
def test_dynamic_dim_range_too_wide_or_excluding_the_example():
    from torch.fx.experimental.symbolic_shapes import ConstraintViolationError

    x = torch.ones(4, 3)
    with pytest.raises(torch._dynamo.exc.UserError, match=lit("Not all values of n = L['x'].size()[0] in the specified "
                                                              "range satisfy the generated guard")) as info:
        export(ShapeBranch(), (x,), dynamic_shapes=({0: Dim("n")},))
    assert "n = Dim('n', min=3)" in str(info.value)
    with pytest.raises(ConstraintViolationError, match=lit("4 not in range [5, int_oo]")):
        export(AddOne(), (x,), dynamic_shapes=({0: Dim("c", min=5)},))
    with pytest.raises(ConstraintViolationError, match=lit("Static shape constraint of 5 does not match input size of "
                                                           "4, for L['x'].size()[0]")):
        export(AddOne(), (x,), dynamic_shapes=({0: 5},))
    ep = export(ShapeBranch(), (x,), dynamic_shapes=({0: Dim("n", min=3)},))  # the suggested fix
    assert ep.module()(torch.ones(7, 3)).shape == (7, 3)


@pytest.mark.claim("compile.err.export-dynamic-shapes-structure")
def test_dynamic_shapes_that_do_not_match_the_inputs():
    x = torch.ones(4, 3)
    with pytest.raises(torch._dynamo.exc.UserError, match=lit("Detected mismatch between the structure of `inputs` and "
                                                              "`dynamic_shapes`: `inputs` has 1 elements, but "
                                                              "`dynamic_shapes` has 2 elements")):
        export(AddOne(), (x,), dynamic_shapes=({0: Dim("k")}, {0: Dim("l")}))
    with pytest.raises(torch._dynamo.exc.UserError, match=lit("When `dynamic_shapes` is specified as a dict, its "
                                                              "top-level keys must be the arg names ['x'] of "
                                                              "`inputs`, but here they are ['y'].")):
        export(AddOne(), (x,), dynamic_shapes={"y": {0: Dim("e")}})
    ep = export(AddOne(), (x,), dynamic_shapes={"x": {0: Dim("e")}})
    assert ep.module()(torch.ones(9, 3)).shape == (9, 3)


@pytest.mark.claim("compile.err.dim-definition")
def test_dim_objects_that_cannot_exist():
    with pytest.raises(AssertionError, match=r"^Dim name must be a valid identifier, got 1bad$"):
        Dim("1bad")
    with pytest.raises(AssertionError, match=r"^Cannot create Dim with inconsistent min=10, max=5$"):
        Dim("f", min=10, max=5)

    class Two(torch.nn.Module):
        def forward(self, x, y):
            return x + y

    x = torch.ones(4, 3)
    with pytest.raises(torch._dynamo.exc.UserError, match=lit("Found different definitions Dim('j', min=0) and "
                                                              "Dim('j', min=0, max=10) for the same symbolic "
                                                              "dimension")):
        export(Two(), (x, x), dynamic_shapes=({0: Dim("j")}, {0: Dim("j", max=10)}))
    j = Dim("j", max=10)  # one object for both: the same dimension
    assert export(Two(), (x, x), dynamic_shapes=({0: j}, {0: j})).module()(x, x).shape == (4, 3)


@pytest.mark.claim("compile.err.exported-program-call")
def test_calling_an_exported_program():
    x = torch.ones(4, 3)
    ep = export(AddOne(), (x,), dynamic_shapes=({0: Dim("m", min=2, max=8)},))
    with pytest.raises(RuntimeError, match=lit("Unable to call ExportedProgram directly. You should use "
                                               "`exported_program.module()` instead.")):
        ep(x)
    with pytest.raises(AssertionError, match=lit("Guard failed: x.size()[0] <= 8")):
        ep.module()(torch.ones(10, 3))
    with pytest.raises(ValueError, match=lit("Trying to flatten user inputs with exported input tree spec:")):
        ep.module()(x, x)
    with pytest.raises(NotImplementedError, match=r"^Calling train\(\) is not supported yet\.$"):
        ep.module().train()
    with pytest.raises(NotImplementedError, match=r"^Calling eval\(\) is not supported yet\.$"):
        ep.module().eval()
    assert ep.module()(torch.ones(8, 3)).shape == (8, 3)


@pytest.mark.claim("compile.err.export-numpy")
def test_numpy_inside_export():
    class ThroughNumpy(torch.nn.Module):
        def forward(self, x):
            return torch.from_numpy(x.numpy())

    with pytest.raises(RuntimeError, match=r"^\.numpy\(\) is not supported for tensor subclasses\.$"):
        export(ThroughNumpy(), (torch.ones(2),))

    class InTorch(torch.nn.Module):
        def forward(self, x):
            return x.clone()

    assert export(InTorch(), (torch.ones(2),)).module()(torch.zeros(2)).tolist() == [0.0, 0.0]


@pytest.mark.claim("compile.err.cond-errors")
def test_torch_cond_argument_and_aliasing_rules():
    x = torch.ones(2)
    with pytest.raises(RuntimeError, match=r"^Expect both branches to be callable\.$"):
        torch.cond(torch.tensor(True), 1, 2, (x,))
    with pytest.raises(RuntimeError, match=lit("Expected pred to be bool or single-element tensor, but got")):
        torch.cond(torch.ones(2) > 0, lambda x: x + 1, lambda x: x - 1, (x,))

    class ReturnsInput(torch.nn.Module):
        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda x: x, lambda x: x * 2, (x,))

    with pytest.raises(torch._dynamo.exc.UncapturedHigherOrderOpError,
                       match=lit("Encountered aliasing during higher order op tracing")):
        export(ReturnsInput(), (x,))
    assert export(Conditional(), (x,)).module()(x).tolist() == [2.0, 2.0]  # a branch returning x.clone()


# ------------------------------------------------------------------ FX symbolic tracing


def loops_over(x):
    for _row in x:
        pass
    return x


def takes_len(x):
    return torch.zeros(len(x))


def takes_int(x):
    return int(x)


@pytest.mark.claim("compile.err.fx-proxy")
def test_fx_proxies_refuse_python_conversions():
    import torch.fx as fx

    with pytest.raises(fx.proxy.TraceError, match=lit("Proxy object cannot be iterated.")):
        fx.symbolic_trace(loops_over)
    with pytest.raises(RuntimeError, match=lit("'len' is not supported in symbolic tracing by default. If you want "
                                               "this call to be recorded, please call torch.fx.wrap('len') at module "
                                               "scope")):
        fx.symbolic_trace(takes_len)
    with pytest.raises(TypeError, match=lit("int() argument must be a string, a bytes-like object or a real number, "
                                            "not 'Proxy'")):
        fx.symbolic_trace(takes_int)
    traced = fx.symbolic_trace(lambda x: torch.zeros(x.shape[0]))  # the fix: sizes through the tensor
    assert traced(torch.ones(3)).shape == (3,)


@pytest.mark.claim("compile.err.fx-control-flow")
def test_fx_control_flow_and_concrete_args():
    import torch.fx as fx

    def scaled(x, flag):
        return x * 2 if flag else x

    with pytest.raises(fx.proxy.TraceError, match=r"^symbolically traced variables cannot be used as inputs to "
                                                  r"control flow$"):
        fx.symbolic_trace(scaled)
    traced = fx.symbolic_trace(scaled, concrete_args={"flag": True})
    assert traced(torch.ones(2), True).tolist() == [2.0, 2.0]  # the flag is fixed at trace time


def fx_traces_the_function_instead():
    traced = torch.fx.symbolic_trace(lambda x: x + 1)  # the fix: trace the function (or module)
    assert torch.equal(traced(torch.ones(2)), torch.full((2,), 2.0))


@pytest.mark.claim("compile.err.fx-trace-target-bare")
@pytest.mark.torch_version("<2.11")
def test_fx_trace_of_a_number_until_2_10():
    with pytest.raises(AssertionError, match="^$"):
        torch.fx.symbolic_trace(3)
    fx_traces_the_function_instead()


@pytest.mark.claim("compile.err.fx-trace-target")
@pytest.mark.torch_version(">=2.11")
def test_fx_trace_of_a_number_since_2_11():
    with pytest.raises(AssertionError, match="^" + lit("Expected FunctionType, got <class 'int'>") + "$"):
        torch.fx.symbolic_trace(3)
    fx_traces_the_function_instead()


@pytest.mark.claim("compile.err.fx-graph-edits")
def test_fx_trace_target_and_graph_edits():
    import torch.fx as fx

    graph = fx.Graph()
    a = graph.placeholder("a")
    added = graph.call_function(torch.add, (a, a))
    with pytest.raises(RuntimeError, match=lit("Tried to erase Node a but it still had 1 users in the graph: "
                                               "{add: None}!")):
        graph.erase_node(a)
    graph.erase_node(added)  # the fix: erase the users first
    graph.erase_node(a)
    assert len(graph.nodes) == 0
