"""Probes for the claims that check PyTorch's "Tensor Views" page (docs/guide/official-notes/tensor-views.md)."""
import pytest
import torch


def shares(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def listed_views(root, cplx):
    """The view ops of the official list that docs/tensor/views.md does not already probe."""
    return {
        "adjoint": (root, lambda t: t.adjoint()),
        "expand_as": (root, lambda t: t[:, :1].expand_as(t)),
        "T": (root, lambda t: t.T),
        "H": (root, lambda t: t.H),
        "mT": (root, lambda t: t.mT),
        "mH": (root, lambda t: t.mH),
        "real (complex input)": (cplx, lambda t: t.real),
        "imag (complex input)": (cplx, lambda t: t.imag),
        "view_as_real": (cplx, lambda t: torch.view_as_real(t)),
        "unfold": (root, lambda t: t.unfold(1, 2, 2)),
        "view_as": (root, lambda t: t.view_as(torch.empty(6, 4))),
        "unbind": (root, lambda t: t.unbind(0)[1]),
        "hsplit": (root, lambda t: t.hsplit(2)[1]),
        "vsplit": (root, lambda t: t.vsplit(2)[1]),
        "tensor_split": (root, lambda t: t.tensor_split(3, dim=1)[1]),
        "split_with_sizes": (root, lambda t: t.split_with_sizes([1, 3])[1]),
        "swapaxes": (root, lambda t: t.swapaxes(0, 1)),
        "swapdims": (root, lambda t: t.swapdims(0, 1)),
        "chunk": (root, lambda t: t.chunk(2)[1]),
    }


@pytest.mark.claim("tensor.view.notes-listed-ops-alias")
def test_listed_ops_return_views(device):
    root = torch.arange(24.0, device=device).reshape(4, 6).clone()
    cplx = torch.complex(torch.arange(6.0), -torch.arange(6.0)).reshape(3, 2).to(device).clone()
    for name, (base, make) in listed_views(root, cplx).items():
        v = make(base)
        assert v._is_view(), name
        assert v._base is base, name
        assert shares(v, base), name
        before = v.clone()
        with torch.no_grad():
            base.mul_(2).add_(1)  # a change of the base shows through the view
        assert not torch.equal(v, before), name
        assert torch.equal(v, make(base)), name


@pytest.mark.claim("tensor.view.real-of-real-is-self")
def test_real_of_a_real_tensor_is_itself(device):
    t = torch.arange(4.0, device=device)
    assert t.real is t
    assert not t.real._is_view() and t.real._base is None


@pytest.mark.claim("tensor.view.complex-views-need-complex")
def test_imag_and_view_as_real_need_complex(device):
    t = torch.arange(4.0, device=device)
    with pytest.raises(RuntimeError, match=r"imag is not implemented for tensors with non-complex dtypes"):
        t.imag
    with pytest.raises(RuntimeError, match=r"view_as_real is only supported for complex tensors"):
        torch.view_as_real(t)
    assert torch.view_as_real(t.to(torch.complex64)).shape == (4, 2)


def coalesced_sparse(device):
    return torch.tensor([[0.0, 1.0], [2.0, 0.0]], device=device).to_sparse()


@pytest.mark.claim("tensor.view.sparse-values-is-view")
def test_sparse_values_is_a_view(device):
    s = coalesced_sparse(device)
    v = s.values()
    assert v._is_view() and v._base is s
    assert v.data_ptr() == s._values().data_ptr()
    v.mul_(10)
    assert s.to_dense().cpu().tolist() == [[0.0, 10.0], [20.0, 0.0]]


@pytest.mark.claim("tensor.view.sparse-indices-not-tracked")
def test_sparse_indices_alias_but_are_not_tracked(device):
    s = coalesced_sparse(device)
    i = s.indices()
    assert not i._is_view() and i._base is None
    assert i.data_ptr() == s._indices().data_ptr()
    i[1, 0] = 0  # move the entry at (0, 1) to (0, 0) through the returned tensor
    assert s.to_dense().cpu().tolist() == [[1.0, 0.0], [2.0, 0.0]]


@pytest.mark.claim("tensor.view.sparse-needs-coalesced")
def test_sparse_indices_values_need_coalesced(device):
    s = torch.sparse_coo_tensor(torch.tensor([[0, 0], [1, 1]]), torch.tensor([1.0, 2.0]), (2, 2),
                                check_invariants=True).to(device)
    assert not s.is_coalesced()
    with pytest.raises(RuntimeError, match=r"Cannot get indices on an uncoalesced tensor, please call .coalesce\(\) first"):
        s.indices()
    with pytest.raises(RuntimeError, match=r"Cannot get values on an uncoalesced tensor, please call .coalesce\(\) first"):
        s.values()
    assert s._indices().shape == (2, 2)  # the raw, uncoalesced fields are still reachable
    c = s.coalesce()  # sums the two entries at (0, 1)
    assert c.indices().tolist() == [[0], [1]] and c.values().tolist() == [3.0]


@pytest.mark.claim("tensor.view.flatten-1d-is-self")
def test_flatten_of_1d_returns_itself(device):
    t = torch.arange(5.0, device=device)
    assert t.flatten() is t
    r = t.reshape(5)
    assert r is not t and r._base is t  # reshape to the same shape makes a new view object
    m = torch.arange(6.0, device=device).reshape(2, 3).clone()
    assert m.flatten() is not m and m.flatten()._base is m


@pytest.mark.claim("tensor.view.reshape-as-view-or-copy")
def test_reshape_as_view_or_copy(device):
    t = torch.arange(12.0, device=device).reshape(3, 4).clone()
    v = t.reshape_as(torch.empty(4, 3))
    assert v._base is t and shares(v, t)
    c = t.t().reshape_as(torch.empty(12))
    assert c._base is None and not shares(c, t)
    assert c.cpu().tolist() == t.t().cpu().flatten().tolist()


@pytest.mark.claim("tensor.view.index-assign-in-place")
def test_index_assignment_is_in_place(device):
    t = torch.arange(6.0, device=device)
    ptr, version = t.data_ptr(), t._version
    t[[0, 2]] = -1.0  # advanced (list) index
    assert t.cpu().tolist() == [-1.0, 1.0, -1.0, 3.0, 4.0, 5.0] and t._version == version + 1
    t[t > 3] = 0.0  # boolean mask
    assert t.cpu().tolist() == [-1.0, 1.0, -1.0, 3.0, 0.0, 0.0] and t._version == version + 2
    t[1:3] = 9.0  # basic slice
    assert t.cpu().tolist() == [-1.0, 9.0, 9.0, 3.0, 0.0, 0.0] and t._version == version + 3
    assert t.data_ptr() == ptr


@pytest.mark.claim("tensor.view.ordinary-ops-allocate")
def test_ordinary_ops_return_new_tensors(device):
    t = torch.arange(6.0, device=device)
    for out in (t.add(1), t + 1, t.mul(2), t.exp()):
        assert not out._is_view() and out._base is None
        assert not shares(out, t)
    assert t.cpu().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
