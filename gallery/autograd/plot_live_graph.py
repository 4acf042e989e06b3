"""
The graph autograd recorded, drawn from ``grad_fn``
===================================================

Nothing here is typed in: each picture is read off the output's ``grad_fn`` by
following ``next_functions`` until the walk reaches the ``AccumulateGrad`` nodes of the
leaves. A node's label lists the tensors among the ``_saved_*`` attributes it holds for
backward, with their shapes. The two panels run the *same* Python function with a
different loop count.

A leaf's ``AccumulateGrad`` node has an empty ``next_functions``
:claim-ref:`autograd.graph.accumulator-node`, which is where the walk stops. Each call of
the function records a new graph, with one ``MulBackward0`` node per pass of its loop
:claim-ref:`autograd.graph.rebuilt-every-run`.
"""
import matplotlib.pyplot as plt
import torch

torch.manual_seed(0)
x = torch.randn(4, 3)
w1 = torch.randn(3, 5, requires_grad=True)
b1 = torch.zeros(5, requires_grad=True)
w2 = torch.randn(5, 1, requires_grad=True)
leaf_names = {id(w1): "w1", id(b1): "b1", id(w2): "w2"}


def model(steps):
    h = torch.tanh(x @ w1 + b1)
    for _ in range(steps):  # Python decides how many nodes get recorded
        h = h * torch.sigmoid(h)
    return ((h @ w2) ** 2).mean()


def walk(root):
    """Every node reachable from root, its edges, and its depth (longest path from root)."""
    depth, edges, order = {root: 0}, [], [root]
    i = 0
    while i < len(order):
        node = order[i]
        i += 1
        for child, _ in node.next_functions:
            if child is None:
                continue
            edges.append((node, child))
            if child not in depth:
                order.append(child)
            depth[child] = max(depth.get(child, 0), depth[node] + 1)
    # propagate longest-path depths until stable (the graph is a DAG)
    changed = True
    while changed:
        changed = False
        for parent, child in edges:
            if depth[child] < depth[parent] + 1:
                depth[child] = depth[parent] + 1
                changed = True
    return order, edges, depth


def label(node):
    if type(node).__name__ == "AccumulateGrad":
        return f"AccumulateGrad\n({leaf_names.get(id(node.variable), '?')})"
    saved = []
    for name in dir(node):
        value = getattr(node, name) if name.startswith("_saved_") else None
        if isinstance(value, torch.Tensor):  # skip saved sizes, scalars and the like
            saved.append(f"{name.removeprefix('_saved_')} {tuple(value.shape)}")
    return node.name() + ("\nsaves " + ", ".join(saved) if saved else "")


def draw(ax, root, title):
    nodes, edges, depth = walk(root)
    rows = {}
    for node in nodes:
        rows.setdefault(depth[node], []).append(node)
    pos = {}
    for d, row in rows.items():
        for j, node in enumerate(row):
            pos[node] = ((j + 1) / (len(row) + 1), -d)
    for parent, child in edges:
        (x0, y0), (x1, y1) = pos[parent], pos[child]
        if y0 - y1 > 1:  # an edge that jumps over a level goes round it, on the left
            side = min(x0, x1) - 0.2 - 0.03 * (int(-y0) % 2)
            ax.plot([x0 - 0.1, side, side], [y0 - 0.1, y0 - 0.1, y1 + 0.1], color="tab:orange", lw=1)
            ax.annotate("", xy=(x1 - 0.1, y1 + 0.1), xytext=(side, y1 + 0.1),
                        arrowprops=dict(arrowstyle="->", color="tab:orange", lw=1))
        else:
            ax.annotate("", xy=(x1, y1 + 0.25), xytext=(x0, y0 - 0.25),
                        arrowprops=dict(arrowstyle="->", color="0.4", lw=1))
    for node, (px, py) in pos.items():
        leaf = type(node).__name__ == "AccumulateGrad"
        ax.text(px, py, label(node), ha="center", va="center", fontsize=7,
                bbox=dict(boxstyle="round", fc="#cde8c9" if leaf else "#dbe4f3", ec="0.3"))
    ax.set_xlim(-0.05, 1)
    ax.set_ylim(-max(depth.values()) - 0.7, 0.7)
    ax.set_title(f"{title}\n{len(nodes)} nodes, {len(edges)} edges", fontsize=9)
    ax.axis("off")
    return len(nodes)


loss_a, loss_b = model(steps=1), model(steps=3)

# %%
# Two calls, two graphs. Arrows point from a node to the nodes its ``next_functions``
# name, from the loss down to the leaves; orange arrows skip a level (``h`` feeds both
# ``sigmoid`` and the product). Green boxes are the leaves' ``AccumulateGrad`` nodes. The
# input ``x`` does not require grad, and an input that does not require grad gets
# ``None`` in ``next_functions`` instead of a node :claim-ref:`autograd.graph.next-functions`.

fig, axes = plt.subplots(1, 2, figsize=(12, 9))
n_a = draw(axes[0], loss_a.grad_fn, "model(steps=1)")
n_b = draw(axes[1], loss_b.grad_fn, "model(steps=3)")
fig.tight_layout()
print(f"steps=1 recorded {n_a} nodes, steps=3 recorded {n_b} nodes")
print("same node objects?", loss_a.grad_fn is loss_b.grad_fn)
plt.show()
