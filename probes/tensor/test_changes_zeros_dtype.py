"""Probe for the older side of the before/after pair of docs/tensor/errors.md on a NumPy type
given as `dtype=`: until 2.13 (named tensors' removal) `torch.zeros` has a second signature, with
`names`, so the parser lists both instead of naming the `dtype` argument."""
import numpy as np
import pytest
import torch


@pytest.mark.claim("tensor.errors.dtype-argument-lists-signatures")
@pytest.mark.torch_version("<2.13")
def test_dtype_argument_lists_both_zeros_signatures():
    with pytest.raises(TypeError) as info:
        torch.zeros(2, dtype=np.float32)
    lines = [line for line in str(info.value).splitlines() if line.strip()]
    assert lines[0] == ("zeros() received an invalid combination of arguments - got (int, dtype=type), "
                        "but expected one of:")
    assert len(lines) == 3
    assert lines[1].startswith(" * (tuple of ints size, *, tuple of names names, torch.dtype dtype = None")
    assert lines[2].startswith(" * (tuple of ints size, *, Tensor out = None, torch.dtype dtype = None")
    with pytest.raises(ValueError, match=r"^invalid type: 'torch\.Foo'$"):
        torch.zeros(2).type("torch.Foo")
    assert torch.zeros(2, dtype=torch.float32).dtype == torch.float32
    assert torch.zeros(2).type("torch.DoubleTensor").dtype == torch.float64
