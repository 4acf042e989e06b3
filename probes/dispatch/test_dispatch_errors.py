"""Probes for docs/dispatch/dispatch-errors.md: what the dispatcher says when no kernel fits,
what meta tensors refuse, and the errors of __torch_function__ / __torch_dispatch__ subclasses.

Each probe triggers its message as the claim's cause says and shows that the fix works.

Chosen from what users report:
- https://github.com/pytorch/pytorch/issues/96409 (weight_norm on the meta device: no 'Meta' kernel)
- https://github.com/pytorch/pytorch/issues/103382 (c10d op with no 'Meta' kernel under FakeTensor)
- https://github.com/kbressem/medAlpaca/issues/20 (Cannot copy out of meta tensor; no data!)
- https://github.com/graphcore/poptorch/issues/16 (.item() on a meta tensor)
- https://github.com/pytorch/pytorch/issues/47091 (no implementation found for ... __torch_function__)
- https://github.com/pytorch/pytorch/issues/193932 (all __torch_dispatch__ handlers returned NotImplemented)
"""
import re

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode


def lit(text):
    """A regex matching `text` literally."""
    return re.escape(text)


# ------------------------------------------------------------------ no kernel for a key


@pytest.mark.claim("dispatch.err.sparse-no-kernel")
def test_sparse_tensor_through_an_op_without_sparse_kernel():
    s = torch.ones(2, 2).to_sparse()
    with pytest.raises(NotImplementedError, match=lit("Could not run 'aten::cumsum' with arguments from the "
                                                      "'SparseCPU' backend.")) as info:
        s.cumsum(0)
    assert "'aten::cumsum' is only available for these backends: [CPU," in str(info.value)
    with pytest.raises(NotImplementedError, match=lit("Could not run 'aten::view' with arguments from the "
                                                      "'SparseCPU' backend.")):
        s.view(4)
    assert s.to_dense().cumsum(0).tolist() == [[1.0, 1.0], [2.0, 2.0]]  # the fix: a dense copy first


@pytest.mark.claim("dispatch.err.quantized-no-kernel-no-warning")
@pytest.mark.torch_version("<2.13")
def test_quantized_tensor_through_a_float_op_without_the_deprecation_warning():
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        q = torch.quantize_per_tensor(torch.ones(2), 0.1, 0, torch.quint8)
    assert [str(w.message) for w in caught] == []
    with pytest.raises(NotImplementedError, match=lit("Could not run 'aten::exp.out' with arguments from the "
                                                      "'QuantizedCPU' backend.")):
        q.exp()
    assert torch.allclose(q.dequantize().exp(), torch.full((2,), 2.7182817))


@pytest.mark.claim("dispatch.err.quantized-no-kernel")
@pytest.mark.torch_version(">=2.13")
def test_quantized_tensor_through_a_float_op():
    with pytest.warns(UserWarning, match=lit("torch.quantize_per_tensor, torch.quantize_per_channel and other "
                                             "quantized tensor creation functions that produce tensors with dtype "
                                             "torch.quint8, torch.qint8, and torch.qint32 are deprecated")):
        q = torch.quantize_per_tensor(torch.ones(2), 0.1, 0, torch.quint8)
    with pytest.raises(NotImplementedError, match=lit("Could not run 'aten::exp.out' with arguments from the "
                                                      "'QuantizedCPU' backend.")):
        q.exp()
    assert torch.allclose(q.dequantize().exp(), torch.full((2,), 2.7182817))


@pytest.mark.claim("dispatch.err.mkldnn-no-kernel")
def test_mkldnn_tensor_through_an_op_without_mkldnn_kernel():
    m = torch.ones(2, 2).to_mkldnn()
    with pytest.raises(NotImplementedError, match=lit("Could not run 'aten::cumsum.out' with arguments from the "
                                                      "'MkldnnCPU' backend.")):
        m.cumsum(0)
    assert m.to_dense().cumsum(0)[1].tolist() == [2.0, 2.0]


@pytest.mark.claim("dispatch.err.find-schema")
def test_looking_up_a_schema_that_does_not_exist():
    with pytest.raises(RuntimeError, match=r"^Could not find schema for aten::nope\.$"):
        torch._C._dispatch_find_schema_or_throw("aten::nope", "")
    found = torch._C._dispatch_find_schema_or_throw("aten::add", "Tensor")
    assert found is not None


# ------------------------------------------------------------------ meta tensors


@pytest.mark.claim("dispatch.err.meta-item")
def test_meta_tensor_has_no_value_to_read():
    m = torch.ones(2, device="meta")
    with pytest.raises(RuntimeError, match=r"^Tensor\.item\(\) cannot be called on meta tensors$"):
        m.sum().item()
    with pytest.raises(NotImplementedError, match=r"^Cannot copy out of meta tensor; no data!$"):
        m.tolist()
    with pytest.raises(NotImplementedError, match=r"^Cannot copy out of meta tensor; no data!$"):
        m.to("cpu")
    with pytest.raises(TypeError, match=lit("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy "
                                            "the tensor to host memory first.")):
        m.numpy()
    real = torch.empty_like(m, device="cpu").fill_(1.0)  # the fix: materialise on a real device, then fill
    assert real.sum().item() == 2.0 and real.tolist() == [1.0, 1.0]


@pytest.mark.claim("dispatch.err.meta-module-to-empty")
def test_module_on_meta_moved_with_to_empty():
    with torch.device("meta"):
        lin = torch.nn.Linear(2, 2)
    with pytest.raises(NotImplementedError, match=r"^Cannot copy out of meta tensor; no data!"):
        lin.to("cpu")
    lin = lin.to_empty(device="cpu")  # storage without values: initialise or load a state_dict next
    lin.reset_parameters()
    assert lin.weight.device.type == "cpu" and lin(torch.ones(1, 2)).shape == (1, 2)


@pytest.mark.claim("dispatch.err.meta-nonzero")
def test_meta_nonzero_has_no_size_to_return():
    with pytest.raises(NotImplementedError, match=lit("The register_meta function for torch.nonzero() raises "
                                                      "unimplemented by default, as a correct data-independent "
                                                      "implementation does not exist.")):
        torch.ones(3, device="meta").nonzero()
    import torch.fx.experimental._config as fx_config

    with fx_config.patch(meta_nonzero_assume_all_nonzero=True):  # the opt-in the message names
        assert torch.ones(3, device="meta").nonzero().shape == (3, 1)


@pytest.mark.claim("dispatch.err.meta-mixed-device")
def test_meta_and_cpu_tensors_in_one_op():
    with pytest.raises(RuntimeError, match=r"^Tensor on device cpu is not on the expected device meta!$"):
        torch.ones(2, device="meta") + torch.ones(2)
    out = torch.ones(2, device="meta") + torch.ones(2, device="meta")
    assert out.device.type == "meta" and out.shape == (2,)


# ------------------------------------------------------------------ __torch_function__


class ReturnsNotImplemented(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


class HandlesEverything(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs or {})


@pytest.mark.claim("dispatch.err.torch-function-not-implemented")
def test_every_torch_function_override_returns_not_implemented():
    t = torch.ones(2).as_subclass(ReturnsNotImplemented)
    with pytest.raises(TypeError, match=lit("Multiple dispatch failed for 'torch.Tensor.sum'; all __torch_function__ "
                                            "handlers returned NotImplemented:")) as info:
        t.sum()
    assert "tensor subclass <class" in str(info.value) and "TORCH_LOGS=not_implemented" in str(info.value)
    good = torch.ones(2).as_subclass(HandlesEverything)
    out = good.sum()
    assert type(out) is HandlesEverything and out.item() == 2.0


class NotATensor:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


class DoublesRelu:
    def __init__(self, value):
        self.value = value

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is torch.nn.functional.relu:
            return torch.relu(args[0].value) * 2
        return NotImplemented


@pytest.mark.claim("dispatch.err.torch-function-no-implementation")
def test_python_level_function_with_no_handler():
    with pytest.raises(TypeError, match=lit("no implementation found for 'torch.nn.functional.relu' on types that "
                                            "implement __torch_function__: [<class")):
        torch.nn.functional.relu(NotATensor())
    out = torch.nn.functional.relu(DoublesRelu(torch.tensor([-1.0, 3.0])))
    assert out.tolist() == [0.0, 6.0]


# ------------------------------------------------------------------ __torch_dispatch__


class Wrapper(torch.Tensor):
    """A wrapper subclass: no storage of its own, the real tensor in `inner`."""

    @staticmethod
    def __new__(cls, inner):
        return torch.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=inner.dtype)

    def __init__(self, inner):
        self.inner = inner


class NoDispatch(Wrapper):
    pass


class GivesUp(Wrapper):
    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


class Unwraps(Wrapper):
    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        def unwrap(a):
            return a.inner if isinstance(a, Unwraps) else a

        return func(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in (kwargs or {}).items()})


@pytest.mark.claim("dispatch.err.wrapper-needs-dispatch")
def test_wrapper_subclass_without_torch_dispatch():
    with pytest.raises(TypeError, match=r"^NoDispatch must define __torch_dispatch__$"):
        torch.add(NoDispatch(torch.ones(2)), 1)
    assert torch.add(Unwraps(torch.ones(2)), 1).tolist() == [2.0, 2.0]


@pytest.mark.claim("dispatch.err.torch-dispatch-not-implemented")
def test_every_torch_dispatch_handler_returns_not_implemented():
    with pytest.raises(TypeError, match=lit("Multiple dispatch failed for 'torch._ops.aten.add.Tensor'; all "
                                            "__torch_dispatch__ handlers returned NotImplemented:")) as info:
        torch.add(GivesUp(torch.ones(2)), 1)
    assert "tensor subclass <class" in str(info.value)

    class GivingUpMode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return NotImplemented

    with pytest.raises(TypeError, match=lit("Multiple dispatch failed for 'torch._ops.aten.ones.default'; all "
                                            "__torch_dispatch__ handlers returned NotImplemented:")) as info:
        with GivingUpMode():
            torch.ones(2)
    assert "mode object <" in str(info.value)
    assert torch.add(Unwraps(torch.ones(2)), 1).tolist() == [2.0, 2.0]


NOT_A_SUBCLASS = ("Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. Make "
                  "sure your class inherits from Tensor.")


def as_subclass_fix_works():
    made = torch.ones(2).as_subclass(HandlesEverything)  # the fix: a class derived from torch.Tensor
    assert type(made) is HandlesEverything and made.tolist() == [1.0, 1.0]


@pytest.mark.claim("dispatch.err.as-subclass-runtime-error")
@pytest.mark.torch_version("<2.10")
def test_as_subclass_of_a_non_tensor_class_until_2_9():
    with pytest.raises(RuntimeError, match="^" + lit(NOT_A_SUBCLASS) + "$") as info:
        torch.ones(2).as_subclass(int)
    assert not isinstance(info.value, TypeError)
    as_subclass_fix_works()


@pytest.mark.claim("dispatch.err.as-subclass-type-error")
@pytest.mark.torch_version(">=2.10")
def test_as_subclass_of_a_non_tensor_class_since_2_10():
    with pytest.raises(TypeError, match="^" + lit(NOT_A_SUBCLASS) + "$"):
        torch.ones(2).as_subclass(int)
    as_subclass_fix_works()


@pytest.mark.claim("dispatch.err.subclass-not-tensor")
def test_subclass_constructors_need_a_tensor_subclass_and_a_tensor():
    with pytest.raises(TypeError, match=lit("_make_subclass(): argument 'data' (position 2) must be Tensor, not int")):
        torch.Tensor._make_subclass(HandlesEverything, 3)
    made = torch.Tensor._make_subclass(HandlesEverything, torch.ones(2))
    assert type(made) is HandlesEverything and made.tolist() == [1.0, 1.0]
