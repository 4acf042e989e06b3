"""Probes for docs/memory/cudnn.md."""
import re
from pathlib import Path

import pytest
import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

CONTEXT_H = Path(torch.__file__).parent / "include" / "ATen" / "Context.h"


@pytest.mark.claim("memory.cudnn.prop-module")
def test_cudnn_module_is_a_prop_module():
    import sys
    module = sys.modules["torch.backends.cudnn"]
    assert type(module).__name__ == "CudnnModule"
    assert issubclass(type(module), torch.backends.PropModule) and isinstance(module, type(sys))
    assert type(vars(type(module))["benchmark"]) is torch.backends.ContextProp


@pytest.mark.claim("memory.cudnn.flag-lives-in-backends")
def test_benchmark_flag_is_under_torch_backends():
    cudnn = torch.backends.cudnn
    assert cudnn.benchmark is False  # off by default
    assert not hasattr(torch, "cudnn")
    with pytest.raises(AttributeError, match="module 'torch' has no attribute 'cudnn'"):
        torch.cudnn.benchmark = True
    try:
        cudnn.benchmark = True
        assert torch._C._get_cudnn_benchmark() is True  # the attribute writes the global context flag
    finally:
        cudnn.benchmark = False
    assert torch._C._get_cudnn_benchmark() is False
    assert re.search(r"bool benchmark_cudnn = false;", CONTEXT_H.read_text())


@pytest.mark.claim("memory.cudnn.typo-is-silent")
def test_misspelled_flag_is_accepted_silently():
    cudnn = torch.backends.cudnn
    try:
        cudnn.benchmarks = True  # note the extra "s": no error, no effect
        assert cudnn.benchmarks is True
        assert cudnn.benchmark is False and torch._C._get_cudnn_benchmark() is False
    finally:
        del cudnn.benchmarks


@pytest.mark.claim("memory.cudnn.flags-resets-the-rest")
def test_flags_context_applies_every_default():
    cudnn = torch.backends.cudnn
    assert cudnn.enabled is True and cudnn.deterministic is False
    with cudnn.flags(benchmark=True):
        assert cudnn.benchmark is True
        assert cudnn.enabled is False  # `enabled` defaults to False in flags()
    assert cudnn.enabled is True and cudnn.benchmark is False  # restored on exit
    with cudnn.flags(enabled=True, benchmark=True, deterministic=True):
        assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (True, True, True)
    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (True, False, False)


@pytest.mark.claim("memory.cudnn.deterministic-is-separate")
def test_deterministic_algorithms_do_not_flip_the_cudnn_flag():
    assert torch.backends.cudnn.deterministic is False
    try:
        torch.use_deterministic_algorithms(True)
        assert torch.backends.cudnn.deterministic is False
        assert torch._C._get_cudnn_deterministic() is False
    finally:
        torch.use_deterministic_algorithms(False)


@pytest.mark.claim("memory.cudnn.benchmark-limit")
def test_benchmark_limit_default():
    assert re.search(r"int benchmark_limit_cudnn = 10;", CONTEXT_H.read_text())
    with_cudnn = torch.backends.cudnn.is_available()  # a property of the build
    assert torch.backends.cudnn.benchmark_limit == (10 if with_cudnn else None)


def gpu_work_items(fn):
    """Kernels, copies and memsets that ran on the GPU during fn()."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sum(1 for e in prof.events() if e.device_type == DeviceType.CUDA)


@pytest.mark.claim("memory.cudnn.benchmark-per-shape")
@pytest.mark.devices("cuda")
@pytest.mark.timeout(240)
def test_benchmark_tries_algorithms_once_per_input_shape(device):
    conv = torch.nn.Conv2d(16, 32, 3).to(device)  # as the claim states it: no padding
    a = torch.randn(8, 16, 32, 32, device=device)
    b = torch.randn(9, 16, 32, 32, device=device)  # only the batch size differs
    with torch.no_grad(), torch.backends.cudnn.flags(enabled=True, benchmark=True):
        a_first = gpu_work_items(lambda: conv(a))
        a_again = gpu_work_items(lambda: conv(a))
        b_first = gpu_work_items(lambda: conv(b))
        b_again = gpu_work_items(lambda: conv(b))
        a_third = gpu_work_items(lambda: conv(a))
    assert a_first > a_again  # the first call of a shape runs candidate algorithms
    assert b_first > b_again  # a new batch size is a new shape: tried again
    assert a_third == a_again  # the choice for the first shape is still cached
