"""
The order of module hooks, from a live forward and backward pass
================================================================

Every module of a small network gets all four kinds of hook (forward pre-hook, forward
hook, full backward pre-hook, full backward hook), and ``forward`` itself logs when it
starts and ends. One forward and one backward pass are run, and each event is drawn at
the time it happened, in the lane of the module it belongs to.
"""
import time

import matplotlib.pyplot as plt
import torch
from torch import nn

events = []  # (seconds since start, module name, event)
start = time.perf_counter()
recording = False


def record(name, what):
    if recording:
        events.append((time.perf_counter() - start, name, what))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        record("net", "forward starts")
        out = self.fc2(self.act(self.fc1(x)))
        record("net", "forward ends")
        return out


net = Block()
for name, module in net.named_modules():
    name = name or "net"
    module.register_forward_pre_hook(lambda m, args, name=name: record(name, "forward pre-hook"))
    module.register_forward_hook(lambda m, args, out, name=name: record(name, "forward hook"))
    module.register_full_backward_pre_hook(lambda m, g_out, name=name: record(name, "backward pre-hook"))
    module.register_full_backward_hook(lambda m, g_in, g_out, name=name: record(name, "backward hook"))

x = torch.randn(32, 8, requires_grad=True)
net(x).square().mean().backward()  # a first pass, not recorded: one-time initialisation
recording = True
start = time.perf_counter()
y = net(x)
record("net", "forward returned to caller")
loss = y.square().mean()
record("net", "backward() called")
loss.backward()
record("net", "backward() returned")

# %%
# The recorded order, as text. The outer module's own forward pre-hook runs before any
# hook of its inner modules and its forward hook after all of them
# :claim-ref:`module.call.global-hooks`. A module's backward hooks run only once
# ``backward()`` is called, the backward pre-hook first :claim-ref:`module.call.hook-order`.
# For nested modules, the outer module's backward hooks enclose the inner ones', and the
# inner modules' hooks run in reverse layer order, each backward pre-hook right before
# that module's backward hook :claim-ref:`module.call.nested-own-hook-order`.

for i, (t, name, what) in enumerate(events, 1):
    print(f"{i:2d}  {t * 1e6:9.1f} us  {name:4s}  {what}")

print("\nnodes on the output's graph:", y.grad_fn.name(), "->",
      y.grad_fn.next_functions[0][0].name())

# %%
# The same events on a time axis. A bar spans each module's time between its pre-hook and
# its hook, so a module whose hooks enclose another's shows as a bar enclosing the other's.
# The backward pass is drawn in its own panel, from the moment ``backward()`` is called.

lanes = ["net", "fc1", "act", "fc2"]
styles = {
    "forward pre-hook": ("#4c72b0", ">"),
    "forward starts": ("#555555", "|"),
    "forward ends": ("#555555", "|"),
    "forward hook": ("#4c72b0", "o"),
    "forward returned to caller": ("#000000", "x"),
    "backward() called": ("#000000", "x"),
    "backward pre-hook": ("#c44e52", ">"),
    "backward hook": ("#c44e52", "o"),
    "backward() returned": ("#000000", "x"),
}
split = next(i for i, e in enumerate(events) if e[2] == "backward() called")
passes = (("forward", events[:split], "forward pre-hook", "forward hook", 1),
          ("backward", events[split:], "backward pre-hook", "backward hook", split + 1))
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
for ax, (title, part, opens, closes, first) in zip(axes, passes):
    t0 = part[0][0]
    us = [(t - t0) * 1e6 for t, _, _ in part]
    for lane, name in enumerate(lanes):
        begin = [u for u, (_, n, w) in zip(us, part) if n == name and w == opens]
        end = [u for u, (_, n, w) in zip(us, part) if n == name and w == closes]
        if begin and end:
            ax.barh(lane, end[0] - begin[0], left=begin[0], height=0.35,
                    color=styles[opens][0], alpha=0.2)
    seen = set()
    for k, (u, (_, name, what)) in enumerate(zip(us, part)):
        color, marker = styles[what]
        y = lanes.index(name)
        ax.scatter(u, y, color=color, marker=marker, s=60, zorder=3, label=None if what in seen else what)
        seen.add(what)
        ax.annotate(str(first + k), (u, y), textcoords="offset points", xytext=(0, 10 if k % 2 else -16),
                    ha="center", fontsize=7)
    ax.set_title(f"{title} pass (numbers: order of events)")
    ax.set_xlabel("microseconds since the start of the pass")
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3, frameon=False)
axes[0].set_yticks(range(len(lanes)))
axes[0].set_yticklabels(lanes)
axes[0].set_ylim(len(lanes) - 0.4, -0.6)
fig.tight_layout()
plt.show()
