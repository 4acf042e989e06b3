"""Probes for docs/memory/cuda-graphs.md and the CUDA-note additions to
docs/memory/cuda-streams.md: default streams, wait_stream, CUDA_LAUNCH_BLOCKING, the stream of
backward ops, graph capture and replay, and the deprecated torch.cuda.amp entry points.

`torch.cuda._sleep(cycles)` is a kernel that spins for that many GPU cycles (about half a
second for 10**9), a stand-in for long work.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

SPIN = 10**9
HEADERS = Path(torch.__file__).parent / "include"


def run_fresh(code, env_updates=None, timeout=120):
    env = dict(os.environ)
    env.update(env_updates or {})
    proc = subprocess.run([sys.executable, "-c", "import json, os, time, torch\n" + code],
                          capture_output=True, text=True, timeout=timeout, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- streams

@pytest.mark.claim("memory.cuda.default-stream")
@pytest.mark.devices("cuda")
def test_each_device_starts_on_its_default_stream(device):
    default = torch.cuda.default_stream()
    assert torch.cuda.current_stream() == default
    s = torch.cuda.Stream()
    assert s != default
    with torch.cuda.stream(s):
        assert torch.cuda.current_stream() == s
    assert torch.cuda.current_stream() == default


@pytest.mark.claim("memory.cuda.wait-stream-orders")
@pytest.mark.devices("cuda")
def test_wait_stream_orders_a_side_stream_after_queued_work(device):
    n = 1 << 20
    torch.cuda._sleep(1000)
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    results = {}
    for wait in (False, True):
        a = torch.zeros(n, device=device)
        torch.cuda.synchronize()
        torch.cuda._sleep(SPIN)  # default stream: long work, then the write
        a.fill_(1.0)
        if wait:
            side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            total = a.sum()
        torch.cuda.synchronize()
        results[wait] = total.item()
    assert results == {False: 0.0, True: float(n)}


LAUNCH = """
torch.cuda._sleep(1000)
torch.cuda.synchronize()
t0 = time.perf_counter()
torch.cuda._sleep(10**9)
launched = time.perf_counter() - t0
torch.cuda.synchronize()
print(json.dumps([launched, time.perf_counter() - t0]))
"""


@pytest.mark.claim("memory.cuda.launch-blocking")
@pytest.mark.devices("cuda")
@pytest.mark.timeout(180)
def test_cuda_launch_blocking_makes_launches_wait(device):
    launched, finished = run_fresh(LAUNCH, {"CUDA_LAUNCH_BLOCKING": "0"})
    assert finished > 0.05 and launched < finished / 10
    launched, finished = run_fresh(LAUNCH, {"CUDA_LAUNCH_BLOCKING": "1"})
    assert finished > 0.05 and launched > finished / 2


@pytest.mark.claim("memory.cuda.backward-stream")
@pytest.mark.devices("cuda")
def test_backward_node_runs_on_its_forward_stream(device):
    seen = {}

    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            seen["forward"] = torch.cuda.current_stream()
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            seen["backward"] = torch.cuda.current_stream()
            return grad * 2

    side = torch.cuda.Stream()
    x = torch.ones(4, device=device, requires_grad=True)
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        loss = Double.apply(x).sum()
    torch.cuda.current_stream().wait_stream(side)
    loss.backward()  # called on the default stream
    torch.cuda.synchronize()
    assert seen["forward"] == side and seen["backward"] == side
    assert torch.cuda.current_stream() == torch.cuda.default_stream()
    assert x.grad.tolist() == [2.0] * 4


# ---------------------------------------------------------------- CUDA graphs

def capture_times_two(device):
    g = torch.cuda.CUDAGraph()
    static_input = torch.empty((5,), device=device)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            static_output = static_input * 2
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        static_output = static_input * 2
    return g, static_input, static_output


@pytest.mark.claim("memory.cuda.graph-api-cpu-build")
def test_graph_api_exists_without_cuda():
    if torch.version.cuda is not None or torch.version.hip is not None:
        pytest.skip("not run here: this claim is about a CPU-only build of torch")
    assert isinstance(torch.cuda.CUDAGraph, type) and isinstance(torch.cuda.graph, type)
    assert callable(torch.cuda.make_graphed_callables)
    with pytest.raises(RuntimeError, match="Tried to instantiate dummy base class CUDAGraph"):
        torch.cuda.CUDAGraph()


@pytest.mark.claim("memory.cuda.graph-replay")
@pytest.mark.devices("cuda")
def test_replay_reuses_the_captured_addresses(device):
    g, static_input, static_output = capture_times_two(device)
    ptr = static_output.data_ptr()
    for value in (3.0, 4.0):
        static_input.copy_(torch.full((5,), value, device=device))
        g.replay()
        torch.cuda.synchronize()
        assert static_output.data_ptr() == ptr
        assert static_output.tolist() == [2 * value] * 5


@pytest.mark.claim("memory.cuda.graph-side-stream")
@pytest.mark.devices("cuda")
def test_graph_context_captures_on_a_side_stream(device):
    g = torch.cuda.CUDAGraph()
    x = torch.ones(3, device=device)
    default = torch.cuda.default_stream()
    assert not torch.cuda.is_current_stream_capturing()
    with torch.cuda.graph(g):
        inside = torch.cuda.current_stream()
        capturing = torch.cuda.is_current_stream_capturing()
        y = x + 1
    assert inside != default and capturing
    assert torch.cuda.current_stream() == default and not torch.cuda.is_current_stream_capturing()
    g.replay()
    torch.cuda.synchronize()
    assert y.tolist() == [2.0] * 3


RAW_CAPTURE_ON_DEFAULT = """
g = torch.cuda.CUDAGraph()
torch.ones(1, device="cuda")
try:
    g.capture_begin()
    out = "began"
except RuntimeError as e:
    out = str(e).splitlines()[0]
print(json.dumps(out))
"""


@pytest.mark.claim("memory.cuda.graph-default-stream-refused")
@pytest.mark.devices("cuda")
@pytest.mark.timeout(180)
def test_raw_capture_on_the_default_stream_is_refused(device):
    out = run_fresh(RAW_CAPTURE_ON_DEFAULT)
    assert out.startswith("CUDA graphs must be captured on a non-default stream.")
    assert "it's ok to replay them on the default stream" in out


@pytest.mark.claim("memory.cuda.graph-cpu-work-elided")
@pytest.mark.devices("cuda")
def test_cpu_work_runs_once_at_capture(device):
    g = torch.cuda.CUDAGraph()
    x = torch.ones(3, device=device)
    counter = torch.zeros(1)  # a CPU tensor
    calls = []
    with torch.cuda.graph(g):
        counter.add_(1)
        calls.append(1)
        y = x * 3
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    assert counter.item() == 1.0 and len(calls) == 1
    assert y.tolist() == [3.0] * 3


@pytest.mark.claim("memory.cuda.graph-replay-any-stream")
@pytest.mark.devices("cuda")
def test_replay_on_another_stream(device):
    g, static_input, static_output = capture_times_two(device)
    other = torch.cuda.Stream()
    static_input.copy_(torch.full((5,), 7.0, device=device))
    other.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(other):
        g.replay()
    other.synchronize()
    assert static_output.tolist() == [14.0] * 5
    static_input.copy_(torch.full((5,), 1.0, device=device))
    g.replay()  # and on the default stream
    torch.cuda.synchronize()
    assert static_output.tolist() == [2.0] * 5


@pytest.mark.claim("memory.cuda.graphed-callables-autograd")
@pytest.mark.devices("cuda")
def test_make_graphed_callables_is_autograd_aware(device):
    torch.manual_seed(0)
    module = torch.nn.Linear(8, 4).to(device)
    sample = torch.randn(16, 8, device=device)
    graphed = torch.cuda.make_graphed_callables(module, (sample,))
    module.zero_grad(set_to_none=True)
    x = torch.randn(16, 8, device=device)
    out = graphed(x)
    assert out.requires_grad and out.grad_fn is not None
    expected = x @ module.weight.detach().t() + module.bias.detach()
    torch.testing.assert_close(out.detach(), expected, rtol=1e-4, atol=1e-4)
    out.sum().backward()
    torch.testing.assert_close(module.weight.grad, x.sum(0).expand(4, 8), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(module.bias.grad, torch.full((4,), 16.0, device=device), rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- torch.cuda.amp and DDP setup

@pytest.mark.claim("memory.precision.cuda-amp-subclasses")
def test_cuda_amp_classes_subclass_the_generic_ones():
    assert issubclass(torch.cuda.amp.autocast, torch.amp.autocast)
    assert issubclass(torch.cuda.amp.GradScaler, torch.amp.GradScaler)


@pytest.mark.claim("memory.precision.cuda-amp-deprecated")
def test_cuda_amp_entry_points_are_deprecated():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "CUDA is not available" on a CPU-only build
        with pytest.warns(FutureWarning, match=re.escape(
                "`torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)` instead.")):
            torch.cuda.amp.autocast()
        with pytest.warns(FutureWarning, match=re.escape(
                "`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', args...)` instead.")):
            torch.cuda.amp.GradScaler()


@pytest.mark.claim("memory.cuda.nccl-async-env-renamed")
def test_nccl_async_error_handling_variable_is_a_deprecated_alias():
    pg = (HEADERS / "torch" / "csrc" / "distributed" / "c10d" / "ProcessGroupNCCL.hpp").read_text()
    names = re.search(r"TORCH_NCCL_ASYNC_ERROR_HANDLING = \{\s*\"(\w+)\",\s*\"(\w+)\"\};", pg)
    assert names and names.groups() == ("TORCH_NCCL_ASYNC_ERROR_HANDLING", "NCCL_ASYNC_ERROR_HANDLING")
    utils = (HEADERS / "torch" / "csrc" / "distributed" / "c10d" / "Utils.hpp").read_text()
    assert '"Environment variable " + deprecated_env + " is deprecated; use " +' in utils
    # getCvarInt warns for every name after the first
    body = utils[utils.index("inline int getCvarInt("):]
    body = body[:body.index("return ret;\n}")]
    assert "} else if (i) {\n      WARN_ENV_VAR_ONCE(env[i], env[0]);" in body
