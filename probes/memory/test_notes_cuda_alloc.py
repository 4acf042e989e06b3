"""Probes for the PYTORCH_ALLOC_CONF options, custom allocators and memory pools, the cuFFT
plan cache and the JIT kernel cache (docs/memory/cuda-allocator.md, cuda-devices.md).

The option parser lives in c10 and runs on a CPU-only build as well: the checks of values
are made when a string is set, on any build. Everything that needs the allocator itself is
marked cuda.
"""
import ctypes.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from verified.probing.message_capture import observed  # the errors a child process returned, for the error index

MiB = 2**20
HEADERS = Path(torch.__file__).parent / "include"


def run_fresh(code, env_updates=None, timeout=120):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_NO_CUDA_MEMORY_CACHING",
                        "PYTORCH_KERNEL_CACHE_PATH", "XDG_CACHE_HOME", "USE_PYTORCH_KERNEL_CACHE")}
    env.update(env_updates or {})
    proc = subprocess.run([sys.executable, "-c", "import json, os, torch\n" + code],
                          capture_output=True, text=True, timeout=timeout, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


SET = """
import json
results = []
for value in {values!r}:
    try:
        torch._C._accelerator_setAllocatorSettings(value)
        results.append(["ok", torch._C._accelerator_getAllocatorSettings()])
    except Exception as e:
        results.append([type(e).__name__, str(e).splitlines()[0].strip()])
print(json.dumps(results))
"""


def set_settings(values):
    return run_fresh(SET.format(values=list(values)), timeout=60)


# ---------------------------------------------------------------- parsing, on any build

def note_errors(got):
    """The errors the child processes returned, as [type, message] pairs, noted once checked."""
    for kind, text in got:
        if kind != "ok":
            observed(kind, text)


@pytest.mark.claim("memory.cuda.alloc-conf-gc-threshold")
@pytest.mark.torch_version(">=2.12")  # torch._C._accelerator_setAllocatorSettings
@pytest.mark.timeout(60)
def test_gc_threshold_default_and_range():
    text = (HEADERS / "c10" / "core" / "AllocatorConfig.h").read_text()
    assert re.search(r"std::atomic<double> garbage_collection_threshold_\{0\};", text)
    got = set_settings(["garbage_collection_threshold:1.0", "garbage_collection_threshold:0.0",
                        "garbage_collection_threshold:0.8"])
    invalid = ["ValueError", "garbage_collect_threshold is invalid, set it in (0.0, 1.0)"]
    assert got == [invalid, invalid, ["ok", "garbage_collection_threshold:0.8"]]
    note_errors(got)


@pytest.mark.claim("memory.cuda.alloc-conf-max-split")
@pytest.mark.torch_version(">=2.12")
@pytest.mark.timeout(60)
def test_max_split_size_default_and_lower_bound():
    text = (HEADERS / "c10" / "core" / "AllocatorConfig.h").read_text()
    assert re.search(r"max_split_size_\{std::numeric_limits<size_t>::max\(\)\}", text)
    got = set_settings(["max_split_size_mb:10", "max_split_size_mb:20", "max_split_size_mb:100"])
    assert got == [["ValueError", "CachingAllocator option max_split_size_mb too small, must be >= 20"],
                   ["ok", "max_split_size_mb:20"], ["ok", "max_split_size_mb:100"]]
    note_errors(got)


@pytest.mark.claim("memory.cuda.alloc-conf-roundup-forms")
@pytest.mark.torch_version(">=2.12")
@pytest.mark.timeout(60)
def test_roundup_power2_divisions_forms():
    got = set_settings(["roundup_power2_divisions:4", "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]",
                        "roundup_power2_divisions:3",
                        "max_split_size_mb:100,roundup_power2_divisions:4,expandable_segments:True"])
    assert got == [["ok", "roundup_power2_divisions:4"],
                   ["ok", "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]"],
                   ["ValueError", "For roundups, the divisions has to be power of 2"],
                   ["ok", "max_split_size_mb:100,roundup_power2_divisions:4,expandable_segments:True"]]
    note_errors(got)


@pytest.mark.claim("memory.cuda.alloc-conf-option-defaults")
def test_option_defaults_in_the_headers():
    core = (HEADERS / "c10" / "core" / "AllocatorConfig.h").read_text()
    cuda = (HEADERS / "c10" / "cuda" / "CUDAAllocatorConfig.h").read_text()
    assert re.search(r"std::atomic<bool> use_expandable_segments_\{false\};", core)
    assert re.search(r"std::atomic<bool> pinned_use_background_threads_\{false\};", core)
    assert re.search(r"size_t pinned_max_round_threshold_\{std::numeric_limits<size_t>::max\(\)\};", core)
    assert re.search(r"size_t pinned_max_cached_size_\{std::numeric_limits<size_t>::max\(\)\};", core)
    assert re.search(r"std::atomic<bool> m_pinned_use_cuda_host_register\{false\};", cuda)
    assert re.search(r"std::atomic<size_t> m_pinned_num_register_threads\{1\};", cuda)
    assert re.search(r"std::atomic<bool> m_graph_capture_record_stream_reuse\{false\};", cuda)
    assert re.search(r"std::atomic<double> m_per_process_memory_fraction\{1\.0\};", cuda)
    assert re.search(r"std::atomic<bool> m_throw_on_cudamalloc_oom\{false\};", cuda)


@pytest.mark.claim("memory.cuda.alloc-conf-bool-values")
@pytest.mark.torch_version(">=2.12")
@pytest.mark.timeout(60)
def test_boolean_options_take_true_or_false():
    got = set_settings(["expandable_segments:yes", "expandable_segments:False"])
    assert got == [["ValueError", "Expected 'True' or 'False' at index 2 in ConfigTokenizer but got 'yes'"],
                   ["ok", "expandable_segments:False"]]
    note_errors(got)


# ---------------------------------------------------------------- the allocator on a GPU

@pytest.mark.claim("memory.cuda.backend-default")
@pytest.mark.devices("cuda")
@pytest.mark.timeout(180)
def test_allocator_backend(device):
    code = ("x = torch.ones(1000, device='cuda')\n"
            "print(json.dumps([torch.cuda.get_allocator_backend(), x.sum().item()]))")
    assert run_fresh(code) == ["native", 1000.0]
    assert run_fresh(code, {"PYTORCH_ALLOC_CONF": "backend:cudaMallocAsync"}) == ["cudaMallocAsync", 1000.0]


@pytest.mark.claim("memory.cuda.roundup-power2")
@pytest.mark.devices("cuda")
@pytest.mark.timeout(180)
def test_roundup_power2_divisions_rounds_large_requests(device):
    code = ("torch.cuda.empty_cache()\n"
            "a0 = torch.cuda.memory_allocated()\n"
            "x = torch.empty(1_200_000, dtype=torch.uint8, device='cuda')\n"
            "print(json.dumps(torch.cuda.memory_allocated() - a0))")
    assert run_fresh(code) == 1_200_128  # a multiple of 512
    # 4 divisions of [1 MiB, 2 MiB): 1, 1.25, 1.5, 1.75 MiB
    assert run_fresh(code, {"PYTORCH_ALLOC_CONF": "roundup_power2_divisions:4"}) == 1_310_720


@pytest.mark.claim("memory.cuda.no-caching")
@pytest.mark.devices("cuda")
@pytest.mark.timeout(180)
def test_no_cuda_memory_caching_bypasses_the_allocator(device):
    code = ("x = torch.ones(MB, dtype=torch.float32, device='cuda')\n"
            "print(json.dumps([x.sum().item(), torch.cuda.memory_allocated(), torch.cuda.memory_reserved()]))"
            ).replace("MB", str(MiB))
    cached = run_fresh(code)
    assert cached[0] == float(MiB) and cached[1] == 4 * MiB and cached[2] >= 4 * MiB
    uncached = run_fresh(code, {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"})
    assert uncached == [float(MiB), 0, 0]


PER_PROCESS_FRACTION = """
free, total = torch.cuda.mem_get_info()
try:
    torch.empty(int(total * 0.6), dtype=torch.uint8, device="cuda")
    out = "allocated"
except torch.OutOfMemoryError as e:
    out = "oom"
small = torch.ones(1000, device="cuda").sum().item()
print(json.dumps([out, small]))
"""


@pytest.mark.claim("memory.cuda.per-process-fraction")
@pytest.mark.devices("cuda")
@pytest.mark.timeout(180)
def test_per_process_memory_fraction_option(device):
    assert run_fresh(PER_PROCESS_FRACTION, {"PYTORCH_ALLOC_CONF": "per_process_memory_fraction:0.5"}) == ["oom", 1000.0]


SWAP_AFTER_USE = """
from torch.cuda.memory import CUDAPluggableAllocator, change_current_allocator
x = torch.zeros(10, device="cuda")
libc = CUDAPluggableAllocator(LIBC, "malloc", "free")  # never called: the swap is refused first
try:
    change_current_allocator(libc)
    out = "swapped"
except RuntimeError as e:
    out = str(e).splitlines()[0]
print(json.dumps(out))
"""


@pytest.mark.claim("memory.cuda.pluggable-swap-after-init")
@pytest.mark.devices("cuda")
@pytest.mark.timeout(180)
def test_allocator_cannot_be_swapped_once_used(device):
    libc = ctypes.util.find_library("c")
    assert libc
    out = run_fresh(SWAP_AFTER_USE.replace("LIBC", repr(libc)))
    assert out.startswith("Can't swap an already initialized allocator")


MEMPOOL = """
pool = torch.cuda.MemPool()
counts = [pool.use_count()]
nelem_1mb = 1024 * 1024 // 4
with torch.cuda.use_mem_pool(pool):
    out_0 = torch.randn(nelem_1mb, device="cuda")
    counts.append(pool.use_count())
counts.append(pool.use_count())
segments = []
with torch.cuda.use_mem_pool(pool):
    segments.append(len(pool.snapshot()))
    out_1 = torch.randn(nelem_1mb, device="cuda")
    segments.append(len(pool.snapshot()))
    out_2 = torch.randn(nelem_1mb, device="cuda")
    segments.append(len(pool.snapshot()))
outside = torch.randn(nelem_1mb, device="cuda")
in_pool = {seg["address"] for seg in pool.snapshot()}
outside_in_pool = any(a <= outside.data_ptr() < a + 2 * 1024 * 1024 for a in in_pool)
print(json.dumps([counts, segments, [s["total_size"] for s in pool.snapshot()], outside_in_pool]))
"""


@pytest.mark.claim("memory.cuda.mempool-use-count-and-segments")
@pytest.mark.devices("cuda")
@pytest.mark.timeout(180)
def test_mempool_use_count_and_snapshot(device):
    counts, segments, sizes, outside_in_pool = run_fresh(MEMPOOL)
    assert counts == [1, 2, 1]
    assert segments == [1, 1, 2]
    assert sizes == [2 * MiB, 2 * MiB]
    assert outside_in_pool is False


@pytest.mark.claim("memory.cuda.mempool-signature")
def test_mempool_use_on_oom_defaults_to_false():
    import inspect

    params = inspect.signature(torch.cuda.MemPool.__init__).parameters
    assert params["allocator"].default is None
    assert params["use_on_oom"].default is False


@pytest.mark.claim("memory.cuda.cufft-plan-cache")
@pytest.mark.devices("cuda")
def test_cufft_plan_cache(device):
    cache = torch.backends.cuda.cufft_plan_cache
    cache.clear()
    assert cache.max_size == 4096 and cache.size == 0
    torch.fft.fft(torch.randn(1000, dtype=torch.complex64, device=device))
    assert cache.size == 1
    torch.fft.fft(torch.randn(1000, dtype=torch.complex64, device=device))  # same geometry: the cached plan
    assert cache.size == 1
    torch.fft.fft(torch.randn(999, dtype=torch.complex64, device=device))
    assert cache.size == 2
    cache.clear()
    assert cache.size == 0
    per_device = cache[torch.cuda.current_device()]
    old = per_device.max_size
    try:
        per_device.max_size = 10
        assert cache.max_size == 10  # the same cache, reached by index
    finally:
        per_device.max_size = old


KERNEL_CACHE = """
x = torch.linspace(2.0, 3.0, 16, device="cuda")
y = torch.special.zeta(x, torch.ones_like(x))
print(json.dumps(bool(torch.isfinite(y).all())))
"""


def files_under(path):
    return [p for p in Path(path).rglob("*") if p.is_file()]


@pytest.mark.claim("memory.cuda.kernel-cache-path")
@pytest.mark.devices("cuda")
@pytest.mark.timeout(300)
def test_jit_kernel_cache_location(device, tmp_path):
    explicit, xdg, off = tmp_path / "explicit", tmp_path / "xdg", tmp_path / "off"
    for d in (explicit, xdg, off):
        d.mkdir()
    base = {"HOME": str(tmp_path / "home")}
    assert run_fresh(KERNEL_CACHE, {**base, "PYTORCH_KERNEL_CACHE_PATH": str(explicit)}, timeout=240) is True
    assert files_under(explicit)
    assert run_fresh(KERNEL_CACHE, {**base, "XDG_CACHE_HOME": str(xdg)}, timeout=240) is True
    assert files_under(xdg / "torch" / "kernels")
    assert run_fresh(KERNEL_CACHE, {**base, "XDG_CACHE_HOME": str(off), "USE_PYTORCH_KERNEL_CACHE": "0"},
                     timeout=240) is True
    assert files_under(off) == []
