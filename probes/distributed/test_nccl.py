"""Probes for docs/distributed/nccl.md."""
import warnings

import _c10d_launch  # the 2-process launcher beside this file
import pytest
import torch
import torch.distributed as dist

from verified.probing.message_capture import observed  # a message a rank returned, for the error index


def cpu_build_only():
    if torch.version.cuda is not None:
        pytest.skip("not run here: this claim is about a CPU-only build of torch")


@pytest.mark.claim("distributed.backends.cpu-wheel")
def test_cpu_wheel_has_gloo_not_nccl():
    cpu_build_only()
    assert dist.is_available() and dist.is_gloo_available()
    assert not dist.is_nccl_available()


@pytest.mark.claim("distributed.backends.cpu-wheel-no-mpi")
def test_cpu_wheel_has_no_mpi():
    cpu_build_only()
    assert not dist.is_mpi_available()


@pytest.mark.claim("distributed.backends.cpu-wheel-no-nccl-class")
def test_cpu_wheel_has_no_nccl_class():
    cpu_build_only()
    assert not hasattr(torch._C._distributed_c10d, "ProcessGroupNCCL")


@pytest.mark.claim("distributed.backends.cpu-wheel-nccl-init-error")
def test_cpu_wheel_nccl_init_raises(tmp_path):
    cpu_build_only()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "NCCL support is not compiled"
        with pytest.raises(RuntimeError, match="Distributed package doesn't have NCCL built in"):
            dist.init_process_group("nccl", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'gloo'}", rank=0, world_size=1)  # the fix
    try:
        assert dist.get_backend() == "gloo"
    finally:
        dist.destroy_process_group()


@pytest.mark.claim("distributed.backends.device-map")
def test_backend_per_device_type():
    assert dist.Backend.default_device_backend_map["cpu"] == "gloo"
    assert dist.Backend.default_device_backend_map["cuda"] == "nccl"


@pytest.mark.claim("distributed.backends.capability")
def test_backend_capability():
    assert dist.Backend.backend_capability["nccl"] == ["cuda"]
    assert sorted(dist.Backend.backend_capability["gloo"]) == ["cpu", "cuda"]


NCCL_WORKER = r'''
import torch
import torch.distributed
r = {}
r["nccl_available"] = torch.distributed.is_nccl_available()
r["nccl_version"] = list(torch.cuda.nccl.version())
dist = init("nccl")
torch.cuda.set_device(0)
r["backend"] = dist.get_backend()
world = dist.group.WORLD
r["cuda_backend"] = type(world._get_backend(torch.device("cuda"))).__name__
t = torch.full((4,), 3.0, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
r["all_reduce"] = t.cpu().tolist()
r["device"] = str(t.device)
try:
    dist.all_reduce(torch.ones(2))
    r["cpu_tensor"] = None
except RuntimeError as exc:
    r["cpu_tensor"] = str(exc)
dist.destroy_process_group()
report(r)
'''


def nccl_run():
    (r,) = _c10d_launch.shared_ranks(NCCL_WORKER, world_size=1, timeout=120, env={"NCCL_SOCKET_IFNAME": "lo"})
    return r


@pytest.mark.claim("distributed.nccl.cuda-all-reduce")
@pytest.mark.devices("cuda")
@pytest.mark.timeout(180)
def test_nccl_group_on_one_gpu(device):
    r = nccl_run()
    assert r["backend"] == "nccl" and r["cuda_backend"] == "ProcessGroupNCCL"
    assert r["all_reduce"] == [3.0] * 4 and r["device"] == "cuda:0"  # one rank: the sum is the value


@pytest.mark.claim("distributed.nccl.available-with-cuda")
@pytest.mark.devices("cuda")
@pytest.mark.timeout(180)
def test_nccl_available_and_version_two(device):
    r = nccl_run()
    assert r["nccl_available"] is True
    assert r["nccl_version"][0] == 2  # NCCL 2.x


@pytest.mark.claim("distributed.nccl.no-cpu-tensors")
@pytest.mark.devices("cuda")
@pytest.mark.timeout(180)
def test_nccl_only_group_rejects_cpu_tensors(device):
    r = nccl_run()
    assert r["cpu_tensor"] is not None and "No backend type associated with device type cpu" in r["cpu_tensor"]
    observed(RuntimeError, r["cpu_tensor"])
