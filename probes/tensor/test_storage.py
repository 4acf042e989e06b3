"""Probes for docs/tensor/storage.md."""
import struct
import sys
import warnings

import pytest
import torch


@pytest.mark.claim("tensor.storage.untyped-is-bytes")
def test_untyped_storage_is_bytes(device):
    t = torch.tensor([1.0, -2.0], dtype=torch.float32, device=device)
    s = t.untyped_storage()
    assert type(s) is torch.UntypedStorage
    assert not hasattr(s, "dtype")
    assert len(s) == s.nbytes() == 8
    order = "<" if sys.byteorder == "little" else ">"
    assert s.cpu().tolist() == list(struct.pack(order + "2f", 1.0, -2.0))
    assert bytes(s.cpu().tolist()) == struct.pack(order + "2f", 1.0, -2.0)  # bytes() takes only ints 0-255


@pytest.mark.claim("tensor.storage.nbytes-fresh")
def test_fresh_storage_size(device):
    for dtype in (torch.bool, torch.int8, torch.float16, torch.bfloat16, torch.float32,
                  torch.int64, torch.complex64, torch.complex128):
        t = torch.empty(3, 5, dtype=dtype, device=device)
        assert t.untyped_storage().nbytes() == t.numel() * t.element_size() == 15 * dtype.itemsize


@pytest.mark.claim("tensor.storage.typed-classes")
def test_typed_storage_classes_subclass_typed_storage():
    classes = (torch.FloatStorage, torch.LongStorage, torch.BoolStorage)
    assert all(issubclass(c, torch.TypedStorage) for c in classes)
    assert [c.dtype for c in classes] == [torch.float32, torch.int64, torch.bool]


@pytest.mark.claim("tensor.storage.typed-deprecated")
def test_typed_storage_warns_once(device):
    t = torch.arange(4.0, device=device)
    torch.storage._reset_warn_typed_storage_removal()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        typed = t.storage()
        t.storage()
    assert isinstance(typed, torch.TypedStorage)
    assert issubclass(torch.FloatStorage, torch.TypedStorage)
    assert typed.dtype == torch.float32
    assert typed._untyped_storage.data_ptr() == t.untyped_storage().data_ptr()
    relevant = [w for w in caught if "TypedStorage is deprecated" in str(w.message)]
    assert len(relevant) == 1  # the second call is silent: one warning per process
    assert relevant[0].category is UserWarning
    assert not issubclass(relevant[0].category, DeprecationWarning)


@pytest.mark.claim("tensor.storage.data-ptr-offset")
def test_data_ptr_is_storage_plus_offset(device):
    for dtype in (torch.int8, torch.float32, torch.float64):
        base = torch.zeros(4, 6, dtype=dtype, device=device)
        view = base[2:, 3:]
        assert view.storage_offset() == 2 * 6 + 3
        assert view.data_ptr() == view.untyped_storage().data_ptr() + view.storage_offset() * view.element_size()
        assert view.untyped_storage().data_ptr() == base.data_ptr()


@pytest.mark.claim("tensor.storage.view-dtype-reinterprets")
def test_view_dtype_reinterprets_bits(device):
    f = torch.tensor([1.0, -2.0], dtype=torch.float32, device=device)
    i = f.view(torch.int32)
    assert i.untyped_storage().data_ptr() == f.untyped_storage().data_ptr()
    assert i.cpu().tolist() == [0x3F800000, struct.unpack("<i", struct.pack("<f", -2.0))[0]]
    # Not recorded as an autograd view, yet it shares the version counter.
    assert not i._is_view() and i._base is None
    before = i._version
    f.add_(0.0)
    assert i._version == before + 1
    b = f.view(torch.uint8)  # a smaller element size multiplies the last dimension
    assert b.shape == (8,)
    i[0] = 0x40000000  # the bit pattern of 2.0
    assert f[0].item() == 2.0


@pytest.mark.claim("tensor.storage.sparse-has-none")
def test_sparse_coo_has_no_storage(device):
    sp = torch.tensor([[0.0, 2.0], [3.0, 0.0]], device=device).to_sparse()
    assert sp.layout == torch.sparse_coo
    with pytest.raises(NotImplementedError, match="Cannot access storage of SparseTensorImpl"):
        sp.untyped_storage()
    idx, val = sp._indices(), sp._values()
    assert idx.layout == torch.strided and val.layout == torch.strided
    assert sp.sparse_dim() == 2 and sp._nnz() == 2
    assert idx.dtype == torch.int64 and idx.shape == (sp.sparse_dim(), sp._nnz()) and val.shape == (2,)
    assert val.cpu().tolist() == [2.0, 3.0]
    assert idx.untyped_storage().nbytes() >= idx.numel() * 8  # the parts do have storages


@pytest.mark.claim("tensor.storage.meta-no-data")
def test_meta_storage_has_size_but_no_data():
    m = torch.empty(3, dtype=torch.float32, device="meta")
    s = m.untyped_storage()
    assert s.device.type == "meta"
    assert s.data_ptr() == 0
    assert s.nbytes() == 12
    out = m @ torch.empty(3, 7, device="meta")
    assert out.shape == (7,) and out.device.type == "meta"
    with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
        torch.empty(1, device="meta").item()
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        m.cpu()
    assert torch.zeros_like(m, device="cpu").tolist() == [0.0, 0.0, 0.0]
