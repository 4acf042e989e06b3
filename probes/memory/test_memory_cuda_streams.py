"""Probes for docs/memory/cuda-streams.md (all need a GPU).

`torch.cuda._sleep(cycles)` launches a kernel that spins for that many GPU clock cycles:
a stand-in for long work whose duration does not depend on data. 10**9 cycles is about half
a second at 2 GHz.
"""
import time

import pytest
import torch

MiB = 2**20
SPIN = 10**9


def fresh():
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def warm_up():
    torch.cuda._sleep(1000)  # load the kernel once, so later launches are plain launches
    torch.cuda.synchronize()


def segment_of(ptr):
    for seg in torch.cuda.memory_snapshot():
        if seg["address"] <= ptr < seg["address"] + seg["total_size"]:
            return seg
    raise AssertionError(f"no segment contains {ptr:#x}")


@pytest.mark.claim("memory.cuda.async-timing")
@pytest.mark.devices("cuda")
def test_wall_clock_without_synchronize_measures_the_launch(device):
    warm_up()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0 = time.perf_counter()
    start.record()
    torch.cuda._sleep(SPIN)
    end.record()
    launched = time.perf_counter() - t0  # control is back: the kernel is only queued
    torch.cuda.synchronize()
    finished = time.perf_counter() - t0
    on_gpu = start.elapsed_time(end) / 1000  # milliseconds -> seconds
    assert finished > 0.05
    assert launched < finished / 10
    assert on_gpu > 10 * launched
    assert on_gpu <= finished * 1.05


@pytest.mark.claim("memory.cuda.item-synchronizes")
@pytest.mark.devices("cuda")
def test_host_reads_wait_for_queued_work(device):
    warm_up()
    x = torch.ones(1, device=device)
    for read, expected in ((lambda t: t.item(), 2.0), (lambda t: t.cpu(), torch.tensor([2.0])),
                           (lambda t: t.tolist(), [2.0])):
        t0 = time.perf_counter()
        torch.cuda._sleep(SPIN)
        y = x + 1  # queued behind the spin on the same stream
        launched = time.perf_counter() - t0
        value = read(y)  # copies to the host, so it must wait for the spin and the add
        waited = time.perf_counter() - t0
        assert (torch.equal(value, expected) if isinstance(value, torch.Tensor) else value == expected)
        assert waited > 0.05 and waited > 10 * launched


@pytest.mark.claim("memory.cuda.per-stream-cache")
@pytest.mark.devices("cuda")
def test_freed_block_is_reused_only_on_its_stream(device):
    fresh()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        a = torch.empty(4 * MiB, dtype=torch.uint8, device=device)
    ptr = a.data_ptr()
    del a  # back into the cache, tagged with `side`
    b = torch.empty(4 * MiB, dtype=torch.uint8, device=device)  # default stream
    assert b.data_ptr() != ptr
    assert segment_of(b.data_ptr())["address"] != segment_of(ptr)["address"]
    with torch.cuda.stream(side):
        c = torch.empty(4 * MiB, dtype=torch.uint8, device=device)
    assert c.data_ptr() == ptr


def side_stream_reads(x, side):
    """Queue, on `side`, a long spin and then a read of x; returns the read's result."""
    side.wait_stream(torch.cuda.current_stream())  # x is filled before side starts
    with torch.cuda.stream(side):
        torch.cuda._sleep(SPIN)
        return x * 2


@pytest.mark.claim("memory.cuda.cross-stream-reuse-race")
@pytest.mark.devices("cuda")
def test_without_record_stream_the_block_is_reused_while_read(device):
    warm_up()
    fresh()
    side = torch.cuda.Stream()
    x = torch.ones(MiB, device=device)  # 4 MiB on the default stream
    ptr = x.data_ptr()
    y = side_stream_reads(x, side)
    del x  # the allocator knows nothing of the pending read
    z = torch.empty(MiB, device=device)
    assert z.data_ptr() == ptr  # handed out again at once
    z.fill_(-1.0)  # runs on the default stream while `side` is still spinning
    side.synchronize()
    assert torch.equal(y, torch.full_like(y, -2.0))  # the side stream read the new tensor's values


@pytest.mark.claim("memory.cuda.record-stream")
@pytest.mark.devices("cuda")
def test_record_stream_defers_reuse_until_the_stream_is_done(device):
    warm_up()
    fresh()
    side = torch.cuda.Stream()
    x = torch.ones(MiB, device=device)
    ptr = x.data_ptr()
    y = side_stream_reads(x, side)
    x.record_stream(side)
    a_before = torch.cuda.memory_allocated()
    del x
    assert torch.cuda.memory_allocated() == a_before - 4 * MiB  # no longer counted as allocated ...
    seg = segment_of(ptr)
    state = next(b["state"] for b in seg["blocks"] if b["address"] == ptr)
    assert state == "active_pending_free"  # ... but not free either
    z = torch.empty(MiB, device=device)
    assert z.data_ptr() != ptr
    z.fill_(-1.0)
    side.synchronize()
    assert torch.equal(y, torch.full_like(y, 2.0))  # the read saw the original values
    w = torch.empty(MiB, device=device)  # the next allocation processes the finished event
    assert w.data_ptr() == ptr
