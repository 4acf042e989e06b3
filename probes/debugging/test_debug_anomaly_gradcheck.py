"""Probes for docs/debugging/anomaly-gradcheck.md."""
import warnings

import pytest
import torch
from torch.autograd import gradcheck, gradgradcheck
from torch.autograd.gradcheck import GradcheckError

INPLACE = "one of the variables needed for gradient computation has been modified by an inplace operation"


def caught_warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught]


@pytest.mark.claim("debug.anomaly.inplace-error-hint")
@pytest.mark.torch_version(">=2.13")
def test_inplace_error_points_at_anomaly_mode_then_at_the_forward_line(device):
    x = torch.ones(3, device=device, requires_grad=True)
    w = x.exp()  # ExpBackward0 saves its result, w
    w.add_(1)  # ... which is then changed in place
    with pytest.raises(RuntimeError) as plain:
        w.sum().backward()
    assert INPLACE in str(plain.value)
    assert "which is output 0 of Exp, is at version 1; expected version 0 instead" in str(plain.value)
    assert "Hint: enable anomaly detection to find the operation that failed to compute its gradient" \
        in str(plain.value)


@pytest.mark.claim("debug.anomaly.inplace-forward-line")
def test_anomaly_mode_quotes_the_forward_line_of_the_inplace_error(device):
    x = torch.ones(3, device=device, requires_grad=True)

    def with_anomaly():
        with torch.autograd.detect_anomaly(check_nan=False):
            v = x.exp()  # the forward line the warning will show
            v.add_(1)
            with pytest.raises(RuntimeError) as info:
                v.sum().backward()
            assert "Hint: the backtrace further above shows the operation that failed" in str(info.value)

    messages = caught_warnings(with_anomaly)
    traced = [m for m in messages if m.startswith("Error detected in ExpBackward0. Traceback of forward call")]
    assert len(traced) == 1 and "v = x.exp()" in traced[0]


@pytest.mark.claim("debug.anomaly.traceback-in-metadata")
def test_anomaly_mode_stores_the_forward_stack_on_each_node(device):
    x = torch.ones(3, device=device, requires_grad=True)
    plain = x.exp()
    assert plain.grad_fn.metadata == {}
    assert not torch.is_anomaly_enabled()

    def build():
        with torch.autograd.detect_anomaly():
            assert torch.is_anomaly_enabled()
            y = x.exp().sum()  # recorded line
            return y

    holder = []
    caught_warnings(lambda: holder.append(build()))
    y = holder[0]
    assert not torch.is_anomaly_enabled()
    for node in (y.grad_fn, y.grad_fn.next_functions[0][0]):
        stack = node.metadata["traceback_"]
        assert isinstance(stack, list) and "y = x.exp().sum()" in stack[-1]


@pytest.mark.claim("debug.anomaly.where-nan")
def test_nan_gradient_through_the_unselected_branch_of_where(device):
    x = torch.tensor([-1.0, 0.0, 4.0], device=device, requires_grad=True)
    y = torch.where(x > 0, torch.sqrt(x), torch.zeros_like(x))
    assert not torch.isnan(y).any()  # the forward is clean
    y.sum().backward()
    assert torch.isnan(x.grad[:2]).all() and x.grad[2].item() == 0.25


@pytest.mark.claim("debug.anomaly.where-nan-detected")
def test_anomaly_mode_names_sqrt_for_the_where_nan(device):
    x = torch.tensor([-1.0, 0.0, 4.0], device=device, requires_grad=True)

    def with_anomaly():
        with torch.autograd.detect_anomaly():
            z = torch.where(x > 0, torch.sqrt(x), torch.zeros_like(x))
            with pytest.raises(RuntimeError, match=r"Function 'SqrtBackward0' returned nan values in its 0th output"):
                z.sum().backward()

    caught_warnings(with_anomaly)


@pytest.mark.claim("debug.anomaly.where-sanitised")
def test_sanitised_input_keeps_the_where_gradient_finite(device):
    x = torch.tensor([-1.0, 0.0, 4.0], device=device, requires_grad=True)
    safe = torch.where(x > 0, x, torch.ones_like(x))  # keep the masked-out inputs in sqrt's domain
    torch.where(x > 0, torch.sqrt(safe), torch.zeros_like(x)).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.25]


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * grad * x


class ForgotTheTwo(Square):
    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x


class DetachedBackward(Square):
    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * grad * x.detach()  # right values, but not differentiable in x


def inputs(dtype=torch.float64):
    return (torch.tensor([0.5, 1.5, -2.0, 3.0], dtype=dtype, requires_grad=True),)


@pytest.mark.claim("debug.gradcheck.reports-jacobians")
def test_gradcheck_shows_both_jacobians():
    assert gradcheck(Square.apply, inputs())
    assert gradcheck(ForgotTheTwo.apply, inputs(), raise_exception=False) is False
    with pytest.raises(GradcheckError) as info:
        gradcheck(ForgotTheTwo.apply, inputs())
    assert isinstance(info.value, RuntimeError)
    text = str(info.value)
    assert text.startswith("Jacobian mismatch for output 0 with respect to input 0")
    numerical, analytical = text.split("analytical:")
    assert "numerical:" in numerical
    # the finite differences give 2x on the diagonal, the faulty backward gives x
    assert all(v in numerical for v in ("1.0000", "3.0000", "-4.0000", "6.0000"))
    assert all(v in analytical for v in ("0.5000", "1.5000", "-2.0000", "3.0000"))
    assert "6.0000" not in analytical and "-4.0000" not in analytical


@pytest.mark.claim("debug.gradcheck.float32-false-alarm")
def test_correct_backward_fails_in_float32():
    messages = []

    def run():
        messages.append(gradcheck(Square.apply, inputs(torch.float32), raise_exception=False))

    warned = caught_warnings(run)
    assert messages == [False]
    assert any("is not a double precision floating point or complex" in m for m in warned)
    assert gradcheck(Square.apply, inputs(torch.float64))


@pytest.mark.claim("debug.gradcheck.eps-float32-digits")
def test_the_default_step_is_too_small_for_float32():
    import inspect

    assert inspect.signature(gradcheck).parameters["eps"].default == 1e-6

    def central_difference(dtype):
        x = torch.tensor(3.0, dtype=dtype)
        return (((x + 1e-6) ** 2 - (x - 1e-6) ** 2) / 2e-6).item()

    assert round(central_difference(torch.float32), 2) == 5.72
    assert round(central_difference(torch.float64), 6) == 6.0


@pytest.mark.claim("debug.gradcheck.gradgradcheck")
def test_gradgradcheck_catches_a_non_differentiable_backward():
    assert gradcheck(DetachedBackward.apply, inputs())
    assert gradgradcheck(DetachedBackward.apply, inputs(), raise_exception=False) is False
    assert gradgradcheck(Square.apply, inputs())
