"""Probes for docs/dispatch/then-and-now.md: what the 2019 and 2020 descriptions of the
dispatcher say that is no longer so."""
import re
from pathlib import Path

import pytest
import torch

DK = torch._C.DispatchKey
KS = torch._C.DispatchKeySet
INCLUDE = Path(torch.__file__).parent / "include"


@pytest.mark.claim("dispatch.then.no-virtual-type")
def test_no_type_object_with_virtual_methods():
    legacy = (INCLUDE / "ATen/core/DeprecatedTypeProperties.h").read_text()
    assert re.search(r"^class TORCH_API DeprecatedTypeProperties \{", legacy, re.M)
    assert "virtual" not in legacy


@pytest.mark.claim("dispatch.then.legacy-constructor")
def test_legacy_type_constructs_a_plain_tensor():
    assert type(torch.FloatTensor).__name__ == "tensortype"
    made = torch.FloatTensor(2)
    assert type(made) is torch.Tensor  # the legacy "type" constructs a plain tensor
    assert made.dtype == torch.float32 and made.shape == (2,)


@pytest.mark.claim("dispatch.then.legacy-type-name")
def test_legacy_type_name_is_computed():
    assert torch.ones(2).type() == "torch.FloatTensor"  # a name computed from backend and dtype
    assert isinstance(torch.ones(2), torch.FloatTensor)
    assert not isinstance(torch.ones(2, dtype=torch.float64), torch.FloatTensor)


def chain_of_three_kernels():
    """An operator with recording kernels at AutogradCPU, ADInplaceOrView and CPU."""
    lib = torch.library.Library("dispatch_probe_chain", "DEF")
    lib.define("step(Tensor x) -> Tensor")
    visited = []
    step = torch.ops.dispatch_probe_chain.step.default

    def autograd_kernel(x):
        visited.append("AutogradCPU")
        with torch._C._AutoDispatchBelowAutograd():
            return step(x)

    def inplace_or_view_kernel(x):
        visited.append("ADInplaceOrView")
        with torch._C._ExcludeDispatchKeyGuard(KS(DK.ADInplaceOrView)):
            return step(x)

    def cpu_kernel(x):
        visited.append("CPU")
        return x * 2

    lib.impl("step", autograd_kernel, "AutogradCPU")
    lib.impl("step", inplace_or_view_kernel, "ADInplaceOrView")
    lib.impl("step", cpu_kernel, "CPU")
    return lib, step, visited


@pytest.mark.claim("dispatch.then.chain-of-keys")
def test_a_call_walks_a_chain_of_keys():
    lib, step, visited = chain_of_three_kernels()
    assert step(torch.ones(2)).tolist() == [2.0, 2.0]
    assert visited == ["AutogradCPU", "ADInplaceOrView", "CPU"]
    del lib


@pytest.mark.claim("dispatch.then.inference-skips-chain")
def test_inference_tensor_goes_straight_to_the_backend():
    lib, step, visited = chain_of_three_kernels()
    with torch.inference_mode():  # autograd and ADInplaceOrView excluded: straight to CPU
        assert step(torch.ones(2)).tolist() == [2.0, 2.0]
    assert visited == ["CPU"]
    del lib


@pytest.mark.claim("dispatch.then.catch-all-gone")
def test_catch_all_became_composite_implicit(dispatcher):
    key_h = (INCLUDE / "c10/core/DispatchKey.h").read_text()
    assert re.search(r"^\s+CatchAll = Undefined,", key_h, re.M)
    assert not hasattr(DK, "CatchAll")


@pytest.mark.claim("dispatch.then.keyless-is-composite")
def test_keyless_kernel_fills_backend_and_autograd_slots(dispatcher):
    lib = torch.library.Library("dispatch_probe_catchall", "DEF")
    lib.define("shift(Tensor x) -> Tensor")
    lib.impl("shift", lambda x: x + 1)
    (only,) = dispatcher.registrations("dispatch_probe_catchall::shift")
    assert only["key"] == "CompositeImplicitAutograd"
    slots = dispatcher.table("dispatch_probe_catchall::shift")
    assert slots["CPU"]["kind"] == slots["AutogradCPU"]["kind"] == "math kernel"
    assert "CatchAll" not in slots and slots["Undefined"]["kind"] == "math kernel"


@pytest.mark.claim("dispatch.then.variable-is-tensor")
def test_variable_is_tensor():
    header = (INCLUDE / "torch/csrc/autograd/variable.h").read_text()
    assert re.search(r"^using Variable = at::Tensor;", header, re.M)


@pytest.mark.claim("dispatch.then.variable-constructor")
def test_variable_constructor_returns_a_tensor():
    v = torch.autograd.Variable(torch.ones(2), requires_grad=True)
    assert type(v) is torch.Tensor and v.requires_grad
    assert torch._C._dispatch_keys(v) == torch._C._dispatch_keys(torch.ones(2))


@pytest.mark.claim("dispatch.then.isinstance-variable")
def test_every_tensor_is_a_variable():
    assert isinstance(torch.ones(2), torch.autograd.Variable)  # every tensor "is" a Variable
    assert isinstance(torch.ones(2, dtype=torch.int64), torch.autograd.Variable)


@pytest.mark.claim("dispatch.then.no-xla-preautograd")
def test_no_xla_preautograd_key():
    with pytest.raises(RuntimeError, match="could not parse dispatch key: XLAPreAutograd"):
        torch._C._dispatch_key_parse("XLAPreAutograd")
    assert not any("PreAutograd" in name for name in DK.__members__)


@pytest.mark.claim("dispatch.then.xla-backend-bit")
def test_autograd_xla_stands_for_backend_bit_3():
    assert str(torch._C._dispatch_get_backend_keyset_from_autograd(DK.AutogradXLA)) == "DispatchKeySet(XLA)"
    assert KS(DK.XLA).raw_repr() & 0xFFFF == 1 << 3  # XLA is one of the 16 backend bits


@pytest.mark.claim("dispatch.then.below-autograd-guards")
def test_auto_non_variable_type_mode_is_deprecated():
    legacy = (INCLUDE / "ATen/core/LegacyTypeDispatch.h").read_text()
    old = re.search(r"struct TORCH_API AutoNonVariableTypeMode \{(.*?)\n\};", legacy, re.S).group(1)
    assert "TORCH_WARN_ONCE" in old and "is deprecated" in old
    for guard in ("AutoDispatchBelowAutograd", "AutoDispatchBelowADInplaceOrView"):
        assert re.search(rf"^struct TORCH_API {guard} \{{", legacy, re.M), guard
