"""Probes for docs/guide/article.md: statements of the seed article that no other page checks."""
import pytest
import torch


@pytest.mark.claim("guide.article.pow-mean-example")
def test_square_then_mean_gradient(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x ** 2
    z = y.mean()
    assert type(y.grad_fn).__name__ == "PowBackward0"
    assert type(z.grad_fn).__name__ == "MeanBackward0"
    assert z.grad_fn.next_functions == ((y.grad_fn, 0),)
    assert type(y.grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"
    z.backward()
    assert x.grad.tolist() == [1.0, 2.0]  # d/dx of (x0^2 + x1^2) / 2 is x


@pytest.mark.claim("guide.article.add-records-node")
def test_addition_records_a_node_only_when_needed(device):
    x = torch.ones(2, 3, device=device, requires_grad=True)
    y = torch.ones(2, 3, device=device)
    z = x + y
    assert type(z.grad_fn).__name__ == "AddBackward0"
    (to_x, _), (to_y, _) = z.grad_fn.next_functions
    assert type(to_x).__name__ == "AccumulateGrad" and to_x.variable is x
    assert to_y is None
    plain = y + y
    assert plain.grad_fn is None and not plain.requires_grad


@pytest.mark.claim("guide.article.two-binding-styles")
def test_pybind11_and_hand_written_bindings_coexist():
    for cls in (torch._C.Graph, torch._C.DispatchKeySet, torch._C.FunctionSchema):
        assert type(cls).__name__ == "pybind11_type", cls
    assert torch._C._dispatch_keys.__doc__.startswith("_dispatch_keys(arg0: torch.Tensor)")
    meta = type(torch._C.TensorBase)
    assert meta is torch._C._TensorMeta
    assert meta.__mro__ == (torch._C._TensorMeta, type, object)
    assert type(torch._C.TensorBase.__dict__["add"]).__name__ == "method_descriptor"
