"""Probes for docs/dispatch/table.md: what the dispatcher holds for an operator."""
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

from verified.probing import measured

DK = torch._C.DispatchKey
KS = torch._C.DispatchKeySet


class AtenOps(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(func)
        return func(*args, **(kwargs or {}))


@pytest.mark.claim("dispatch.table.slot-precedence")
def test_each_slot_takes_the_most_specific_kernel(dispatcher):
    ran = []

    def cpu_kernel(x):
        ran.append("CPU")
        return x + 1

    def composite_kernel(x):
        ran.append("CompositeExplicitAutograd")
        return torch.empty_like(x)

    lib = torch.library.Library("dispatch_probe_precedence", "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", cpu_kernel, "CPU")
    lib.impl("f", composite_kernel, "CompositeExplicitAutograd")
    slots = dispatcher.table("dispatch_probe_precedence::f")
    assert slots["CPU"]["kind"] == "kernel"
    assert slots["Meta"]["kind"] == "default backend kernel"
    assert slots["AutogradCPU"]["kind"] == "backend fallback" and not slots["AutogradCPU"]["fallthrough"]
    torch.ops.dispatch_probe_precedence.f(torch.ones(1))
    torch.ops.dispatch_probe_precedence.f(torch.ones(1, device="meta"))
    assert ran == ["CPU", "CompositeExplicitAutograd"]


def keys_registered(dispatcher, op):
    by_key = {}
    for r in dispatcher.registrations(op):
        by_key.setdefault(r["key"], []).append(r)
    return by_key


@pytest.mark.claim("dispatch.table.add-registrations")
def test_what_add_tensor_has_registered(dispatcher):
    keys = sorted(key for key in keys_registered(dispatcher, "aten::add.Tensor") if "CUDA" not in key)
    assert keys == [
        "Autograd", "Batched", "CPU", "CompositeExplicitAutogradNonFunctional", "FuncTorchBatched", "Meta",
        "MkldnnCPU", "NestedTensorCPU", "NestedTensorHPU", "SparseCPU", "SparseCsrCPU", "SparseCsrMeta",
        "SparseMeta", "Tracer", "ZeroTensor"]


@pytest.mark.claim("dispatch.table.add-two-meta")
def test_add_has_a_python_and_a_generated_meta_kernel(dispatcher):
    active_meta, inactive_meta = keys_registered(dispatcher, "aten::add.Tensor")["Meta"]
    assert not active_meta["inactive"] and active_meta["path"] == "torch/_meta_registrations.py"
    assert inactive_meta["inactive"] and Path(inactive_meta["path"]).name.startswith("RegisterMeta_")
    assert dispatcher.is_generated(inactive_meta["path"])


@pytest.mark.claim("dispatch.table.computed-slots")
def test_backends_without_a_kernel_get_the_default(dispatcher):
    slots = dispatcher.table("aten::add.Tensor")
    default = dispatcher.active("aten::add.Tensor")["CompositeExplicitAutogradNonFunctional"]
    for backend in ("PrivateUse1", "HPU", "XPU"):
        assert slots[backend]["kind"] == "default backend kernel", backend
        assert slots[backend]["raw_path"] == default["raw_path"], backend
    assert slots["CPU"]["kind"] == "kernel"


@pytest.mark.claim("dispatch.table.autograd-alias-slots")
def test_one_autograd_kernel_fills_every_autograd_slot(dispatcher):
    slots = dispatcher.table("aten::add.Tensor")
    autograd = dispatcher.active("aten::add.Tensor")["Autograd"]
    for key in ("AutogradCPU", "AutogradCUDA", "AutogradPrivateUse1", "AutogradMeta", "AutogradOther"):
        assert slots[key]["kind"] == "autograd kernel", key
        assert slots[key]["raw_path"] == autograd["raw_path"], key


@pytest.mark.claim("dispatch.table.fallthrough-slots")
def test_some_slots_of_add_are_fallthroughs(dispatcher):
    slots = dispatcher.table("aten::add.Tensor")
    for key in ("ADInplaceOrView", "AutocastCPU", "BackendSelect"):
        assert slots[key]["fallthrough"], key
        assert slots[key]["kind"] == "backend fallback", key


@pytest.mark.claim("dispatch.table.nonfunctional-structured")
def test_codegen_registers_the_nonfunctional_composite(dispatcher):
    for op in ("aten::add.Tensor", "aten::add_.Tensor"):
        (kernel,) = keys_registered(dispatcher, op)["CompositeExplicitAutogradNonFunctional"]
        assert Path(kernel["path"]).name.startswith("RegisterCompositeExplicitAutogradNonFunctional_"), op
        assert dispatcher.is_generated(kernel["path"]), op
    assert "CompositeExplicitAutogradNonFunctional" not in keys_registered(dispatcher, "aten::add.out")


@pytest.mark.claim("dispatch.table.implicit-vs-explicit")
def test_composite_implicit_fills_backend_and_autograd_slots(dispatcher):
    linear = dispatcher.table("aten::linear")
    cia = dispatcher.active("aten::linear")["CompositeImplicitAutograd"]
    for key in ("CPU", "PrivateUse1", "Meta", "AutogradCPU", "AutogradPrivateUse1"):
        assert linear[key]["kind"] == "math kernel", key
        assert linear[key]["raw_path"] == cia["raw_path"], key


@pytest.mark.claim("dispatch.table.linear-nested-autograd")
def test_linear_autograd_kernel_only_where_a_backend_has_its_own(dispatcher):
    linear = dispatcher.table("aten::linear")
    autograd = dispatcher.active("aten::linear")["Autograd"]
    assert linear["NestedTensorCPU"]["kind"] == "kernel"
    assert linear["AutogradNestedTensor"]["kind"] == "autograd kernel"
    assert linear["AutogradNestedTensor"]["raw_path"] == autograd["raw_path"]
    filled = [key for key, slot in linear.items() if slot["raw_path"] == autograd["raw_path"]]
    assert filled == ["AutogradNestedTensor"]


@pytest.mark.claim("dispatch.table.linear-decomposes")
def test_autograd_sees_the_pieces_of_linear():
    x, w, b = torch.randn(2, 3), torch.randn(4, 3, requires_grad=True), torch.randn(4)
    with AtenOps() as log:
        y = F.linear(x, w, b)
    assert log.ops == [torch.ops.aten.t.default, torch.ops.aten.addmm.default]
    assert y.grad_fn.name() == "AddmmBackward0"  # autograd of the pieces, not of linear


@pytest.mark.claim("dispatch.table.permute-explicit")
def test_composite_explicit_keeps_its_own_autograd(dispatcher):
    permute = dispatcher.table("aten::permute")
    cea = dispatcher.active("aten::permute")["CompositeExplicitAutograd"]
    for key in ("CPU", "PrivateUse1", "Meta"):
        assert permute[key]["kind"] == "default backend kernel", key
        assert permute[key]["raw_path"] == cea["raw_path"], key
    assert permute["AutogradCPU"]["kind"] == "autograd kernel"
    assert permute["AutogradCPU"]["path"].startswith("torch/csrc/autograd/generated/VariableType_")
    assert torch.randn(2, 3, requires_grad=True).permute(1, 0).grad_fn.name() == "PermuteBackward0"


@pytest.mark.claim("dispatch.table.backend-select")
def test_factories_have_backend_select_kernels(dispatcher):
    empty = dispatcher.active("aten::empty.memory_format")["BackendSelect"]
    assert dispatcher.is_generated(empty["path"]) and Path(empty["path"]).name == "RegisterBackendSelect.cpp"
    for op in ("aten::add.Tensor", "aten::mm"):
        assert "BackendSelect" not in dispatcher.active(op), op
        assert dispatcher.table(op)["BackendSelect"]["fallthrough"], op


@pytest.mark.claim("dispatch.table.backend-select-needed")
def test_factories_need_backend_select():
    assert torch.empty(2, device="meta").device.type == "meta"
    with torch._C._ExcludeDispatchKeyGuard(KS(DK.BackendSelect)):
        with pytest.raises(NotImplementedError, match="There were no tensor arguments to this function"):
            torch.empty(2, device="meta")
    assert torch.empty(2, device="meta").device.type == "meta"  # the fix: with BackendSelect back, it works


def python_meta_counts(dispatcher):
    from_python, overridden = 0, 0
    for op in torch._C._dispatch_get_all_op_names():
        if op.startswith("aten::"):
            metas = [r for r in dispatcher.registrations(op) if r["key"] == "Meta"]
            if metas and not metas[0]["inactive"] and metas[0]["path"] == "torch/_meta_registrations.py":
                from_python += 1
                overridden += any(r["inactive"] for r in metas[1:])
    return from_python, overridden


@pytest.mark.claim("dispatch.table.meta-from-python")
def test_meta_kernels_registered_from_python(dispatcher):
    from_python = python_meta_counts(dispatcher)[0]
    measured.record("aten operators whose active Meta kernel is Python's", from_python)
    assert from_python in range(1250, 1401)


@pytest.mark.claim("dispatch.table.meta-python-overrides-cpp")
def test_python_meta_kernels_override_generated_ones(dispatcher):
    overridden = python_meta_counts(dispatcher)[1]
    measured.record("of those, with an inactive C++ Meta kernel", overridden)
    assert overridden in range(600, 681)
    mm = keys_registered(dispatcher, "aten::mm")["Meta"]
    assert [(r["path"] == "torch/_meta_registrations.py", r["inactive"]) for r in mm] == [(True, False), (False, True)]


@pytest.mark.claim("dispatch.table.meta-library")
def test_meta_registrations_go_through_one_library():
    import torch._meta_registrations as meta

    lib = meta._meta_lib_dont_use_me_use_register_meta
    assert isinstance(lib, torch.library.Library)
    assert (lib.ns, lib.kind, lib.dispatch_key) == ("aten", "IMPL", "Meta")


@pytest.mark.claim("dispatch.table.meta-add-shapes")
def test_meta_add_broadcasts_and_promotes():
    a = torch.empty(3, 1, device="meta")
    b = torch.empty(4, device="meta", dtype=torch.float64)
    out = a + b
    assert out.shape == (3, 4) and out.dtype == torch.float64 and out.device.type == "meta"


@pytest.mark.claim("dispatch.table.meta-no-data")
def test_meta_tensor_has_no_data():
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        torch.empty(3, device="meta").cpu()
    assert torch.empty_like(torch.empty(3, device="meta"), device="cpu").shape == (3,)  # the fix: allocate anew


@pytest.mark.claim("dispatch.table.handwritten-kernels")
def test_kernels_registered_by_hand(dispatcher):
    expected = {
        ("aten::add.Tensor", "FuncTorchBatched"): "aten/src/ATen/functorch/BatchRulesBinaryOps.cpp",
        ("aten::add.Tensor", "Batched"): "aten/src/ATen/LegacyBatchingRegistrations.cpp",
        ("aten::permute", "FuncTorchBatched"): "aten/src/ATen/functorch/BatchRulesViews.cpp",
        ("aten::permute", "Conjugate"): "aten/src/ATen/ConjugateFallback.cpp",
        ("aten::permute", "Negative"): "aten/src/ATen/native/NegateFallback.cpp",
        ("aten::permute", "ZeroTensor"): "aten/src/ATen/ZeroTensorFallback.cpp",
        ("aten::detach", "ADInplaceOrView"): "torch/csrc/autograd/VariableTypeManual.cpp",
        ("aten::resize_", "Autograd"): "torch/csrc/autograd/VariableTypeManual.cpp",
        ("aten::resize_", "Functionalize"): "aten/src/ATen/FunctionalizeFallbackKernel.cpp",
        ("aten::_version", "Tracer"): "torch/csrc/autograd/TraceTypeManual.cpp",
        ("aten::mm", "AutocastCPU"): "aten/src/ATen/autocast_mode.cpp",
        ("aten::mm", "AutocastCUDA"): "aten/src/ATen/autocast_mode.cpp",
        ("aten::linear", "AutocastCPU"): "aten/src/ATen/autocast_mode.cpp",
        ("aten::linear", "FuncTorchBatchedDecomposition"): "aten/src/ATen/functorch/BatchRulesDecompositions.cpp",
        ("aten::linear", "FuncTorchDynamicLayerFrontMode"): "aten/src/ATen/functorch/PyTorchOperatorHacks.cpp",
        ("aten::randn.generator", "VmapMode"): "aten/src/ATen/VmapModeRegistrations.cpp",
    }
    for (op, key), path in expected.items():
        found = dispatcher.active(op)[key]
        assert found["path"] == path and not dispatcher.is_generated(found["path"]), (op, key)
    for key in ("Conjugate", "Negative", "ZeroTensor"):
        assert "fallthrough" in dispatcher.active("aten::permute")[key]["flags"], key
    assert "fallthrough" in dispatcher.active("aten::_version")["Tracer"]["flags"]


@pytest.mark.claim("dispatch.table.fallthrough-versus-fallback")
def test_fallthrough_keeps_the_bit_fallback_materializes(dispatcher):
    z = torch.tensor([[1 + 2j, 3 - 1j], [0 + 1j, 2 + 0j]]).conj()
    assert z.is_conj()
    assert torch._C._dispatch_kernel_for_dispatch_key_is_fallthrough("aten::permute", "Conjugate")
    assert z.permute(1, 0).is_conj()  # the lazy conjugation travels through the view
    assert dispatcher.table("aten::exp")["Conjugate"]["kind"] == "backend fallback"
    assert not dispatcher.table("aten::exp")["Conjugate"]["fallthrough"]
    e = torch.exp(z)  # the Conjugate fallback materializes first, then runs exp
    assert not e.is_conj()
    assert torch.allclose(e, torch.exp(z.resolve_conj()))


def op_with_only_a_cpu_kernel():
    lib = torch.library.Library("dispatch_probe_table", "DEF")
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: x * 2, "CPU")
    assert torch.ops.dispatch_probe_table.twice(torch.ones(2)).tolist() == [2.0, 2.0]
    return lib


@pytest.mark.claim("dispatch.table.missing-kernel")
def test_missing_backend_kernel_error():
    lib = op_with_only_a_cpu_kernel()
    with pytest.raises(NotImplementedError,
                       match=r"Could not run 'dispatch_probe_table::twice' with arguments from the 'SparseCPU' "
                             r"backend\..*only available for these backends: \[CPU, "):
        torch.ops.dispatch_probe_table.twice(torch.eye(2).to_sparse())
    # the fix: a dense tensor reaches the CPU kernel (or register a SparseCPU kernel)
    assert torch.ops.dispatch_probe_table.twice(torch.eye(2).to_sparse().to_dense()).tolist() == [[2.0, 0.0], [0.0, 2.0]]
    del lib


@pytest.mark.claim("dispatch.table.missing-meta-kernel")
def test_missing_meta_kernel_error():
    lib = op_with_only_a_cpu_kernel()
    with pytest.raises(NotImplementedError, match="attempted to run this operator with Meta tensors, "
                                                  "but there was no fake impl or Meta kernel registered"):
        torch.ops.dispatch_probe_table.twice(torch.ones(2, device="meta"))
    torch.library.register_fake("dispatch_probe_table::twice", lambda x: torch.empty_like(x), lib=lib)
    assert torch.ops.dispatch_probe_table.twice(torch.ones(2, device="meta")).shape == (2,)  # the fix
    del lib
