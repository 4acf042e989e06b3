"""Probes for docs/dispatch/life-of-a-call.md: one torch.add, step by step."""
import mmap
import os
import platform
import re
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


def embedded_names(library, pattern):
    """The distinct matches of `pattern` (bytes) among the strings of torch/lib/`library`."""
    lib = Path(torch.__file__).parent / "lib" / library
    with open(lib, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return {match.decode() for match in re.findall(pattern, data)}


@pytest.mark.claim("dispatch.call.generated-bindings")
def test_bindings_are_compiled_from_generated_files():
    assert embedded_names("libtorch_python.so", rb"\bpython_torch_functions_\d+\.cpp") == {
        "python_torch_functions_0.cpp", "python_torch_functions_1.cpp", "python_torch_functions_2.cpp"}
    generated = "torch/csrc/autograd/generated/python_variable_methods.cpp"
    assert embedded_names("libtorch_python.so", re.escape(generated).encode()) == {generated}


@pytest.mark.claim("dispatch.call.builtin-entry")
def test_add_spellings_are_c_functions():
    assert type(torch.add).__name__ == "builtin_function_or_method"
    assert torch.add is torch._C._VariableFunctions.add
    assert type(torch.Tensor.add).__name__ == "method_descriptor"
    assert type(torch.Tensor.__add__).__name__ == "method_descriptor"
    assert torch.Tensor.__add__.__objclass__ is torch._C.TensorBase


@pytest.mark.claim("dispatch.call.one-profiler-event")
def test_one_dispatcher_entry_per_call(device):
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


def call_key_set(device, *tensors):
    include = torch._C._dispatch_tls_local_include_set().raw_repr()
    exclude = torch._C._dispatch_tls_local_exclude_set().raw_repr()
    combined = include
    for t in tensors:
        combined |= torch._C._dispatch_keys(t).raw_repr()
    return KS.from_raw_repr(combined & ~exclude)


@pytest.mark.claim("dispatch.call.keyset-formula")
def test_dispatch_key_set_formula(device):
    b = backend_name(device)
    x = torch.ones(3, device=device)
    y = torch.ones(3, device=device)
    assert torch._C._dispatch_keys(x).highestPriorityTypeId() == getattr(DK, "Autocast" + b)
    assert call_key_set(device, x, y).highestPriorityTypeId() == getattr(DK, "Autograd" + b)


@pytest.mark.claim("dispatch.call.autocast-keyset")
def test_autocast_puts_its_key_on_top(device):
    b = backend_name(device)
    x = torch.ones(3, device=device)
    with torch.autocast(device):
        assert call_key_set(device, x, x).highestPriorityTypeId() == getattr(DK, "Autocast" + b)


@pytest.mark.claim("dispatch.call.autocast-fallthrough")
def test_autocast_kernel_versus_fallthrough(device):
    autocast_type = torch.bfloat16 if device == "cpu" else torch.float16
    with torch.autocast(device, dtype=autocast_type):
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
    assert forward.sequence_nr == z.grad_fn._sequence_nr()
    backward = [e.sequence_nr for e in prof.events()
                if e.name in ("autograd::engine::evaluate_function: AddBackward0", "AddBackward0")]
    assert backward == [forward.sequence_nr, forward.sequence_nr]


@pytest.mark.claim("dispatch.call.seqnr-without-grad")
def test_sequence_number_without_requires_grad(device):
    x = torch.ones(3, device=device, requires_grad=True)
    y = torch.ones(3, device=device)
    before = (x * 2).grad_fn._sequence_nr()
    with profile() as prof:
        torch.add(y, y)  # no input requires grad: the key set still contains AutogradCPU
    (event,) = aten_add_events(prof)
    assert event.sequence_nr == before + 1  # the next number, not -1 ...
    assert torch.add(x, y).grad_fn._sequence_nr() == event.sequence_nr  # ... and not used up


@pytest.mark.claim("dispatch.call.seqnr-no-grad-mode")
def test_no_sequence_number_without_grad_mode(device):
    x = torch.ones(3, device=device, requires_grad=True)
    for context in (torch.no_grad, torch.inference_mode):
        with profile() as prof, context():
            torch.add(x, x)
        assert aten_add_events(prof)[0].sequence_nr == -1


@pytest.mark.claim("dispatch.call.autograd-kernel-generated")
def test_autograd_kernel_is_generated(device, dispatcher):
    autograd = dispatcher.active("aten::add.Tensor")["Autograd"]
    assert autograd["alias"]
    assert autograd["path"].startswith("torch/csrc/autograd/generated/VariableType_")
    slot = dispatcher.table("aten::add.Tensor")["Autograd" + backend_name(device)]
    assert slot["kind"] == "autograd kernel" and slot["raw_path"] == autograd["raw_path"]


@pytest.mark.claim("dispatch.call.add-backward-alpha")
def test_add_backward_follows_derivatives_yaml(device):
    x = torch.ones(3, device=device, requires_grad=True)
    y = torch.ones(3, device=device, requires_grad=True)
    z = torch.add(x, y, alpha=3)
    assert z.grad_fn.name() == "AddBackward0"
    z.backward(torch.ones_like(z))
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
    assert y.grad.tolist() == [3.0, 3.0, 3.0]  # maybe_multiply(grad, alpha) from derivatives.yaml


def spy_on_add_inplace_or_view(seen):
    """Put a kernel into add's ADInplaceOrView slot (normally a fallthrough) that records what
    the thread excludes when it is reached; returns the Library that holds it."""
    def spy(x, y, alpha=1):
        excluded = torch._C._dispatch_tls_local_exclude_set()
        seen.append((excluded.has(DK.AutogradFunctionality), excluded.has(DK.ADInplaceOrView)))
        with torch._C._ExcludeDispatchKeyGuard(KS(DK.ADInplaceOrView)):
            return torch.ops.aten.add.Tensor(x, y, alpha=alpha)

    lib = torch.library.Library("aten", "IMPL")
    lib.impl("add.Tensor", spy, "ADInplaceOrView")
    return lib


@pytest.mark.claim("dispatch.call.redispatch-below-autograd")
def test_autograd_kernel_redispatches_below_itself(device):
    seen = []
    lib = spy_on_add_inplace_or_view(seen)
    x = torch.ones(3, device=device, requires_grad=True)
    z = torch.add(x, x)
    assert z.grad_fn.name() == "AddBackward0"
    # reached although the thread now excludes ADInplaceOrView: the key set was handed over
    assert seen == [(True, True)]
    seen.clear()
    torch.add(x.detach(), x.detach())  # nothing requires grad: same path
    assert seen == [(True, True)]
    del lib


@pytest.mark.claim("dispatch.call.inference-no-autograd-kernel")
def test_inference_tensor_skips_the_autograd_kernel(device):
    seen = []
    lib = spy_on_add_inplace_or_view(seen)
    with torch.inference_mode():
        plain = torch.ones(3, device=device)  # an inference tensor has no Autograd key
    assert torch.add(plain, plain).tolist() == [2.0, 2.0, 2.0]
    assert seen == [(False, False)]  # no Autograd kernel ran, so nothing was excluded
    del lib


@pytest.mark.claim("dispatch.call.library-del-restores")
def test_deleting_the_library_restores_the_fallthrough(dispatcher):
    lib = spy_on_add_inplace_or_view([])
    assert dispatcher.table("aten::add.Tensor")["ADInplaceOrView"]["kind"] == "kernel"
    del lib
    slot = dispatcher.table("aten::add.Tensor")["ADInplaceOrView"]
    assert slot["fallthrough"] and slot["kind"] == "backend fallback"


@pytest.mark.claim("dispatch.call.adinplaceorview")
def test_adinplaceorview_slots_of_add(dispatcher):
    out_of_place = dispatcher.table("aten::add.Tensor")["ADInplaceOrView"]
    assert out_of_place["fallthrough"] and out_of_place["kind"] == "backend fallback"
    in_place = dispatcher.active("aten::add_.Tensor")["ADInplaceOrView"]
    assert in_place["path"].startswith("torch/csrc/autograd/generated/ADInplaceOrViewType_")


@pytest.mark.claim("dispatch.call.inplace-view-below-autograd")
def test_adinplaceorview_runs_below_autograd(device):
    x = torch.ones(3, device=device)
    before = x._version
    with torch._C._AutoDispatchBelowAutograd():  # ADInplaceOrView still runs
        x.add_(1)
        view = x.view(3, 1)
    assert x._version == before + 1
    assert view._is_view() and view._base is x


@pytest.mark.claim("dispatch.call.below-adinplaceorview")
def test_below_adinplaceorview_no_version_no_view(device):
    x = torch.ones(3, device=device)
    before = x._version
    with torch._C._AutoDispatchBelowADInplaceOrView():  # skipped
        x.add_(1)
        view = x.view(3, 1)
    assert x._version == before
    assert not view._is_view() and view._base is None
    assert x.tolist() == [2.0, 2.0, 2.0]  # the write itself happened


@pytest.mark.claim("dispatch.call.cpu-kernel-generated")
def test_backend_kernels_of_add_are_generated(device, dispatcher):
    b = backend_name(device)
    for op in ("aten::add.Tensor", "aten::add_.Tensor", "aten::add.out"):
        kernel = dispatcher.active(op)
        assert dispatcher.is_generated(kernel[b]["path"]), op
        assert Path(kernel[b]["path"]).name.startswith(f"Register{b}_"), op


@pytest.mark.claim("dispatch.call.add-not-composite")
def test_add_has_no_composite_kernel(dispatcher):
    for op in ("aten::add.Tensor", "aten::add_.Tensor", "aten::add.out"):
        assert "CompositeImplicitAutograd" not in dispatcher.active(op), op


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


@pytest.mark.claim("dispatch.call.tensoriterator-coalesce")
@pytest.mark.torch_version(">=2.13")
def test_tensoriterator_coalesces_contiguous_operands(device):
    from torch._tensor_iterator import binary_op

    flat = binary_op(None, torch.zeros(3, 4, device=device), torch.zeros(3, 4, device=device))
    assert flat.ndim == 1
    assert tuple(flat.shape) == (12,)  # contiguous operands coalesce to one loop


@pytest.mark.claim("dispatch.call.tensoriterator-broadcast-error")
@pytest.mark.torch_version(">=2.13")
def test_tensoriterator_rejects_shapes_that_do_not_broadcast(device):
    from torch._tensor_iterator import binary_op

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


@pytest.mark.claim("dispatch.call.kernels-per-capability")
def test_kernel_files_are_built_once_per_level():
    assert platform.machine() in ("x86_64", "AMD64")  # the claim is about the x86-64 wheel
    builds = embedded_names("libtorch_cpu.so", rb"(?:UfuncCPUKernel_add|BinaryOpsKernel)\.cpp\.\w+\.cpp")
    assert builds == {f"{name}.cpp.{level}.cpp" for name in ("UfuncCPUKernel_add", "BinaryOpsKernel")
                      for level in ("DEFAULT", "AVX2", "AVX512")}
