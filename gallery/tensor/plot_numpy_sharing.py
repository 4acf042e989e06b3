"""
Which NumPy conversions share memory, and which copy?
=====================================================

Each row converts a fresh four-element source (a NumPy array or a tensor) with one
function. Two things are measured on the live objects: whether the result's first element
sits at the source's address, and whether a write into the source afterwards shows up in
the result. Nothing in the chart is typed in; every cell comes from those two checks.
"""
import warnings

import matplotlib.pyplot as plt
import numpy as np
import torch


def address(obj):
    if isinstance(obj, torch.Tensor):
        return obj.data_ptr()
    return obj.__array_interface__["data"][0]


def from_array(convert, dtype=np.float64):
    """Convert a fresh ndarray, then write into the array."""
    def run():
        src = np.arange(4, dtype=dtype)
        out = convert(src)
        same = address(out) == address(src)
        src[0] = 123
        return same, bool(out[0] == 123), out.dtype
    return run


def from_tensor(convert, make=lambda: torch.arange(4.0)):
    """Convert a fresh tensor, then write into the tensor."""
    def run():
        src = make()
        out = convert(src)
        same = address(out) == address(src)
        with torch.no_grad():
            src[0] = 123
        return same, bool(out[0] == 123), out.dtype
    return run


def quiet_np_array(t):
    # NumPy 2 warns here because Tensor.__array__ takes no `copy` argument.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return np.array(t)


cases = {
    "torch.from_numpy(a)": from_array(torch.from_numpy),
    "torch.as_tensor(a)": from_array(torch.as_tensor),
    "torch.as_tensor(a, dtype=float32)": from_array(lambda a: torch.as_tensor(a, dtype=torch.float32)),
    "torch.asarray(a)": from_array(torch.asarray),
    "torch.asarray(a, copy=True)": from_array(lambda a: torch.asarray(a, copy=True)),
    "torch.tensor(a)": from_array(torch.tensor),
    "torch.Tensor(a)   [a float64]": from_array(torch.Tensor),
    "torch.Tensor(a)   [a float32]": from_array(torch.Tensor, np.float32),
    "torch.frombuffer(a, dtype=float64)": from_array(lambda a: torch.frombuffer(a, dtype=torch.float64)),
    "t.numpy()": from_tensor(lambda t: t.numpy()),
    "t.numpy(force=True)   [t requires grad]": from_tensor(
        lambda t: t.numpy(force=True), lambda: torch.arange(4.0, requires_grad=True)),
    "t.numpy(force=True)   [t.is_conj()]": from_tensor(
        lambda t: t.numpy(force=True), lambda: torch.arange(4.0).to(torch.complex64).conj()),
    "np.asarray(t)": from_tensor(np.asarray),
    "np.array(t)": from_tensor(quiet_np_array),
}

results = {name: run() for name, run in cases.items()}
assert all(same == seen for same, seen, _ in results.values())  # the caption below relies on it
for name, (same, seen, dtype) in results.items():
    print(f"{name:42s} same address: {str(same):5s}  write seen: {str(seen):5s}  result dtype: {dtype}")

# %%
# Green cells share: same address, and the write came through. Grey cells are copies.
# In this run the two columns agree on every row (the script asserts it). The rows'
# verdicts are claims of the NumPy page:
# :claim-ref:`tensor.numpy.from-numpy-shares`, :claim-ref:`tensor.construct.as-tensor-ndarray`,
# :claim-ref:`tensor.construct.asarray-copy`, :claim-ref:`tensor.construct.tensor-copies`,
# :claim-ref:`tensor.construct.legacy-ctor`, :claim-ref:`tensor.construct.frombuffer-shares`,
# :claim-ref:`tensor.numpy.numpy-shares`, :claim-ref:`tensor.numpy.numpy-force-detaches`,
# :claim-ref:`tensor.numpy.numpy-conj-neg`, :claim-ref:`tensor.numpy.array-protocol`,
# :claim-ref:`tensor.numpy.array-copy-keyword`.

fig, ax = plt.subplots(figsize=(8.5, 0.42 * len(results) + 1.0))
names = list(results)
grid = np.array([[results[n][0], results[n][1]] for n in names], dtype=float)
ax.imshow(grid, cmap=plt.matplotlib.colors.ListedColormap(["#d9d9d9", "#7fc97f"]),
          vmin=0, vmax=1, aspect="auto")
for row, name in enumerate(names):
    same, seen, dtype = results[name]
    for col, flag in enumerate((same, seen)):
        ax.text(col, row, "yes" if flag else "no", ha="center", va="center", fontsize=9)
    ax.text(1.6, row, str(dtype).replace("torch.", ""), ha="left", va="center", fontsize=8)
ax.set_yticks(range(len(names)), names, fontsize=8, family="monospace")
ax.set_xticks([0, 1], ["same address", "write to source\nseen in result"], fontsize=9)
ax.set_xlim(-0.5, 2.4)
ax.text(1.6, -0.8, "result dtype", fontsize=8, ha="left")
ax.tick_params(length=0)
for spine in ax.spines.values():
    spine.set_visible(False)
fig.tight_layout()
plt.show()
