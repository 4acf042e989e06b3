"""Probes for docs/autograd/hooks.md."""
import pytest
import torch


@pytest.mark.claim("autograd.hooks.leaf-order")
def test_tensor_hooks_then_post_accumulate_hook(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    log = []
    x.register_hook(lambda g: log.append(("first", g.tolist(), x.grad is None)))
    x.register_hook(lambda g: g * 10)  # returning a tensor replaces the gradient
    x.register_hook(lambda g: log.append(("third", g.tolist(), x.grad is None)))
    (x * 3).sum().backward()
    assert log == [
        ("first", [3.0, 3.0], True),
        ("third", [30.0, 30.0], True),
    ]
    assert x.grad.tolist() == [30.0, 30.0]


@pytest.mark.claim("autograd.hooks.post-accumulate-last")
def test_post_accumulate_hook_runs_after_tensor_hooks(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    log = []
    x.register_post_accumulate_grad_hook(lambda t: log.append(("post", t.grad.tolist(), t is x)))
    x.register_hook(lambda g: log.append(("tensor", g.tolist(), x.grad is None)) or g * 10)
    (x * 3).sum().backward()
    assert log == [("tensor", [3.0, 3.0], True), ("post", [30.0, 30.0], True)]


@pytest.mark.claim("autograd.hooks.non-leaf-order")
def test_hooks_around_a_node(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x * 3
    log = []
    y.grad_fn.register_prehook(lambda grad_outputs: log.append("node prehook"))
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: log.append("node hook"))
    y.register_hook(lambda g: log.append("tensor hook on y"))  # registered last, runs first
    x.register_hook(lambda g: log.append("tensor hook on x"))
    y.sum().backward()
    assert log == ["tensor hook on y", "node prehook", "node hook", "tensor hook on x"]


@pytest.mark.claim("autograd.hooks.node-hook-sees-both-sides")
def test_node_hook_arguments(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x * 3
    seen = []
    y.grad_fn.register_hook(lambda gin, gout: seen.append((gin[0].tolist(), gout[0].tolist())))
    (y * 2).sum().backward()
    assert seen == [([6.0, 6.0], [2.0, 2.0])]  # (grad_inputs, grad_outputs)


@pytest.mark.claim("autograd.hooks.post-accumulate-leaf-only")
def test_post_accumulate_hook_only_on_leaves(device):
    x = torch.ones(2, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)


@pytest.mark.claim("autograd.hooks.hook-needs-requires-grad")
def test_register_hook_needs_requires_grad(device):
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        torch.ones(2, device=device).register_hook(lambda g: g)
    w = torch.ones(2, device=device, requires_grad=True)
    seen = []
    w.register_hook(lambda g: seen.append(g.tolist()))
    (w * 3).sum().backward()
    assert seen == [[3.0, 3.0]]


@pytest.mark.claim("autograd.hooks.lifetime")
def test_leaf_hooks_persist_and_handles_remove(device):
    x = torch.ones(2, device=device, requires_grad=True)
    calls = []
    handle = x.register_hook(lambda g: calls.append(1))
    (x * 2).sum().backward()
    (x * 2).sum().backward()  # a new graph: the leaf's hook runs again
    assert len(calls) == 2
    handle.remove()
    (x * 2).sum().backward()
    assert len(calls) == 2


@pytest.mark.claim("autograd.hooks.non-leaf-hook-one-graph")
def test_non_leaf_hook_stays_with_its_graph(device):
    x = torch.ones(2, device=device, requires_grad=True)
    calls = []
    y = x * 2
    y.register_hook(lambda g: calls.append("y"))
    (x * 2).sum().backward()  # the same expression again: a different non-leaf, y's hook is not involved
    assert calls == []
    y.sum().backward()
    assert calls == ["y"]  # it runs in y's own graph
