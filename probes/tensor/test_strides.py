"""Probes for docs/tensor/strides.md."""
import itertools
import math

import pytest
import torch


def suffix_products(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def flat_storage(t):
    """The whole storage of `t` as a 1-D tensor of t's dtype, on the CPU."""
    whole = torch.empty(0, dtype=t.dtype, device=t.device).set_(t.untyped_storage())
    return whole.cpu()


@pytest.mark.claim("tensor.strides.row-major-default")
def test_default_strides_are_row_major(device):
    assert torch.empty(2, 3, 4, device=device).stride() == (12, 4, 1)
    for shape in [(5,), (2, 3), (4, 1, 6), (2, 3, 4, 5), (7, 2, 1, 3, 2)]:
        t = torch.empty(shape, device=device)
        assert t.stride() == suffix_products(shape)
        assert t.storage_offset() == 0 and t.is_contiguous()


def views_of(base):
    """Non-trivial views of a (4, 6) base, each with different strides and offset."""
    return {
        "transpose": base.t(),
        "step slice": base[1::2, ::3],
        "select": base[2],
        "narrow+t": base.narrow(1, 2, 3).t(),
        "unsqueeze/permute": base.view(2, 2, 6).permute(2, 0, 1).unsqueeze(1),
        "expand": base[:, :1].expand(4, 5),
        "3-D transpose": base.view(4, 3, 2).transpose(0, 2),
        "as_strided": base.as_strided((3, 3), (5, 2), 1),
    }


@pytest.mark.claim("tensor.strides.index-formula")
def test_element_address_formula(device):
    base = torch.arange(24.0, device=device).view(4, 6)
    for name, v in views_of(base).items():
        storage = flat_storage(v)
        dense = v.cpu()
        for idx in itertools.product(*(range(n) for n in v.shape)):
            address = v.storage_offset() + sum(i * s for i, s in zip(idx, v.stride()))
            assert dense[idx].item() == storage[address].item(), (name, idx)


@pytest.mark.claim("tensor.strides.as-strided-rebuilds-view")
def test_as_strided_with_view_metadata_is_the_view(device):
    base = torch.arange(24.0, device=device).view(4, 6)
    for name, v in views_of(base).items():
        again = base.as_strided(v.size(), v.stride(), v.storage_offset())
        assert again.data_ptr() == v.data_ptr(), name
        assert torch.equal(again.cpu(), v.cpu()), name


@pytest.mark.claim("tensor.strides.offset-in-elements")
def test_storage_offset_counts_elements(device):
    for dtype in (torch.int8, torch.int16, torch.float32, torch.float64):
        t = torch.zeros(10, dtype=dtype, device=device)
        v = t[3:]
        assert v.storage_offset() == 3
        assert v.data_ptr() - t.data_ptr() == 3 * dtype.itemsize


@pytest.mark.claim("tensor.strides.step-slice")
def test_step_slice_multiplies_stride(device):
    t = torch.empty(6, 10, device=device)
    v = t[1:5:2, 2::3]
    assert v.shape == (2, 3)
    assert v.stride() == (2 * 10, 3 * 1)
    assert v.storage_offset() == 1 * 10 + 2 * 1
    assert v.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()


@pytest.mark.claim("tensor.strides.transpose-swaps")
def test_transpose_swaps_sizes_and_strides(device):
    t = torch.empty(3, 5, device=device)
    tt = t.t()
    assert tt.shape == (5, 3) and tt.stride() == (1, 5)
    assert tt.data_ptr() == t.data_ptr()
    assert t.is_contiguous() and not tt.is_contiguous()
    p = torch.empty(2, 3, 4, device=device).permute(2, 0, 1)
    assert p.stride() == (1, 12, 4)


@pytest.mark.claim("tensor.strides.size-one-ignored")
def test_contiguity_ignores_size_one_strides(device):
    base = torch.empty(12, device=device)
    odd = base.as_strided((3, 1, 4), (4, 100, 1))
    assert odd.stride() != suffix_products((3, 1, 4))
    assert odd.is_contiguous()
    assert odd.view(12).data_ptr() == base.data_ptr()


@pytest.mark.claim("tensor.strides.empty-strided-extent")
def test_empty_strided_allocates_reachable_extent(device):
    cases = [((2, 3), (1, 2)), ((2, 3), (1, 4)), ((3, 4), (1, 3)), ((2, 2, 2), (8, 1, 3))]
    for size, stride in cases:
        t = torch.empty_strided(size, stride, device=device)
        assert t.stride() == stride
        elements = 1 + sum((n - 1) * s for n, s in zip(size, stride))
        assert t.untyped_storage().nbytes() == elements * t.element_size(), (size, stride)
    # (2, 3) with strides (1, 4): 10 elements reserved although only 6 are used
    gappy = torch.empty_strided((2, 3), (1, 4), device=device)
    assert gappy.untyped_storage().nbytes() == 40 and math.prod(gappy.shape) == 6
