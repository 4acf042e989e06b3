"""Probes for docs/optim/state-dict.md."""
import ast
import copy
import inspect
import io
import textwrap

import pytest
import torch
from torch import nn


def two_layer(device):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1)).to(device)


def grouped_sgd(net, lr=0.1, momentum=0.9, second_lr=0.5):
    return torch.optim.SGD([{"params": net[0].parameters()},
                            {"params": net[1].parameters(), "lr": second_lr}], lr=lr, momentum=momentum)


def stepped(device):
    """A two-group SGD with momentum after one step, and its model."""
    net = two_layer(device)
    opt = grouped_sgd(net)
    net(torch.randn(4, 2, device=device)).sum().backward()
    opt.step()
    return net, opt


@pytest.mark.claim("optim.state-dict.layout")
def test_state_dict_replaces_parameters_by_indices(device):
    net, opt = stepped(device)
    sd = opt.state_dict()
    assert list(sd) == ["state", "param_groups"]
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2, 3]]  # counted on across groups
    assert list(sd["state"]) == [0, 1, 2, 3]
    assert all(list(entry) == ["momentum_buffer"] for entry in sd["state"].values())
    assert sd["state"][2]["momentum_buffer"].shape == net[1].weight.shape
    assert sd["param_groups"][0]["lr"] == 0.1 and sd["param_groups"][1]["lr"] == 0.5
    assert sd["param_groups"][1]["momentum"] == 0.9
    assert not any(isinstance(v, torch.Tensor) for g in sd["param_groups"] for v in g["params"])


@pytest.mark.claim("optim.state-dict.only-stepped")
def test_state_holds_only_parameters_that_have_state(device):
    net = two_layer(device)
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    net[1].weight.grad = torch.ones(1, 3, device=device)
    opt.step()
    sd = opt.state_dict()
    assert list(sd["state"]) == [2]
    assert sd["param_groups"][0]["params"] == [0, 1, 2, 3]


@pytest.mark.claim("optim.state-dict.aliases")
def test_state_dict_aliases_the_live_state(device):
    net, opt = stepped(device)
    sd = opt.state_dict()
    live = opt.state[net[0].weight]
    assert sd["state"][0] is live  # the same per-parameter dict
    assert sd["state"][0]["momentum_buffer"] is live["momentum_buffer"]
    assert sd["param_groups"][0] is not opt.param_groups[0]  # groups are packed into new dicts


@pytest.mark.claim("optim.state-dict.load-restores")
def test_load_takes_hyperparameters_and_state_from_the_checkpoint(device):
    net, opt = stepped(device)
    sd = opt.state_dict()
    other = copy.deepcopy(net)
    fresh = grouped_sgd(other, lr=0.7, momentum=0.0, second_lr=0.7)
    fresh.load_state_dict(sd)
    assert fresh.param_groups[0]["lr"] == 0.1 and fresh.param_groups[1]["lr"] == 0.5
    assert fresh.param_groups[0]["momentum"] == 0.9
    assert fresh.param_groups[0]["params"][0] is other[0].weight  # its own parameters stay
    buf = fresh.state[other[0].weight]["momentum_buffer"]
    assert torch.equal(buf, opt.state[net[0].weight]["momentum_buffer"])


@pytest.mark.claim("optim.state-dict.cast-docstring")
def test_the_cast_helper_says_it_deep_copies():
    tree = ast.parse(textwrap.dedent(inspect.getsource(torch.optim.Optimizer.load_state_dict)))
    inner = {node.name: ast.get_docstring(node) for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    assert inner["_cast"] == "Make a deep copy of value, casting all tensors to device of param."


@pytest.mark.claim("optim.state-dict.load-shares")
def test_loading_a_live_state_dict_shares_its_tensors(device):
    net, opt = stepped(device)
    other = copy.deepcopy(net)
    fresh = grouped_sgd(other)
    fresh.load_state_dict(opt.state_dict())
    theirs = opt.state[net[0].weight]["momentum_buffer"]
    mine = fresh.state[other[0].weight]["momentum_buffer"]
    assert mine is theirs  # Tensor.to() with nothing to change returns the tensor itself
    before = theirs.clone()
    for p in other.parameters():
        p.grad = torch.ones_like(p)
    fresh.step()
    assert not torch.equal(theirs, before)  # stepping one optimizer changed the other's state
    # After a round trip through torch.save / torch.load the tensors are new.
    buffer = io.BytesIO()
    torch.save(opt.state_dict(), buffer)
    buffer.seek(0)
    third = grouped_sgd(copy.deepcopy(net))
    third.load_state_dict(torch.load(buffer))
    assert third.state[third.param_groups[0]["params"][0]]["momentum_buffer"] is not theirs


@pytest.mark.claim("optim.state-dict.load-casts")
def test_load_casts_state_to_the_parameters_dtype_except_step(device):
    net = two_layer(device)
    adam = torch.optim.Adam(net.parameters())
    for p in net.parameters():
        p.grad = torch.ones_like(p)
    adam.step()
    sgd_net, sgd = stepped(device)
    double = copy.deepcopy(net).double()
    loaded = torch.optim.Adam(double.parameters())
    loaded.load_state_dict(adam.state_dict())
    state = loaded.state[double[0].weight]
    assert state["exp_avg"].dtype == torch.float64 and state["exp_avg_sq"].dtype == torch.float64
    assert state["step"].dtype == torch.float32 and state["step"].device.type == "cpu"
    sgd_double = grouped_sgd(copy.deepcopy(sgd_net).double())
    sgd_double.load_state_dict(sgd.state_dict())
    assert sgd_double.state[sgd_double.param_groups[0]["params"][0]]["momentum_buffer"].dtype == torch.float64


@pytest.mark.claim("optim.state-dict.group-count-error")
def test_different_number_of_groups(device):
    net, opt = stepped(device)
    one_group = torch.optim.SGD(copy.deepcopy(net).parameters(), lr=0.1)
    with pytest.raises(ValueError, match=r"loaded state dict has a different number of parameter groups"):
        one_group.load_state_dict(opt.state_dict())
    same = grouped_sgd(copy.deepcopy(net))
    same.load_state_dict(opt.state_dict())
    assert len(same.param_groups) == 2


@pytest.mark.claim("optim.state-dict.group-size-error")
def test_group_of_a_different_size(device):
    net, opt = stepped(device)
    other = copy.deepcopy(net)
    short = torch.optim.SGD([{"params": [other[0].weight]}, {"params": other[1].parameters()}], lr=0.1)
    with pytest.raises(ValueError, match=r"loaded state dict contains a parameter group that doesn't match "
                                         r"the size of optimizer's group"):
        short.load_state_dict(opt.state_dict())
    same = grouped_sgd(copy.deepcopy(net))
    same.load_state_dict(opt.state_dict())
    assert [len(g["params"]) for g in same.param_groups] == [len(g["params"]) for g in opt.param_groups]


@pytest.mark.claim("optim.state-dict.positional")
@pytest.mark.devices("cpu")
def test_matching_is_by_position_only(device):
    net, opt = stepped(device)
    other = copy.deepcopy(net)
    swapped = torch.optim.SGD([{"params": [other[0].bias, other[0].weight]},
                               {"params": other[1].parameters()}], lr=0.1, momentum=0.9)
    swapped.load_state_dict(opt.state_dict())  # no error: only the group sizes are compared
    assert swapped.state[other[0].bias]["momentum_buffer"].shape == (3, 2)  # the weight's buffer
    assert other[0].bias.shape == (3,)
    other(torch.randn(4, 2, device=device)).sum().backward()
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(2\) must match the size of tensor b \(3\) "
                                           r"at non-singleton dimension 1"):
        swapped.step()
    # Two tensors of the same shape in swapped order exchange their state without any error.
    a, b = (nn.Parameter(torch.randn(3, device=device)) for _ in range(2))
    saved = torch.optim.SGD([a, b], lr=0.1, momentum=0.9)
    a.grad, b.grad = torch.ones(3, device=device), torch.full((3,), 5.0, device=device)
    saved.step()
    a2, b2 = (nn.Parameter(torch.zeros(3, device=device)) for _ in range(2))
    mixed = torch.optim.SGD([b2, a2], lr=0.1, momentum=0.9)
    mixed.load_state_dict(saved.state_dict())
    assert torch.equal(mixed.state[b2]["momentum_buffer"], torch.ones(3, device=device))  # a's buffer
    b2.grad = a2.grad = torch.zeros(3, device=device)
    mixed.step()  # runs without complaint
