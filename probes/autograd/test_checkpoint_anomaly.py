"""Probes for docs/autograd/checkpoint-anomaly.md."""
import gc
import warnings
import weakref

import pytest
import torch
from torch.utils.checkpoint import checkpoint


class Segment:
    """A few layers whose calls and intermediate tensors we can watch."""

    def __init__(self, device):
        gen = torch.Generator().manual_seed(0)
        self.weights = [torch.randn(8, 8, generator=gen).to(device).requires_grad_() for _ in range(3)]
        self.calls = []
        self.intermediates = []

    def __call__(self, h):
        self.calls.append(torch.is_grad_enabled())
        for w in self.weights:
            h = torch.tanh(h @ w)
            self.intermediates.append(weakref.ref(h))
        return h


def grads(device, mode):
    seg = Segment(device)
    x = torch.linspace(-1, 1, 16, device=device).view(2, 8).requires_grad_()
    out = seg(x) if mode == "plain" else checkpoint(seg, x, use_reentrant=(mode == "reentrant"))
    out.sum().backward()
    return seg, [x.grad] + [w.grad for w in seg.weights]


@pytest.mark.claim("autograd.checkpoint.reruns-forward")
def test_checkpoint_runs_the_function_again_in_backward(device):
    plain_seg, plain = grads(device, "plain")
    assert plain_seg.calls == [True]
    for mode in ("non-reentrant", "reentrant"):
        seg, got = grads(device, mode)
        assert len(seg.calls) == 2 and seg.calls[1] is True, mode  # second call: the recompute in backward
        for a, b in zip(plain, got):
            assert torch.allclose(a, b), mode


@pytest.mark.claim("autograd.checkpoint.forward-grad-mode")
def test_checkpointed_forward_grad_mode_depends_on_the_variant(device):
    for mode, forward_grad_mode in (("non-reentrant", True), ("reentrant", False)):
        seg, _ = grads(device, mode)
        assert seg.calls[0] is forward_grad_mode, mode


@pytest.mark.claim("autograd.checkpoint.reentrant-is-function")
def test_reentrant_checkpoint_is_a_custom_function(device):
    from torch.utils.checkpoint import CheckpointFunction

    assert issubclass(CheckpointFunction, torch.autograd.Function)
    seg = Segment(device)
    x = torch.ones(2, 8, device=device, requires_grad=True)
    out = checkpoint(seg, x, use_reentrant=True)
    assert type(out.grad_fn) is CheckpointFunction._backward_cls


@pytest.mark.claim("autograd.checkpoint.reentrant-nested-backward")
def test_reentrant_checkpoint_runs_a_nested_backward(device, monkeypatch):
    seg = Segment(device)
    x = torch.ones(2, 8, device=device, requires_grad=True)
    out = checkpoint(seg, x, use_reentrant=True)
    outer, seen = [], []
    out.register_hook(lambda g: outer.append(torch._C._current_graph_task_id()))
    real = torch.autograd.backward

    def spy(*args, **kwargs):
        seen.append(torch._C._current_graph_task_id())
        return real(*args, **kwargs)

    monkeypatch.setattr(torch.autograd, "backward", spy)
    out.sum().backward()
    assert len(outer) == 1
    assert seen == [-1, outer[0]]  # the user's call (no graph task yet), then one from inside the outer backward


@pytest.mark.claim("autograd.checkpoint.rerun-on-first-unpack")
def test_non_reentrant_checkpoint_reruns_at_the_first_unpack(device):
    seg = Segment(device)
    x = torch.ones(2, 8, device=device, requires_grad=True)
    out = checkpoint(seg, x, use_reentrant=False)
    assert len(seg.calls) == 1
    saved = out.grad_fn._saved_result  # the first unpack, before any backward
    assert len(seg.calls) == 2
    assert torch.equal(saved, out)


@pytest.mark.claim("autograd.checkpoint.keeps-no-intermediates")
def test_checkpoint_keeps_no_intermediates(device):
    for mode in ("plain", "non-reentrant", "reentrant"):
        seg = Segment(device)
        x = torch.ones(2, 8, device=device, requires_grad=True)
        out = seg(x) if mode == "plain" else checkpoint(seg, x, use_reentrant=(mode == "reentrant"))
        gc.collect()
        alive = [ref() is not None for ref in seg.intermediates[:-1]]  # the last one is `out` itself
        if mode == "plain":
            assert all(alive), mode  # held by the graph (tanh saves its result, matmul its input)
        else:
            assert not any(alive), mode  # dropped after the forward
        out.sum().backward()


@pytest.mark.claim("autograd.checkpoint.use-reentrant")
def test_the_two_variants_differ(device):
    seg = Segment(device)
    x = torch.ones(2, 8, device=device, requires_grad=True)
    out = checkpoint(seg, x, use_reentrant=True)
    assert type(out.grad_fn).__name__ == "CheckpointFunctionBackward"
    out = checkpoint(seg, x, use_reentrant=False)
    assert out.grad_fn.name() == "TanhBackward0"  # the ordinary nodes, with packed saved tensors


@pytest.mark.claim("autograd.checkpoint.reentrant-no-grad-api")
def test_reentrant_checkpoint_refuses_autograd_grad(device):
    seg = Segment(device)
    x = torch.ones(2, 8, device=device, requires_grad=True)
    out = checkpoint(seg, x, use_reentrant=True)
    with pytest.raises(RuntimeError, match=r"When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad\(\)"):
        torch.autograd.grad(out.sum(), x)
    out = checkpoint(seg, x, use_reentrant=False)
    (g,) = torch.autograd.grad(out.sum(), x)
    assert g.shape == (2, 8)


@pytest.mark.claim("autograd.checkpoint.reentrant-input-requires-grad")
def test_reentrant_checkpoint_needs_an_input_that_requires_grad(device):
    seg = Segment(device)
    inp = torch.ones(2, 8, device=device)  # the input does not require grad; the weights do
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        out = checkpoint(seg, inp, use_reentrant=True)
    assert not out.requires_grad  # reentrant: the weights get no gradient through this output
    assert checkpoint(seg, inp, use_reentrant=False).requires_grad


@pytest.mark.claim("autograd.checkpoint.default-warns")
def test_omitting_use_reentrant_warns_and_picks_reentrant(device):
    seg = Segment(device)
    x = torch.ones(2, 8, device=device, requires_grad=True)
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed explicitly") as record:
        out = checkpoint(seg, x)
    assert any("Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception"
               in str(w.message) for w in record)
    assert type(out.grad_fn).__name__ == "CheckpointFunctionBackward"
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert checkpoint(seg, x, use_reentrant=False).requires_grad


class NanBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * float("nan")


class InfBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * float("inf")


@pytest.mark.claim("autograd.anomaly.catches-nan-from-backward")
def test_detect_anomaly_catches_nan_returned_by_backward(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    NanBackward.apply(x).sum().backward()  # without anomaly mode: silently NaN
    assert torch.isnan(x.grad).all()
    x.grad = None
    with torch.autograd.detect_anomaly():
        with pytest.raises(RuntimeError, match=r"Function 'NanBackwardBackward' returned nan values in its 0th output"):
            NanBackward.apply(x).sum().backward()


@pytest.mark.claim("autograd.anomaly.builtin-nan")
def test_detect_anomaly_catches_a_builtin_nan(device):
    z = torch.tensor([0.0, 1.0], device=device, requires_grad=True)
    with torch.autograd.detect_anomaly():  # a built-in case: d sqrt(z)/dz at 0 is inf, times 0 is nan
        with pytest.raises(RuntimeError, match=r"Function 'SqrtBackward0' returned nan values in its 0th output"):
            (torch.sqrt(z) * 0).sum().backward()
    z2 = torch.tensor([0.0, 1.0], device=device, requires_grad=True)
    with torch.autograd.detect_anomaly():
        (torch.sqrt(z2 + 1e-6) * 0).sum().backward()
    assert torch.isfinite(z2.grad).all()


@pytest.mark.claim("autograd.anomaly.forward-traceback")
@pytest.mark.devices("cpu")
def test_anomaly_error_comes_with_the_forward_traceback(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            y = NanBackward.apply(x)  # the line the warning will point at
            with pytest.raises(RuntimeError, match="returned nan values"):
                y.sum().backward()
    messages = [str(w.message) for w in caught]
    traceback = [m for m in messages if m.startswith("Error detected in NanBackwardBackward. Traceback of forward call")]
    assert len(traceback) == 1
    assert "y = NanBackward.apply(x)" in traceback[0]


@pytest.mark.claim("autograd.anomaly.enable-warns")
def test_entering_detect_anomaly_warns():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with torch.autograd.detect_anomaly():
            assert torch.is_anomaly_enabled()
    assert not torch.is_anomaly_enabled()


@pytest.mark.claim("autograd.anomaly.set-detect-anomaly")
def test_set_detect_anomaly_does_the_same(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    with torch.autograd.set_detect_anomaly(True):
        assert torch.is_anomaly_enabled()
        with pytest.raises(RuntimeError, match=r"Function 'NanBackwardBackward' returned nan values in its 0th output"):
            NanBackward.apply(x).sum().backward()
    assert not torch.is_anomaly_enabled()


@pytest.mark.claim("autograd.anomaly.what-it-misses")
def test_detect_anomaly_misses_inf_and_forward_nan(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    with torch.autograd.detect_anomaly():
        InfBackward.apply(x).sum().backward()  # no error
        assert torch.isinf(x.grad).all()
        x.grad = None
        y = torch.log(x - 5)  # NaN in the forward
        assert torch.isnan(y).all()
        y.sum().backward()  # no error: the backward values are finite
        assert torch.isfinite(x.grad).all()


@pytest.mark.claim("autograd.anomaly.check-nan-false")
def test_check_nan_false_lets_nan_through(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    with torch.autograd.detect_anomaly(check_nan=False):
        NanBackward.apply(x).sum().backward()  # the NaN check is off
    assert torch.isnan(x.grad).all()
