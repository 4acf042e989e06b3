"""Probes for the older sides of the before/after pairs of docs/debugging/ whose messages name an
autograd node: until 2.13 they name it with its Backward0 suffix (ExpBackward0, UnbindBackward0,
SplitBackward0); since 2.13 as the forward operation (Exp, Unbind, Split)."""
import re

import pytest
import torch

INPLACE = "one of the variables needed for gradient computation has been modified by an inplace operation"
TAIL = re.escape(" is a view and is being modified inplace. This view is the output of a function that returns "
                 "multiple views. Such functions do not allow the output views to be modified inplace.")


@pytest.mark.claim("debug.anomaly.inplace-error-hint-backward-name")
@pytest.mark.torch_version("<2.13")
def test_inplace_error_names_the_backward_node(device):
    x = torch.ones(3, device=device, requires_grad=True)
    w = x.exp()
    w.add_(1)
    with pytest.raises(RuntimeError) as plain:
        w.sum().backward()
    assert INPLACE in str(plain.value)
    assert "which is output 0 of ExpBackward0, is at version 1; expected version 0 instead" in str(plain.value)
    assert "Hint: enable anomaly detection to find the operation that failed to compute its gradient" \
        in str(plain.value)


@pytest.mark.claim("debug.error.multi-output-view-inplace-backward-name")
@pytest.mark.torch_version("<2.13")
def test_inplace_on_an_output_of_unbind_or_split_names_the_backward_node():
    a = torch.ones(2, 3, requires_grad=True).clone()
    first, _ = a.unbind(0)
    with pytest.raises(RuntimeError, match="^Output 0 of UnbindBackward0" + TAIL):
        first.mul_(2)
    b = torch.ones(4, requires_grad=True).clone()
    for part in (b.split(2)[0], b.chunk(2)[0]):
        with pytest.raises(RuntimeError, match="^Output 0 of SplitBackward0" + TAIL):
            part.mul_(2)
    doubled = a.unbind(0)[0].clone().mul_(2)
    assert doubled.tolist() == [2.0, 2.0, 2.0]
