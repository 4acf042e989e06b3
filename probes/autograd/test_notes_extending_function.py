"""Probes for the custom-Function claims added for the "Extending PyTorch" note
(docs/autograd/custom-function.md, checked in docs/guide/official-notes/extending.md)."""
import pytest
import torch
import torch.autograd.forward_ad as fwAD
from torch.autograd import Function, gradcheck, gradgradcheck
from torch.autograd.gradcheck import GradcheckError


class _SeesInput(Function):
    seen = {}

    @staticmethod
    def forward(ctx, x, listed):
        _SeesInput.seen.update(
            obj=x,
            requires_grad=x.requires_grad,
            grad_mode=torch.is_grad_enabled(),
            listed_requires_grad=listed[0].requires_grad,
        )
        return x * 2 + listed[0]

    @staticmethod
    def backward(ctx, grad):
        return grad * 2, None


@pytest.mark.claim("autograd.function.forward-sees-inputs-unchanged")
def test_forward_receives_the_callers_tensor(device):
    x = torch.ones(2, device=device, requires_grad=True)
    plain = torch.ones(2, device=device)
    _SeesInput.seen.clear()
    out = _SeesInput.apply(x, [plain])
    seen = _SeesInput.seen
    assert seen["obj"] is x                 # not a converted copy
    assert seen["requires_grad"] is True    # still flagged as requiring grad
    assert seen["grad_mode"] is False       # but nothing is recorded: grad mode is off
    assert out.requires_grad and type(out.grad_fn).__name__ == "_SeesInputBackward"


@pytest.mark.claim("autograd.function.nested-tensors-untracked")
def test_tensors_inside_a_list_are_not_tracked(device):
    x = torch.ones(2, device=device, requires_grad=True)
    w = torch.ones(2, device=device, requires_grad=True)
    out = _SeesInput.apply(x, [w])
    assert _SeesInput.seen["listed_requires_grad"] is True
    out.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    assert w.grad is None
    # With only the listed tensor requiring grad, the output is not differentiable at all.
    only_listed = _SeesInput.apply(torch.ones(2, device=device), [w])
    assert only_listed.requires_grad is False and only_listed.grad_fn is None


class _KeepsBoth(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.kept = x * 3
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2


@pytest.mark.claim("autograd.function.saved-freed-ctx-attr-kept")
def test_saved_tensors_freed_ctx_attributes_kept(device):
    x = torch.ones(2, device=device, requires_grad=True)
    out = _KeepsBoth.apply(x)
    out.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        out.grad_fn.saved_tensors
    assert out.grad_fn.kept.tolist() == [3.0, 3.0]   # still alive as long as the graph is


@pytest.mark.claim("autograd.function.save-for-backward-uses-hooks")
def test_saved_tensors_hooks_see_save_for_backward_only(device):
    packed = []

    def pack(t):
        packed.append(t.tolist())
        return t

    x = torch.tensor([1.0, 5.0], device=device, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = _KeepsBoth.apply(x)
    # x (given to save_for_backward) was packed; ctx.kept ([3., 15.]) and the output were not
    assert packed == [[1.0, 5.0]]
    out.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


class _ThreeOutputs(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, (x > 0).long(), x.detach().clone()

    @staticmethod
    def backward(ctx, g_float, g_int, g_copy):
        return g_float * 2


@pytest.mark.claim("autograd.function.output-requires-grad-default")
def test_float_outputs_require_grad_integer_ones_do_not(device):
    x = torch.ones(2, device=device, requires_grad=True)
    doubled, mask, copy = _ThreeOutputs.apply(x)
    assert doubled.requires_grad and copy.requires_grad
    assert doubled.grad_fn is copy.grad_fn is not None
    assert mask.dtype == torch.int64
    assert mask.requires_grad is False and mask.grad_fn is None


class _ClearOnAccess(Function):
    clear_saved_tensors_on_access = True
    reads = 1

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        for _ in range(_ClearOnAccess.reads):
            (x,) = ctx.saved_tensors
        return grad * 2


class _TwiceAccess(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        (b,) = ctx.saved_tensors
        assert a is b or torch.equal(a, b)
        return grad * 2


@pytest.mark.claim("autograd.function.no-clear-saved-on-access")
@pytest.mark.torch_version("<2.11")
def test_no_clear_saved_tensors_on_access_until_2_10(device):
    assert not hasattr(Function, "clear_saved_tensors_on_access")
    x = torch.ones(2, device=device, requires_grad=True)
    _TwiceAccess.apply(x).sum().backward()          # any number of reads
    assert x.grad.tolist() == [2.0, 2.0]
    _ClearOnAccess.reads = 2
    z = torch.ones(2, device=device, requires_grad=True)
    _ClearOnAccess.apply(z).sum().backward()        # the attribute set to True changes nothing: two reads work
    assert z.grad.tolist() == [2.0, 2.0]


@pytest.mark.claim("autograd.function.clear-saved-on-access")
@pytest.mark.torch_version(">=2.11")
def test_clear_saved_tensors_on_access(device):
    assert Function.clear_saved_tensors_on_access is False
    x = torch.ones(2, device=device, requires_grad=True)
    _TwiceAccess.apply(x).sum().backward()          # default: any number of reads
    assert x.grad.tolist() == [2.0, 2.0]
    _ClearOnAccess.reads = 1
    y = torch.ones(2, device=device, requires_grad=True)
    _ClearOnAccess.apply(y).sum().backward()        # one read is fine
    assert y.grad.tolist() == [2.0, 2.0]
    _ClearOnAccess.reads = 2
    z = torch.ones(2, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="saved_tensors can only be accessed once when clear_saved_tensors_on_access=True"):
        _ClearOnAccess.apply(z).sum().backward()


class _Boxed(Function):
    boxed_grads_call = True
    received = []

    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, grads):
        _Boxed.received.append((type(grads), len(grads)))
        first = grads[0]
        grads[0] = None      # allowed: the list is mutable
        return first * 2 + grads[1] * 3


class _Unboxed(Function):
    received = []

    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, *grads):
        _Unboxed.received.append((type(grads), len(grads)))
        return grads[0] * 2 + grads[1] * 3


@pytest.mark.claim("autograd.function.boxed-grads-call")
@pytest.mark.torch_version(">=2.13")
def test_boxed_grads_call_passes_one_list(device):
    assert Function.boxed_grads_call is False
    for cls, expected in ((_Unboxed, tuple), (_Boxed, list)):
        cls.received.clear()
        x = torch.ones(2, device=device, requires_grad=True)
        a, b = cls.apply(x)
        (a.sum() + b.sum()).backward()
        assert cls.received == [(expected, 2)], cls
        assert x.grad.tolist() == [5.0, 5.0]


class _Linear(Function):
    @staticmethod
    def forward(inp, weight, bias):
        out = inp.mm(weight.t())
        if bias is not None:
            out = out + bias
        return out

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs[:2])
        ctx.has_bias = inputs[2] is not None

    @staticmethod
    def backward(ctx, grad):
        inp, weight = ctx.saved_tensors
        # Always returns all three gradients, needed or not.
        return grad.mm(weight), grad.t().mm(inp), grad.sum(0) if ctx.has_bias else None


@pytest.mark.claim("autograd.function.linear-example")
def test_linear_function_gradcheck_and_unneeded_gradients(device):
    dt = torch.float64
    inp = torch.randn(4, 3, dtype=dt, device=device, requires_grad=True)
    weight = torch.randn(5, 3, dtype=dt, device=device, requires_grad=True)
    assert gradcheck(lambda i, w: _Linear.apply(i, w, None), (inp, weight), eps=1e-6, atol=1e-4) is True


@pytest.mark.claim("autograd.function.unneeded-grads-dropped")
def test_gradients_for_inputs_without_requires_grad_are_dropped(device):
    # A gradient returned for an input that does not require grad is accepted and dropped.
    frozen = torch.randn(3, 2, device=device)
    w = torch.randn(4, 2, device=device, requires_grad=True)
    b = torch.zeros(4, device=device)
    _Linear.apply(frozen, w, b).sum().backward()
    assert frozen.grad is None and b.grad is None
    assert torch.allclose(w.grad, frozen.sum(0).expand(4, 2))


class _CubeWithDx(Function):
    @staticmethod
    def forward(x):
        return x ** 3, 3 * x ** 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        _, dx = output
        ctx.save_for_backward(x, dx)

    @staticmethod
    def backward(ctx, grad_out, grad_dx):
        x, dx = ctx.saved_tensors
        return grad_out * dx + grad_dx * 6 * x


class _CubeWithDxNoTerm(_CubeWithDx):
    @staticmethod
    def backward(ctx, grad_out, grad_dx):
        x, dx = ctx.saved_tensors
        return grad_out * dx          # forgets the contribution of dx


@pytest.mark.claim("autograd.function.intermediate-output-double-backward")
def test_intermediate_returned_as_output_needs_its_gradient_term(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    for cls, second in ((_CubeWithDx, [6.0, 12.0]), (_CubeWithDxNoTerm, [0.0, 0.0])):
        (g,) = torch.autograd.grad(cls.apply(x)[0].sum(), x, create_graph=True)
        assert g.tolist() == [3.0, 12.0]
        (gg,) = torch.autograd.grad(g.sum(), x)
        assert gg.tolist() == second, cls
    s = torch.tensor(1.5, device=device)
    ggx = torch.func.grad(torch.func.grad(lambda t: _CubeWithDx.apply(t)[0]))(s)
    assert torch.allclose(ggx, 6 * s)
    wrong = torch.func.grad(torch.func.grad(lambda t: _CubeWithDxNoTerm.apply(t)[0]))(s)
    assert wrong.item() == 0.0


class _SquareSaved(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


class _SquareInputOnCtx(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.x = x
        return x * x

    @staticmethod
    def backward(ctx, grad):
        return 2 * ctx.x * grad


class _SquareIntermediateOnCtx(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.twice = 2 * x      # computed in forward, where grad mode is off
        return x * x

    @staticmethod
    def backward(ctx, grad):
        return ctx.twice * grad


@pytest.mark.claim("autograd.function.ctx-attr-double-backward")
def test_what_carries_a_second_order_gradient(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    for cls in (_SquareSaved, _SquareInputOnCtx):
        (g,) = torch.autograd.grad(cls.apply(x).sum(), x, create_graph=True)
        assert g.tolist() == [2.0, 4.0, 6.0] and g.requires_grad
        (gg,) = torch.autograd.grad(g.sum(), x)
        assert gg.tolist() == [2.0, 2.0, 2.0], cls
    (g,) = torch.autograd.grad(_SquareIntermediateOnCtx.apply(x).sum(), x, create_graph=True)
    assert g.tolist() == [2.0, 4.0, 6.0]
    assert g.requires_grad is False and g.grad_fn is None
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        torch.autograd.grad(g.sum(), x)


@pytest.mark.claim("autograd.function.gradgradcheck")
def test_gradgradcheck_checks_the_backward_of_backward(device):
    x = torch.randn(4, dtype=torch.float64, device=device, requires_grad=True)
    assert gradgradcheck(_SquareSaved.apply, (x,)) is True
    assert gradcheck(_SquareIntermediateOnCtx.apply, (x,)) is True
    # The second derivative through ctx.twice comes out as zero, which gradgradcheck catches.
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        gradgradcheck(_SquareIntermediateOnCtx.apply, (x,))


class _JvpOrder(Function):
    events = []

    @staticmethod
    def forward(ctx, x, y):
        _JvpOrder.events.append("forward")
        ctx.factor = 2.0
        return x * y

    @staticmethod
    def jvp(ctx, x_t, y_t):
        _JvpOrder.events.append(("jvp", x_t.tolist(), y_t.tolist(), ctx.factor))
        return x_t * ctx.factor + y_t

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


@pytest.mark.claim("autograd.function.jvp-called-in-apply")
def test_jvp_runs_inside_apply(device):
    _JvpOrder.events.clear()
    with fwAD.dual_level():
        x = fwAD.make_dual(torch.ones(2, device=device), torch.full((2,), 3.0, device=device))
        y = torch.full((2,), 2.0, device=device)
        out = _JvpOrder.apply(x, y)
        _JvpOrder.events.append("apply returned")
        tangent = fwAD.unpack_dual(out).tangent
    # one tangent per input (zeros for the plain y), the ctx of forward, before apply returns
    assert _JvpOrder.events == ["forward", ("jvp", [3.0, 3.0], [0.0, 0.0], 2.0), "apply returned"]
    assert tangent.tolist() == [6.0, 6.0]


class _JvpNoMaterialize(Function):
    seen = []

    @staticmethod
    def forward(ctx, x, y):
        ctx.set_materialize_grads(False)
        return x * y

    @staticmethod
    def jvp(ctx, x_t, y_t):
        _JvpNoMaterialize.seen.append(y_t)
        return x_t * 2

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


@pytest.mark.claim("autograd.function.jvp-materialize")
def test_jvp_respects_set_materialize_grads(device):
    _JvpNoMaterialize.seen.clear()
    with fwAD.dual_level():
        x = fwAD.make_dual(torch.ones(2, device=device), torch.ones(2, device=device))
        out = _JvpNoMaterialize.apply(x, torch.full((2,), 2.0, device=device))
        assert fwAD.unpack_dual(out).tangent.tolist() == [2.0, 2.0]
    assert _JvpNoMaterialize.seen == [None]


class _NoJvp(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


@pytest.mark.claim("autograd.function.jvp-required")
def test_forward_mode_needs_a_jvp(device):
    with fwAD.dual_level():
        x = fwAD.make_dual(torch.ones(2, device=device), torch.ones(2, device=device))
        with pytest.raises(NotImplementedError, match="You must implement the jvp function for custom autograd.Function to use it with forward mode AD"):
            _NoJvp.apply(x)
