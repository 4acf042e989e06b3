"""Probes for docs/guide/myths.md: the corrections that no other page states."""
import pytest
import torch
from torch import nn


@pytest.mark.claim("guide.myth.batchnorm-stats-are-buffers")
def test_batchnorm_running_stats_are_buffers(device):
    bn = nn.BatchNorm1d(3).to(device)
    assert [name for name, _ in bn.named_parameters()] == ["weight", "bias"]
    assert [name for name, _ in bn.named_buffers()] == ["running_mean", "running_var", "num_batches_tracked"]
    assert not any(b.requires_grad for b in bn.buffers())
    optimizer = torch.optim.SGD(bn.parameters(), lr=0.5)
    assert [len(group["params"]) for group in optimizer.param_groups] == [2]
    x = torch.randn(8, 3, device=device) * 3 + 5
    bn(x).sum().backward()
    after_forward = bn.running_mean.clone()
    assert not torch.equal(after_forward, torch.zeros(3, device=device))  # the forward moved it
    assert bn.running_mean.grad is None
    optimizer.step()
    assert torch.equal(bn.running_mean, after_forward)  # the step did not


@pytest.mark.claim("guide.myth.module-backward-is-not-called")
def test_a_module_backward_method_is_never_called():
    assert not hasattr(nn.Module, "backward")
    assert not hasattr(nn.Linear(2, 2), "backward")
    calls = []

    class Doubler(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(3))

        def forward(self, x):
            return x * self.w * 2

        def backward(self, grad):  # looks like an override; autograd never looks for it
            calls.append(grad)
            return grad * 1000

    m = Doubler()
    x = torch.arange(3.0, requires_grad=True)
    out = m(x)
    assert type(out.grad_fn).__name__ == "MulBackward0"
    out.sum().backward()
    assert calls == []
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    assert m.w.grad.tolist() == [0.0, 2.0, 4.0]
