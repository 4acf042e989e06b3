"""Probes for docs/module/apply-and-to.md."""
import pytest
import torch
from torch import nn


@pytest.mark.claim("module.apply.to-keeps-parameter-identity")
def test_to_keeps_the_same_parameter_objects(device):
    net = nn.Linear(3, 2)
    weight = net.weight
    net.weight.grad = torch.ones(2, 3)
    old_ptr = weight.data_ptr()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    assert net.to(device, torch.float64) is net  # in place, returns self
    assert net.weight is weight and type(weight) is nn.Parameter
    assert weight.dtype == torch.float64 and weight.device.type == device
    assert weight.data_ptr() != old_ptr  # new memory behind the old object
    assert weight.grad.dtype == torch.float64  # the gradient is converted too
    assert optimizer.param_groups[0]["params"][0] is net.weight  # still the optimizer's tensor


@pytest.mark.claim("module.apply.buffers-replaced")
def test_to_replaces_buffer_objects(device):
    bn = nn.BatchNorm1d(3).to(device)
    running_mean = bn.running_mean
    bn.double()
    assert bn.running_mean is not running_mean
    assert running_mean.dtype == torch.float32 and bn.running_mean.dtype == torch.float64


@pytest.mark.claim("module.apply.floating-only")
def test_dtype_casts_touch_only_floating_point_tensors(device):
    bn = nn.BatchNorm1d(3).to(device)
    bn.half()
    assert bn.weight.dtype == torch.float16 and bn.running_var.dtype == torch.float16
    assert bn.num_batches_tracked.dtype == torch.int64
    bn.to(torch.float64)
    assert bn.num_batches_tracked.dtype == torch.int64
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex dtypes"):
        bn.to(torch.int32)
    bn.to(torch.float16)
    assert bn.weight.dtype == torch.float16


@pytest.mark.claim("module.apply.overwrite-flag")
def test_future_flag_makes_new_parameter_objects(device):
    net = nn.Linear(3, 2)
    weight = net.weight
    assert not torch.__future__.get_overwrite_module_params_on_conversion()
    torch.__future__.set_overwrite_module_params_on_conversion(True)
    try:
        net.to(device, torch.float64)
    finally:
        torch.__future__.set_overwrite_module_params_on_conversion(False)
    assert net.weight is not weight and type(net.weight) is nn.Parameter
    assert weight.dtype == torch.float32  # the old object is left behind unchanged
    swapped = nn.Linear(3, 2)
    weight = swapped.weight
    assert not torch.__future__.get_swap_module_params_on_conversion()
    torch.__future__.set_swap_module_params_on_conversion(True)
    try:
        swapped.to(device, torch.float64)
    finally:
        torch.__future__.set_swap_module_params_on_conversion(False)
    assert swapped.weight is weight and weight.dtype == torch.float64  # same object, contents swapped


@pytest.mark.claim("module.apply.tensor-to-differs")
def test_tensor_to_returns_new_or_self(device):
    t = torch.ones(2, device=device)
    assert t.to(t.device) is t and t.to(torch.float32) is t  # nothing to do: the same object
    converted = t.to(torch.float64)
    assert converted is not t and t.dtype == torch.float32  # a new tensor; t is unchanged
    m = nn.Linear(2, 2)
    assert m.to(torch.float64) is m  # a module converts itself


@pytest.mark.claim("module.apply.zero-grad-none")
def test_zero_grad_sets_none_by_default(device):
    net = nn.Linear(3, 2, device=device)
    net(torch.randn(4, 3, device=device)).sum().backward()
    grad = net.weight.grad
    assert grad is not None
    net.zero_grad()
    assert net.weight.grad is None and net.bias.grad is None
    net(torch.randn(4, 3, device=device)).sum().backward()
    grad = net.weight.grad
    net.zero_grad(set_to_none=False)
    assert net.weight.grad is grad and grad.abs().sum().item() == 0.0  # zeroed in place
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    optimizer.zero_grad()
    assert net.weight.grad is None


@pytest.mark.claim("module.apply.apply-children-first")
def test_apply_visits_children_before_the_parent():
    net = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.ReLU(), nn.Tanh()))
    order = []
    assert net.apply(lambda m: order.append(type(m).__name__)) is net
    assert order == ["Linear", "ReLU", "Tanh", "Sequential", "Sequential"]
