"""Probes for docs/autograd/complex.md (checked against the official note "Autograd mechanics")."""
import pytest
import torch


@pytest.mark.claim("autograd.complex.real-loss-gradient")
def test_gradient_of_a_real_function_of_z(device):
    zv = [1 + 2j, -3 + 0.5j]
    z = torch.tensor(zv, device=device, requires_grad=True)
    s = (z * z.conj()).real  # |z|^2, complex in, real out
    s.backward(torch.full((2,), 3.0, device=device))  # grad_output 3
    assert torch.allclose(z.grad, 6 * z.detach())  # 2 * grad_output * ds/dz*, ds/dz* = z
    # the same loss written with real and imaginary parts as separate real leaves
    x = torch.tensor([v.real for v in zv], device=device, requires_grad=True)
    y = torch.tensor([v.imag for v in zv], device=device, requires_grad=True)
    (3 * (x**2 + y**2)).sum().backward()
    assert torch.allclose(z.grad, torch.complex(x.grad, y.grad))  # dL/dx + i dL/dy
    # half of that is (dL/dx + i dL/dy) / 2, the conjugate Wirtinger derivative 3z
    assert not torch.allclose(z.grad, 3 * z.detach())


@pytest.mark.claim("autograd.complex.sgd-complex-parameter")
def test_sgd_on_a_complex_parameter():
    p0 = torch.tensor([1 + 2j, -3 + 0.5j])
    p = torch.nn.Parameter(p0.clone())
    opt = torch.optim.SGD([p], lr=0.1)
    for _ in range(50):
        opt.zero_grad()
        (p.abs() ** 2).sum().backward()  # p.grad == 2p
        opt.step()
    assert torch.allclose(p.detach(), p0 * 0.8**50, atol=1e-9, rtol=1e-4)


@pytest.mark.claim("autograd.complex.real-to-real-matches")
def test_real_function_through_complex_ops(device):
    xv, yv = [0.3, -1.2], [0.7, 2.0]
    x = torch.tensor(xv, device=device, requires_grad=True)
    y = torch.tensor(yv, device=device, requires_grad=True)
    torch.complex(x, y).abs().sum().backward()
    gx, gy = x.grad.clone(), y.grad.clone()
    x.grad = y.grad = None
    torch.sqrt(x**2 + y**2).sum().backward()
    assert torch.allclose(gx, x.grad) and torch.allclose(gy, y.grad)
    t = torch.tensor(xv, device=device, requires_grad=True)
    torch.exp(1j * t).real.sum().backward()  # cos(t), computed through exp(i t)
    assert torch.allclose(t.grad, -torch.sin(t.detach()))


@pytest.mark.claim("autograd.complex.linear-grad")
def test_gradient_of_c_times_z(device):
    z = torch.tensor([1 + 2j], device=device, requires_grad=True)
    (2.5 * z).backward(torch.ones(1, dtype=torch.cfloat, device=device))
    assert z.grad.tolist() == [2.5 + 0j]
    z = torch.tensor([1 + 2j], device=device, requires_grad=True)
    c = torch.tensor([2 + 3j], device=device)
    (c * z).backward(torch.ones(1, dtype=torch.cfloat, device=device))
    assert z.grad.tolist() == [2 - 3j]  # conj(c) for a complex c


@pytest.mark.claim("autograd.complex.no-implicit-complex-grad")
def test_backward_of_a_complex_scalar_needs_a_gradient(device):
    z = torch.tensor([1 + 2j], device=device, requires_grad=True)
    out = (2.5 * z).sum()
    assert out.dim() == 0 and out.is_complex()
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar outputs"):
        out.backward()
    (2.5 * z).sum().abs().backward()
    assert z.grad is not None


@pytest.mark.claim("autograd.complex.real-to-complex-grad")
def test_real_input_complex_output(device):
    x = torch.tensor([1.5], device=device, requires_grad=True)
    c = torch.tensor([2 + 3j], device=device)
    g = torch.tensor([1 - 1j], device=device)
    (x * c).backward(g)
    assert x.grad.dtype == torch.float32
    assert x.grad.item() == pytest.approx((g.conj() * c).real.item())  # Re(conj(g) * c) = -1
    assert x.grad.item() == pytest.approx(-1.0)
    z = torch.tensor([1.5 + 0j], device=device, requires_grad=True)
    (z * c).backward(g)
    assert x.grad.item() == pytest.approx(z.grad.real.item())
