"""Probes for docs/module/packed-sequences.md and the claim added to docs/module/parameter.md
(checked against the official FAQ note)."""
import inspect

import pytest
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def _batch():
    return torch.randn(3, 6, 2, generator=torch.Generator().manual_seed(0))


@pytest.mark.claim("module.packed.pads-to-longest")
def test_unpacking_pads_to_the_longest_sequence_present():
    packed = pack_padded_sequence(_batch(), torch.tensor([4, 2, 1]), batch_first=True)
    out, lengths = pad_packed_sequence(packed, batch_first=True)
    assert out.shape == (3, 4, 2) and lengths.tolist() == [4, 2, 1]
    shorter = pack_padded_sequence(_batch()[1:], torch.tensor([2, 1]), batch_first=True)
    assert pad_packed_sequence(shorter, batch_first=True)[0].shape == (2, 2, 2)


@pytest.mark.claim("module.packed.total-length")
def test_total_length_fixes_the_padded_length():
    x = _batch()
    packed = pack_padded_sequence(x, torch.tensor([4, 2, 1]), batch_first=True)
    out, _ = pad_packed_sequence(packed, batch_first=True, total_length=6)
    assert out.shape == (3, 6, 2)
    assert (out[:, 4:] == 0).all() and (out[1, 2:] == 0).all()
    assert torch.equal(out[0, :4], x[0, :4])
    with pytest.raises(ValueError, match="Expected total_length to be at least the length of the longest sequence"):
        pad_packed_sequence(packed, batch_first=True, total_length=3)


@pytest.mark.claim("module.packed.enforce-sorted")
def test_sorting_is_required_only_by_default():
    assert inspect.signature(pack_padded_sequence).parameters["enforce_sorted"].default is True
    x = _batch()
    with pytest.raises(RuntimeError, match="`lengths` array must be sorted in decreasing order when `enforce_sorted` is True"):
        pack_padded_sequence(x, torch.tensor([1, 4, 2]), batch_first=True)
    packed = pack_padded_sequence(x, torch.tensor([1, 4, 2]), batch_first=True, enforce_sorted=False)
    out, lengths = pad_packed_sequence(packed, batch_first=True)
    assert lengths.tolist() == [1, 4, 2]  # original order restored
    assert torch.equal(out[1, :4], x[1, :4]) and torch.equal(out[0, :1], x[0, :1])


@pytest.mark.claim("module.packed.time-major")
def test_time_major_layout():
    x = torch.randn(6, 3, 2, generator=torch.Generator().manual_seed(1))  # T x B x *
    packed = pack_padded_sequence(x, torch.tensor([4, 2, 1]))
    out, lengths = pad_packed_sequence(packed)
    assert out.shape == (4, 3, 2) and lengths.shape == (3,)
    assert torch.equal(out[:4, 0], x[:4, 0])


@pytest.mark.claim("module.packed.dataparallel-dim")
def test_dataparallel_scatters_along_one_dim():
    params = inspect.signature(nn.DataParallel).parameters
    assert params["dim"].default == 0
    if not torch.cuda.is_available():
        inner = nn.Linear(2, 3)
        wrapped = nn.DataParallel(inner)
        assert wrapped.device_ids == [] and wrapped.module is inner
        x = torch.randn(5, 2)
        assert torch.equal(wrapped(x), inner(x))  # without a GPU it calls the module as is


@pytest.mark.claim("module.parameter.linear-size-and-grad")
def test_linear_weight_and_grad_sizes():
    m, n = 300, 200
    layer = nn.Linear(m, n)
    assert layer.weight.shape == (n, m) and layer.bias.shape == (n,)
    layer(torch.randn(4, m)).sum().backward()
    param_bytes = sum(p.numel() * p.element_size() for p in layer.parameters())
    grad_bytes = sum(p.grad.numel() * p.grad.element_size() for p in layer.parameters())
    assert param_bytes == grad_bytes == (n * m + n) * 4
