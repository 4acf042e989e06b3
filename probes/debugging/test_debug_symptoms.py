"""Probes for docs/debugging/symptoms.md."""
import re

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

NOT_A_LEAF = "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"


@pytest.mark.claim("debug.symptom.grad-none-non-leaf")
def test_grad_of_a_non_leaf_is_none_with_a_warning():
    v = torch.randn(3, requires_grad=True) * 2  # any result of an op is a non-leaf
    assert not v.is_leaf and v.grad_fn is not None
    (v * v).sum().backward()
    with pytest.warns(UserWarning, match=re.escape(NOT_A_LEAF)):
        assert v.grad is None


@pytest.mark.claim("debug.symptom.retain-grad-fills")
def test_retain_grad_fills_a_non_leaf_grad():
    u = torch.randn(3, requires_grad=True) * 2
    u.retain_grad()
    (u * u).sum().backward()
    assert torch.equal(u.grad, 2 * u.detach())


@pytest.mark.claim("debug.symptom.conversion-non-leaf")
def test_a_conversion_makes_a_non_leaf():
    leaf = torch.randn(3, requires_grad=True)
    converted = leaf.double()  # a conversion is an operation: a non-leaf, recorded in the graph
    assert not converted.is_leaf
    assert type(converted.grad_fn).__name__ == "ToCopyBackward0"


@pytest.mark.claim("debug.symptom.to-same-returns-leaf")
def test_to_with_nothing_to_convert_returns_the_leaf():
    leaf = torch.randn(3, requires_grad=True)
    assert leaf.to("cpu") is leaf
    assert leaf.to(torch.float32) is leaf


@pytest.mark.claim("debug.symptom.grad-none-to-cuda")
@pytest.mark.devices("cuda")
def test_moving_a_leaf_to_the_gpu_makes_a_non_leaf(device):
    leaf = torch.randn(3, requires_grad=True)
    moved = leaf.to(device)
    assert not moved.is_leaf and type(moved.grad_fn).__name__ == "ToCopyBackward0"
    (moved * moved).sum().backward()
    assert leaf.grad is not None and moved.grad is None


@pytest.mark.claim("debug.symptom.grad-none-unused-or-cut")
def test_grad_stays_none_when_the_graph_does_not_reach_the_parameter(device):
    a = torch.ones(2, device=device, requires_grad=True)
    b = torch.ones(2, device=device, requires_grad=True)
    c = torch.ones(2, device=device, requires_grad=True)
    with torch.no_grad():
        from_no_grad = c * 3  # recorded nothing
    loss = (a * 2).sum() + (b.detach() * 5).sum() + from_no_grad.sum()
    loss.backward()
    assert a.grad.tolist() == [2.0, 2.0]
    assert b.grad is None  # cut by detach()
    assert c.grad is None  # used only under no_grad
    unused = torch.nn.Linear(2, 2).to(device)
    used = torch.nn.Linear(2, 2).to(device)
    used(torch.ones(1, 2, device=device)).sum().backward()
    assert all(p.grad is None for p in unused.parameters())
    assert all(p.grad is not None for p in used.parameters())


@pytest.mark.claim("debug.symptom.no-grad-result-untracked")
def test_a_no_grad_result_is_untracked(device):
    c = torch.ones(2, device=device, requires_grad=True)
    with torch.no_grad():
        from_no_grad = c * 3
    assert from_no_grad.grad_fn is None
    assert not from_no_grad.requires_grad


@pytest.mark.claim("debug.symptom.no-grad-is-not-eval")
def test_no_grad_does_not_switch_dropout_off(device):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Dropout(p=0.5)).to(device)
    x = torch.ones(1000, device=device)
    with torch.no_grad():
        out = model(x)
    assert model.training
    assert set(out.unique().tolist()) == {0.0, 2.0}  # still dropping and rescaling by 1/(1-p)


@pytest.mark.claim("debug.symptom.eval-disables-dropout")
def test_eval_switches_dropout_off(device):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Dropout(p=0.5)).to(device)
    x = torch.ones(1000, device=device)
    model.eval()
    with torch.no_grad():
        assert torch.equal(model(x), x)
    assert not model[0].training  # eval() reached the child


@pytest.mark.claim("debug.symptom.batchnorm-train-eval")
def test_batchnorm_uses_and_updates_batch_statistics_in_train_mode(device):
    bn = torch.nn.BatchNorm1d(1).to(device)
    x = torch.tensor([[1.0], [3.0]], device=device)  # batch mean 2, biased var 1, unbiased var 2
    out = bn(x)
    assert torch.allclose(out.flatten(), torch.tensor([-1.0, 1.0], device=device), atol=1e-3)
    assert torch.allclose(bn.running_mean, torch.tensor([0.2], device=device))  # 0.9 * 0 + 0.1 * 2
    assert torch.allclose(bn.running_var, torch.tensor([1.1], device=device))  # 0.9 * 1 + 0.1 * 2


@pytest.mark.claim("debug.symptom.batchnorm-no-grad-updates")
def test_batchnorm_updates_under_no_grad_in_train_mode(device):
    bn = torch.nn.BatchNorm1d(1).to(device)
    x = torch.tensor([[1.0], [3.0]], device=device)
    bn(x)
    assert torch.allclose(bn.running_mean, torch.tensor([0.2], device=device))
    with torch.no_grad():
        bn(x)  # no_grad does not stop the update
    assert bn.training
    assert torch.allclose(bn.running_mean, torch.tensor([0.38], device=device))  # 0.9 * 0.2 + 0.1 * 2


@pytest.mark.claim("debug.symptom.batchnorm-eval-frozen")
def test_batchnorm_eval_uses_frozen_running_statistics(device):
    bn = torch.nn.BatchNorm1d(1).to(device)
    x = torch.tensor([[1.0], [3.0]], device=device)
    bn(x)
    bn.eval()
    mean_before, var_before = bn.running_mean.clone(), bn.running_var.clone()
    evaluated = bn(x)
    assert torch.equal(bn.running_mean, mean_before)  # frozen in eval mode
    assert torch.equal(bn.running_var, var_before)
    expected = (x - bn.running_mean) / torch.sqrt(bn.running_var + bn.eps)
    assert torch.allclose(evaluated, expected)


@pytest.mark.claim("debug.symptom.python-loop-dispatch")
def test_element_loop_calls_the_dispatcher_per_element():
    t = torch.arange(100.0)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        total = sum(t[i] for i in range(100))
    counts = {a.key: a.count for a in prof.key_averages()}
    assert counts["aten::select"] == 100  # one operator call per t[i]
    assert counts["aten::add"] == 100  # one per +, the first one adding t[0] to the start value 0
    assert total.item() == 4950.0
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        vectorised = t.sum()
    counts = {a.key: a.count for a in prof.key_averages()}
    assert counts["aten::sum"] == 1
    assert "aten::select" not in counts and "aten::add" not in counts
    assert vectorised.item() == 4950.0
