"""Probes for docs/debugging/determinism.md."""
import contextlib
import warnings

import pytest
import torch
import torch.nn.functional as F
import torch.utils.deterministic

NOT_DETERMINISTIC = "does not have a deterministic implementation, but you set 'torch.use_deterministic_algorithms(True)'"


@contextlib.contextmanager
def deterministic(warn_only=False):
    torch.use_deterministic_algorithms(True, warn_only=warn_only)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(False)


@pytest.mark.claim("debug.determinism.defaults")
def test_defaults():
    assert torch.are_deterministic_algorithms_enabled() is False
    assert torch.is_deterministic_algorithms_warn_only_enabled() is False
    assert torch.get_deterministic_debug_mode() == 0
    assert torch.utils.deterministic.fill_uninitialized_memory is True


@pytest.mark.claim("debug.determinism.fills-uninitialized")
def test_empty_is_filled_under_deterministic_mode(device):
    with deterministic():
        for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64):
            assert torch.isnan(torch.empty(64, dtype=dtype, device=device)).all(), dtype
        for dtype in (torch.uint8, torch.int32, torch.int64):
            e = torch.empty(64, dtype=dtype, device=device)
            assert (e == torch.iinfo(dtype).max).all(), dtype
        assert torch.empty(8, dtype=torch.bool, device=device).all()


@pytest.mark.claim("debug.determinism.fills-empty-like")
def test_empty_like_is_filled_under_deterministic_mode(device):
    with deterministic():
        assert torch.isnan(torch.empty_like(torch.ones(5, device=device))).all()


@pytest.mark.claim("debug.determinism.resize-fills-new")
def test_resize_fills_only_the_new_elements():
    with deterministic():
        grown = torch.ones(2).resize_(6)
    assert grown.shape == (6,)
    assert grown[:2].tolist() == [1.0, 1.0]
    assert torch.isnan(grown[2:]).all()  # only the new part


@pytest.mark.claim("debug.determinism.cpu-ops-that-raise")
def test_nondeterministic_cpu_ops_raise():
    index, values = torch.tensor([0, 1]), torch.tensor([3.0, 4.0])
    pooled, where = F.max_pool2d(torch.arange(16.0).view(1, 1, 4, 4), 2, return_indices=True)
    with deterministic():
        with pytest.raises(RuntimeError, match=r"^put_ " + NOT_DETERMINISTIC.replace("(", r"\(").replace(")", r"\)")):
            torch.zeros(5).put_(index, values)  # accumulate=False
        with pytest.raises(RuntimeError, match=r"max_unpooling2d_forward_out does not have a deterministic"):
            F.max_unpool2d(pooled, where, 2)
    assert torch.zeros(5).put_(index, values).tolist() == [3.0, 4.0, 0.0, 0.0, 0.0]  # fine when off
    with deterministic():
        assert torch.zeros(5).put_(index, values, accumulate=True).tolist() == [3.0, 4.0, 0.0, 0.0, 0.0]


@pytest.mark.claim("debug.determinism.put-accumulate-runs")
def test_accumulating_put_runs_under_deterministic_mode():
    index, values = torch.tensor([0, 1, 1]), torch.tensor([3.0, 4.0, 5.0])
    with deterministic():
        # the accumulating variant has a deterministic CPU kernel and runs
        assert torch.zeros(5).put_(index, values, accumulate=True).tolist() == [3.0, 9.0, 0.0, 0.0, 0.0]


@pytest.mark.claim("debug.determinism.warn-only")
def test_warn_only_turns_the_error_into_a_warning():
    with deterministic(warn_only=True):
        assert torch.is_deterministic_algorithms_warn_only_enabled()
        assert torch.get_deterministic_debug_mode() == 1
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = torch.zeros(5).put_(torch.tensor([0, 1]), torch.tensor([3.0, 4.0]))
    assert out.tolist() == [3.0, 4.0, 0.0, 0.0, 0.0]
    assert [w.category for w in caught] == [UserWarning]
    assert "put_ does not have a deterministic implementation" in str(caught[0].message)


@pytest.mark.claim("debug.determinism.seed-reproduces")
def test_manual_seed_reproduces_random_streams(device):
    torch.manual_seed(1234)
    first = torch.randn(5, device=device), torch.rand(3, device=device)
    torch.manual_seed(1234)
    again = torch.randn(5, device=device), torch.rand(3, device=device)
    assert all(torch.equal(a, b) for a, b in zip(first, again))


@pytest.mark.claim("debug.determinism.own-generator")
def test_own_generator_ignores_global_reseeding(device):
    torch.manual_seed(1234)
    first = (torch.randn(5, device=device),)
    gen = torch.Generator(device=device).manual_seed(1234)
    torch.manual_seed(99)  # the global seed does not affect a private generator
    assert torch.equal(torch.randn(5, device=device, generator=gen), first[0])


@pytest.mark.claim("debug.determinism.cuda-histc-raises")
@pytest.mark.devices("cuda")
def test_histc_on_cuda_raises(device):
    x = torch.rand(100, device=device)
    assert torch.histc(x, bins=4).sum().item() == 100
    with deterministic():
        with pytest.raises(RuntimeError, match=r"histc.* does not have a deterministic implementation"):
            torch.histc(x, bins=4)
