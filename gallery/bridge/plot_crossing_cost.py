"""
What a trip from Python into C++ costs
======================================

This script measures, on the machine that builds the page, what one call from Python
costs: the time per element of a Python loop of one-element operations, against one
vectorized operation over all the elements.

A call such as ``t + 1.0`` takes about the same time on a 1-element tensor as on a
1,000-element one :claim-ref:`bridge.crossing.fixed-cost`. On its way it passes a generated
binding that parses the arguments :claim-ref:`bridge.arguments.static-parser` and enters
the dispatcher, where the profiler records it :claim-ref:`dispatch.call.one-profiler-event`.
"""
import time

import matplotlib.pyplot as plt
import torch


def best_of(fn, repeats):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


# %%
# Time per element as the number of elements grows. The loop makes one call per element;
# the vectorized version makes one call in total. Over 10,000 elements the loop takes more
# than 50 times as long :claim-ref:`bridge.crossing.loop-vs-vectorized`; the printout gives
# the ratio this run measured.

loop_sizes = [10, 100, 1_000, 10_000]
vector_sizes = [10**k for k in range(0, 7)]
loop_per_element, vector_per_element, float_per_element = [], [], []

for n in loop_sizes:
    x = torch.randn(n)

    def loop():
        for i in range(n):
            x[i] + 1.0

    loop_per_element.append(best_of(loop, 3) / n)
    values = x.tolist()

    def float_loop():
        for v in values:
            v + 1.0

    float_per_element.append(best_of(float_loop, 5) / n)

for n in vector_sizes:
    x = torch.randn(n)
    x + 1.0  # warm up
    vector_per_element.append(best_of(lambda: x + 1.0, 20) / n)

fig, ax = plt.subplots(figsize=(7.5, 4.5))
ax.plot(loop_sizes, [t * 1e9 for t in loop_per_element], "o-", label="Python loop of x[i] + 1.0")
ax.plot(vector_sizes, [t * 1e9 for t in vector_per_element], "s-", label="one call: x + 1.0")
ax.plot(loop_sizes, [t * 1e9 for t in float_per_element], "^--", label="Python loop over floats (reference)")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("number of elements")
ax.set_ylabel("time per element (ns)")
ax.set_title(f"torch {torch.__version__}, {torch.get_num_threads()} intra-op threads")
ax.grid(True, which="both", alpha=0.3)
ax.legend()
fig.tight_layout()

n = loop_sizes[-1]
ratio = loop_per_element[-1] / vector_per_element[vector_sizes.index(n)]
print(f"per element at n = {n}: loop {loop_per_element[-1] * 1e9:.0f} ns, "
      f"vectorized {vector_per_element[vector_sizes.index(n)] * 1e9:.2f} ns: the loop is {ratio:.0f}x slower")
print(f"one call on 1 element takes {vector_per_element[0] * 1e6:.2f} us; "
      f"on 1,000 elements {vector_per_element[3] * 1e3 * 1e6:.2f} us")

# %%
# The fixed cost of one call on a one-element tensor, by spelling.
# ``torch.ops.aten.add.Tensor`` is a Python ``OpOverload`` object
# :claim-ref:`dispatch.python.func-is-opoverload`; ``torch.add`` is a builtin function, and
# ``t.add`` and ``+`` are method descriptors of ``torch._C.TensorBase``
# :claim-ref:`dispatch.call.builtin-entry`. With an input that requires grad, each call's
# result gets a ``grad_fn`` node :claim-ref:`autograd.graph.grad-fn-on-results`.

calls = 2000
t = torch.randn(1)
t_grad = torch.randn(1, requires_grad=True)
number = 1.5
spellings = {
    "float + 1.0": lambda: number + 1.0,
    "t + 1.0": lambda: t + 1.0,
    "t.add(1.0)": lambda: t.add(1.0),
    "torch.add(t, 1.0)": lambda: torch.add(t, 1.0),
    "torch.ops.aten.add.Tensor(t, 1.0)": lambda: torch.ops.aten.add.Tensor(t, 1.0),
    "t + 1.0 (requires_grad)": lambda: t_grad + 1.0,
}
per_call = {}
for name, fn in spellings.items():
    def many(fn=fn):
        for _ in range(calls):
            fn()
    many()
    per_call[name] = best_of(many, 7) / calls

fig2, ax2 = plt.subplots(figsize=(7.5, 3.8))
names = list(per_call)
ax2.barh(names, [per_call[k] * 1e6 for k in names], color=["#999999"] + ["#4c72b0"] * (len(names) - 1))
for i, k in enumerate(names):
    ax2.text(per_call[k] * 1e6, i, f" {per_call[k] * 1e6:.2f} us", va="center", fontsize=8)
ax2.invert_yaxis()
ax2.set_xlabel("time per call (microseconds), best of 7 runs of 2000 calls")
fig2.tight_layout()
for name in names:
    print(f"{name:36s} {per_call[name] * 1e9:8.0f} ns  ({per_call[name] / per_call['float + 1.0']:.0f}x a float add)")
plt.show()
