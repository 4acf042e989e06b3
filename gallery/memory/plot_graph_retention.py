"""
Memory kept alive by an accumulated loss
========================================

Four ways of keeping a running loss over a training loop on the CPU. After every step we
count, without looking at the process's memory, what is still alive:

* the bytes of every step's activation storages that are not yet freed, tracked with
  ``StorageWeakRef`` weak references to the storages;
* the number of autograd nodes reachable from the running total's ``grad_fn``.

``total = total + loss`` without a backward keeps every step's graph, which grows by the
same number of nodes each step, and every step's activation stays alive
:claim-ref:`memory.graph.accumulate-grows`. With a per-step ``loss.backward()`` the
activations are freed, but the number of reachable nodes still grows every step
:claim-ref:`memory.graph.backward-frees-activations-not-nodes`. With ``loss.item()`` or
``loss.detach()`` every step's activation is freed before the next step
:claim-ref:`memory.graph.item-frees`.
"""
import matplotlib.pyplot as plt
import torch
from torch.multiprocessing.reductions import StorageWeakRef

STEPS = 30
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1))
batches = [(torch.randn(64, 128), torch.randn(64, 1)) for _ in range(STEPS)]


def reachable_nodes(fn):
    seen, stack = set(), [fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(n for n, _ in node.next_functions)
    return len(seen)


def run(strategy):
    """Train-like loop; returns (alive activation bytes, graph nodes) after each step."""
    watched, alive_bytes, nodes = [], [], []
    total = 0.0 if strategy in ("item()", "detach()") else 0
    for x, y in batches:
        hidden = model[1](model[0](x))  # kept separately so that we can watch its storage
        watched.append((StorageWeakRef(hidden.untyped_storage()), hidden.untyped_storage().nbytes()))
        loss = torch.nn.functional.mse_loss(model[2](hidden), y)
        del hidden
        if strategy == "total + loss":
            total = total + loss
        elif strategy == "total + loss, backward each step":
            loss.backward()
            total = total + loss
        elif strategy == "item()":
            total += loss.item()
        elif strategy == "detach()":
            total = total + loss.detach()
        del loss
        alive_bytes.append(sum(n for ref, n in watched if not ref.expired()))
        fn = getattr(total, "grad_fn", None)
        nodes.append(reachable_nodes(fn) if fn is not None else 0)
    return alive_bytes, nodes


strategies = ["total + loss", "total + loss, backward each step", "item()", "detach()"]
results = {s: run(s) for s in strategies}

for s in strategies:
    alive, nodes = results[s]
    print(f"{s:34s} activations alive after {STEPS} steps: {alive[-1] / 1024:8.1f} KiB, "
          f"graph nodes: {nodes[-1]}")

# %%
# Left: bytes of the hidden activations (64 x 256 float32 = 64 KiB per step) that are still
# alive. Right: size of the graph hanging off the running total.

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
steps = range(1, STEPS + 1)
styles = {"total + loss": "-", "total + loss, backward each step": "--", "item()": ":", "detach()": "-."}
for s in strategies:
    alive, nodes = results[s]
    left.plot(steps, [b / 1024 for b in alive], styles[s], label=s, linewidth=2)
    right.plot(steps, nodes, styles[s], label=s, linewidth=2)
left.set_xlabel("training step")
left.set_ylabel("activation storage still alive (KiB)")
left.set_title("Saved tensors kept by the running total")
right.set_xlabel("training step")
right.set_ylabel("autograd nodes reachable from total.grad_fn")
right.set_title("Size of the retained graph")
left.legend(fontsize=8)
fig.tight_layout()
plt.show()
