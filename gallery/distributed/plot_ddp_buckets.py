"""
When DDP reduces its buckets during backward
============================================

Two processes on this machine join a Gloo group through a ``FileStore`` in a temporary
folder and wrap ``Sequential(Linear(8, 16), Tanh(), Linear(16, 4))`` in
``DistributedDataParallel`` with a bucket cap of about 100 bytes. A communication hook
records when each bucket is handed over for all-reduce and which parameters it holds; a
tensor hook on each parameter records when backward computed its gradient, and one on the
input records the very end of backward. Three iterations are timed on rank 0.

In the first backward one bucket holds all four parameters and is reduced after the input's
gradient, at the end of backward; from the second backward on, bucket 0 holds the last
layer's bias and weight and is reduced *before* the input's gradient is computed, bucket 1
the first layer's, after it :claim-ref:`distributed.ddp.buckets-overlap-backward`.
"""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import matplotlib.pyplot as plt

WORKER = textwrap.dedent('''
    import json, os, sys, time
    from datetime import timedelta
    import torch, torch.nn as nn
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

    rank, folder = int(sys.argv[1]), sys.argv[2]
    store = dist.FileStore(os.path.join(folder, "store"), 2)
    dist.init_process_group("gloo", store=store, rank=rank, world_size=2, timeout=timedelta(seconds=60))
    torch.manual_seed(rank)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
    names = {id(p): n for n, p in model.named_parameters()}
    ddp = DDP(model, bucket_cap_mb=0.0001)
    events, start = [], [0.0]
    now = lambda: (time.perf_counter() - start[0]) * 1e6  # microseconds since backward started

    def hook(state, bucket):
        events.append(["bucket", now(), bucket.index(), [names[id(p)] for p in bucket.parameters()]])
        return allreduce_hook(state, bucket)

    ddp.register_comm_hook(dist.group.WORLD, hook)
    for name, p in model.named_parameters():
        p.register_hook(lambda g, name=name: events.append(["grad", now(), name]))
    iterations = []
    for step in range(3):
        x = torch.randn(5, 8, requires_grad=True)
        x.register_hook(lambda g: events.append(["input-grad", now()]))
        ddp.zero_grad(set_to_none=True)
        loss = ddp(x).pow(2).sum()
        events.clear()
        start[0] = time.perf_counter()
        loss.backward()
        events.append(["end", now()])
        iterations.append(list(events))
    with open(os.path.join(folder, f"rank{rank}.json"), "w") as f:
        json.dump(iterations, f)
    dist.barrier()
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown, where Gloo's threads can take seconds to wind down
''')

with tempfile.TemporaryDirectory() as folder:
    Path(folder, "worker.py").write_text(WORKER)
    env = dict(os.environ, OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME="lo")
    ranks = [subprocess.Popen([sys.executable, "worker.py", str(rank), folder], cwd=folder, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for rank in range(2)]
    for rank in ranks:
        output, _ = rank.communicate(timeout=120)
        if rank.returncode != 0:
            raise RuntimeError(f"a rank failed:\n{output}")
    iterations = json.loads(Path(folder, "rank0.json").read_text())

for step, events in enumerate(iterations, 1):
    print(f"backward {step}:")
    for event in events:
        print("   ", event[0], f"{event[1]:8.0f} µs", *event[2:])

# %%
# One row per backward of rank 0, its events in the order they happened, left to right,
# each with its time since ``backward()`` started: a parameter's gradient computed (blue), a
# bucket handed to all-reduce (orange, with its index and parameters), the input's gradient
# computed (grey), and ``backward()`` returning.

STYLE = {"grad": ("o", "tab:blue"), "bucket": ("s", "tab:orange"), "input-grad": ("D", "0.4"),
         "end": ("|", "0.6")}


def label(event):
    kind, t, *rest = event
    text = {"grad": lambda: f"grad of\n{rest[0]}",
            "bucket": lambda: f"bucket {rest[0]}\nreduced:\n" + "\n".join(rest[1]),
            "input-grad": lambda: "grad of\nthe input", "end": lambda: "backward()\nreturned"}[kind]()
    return f"{text}\n{t:.0f} µs"


width = max(len(events) for events in iterations)
fig, axes = plt.subplots(len(iterations), 1, figsize=(8.5, 2.0 * len(iterations)))
for ax, (step, events) in zip(axes, enumerate(iterations, 1)):
    ax.plot(range(len(events)), [0] * len(events), color="0.85", zorder=0)
    for i, event in enumerate(events):
        marker, color = STYLE[event[0]]
        ax.plot(i, 0, marker, markersize=11, color=color)
        ax.annotate(label(event), (i, 0), xytext=(0, -10), textcoords="offset points", ha="center",
                    va="top", fontsize=8)
    ax.set_xlim(-0.6, width - 0.4)
    ax.set_ylim(-1.2, 0.3)
    ax.axis("off")
    ax.set_title(f"backward {step}", fontsize=8, loc="left")
fig.suptitle("DDP on two Gloo processes: gradients computed and buckets reduced, in order (rank 0)",
             fontsize=9)
fig.tight_layout()
plt.show()
