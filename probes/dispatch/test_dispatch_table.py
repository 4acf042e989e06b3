"""Probes for docs/dispatch/table.md: what the dispatcher holds for an operator."""
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

DK = torch._C.DispatchKey
KS = torch._C.DispatchKeySet


class AtenOps(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(func)
        return func(*args, **(kwargs or {}))


@pytest.mark.claim("dispatch.table.add-registrations")
def test_what_add_tensor_has_registered(dispatcher):
    regs = dispatcher.registrations("aten::add.Tensor")
    by_key = {}
    for r in regs:
        by_key.setdefault(r["key"], []).append(r)
    assert {"CPU", "Meta", "Autograd", "CompositeExplicitAutogradNonFunctional", "SparseCPU",
            "FuncTorchBatched"} <= set(by_key)
    assert "CompositeImplicitAutograd" not in by_key
    (cpu,) = by_key["CPU"]
    assert dispatcher.is_generated(cpu["path"]) and Path(cpu["path"]).name.startswith("RegisterCPU_")
    (autograd,) = by_key["Autograd"]
    assert autograd["alias"] and autograd["path"].startswith("torch/csrc/autograd/generated/VariableType_")
    active_meta, inactive_meta = by_key["Meta"]
    assert not active_meta["inactive"] and active_meta["path"] == "torch/_meta_registrations.py"
    assert inactive_meta["inactive"] and Path(inactive_meta["path"]).name.startswith("RegisterMeta_")


@pytest.mark.claim("dispatch.table.computed-slots")
def test_computed_table_fills_every_runtime_key(dispatcher):
    slots = dispatcher.table("aten::add.Tensor")
    default = dispatcher.active("aten::add.Tensor")["CompositeExplicitAutogradNonFunctional"]
    for backend in ("PrivateUse1", "HPU", "XPU"):
        assert slots[backend]["kind"] == "default backend kernel", backend
        assert slots[backend]["raw_path"] == default["raw_path"], backend
    autograd = dispatcher.active("aten::add.Tensor")["Autograd"]
    for key in ("AutogradCPU", "AutogradCUDA", "AutogradPrivateUse1", "AutogradMeta", "AutogradOther"):
        assert slots[key]["kind"] == "autograd kernel" and slots[key]["raw_path"] == autograd["raw_path"], key
    for key in ("ADInplaceOrView", "AutocastCPU", "BackendSelect"):
        assert slots[key]["fallthrough"] and slots[key]["kind"] == "backend fallback", key
    assert slots["CPU"]["kind"] == "kernel"


@pytest.mark.claim("dispatch.table.implicit-vs-explicit")
def test_composite_implicit_versus_explicit(dispatcher):
    linear = dispatcher.table("aten::linear")
    cia = dispatcher.active("aten::linear")["CompositeImplicitAutograd"]
    for key in ("CPU", "PrivateUse1", "Meta", "AutogradCPU", "AutogradPrivateUse1"):
        assert linear[key]["kind"] == "math kernel" and linear[key]["raw_path"] == cia["raw_path"], key
    # linear has an Autograd kernel too, but it only wins where a backend has its own kernel
    assert linear["NestedTensorCPU"]["kind"] == "kernel"
    assert linear["AutogradNestedTensor"]["kind"] == "autograd kernel"
    x, w, b = torch.randn(2, 3), torch.randn(4, 3, requires_grad=True), torch.randn(4)
    with AtenOps() as log:
        y = F.linear(x, w, b)
    assert log.ops == [torch.ops.aten.t.default, torch.ops.aten.addmm.default]
    assert y.grad_fn.name() == "AddmmBackward0"  # autograd of the pieces, not of linear
    permute = dispatcher.table("aten::permute")
    cea = dispatcher.active("aten::permute")["CompositeExplicitAutograd"]
    for key in ("CPU", "PrivateUse1", "Meta"):
        assert permute[key]["kind"] == "default backend kernel" and permute[key]["raw_path"] == cea["raw_path"]
    assert permute["AutogradCPU"]["kind"] == "autograd kernel"
    assert permute["AutogradCPU"]["path"].startswith("torch/csrc/autograd/generated/VariableType_")
    assert torch.randn(2, 3, requires_grad=True).permute(1, 0).grad_fn.name() == "PermuteBackward0"


@pytest.mark.claim("dispatch.table.backend-select")
def test_factories_go_through_backend_select(dispatcher):
    empty = dispatcher.active("aten::empty.memory_format")["BackendSelect"]
    assert dispatcher.is_generated(empty["path"]) and Path(empty["path"]).name == "RegisterBackendSelect.cpp"
    for op in ("aten::add.Tensor", "aten::mm"):
        assert "BackendSelect" not in dispatcher.active(op), op
        assert dispatcher.table(op)["BackendSelect"]["fallthrough"], op
    assert torch.empty(2, device="meta").device.type == "meta"
    with torch._C._ExcludeDispatchKeyGuard(KS(DK.BackendSelect)):
        with pytest.raises(NotImplementedError, match="There were no tensor arguments to this function"):
            torch.empty(2, device="meta")


@pytest.mark.claim("dispatch.table.meta-from-python")
def test_meta_kernels_registered_from_python(dispatcher):
    from_python, overridden = 0, 0
    for op in torch._C._dispatch_get_all_op_names():
        if op.startswith("aten::"):
            metas = [r for r in dispatcher.registrations(op) if r["key"] == "Meta"]
            if metas and not metas[0]["inactive"] and metas[0]["path"] == "torch/_meta_registrations.py":
                from_python += 1
                overridden += any(r["inactive"] for r in metas[1:])
    assert from_python > 1000 and overridden > 500
    assert dispatcher.active("aten::mm")["Meta"]["path"] == "torch/_meta_registrations.py"
    a = torch.empty(3, 1, device="meta")
    b = torch.empty(4, device="meta", dtype=torch.float64)
    out = a + b
    assert out.shape == (3, 4) and out.dtype == torch.float64 and out.device.type == "meta"
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        out.cpu()


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


@pytest.mark.claim("dispatch.table.missing-kernel")
def test_missing_kernel_errors():
    lib = torch.library.Library("dispatch_probe_table", "DEF")
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: x * 2, "CPU")
    assert torch.ops.dispatch_probe_table.twice(torch.ones(2)).tolist() == [2.0, 2.0]
    with pytest.raises(NotImplementedError,
                       match=r"Could not run 'dispatch_probe_table::twice' with arguments from the 'SparseCPU' "
                             r"backend\..*only available for these backends: \[CPU, "):
        torch.ops.dispatch_probe_table.twice(torch.eye(2).to_sparse())
    with pytest.raises(NotImplementedError, match="attempted to run this operator with Meta tensors, "
                                                  "but there was no fake impl or Meta kernel registered"):
        torch.ops.dispatch_probe_table.twice(torch.ones(2, device="meta"))
