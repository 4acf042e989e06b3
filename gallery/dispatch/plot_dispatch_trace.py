"""
Every aten call of one training step, and the kernels that serve it
=====================================================================

A two-layer network runs one forward and one backward pass twice: once under the
profiler and once under a ``TorchDispatchMode``. For every operator the mode saw, the
dispatcher's own table (``torch._C._dispatch_dump_table``) then says what kind of kernel
fills its ``CPU`` and ``AutogradCPU`` slots.

The profiler records a call as it enters the dispatcher
:claim-ref:`dispatch.call.one-profiler-event`; a dispatch mode never sees ``F.linear``
itself, only the operators it becomes :claim-ref:`dispatch.python.mode-below-autograd`.
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
# What the profiler sees: the script counts the ``aten::`` events, and lists by name the
# top-level ones, those with no ``aten::`` event above them.

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
# What a dispatch mode sees. Inside the mode's handler the mode is off
# :claim-ref:`dispatch.python.mode-disabled-inside`, and what the handler calls goes
# straight to the backends :claim-ref:`dispatch.python.mode-handler-exclusions`.
# ``linear`` is CompositeImplicitAutograd, its ``AutogradCPU`` slot holds its math kernel
# :claim-ref:`dispatch.table.implicit-vs-explicit`, and a mode sees it as ``t`` followed by
# ``addmm`` :claim-ref:`dispatch.table.linear-decomposes`. The script prints the top-level
# calls that never reached the mode, and whether each has a CompositeImplicitAutograd
# kernel.

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
# ``default backend kernel`` is a composite kernel that fills the slot of a backend with
# no kernel of its own :claim-ref:`dispatch.table.computed-slots`,
# :claim-ref:`dispatch.table.slot-precedence`; ``autograd kernel`` is the generated kernel
# (``VariableType_N.cpp``) that records the graph node
# :claim-ref:`dispatch.table.permute-explicit`.

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
