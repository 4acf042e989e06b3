"""Probes for docs/compile/fx.md."""
import operator

import pytest
import torch
import torch.fx as fx


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)
        self.scale = torch.nn.Parameter(torch.ones(3))

    def forward(self, x):
        y = torch.relu(self.lin(x)) * self.scale
        return y.sum(dim=-1)


class Inner(torch.nn.Module):
    def forward(self, x):
        return torch.sigmoid(x) + 1


class Outer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()
        self.norm = torch.nn.LayerNorm(3)

    def forward(self, x):
        return self.norm(self.inner(x))


def data_dependent(x):
    if x.sum() > 0:
        return x
    return -x


def loop_over_size(x):
    for _ in range(x.shape[0]):
        x = x + 1
    return x


def fixed_loop(x):
    for i in range(3):
        x = x + i
    return x


@pytest.mark.claim("compile.fx.node-kinds")
def test_node_kinds():
    gm = fx.symbolic_trace(Block())
    ops = [(n.op, n.target) for n in gm.graph.nodes]
    assert ops == [
        ("placeholder", "x"),
        ("call_module", "lin"),
        ("call_function", torch.relu),
        ("get_attr", "scale"),
        ("call_function", operator.mul),
        ("call_method", "sum"),
        ("output", "output"),
    ]
    assert {n.op for n in gm.graph.nodes} == {"placeholder", "get_attr", "call_function", "call_method",
                                               "call_module", "output"}
    assert isinstance(gm, fx.GraphModule) and isinstance(gm, torch.nn.Module)


@pytest.mark.claim("compile.fx.leaf-modules")
def test_torch_nn_modules_are_leaves():
    gm = fx.symbolic_trace(Outer())
    ops = [(n.op, n.target) for n in gm.graph.nodes if n.op not in ("placeholder", "output")]
    # the user-defined Inner is traced through; torch.nn.LayerNorm stays one call_module node
    assert ops == [("call_function", torch.sigmoid), ("call_function", operator.add), ("call_module", "norm")]
    tracer = fx.Tracer()
    assert tracer.is_leaf_module(torch.nn.LayerNorm(3), "norm")
    assert not tracer.is_leaf_module(Inner(), "inner")


@pytest.mark.claim("compile.fx.sequential-traced-through")
def test_sequential_is_traced_through():
    assert not fx.Tracer().is_leaf_module(torch.nn.Sequential(torch.nn.ReLU()), "seq")
    seq = fx.symbolic_trace(torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU()))
    assert [(n.op, n.target) for n in seq.graph.nodes if n.op == "call_module"] == [("call_module", "0"),
                                                                                    ("call_module", "1")]


@pytest.mark.claim("compile.fx.control-flow")
def test_data_dependent_control_flow_fails():
    with pytest.raises(fx.proxy.TraceError, match="symbolically traced variables cannot be used as inputs "
                                                  "to control flow"):
        fx.symbolic_trace(data_dependent)
    assert issubclass(fx.proxy.TraceError, ValueError)
    with pytest.raises(TypeError, match="'Proxy' object cannot be interpreted as an integer"):
        fx.symbolic_trace(loop_over_size)
    import torch._dynamo  # the fix: a tracer that handles data-dependent Python (here Dynamo's graph break)

    torch._dynamo.reset()
    assert torch.compile(data_dependent, backend="eager")(-torch.ones(2)).tolist() == [1.0, 1.0]
    assert torch.compile(loop_over_size, backend="eager")(torch.zeros(3)).tolist() == [3.0, 3.0, 3.0]
    torch._dynamo.reset()


@pytest.mark.claim("compile.fx.python-control-flow-unrolled")
def test_fixed_python_loop_is_unrolled():
    gm = fx.symbolic_trace(fixed_loop)
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    assert [n.target for n in calls] == [operator.add] * 3
    assert [n.args[1] for n in calls] == [0, 1, 2]  # the loop variable was a Python int: baked in
    assert "for " not in gm.code
    x = torch.arange(4.0)
    assert torch.equal(gm(x), fixed_loop(x))


@pytest.mark.claim("compile.fx.codegen")
def test_graph_edit_and_recompile():
    gm = fx.symbolic_trace(Block())
    assert "torch.relu(" in gm.code
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is torch.relu:
            node.target = torch.sigmoid
    x = torch.randn(2, 4)
    before = gm(x)
    gm.recompile()
    assert "torch.sigmoid(" in gm.code and "torch.relu(" not in gm.code
    after = gm(x)
    with torch.no_grad():
        assert torch.allclose(before, (torch.relu(gm.lin(x)) * gm.scale).sum(dim=-1))  # old code until recompile
        assert torch.allclose(after, (torch.sigmoid(gm.lin(x)) * gm.scale).sum(dim=-1))


@pytest.mark.claim("compile.fx.ao-leaf")
def test_torch_ao_nn_modules_are_leaves_too():
    import torch.ao.nn.intrinsic as intrinsic
    import torch.ao.nn.quantized as quantized

    tracer = fx.Tracer()
    assert tracer.is_leaf_module(quantized.FloatFunctional(), "f")
    fused = intrinsic.LinearReLU(torch.nn.Linear(2, 2), torch.nn.ReLU())
    assert isinstance(fused, torch.nn.Sequential)
    assert not tracer.is_leaf_module(fused, "fused")


@pytest.mark.claim("compile.fx.legal-ops")
def test_legal_ops_are_the_six_opcodes_and_root():
    from torch.fx.node import _legal_ops

    assert sorted(_legal_ops) == ["call_function", "call_method", "call_module", "get_attr", "output",
                                  "placeholder", "root"]
    graph = fx.Graph()
    assert graph._root.op == "root"
    x = graph.placeholder("x")
    graph.output(x)
    assert [n.op for n in graph.nodes] == ["placeholder", "output"]
