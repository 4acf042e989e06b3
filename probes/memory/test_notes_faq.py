"""Probes for the claims added to docs/memory/graph-retention.md and docs/memory/cpu-lifetime.md
(checked against the official FAQ note)."""
import gc

import pytest
import torch
import torch.nn.functional as F
from torch.multiprocessing.reductions import StorageWeakRef


class _faq_gc_paused:
    def __enter__(self):
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        if self.was_enabled:
            gc.enable()


def _step(weight, refs):
    x = torch.randn(16, 32)
    hidden = F.relu(x @ weight)
    refs.append(StorageWeakRef(hidden.untyped_storage()))
    return hidden.pow(2).mean()


@pytest.mark.claim("memory.graph.int-total-becomes-graph")
def test_python_int_total_turns_into_a_graph_root():
    weight = torch.randn(32, 64, requires_grad=True)
    with _faq_gc_paused():
        refs, total = [], 0
        for _ in range(3):
            total += _step(weight, refs)
        assert isinstance(total, torch.Tensor) and total.requires_grad
        assert type(total.grad_fn).__name__ == "AddBackward0"
        assert not any(r.expired() for r in refs)  # every step's activation is kept
        refs, number = [], 0
        for _ in range(3):
            number += float(_step(weight, refs).detach())
        assert type(number) is float
        assert all(r.expired() for r in refs)


@pytest.mark.claim("memory.cpu.loop-name-outlives-loop")
def test_a_name_bound_in_a_loop_stays_bound_after_it():
    with _faq_gc_paused():
        result = torch.zeros(1000)
        refs = []
        for i in range(3):
            intermediate = torch.full((1000,), float(i))
            refs.append(StorageWeakRef(intermediate.untyped_storage()))
            result += intermediate
        assert refs[0].expired() and refs[1].expired()
        assert not refs[2].expired()  # the last one is still held by the name
        assert intermediate[0].item() == 2.0
        del intermediate
        assert refs[2].expired()


def _raise_holding(refs):
    big = torch.zeros(100_000)
    refs.append(StorageWeakRef(big.untyped_storage()))
    torch.ones(2, 3) @ torch.ones(2, 3)  # raises RuntimeError


@pytest.mark.claim("memory.cpu.except-frame-pins")
def test_exception_keeps_the_failing_frame_alive():
    with _faq_gc_paused():
        refs = []
        try:
            _raise_holding(refs)
        except RuntimeError as error:
            assert "cannot be multiplied" in str(error)
            assert error.__traceback__.tb_next.tb_frame.f_locals["big"].numel() == 100_000
            inside = refs[0].expired()
        assert inside is False  # inside the except clause the tensor is alive
        assert refs[0].expired()  # after it, freed by reference counting alone
        # the pattern with a flag: the tensor is gone before the retry runs
        refs, failed = [], False
        try:
            _raise_holding(refs)
        except RuntimeError:
            failed = True
        assert failed and refs[0].expired()


def _rnn_saved_bytes(steps):
    torch.manual_seed(0)
    rnn = torch.nn.RNN(8, 16)
    x = torch.randn(steps, 4, 8)
    total = [0]

    def pack(t):
        total[0] += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out, _ = rnn(x)
    assert out.shape == (steps, 4, 16)
    return total[0]


@pytest.mark.claim("memory.graph.rnn-saved-linear")
def test_rnn_saved_tensors_grow_linearly_with_length():
    sizes = [_rnn_saved_bytes(t) for t in (10, 20, 30, 40)]
    steps = [b - a for a, b in zip(sizes, sizes[1:])]
    assert steps == [16_640] * 3  # the same increment every 10 time steps


@pytest.mark.claim("memory.graph.float-of-loss-warns")
def test_float_of_a_loss_that_requires_grad_warns():
    import warnings

    loss = (torch.ones(3, requires_grad=True) * 2).sum()
    was = torch._C._get_warnAlways()
    torch._C._set_warnAlways(True)  # a warn-once warning: show it even if this process gave it before
    try:
        with pytest.warns(UserWarning, match="Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior"):
            value = float(loss)
    finally:
        torch._C._set_warnAlways(was)
    assert value == 6.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert loss.item() == 6.0
        assert float(loss.detach()) == 6.0
