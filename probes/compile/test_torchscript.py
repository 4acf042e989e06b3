"""Probes for docs/compile/torchscript.md."""
import warnings

import pytest
import torch

from verified.probing.message_capture import observed  # a warning caught with catch_warnings, for the error index


def sign_dependent(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


def three_steps(x):
    for _ in range(3):
        x = x * 2
    return x


def kinds(graph):
    """Node kinds of a TorchScript graph, including those inside sub-blocks."""
    out = []
    for node in graph.nodes():
        out.append(node.kind())
        for block in node.blocks():
            out.extend(kinds(block))
    return out


@pytest.mark.claim("compile.torchscript.deprecated")
@pytest.mark.torch_version(">=2.10,<2.14")  # silent before, a FutureWarning since (test_changes_torchscript.py)
def test_script_trace_save_load_are_deprecated(tmp_path):
    with pytest.warns(DeprecationWarning, match=r"`torch\.jit\.script` is deprecated\. Please switch to "
                                                r"`torch\.compile` or `torch\.export`"):
        torch.jit.script(three_steps)
    with pytest.warns(DeprecationWarning, match=r"`torch\.jit\.trace` is deprecated\. Please switch to "
                                                r"`torch\.compile` or `torch\.export`"):
        torch.jit.trace(three_steps, torch.ones(2))


@pytest.mark.claim("compile.torchscript.save-load-deprecated")
@pytest.mark.torch_version(">=2.10,<2.14")
def test_save_and_load_are_deprecated_and_work(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        scripted = torch.jit.script(three_steps)
    path = tmp_path / "f.pt"
    with pytest.warns(DeprecationWarning, match=r"`torch\.jit\.save` is deprecated\. Please switch to `torch\.export`"):
        torch.jit.save(scripted, str(path))
    with pytest.warns(DeprecationWarning, match=r"`torch\.jit\.load` is deprecated\. Please switch to `torch\.export`"):
        loaded = torch.jit.load(str(path))
    assert torch.equal(loaded(torch.ones(2)), torch.full((2,), 8.0))  # deprecated, still working
    assert torch.equal(loaded(torch.ones(2)), scripted(torch.ones(2)))  # the same result as before saving


@pytest.mark.claim("compile.torchscript.trace-freezes-branch")
def test_trace_records_one_branch():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traced = torch.jit.trace(sign_dependent, torch.ones(3))
    tracer_warnings = [w for w in caught if issubclass(w.category, torch.jit.TracerWarning)]
    assert tracer_warnings
    assert "Converting a tensor to a Python boolean might cause the trace to be incorrect" in str(
        tracer_warnings[0].message)
    observed(tracer_warnings[0].category, str(tracer_warnings[0].message), kind="warning")
    graph_kinds = kinds(traced.graph)
    assert "prim::If" not in graph_kinds
    assert "aten::mul" in graph_kinds and "aten::sub" not in graph_kinds and "aten::gt" not in graph_kinds


@pytest.mark.claim("compile.torchscript.trace-wrong-on-other-branch")
def test_the_trace_keeps_the_branch_it_saw():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(sign_dependent, torch.ones(3))
    negative = torch.full((3,), -3.0)
    assert torch.equal(sign_dependent(negative), torch.full((3,), -4.0))  # Python takes the else branch
    assert torch.equal(traced(negative), torch.full((3,), -6.0))  # the trace still multiplies


@pytest.mark.claim("compile.torchscript.script-keeps-control-flow")
def test_script_keeps_if():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        scripted = torch.jit.script(sign_dependent)
    if_nodes = [n for n in scripted.graph.nodes() if n.kind() == "prim::If"]
    assert len(if_nodes) == 1
    then_block, else_block = list(if_nodes[0].blocks())
    assert "aten::mul" in kinds(then_block) and "aten::sub" in kinds(else_block)
    for x in (torch.full((3,), 3.0), torch.full((3,), -3.0)):
        assert torch.equal(scripted(x), sign_dependent(x))


@pytest.mark.claim("compile.torchscript.loops")
def test_script_keeps_loops_trace_unrolls():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        scripted = torch.jit.script(three_steps)
        traced = torch.jit.trace(three_steps, torch.ones(2))
    assert kinds(scripted.graph).count("prim::Loop") == 1
    assert kinds(scripted.graph).count("aten::mul") == 1  # one multiply, inside the loop body
    assert "prim::Loop" not in kinds(traced.graph)
    assert kinds(traced.graph).count("aten::mul") == 3  # unrolled


@pytest.mark.claim("compile.torchscript.constant-propagation")
def test_constant_propagation_pass_folds():
    graph = torch._C.parse_ir("""
graph(%x : Tensor):
  %two : int = prim::Constant[value=2]()
  %three : int = prim::Constant[value=3]()
  %six : int = aten::mul(%two, %three)
  %eight : int = aten::add(%six, %two)
  %unused : int = aten::mul(%eight, %eight)
  %y : Tensor = aten::mul(%x, %eight)
  return (%y)
""")
    assert kinds(graph).count("aten::mul") == 3 and "aten::add" in kinds(graph)
    torch._C._jit_pass_constant_propagation(graph)
    assert kinds(graph) == ["prim::Constant", "aten::mul"]
    constant = next(n for n in graph.nodes() if n.kind() == "prim::Constant")
    assert constant.i("value") == 8
    mul = next(n for n in graph.nodes() if n.kind() == "aten::mul")
    assert list(mul.inputs())[1].node() is constant


@pytest.mark.claim("compile.torchscript.script-folds-constants")
def test_scripting_already_folds_constants():
    def scaled(x):
        factor = 2 * 3 + 1
        return x * factor

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        scripted = torch.jit.script(scaled)
    assert kinds(scripted.graph) == ["prim::Constant", "aten::mul"]
    constant = next(n for n in scripted.graph.nodes() if n.kind() == "prim::Constant")
    assert constant.i("value") == 7
    assert "7" in scripted.code and "2 * 3" not in scripted.code
