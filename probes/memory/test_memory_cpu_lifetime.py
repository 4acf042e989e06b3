"""Probes for docs/memory/cpu-lifetime.md."""
import gc
import re
import weakref
from pathlib import Path

import pytest
import torch
from torch.multiprocessing.reductions import StorageWeakRef


class gc_paused:
    """Switch off Python's cycle collector, so that only reference counting frees."""

    def __enter__(self):
        self.was_enabled = gc.isenabled()
        gc.disable()
        return self

    def __exit__(self, *exc):
        if self.was_enabled:
            gc.enable()


@pytest.mark.claim("memory.cpu.refcount-frees")
def test_last_reference_frees_storage_at_once(device):
    with gc_paused():
        t = torch.zeros(10_000, device=device)
        storage_ref = StorageWeakRef(t.untyped_storage())
        tensor_ref = weakref.ref(t)
        alias = t  # a second reference to the same tensor object
        del t
        assert not storage_ref.expired() and tensor_ref() is not None
        del alias  # the last one: freed here, no collector involved
        assert storage_ref.expired()
        assert tensor_ref() is None


@pytest.mark.claim("memory.cpu.view-pins-storage")
def test_view_pins_the_whole_storage(device):
    with gc_paused():
        big = torch.zeros(1_000_000, device=device)
        ref = StorageWeakRef(big.untyped_storage())
        view = big[:3]
        copy = big[:3].clone()
        del big
        assert not ref.expired()  # the 4 MB storage lives on through a 3-element view
        assert view.untyped_storage().nbytes() == 4_000_000
        del view
        assert ref.expired()  # the clone did not keep it
        assert copy.untyped_storage().nbytes() == 12


@pytest.mark.claim("memory.cpu.graph-saved-pins")
def test_saved_tensor_outlives_del_until_backward(device):
    with gc_paused():
        w = torch.ones(1000, device=device, requires_grad=True)
        h = torch.randn(1000, device=device)
        loss = (h * w).sum()  # MulBackward0 saves h, needed for the gradient of w
        ref = StorageWeakRef(h.untyped_storage())
        del h
        assert not ref.expired()  # held by the graph
        loss.backward(retain_graph=True)
        assert not ref.expired()  # kept for another backward
        loss.backward()
        assert ref.expired()  # this backward released the saved tensor
        assert loss.grad_fn is not None  # while the graph's nodes are still reachable

        h2 = torch.randn(1000, device=device)
        loss2 = (h2 * w).sum()
        ref2 = StorageWeakRef(h2.untyped_storage())
        del h2
        assert not ref2.expired()
        del loss2  # dropping the output drops the graph, and with it the saved tensor
        assert ref2.expired()


class Holder:
    pass


@pytest.mark.claim("memory.cpu.cycle-needs-gc")
def test_reference_cycle_waits_for_the_collector():
    with gc_paused():
        holder = Holder()
        holder.t = torch.zeros(10_000)
        holder.me = holder  # a cycle: refcount never reaches zero
        ref = StorageWeakRef(holder.t.untyped_storage())
        del holder
        assert not ref.expired()
        gc.collect()
        assert ref.expired()


@pytest.mark.claim("memory.cpu.alignment-64")
def test_cpu_allocations_are_64_byte_aligned():
    sizes = [1, 3, 7, 17, 100, 1001, 4097, 123_457, 1_000_003]
    for dtype in (torch.uint8, torch.float32, torch.float64):
        for n in sizes:
            t = torch.empty(n, dtype=dtype)
            assert t.untyped_storage().data_ptr() % 64 == 0, (dtype, n)
    text = (Path(torch.__file__).parent / "include" / "c10" / "core" / "alignment.h").read_text()
    assert re.search(r"constexpr size_t gAlignment = 64;", text)
    # memory the CPU allocator did not make keeps the address it was given
    array = torch.zeros(100, dtype=torch.uint8).numpy()  # an array over a 64-aligned CPU storage
    assert torch.from_numpy(array[1:]).untyped_storage().data_ptr() % 64 == 1
    assert torch.frombuffer(memoryview(array)[3:], dtype=torch.uint8).untyped_storage().data_ptr() % 64 == 3


@pytest.mark.claim("memory.cpu.oom-error-type")
def test_cpu_allocation_failure_is_a_plain_runtime_error():
    assert torch.cuda.OutOfMemoryError is torch.OutOfMemoryError
    assert issubclass(torch.OutOfMemoryError, RuntimeError)
    with pytest.raises(RuntimeError) as info:
        torch.empty(2**60, dtype=torch.uint8)  # one exbibyte
    assert not isinstance(info.value, torch.OutOfMemoryError)
    message = str(info.value)
    assert "DefaultCPUAllocator: can't allocate memory" in message
    assert f"you tried to allocate {2**60} bytes" in message
    assert re.search(r"\[enforce fail at alloc_cpu\.cpp:\d+\]", message)
