"""
Every aten call of one training step, and the kernels that serve it
=====================================================================

A two-layer network runs one forward and one backward pass twice: once under the
profiler, which records each call as it *enters* the dispatcher, and once under a
``TorchDispatchMode``, which sees only the calls that reach the ``Python`` key, below
Autograd. For every operator the mode saw, the dispatcher's own table
(``torch._C._dispatch_dump_table``) then says what kind of kernel fills its ``CPU`` and
``AutogradCPU`` slots.
"""
import collections
import re

import matplotlib.pyplot as plt
import torch
from torch.profiler import profile
from torch.utils._python_dispatch import TorchDispatchMode

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
x, target = torch.randn(4, 8), torch.randn(4, 1)


def step():
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    return loss


class Recorder(TorchDispatchMode):
    """Records (phase, operator) for every call that reaches the Python key."""

    def __init__(self):
        super().__init__()
        self.phase = "forward"
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls.append((self.phase, func))
        return func(*args, **(kwargs or {}))


# %%
# What the profiler sees: every call that entered the dispatcher. Most of them are made
# from *inside* kernels (``addmm`` calls ``expand`` and ``copy_``, ``mse_loss`` calls
# ``mean``); the top-level ones are those made by Python code or by the autograd engine.

with profile() as prof:
    step()
entered = [e for e in prof.events() if e.name.startswith("aten::")]


def made_by_a_kernel(event):
    parent = event.cpu_parent
    while parent is not None:
        if parent.name.startswith("aten::"):
            return True
        parent = parent.cpu_parent
    return False


top_level = [e.name for e in entered if not made_by_a_kernel(e)]
print(f"{len(entered)} aten calls entered the dispatcher, {len(top_level)} of them top-level:")
print(", ".join(top_level))

# %%
# What a dispatch mode sees: the top-level calls that made it below Autograd. The mode is
# switched off while a kernel runs, so calls made inside kernels never reach it, and the
# CompositeImplicitAutograd operators (``linear``, ``broadcast_tensors``) never arrive at
# all: their kernels ran in the ``AutogradCPU`` slot and called other operators instead
# (``linear`` became ``t`` and ``addmm``).

model.zero_grad()
recorder = Recorder()
with recorder:
    loss = torch.nn.functional.mse_loss(model(x), target)
    recorder.phase = "backward"
    loss.backward()
seen = [f.name() for _, f in recorder.calls]
print(f"{len(seen)} calls reached the Python key:")
print(", ".join(seen))
missing = sorted(set(top_level) - {name.split(".")[0] for name in seen})  # the profiler omits overloads
print("top-level calls that never reached it:", missing)
print("... each of them CompositeImplicitAutograd:",
      all(torch._C._dispatch_has_kernel_for_dispatch_key(name, "CompositeImplicitAutograd") for name in missing))


def slot(op, key):
    """The kind of kernel in `key`'s slot of `op`'s computed dispatch table."""
    for line in torch._C._dispatch_dump_table(op).splitlines():
        match = re.match(rf"^{key}: (fallthrough )?registered at \S+ \[([a-z ]+)\]$", line)
        if match:
            return ("fallthrough " if match.group(1) else "") + match.group(2)
    return "(no kernel)"


counts = collections.defaultdict(collections.Counter)
for phase, func in recorder.calls:
    counts[func.name()][phase] += 1
rows = [[name, str(c["forward"]), str(c["backward"]), slot(name, "CPU"), slot(name, "AutogradCPU")]
        for name, c in counts.items()]

# %%
# Top: the calls in the order they reached the mode. Bottom: one row per operator, in
# order of first appearance. ``kernel`` is a CPU kernel of the operator's own;
# ``default backend kernel`` is a CompositeExplicitAutograd kernel that serves every
# backend; ``autograd kernel`` is the generated VariableType kernel that records the graph.

fig, (trace, ax) = plt.subplots(2, 1, figsize=(11, 0.3 * len(rows) + 3.6),
                                gridspec_kw={"height_ratios": [1.1, 0.3 * len(rows) + 0.6]})
colours = {"forward": "#4c72b0", "backward": "#dd8452"}
for i, (phase, func) in enumerate(recorder.calls):
    trace.bar(i, 1, color=colours[phase], edgecolor="white")
    trace.text(i, 0.5, func.name().removeprefix("aten::"), rotation=90, ha="center", va="center",
               fontsize=7, color="white")
trace.set_xlim(-0.6, len(recorder.calls) - 0.4)
trace.set_yticks([])
trace.set_xlabel("order of arrival at the Python key")
trace.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=c) for c in colours.values()],
             labels=list(colours), loc="upper left", fontsize=8, bbox_to_anchor=(1.0, 1.0))
trace.set_title("aten calls of one training step, below Autograd")

ax.axis("off")
table = ax.table(cellText=rows, colLabels=["operator", "forward", "backward", "CPU slot", "AutogradCPU slot"],
                 loc="center", cellLoc="left", colWidths=[0.3, 0.1, 0.1, 0.25, 0.25])
table.auto_set_font_size(False)
table.set_fontsize(9)
table.scale(1, 1.3)
for (row, _), cell in table.get_celld().items():
    if row == 0:
        cell.set_facecolor("#dde5f0")
    elif rows[row - 1][1] == "0":
        cell.set_facecolor("#fbeee0")  # operators used only by the backward pass
fig.tight_layout()
plt.show()
