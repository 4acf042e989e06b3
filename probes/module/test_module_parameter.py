"""Probes for docs/module/parameter.md."""
import copy

import pytest
import torch
from torch import nn


@pytest.mark.claim("module.parameter.tensor-subclass")
def test_parameter_is_a_tensor_subclass_that_requires_grad(device):
    p = nn.Parameter(torch.randn(2, device=device))
    assert type(p).__mro__ == (nn.Parameter, torch.Tensor, torch._C.TensorBase, object)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert repr(p).startswith("Parameter containing:\n")
    frozen = nn.Parameter(torch.randn(2, device=device), requires_grad=False)
    assert type(frozen) is nn.Parameter and not frozen.requires_grad


@pytest.mark.claim("module.parameter.wraps-without-copy")
def test_parameter_aliases_the_tensor_it_wraps(device):
    t = torch.randn(3, device=device)
    p = nn.Parameter(t)
    assert p is not t
    assert p.data_ptr() == t.data_ptr()
    assert not t.requires_grad  # the wrapped tensor itself is untouched
    with torch.no_grad():
        p.mul_(0.0)
    assert t.abs().sum().item() == 0.0


@pytest.mark.claim("module.parameter.always-a-leaf")
def test_parameter_is_a_leaf_even_from_history_or_under_no_grad(device):
    x = torch.randn(2, device=device, requires_grad=True)
    p = nn.Parameter(x * 2)
    assert p.is_leaf and p.grad_fn is None and p.requires_grad
    with torch.no_grad():
        q = nn.Parameter(torch.randn(2, device=device))
    assert q.requires_grad


@pytest.mark.claim("module.parameter.ops-return-tensors")
def test_results_of_ops_on_parameters_are_plain_tensors(device):
    p = nn.Parameter(torch.randn(3, device=device))
    for name, result in (("p + 1", p + 1), ("p[0]", p[0]), ("p.view(3)", p.view(3)),
                         ("torch.relu(p)", torch.relu(p)), ("p.clone()", p.clone()),
                         ("p.detach()", p.detach())):
        assert type(result) is torch.Tensor, name
    assert nn.Parameter.__torch_function__ is torch._C._disabled_torch_function_impl


@pytest.mark.claim("module.parameter.float-only")
def test_integer_parameter_needs_requires_grad_false(device):
    ints = torch.arange(3, device=device)
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        nn.Parameter(ints)
    p = nn.Parameter(ints, requires_grad=False)
    assert type(p) is nn.Parameter and p.dtype == torch.int64


@pytest.mark.claim("module.parameter.deepcopy")
def test_deepcopy_makes_a_new_parameter_with_its_own_memory(device):
    p = nn.Parameter(torch.randn(3, device=device))
    c = copy.deepcopy(p)
    assert type(c) is nn.Parameter and c.requires_grad
    assert c.data_ptr() != p.data_ptr()
    assert torch.equal(c, p)


@pytest.mark.claim("module.parameter.subclass-flag")
def test_parameter_of_a_tensor_subclass_keeps_the_subclass(device):
    class MyTensor(torch.Tensor):
        pass

    mine = torch.ones(2, device=device).as_subclass(MyTensor)
    p = nn.Parameter(mine)
    assert type(p) is MyTensor  # not nn.Parameter ...
    assert isinstance(p, nn.Parameter) and p._is_param  # ... yet it passes isinstance, via the metaclass
    assert p.requires_grad
    m = nn.Module()
    m.w = p
    assert m._parameters["w"] is p
