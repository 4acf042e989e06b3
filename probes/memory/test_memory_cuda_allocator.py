"""Probes for docs/memory/cuda-allocator.md.

The CUDA probes start from a clean allocator: `synchronize()` then `empty_cache()`, which
returns every segment with no live block in it. Each probe runs in a fresh process (forked
from a parent that never touched CUDA), so no other tensor is alive on the device.
"""
import json
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

KiB, MiB = 2**10, 2**20
HEADERS = Path(torch.__file__).parent / "include"


def fresh():
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def stat(key):
    return torch.cuda.memory_stats()[key]


def segment_of(ptr, segments=None):
    """The allocator segment (a cudaMalloc'd range) that contains address `ptr`."""
    for seg in torch.cuda.memory_snapshot() if segments is None else segments:
        if seg["address"] <= ptr < seg["address"] + seg["total_size"]:
            return seg
    raise AssertionError(f"no segment contains {ptr:#x}")


def block_at(seg, ptr):
    return next(b for b in seg["blocks"] if b["address"] == ptr)


def run_python(code, env_updates, timeout=120):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF")}
    env.update(env_updates)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


# ---------------------------------------------------------------- CPU-side facts about the API

STATS_BEFORE_INIT = """
import json, torch
out = {"init_before": torch.cuda.is_initialized(),
       "allocated": torch.cuda.memory_allocated(), "reserved": torch.cuda.memory_reserved(),
       "peak": torch.cuda.max_memory_allocated(), "stats": dict(torch.cuda.memory_stats()),
       "empty_cache": torch.cuda.empty_cache()}
out["init_after"] = torch.cuda.is_initialized()
print(json.dumps(out))
"""


@pytest.mark.claim("memory.cuda.stats-read-the-cache")
@pytest.mark.timeout(60)
def test_statistics_do_not_initialise_cuda():
    out = json.loads(run_python(STATS_BEFORE_INIT, {}, timeout=60))
    assert out == {"init_before": False, "allocated": 0, "reserved": 0, "peak": 0, "stats": {},
                   "empty_cache": None, "init_after": False}


@pytest.mark.claim("memory.cuda.stats-api")
def test_statistics_api_ships_on_every_build():
    for name in ("memory_allocated", "memory_reserved", "max_memory_allocated", "reset_peak_memory_stats",
                 "empty_cache", "memory_stats", "memory_snapshot", "memory_summary", "mem_get_info"):
        assert callable(getattr(torch.cuda, name)), name
    for name in ("_record_memory_history", "_snapshot", "_dump_snapshot"):
        assert callable(getattr(torch.cuda.memory, name)), name
    assert (HEADERS / "c10" / "cuda" / "CUDACachingAllocator.h").is_file()


@pytest.mark.claim("memory.cuda.size-constants")
def test_allocator_size_constants_in_the_header():
    text = (HEADERS / "c10" / "core" / "AllocatorConfig.h").read_text()
    found = {name: int(value) for name, value in re.findall(r"constexpr size_t (k\w+) = (\d+);", text)}
    assert found == {"kSmallBuffer": 2 * MiB, "kMinBlockSize": 512, "kSmallSize": 1 * MiB,
                     "kMinLargeAlloc": 10 * MiB, "kRoundLarge": 2 * MiB}
    assert re.search(r"large_segment_size_\{20971520\}", text)  # 20 MiB


READ_SETTINGS = """
import os, torch
first = torch._C._accelerator_getAllocatorSettings()
os.environ["PYTORCH_ALLOC_CONF"] = "max_split_size_mb:128"
second = torch._C._accelerator_getAllocatorSettings()
torch._C._accelerator_setAllocatorSettings("expandable_segments:False")
third = torch._C._accelerator_getAllocatorSettings()
print(repr((first, second, third)))
"""


@pytest.mark.claim("memory.cuda.alloc-conf-read-once")
@pytest.mark.torch_version(">=2.12")  # torch._C._accelerator_getAllocatorSettings is absent from 2.9.1-2.11.0
@pytest.mark.timeout(60)
def test_allocator_settings_are_read_once():
    out = run_python(READ_SETTINGS, {"PYTORCH_ALLOC_CONF": "expandable_segments:True"}, timeout=60)
    first, second, third = eval(out)  # noqa: S307 - our own repr of three strings
    assert first == "expandable_segments:True"
    assert second == first  # changing the environment later has no effect
    assert third == "expandable_segments:False"  # the runtime setter does


@pytest.mark.claim("memory.cuda.alloc-conf-precedence")
@pytest.mark.torch_version(">=2.12")  # the same binding
@pytest.mark.timeout(60)
def test_cuda_specific_variable_wins_when_both_are_set():
    code = "import torch; print(torch._C._accelerator_getAllocatorSettings())"
    both = {"PYTORCH_ALLOC_CONF": "max_split_size_mb:32", "PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:64"}
    assert run_python(code, both, timeout=60).strip() == "max_split_size_mb:64"
    # the header's own comment says the opposite
    text = (HEADERS / "c10" / "core" / "AllocatorConfig.h").read_text()
    assert "`PYTORCH_CUDA_ALLOC_CONF` is also supported\n *     with lower priority." in text


# ---------------------------------------------------------------- the caching allocator on a GPU

@pytest.mark.claim("memory.cuda.allocated-vs-reserved")
@pytest.mark.devices("cuda")
def test_allocated_counts_blocks_reserved_counts_segments(device):
    fresh()
    a0, r0 = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
    x = torch.empty(1_000_000, dtype=torch.float32, device=device)  # 4,000,000 bytes
    a1, r1 = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
    assert a1 - a0 == 4_000_256  # rounded up to a multiple of 512
    assert r1 - r0 == 20 * MiB  # a new 20 MiB segment, most of it still free
    assert r1 >= a1
    seg = segment_of(x.data_ptr())
    assert seg["segment_type"] == "large" and seg["total_size"] == 20 * MiB


@pytest.mark.claim("memory.cuda.del-returns-to-cache")
@pytest.mark.devices("cuda")
def test_del_keeps_the_segment_and_reuses_it(device):
    fresh()
    x = torch.empty(1_000_000, dtype=torch.float32, device=device)
    ptr = x.data_ptr()
    a1, r1 = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
    mallocs, segments = stat("num_device_alloc"), stat("segment.all.current")
    del x
    assert torch.cuda.memory_allocated() == a1 - 4_000_256
    assert torch.cuda.memory_reserved() == r1  # nothing went back to the driver
    y = torch.empty(1_000_000, dtype=torch.float32, device=device)
    assert y.data_ptr() == ptr  # the cached block is handed out again
    assert stat("num_device_alloc") == mallocs  # without a new cudaMalloc
    assert stat("segment.all.current") == segments


@pytest.mark.claim("memory.cuda.empty-cache-frees-unused-segments")
@pytest.mark.devices("cuda")
def test_empty_cache_returns_free_segments(device):
    fresh()
    r0, segments0 = torch.cuda.memory_reserved(), stat("segment.all.current")
    x = torch.empty(1_000_000, dtype=torch.float32, device=device)
    ptr = x.data_ptr()
    r1 = torch.cuda.memory_reserved()
    del x
    assert torch.cuda.memory_reserved() == r1
    a_before = torch.cuda.memory_allocated()
    torch.cuda.empty_cache()
    assert torch.cuda.memory_reserved() == r0
    assert stat("segment.all.current") == segments0
    assert torch.cuda.memory_allocated() == a_before
    assert not any(s["address"] <= ptr < s["address"] + s["total_size"] for s in torch.cuda.memory_snapshot())


@pytest.mark.claim("memory.cuda.empty-cache-keeps-live")
@pytest.mark.devices("cuda")
def test_empty_cache_cannot_release_a_segment_with_a_live_block(device):
    fresh()
    r0 = torch.cuda.memory_reserved()
    x = torch.empty(1_000_000, dtype=torch.float32, device=device)  # a 4 MB block in a 20 MiB segment
    torch.cuda.empty_cache()
    assert torch.cuda.memory_reserved() == r0 + 20 * MiB  # the whole segment stays, free part included
    seg = segment_of(x.data_ptr())
    assert [b["state"] for b in seg["blocks"]] == ["active_allocated", "inactive"]
    assert seg["blocks"][1]["size"] == 20 * MiB - 4_000_256
    del x
    torch.cuda.empty_cache()
    assert torch.cuda.memory_reserved() == r0


@pytest.mark.claim("memory.cuda.round-512")
@pytest.mark.devices("cuda")
def test_small_requests_are_rounded_to_512_bytes(device):
    fresh()
    kept, deltas, requested, small = [], [], [], []
    for numel in (1, 129, 128, 1000):  # 4, 516, 512 and 4000 bytes
        a, q, s = stat("allocated_bytes.all.current"), stat("requested_bytes.all.current"), \
            stat("allocated_bytes.small_pool.current")
        kept.append(torch.empty(numel, dtype=torch.float32, device=device))
        deltas.append(stat("allocated_bytes.all.current") - a)
        requested.append(stat("requested_bytes.all.current") - q)
        small.append(stat("allocated_bytes.small_pool.current") - s)
    assert deltas == [512, 1024, 512, 4096]
    assert requested == [4, 516, 512, 4000]  # what was asked for, before rounding
    assert small == deltas  # all served by the small pool


@pytest.mark.claim("memory.cuda.pools-and-segment-sizes")
@pytest.mark.devices("cuda")
def test_pool_and_segment_size_by_request_size(device):
    fresh()
    big = torch.empty(11 * MiB, dtype=torch.uint8, device=device)  # >= 10 MiB
    mid = torch.empty(4 * MiB, dtype=torch.uint8, device=device)  # between 1 and 10 MiB
    one = torch.empty(1 * MiB, dtype=torch.uint8, device=device)  # exactly 1 MiB
    tiny = torch.empty(1000, dtype=torch.uint8, device=device)
    segments = torch.cuda.memory_snapshot()
    kinds = {name: (segment_of(t.data_ptr(), segments)["segment_type"],
                    segment_of(t.data_ptr(), segments)["total_size"])
             for name, t in {"big": big, "mid": mid, "one": one, "tiny": tiny}.items()}
    assert kinds == {"big": ("large", 12 * MiB), "mid": ("large", 20 * MiB),
                     "one": ("small", 2 * MiB), "tiny": ("small", 2 * MiB)}
    assert segment_of(one.data_ptr(), segments)["address"] == segment_of(tiny.data_ptr(), segments)["address"]


@pytest.mark.claim("memory.cuda.large-remainder-not-split")
@pytest.mark.devices("cuda")
def test_small_remainder_of_a_large_segment_stays_in_the_block(device):
    fresh()
    a, q = stat("allocated_bytes.all.current"), stat("requested_bytes.all.current")
    big = torch.empty(11 * MiB, dtype=torch.uint8, device=device)
    assert stat("allocated_bytes.all.current") - a == 12 * MiB  # the 1 MiB remainder was not split off
    assert stat("requested_bytes.all.current") - q == 11 * MiB
    seg = segment_of(big.data_ptr())
    assert [(b["size"], b["requested_size"], b["state"]) for b in seg["blocks"]] == \
        [(12 * MiB, 11 * MiB, "active_allocated")]


@pytest.mark.claim("memory.cuda.peak-stats")
@pytest.mark.devices("cuda")
def test_peak_is_a_high_water_mark_until_reset(device):
    fresh()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    assert torch.cuda.max_memory_allocated() == base
    x = torch.empty(8 * MiB, dtype=torch.uint8, device=device)
    del x
    assert torch.cuda.memory_allocated() == base
    assert torch.cuda.max_memory_allocated() == base + 8 * MiB  # the peak remembers
    assert torch.cuda.max_memory_reserved() >= base + 8 * MiB
    torch.cuda.reset_peak_memory_stats()
    assert torch.cuda.max_memory_allocated() == base


@pytest.mark.claim("memory.cuda.record-history")
@pytest.mark.devices("cuda")
def test_history_records_each_allocation_with_its_stack(device, tmp_path):
    fresh()
    torch.cuda.memory._record_memory_history(enabled="all", context="all", stacks="python", max_entries=10_000)
    try:
        x = torch.empty(3000, dtype=torch.uint8, device=device)
        snap = torch.cuda.memory._snapshot()
        path = tmp_path / "snapshot.pickle"
        torch.cuda.memory._dump_snapshot(str(path))
    finally:
        torch.cuda.memory._record_memory_history(enabled=None)
    here = os.path.basename(__file__)
    trace = snap["device_traces"][x.device.index]
    allocs = [e for e in trace if e["action"] == "alloc" and e["addr"] == x.data_ptr()]
    assert len(allocs) == 1 and allocs[0]["size"] == 3000
    assert any(os.path.basename(f["filename"]) == here for f in allocs[0]["frames"])
    block = block_at(segment_of(x.data_ptr(), snap["segments"]), x.data_ptr())
    assert block["state"] == "active_allocated" and block["requested_size"] == 3000 and block["size"] == 3072
    assert any(os.path.basename(f["filename"]) == here for f in block["frames"])
    with open(path, "rb") as f:
        dumped = pickle.load(f)
    assert {"segments", "device_traces"} <= set(dumped)


EXPANDABLE = """
import json, torch
MiB = 2**20
a = torch.empty(30 * MiB, dtype=torch.uint8, device="cuda")
b = torch.empty(50 * MiB, dtype=torch.uint8, device="cuda")
def seg(p):
    return next(s for s in torch.cuda.memory_snapshot() if s["address"] <= p < s["address"] + s["total_size"])
print(json.dumps({"same": seg(a.data_ptr())["address"] == seg(b.data_ptr())["address"],
                  "expandable": [seg(a.data_ptr())["is_expandable"], seg(b.data_ptr())["is_expandable"]],
                  "gap": b.data_ptr() - a.data_ptr()}))
"""


@pytest.mark.claim("memory.cuda.expandable-segments")
@pytest.mark.devices("cuda")
@pytest.mark.timeout(240)
def test_expandable_segments_grow_one_segment(device):
    grown = json.loads(run_python(EXPANDABLE, {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}))
    assert grown == {"same": True, "expandable": [True, True], "gap": 30 * MiB}
    plain = json.loads(run_python(EXPANDABLE, {}))
    assert plain["same"] is False and plain["expandable"] == [False, False]


@pytest.mark.claim("memory.cuda.oom")
@pytest.mark.devices("cuda")
def test_out_of_memory_error_and_counter(device):
    fresh()
    r0 = torch.cuda.memory_reserved()
    cached = torch.empty(1_000_000, dtype=torch.float32, device=device)
    del cached  # leaves a free 20 MiB segment in the cache
    assert torch.cuda.memory_reserved() == r0 + 20 * MiB
    a0, ooms = torch.cuda.memory_allocated(), stat("num_ooms")
    with pytest.raises(torch.OutOfMemoryError) as info:
        torch.empty(2**50, dtype=torch.uint8, device=device)  # one pebibyte
    message = str(info.value)
    assert message.startswith("CUDA out of memory. Tried to allocate")
    assert "is reserved by PyTorch but unallocated" in message
    assert isinstance(info.value, RuntimeError)
    assert stat("num_ooms") == ooms + 1
    assert torch.cuda.memory_allocated() == a0
    assert torch.cuda.memory_reserved() == r0  # the cached segment was released before raising
    x = torch.empty(1000, device=device)  # the allocator still works afterwards
    assert x.numel() == 1000
