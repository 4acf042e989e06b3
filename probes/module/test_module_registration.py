"""Probes for docs/module/registration.md."""
import re

import pytest
import torch
from torch import nn


@pytest.mark.claim("module.index.plain-python")
def test_module_is_a_plain_python_class():
    import inspect
    assert nn.Module.__mro__ == (nn.Module, object) and type(nn.Module) is type
    assert inspect.getsourcefile(nn.Module).replace("\\", "/").endswith("torch/nn/modules/module.py")
    assert type(vars(nn.Module())) is dict


@pytest.mark.claim("module.registration.three-dicts")
def test_a_module_starts_with_three_empty_dicts():
    m = nn.Module()
    found = {name: vars(m)[name] for name in ("_parameters", "_buffers", "_modules", "_non_persistent_buffers_set")}
    assert {name: (type(value), len(value)) for name, value in found.items()} == {
        "_parameters": (dict, 0), "_buffers": (dict, 0), "_modules": (dict, 0), "_non_persistent_buffers_set": (set, 0)}


@pytest.mark.claim("module.registration.parameter-goes-to-parameters")
def test_assigning_a_parameter_registers_it(device):
    m = nn.Module()
    w = nn.Parameter(torch.ones(2, device=device))
    m.w = w
    assert "w" not in m.__dict__
    assert m._parameters["w"] is w and m.w is w
    assert [name for name, _ in m.named_parameters()] == ["w"]
    lin = nn.Linear(2, 2, device=device)
    assert "weight" not in lin.__dict__ and "training" in lin.__dict__
    assert lin.weight is lin._parameters["weight"]


@pytest.mark.claim("module.registration.plain-tensor-not-registered")
def test_plain_tensor_attribute_is_invisible_to_the_module(device):
    m = nn.Module()
    m.t = torch.ones(2, device=device)
    assert "t" in m.__dict__
    assert list(m.parameters()) == [] and list(m.buffers()) == []
    assert list(m.state_dict()) == []
    before = m.t
    m.to(torch.float64)
    assert m.t is before and m.t.dtype == torch.float32  # not converted


class WithList(nn.Module):
    def __init__(self):
        super().__init__()
        self.plain = [nn.Linear(2, 2) for _ in range(3)]
        self.registered = nn.ModuleList(nn.Linear(2, 2) for _ in range(3))


@pytest.mark.claim("module.registration.list-not-registered")
def test_python_list_of_modules_is_not_registered():
    net = WithList()
    assert list(net._modules) == ["registered"]
    assert len(list(net.parameters())) == 6  # 3 Linear x (weight, bias): only the ModuleList's
    assert all(key.startswith("registered.") for key in net.state_dict())
    net.to(torch.float64)
    assert net.registered[0].weight.dtype == torch.float64
    assert net.plain[0].weight.dtype == torch.float32
    net.eval()
    assert not net.registered[0].training and net.plain[0].training


@pytest.mark.claim("module.registration.submodule")
def test_assigning_a_module_registers_a_child(device):
    outer = nn.Module()
    outer.inner = nn.Module()
    outer.inner.proj = nn.Linear(2, 3, device=device)
    assert "inner" not in outer.__dict__ and outer._modules["inner"] is outer.inner
    assert list(outer.state_dict()) == ["inner.proj.weight", "inner.proj.bias"]
    assert [name for name, _ in outer.named_modules()] == ["", "inner", "inner.proj"]


@pytest.mark.claim("module.registration.buffers")
def test_persistent_and_non_persistent_buffers(device):
    m = nn.Module()
    m.register_buffer("kept", torch.zeros(2, device=device))
    m.register_buffer("scratch", torch.zeros(2, device=device), persistent=False)
    m.assigned = nn.Buffer(torch.zeros(2, device=device))
    assert list(m._buffers) == ["kept", "scratch", "assigned"]
    assert type(m.assigned) is torch.Tensor  # nn.Buffer only marks the assignment
    assert m._non_persistent_buffers_set == {"scratch"}
    assert list(m.state_dict()) == ["kept", "assigned"]
    assert not any(b.requires_grad for b in m.buffers())
    m.to(torch.float64)
    assert m.scratch.dtype == torch.float64  # not saved, but converted


@pytest.mark.claim("module.registration.parameter-none")
def test_register_parameter_none_reserves_a_slot(device):
    m = nn.Module()
    m.register_parameter("bias", None)
    assert "bias" in m._parameters and m._parameters["bias"] is None
    assert m.bias is None
    assert list(m.named_parameters()) == [] and list(m.state_dict()) == []
    with pytest.raises(TypeError, match=re.escape(
            "cannot assign 'torch.FloatTensor' as parameter 'bias' (torch.nn.Parameter or None expected)")):
        m.bias = torch.zeros(2)
    m.bias = nn.Parameter(torch.zeros(2, device=device))
    assert list(m.state_dict()) == ["bias"]
    assert nn.Linear(2, 2, bias=False)._parameters["bias"] is None


@pytest.mark.claim("module.registration.guards")
def test_registration_refuses_bad_names_and_early_assignment():
    lin = nn.Linear(2, 2)
    with pytest.raises(KeyError, match="attribute 'weight' already exists"):
        lin.register_buffer("weight", torch.zeros(1))
    with pytest.raises(KeyError, match=r'parameter name can.{1,2}t contain "\."'):
        lin.register_parameter("a.b", None)
    with pytest.raises(TypeError, match=re.escape("cannot assign 'int' object to buffer 'b'")):
        lin.register_buffer("b", 3)

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(torch.ones(1))  # before super().__init__()

    with pytest.raises(AttributeError, match=re.escape("cannot assign parameters before Module.__init__() call")):
        Early()
    lin.register_buffer("scale", torch.ones(1))
    assert "scale" in lin.state_dict()


@pytest.mark.claim("module.registration.shared-deduplicated")
def test_shared_parameters_are_yielded_once(device):
    layer = nn.Linear(3, 3, device=device)
    net = nn.Sequential(layer, nn.ReLU(), layer)
    assert len(list(net.parameters())) == 2
    assert [n for n, _ in net.named_parameters()] == ["0.weight", "0.bias"]
    assert len(list(net.named_parameters(remove_duplicate=False))) == 4
    assert list(net.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]  # state_dict keeps both
    emb = nn.Embedding(5, 3, device=device)
    head = nn.Linear(3, 5, bias=False, device=device)
    head.weight = emb.weight  # weight tying
    tied = nn.ModuleDict({"emb": emb, "head": head})
    assert [n for n, _ in tied.named_parameters()] == ["emb.weight"]
    assert list(tied.state_dict()) == ["emb.weight", "head.weight"]
