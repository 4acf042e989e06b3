"""Probes for docs/autograd/threads.md: backward from several Python threads on the CPU
(checked against the official note "Autograd mechanics")."""
import threading

import pytest
import torch


def _run_threads(target, n, args_of=lambda i: ()):
    threads = [threading.Thread(target=target, args=args_of(i)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)


@pytest.mark.claim("autograd.threads.independent-graphs")
@pytest.mark.timeout(60)
def test_ten_threads_each_with_their_own_graph():
    grads = [None] * 10

    def train(i):
        x = torch.ones(5, 5, requires_grad=True)
        y = (x + 3) * (x + 4) * 0.5
        y.sum().backward()
        grads[i] = x.grad

    _run_threads(train, 10, lambda i: (i,))
    # d/dx of (x + 3)(x + 4)/2 = x + 3.5, at x = 1
    assert all(torch.equal(g, torch.full((5, 5), 4.5)) for g in grads)


@pytest.mark.claim("autograd.threads.backward-runs-concurrently")
@pytest.mark.timeout(60)
def test_two_backward_calls_are_in_flight_at_once():
    barrier = threading.Barrier(2, timeout=20)
    threads_in_backward = set()

    class Meet(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.clone()

        @staticmethod
        def backward(ctx, g):
            threads_in_backward.add(threading.get_ident())
            barrier.wait()  # returns only once the other thread's backward is here too
            return g

    results = []

    def work():
        x = torch.ones(3, requires_grad=True)
        Meet.apply(x).sum().backward()
        results.append(x.grad.tolist())

    _run_threads(work, 2)
    assert not barrier.broken
    assert results == [[1.0, 1.0, 1.0]] * 2
    assert len(threads_in_backward) == 2


@pytest.mark.claim("autograd.threads.shared-leaf-accumulation")
@pytest.mark.timeout(120)
def test_concurrent_accumulation_into_one_leaf():
    x = torch.zeros(1000, requires_grad=True)

    def work():
        for _ in range(50):
            (x * 1).sum().backward()

    _run_threads(work, 8)
    assert torch.equal(x.grad, torch.full((1000,), 400.0))  # 8 threads x 50 backward calls


@pytest.mark.claim("autograd.threads.grad-per-thread")
@pytest.mark.timeout(60)
def test_autograd_grad_keeps_results_per_thread():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    out = {}

    def work(i):
        out[i] = torch.autograd.grad((x * (i + 1)).sum(), x)[0].tolist()

    _run_threads(work, 4, lambda i: (i,))
    assert out == {i: [float(i + 1)] * 2 for i in range(4)}
    assert x.grad is None


@pytest.mark.claim("autograd.threads.shared-graph-needs-retain")
@pytest.mark.timeout(60)
def test_second_thread_on_a_freed_shared_graph_fails():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    shared = x.exp()  # built once, on this thread; ExpBackward0 saves its result
    errors = []

    def work(retain):
        try:
            (shared * 2).sum().backward(retain_graph=retain)
        except RuntimeError as e:
            errors.append(e)

    for retain in (False, False):
        _run_threads(work, 1, lambda i: (retain,))
    assert len(errors) == 1
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        raise errors[0]
    assert "Specify retain_graph=True" in str(errors[0])
    assert torch.allclose(x.grad, 2 * x.detach().exp())  # only the first thread's gradient


@pytest.mark.claim("autograd.threads.shared-graph-retain-ok")
@pytest.mark.timeout(60)
def test_retain_graph_lets_a_second_thread_through_a_shared_graph():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    shared = x.exp()
    errors = []

    def work(retain):
        try:
            (shared * 2).sum().backward(retain_graph=retain)
        except RuntimeError as e:
            errors.append(e)

    for retain in (True, True):
        _run_threads(work, 1, lambda i: (retain,))
    assert errors == []
    assert torch.allclose(x.grad, 4 * x.detach().exp())


@pytest.mark.claim("autograd.threads.shared-graph-concurrent")
@pytest.mark.timeout(120)
def test_concurrent_backward_through_one_shared_graph():
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * a * g

    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    shared = Square.apply(x.sin())  # a Python Function on top of a built-in node
    barrier = threading.Barrier(4, timeout=20)

    def work():
        barrier.wait()
        for _ in range(25):
            (shared * 1).sum().backward(retain_graph=True)

    _run_threads(work, 4)
    single = 2 * x.detach().sin() * x.detach().cos()
    assert torch.allclose(x.grad, 100 * single)  # 4 threads x 25 calls, nothing lost


@pytest.mark.claim("autograd.threads.graph-task-per-call")
@pytest.mark.timeout(60)
def test_each_backward_call_has_its_own_graph_task():
    ids = {}

    def work(i):
        x = torch.ones(2, requires_grad=True)
        x.register_hook(lambda g: ids.update({i: torch._C._current_graph_task_id()}))
        (x * 2).sum().backward()

    _run_threads(work, 3, lambda i: (i,))
    work(3)  # and one more on this thread
    assert len(ids) == 4
    seen = sorted(ids.values())
    assert seen == list(range(seen[0], seen[0] + 4))  # four calls, four new graph tasks in a row


@pytest.mark.claim("autograd.threads.node-mutex")
def test_node_has_its_own_mutex_in_the_header():
    import re
    from pathlib import Path

    from torch.torch_version import TorchVersion

    autograd = Path(torch.__file__).parent / "include/torch/csrc/autograd"
    declaring = {}
    for name in ("function.h", "node.h"):
        path = autograd / name
        text = path.read_text() if path.exists() else ""
        found = re.search(r"^struct TORCH_API Node : [^{]*\{", text, re.M)
        if found:
            declaring[name] = text[found.start():]
    # one header declares Node: node.h since 2.13 (included by function.h), function.h before
    newer = TorchVersion(torch.__version__) >= "2.13"
    assert list(declaring) == (["node.h"] if newer else ["function.h"])
    if newer:
        assert "#include <torch/csrc/autograd/node.h>" in (autograd / "function.h").read_text()
    node = next(iter(declaring.values()))
    node = node[:node.index("\n};")]
    assert re.findall(r"^\s+std::mutex (\w+);", node, re.M) == ["mutex_"]
