"""Probes for docs/compile/export.md."""
import inspect

import pytest
import torch
import torch._dynamo
from torch._subclasses.fake_tensor import DataDependentOutputException, FakeTensor, FakeTensorMode
from torch.export import Dim, export
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode


class LinearAddRelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x):
        y = self.lin(x)
        y.add_(1)
        return y.relu()


class SumRows(torch.nn.Module):
    def forward(self, x):
        return x.sum(0) * 2


class Branchy(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x - 1


class WithCond(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda t: t * 2, lambda t: t - 1, (x,))


def targets(ep):
    return [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]


@pytest.mark.claim("compile.export.aten-graph")
def test_exported_program_holds_aten_graph():
    model = LinearAddRelu()
    ep = export(model, (torch.randn(2, 4),))
    assert isinstance(ep, torch.export.ExportedProgram)
    assert targets(ep) == ["aten.linear.default", "aten.add_.Tensor", "aten.relu.default"]
    kinds = {spec.arg.name: spec.kind.name for spec in ep.graph_signature.input_specs}
    assert kinds == {"p_lin_weight": "PARAMETER", "p_lin_bias": "PARAMETER", "x": "USER_INPUT"}
    assert [n.name for n in ep.graph.nodes if n.op == "placeholder"] == ["p_lin_weight", "p_lin_bias", "x"]
    x = torch.randn(2, 4)
    assert torch.allclose(ep.module()(x), model(x))


@pytest.mark.claim("compile.export.run-decompositions")
def test_run_decompositions_lowers_and_functionalizes():
    ep = export(LinearAddRelu(), (torch.randn(2, 4),))
    assert "aten.add_.Tensor" in targets(ep)  # the in-place add is still there before decomposition
    lowered = ep.run_decompositions()
    assert targets(lowered) == ["aten.permute.default", "aten.addmm.default", "aten.add.Tensor",
                                "aten.relu.default"]
    assert "aten.linear.default" not in targets(lowered)
    x = torch.randn(2, 4)
    assert torch.allclose(lowered.module()(x), ep.module()(x))


@pytest.mark.claim("compile.export.fake-metadata")
def test_every_node_carries_a_fake_tensor():
    ep = export(LinearAddRelu(), (torch.randn(2, 4),))
    shapes = {}
    for node in ep.graph.nodes:
        if node.op in ("placeholder", "call_function"):
            assert isinstance(node.meta["val"], FakeTensor), node.name
            shapes[node.name] = tuple(node.meta["val"].shape)
    assert shapes == {"p_lin_weight": (3, 4), "p_lin_bias": (3,), "x": (2, 4), "linear": (2, 3),
                      "add_": (2, 3), "relu": (2, 3)}


@pytest.mark.claim("compile.export.static-unless-declared")
def test_shapes_are_specialised_unless_declared_dynamic():
    ep = export(SumRows(), (torch.randn(3, 4),))
    assert ep.module()(torch.ones(3, 4)).tolist() == [6.0] * 4
    with pytest.raises(AssertionError, match=r"Guard failed: x\.size\(\)\[0\] == 3"):
        ep.module()(torch.ones(5, 4))
    dynamic = export(SumRows(), (torch.randn(3, 4),), dynamic_shapes=({0: Dim("rows")},))  # the fix
    assert dynamic.module()(torch.ones(5, 4)).tolist() == [10.0] * 4


@pytest.mark.claim("compile.export.dim-makes-dynamic")
def test_a_declared_dim_makes_the_batch_dynamic():
    batch = Dim("batch")
    dynamic = export(SumRows(), (torch.randn(3, 4),), dynamic_shapes={"x": {0: batch}})
    assert dynamic.module()(torch.ones(5, 4)).tolist() == [10.0] * 4
    (x,) = [n for n in dynamic.graph.nodes if n.op == "placeholder"]
    size0 = x.meta["val"].shape[0]
    assert isinstance(size0, torch.SymInt) and x.meta["val"].shape[1] == 4
    assert len(dynamic.range_constraints) == 1


@pytest.mark.claim("compile.export.data-dependent-control-flow")
def test_data_dependent_if_fails_cond_works():
    with pytest.raises(GuardOnDataDependentSymNode, match="Could not guard on data-dependent expression"):
        export(Branchy(), (torch.ones(3),))
    assert issubclass(GuardOnDataDependentSymNode, RuntimeError)
    ep = export(WithCond(), (torch.ones(3),))  # the fix: torch.cond
    assert ep.module()(-torch.ones(3)).tolist() == [-2.0] * 3


@pytest.mark.claim("compile.export.strict-default")
def test_strict_defaults_to_false():
    assert inspect.signature(export).parameters["strict"].default is False


@pytest.mark.claim("compile.export.non-strict-plain-python")
def test_non_strict_export_runs_forward_as_python():
    from torch._C._dynamo import eval_frame as c_eval_frame

    seen = []

    class Spy(torch.nn.Module):
        def forward(self, x):
            seen.append((torch.compiler.is_dynamo_compiling(), c_eval_frame.get_eval_frame_callback(), type(x)))
            return x.relu()

    export(Spy(), (torch.randn(2),), strict=False)
    assert len(seen) == 1
    ((compiling, callback, kind),) = seen
    assert compiling is False
    assert callback is None
    assert kind is FakeTensor


@pytest.mark.claim("compile.export.strict-unsupported")
def test_strict_export_of_a_data_dependent_if():
    with pytest.raises(torch._dynamo.exc.Unsupported, match="Data-dependent branching"):
        export(Branchy(), (torch.ones(3),), strict=True)
    ep = export(WithCond(), (torch.ones(3),), strict=True)  # the fix: torch.cond, strict too
    assert ep.module()(torch.ones(3)).tolist() == [2.0] * 3


@pytest.mark.claim("compile.export.cond-exports")
def test_cond_exports_both_branches():
    ep = export(WithCond(), (torch.ones(3),))
    called = [getattr(n.target, "__name__", str(n.target)) for n in ep.graph.nodes if n.op == "call_function"]
    assert called.count("cond") == 1
    submodules = dict(ep.graph_module.named_children())
    assert {"true_graph_0", "false_graph_0"} <= set(submodules)
    module = ep.module()
    assert module(torch.full((3,), 3.0)).tolist() == [6.0] * 3
    assert module(torch.full((3,), -3.0)).tolist() == [-4.0] * 3  # both branches were captured


@pytest.mark.claim("compile.fake.shapes-without-data")
def test_fake_tensor_propagates_shapes_only():
    with FakeTensorMode():
        a = torch.empty(1000, 1000)
        b = torch.empty(1000, 1000)
        c = a @ b
        assert isinstance(c, FakeTensor)
        assert c.shape == (1000, 1000) and c.dtype == torch.float32 and c.device.type == "cpu"
        with pytest.raises(DataDependentOutputException, match="aten._local_scalar_dense"):
            c.sum().item()
        assert c.t()[:10].shape == (10, 1000)


@pytest.mark.claim("compile.fake.mixing-real-raises")
def test_mixing_fake_and_real_raises():
    with FakeTensorMode():
        c = torch.empty(1000, 1000) @ torch.empty(1000, 1000)
    with pytest.raises(AssertionError, match="Please convert all Tensors to FakeTensors first"):
        torch.ones(1000, 1000) + c
    with FakeTensorMode() as mode:  # the fix: make every tensor of the computation fake, in one mode
        product = torch.empty(1000, 1000) @ torch.empty(1000, 1000)
        converted = mode.from_tensor(torch.ones(1000, 1000))
        assert isinstance(converted + product, FakeTensor)


@pytest.mark.claim("compile.fake.from-tensor")
def test_from_tensor_makes_a_fake_copy():
    mode = FakeTensorMode()
    fake = mode.from_tensor(torch.randn(3, 4))
    with mode:
        assert (fake.t() @ fake).shape == (4, 4)
