"""Probes for docs/dispatch/life-of-a-call.md: one torch.add, step by step."""
import mmap
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch.profiler import profile

DK = torch._C.DispatchKey
KS = torch._C.DispatchKeySet


def backend_name(device):
    return torch._C._dispatch_key_for_device(device)  # "CPU" or "CUDA"


def aten_add_events(prof):
    return [e for e in prof.events() if e.name == "aten::add"]


@pytest.mark.claim("dispatch.call.builtin-entry")
def test_one_dispatcher_entry_per_call(device):
    assert type(torch.add).__name__ == "builtin_function_or_method"
    assert torch.add is torch._C._VariableFunctions.add
    assert type(torch.Tensor.add).__name__ == "method_descriptor"
    x = torch.ones(3, device=device)
    y = torch.ones(3, device=device, requires_grad=True)
    for call in (lambda: torch.add(x, y), lambda: x + y, lambda: x.add(y), lambda: torch.add(x, 2)):
        with profile() as prof:
            call()
        events = aten_add_events(prof)
        assert len(events) == 1  # the redispatches below Autograd are not recorded
    with profile() as prof:
        torch.add(x, y)
        x.add(y)
    assert len(aten_add_events(prof)) == 2


@pytest.mark.claim("dispatch.call.keyset-formula")
def test_dispatch_key_set_formula(device):
    b = backend_name(device)
    x = torch.ones(3, device=device)
    y = torch.ones(3, device=device)
    own = torch._C._dispatch_keys(x)
    assert own.highestPriorityTypeId() == getattr(DK, "Autocast" + b)  # the tensor's own top key
    include = torch._C._dispatch_tls_local_include_set()
    exclude = torch._C._dispatch_tls_local_exclude_set()
    combined = (own.raw_repr() | torch._C._dispatch_keys(y).raw_repr() | include.raw_repr()) & ~exclude.raw_repr()
    assert KS.from_raw_repr(combined).highestPriorityTypeId() == getattr(DK, "Autograd" + b)
    autocast_type = torch.bfloat16 if device == "cpu" else torch.float16
    with torch.autocast(device, dtype=autocast_type):
        exclude_in = torch._C._dispatch_tls_local_exclude_set()
        combined = (own.raw_repr() | include.raw_repr()) & ~exclude_in.raw_repr()
        assert KS.from_raw_repr(combined).highestPriorityTypeId() == getattr(DK, "Autocast" + b)
        a = torch.ones(4, 4, device=device)
        assert torch.mm(a, a).dtype == autocast_type  # mm has an Autocast kernel ...
        assert torch.add(a, a).dtype == torch.float32  # ... add's Autocast slot is a fallthrough


@pytest.mark.claim("dispatch.call.autograd-entry-seqnr")
def test_profiler_sequence_number_marks_the_autograd_entry(device):
    x = torch.ones(3, device=device, requires_grad=True)
    y = torch.ones(3, device=device)
    with profile() as prof:
        z = torch.add(x, y)
        z.backward(torch.ones_like(z))
    (forward,) = aten_add_events(prof)
    assert forward.sequence_nr >= 0
    assert forward.sequence_nr == z.grad_fn._sequence_nr()
    backward = [e for e in prof.events() if e.name == "autograd::engine::evaluate_function: AddBackward0"]
    assert [e.sequence_nr for e in backward] == [forward.sequence_nr]
    with profile() as prof:
        torch.add(y, y)  # no input requires grad: the key set still contains AutogradCPU
    assert aten_add_events(prof)[0].sequence_nr >= 0
    for context in (torch.no_grad, torch.inference_mode):
        with profile() as prof, context():
            torch.add(x, y)
        assert aten_add_events(prof)[0].sequence_nr == -1


@pytest.mark.claim("dispatch.call.autograd-kernel-generated")
def test_autograd_kernel_is_generated_and_records_the_node(device, dispatcher):
    autograd = dispatcher.active("aten::add.Tensor")["Autograd"]
    assert autograd["alias"]
    assert autograd["path"].startswith("torch/csrc/autograd/generated/VariableType_")
    slot = dispatcher.table("aten::add.Tensor")["Autograd" + backend_name(device)]
    assert slot["kind"] == "autograd kernel" and slot["raw_path"] == autograd["raw_path"]
    x = torch.ones(3, device=device, requires_grad=True)
    y = torch.ones(3, device=device, requires_grad=True)
    z = torch.add(x, y, alpha=3)
    assert z.grad_fn.name() == "AddBackward0"
    z.backward(torch.ones_like(z))
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
    assert y.grad.tolist() == [3.0, 3.0, 3.0]  # maybe_multiply(grad, alpha) from derivatives.yaml


@pytest.mark.claim("dispatch.call.redispatch-below-autograd")
def test_autograd_kernel_redispatches_below_itself(device):
    seen = []

    def spy(x, y, alpha=1):
        """A kernel put into add's ADInplaceOrView slot (normally a fallthrough)."""
        excluded = torch._C._dispatch_tls_local_exclude_set()
        seen.append((excluded.has(DK.AutogradFunctionality), excluded.has(DK.ADInplaceOrView)))
        with torch._C._ExcludeDispatchKeyGuard(KS(DK.ADInplaceOrView)):
            return torch.ops.aten.add.Tensor(x, y, alpha=alpha)

    outside = torch._C._dispatch_tls_local_exclude_set()
    assert not outside.has(DK.AutogradFunctionality) and not outside.has(DK.ADInplaceOrView)
    lib = torch.library.Library("aten", "IMPL")
    lib.impl("add.Tensor", spy, "ADInplaceOrView")
    x = torch.ones(3, device=device, requires_grad=True)
    z = torch.add(x, x)
    assert z.grad_fn.name() == "AddBackward0"
    # reached although the thread now excludes ADInplaceOrView: the key set was handed over
    assert seen == [(True, True)]
    seen.clear()
    torch.add(x.detach(), x.detach())  # nothing requires grad: same path
    assert seen == [(True, True)]
    with torch.inference_mode():
        plain = torch.ones(3, device=device)  # an inference tensor has no Autograd key
    seen.clear()
    assert torch.add(plain, plain).tolist() == [2.0, 2.0, 2.0]
    assert seen == [(False, False)]  # no Autograd kernel ran, so nothing was excluded


@pytest.mark.claim("dispatch.call.adinplaceorview")
def test_adinplaceorview_bumps_versions_and_records_views(device, dispatcher):
    out_of_place = dispatcher.table("aten::add.Tensor")["ADInplaceOrView"]
    assert out_of_place["fallthrough"] and out_of_place["kind"] == "backend fallback"
    in_place = dispatcher.active("aten::add_.Tensor")["ADInplaceOrView"]
    assert in_place["path"].startswith("torch/csrc/autograd/generated/ADInplaceOrViewType_")
    x = torch.ones(3, device=device)
    before = x._version
    with torch._C._AutoDispatchBelowAutograd():  # ADInplaceOrView still runs
        x.add_(1)
        view = x.view(3, 1)
    assert x._version == before + 1
    assert view._is_view() and view._base is x
    before = x._version
    with torch._C._AutoDispatchBelowADInplaceOrView():  # skipped
        x.add_(1)
        view = x.view(3, 1)
    assert x._version == before
    assert not view._is_view() and view._base is None
    assert x.tolist() == [3.0, 3.0, 3.0]


@pytest.mark.claim("dispatch.call.cpu-kernel-generated")
def test_backend_kernels_of_add_are_generated(device, dispatcher):
    b = backend_name(device)
    for op in ("aten::add.Tensor", "aten::add_.Tensor", "aten::add.out"):
        kernel = dispatcher.active(op)
        assert dispatcher.is_generated(kernel[b]["path"]), op
        assert Path(kernel[b]["path"]).name.startswith(f"Register{b}_"), op
        assert "CompositeImplicitAutograd" not in kernel, op


@pytest.mark.claim("dispatch.call.tensoriterator")
@pytest.mark.torch_version(">=2.13")  # torch._tensor_iterator is absent from 2.9.1-2.12.1
def test_tensoriterator_reproduces_add_shape_and_dtype(device):
    from torch._tensor_iterator import binary_op

    pairs = [
        (torch.zeros(3, 1, dtype=torch.int32), torch.zeros(4, dtype=torch.float16)),
        (torch.zeros(2, 1, 5), torch.zeros(3, 1)),
        (torch.zeros(4, dtype=torch.int64), torch.tensor(2.5, dtype=torch.float64)),
        (torch.zeros(4, dtype=torch.uint8), torch.zeros(4, dtype=torch.int8)),
    ]
    for a, b in pairs:
        a, b = a.to(device), b.to(device)
        it = binary_op(None, a, b)
        expected = torch.add(a, b)
        assert it.output(0).shape == expected.shape
        assert it.output(0).dtype == expected.dtype == it.common_dtype
    flat = binary_op(None, torch.zeros(3, 4, device=device), torch.zeros(3, 4, device=device))
    assert flat.ndim == 1 and tuple(flat.shape) == (12,)  # contiguous operands coalesce to one loop
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(4\)"):
        binary_op(None, torch.zeros(3, device=device), torch.zeros(4, device=device))


def cpu_capability_in_child(env_value):
    env = dict(os.environ)
    env.pop("ATEN_CPU_CAPABILITY", None)
    if env_value is not None:
        env["ATEN_CPU_CAPABILITY"] = env_value
    code = ("import torch; a = torch.arange(6.0); "
            "print(torch.backends.cpu.get_cpu_capability(), torch.add(a, a, alpha=2).tolist())")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    name, _, values = out.stdout.strip().partition(" ")
    return name, values


@pytest.mark.claim("dispatch.call.cpu-capability")
def test_cpu_capability_is_a_third_choice():
    default_name, default_values = cpu_capability_in_child(None)
    assert default_name in {"DEFAULT", "VSX", "ZVECTOR", "AVX2", "AVX512", "SVE256", "SVE128"}
    forced_name, forced_values = cpu_capability_in_child("default")
    assert forced_name == "DEFAULT"
    assert forced_values == default_values == str([0.0, 3.0, 6.0, 9.0, 12.0, 15.0])
    if platform.machine() in ("x86_64", "AMD64"):
        lib = Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"
        with open(lib, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            for level in ("DEFAULT", "AVX2", "AVX512"):
                assert data.find(f"UfuncCPUKernel_add.cpp.{level}.cpp".encode()) >= 0, level
                assert data.find(f"BinaryOpsKernel.cpp.{level}.cpp".encode()) >= 0, level
