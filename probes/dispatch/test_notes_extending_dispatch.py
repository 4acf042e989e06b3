"""Probes for the claims added to docs/dispatch/python-extension.md and docs/dispatch/keys.md
for the "Extending PyTorch" note (checked in docs/guide/official-notes/extending.md)."""
import pytest
import torch
from torch.overrides import TorchFunctionMode, _get_current_function_mode
from torch.utils._python_dispatch import TorchDispatchMode


@pytest.mark.claim("dispatch.keys.feature-order")
def test_functionality_keys_in_the_notes_order():
    K = torch._C.DispatchKey
    chain = [K.FuncTorchBatched, K.AutocastCUDA, K.AutocastCPU, K.AutogradFunctionality,
             K.ADInplaceOrView, K.ZeroTensor, K.Negative, K.Conjugate, K.Functionalize,
             K.Python, K.Dense]
    values = [int(k) for k in chain]
    assert values == sorted(values, reverse=True), values
    assert len(set(values)) == len(values)


class _Recorder(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.calls.append((func, args, kwargs, out))
        return out


@pytest.mark.claim("dispatch.python.func-is-opoverload")
def test_handler_receives_torch_ops_entries(device):
    a = torch.ones(2, device=device)
    with _Recorder() as rec:
        torch.add(a, 2)
        a + 2
        a.add(2)
    funcs = [c[0] for c in rec.calls]
    assert funcs == [torch.ops.aten.add.Tensor] * 3
    assert all(type(f) is torch._ops.OpOverload for f in funcs)
    assert torch.equal(torch.ops.aten.add.Tensor(a, 2), a + 2)


@pytest.mark.claim("dispatch.python.undefined-is-none")
def test_undefined_tensors_cross_as_none(device):
    x = torch.randn(1, 2, 5, 5, device=device)                    # does not require grad
    w = torch.randn(3, 2, 3, 3, device=device, requires_grad=True)
    with _Recorder() as rec:
        torch.nn.functional.conv2d(x, w).sum().backward()
    fwd = [c for c in rec.calls if c[0] is torch.ops.aten.convolution.default]
    assert len(fwd) == 1 and fwd[0][1][2] is None                 # the missing bias
    bwd = [c for c in rec.calls if c[0] is torch.ops.aten.convolution_backward.default]
    assert len(bwd) == 1
    assert list(bwd[0][1][-1]) == [False, True, False]            # output_mask from C++
    grad_input, grad_weight, grad_bias = bwd[0][3]
    assert grad_input is None and grad_bias is None
    assert isinstance(grad_weight, torch.Tensor) and grad_weight.shape == w.shape


@pytest.mark.claim("dispatch.python.normalized-arguments")
def test_arguments_are_normalized_against_the_schema(device):
    x = torch.ones(3, device=device)
    y = torch.ones(3, device=device)
    with _Recorder() as rec:
        torch.add(x, other=y)                  # positional-or-keyword given by keyword
        torch.add(x, y, alpha=2)               # keyword-only, not the default
        torch.add(x, y, alpha=1)               # keyword-only, equal to the default
        torch.sum(x, 0)
        torch.sum(x, dim=0, keepdim=False)     # trailing positional equal to its default
        torch.sum(x, 0, keepdim=True)
    shapes = [(len(c[1]), c[2]) for c in rec.calls]
    assert shapes == [(2, {}), (2, {"alpha": 2}), (2, {}), (2, {}), (2, {}), (3, {})]
    assert rec.calls[0][1][0] is x and rec.calls[0][1][1] is y
    assert rec.calls[1][1][1] is y
    assert rec.calls[4][1][1] == [0] and rec.calls[5][1][2] is True


class _Named(TorchFunctionMode):
    def __init__(self, name, log):
        super().__init__()
        self.name, self.log = name, log

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.log.append((self.name, func.__name__, _get_current_function_mode() is self))
        return func(*args, **(kwargs or {}))


class _SubLog(torch.Tensor):
    log = None

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if _SubLog.log is not None and func is torch.add:
            _SubLog.log.append(("subclass", func.__name__, None))
        return super().__torch_function__(func, types, args, kwargs)


@pytest.mark.claim("dispatch.python.mode-order")
def test_modes_run_innermost_first_and_before_subclasses():
    log = []
    s = torch.ones(2).as_subclass(_SubLog)
    _SubLog.log = log
    try:
        with _Named("outer", log), _Named("inner", log):
            torch.add(s, 1)
    finally:
        _SubLog.log = None
    assert [(who, name) for who, name, _ in log] == [("inner", "add"), ("outer", "add"), ("subclass", "add")]


@pytest.mark.claim("dispatch.python.mode-not-current")
def test_a_mode_is_not_current_inside_its_handler():
    log = []
    x = torch.ones(2)
    with _Named("outer", log), _Named("inner", log):
        torch.add(x, 1)
    # inside its own handler a mode is not the current mode (it is disabled there)
    assert log == [("inner", "add", False), ("outer", "add", False)]


class _Reenter(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.log = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.log.append(func.__name__)
        if func is torch.add:
            out = torch.mul(*args)          # not seen: the mode is off in here
            with self:
                return torch.sub(out, 0)    # seen: re-enabled with `with self`
        return func(*args, **(kwargs or {}))


@pytest.mark.claim("dispatch.python.mode-disabled-inside")
def test_mode_is_disabled_inside_its_handler():
    m = _Reenter()
    with m:
        r = torch.add(torch.full((1,), 3.0), 2)
    assert m.log == ["full", "add", "sub"]
    assert r.item() == 6.0


class _NameLog(TorchDispatchMode):
    """Records the operator and its keyword arguments, and keeps no tensor alive."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls.append((str(func), dict(kwargs or {})))
        return func(*args, **(kwargs or {}))


@pytest.mark.claim("dispatch.python.mode-log-training-step")
def test_dispatch_mode_sees_the_training_step():
    with _NameLog() as rec:
        a = torch.rand(10, requires_grad=True)
        b = a * 2
        b.sum().backward()
    names = [c[0] for c in rec.calls]
    assert names == ["aten.rand.default", "aten.mul.Tensor", "aten.sum.default",
                     "aten.ones_like.default", "aten.expand.default", "aten.mul.Tensor",
                     "aten.detach.default"]
    assert names.count("aten.detach.default") == 1
    assert a.grad.tolist() == [2.0] * 10


@pytest.mark.claim("dispatch.python.factory-kwargs")
def test_factories_arrive_with_their_keyword_arguments():
    with _NameLog() as rec:
        a = torch.rand(10, requires_grad=True)
        (a * 2).sum().backward()
    kwargs = {name: kw for name, kw in rec.calls if name in ("aten.rand.default", "aten.ones_like.default")}
    assert kwargs["aten.rand.default"] == {"device": torch.device("cpu"), "pin_memory": False}   # no requires_grad
    assert kwargs["aten.ones_like.default"] == {"pin_memory": False, "memory_format": torch.preserve_format}
