"""Probe for the older side of the before/after pair of docs/autograd/custom-function.md on
`Function.boxed_grads_call`, which 2.13 added: until then the attribute does not exist, and a
subclass that sets it still gets its gradients as separate arguments."""
import pytest
import torch
from torch.autograd import Function


class _SetsBoxed(Function):
    boxed_grads_call = True  # an ordinary class attribute before 2.13
    received = []

    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, *grads):
        _SetsBoxed.received.append((type(grads), [type(g) for g in grads]))
        return grads[0] * 2 + grads[1] * 3


@pytest.mark.claim("autograd.function.no-boxed-grads-call")
@pytest.mark.torch_version("<2.13")
def test_boxed_grads_call_does_not_exist_yet(device):
    assert not hasattr(Function, "boxed_grads_call")
    _SetsBoxed.received.clear()
    x = torch.ones(2, device=device, requires_grad=True)
    a, b = _SetsBoxed.apply(x)
    (a.sum() + b.sum()).backward()
    assert _SetsBoxed.received == [(tuple, [torch.Tensor, torch.Tensor])]
    assert x.grad.tolist() == [5.0, 5.0]
