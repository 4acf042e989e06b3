"""Probes for docs/autograd/custom-function.md."""
import re
import warnings
from pathlib import Path

import pytest
import torch
from torch.autograd.function import once_differentiable
from torch.autograd.gradcheck import GradcheckError


class Cube(torch.autograd.Function):
    forward_grad_mode = []
    contexts = []

    @staticmethod
    def forward(ctx, a):
        Cube.forward_grad_mode.append(torch.is_grad_enabled())
        Cube.contexts.append(ctx)
        ctx.save_for_backward(a)
        return a ** 3

    @staticmethod
    def backward(ctx, grad):
        Cube.contexts.append(ctx)
        (a,) = ctx.saved_tensors
        return grad * 3 * a ** 2


class CubeNoStatic(torch.autograd.Function):
    def forward(ctx, a):  # noqa: N805 - deliberately missing @staticmethod
        ctx.save_for_backward(a)
        return a ** 3

    def backward(ctx, grad):  # noqa: N805
        (a,) = ctx.saved_tensors
        return grad * 3 * a ** 2


@pytest.mark.claim("autograd.function.staticmethod")
def test_apply_works_without_staticmethod_but_instances_fail(device):
    for cls in (Cube, CubeNoStatic):
        x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
        cls.apply(x).sum().backward()
        assert x.grad.tolist() == [3.0, 12.0], cls


@pytest.mark.claim("autograd.function.instantiate-deprecated")
def test_instantiating_a_function_warns():
    for cls in (Cube, CubeNoStatic):
        with pytest.warns(DeprecationWarning, match="should not be instantiated"):
            cls()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Cube.apply(torch.ones(1)).tolist() == [1.0]


@pytest.mark.claim("autograd.function.legacy-call-raises")
def test_calling_a_function_instance_raises(device):
    for cls in (Cube, CubeNoStatic):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            instance = cls()
        with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward method is deprecated"):
            instance(torch.ones(1, device=device))
    assert Cube.apply(torch.ones(1, device=device)).tolist() == [1.0]


@pytest.mark.claim("autograd.function.forward-no-grad")
def test_forward_runs_with_grad_mode_off(device):
    x = torch.ones(2, device=device, requires_grad=True)
    Cube.forward_grad_mode.clear()
    assert torch.is_grad_enabled()
    Cube.apply(x)
    assert Cube.forward_grad_mode == [False]


@pytest.mark.claim("autograd.function.ctx-is-node")
def test_ctx_is_the_grad_fn(device):
    x = torch.ones(2, device=device, requires_grad=True)
    Cube.contexts.clear()
    out = Cube.apply(x)
    out.sum().backward()
    assert len(Cube.contexts) == 2  # once in forward, once in backward
    assert Cube.contexts[0] is out.grad_fn and Cube.contexts[1] is out.grad_fn


@pytest.mark.claim("autograd.function.pynode-header")
def test_ctx_and_pynode_in_the_header():
    header = (Path(torch.__file__).parent / "include/torch/csrc/autograd/python_function.h").read_text()
    assert re.search(r"^struct PyNode : public Node \{", header, re.M)
    thp_function = header[header.index("struct THPFunction {"):]
    thp_function = thp_function[:thp_function.index("\n};")]
    assert re.findall(r"^\s+c10::intrusive_ptr<torch::autograd::Node> (\w+);", thp_function, re.M) == ["cdata"]


@pytest.mark.claim("autograd.function.node-class")
def test_each_function_gets_a_generated_backward_class(device):
    x = torch.ones(2, device=device, requires_grad=True)
    Cube.forward_grad_mode.clear()
    Cube.contexts.clear()
    out = Cube.apply(x)
    node = out.grad_fn
    assert type(node) is Cube._backward_cls
    assert type(node).__name__ == "CubeBackward"
    assert type(node).__mro__[1] is torch.autograd.function.BackwardCFunction
    assert node._forward_cls is Cube
    assert node.next_functions[0][0].variable is x


class SaveInt(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, k):
        ctx.save_for_backward(a, k)
        return a * k

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class SaveNoneAndAttr(torch.autograd.Function):
    seen = []

    @staticmethod
    def forward(ctx, a, k):
        ctx.save_for_backward(a, None)
        ctx.k = k  # plain Python values go on ctx
        return a * k

    @staticmethod
    def backward(ctx, grad):
        SaveNoneAndAttr.seen.extend([ctx.saved_tensors, ctx.k])
        return grad * ctx.k, None


@pytest.mark.claim("autograd.function.save-for-backward-tensors-only")
def test_save_for_backward_takes_tensors_or_none(device):
    x = torch.ones(2, device=device, requires_grad=True)
    with pytest.raises(TypeError, match="save_for_backward can only save variables, but argument 1 is of type int"):
        SaveInt.apply(x, 3)
    class SaveAttr(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, k):
            ctx.save_for_backward(a)
            ctx.k = k
            return a * k
        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.k, None
    SaveAttr.apply(x, 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


@pytest.mark.claim("autograd.function.save-none")
def test_save_for_backward_accepts_none(device):
    SaveNoneAndAttr.seen.clear()
    x = torch.ones(2, device=device, requires_grad=True)
    SaveNoneAndAttr.apply(x, 3).sum().backward()
    (saved_a, nothing), _ = SaveNoneAndAttr.seen
    assert nothing is None and torch.equal(saved_a, x)


@pytest.mark.claim("autograd.function.ctx-attribute")
def test_plain_values_on_ctx_reach_backward(device):
    SaveNoneAndAttr.seen.clear()
    x = torch.ones(2, device=device, requires_grad=True)
    SaveNoneAndAttr.apply(x, 3).sum().backward()
    _, k = SaveNoneAndAttr.seen
    assert k == 3
    assert x.grad.tolist() == [3.0, 3.0]  # backward used ctx.k


class ScaledMul(torch.autograd.Function):
    seen = []

    @staticmethod
    def forward(a, b, k):  # no ctx: setup_context style
        return a * b * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        a, b, k = inputs
        ctx.save_for_backward(a, b)
        ctx.k = k

    @staticmethod
    def backward(ctx, grad):
        ScaledMul.seen.append(ctx.needs_input_grad)
        a, b = ctx.saved_tensors
        ga = grad * b * ctx.k if ctx.needs_input_grad[0] else None
        gb = grad * a * ctx.k if ctx.needs_input_grad[1] else None
        return ga, gb, None


@pytest.mark.claim("autograd.function.setup-context")
def test_setup_context_style_passes_gradcheck(device):
    a = torch.randn(4, device=device, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, device=device, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(ScaledMul.apply, (a, b, 2.5))
    assert type(ScaledMul.apply(a, b, 2.5).grad_fn).__name__ == "ScaledMulBackward"
    grads = torch.func.grad(lambda t: ScaledMul.apply(t, b.detach(), 2.5).sum())(a.detach())
    assert torch.allclose(grads, 2.5 * b.detach())


@pytest.mark.claim("autograd.function.func-needs-setup-context")
def test_ctx_style_function_fails_under_torch_func(device):
    a = torch.randn(4, device=device, dtype=torch.float64)
    with pytest.raises(RuntimeError, match="it must override the setup_context staticmethod"):
        torch.func.grad(lambda t: Cube.apply(t).sum())(a)


@pytest.mark.claim("autograd.function.needs-input-grad")
def test_needs_input_grad(device):
    ScaledMul.seen.clear()
    a = torch.ones(2, device=device, requires_grad=True)
    c = torch.ones(2, device=device)
    ScaledMul.apply(a, c, 2.0).sum().backward()
    b = torch.ones(2, device=device, requires_grad=True)
    ScaledMul.apply(a, b, 2.0).sum().backward()
    assert ScaledMul.seen == [(True, False, False), (True, True, False)]
    assert c.grad is None


class AddOneInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        a.add_(1)
        ctx.mark_dirty(a)
        return a

    @staticmethod
    def backward(ctx, grad):
        return grad


class DirtyButNotReturned(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        a.add_(1)
        ctx.mark_dirty(a)
        return a * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


@pytest.mark.claim("autograd.function.mark-dirty")
def test_mark_dirty_rebases_the_input(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x.clone()
    out = AddOneInPlace.apply(y)
    assert out is y  # the same Python object comes back
    assert type(y.grad_fn).__name__ == "AddOneInPlaceBackward"
    assert y.tolist() == [2.0, 3.0]
    out.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


@pytest.mark.claim("autograd.function.mark-dirty-leaf")
def test_mark_dirty_on_a_leaf_raises(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used in an in-place operation"):
        AddOneInPlace.apply(x)
    fresh = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    assert AddOneInPlace.apply(fresh.clone()).tolist() == [2.0, 3.0]  # a non-leaf copy may be modified


@pytest.mark.claim("autograd.function.mark-dirty-not-returned")
def test_dirty_tensor_must_be_returned(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="Some elements marked as dirty during the forward method were not returned as output"):
        DirtyButNotReturned.apply(x.clone())


class Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a

    @staticmethod
    def backward(ctx, grad):
        return grad


@pytest.mark.claim("autograd.function.returned-input-becomes-view")
def test_returning_an_input_unmarked_gives_a_view(device):
    y = torch.ones(2, device=device, requires_grad=True).clone()
    out = Identity.apply(y)
    assert out is not y
    assert out._is_view() and out._base is y
    assert type(out.grad_fn).__name__ == "IdentityBackward"
    assert y.grad_fn.name() == "CloneBackward0"  # the input's own history is untouched


class SortWithIndices(torch.autograd.Function):
    received = []

    @staticmethod
    def forward(ctx, a):
        values, idx = a.sort()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        return values, idx

    @staticmethod
    def backward(ctx, grad_values, grad_idx):
        SortWithIndices.received.append(grad_idx)
        (idx,) = ctx.saved_tensors
        out = torch.zeros_like(grad_values)
        out[idx] = grad_values
        return out


class TwoOutputsLazy(torch.autograd.Function):
    received = []

    @staticmethod
    def forward(ctx, a):
        ctx.set_materialize_grads(False)
        return a * 2, a * 3

    @staticmethod
    def backward(ctx, g1, g2):
        TwoOutputsLazy.received.append(g2)
        return g1 * 2


@pytest.mark.claim("autograd.function.mark-non-differentiable")
def test_mark_non_differentiable(device):
    SortWithIndices.received.clear()
    x = torch.tensor([3.0, 1.0, 2.0], device=device, requires_grad=True)
    values, idx = SortWithIndices.apply(x)
    assert values.requires_grad and not idx.requires_grad and idx.grad_fn is None
    (values * torch.tensor([1.0, 10.0, 100.0], device=device)).sum().backward()
    assert x.grad.tolist() == [100.0, 1.0, 10.0]
    (g_idx,) = SortWithIndices.received
    assert g_idx.dtype == idx.dtype and g_idx.abs().sum().item() == 0  # a zero gradient, not None


@pytest.mark.claim("autograd.function.materialize-grads-false")
def test_set_materialize_grads_false_gives_none(device):
    x = torch.tensor([3.0, 1.0, 2.0], device=device, requires_grad=True)
    TwoOutputsLazy.received.clear()
    a, _ = TwoOutputsLazy.apply(x)
    a.sum().backward()
    assert TwoOutputsLazy.received == [None]  # with set_materialize_grads(False): None


def returning(make):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, grad):
            return make(grad)

    return F


@pytest.mark.claim("autograd.function.gradient-count")
def test_backward_must_return_one_gradient_per_input(device):
    a = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    b = torch.tensor([3.0, 4.0], device=device, requires_grad=True)
    for make, got in ((lambda g: g, 1), (lambda g: (g,), 1), (lambda g: (g, g, g), 3)):
        with pytest.raises(RuntimeError, match=rf"function FBackward returned an incorrect number of gradients \(expected 2, got {got}\)"):
            returning(make).apply(a, b).sum().backward()
    returning(lambda g: (g, g)).apply(a, b).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0] and b.grad.tolist() == [1.0, 1.0]


@pytest.mark.claim("autograd.function.extra-none-accepted")
def test_extra_trailing_nones_are_accepted(device):
    a = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    b = torch.tensor([3.0, 4.0], device=device, requires_grad=True)
    returning(lambda g: (g, g, None, None)).apply(a, b).sum().backward()  # extra trailing Nones: fine
    assert a.grad.tolist() == [1.0, 1.0] and b.grad.tolist() == [1.0, 1.0]


@pytest.mark.claim("autograd.function.none-gradient")
def test_none_leaves_an_input_without_gradient(device):
    a = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    b = torch.tensor([3.0, 4.0], device=device, requires_grad=True)
    returning(lambda g: (g * 5, None)).apply(a, b).sum().backward()
    assert a.grad.tolist() == [5.0, 5.0] and b.grad is None  # None: no gradient for that input


class WrongSin(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a.sin()

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * a.sin()  # wrong: should be cos


@pytest.mark.claim("autograd.function.gradcheck")
def test_gradcheck_catches_a_wrong_backward(device):
    torch.manual_seed(0)
    x = torch.randn(3, device=device, dtype=torch.float64, requires_grad=True)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        torch.autograd.gradcheck(WrongSin.apply, (x,))
    assert torch.autograd.gradcheck(WrongSin.apply, (x,), raise_exception=False) is False
    assert torch.autograd.gradcheck(Cube.apply, (x,))


@pytest.mark.claim("autograd.function.gradcheck-float32")
def test_gradcheck_fails_for_sin_in_float32(device):
    torch.manual_seed(0)
    x64 = torch.randn(3, device=device, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(torch.sin, (x64,), raise_exception=False) is True
    x32 = torch.randn(3, device=device, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.autograd.gradcheck(torch.sin, (x32,), raise_exception=False) is False  # float32 is too coarse


class OnceSquare(torch.autograd.Function):
    grad_mode = []

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        OnceSquare.grad_mode.append(torch.is_grad_enabled())
        (a,) = ctx.saved_tensors
        return 2 * a * grad


@pytest.mark.claim("autograd.function.once-differentiable")
def test_once_differentiable_double_backward(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    # 1. the incoming gradient does not require grad (loss is a plain sum)
    (g,) = torch.autograd.grad(OnceSquare.apply(x).sum(), x, create_graph=True)
    assert g.tolist() == [2.0, 4.0, 6.0]
    assert not g.requires_grad and g.grad_fn is None  # silently a constant
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        torch.autograd.grad(g.sum(), x)


@pytest.mark.claim("autograd.function.once-differentiable-drops-term")
def test_once_differentiable_silently_drops_the_second_order_term(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    (g,) = torch.autograd.grad(OnceSquare.apply(x).sum(), x, create_graph=True)
    (h,) = torch.autograd.grad((g * x).sum(), x)  # true derivative of sum(2x*x) is 4x
    assert h.tolist() == [2.0, 4.0, 6.0]  # only the explicit factor: the second-order term is missing


@pytest.mark.claim("autograd.function.once-differentiable-error-node")
def test_once_differentiable_attaches_an_error_node(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    y = OnceSquare.apply(x)
    (g,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)  # incoming gradient 2y requires grad
    assert g.requires_grad and g.grad_fn.name() == "torch::autograd::Error"
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with @once_differentiable"):
        g.sum().backward()


@pytest.mark.claim("autograd.function.once-differentiable-grad-unused")
def test_once_differentiable_error_node_is_off_the_graph_for_grad(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    y = OnceSquare.apply(x)
    (g,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        torch.autograd.grad(g.sum(), x)


@pytest.mark.claim("autograd.function.once-differentiable-no-grad")
def test_once_differentiable_runs_backward_without_grad_mode(device):
    OnceSquare.grad_mode.clear()
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    y = OnceSquare.apply(x)
    torch.autograd.grad((y * y).sum(), x, create_graph=True)  # the engine runs backward with grad mode on
    assert OnceSquare.grad_mode == [False]
