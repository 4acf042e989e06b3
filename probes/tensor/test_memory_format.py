"""Probes for docs/tensor/memory-format.md."""
import pytest
import torch

CL = torch.channels_last


@pytest.mark.claim("tensor.memory-format.channels-last-strides")
def test_channels_last_strides(device):
    x = torch.arange(120.0, device=device).reshape(2, 3, 4, 5)
    y = x.to(memory_format=CL)
    assert y.shape == (2, 3, 4, 5)
    assert y.stride() == (60, 1, 15, 3)
    assert torch.equal(x, y)
    assert y.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    z = torch.empty(2, 3, 4, 5, 6, device=device, memory_format=torch.channels_last_3d)
    assert z.stride() == (360, 1, 90, 18, 3)


@pytest.mark.claim("tensor.memory-format.storage-is-nhwc")
def test_channels_last_storage_order_is_nhwc(device):
    x = torch.arange(120.0, device=device).reshape(2, 3, 4, 5)
    y = x.contiguous(memory_format=CL)
    stored = torch.empty(0, device=device).set_(y.untyped_storage())
    assert torch.equal(stored, x.permute(0, 2, 3, 1).flatten())
    assert y.stride() == x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2).stride()


@pytest.mark.claim("tensor.memory-format.is-contiguous-per-format")
def test_is_contiguous_takes_a_format(device):
    x = torch.empty(2, 3, 4, 5, device=device)
    y = x.contiguous(memory_format=CL)
    assert x.is_contiguous() and not x.is_contiguous(memory_format=CL)
    assert not y.is_contiguous() and y.is_contiguous(memory_format=CL)
    back = y.contiguous()
    assert back.stride() == (60, 20, 5, 1)


@pytest.mark.claim("tensor.memory-format.derived-from-strides")
def test_format_is_read_from_strides(device):
    plain = torch.empty_strided((2, 3, 4, 5), (60, 1, 15, 3), device=device)
    assert plain.is_contiguous(memory_format=CL)
    permuted = torch.empty(2, 4, 5, 3, device=device).permute(0, 3, 1, 2)
    assert permuted.stride() == (60, 1, 15, 3)
    assert permuted.is_contiguous(memory_format=CL)
    assert permuted.clone().stride() == (60, 1, 15, 3)  # clone preserves what the strides say


@pytest.mark.claim("tensor.memory-format.ambiguous")
def test_some_shapes_are_both(device):
    for shape in [(2, 3, 1, 1), (2, 1, 4, 5)]:
        t = torch.empty(shape, device=device)
        assert t.is_contiguous()
        assert t.is_contiguous(memory_format=CL), shape
    t = torch.empty(2, 3, 4, 5, device=device)
    assert not t.is_contiguous(memory_format=CL)


@pytest.mark.claim("tensor.memory-format.preserved")
def test_format_propagates(device):
    y = torch.randn(2, 3, 4, 5, device=device).contiguous(memory_format=CL)
    cl = (60, 1, 15, 3)
    assert y.clone().stride() == cl
    assert torch.empty_like(y).stride() == cl
    assert (y + 1).stride() == cl
    assert torch.relu(y).stride() == cl
    assert y.clone(memory_format=torch.contiguous_format).stride() == (60, 20, 5, 1)


@pytest.mark.claim("tensor.memory-format.first-operand-wins")
def test_mixed_formats_follow_first_operand(device):
    a = torch.randn(2, 3, 4, 5, device=device)
    b = torch.randn(2, 3, 4, 5, device=device).contiguous(memory_format=CL)
    assert torch.equal(a + b, b + a)
    assert (a + b).stride() == (60, 20, 5, 1)
    assert (b + a).stride() == (60, 1, 15, 3)
