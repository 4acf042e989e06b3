"""Probes for docs/compile/aot-autograd.md."""
import pytest
import torch
import torch._dynamo
from functorch.compile import default_partition, make_boxed_func, min_cut_rematerialization_partition
from torch._dynamo.backends.common import aot_autograd


class Capture:
    """fw/bw compilers for `aot_autograd` that keep each graph and run it unchanged."""

    def __init__(self, **kwargs):
        self.forward, self.backward, self.dynamo = [], [], []
        self.aot = aot_autograd(fw_compiler=self._fw, bw_compiler=self._bw, **kwargs)

    def _fw(self, gm, example_inputs):
        self.forward.append(gm)
        return make_boxed_func(gm.forward)

    def _bw(self, gm, example_inputs):
        self.backward.append(gm)
        return make_boxed_func(gm.forward)

    def __call__(self, gm, example_inputs):  # a Dynamo backend: see Dynamo's graph, then hand it to AOT
        self.dynamo.append(gm)
        return self.aot(gm, example_inputs)


def aten_targets(gm):
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def output_names(gm):
    (output,) = [n for n in gm.graph.nodes if n.op == "output"]
    return [str(a) for a in output.args[0]]


def placeholder_names(gm):
    return [n.name for n in gm.graph.nodes if n.op == "placeholder"]


def matmul_sin(x, w):
    return (x @ w).sin().sum()


def linear_inplace(x, w):
    y = torch.nn.functional.linear(x, w)
    y.mul_(2)
    return y.relu()


def chain(x):
    return x.sin().cos().sin().sum()


@pytest.mark.claim("compile.aot.forward-backward-graphs")
def test_forward_and_backward_graphs():
    torch._dynamo.reset()
    capture = Capture()
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(4, 2, requires_grad=True)
    torch.compile(matmul_sin, backend=capture)(x, w).backward()
    (fw,) = capture.forward
    assert aten_targets(fw) == ["aten.mm.default", "aten.sin.default", "aten.sum.default"]
    assert placeholder_names(fw) == ["primals_1", "primals_2"]
    # the loss, then what backward needs: both inputs and the matmul result
    assert output_names(fw) == ["sum_1", "primals_1", "primals_2", "mm"]


@pytest.mark.claim("compile.aot.backward-graph")
def test_the_backward_graph():
    torch._dynamo.reset()
    capture = Capture()
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(4, 2, requires_grad=True)
    torch.compile(matmul_sin, backend=capture)(x, w).backward()
    (bw,) = capture.backward
    assert placeholder_names(bw) == ["primals_1", "primals_2", "mm", "tangents_1"]
    assert "aten.cos.default" in aten_targets(bw)  # d/dz sin(z)
    assert aten_targets(bw).count("aten.mm.default") == 2  # one matmul per input gradient
    assert len(output_names(bw)) == 2


@pytest.mark.claim("compile.aot.backward-compiled-lazily")
def test_backward_compiled_on_first_backward():
    torch._dynamo.reset()
    capture = Capture()
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(4, 2, requires_grad=True)
    loss = torch.compile(matmul_sin, backend=capture)(x, w)
    assert len(capture.forward) == 1 and len(capture.backward) == 0
    loss.backward()
    assert len(capture.backward) == 1


@pytest.mark.claim("compile.aot.gradients-match")
def test_gradients_through_compiled_function_match_eager():
    torch._dynamo.reset()
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, 2, dtype=torch.float64, requires_grad=True)
    matmul_sin(x, w).backward()
    expected = (x.grad.clone(), w.grad.clone())
    x.grad = w.grad = None
    compiled = torch.compile(matmul_sin, backend="aot_eager")
    compiled(x, w).backward()
    assert torch.allclose(x.grad, expected[0]) and torch.allclose(w.grad, expected[1])
    assert torch.allclose(x.grad, (torch.cos(x @ w)) @ w.t())  # the analytic gradient


@pytest.mark.claim("compile.aot.aten-and-functional")
def test_aot_graph_is_aten_and_functional():
    torch._dynamo.reset()
    capture = Capture()
    x = torch.randn(2, 3, requires_grad=True)
    w = torch.randn(4, 3, requires_grad=True)
    out = torch.compile(linear_inplace, backend=capture)(x, w)
    assert torch.allclose(out, linear_inplace(x, w))
    dynamo_graph = capture.dynamo[0]
    dynamo_calls = [(n.op, getattr(n.target, "__name__", n.target)) for n in dynamo_graph.graph.nodes
                    if n.op in ("call_function", "call_method")]
    assert dynamo_calls == [("call_function", "linear"), ("call_method", "mul_"), ("call_method", "relu")]
    fw = aten_targets(capture.forward[0])
    assert fw[:4] == ["aten.t.default", "aten.mm.default", "aten.mul.Tensor", "aten.relu.default"]
    assert not any(name.split(".")[1].endswith("_") for name in fw)  # no in-place op survives
    assert "aten.linear.default" not in fw


@pytest.mark.claim("compile.aot.partitioner")
def test_min_cut_partitioner_recomputes():
    saved = {}
    for name, partition in (("default", default_partition), ("min-cut", min_cut_rematerialization_partition)):
        torch._dynamo.reset()
        capture = Capture(partition_fn=partition)
        x = torch.randn(5, requires_grad=True)
        torch.compile(chain, backend=capture)(x).backward()
        assert torch.allclose(x.grad, (-torch.sin(torch.sin(x)) * torch.cos(torch.cos(torch.sin(x))))
                              * torch.cos(x))
        saved[name] = output_names(capture.forward[0])[1:]
        saved[name + " backward"] = aten_targets(capture.backward[0])
    assert saved["default"] == ["primals_1", "sin", "cos"]  # intermediates kept for backward
    assert saved["min-cut"] == ["primals_1"]  # only the input is kept ...
    recomputed, default = saved["min-cut backward"], saved["default backward"]
    # ... and sin, cos are redone: one more of each than in the default backward
    assert (recomputed.count("aten.sin.default"), recomputed.count("aten.cos.default")) == (2, 3)
    assert (default.count("aten.sin.default"), default.count("aten.cos.default")) == (1, 2)


@pytest.mark.claim("compile.aot.inductor-min-cut")
def test_inductor_partitions_with_min_cut_by_default():
    import inspect
    import re

    from torch._inductor import compile_fx
    from torch._inductor import config as inductor_config

    assert inductor_config.custom_partitioner_fn is None
    source = inspect.getsource(compile_fx.partition_fn)
    start = source.index("if config.custom_partitioner_fn is None:")
    branch = source[start:source.index("else:", start)]
    assert re.search(r"return min_cut_rematerialization_partition\(", branch)
