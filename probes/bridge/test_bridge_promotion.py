"""Probes for docs/bridge/promotion.md."""
import re
import warnings
from pathlib import Path

import pytest
import torch


@pytest.mark.claim("bridge.promotion.scalars-do-not-promote")
def test_scalars_and_zero_dim_tensors_do_not_widen(device):
    h = torch.ones(3, dtype=torch.float16, device=device)
    assert (h + 1.5).dtype == torch.float16
    zero_dim = torch.tensor(1.5, device=device)
    assert zero_dim.dtype == torch.float32 and zero_dim.dim() == 0
    assert (h + zero_dim).dtype == torch.float16
    assert (h + torch.tensor(1.5, dtype=torch.float64, device=device)).dtype == torch.float16
    one_dim = torch.tensor([1.5], device=device)
    assert (h + one_dim).dtype == torch.float32
    assert torch.result_type(h, 1.5) == torch.float16
    assert torch.result_type(h, one_dim) == torch.float32


@pytest.mark.claim("bridge.promotion.category-wins")
def test_a_higher_category_scalar_decides(device):
    i = torch.ones(3, dtype=torch.int32, device=device)
    assert torch.get_default_dtype() == torch.float32
    assert (i + 1.5).dtype == torch.float32  # a Python float brings the default dtype
    assert (i + torch.tensor(1.5, dtype=torch.float64, device=device)).dtype == torch.float64  # a 0-dim tensor its own


@pytest.mark.claim("bridge.promotion.same-category-int")
def test_same_category_integers_keep_the_tensor_dtype(device):
    i = torch.ones(3, dtype=torch.int32, device=device)
    assert (i + 7).dtype == torch.int32  # same category: the dimensioned tensor wins
    assert (i + torch.tensor(7, dtype=torch.int64, device=device)).dtype == torch.int32


@pytest.mark.claim("bridge.promotion.bool-category")
def test_bool_tensor_and_python_numbers(device):
    b = torch.ones(3, dtype=torch.bool, device=device)
    assert (b + 1).dtype == torch.int64
    assert (b + True).dtype == torch.bool


@pytest.mark.claim("bridge.promotion.no-overflow-promotion")
def test_an_out_of_range_scalar_wraps_instead_of_promoting(device):
    u = torch.tensor([1, 200], dtype=torch.uint8, device=device)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = u + 300
    assert caught == []
    assert out.dtype == torch.uint8
    assert out.cpu().tolist() == [(1 + 300) % 256, (200 + 300) % 256]


@pytest.mark.claim("bridge.promotion.wrapped-number")
def test_python_number_travels_as_a_scalar_not_a_dimensioned_tensor(device):
    h = torch.ones(3, dtype=torch.float16, device=device)
    # the same value as a Python float, a 0-dim tensor and a 1-element 1-dim tensor
    results = {name: (h + other).dtype for name, other in (
        ("python float", 1.5),
        ("0-dim float64 tensor", torch.tensor(1.5, dtype=torch.float64, device=device)),
        ("1-dim float64 tensor", torch.tensor([1.5], dtype=torch.float64, device=device)),
    )}
    assert results == {"python float": torch.float16, "0-dim float64 tensor": torch.float16,
                       "1-dim float64 tensor": torch.float64}


@pytest.mark.claim("bridge.promotion.zero-dim-pair-widens")
def test_two_zero_dim_operands_widen(device):
    z16 = torch.tensor(1.0, dtype=torch.float16, device=device)
    assert (z16 + torch.tensor(1.0, dtype=torch.float64, device=device)).dtype == torch.float64


@pytest.mark.claim("bridge.promotion.zero-dim-outranks-number")
def test_zero_dim_tensor_outranks_a_python_float(device):
    z16 = torch.tensor(1.0, dtype=torch.float16, device=device)
    assert (z16 + 1.0).dtype == torch.float16


@pytest.mark.claim("bridge.promotion.complex-category")
def test_python_complex_brings_the_complex_category(device):
    assert (torch.ones(2, device=device) + 1j).dtype == torch.complex64
    assert (torch.ones(2, dtype=torch.float64, device=device) + 1j).dtype == torch.complex128
    assert (torch.ones(2, dtype=torch.int32, device=device) + 1j).dtype == torch.complex64


@pytest.mark.claim("bridge.promotion.result-type-state-fields")
def test_result_type_state_has_three_running_results():
    header = (Path(torch.__file__).parent / "include/ATen/native/TypeProperties.h").read_text()
    body = re.search(r"struct ResultTypeState \{(.*?)\};", header, re.S).group(1)
    fields = re.findall(r"c10::ScalarType (\w+) = ScalarType::Undefined;", body)
    assert sorted(fields) == ["dimResult", "wrappedResult", "zeroResult"]
    assert len(body.strip().splitlines()) == 3


@pytest.mark.claim("bridge.promotion.wrapped-scalar-flag")
def test_wrapped_scalar_tensor_sets_the_flag():
    header = (Path(torch.__file__).parent / "include/ATen/ScalarOps.h").read_text()
    body = re.search(r"inline Tensor wrapped_scalar_tensor\((.*?)\n\}", header, re.S).group(1)
    statements = [line.strip() for line in body.splitlines() if line.strip().endswith(";")]
    assert statements == ["auto tensor = scalar_to_tensor(scalar, device);",
                          "tensor.unsafeGetTensorImpl()->set_wrapped_number(true);",
                          "return tensor;"]
