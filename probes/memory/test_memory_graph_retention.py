"""Probes for docs/memory/graph-retention.md."""
import pytest
import torch
from torch.multiprocessing.reductions import StorageWeakRef

STEPS = 5


def graph_nodes(fn):
    """All autograd nodes reachable from `fn` through next_functions."""
    seen, stack = set(), [fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return seen


def saved_storage_bytes(fn):
    """Bytes of the distinct storages the graph below `fn` holds as saved tensors."""
    storages = {}
    for node in graph_nodes(fn):
        for name in dir(node):
            if not name.startswith("_saved_"):
                continue
            try:
                value = getattr(node, name)
            except RuntimeError:  # already freed by a backward
                continue
            if isinstance(value, torch.Tensor):
                storage = value.untyped_storage()
                storages[storage.data_ptr()] = storage.nbytes()
    return sum(storages.values())


def model(device):
    gen = torch.Generator().manual_seed(0)
    lin = torch.nn.Linear(64, 64)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(64, 64, generator=gen) / 8)
    return lin.to(device)


def step(lin, device, refs):
    """One training-like step; remembers a weak reference to its activation."""
    x = torch.randn(32, 64, device=device)
    h = torch.relu(lin(x))
    refs.append(StorageWeakRef(h.untyped_storage()))
    return h.pow(2).mean()


@pytest.mark.claim("memory.graph.accumulate-grows")
def test_summing_loss_tensors_chains_graphs(device):
    lin, refs, total = model(device), [], 0
    counts, saved = [], []
    for _ in range(STEPS):
        total = total + step(lin, device, refs)
        counts.append(len(graph_nodes(total.grad_fn)))
        saved.append(saved_storage_bytes(total.grad_fn))
    growth = [b - a for a, b in zip(counts, counts[1:])]
    assert growth == [6] * (STEPS - 1)  # the same six new nodes every step
    per_step = 2 * 32 * 64 * 4  # the input x (saved by addmm) and h (saved by relu and pow)
    assert saved == [per_step * (i + 1) for i in range(STEPS)]
    assert all(not r.expired() for r in refs)  # every step's activation is still alive


@pytest.mark.claim("memory.graph.item-frees")
def test_item_and_detach_keep_no_graph(device):
    lin, refs = model(device), []
    total = 0.0
    for _ in range(STEPS):
        total += step(lin, device, refs).item()
    assert type(total) is float
    assert all(r.expired() for r in refs)

    refs = []
    total = torch.zeros((), device=device)
    for _ in range(STEPS):
        total += step(lin, device, refs).detach()
    assert total.grad_fn is None and not total.requires_grad
    assert all(r.expired() for r in refs)


@pytest.mark.claim("memory.graph.inplace-accumulate")
def test_inplace_accumulation_into_a_tensor_also_chains(device):
    lin, refs = model(device), []
    total = torch.zeros((), device=device)  # does not require grad ...
    assert not total.requires_grad
    sizes = []
    for _ in range(STEPS):
        total += step(lin, device, refs)  # ... until a loss is added in place
        sizes.append(len(graph_nodes(total.grad_fn)))
    assert total.requires_grad and type(total.grad_fn).__name__ == "AddBackward0"
    assert [b - a for a, b in zip(sizes, sizes[1:])] == [6] * (STEPS - 1)  # six more nodes at every step
    assert all(not r.expired() for r in refs)


@pytest.mark.claim("memory.graph.backward-frees-activations-not-nodes")
def test_per_step_backward_frees_saved_tensors_but_not_the_chain(device):
    lin, refs, total = model(device), [], 0
    counts = []
    for _ in range(STEPS):
        loss = step(lin, device, refs)
        loss.backward()
        total = total + loss
        counts.append(len(graph_nodes(total.grad_fn)))
    assert all(r.expired() for r in refs)  # backward released every step's activation
    assert saved_storage_bytes(total.grad_fn) == 0
    assert [b - a for a, b in zip(counts, counts[1:])] == [6] * (STEPS - 1)  # but the chain still grows


@pytest.mark.claim("memory.graph.kept-outputs")
def test_kept_outputs_keep_their_graphs(device):
    lin = model(device)
    kept, refs = [], []
    for _ in range(STEPS):
        x = torch.randn(32, 64, device=device)
        h = torch.relu(lin(x))
        refs.append(StorageWeakRef(x.untyped_storage()))  # x is saved by addmm for the weight's gradient
        kept.append(h.sum(dim=1))  # e.g. predictions collected for a metric
        del x, h
    assert all(not r.expired() for r in refs)
    assert all(k.grad_fn is not None for k in kept)

    kept, refs = [], []
    with torch.no_grad():
        for _ in range(STEPS):
            x = torch.randn(32, 64, device=device)
            refs.append(StorageWeakRef(x.untyped_storage()))
            kept.append(torch.relu(lin(x)).sum(dim=1))
            del x
    assert all(r.expired() for r in refs)
    assert all(k.grad_fn is None for k in kept)
