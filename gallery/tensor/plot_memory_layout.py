"""
Storage order of NCHW vs channels_last, and what a slice keeps alive
====================================================================

Two tensors with the shape ``(1, 3, 4, 5)`` and the same values, one in the default
layout and one converted to ``channels_last``; the titles print their strides. Walking
each one's storage shows the order in which the elements sit. Then: the bytes a
10-element slice keeps alive, compared with its clone, as the base grows.
"""
import itertools

import matplotlib.pyplot as plt
import torch

x = torch.arange(60.0).reshape(1, 3, 4, 5)
layouts = {
    "contiguous (NCHW)": x.contiguous(),
    "channels_last (NHWC)": x.contiguous(memory_format=torch.channels_last),
}


def channel_at_each_position(t):
    """For every storage position, the channel index of the element stored there."""
    owner = torch.full((t.untyped_storage().nbytes() // t.element_size(),), -1)
    for idx in itertools.product(*(range(n) for n in t.shape)):
        pos = t.storage_offset() + sum(i * s for i, s in zip(idx, t.stride()))
        owner[pos] = idx[1]
    return owner


# %%
# Each cell is one storage position, left to right in address order, coloured by the
# channel of the element stored there. A new tensor is row-major, so NCHW stores whole
# channel planes one after another :claim-ref:`tensor.strides.row-major-default`; the
# storage of a channels_last tensor holds the NHWC order, the three channels interleaved
# pixel by pixel :claim-ref:`tensor.memory-format.storage-is-nhwc`.

fig, axes = plt.subplots(2, 1, figsize=(11, 3.2))
for ax, (name, t) in zip(axes, layouts.items()):
    owner = channel_at_each_position(t)
    assert (owner >= 0).all()  # dense: every position is used exactly by one element
    ax.imshow(owner.view(1, -1), cmap="Set2", aspect="auto", vmin=0, vmax=7)
    for pos, c in enumerate(owner.tolist()):
        ax.text(pos, 0, str(c), ha="center", va="center", fontsize=7)
    ax.set_yticks([])
    ax.set_xticks([])
    ax.set_title(f"{name}: stride={t.stride()}, "
                 f"is_contiguous()={t.is_contiguous()}, "
                 f"is_contiguous(channels_last)={t.is_contiguous(memory_format=torch.channels_last)}",
                 fontsize=9)
fig.tight_layout()

# %%
# A slice keeps its base's whole storage alive, even after the base is deleted, while
# ``clone()`` of the slice owns just the slice's bytes
# :claim-ref:`tensor.view.slice-keeps-storage`. Both numbers are read from
# ``untyped_storage().nbytes()``.

sizes = [10**k for k in range(2, 7)]
kept, cloned = [], []
for n in sizes:
    base = torch.zeros(n)
    head = base[:10]
    del base  # the slice alone now holds the storage
    kept.append(head.untyped_storage().nbytes())
    cloned.append(head.clone().untyped_storage().nbytes())

fig2, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(sizes, kept, "o-", label="base[:10]  (view)")
ax.plot(sizes, cloned, "s-", label="base[:10].clone()")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("elements in the base tensor (float32)")
ax.set_ylabel("bytes held by the 10-element result")
ax.legend()
ax.grid(True, which="both", alpha=0.3)
fig2.tight_layout()
plt.show()
