"""Probes for the older sides of the before/after pairs of docs/bridge/ that named tensors'
removal in 2.13 explains: until 2.13, `aten::max` has the `names_dim` overloads, the parser tries
a string as a dimension name, and `torch.align_tensors` is a Python wrapper. The newer sides are
the probes of those pages' own files, bounded to >=2.13."""
import inspect
import re

import pytest
import torch

# the fifteen wrappers of docs/bridge/tensor-type.md (as in test_bridge_tensor_type.py)
PYTHON_WRAPPERS = {
    "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_tensors", "cartesian_prod",
    "cdist", "chain_matmul", "einsum", "meshgrid", "norm", "split", "stft", "tensordot",
    "unique_consecutive",
}


def public_variable_functions():
    vf = torch._C._VariableFunctions
    return vf, [n for n in dir(vf) if not n.startswith("_")]


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


@pytest.mark.claim("bridge.arguments.string-is-a-dimension-name")
@pytest.mark.torch_version("<2.13")
def test_a_string_is_taken_for_a_dimension_name(device):
    t = torch.ones(3, device=device)
    with pytest.raises(RuntimeError, match=r"^Name 'x' not found in Tensor\[None\]\.$"):
        torch.max(t, "x")


@pytest.mark.claim("bridge.arguments.keyword-dim-name")
@pytest.mark.torch_version("<2.13")
def test_a_string_dim_keyword_is_a_dimension_name(device):
    t = torch.ones(3, device=device)
    with pytest.raises(RuntimeError, match=r"^Name 'a' not found in Tensor\[None\]\.$"):
        torch.max(t, dim="a", keepdim=True, out=None)
    assert torch.max(t, dim=0, keepdim=True).values.shape == (1,)


@pytest.mark.claim("bridge.arguments.max-eight-overloads")
@pytest.mark.torch_version("<2.13")
def test_max_has_eight_schema_overloads():
    assert sorted(torch.ops.aten.max.overloads()) == [
        "default", "dim", "dim_max", "names_dim", "names_dim_max", "other", "out", "unary_out"]


@pytest.mark.claim("bridge.tensor-type.functional-wrappers-sixteen")
@pytest.mark.torch_version("<2.13")
def test_sixteen_names_are_python_wrappers():
    vf, public = public_variable_functions()
    wrapped = {n for n in public
               if inspect.isfunction(getattr(torch, n, None))
               and getattr(torch, n).__module__ == "torch.functional"}
    assert wrapped == PYTHON_WRAPPERS | {"align_tensors"}
    assert len(wrapped) == 16
    assert torch.align_tensors.__module__ == "torch.functional"


@pytest.mark.claim("bridge.torch-function.string-dim-reaches-handler")
@pytest.mark.torch_version("<2.13")
def test_a_string_dimension_reaches_the_handler(device):
    Recorder.seen.clear()
    NotATensor.seen.clear()
    s = torch.ones(2, device=device).as_subclass(Recorder)
    with pytest.raises(TypeError, match=re.escape("add(): argument 'other' (position 2) must be Tensor, not str")):
        torch.add(s, "not a number")
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        torch.add(s, 1, foo=1)
    with pytest.raises(TypeError, match="must be Tensor, not str"):
        torch.add(NotATensor(), "x")
    assert Recorder.seen == [] and NotATensor.seen == []
    assert torch.max(s, "x") == "intercepted"
    func, args, _ = Recorder.seen[-1]
    assert func is torch.max and args == (s, "x")
