"""
Which storage elements does a view touch?
=========================================

Five views of one 24-element tensor. For each one the script computes, from the view's
own ``stride()`` and ``storage_offset()``, the storage position of every element, checks
that position against the values, and colours the storage cells by how many view
elements land on them.

Transposes, slices, ``expand`` and ``as_strided`` all return views on the base's storage
:claim-ref:`tensor.view.which-ops-alias`, and every element reads the storage element at
``storage_offset() + Σ index · stride`` :claim-ref:`tensor.strides.index-formula`.
"""
import itertools

import matplotlib.pyplot as plt
import torch

base = torch.arange(24.0).view(4, 6)
flat = torch.empty(0).set_(base.untyped_storage())  # the whole storage, 1-D

views = {
    "base (4, 6)": base,
    "base.t()": base.t(),
    "base[1:3, ::2]": base[1:3, ::2],
    "base[:, 4:5].expand(4, 3)": base[:, 4:5].expand(4, 3),
    "as_strided((3, 4), (2, 1), 5)": base.as_strided((3, 4), (2, 1), 5),
}


def addresses(view):
    """Storage position of each element: offset + sum(index * stride)."""
    out = {}
    for idx in itertools.product(*(range(n) for n in view.shape)):
        pos = view.storage_offset() + sum(i * s for i, s in zip(idx, view.stride()))
        assert view[idx].item() == flat[pos].item()  # the formula is what PyTorch does
        out[idx] = pos
    return out


# %%
# Left: the view as the user sees it, each cell labelled with the storage position it
# reads. Right: the storage, each cell coloured by how many of the view's elements map
# to it (0 = untouched, 2+ = shared, as with an overlapping ``as_strided`` or with
# ``expand``, whose expanded dimensions get stride 0
# :claim-ref:`tensor.view.expand-stride-zero`).

fig, axes = plt.subplots(len(views), 2, figsize=(11, 2.0 * len(views)),
                         gridspec_kw={"width_ratios": [1, 3]})
for row, (name, view) in enumerate(views.items()):
    addr = addresses(view)
    hits = torch.zeros(flat.numel())
    for pos in addr.values():
        hits[pos] += 1

    grid = torch.zeros(view.shape)
    left = axes[row, 0]
    left.imshow(grid, cmap="Greys", vmin=0, vmax=1)
    for (i, j), pos in addr.items():
        left.text(j, i, str(pos), ha="center", va="center", fontsize=8)
    left.set_title(f"{name}\nstride={view.stride()}, offset={view.storage_offset()}", fontsize=8)
    left.set_xticks([])
    left.set_yticks([])

    right = axes[row, 1]
    right.imshow(hits.view(1, -1), cmap="viridis", vmin=0, vmax=max(2, int(hits.max())), aspect="auto")
    for pos, n in enumerate(hits.tolist()):
        right.text(pos, 0, f"{pos}\n×{int(n)}", ha="center", va="center", fontsize=7,
                   color="white" if n == 0 else "black")
    right.set_yticks([])
    right.set_xticks([])
    right.set_title("storage positions (×hits)", fontsize=8)

fig.tight_layout()
plt.show()
