"""Probes for the claims added to docs/autograd/derivatives.md on gradients at points where
a function is not differentiable (checked against the official note "Autograd mechanics")."""
import math

import pytest
import torch


def _grad(fn, value, device):
    x = torch.tensor([value], device=device, requires_grad=True)
    fn(x).sum().backward()
    return x.grad.item()


@pytest.mark.claim("autograd.derivatives.kink-min-norm-subgradient")
def test_relu_and_abs_at_zero(device):
    assert _grad(torch.relu, 0.0, device) == 0.0
    assert _grad(torch.abs, 0.0, device) == 0.0
    assert _grad(torch.relu, 1.0, device) == 1.0 and _grad(torch.abs, -2.0, device) == -1.0


@pytest.mark.claim("autograd.derivatives.kink-depends-on-op")
@pytest.mark.torch_version("<2.14")  # clamp's gradient at its bound is 0 since 2.14 (test_changes_clamp.py)
def test_same_function_other_gradient_at_the_kink(device):
    zero = torch.zeros(1, device=device)
    assert _grad(lambda x: torch.clamp(x, min=0), 0.0, device) == 1.0
    assert _grad(lambda x: torch.maximum(x, zero), 0.0, device) == 0.5
    assert _grad(torch.relu, 0.0, device) == 0.0
    # the three agree away from the kink
    for fn in (torch.relu, lambda x: torch.clamp(x, min=0), lambda x: torch.maximum(x, zero)):
        assert _grad(fn, 2.0, device) == 1.0 and _grad(fn, -2.0, device) == 0.0


@pytest.mark.claim("autograd.derivatives.sqrt-zero-inf")
def test_sqrt_at_zero_is_inf(device):
    assert _grad(torch.sqrt, 0.0, device) == math.inf


@pytest.mark.claim("autograd.derivatives.undefined-point-gradients")
def test_gradients_where_the_function_is_undefined(device):
    assert math.isnan(_grad(torch.sqrt, -1.0, device))
    assert math.isnan(_grad(torch.exp, math.nan, device))
    x = torch.tensor([-1.0], device=device, requires_grad=True)
    y = torch.log(x)
    assert math.isnan(y.item())
    y.sum().backward()
    assert x.grad.item() == -1.0  # 1/x, not NaN


@pytest.mark.claim("autograd.derivatives.random-ops-zero-grad")
def test_random_ops_record_a_node_and_give_zero(device):
    p = torch.tensor([0.3, 0.7], device=device, requires_grad=True)
    b = torch.bernoulli(p)
    n = torch.normal(p, 1.0)
    assert b.requires_grad and type(b.grad_fn).__name__ == "BernoulliBackward0"
    assert n.requires_grad and type(n.grad_fn).__name__ == "NormalBackward1"
    (b.sum() + n.sum()).backward()  # no error
    assert p.grad.tolist() == [0.0, 0.0]


@pytest.mark.claim("autograd.derivatives.masked-division-nan")
def test_masking_after_division_still_gives_nan(device):
    x = torch.tensor([1.0, 1.0], device=device, requires_grad=True)
    div = torch.tensor([0.0, 1.0], device=device)
    y = x / div
    assert y.tolist() == [math.inf, 1.0]
    y.retain_grad()
    y[div != 0].sum().backward()
    assert y.grad.tolist() == [0.0, 1.0]  # the masked-out element gets a zero gradient
    g = x.grad.tolist()
    assert math.isnan(g[0]) and g[1] == 1.0


@pytest.mark.claim("autograd.derivatives.mask-before-division")
def test_masking_before_division_gives_zero(device):
    x = torch.tensor([1.0, 1.0], device=device, requires_grad=True)
    div = torch.tensor([0.0, 1.0], device=device)
    mask = div != 0
    safe = torch.zeros_like(x)
    safe[mask] = x[mask] / div[mask]
    safe.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0]


@pytest.mark.claim("autograd.derivatives.masked-tensor-division")
def test_masked_tensor_variant():
    from torch.masked import MaskedTensor, as_masked_tensor

    x = torch.tensor([1.0, 1.0], requires_grad=True)
    div = torch.tensor([0.0, 1.0])
    mask = div != 0
    with pytest.warns(UserWarning, match="not recommended to create a MaskedTensor with a tensor that requires_grad"):
        with pytest.warns(UserWarning, match="The PyTorch API of MaskedTensors is in prototype stage"):
            loss = as_masked_tensor(x / div, mask).sum()
            loss.backward()
    assert isinstance(x.grad, MaskedTensor)
    assert x.grad.get_mask().tolist() == [False, True]
    assert x.grad.get_data()[1].item() == 1.0
