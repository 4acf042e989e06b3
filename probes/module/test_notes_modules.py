"""Probes for the claims that check PyTorch's modules note (docs/module/*.md)."""
import io

import pytest
import torch
from torch import nn
from torch.nn.modules import module as module_mod


class NoteLinear(nn.Module):
    """An affine map written by hand, as in the note's first example."""

    def __init__(self, in_features, out_features, device=None):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features, device=device))
        self.bias = nn.Parameter(torch.randn(out_features, device=device))

    def forward(self, input):
        return (input @ self.weight) + self.bias


class TwoStage(nn.Module):
    def __init__(self):
        super().__init__()
        self.l0 = NoteLinear(4, 3)
        self.l1 = NoteLinear(3, 1)

    def forward(self, x):
        return self.l1(torch.relu(self.l0(x)))


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = NoteLinear(5, 4)
        self.net = TwoStage()

    def forward(self, x):
        return self.net(self.l1(x))


class Dynamic(nn.Module):
    def __init__(self, num_layers):
        super().__init__()
        self.linears = nn.ModuleList([NoteLinear(4, 4) for _ in range(num_layers)])
        self.activations = nn.ModuleDict({"relu": nn.ReLU(), "lrelu": nn.LeakyReLU()})
        self.final = NoteLinear(4, 1)

    def forward(self, x, act):
        for linear in self.linears:
            x = self.activations[act](linear(x))
        return self.final(x)


@pytest.mark.claim("module.registration.custom-module-basics")
def test_custom_module_basics():
    m = NoteLinear(4, 3)
    x = torch.randn(4)
    out = m(x)
    assert torch.equal(out, x @ m.weight + m.bias) and torch.equal(out, m.forward(x))
    assert out.grad_fn.name() == "AddBackward0"
    names = [n for n, _ in m.named_parameters()]
    assert names == ["weight", "bias"]
    assert [p for p in m.parameters()][0] is m.weight and [p for p in m.parameters()][1] is m.bias
    assert not hasattr(nn.Module, "backward")
    out.sum().backward()
    assert m.weight.grad.shape == (4, 3) and torch.equal(m.bias.grad, torch.ones(3))


@pytest.mark.claim("module.registration.children-vs-modules")
def test_children_and_modules():
    big = Outer()
    assert [n for n, _ in big.named_children()] == ["l1", "net"]
    assert [n for n, _ in big.net.named_children()] == ["l0", "l1"]
    named = list(big.named_modules())
    assert [n for n, _ in named] == ["", "l1", "net", "net.l0", "net.l1"]
    assert named[0][1] is big and named[3][1] is big.net.l0
    assert [type(m) for m in big.modules()] == [Outer, NoteLinear, TwoStage, NoteLinear, NoteLinear]


@pytest.mark.claim("module.registration.recursive-parameter-names")
def test_parameters_recurse_into_containers():
    net = Dynamic(3)
    names = [n for n, _ in net.named_parameters()]
    assert names == ["linears.0.weight", "linears.0.bias", "linears.1.weight", "linears.1.bias",
                     "linears.2.weight", "linears.2.bias", "final.weight", "final.bias"]
    assert len(list(net.parameters())) == 8
    assert net(torch.randn(4), "relu").shape == (1,)


@pytest.mark.claim("module.registration.module-dict-order")
def test_module_dict_keeps_insertion_order():
    md = nn.ModuleDict({"relu": nn.ReLU(), "lrelu": nn.LeakyReLU()})
    assert list(md.keys()) == ["relu", "lrelu"]
    assert list(nn.ModuleDict({"foo": nn.ReLU(), "bar": nn.Tanh()}).keys()) == ["foo", "bar"]
    net = Dynamic(1)
    assert [n for n, _ in net.named_modules()] == [
        "", "linears", "linears.0", "activations", "activations.relu", "activations.lrelu", "final"]
    assert isinstance(net.activations["lrelu"], nn.LeakyReLU)


@pytest.mark.claim("module.registration.parameter-dict-sorts")
def test_parameter_dict_sorts_a_plain_dict():
    from collections import OrderedDict

    def p(n):
        return nn.Parameter(torch.zeros(n))

    assert list(nn.ParameterDict({"foo": p(3), "bar": p(4)}).keys()) == ["bar", "foo"]
    assert list(nn.ParameterDict(OrderedDict([("foo", p(3)), ("bar", p(4))])).keys()) == ["foo", "bar"]
    assert list(nn.ParameterDict([("foo", p(3)), ("bar", p(4))]).keys()) == ["foo", "bar"]


class Stateful(nn.Module):
    def __init__(self):
        super().__init__()
        self.param1 = nn.Parameter(torch.randn(2))
        self.register_parameter("param2", nn.Parameter(torch.randn(3)))
        self.register_parameter("param3", None)
        self.param_list = nn.ParameterList([nn.Parameter(torch.randn(2)) for _ in range(3)])
        self.param_dict = nn.ParameterDict({"foo": nn.Parameter(torch.randn(3)), "bar": nn.Parameter(torch.randn(4))})
        self.register_buffer("buffer1", torch.randn(4), persistent=True)
        self.register_buffer("buffer2", torch.randn(5), persistent=False)
        self.register_buffer("buffer3", None)
        self.linear = nn.Linear(2, 3)


@pytest.mark.claim("module.state-dict.stateful-module-keys")
def test_stateful_module_keys():
    m = Stateful()
    keys = ["param1", "param2", "buffer1", "param_list.0", "param_list.1", "param_list.2",
            "param_dict.bar", "param_dict.foo", "linear.weight", "linear.bias"]
    assert list(m.state_dict()) == keys
    buf = io.BytesIO()
    torch.save(m.state_dict(), buf)
    buf.seek(0)
    loaded = Stateful()
    assert repr(loaded.load_state_dict(torch.load(buf))) == "<All keys matched successfully>"
    assert list(loaded.state_dict()) == keys
    assert torch.equal(loaded.param_dict["foo"], m.param_dict["foo"])
    assert not torch.equal(loaded.buffer2, m.buffer2)  # non-persistent: not saved, not restored


class TwoLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.l0 = nn.Linear(4, 2)
        self.l1 = nn.Linear(2, 1)

    def forward(self, x):
        return self.l1(torch.relu(self.l0(x)))


@pytest.mark.claim("module.state-dict.round-trip-all-keys-matched")
def test_state_dict_round_trip_through_a_file(tmp_path):
    bn = nn.BatchNorm1d(3)
    bn(torch.randn(8, 3))
    torch.save(bn.state_dict(), tmp_path / "bn.pt")
    fresh = nn.BatchNorm1d(3)
    result = fresh.load_state_dict(torch.load(tmp_path / "bn.pt"))
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    assert torch.equal(fresh.running_mean, bn.running_mean) and fresh.num_batches_tracked.item() == 1

    m = TwoLayers()
    assert list(m.state_dict()) == ["l0.weight", "l0.bias", "l1.weight", "l1.bias"]
    torch.save(m.state_dict(), tmp_path / "mymodule.pt")
    new_m = TwoLayers()
    assert repr(new_m.load_state_dict(torch.load(tmp_path / "mymodule.pt"))) == "<All keys matched successfully>"
    x = torch.randn(3, 4)
    assert torch.equal(new_m(x), m(x))


class RunningMean(nn.Module):
    def __init__(self, num_features, momentum=0.9):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("mean", torch.zeros(num_features))

    def forward(self, x):
        self.mean = self.momentum * self.mean + (1.0 - self.momentum) * x
        return self.mean


@pytest.mark.claim("module.registration.buffer-reassign")
def test_reassigned_buffer_stays_a_buffer():
    m = RunningMean(4)
    first = m.mean
    for _ in range(3):
        m(torch.randn(4))
    assert m.mean is not first and "mean" in m._buffers and "mean" not in m.__dict__
    assert list(m.state_dict()) == ["mean"]
    buf = io.BytesIO()
    torch.save(m.state_dict(), buf)
    buf.seek(0)
    m_loaded = RunningMean(4)
    m_loaded.load_state_dict(torch.load(buf))
    assert torch.equal(m_loaded.mean, m.mean)
    assert not m.mean.requires_grad


@pytest.mark.claim("module.registration.buffer-none-slot")
def test_none_buffer_slot():
    m = Stateful()
    assert m._buffers["buffer3"] is None and m.buffer3 is None
    assert "buffer3" not in m.state_dict() and "buffer3" not in dict(m.named_buffers())
    with pytest.raises(TypeError, match=r"cannot assign 'int' as buffer 'buffer3' \(torch.nn.Buffer, torch.Tensor or None expected\)"):
        m.buffer3 = 3
    m.buffer3 = torch.ones(2)
    assert "buffer3" in m._buffers and "buffer3" in m.state_dict()
    other = Stateful()
    other.buffer3 = nn.Parameter(torch.ones(2))
    assert "buffer3" not in other._buffers and "buffer3" in other._parameters
    assert "buffer3" in dict(other.named_parameters())


class Modal(nn.Module):
    def forward(self, x):
        return x + 1.0 if self.training else x


@pytest.mark.claim("module.train-eval.starts-in-training")
def test_modules_start_in_training_mode():
    net = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Dropout(), nn.BatchNorm1d(2)))
    assert nn.Module().training is True
    assert all(m.training for m in net.modules())
    m = Modal()
    x = torch.randn(4)
    assert torch.equal(m(x), x + 1.0)
    assert m.eval() is m and m(x) is x
    m.train()
    assert torch.equal(m(x), x + 1.0)


@pytest.mark.claim("module.init.float32-cpu-default")
def test_default_dtype_and_device():
    assert torch.get_default_dtype() == torch.float32
    lin, bn = nn.Linear(5, 3), nn.BatchNorm2d(3)
    for t in [lin.weight, lin.bias, bn.weight, bn.running_mean, bn.running_var]:
        assert t.dtype == torch.float32 and t.device.type == "cpu"
    assert bn.num_batches_tracked.dtype == torch.int64


@pytest.mark.claim("module.init.dtype-kwarg")
def test_dtype_kwarg():
    lin = nn.Linear(5, 3, dtype=torch.half)
    assert lin.weight.dtype == lin.bias.dtype == torch.float16
    bn = nn.BatchNorm2d(3, dtype=torch.half)
    assert bn.running_mean.dtype == bn.running_var.dtype == bn.weight.dtype == torch.float16
    assert torch.equal(bn.running_mean, torch.zeros(3, dtype=torch.float16))
    assert bn.num_batches_tracked.dtype == torch.int64


@pytest.mark.claim("module.init.device-kwarg")
def test_device_kwarg(device):
    lin = nn.Linear(5, 3, device=device)
    bn = nn.BatchNorm2d(3, device=device)
    for t in [lin.weight, lin.bias, bn.running_mean, bn.num_batches_tracked]:
        assert t.device.type == device
    assert isinstance(lin.weight, nn.Parameter) and lin.weight.requires_grad


class SeesDevice(nn.Module):
    seen = []

    def __init__(self, n, device=None):
        super().__init__()
        self.w = nn.Parameter(torch.empty(n, device=device))
        nn.init.ones_(self.w)
        SeesDevice.seen.append((device, self.w.device.type))


class NoDeviceArg(nn.Module):
    def __init__(self):
        super().__init__()


@pytest.mark.claim("module.init.skip-init")
def test_skip_init_builds_on_meta_then_to_empty():
    SeesDevice.seen.clear()
    m = torch.nn.utils.skip_init(SeesDevice, 3)
    assert SeesDevice.seen == [("meta", "meta")]  # the constructor and its init ran on meta
    assert m.w.device.type == "cpu" and not m.w.is_meta
    assert isinstance(m.w, nn.Parameter) and m.w.requires_grad and m.w.shape == (3,)
    lin = torch.nn.utils.skip_init(nn.Linear, 5, 3)
    assert lin.weight.shape == (3, 5) and lin.weight.device.type == "cpu"
    nn.init.orthogonal_(lin.weight)
    assert torch.allclose(lin.weight @ lin.weight.T, torch.eye(3), atol=1e-5)
    with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip initialization"):
        torch.nn.utils.skip_init(NoDeviceArg)


@pytest.mark.claim("module.call.hook-argument-types")
def test_forward_hook_arguments_and_returns():
    torch.manual_seed(1)
    m = nn.Linear(3, 3)
    x = torch.randn(2, 3, requires_grad=True)
    plain = m(x)
    seen = {}

    def pre(mod, inputs):
        seen["pre"] = type(inputs)
        return inputs[0] + 1.0  # a bare tensor, not a tuple

    def post(mod, inputs, output):
        seen["post"] = (type(inputs), type(output))
        return output + inputs[0]

    h1 = m.register_forward_pre_hook(pre)
    with_pre = m(x)
    assert torch.allclose(with_pre, m.forward(x + 1.0))
    assert with_pre.grad_fn.name() == "AddmmBackward0"
    h2 = m.register_forward_hook(post)
    both = m(x)
    assert torch.allclose(both, m.forward(x + 1.0) + (x + 1.0))  # the hook sees the replaced input
    assert both.grad_fn.name() == "AddBackward0"
    assert seen == {"pre": tuple, "post": (tuple, torch.Tensor)}
    h1.remove()
    h2.remove()
    assert torch.equal(m(x), plain)


@pytest.mark.claim("module.call.backward-hook-arguments")
def test_backward_hook_arguments_and_returns():
    m = nn.Linear(3, 3)
    x = torch.randn(2, 3, requires_grad=True)
    seen = {}

    def backward_hook(mod, grad_inputs, grad_outputs):
        seen["hook"] = (type(grad_inputs), type(grad_outputs), len(grad_inputs))
        return [torch.ones_like(g) * 42.0 for g in grad_inputs]  # a list is accepted

    m.register_full_backward_hook(backward_hook)
    m(x).sum().backward()
    assert torch.equal(x.grad, torch.full((2, 3), 42.0))
    assert seen["hook"] == (tuple, tuple, 1)

    pre_m = nn.Linear(3, 3)
    x2 = torch.randn(2, 3, requires_grad=True)

    def backward_pre_hook(mod, grad_outputs):
        seen["pre"] = (type(grad_outputs), grad_outputs[0].shape)
        return (torch.zeros_like(grad_outputs[0]),)

    pre_m.register_full_backward_pre_hook(backward_pre_hook)
    pre_m(x2).sum().backward()
    assert seen["pre"] == (tuple, (2, 3))
    assert torch.equal(x2.grad, torch.zeros(2, 3)) and torch.equal(pre_m.weight.grad, torch.zeros(3, 3))


@pytest.mark.claim("module.call.global-backward-hooks")
def test_global_backward_hooks():
    events = []
    h1 = module_mod.register_module_full_backward_pre_hook(
        lambda mod, go: events.append(("pre", type(mod).__name__)))
    h2 = module_mod.register_module_full_backward_hook(
        lambda mod, gi, go: events.append(("hook", type(mod).__name__)))
    try:
        net = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
        y = net(torch.randn(3, 2, requires_grad=True))
        assert events == []
        y.sum().backward()
    finally:
        h1.remove()
        h2.remove()
    assert events == [("pre", "Sequential"), ("pre", "Tanh"), ("hook", "Tanh"),
                      ("pre", "Linear"), ("hook", "Linear"), ("hook", "Sequential")]
    events.clear()
    net(torch.randn(3, 2, requires_grad=True)).sum().backward()
    assert events == []
