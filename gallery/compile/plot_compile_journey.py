"""
A function's journey through Dynamo and AOTAutograd
===================================================

One small function is compiled with a backend that records what each stage hands to
the next: Dynamo's graph of torch-level calls for each region between graph breaks,
then the forward and backward graphs that AOTAutograd derives from it. Nothing is
generated as machine code: the recorded graphs are run as they are.
"""

# %%
# The function and a recording backend
# ------------------------------------
# A ``print`` splits the function: the part before it becomes one graph, the part after
# it another, and the ``print`` itself runs once, as ordinary Python
# :claim-ref:`compile.dynamo.graph-break`. With ``fullgraph=True`` the same ``print`` is an
# error instead :claim-ref:`compile.dynamo.fullgraph`.
import matplotlib.pyplot as plt
import torch
import torch._dynamo
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd


def layer(x, w):
    h = torch.nn.functional.linear(x, w)
    h.mul_(0.5)  # in place: AOTAutograd will make it functional
    print("graph break here")
    return torch.tanh(h).sum()


stages = []  # (region, stage name, GraphModule)


def record(region, name):
    def compiler(gm, example_inputs):
        stages.append((region, name, gm))
        return make_boxed_func(gm.forward)

    return compiler


def backend(gm, example_inputs):
    """Called by Dynamo once per captured region; hands the graph on to AOTAutograd."""
    region = sum(1 for _, name, _ in stages if name == "Dynamo")
    stages.append((region, "Dynamo", gm))
    aot = aot_autograd(fw_compiler=record(region, "AOT forward"), bw_compiler=record(region, "AOT backward"))
    return aot(gm, example_inputs)


torch._dynamo.reset()
x = torch.randn(4, 3, requires_grad=True)
w = torch.randn(2, 3, requires_grad=True)
loss = torch.compile(layer, backend=backend)(x, w)
loss.backward()

# %%
# What each stage saw
# -------------------
# Dynamo's graphs call ``torch`` functions and Tensor methods, in-place ``mul_``
# included, while AOTAutograd's forward graph holds ATen operator overloads, ``linear``
# decomposed and ``mul_`` turned into the out-of-place ``mul``
# :claim-ref:`compile.aot.aten-and-functional`. The forward graph returns, after the real
# output, the tensors that backward needs :claim-ref:`compile.aot.forward-backward-graphs`.
# A backward graph is compiled only when ``backward()`` first runs
# :claim-ref:`compile.aot.backward-compiled-lazily`; the printout shows in which order this
# run compiled the regions' backward graphs.
for region, name, gm in stages:
    print(f"--- region {region}: {name} ---")
    print(gm.code.strip())

# %%
# The same graphs, drawn
# ----------------------
# One column per stage and region; each box is a node that computes something
# (placeholders and outputs left out).


def computing_nodes(gm):
    names = []
    for node in gm.graph.nodes:
        if node.op in ("call_function", "call_method", "call_module"):
            target = node.target if isinstance(node.target, str) else getattr(node.target, "__name__", str(node.target))
            names.append(str(target).replace("aten.", ""))
    return names


columns = sorted(stages, key=lambda s: (s[0], ["Dynamo", "AOT forward", "AOT backward"].index(s[1])))
colours = {"Dynamo": "#4c72b0", "AOT forward": "#55a868", "AOT backward": "#c44e52"}
tallest = max(len(computing_nodes(gm)) for _, _, gm in columns)
fig, ax = plt.subplots(figsize=(2.3 * len(columns), 0.55 * tallest + 1.5))
for col, (region, name, gm) in enumerate(columns):
    ax.text(col, 0.2, f"{name}\nregion {region}", ha="center", va="bottom", fontsize=9, weight="bold")
    for row, label in enumerate(computing_nodes(gm)):
        ax.text(col, -row - 0.6, label, ha="center", va="center", fontsize=8,
                bbox=dict(boxstyle="round,pad=0.3", fc=colours[name], ec="none", alpha=0.85), color="white")
        if row:
            ax.plot([col, col], [-row + 0.25, -row - 0.35], color="grey", lw=0.8, zorder=0)
ax.set_xlim(-0.7, len(columns) - 0.3)
ax.set_ylim(-tallest - 0.5, 1.0)
ax.axis("off")
ax.set_title("Dynamo graph -> AOTAutograd forward and backward, per region between graph breaks")
plt.tight_layout()
plt.show()

# %%
# The compiled function's gradients, compared in this run with those of the same
# computation in eager mode:
x_ref = x.detach().clone().requires_grad_()
w_ref = w.detach().clone().requires_grad_()
(torch.tanh(torch.nn.functional.linear(x_ref, w_ref) * 0.5).sum()).backward()
print("dL/dx matches eager:", torch.allclose(x.grad, x_ref.grad))
print("dL/dw matches eager:", torch.allclose(w.grad, w_ref.grad))
