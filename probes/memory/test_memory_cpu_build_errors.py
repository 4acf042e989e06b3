"""Probes for docs/memory/cpu-build-errors.md: CUDA, pinned memory, AMP and device-string
errors and warnings on a build of torch without CUDA, and how code that must run on both
builds avoids them.

The claims about the CPU-only build are skipped ("not run here") on a CUDA build; the
device-string claims hold on every build. Each probe triggers its message as the claim's cause
says and shows that the fix works.

Chosen from what users report:
- https://github.com/pytorch/pytorch/issues/3717, https://github.com/xinntao/ESRGAN/issues/88,
  https://github.com/marco-rudolph/AST/issues/4 (AssertionError: Torch not compiled with CUDA enabled)
- http://www.mbexlc.com/news/227027 (clearing .cuda() calls out of code for CPU-only machines)
- https://github.com/lucidrains/deep-daze/issues/138, https://github.com/LuxImagingAI/DBSegment/issues/1
  (GradScaler is enabled, but CUDA is not available; autocast disabled)
- https://github.com/MIC-DKFZ/nnUNet/pull/2684 (torch.cuda.amp.GradScaler deprecated for torch.amp.GradScaler)
"""
import re
import warnings

import pytest
import torch

NOT_COMPILED = r"^Torch not compiled with CUDA enabled$"


def lit(text):
    """A regex matching `text` literally."""
    return re.escape(text)


def cpu_only_build():
    if torch.version.cuda is not None or torch.version.hip is not None:
        pytest.skip("not run here: this claim is about a CPU-only build of torch")


def pick_device():
    """The device-agnostic choice the fixes use."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


@pytest.mark.claim("memory.cpubuild.not-compiled")
def test_cuda_calls_that_assert_on_a_cpu_build():
    cpu_only_build()
    for call in (torch.cuda.current_device, torch.cuda.synchronize, torch.cuda.mem_get_info,
                 lambda: torch.cuda.get_device_name(0), lambda: torch.cuda.get_device_properties(0),
                 lambda: torch.cuda.set_per_process_memory_fraction(0.5), torch.cuda.get_rng_state,
                 lambda: torch.nn.Linear(1, 1).cuda()):
        with pytest.raises(AssertionError, match=NOT_COMPILED):
            call()
    with pytest.raises(TypeError, match=lit("type torch.cuda.FloatTensor not available. Torch not compiled with CUDA "
                                            "enabled.")):
        torch.cuda.FloatTensor(2)
    device = pick_device()  # the fix: choose the device once, from torch.cuda.is_available()
    model = torch.nn.Linear(1, 1).to(device)
    assert device.type == "cpu" and model(torch.ones(1, 1, device=device)).shape == (1, 1)


@pytest.mark.claim("memory.cpubuild.missing-bindings")
def test_cuda_functions_whose_c_bindings_are_absent():
    cpu_only_build()
    for call, name in [(lambda: torch.cuda.set_device(0), "_cuda_setDevice"),
                       (torch.cuda.reset_peak_memory_stats, "_cuda_resetPeakMemoryStats"),
                       (torch.cuda.memory._record_memory_history, "_cuda_record_memory_history"),
                       (torch.cuda.memory._snapshot, "_cuda_memorySnapshot")]:
        with pytest.raises(AttributeError, match=lit(f"module 'torch._C' has no attribute '{name}'")):
            call()
    with pytest.raises(KeyError, match=lit("'allocated_bytes.all.current'")):
        torch.cuda.memory_summary()
    # the fix: guard the CUDA-only bookkeeping; the counters themselves answer on a CPU build
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    assert torch.cuda.memory_allocated() == 0 and torch.cuda.max_memory_allocated() == 0


@pytest.mark.claim("memory.cpubuild.dummy-classes")
def test_cuda_stream_event_nvtx_generator_on_a_cpu_build():
    cpu_only_build()
    with pytest.raises(RuntimeError, match=r"^torch\.cuda\.Stream requires CUDA support$"):
        torch.cuda.Stream()
    with pytest.raises(RuntimeError, match=r"^Tried to instantiate dummy base class Event$"):
        torch.cuda.Event(enable_timing=True)
    with pytest.raises(RuntimeError, match=lit("NVTX functions not installed. Are you sure you have a CUDA build?")):
        torch.cuda.nvtx.range_push("step")
    with pytest.raises(RuntimeError, match=lit("Cannot get CUDA generator without ATen_cuda library.")):
        torch.Generator(device="cuda")
    generator = torch.Generator(device=pick_device()).manual_seed(0)  # the fix: a generator on the chosen device
    assert torch.rand(1, generator=generator).device.type == "cpu"


@pytest.mark.claim("memory.cpubuild.pinned")
def test_pinned_memory_without_an_accelerator():
    cpu_only_build()
    with pytest.raises(RuntimeError, match=lit("pin_memory=True requires a CUDA or other accelerator backend; no pinned "
                                               "memory allocator is available on this system.")):
        torch.empty(2, pin_memory=True)
    with pytest.raises(RuntimeError, match=r"^Cannot access accelerator device when none is available\.$"):
        torch.ones(2).pin_memory()
    with pytest.raises(RuntimeError, match=r"^Cannot access accelerator device when none is available\.$"):
        torch.accelerator.current_device_index()
    pin = torch.accelerator.is_available()  # the fix: pin only when there is an accelerator
    t = torch.empty(2, pin_memory=pin)
    assert not pin and not t.is_pinned()


@pytest.mark.claim("memory.cpubuild.amp-disabled")
def test_grad_scaler_and_autocast_without_cuda():
    cpu_only_build()
    with pytest.warns(UserWarning, match=lit("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                                             "Disabling.")):
        scaler = torch.amp.GradScaler("cuda")
    assert not scaler.is_enabled()
    with pytest.warns(FutureWarning, match=lit("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                                               "`torch.amp.GradScaler('cuda', args...)` instead.")):
        with pytest.warns(UserWarning, match="CUDA is not available"):
            torch.cuda.amp.GradScaler()
    with pytest.warns(UserWarning, match=lit("CUDA is not available or torch_xla is imported. Disabling autocast.")):
        with torch.autocast("cuda"):
            pass
    with pytest.warns(UserWarning, match=lit("In CPU autocast, but the target dtype is not supported. Disabling "
                                             "autocast.")):
        with torch.autocast("cpu", dtype=torch.float64):
            pass
    with warnings.catch_warnings():  # the fix: the device and dtype this build supports, enabled only when usable
        warnings.simplefilter("error")
        quiet = torch.amp.GradScaler("cuda", enabled=torch.cuda.is_available())
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = torch.ones(2, 2) @ torch.ones(2, 2)
    assert not quiet.is_enabled() and out.dtype == torch.bfloat16


@pytest.mark.claim("memory.cpubuild.other-backends")
def test_xpu_and_mps_tensors_on_a_linux_cpu_build():
    cpu_only_build()
    if torch.backends.mps.is_available() or torch.xpu.is_available():
        pytest.skip("not run here: this build has an MPS or XPU device")
    with pytest.raises(AssertionError, match=r"^Torch not compiled with XPU enabled$"):
        torch.ones(2, device="xpu")
    with pytest.raises(NotImplementedError, match=lit("Could not run 'aten::empty.memory_format' with arguments from the "
                                                      "'MPS' backend.")):
        torch.ones(2, device="mps")
    assert torch.ones(2, device=pick_device()).device.type == "cpu"


@pytest.mark.claim("memory.cpubuild.device-strings")
def test_device_strings_that_do_not_parse():
    with pytest.raises(RuntimeError, match=lit("device type at start of device string: gpu")) as info:
        torch.device("gpu")
    assert str(info.value).startswith("Expected one of cpu, cuda,")
    with pytest.raises(RuntimeError, match=r"^Invalid device string: 'cuda:x'$"):
        torch.device("cuda:x")
    with pytest.raises(RuntimeError, match=r"^Device index must not be negative$"):
        torch.device("cuda", -2)
    assert torch.device("cuda:1").index == 1 and torch.device("cpu").type == "cpu"
