"""Probes for docs/tensor/numerics.md (checked against the official note on numerical accuracy)."""
import warnings

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from verified.probing import measured


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


@pytest.mark.claim("tensor.numerics.float-precision")
def test_float_precision():
    f32, f64 = torch.finfo(torch.float32), torch.finfo(torch.float64)
    assert f32.eps == 2.0**-23 and f64.eps == 2.0**-52
    assert f32.resolution == 1e-6 and f64.resolution == 1e-15
    one32, one64 = torch.tensor(1.0), torch.tensor(1.0, dtype=torch.float64)
    assert (one32 + 2.0**-24).item() == 1.0  # lost: 24 significant bits
    assert (one64 + 2.0**-24).item() != 1.0


@pytest.mark.claim("tensor.numerics.addition-not-associative")
def test_addition_is_not_associative():
    a, b, c = torch.tensor(1e8), torch.tensor(-1e8), torch.tensor(1.0)
    assert ((a + b) + c).item() == 1.0
    assert (a + (b + c)).item() == 0.0


@pytest.mark.claim("tensor.numerics.bmm-slice-bits")
def test_bmm_slice_agrees_with_mm_within_rounding():
    g = _gen(0)
    differ = 0
    for _ in range(20):
        a, b = torch.randn(3, 5, 15, generator=g), torch.randn(3, 15, 5, generator=g)
        batched, single = torch.bmm(a, b)[0], a[0] @ b[0]
        assert torch.allclose(batched, single, rtol=1e-5, atol=1e-5)
        differ += not torch.equal(batched, single)
    # How many differ bitwise depends on the CPU's code path and the BLAS: a figure, not a claim.
    measured.record("draws where bmm(a, b)[0] and a[0] @ b[0] differ bitwise", f"{differ} of 20")


@pytest.mark.claim("tensor.numerics.slice-sum-bits")
def test_sum_of_slice_is_not_bitwise_slice_of_sum():
    a = torch.randn(513, 1000, generator=_gen(0))
    full_then_slice, slice_then_sum = a.sum(0)[0], a[:, 0].sum()
    assert not torch.equal(full_then_slice, slice_then_sum)
    assert torch.allclose(full_then_slice, slice_then_sum, atol=1e-3)
    # the note's pair: a row sum against a column sum
    assert torch.allclose(a.sum(-1)[0], a[0].sum(), atol=1e-3)
    assert (a.sum(-1)[0] - a[:, 0].sum()).abs().item() > 1.0


@pytest.mark.claim("tensor.numerics.norm-overflow")
def test_norm_overflows_in_float32():
    a = torch.tensor([1e20, 1e20])
    assert a.norm().item() == float("inf")
    assert torch.linalg.vector_norm(a).item() == float("inf")
    exact = a.double().norm()
    assert exact.dtype == torch.float64
    assert abs(exact.item() / (a[0].item() * 2.0**0.5) - 1) < 1e-12  # sqrt(2) times float32(1e20)
    assert torch.isfinite(exact.float())  # representable in float32


@pytest.mark.claim("tensor.numerics.linalg-nonfinite")
def test_linalg_with_nan_input():
    m = torch.tensor([[1.0, float("nan")], [0.0, 1.0]])
    assert torch.isnan(torch.linalg.inv(m)).all()
    assert torch.isnan(torch.linalg.solve(m, torch.ones(2))).all()
    assert torch.isnan(torch.linalg.det(m)).item()
    with pytest.raises(torch.linalg.LinAlgError, match="input matrix contained non-finite values"):
        torch.linalg.svdvals(m)
    # the NaN sits in the upper triangle, which cholesky does not read
    assert torch.equal(torch.linalg.cholesky(m), torch.eye(2))
    assert torch.linalg.svdvals(torch.nan_to_num(m)).shape == (2,)


def _hilbert(n):
    i = torch.arange(n, dtype=torch.float32)
    return 1.0 / (i.view(-1, 1) + i.view(1, -1) + 1.0)


@pytest.mark.claim("tensor.numerics.ill-conditioned-solve")
def test_ill_conditioned_solve_is_silently_wrong():
    h = _hilbert(10)
    x = torch.ones(10)
    b = h @ x
    assert torch.linalg.cond(h).item() > 1e8
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        solution = torch.linalg.solve(h, b)
    assert (h @ solution - b).abs().max().item() < 1e-5  # the residual looks fine
    assert (solution - x).abs().max().item() > 1.0  # the answer is not


@pytest.mark.claim("tensor.numerics.lstsq-drivers-differ")
def test_lstsq_drivers_disagree_on_ill_conditioned_input():
    h = _hilbert(10)
    b = (h @ torch.ones(10)).unsqueeze(-1)
    gels = torch.linalg.lstsq(h, b, driver="gels").solution.squeeze(-1)
    gelsd = torch.linalg.lstsq(h, b, driver="gelsd").solution.squeeze(-1)
    gelsd_error = (gelsd - 1.0).abs().max().item()
    assert (gels - gelsd).abs().max().item() > 1.0
    assert gelsd_error < 0.1
    measured.record("largest error of the gelsd solution", round(gelsd_error, 4))


@pytest.mark.claim("tensor.numerics.eigh-gap-gradient")
def test_eigenvector_gradient_blows_up_as_eigenvalues_meet():
    q, _ = torch.linalg.qr(torch.randn(3, 3, dtype=torch.float64, generator=_gen(0)))
    largest = []
    for gap in (1e-4, 1e-8, 1e-12):
        a = (q @ torch.diag(torch.tensor([1.0, 1.0 + gap, 2.0], dtype=torch.float64)) @ q.T).requires_grad_()
        _, vectors = torch.linalg.eigh(a)
        (vectors[:, 0] * torch.arange(3.0, dtype=torch.float64)).sum().abs().backward()
        largest.append(a.grad.abs().max().item())
    assert largest[0] > 1e3 and largest[1] > 1e7 and largest[2] > 1e11
    eye = torch.eye(3, dtype=torch.float64, requires_grad=True)
    torch.linalg.eigh(eye)[1].sum().backward()
    assert torch.isnan(eye.grad).all()  # exactly repeated: NaN, not inf
    eye2 = torch.eye(3, dtype=torch.float64, requires_grad=True)
    torch.linalg.eigvalsh(eye2).sum().backward()
    assert torch.equal(eye2.grad, torch.eye(3, dtype=torch.float64))  # eigenvalues alone: fine


@pytest.mark.claim("tensor.numerics.cuda-tf32-identity")
@pytest.mark.devices("cuda")
def test_tf32_matmul_by_identity_changes_the_input(device):
    x = torch.randn(256, 256, generator=_gen(0)).to(device)
    eye = torch.eye(256, device=device)
    matmul = torch.backends.cuda.matmul
    try:
        matmul.fp32_precision = "ieee"
        assert torch.equal(x @ eye, x)
        matmul.fp32_precision = "tf32"
        assert not torch.equal(x @ eye, x)
        assert torch.allclose(x @ eye, x, rtol=1e-3, atol=1e-3)
    finally:
        matmul.fp32_precision = "none"


@pytest.mark.claim("tensor.numerics.sdpa-math-upcasts")
def test_sdpa_math_backend_computes_in_float32():
    g = _gen(0)
    q, k, v = (torch.randn(2, 4, 64, 32, generator=g) for _ in range(3))
    assert torch.backends.cuda.fp16_bf16_reduction_math_sdp_allowed() is False
    for dtype in (torch.float16, torch.bfloat16):
        qh, kh, vh = (t.to(dtype) for t in (q, k, v))
        with sdpa_kernel(SDPBackend.MATH):
            low = F.scaled_dot_product_attention(qh, kh, vh)
            upcast = F.scaled_dot_product_attention(qh.float(), kh.float(), vh.float()).to(dtype)
            assert low.dtype == dtype and torch.equal(low, upcast)
            try:
                torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(True)
                reduced = F.scaled_dot_product_attention(qh, kh, vh)
            finally:
                torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(False)
            assert not torch.equal(reduced, upcast)


@pytest.mark.claim("tensor.numerics.sdpa-backends-differ")
def test_sdpa_backends_do_not_match_bitwise():
    g = _gen(0)
    q, k, v = (torch.randn(2, 4, 64, 32, generator=g) for _ in range(3))
    with sdpa_kernel(SDPBackend.MATH):
        math1 = F.scaled_dot_product_attention(q, k, v)
        math2 = F.scaled_dot_product_attention(q, k, v)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        flash = F.scaled_dot_product_attention(q, k, v)
    assert torch.equal(math1, math2)
    assert not torch.equal(math1, flash)
    assert torch.allclose(math1, flash, atol=1e-5)
