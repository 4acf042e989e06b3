"""Probes for docs/distributed/ddp.md.

Each multi-process probe starts two real processes (Gloo on 127.0.0.1, FileStore
rendezvous), runs one DDP scenario in both, and checks one claim on what each rank reported:
one claim per probe, so that a change in one behaviour fails one claim. Each scenario runs
once per probe run (`_c10d_launch.shared_ranks`) and its probes share its reports.
"""
import _c10d_launch  # the 2-process launcher beside this file
import pytest
import torch

from verified.probing.message_capture import observed  # a message a rank returned, for the error index

BUCKETS = r'''
import torch, torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook


dist = init()
r = {}

def make():
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))

torch.manual_seed(100 + RANK)  # every rank starts from different weights
model = make()
r["before"] = [p.detach().flatten().tolist() for p in model.parameters()]
ddp = DDP(model, bucket_cap_mb=0.0001)  # ~100 bytes: after the rebuild, about one layer per bucket
r["after"] = [p.detach().flatten().tolist() for p in model.parameters()]

plain = DDP(nn.Linear(2, 2))
r["default_cap"] = plain.bucket_bytes_cap
r["first_bucket_bytes"] = dist._DEFAULT_FIRST_BUCKET_BYTES
r["reducer"] = type(plain.reducer).__module__ + "." + type(plain.reducer).__qualname__

events = []
def recording_hook(state, bucket):
    events.append(["bucket", bucket.index(), [list(p.shape) for p in bucket.parameters()]])
    return allreduce_hook(state, bucket)  # the default: divide by world size, then all_reduce (sum)
ddp.register_comm_hook(dist.group.WORLD, recording_hook)

r["iterations"] = []
for step in range(3):
    torch.manual_seed(1000 * step + RANK)  # different data on every rank
    x = torch.randn(5, 8, requires_grad=True)
    x.register_hook(lambda g: events.append(["input-grad"]))  # the very end of backward
    reference = make()
    reference.load_state_dict(model.state_dict())
    reference(x.detach()).pow(2).sum().backward()
    ddp.zero_grad(set_to_none=True)
    events.clear()
    ddp(x).pow(2).sum().backward()
    r["iterations"].append({
        "events": list(events),
        "grads": [p.grad.flatten().tolist() for p in model.parameters()],
        "local": [p.grad.flatten().tolist() for p in reference.parameters()],
    })
dist.destroy_process_group()
report(r)
'''


def close(a, b):
    return torch.allclose(torch.tensor(a), torch.tensor(b), atol=1e-6)


def check_broadcast_at_construction(reports):
    r0, r1 = reports
    # construction: rank 0's parameters are copied into every rank
    assert not close(r0["before"][0], r1["before"][0])
    assert all(close(a, b) for a, b in zip(r1["after"], r0["before"]))
    assert all(close(a, b) for a, b in zip(r0["after"], r0["before"]))


def check_reducer_defaults(reports):
    assert reports[0]["default_cap"] == 25 * 1024 * 1024


def check_first_bucket_bytes(reports):
    assert reports[0]["first_bucket_bytes"] == 1024 * 1024


def check_reducer_class(reports):
    assert reports[0]["reducer"] == "torch._C._distributed_c10d.Reducer"


def check_gradients_averaged(reports):
    r0, r1 = reports
    # every iteration: the gradient on both ranks is the mean of the two local gradients
    assert len(r0["iterations"]) == len(r1["iterations"]) == 3
    for it0, it1 in zip(r0["iterations"], r1["iterations"]):
        for g0, g1, l0, l1 in zip(it0["grads"], it1["grads"], it0["local"], it1["local"]):
            assert close(g0, g1)
            assert close(g0, [(a + b) / 2 for a, b in zip(l0, l1)])
            assert not close(l0, l1)  # the local gradients did differ


def check_buckets_overlap_backward(reports):
    for r in reports:
        first, second, third = (it["events"] for it in r["iterations"])
        # iteration 1: one bucket holding every parameter, reduced after backward reached the input
        assert first == [["input-grad"], ["bucket", 0, [[16, 8], [16], [4, 16], [4]]]]
        # later iterations: buckets rebuilt in the order gradients became ready; the last layer's
        # bucket is all-reduced while backward is still running
        assert second == third
        assert second == [["bucket", 0, [[4], [4, 16]]], ["input-grad"], ["bucket", 1, [[16], [16, 8]]]]


@pytest.mark.claim("distributed.ddp.broadcast-at-construction")
@pytest.mark.timeout(180)
def test_broadcast_at_construction():
    check_broadcast_at_construction(_c10d_launch.shared_ranks(BUCKETS, world_size=2, timeout=120))


@pytest.mark.claim("distributed.ddp.reducer-defaults")
@pytest.mark.timeout(180)
def test_reducer_defaults():
    check_reducer_defaults(_c10d_launch.shared_ranks(BUCKETS, world_size=2, timeout=120))


@pytest.mark.claim("distributed.ddp.first-bucket-bytes")
@pytest.mark.timeout(180)
def test_first_bucket_bytes():
    check_first_bucket_bytes(_c10d_launch.shared_ranks(BUCKETS, world_size=2, timeout=120))


@pytest.mark.claim("distributed.ddp.reducer-class")
@pytest.mark.timeout(180)
def test_reducer_class():
    check_reducer_class(_c10d_launch.shared_ranks(BUCKETS, world_size=2, timeout=120))


@pytest.mark.claim("distributed.ddp.gradients-averaged")
@pytest.mark.timeout(180)
def test_gradients_averaged():
    check_gradients_averaged(_c10d_launch.shared_ranks(BUCKETS, world_size=2, timeout=120))


@pytest.mark.claim("distributed.ddp.buckets-overlap-backward")
@pytest.mark.timeout(180)
def test_buckets_overlap_backward():
    check_buckets_overlap_backward(_c10d_launch.shared_ranks(BUCKETS, world_size=2, timeout=120))


NO_SYNC_AND_UNUSED = r'''
import torch, torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist = init()
r = {}

class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.used = nn.Linear(4, 2)
        self.unused = nn.Linear(4, 2)
    def forward(self, x):
        return self.used(x)

# no_sync: local accumulation, then one synchronised backward
torch.manual_seed(1)
layer = nn.Linear(4, 2)
ddp = DDP(layer)
x = torch.full((1, 4), float(RANK + 1))
with ddp.no_sync():
    ddp(x).sum().backward()
r["no_sync_grad"] = layer.weight.grad.flatten().tolist()
ddp(x).sum().backward()
r["synced_grad"] = layer.weight.grad.flatten().tolist()

# an unused parameter without find_unused_parameters
torch.manual_seed(0)
plain = DDP(TwoHeads())
x = torch.randn(3, 4) * (RANK + 1)
plain(x).sum().backward()  # no error here ...
r["first_used_grad"] = plain.module.used.weight.grad.flatten().tolist()
r["first_unused_grad_is_none"] = plain.module.unused.weight.grad is None
try:
    plain(x).sum().backward()  # ... but the next forward refuses to start
    r["second"] = None
except RuntimeError as exc:
    r["second"] = str(exc)

# the same model with find_unused_parameters=True
torch.manual_seed(0)
finding = DDP(TwoHeads(), find_unused_parameters=True)
for _ in range(3):
    finding.zero_grad(set_to_none=True)
    finding(x).sum().backward()
r["found_used_grad"] = finding.module.used.weight.grad.flatten().tolist()
r["found_unused_grad_is_none"] = finding.module.unused.weight.grad is None
r["x"] = x.tolist()
dist.destroy_process_group()
report(r)
'''


def check_no_sync(reports):
    r0, r1 = reports
    # no_sync: each rank keeps its own gradient (input 1s vs 2s) ...
    assert r0["no_sync_grad"] == [1.0] * 8 and r1["no_sync_grad"] == [2.0] * 8
    # ... and the next synchronised backward averages the accumulated sums: (2 + 4) / 2
    assert r0["synced_grad"] == r1["synced_grad"] == [3.0] * 8


def check_unused_parameter_no_reduction(reports):
    r0, r1 = reports
    # unused parameter, no detection: the first backward returns, but nothing was all-reduced
    assert close([2 * g for g in r0["first_used_grad"]], r1["first_used_grad"])  # rank 1's input is 2x rank 0's
    assert r0["first_unused_grad_is_none"] and r1["first_unused_grad_is_none"]


def check_unused_parameter_next_forward_error(reports):
    for rank, r in enumerate(reports):
        assert r["second"] is not None
        assert r["second"].startswith("Expected to have finished reduction in the prior iteration before "
                                      "starting a new one.")
        assert "find_unused_parameters=True" in r["second"]
        assert f"Parameter indices which did not receive grad for rank {rank}: 2 3" in r["second"]
        observed(RuntimeError, r["second"])


def check_find_unused_parameters(reports):
    r0, r1 = reports
    # with find_unused_parameters=True: no error, used gradients averaged, the unused one stays None
    expected = [sum(col) for col in zip(*r0["x"])]  # d(sum(used(x)))/dW for rank 0's x, per input column
    assert close(r0["found_used_grad"], r1["found_used_grad"])
    assert close(r0["found_used_grad"], [1.5 * e for e in expected] * 2)  # mean of x and 2x
    assert r0["found_unused_grad_is_none"] and r1["found_unused_grad_is_none"]


@pytest.mark.claim("distributed.ddp.no-sync")
@pytest.mark.timeout(180)
def test_no_sync():
    check_no_sync(_c10d_launch.shared_ranks(NO_SYNC_AND_UNUSED, world_size=2, timeout=120))


@pytest.mark.claim("distributed.ddp.unused-parameter-error")
@pytest.mark.timeout(180)
def test_unused_parameter_no_reduction():
    check_unused_parameter_no_reduction(_c10d_launch.shared_ranks(NO_SYNC_AND_UNUSED, world_size=2, timeout=120))


@pytest.mark.claim("distributed.ddp.unused-parameter-next-forward-error")
@pytest.mark.timeout(180)
def test_unused_parameter_next_forward_error():
    check_unused_parameter_next_forward_error(_c10d_launch.shared_ranks(NO_SYNC_AND_UNUSED, world_size=2, timeout=120))


@pytest.mark.claim("distributed.ddp.find-unused-parameters")
@pytest.mark.timeout(180)
def test_find_unused_parameters():
    check_find_unused_parameters(_c10d_launch.shared_ranks(NO_SYNC_AND_UNUSED, world_size=2, timeout=120))


COMPILED = r'''
import torch, torch.nn as nn, torch._dynamo
from torch.nn.parallel import DistributedDataParallel as DDP

dist = init()
r = {"optimize_ddp": torch._dynamo.config.optimize_ddp,
     "mode": torch._dynamo.utils.get_optimize_ddp_mode()}

class Net(nn.Module):  # a user-defined module, so that Dynamo traces its forward
    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = nn.Linear(512, 512), nn.Linear(512, 512), nn.Linear(512, 512)
    def forward(self, x):
        return self.c(self.b(self.a(x).relu()).relu())

def run(optimize_ddp, bucket_cap_mb):
    torch._dynamo.reset()
    torch._dynamo.config.optimize_ddp = optimize_ddp
    graphs = []
    def counting(gm, example_inputs):
        graphs.append(sorted({n.target.split("_")[3] for n in gm.graph.nodes
                              if n.op == "placeholder" and "_modules_" in n.target}))
        return gm.forward
    torch.manual_seed(0)
    model = Net()
    compiled = torch.compile(DDP(model, bucket_cap_mb=bucket_cap_mb), backend=counting)
    torch.manual_seed(RANK)
    x = torch.randn(4, 512)
    try:
        compiled(x).sum().backward()
    except Exception as exc:
        return {"error": [type(exc).__name__, str(exc)]}
    reference = Net()
    reference.load_state_dict(model.state_dict())
    reference(x).sum().backward()
    return {"graphs": graphs, "grad": model.a.weight.grad.sum().item(),
            "local_grad": reference.a.weight.grad.sum().item()}

r["on"] = run(True, 1)
r["off"] = run(False, 1)
r["small_buckets"] = run(True, 0.5)
dist.destroy_process_group()
report(r)
'''


@pytest.mark.claim("distributed.ddp.optimize-ddp-default")
def test_optimize_ddp_is_on_by_default():
    import torch._dynamo

    assert torch._dynamo.config.optimize_ddp is True
    assert torch._dynamo.utils.get_optimize_ddp_mode() == "ddp_optimizer"


def check_ddp_optimizer_splits(reports):
    for r in reports:
        assert r["optimize_ddp"] is True and r["mode"] == "ddp_optimizer"
        # DDPOptimizer: one graph per bucket (each 1 MiB weight fills a 1 MiB bucket), in forward order
        assert r["on"]["graphs"] == [["a"], ["b"], ["c"]]
        # without it: the whole forward is one graph
        assert r["off"]["graphs"] == [["a", "b", "c"]]


def check_compiled_gradients_averaged(reports):
    r0, r1 = reports
    # gradients are still averaged across the ranks in both modes
    for mode in ("on", "off"):
        assert r0[mode]["grad"] == r1[mode]["grad"]  # the all-reduced gradient is the same on both ranks
        assert abs(r0[mode]["grad"] - (r0[mode]["local_grad"] + r1[mode]["local_grad"]) / 2) < 1e-3
        assert abs(r0[mode]["local_grad"] - r1[mode]["local_grad"]) > 1e-2  # the local gradients differ


def check_small_first_bucket_refused(reports):
    for r in reports:
        # buckets smaller than DDP's 1 MiB first bucket are refused
        name, message = r["small_buckets"]["error"]
        assert "First bucket should be smaller/equal to other buckets" in message


@pytest.mark.claim("distributed.ddp.compile-ddp-optimizer")
@pytest.mark.timeout(180)
def test_ddp_optimizer_splits():
    check_ddp_optimizer_splits(_c10d_launch.shared_ranks(COMPILED, world_size=2, timeout=150))


@pytest.mark.claim("distributed.ddp.compile-grads-averaged")
@pytest.mark.timeout(180)
def test_compiled_gradients_averaged():
    check_compiled_gradients_averaged(_c10d_launch.shared_ranks(COMPILED, world_size=2, timeout=150))


@pytest.mark.claim("distributed.ddp.compile-small-first-bucket-refused")
@pytest.mark.timeout(180)
def test_small_first_bucket_refused():
    check_small_first_bucket_refused(_c10d_launch.shared_ranks(COMPILED, world_size=2, timeout=150))
