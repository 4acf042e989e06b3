"""Probes for docs/autograd/function-transforms.md (custom Functions under torch.func),
checked in docs/guide/official-notes/extending-func.md."""
import numpy as np
import pytest
import torch
from torch.autograd import Function


class _NpSort(Function):
    """Sorts along ``dim`` in NumPy; returns the indices it needs for backward as outputs."""

    @staticmethod
    def forward(x, dim):
        arr = x.detach().cpu().numpy()
        ind = np.argsort(arr, axis=dim)
        ind_inv = np.argsort(ind, axis=dim)
        out = np.take_along_axis(arr, ind, axis=dim)
        return (torch.tensor(out, device=x.device), torch.tensor(ind, device=x.device),
                torch.tensor(ind_inv, device=x.device))

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, dim = inputs
        _, ind, ind_inv = output
        ctx.mark_non_differentiable(ind, ind_inv)
        ctx.save_for_backward(ind, ind_inv)
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad, _g_ind, _g_ind_inv):
        ind, ind_inv = ctx.saved_tensors
        return _NpTake.apply(grad, ind_inv, ind, ctx.dim), None


class _NpTake(Function):
    @staticmethod
    def forward(x, ind, ind_inv, dim):
        out = np.take_along_axis(x.detach().cpu().numpy(), ind.cpu().numpy(), dim)
        return torch.tensor(out, device=x.device)

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, ind, ind_inv, dim = inputs
        ctx.save_for_backward(ind, ind_inv)
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad):
        ind, ind_inv = ctx.saved_tensors
        return _NpTake.apply(grad, ind_inv, ind, ctx.dim), None, None, None


class _NpSortVmap(_NpSort):
    @staticmethod
    def vmap(info, in_dims, x, dim):
        x_bdim, _ = in_dims
        x = x.movedim(x_bdim, 0)
        dim = dim if dim >= 0 else dim + x.dim() - 1
        return _NpSortVmap.apply(x, dim + 1), (0, 0, 0)


@pytest.mark.claim("autograd.function.func-numpy-sort")
def test_numpy_function_under_func_grad(device):
    x = torch.tensor([[3.0, 1.0, 2.0], [0.5, -1.0, 4.0]], device=device)
    g = torch.func.grad(lambda t: _NpSort.apply(t, -1)[0].sum())(x)
    assert torch.equal(g, torch.ones_like(x))
    weights = torch.tensor([1.0, 10.0, 100.0], device=device)
    g = torch.func.grad(lambda t: (_NpSort.apply(t, -1)[0] * weights).sum())(x)
    # each element receives the weight of the position it was sorted to
    assert g.tolist() == [[100.0, 1.0, 10.0], [10.0, 1.0, 100.0]]
    xr = x.clone().requires_grad_()
    _, ind, ind_inv = _NpSort.apply(xr, -1)
    assert ind.requires_grad is False and ind_inv.requires_grad is False


class _CtxStyle(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class _NoBackward(Function):
    @staticmethod
    def forward(x):
        return x * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass


@pytest.mark.claim("autograd.function.transform-staticmethods")
def test_each_transform_needs_its_staticmethod(device):
    x = torch.ones(3, device=device)
    with pytest.raises(RuntimeError, match="must override the setup_context staticmethod"):
        torch.func.grad(lambda t: _CtxStyle.apply(t).sum())(x)
    with pytest.raises(NotImplementedError, match="You must implement either the backward or vjp method for your custom autograd.Function"):
        torch.func.grad(lambda t: _NoBackward.apply(t).sum())(x)


@pytest.mark.claim("autograd.function.vmap-needs-rule")
def test_vmap_needs_a_vmap_rule(device):
    with pytest.raises(RuntimeError, match="You tried to vmap over _NpSort, but it does not have vmap support"):
        torch.vmap(lambda t: _NpSort.apply(t, -1)[0])(torch.randn(2, 3, device=device))


@pytest.mark.claim("autograd.function.func-jvp-needs-jvp")
def test_func_jvp_needs_a_jvp_staticmethod(device):
    x = torch.ones(3, device=device)
    with pytest.raises(NotImplementedError, match="You must implement the jvp function for custom autograd.Function to use it with forward mode AD"):
        torch.func.jvp(lambda t: _NpSort.apply(t, -1)[0], (x,), (x,))


@pytest.mark.claim("autograd.function.vmap-staticmethod-sorts")
def test_vmap_staticmethod_batches_the_numpy_sort(device):
    batch = torch.tensor([[3.0, 1.0, 2.0], [0.5, -1.0, 4.0]], device=device)
    sorted_rows = torch.vmap(lambda t: _NpSortVmap.apply(t, -1)[0])(batch)
    assert sorted_rows.tolist() == [[1.0, 2.0, 3.0], [-1.0, 0.5, 4.0]]


class _SeesOutput(Function):
    seen = []

    @staticmethod
    def forward(x, k):
        return x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        _SeesOutput.seen.append((type(inputs), inputs[1], type(output)))

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class _SeesOneTuple(_SeesOutput):
    @staticmethod
    def forward(x, k):
        return (x * k,)

    @staticmethod
    def setup_context(ctx, inputs, output):
        _SeesOutput.seen.append((type(inputs), inputs[1], type(output), len(output)))


class _SeesTwo(_SeesOutput):
    @staticmethod
    def forward(x, k):
        return x * k, x + k

    @staticmethod
    def setup_context(ctx, inputs, output):
        _SeesOutput.seen.append((type(inputs), inputs[1], type(output), len(output)))

    @staticmethod
    def backward(ctx, g1, g2):
        return g1 + g2, None


@pytest.mark.claim("autograd.function.setup-context-output")
def test_setup_context_receives_inputs_and_output_as_returned(device):
    _SeesOutput.seen.clear()
    x = torch.ones(2, device=device, requires_grad=True)
    _SeesOutput.apply(x, 3.0)
    _SeesOneTuple.apply(x, 4.0)
    _SeesTwo.apply(x, 5.0)
    assert _SeesOutput.seen == [(tuple, 3.0, torch.Tensor), (tuple, 4.0, tuple, 1), (tuple, 5.0, tuple, 2)]


class _CubeVmapGen(Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x ** 3, 3 * x ** 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0], output[1])

    @staticmethod
    def backward(ctx, grad_out, grad_dx):
        x, dx = ctx.saved_tensors
        return grad_out * dx + grad_dx * 6 * x


@pytest.mark.claim("autograd.function.generate-vmap-rule")
def test_generated_vmap_rule(device):
    assert Function.generate_vmap_rule is False
    x = torch.tensor([1.0, -2.0, 3.0], device=device)
    out = torch.vmap(lambda t: _CubeVmapGen.apply(t)[0])(x)
    assert torch.equal(out, x ** 3)
    # composes with grad: per-sample derivatives 3x^2
    per_sample = torch.vmap(torch.func.grad(lambda t: _CubeVmapGen.apply(t)[0]))(x)
    assert torch.equal(per_sample, 3 * x ** 2)


class _ScaleVmap(Function):
    seen = []

    @staticmethod
    def forward(x, k):
        return x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.k = inputs[1]

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.k, None

    @staticmethod
    def vmap(info, in_dims, x, k):
        _ScaleVmap.seen.append((info.batch_size, info.randomness, in_dims, tuple(x.shape)))
        return _ScaleVmap.apply(x, k), in_dims[0]


@pytest.mark.claim("autograd.function.vmap-staticmethod")
def test_vmap_staticmethod_arguments_and_result(device):
    _ScaleVmap.seen.clear()
    x = torch.arange(10.0, device=device).reshape(2, 5)
    out = torch.vmap(lambda t: _ScaleVmap.apply(t, 3.0), in_dims=1, randomness="same")(x)
    # the rule sees the whole batched tensor, the batch size, the randomness option, and
    # None for the non-tensor argument; its out_dim 1 is moved to the front by vmap
    assert _ScaleVmap.seen == [(5, "same", (1, None), (2, 5))]
    assert torch.equal(out, (x * 3.0).t())
    torch.vmap(lambda t: _ScaleVmap.apply(t, 3.0))(x)
    assert _ScaleVmap.seen[-1] == (2, "error", (0, None), (2, 5))


class _CubeBothRules(_CubeVmapGen):
    generate_vmap_rule = True

    @staticmethod
    def vmap(info, in_dims, x):
        return _CubeVmapGen.apply(x), (0, 0)


class _CubeOwnRule(_CubeVmapGen):
    generate_vmap_rule = False
    calls = []

    @staticmethod
    def vmap(info, in_dims, x):
        _CubeOwnRule.calls.append(in_dims)
        return _CubeVmapGen.apply(x.movedim(in_dims[0], 0)), (0, 0)


@pytest.mark.claim("autograd.function.vmap-rule-exclusive")
def test_own_vmap_rule_or_generated_not_both(device):
    x = torch.tensor([1.0, 2.0], device=device)
    with pytest.raises(RuntimeError, match="it has both generate_vmap_rule=True and an overridden vmap staticmethod"):
        torch.vmap(lambda t: _CubeBothRules.apply(t)[0])(x)


@pytest.mark.claim("autograd.function.vmap-own-rule-when-false")
def test_own_vmap_rule_used_when_generation_is_off(device):
    x = torch.tensor([1.0, 2.0], device=device)
    _CubeOwnRule.calls.clear()
    out = torch.vmap(lambda t: _CubeOwnRule.apply(t)[0])(x)
    assert _CubeOwnRule.calls == [(0,)]
    assert torch.equal(out, x ** 3)


class _NpCube(Function):
    """Forward in NumPy (not vmappable), backward in PyTorch operations."""

    @staticmethod
    def forward(x):
        return torch.tensor(x.detach().cpu().numpy() ** 3, device=x.device)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2


@pytest.mark.claim("autograd.function.jacrev-vmaps-backward")
def test_jacrev_needs_only_a_vmappable_backward(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device)
    jac = torch.func.jacrev(_NpCube.apply)(x)
    assert torch.equal(jac, torch.diag(3 * x ** 2))
    with pytest.raises(RuntimeError, match="You tried to vmap over _NpCube, but it does not have vmap support"):
        torch.vmap(_NpCube.apply)(x)


@pytest.mark.claim("autograd.function.jacrev-needs-backward-vmap")
def test_jacrev_fails_when_the_backward_is_not_vmappable(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device)
    # _NpSort's backward calls _NpTake, which has no vmap rule: jacrev names _NpTake.
    with pytest.raises(RuntimeError, match="You tried to vmap over _NpTake, but it does not have vmap support"):
        torch.func.jacrev(lambda t: _NpSort.apply(t, -1)[0])(x)


@pytest.mark.claim("autograd.function.transform-hands-to-hop")
def test_apply_under_a_transform_calls_custom_function_call(device, monkeypatch):
    import torch.autograd.function as function_module

    real = function_module.custom_function_call
    calls = []

    def spy(cls, *args, **kwargs):
        calls.append(cls)
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(function_module, "custom_function_call", spy)
    x = torch.tensor([1.0, 2.0, 3.0], device=device)
    _NpCube.apply(x)  # no transform: the ordinary path
    assert calls == []
    torch.func.grad(lambda t: _NpCube.apply(t).sum())(x)
    assert calls == [_NpCube]


@pytest.mark.claim("autograd.function.hop-rules")
def test_custom_function_call_has_a_rule_per_transform():
    from torch._C._functorch import TransformType
    from torch._functorch.autograd_function import custom_function_call

    assert set(custom_function_call.functorch_table) == {
        TransformType.Grad, TransformType.Jvp, TransformType.Vmap, TransformType.Functionalize}
