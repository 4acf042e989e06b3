"""Probes for docs/dispatch/keys.md: key sets, their bits, and the thread-local sets.

One probe per claim: each claim states one fact about the key sets."""
import re
from pathlib import Path

import pytest
import torch

DK = torch._C.DispatchKey
KS = torch._C.DispatchKeySet
INCLUDE = Path(torch.__file__).parent / "include"
CPU_REST = "ADInplaceOrView, AutogradCPU, AutocastCPU"  # what a dense CPU tensor has besides CPU


def keys(t):
    return str(torch._C._dispatch_keys(t))


def key_names(keyset):
    return re.fullmatch(r"DispatchKeySet\((.*)\)", str(keyset)).group(1).split(", ")


def raw(name):
    return KS(getattr(DK, name)).raw_repr()


def popcount(value):
    return bin(value).count("1")


# ---------------------------------------------------------------- what a tensor carries

@pytest.mark.claim("dispatch.keys.dense-tensor")
def test_dense_tensor_key_set(device):
    b = torch._C._dispatch_key_for_device(device)
    assert keys(torch.ones(2, device=device)) == f"DispatchKeySet({b}, ADInplaceOrView, Autograd{b}, Autocast{b})"


@pytest.mark.claim("dispatch.keys.requires-grad-no-key")
def test_requires_grad_adds_no_key(device):
    assert keys(torch.ones(2, device=device, requires_grad=True)) == keys(torch.ones(2, device=device))


@pytest.mark.claim("dispatch.keys.set-data-changes-keys")
def test_assigning_data_replaces_the_key_set():
    x = torch.ones(2, dtype=torch.complex64)
    assert keys(x) == f"DispatchKeySet(CPU, {CPU_REST})"
    x.data = torch.ones(2, dtype=torch.complex64).conj()
    assert keys(x) == f"DispatchKeySet(CPU, Conjugate, {CPU_REST})"


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


@pytest.mark.claim("dispatch.keys.meta-no-dtype-switch")
def test_meta_gcd_accepts_float():
    meta = torch.ones(3, device="meta")
    out = torch.gcd(meta, meta)  # the Meta kernel computes the shape and has no dtype switch
    assert out.shape == (3,) and out.dtype == torch.float32 and out.device.type == "meta"


@pytest.mark.claim("dispatch.keys.functionality-keys")
def test_lazy_conjugation_adds_conjugate():
    assert keys(torch.ones(2, dtype=torch.complex64).conj()) == f"DispatchKeySet(CPU, Conjugate, {CPU_REST})"


@pytest.mark.claim("dispatch.keys.negative-key")
def test_neg_view_adds_negative():
    assert keys(torch._neg_view(torch.ones(2))) == f"DispatchKeySet(CPU, Negative, {CPU_REST})"


@pytest.mark.claim("dispatch.keys.zero-tensor-key")
def test_efficient_zero_tensor_adds_zero_tensor():
    assert keys(torch._efficientzerotensor(2)) == f"DispatchKeySet(CPU, ZeroTensor, {CPU_REST})"


@pytest.mark.claim("dispatch.keys.math-bit-fallbacks")
def test_math_bit_keys_have_backend_fallbacks():
    for name in ("Conjugate", "Negative", "ZeroTensor"):
        assert torch._C._dispatch_has_backend_fallback(getattr(DK, name)), name
    assert not torch._C._dispatch_has_backend_fallback(DK.SparseCPU)


@pytest.mark.claim("dispatch.keys.sparse-coo-key")
def test_to_sparse_replaces_cpu():
    assert keys(torch.eye(2).to_sparse()) == f"DispatchKeySet(SparseCPU, {CPU_REST})"


@pytest.mark.claim("dispatch.keys.sparse-csr-key")
def test_to_sparse_csr_replaces_cpu():
    assert keys(torch.eye(2).to_sparse_csr()) == f"DispatchKeySet(SparseCsrCPU, {CPU_REST})"


@pytest.mark.claim("dispatch.keys.meta-tensor")
def test_meta_tensor_key_set():
    assert keys(torch.ones(2, device="meta")) == "DispatchKeySet(Meta, ADInplaceOrView, AutogradMeta)"


@pytest.mark.claim("dispatch.keys.mkldnn-tensor")
def test_mkldnn_tensor_key_set():
    assert keys(torch.ones(2).to_mkldnn()) == "DispatchKeySet(MkldnnCPU, ADInplaceOrView, AutogradOther)"


@pytest.mark.claim("dispatch.keys.inference-tensor")
def test_inference_tensor_key_set():
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

    plain = f"DispatchKeySet(CPU, {CPU_REST})"
    assert keys(torch.ones(2).as_subclass(Plain)) == plain
    assert keys(torch.ones(2).as_subclass(WithTorchFunction)) == plain
    assert keys(Wrapper(torch.ones(2))) == \
        "DispatchKeySet(CPU, Python, ADInplaceOrView, AutogradCPU, AutocastCPU, PythonTLSSnapshot)"


# ---------------------------------------------------------------- the bits of a key set

@pytest.mark.claim("dispatch.keys.bit-layout")
def test_key_and_key_set_types_in_the_headers():
    key_h = (INCLUDE / "c10/core/DispatchKey.h").read_text()
    set_h = (INCLUDE / "c10/core/DispatchKeySet.h").read_text()
    assert re.search(r"^enum class DispatchKey : uint16_t \{", key_h, re.M)
    assert re.search(r"^enum class BackendComponent : uint8_t \{", key_h, re.M)
    members = re.findall(r"^\s+(\w+) repr_ = 0;", set_h, re.M)
    assert members == ["uint64_t"]  # the whole set is one 64-bit word


@pytest.mark.claim("dispatch.keys.backend-bits")
def test_backends_take_the_low_16_bits():
    assert torch._C._dispatch_num_backends() == 16
    backend_bits = {name: raw(name) & 0xFFFF for name in ("CPU", "CUDA", "PrivateUse1", "Meta")}
    assert backend_bits == {"CPU": 1 << 0, "CUDA": 1 << 1, "PrivateUse1": 1 << 12, "Meta": 1 << 15}


@pytest.mark.claim("dispatch.keys.dense-bit")
def test_dense_is_the_first_functionality_bit():
    dense = raw("Dense")
    assert dense == 1 << 16  # just above the 16 backend bits
    assert raw("CPU") == dense | 1
    assert raw("CUDA") == dense | 2


@pytest.mark.claim("dispatch.keys.single-bit-keys")
def test_keys_without_a_backend_are_one_bit():
    for name in ("BackendSelect", "ADInplaceOrView", "Python", "AutocastCPU", "Conjugate"):
        value = raw(name)
        assert value & 0xFFFF == 0, name  # no backend bit
        assert popcount(value) == 1, name


@pytest.mark.claim("dispatch.keys.per-backend-two-bits")
def test_per_backend_keys_are_pairs_of_bits():
    for name in ("CPU", "AutogradCPU", "SparseCPU", "QuantizedCUDA", "AutogradPrivateUse1"):
        assert popcount(raw(name)) == 2, name
    assert raw("CPU") & raw("AutogradCPU") == 1  # they share the CPU bit, bit 0
    assert raw("AutogradCPU") == 0x1000000001  # bit 36 and bit 0


@pytest.mark.claim("dispatch.keys.cross-product")
def test_a_set_of_pairs_answers_for_the_cross_product():
    mixed = KS(DK.CPU).add(DK.AutogradCUDA)
    assert popcount(mixed.raw_repr()) == 4
    assert mixed.has(DK.CUDA)  # never added, still "in" the set
    assert mixed.has(DK.AutogradCPU)
    assert str(mixed) == "DispatchKeySet(CPU, CUDA, AutogradCPU, AutogradCUDA)"


# ---------------------------------------------------------------- autograd keys

@pytest.mark.claim("dispatch.keys.autograd-per-backend")
def test_autograd_keys_are_per_backend():
    for backend in ("CPU", "CUDA", "XLA", "MPS", "PrivateUse1", "Meta"):
        autograd = getattr(DK, "Autograd" + backend)
        assert str(torch._C._dispatch_get_backend_keyset_from_autograd(autograd)) == \
            f"DispatchKeySet({backend})"


@pytest.mark.claim("dispatch.keys.autograd-other")
def test_autograd_other_covers_the_rest():
    other = key_names(torch._C._dispatch_get_backend_keyset_from_autograd(DK.AutogradOther))
    assert "MkldnnCPU" in other
    assert "CPU" not in other
    assert "CUDA" not in other


# ---------------------------------------------------------------- the thread's sets

@pytest.mark.claim("dispatch.keys.tls-defaults")
def test_thread_local_include_default():
    assert str(torch._C._dispatch_tls_local_include_set()) == "DispatchKeySet(BackendSelect, ADInplaceOrView)"


@pytest.mark.claim("dispatch.keys.tls-default-exclude")
def test_thread_local_exclude_default():
    assert key_names(torch._C._dispatch_tls_local_exclude_set()) == [
        "AutocastCPU", "AutocastMTIA", "AutocastMAIA", "AutocastXPU", "AutocastIPU", "AutocastHPU",
        "AutocastXLA", "AutocastMPS", "AutocastCUDA", "AutocastPrivateUse1"]


@pytest.mark.claim("dispatch.keys.autocast-unexcludes")
def test_autocast_cpu_leaves_only_its_key_out():
    before = key_names(torch._C._dispatch_tls_local_exclude_set())
    with torch.autocast("cpu"):
        inside = key_names(torch._C._dispatch_tls_local_exclude_set())
    assert [name for name in before if name not in inside] == ["AutocastCPU"]
    assert len(inside) == len(before) - 1  # nothing else changed
    assert key_names(torch._C._dispatch_tls_local_exclude_set()) == before


@pytest.mark.claim("dispatch.keys.inference-mode")
def test_inference_mode_changes_both_sets():
    with torch.inference_mode():
        assert str(torch._C._dispatch_tls_local_include_set()) == "DispatchKeySet(BackendSelect)"
        assert torch._C._dispatch_tls_local_exclude_set().has(DK.AutogradFunctionality)
    assert not torch._C._dispatch_tls_local_exclude_set().has(DK.AutogradFunctionality)


@pytest.mark.claim("dispatch.keys.inference-inplace-error")
def test_inplace_on_inference_tensor_fails_after_the_write():
    with torch.inference_mode():
        made_inside = torch.ones(3)
    assert "ADInplaceOrView" in str(torch._C._dispatch_tls_local_include_set())
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode is not allowed"):
        made_inside.add_(1)
    assert made_inside.tolist() == [2.0, 2.0, 2.0]  # the check came after the write
    copy = made_inside.clone()  # the fix: an ordinary tensor made outside inference mode
    copy.add_(1)
    assert copy.tolist() == [3.0, 3.0, 3.0] and not copy.is_inference()


@pytest.mark.claim("dispatch.keys.inference-inplace-excluded")
def test_inplace_on_inference_tensor_without_the_key():
    with torch.inference_mode():
        made_inside = torch.ones(3)
    with torch._C._ExcludeDispatchKeyGuard(KS(DK.ADInplaceOrView)):
        made_inside.add_(1)  # without the ADInplaceOrView kernel nobody objects
    assert made_inside.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.claim("dispatch.keys.guards")
def test_below_autograd_records_no_graph():
    x = torch.ones(2, requires_grad=True)
    with torch._C._AutoDispatchBelowAutograd():
        y = x * 2
    assert y.grad_fn is None
    assert not y.requires_grad
    assert (x * 2).grad_fn is not None  # restored on exit


@pytest.mark.claim("dispatch.keys.below-autograd-exclude-set")
def test_below_autograd_excludes_the_functionality_bit():
    with torch._C._AutoDispatchBelowAutograd():
        excluded = torch._C._dispatch_tls_local_exclude_set()
    assert excluded.has(DK.AutogradFunctionality)
    assert not excluded.has(DK.AutogradCPU)  # no backend bit in the set: has() says no
    names = key_names(excluded)
    assert "AutogradCPU" not in names
    assert "AutogradOther" in names and "AutogradNestedTensor" in names


@pytest.mark.claim("dispatch.keys.include-guard")
def test_include_guard_is_scoped():
    assert not torch._C._dispatch_tls_is_dispatch_key_included(DK.Python)
    with torch._C._IncludeDispatchKeyGuard(DK.Python):
        assert torch._C._dispatch_tls_is_dispatch_key_included(DK.Python)
    assert not torch._C._dispatch_tls_is_dispatch_key_included(DK.Python)


@pytest.mark.claim("dispatch.keys.exclude-guard-version")
def test_excluding_inplace_or_view_skips_the_version_bump():
    x = torch.ones(2)
    x.add_(1)
    assert x._version == 1  # with the key, add_ bumps the counter
    with torch._C._ExcludeDispatchKeyGuard(KS(DK.ADInplaceOrView)):
        x.add_(1)
    assert x._version == 1  # nobody bumped the counter
    assert x.tolist() == [3.0, 3.0]
