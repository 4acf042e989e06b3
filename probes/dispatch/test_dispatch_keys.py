"""Probes for docs/dispatch/keys.md: key sets, their bits, and the thread-local sets."""
import re
from pathlib import Path

import pytest
import torch

DK = torch._C.DispatchKey
KS = torch._C.DispatchKeySet
INCLUDE = Path(torch.__file__).parent / "include"


def keys(t):
    return str(torch._C._dispatch_keys(t))


def key_names(keyset):
    return re.fullmatch(r"DispatchKeySet\((.*)\)", str(keyset)).group(1).split(", ")


@pytest.mark.claim("dispatch.keys.dense-tensor")
def test_dense_tensor_key_set(device):
    b = torch._C._dispatch_key_for_device(device)
    expected = f"DispatchKeySet({b}, ADInplaceOrView, Autograd{b}, Autocast{b})"
    assert keys(torch.ones(2, device=device)) == expected
    assert keys(torch.ones(2, device=device, requires_grad=True)) == expected
    for dtype in (torch.float64, torch.float16, torch.int64, torch.int8, torch.bool, torch.complex64):
        assert keys(torch.ones(2, device=device, dtype=dtype)) == expected, dtype


@pytest.mark.claim("dispatch.keys.dtype-switch")
def test_dtype_is_checked_inside_the_kernel(device, dispatcher):
    floats = torch.ones(3, device=device)
    ints = torch.tensor([4, 6, 9], device=device)
    assert torch._C._dispatch_keys(floats) == torch._C._dispatch_keys(ints)
    kernel = dispatcher.table("aten::gcd")[torch._C._dispatch_key_for_device(device)]
    assert kernel["kind"] == "kernel"  # one slot serves every dtype
    assert torch.gcd(ints, torch.tensor([6, 4, 6], device=device)).tolist() == [2, 2, 3]
    with pytest.raises(NotImplementedError, match=f"^\"gcd_{device}\" not implemented for 'Float'$"):
        torch.gcd(floats, floats)
    meta = torch.ones(3, device="meta")
    assert torch.gcd(meta, meta).shape == (3,)  # the Meta kernel has no dtype switch


@pytest.mark.claim("dispatch.keys.functionality-keys")
def test_functionality_keys_follow_the_tensor_kind():
    cpu = "ADInplaceOrView, AutogradCPU, AutocastCPU"
    assert keys(torch.ones(2, dtype=torch.complex64).conj()) == f"DispatchKeySet(CPU, Conjugate, {cpu})"
    assert keys(torch._neg_view(torch.ones(2))) == f"DispatchKeySet(CPU, Negative, {cpu})"
    assert keys(torch._efficientzerotensor(2)) == f"DispatchKeySet(CPU, ZeroTensor, {cpu})"
    assert keys(torch.eye(2).to_sparse()) == f"DispatchKeySet(SparseCPU, {cpu})"
    assert keys(torch.eye(2).to_sparse_csr()) == f"DispatchKeySet(SparseCsrCPU, {cpu})"
    assert keys(torch.ones(2, device="meta")) == "DispatchKeySet(Meta, ADInplaceOrView, AutogradMeta)"
    assert keys(torch.ones(2).to_mkldnn()) == "DispatchKeySet(MkldnnCPU, ADInplaceOrView, AutogradOther)"
    with torch.inference_mode():
        inference = torch.ones(2)
    assert keys(inference) == "DispatchKeySet(CPU, AutocastCPU)"


@pytest.mark.claim("dispatch.keys.python-key")
def test_only_torch_dispatch_adds_the_python_key():
    class Plain(torch.Tensor):
        pass

    class WithTorchFunction(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs)

    class Wrapper(torch.Tensor):
        @staticmethod
        def __new__(cls, elem):
            return torch.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device)

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            raise NotImplementedError

    plain = "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"
    assert keys(torch.ones(2).as_subclass(Plain)) == plain
    assert keys(torch.ones(2).as_subclass(WithTorchFunction)) == plain
    assert keys(Wrapper(torch.ones(2))) == \
        "DispatchKeySet(CPU, Python, ADInplaceOrView, AutogradCPU, AutocastCPU, PythonTLSSnapshot)"


@pytest.mark.claim("dispatch.keys.bit-layout")
def test_key_and_key_set_types_in_the_headers():
    key_h = (INCLUDE / "c10/core/DispatchKey.h").read_text()
    set_h = (INCLUDE / "c10/core/DispatchKeySet.h").read_text()
    assert re.search(r"^enum class DispatchKey : uint16_t \{", key_h, re.M)
    assert re.search(r"^enum class BackendComponent : uint8_t \{", key_h, re.M)
    members = re.findall(r"^\s+(\w+) repr_ = 0;", set_h, re.M)
    assert members == ["uint64_t"]  # the whole set is one 64-bit word
    assert torch._C._dispatch_num_backends() == 16
    backend_bits = {name: KS(getattr(DK, name)).raw_repr() & 0xFFFF
                    for name in ("CPU", "CUDA", "PrivateUse1", "Meta")}
    assert backend_bits == {"CPU": 1 << 0, "CUDA": 1 << 1, "PrivateUse1": 1 << 12, "Meta": 1 << 15}
    dense = KS(DK.Dense).raw_repr()
    assert dense == 1 << 16  # the first functionality bit sits just above the 16 backend bits
    assert KS(DK.CPU).raw_repr() == dense | 1 and KS(DK.CUDA).raw_repr() == dense | 2
    for name in ("BackendSelect", "ADInplaceOrView", "Python", "AutocastCPU", "Conjugate"):
        raw = KS(getattr(DK, name)).raw_repr()
        assert raw & 0xFFFF == 0 and bin(raw).count("1") == 1, name  # one bit, no backend


@pytest.mark.claim("dispatch.keys.cross-product")
def test_per_backend_keys_are_pairs_of_bits():
    for name in ("CPU", "AutogradCPU", "SparseCPU", "QuantizedCUDA", "AutogradPrivateUse1"):
        assert bin(KS(getattr(DK, name)).raw_repr()).count("1") == 2, name
    assert KS(DK.CPU).raw_repr() & KS(DK.AutogradCPU).raw_repr() == 1  # they share the CPU bit
    mixed = KS(DK.CPU).add(DK.AutogradCUDA)
    assert mixed.has(DK.CUDA) and mixed.has(DK.AutogradCPU)  # never added, still "in" the set
    assert str(mixed) == "DispatchKeySet(CPU, CUDA, AutogradCPU, AutogradCUDA)"
    assert bin(mixed.raw_repr()).count("1") == 4


@pytest.mark.claim("dispatch.keys.autograd-per-backend")
def test_autograd_keys_are_per_backend():
    for backend in ("CPU", "CUDA", "XLA", "MPS", "PrivateUse1", "Meta"):
        autograd = getattr(DK, "Autograd" + backend)
        assert str(torch._C._dispatch_get_backend_keyset_from_autograd(autograd)) == \
            f"DispatchKeySet({backend})"
    other = key_names(torch._C._dispatch_get_backend_keyset_from_autograd(DK.AutogradOther))
    assert "MkldnnCPU" in other and "CPU" not in other and "CUDA" not in other
    assert not hasattr(DK, "XLAPreAutograd")


@pytest.mark.claim("dispatch.keys.tls-defaults")
def test_thread_local_defaults():
    assert str(torch._C._dispatch_tls_local_include_set()) == "DispatchKeySet(BackendSelect, ADInplaceOrView)"
    excluded = key_names(torch._C._dispatch_tls_local_exclude_set())
    assert "AutocastCPU" in excluded and "AutocastCUDA" in excluded
    assert all(name.startswith("Autocast") for name in excluded)
    with torch.autocast("cpu"):
        inside = key_names(torch._C._dispatch_tls_local_exclude_set())
    assert "AutocastCPU" not in inside and "AutocastCUDA" in inside
    assert key_names(torch._C._dispatch_tls_local_exclude_set()) == excluded


@pytest.mark.claim("dispatch.keys.guards")
def test_guards_change_the_thread_local_sets():
    x = torch.ones(2, requires_grad=True)
    with torch._C._AutoDispatchBelowAutograd():
        excluded = torch._C._dispatch_tls_local_exclude_set()
        y = x * 2
    assert y.grad_fn is None and not y.requires_grad
    assert excluded.has(DK.AutogradFunctionality)
    assert not excluded.has(DK.AutogradCPU)  # no backend bit in the set: has() says no
    assert "AutogradCPU" not in str(excluded)
    assert "AutogradOther" in str(excluded) and "AutogradNestedTensor" in str(excluded)
    assert (x * 2).grad_fn is not None  # restored on exit
    with torch._C._IncludeDispatchKeyGuard(DK.Python):
        assert torch._C._dispatch_tls_is_dispatch_key_included(DK.Python)
    assert not torch._C._dispatch_tls_is_dispatch_key_included(DK.Python)
    with torch._C._ExcludeDispatchKeyGuard(KS(DK.ADInplaceOrView)):
        before = x._version
        with torch.no_grad():
            x.add_(1)
        assert x._version == before  # nobody bumped the counter


@pytest.mark.claim("dispatch.keys.inference-mode")
def test_inference_mode_changes_both_sets():
    with torch.inference_mode():
        assert str(torch._C._dispatch_tls_local_include_set()) == "DispatchKeySet(BackendSelect)"
        assert torch._C._dispatch_tls_local_exclude_set().has(DK.AutogradFunctionality)
        made_inside = torch.ones(3)
    assert "ADInplaceOrView" not in keys(made_inside)
    assert "ADInplaceOrView" in str(torch._C._dispatch_tls_local_include_set())
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode is not allowed"):
        made_inside.add_(1)
    assert made_inside.tolist() == [2.0, 2.0, 2.0]  # the check came after the write
    with torch._C._ExcludeDispatchKeyGuard(KS(DK.ADInplaceOrView)):
        made_inside.add_(1)  # without the ADInplaceOrView kernel nobody objects
    assert made_inside.tolist() == [3.0, 3.0, 3.0]
