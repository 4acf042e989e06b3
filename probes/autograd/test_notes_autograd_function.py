"""Probes for the claim added to docs/autograd/custom-function.md
(checked against the official note "Autograd mechanics")."""
import pytest
import torch


@pytest.mark.claim("autograd.function.saved-tensors-version-check")
def test_saved_tensors_checks_versions_on_access(device):
    log = []

    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            log.append("backward entered")
            (a,) = ctx.saved_tensors
            log.append("saved_tensors read")
            return g * 2

    x = torch.ones(2, device=device, requires_grad=True)
    a = x * 1
    out = Double.apply(a)
    out.sum().backward(retain_graph=True)
    assert log == ["backward entered", "saved_tensors read"]
    log.clear()
    a.add_(1)
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation has been modified by an inplace operation"):
        out.sum().backward()
    assert log == ["backward entered"]  # the check fired at the ctx.saved_tensors access
