"""Probes for docs/tensor/dtype-device-layout.md."""
import warnings

import pytest
import torch

DK = torch._C.DispatchKey


def keys(t):
    return torch._C._dispatch_keys(t)


@pytest.mark.claim("tensor.dtype.not-a-dispatch-key")
def test_dtype_leaves_keyset_unchanged(device):
    ref = keys(torch.zeros(2, dtype=torch.float32, device=device))
    for dtype in (torch.float64, torch.float16, torch.int64, torch.int8, torch.bool, torch.complex64):
        t = torch.zeros(2, dtype=dtype, device=device)
        assert keys(t) == ref, dtype
        assert str(keys(t)) == str(ref), dtype


@pytest.mark.claim("tensor.device.backend-key")
def test_device_selects_backend_key(device):
    t = torch.zeros(2, device=device)
    dev = torch.device(device).type
    ks = keys(t)
    assert ks.has(getattr(DK, dev.upper()))
    autograd = getattr(DK, "Autograd" + dev.upper())
    assert ks.has(autograd)
    m = keys(torch.zeros(2, device="meta"))
    assert m.has(DK.Meta) and m.has(DK.AutogradMeta) and not m.has(DK.CPU)


@pytest.mark.claim("tensor.layout.sparse-dispatch-key")
def test_layout_changes_keyset(device):
    dense = torch.eye(3, device=device)
    sp = dense.to_sparse()
    dev = torch.device(device).type.upper()
    assert keys(dense).has(getattr(DK, dev)) and not keys(dense).has(getattr(DK, "Sparse" + dev))
    assert keys(sp).has(getattr(DK, "Sparse" + dev)) and not keys(sp).has(getattr(DK, dev))
    assert keys(sp) != keys(dense)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "Sparse CSR tensor support is in beta state"
        csr = dense.to_sparse_csr()
    assert keys(csr).has(getattr(DK, "SparseCsr" + dev))
    assert (dense.layout, sp.layout, csr.layout) == (torch.strided, torch.sparse_coo, torch.sparse_csr)


@pytest.mark.claim("tensor.dtype.element-size")
def test_element_sizes(device):
    expected = {torch.bool: 1, torch.uint8: 1, torch.int8: 1, torch.float16: 2, torch.bfloat16: 2,
                torch.int32: 4, torch.float32: 4, torch.int64: 8, torch.float64: 8,
                torch.complex64: 8, torch.complex128: 16}
    for dtype, size in expected.items():
        t = torch.empty(1, dtype=dtype, device=device)
        assert t.element_size() == dtype.itemsize == size, dtype


@pytest.mark.claim("tensor.dtype.promotion-categories")
def test_promotion_category_beats_dimension(device):
    def dt(x, y):
        return (x + y).dtype

    i64 = torch.ones(2, dtype=torch.int64, device=device)
    i32 = torch.ones(2, dtype=torch.int32, device=device)
    f32 = torch.ones(2, dtype=torch.float32, device=device)
    f64_0d = torch.tensor(1.0, dtype=torch.float64, device=device)
    i64_0d = torch.tensor(1, dtype=torch.int64, device=device)
    assert dt(i64, 1.5) == torch.get_default_dtype() == torch.float32  # a Python float: higher category
    assert dt(i32, 7) == torch.int32  # a Python int in the same category does not widen
    assert dt(i32, i64_0d) == torch.int32  # 0-dim tensor of the same category does not widen
    assert dt(f32, f64_0d) == torch.float32
    assert dt(i64, torch.tensor(1.0, dtype=torch.float16, device=device)) == torch.float16  # higher category wins
    assert dt(f32, torch.ones(2, dtype=torch.float64, device=device)) == torch.float64  # both dimensioned
    assert torch.result_type(i32, 2.5) == torch.float32
    # the category order bool < integer < floating < complex
    assert dt(torch.ones(2, dtype=torch.bool, device=device), i64_0d) == torch.int64
    assert dt(i64, 1j) == torch.complex64


@pytest.mark.claim("tensor.device.to-returns-self")
def test_to_is_a_no_op_when_nothing_changes(device):
    t = torch.ones(3, dtype=torch.float32, device=device)
    assert t.to(t.device) is t
    assert t.to(torch.float32) is t
    assert t.to(t.device, torch.float32) is t
    assert t.to(torch.float32, copy=True) is not t
    other = t.to(torch.float64)
    assert other is not t and other.untyped_storage().data_ptr() != t.untyped_storage().data_ptr()
