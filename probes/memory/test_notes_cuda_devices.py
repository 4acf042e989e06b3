"""Probes for docs/memory/cuda-devices.md: device objects, the CPU-only build, device
selection, availability checks, device-preserving factories and pinned host memory."""
import json
import os
import subprocess
import sys

import pytest
import torch


def run_fresh(code, env_updates=None, timeout=120):
    env = dict(os.environ)
    env.update(env_updates or {})
    proc = subprocess.run([sys.executable, "-c", "import json, os, torch\n" + code],
                          capture_output=True, text=True, timeout=timeout, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cpu_only_build():
    if torch.version.cuda is not None or torch.version.hip is not None:
        pytest.skip("not run here: this claim is about a CPU-only build of torch")


# ---------------------------------------------------------------- device objects

@pytest.mark.claim("memory.cudadev.device-objects")
def test_cuda_device_objects_need_no_gpu():
    plain, zero, two = torch.device("cuda"), torch.device("cuda:0"), torch.device("cuda", 2)
    assert (plain.type, plain.index) == ("cuda", None)
    assert (zero.type, zero.index) == ("cuda", 0)
    assert (two.type, two.index) == ("cuda", 2)
    assert torch.device("cuda:2") == two and plain != zero


@pytest.mark.claim("memory.cudadev.cpu-build")
@pytest.mark.timeout(60)
def test_cpu_only_build_refuses_cuda_work():
    cpu_only_build()
    code = ("out = [torch.cuda.is_available(), torch.cuda.device_count(), torch.cuda._is_compiled()]\n"
            "out.append(torch.cuda.is_initialized())\n"
            "print(json.dumps(out))")
    assert run_fresh(code, timeout=60) == [False, 0, False, False]
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        torch.tensor([1.0, 2.0], device="cuda")
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        torch.tensor([1.0, 2.0]).cuda()
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        torch.randn(2).to(torch.device("cuda:2"))
    with pytest.raises(RuntimeError, match="PyTorch was compiled without CUDA support"):
        with torch.cuda.device(1):
            pass
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # the fix: choose, then move
    assert torch.tensor([1.0, 2.0]).to(device).device.type == "cpu"


@pytest.mark.claim("memory.cudadev.current-device")
@pytest.mark.devices("cuda")
def test_cuda_means_the_current_device(device):
    last = torch.cuda.device_count() - 1
    before = torch.cuda.current_device()
    with torch.cuda.device(last):
        assert torch.cuda.current_device() == last
        a = torch.tensor([1.0, 2.0], device="cuda")
        b = torch.tensor([1.0, 2.0]).cuda()
        b2 = torch.tensor([1.0, 2.0]).to(device=torch.device("cuda"))
        c = a + b
        for t in (a, b, b2, c):
            assert t.device == torch.device("cuda", last)
    assert torch.cuda.current_device() == before
    x = torch.tensor([1.0], device="cuda")
    assert x.device.index == before


@pytest.mark.claim("memory.cudadev.visible-devices")
@pytest.mark.devices("cuda")
@pytest.mark.timeout(180)
def test_cuda_visible_devices_limits_what_torch_sees(device):
    code = "print(json.dumps([torch.cuda.is_available(), torch.cuda.device_count()]))"
    assert run_fresh(code, {"CUDA_VISIBLE_DEVICES": ""}) == [False, 0]
    assert run_fresh(code, {"CUDA_VISIBLE_DEVICES": "0"}) == [True, 1]


NVML_FORK = """
out = [torch.cuda.is_available(), torch.cuda.is_initialized()]
pid = os.fork()
if pid == 0:
    try:
        ok = torch.ones(4, device="cuda").sum().item() == 4.0
    except Exception:
        ok = False
    os._exit(0 if ok else 1)
_, status = os.waitpid(pid, 0)
out.append(os.waitstatus_to_exitcode(status))
print(json.dumps(out))
"""


@pytest.mark.claim("memory.cudadev.nvml-check-fork")
@pytest.mark.devices("cuda")
@pytest.mark.timeout(180)
def test_nvml_based_check_keeps_forks_usable(device):
    assert run_fresh(NVML_FORK, {"PYTORCH_NVML_BASED_CUDA_CHECK": "1"}) == [True, False, 0]


# ---------------------------------------------------------------- factories that follow a tensor

@pytest.mark.claim("memory.cudadev.new-methods")
def test_new_methods_keep_device_and_dtype(device):
    x = torch.empty(2, device=device)
    x_long = torch.empty(2, dtype=torch.int64, device=device)
    y = x.new_full([3, 2], fill_value=0.3)
    assert y.shape == (3, 2) and y.dtype == torch.float32 and y.device == x.device
    assert torch.equal(y.cpu(), torch.full((3, 2), 0.3))
    z = x.new_full([3, 2], fill_value=-5)
    assert z.dtype == torch.float32 and torch.equal(z.cpu(), torch.full((3, 2), -5.0))
    w = x_long.new_tensor([[1, 2, 3]])
    assert w.dtype == torch.int64 and w.device == x.device
    assert w.cpu().tolist() == [[1, 2, 3]]
    # a torch.* factory without arguments does not follow x
    assert torch.full([3, 2], 0.3).device == torch.device("cpu")


@pytest.mark.claim("memory.cudadev.like-factories")
def test_like_factories_keep_device_and_dtype(device):
    for dtype in (torch.float16, torch.float64, torch.int32):
        x = torch.empty(2, 3, dtype=dtype, device=device)
        for make, value in ((torch.ones_like, 1), (torch.zeros_like, 0)):
            y = make(x)
            assert (y.shape, y.dtype, y.device) == (x.shape, dtype, x.device)
            assert bool((y == value).all())


# ---------------------------------------------------------------- pinned host memory

@pytest.mark.claim("memory.cudadev.pin-memory-cpu-build")
def test_pinning_needs_an_accelerator():
    cpu_only_build()
    from torch.utils.data import DataLoader

    t = torch.arange(4.0)
    assert not t.is_pinned()
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
        t.pin_memory()
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accelerator is found"):
        batches = list(DataLoader(list(range(4)), batch_size=2, pin_memory=True))
    assert [b.is_pinned() for b in batches] == [False, False]
    import warnings  # the fix: pin only when an accelerator exists

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = list(DataLoader(list(range(4)), batch_size=2, pin_memory=torch.accelerator.is_available()))
    assert len(quiet) == 2


@pytest.mark.claim("memory.cudadev.pin-memory")
@pytest.mark.devices("cuda")
def test_pin_memory_returns_a_pinned_copy(device):
    from torch.utils.data import DataLoader

    t = torch.arange(1000.0)
    p = t.pin_memory()
    assert p.is_pinned() and not t.is_pinned()
    assert p.data_ptr() != t.data_ptr() and torch.equal(p, t)
    assert p.pin_memory() is p  # already pinned: returned as is
    on_gpu = p.to(device, non_blocking=True)
    torch.cuda.synchronize()
    assert torch.equal(on_gpu.cpu(), t)
    batches = list(DataLoader(torch.arange(8.0), batch_size=4, pin_memory=True))
    assert [b.is_pinned() for b in batches] == [True, True]


# ---------------------------------------------------------------- launching one process per GPU

@pytest.mark.claim("memory.cudadev.launch-deprecated")
def test_distributed_launch_is_deprecated(capsys):
    import torch.distributed.launch as launch

    with pytest.warns(FutureWarning, match="The module torch.distributed.launch is deprecated") as record:
        with pytest.raises(SystemExit) as exit_info:
            launch.main(["--help"])
    assert exit_info.value.code == 0
    assert any("Use torchrun" in str(w.message) for w in record)
    assert "--use-env" in capsys.readouterr().out
