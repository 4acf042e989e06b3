"""Probes for docs/optim/step-and-implementations.md."""
import inspect
import math
import re
from pathlib import Path

import pytest
import torch
import torchgen
from torch import nn
from torch.optim.optimizer import _default_to_fused_or_foreach
from torch.profiler import ProfilerActivity, profile
from torch.utils._python_dispatch import TorchDispatchMode

from verified.probing import measured

NATIVE_FUNCTIONS = Path(torchgen.__file__).parent / "packaged/ATen/native/native_functions.yaml"

# Values that are exact in binary floating point, so that every formula below holds bit for bit.
P0 = [1.0, -2.0, 4.0]
G1 = [0.5, 0.25, -1.0]
G2 = [2.0, -4.0, 0.5]


class OpRecorder(TorchDispatchMode):
    """Records each aten operator (as `name.overload`) that reaches the Python dispatch key."""

    def __init__(self):
        super().__init__()
        self.ops = []
        self.grad_enabled = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(f"{func.overloadpacket.__name__}.{func._overloadname}")
        self.grad_enabled.append(torch.is_grad_enabled())
        return func(*args, **(kwargs or {}))


def optimizer_ops(ops):
    """The operators of the update itself, without the record_function bracket around step()."""
    return [op for op in ops if not op.startswith("_record_function")]


def three_params(device, n=3):
    torch.manual_seed(0)
    params = [nn.Parameter(torch.randn(n, device=device)) for _ in range(3)]
    for p in params:
        p.grad = torch.ones_like(p)
    return params


def second_step_ops(cls, params, **kwargs):
    """Operators of the second step (the first one also creates the state)."""
    opt = cls(params, lr=0.1, **kwargs)
    opt.step()
    with OpRecorder() as rec:
        opt.step()
    return optimizer_ops(rec.ops)


def run_steps(cls, impl, device, steps=5, **kwargs):
    torch.manual_seed(0)
    params = [nn.Parameter(torch.randn(5, device=device)) for _ in range(3)]
    opt = cls(params, lr=0.1, **kwargs, **impl)
    for s in range(steps):
        for p in params:
            p.grad = torch.sin(p.detach() * (s + 1))
        opt.step()
    return torch.cat([p.detach() for p in params])


# -- what step() does to a parameter ---------------------------------------------------------

@pytest.mark.claim("optim.step.in-place")
def test_step_updates_the_same_tensor_in_place_without_grad(device):
    p = nn.Parameter(torch.tensor(P0, device=device))
    p.grad = torch.tensor(G1, device=device)
    opt = torch.optim.SGD([p], lr=0.5)
    ptr, version = p.data_ptr(), p._version
    with OpRecorder() as rec:
        opt.step()
    assert opt.param_groups[0]["params"][0] is p and p.data_ptr() == ptr
    assert p._version == version + 1  # one in-place write
    assert p.is_leaf and p.grad_fn is None and p.requires_grad
    op = "add_.Tensor" if device == "cpu" else "_foreach_add_.List"  # the default implementation differs
    assert optimizer_ops(rec.ops) == [op]
    update = [g for name, g in zip(rec.ops, rec.grad_enabled) if name == op]
    assert update == [False]  # the update ran with grad mode off
    assert torch.is_grad_enabled()  # and it is back on after step()


@pytest.mark.claim("optim.step.closure")
def test_the_closure_runs_with_grad_enabled(device):
    p = nn.Parameter(torch.tensor(P0, device=device))
    opt = torch.optim.SGD([p], lr=0.5)
    seen = []

    def closure():
        seen.append(torch.is_grad_enabled())
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with torch.no_grad():
        loss = opt.step(closure)
    assert seen == [True]
    assert loss.item() == sum(v * v for v in P0)  # step() returns what the closure returned
    assert torch.equal(p.detach(), torch.tensor([v - 0.5 * 2 * v for v in P0], device=device))


@pytest.mark.claim("optim.step.sgd-plain")
def test_plain_sgd_is_p_minus_lr_times_g(device):
    p = nn.Parameter(torch.tensor(P0, device=device))
    p.grad = torch.tensor(G1, device=device)
    torch.optim.SGD([p], lr=0.5).step()
    assert torch.equal(p.detach(), torch.tensor([x - 0.5 * g for x, g in zip(P0, G1)], device=device))


@pytest.mark.claim("optim.step.sgd-momentum")
def test_sgd_momentum_two_steps(device):
    lr, mu, damp = 0.5, 0.5, 0.5
    p = nn.Parameter(torch.tensor(P0, device=device))
    opt = torch.optim.SGD([p], lr=lr, momentum=mu, dampening=damp)
    p.grad = torch.tensor(G1, device=device)
    opt.step()
    buf1 = list(G1)  # the first buffer is the gradient itself: no dampening yet
    p1 = [x - lr * b for x, b in zip(P0, buf1)]
    assert opt.state[p]["momentum_buffer"].tolist() == buf1
    assert p.tolist() == p1
    p.grad = torch.tensor(G2, device=device)
    opt.step()
    buf2 = [mu * b + (1 - damp) * g for b, g in zip(buf1, G2)]
    assert opt.state[p]["momentum_buffer"].tolist() == buf2
    assert p.tolist() == [x - lr * b for x, b in zip(p1, buf2)]


@pytest.mark.claim("optim.step.nesterov")
def test_nesterov_steps_along_gradient_plus_momentum(device):
    lr, mu = 0.5, 0.5
    p = nn.Parameter(torch.tensor(P0, device=device))
    opt = torch.optim.SGD([p], lr=lr, momentum=mu, nesterov=True)
    p.grad = torch.tensor(G1, device=device)
    opt.step()
    # buffer = g, and the step uses g + mu * buffer
    assert p.tolist() == [x - lr * (g + mu * g) for x, g in zip(P0, G1)]


@pytest.mark.claim("optim.step.weight-decay")
def test_sgd_weight_decay_is_added_to_the_gradient(device):
    lr, wd = 0.5, 0.25
    p = nn.Parameter(torch.tensor(P0, device=device))
    g = torch.tensor(G1, device=device)
    p.grad = g.clone()
    torch.optim.SGD([p], lr=lr, weight_decay=wd).step()
    assert p.tolist() == [x - lr * (gi + wd * x) for x, gi in zip(P0, G1)]
    assert torch.equal(p.grad, g)  # the decay is added to a new tensor, not to .grad


@pytest.mark.claim("optim.step.adam-first-step")
def test_adams_first_step_moves_every_element_by_about_lr(device):
    lr = 0.01
    grads = [1e-3, -5.0, 100.0, 0.25]
    w = nn.Parameter(torch.zeros(4, device=device))
    w.grad = torch.tensor(grads, device=device)
    torch.optim.Adam([w], lr=lr).step()
    moved = w.detach().cpu().tolist()
    for delta, g in zip(moved, grads):
        assert math.copysign(1.0, delta) == -math.copysign(1.0, g)  # against the gradient
        assert abs(abs(delta) - lr) <= 1e-4 * lr  # by lr (to 0.01 %), whatever the gradient's size


@pytest.mark.claim("optim.step.adamw-decoupled")
def test_decoupled_weight_decay_scales_the_parameter(device):
    lr, wd = 0.1, 0.5
    start = torch.tensor([1.0, -2.0, 4.0], device=device)
    decoupled = nn.Parameter(start.clone())
    coupled = nn.Parameter(start.clone())
    for p in (decoupled, coupled):
        p.grad = torch.zeros(3, device=device)
    torch.optim.AdamW([decoupled], lr=lr, weight_decay=wd).step()
    torch.optim.Adam([coupled], lr=lr, weight_decay=wd).step()
    assert torch.allclose(decoupled.detach(), start * (1 - lr * wd), rtol=0, atol=1e-6)
    # L2 decay goes through Adam's normalisation: each element moves by about lr toward zero
    assert torch.allclose(coupled.detach(), start - lr * start.sign(), rtol=0, atol=1e-6)


@pytest.mark.claim("optim.step.adamw-is-adam")
def test_adamw_is_adam_with_decoupled_weight_decay(device):
    assert torch.optim.AdamW.__mro__[1] is torch.optim.Adam
    assert "decoupled_weight_decay=True" in inspect.getsource(torch.optim.AdamW.__init__)
    assert inspect.signature(torch.optim.AdamW).parameters["weight_decay"].default == 1e-2
    assert inspect.signature(torch.optim.Adam).parameters["weight_decay"].default == 0
    adamw = run_steps(torch.optim.AdamW, {}, device, weight_decay=0.1)
    decoupled = run_steps(torch.optim.Adam, {}, device, weight_decay=0.1, decoupled_weight_decay=True)
    coupled = run_steps(torch.optim.Adam, {}, device, weight_decay=0.1)
    assert torch.equal(adamw, decoupled)
    assert not torch.allclose(adamw, coupled)


# -- which implementation runs ---------------------------------------------------------------

@pytest.mark.claim("optim.impl.default-cpu")
@pytest.mark.devices("cpu")
def test_cpu_default_is_the_for_loop(device):
    params = three_params(device)
    assert _default_to_fused_or_foreach(params, differentiable=False, use_fused=False) == (False, False)
    ops = second_step_ops(torch.optim.SGD, params, momentum=0.9)
    assert ops == ["mul_.Tensor", "add_.Tensor", "add_.Tensor"] * 3  # per parameter
    ops = second_step_ops(torch.optim.Adam, three_params(device))
    assert not any(op.startswith("_foreach") or op.startswith("_fused") for op in ops)
    assert ops.count("addcdiv_.default") == 3


@pytest.mark.claim("optim.impl.foreach-ops")
@pytest.mark.devices("cpu")
def test_foreach_true_issues_one_op_per_list(device):
    expected = ["_foreach_mul_.Scalar", "_foreach_add_.List", "_foreach_add_.List"]
    for n_params in (3, 10):
        torch.manual_seed(0)
        params = [nn.Parameter(torch.randn(4, device=device)) for _ in range(n_params)]
        for p in params:
            p.grad = torch.ones_like(p)
        assert second_step_ops(torch.optim.SGD, params, momentum=0.9, foreach=True) == expected
    ops = second_step_ops(torch.optim.Adam, three_params(device), foreach=True)
    assert all(op.startswith("_foreach") or op in ("lift_fresh.default", "_local_scalar_dense.default")
               for op in ops)
    assert "_foreach_addcdiv_.ScalarList" in ops


@pytest.mark.claim("optim.impl.fused-cpu")
@pytest.mark.devices("cpu")
def test_fused_runs_one_kernel_on_cpu(device):
    assert second_step_ops(torch.optim.SGD, three_params(device), momentum=0.9, fused=True) == ["_fused_sgd_.default"]
    adam_ops = second_step_ops(torch.optim.Adam, three_params(device), fused=True)
    assert adam_ops == ["_foreach_add_.Scalar", "_fused_adam_.default"]  # step counters += 1, then the update
    assert torch._C._dispatch_has_kernel_for_dispatch_key("aten::_fused_adam_", "CPU")
    assert torch._C._dispatch_has_kernel_for_dispatch_key("aten::_fused_sgd_", "CPU")


@pytest.mark.claim("optim.impl.fused-and-foreach")
def test_fused_and_foreach_are_exclusive():
    w = nn.Parameter(torch.randn(3))
    with pytest.raises(RuntimeError, match=r"`fused` and `foreach` cannot be `True` together\."):
        torch.optim.SGD([w], lr=0.1, fused=True, foreach=True)
    with pytest.raises(RuntimeError, match=r"`fused` and `foreach` cannot be `True` together\."):
        torch.optim.Adam([w], fused=True, foreach=True)
    assert torch.optim.Adam([w], foreach=True).defaults["foreach"] is True


@pytest.mark.claim("optim.impl.same-numbers")
@pytest.mark.devices("cpu")
def test_implementations_agree(device):
    for cls, kwargs in ((torch.optim.SGD, {"momentum": 0.9, "weight_decay": 0.01}),
                        (torch.optim.Adam, {"weight_decay": 0.01})):
        loop = run_steps(cls, {"foreach": False}, device, **kwargs)
        foreach = run_steps(cls, {"foreach": True}, device, **kwargs)
        fused = run_steps(cls, {"fused": True}, device, **kwargs)
        assert torch.equal(loop, foreach), cls  # bit for bit
        assert (loop - fused).abs().max().item() < 1e-6, cls  # within 1e-6
        # Whether fused is also bit for bit depends on the CPU's code path: a figure, not a claim.
        measured.record(f"{cls.__name__}: fused equals the for-loop bit for bit", torch.equal(loop, fused))


@pytest.mark.claim("optim.impl.foreach-cpu-is-a-loop")
def test_foreach_on_cpu_is_a_loop_of_per_tensor_ops():
    entry = NATIVE_FUNCTIONS.read_text().split("- func: _foreach_add_.List(", 1)[1].split("\n\n", 1)[0]
    dispatch = dict(line.strip().split(": ", 1) for line in entry.split("dispatch:\n", 1)[1].splitlines()
                    if line.startswith("    ") and ": " in line)
    assert dispatch["CompositeExplicitAutograd"] == "foreach_tensor_add_list_kernel_slow_"
    assert dispatch["CUDA"] == "foreach_tensor_add_list_kernel_cuda_"
    assert "CPU" not in dispatch
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    assert not has("aten::_foreach_add_.List", "CPU")
    assert has("aten::_foreach_add_.List", "CompositeExplicitAutograd")


@pytest.mark.claim("optim.impl.foreach-yaml-census")
def test_every_foreach_entry_is_composite_with_a_cuda_kernel():
    dispatches = {}
    for block in NATIVE_FUNCTIONS.read_text().split("\n- func: "):
        if block.startswith("_foreach_"):
            block = block.split("\n\n", 1)[0]
            keys = re.findall(r"^    (\w+): ", block.split("dispatch:\n", 1)[1], re.M)
            dispatches[block.split("(", 1)[0]] = keys
    assert len(dispatches) == 147
    assert all("CompositeExplicitAutograd" in keys and "CPU" not in keys for keys in dispatches.values())
    assert sorted(name for name, keys in dispatches.items() if "CUDA" not in keys) == ["_foreach_copy", "_foreach_mm"]


@pytest.mark.claim("optim.impl.foreach-profile-children")
def test_foreach_add_profiles_as_one_event_over_per_tensor_adds():
    tensors = [torch.zeros(3) for _ in range(4)]
    others = [torch.ones(3) for _ in range(4)]
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        torch._foreach_add_(tensors, others, alpha=2.0)
    top = [e for e in prof.events() if e.name == "aten::_foreach_add_"]
    assert len(top) == 1
    assert [c.name for c in top[0].cpu_children] == ["aten::add_"] * 4
    assert all(torch.equal(t, torch.full((3,), 2.0)) for t in tensors)


@pytest.mark.claim("optim.impl.cuda-default-foreach")
@pytest.mark.devices("cuda")
def test_cuda_default_is_foreach(device):
    params = three_params(device)
    assert _default_to_fused_or_foreach(params, differentiable=False, use_fused=False) == (False, True)
    ops = second_step_ops(torch.optim.SGD, params, momentum=0.9)
    assert ops == ["_foreach_mul_.Scalar", "_foreach_add_.List", "_foreach_add_.List"]
    ops = second_step_ops(torch.optim.Adam, three_params(device))
    assert "_foreach_addcdiv_.ScalarList" in ops and "addcdiv_.default" not in ops


@pytest.mark.claim("optim.impl.cuda-fused-adam")
@pytest.mark.devices("cuda")
def test_cuda_fused_adam(device):
    params = three_params(device)
    opt = torch.optim.Adam(params, fused=True)
    opt.step()
    assert opt.state[params[0]]["step"].device == params[0].device  # the counter lives on the GPU
    with OpRecorder() as rec:
        opt.step()
    assert optimizer_ops(rec.ops) == ["_foreach_add_.Scalar", "_fused_adam_.default"]
    assert torch._C._dispatch_has_kernel_for_dispatch_key("aten::_fused_adam_", "CUDA")
