"""Probes for docs/bridge/crossing-cost.md. Timings are best-of-N with wide margins: the
measured ratios are in the hundreds or thousands, the asserted bounds are far below."""
import time

import pytest
import torch


def best_time(fn, device, repeats=5):
    """Shortest wall time of `fn()` over `repeats` runs, waiting for the device each time."""
    best = float("inf")
    for _ in range(repeats):
        if device == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        if device == "cuda":
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.claim("bridge.crossing.loop-vs-vectorized")
@pytest.mark.timeout(60)
def test_python_loop_of_tiny_ops_is_far_slower(device):
    n = 10_000
    x = torch.randn(n, device=device)

    def loop():
        for i in range(n):
            x[i] + 1.0

    def vectorized():
        x + 1.0

    vectorized()  # warm up (kernel load on CUDA)
    loop_time = best_time(loop, device, repeats=3)
    vector_time = best_time(vectorized, device, repeats=20)
    assert loop_time > 50.0 * vector_time


@pytest.mark.claim("bridge.crossing.fixed-cost")
@pytest.mark.timeout(60)
def test_small_calls_cost_the_same_whatever_their_size(device):
    calls = 300
    one = torch.randn(1, device=device)
    thousand = torch.randn(1000, device=device)

    def many(t):
        def run():
            for _ in range(calls):
                t + 1.0
        return run

    many(one)()
    many(thousand)()
    t_one = best_time(many(one), device, repeats=15)
    t_thousand = best_time(many(thousand), device, repeats=15)
    assert t_thousand < 3.0 * t_one  # 1000x the elements, not even 3x the time
    assert t_one < 3.0 * t_thousand


@pytest.mark.claim("bridge.crossing.tensor-vs-float")
@pytest.mark.timeout(60)
def test_zero_dim_tensor_is_not_a_cheap_number(device):
    calls = 2000
    value = torch.tensor(1.5, device=device)
    number = 1.5

    def tensor_adds():
        for _ in range(calls):
            value + 1.0

    def float_adds():
        for _ in range(calls):
            number + 1.0

    tensor_adds()
    t_tensor = best_time(tensor_adds, device, repeats=7)
    t_float = best_time(float_adds, device, repeats=7)
    assert t_tensor > 10.0 * t_float
