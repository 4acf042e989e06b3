"""Probes for docs/distributed/process-groups.md.

One probe starts two real processes (ranks 0 and 1 on 127.0.0.1, Gloo backend, FileStore
rendezvous) and runs every collective and store check in that one job; each rank reports
what it saw and the probe asserts on both reports.
"""

import pytest

import _c10d_launch  # the 2-process launcher beside this file


COLLECTIVES = r'''
import time
import torch


r = {}
if RANK == 1:
    time.sleep(2.0)  # join late: rank 0 must wait in init_process_group
started = time.monotonic()
dist = init()
r["init_seconds"] = time.monotonic() - started
r["rank"], r["world_size"] = dist.get_rank(), dist.get_world_size()
world = dist.group.WORLD
r["group_type"] = type(world).__module__ + "." + type(world).__name__
r["cpu_backend"] = type(world._get_backend(torch.device("cpu"))).__name__

t = torch.tensor([RANK + 1.0, 10.0 * (RANK + 1)])
r["all_reduce_returned"] = repr(dist.all_reduce(t))
r["all_reduce_sum"] = t.tolist()
t = torch.tensor([RANK + 1.0]); dist.all_reduce(t, op=dist.ReduceOp.MAX); r["all_reduce_max"] = t.tolist()
t = torch.tensor([RANK + 1.0]); dist.all_reduce(t, op=dist.ReduceOp.AVG); r["all_reduce_avg"] = t.tolist()

b = torch.full((3,), 7.0 * RANK + 1.0)
dist.broadcast(b, src=1)
r["broadcast_from_1"] = b.tolist()

parts = [torch.zeros(2) for _ in range(WORLD_SIZE)]
dist.all_gather(parts, torch.full((2,), float(RANK)))
r["all_gather"] = [p.tolist() for p in parts]

work = dist.all_reduce(torch.ones(2), async_op=True)
r["work_type"] = type(work).__name__
r["work_wait"] = work.wait()
r["work_completed"] = work.is_completed()

from datetime import timedelta
store = dist.distributed_c10d._get_default_store()
chain = [type(store).__name__]
while hasattr(store, "underlying_store"):
    store = store.underlying_store
    chain.append(type(store).__name__)
r["default_store_chain"] = chain

default = dist.distributed_c10d._get_default_store()
if RANK == 0:
    tcp = dist.TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False, timeout=timedelta(seconds=30))
    default.set("tcp_port", str(tcp.port))
else:
    tcp = dist.TCPStore("127.0.0.1", int(default.get("tcp_port")), is_master=False, timeout=timedelta(seconds=30))
r["tcp_port"] = tcp.port
tcp.set(f"greeting/{RANK}", f"hello from {RANK}")
value = tcp.get(f"greeting/{1 - RANK}")  # blocks until the other rank has set it
r["tcp_get_type"] = type(value).__name__
r["tcp_get"] = value.decode()
if RANK == 1:  # rank 0 asks first; its get must wait until this set
    time.sleep(1.5)
    tcp.set("late", "set after 1.5 s")
else:
    started = time.monotonic()
    r["late"] = tcp.get("late").decode()
    r["late_wait_seconds"] = time.monotonic() - started
r["tcp_add"] = tcp.add("counter", 5)
dist.barrier()
r["tcp_counter_after_barrier"] = tcp.add("counter", 0)
tcp.set_timeout(timedelta(seconds=1))
started = time.monotonic()
try:
    tcp.get("never-set")
    r["missing"] = None
except Exception as exc:
    r["missing"] = [type(exc).__name__, [c.__name__ for c in type(exc).__mro__], str(exc)]
r["missing_seconds"] = time.monotonic() - started
dist.barrier()
dist.destroy_process_group()
report(r)
'''


@pytest.mark.claim("distributed.pg.rank-world-size")
@pytest.mark.claim("distributed.pg.init-rendezvous")
@pytest.mark.claim("distributed.pg.all-reduce")
@pytest.mark.claim("distributed.pg.broadcast-all-gather")
@pytest.mark.claim("distributed.pg.async-work")
@pytest.mark.claim("distributed.store.tcp")
@pytest.mark.claim("distributed.store.default-store")
@pytest.mark.timeout(180)
def test_two_gloo_processes(tmp_path):
    collectives = _c10d_launch.run_ranks(tmp_path, COLLECTIVES, world_size=2, timeout=120)
    r0, r1 = collectives
    # ranks and the group object
    assert (r0["rank"], r0["world_size"]) == (0, 2) and (r1["rank"], r1["world_size"]) == (1, 2)
    for r in collectives:
        assert r["group_type"] == "torch.distributed.distributed_c10d.ProcessGroup"
        assert r["cpu_backend"] == "ProcessGroupGloo"
    # init_process_group is a rendezvous: rank 0 waited for the late rank 1
    assert r0["init_seconds"] >= 1.5
    # all_reduce: in place on every rank, returns None; SUM by default, MAX and AVG too
    for r in collectives:
        assert r["all_reduce_returned"] == "None"
        assert r["all_reduce_sum"] == [3.0, 30.0]
        assert r["all_reduce_max"] == [2.0]
        assert r["all_reduce_avg"] == [1.5]
    # broadcast copies the source rank's tensor into everyone's; all_gather lists in rank order
    assert r0["broadcast_from_1"] == r1["broadcast_from_1"] == [8.0, 8.0, 8.0]
    assert r0["all_gather"] == r1["all_gather"] == [[0.0, 0.0], [1.0, 1.0]]
    # async_op=True returns a Work handle to wait on
    for r in collectives:
        assert r["work_type"] == "Work" and r["work_wait"] is True and r["work_completed"] is True
    # a TCPStore on port 0 got a real port; both ranks reached the same server
    assert r0["tcp_port"] == r1["tcp_port"] > 0
    assert r0["tcp_get"] == "hello from 1" and r1["tcp_get"] == "hello from 0"
    assert r0["tcp_get_type"] == "bytes"
    assert r0["late"] == "set after 1.5 s" and r0["late_wait_seconds"] >= 1.0  # get waited for the set
    assert sorted([r0["tcp_add"], r1["tcp_add"]]) == [5, 10]  # atomic: one rank saw 5, the other 10
    assert r0["tcp_counter_after_barrier"] == r1["tcp_counter_after_barrier"] == 10
    for r in collectives:
        name, mro, message = r["missing"]
        assert name == "DistStoreError" and "RuntimeError" in mro
        assert "wait timeout after 1000ms" in message and "never-set" in message
        assert r["missing_seconds"] >= 0.9
    # the default group's store: the rendezvous FileStore, wrapped in PrefixStores
    assert r0["default_store_chain"][0] == "PrefixStore"
    assert r0["default_store_chain"][-1] == "FileStore"
    assert set(r0["default_store_chain"][:-1]) == {"PrefixStore"}
