"""Probes for docs/dispatch/python-extension.md: __torch_function__, __torch_dispatch__,
torch.library. Every probe uses its own operator namespace."""
import re
from pathlib import Path

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode


class AtenOps(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(func)
        return func(*args, **(kwargs or {}))


class Spy(torch.Tensor):
    """A subclass whose __torch_function__ records what it receives."""
    seen = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.seen.append((func, [type(a).__name__ for a in args]))
        return super().__torch_function__(func, types, args, kwargs)


@pytest.mark.claim("dispatch.python.torch-function-above")
def test_torch_function_sees_the_api_torch_dispatch_sees_aten(device):
    Spy.seen = []
    x = torch.ones(3, device=device).as_subclass(Spy)
    with AtenOps() as log:
        torch.add(x, 2)
    assert Spy.seen == [(torch.add, ["Spy", "int"])]
    assert log.ops == [torch.ops.aten.add.Tensor]


@pytest.mark.claim("dispatch.python.torch-function-result-type")
def test_torch_function_result_keeps_the_subclass(device):
    x = torch.ones(3, device=device).as_subclass(Spy)
    assert type(torch.add(x, 2)) is Spy  # the subclass survives the round trip


@pytest.mark.claim("dispatch.python.torch-function-method")
def test_torch_function_receives_the_method(device):
    Spy.seen = []
    x = torch.ones(3, device=device).as_subclass(Spy)
    x.add(2)
    assert Spy.seen == [(torch.Tensor.add, ["Spy", "int"])]


class Interval:
    def __init__(self, low, high):
        self.low, self.high = low, high

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is torch.mean:
            (interval,) = args
            return (interval.low + interval.high) / 2
        return NotImplemented


@pytest.mark.claim("dispatch.python.duck-type")
def test_duck_type_implements_torch_functions():
    assert torch.mean(Interval(2.0, 6.0)) == 4.0


@pytest.mark.claim("dispatch.python.torch-function-notimplemented")
def test_all_handlers_not_implemented():
    with pytest.raises(TypeError, match=re.escape(
            "Multiple dispatch failed for 'torch.add'; all __torch_function__ handlers returned NotImplemented")):
        torch.add(Interval(0.0, 1.0), 1)
    assert torch.mean(Interval(0.0, 1.0)) == 0.5  # the fix: a handler that answers for the function


@pytest.mark.claim("dispatch.python.python-key-fallback")
def test_python_keys_have_backend_fallbacks():
    assert torch._C._dispatch_has_backend_fallback(torch._C.DispatchKey.Python)
    assert torch._C._dispatch_has_backend_fallback(torch._C.DispatchKey.PythonTLSSnapshot)


@pytest.mark.claim("dispatch.python.mode-below-autograd")
def test_dispatch_mode_sees_what_reaches_the_backend(device):
    w = torch.randn(4, 3, device=device, requires_grad=True)
    with AtenOps() as log:
        torch.nn.functional.linear(torch.randn(2, 3, device=device), w).sum()
    aten = torch.ops.aten
    assert log.ops == [aten.randn.default, aten.t.default, aten.mm.default, aten.sum.default]


@pytest.mark.claim("dispatch.python.mode-sees-backward")
def test_dispatch_mode_sees_the_backward(device):
    x = torch.randn(2, 3, device=device)
    w = torch.randn(4, 3, device=device, requires_grad=True)
    loss = torch.nn.functional.linear(x, w).sum()
    with AtenOps() as log:
        loss.backward()
    assert torch.ops.aten.mm.default in log.ops  # the gradient of w is computed by aten ops too
    assert torch.ops.aten.linear.default not in log.ops


class ExclusionsInside(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.excluded = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.excluded.append(torch._C._dispatch_tls_local_exclude_set())
        return func(*args, **(kwargs or {}))


@pytest.mark.claim("dispatch.python.mode-handler-exclusions")
def test_handler_runs_with_the_keys_above_python_excluded():
    DK = torch._C.DispatchKey
    with torch.inference_mode():
        plain = torch.ones(3)  # no Autograd key: the Autograd kernel never runs for it
    assert str(torch._C._dispatch_keys(plain)) == "DispatchKeySet(CPU, AutocastCPU)"
    with ExclusionsInside() as mode:
        torch.add(plain, plain)
    (inside,) = mode.excluded
    for key in ("ADInplaceOrView", "AutogradFunctionality", "Functionalize", "Conjugate", "ZeroTensor",
                "FuncTorchBatched", "PythonTLSSnapshot", "PreDispatch"):
        assert inside.has(getattr(DK, key)), key
    assert not inside.has(DK.Python) and not inside.has(DK.BackendSelect)
    outside = torch._C._dispatch_tls_local_exclude_set()
    assert not outside.has(DK.ADInplaceOrView) and not outside.has(DK.Functionalize)


class Logged(torch.Tensor):
    calls = []

    @staticmethod
    def __new__(cls, elem):
        wrapper = torch.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device,
                                                      requires_grad=elem.requires_grad)
        wrapper.elem = elem
        return wrapper

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(func)
        unwrap = lambda a: a.elem if isinstance(a, Logged) else a  # noqa: E731
        out = func(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in (kwargs or {}).items()})
        return Logged(out) if isinstance(out, torch.Tensor) else out


@pytest.mark.claim("dispatch.python.wrapper-subclass")
def test_wrapper_subclass_gets_aten_ops_after_autograd():
    Logged.calls = []
    x = Logged(torch.ones(3)).requires_grad_()
    assert "Python" in str(torch._C._dispatch_keys(x))
    y = x * 2
    assert Logged.calls == [torch.ops.aten.mul.Tensor]
    assert type(y) is Logged and y.grad_fn.name() == "MulBackward0"  # autograd ran above the Python key


@pytest.mark.claim("dispatch.python.wrapper-backward")
def test_wrapper_subclass_sees_the_backward():
    x = Logged(torch.ones(3)).requires_grad_()
    y = x * 2
    Logged.calls = []
    y.sum().backward()
    assert torch.ops.aten.mul.Tensor in Logged.calls
    assert type(x.grad) is Logged
    assert x.grad.elem.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.claim("dispatch.python.wrappers-in-torch")
def test_torch_own_subclasses_define_torch_dispatch():
    from torch._subclasses.fake_tensor import FakeTensor
    from torch._subclasses.functional_tensor import FunctionalTensor
    from torch.distributed.tensor import DTensor

    for cls in (FakeTensor, FunctionalTensor, DTensor):
        assert issubclass(cls, torch.Tensor), cls
        assert "__torch_dispatch__" in vars(cls), cls


@pytest.mark.claim("dispatch.python.custom-op-schema")
def test_custom_op_infers_its_schema():
    from torch.library import custom_op

    @custom_op("dispatch_probe_schema::scaled_sin", mutates_args=())
    def scaled_sin(x: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
        return torch.sin(x) * scale

    assert str(torch.ops.dispatch_probe_schema.scaled_sin.default._schema) == \
        "dispatch_probe_schema::scaled_sin(Tensor x, float scale=1.) -> Tensor"


@pytest.mark.claim("dispatch.python.custom-op-mutates-schema")
def test_custom_op_mutating_schema():
    from torch.library import custom_op

    @custom_op("dispatch_probe_schema_mut::bump_", mutates_args=("x",))
    def bump_(x: torch.Tensor, by: int) -> None:
        x.add_(by)

    assert str(torch.ops.dispatch_probe_schema_mut.bump_.default._schema) == \
        "dispatch_probe_schema_mut::bump_(Tensor(a0!) x, SymInt by) -> ()"


@pytest.mark.claim("dispatch.python.custom-op-untyped")
def test_custom_op_refuses_untyped_parameters():
    from torch.library import infer_schema

    def untyped(x):
        return x

    with pytest.raises(ValueError, match="Parameter x must have a type annotation"):
        infer_schema(untyped, mutates_args=())

    def typed(x: torch.Tensor) -> torch.Tensor:
        return x

    assert infer_schema(typed, mutates_args=()) == "(Tensor x) -> Tensor"  # the fix: annotate it


def define_scaled_sin(namespace):
    from torch.library import custom_op

    @custom_op(f"{namespace}::scaled_sin", mutates_args=())
    def scaled_sin(x: torch.Tensor, scale: float) -> torch.Tensor:
        return torch.sin(x) * scale

    return scaled_sin


def register_fake_and_autograd(op):
    @op.register_fake
    def _(x, scale):
        return torch.empty_like(x)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.scale = inputs[1]

    def backward(ctx, grad):
        (saved,) = ctx.saved_tensors
        return grad * torch.cos(saved) * ctx.scale, None

    op.register_autograd(backward, setup_context=setup_context)


@pytest.mark.claim("dispatch.python.custom-op-end-to-end")
def test_custom_op_registers_three_kernels(dispatcher):
    define_scaled_sin("dispatch_probe_e2e")
    regs = dispatcher.registrations("dispatch_probe_e2e::scaled_sin")
    assert sorted((r["key"], r["path"]) for r in regs) == [
        ("Autograd", "torch/_library/custom_ops.py"),
        ("CompositeExplicitAutograd", "torch/_library/custom_ops.py"),
        ("Meta", "torch/_library/custom_ops.py"),
    ]


@pytest.mark.claim("dispatch.python.custom-op-no-fake")
def test_custom_op_without_fake_impl():
    scaled_sin = define_scaled_sin("dispatch_probe_nofake")
    with pytest.raises(RuntimeError, match="There was no fake impl registered for"):
        scaled_sin(torch.ones(2, device="meta"), 2.0)
    register_fake_and_autograd(scaled_sin)  # the fix: register_fake
    assert scaled_sin(torch.ones(2, device="meta"), 2.0).shape == (2,)


@pytest.mark.claim("dispatch.python.custom-op-no-autograd")
def test_custom_op_without_autograd_formula():
    scaled_sin = define_scaled_sin("dispatch_probe_nograd")
    y = scaled_sin(torch.ones(2, requires_grad=True), 2.0)
    assert y.requires_grad
    with pytest.raises(RuntimeError, match="no autograd formula was registered"):
        y.sum().backward()
    register_fake_and_autograd(scaled_sin)  # the fix: register_autograd
    x = torch.zeros(2, requires_grad=True)
    scaled_sin(x, 2.0).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]  # cos(0) * 2


@pytest.mark.claim("dispatch.python.custom-op-registered")
def test_custom_op_with_fake_and_autograd():
    scaled_sin = define_scaled_sin("dispatch_probe_reg")
    register_fake_and_autograd(scaled_sin)
    out = scaled_sin(torch.ones(2, device="meta"), 2.0)
    assert out.device.type == "meta" and out.shape == (2,)
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    scaled_sin(x, 2.0).sum().backward()
    assert torch.allclose(x.grad, 2.0 * torch.cos(torch.tensor([0.0, 1.0])))


@pytest.mark.claim("dispatch.python.custom-op-opcheck")
def test_custom_op_passes_opcheck():
    from torch.library import opcheck

    scaled_sin = define_scaled_sin("dispatch_probe_opcheck")
    register_fake_and_autograd(scaled_sin)
    report = opcheck(scaled_sin, (torch.randn(3, requires_grad=True), 0.5))
    assert report == {"test_schema": "SUCCESS", "test_autograd_registration": "SUCCESS",
                      "test_faketensor": "SUCCESS", "test_aot_dispatch_dynamic": "SUCCESS"}


@pytest.mark.claim("dispatch.python.custom-op-opaque")
def test_custom_op_is_one_call_below_autograd():
    scaled_sin = define_scaled_sin("dispatch_probe_opaque")
    register_fake_and_autograd(scaled_sin)
    x = torch.ones(3, requires_grad=True)
    for inp in (x, torch.ones(3)):
        with AtenOps() as mode:
            y = scaled_sin(inp, 2.0)
        assert [str(op) for op in mode.ops] == ["dispatch_probe_opaque.scaled_sin.default"]
        assert inp.requires_grad == y.requires_grad
    y = scaled_sin(x, 2.0)
    assert type(y.grad_fn).__name__ == "GeneratedBackwardFor_dispatch_probe_opaque_scaled_sin_defaultBackward"
    assert [type(node).__name__ for node, _ in y.grad_fn.next_functions] == ["AccumulateGrad"]
    assert y.grad_fn.next_functions[0][0].variable is x


@pytest.mark.claim("dispatch.python.library-low-level")
def test_library_define_and_impl(dispatcher):
    lib = torch.library.Library("dispatch_probe_low", "DEF")
    lib.define("triple(Tensor x) -> Tensor")
    lib.impl("triple", lambda x: x * 3, "CPU")
    assert torch.ops.dispatch_probe_low.triple(torch.ones(2)).tolist() == [3.0, 3.0]
    (triple,) = dispatcher.registrations("dispatch_probe_low::triple")
    assert triple["key"] == "CPU" and Path(triple["raw_path"]).resolve() == Path(__file__).resolve()


@pytest.mark.claim("dispatch.python.library-impl-default-key")
def test_library_impl_without_a_key(dispatcher):
    lib = torch.library.Library("dispatch_probe_nokey", "DEF")
    lib.define("halve(Tensor x) -> Tensor")
    lib.impl("halve", lambda x: x / 2)  # no key
    (halve,) = dispatcher.registrations("dispatch_probe_nokey::halve")
    assert halve["key"] == "CompositeImplicitAutograd" and halve["alias"]
    assert torch.ops.dispatch_probe_nokey.halve(torch.ones(2, device="meta")).device.type == "meta"
    x = torch.ones(2, requires_grad=True)
    torch.ops.dispatch_probe_nokey.halve(x).sum().backward()  # autograd through x / 2
    assert x.grad.tolist() == [0.5, 0.5]


@pytest.mark.claim("dispatch.python.def-owns-namespace")
def test_one_def_library_per_namespace():
    owner = torch.library.Library("dispatch_probe_owner", "DEF")
    with pytest.raises(RuntimeError, match="Only a single TORCH_LIBRARY can be used to register the namespace "
                                           "dispatch_probe_owner"):
        torch.library.Library("dispatch_probe_owner", "DEF")
    fragment = torch.library.Library("dispatch_probe_owner", "FRAGMENT")
    fragment.define("g(Tensor x) -> Tensor")
    assert str(torch.ops.dispatch_probe_owner.g.default._schema) == "dispatch_probe_owner::g(Tensor x) -> Tensor"
    del owner, fragment


def record_and_refuse(op, *args, **kwargs):
    raise RuntimeError("reached the Python fallback")


@pytest.mark.claim("dispatch.python.library-fallback")
def test_library_fallback_needs_the_global_namespace():
    with pytest.raises(RuntimeError, match='Fallback can only be registered using library fragment on the '
                                           'global namespace "_"'):
        torch.library.Library("dispatch_probe_fb", "FRAGMENT").fallback(record_and_refuse, "PrivateUse1")


def private_use1_slot(op):
    (line,) = [line for line in torch._C._dispatch_dump_table(op).splitlines() if line.startswith("PrivateUse1:")]
    return line


@pytest.mark.claim("dispatch.python.library-fallback-global")
def test_library_fallback_through_the_global_namespace():
    assert not torch._C._dispatch_has_backend_fallback(torch._C.DispatchKey.PrivateUse1)
    lib = torch.library.Library("_", "IMPL")
    lib.fallback(record_and_refuse, "PrivateUse1")
    assert torch._C._dispatch_has_backend_fallback(torch._C.DispatchKey.PrivateUse1)
    assert f"registered at {Path(__file__).resolve()}:" in private_use1_slot("aten::fill_.Scalar")
    del lib


@pytest.mark.claim("dispatch.python.fallback-fills-empty-slots")
def test_a_fallback_only_fills_empty_slots():
    lib = torch.library.Library("_", "IMPL")
    lib.fallback(record_and_refuse, "PrivateUse1")
    assert private_use1_slot("aten::fill_.Scalar").endswith("[backend fallback]")
    # a fallback only fills slots that no kernel, composite ones included, claims
    assert private_use1_slot("aten::mul.Tensor").endswith("[default backend kernel]")
    assert private_use1_slot("aten::linear").endswith("[math kernel]")
    del lib
