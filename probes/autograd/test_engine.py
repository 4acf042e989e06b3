"""Probes for docs/autograd/engine.md."""
import inspect
import re
import sys
import threading
from pathlib import Path

import pytest
import torch

INCLUDE = Path(torch.__file__).parent / "include"


class EngineSpy:
    """Stands in for the engine object and records each run_backward call."""

    def __init__(self, real):
        self.real, self.calls = real, []

    def run_backward(self, *args, **kwargs):
        caller = sys._getframe(1).f_code
        self.calls.append(dict(kwargs, caller=(caller.co_name, caller.co_filename)))
        return self.real.run_backward(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.real, name)


def spy_calls(device):
    """The run_backward calls that backward() and grad() make, one list per entry point."""
    engine = torch.autograd.Variable._execution_engine
    spy = EngineSpy(engine)
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    torch.autograd.Variable._execution_engine = spy
    try:
        (x * x).sum().backward()
        from_backward = list(spy.calls)
        spy.calls.clear()
        (g,) = torch.autograd.grad((x * x).sum(), x)
        from_grad = list(spy.calls)
    finally:
        torch.autograd.Variable._execution_engine = engine
    assert g.tolist() == [2.0, 4.0]
    return from_backward, from_grad


@pytest.mark.claim("autograd.engine.one-entry-point")
def test_backward_and_grad_call_the_cpp_engine(device):
    engine = torch.autograd.Variable._execution_engine
    assert isinstance(engine, torch._C._ImperativeEngine)  # a C++ object (Python name _EngineBase)
    from_backward, from_grad = spy_calls(device)
    assert len(from_backward) == 1 and len(from_grad) == 1
    graph_py = torch.autograd.graph.__file__
    for call in from_backward + from_grad:
        assert call["caller"] == ("_engine_run_backward", graph_py)


@pytest.mark.claim("autograd.engine.accumulate-grad-flag")
def test_backward_accumulates_and_grad_does_not(device):
    from_backward, from_grad = spy_calls(device)
    assert [c["accumulate_grad"] for c in from_backward] == [True]
    assert [c["accumulate_grad"] for c in from_grad] == [False]


@pytest.mark.claim("autograd.engine.python-engine")
def test_python_engine_subclasses_engine_in_the_header():
    header = (INCLUDE / "torch/csrc/autograd/python_engine.h").read_text()
    assert re.search(r"^struct PythonEngine : public Engine \{", header, re.M)


@pytest.mark.claim("autograd.engine.grad-does-not-accumulate")
def test_autograd_grad_leaves_dot_grad_alone(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    (g,) = torch.autograd.grad((x ** 3).sum(), x)
    assert g.tolist() == [3.0, 12.0]
    assert x.grad is None


@pytest.mark.claim("autograd.engine.accumulates-into-grad")
def test_backward_adds_to_existing_grad(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    (x * 3).sum().backward()  # a second forward and backward: added, not replaced
    assert x.grad.tolist() == [6.0, 6.0]
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


@pytest.mark.claim("autograd.engine.zero-grad-sets-none")
def test_zero_grad_sets_none_by_default(device):
    model = torch.nn.Linear(2, 2).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    inp = torch.ones(1, 2, device=device)
    model(inp).sum().backward()
    assert model.weight.grad is not None
    model.zero_grad()
    assert model.weight.grad is None and model.bias.grad is None
    model(inp).sum().backward()
    opt.zero_grad()
    assert model.weight.grad is None
    model(inp).sum().backward()
    model.zero_grad(set_to_none=False)
    assert model.weight.grad is not None
    assert model.weight.grad.abs().sum().item() == 0.0


@pytest.mark.claim("autograd.engine.accumulate-in-place")
def test_kept_zero_grad_is_added_into_in_place(device):
    model = torch.nn.Linear(2, 2).to(device)
    inp = torch.ones(1, 2, device=device)
    model(inp).sum().backward()
    model.zero_grad(set_to_none=False)
    kept = model.weight.grad
    address = kept.data_ptr()
    model(inp).sum().backward()
    assert model.weight.grad is kept and kept.data_ptr() == address  # added into, in place
    assert kept.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    model.zero_grad()
    model(inp).sum().backward()
    assert model.weight.grad is not kept  # after None: a new tensor is stored
    assert model.weight.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]


@pytest.mark.claim("autograd.engine.nonscalar-needs-gradient")
def test_nonscalar_output_needs_grad_outputs(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    y = x * x
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        torch.autograd.grad(y, x)
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


@pytest.mark.claim("autograd.engine.grad-outputs-weights")
def test_grad_outputs_weight_an_elementwise_derivative(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    y = x * x
    v = torch.tensor([1.0, 0.0, -1.0], device=device)
    (g,) = torch.autograd.grad(y, x, grad_outputs=v)
    assert g.tolist() == [2.0, 0.0, -6.0]  # v * dy/dx = v * 2x


@pytest.mark.claim("autograd.engine.scalar-implicit-one")
def test_scalar_backward_uses_a_gradient_of_one(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    (x * x).sum().backward()
    implicit = x.grad
    x.grad = None
    (x * x).sum().backward(torch.tensor(1.0, device=device))
    assert torch.equal(implicit, x.grad)
    assert implicit.tolist() == [2.0, 4.0]  # 2x, times 1
    x.grad = None
    (x * x).sum().backward(torch.tensor(2.0, device=device))
    assert not torch.equal(implicit, x.grad)  # another gradient gives another result
    x.grad = None
    (x * x).sum().reshape(1, 1).backward()  # one element, not 0-d: still no gradient needed
    assert torch.equal(implicit, x.grad)


@pytest.mark.claim("autograd.engine.vector-jacobian-product")
def test_backward_computes_vjp(device):
    torch.manual_seed(0)
    a = torch.randn(3, 4, device=device, dtype=torch.float64)

    def f(x):
        return torch.tanh(a @ x)

    x = torch.randn(4, device=device, dtype=torch.float64, requires_grad=True)
    v = torch.randn(3, device=device, dtype=torch.float64)
    f(x).backward(v)
    jac = torch.autograd.functional.jacobian(f, x.detach())
    assert jac.shape == (3, 4)
    assert torch.allclose(x.grad, jac.T @ v)
    assert not torch.allclose(x.grad, jac.T @ (v + 1))


def record_order(nodes_by_label, log):
    for label, tensor in nodes_by_label.items():
        tensor.grad_fn.register_prehook(lambda grads, label=label: log.append(label))


@pytest.mark.claim("autograd.engine.order")
@pytest.mark.devices("cpu")
def test_ready_nodes_run_latest_first(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    a = x * 2  # created first
    b = x + 1  # created second
    c = a * b
    out = c.sum()
    assert b.grad_fn._sequence_nr() == a.grad_fn._sequence_nr() + 1  # b was created right after a
    assert c.grad_fn._sequence_nr() == b.grad_fn._sequence_nr() + 1
    log = []
    record_order({"a": a, "b": b, "c": c, "out": out}, log)
    out.backward()
    assert log == ["out", "c", "b", "a"]  # a and b become ready together: the later one runs first

    x2 = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    b2 = x2 + 1  # now created first
    a2 = x2 * 2
    out2 = (a2 * b2).sum()
    log2 = []
    record_order({"a": a2, "b": b2, "out": out2}, log2)
    out2.backward()
    assert log2 == ["out", "a", "b"]


@pytest.mark.claim("autograd.engine.sums-before-running")
def test_gradients_from_several_uses_are_summed_first(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x * 2
    received = []
    y.grad_fn.register_prehook(lambda grads: received.append(grads[0].tolist()))
    (y * 3 + y * 5).sum().backward()
    assert received == [[8.0, 8.0]]  # one call with 3 + 5, not two calls
    assert x.grad.tolist() == [16.0, 16.0]


@pytest.mark.claim("autograd.engine.runs-only-needed-nodes")
def test_grad_runs_only_nodes_leading_to_inputs(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    w = torch.tensor([3.0, 4.0], device=device, requires_grad=True)
    fx, gw = x.exp(), w.sin()
    ran = []
    fx.grad_fn.register_prehook(lambda g: ran.append("exp"))
    gw.grad_fn.register_prehook(lambda g: ran.append("sin"))
    torch.autograd.grad((fx + gw).sum(), x, retain_graph=True)
    assert ran == ["exp"]
    ran.clear()
    (fx + gw).sum().backward(inputs=[x])
    assert ran == ["exp"]
    assert w.grad is None and x.grad is not None


@pytest.mark.claim("autograd.engine.create-graph")
def test_create_graph_allows_higher_derivatives(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    (g,) = torch.autograd.grad((x ** 3).sum(), x)
    assert g.grad_fn is None and not g.requires_grad
    (g,) = torch.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    assert g.tolist() == [3.0, 12.0]  # 3x^2
    (h,) = torch.autograd.grad(g.sum(), x)
    assert h.tolist() == [6.0, 12.0]  # 6x


class GradModeSeen(torch.autograd.Function):
    seen = []

    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, grad):
        GradModeSeen.seen.append(torch.is_grad_enabled())
        return grad * 2


@pytest.mark.claim("autograd.engine.backward-grad-mode")
def test_backward_runs_with_grad_mode_equal_to_create_graph(device):
    GradModeSeen.seen.clear()
    x = torch.ones(2, device=device, requires_grad=True)
    torch.autograd.grad(GradModeSeen.apply(x).sum(), x)
    torch.autograd.grad(GradModeSeen.apply(x).sum(), x, create_graph=True)
    assert GradModeSeen.seen == [False, True]


class ThreadSeen(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, log):
        ctx.log = log
        return a * 2

    @staticmethod
    def backward(ctx, grad):
        ctx.log.append(threading.get_ident())
        return grad * 2, None


@pytest.mark.claim("autograd.engine.cpu-runs-on-caller")
@pytest.mark.devices("cpu")
def test_cpu_backward_runs_on_the_calling_thread(device):
    results = {}

    def work(tag):
        log = []
        x = torch.ones(3, device=device, requires_grad=True)
        x.register_hook(lambda g: log.append(threading.get_ident()))
        ThreadSeen.apply(x, log).sum().backward()
        results[tag] = (threading.get_ident(), log)

    work("main")
    worker = threading.Thread(target=work, args=("worker",))
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive()
    for tag in ("main", "worker"):
        caller, log = results[tag]
        assert log == [caller, caller]  # the custom backward and the tensor hook
    assert results["main"][0] != results["worker"][0]


@pytest.mark.claim("autograd.engine.entry-point-options")
def test_the_entry_points_take_different_options():
    only_grad = {"allow_unused", "is_grads_batched", "materialize_grads"}
    grad_options = set(inspect.signature(torch.autograd.grad).parameters)
    assert only_grad & grad_options == only_grad and "inputs" in grad_options
    for backward in (torch.autograd.backward, torch.Tensor.backward):
        options = set(inspect.signature(backward).parameters)
        assert not only_grad & options and "inputs" in options


@pytest.mark.claim("autograd.engine.materialize-grads")
def test_materialize_grads_gives_zeros_for_an_unused_input():
    a = torch.ones(2, requires_grad=True)
    unused = torch.ones(2, requires_grad=True)
    out = (a * 3).sum()
    (zeros,) = torch.autograd.grad(out, [unused], materialize_grads=True)
    assert zeros.tolist() == [0.0, 0.0]


@pytest.mark.claim("autograd.engine.unused-input-raises")
def test_grad_of_an_unused_input_raises_by_default():
    a = torch.ones(2, requires_grad=True)
    unused = torch.ones(2, requires_grad=True)
    out = (a * 3).sum()
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph. Set allow_unused=True"):
        torch.autograd.grad(out, [unused])
    assert torch.autograd.grad(out, [unused], allow_unused=True) == (None,)


@pytest.mark.claim("autograd.engine.device-queues")
def test_engine_header_holds_one_ready_queue_per_device():
    header = (INCLUDE / "torch/csrc/autograd/engine.h").read_text()
    members = re.findall(r"^\s+std::vector<std::shared_ptr<ReadyQueue>> (\w+);", header, re.M)
    assert members == ["device_ready_queues_"]


@pytest.mark.claim("autograd.engine.cuda-runs-on-worker")
@pytest.mark.devices("cuda")
def test_cuda_backward_runs_on_an_engine_thread(device):
    log = []
    x = torch.ones(3, device=device, requires_grad=True)
    ThreadSeen.apply(x, log).sum().backward()
    assert len(log) == 1
    assert log[0] != threading.get_ident()  # the device's worker thread, not the caller
