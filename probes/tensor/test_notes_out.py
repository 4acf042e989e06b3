"""Probes for docs/tensor/out-arguments.md (and the checked "Out Notes" page)."""
import pytest
import torch

RESIZED = (r"An output with one or more elements was resized since it had shape \[\d+(, \d+)*\], "
           r"which does not match the required output shape")


@pytest.mark.claim("tensor.out.empty-is-resized")
def test_empty_out_takes_the_result_layout(device):
    a = torch.randn(2, 3, 4, 5, device=device).to(memory_format=torch.channels_last)
    b = torch.randn(2, 3, 4, 5, device=device).to(memory_format=torch.channels_last)
    out = torch.empty(0, device=device)
    assert torch.add(a, b, out=out) is out
    assert out.shape == (2, 3, 4, 5) and out.stride() == (60, 1, 15, 3) == (a + b).stride()
    assert torch.equal(out, a + b)


@pytest.mark.claim("tensor.out.wrong-shape-resized-with-warning")
def test_wrong_shape_out_is_resized_and_warns(device):
    x = torch.randn(3, 4, device=device)
    y = torch.randn(3, 4, device=device)
    out = torch.empty(4, 3, device=device)  # the wrong shape
    with pytest.warns(UserWarning, match=r"An output with one or more elements was resized since it had shape "
                                         r"\[4, 3\], which does not match the required output shape \[3, 4\]\. "
                                         r"This behavior is deprecated"):
        torch.add(x, y, out=out)
    assert out.shape == (3, 4) and out.stride() == (4, 1) and torch.equal(out, x + y)
    transposed = torch.empty(3, 4, device=device).t()  # (4, 3), strides (1, 4)
    with pytest.warns(UserWarning, match=RESIZED):
        torch.add(x, y, out=transposed)
    assert transposed.stride() == (4, 1)  # resized to a contiguous layout, its old strides dropped
    for name, call, shape in (
        ("mm", lambda o: torch.mm(x, y.t(), out=o), (3, 3)),
        ("cat", lambda o: torch.cat([x, y], out=o), (6, 4)),
        ("sum", lambda o: torch.sum(x, 0, out=o), (4,)),
        ("index_select", lambda o: torch.index_select(x, 0, torch.tensor([0], device=device), out=o), (1, 4)),
    ):
        o = torch.empty(7, 7, device=device)
        with pytest.warns(UserWarning, match=RESIZED):
            call(o)
        assert o.shape == shape, name
    import warnings
    empty = torch.empty(0, device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.add(x, y, out=empty)
    assert empty.shape == (3, 4)


@pytest.mark.claim("tensor.out.correct-shape-keeps-layout")
def test_correct_shape_out_keeps_strides_and_storage(device):
    x = torch.randn(3, 4, device=device)
    y = torch.randn(3, 4, device=device)
    out = torch.empty(4, 3, device=device).t()  # right shape, column-major strides
    ptr = out.data_ptr()
    torch.add(x, y, out=out)
    assert out.stride() == (1, 3) and out.data_ptr() == ptr
    assert torch.equal(out, x + y)
    cl = torch.empty(2, 3, 4, 5, device=device).to(memory_format=torch.channels_last)
    ptr = cl.data_ptr()
    u, v = torch.randn(2, 3, 4, 5, device=device), torch.randn(2, 3, 4, 5, device=device)
    torch.add(u, v, out=cl)
    assert cl.is_contiguous(memory_format=torch.channels_last) and cl.data_ptr() == ptr
    assert torch.equal(cl, u + v)
    wide = torch.empty(3, 4, dtype=torch.float64, device=device)  # another dtype: still written in place
    ptr = wide.data_ptr()
    torch.add(x, y, out=wide)
    assert wide.data_ptr() == ptr and torch.equal(wide, (x + y).double())


@pytest.mark.claim("tensor.out.no-autograd")
def test_out_refuses_autograd(device):
    x = torch.randn(3, 4, device=device)
    message = (r"add\(\): functions with out=\.\.\. arguments don't support automatic differentiation, "
               r"but one of the arguments requires grad\.")
    with pytest.raises(RuntimeError, match=message):
        torch.add(x, x, out=torch.empty(3, 4, device=device, requires_grad=True))
    with pytest.raises(RuntimeError, match=message):
        torch.add(x.clone().requires_grad_(), x, out=torch.empty(3, 4, device=device))
    with torch.no_grad():
        out = torch.empty(3, 4, device=device, requires_grad=True)
        torch.add(x, x, out=out)
    assert torch.equal(out.detach(), x + x)
    assert torch.add(x.clone().requires_grad_(), x).requires_grad


@pytest.mark.claim("tensor.out.multiple-outs")
def test_each_out_tensor_independently(device):
    x = torch.randn(3, 4, device=device)
    values = torch.empty(0, device=device)
    indices = torch.empty(2, 2, dtype=torch.long, device=device)
    with pytest.warns(UserWarning, match=RESIZED):  # only indices had elements
        torch.max(x, 0, out=(values, indices))
    assert values.shape == (4,) and indices.shape == (4,)
    expected = torch.max(x, 0)
    assert torch.equal(values, expected.values) and torch.equal(indices, expected.indices)


@pytest.mark.claim("tensor.out.safe-copy-kinds")
def test_promoting_ops_cast_only_upwards_in_kind(device):
    x = torch.randn(3, 4, device=device)
    for dtype, name in ((torch.int64, "Long"), (torch.bool, "Bool")):
        with pytest.raises(RuntimeError, match=f"result type Float can't be cast to the desired output type {name}"):
            torch.add(x, x, out=torch.empty(3, 4, dtype=dtype, device=device))
    for dtype in (torch.float64, torch.float16, torch.complex64):  # same kind or higher: allowed
        out = torch.empty(3, 4, dtype=dtype, device=device)
        torch.add(x, x, out=out)
        assert torch.allclose(out, (x + x).to(dtype), atol=1e-2)
    i = torch.ones(3, 4, dtype=torch.long, device=device)
    for dtype in (torch.float32, torch.int8):
        out = torch.empty(3, 4, dtype=dtype, device=device)
        torch.add(i, i, out=out)
        assert out.eq(2).all()
    with pytest.raises(RuntimeError, match=r"result type Long can't be cast to the desired output type Bool"):
        torch.add(i, i, out=torch.empty(3, 4, dtype=torch.bool, device=device))


@pytest.mark.claim("tensor.out.can-cast-kinds")
def test_can_cast_follows_the_kind_order():
    assert [torch.can_cast(torch.float32, k) for k in (torch.bool, torch.int64, torch.float16, torch.complex64)] \
        == [False, False, True, True]


@pytest.mark.claim("tensor.out.non-promoting-exact-dtype")
@pytest.mark.devices("cpu")  # the messages are the CPU kernels' own
def test_non_promoting_ops_need_the_exact_dtype(device):
    x = torch.randn(3, 4, device=device)
    wide = dict(dtype=torch.float64, device=device)
    with pytest.raises(RuntimeError, match=r"Expected out tensor to have dtype float, but got double instead"):
        torch.mm(x, x.t(), out=torch.empty(3, 3, **wide))
    with pytest.raises(RuntimeError, match=r"Expected out tensor to have dtype float, but got double instead"):
        torch.gather(x, 0, torch.zeros(3, 4, dtype=torch.long, device=device), out=torch.empty(3, 4, **wide))
    with pytest.raises(RuntimeError, match=r"index_select\(\): self and result must have the same scalar type"):
        torch.index_select(x, 0, torch.tensor([0, 1], device=device), out=torch.empty(2, 4, **wide))
    assert torch.mm(x, x.t(), out=torch.empty(3, 3, device=device)).dtype == torch.float32


@pytest.mark.claim("tensor.out.device-must-match")
def test_out_on_another_device_is_refused():
    x = torch.randn(3, 4)
    message = r"Attempting to copy from device cpu to device meta, but cross-device copies are not allowed!"
    with pytest.raises(RuntimeError, match=message):
        torch.add(x, x, out=torch.empty(3, 4, device="meta"))
    with pytest.raises(RuntimeError, match=message):
        torch.mm(x, x.t(), out=torch.empty(3, 3, device="meta"))
