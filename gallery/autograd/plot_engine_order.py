"""
The order in which the engine runs a graph's nodes
==================================================

A small graph is recorded twice, the same arithmetic with two of its operations written in
the other order. Before each backward, a pre-hook on every node (``register_prehook``)
appends the node to a list when the engine is about to run it; the picture numbers each node
by its place in that list and prints its ``_sequence_nr()``, the counter a node takes when the
forward creates it.

For ``c = a * b`` with ``a = x * 2`` and ``b = x + 1``, the nodes of ``a`` and ``b`` become
ready together, and the one created later runs first; writing ``b`` before ``a`` reverses
their order :claim-ref:`autograd.engine.order`. ``x`` is used twice, and its
``AccumulateGrad`` runs once, with both gradients summed
:claim-ref:`autograd.engine.sums-before-running`.
"""
import matplotlib.pyplot as plt
import torch


def record(a_first):
    x = torch.ones(3, requires_grad=True)
    if a_first:
        a = x * 2
        b = x + 1
    else:
        b = x + 1
        a = x * 2
    c = a * b
    out = c.sum()
    labels = {out.grad_fn: "out", c.grad_fn: "c", a.grad_fn: "a", b.grad_fn: "b"}
    return x, out, labels


def walk(root):
    """Every node reachable from `root` with its depth (longest path from the root), and the edges."""
    depth, edges, todo = {root: 0}, [], [root]
    while todo:
        node = todo.pop()
        for child, _ in node.next_functions:
            if child is None:
                continue
            edges.append((node, child))
            if depth.get(child, -1) < depth[node] + 1:
                depth[child] = depth[node] + 1
                todo.append(child)
    return depth, edges


def run_order(a_first):
    x, out, labels = record(a_first)
    depth, edges = walk(out.grad_fn)
    labels.update({node: "x" for node in depth if node not in labels})  # x's AccumulateGrad
    ran = []
    for node in depth:
        node.register_prehook(lambda grads, node=node: ran.append(node))
    out.backward()
    assert x.grad.tolist() == [6.0, 6.0, 6.0]  # d/dx of (2x)(x+1) at 1 = 4x + 2
    return depth, edges, ran, labels


panels = {"a = x * 2 written first": run_order(True), "b = x + 1 written first": run_order(False)}
for title, (_, _, ran, labels) in panels.items():
    print(title, "->", [f"{labels[node]}: {node.name()}" for node in ran])

# %%
# Each box is a node, placed by its distance from the output; the large number is the
# order in which the engine ran it, ``seq`` its ``_sequence_nr()`` (an ``AccumulateGrad``
# reports the largest 64-bit value, shown as "max").

fig, axes = plt.subplots(1, 2, figsize=(9, 4.6))
for ax, (title, (depth, edges, ran, labels)) in zip(axes, panels.items()):
    levels = {}
    for node, d in depth.items():
        levels.setdefault(d, []).append(node)
    where = {}
    for d, nodes in levels.items():
        nodes.sort(key=lambda n: n._sequence_nr() if n.name() != "torch::autograd::AccumulateGrad" else 0)
        for i, node in enumerate(nodes):
            where[node] = ((i + 1) / (len(nodes) + 1), -d)
    for parent, child in edges:
        (x0, y0), (x1, y1) = where[parent], where[child]
        ax.annotate("", xy=(x1, y1 + 0.22), xytext=(x0, y0 - 0.22),
                    arrowprops={"arrowstyle": "->", "color": "0.5"})
    for node, (x, y) in where.items():
        step = ran.index(node) + 1
        name = node.name().replace("torch::autograd::", "")
        seq = node._sequence_nr()
        seq = "max" if seq == 2 ** 64 - 1 else seq
        ax.text(x, y, f"{step}: {labels[node]}\n{name}\nseq {seq}", ha="center", va="center",
                fontsize=8, bbox={"boxstyle": "round", "facecolor": plt.cm.viridis(step / (len(ran) + 1)),
                                  "alpha": 0.45})
    ax.set_xlim(0, 1)
    ax.set_ylim(-max(depth.values()) - 0.6, 0.6)
    ax.set_title(f"{title}\nran: " + " → ".join(labels[n] for n in ran), fontsize=9)
    ax.axis("off")
fig.suptitle("out = (a * b).sum(): the engine's order of execution, from pre-hooks on every node", fontsize=10)
fig.tight_layout()
plt.show()
