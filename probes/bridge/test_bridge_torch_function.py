"""Probes for docs/bridge/torch-function.md."""
import re

import pytest
import torch
import torch.nn.functional as F


class Recorder(torch.Tensor):
    """A Tensor subclass whose __torch_function__ records the call and answers it itself."""

    seen = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.seen.append((func, args, kwargs))
        return "intercepted"


class NotATensor:
    """Any object with __torch_function__ may sit in a Tensor slot."""

    seen = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.seen.append((func, args, kwargs))
        return "intercepted"


@pytest.mark.claim("bridge.torch-function.raw-arguments")
def test_handler_sees_the_python_objects(device):
    Recorder.seen.clear()
    s = torch.ones(2, device=device).as_subclass(Recorder)
    assert torch.add(s, 2) == "intercepted"
    func, args, kwargs = Recorder.seen[-1]
    assert func is torch.add
    assert len(args) == 2 and args[0] is s and type(args[1]) is int and args[1] == 2
    assert kwargs is None  # only what the caller passed: no defaults filled in


@pytest.mark.claim("bridge.torch-function.method-call-arguments")
def test_method_call_hands_over_the_method(device):
    Recorder.seen.clear()
    s = torch.ones(2, device=device).as_subclass(Recorder)
    assert s.add(2.5, alpha=3) == "intercepted"
    func, args, kwargs = Recorder.seen[-1]
    assert func is torch.Tensor.add and args == (s, 2.5) and kwargs == {"alpha": 3}


@pytest.mark.claim("bridge.torch-function.non-tensor-accepted")
def test_non_tensor_with_handler_fills_a_tensor_slot(device):
    NotATensor.seen.clear()
    odd = NotATensor()
    assert torch.add(torch.ones(1, device=device), odd) == "intercepted"
    assert NotATensor.seen[-1][1][1] is odd


@pytest.mark.claim("bridge.torch-function.after-signature-match")
@pytest.mark.torch_version(">=2.13")
def test_handler_runs_only_after_a_signature_matched(device):
    Recorder.seen.clear()
    NotATensor.seen.clear()
    s = torch.ones(2, device=device).as_subclass(Recorder)
    with pytest.raises(TypeError, match=re.escape("add(): argument 'other' (position 2) must be Tensor, not str")):
        torch.add(s, "not a number")
    with pytest.raises(TypeError, match="max\\(\\) received an invalid combination of arguments"):
        torch.max(s, "x")
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        torch.add(s, 1, foo=1)
    with pytest.raises(TypeError, match="must be Tensor, not str"):
        torch.add(NotATensor(), "x")
    assert Recorder.seen == [] and NotATensor.seen == []


@pytest.mark.claim("bridge.torch-function.python-wrappers")
def test_python_functions_hand_over_before_any_work(device):
    Recorder.seen.clear()
    s = torch.ones(2, 2, device=device).as_subclass(Recorder)
    assert F.relu(s) == "intercepted"
    func, args, kwargs = Recorder.seen[-1]
    assert func is F.relu and args == (s,)
    assert kwargs == {"inplace": False}  # the wrapper passes its own default
    assert torch.einsum("ij->ji", s) == "intercepted"
    func, args, _ = Recorder.seen[-1]
    assert func is torch.functional.einsum and args == ("ij->ji", s)


@pytest.mark.claim("bridge.torch-function.python-wrapper-before-checks")
def test_python_function_hands_over_before_checking(device):
    Recorder.seen.clear()
    s = torch.ones(2, 2, device=device).as_subclass(Recorder)
    # a Python-level function checks first, so even nonsense reaches the handler
    assert torch.functional.split(s, "nonsense") == "intercepted"
    func, args, _ = Recorder.seen[-1]
    assert func is torch.functional.split and args == (s, "nonsense")


@pytest.mark.claim("bridge.torch-function.parameter-disabled")
def test_parameter_and_plain_tensor_are_not_overloaded(device):
    from torch.overrides import has_torch_function
    assert torch.nn.Parameter.__torch_function__ is torch._C._disabled_torch_function_impl
    p = torch.nn.Parameter(torch.ones(1, device=device))
    assert not has_torch_function((p,))
    assert not has_torch_function((torch.ones(1, device=device),))
    assert has_torch_function((torch.ones(1, device=device).as_subclass(Recorder),))


@pytest.mark.claim("bridge.torch-function.repr-routed")
def test_repr_goes_through_the_handler(device):
    Recorder.seen.clear()
    s = torch.ones(2, device=device).as_subclass(Recorder)
    assert repr(s) == "intercepted"
    assert Recorder.seen[-1][0] is torch.Tensor.__repr__


@pytest.mark.claim("bridge.torch-function.python-wrapper-test")
def test_python_functions_call_the_quick_test():
    import inspect

    calls = {fn.__name__: re.findall(r"\b(has_torch_function(?:_unary|_variadic)?)\(", inspect.getsource(fn))
             for fn in (F.relu, torch.functional.einsum, torch.functional.split)}
    assert {name: found[0] for name, found in calls.items()} == {
        "relu": "has_torch_function_unary", "einsum": "has_torch_function", "split": "has_torch_function_unary"}
