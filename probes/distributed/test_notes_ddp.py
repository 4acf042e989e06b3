"""Probes for the claims that check PyTorch's DDP design note (docs/guide/official-notes/ddp.md).

The multi-process probes start two real processes with the launcher beside this file
(Gloo on 127.0.0.1, FileStore rendezvous); the others run in the probe's own process, where
a group, if any, has one rank and is destroyed before the probe ends.
"""
import importlib.util
from pathlib import Path

import _c10d_launch  # the 2-process launcher beside this file
import pytest
import torch

from verified.probing.message_capture import observed  # a message a rank returned, for the error index


@pytest.mark.claim("distributed.ddp.needs-process-group")
def test_ddp_needs_a_process_group(tmp_path):
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    assert not dist.is_initialized()
    with pytest.raises(ValueError, match=r"Default process group has not been initialized, "
                                         r"please make sure to call init_process_group"):
        DDP(torch.nn.Linear(2, 2))
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/store", rank=0, world_size=1)  # the fix
    try:
        assert isinstance(DDP(torch.nn.Linear(2, 2)), DDP)
    finally:
        dist.destroy_process_group()


@pytest.mark.claim("distributed.pg.env-rendezvous-variables")
def test_default_init_method_reads_master_addr_and_port(monkeypatch):
    import torch.distributed as dist

    for name in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match=r"Error initializing torch.distributed using env:// rendezvous: "
                                         r"environment variable MASTER_ADDR expected, but not set"):
        dist.init_process_group("gloo", rank=0, world_size=1)
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    with pytest.raises(ValueError, match=r"environment variable MASTER_PORT expected, but not set"):
        dist.init_process_group("gloo", rank=0, world_size=1)
    assert not dist.is_initialized()
    monkeypatch.setenv("MASTER_PORT", "0")  # the fix: both set (torchrun sets them); 0 lets one rank pick a port
    dist.init_process_group("gloo", rank=0, world_size=1)
    try:
        assert dist.get_world_size() == 1
    finally:
        dist.destroy_process_group()


SYNC = r'''
import torch, torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.profiler import profile

dist = init()
r = {}

class WithBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.register_buffer("scale", torch.full((1,), float(RANK + 7)))  # 7 on rank 0, 8 on rank 1
        self.seen = []
    def forward(self, x):
        self.seen.append(self.scale.item())
        return self.lin(x) * self.scale

for broadcast_buffers in (True, False):
    m = WithBuffer()
    ddp = DDP(m, broadcast_buffers=broadcast_buffers)
    r[f"after_init_{broadcast_buffers}"] = m.scale.item()
    with torch.no_grad():
        m.scale.fill_(10.0 * (RANK + 1))  # 10 on rank 0, 20 on rank 1, between construction and forward
    ddp(torch.ones(1, 2)).sum().backward()
    r[f"seen_in_forward_{broadcast_buffers}"] = m.seen

for ids in ([RANK], [0, 1]):
    try:
        DDP(nn.Linear(2, 2), device_ids=ids)
        r[f"device_ids_{len(ids)}"] = None
    except ValueError as exc:
        r[f"device_ids_{len(ids)}"] = str(exc)

def collectives(prof):
    return sorted({e.name for e in prof.events() if e.name.startswith(("c10d::", "gloo:"))})

torch.manual_seed(RANK)  # different initial weights on every rank
model = nn.Linear(10, 10)
with profile() as construction:
    ddp = DDP(model)
r["construction_collectives"] = collectives(construction)
start = [p.detach().clone() for p in model.parameters()]
opt = torch.optim.SGD(ddp.parameters(), lr=0.001)
r["backward_collectives"] = []
for step in range(3):
    torch.manual_seed(100 * step + RANK)  # different data on every rank
    loss = nn.MSELoss()(ddp(torch.randn(20, 10)), torch.randn(20, 10))
    with profile() as backward:
        loss.backward()
    r["backward_collectives"].append(collectives(backward))
    opt.step()
    opt.zero_grad()
r["rank0_start"] = [p.flatten().tolist() for p in start]
r["params"] = [p.detach().flatten().tolist() for p in model.parameters()]
r["moved"] = [not torch.equal(a, b.detach()) for a, b in zip(start, model.parameters())]
dist.destroy_process_group()
report(r)
'''


def check_buffers_broadcast_at_construction(reports):
    r0, r1 = reports
    assert r0["after_init_True"] == 7.0 and r1["after_init_True"] == 7.0  # rank 1's 8 replaced by rank 0's 7
    assert r0["after_init_False"] == 7.0 and r1["after_init_False"] == 8.0  # not with broadcast_buffers=False


def check_buffers_broadcast_before_forward(reports):
    r0, r1 = reports
    assert r0["seen_in_forward_True"] == [10.0] and r1["seen_in_forward_True"] == [10.0]
    assert r0["seen_in_forward_False"] == [10.0] and r1["seen_in_forward_False"] == [20.0]


def check_cpu_module_rejects_device_ids(reports):
    for rank, r in enumerate(reports):
        message = r["device_ids_1"]
        assert message is not None
        assert message.startswith("DistributedDataParallel device_ids and output_device arguments only work "
                                  "with single-device/multiple-device GPU modules or CPU modules")
        assert f"but got device_ids [{rank}]" in message
        observed(ValueError, message)


def check_one_device_per_process(reports):
    for r in reports:
        assert r["device_ids_2"] == "device_ids can only be None or contain a single element."


@pytest.mark.claim("distributed.ddp.no-sync-params-method")
def test_ddp_has_no_param_sync_method():
    from torch.nn.parallel import DistributedDataParallel as DDP

    assert not hasattr(DDP, "_sync_param") and not hasattr(DDP, "_sync_params")
    assert callable(DDP._sync_buffers)


def check_replicas_stay_identical_after_steps(reports):
    r0, r1 = reports
    assert r0["rank0_start"] == r1["rank0_start"]  # both started from rank 0's weights
    assert r0["params"] == r1["params"]  # bit-identical after three steps on different data
    assert all(r0["moved"]) and all(r1["moved"])


def check_collectives_seen_by_profiler(reports):
    for r in reports:
        built = r["construction_collectives"]
        assert "c10d::broadcast_" in built and "gloo:broadcast" in built
        assert not any("allreduce" in n or "all_reduce" in n for n in built)
        assert r["backward_collectives"] == [["c10d::allreduce_", "gloo:all_reduce"]] * 3


BUCKETS = r'''
import torch, torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

dist = init()
r = {}
events = []

def recording_hook(state, bucket):
    events.append(["bucket", bucket.index(), [list(p.shape) for p in bucket.parameters()],
                   bucket.buffer().abs().sum().item()])
    return allreduce_hook(state, bucket)

# 1. find_unused_parameters=True: the construction-time buckets are kept
torch.manual_seed(0)
seq = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
ddp = DDP(seq, bucket_cap_mb=0.0001, find_unused_parameters=True)  # ~105-byte cap
ddp.register_comm_hook(None, recording_hook)
r["searching"] = []
for step in range(3):
    events.clear()
    ddp(torch.randn(5, 8)).sum().backward()
    r["searching"].append([e[:3] for e in events])

# 2. buckets that hold only unused parameters are still reduced
class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.used = nn.Linear(4, 2)
        self.unused = nn.Linear(4, 3)
    def forward(self, x):
        return self.used(x)

torch.manual_seed(0)
heads = TwoHeads()
ddp = DDP(heads, bucket_cap_mb=40 / 2**20, find_unused_parameters=True)
ddp.register_comm_hook(None, recording_hook)
r["unused"] = []
for step in range(2):
    events.clear()
    ddp(torch.randn(3, 4)).sum().backward()
    r["unused"].append([[e[1], e[2], e[3] == 0.0] for e in events])
r["unused_grad_is_none"] = heads.unused.weight.grad is None and heads.unused.bias.grad is None

# 3. buckets are reduced in index order, not in the order they become ready
class Branches(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 3)
        self.b = nn.Linear(4, 5)
        self.a_first = True
    def forward(self, x):
        if self.a_first:
            ya = self.a(x); yb = self.b(x)
        else:
            yb = self.b(x); ya = self.a(x)
        return ya.sum() + yb.sum()

torch.manual_seed(0)
branches = Branches()
ddp = DDP(branches, bucket_cap_mb=84 / 2**20)  # after the rebuild: one layer per bucket
ddp.register_comm_hook(None, recording_hook)
for name, p in branches.named_parameters():
    p.register_hook(lambda g, name=name: events.append(["grad", name]))
r["order"] = []
for step in range(3):
    branches.a_first = step < 2  # the third forward swaps the order, so a's gradients come first
    events.clear()
    ddp(torch.randn(2, 4)).backward()
    r["order"].append([e[:3] for e in events])
dist.destroy_process_group()
report(r)
'''


def check_searching_ddp_keeps_construction_buckets(reports):
    for r in reports:
        expected = [["bucket", 0, [[4]]], ["bucket", 1, [[16], [4, 16]]], ["bucket", 2, [[16, 8]]]]
        assert r["searching"] == [expected] * 3


def check_buckets_of_unused_parameters_are_reduced(reports):
    for r in reports:
        expected = [[0, [[3]], True], [1, [[3, 4]], True], [2, [[2, 4], [2]], False]]
        assert r["unused"] == [expected] * 2
        assert r["unused_grad_is_none"]


def check_buckets_reduced_in_index_order(reports):
    for r in reports:
        first, second, third = r["order"]
        # first iteration: one bucket with everything, b's gradients ready before a's
        assert first == [["grad", "b.bias"], ["grad", "b.weight"], ["grad", "a.bias"], ["grad", "a.weight"],
                         ["bucket", 0, [[3, 4], [3], [5, 4], [5]]]]
        # rebuilt in ready order: bucket 0 is b, reduced as soon as b is done
        assert second == [["grad", "b.bias"], ["grad", "b.weight"], ["bucket", 0, [[5], [5, 4]]],
                          ["grad", "a.bias"], ["grad", "a.weight"], ["bucket", 1, [[3], [3, 4]]]]
        # a's gradients now come first, but bucket 1 (a) waits until bucket 0 (b) has gone
        assert third == [["grad", "a.bias"], ["grad", "a.weight"], ["grad", "b.bias"], ["grad", "b.weight"],
                         ["bucket", 0, [[5], [5, 4]]], ["bucket", 1, [[3], [3, 4]]]]


@pytest.mark.claim("distributed.backends.c10d-backend-names")
def test_backend_names():
    import torch.distributed as dist

    assert dist.Backend.backend_list == ["undefined", "gloo", "nccl", "xccl", "ucc", "mpi", "fake"]


@pytest.mark.claim("distributed.backends.name-normalised")
def test_backend_names_are_lowercased():
    import torch.distributed as dist

    assert dist.Backend("gloo") == "gloo" and dist.Backend("UCC") == "ucc"


@pytest.mark.claim("distributed.backends.gloo-class")
def test_gloo_class_is_exposed():
    import torch._C._distributed_c10d as c10d

    assert hasattr(c10d, "ProcessGroupGloo")


@pytest.mark.claim("distributed.ddp.c10d-header-locations")
def test_c10d_header_locations():
    include = Path(torch.__file__).parent / "include"
    c10d = include / "torch/csrc/distributed/c10d"
    for name in ("ProcessGroup.hpp", "Store.hpp", "comm.hpp", "reducer.hpp"):
        assert (c10d / name).is_file(), name
    assert not (c10d / "comm.h").exists() and not (c10d / "reducer.h").exists()
    assert not (include / "torch/lib/c10d").exists()
    assert "broadcast_coalesced" in (c10d / "comm.hpp").read_text()


@pytest.mark.claim("distributed.ddp.ddp-optimizer-module")
def test_ddp_optimizer_module_path():
    assert importlib.util.find_spec("torch._dynamo.optimizations") is None
    from torch._dynamo.backends.distributed import DDPOptimizer

    assert DDPOptimizer.__module__ == "torch._dynamo.backends.distributed"


@pytest.mark.claim("distributed.ddp.torch-logs-names")
def test_torch_logs_names_for_ddp():
    from torch._logging._internal import _parse_log_settings

    assert _parse_log_settings("ddp_graphs").artifact_names == {"ddp_graphs"}
    dist_modules = _parse_log_settings("distributed").log_qname_to_level
    assert "torch._dynamo.backends.distributed" in dist_modules
    assert "torch._dynamo" in _parse_log_settings("dynamo").log_qname_to_level


@pytest.mark.claim("distributed.ddp.torch-logs-ddp-modules")
def test_torch_logs_ddp_names_two_modules():
    from torch._logging._internal import _parse_log_settings

    assert set(_parse_log_settings("ddp").log_qname_to_level) == {"torch.nn.parallel.distributed",
                                                                 "torch._dynamo.backends.distributed"}


@pytest.mark.claim("distributed.ddp.torch-logs-dist-ddp-rejected")
def test_torch_logs_rejects_dist_ddp():
    from torch._logging._internal import _parse_log_settings

    with pytest.raises(ValueError, match=r"Invalid log settings: dist_ddp"):
        _parse_log_settings("dist_ddp")


# One claim per probe, each from its own two-rank run (about 5 s): a change in one behaviour
# then fails one claim.


@pytest.mark.claim("distributed.ddp.buffers-broadcast-at-construction")
@pytest.mark.timeout(180)
def test_buffers_broadcast_at_construction():
    check_buffers_broadcast_at_construction(_c10d_launch.shared_ranks(SYNC, world_size=2, timeout=120))


@pytest.mark.claim("distributed.ddp.buffers-broadcast-before-forward")
@pytest.mark.timeout(180)
def test_buffers_broadcast_before_forward():
    check_buffers_broadcast_before_forward(_c10d_launch.shared_ranks(SYNC, world_size=2, timeout=120))


@pytest.mark.claim("distributed.ddp.cpu-rejects-device-ids")
@pytest.mark.timeout(180)
def test_cpu_module_rejects_device_ids():
    check_cpu_module_rejects_device_ids(_c10d_launch.shared_ranks(SYNC, world_size=2, timeout=120))


@pytest.mark.claim("distributed.ddp.single-device-per-process")
@pytest.mark.timeout(180)
def test_one_device_per_process():
    check_one_device_per_process(_c10d_launch.shared_ranks(SYNC, world_size=2, timeout=120))


@pytest.mark.claim("distributed.ddp.replicas-stay-in-sync")
@pytest.mark.timeout(180)
def test_replicas_stay_identical_after_steps():
    check_replicas_stay_identical_after_steps(_c10d_launch.shared_ranks(SYNC, world_size=2, timeout=120))


@pytest.mark.claim("distributed.ddp.collectives-profiled")
@pytest.mark.timeout(180)
def test_collectives_seen_by_profiler():
    check_collectives_seen_by_profiler(_c10d_launch.shared_ranks(SYNC, world_size=2, timeout=120))


@pytest.mark.claim("distributed.ddp.find-unused-keeps-initial-buckets")
@pytest.mark.timeout(180)
def test_searching_ddp_keeps_construction_buckets():
    check_searching_ddp_keeps_construction_buckets(_c10d_launch.shared_ranks(BUCKETS, world_size=2, timeout=120))


@pytest.mark.claim("distributed.ddp.unused-buckets-still-reduced")
@pytest.mark.timeout(180)
def test_buckets_of_unused_parameters_are_reduced():
    check_buckets_of_unused_parameters_are_reduced(_c10d_launch.shared_ranks(BUCKETS, world_size=2, timeout=120))


@pytest.mark.claim("distributed.ddp.allreduce-in-index-order")
@pytest.mark.timeout(180)
def test_buckets_reduced_in_index_order():
    check_buckets_reduced_in_index_order(_c10d_launch.shared_ranks(BUCKETS, world_size=2, timeout=120))
