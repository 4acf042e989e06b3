"""
Checkpointing: memory kept versus compute spent
===============================================

A stack of 16 ``Linear`` + ``tanh`` layers, run whole or cut into 1 to 16 checkpointed
segments (``torch.utils.checkpoint.checkpoint(..., use_reentrant=False)``). For each
setting we measure, on the CPU:

* the bytes the forward pass allocated and had not freed when it returned (the
  profiler's memory events summed over the forward);
* how many times a layer ran, counted by the layers themselves;
* the wall time of forward plus backward (the fastest of five runs, on one thread, so that
  other work on the machine disturbs it as little as possible).
"""
import time

import matplotlib.pyplot as plt
import torch
from torch.profiler import ProfilerActivity, profile
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
WIDTH, BATCH, DEPTH = 256, 512, 16
layers = [torch.nn.Linear(WIDTH, WIDTH) for _ in range(DEPTH)]
layer_calls = [0]


def run_layers(h, chunk):
    for lin in chunk:
        layer_calls[0] += 1
        h = torch.tanh(lin(h))
    return h


def forward(x, segments):
    if segments == 0:
        return run_layers(x, layers).sum()
    size = DEPTH // segments
    h = x
    for i in range(segments):
        h = checkpoint(run_layers, h, layers[i * size:(i + 1) * size], use_reentrant=False)
    return h.sum()


def kept_bytes(x, segments):
    """Bytes allocated during the forward and still held when it returns."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        loss = forward(x, segments)
    kept = sum(e.self_cpu_memory_usage for e in prof.events())
    return kept, loss


x = torch.randn(BATCH, WIDTH, requires_grad=True)
settings = [0, 1, 2, 4, 8, 16]
kept, calls, seconds = [], [], []
threads = torch.get_num_threads()
torch.set_num_threads(1)
try:
    for segments in settings:
        nbytes, loss = kept_bytes(x, segments)
        kept.append(nbytes / 2**20)
        del loss
        layer_calls[0] = 0
        forward(x, segments).backward()  # also a warm-up for the timing below
        calls.append(layer_calls[0])
        times = []
        for _ in range(5):
            start = time.perf_counter()
            forward(x, segments).backward()
            times.append(time.perf_counter() - start)
        seconds.append(min(times))
finally:
    torch.set_num_threads(threads)

activation = BATCH * WIDTH * 4 / 2**20  # one layer's output, in MiB, from the shapes
labels = ["none" if s == 0 else str(s) for s in settings]

# %%
# Layers that run normally leave their intermediate tensors alive after the forward, held
# by the graph; inside a checkpoint they are already freed when the forward returns
# :claim-ref:`autograd.checkpoint.keeps-no-intermediates`. A checkpointed function runs
# twice per training step, once in the forward and once more inside backward
# :claim-ref:`autograd.checkpoint.reruns-forward`. The bars show what this run measured
# for each number of segments: the bytes kept and the layer calls.

fig, (ax_mem, ax_time) = plt.subplots(1, 2, figsize=(12, 4.5))
ax_mem.bar(labels, kept, color=["tab:gray"] + ["tab:blue"] * (len(settings) - 1))
for i, (m, c) in enumerate(zip(kept, calls)):
    ax_mem.text(i, m, f"{m:.2f} MiB\n{c} layer calls", ha="center", va="bottom", fontsize=8)
ax_mem.axhline(activation, color="tab:red", lw=0.8, ls="--")
ax_mem.text(len(settings) - 0.5, activation, "one layer's output", color="tab:red", fontsize=8,
            ha="right", va="bottom")
ax_mem.set_xlabel("checkpointed segments")
ax_mem.set_ylabel("kept after forward (MiB)")
ax_mem.set_ylim(0, max(kept) * 1.25)
ax_mem.set_title("memory the graph holds for backward", fontsize=9)

base = seconds[0]
ax_time.bar(labels, [s / base for s in seconds], color=["tab:gray"] + ["tab:orange"] * (len(settings) - 1))
for i, s in enumerate(seconds):
    ax_time.text(i, s / base, f"{s * 1e3:.0f} ms", ha="center", va="bottom", fontsize=8)
ax_time.set_xlabel("checkpointed segments")
ax_time.set_ylabel("forward + backward time / plain")
ax_time.set_title("the price: the forward runs again inside backward", fontsize=9)
fig.tight_layout()
for label, m, c, s in zip(labels, kept, calls, seconds):
    print(f"segments={label:>4}: kept {m:6.2f} MiB, {c:2d} layer calls, {s * 1e3:6.1f} ms")
plt.show()
