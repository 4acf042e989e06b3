"""
The dispatch keys a tensor carries
==================================

Thirteen tensors, each made a different way, and the key set ``torch._C._dispatch_keys``
reports for each one. A filled cell means the tensor carries the key. Columns are ordered by
the key's highest bit in its ``DispatchKeySet`` (``raw_repr()``), highest on the left: the order
in which the dispatcher looks at the keys, highest first
:claim-ref:`dispatch.keys.bit-layout`.

A dense float32 CPU tensor carries ``{CPU, ADInplaceOrView, AutogradCPU, AutocastCPU}``
:claim-ref:`dispatch.keys.dense-tensor`, and ``requires_grad=True`` adds no key
:claim-ref:`dispatch.keys.requires-grad-no-key`. The other rows are the cases of
:claim-ref:`dispatch.keys.functionality-keys`, :claim-ref:`dispatch.keys.negative-key`,
:claim-ref:`dispatch.keys.zero-tensor-key`, :claim-ref:`dispatch.keys.sparse-coo-key`,
:claim-ref:`dispatch.keys.sparse-csr-key`, :claim-ref:`dispatch.keys.meta-tensor`,
:claim-ref:`dispatch.keys.mkldnn-tensor`, :claim-ref:`dispatch.keys.inference-tensor` and
:claim-ref:`dispatch.keys.python-key`.
"""
import re
import warnings

import matplotlib.pyplot as plt
import torch


class Wrapper(torch.Tensor):
    """A subclass with ``__torch_dispatch__``, made with ``_make_wrapper_subclass``."""

    @staticmethod
    def __new__(cls, inner):
        return torch.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=inner.dtype)

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        raise NotImplementedError(func)


with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the CSR and nested constructors warn that they are beta
    with torch.inference_mode():
        inference = torch.ones(2)
    tensors = {
        "ones(2)": torch.ones(2),
        "ones(2, requires_grad=True)": torch.ones(2, requires_grad=True),
        "ones(2, dtype=int64)": torch.ones(2, dtype=torch.int64),
        "complex ones(2).conj()": torch.ones(2, dtype=torch.complex64).conj(),
        "_neg_view(ones(2))": torch._neg_view(torch.ones(2)),
        "_efficientzerotensor(2)": torch._efficientzerotensor(2),
        "to_sparse()": torch.ones(2, 2).to_sparse(),
        "to_sparse_csr()": torch.ones(2, 2).to_sparse_csr(),
        "nested_tensor([...])": torch.nested.nested_tensor([torch.ones(2), torch.ones(3)]),
        "ones(2, device='meta')": torch.ones(2, device="meta"),
        "to_mkldnn()": torch.ones(2, 2).to_mkldnn(),
        "made under inference_mode()": inference,
        "Wrapper(ones(2))": Wrapper(torch.ones(2)),
    }


def key_names(tensor):
    """The names in the key set's repr, e.g. 'DispatchKeySet(CPU, AutogradCPU)'."""
    text = repr(torch._C._dispatch_keys(tensor))
    return re.fullmatch(r"DispatchKeySet\((.*)\)", text).group(1).split(", ")


def priority(name):
    """The highest bit of the key's own DispatchKeySet; -1 for a key the enum does not name."""
    key = torch._C.DispatchKey.__members__.get(name)
    return torch._C.DispatchKeySet(key).raw_repr().bit_length() if key is not None else -1


rows = {label: key_names(t) for label, t in tensors.items()}
for label, names in rows.items():
    print(f"{label:30s} {', '.join(names)}")
columns = sorted({n for names in rows.values() for n in names}, key=lambda n: (-priority(n), n))

# %%
# Rows: the tensors; columns: every key that any of them carries.

fig, ax = plt.subplots(figsize=(11, 5.5))
grid = [[1.0 if name in names else 0.0 for name in columns] for names in rows.values()]
ax.imshow(grid, cmap="Blues", vmin=0, vmax=1.4, aspect="auto")
ax.set_xticks(range(len(columns)), columns, rotation=60, ha="right", fontsize=8)
ax.set_yticks(range(len(rows)), list(rows), fontsize=8)
ax.set_xticks([x - 0.5 for x in range(1, len(columns))], minor=True)
ax.set_yticks([y - 0.5 for y in range(1, len(rows))], minor=True)
ax.grid(which="minor", color="white", linewidth=1.5)
ax.tick_params(which="minor", length=0)
ax.set_title(f"torch._C._dispatch_keys(t), torch {torch.__version__}: higher-priority keys on the left",
             fontsize=9)
fig.tight_layout()
plt.show()
