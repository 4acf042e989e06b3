"""
Broadcasting reads, it does not copy
====================================

A ``(3, 1)`` column and a ``(4,)`` row, widened by ``torch.broadcast_tensors`` and
added. For every element of each widened operand the script computes, from its own
``stride()``, which element of the original storage it reads, checks that against the
values, and draws it.

``torch.broadcast_tensors`` turns the two operands into ``(3, 4)`` views over their inputs'
own storages, and the widened dimension has stride 0 :claim-ref:`tensor.broadcast.no-copy`.
Every element reads the storage element at ``storage_offset() + Σ index · stride``
:claim-ref:`tensor.strides.index-formula`, so a whole row (or column) of the picture points
at one stored number.
"""
import matplotlib.pyplot as plt
import torch

column = torch.tensor([[10.0], [20.0], [30.0]])  # (3, 1)
row = torch.tensor([1.0, 2.0, 3.0, 4.0])         # (4,)
wide_column, wide_row = torch.broadcast_tensors(column, row)
result = column + row


def storage_positions(view, original):
    """The storage position each element of `view` reads: offset + sum(index * stride)."""
    flat = original.reshape(-1)
    positions = torch.empty(view.shape, dtype=torch.long)
    for i in range(view.shape[0]):
        for j in range(view.shape[1]):
            pos = view.storage_offset() + i * view.stride()[0] + j * view.stride()[1]
            assert view[i, j].item() == flat[pos].item()  # the formula is what PyTorch reads
            positions[i, j] = pos
    return positions


# %%
# Each widened operand keeps its input's small storage (3 and 4 floats)
# :claim-ref:`tensor.broadcast.no-copy`. The last line prints the size of the storage the
# result owns, as this run measured it.
for name, view, original in (("column", wide_column, column), ("row", wide_row, row)):
    print(f"{name}: shape {tuple(view.shape)}, stride {view.stride()}, "
          f"storage {view.untyped_storage().nbytes()} bytes, "
          f"same memory as the input: {view.data_ptr() == original.data_ptr()}")
print(f"result: shape {tuple(result.shape)}, storage {result.untyped_storage().nbytes()} bytes")

# %%
# Left and middle: every cell of a widened operand, labelled with the storage element it
# reads. Right: the result, each cell the sum of the two cells at the same place.
fig, axes = plt.subplots(1, 3, figsize=(11, 3.2))
panels = [("column, broadcast to (3, 4)", wide_column, storage_positions(wide_column, column)),
          ("row, broadcast to (3, 4)", wide_row, storage_positions(wide_row, row)),
          ("column + row", result, None)]
for ax, (title, values, positions) in zip(axes, panels):
    ax.imshow(values, cmap="Blues", vmin=0, vmax=float(result.max()))
    for i in range(3):
        for j in range(4):
            label = f"{values[i, j]:g}" + (f"\n[{positions[i, j]}]" if positions is not None else "")
            ax.text(j, i, label, ha="center", va="center", fontsize=8)
    stride = f"stride {values.stride()}"
    ax.set_title(f"{title}\n{stride}", fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])
fig.tight_layout()
plt.show()
