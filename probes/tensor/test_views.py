"""Probes for docs/tensor/views.md."""
import gc

import pytest
import torch


def same_storage(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


@pytest.mark.claim("tensor.view.shares-storage")
def test_view_shares_storage(device):
    base = torch.arange(6.0, device=device)
    view = base.view(2, 3)
    assert same_storage(view, base)
    view[0, 0] = 100.0
    assert base[0].item() == 100.0
    base[5] = -1.0
    assert view[1, 2].item() == -1.0


def aliasing_ops(root):
    return {
        "view": lambda: root.view(6, 4),
        "reshape (contiguous input)": lambda: root.reshape(3, 8),
        "flatten (contiguous input)": lambda: root.flatten(),
        "transpose": lambda: root.transpose(0, 1),
        "t": lambda: root.t(),
        "permute": lambda: root.permute(1, 0),
        "slice": lambda: root[1:3, ::2],
        "integer index": lambda: root[2],
        "0-dim integer tensor index": lambda: root[torch.tensor(2)],
        "ellipsis/None": lambda: root[None, ..., 1],
        "narrow": lambda: root.narrow(1, 1, 3),
        "select": lambda: root.select(1, 0),
        "unsqueeze": lambda: root.unsqueeze(0),
        "squeeze": lambda: root.unsqueeze(1).squeeze(1),
        "expand": lambda: root[:, :1].expand(4, 6),
        "diagonal": lambda: root.diagonal(),
        "unflatten": lambda: root.unflatten(1, (2, 3)),
        "split": lambda: root.split(2)[1],
        "movedim": lambda: root.movedim(0, 1),
        "as_strided": lambda: root.as_strided((2, 2), (1, 6)),
    }


def copying_ops(root):
    return {
        "index with a list": lambda: root[[0, 2]],
        "index with a 1-D tensor": lambda: root[torch.tensor([1], device=root.device)],
        "boolean mask": lambda: root[root > 3],
        "index_select": lambda: root.index_select(0, torch.tensor([0, 1], device=root.device)),
        "take": lambda: root.take(torch.tensor([1, 2], device=root.device)),
        "clone": lambda: root.clone(),
        "flatten (transposed input)": lambda: root.t().flatten(),
        "cat": lambda: torch.cat([root, root]),
        "contiguous (transposed input)": lambda: root.t().contiguous(),
    }


@pytest.mark.claim("tensor.view.which-ops-alias")
def test_ops_that_return_views(device):
    root = torch.arange(24.0, device=device).reshape(4, 6).clone()  # a root: not itself a view
    assert not root._is_view()
    for name, make in aliasing_ops(root).items():
        v = make()
        assert v._is_view(), name
        assert v._base is root, name
        assert same_storage(v, root), name


@pytest.mark.claim("tensor.view.which-ops-copy")
def test_ops_that_copy(device):
    root = torch.arange(24.0, device=device).reshape(4, 6).clone()
    for name, make in copying_ops(root).items():
        c = make()
        assert not c._is_view(), name
        assert c._base is None, name
        assert not same_storage(c, root), name
        before = root.clone()
        c.fill_(-7.0)
        assert torch.equal(root, before), name  # writes to the copy do not reach root


@pytest.mark.claim("tensor.view.schema-alias")
def test_schema_declares_aliasing():
    aten = torch.ops.aten
    for op in (aten.view.default, aten.transpose.int, aten.expand.default, aten.as_strided.default,
               aten.select.int, aten.slice.Tensor, aten.diagonal.default, aten.view.dtype,
               # "may alias": these return self or a view when they can, a copy otherwise
               aten.reshape.default, aten.contiguous.default, aten.flatten.using_ints):
        ret = op._schema.returns[0].alias_info
        arg = op._schema.arguments[0].alias_info
        assert ret is not None and arg is not None, op
        assert ret.before_set == arg.before_set and not ret.is_write, op
    for op in (aten.clone.default, aten.index.Tensor, aten.index_select.default, aten.take.default,
               aten.cat.default):
        assert op._schema.returns[0].alias_info is None, op


@pytest.mark.claim("tensor.view.base-is-root")
def test_base_is_root(device):
    root = torch.zeros(4, 6, device=device)
    assert root._base is None
    mid = root[1:]
    leaf = mid[0]
    leafier = leaf.unsqueeze(0).t()
    assert mid._base is root
    assert leaf._base is root and leaf._base is not mid
    assert leafier._base is root


@pytest.mark.claim("tensor.view.version-counter-shared")
def test_views_share_version_counter(device):
    root = torch.zeros(4, 6, device=device)
    a = root[1:]
    b = a.t()
    start = root._version
    assert a._version == b._version == start
    b.add_(1.0)  # in place through a view of a view
    assert root._version == a._version == b._version == start + 1
    root.mul_(2.0)
    assert root._version == a._version == b._version == start + 2
    a.copy_(torch.ones(3, 6, device=device))
    assert root._version == a._version == b._version == start + 3
    c = root.clone()
    c.add_(1.0)
    assert root._version == start + 3  # a copy has its own counter


@pytest.mark.claim("tensor.view.detach-shares-version")
def test_detach_shares_storage_and_version(device):
    x = torch.arange(6.0, device=device, requires_grad=True).clone()
    d = x.detach()
    assert same_storage(d, x)
    assert not d._is_view() and d._base is None
    assert not d.requires_grad
    before = x._version
    d.zero_()
    assert x._version == before + 1
    assert x.detach().abs().sum().item() == 0.0


@pytest.mark.claim("tensor.view.slice-keeps-storage")
def test_small_slice_keeps_whole_storage(device):
    big = torch.arange(1000, dtype=torch.float32, device=device)
    small = big[:5]
    del big
    gc.collect()
    assert small.untyped_storage().nbytes() == 1000 * 4
    assert small.cpu().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    own = small.clone()
    assert own.untyped_storage().nbytes() == 5 * 4
    assert own._base is None


@pytest.mark.claim("tensor.view.contiguous-self-or-copy")
def test_contiguous_returns_self_or_copy(device):
    t = torch.arange(12.0, device=device).reshape(3, 4)
    assert t.is_contiguous() and t.contiguous() is t
    tt = t.t()
    c = tt.contiguous()
    assert c is not tt
    assert c.is_contiguous() and c.stride() == (3, 1)
    assert not same_storage(c, tt) and c._base is None
    assert torch.equal(c, tt)


@pytest.mark.claim("tensor.view.view-rejects-incompatible")
def test_view_rejects_incompatible_strides(device):
    tt = torch.arange(12.0, device=device).reshape(3, 4).t()
    with pytest.raises(RuntimeError, match=r"view size is not compatible with input tensor's size and stride"):
        tt.view(12)
    # dims 0 and 1 of this permuted tensor are not adjacent in storage, so they cannot merge
    perm = torch.arange(24.0, device=device).reshape(2, 3, 4).permute(1, 0, 2)
    with pytest.raises(RuntimeError, match=r"view size is not compatible"):
        perm.view(6, 4)
    split = perm.view(3, 2, 2, 2)  # splitting the last dimension needs no copy
    assert split.data_ptr() == perm.data_ptr() and split.stride() == (4, 12, 2, 1)
    assert tt.reshape(12).shape == (12,) and tt.contiguous().view(12).shape == (12,)


@pytest.mark.claim("tensor.view.reshape-view-or-copy")
def test_reshape_is_view_when_possible(device):
    t = torch.arange(12.0, device=device).reshape(3, 4).clone()
    r = t.reshape(4, 3)
    assert r._base is t and same_storage(r, t)
    tt = t.t()
    r2 = tt.reshape(12)
    assert r2._base is None and not same_storage(r2, t)
    assert r2.cpu().tolist() == tt.cpu().flatten().tolist()
    r2[0] = -1.0
    assert t[0, 0].item() == 0.0  # the copy is detached from t


@pytest.mark.claim("tensor.view.expand-stride-zero")
def test_expand_uses_stride_zero(device):
    row = torch.arange(3.0, device=device)
    e = row.expand(4, 3)
    assert e.stride() == (0, 1)
    assert e.untyped_storage().nbytes() == 3 * 4
    assert e[0].data_ptr() == e[3].data_ptr()
    col = torch.arange(4.0, device=device).view(4, 1).expand(4, 5)
    assert col.stride() == (1, 0)


@pytest.mark.claim("tensor.view.overlap-rejects-expand")
def test_inplace_on_expanded_is_rejected(device):
    e = torch.zeros(3, device=device).expand(4, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single memory location"):
        e.add_(1.0)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single memory location"):
        torch.add(torch.ones(4, 3, device=device), 1.0, out=e)
    f = e.clone()
    f.add_(1.0)
    assert f.sum().item() == 12.0


@pytest.mark.claim("tensor.view.overlap-classification")
def test_internal_overlap_classification(device):
    z = torch.zeros(4, device=device)
    no, yes, too_hard = 0, 1, 2  # at::MemOverlap::{No, Yes, TooHard}
    assert torch._debug_has_internal_overlap(z) == no
    assert torch._debug_has_internal_overlap(torch.zeros(3, 4, device=device).t()) == no
    assert torch._debug_has_internal_overlap(torch.zeros(3, device=device).expand(4, 3)) == yes
    assert torch._debug_has_internal_overlap(z.as_strided((3, 2), (1, 1))) == too_hard
    assert torch._debug_has_internal_overlap(z.as_strided((2, 2), (2, 1))) == no
    assert torch._debug_has_internal_overlap(z.as_strided((1, 3), (0, 1))) == no  # stride 0, but size 1
    assert torch._debug_has_internal_overlap(torch.zeros(8, device=device)[::2]) == too_hard  # harmless, not dense


@pytest.mark.claim("tensor.view.overlap-misses-as-strided")
@pytest.mark.devices("cpu")  # the claim is about the CPU kernel
def test_overlapping_as_strided_is_not_rejected(device):
    base = torch.zeros(4, device=device)
    window = base.as_strided((3, 2), (1, 1))  # rows [0,1], [1,2], [2,3]: positions 1 and 2 are shared
    window.add_(1.0)  # no error
    assert base.tolist() == [1.0, 2.0, 2.0, 1.0]
