"""Probes for docs/module/to-the-dispatcher.md."""
import re
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
import torchgen
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode


class AtenLog(TorchDispatchMode):
    """Names of the aten operators that reach the dispatcher below autograd."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


@pytest.mark.claim("module.dispatch.linear-is-a-builtin")
def test_linear_forward_calls_a_c_builtin():
    assert F.linear is torch._C._nn.linear
    assert type(F.linear).__name__ == "builtin_function_or_method"
    assert "F.linear(input, self.weight, self.bias)" in Path(nn.modules.linear.__file__).read_text()


@pytest.mark.claim("module.dispatch.linear-decomposes")
def test_linear_arrives_as_t_and_addmm(device):
    lin = nn.Linear(4, 3, device=device)
    x = torch.randn(2, 4, device=device, requires_grad=True)
    with AtenLog() as log:
        y = lin(x)
    assert log.ops == ["aten.t.default", "aten.addmm.default"]
    assert y.grad_fn.name() == "AddmmBackward0"
    no_bias = nn.Linear(4, 3, bias=False, device=device)
    with AtenLog() as log:
        y = no_bias(x)
    assert log.ops == ["aten.t.default", "aten.mm.default"]
    assert y.grad_fn.name() == "MmBackward0"
    batch = torch.randn(5, 2, 4, device=device)
    with AtenLog() as log:
        y = lin(batch)
    assert log.ops == ["aten.view.default", "aten.t.default", "aten.addmm.default", "aten.view.default"]
    assert y.grad_fn.name() == "ViewBackward0"


@pytest.mark.claim("module.dispatch.linear-composite")
def test_linear_is_composite_implicit_on_dense_backends():
    yaml = (Path(torchgen.__file__).parent / "packaged/ATen/native/native_functions.yaml").read_text()
    entry = re.search(r"^- func: linear\(.*?(?=^- func: )", yaml, re.M | re.S).group(0)
    assert re.search(r"^    CompositeImplicitAutograd: linear$", entry, re.M)
    assert re.search(r"^    NestedTensorCPU, NestedTensorHPU, NestedTensorCUDA: nested_linear$", entry, re.M)
    assert re.search(r"^    MPS: _mps_linear$", entry, re.M)
    table = dict(line.split(": ", 1) for line in torch._C._dispatch_dump_table("aten::linear").splitlines()
                 if ": " in line)
    for key in ("AutogradCPU", "AutogradCUDA", "CPU", "CUDA"):
        assert table[key].endswith("[math kernel]"), key  # the composite runs, autograd sees its pieces
    # derivatives.yaml does give linear a formula, used only where a backend has its own linear kernel
    derivatives = (Path(torchgen.__file__).parent / "packaged/autograd/derivatives.yaml").read_text()
    assert re.search(r"^- name: linear\(", derivatives, re.M)
    assert table["AutogradNestedTensor"].endswith("[autograd kernel]")


@pytest.mark.claim("module.dispatch.whole-model")
def test_a_small_model_is_a_short_list_of_aten_calls(device):
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).to(device)
    x = torch.randn(3, 4, device=device)
    with AtenLog() as log:
        net(x)
    # relu's backward formula uses its result, so autograd saves the output: a detach shows up
    expected = ["aten.t.default", "aten.addmm.default", "aten.relu.default", "aten.detach.default",
                "aten.t.default", "aten.addmm.default"]
    assert log.ops == expected
    net.register_forward_hook(lambda m, a, o: None)  # hooks are Python: they add no aten call
    with AtenLog() as log:
        net(x)
    assert log.ops == expected
    with torch.no_grad(), AtenLog() as log:
        net(x)
    assert log.ops == [op for op in expected if op != "aten.detach.default"]
