"""Probes for the hook-execution claims added to docs/autograd/hooks.md
(checked against the official note "Autograd mechanics")."""
import pytest
import torch
import torch.nn as nn


def _hooked_chain(device, log):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: log.append(("y tensor hook", g.tolist())))
    y.grad_fn.register_prehook(lambda grad_outputs: log.append("y node pre-hook"))
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: log.append("y node hook"))
    return x, y


@pytest.mark.claim("autograd.hooks.grad-inputs-tensor-hook-fires")
def test_tensor_hook_fires_without_its_node(device):
    log = []
    x, y = _hooked_chain(device, log)
    (g,) = torch.autograd.grad((y * 3).sum(), inputs=y)
    assert g.tolist() == [3.0, 3.0]
    assert log == [("y tensor hook", [3.0, 3.0])]  # y.grad_fn never ran
    assert x.grad is None


@pytest.mark.claim("autograd.hooks.grad-input-node-runs-when-needed")
def test_grad_runs_input_node_only_when_another_input_needs_it(device):
    log = []
    x, y = _hooked_chain(device, log)
    gy, gx = torch.autograd.grad((y * 3).sum(), inputs=(y, x))
    assert gy.tolist() == [3.0, 3.0] and gx.tolist() == [6.0, 6.0]
    assert log == [("y tensor hook", [3.0, 3.0]), "y node pre-hook", "y node hook"]


@pytest.mark.claim("autograd.hooks.backward-inputs-runs-input-node")
def test_backward_inputs_still_runs_the_input_node(device):
    log = []
    x, y = _hooked_chain(device, log)
    (y * 3).sum().backward(inputs=[y])
    assert log == [("y tensor hook", [3.0, 3.0]), "y node pre-hook", "y node hook"]
    assert y.grad.tolist() == [3.0, 3.0]
    assert x.grad is None  # the node ran, but nothing was accumulated into x


@pytest.mark.claim("autograd.hooks.retain-grad-before-prehooks")
def test_retained_grad_is_set_before_node_prehooks(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x * 3
    y.retain_grad()
    log = []
    y.register_hook(lambda g: (log.append(("tensor hook", y.grad is None)), g * 10)[1])
    y.grad_fn.register_prehook(lambda go: log.append(("node pre-hook", y.grad is None)))
    y.grad_fn.register_hook(lambda gi, go: log.append(("node hook", y.grad is None)))
    y.sum().backward()
    # .grad is still unset in the tensor hook, already set in the node's pre-hook
    assert log == [("tensor hook", True), ("node pre-hook", False), ("node hook", False)]
    assert y.grad.tolist() == [10.0, 10.0]  # the retained value is the one after the tensor hook
    assert x.grad.tolist() == [30.0, 30.0]


@pytest.mark.claim("autograd.hooks.accumulate-node-order")
def test_leaf_hooks_around_accumulate_grad(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x * 3
    acc = y.grad_fn.next_functions[0][0]
    assert acc.name() == "torch::autograd::AccumulateGrad"
    log = []
    # registered in an order different from the order they run in
    acc.register_hook(lambda gi, go: log.append(("node hook", x.grad is None)))
    x.register_post_accumulate_grad_hook(lambda t: log.append(("post-accumulate hook", t.grad is None)))
    acc.register_prehook(lambda go: log.append(("node pre-hook", x.grad is None)))
    x.register_hook(lambda g: log.append(("tensor hook", x.grad is None)))
    y.sum().backward()
    assert log == [
        ("tensor hook", True),
        ("node pre-hook", True),
        ("post-accumulate hook", False),
        ("node hook", False),
    ]


@pytest.mark.claim("autograd.hooks.multi-grad-hook")
def test_multi_grad_hook_after_the_last_tensor_hook(device):
    a = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    b = torch.tensor([3.0, 4.0], device=device, requires_grad=True)
    log = []
    a.register_hook(lambda g: log.append("a"))
    b.register_hook(lambda g: log.append("b"))

    def on_all(grads):
        log.append(("multi", [None if g is None else g.tolist() for g in grads]))

    handle = torch.autograd.graph.register_multi_grad_hook((a, b), on_all)
    (a * 2 + b * 5).sum().backward()
    assert len(log) == 3 and sorted(log[:2]) == ["a", "b"]
    assert log[2] == ("multi", [[2.0, 2.0], [5.0, 5.0]])
    log.clear()
    (a * 2).sum().backward()  # b takes no part: its slot is None
    assert log == ["a", ("multi", [[2.0, 2.0], None])]
    handle.remove()


@pytest.mark.claim("autograd.hooks.global-module-backward-hook")
def test_global_full_backward_hook_wraps_module_outputs():
    m = nn.Linear(2, 2)
    seen = []
    handle = torch.nn.modules.module.register_module_full_backward_hook(
        lambda mod, grad_input, grad_output: seen.append(type(mod).__name__)
    )
    try:
        out = m(torch.ones(1, 2, requires_grad=True))
        assert type(out.grad_fn).__name__ == "BackwardHookFunctionBackward"
        assert type(out.grad_fn.next_functions[0][0]).__name__ == "AddmmBackward0"
        out.sum().backward()
        assert seen == ["Linear"]
    finally:
        handle.remove()
    assert type(m(torch.ones(1, 2)).grad_fn).__name__ == "AddmmBackward0"


@pytest.mark.claim("autograd.hooks.inplace-before-after")
def test_hooks_before_and_after_inplace_see_different_gradients(device):
    x = torch.tensor(1.0, device=device, requires_grad=True)
    t = x.sin()
    seen = {}
    t.register_hook(lambda g: seen.__setitem__("before", g.item()))
    t.cos_()
    t.register_hook(lambda g: seen.__setitem__("after", g.item()))
    t.backward()
    assert seen["after"] == 1.0  # gradient with respect to the new value, cos(sin(x))
    expected = -torch.sin(torch.sin(torch.tensor(1.0))).item()  # d cos(s) / ds at s = sin(x)
    assert seen["before"] == pytest.approx(expected, rel=1e-6)


@pytest.mark.claim("autograd.hooks.bound-to-old-grad-fn")
def test_hook_stays_with_the_old_grad_fn(device):
    x = torch.tensor(1.0, device=device, requires_grad=True)
    t = x.sin()
    old = t.grad_fn
    log = []
    t.register_hook(lambda g: log.append("registered before cos_"))
    t.cos_()
    assert type(old).__name__ == "SinBackward0"
    assert type(t.grad_fn).__name__ == "CosBackward0" and t.grad_fn is not old
    assert t.grad_fn.next_functions[0][0] is old
    t.register_hook(lambda g: log.append("registered after cos_"))
    t.backward()
    # the later hook belongs to CosBackward0, reached first; the earlier one to SinBackward0
    assert log == ["registered after cos_", "registered before cos_"]
