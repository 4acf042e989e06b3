"""Probes for docs/optim/params-and-state.md."""
import inspect
import warnings

import pytest
import torch
from torch import nn

SGD_DEFAULT_KEYS = ["lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize",
                    "foreach", "differentiable", "fused"]


@pytest.mark.claim("optim.group.defaults-filled")
def test_param_groups_are_dicts_with_defaults_filled_in(device):
    a = nn.Parameter(torch.randn(3, device=device))
    b = nn.Parameter(torch.randn(2, device=device))
    opt = torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5, "momentum": 0.9}], lr=0.1)
    assert isinstance(opt.param_groups, list) and len(opt.param_groups) == 2
    assert list(opt.defaults) == SGD_DEFAULT_KEYS
    assert opt.defaults["lr"] == 0.1 and opt.defaults["momentum"] == 0
    for group in opt.param_groups:
        assert type(group) is dict
        assert list(group) == ["params"] + SGD_DEFAULT_KEYS  # every default, in the defaults' order
    first, second = opt.param_groups
    assert first["params"][0] is a and first["lr"] == 0.1 and first["momentum"] == 0
    assert second["params"][0] is b and second["lr"] == 0.5 and second["momentum"] == 0.9
    assert second["weight_decay"] == opt.defaults["weight_decay"]


@pytest.mark.claim("optim.group.single-group")
def test_an_iterable_of_tensors_becomes_one_group(device):
    net = nn.Linear(2, 3, device=device)
    params = net.parameters()  # a generator
    opt = torch.optim.SGD(params, lr=0.1)
    assert len(opt.param_groups) == 1
    group_params = opt.param_groups[0]["params"]
    assert type(group_params) is list and len(group_params) == 2
    assert group_params[0] is net.weight and group_params[1] is net.bias
    assert next(params, None) is None  # the generator was consumed
    assert torch.optim.SGD([net.weight]).defaults["lr"] == 1e-3  # SGD's default lr


@pytest.mark.claim("optim.group.add-param-group")
def test_add_param_group_fills_defaults_and_wraps_a_tensor(device):
    a = nn.Parameter(torch.randn(3, device=device))
    c = nn.Parameter(torch.randn(1, device=device))
    opt = torch.optim.SGD([a], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": c, "lr": 3.0})
    assert len(opt.param_groups) == 2
    new = opt.param_groups[1]
    assert type(new["params"]) is list and new["params"][0] is c
    assert new["lr"] == 3.0 and new["momentum"] == 0.9  # the rest from the constructor's defaults
    with pytest.raises(TypeError, match=r"param_group must be a dict, but got <class 'list'>"):
        opt.add_param_group([c])


@pytest.mark.claim("optim.group.overlap-error")
def test_a_parameter_in_two_groups_is_refused(device):
    a = nn.Parameter(torch.randn(3, device=device))
    with pytest.raises(ValueError, match=r"some parameters appear in more than one parameter group"):
        torch.optim.SGD([{"params": [a]}, {"params": [a]}], lr=0.1)
    opt = torch.optim.SGD([a], lr=0.1)
    with pytest.raises(ValueError, match=r"some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [a]})
    assert len(opt.param_groups) == 1
    b = nn.Parameter(torch.randn(3, device=device))
    assert len(torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.01}], lr=0.1).param_groups) == 2


@pytest.mark.claim("optim.group.duplicate-warning")
def test_a_parameter_twice_in_one_group_only_warns(device):
    a = nn.Parameter(torch.randn(3, device=device))
    with pytest.warns(UserWarning, match=r"optimizer contains a parameter group with duplicate parameters; "
                                         r"in future, this will cause an error"):
        opt = torch.optim.SGD([a, a], lr=0.1)
    assert len(opt.param_groups[0]["params"]) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(torch.optim.SGD(list(dict.fromkeys([a, a])), lr=0.1).param_groups[0]["params"]) == 1


@pytest.mark.claim("optim.group.empty-error")
def test_empty_parameter_list(device):
    net = nn.Sequential(nn.ReLU()).to(device)  # a module without parameters
    with pytest.raises(ValueError, match=r"optimizer got an empty parameter list"):
        torch.optim.SGD(net.parameters(), lr=0.1)
    with pytest.raises(ValueError, match=r"optimizer got an empty parameter list"):
        torch.optim.Adam([])
    lin = nn.Linear(2, 2).to(device)
    assert len(torch.optim.SGD(lin.parameters(), lr=0.1).param_groups[0]["params"]) == 2


@pytest.mark.claim("optim.group.tensor-error")
def test_a_bare_tensor_or_a_non_tensor_is_refused(device):
    w = nn.Parameter(torch.randn(3, device=device))
    with pytest.raises(TypeError, match=r"params argument given to the optimizer should be an iterable of "
                                        r"Tensors or dicts, but got torch\.(cuda\.)?FloatTensor"):
        torch.optim.SGD(w, lr=0.1)
    with pytest.raises(TypeError, match=r"optimizer can only optimize Tensors, but one of the params is float"):
        torch.optim.SGD([1.0], lr=0.1)
    assert torch.optim.SGD([w], lr=0.1).param_groups[0]["params"][0] is w


@pytest.mark.claim("optim.group.non-leaf-error")
def test_non_leaf_tensors_are_refused_unless_they_retain_grad(device):
    x = torch.randn(3, device=device, requires_grad=True)
    y = x * 2
    assert not y.is_leaf
    with pytest.raises(ValueError, match=r"can't optimize a non-leaf Tensor"):
        torch.optim.SGD([y], lr=0.1)
    y.retain_grad()
    opt = torch.optim.SGD([y], lr=0.1)  # accepted: the check is `is_leaf or retains_grad`
    assert opt.param_groups[0]["params"][0] is y
    assert torch.optim.SGD([x], lr=0.1).param_groups[0]["params"][0] is x


@pytest.mark.claim("optim.group.set-error")
def test_sets_refused_only_inside_a_group(device):
    a = nn.Parameter(torch.randn(3, device=device))
    b = nn.Parameter(torch.randn(2, device=device))
    both = {a, b}
    opt = torch.optim.SGD(both, lr=0.1)  # the constructor calls list() on its argument first
    assert len(opt.param_groups) == 1
    assert [id(p) for p in opt.param_groups[0]["params"]] == [id(p) for p in both]  # the set's order
    message = (r"optimizer parameters need to be organized in ordered collections, but the ordering of "
               r"tensors in sets will change between runs\. Please use a list instead\.")
    with pytest.raises(TypeError, match=message):
        torch.optim.SGD([{"params": {a, b}}], lr=0.1)
    with pytest.raises(TypeError, match=message):
        torch.optim.SGD([a], lr=0.1).add_param_group({"params": {b}})
    assert len(torch.optim.SGD([{"params": [a, b]}], lr=0.1).param_groups[0]["params"]) == 2


@pytest.mark.claim("optim.group.invalid-hyperparameters")
def test_constructors_validate_hyperparameters(device):
    w = nn.Parameter(torch.randn(3, device=device))
    with pytest.raises(ValueError, match=r"Invalid learning rate: -1"):
        torch.optim.SGD([w], lr=-1)
    with pytest.raises(ValueError, match=r"Invalid momentum value: -0\.5"):
        torch.optim.SGD([w], lr=0.1, momentum=-0.5)
    with pytest.raises(ValueError, match=r"Nesterov momentum requires a momentum and zero dampening"):
        torch.optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match=r"Invalid beta parameter at index 0: 1\.0"):
        torch.optim.Adam([w], betas=(1.0, 0.999))
    with pytest.raises(ValueError, match=r"Invalid epsilon value: -1"):
        torch.optim.Adam([w], eps=-1)
    with pytest.raises(TypeError, match=r"'<' not supported between instances of 'str' and 'float'"):
        torch.optim.SGD([w], lr="0.1")  # no type check: the comparison `lr < 0.0` fails
    assert torch.optim.SGD([w], lr=0.1, momentum=0.9, nesterov=True).defaults["nesterov"]


@pytest.mark.claim("optim.group.named-parameters")
def test_named_parameters_give_param_names(device):
    net = nn.Linear(2, 3, device=device)
    opt = torch.optim.SGD(net.named_parameters(), lr=0.1)
    group = opt.param_groups[0]
    assert group["param_names"] == ["weight", "bias"]
    assert group["params"][0] is net.weight and group["params"][1] is net.bias
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]
    with pytest.raises(ValueError, match=r"all optimizer params should be with/without names\. "
                                         r"Some param names are missing"):
        torch.optim.SGD([("weight", net.weight), net.bias], lr=0.1)


@pytest.mark.claim("optim.state.lazy")
def test_state_is_a_defaultdict_filled_by_the_first_step(device):
    p = nn.Parameter(torch.randn(3, device=device))
    q = nn.Parameter(torch.randn(2, device=device))
    opt = torch.optim.SGD([p, q], lr=0.1, momentum=0.9)
    assert type(opt.state).__name__ == "defaultdict" and len(opt.state) == 0
    p.grad = torch.ones(3, device=device)
    opt.step()
    keys = list(opt.state)
    assert len(keys) == 1 and keys[0] is p  # keyed by the Parameter object itself
    assert list(opt.state[p]) == ["momentum_buffer"]
    assert q not in opt.state  # no gradient, no state


@pytest.mark.claim("optim.state.none-grad-skipped")
def test_a_none_gradient_skips_the_parameter_a_zero_gradient_does_not(device):
    p = nn.Parameter(torch.tensor([1.0, -2.0], device=device))
    opt = torch.optim.SGD([p], lr=0.5, weight_decay=0.25, momentum=0.5)
    before = p.detach().clone()
    assert p.grad is None
    opt.step()
    assert torch.equal(p.detach(), before) and p not in opt.state
    p.grad = torch.zeros(2, device=device)
    opt.step()  # weight decay acts on a zero gradient: p <- p - lr * wd * p
    assert torch.equal(p.detach(), before - 0.5 * 0.25 * before)
    assert "momentum_buffer" in opt.state[p]


@pytest.mark.claim("optim.state.sgd-momentum-buffer")
def test_sgd_momentum_buffer_starts_as_a_copy_of_the_gradient(device):
    p = nn.Parameter(torch.randn(3, device=device))
    opt = torch.optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = torch.tensor([1.0, 2.0, 3.0], device=device)
    opt.step()
    buf = opt.state[p]["momentum_buffer"]
    assert torch.equal(buf, p.grad) and buf.data_ptr() != p.grad.data_ptr()
    assert not buf.requires_grad and buf.grad_fn is None
    previous = buf.clone()
    p.grad = torch.tensor([1.0, 0.0, -1.0], device=device)
    opt.step()
    assert opt.state[p]["momentum_buffer"] is buf  # the same tensor, updated in place
    assert torch.allclose(buf, 0.9 * previous + p.grad)


@pytest.mark.claim("optim.state.adam")
def test_adam_state_after_one_step(device):
    w = nn.Parameter(torch.randn(4, device=device))
    opt = torch.optim.Adam([w], lr=0.01)
    w.grad = torch.tensor([1e-3, -5.0, 100.0, 0.25], device=device)
    opt.step()
    state = opt.state[w]
    assert list(state) == ["step", "exp_avg", "exp_avg_sq"]
    step = state["step"]
    assert torch.is_tensor(step) and step.dim() == 0 and step.dtype == torch.float32
    assert step.device.type == "cpu" and step.item() == 1.0  # on the CPU even for a CUDA parameter
    assert state["exp_avg"].shape == w.shape and state["exp_avg"].device == w.device
    assert torch.allclose(state["exp_avg"], 0.1 * w.grad)  # (1 - beta1) * g
    assert torch.allclose(state["exp_avg_sq"], 0.001 * w.grad ** 2)  # (1 - beta2) * g^2


@pytest.mark.claim("optim.zero-grad.in-place")
def test_zero_grad_without_set_to_none_zeroes_and_detaches_in_place(device):
    x = nn.Parameter(torch.tensor([1.0, 2.0], device=device))
    opt = torch.optim.SGD([x], lr=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_graph=True warns about a reference cycle
        (x ** 3).sum().backward(create_graph=True)
    g = x.grad
    assert g.grad_fn is not None and g.requires_grad
    opt.zero_grad(set_to_none=False)
    assert x.grad is g  # the same tensor ...
    assert g.grad_fn is None and not g.requires_grad  # ... detached ...
    assert torch.equal(g, torch.zeros(2, device=device))  # ... and zeroed
    opt.zero_grad()
    assert x.grad is None
    assert inspect.signature(torch.optim.Optimizer.zero_grad).parameters["set_to_none"].default is True
