"""Probes for the claims added to docs/autograd/grad-modes.md
(checked against the official note "Autograd mechanics")."""
import pytest
import torch
import torch.nn as nn


@pytest.mark.claim("autograd.modes.requires-grad-default")
def test_requires_grad_defaults(device):
    for t in (torch.ones(2, device=device), torch.randn(2, device=device), torch.zeros(2, device=device),
              torch.tensor([1.0], device=device), torch.empty(3, device=device)):
        assert t.requires_grad is False
    assert nn.Parameter(torch.ones(2, device=device)).requires_grad is True
    assert all(p.requires_grad for p in nn.Linear(2, 3).parameters())


def _net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))


@pytest.mark.claim("autograd.modes.freeze-parameters")
def test_frozen_parameters_are_left_out_of_the_graph():
    net = _net()
    for p in net[0].parameters():
        p.requires_grad_(False)
    out = net(torch.ones(4, 2))
    # the last Linear's AddmmBackward0: bias, input (from the frozen layer: nothing), weight
    edges = [type(fn).__name__ if fn is not None else None for fn, _ in out.grad_fn.next_functions]
    assert edges == ["AccumulateGrad", None, "TBackward0"]
    out.sum().backward()
    assert net[0].weight.grad is None and net[0].bias.grad is None
    assert net[2].weight.grad is not None and net[2].bias.grad is not None


@pytest.mark.claim("autograd.modes.module-requires-grad")
def test_module_requires_grad_sets_every_parameter():
    net = _net()
    assert [p.requires_grad for p in net.parameters()] == [True] * 4
    assert net.requires_grad_(False) is net
    assert [p.requires_grad for p in net.parameters()] == [False] * 4
    out = net(torch.ones(4, 2))
    assert out.grad_fn is None and not out.requires_grad
    net.requires_grad_()
    assert [p.requires_grad for p in net.parameters()] == [True] * 4


@pytest.mark.claim("autograd.modes.inference-mode-decorator")
def test_inference_mode_and_enable_grad_as_decorators(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)

    @torch.inference_mode()
    def infer(a):
        return a * 2

    @torch.enable_grad()
    def train(a):
        return a * 2

    r = infer(x)
    assert r.is_inference() and not r.requires_grad
    with torch.no_grad():
        t = train(x)
    assert t.requires_grad and type(t.grad_fn).__name__ == "MulBackward0"


@pytest.mark.claim("autograd.modes.no-grad-output-usable-later")
def test_no_grad_results_work_in_grad_mode_later(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    with torch.no_grad():
        c = x * 3
    assert not c.requires_grad and c.grad_fn is None and not c.is_inference()
    y = x * c
    assert torch.equal(y.grad_fn._saved_other, c)  # c is saved by mul: allowed
    out = y.sum()
    out.backward()
    assert x.grad.tolist() == [3.0, 6.0]  # c is a constant for autograd


@pytest.mark.claim("autograd.modes.inference-explicit-requires-grad")
def test_explicit_requires_grad_inside_inference_mode(device):
    with torch.inference_mode():
        a = torch.ones(2, device=device, requires_grad=True)
        p = nn.Parameter(torch.ones(2, device=device))
        b = a * 2
    assert a.requires_grad and a.is_inference()
    assert p.requires_grad
    assert not b.requires_grad and b.grad_fn is None


@pytest.mark.claim("autograd.modes.nn-init-no-grad")
def test_nn_init_writes_parameters_without_recording():
    p = nn.Parameter(torch.ones(3))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        p.normal_()
    for init in (nn.init.normal_, nn.init.uniform_, nn.init.zeros_):
        before = p._version
        assert init(p) is p
        assert p._version == before + 1
        assert p.is_leaf and p.grad_fn is None and p.requires_grad
