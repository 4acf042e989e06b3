"""Probes for docs/distributed/gloo-errors.md: misuse of init_process_group, collectives and DDP
on the Gloo backend.

Every probe runs a one-rank job in its own process (world_size=1, a FileStore in the probe's
tmp dir): the argument checks of Gloo and of torch.distributed run before any other rank would
be contacted, so one rank raises the same messages as a real job, in about a second, and the
message is checked in the probe's own process. Each probe triggers its message as the claim's
cause says and shows that the fix works.
A message whose text changed between releases is checked as a pair of probes, each bounded
with torch_version to the releases it holds on (the 2.14 wording next to the 2.13 one).

Chosen from what users report:
- https://github.com/pytorch/pytorch/issues/43207 and https://github.com/facebookresearch/detectron2/issues/753
  (MASTER_ADDR / MASTER_PORT expected, but not set)
- https://github.com/mit-han-lab/distrifuser/issues/11 (environment variable RANK expected, but not set)
- https://github.com/EvolvingLMMs-Lab/lmms-eval/pull/1306 (default process group has not been initialized)
- https://github.com/pytorch/pytorch/issues/45326, https://github.com/huggingface/accelerate/issues/760
  (DistributedDataParallel is not needed when a module doesn't have any parameter that requires a gradient)
- https://github.com/pytorch/pytorch/issues/25550 and #25552 (DDP on modules without trainable parameters)
- https://runebook.dev/en/docs/pytorch/distributed/torch.distributed.init_process_group (mismatched rank / world_size)
- https://github.com/huggingface/accelerate/issues/2017, https://github.com/pytorch/pytorch/issues/24005 and
  https://github.com/pytorch/pytorch/issues/105723 (Expected to mark a variable ready only once: gradient
  checkpointing with find_unused_parameters=True)
"""
import re
import warnings
from datetime import timedelta

import pytest
import torch
import torch.distributed as dist

RENDEZVOUS_VARIABLES = ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE")


def lit(text):
    """A regex matching `text` literally."""
    return re.escape(text)


@pytest.fixture
def one_rank(tmp_path):
    """A default Gloo group of one rank, destroyed after the probe."""
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/store", rank=0, world_size=1,
                            timeout=timedelta(seconds=30))
    yield dist
    if dist.is_initialized():
        dist.destroy_process_group()


@pytest.fixture
def no_rendezvous_env(monkeypatch):
    for name in RENDEZVOUS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


# ------------------------------------------------------------------ starting a group


@pytest.mark.claim("distributed.glooerr.not-initialized")
def test_collectives_before_init(tmp_path):
    message = r"^Default process group has not been initialized, please make sure to call init_process_group\.$"
    for call in (lambda: dist.all_reduce(torch.ones(1)), dist.get_rank, dist.get_world_size, dist.barrier):
        with pytest.raises(ValueError, match=message):
            call()
    # destroy_process_group() without a group: the pair of probes below (its message came in 2.10)
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/store", rank=0, world_size=1)
    t = torch.ones(1)
    dist.all_reduce(t)
    assert dist.get_rank() == 0 and dist.get_world_size() == 1 and t.item() == 1.0
    dist.destroy_process_group()
    with pytest.raises(ValueError, match=message):  # and again after the group is destroyed
        dist.get_rank()


def destroy_without_a_group(message, tmp_path):
    with pytest.raises(AssertionError, match="^" + re.escape(message) + "$"):
        dist.destroy_process_group()
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/store", rank=0, world_size=1)
    dist.destroy_process_group()  # the fix: destroy only a group that was initialised
    assert not dist.is_initialized()


@pytest.mark.claim("distributed.glooerr.destroy-without-group-bare")
@pytest.mark.torch_version("<2.10")
def test_destroy_without_a_group_until_2_9(tmp_path):
    destroy_without_a_group("", tmp_path)


@pytest.mark.claim("distributed.glooerr.destroy-without-group")
@pytest.mark.torch_version(">=2.10")
def test_destroy_without_a_group_since_2_10(tmp_path):
    destroy_without_a_group("Process group cannot be None", tmp_path)


@pytest.mark.claim("distributed.glooerr.env-variables")
def test_env_rendezvous_without_its_variables(no_rendezvous_env):
    env = no_rendezvous_env
    prefix = "Error initializing torch.distributed using env:// rendezvous: environment variable "
    with pytest.raises(ValueError, match=lit(prefix + "RANK expected, but not set")):
        dist.init_process_group("gloo", init_method="env://")
    with pytest.raises(ValueError, match=lit(prefix + "MASTER_ADDR expected, but not set")):
        dist.init_process_group("gloo", init_method="env://", rank=0, world_size=1)
    env.setenv("MASTER_ADDR", "127.0.0.1")
    with pytest.raises(ValueError, match=lit(prefix + "MASTER_PORT expected, but not set")):
        dist.init_process_group("gloo", init_method="env://", rank=0, world_size=1)
    with pytest.raises(ValueError, match=lit(prefix + "WORLD_SIZE expected, but not set")):
        dist.init_process_group("gloo", init_method="env://", rank=0)
    env.setenv("MASTER_PORT", "0")  # the fix: set them (torchrun does); port 0 picks a free one for one rank
    env.setenv("RANK", "0")
    env.setenv("WORLD_SIZE", "1")
    dist.init_process_group("gloo", init_method="env://", timeout=timedelta(seconds=30))
    try:
        assert dist.get_world_size() == 1
    finally:
        dist.destroy_process_group()


@pytest.mark.claim("distributed.glooerr.backend-name")
def test_backend_that_is_unknown_or_not_built(tmp_path):
    url = f"file://{tmp_path}/store"
    with pytest.warns(UserWarning, match="^" + lit("Device capability of nope unknown, assuming `cpu` and ")):
        with pytest.raises(AssertionError, match=r"^Unknown backend type nope$"):
            dist.init_process_group("nope", init_method=url, rank=0, world_size=1)
    with pytest.raises(RuntimeError, match=lit("Distributed package doesn't have MPI built in. MPI is only included if "
                                               "you build PyTorch from source on a host that has MPI installed.")):
        dist.init_process_group("mpi")
    dist.init_process_group("gloo", init_method=url, rank=0, world_size=1)
    assert dist.get_backend() == "gloo"
    dist.destroy_process_group()


def unknown_backend_warning(tmp_path):
    """The UserWarning of init_process_group with a backend name it does not know."""
    with pytest.warns(UserWarning, match=lit("Device capability of nope unknown")) as caught:
        with pytest.raises(AssertionError, match=r"^Unknown backend type nope$"):
            dist.init_process_group("nope", init_method=f"file://{tmp_path}/store", rank=0, world_size=1)
    return next(str(w.message) for w in caught if str(w.message).startswith("Device capability"))


@pytest.mark.claim("distributed.glooerr.unknown-backend-assumes-cuda")
@pytest.mark.torch_version("<2.14")
def test_unknown_backend_warning_until_2_13(tmp_path):
    assert unknown_backend_warning(tmp_path) == ("Device capability of nope unknown, assuming `cpu` and `cuda`. You can "
                                                 "specify it in `device:backend` format in `init_process_group` call.")


@pytest.mark.claim("distributed.glooerr.unknown-backend-assumes-accelerator")
@pytest.mark.torch_version(">=2.14")
def test_unknown_backend_warning_since_2_14(tmp_path):
    assert unknown_backend_warning(tmp_path) == ("Device capability of nope unknown, assuming `cpu` and the current "
                                                 "accelerator. You can specify it in `device:backend` format in "
                                                 "`init_process_group` call.")


@pytest.mark.claim("distributed.glooerr.rank-out-of-range")
def test_rank_not_below_world_size(tmp_path):
    with pytest.raises(RuntimeError, match=r"\[enforce fail at .*gloo/context\.cc:\d+\] rank < size\. 2 vs 1$"):
        dist.init_process_group("gloo", init_method=f"file://{tmp_path}/a", rank=2, world_size=1)
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/b", rank=0, world_size=1)
    assert dist.get_rank() == 0
    dist.destroy_process_group()


@pytest.mark.claim("distributed.glooerr.init-arguments")
def test_init_method_store_and_world_size_rules(tmp_path):
    with pytest.raises(RuntimeError, match=r"^No rendezvous handler for bogus://$"):
        dist.init_process_group("gloo", init_method="bogus://x", rank=0, world_size=1)
    with pytest.raises(AssertionError, match=r"^Cannot specify both init_method and store\.$"):
        dist.init_process_group("gloo", init_method=f"file://{tmp_path}/a", store=dist.HashStore(), rank=0,
                                world_size=1)
    with pytest.raises(AssertionError, match=r"^world_size must be positive if using store$"):
        dist.init_process_group("gloo", store=dist.HashStore())
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)  # a store, with rank and size
    assert dist.get_world_size() == 1
    dist.destroy_process_group()


@pytest.mark.claim("distributed.glooerr.init-twice")
def test_default_group_initialised_twice(one_rank, tmp_path):
    with pytest.raises(ValueError, match=r"^trying to initialize the default process group twice!$"):
        dist.init_process_group("gloo", init_method=f"file://{tmp_path}/second", rank=0, world_size=1)
    group = dist.new_group([0])  # the fix for a second set of ranks: a new group, not a second default one
    assert dist.get_world_size(group) == 1


@pytest.mark.claim("distributed.glooerr.groups")
def test_new_group_and_unknown_group(one_rank):
    with pytest.raises(ValueError, match=lit("the new group's world size should be less or equal to the world size set "
                                             "by init_process_group")):
        dist.new_group([0, 3])
    with pytest.raises(ValueError, match=r"^Group x is not registered, please create group with "
                                         r"torch\.distributed\.new_group API$"):
        dist.get_rank(group="x")
    group = dist.new_group([0])
    assert dist.get_rank(group=group) == 0


@pytest.mark.claim("distributed.glooerr.device-mesh")
def test_device_mesh_larger_than_the_world(one_rank):
    from torch.distributed.device_mesh import init_device_mesh

    with pytest.raises(RuntimeError, match=lit("Mesh should not be bigger than default world size 1, but found 2 "
                                               "ranks!")):
        init_device_mesh("cpu", (2,))
    mesh = init_device_mesh("cpu", (1,))
    assert mesh.size() == 1


# ------------------------------------------------------------------ collectives


@pytest.mark.claim("distributed.glooerr.allgather-sizes-no-warning")
@pytest.mark.torch_version("<2.13")
def test_all_gather_sizes_without_the_deprecation_warning(one_rank):
    with pytest.raises(RuntimeError, match=lit("ProcessGroupGloo::allgather: invalid output tensor list at index 0 "
                                               "(expected length 1, got 2)")):
        dist.all_gather([torch.ones(1), torch.ones(1)], torch.ones(1))
    with pytest.raises(RuntimeError, match=lit("ProcessGroupGloo::allgather: invalid tensor size at index 0 (expected "
                                               "(1), got (2))")):
        dist.all_gather([torch.ones(2)], torch.ones(1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match=lit("ProcessGroupGloo::allgather: invalid tensor size at index 0 "
                                                   "(expected (1), got (3))")):
            dist.all_gather_into_tensor(torch.ones(3), torch.ones(1))
    assert [w for w in caught if issubclass(w.category, FutureWarning)] == []
    assert not hasattr(dist, "all_gather_single")
    out = [torch.zeros(2)]
    dist.all_gather(out, torch.full((2,), 7.0))
    assert out[0].tolist() == [7.0, 7.0]


@pytest.mark.claim("distributed.glooerr.allgather-sizes")
@pytest.mark.torch_version(">=2.13")
def test_all_gather_output_list_and_sizes(one_rank):
    with pytest.raises(RuntimeError, match=lit("ProcessGroupGloo::allgather: invalid output tensor list at index 0 "
                                               "(expected length 1, got 2)")):
        dist.all_gather([torch.ones(1), torch.ones(1)], torch.ones(1))
    with pytest.raises(RuntimeError, match=lit("ProcessGroupGloo::allgather: invalid tensor size at index 0 (expected "
                                               "(1), got (2))")):
        dist.all_gather([torch.ones(2)], torch.ones(1))
    with pytest.warns(FutureWarning, match=lit("`torch.distributed.all_gather_into_tensor` is deprecated. Please use "
                                               "`torch.distributed.all_gather_single` instead.")):
        with pytest.raises(RuntimeError, match=lit("ProcessGroupGloo::allgather: invalid tensor size at index 0 "
                                                   "(expected (1), got (3))")):
            dist.all_gather_into_tensor(torch.ones(3), torch.ones(1))
    out = [torch.zeros(2)]  # the fix: one output per rank, each the input's size
    dist.all_gather(out, torch.full((2,), 7.0))
    assert out[0].tolist() == [7.0, 7.0]


@pytest.mark.claim("distributed.glooerr.rooted-collectives")
def test_broadcast_scatter_gather_arguments(one_rank):
    with pytest.raises(RuntimeError, match=r"^ProcessGroupGloo::broadcast: invalid root rank: 3$"):
        dist.broadcast(torch.ones(1), src=3)
    with pytest.raises(RuntimeError, match=lit("ProcessGroupGloo::scatter: Incorrect input list size 2. Input list size "
                                               "should be 1, same as size of the process group.")):
        dist.scatter(torch.ones(1), [torch.ones(1), torch.ones(1)], src=0)
    with pytest.raises(RuntimeError, match=lit("ProcessGroupGloo::gather: invalid tensor size at index 0 (expected (1), "
                                               "got (2))")):
        dist.gather(torch.ones(1), [torch.ones(2)], dst=0)
    received = torch.zeros(1)
    dist.scatter(received, [torch.full((1,), 5.0)], src=0)
    assert received.item() == 5.0


@pytest.mark.claim("distributed.glooerr.collective-argument-types")
def test_collective_argument_types_and_reduce_ops(one_rank):
    with pytest.raises(TypeError, match=lit("Invalid function argument. Expected parameter `tensor` of type "
                                            "torch.Tensor")):
        dist.all_reduce([torch.ones(1)])
    with pytest.raises(ValueError, match=r"^all_reduce does not support RedOpType\.MAX on complex tensors$"):
        dist.all_reduce(torch.ones(2, dtype=torch.cfloat), op=dist.ReduceOp.MAX)
    with pytest.raises(RuntimeError, match=r"^Cannot use ReduceOp\.BAND with non-integral dtype$"):
        dist.all_reduce(torch.ones(2), op=dist.ReduceOp.BAND)
    bits = torch.tensor([3, 5])
    dist.all_reduce(bits, op=dist.ReduceOp.BAND)  # an integer tensor
    z = torch.ones(2, dtype=torch.cfloat)
    dist.all_reduce(z, op=dist.ReduceOp.SUM)  # SUM is defined on complex tensors
    assert bits.tolist() == [3, 5] and z.tolist() == [1 + 0j, 1 + 0j]


@pytest.mark.claim("distributed.glooerr.send-to-self")
def test_point_to_point_to_the_own_rank(one_rank):
    with pytest.raises(ValueError, match=lit("Invalid destination rank: destination rank should not be the same as the "
                                             "rank of the current process.")):
        dist.send(torch.ones(1), dst=0)


@pytest.mark.claim("distributed.glooerr.store-timeout")
def test_store_get_of_a_key_nobody_sets():
    store = dist.TCPStore("127.0.0.1", 0, 1, True, timeout=timedelta(seconds=1))
    with pytest.raises(dist.DistStoreError, match=r"^wait timeout after 1000ms, keys: /missing$"):
        store.get("missing")
    hashed = dist.HashStore()
    hashed.set_timeout(timedelta(seconds=0.1))
    with pytest.raises(dist.DistStoreError, match=r"^Wait timeout$"):
        hashed.get("nope")
    store.set("missing", "here")  # the fix: some rank sets the key (or a longer timeout waits for it)
    assert store.get("missing") == b"here"


# ------------------------------------------------------------------ DistributedDataParallel


@pytest.mark.claim("distributed.glooerr.ddp-no-grad")
def test_ddp_on_a_module_without_trainable_parameters(one_rank):
    from torch.nn.parallel import DistributedDataParallel as DDP

    frozen = torch.nn.Linear(2, 2).requires_grad_(False)
    message = r"^DistributedDataParallel is not needed when a module doesn't have any parameter that requires a gradient\.$"
    with pytest.raises(RuntimeError, match=message):
        DDP(frozen)
    with pytest.raises(RuntimeError, match=message):
        DDP(torch.nn.ReLU())
    assert frozen(torch.ones(1, 2)).shape == (1, 2)  # the fix: use the frozen module without DDP
    assert isinstance(DDP(torch.nn.Linear(2, 2)), DDP)


@pytest.mark.claim("distributed.glooerr.ddp-device-ids")
def test_ddp_device_ids_for_a_cpu_module(one_rank):
    from torch.nn.parallel import DistributedDataParallel as DDP

    with pytest.raises(ValueError, match=lit("DistributedDataParallel device_ids and output_device arguments only work "
                                             "with single-device/multiple-device GPU modules or CPU modules, but got "
                                             "device_ids [0], output_device None, and module parameters "
                                             "{device(type='cpu')}.")):
        DDP(torch.nn.Linear(2, 2), device_ids=[0])
    assert DDP(torch.nn.Linear(2, 2), device_ids=None).device_ids is None


class TwoBranches(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.used = torch.nn.Linear(2, 2)
        self.unused = torch.nn.Linear(2, 2)

    def forward(self, x):
        return self.used(x)


@pytest.mark.claim("distributed.glooerr.ddp-unused-parameters")
def test_ddp_with_a_parameter_that_gets_no_gradient(one_rank):
    from torch.nn.parallel import DistributedDataParallel as DDP

    model = DDP(TwoBranches())
    model(torch.ones(1, 2)).sum().backward()
    with pytest.raises(RuntimeError, match=lit("Expected to have finished reduction in the prior iteration before "
                                               "starting a new one. This error indicates that your module has "
                                               "parameters that were not used in producing loss.")) as info:
        model(torch.ones(1, 2)).sum().backward()
    assert "find_unused_parameters=True" in str(info.value)
    model = DDP(TwoBranches(), find_unused_parameters=True)
    for _ in range(2):
        model(torch.ones(1, 2)).sum().backward()
    assert model.module.unused.weight.grad is None and model.module.used.weight.grad is not None


class CheckpointedTwice(torch.nn.Module):
    """One Linear run through two checkpoints, as a model that reuses a block does."""

    def __init__(self, reentrant):
        super().__init__()
        self.lin, self.reentrant = torch.nn.Linear(2, 2), reentrant

    def forward(self, x):
        from torch.utils.checkpoint import checkpoint

        x = checkpoint(self.lin, x, use_reentrant=self.reentrant)
        return checkpoint(self.lin, x, use_reentrant=self.reentrant)


def trains(model):
    """Two forward-backward iterations of `model` run, and its Linear gets a gradient."""
    for _ in range(2):
        model(torch.ones(1, 2, requires_grad=True)).sum().backward()
    return model.module.lin.weight.grad is not None


@pytest.mark.claim("distributed.glooerr.ddp-ready-twice")
def test_ddp_parameter_marked_ready_twice(one_rank):
    from torch.nn.parallel import DistributedDataParallel as DDP

    model = DDP(CheckpointedTwice(reentrant=True), find_unused_parameters=True)
    with pytest.raises(RuntimeError, match="^" + lit(
            "Expected to mark a variable ready only once. This error is caused by one of the following reasons: "
            "1) Use of a module parameter outside the `forward` function.")) as info:
        model(torch.ones(1, 2, requires_grad=True)).sum().backward()
    assert "2) Reused parameters in multiple reentrant backward passes." in str(info.value)
    assert re.search(r"\nParameter at index \d+ with name lin\.(weight|bias) has been marked as ready twice\. ",
                     str(info.value)), str(info.value)
    assert trains(DDP(CheckpointedTwice(reentrant=False), find_unused_parameters=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # static_graph with find_unused_parameters warns that the flag is not needed
        assert trains(DDP(CheckpointedTwice(reentrant=True), find_unused_parameters=True, static_graph=True))
    assert trains(DDP(CheckpointedTwice(reentrant=True)))  # without the flag, on one rank, it trains
