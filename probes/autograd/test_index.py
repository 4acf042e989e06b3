"""Probes for docs/autograd/index.md."""
import pytest
import torch


@pytest.mark.claim("autograd.overview.no-requires-grad-no-graph")
def test_nothing_recorded_or_saved_without_requires_grad(device):
    packed = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        a = torch.tensor([1.0, 2.0], device=device)
        b = (a.exp() * a).sin()
        assert b.grad_fn is None and not b.requires_grad
        assert packed == []
        a.requires_grad_()
        c = (a.exp() * a).sin()
        assert c.grad_fn.name() == "SinBackward0"
        assert len(packed) == 4  # exp's result, both mul inputs, sin's input


@pytest.mark.claim("autograd.overview.one-pass-every-leaf")
def test_one_backward_runs_each_node_once_for_all_leaves(device):
    values = [1.0 + i / 100 for i in range(50)]
    leaves = [torch.tensor(v, device=device, dtype=torch.float64, requires_grad=True) for v in values]
    total = leaves[0] * 1.0
    for leaf in leaves[1:]:
        total = total * leaf  # a chain of 50 MulBackward0 nodes
    runs = {}
    node, nodes = total.grad_fn, []
    while node is not None and node.name() == "MulBackward0":
        nodes.append(node)
        node = node.next_functions[0][0]
    assert len(nodes) == 50
    for n in nodes:
        n.register_prehook(lambda g, n=n: runs.__setitem__(id(n), runs.get(id(n), 0) + 1))
    (total / total.detach()).backward()  # d/dleaf_i of prod/prod_const = 1/leaf_i
    assert sorted(runs.values()) == [1] * 50
    for v, leaf in zip(values, leaves):
        assert torch.allclose(leaf.grad, torch.tensor(1.0 / v, device=device, dtype=torch.float64))
