"""Probes for docs/tensor/broadcasting.md (and the checked note on broadcasting semantics)."""
import re
import warnings

import numpy as np
import pytest
import torch
import torch.utils.backcompat as backcompat


def lit(text):
    return re.escape(text)


def rule_shape(a, b):
    """The broadcast shape by the written rule: left-pad the shorter with 1s, then per dim the size
    that is not 1 (so 0 against 1 gives 0, not the larger); None where neither is 1 and they differ."""
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            return None
        out.append(x if y == 1 else y)
    return tuple(out)


PAIRS_OK = [
    ((5, 7, 3), (5, 7, 3)),
    ((5, 3, 4, 1), (3, 1, 1)),
    ((5, 1, 4, 1), (3, 1, 1)),
    ((1,), (3, 1, 7)),
    ((), (2, 3)),
    ((4, 1), (4,)),
    ((2, 1), (0,)),
    ((1, 0), (3, 1)),
    ((8, 1, 6, 1), (7, 1, 5)),
]
PAIRS_BAD = [
    ((0,), (2, 2)),
    ((5, 2, 4, 1), (3, 1, 1)),
    ((2, 3), (3, 2)),
    ((6,), (2, 3)),
    ((3,), (4,)),
]


@pytest.mark.claim("tensor.broadcast.numpy-rules")
def test_torch_and_numpy_agree_on_broadcast_shapes():
    for a, b in PAIRS_OK:
        expected = np.broadcast_shapes(a, b)
        assert tuple(torch.broadcast_shapes(a, b)) == expected
        assert tuple((torch.zeros(a) + torch.zeros(b)).shape) == expected
    for a, b in PAIRS_BAD:
        with pytest.raises(ValueError, match="cannot be broadcast to a single shape"):
            np.broadcast_shapes(a, b)
        with pytest.raises(RuntimeError, match="Attempting to broadcast a dimension of length"):
            torch.broadcast_shapes(a, b)
        with pytest.raises(RuntimeError, match="must match the size of tensor b"):
            torch.zeros(a) + torch.zeros(b)


@pytest.mark.claim("tensor.broadcast.result-shape")
def test_result_shape_is_padded_max(device):
    for a, b in PAIRS_OK:
        assert rule_shape(a, b) is not None
        for x, y in ((a, b), (b, a)):
            out = torch.zeros(x, device=device) + torch.zeros(y, device=device)
            assert tuple(out.shape) == rule_shape(a, b)
    assert tuple((torch.empty(5, 1, 4, 1, device=device) + torch.empty(3, 1, 1, device=device)).shape) == (5, 3, 4, 1)
    assert tuple((torch.empty(1, device=device) + torch.empty(3, 1, 7, device=device)).shape) == (3, 1, 7)
    assert tuple((torch.empty(2, 1, device=device) + torch.empty(0, device=device)).shape) == (2, 0)
    for a, b in PAIRS_BAD:
        assert rule_shape(a, b) is None


@pytest.mark.claim("tensor.broadcast.no-copy")
def test_broadcast_tensors_are_stride_zero_views(device):
    col = torch.arange(3.0, device=device).reshape(3, 1).clone()
    row = torch.arange(4.0, device=device)
    bc, br = torch.broadcast_tensors(col, row)
    assert bc.shape == br.shape == (3, 4)
    assert bc.stride() == (1, 0) and br.stride() == (0, 1)
    assert bc.data_ptr() == col.data_ptr() and br.data_ptr() == row.data_ptr()
    assert bc.untyped_storage().nbytes() == 3 * 4 and br.untyped_storage().nbytes() == 4 * 4
    assert bc._base is col and br._base is row


@pytest.mark.claim("tensor.broadcast.zero-size")
def test_zero_size_is_an_ordinary_size(device):
    with pytest.raises(RuntimeError, match=lit(
            "The size of tensor a (0) must match the size of tensor b (2) at non-singleton dimension 1")):
        torch.empty(0, device=device) + torch.empty(2, 2, device=device)
    assert (torch.empty(2, 1, device=device) + torch.empty(0, device=device)).shape == (2, 0)


@pytest.mark.claim("tensor.broadcast.mismatch-error")
def test_mismatch_message_names_sizes_and_dimension(device):
    with pytest.raises(RuntimeError, match=lit(
            "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 1")):
        torch.empty(5, 2, 4, 1, device=device) + torch.empty(3, 1, 1, device=device)
    assert (torch.empty(5, 3, 4, 1, device=device) + torch.empty(3, 1, 1, device=device)).shape == (5, 3, 4, 1)


@pytest.mark.claim("tensor.broadcast.inplace-keeps-shape")
def test_inplace_broadcasts_the_other_operand(device):
    x = torch.zeros(5, 3, 4, 1, device=device)
    y = torch.arange(3.0, device=device).reshape(3, 1, 1)
    ptr = x.data_ptr()
    r = x.add_(y)
    assert r is x and x.shape == (5, 3, 4, 1) and x.data_ptr() == ptr
    assert torch.equal(x, y.expand(5, 3, 4, 1))


@pytest.mark.claim("tensor.broadcast.inplace-cannot-grow")
def test_inplace_cannot_grow_destination(device):
    x = torch.zeros(1, 3, 1, device=device)
    with pytest.raises(RuntimeError, match=lit("output with shape [1, 3, 1] doesn't match the broadcast shape [3, 3, 7]")):
        x.add_(torch.ones(3, 1, 7, device=device))
    assert x.shape == (1, 3, 1)
    # the message the note quotes belongs to expand(), not to the in-place operation
    with pytest.raises(RuntimeError, match=lit("The expanded size of the tensor (1) must match the existing size (7)")):
        torch.ones(3, 1, 7, device=device).expand(1, 3, 1)
    assert (x + torch.ones(3, 1, 7, device=device)).shape == (3, 3, 7)


@pytest.mark.claim("tensor.broadcast.same-numel-raises")
def test_same_numel_not_broadcastable_raises_without_warning(device):
    for a, b, msg in [((2, 3), (3, 2), "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1"),
                      ((6,), (2, 3), "The size of tensor a (6) must match the size of tensor b (3) at non-singleton dimension 1")]:
        x, y = torch.ones(a, device=device), torch.ones(b, device=device)
        assert x.numel() == y.numel()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match=lit(msg)):
                torch.add(x, y)
        assert caught == []
    assert torch.add(torch.ones(6, device=device).view(2, 3), torch.ones(2, 3, device=device)).shape == (2, 3)


@pytest.mark.claim("tensor.broadcast.backcompat-shape")
def test_ones_4x1_plus_4_gives_4x4(device):
    out = torch.add(torch.ones(4, 1, device=device), torch.randn(4, device=device))
    assert out.shape == (4, 4)


@pytest.mark.claim("tensor.broadcast.backcompat-flag")
def test_backcompat_flag_defaults_off_and_sets_the_c_flag():
    assert backcompat.broadcast_warning.enabled is False
    assert torch._C._get_backcompat_broadcast_warn() is False
    try:
        backcompat.broadcast_warning.enabled = True
        assert torch._C._get_backcompat_broadcast_warn() is True
        assert backcompat.broadcast_warning.enabled is True
    finally:
        backcompat.broadcast_warning.enabled = False
    assert torch._C._get_backcompat_broadcast_warn() is False


@pytest.mark.claim("tensor.broadcast.backcompat-flag-silent")
def test_backcompat_flag_no_longer_warns():
    try:
        backcompat.broadcast_warning.enabled = True
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = torch.add(torch.ones(4, 1), torch.ones(4))
            out2 = torch.ones(4, 1).add(torch.ones(4))
            out3 = torch.ones(4, 1) * torch.ones(4)
    finally:
        backcompat.broadcast_warning.enabled = False
    assert out.shape == out2.shape == out3.shape == (4, 4)
    assert caught == []
