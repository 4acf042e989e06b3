"""
Profile of one training step
============================

One step of a small MLP on the CPU (forward, loss, backward, optimizer) under
``torch.profiler``. The three phases are labelled with ``record_function``. The timeline
below is drawn from the profiler's own events: one box per recorded call, stacked by how
deeply it is nested.

A module's ``aten::linear`` event contains ``aten::t`` and ``aten::addmm``
:claim-ref:`debug.profiler.nesting`, and in the backward pass each graph node is an event
inside a wrapper ``autograd::engine::evaluate_function: <node>``
:claim-ref:`debug.profiler.backward-nodes`.
"""
import matplotlib.pyplot as plt
import torch
from matplotlib.patches import Patch
from torch.profiler import ProfilerActivity, profile, record_function

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)
)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, target = torch.randn(128, 256), torch.randint(0, 10, (128,))


def train_step():
    with record_function("phase: forward"):
        loss = torch.nn.functional.cross_entropy(model(x), target)
    with record_function("phase: backward"):
        loss.backward()
    with record_function("phase: optimizer"):
        opt.step()
        opt.zero_grad()


train_step()  # warm-up: first calls allocate and initialise
with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    train_step()

# %%
# The table, sorted by the time spent in each operator itself: an event's self time is
# its total minus its children's totals :claim-ref:`debug.profiler.self-vs-total`.

print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12))

# %%
# The timeline. Each box is one event; its row is its nesting depth. Colour marks the
# phase the event belongs to.

events = [e for e in prof.events() if e.time_range.end > e.time_range.start]
start = min(e.time_range.start for e in events)


def depth(e):
    d = 0
    while e.cpu_parent is not None:
        e, d = e.cpu_parent, d + 1
    return d


def phase(e):
    while e.cpu_parent is not None:
        e = e.cpu_parent
    return e.name


colours = {"phase: forward": "tab:blue", "phase: backward": "tab:orange", "phase: optimizer": "tab:green"}
fig, ax = plt.subplots(figsize=(12, 5))
max_depth = 0
for e in events:
    d = depth(e)
    max_depth = max(max_depth, d)
    left, width = e.time_range.start - start, e.time_range.end - e.time_range.start
    ax.barh(d, width, left=left, height=0.8, color=colours.get(phase(e), "grey"), edgecolor="white", linewidth=0.3)
    if width > 0.06 * (max(ev.time_range.end for ev in events) - start):  # label only the wide boxes
        ax.text(left + width / 2, d, e.name.replace("autograd::engine::evaluate_function: ", "eval: "),
                ha="center", va="center", fontsize=6, clip_on=True)
ax.set_ylim(max_depth + 0.6, -0.6)
ax.set_xlabel("time since the step began (µs)")
ax.set_ylabel("nesting depth")
ax.set_title("One training step, as recorded by torch.profiler")
ax.legend(handles=[Patch(color=c, label=n) for n, c in colours.items()], loc="lower right", fontsize=8)
fig.tight_layout()

# %%
# Where the self time goes: the twelve operators with the largest self CPU time.

top = sorted(prof.key_averages(), key=lambda a: a.self_cpu_time_total, reverse=True)[:12]
fig2, ax2 = plt.subplots(figsize=(8, 4.5))
ax2.barh([a.key for a in top][::-1], [a.self_cpu_time_total for a in top][::-1], color="tab:purple")
ax2.set_xlabel("self CPU time (µs)")
ax2.set_title("Self time per operator in one step")
fig2.tight_layout()
plt.show()
