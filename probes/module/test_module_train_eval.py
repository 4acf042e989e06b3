"""Probes for docs/module/train-eval.md."""
import re

import pytest
import torch
from torch import nn


def make_net(device):
    return nn.Sequential(nn.Linear(4, 4), nn.Sequential(nn.Dropout(0.5), nn.BatchNorm1d(4))).to(device)


@pytest.mark.claim("module.train-eval.flags-only")
def test_eval_only_flips_training_flags(device):
    net = make_net(device)
    assert all(m.training for m in net.modules())
    params_before = [(p, p.detach().clone(), p.requires_grad) for p in net.parameters()]
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    for p, value, requires_grad in params_before:
        assert p.requires_grad == requires_grad and torch.equal(p, value)
    assert net.train() is net and all(m.training for m in net.modules())
    net.train(False)
    assert not any(m.training for m in net.modules())  # eval() is train(False)


@pytest.mark.claim("module.train-eval.autograd-still-on")
def test_eval_mode_still_records_the_graph(device):
    net = make_net(device).eval()
    x = torch.randn(8, 4, device=device)
    y = net(x)
    assert torch.is_grad_enabled()
    assert y.requires_grad and y.grad_fn is not None
    y.sum().backward()
    assert net[0].weight.grad is not None
    with torch.no_grad():
        assert not net(x).requires_grad


@pytest.mark.claim("module.train-eval.dropout")
def test_dropout_in_train_and_eval(device):
    torch.manual_seed(0)
    drop = nn.Dropout(0.25)
    ones = torch.ones(100_000, device=device)
    out = drop(ones)
    values = out.unique().cpu().tolist()
    assert len(values) == 2 and values[0] == 0.0
    assert values[1] == pytest.approx(1 / 0.75)  # survivors are scaled by 1/(1-p)
    zero_fraction = (out == 0).float().mean().item()
    assert 0.24 < zero_fraction < 0.26
    drop.eval()
    assert drop(ones) is ones  # identity: the very same tensor object comes back


@pytest.mark.claim("module.train-eval.batchnorm-train")
def test_batchnorm_training_uses_and_updates_batch_statistics(device):
    torch.manual_seed(0)
    bn = nn.BatchNorm1d(3).to(device)
    x = torch.randn(16, 3, device=device) * 2 + 5
    out = bn(x)
    mean, biased_var = x.mean(0), x.var(0, unbiased=False)
    expected = (x - mean) / torch.sqrt(biased_var + bn.eps)
    assert torch.allclose(out, expected, atol=1e-4)  # normalised with the batch's own statistics
    assert torch.allclose(bn.running_mean, 0.9 * 0 + 0.1 * mean, atol=1e-6)
    assert torch.allclose(bn.running_var, 0.9 * 1 + 0.1 * x.var(0, unbiased=True), atol=1e-5)  # unbiased
    assert bn.num_batches_tracked.item() == 1


@pytest.mark.claim("module.train-eval.batchnorm-eval")
def test_batchnorm_eval_uses_running_statistics(device):
    torch.manual_seed(0)
    bn = nn.BatchNorm1d(3).to(device)
    bn(torch.randn(16, 3, device=device) * 2 + 5)
    bn.eval()
    mean, var, count = bn.running_mean.clone(), bn.running_var.clone(), bn.num_batches_tracked.clone()
    x = torch.randn(4, 3, device=device)
    out = bn(x)
    assert torch.allclose(out, (x - mean) / torch.sqrt(var + bn.eps) * bn.weight + bn.bias, atol=1e-4)
    assert torch.equal(bn.running_mean, mean) and torch.equal(bn.running_var, var)
    assert torch.equal(bn.num_batches_tracked, count)
    assert bn(torch.randn(1, 3, device=device)).shape == (1, 3)  # one sample is fine in eval


@pytest.mark.claim("module.train-eval.batchnorm-batch-one")
def test_batchnorm_rejects_one_sample_in_training_but_counts_it(device):
    bn = nn.BatchNorm1d(3).to(device)
    with pytest.raises(ValueError, match=re.escape(
            "Expected more than 1 value per channel when training, got input size torch.Size([1, 3])")):
        bn(torch.randn(1, 3, device=device))
    assert bn.num_batches_tracked.item() == 1  # incremented before the check
    assert bn.running_mean.abs().sum().item() == 0.0  # statistics untouched
    assert bn.eval()(torch.randn(1, 3, device=device)).shape == (1, 3)


@pytest.mark.claim("module.train-eval.no-grad-still-updates")
def test_no_grad_does_not_freeze_running_statistics(device):
    bn = nn.BatchNorm1d(3).to(device)
    x = torch.randn(8, 3, device=device) + 10
    with torch.no_grad():
        bn(x)
    assert torch.allclose(bn.running_mean, 0.1 * x.mean(0), atol=1e-5)
    assert bn.num_batches_tracked.item() == 1
