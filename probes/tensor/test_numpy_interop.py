"""Probes for docs/tensor/numpy.md."""
import contextlib
import ctypes
import gc
import inspect
import pathlib
import sys
import warnings
import weakref

import numpy as np
import pytest
import torch

NOT_WRITABLE_ARRAY = r"The given NumPy array is not writable, and PyTorch does not support non-writable tensors"
NOT_WRITABLE_BUFFER = r"The given buffer is not writable, and PyTorch does not support non-writable tensors"
NEGATIVE_STRIDE = (r"At least one stride in the given numpy array is negative, and tensors with negative "
                   r"strides are not currently supported")
SUPPORTED = (r"The only supported types are: float64, float32, float16, complex64, complex128, int64, "
             r"int32, int16, int8, uint64, uint32, uint16, uint8, and bool\.")


def addr(a):
    """Address of an ndarray's first element."""
    return a.__array_interface__["data"][0]


def buffer_addr(buf):
    """Address of a bytearray's bytes (the ctypes export is released before returning)."""
    view = (ctypes.c_char * len(buf)).from_buffer(buf)
    try:
        return ctypes.addressof(view)
    finally:
        del view


@contextlib.contextmanager
def warn_always(flag):
    previous = torch.is_warn_always_enabled()
    torch.set_warn_always(flag)
    try:
        yield
    finally:
        torch.set_warn_always(previous)


def count_matching(records, pattern):
    return sum(1 for w in records if pattern in str(w.message))


# ---------------------------------------------------------------- torch.from_numpy

@pytest.mark.claim("tensor.numpy.from-numpy-shares")
def test_from_numpy_shares_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = torch.from_numpy(a)
    assert t.data_ptr() == addr(a)
    assert t.untyped_storage().data_ptr() == addr(a) and t.storage_offset() == 0
    assert t.device.type == "cpu" and t.dtype == torch.float32 and t.shape == (2, 3)
    assert not t.requires_grad
    a[0, 0] = 100.0
    assert t[0, 0].item() == 100.0
    t[1, 2] = -5.0
    assert a[1, 2] == -5.0


@pytest.mark.claim("tensor.numpy.from-numpy-keeps-alive")
def test_from_numpy_keeps_array_alive():
    a = np.arange(4.0)
    alive = weakref.ref(a)
    before = sys.getrefcount(a)
    t = torch.from_numpy(a)
    assert sys.getrefcount(a) == before + 1  # the tensor's deleter owns one reference
    del a
    gc.collect()
    assert alive() is not None
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    del t
    gc.collect()
    assert alive() is None  # freeing the storage released the array


@pytest.mark.claim("tensor.numpy.from-numpy-strides")
def test_from_numpy_converts_byte_strides():
    a = np.zeros((2, 3, 4), dtype=np.float32)
    assert a.strides == (48, 16, 4)
    assert torch.from_numpy(a).stride() == (12, 4, 1)
    b = np.zeros((5, 6), dtype=np.int16)[:, ::2]
    assert b.strides == (12, 4)
    tb = torch.from_numpy(b)
    assert tb.stride() == (6, 2) and tb.data_ptr() == addr(b)
    for arr in (a, b, np.zeros((3, 7), dtype=np.complex128)[::2, 1:]):
        t = torch.from_numpy(arr)
        assert t.stride() == tuple(s // arr.itemsize for s in arr.strides)


@pytest.mark.claim("tensor.numpy.from-numpy-fortran")
def test_from_numpy_fortran_order():
    f = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    assert f.strides == (8, 24)
    t = torch.from_numpy(f)
    assert t.stride() == (1, 3)
    assert not t.is_contiguous()
    assert t.t().is_contiguous()
    assert t.data_ptr() == addr(f)
    assert t.tolist() == f.tolist()
    tt = torch.from_numpy(np.arange(12.0).reshape(3, 4).T)  # a transposed C array: same picture
    assert tt.stride() == (1, 4) and not tt.is_contiguous()


@pytest.mark.claim("tensor.numpy.from-numpy-storage-span")
def test_from_numpy_storage_covers_only_the_array():
    a = np.arange(10.0)
    view = a[1::3]  # elements 1, 4, 7
    t = torch.from_numpy(view)
    assert t.storage_offset() == 0
    assert t.untyped_storage().data_ptr() == addr(a) + 8
    assert t.untyped_storage().nbytes() == ((3 - 1) * 3 + 1) * 8 == 56
    assert a.nbytes == 80  # the array's own 80 bytes: the storage covers 56 of them
    assert t.tolist() == [1.0, 4.0, 7.0]


@pytest.mark.claim("tensor.numpy.negative-strides")
def test_negative_strides_refused_everywhere():
    r = np.arange(5.0)[::-1]
    assert r.strides == (-8,)
    for convert in (torch.from_numpy, torch.as_tensor, torch.asarray, torch.tensor):
        with pytest.raises(ValueError, match=NEGATIVE_STRIDE):
            convert(r)
    with pytest.raises(ValueError, match=r"You can probably work around this by making a copy of your array"):
        torch.from_numpy(r)
    assert torch.from_numpy(r.copy()).tolist() == [4.0, 3.0, 2.0, 1.0, 0.0]


@pytest.mark.claim("tensor.numpy.from-numpy-unrepresentable")
def test_unrepresentable_arrays_refused():
    packed = np.zeros(4, dtype=np.dtype([("a", "i1"), ("b", "<f4")], align=False))
    field = packed["b"]
    assert field.strides == (5,) and field.itemsize == 4
    swapped = np.arange(3, dtype=np.float32).astype(np.dtype(np.float32).newbyteorder())
    assert not swapped.dtype.isnative
    for convert in (torch.from_numpy, torch.as_tensor, torch.asarray, torch.tensor):
        with pytest.raises(ValueError, match=r"given numpy array strides not a multiple of the element byte size"):
            convert(field)
        with pytest.raises(ValueError, match=r"given numpy array has byte order different from the native byte order"):
            convert(swapped)
    with pytest.raises(TypeError, match=r"expected np\.ndarray \(got list\)"):
        torch.from_numpy([1.0, 2.0])
    for arr, values in ((field, [0.0] * 4), (swapped, [0.0, 1.0, 2.0])):  # a native, contiguous copy converts
        assert torch.from_numpy(np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("="))).tolist() == values
    assert torch.tensor([1.0, 2.0]).tolist() == [1.0, 2.0]


@pytest.mark.claim("tensor.numpy.non-writable-warns")
def test_non_writable_array_warns():
    r = np.arange(3.0)
    r.flags.writeable = False
    with warn_always(True):
        with pytest.warns(UserWarning, match=NOT_WRITABLE_ARRAY) as record:
            t = torch.from_numpy(r)
            torch.from_numpy(r)
        assert count_matching(record, "The given NumPy array is not writable") == 2
        assert any("This type of warning will be suppressed for the rest of this program" in str(w.message)
                   for w in record)
        assert any("writing to this tensor will result in undefined behavior" in str(w.message) for w in record)
        with pytest.warns(UserWarning, match=NOT_WRITABLE_ARRAY):
            shared = torch.as_tensor(r)
        with warnings.catch_warnings(record=True) as copied:
            warnings.simplefilter("always")
            c = torch.tensor(r)
        assert count_matching(copied, "not writable") == 0
    assert t.data_ptr() == addr(r) and shared.data_ptr() == addr(r)  # still shared, not copied
    assert c.data_ptr() != addr(r)
    with warn_always(False):
        with warnings.catch_warnings(record=True) as once:
            warnings.simplefilter("always")
            for _ in range(3):
                torch.from_numpy(r)
    assert count_matching(once, "The given NumPy array is not writable") == 1  # the first of three calls


@pytest.mark.claim("tensor.numpy.dtype-map")
def test_numpy_dtype_mapping():
    names = ["float64", "float32", "float16", "complex64", "complex128", "int64", "int32", "int16",
             "int8", "uint64", "uint32", "uint16", "uint8", "bool"]
    for name in names:
        t = torch.from_numpy(np.zeros(2, dtype=name))
        assert t.dtype == getattr(torch, name)
        assert t.element_size() == np.dtype(name).itemsize
        assert t.numpy().dtype == np.dtype(name)  # and back
    assert torch.get_default_dtype() == torch.float32
    assert torch.from_numpy(np.array([1.0, 2.0])).dtype == torch.float64
    assert torch.from_numpy(np.array([1, 2])).dtype == torch.int64
    assert torch.from_numpy(np.array([True])).dtype == torch.bool


@pytest.mark.claim("tensor.numpy.dtype-unsupported-array")
def test_unsupported_numpy_dtypes():
    cases = {
        "numpy.object_": np.array([object(), 1], dtype=object),
        "numpy.str_": np.array(["a", "b"]),
        "numpy.datetime64": np.array([1, 2], dtype="datetime64[s]"),
        "numpy.longdouble": np.zeros(2, dtype=np.longdouble),
    }
    for typename, arr in cases.items():
        for convert in (torch.from_numpy, torch.tensor):
            with pytest.raises(TypeError, match=rf"can't convert np\.ndarray of type {typename}\. " + SUPPORTED):
                convert(arr)
    assert torch.from_numpy(np.zeros(2, dtype=np.longdouble).astype(np.float64)).dtype == torch.float64


@pytest.mark.claim("tensor.numpy.dtype-unsupported-tensor")
def test_unsupported_torch_dtypes():
    with pytest.raises(TypeError, match=r"Got unsupported ScalarType BFloat16"):
        torch.ones(2, dtype=torch.bfloat16).numpy()
    with pytest.raises(TypeError, match=r"Got unsupported ScalarType Float8_e4m3fn"):
        torch.zeros(2, dtype=torch.float8_e4m3fn).numpy()
    assert torch.ones(2, dtype=torch.bfloat16).float().numpy().dtype == np.float32


# ---------------------------------------------------------------- Tensor.numpy()

@pytest.mark.claim("tensor.numpy.c-entry-points")
def test_conversions_are_c_functions():
    assert type(torch.from_numpy).__name__ == "builtin_function_or_method"
    assert type(torch.Tensor.numpy).__name__ == "method_descriptor"
    assert torch.Tensor.numpy.__qualname__ == "TensorBase.numpy"
    assert "numpy" not in torch.Tensor.__dict__  # nothing in torch/_tensor.py overrides it
    import torchgen
    template = pathlib.Path(torchgen.__file__).parent / "packaged/autograd/templates/python_variable_methods.cpp"
    text = template.read_text()
    start = text.index("THPVariable_numpy(")
    body = text[start:text.index("END_HANDLE_TH_ERRORS", start)]
    assert "torch::utils::tensor_to_numpy(" in body
    assert '{"numpy", castPyCFunctionWithKeywords(THPVariable_numpy)' in text


@pytest.mark.claim("tensor.numpy.numpy-shares")
def test_numpy_shares_memory():
    t = torch.arange(12.0).reshape(3, 4)
    n = t.numpy()
    assert addr(n) == t.data_ptr()
    n[0, 0] = 7.0
    assert t[0, 0].item() == 7.0
    t[2, 3] = -1.0
    assert n[2, 3] == -1.0
    tt = t.t()
    nt = tt.numpy()
    assert addr(nt) == tt.data_ptr()
    assert nt.strides == tuple(s * 4 for s in tt.stride()) == (4, 16)
    assert nt.flags.f_contiguous and not nt.flags.c_contiguous
    e = torch.arange(3.0).expand(4, 3)
    assert e.numpy().strides == (0, 4)


@pytest.mark.claim("tensor.numpy.numpy-base")
def test_numpy_base_is_an_alias_tensor():
    t = torch.arange(3.0)
    n = t.numpy()
    assert type(n.base) is torch.Tensor
    assert n.base is not t
    assert n.base.data_ptr() == t.data_ptr()
    alive = weakref.ref(t)
    del t
    gc.collect()
    assert alive() is None  # the array does not keep the original Python object...
    assert n.tolist() == [0.0, 1.0, 2.0]  # ...but the alias keeps the memory
    assert n.base.untyped_storage().data_ptr() == addr(n)


@pytest.mark.claim("tensor.numpy.shared-not-resizable")
def test_shared_storage_not_resizable():
    t = torch.arange(4.0)
    assert t.untyped_storage().resizable()
    t.numpy()
    assert not t.untyped_storage().resizable()
    with pytest.raises(RuntimeError, match=r"Trying to resize storage that is not resizable"):
        t.resize_(100)
    grown = t.clone()  # a copy owns its memory
    grown.resize_(100)
    assert grown.numel() == 100
    f = torch.from_numpy(np.arange(4.0))
    b = torch.frombuffer(bytearray(16), dtype=torch.float32)
    for shared in (f, b):
        assert not shared.untyped_storage().resizable()
        with pytest.raises(RuntimeError, match=r"Trying to resize storage that is not resizable"):
            shared.resize_(100)
    f.resize_(2)  # shrinking needs no new memory
    assert f.shape == (2,)
    fresh = torch.arange(4.0)
    fresh.resize_(100)
    assert fresh.numel() == 100


@pytest.mark.claim("tensor.numpy.numpy-requires-grad")
def test_numpy_refuses_requires_grad():
    g = torch.ones(2, requires_grad=True)
    msg = r"Can't call numpy\(\) on Tensor that requires grad\. Use tensor\.detach\(\)\.numpy\(\) instead\."
    with pytest.raises(RuntimeError, match=msg):
        g.numpy()
    with pytest.raises(RuntimeError, match=msg):
        np.asarray(g)
    assert addr(g.detach().numpy()) == g.data_ptr()
    assert g.numpy(force=True).tolist() == [1.0, 1.0]


@pytest.mark.claim("tensor.numpy.numpy-force-detaches")
def test_numpy_force_shares_for_cpu_grad_tensor():
    g = torch.arange(3.0, requires_grad=True)
    n = g.numpy(force=True)
    assert addr(n) == g.data_ptr()  # no copy: force=True only detached
    n[0] = 9.0
    assert g[0].item() == 9.0
    plain = torch.arange(3.0)
    assert addr(plain.numpy(force=True)) == plain.data_ptr()


@pytest.mark.claim("tensor.numpy.numpy-conj-neg")
def test_numpy_conj_and_neg_bits():
    z = torch.tensor([1 + 2j, 3 - 1j])
    c = z.conj()
    assert c.is_conj()
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that has conjugate bit set\. "
                                           r"Use tensor\.resolve_conj\(\)\.numpy\(\) instead\."):
        c.numpy()
    neg = c.imag
    assert neg.is_neg()
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that has negative bit set\. "
                                           r"Use tensor\.resolve_neg\(\)\.numpy\(\) instead\."):
        neg.numpy()
    nc = c.numpy(force=True)
    assert nc.tolist() == [1 - 2j, 3 + 1j]
    assert addr(nc) != c.data_ptr()  # resolving the bit needs a copy
    nn = neg.numpy(force=True)
    assert nn.tolist() == [-2.0, 1.0] and addr(nn) != neg.data_ptr()
    assert c.resolve_conj().numpy().tolist() == [1 - 2j, 3 + 1j]  # what the messages advise also works
    assert neg.resolve_neg().numpy().tolist() == [-2.0, 1.0]


@pytest.mark.claim("tensor.numpy.numpy-device-layout")
def test_numpy_needs_dense_cpu():
    with pytest.raises(TypeError, match=r"can't convert meta device type tensor to numpy\. "
                                        r"Use Tensor\.cpu\(\) to copy the tensor to host memory first\."):
        torch.empty(2, device="meta").numpy()
    with pytest.raises(TypeError, match=r"can't convert Sparse layout tensor to numpy\. Use Tensor\.to_dense\(\) first\."):
        torch.eye(2).to_sparse().numpy()
    assert torch.eye(2).to_sparse().to_dense().numpy().tolist() == [[1.0, 0.0], [0.0, 1.0]]


@pytest.mark.claim("tensor.numpy.numpy-cuda")
@pytest.mark.devices("cuda")
def test_numpy_on_cuda(device):
    t = torch.arange(3.0, device=device)
    with pytest.raises(TypeError, match=r"can't convert cuda:0 device type tensor to numpy\. "
                                        r"Use Tensor\.cpu\(\) to copy the tensor to host memory first\."):
        t.numpy()
    n = t.numpy(force=True)
    assert isinstance(n, np.ndarray) and n.tolist() == [0.0, 1.0, 2.0]
    n[0] = 5.0
    assert t[0].item() == 0.0  # a host copy


@pytest.mark.claim("tensor.numpy.array-protocol")
def test_numpy_asarray_uses_tensor_array():
    t = torch.arange(3.0)
    assert addr(np.asarray(t)) == t.data_ptr()
    converted = np.asarray(t, dtype=np.float64)
    assert converted.dtype == np.float64 and addr(converted) != t.data_ptr()
    assert list(inspect.signature(torch.Tensor.__array__).parameters) == ["self", "dtype"]
    assert "return self.numpy()" in inspect.getsource(torch.Tensor.__array__)


@pytest.mark.claim("tensor.numpy.array-copy-keyword")
def test_numpy_array_copy_keyword():
    assert int(np.__version__.split(".")[0]) >= 2
    t = torch.arange(3.0)
    assert "copy" not in inspect.signature(torch.Tensor.__array__).parameters
    with pytest.warns(DeprecationWarning, match=r"__array__ implementation doesn't accept a copy keyword"):
        copied = np.array(t)
    assert addr(copied) != t.data_ptr() and copied.tolist() == [0.0, 1.0, 2.0]
    with pytest.warns(DeprecationWarning, match=r"__array__ implementation doesn't accept a copy keyword"):
        with pytest.raises(ValueError, match=r"Unable to avoid copy while creating an array as requested"):
            np.array(t, copy=False)
    with warnings.catch_warnings(record=True) as quiet:
        warnings.simplefilter("always")
        shared = np.asarray(t)
    assert addr(shared) == t.data_ptr()  # what copy=False asks for is possible
    assert count_matching(quiet, "copy keyword") == 0  # and np.asarray does not warn


@pytest.mark.claim("tensor.numpy.array-wrap")
def test_numpy_ufunc_returns_tensor():
    assert int(np.__version__.split(".")[0]) >= 2
    assert list(inspect.signature(torch.Tensor.__array_wrap__).parameters) == ["self", "array"]
    t = torch.tensor([0.0, 1.0])
    with pytest.warns(DeprecationWarning, match=r"__array_wrap__ must accept context and return_scalar arguments"):
        out = np.sin(t)
    assert type(out) is torch.Tensor and out.dtype == torch.float32
    assert torch.allclose(out, torch.sin(t))


# ---------------------------------------------------------------- constructors

@pytest.mark.claim("tensor.construct.tensor-copies")
def test_torch_tensor_copies_ndarray():
    a = np.arange(3.0)
    t = torch.tensor(a)
    assert t.data_ptr() != addr(a)
    assert t.dtype == torch.float64
    a[0] = 42.0
    assert t[0].item() == 0.0
    t[1] = -1.0
    assert a[1] == 1.0


@pytest.mark.claim("tensor.construct.tensor-keeps-layout")
def test_torch_tensor_keeps_dense_permutation():
    c = np.arange(12.0).reshape(3, 4)
    f = np.asfortranarray(c)
    tf = torch.tensor(f)
    assert tf.data_ptr() != addr(f)
    assert tf.stride() == (1, 3) and not tf.is_contiguous()
    p = np.arange(24.0).reshape(2, 3, 4).transpose(2, 0, 1)
    assert torch.tensor(p).stride() == (1, 12, 4)
    s = np.arange(24.0).reshape(4, 6)[:, ::2]  # not dense: gaps between elements
    ts = torch.tensor(s)
    assert ts.is_contiguous() and ts.stride() == (3, 1)


@pytest.mark.claim("tensor.construct.python-float-default")
def test_python_floats_use_default_dtype():
    assert torch.get_default_dtype() == torch.float32
    assert torch.tensor([1.0, 2.0]).dtype == torch.float32
    assert torch.tensor(np.array([1.0, 2.0])).dtype == torch.float64
    assert torch.from_numpy(np.array([1.0, 2.0])).dtype == torch.float64
    assert torch.tensor([np.float64(1.0), 2.0]).dtype == torch.float64
    assert torch.tensor([1, 2]).dtype == torch.int64
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert torch.tensor([1.0, 2.0]).dtype == torch.float64
        assert torch.from_numpy(np.array([1.0], dtype=np.float32)).dtype == torch.float32
    finally:
        torch.set_default_dtype(previous)


@pytest.mark.claim("tensor.construct.tensor-from-tensor-warns")
def test_torch_tensor_of_tensor_warns():
    src = torch.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match=r"To copy construct from a tensor, it is recommended to use "
                                         r"sourceTensor\.detach\(\)\.clone\(\) or sourceTensor\.detach\(\)\.clone\(\)"
                                         r"\.requires_grad_\(True\), rather than torch\.tensor\(sourceTensor\)\."):
        out = torch.tensor(src)
    assert out.data_ptr() != src.data_ptr()
    assert not out.requires_grad and out.grad_fn is None
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        copy = src.detach().clone()
    assert copy.data_ptr() != src.data_ptr() and not copy.requires_grad


@pytest.mark.claim("tensor.construct.list-of-arrays-warns")
def test_list_of_arrays_warns():
    rows = [np.zeros(3), np.ones(3)]
    with warn_always(True):
        with pytest.warns(UserWarning, match=r"Creating a tensor from a list of numpy\.ndarrays is extremely slow\. "
                                             r"Please consider converting the list to a single numpy\.ndarray"):
            t = torch.tensor(rows)
        with warnings.catch_warnings(record=True) as stacked:
            warnings.simplefilter("always")
            u = torch.tensor(np.array(rows))
    assert count_matching(stacked, "extremely slow") == 0
    assert t.shape == u.shape == (2, 3) and t.dtype == u.dtype == torch.float64


@pytest.mark.claim("tensor.construct.as-tensor-ndarray")
def test_as_tensor_ndarray():
    a = np.arange(3.0)
    shared = torch.as_tensor(a)
    assert shared.data_ptr() == addr(a) and shared.dtype == torch.float64
    a[0] = 5.0
    assert shared[0].item() == 5.0
    assert torch.as_tensor(a, dtype=torch.float64).data_ptr() == addr(a)
    converted = torch.as_tensor(a, dtype=torch.float32)
    assert converted.data_ptr() != addr(a) and converted.dtype == torch.float32
    a[1] = 9.0
    assert converted[1].item() == 1.0


@pytest.mark.claim("tensor.construct.as-tensor-tensor")
def test_as_tensor_tensor_identity():
    t = torch.ones(2, requires_grad=True)
    assert torch.as_tensor(t) is t
    assert torch.as_tensor(t, dtype=torch.float32) is t
    assert torch.as_tensor(t, device="cpu") is t
    d = torch.as_tensor(t, dtype=torch.float64)
    assert d is not t and d.data_ptr() != t.data_ptr()
    assert d.requires_grad and d.grad_fn is not None  # the conversion is recorded by autograd


@pytest.mark.claim("tensor.construct.asarray-copy")
def test_asarray_copy_argument():
    a = np.arange(3.0)
    assert torch.asarray(a).data_ptr() == addr(a)
    assert torch.asarray(a, copy=True).data_ptr() != addr(a)
    assert torch.asarray(a, dtype=torch.float32).data_ptr() != addr(a)
    with pytest.raises(ValueError, match=r"can't alias tensor with dtype 'Double' into dtype 'Float'\."):
        torch.asarray(a, dtype=torch.float32, copy=False)
    leaf = torch.asarray(a, requires_grad=True)
    assert leaf.requires_grad and leaf.is_leaf and leaf.data_ptr() == addr(a)
    t = torch.ones(2)
    assert torch.asarray(t) is t
    assert torch.asarray(t, copy=True) is not t


@pytest.mark.claim("tensor.construct.legacy-ctor")
def test_legacy_tensor_constructor():
    a32 = np.arange(3, dtype=np.float32)
    s = torch.Tensor(a32)
    assert s.data_ptr() == addr(a32) and s.dtype == torch.float32
    a64 = np.arange(3.0)
    c = torch.Tensor(a64)
    assert c.data_ptr() != addr(a64) and c.dtype == torch.float32
    ai = np.arange(3)
    ci = torch.Tensor(ai)
    assert ci.data_ptr() != addr(ai) and ci.dtype == torch.float32
    assert torch.DoubleTensor(a64).data_ptr() == addr(a64)


# ---------------------------------------------------------------- torch.frombuffer

@pytest.mark.claim("tensor.construct.frombuffer-shares")
def test_frombuffer_shares_bytearray():
    buf = bytearray(16)
    t = torch.frombuffer(buf, dtype=torch.int32)
    assert t.shape == (4,) and t.data_ptr() == buffer_addr(buf)
    t[0] = 7
    assert buf[:4] == (7).to_bytes(4, sys.byteorder)
    buf[4] = 1
    assert t[1].item() == 1
    part = torch.frombuffer(buf, dtype=torch.int32, count=2, offset=4)
    assert part.shape == (2,) and part.data_ptr() == buffer_addr(buf) + 4
    arr = np.arange(4, dtype=np.int32)
    from_arr = torch.frombuffer(arr, dtype=torch.int32)
    assert from_arr.data_ptr() == addr(arr) and from_arr.tolist() == [0, 1, 2, 3]

    class Buf(bytearray):  # a subclass, so a weak reference can watch it
        pass

    owned = Buf(8)
    alive = weakref.ref(owned)
    u = torch.frombuffer(owned, dtype=torch.uint8)
    del owned
    gc.collect()
    assert alive() is not None
    del u
    gc.collect()
    assert alive() is None


@pytest.mark.claim("tensor.construct.frombuffer-length")
def test_frombuffer_length_must_fit():
    with pytest.raises(ValueError, match=r"buffer length \(5 bytes\) after offset \(0 bytes\) must be a "
                                         r"multiple of element size \(4\)"):
        torch.frombuffer(bytearray(5), dtype=torch.int32)
    with pytest.raises(ValueError, match=r"both buffer length \(0\) and count \(-1\) must not be 0"):
        torch.frombuffer(bytearray(0), dtype=torch.int32)


@pytest.mark.claim("tensor.construct.frombuffer-readonly-warns")
def test_frombuffer_readonly_warns():
    data = bytes(range(8))
    with warn_always(True):
        with pytest.warns(UserWarning, match=NOT_WRITABLE_BUFFER):
            t = torch.frombuffer(data, dtype=torch.uint8)
    assert t.tolist() == list(range(8))
    with warn_always(True):
        with warnings.catch_warnings(record=True) as writable:
            warnings.simplefilter("always")
            torch.frombuffer(bytearray(data), dtype=torch.uint8)
    assert count_matching(writable, "The given buffer is not writable") == 0
    with warn_always(False):
        with warnings.catch_warnings(record=True) as once:
            warnings.simplefilter("always")
            for _ in range(3):
                torch.frombuffer(data, dtype=torch.uint8)
    assert count_matching(once, "The given buffer is not writable") == 1  # the first of three calls


@pytest.mark.claim("tensor.construct.frombuffer-no-export")
def test_frombuffer_holds_no_export():
    buf = bytearray(8)
    t = torch.frombuffer(buf, dtype=torch.uint8)
    old = buffer_addr(buf)
    assert t.data_ptr() == old
    buf.extend(bytes(1 << 20))  # allowed although a tensor views the bytes
    assert len(buf) == 8 + (1 << 20)
    assert buffer_addr(buf) != old  # the bytes moved...
    assert t.data_ptr() == old  # ...and the tensor still points at the old place
    held = bytearray(8)
    view = np.frombuffer(held, dtype=np.uint8)
    with pytest.raises(BufferError, match=r"Existing exports of data: object cannot be re-sized"):
        held.extend(b"x")
    del view, t
    held.extend(b"x")  # the NumPy array gone, the export is released and the resize works
    assert len(held) == 9
