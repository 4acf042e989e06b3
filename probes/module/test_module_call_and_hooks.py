"""Probes for docs/module/call-and-hooks.md."""
import pytest
import torch
from torch import nn
from torch.nn.modules import module as module_py


@pytest.mark.claim("module.call.call-is-wrapped-call-impl")
def test_call_goes_through_wrapped_call_impl(device):
    assert nn.Module.__call__ is nn.Module._wrapped_call_impl
    seen = []

    class Spy(nn.Linear):
        def _call_impl(self, *args, **kwargs):
            seen.append("_call_impl")
            return super()._call_impl(*args, **kwargs)

    spy = Spy(2, 2, device=device)
    assert spy._compiled_call_impl is None
    spy(torch.ones(1, 2, device=device))
    assert seen == ["_call_impl"]


def all_hooks(module, log, tag=""):
    module.register_forward_pre_hook(lambda m, args: log.append(tag + "forward pre-hook"))
    module.register_forward_hook(lambda m, args, out: log.append(tag + "forward hook"))
    module.register_full_backward_pre_hook(lambda m, grad_out: log.append(tag + "backward pre-hook"))
    module.register_full_backward_hook(lambda m, grad_in, grad_out: log.append(tag + "backward hook"))


class Traced(nn.Module):
    def __init__(self, log):
        super().__init__()
        self.log = log
        self.lin = nn.Linear(2, 2)

    def forward(self, x):
        self.log.append("forward")
        return self.lin(x)


@pytest.mark.claim("module.call.hook-order")
def test_hook_order(device):
    log = []
    m = Traced(log).to(device)
    all_hooks(m, log)
    m.register_forward_pre_hook(lambda mod, args: log.append("prepended pre-hook"), prepend=True)
    x = torch.randn(1, 2, device=device, requires_grad=True)
    y = m(x)
    log.append("backward() called")
    y.sum().backward()
    assert log == ["prepended pre-hook", "forward pre-hook", "forward", "forward hook", "backward() called",
                   "backward pre-hook", "backward hook"]


@pytest.mark.claim("module.call.global-hooks")
def test_global_hooks_run_first_and_for_every_module(device):
    log = []
    handles = [
        module_py.register_module_forward_pre_hook(lambda m, a: log.append(f"global pre {type(m).__name__}")),
        module_py.register_module_forward_hook(lambda m, a, o: log.append(f"global hook {type(m).__name__}")),
    ]
    try:
        net = nn.Sequential(nn.Linear(2, 2), nn.ReLU()).to(device)
        net.register_forward_pre_hook(lambda m, a: log.append("own pre Sequential"))
        net.register_forward_hook(lambda m, a, o: log.append("own hook Sequential"))
        net(torch.ones(1, 2, device=device))
    finally:
        for handle in handles:
            handle.remove()
    assert log == ["global pre Sequential", "own pre Sequential",
                   "global pre Linear", "global hook Linear",
                   "global pre ReLU", "global hook ReLU",
                   "global hook Sequential", "own hook Sequential"]
    log.clear()
    net(torch.ones(1, 2, device=device))
    assert log == ["own pre Sequential", "own hook Sequential"]  # removed handles are gone


@pytest.mark.claim("module.call.backward-hook-node")
def test_full_backward_hook_inserts_nodes(device):
    lin = nn.Linear(2, 2, device=device)
    x = torch.randn(1, 2, device=device, requires_grad=True)
    assert lin(x).grad_fn.name() == "AddmmBackward0"
    lin.register_full_backward_hook(lambda m, gi, go: None)
    y = lin(x)
    assert y.grad_fn.name() == "BackwardHookFunctionBackward"
    addmm = y.grad_fn.next_functions[0][0]
    assert addmm.name() == "AddmmBackward0"
    inputs = [fn.name() for fn, _ in addmm.next_functions if fn is not None]
    assert "BackwardHookFunctionBackward" in inputs  # the input side is wrapped too


@pytest.mark.claim("module.call.backward-hook-wraps-inputs")
def test_forward_sees_other_tensor_objects_with_a_backward_hook(device):
    received = []

    class Keep(nn.Module):
        def forward(self, x):
            received.append(x)
            return x * 2

    m = Keep()
    x = torch.ones(2, device=device, requires_grad=True)
    m(x)
    assert received[-1] is x
    handle = m.register_full_backward_hook(lambda mod, gi, go: None)
    m(x)
    assert received[-1] is not x
    assert received[-1].grad_fn.name() == "BackwardHookFunctionBackward"
    assert received[-1].data_ptr() == x.data_ptr()  # same memory, new autograd identity
    handle.remove()
    m(x)
    assert received[-1] is x


@pytest.mark.claim("module.call.forward-skips-hooks")
def test_calling_forward_directly_skips_hooks(device):
    log = []
    m = Traced(log).to(device)
    all_hooks(m, log)
    x = torch.randn(1, 2, device=device, requires_grad=True)
    via_forward = m.forward(x)
    via_call = m(x)
    assert torch.equal(via_forward, via_call)
    assert log == ["forward", "forward pre-hook", "forward", "forward hook"]
    assert via_forward.grad_fn.name() == "AddmmBackward0"
    assert via_call.grad_fn.name() == "BackwardHookFunctionBackward"


@pytest.mark.claim("module.call.override-call-skips-hooks")
def test_overriding_call_skips_hooks(device):
    log = []

    class OwnCall(nn.Linear):
        def __call__(self, x):
            return self.forward(x)

    m = OwnCall(2, 2, device=device)
    m.register_forward_pre_hook(lambda mod, args: log.append("pre"))
    m.register_forward_hook(lambda mod, args, out: log.append("hook"))
    m(torch.ones(1, 2, device=device))
    assert log == []


@pytest.mark.claim("module.call.hooks-replace-values")
def test_hooks_can_replace_input_output_and_gradient(device):
    lin = nn.Linear(2, 2, device=device)
    lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    lin.register_forward_hook(lambda m, args, out: out + 100)
    out = lin(torch.ones(1, 2, device=device))
    assert torch.allclose(out, lin.bias.detach() + 100)  # input zeroed, output shifted
    lin2 = nn.Linear(2, 2, device=device)
    lin2.register_full_backward_hook(lambda m, grad_in, grad_out: (torch.full_like(grad_in[0], 7.0),))
    x = torch.ones(1, 2, device=device, requires_grad=True)
    lin2(x).sum().backward()
    assert x.grad.cpu().tolist() == [[7.0, 7.0]]


@pytest.mark.claim("module.call.always-call")
def test_always_call_hook_runs_when_forward_raises(device):
    log = []

    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Boom()
    m.register_forward_hook(lambda mod, args, out: log.append("always_call hook"), always_call=True)
    m.register_forward_hook(lambda mod, args, out: log.append("ordinary hook"))
    with pytest.raises(ValueError, match="boom"):
        m(torch.ones(1, device=device))
    assert log == ["always_call hook"]


@pytest.mark.claim("module.call.backward-hook-without-input-grad")
def test_backward_hook_fires_at_the_output_when_no_input_needs_grad(device):
    seen = []
    lin = nn.Linear(2, 2, device=device)
    lin.register_full_backward_hook(lambda m, grad_in, grad_out: seen.append((grad_in, grad_out)))
    data = torch.randn(3, 2, device=device)  # plain input data: no gradient wanted
    with pytest.warns(UserWarning, match="Full backward hook is firing when gradients are computed with "
                                         "respect to module outputs since no inputs require gradients"):
        lin(data).sum().backward()
    assert len(seen) == 1
    grad_in, grad_out = seen[0]
    assert grad_in == (None,)
    assert grad_out[0].shape == (3, 2)
    assert lin.weight.grad is not None  # the parameters still get their gradients
    seen_in = []
    lin2 = nn.Linear(2, 2, device=device)
    lin2.register_full_backward_hook(lambda m, grad_in, grad_out: seen_in.append(grad_in[0].shape))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lin2(data.clone().requires_grad_()).sum().backward()  # an input that requires grad: no warning
    assert seen_in == [(3, 2)]


@pytest.mark.claim("module.call.nested-own-hook-order")
def test_nested_modules_own_hooks_order(device):
    events = []
    net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)).to(device)
    for name, mod in net.named_modules():
        name = name or "net"
        mod.register_forward_pre_hook(lambda m, args, n=name: events.append(("pre", n)))
        mod.register_forward_hook(lambda m, args, out, n=name: events.append(("hook", n)))
        mod.register_full_backward_pre_hook(lambda m, go, n=name: events.append(("bpre", n)))
        mod.register_full_backward_hook(lambda m, gi, go, n=name: events.append(("bhook", n)))
    y = net(torch.randn(4, 2, device=device, requires_grad=True))
    assert events == [("pre", "net"), ("pre", "0"), ("hook", "0"), ("pre", "1"), ("hook", "1"),
                      ("pre", "2"), ("hook", "2"), ("hook", "net")]
    events.clear()
    y.sum().backward()
    assert events == [("bpre", "net"), ("bpre", "2"), ("bhook", "2"), ("bpre", "1"), ("bhook", "1"),
                      ("bpre", "0"), ("bhook", "0"), ("bhook", "net")]
