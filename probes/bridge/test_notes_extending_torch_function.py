"""Probes for the claims added to docs/bridge/torch-function.md for the "Extending PyTorch"
note (checked in docs/guide/official-notes/extending.md)."""
import inspect
import re

import pytest
import torch
from torch.overrides import (
    TorchFunctionMode,
    _get_overridable_functions,
    get_ignored_functions,
    get_overridable_functions,
    get_testing_overrides,
    resolve_name,
)


class _NoProtocol:
    pass


@pytest.mark.claim("bridge.torch-function.plain-object-rejected")
def test_object_without_protocol_is_rejected():
    with pytest.raises(TypeError, match=r"mean\(\): argument 'input' \(position 1\) must be Tensor, not _NoProtocol"):
        torch.mean(_NoProtocol())


class _Declines:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


@pytest.mark.claim("bridge.torch-function.not-implemented-message")
def test_all_handlers_declining_message():
    with pytest.raises(TypeError) as info:
        torch.mul(_Declines(), 3)
    msg = str(info.value)
    assert msg.startswith("Multiple dispatch failed for 'torch.mul'; all __torch_function__ handlers returned NotImplemented")
    # the duck type is listed as a "tensor subclass" although it is not one
    assert "\n  - tensor subclass <class '" in msg and "_Declines'>" in msg
    assert "TORCH_LOGS=not_implemented" in msg
    assert "no implementation found" not in msg


class _Scalarish:
    """A duck type whose torch.add ignores alpha (signature not checked by torch)."""

    received = []

    def __init__(self, value):
        self.value = value

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        _Scalarish.received.append((func, kwargs))
        if func is torch.add:
            return _Scalarish._add(*args, **(kwargs or {}))
        return NotImplemented

    @staticmethod
    def _add(a, b):
        return _Scalarish(a.value + b.value)


@pytest.mark.claim("bridge.torch-function.signature-not-checked")
def test_override_signature_is_not_checked():
    _Scalarish.received.clear()
    s = _Scalarish(2)
    assert torch.add(s, s).value == 4
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'alpha'"):
        torch.add(s, s, alpha=2)
    # alpha was handed over as given; torch did not check it against the handler
    assert _Scalarish.received[-1] == (torch.add, {"alpha": 2})


class _Spy(torch.Tensor):
    seen = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        _Spy.seen.append(func)
        return super().__torch_function__(func, types, args, kwargs)


def _first_func(call):
    _Spy.seen.clear()
    call()
    return _Spy.seen[0]


@pytest.mark.claim("bridge.torch-function.operator-arrives-as-method")
def test_operators_reach_the_handler_as_methods():
    s = torch.ones(2).as_subclass(_Spy)
    assert torch.Tensor.__add__ is not torch.Tensor.add
    assert _first_func(lambda: s + 1) is torch.Tensor.add
    assert _first_func(lambda: 1 + s) is torch.Tensor.add
    assert _first_func(lambda: s.add(1)) is torch.Tensor.add
    assert _first_func(lambda: torch.add(s, 1)) is torch.add
    assert _first_func(lambda: s * 2) is torch.Tensor.mul
    t = s.clone()

    def augmented():
        nonlocal t
        t += 1

    assert _first_func(augmented) is torch.Tensor.add_
    assert _first_func(lambda: 1 - s) is torch.Tensor.__rsub__


class _SubTensor(torch.Tensor):
    pass


class _SubTensor2(_SubTensor):
    pass


class _OtherSubTensor(torch.Tensor):
    pass


@pytest.mark.claim("bridge.torch-function.subclass-preserved")
def test_results_keep_the_subclass():
    a = _SubTensor([0.0])
    assert type(torch.add(a, _SubTensor([1.0]))) is _SubTensor
    assert type(torch.add(a, torch.tensor([1.0]))) is _SubTensor
    assert type(torch.add(torch.tensor([1.0]), a)) is _SubTensor
    assert type(a + 1) is _SubTensor and type(a.exp()) is _SubTensor


@pytest.mark.claim("bridge.torch-function.lowest-subclass-wins")
def test_most_derived_subclass_wins():
    assert type(torch.add(_SubTensor2([0.0]), _SubTensor([1.0]))) is _SubTensor2
    assert type(torch.add(_SubTensor([0.0]), _SubTensor2([1.0]))) is _SubTensor2
    assert type(torch.add(_SubTensor2([0.0]), torch.tensor([1.0]))) is _SubTensor2


@pytest.mark.claim("bridge.torch-function.unrelated-subclasses")
def test_unrelated_subclasses_raise():
    with pytest.raises(TypeError, match="Multiple dispatch failed for 'torch.add'; all __torch_function__ handlers returned NotImplemented") as info:
        torch.add(_SubTensor([0.0]), _OtherSubTensor([1.0]))
    msg = str(info.value)
    assert re.search(r"_SubTensor'>.*_OtherSubTensor'>", msg, re.S)  # both, in argument order
    assert "no implementation found" not in msg


class _Logging(torch.Tensor):
    log = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is not torch.Tensor.__repr__:
            _Logging.log.append(resolve_name(func))
        return super().__torch_function__(func, types, args, kwargs or {})


class _CallsFuncDirectly(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


@pytest.mark.claim("bridge.torch-function.super-not-func")
def test_super_delegation_versus_calling_func():
    _Logging.log.clear()
    x = torch.ones(2).as_subclass(_Logging)
    y = torch.add(x, 1).sum()
    assert type(y) is _Logging and y.item() == 4.0
    assert _Logging.log[:2] == ["torch.add", "torch.Tensor.sum"]


@pytest.mark.claim("bridge.torch-function.func-call-recurses")
def test_calling_func_in_the_handler_recurses():
    bad = torch.ones(2).as_subclass(_CallsFuncDirectly)
    with pytest.raises(RecursionError):
        torch.add(bad, 1)


class _A:
    calls = []

    def __init__(self, answer=NotImplemented):
        self.answer = answer

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        _A.calls.append((cls.__name__, types))
        mine = [a for a in args if type(a) is cls]
        return mine[0].answer if mine else NotImplemented


class _B(_A):
    pass


class _C(_A):
    pass


@pytest.mark.claim("bridge.torch-function.handler-order")
def test_handler_order_and_first_answer_wins():
    _A.calls.clear()
    with pytest.raises(TypeError, match="Multiple dispatch failed for 'torch.add'"):
        torch.add(_A(), _B())
    # the subclass runs first although its argument came second; types lists it first too
    assert _A.calls == [("_B", (_B, _A)), ("_A", (_B, _A))]
    _A.calls.clear()
    assert torch.add(_B(), _C("from C")) == "from C"


@pytest.mark.claim("bridge.torch-function.first-answer-wins")
def test_unrelated_handlers_left_to_right_first_answer_wins():
    _A.calls.clear()
    assert torch.add(_B(), _C("from C")) == "from C"
    assert [c[0] for c in _A.calls] == ["_B", "_C"]        # left to right
    _A.calls.clear()
    assert torch.add(_B("from B"), _C("from C")) == "from B"
    assert [c[0] for c in _A.calls] == ["_B"]              # the first answer is returned


@pytest.mark.claim("bridge.overrides.overridable-functions")
def test_overridable_functions_listing():
    table = get_overridable_functions()
    assert isinstance(table, dict)
    assert all(namespace in table for namespace in (torch, torch.nn.functional, torch.Tensor))
    names = [f.__name__ for f in table[torch.nn.functional][:5]]
    assert names == ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
                     "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices"]
    assert torch.add in table[torch] and torch.Tensor.add in table[torch.Tensor]


@pytest.mark.claim("bridge.overrides.private-overridable-tuple")
def test_private_overridable_functions_is_a_pair():
    table = get_overridable_functions()
    private = _get_overridable_functions()
    assert isinstance(private, tuple) and len(private) == 2
    assert dict(private[0]) == table


@pytest.mark.claim("bridge.overrides.testing-overrides")
def test_testing_overrides_dummies():
    dummies = get_testing_overrides()
    assert str(inspect.signature(dummies[torch.add])) == "(input, other, out=None)"
    assert dummies[torch.add](torch.ones(1), torch.ones(1)) == -1
    assert str(inspect.signature(dummies[torch.mean])).startswith("(input")


@pytest.mark.claim("bridge.overrides.ignored-functions-set")
def test_ignored_functions_is_a_set():
    ignored = get_ignored_functions()
    assert type(ignored) is set and not isinstance(ignored, tuple)
    assert all(f in ignored for f in (torch.is_tensor, torch.typename, torch.zeros, torch.tensor))
    overridable = {f for fs in get_overridable_functions().values() for f in fs}
    assert not (ignored & overridable)


@pytest.mark.claim("bridge.overrides.is-tensor-not-intercepted")
def test_is_tensor_never_reaches_the_handler():
    class _Sees(torch.Tensor):
        seen = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            _Sees.seen.append(func)
            return super().__torch_function__(func, types, args, kwargs)

    s = torch.ones(1).as_subclass(_Sees)
    _Sees.seen.clear()
    assert torch.is_tensor(s)
    assert torch.is_tensor not in _Sees.seen


class _FunctionLog(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.log = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.log.append((resolve_name(func), kwargs))
        return func(*args, **(kwargs or {}))


@pytest.mark.claim("bridge.torch-function.mode-log")
def test_function_mode_sees_the_python_calls_only():
    mode = _FunctionLog()
    with mode:
        a = torch.rand(10, requires_grad=True)
        b = a * 2
        b.sum().backward()
    assert mode.log == [
        ("torch.rand", {"requires_grad": True}),
        ("torch.Tensor.mul", None),
        ("torch.Tensor.sum", None),
        ("torch.Tensor.backward", {"gradient": None, "retain_graph": None, "create_graph": False, "inputs": None}),
    ]
    assert a.grad.tolist() == [2.0] * 10
