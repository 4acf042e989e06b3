"""Probe for the older side of the before/after pair of docs/autograd/errors.md on empty inputs:
until 2.13 torch.autograd.grad refuses them with a ValueError of its own wording."""
import pytest
import torch


@pytest.mark.claim("autograd.errors.empty-inputs-valueerror")
@pytest.mark.torch_version("<2.13")
def test_empty_inputs_to_grad_raise_valueerror():
    w = torch.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"^grad requires non-empty inputs\.$"):
        torch.autograd.grad((w * 2).sum(), [])
    with pytest.raises(RuntimeError, match=r"^`inputs` argument to `backward\(\)` cannot be empty\.$"):
        (w * 2).sum().backward(inputs=[])
    assert torch.autograd.grad((w * 2).sum(), [w])[0].tolist() == [2.0, 2.0]
