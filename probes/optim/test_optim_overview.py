"""Probes for docs/optim/index.md."""
import pytest
import torch
from torch import nn
from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook
from torch.profiler import ProfilerActivity, profile


@pytest.mark.claim("optim.overview.references")
def test_optimizer_holds_the_parameter_objects(device):
    net = nn.Linear(2, 2, device=device)
    opt = torch.optim.SGD(net.parameters(), lr=0.5)
    assert opt.param_groups[0]["params"][0] is net.weight
    net(torch.ones(1, 2, device=device)).sum().backward()
    grad = net.weight.grad.clone()
    before = net.weight.detach().clone()
    opt.step()
    assert torch.equal(net.weight.detach(), before - 0.5 * grad)  # the model sees the update
    assert net.weight.grad is not None  # step() does not clear gradients


@pytest.mark.claim("optim.overview.class-step-wrapped")
def test_first_instance_wraps_the_class_step():
    class Halve(torch.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.5})

        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    p.data.mul_(group["lr"])

    original = Halve.__dict__["step"]
    assert not hasattr(original, "hooked")
    w = nn.Parameter(torch.full((2,), 4.0))
    opt = Halve([w])
    wrapped = Halve.__dict__["step"]
    assert wrapped is not original and wrapped.hooked is True and wrapped.__wrapped__ is original
    Halve([nn.Parameter(torch.ones(1))])
    assert Halve.__dict__["step"] is wrapped  # wrapped once, on the class, not per instance
    assert "step" not in vars(opt)
    opt.step()
    assert w.tolist() == [2.0, 2.0]


@pytest.mark.claim("optim.overview.profiler-names")
def test_step_and_zero_grad_are_profiler_ranges():
    w = nn.Parameter(torch.ones(2))
    opt = torch.optim.Adam([w])
    w.grad = torch.ones(2)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        opt.step()
        opt.zero_grad()
    names = [e.name for e in prof.events()]
    assert names.count("Optimizer.step#Adam.step") == 1
    assert names.count("Optimizer.zero_grad#Adam.zero_grad") == 1


@pytest.mark.claim("optim.overview.hook-order")
def test_step_hooks_order(device):
    w = nn.Parameter(torch.ones(2, device=device))
    w.grad = torch.ones(2, device=device)
    opt = torch.optim.SGD([w], lr=0.5)
    order = []
    handles = [
        register_optimizer_step_pre_hook(lambda o, args, kwargs: order.append("global pre")),
        register_optimizer_step_post_hook(lambda o, args, kwargs: order.append("global post")),
        opt.register_step_pre_hook(lambda o, args, kwargs: order.append("pre")),
        opt.register_step_post_hook(lambda o, args, kwargs: order.append(("post", w.tolist()))),
    ]
    try:
        opt.step(lambda: order.append("closure"))
    finally:
        for h in handles:
            h.remove()
    assert order == ["global pre", "pre", "closure", ("post", [0.5, 0.5]), "global post"]
    order.clear()
    opt.step()
    assert order == []  # removed handles


@pytest.mark.claim("optim.overview.hook-handles")
def test_every_hook_registration_returns_a_removable_handle():
    from torch.utils.hooks import RemovableHandle
    opt = torch.optim.SGD([nn.Parameter(torch.ones(2))], lr=0.5)
    handles = [register_optimizer_step_pre_hook(lambda o, args, kwargs: None),
               register_optimizer_step_post_hook(lambda o, args, kwargs: None),
               opt.register_step_pre_hook(lambda o, args, kwargs: None),
               opt.register_step_post_hook(lambda o, args, kwargs: None)]
    for handle in handles:
        handle.remove()
    assert [type(h) for h in handles] == [RemovableHandle] * 4


@pytest.mark.claim("optim.overview.pre-hook-return")
def test_pre_hook_may_replace_the_arguments(device):
    w = nn.Parameter(torch.ones(2, device=device))
    opt = torch.optim.SGD([w], lr=0.5)
    calls = []

    def closure():
        calls.append("replacement closure")

    def pre_hook(o, args, kwargs):
        calls.append(args == (opt,) and kwargs == {})  # the positional arguments include the optimizer
        return (args[0], closure), {}

    handle = opt.register_step_pre_hook(pre_hook)
    opt.step()
    assert calls == [True, "replacement closure"]
    handle.remove()
    opt.register_step_pre_hook(lambda o, args, kwargs: "bad")
    with pytest.raises(RuntimeError, match=r"must return None or a tuple of \(new_args, new_kwargs\), but got bad\."):
        opt.step()
