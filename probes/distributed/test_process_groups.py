"""Probes for docs/distributed/process-groups.md.

One job of two real processes (ranks 0 and 1 on 127.0.0.1, Gloo backend, FileStore
rendezvous) runs every collective and store step; each rank reports what it saw. Each claim
has its own probe, which checks its part of the reports, so that a change in one behaviour
fails one claim; the job runs once per probe run (`_c10d_launch.shared_ranks`), not once per
claim.
"""

import _c10d_launch  # the 2-process launcher beside this file
import pytest

from verified.probing.message_capture import observed  # a message a rank returned, for the error index

COLLECTIVES = r'''
import time
import torch


r = {}
if RANK == 0:
    open("rank0-joining", "w").close()  # from here on, rank 0 is in init_process_group
else:  # join 2 s after rank 0 began to (not 2 s after this rank started: the torch imports differ)
    while not os.path.exists("rank0-joining"):
        time.sleep(0.01)
    time.sleep(2.0)
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


def listening(port):
    """Whether a socket on this machine listens on `port` (state 0A in /proc/net/tcp)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in open(table).read().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":
                return True
    return False


r["tcp_port_listening"] = listening(tcp.port)
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


def check_rank_world_size(collectives):
    r0, r1 = collectives
    assert (r0["rank"], r0["world_size"]) == (0, 2) and (r1["rank"], r1["world_size"]) == (1, 2)


def check_world_group_type(collectives):
    for r in collectives:
        assert r["group_type"] == "torch.distributed.distributed_c10d.ProcessGroup"
        assert r["cpu_backend"] == "ProcessGroupGloo"


def check_init_rendezvous(collectives):
    # init_process_group is a rendezvous: rank 0 waited for the late rank 1
    assert collectives[0]["init_seconds"] >= 1.5


def check_all_reduce(collectives):
    for r in collectives:
        assert r["all_reduce_returned"] == "None"
        assert r["all_reduce_sum"] == [3.0, 30.0]


def check_all_reduce_max(collectives):
    for r in collectives:
        assert r["all_reduce_max"] == [2.0]


def check_all_reduce_avg(collectives):
    for r in collectives:
        assert r["all_reduce_avg"] == [1.5]


def check_broadcast(collectives):
    r0, r1 = collectives
    assert r0["broadcast_from_1"] == r1["broadcast_from_1"] == [8.0, 8.0, 8.0]


def check_all_gather(collectives):
    r0, r1 = collectives
    assert r0["all_gather"] == r1["all_gather"] == [[0.0, 0.0], [1.0, 1.0]]


def check_async_work(collectives):
    for r in collectives:
        assert r["work_type"] == "Work" and r["work_wait"] is True and r["work_completed"] is True


def check_tcp_store(collectives):
    r0, r1 = collectives
    # a TCPStore asked for port 0 reports the port the system gave it: a listening socket,
    # the one rank 1 connected to
    assert r0["tcp_port_listening"] is True
    assert r0["tcp_port"] == r1["tcp_port"]
    assert r0["tcp_get"] == "hello from 1" and r1["tcp_get"] == "hello from 0"
    assert r0["tcp_get_type"] == r1["tcp_get_type"] == "bytes"


def check_get_waits(collectives):
    r0 = collectives[0]
    assert r0["late"] == "set after 1.5 s" and r0["late_wait_seconds"] >= 1.0  # get waited for the set


def check_add_atomic(collectives):
    r0, r1 = collectives
    assert sorted([r0["tcp_add"], r1["tcp_add"]]) == [5, 10]  # atomic: one rank saw 5, the other 10
    assert r0["tcp_counter_after_barrier"] == r1["tcp_counter_after_barrier"] == 10


def check_get_timeout(collectives):
    for r in collectives:
        name, mro, message = r["missing"]
        assert name == "DistStoreError" and "RuntimeError" in mro
        assert "wait timeout after 1000ms" in message and "never-set" in message
        assert r["missing_seconds"] >= 0.9
        observed("torch.distributed.DistStoreError", message)


def check_default_store(collectives):
    # the default group's store: the rendezvous FileStore, wrapped in PrefixStores
    chain = collectives[0]["default_store_chain"]
    assert chain[0] == "PrefixStore" and chain[-1] == "FileStore"
    assert set(chain[:-1]) == {"PrefixStore"}


@pytest.mark.claim("distributed.pg.rank-world-size")
@pytest.mark.timeout(180)
def test_rank_world_size():
    check_rank_world_size(_c10d_launch.shared_ranks(COLLECTIVES, world_size=2, timeout=120))


@pytest.mark.claim("distributed.pg.world-group-type")
@pytest.mark.timeout(180)
def test_world_group_type():
    check_world_group_type(_c10d_launch.shared_ranks(COLLECTIVES, world_size=2, timeout=120))


@pytest.mark.claim("distributed.pg.init-rendezvous")
@pytest.mark.timeout(180)
def test_init_rendezvous():
    check_init_rendezvous(_c10d_launch.shared_ranks(COLLECTIVES, world_size=2, timeout=120))


@pytest.mark.claim("distributed.pg.all-reduce")
@pytest.mark.timeout(180)
def test_all_reduce():
    check_all_reduce(_c10d_launch.shared_ranks(COLLECTIVES, world_size=2, timeout=120))


@pytest.mark.claim("distributed.pg.all-reduce-max")
@pytest.mark.timeout(180)
def test_all_reduce_max():
    check_all_reduce_max(_c10d_launch.shared_ranks(COLLECTIVES, world_size=2, timeout=120))


@pytest.mark.claim("distributed.pg.all-reduce-avg")
@pytest.mark.timeout(180)
def test_all_reduce_avg():
    check_all_reduce_avg(_c10d_launch.shared_ranks(COLLECTIVES, world_size=2, timeout=120))


@pytest.mark.claim("distributed.pg.broadcast-all-gather")
@pytest.mark.timeout(180)
def test_broadcast():
    check_broadcast(_c10d_launch.shared_ranks(COLLECTIVES, world_size=2, timeout=120))


@pytest.mark.claim("distributed.pg.all-gather")
@pytest.mark.timeout(180)
def test_all_gather():
    check_all_gather(_c10d_launch.shared_ranks(COLLECTIVES, world_size=2, timeout=120))


@pytest.mark.claim("distributed.pg.async-work")
@pytest.mark.timeout(180)
def test_async_work():
    check_async_work(_c10d_launch.shared_ranks(COLLECTIVES, world_size=2, timeout=120))


@pytest.mark.claim("distributed.store.tcp")
@pytest.mark.timeout(180)
def test_tcp_store():
    check_tcp_store(_c10d_launch.shared_ranks(COLLECTIVES, world_size=2, timeout=120))


@pytest.mark.claim("distributed.store.get-waits")
@pytest.mark.timeout(180)
def test_get_waits():
    check_get_waits(_c10d_launch.shared_ranks(COLLECTIVES, world_size=2, timeout=120))


@pytest.mark.claim("distributed.store.add-atomic")
@pytest.mark.timeout(180)
def test_add_atomic():
    check_add_atomic(_c10d_launch.shared_ranks(COLLECTIVES, world_size=2, timeout=120))


@pytest.mark.claim("distributed.store.get-timeout")
@pytest.mark.timeout(180)
def test_get_timeout():
    check_get_timeout(_c10d_launch.shared_ranks(COLLECTIVES, world_size=2, timeout=120))


@pytest.mark.claim("distributed.store.default-store")
@pytest.mark.timeout(180)
def test_default_store():
    check_default_store(_c10d_launch.shared_ranks(COLLECTIVES, world_size=2, timeout=120))
