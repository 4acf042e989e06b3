"""
The graph FX records, drawn from its nodes
==========================================

``symbolic_trace`` of a small module with a leaf ``Linear`` and a user-written submodule.
The picture is read off ``graph.nodes``: one box per node, in graph order, coloured by its
``op``, with its ``target`` and an arrow from each node it takes as input
(``all_input_nodes``). Below it, the ``forward`` that FX generated from that graph.

Tracing ``(torch.relu(self.lin(x)) * self.scale).sum(dim=-1)`` records all six opcodes
:claim-ref:`compile.fx.node-kinds`; a user-written module is traced through while a
``torch.nn`` module stays one ``call_module`` :claim-ref:`compile.fx.leaf-modules`.
"""
import matplotlib.pyplot as plt
import torch
from torch import fx, nn


class Shift(nn.Module):  # user-written: inlined by the tracer
    def forward(self, x):
        return torch.sigmoid(x) + 1


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.scale = nn.Parameter(torch.ones(4))
        self.shift = Shift()

    def forward(self, x):
        return (torch.relu(self.lin(self.shift(x))) * self.scale).sum(dim=-1)


traced = fx.symbolic_trace(Model())
nodes = list(traced.graph.nodes)
for node in nodes:
    print(f"{node.op:14s} {node.name:10s} target={node.target}")
x = torch.randn(2, 4)
assert torch.equal(traced(x), traced.forward(x))  # the generated forward runs

# %%
# Boxes in graph order, left to right; colour by ``op``.

colours = {op: f"C{i}" for i, op in enumerate(
    ["placeholder", "get_attr", "call_function", "call_module", "call_method", "output"])}
fig, (ax, code_ax) = plt.subplots(2, 1, figsize=(10, 4.8), gridspec_kw={"height_ratios": [1, 1.1]})
where = {node: (i, 0.5 * (i % 2)) for i, node in enumerate(nodes)}
for node in nodes:
    for source in node.all_input_nodes:
        (x0, y0), (x1, y1) = where[source], where[node]
        ax.annotate("", xy=(x1 - 0.3, y1), xytext=(x0 + 0.3, y0), arrowprops={"arrowstyle": "->", "color": "0.5"})
for node, (x0, y0) in where.items():
    target = getattr(node.target, "__name__", str(node.target))
    ax.text(x0, y0, f"{node.op}\n{target}", ha="center", va="center", fontsize=7.5,
            bbox={"boxstyle": "round", "facecolor": colours[node.op], "alpha": 0.35})
ax.set_xlim(-0.7, len(nodes) - 0.3)
ax.set_ylim(-0.4, 0.9)
ax.axis("off")
ax.set_title("traced.graph.nodes: op and target, arrows from all_input_nodes", fontsize=9)
code_ax.text(0, 1, traced.code.strip(), family="monospace", fontsize=9, va="top")
code_ax.axis("off")
code_ax.set_title("traced.code: the forward FX generated", fontsize=9)
fig.tight_layout()
plt.show()
