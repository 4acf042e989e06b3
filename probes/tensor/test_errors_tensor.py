"""Probes for docs/tensor/errors.md: indexing, shape, view, dtype, creation and device errors.

Each probe triggers its messages the way the claim's cause says (`pytest.raises` / `pytest.warns`
with the stable part of the message in `match=`), then runs the claim's fix and checks it works.
All of it is CPU work on tensors of a few elements.

Chosen from what users ask about (threads read for this page):
- https://github.com/pytorch/pytorch/issues/59786, https://github.com/pytorch/pytorch/issues/99297,
  https://github.com/pytorch/pytorch/issues/604 (negative slicing step)
- https://github.com/ShulinCao/OpenNRE-PyTorch/issues/11, https://github.com/artetxem/undreamt/issues/13,
  https://github.com/AMLab-Amsterdam/AttentionDeepMIL/pull/23 (invalid index of a 0-dim tensor, loss.data[0])
- https://github.com/arogozhnikov/einops/issues/370, https://github.com/pytorch/pytorch/pull/169780
  (view_as_complex stride checks)
- https://github.com/pytorch/pytorch/issues/113437 (views of channels_last tensors)
"""
import re
import warnings

import numpy as np
import pytest
import torch


def lit(text):
    """A regex matching `text` literally."""
    return re.escape(text)


def no_warning(fn):
    """Run fn with every warning turned into an error, and return its result."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn()


# ---------------------------------------------------------------- 0-dim tensors

@pytest.mark.claim("tensor.errors.zero-dim-index")
def test_zero_dim_index():
    loss = torch.tensor(2.5)
    with pytest.raises(IndexError, match=lit("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")):
        loss[0]
    assert loss.item() == 2.5


@pytest.mark.claim("tensor.errors.zero-dim-len-iter")
def test_zero_dim_len_and_iter():
    t = torch.tensor(3.0)
    with pytest.raises(TypeError, match=r"^len\(\) of a 0-d tensor$"):
        len(t)
    with pytest.raises(TypeError, match=r"^iteration over a 0-d tensor$"):
        iter(t)
    assert t.dim() == 0 and t.numel() == 1 and list(t.reshape(1)) == [torch.tensor(3.0)]


# ---------------------------------------------------------------- indexing

@pytest.mark.claim("tensor.errors.float-index")
def test_float_index():
    t = torch.arange(4)
    with pytest.raises(IndexError, match=lit("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                                             "Variables are valid indices (got float)")):
        t[4 / 2]
    assert t[4 // 2].item() == 2 and t[int(4 / 2)].item() == 2


@pytest.mark.claim("tensor.errors.negative-step")
def test_negative_step():
    t = torch.arange(4)
    with pytest.raises(ValueError, match=r"^step must be greater than zero$"):
        t[::-1]
    assert t.flip(0).tolist() == [3, 2, 1, 0]


@pytest.mark.claim("tensor.errors.index-put-dtype")
def test_index_put_dtype():
    t = torch.zeros(3)
    with pytest.raises(RuntimeError, match=lit("Index put requires the source and destination dtypes match, got "
                                               "Float for the destination and Double for the source.")):
        t[torch.tensor([0, 1])] = torch.tensor([1.0, 2.0], dtype=torch.float64)
    t[torch.tensor([0, 1])] = torch.tensor([1.0, 2.0], dtype=torch.float64).to(t.dtype)
    assert t.tolist() == [1.0, 2.0, 0.0]


@pytest.mark.claim("tensor.errors.index-put-shape")
def test_index_put_shape():
    t = torch.zeros(3)
    with pytest.raises(RuntimeError, match=lit("shape mismatch: value tensor of shape [3] cannot be broadcast to "
                                               "indexing result of shape [2]")):
        t[torch.tensor([0, 1])] = torch.ones(3)
    t[torch.tensor([0, 1])] = torch.ones(2)
    assert t.tolist() == [1.0, 1.0, 0.0]


@pytest.mark.claim("tensor.errors.index-select-vector")
def test_index_select_and_copy():
    t = torch.zeros(3)
    with pytest.raises(IndexError, match=r"^index_select\(\): Index is supposed to be a vector$"):
        t.index_select(0, torch.tensor([[0, 1]]))
    with pytest.raises(IndexError, match=lit("index_copy_(): Number of indices (1) should be equal to "
                                             "source.size(dim) (2)")):
        t.index_copy_(0, torch.tensor([0]), torch.ones(2))
    assert t.index_select(0, torch.tensor([[0, 1]]).flatten()).shape == (2,)
    assert t.index_copy_(0, torch.tensor([0, 2]), torch.ones(2)).tolist() == [1.0, 0.0, 1.0]


@pytest.mark.claim("tensor.errors.take-out-of-range")
def test_take_out_of_range():
    with pytest.raises(IndexError, match=lit("out of range: tried to access index 5 on a tensor of 3 elements.")):
        torch.arange(3).take(torch.tensor([5]))
    assert torch.arange(3).take(torch.tensor([2])).tolist() == [2]


@pytest.mark.claim("tensor.errors.gather-scatter-index")
def test_gather_scatter_index_checks():
    t = torch.zeros(2, 2)
    with pytest.raises(RuntimeError, match=r"^gather\(\): Expected dtype int32/int64 for index$"):
        t.gather(1, torch.tensor([[0.0], [1.0]]))
    with pytest.raises(RuntimeError, match=r"^Index tensor must have the same number of dimensions as input tensor$"):
        t.gather(1, torch.tensor([0, 1]))
    with pytest.raises(RuntimeError, match=r"^Index tensor must have the same number of dimensions as self tensor$"):
        t.scatter_(1, torch.tensor([0, 1]), 1.0)
    with pytest.raises(RuntimeError, match=lit("Size does not match at dimension 0 expected index [3, 1] to be no "
                                               "larger than self [2, 2] apart from dimension 1")):
        t.gather(1, torch.zeros(3, 1, dtype=torch.long))
    assert t.gather(1, torch.tensor([0, 1]).unsqueeze(1)).shape == (2, 1)
    assert t.scatter_(1, torch.tensor([[0], [1]]), 1.0).tolist() == [[1.0, 0.0], [0.0, 1.0]]


@pytest.mark.claim("tensor.errors.scatter-src-dtype")
def test_scatter_and_index_add_src_dtype():
    t = torch.zeros(3)
    with pytest.raises(RuntimeError, match=r"^scatter\(\): Expected self\.dtype to be equal to src\.dtype$"):
        t.scatter_(0, torch.tensor([0]), torch.ones(1, dtype=torch.float64))
    with pytest.raises(RuntimeError, match=lit("index_add_(): self (Float) and source (Double) must have the same "
                                               "scalar type")):
        t.index_add_(0, torch.tensor([0]), torch.ones(1, dtype=torch.float64))
    t.index_add_(0, torch.tensor([0]), torch.ones(1, dtype=torch.float64).to(t.dtype))
    assert t.tolist() == [1.0, 0.0, 0.0]


@pytest.mark.claim("tensor.errors.where-condition")
def test_where_condition_dtype():
    mask = torch.tensor([1, 0])
    with pytest.raises(RuntimeError, match=lit("where expected condition to be a boolean tensor, but got a tensor "
                                               "with dtype Long")):
        torch.where(mask, torch.ones(2), torch.zeros(2))
    assert torch.where(mask.bool(), torch.ones(2), torch.zeros(2)).tolist() == [1.0, 0.0]


# ---------------------------------------------------------------- shapes

@pytest.mark.claim("tensor.errors.expand-fewer-sizes")
def test_expand_fewer_sizes():
    t = torch.zeros(2, 3)
    with pytest.raises(RuntimeError, match=lit("expand(torch.FloatTensor{[2, 3]}, size=[3]): the number of sizes "
                                               "provided (1) must be greater or equal to the number of dimensions "
                                               "in the tensor (2)")):
        t.expand(3)
    with pytest.raises(RuntimeError, match=lit("The expanded size of the tensor (-1) isn't allowed in a leading, "
                                               "non-existing dimension 0")):
        torch.zeros(2).expand(-1, -1)
    assert t.expand(4, 2, 3).shape == (4, 2, 3) and torch.zeros(2).expand(5, -1).shape == (5, 2)


@pytest.mark.claim("tensor.errors.reshape-zero-elements")
def test_reshape_zero_elements():
    with pytest.raises(RuntimeError, match=lit("cannot reshape tensor of 0 elements into shape [-1, 0] because the "
                                               "unspecified dimension size -1 can be any value and is ambiguous")):
        torch.zeros(0).reshape(-1, 0)
    assert torch.zeros(0).reshape(3, 0).shape == (3, 0)


@pytest.mark.claim("tensor.errors.invalid-shape-dimension")
def test_invalid_shape_dimension():
    with pytest.raises(RuntimeError, match=lit("invalid shape dimension -2 at index 0 of shape [-2, 2]")):
        torch.zeros(4).view(-2, 2)
    assert torch.zeros(4).view(-1, 2).shape == (2, 2)


@pytest.mark.claim("tensor.errors.split-sizes")
def test_split_sizes():
    t = torch.arange(5)
    with pytest.raises(RuntimeError, match=lit("split_with_sizes expects split_sizes to sum exactly to 5 (input "
                                               "tensor's size at dimension 0), but got split_sizes=[2, 2]")):
        t.split([2, 2])
    with pytest.raises(RuntimeError, match=lit("chunk expects `chunks` to be greater than 0, got: 0")):
        t.chunk(0)
    assert [p.numel() for p in t.split([2, 3])] == [2, 3] and [p.numel() for p in t.split(2)] == [2, 2, 1]


@pytest.mark.claim("tensor.errors.narrow-range")
def test_narrow_range():
    with pytest.raises(RuntimeError, match=lit("start (3) + length (2) exceeds dimension size (4).")):
        torch.arange(4).narrow(0, 3, 2)
    assert torch.arange(4).narrow(0, 2, 2).tolist() == [2, 3]


@pytest.mark.claim("tensor.errors.flatten-unflatten")
def test_flatten_unflatten():
    t = torch.zeros(2, 3, 4)
    with pytest.raises(RuntimeError, match=r"^flatten\(\) has invalid args: start_dim cannot come after end_dim$"):
        t.flatten(2, 1)
    with pytest.raises(RuntimeError, match=lit("unflatten: Provided sizes [2, 2] don't multiply up to the size of "
                                               "dim 0 (6) in the input tensor")):
        torch.zeros(6).unflatten(0, (2, 2))
    assert t.flatten(1, 2).shape == (2, 12) and torch.zeros(6).unflatten(0, (2, 3)).shape == (2, 3)


@pytest.mark.claim("tensor.errors.duplicate-dims")
def test_duplicate_dims():
    t = torch.zeros(2, 3)
    with pytest.raises(RuntimeError, match=lit("permute(): duplicate dims are not allowed.")):
        t.permute(0, 0)
    with pytest.raises(RuntimeError, match=r"^dim 0 appears multiple times in the list of dims$"):
        t.sum(dim=(0, 0))
    with pytest.raises(RuntimeError, match=r"^dim 0 appears multiple times in the list of dims$"):
        t.flip(0, 0)
    assert t.permute(1, 0).shape == (3, 2) and t.sum(dim=(0, 1)).item() == 0.0


@pytest.mark.claim("tensor.errors.transpose-dims")
def test_t_and_mt_dims():
    with pytest.raises(RuntimeError, match=lit("t() expects a tensor with <= 2 dimensions, but self is 3D")):
        torch.zeros(2, 3, 4).t()
    with pytest.raises(RuntimeError, match=lit("tensor.mT is only supported on matrices or batches of matrices. "
                                               "Got 1-D tensor.")):
        torch.zeros(2).mT
    assert torch.zeros(2, 3, 4).mT.shape == (2, 4, 3) and torch.zeros(2, 3, 4).transpose(1, 2).shape == (2, 4, 3)


@pytest.mark.claim("tensor.errors.repeat-dims")
def test_repeat_dims():
    t = torch.zeros(2, 3)
    with pytest.raises(RuntimeError, match=lit("Number of dimensions of repeat dims can not be smaller than number "
                                               "of dimensions of tensor")):
        t.repeat(2)
    with pytest.raises(RuntimeError, match=lit("repeats must have the same size as input along dim, but got "
                                               "repeats.size(0) = 2 and input.size(0) = 6")):
        t.repeat_interleave(torch.tensor([1, 2]))
    assert t.repeat(2, 1).shape == (4, 3) and t.repeat_interleave(torch.tensor([1, 2]), dim=0).shape == (3, 3)


@pytest.mark.claim("tensor.errors.roll-dims")
def test_roll_dims():
    with pytest.raises(RuntimeError, match=lit("shifts and dimensions must align. shifts: 1, dims:2")):
        torch.zeros(2, 2).roll(1, dims=(0, 1))
    assert torch.arange(4).reshape(2, 2).roll((1, 1), dims=(0, 1)).tolist() == [[3, 2], [1, 0]]


@pytest.mark.claim("tensor.errors.einsum-sizes")
def test_einsum_sizes():
    with pytest.raises(RuntimeError, match=lit("einsum(): subscript j has size 4 for operand 1 which does not "
                                               "broadcast with previously seen size 3")):
        torch.einsum("ij,jk->ik", torch.zeros(2, 3), torch.zeros(4, 5))
    assert torch.einsum("ij,jk->ik", torch.zeros(2, 3), torch.zeros(3, 5)).shape == (2, 5)


@pytest.mark.claim("tensor.errors.matmul-0d")
def test_matmul_0d():
    with pytest.raises(RuntimeError, match=lit("both arguments to matmul need to be at least 1D, but they are 0D "
                                               "and 1D")):
        torch.matmul(torch.tensor(2.0), torch.ones(2))
    assert (torch.tensor(2.0) * torch.ones(2)).tolist() == [2.0, 2.0]


@pytest.mark.claim("tensor.errors.mv-outer-sizes")
def test_mv_and_outer():
    with pytest.raises(RuntimeError, match=lit("size mismatch, got input (2), mat (2x3), vec (2)")):
        torch.mv(torch.zeros(2, 3), torch.zeros(2))
    with pytest.raises(RuntimeError, match=lit("outer: Expected 1-D argument self, but got 2-D")):
        torch.outer(torch.zeros(2, 2), torch.zeros(2))
    assert torch.mv(torch.zeros(2, 3), torch.zeros(3)).shape == (2,)
    assert torch.outer(torch.zeros(2, 2).flatten(), torch.zeros(2)).shape == (4, 2)


@pytest.mark.claim("tensor.errors.matrix-rank")
def test_diag_trace_det_rank():
    with pytest.raises(RuntimeError, match=lit("diag(): Supports 1D or 2D tensors. Got 3D")):
        torch.diag(torch.zeros(2, 2, 2))
    with pytest.raises(RuntimeError, match=lit("trace: expected a matrix, but got tensor with dim 1")):
        torch.trace(torch.zeros(2))
    with pytest.raises(RuntimeError, match=lit("linalg.det: A must be batches of square matrices, but they are 2 by "
                                               "3 matrices")):
        torch.linalg.det(torch.zeros(2, 3))
    assert torch.diagonal(torch.zeros(2, 2, 2), dim1=-2, dim2=-1).shape == (2, 2)
    assert torch.linalg.det(torch.eye(2)).item() == 1.0


@pytest.mark.claim("tensor.errors.linalg-solve-shapes")
def test_linalg_solve_shapes():
    with pytest.raises(RuntimeError, match=lit("linalg.solve: Incompatible shapes of A and B for the equation "
                                               "AX = B (2x2 and 3x1)")):
        torch.linalg.solve(torch.eye(2), torch.ones(3))
    assert torch.linalg.solve(torch.eye(2), torch.ones(2)).tolist() == [1.0, 1.0]


@pytest.mark.claim("tensor.errors.linalg-singular")
def test_linalg_singular():
    with pytest.raises(torch.linalg.LinAlgError, match=lit("linalg.inv: The diagonal element 1 is zero, the "
                                                           "inversion could not be completed because the input "
                                                           "matrix is singular.")):
        torch.linalg.inv(torch.zeros(2, 2))
    with pytest.raises(torch.linalg.LinAlgError, match=lit("linalg.cholesky: The factorization could not be "
                                                           "completed because the input is not positive-definite "
                                                           "(the leading minor of order 1 is not positive-definite).")):
        torch.linalg.cholesky(-torch.eye(2))
    assert issubclass(torch.linalg.LinAlgError, RuntimeError)
    assert torch.linalg.pinv(torch.zeros(2, 2)).tolist() == [[0.0, 0.0], [0.0, 0.0]]


@pytest.mark.claim("tensor.errors.cross-length")
def test_cross_length():
    with pytest.raises(RuntimeError, match=lit("linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2")):
        torch.linalg.cross(torch.zeros(2), torch.zeros(2))
    assert torch.linalg.cross(torch.tensor([1.0, 0, 0]), torch.tensor([0.0, 1, 0])).tolist() == [0.0, 0.0, 1.0]


@pytest.mark.claim("tensor.errors.reduce-empty")
def test_reduce_empty_without_dim():
    with pytest.raises(RuntimeError, match=lit("max(): Expected reduction dim to be specified for input.numel() == "
                                               "0. Specify the reduction dim with the 'dim' argument.")):
        torch.zeros(0).max()
    with pytest.raises(IndexError, match=lit("argmax(): Expected reduction dim to be specified for input.numel() "
                                             "== 0.")):
        torch.zeros(0).argmax()
    assert torch.zeros(0, 3).max(dim=1).values.shape == (0,)


@pytest.mark.claim("tensor.errors.topk-range")
def test_topk_kthvalue_range():
    with pytest.raises(RuntimeError, match=r"^selected index k out of range$"):
        torch.zeros(3).topk(5)
    with pytest.raises(RuntimeError, match=lit("kthvalue(): selected number k out of range for dimension 0")):
        torch.zeros(3).kthvalue(5)
    t = torch.arange(3.0)
    assert t.topk(min(5, t.numel())).values.tolist() == [2.0, 1.0, 0.0]


# ---------------------------------------------------------------- strides and views

@pytest.mark.claim("tensor.errors.as-strided-bounds")
def test_as_strided_out_of_bounds():
    with pytest.raises(RuntimeError, match=lit("setStorage: sizes [4], strides [1], storage offset 0, and itemsize 4 "
                                               "requiring a storage size of 16 are out of bounds for storage of "
                                               "size 8")):
        torch.zeros(2).as_strided((4,), (1,))
    with pytest.raises(RuntimeError, match=lit("as_strided: Negative strides are not supported at the moment, got "
                                               "strides: [-1]")):
        torch.zeros(4).as_strided((2,), (-1,))
    assert torch.zeros(4).as_strided((2,), (2,)).shape == (2,)


@pytest.mark.claim("tensor.errors.channels-last-rank")
def test_channels_last_rank():
    with pytest.raises(RuntimeError, match=r"^required rank 4 tensor to use channels_last format$"):
        torch.zeros(2, 2, 2).to(memory_format=torch.channels_last)
    assert torch.zeros(1, 2, 2, 2).to(memory_format=torch.channels_last).is_contiguous(
        memory_format=torch.channels_last)
    assert torch.zeros(1, 2, 2, 2, 2).to(memory_format=torch.channels_last_3d).stride() == (16, 1, 8, 4, 2)


@pytest.mark.claim("tensor.errors.view-as-complex")
def test_view_as_complex_checks():
    with pytest.raises(RuntimeError, match=r"^Tensor must have a last dimension of size 2$"):
        torch.view_as_complex(torch.zeros(2, 3))
    with pytest.raises(RuntimeError, match=r"^Tensor must have a last dimension with stride 1$"):
        torch.view_as_complex(torch.zeros(2, 2).t())
    with pytest.raises(RuntimeError, match=r"^Tensor must have a stride divisible by 2 for all but last dimension$"):
        torch.view_as_complex(torch.zeros(3, 5)[:, :2])
    with pytest.raises(RuntimeError, match=lit("view_as_complex is only supported for half, float and double tensors, "
                                               "but got a tensor of scalar type: Long")):
        torch.view_as_complex(torch.zeros(2, 2, dtype=torch.long))
    c = torch.view_as_complex(torch.zeros(2, 2).t().contiguous())
    assert c.dtype == torch.complex64 and c.shape == (2,)
    assert torch.view_as_complex(torch.zeros(3, 5)[:, :2].contiguous()).shape == (3,)


@pytest.mark.claim("tensor.errors.view-as-real-conj")
def test_view_as_real_conjugate():
    z = torch.tensor([1 + 2j])
    with pytest.raises(RuntimeError, match=lit("view_as_real doesn't work on unresolved conjugated tensors.  To "
                                               "resolve the conjugate tensor so you can view it as real, use "
                                               "self.resolve_conj()")):
        torch.view_as_real(z.conj())
    assert torch.view_as_real(z.conj().resolve_conj()).tolist() == [[1.0, -2.0]]


@pytest.mark.claim("tensor.errors.view-dtype-size")
def test_view_dtype_element_size():
    with pytest.raises(RuntimeError, match=lit("self.size(-1) must be divisible by 2 to view Float as ComplexFloat "
                                               "(different element sizes), but got 3")):
        torch.zeros(3).view(torch.complex64)
    with pytest.raises(RuntimeError, match=lit("self.stride(-1) must be 1 to view Float as ComplexFloat (different "
                                               "element sizes), but got 2")):
        torch.zeros(4, 2).t().view(torch.complex64)
    with pytest.raises(RuntimeError, match=lit("self.storage_offset() must be divisible by 2 to view Float as "
                                               "ComplexFloat (different element sizes), but got 1")):
        torch.zeros(5)[1:].view(torch.complex64)
    assert torch.zeros(4).view(torch.complex64).shape == (2,)
    assert torch.zeros(5)[1:].clone().view(torch.complex64).shape == (2,)


# ---------------------------------------------------------------- dtypes, values and casting

@pytest.mark.claim("tensor.errors.value-overflow")
def test_value_overflow():
    with pytest.raises(RuntimeError, match=r"^value cannot be converted to type uint8_t without overflow$"):
        torch.full((1,), 300, dtype=torch.uint8)
    with pytest.raises(RuntimeError, match=r"^value cannot be converted to type uint8_t without overflow$"):
        torch.zeros(1, dtype=torch.uint8).fill_(300)
    with pytest.raises(ValueError, match=r"^Overflow when unpacking long long$"):
        torch.tensor([2 ** 64])
    assert torch.full((1,), 300, dtype=torch.int16).item() == 300
    assert torch.tensor([300]).to(torch.uint8).item() == 44  # a tensor cast wraps around instead


@pytest.mark.claim("tensor.errors.complex-to-python-float")
def test_complex_to_python_float():
    with pytest.raises(RuntimeError, match=r"^value cannot be converted to type double without overflow$"):
        float(torch.tensor([1 + 1j]))
    assert complex(torch.tensor([1 + 1j])) == 1 + 1j and float(torch.tensor([1 + 1j]).real) == 1.0


@pytest.mark.claim("tensor.errors.complex-cast-warning")
def test_complex_cast_warning():
    with pytest.warns(UserWarning, match=r"^Casting complex values to real discards the imaginary part"):
        real = torch.tensor([1 + 2j]).to(torch.float32)
    assert real.tolist() == [1.0]
    assert no_warning(lambda: torch.tensor([1 + 2j]).real.to(torch.float32)).tolist() == [1.0]


@pytest.mark.claim("tensor.errors.integer-zero-division")
def test_integer_zero_division():
    with pytest.raises(RuntimeError, match=r"^ZeroDivisionError$"):
        torch.tensor([1]) // 0
    with pytest.raises(RuntimeError, match=r"^ZeroDivisionError$"):
        torch.tensor([1]) % torch.tensor([0])
    assert torch.isinf(torch.tensor([1.0]) / 0).all() and (torch.tensor([1]) / 0).isinf().all()


@pytest.mark.claim("tensor.errors.integer-negative-power")
def test_integer_negative_power():
    with pytest.raises(RuntimeError, match=r"^Integers to negative integer powers are not allowed\.$"):
        torch.tensor([2]) ** -1
    assert (torch.tensor([2]).float() ** -1).tolist() == [0.5]


@pytest.mark.claim("tensor.errors.div-rounding-mode")
def test_div_rounding_mode():
    with pytest.raises(RuntimeError, match=lit("div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                                               "found 'round'")):
        torch.div(torch.tensor([7.0]), 2, rounding_mode="round")
    assert torch.div(torch.tensor([-7.0]), 2, rounding_mode="floor").item() == -4.0
    assert torch.div(torch.tensor([-7.0]), 2, rounding_mode="trunc").item() == -3.0


@pytest.mark.claim("tensor.errors.addcdiv-integer")
def test_addcdiv_integer():
    ints = torch.tensor([3])
    with pytest.raises(RuntimeError, match=r"^Integer division with addcdiv is no longer supported"):
        torch.addcdiv(ints, ints, ints)
    assert torch.addcdiv(ints.float(), ints.float(), torch.tensor([2.0])).item() == 4.5


@pytest.mark.claim("tensor.errors.not-implemented-dtype")
def test_kernel_not_implemented_for_dtype():
    cases = [(lambda: torch.lerp(torch.zeros(2, dtype=torch.long), torch.ones(2, dtype=torch.long), 0.5),
              "\"lerp_kernel_scalar\" not implemented for 'Long'"),
             (lambda: torch.tensor([1.0]) << 1, "\"lshift_cpu\" not implemented for 'Float'"),
             (lambda: torch.tensor([1j]) > torch.tensor([1j]), "\"gt_cpu\" not implemented for 'ComplexFloat'"),
             (lambda: torch.softmax(torch.tensor([1, 2]), 0), "\"softmax_lastdim_kernel_impl\" not implemented for "
                                                               "'Long'"),
             (lambda: torch.histc(torch.tensor([1])), "\"histogram_cpu\" not implemented for 'Long'")]
    for call, message in cases:
        with pytest.raises(NotImplementedError, match="^" + lit(message) + "$"):
            call()
    assert torch.lerp(torch.zeros(2), torch.ones(2), 0.5).tolist() == [0.5, 0.5]
    assert torch.softmax(torch.tensor([1, 2]).float(), 0).sum().item() == pytest.approx(1.0)
    assert (torch.tensor([1j]).abs() > torch.tensor([1j]).abs()).tolist() == [False]


@pytest.mark.claim("tensor.errors.float-only-reductions")
def test_float_only_reductions():
    ints = torch.tensor([1, 2])
    with pytest.raises(RuntimeError, match=r"^std and var only support floating point and complex dtypes$"):
        ints.std()
    with pytest.raises(RuntimeError, match=lit("linalg.vector_norm: Expected a floating point or complex tensor as "
                                               "input. Got Long")):
        torch.linalg.norm(ints)
    assert ints.float().std().item() == pytest.approx(0.7071, abs=1e-4)
    assert torch.linalg.norm(ints.float()).item() == pytest.approx(5 ** 0.5)


@pytest.mark.claim("tensor.errors.bincount-input")
def test_bincount_input():
    with pytest.raises(RuntimeError, match=lit("bincount only supports 1-d non-negative integral inputs.")):
        torch.bincount(torch.tensor([-1, 2]))
    with pytest.raises(NotImplementedError, match=lit("\"bincount_cpu\" not implemented for 'Float'")):
        torch.bincount(torch.tensor([1.0]))
    assert torch.bincount(torch.tensor([0, 2, 2])).tolist() == [1, 0, 2]


@pytest.mark.claim("tensor.errors.var-dof-warning")
def test_var_degrees_of_freedom():
    with pytest.warns(UserWarning, match=lit("var(): degrees of freedom is <= 0. Correction should be strictly less "
                                             "than the reduction factor (input numel divided by output numel).")):
        v = torch.ones(1).var()
    assert v.isnan().item()
    assert no_warning(lambda: torch.ones(1).var(correction=0)).item() == 0.0


# ---------------------------------------------------------------- creating tensors

@pytest.mark.claim("tensor.errors.infer-dtype")
def test_could_not_infer_dtype():
    with pytest.raises(RuntimeError, match=r"^Could not infer dtype of NoneType$"):
        torch.tensor([1.0, None])
    with pytest.raises(RuntimeError, match=r"^Could not infer dtype of dict$"):
        torch.tensor({"a": 1})
    assert torch.tensor([1.0, float("nan")]).isnan().tolist() == [False, True]
    assert torch.tensor(list({"a": 1}.values())).tolist() == [1]


@pytest.mark.claim("tensor.errors.string-data")
def test_string_data():
    with pytest.raises(TypeError, match=r"^new\(\): invalid data type 'str'$"):
        torch.tensor([1, "2"])
    with pytest.raises(ValueError, match=r"^too many dimensions 'str'$"):
        torch.tensor(["1", "2"])
    assert torch.tensor([int(s) for s in ["1", "2"]]).tolist() == [1, 2]


@pytest.mark.claim("tensor.errors.list-of-tensors")
def test_tensor_from_list_of_tensors():
    parts = [torch.ones(2), torch.zeros(2)]
    with pytest.raises(ValueError, match=r"^only one element tensors can be converted to Python scalars$"):
        torch.tensor(parts)
    assert torch.stack(parts).shape == (2, 2)


def float_size(message):
    with pytest.raises(TypeError, match="^" + lit(message) + "$"):
        torch.zeros(10 / 2)
    assert torch.zeros(10 // 2).shape == (5,)  # the fix: an int size


@pytest.mark.claim("tensor.errors.float-size-element")
@pytest.mark.torch_version("<2.10")
def test_float_size_until_2_9():
    float_size("zeros(): argument 'size' (position 1) must be tuple of ints, but found element of type float at pos 0")


@pytest.mark.claim("tensor.errors.float-size")
@pytest.mark.torch_version(">=2.10")
def test_float_size_since_2_10():
    float_size("zeros(): argument 'size' (position 1) must be tuple of ints, not float")


@pytest.mark.claim("tensor.errors.size-argument")
def test_size_arguments():
    with pytest.raises(TypeError, match=lit("randn(): argument 'size' failed to unpack the object at pos 2 with "
                                            "error \"type must be tuple of ints,but got float\"")):
        torch.randn(2, 6 / 2)
    with pytest.raises(RuntimeError, match=r"^zeros: Dimension size must be non-negative\.$"):
        torch.zeros(-1)
    with pytest.raises(RuntimeError, match=lit("Storage size calculation overflowed with sizes=[4611686018427387904, "
                                               "4]")):
        torch.empty(2 ** 62, 4)
    assert torch.zeros(10 // 2).shape == (5,) and torch.randn(2, int(6 / 2)).shape == (2, 3)


@pytest.mark.claim("tensor.errors.dtype-argument")
@pytest.mark.torch_version(">=2.13")
def test_dtype_argument():
    with pytest.raises(TypeError, match=r"^zeros\(\): argument 'dtype' must be torch\.dtype, not type$"):
        torch.zeros(2, dtype=np.float32)
    with pytest.raises(ValueError, match=r"^invalid type: 'torch\.Foo'$"):
        torch.zeros(2).type("torch.Foo")
    assert torch.zeros(2, dtype=torch.float32).dtype == torch.float32
    assert torch.zeros(2).type("torch.DoubleTensor").dtype == torch.float64


@pytest.mark.claim("tensor.errors.range-arguments")
def test_range_arguments():
    with pytest.raises(RuntimeError, match=r"^upper bound and lower bound inconsistent with step sign$"):
        torch.arange(0, 10, -1)
    with pytest.raises(RuntimeError, match=r"^step must be nonzero$"):
        torch.arange(0, 1, 0)
    with pytest.raises(RuntimeError, match=r"^number of steps must be non-negative$"):
        torch.linspace(0, 1, -1)
    assert torch.arange(10, 0, -3).tolist() == [10, 7, 4, 1] and torch.linspace(0, 1, 3).tolist() == [0.0, 0.5, 1.0]


@pytest.mark.claim("tensor.errors.random-arguments")
def test_random_arguments():
    with pytest.raises(RuntimeError, match=lit("random_ expects 'from' to be less than 'to', but got from=5 >= to=2")):
        torch.randint(5, 2, (3,))
    with pytest.raises(RuntimeError, match=lit("normal expects all elements of std >= 0.0")):
        torch.normal(torch.zeros(2), -torch.ones(2))
    assert torch.randint(2, 5, (100,)).min().item() >= 2
    assert torch.normal(torch.zeros(2), torch.ones(2)).shape == (2,)


@pytest.mark.claim("tensor.errors.multinomial")
def test_multinomial_checks():
    with pytest.raises(RuntimeError, match=lit("invalid multinomial distribution (sum of probabilities <= 0)")):
        torch.multinomial(torch.tensor([0.0, 0.0]), 1)
    with pytest.raises(RuntimeError, match=lit("probability tensor contains either `inf`, `nan` or element < 0")):
        torch.multinomial(torch.tensor([-1.0, 1.0]), 1)
    with pytest.raises(RuntimeError, match=lit("cannot sample n_sample > prob_dist.size(-1) samples without "
                                               "replacement")):
        torch.multinomial(torch.tensor([1.0, 1.0]), 3)
    assert torch.multinomial(torch.tensor([1.0, 1.0]), 3, replacement=True).shape == (3,)
    assert torch.multinomial(torch.tensor([0.0, 2.0]), 1).item() == 1


@pytest.mark.claim("tensor.errors.clamp-bounds")
def test_clamp_without_bounds():
    with pytest.raises(RuntimeError, match=lit("torch.clamp: At least one of 'min' or 'max' must not be None")):
        torch.zeros(2).clamp()
    assert torch.tensor([-1.0, 2.0]).clamp(min=0).tolist() == [0.0, 2.0]


# ---------------------------------------------------------------- devices

@pytest.mark.claim("tensor.errors.device-string")
def test_device_string():
    message = r"^Expected one of cpu, cuda, .* device type at start of device string: gpu$"
    with pytest.raises(RuntimeError, match=message):
        torch.device("gpu")
    with pytest.raises(RuntimeError, match=message):
        torch.zeros(2).to("gpu")
    assert torch.device("cuda:0").index == 0 and torch.device("cpu").type == "cpu"


@pytest.mark.claim("tensor.errors.cuda-not-compiled")
@pytest.mark.skipif(torch.backends.cuda.is_built(), reason="the message is the one of a build without CUDA")
def test_cuda_not_compiled():
    with pytest.raises(AssertionError, match=r"^Torch not compiled with CUDA enabled$"):
        torch.zeros(2).cuda()
    with pytest.raises(AssertionError, match=r"^Torch not compiled with CUDA enabled$"):
        torch.zeros(2, device="cuda")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    assert torch.zeros(2, device=device).device.type == "cpu"


@pytest.mark.claim("tensor.errors.pin-memory-no-accelerator")
@pytest.mark.skipif(torch.accelerator.is_available(), reason="the message is the one of a machine without accelerator")
def test_pin_memory_no_accelerator():
    with pytest.raises(RuntimeError, match=r"^Cannot access accelerator device when none is available\.$"):
        torch.zeros(2).pin_memory()
    t = torch.zeros(2)
    assert (t.pin_memory() if torch.accelerator.is_available() else t).is_pinned() is False


@pytest.mark.claim("tensor.errors.cat-device")
def test_cat_device():
    with pytest.raises(RuntimeError, match=r"^Tensor on device meta is not on the expected device cpu!$"):
        torch.cat([torch.zeros(2), torch.zeros(2, device="meta")])
    meta = torch.zeros(2, device="meta")
    assert torch.cat([torch.zeros(2), torch.zeros_like(meta, device="cpu")]).shape == (4,)


@pytest.mark.claim("tensor.errors.out-requires-grad")
def test_out_with_requires_grad():
    w = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=lit("add(): functions with out=... arguments don't support automatic "
                                               "differentiation, but one of the arguments requires grad.")):
        torch.add(w, 1, out=torch.empty(2))
    with torch.no_grad():
        out = torch.add(w, 1, out=torch.empty(2))
    assert out.tolist() == [2.0, 2.0] and torch.add(w, 1).requires_grad


@pytest.mark.claim("tensor.errors.contains-type")
def test_contains_type():
    with pytest.raises(RuntimeError, match=lit("Tensor.__contains__ only supports Tensor or scalar, but you passed in "
                                               "a <class 'str'>.")):
        _ = "a" in torch.zeros(2)
    assert 0.0 in torch.zeros(2) and torch.tensor([1.0]) in torch.tensor([0.0, 1.0])


# ---------------------------------------------------------------- deprecation warnings

@pytest.mark.claim("tensor.errors.t-attribute-warning")
def test_dot_t_on_3d():
    x = torch.zeros(2, 3, 4)
    with pytest.warns(UserWarning, match=lit("The use of `x.T` on tensors of dimension other than 2 to reverse their "
                                             "shape is deprecated and it will throw an error in a future release. "
                                             "Consider `x.mT` to transpose batches of matrices")):
        assert x.T.shape == (4, 3, 2)
    assert no_warning(lambda: x.mT).shape == (2, 4, 3)
    assert no_warning(lambda: x.permute(2, 1, 0)).shape == (4, 3, 2)


@pytest.mark.claim("tensor.errors.meshgrid-indexing")
def test_meshgrid_indexing_warning():
    with pytest.warns(UserWarning, match=lit("torch.meshgrid: in an upcoming release, it will be required to pass "
                                             "the indexing argument.")):
        a, b = torch.meshgrid(torch.zeros(2), torch.zeros(3))
    assert a.shape == (2, 3)
    x, y = no_warning(lambda: torch.meshgrid(torch.zeros(2), torch.zeros(3), indexing="xy"))
    assert x.shape == (3, 2)  # "xy" is NumPy's default order, "ij" the old torch default


@pytest.mark.claim("tensor.errors.resize-range-deprecated")
def test_resize_and_range_deprecated():
    with pytest.warns(UserWarning, match=r"^non-inplace resize is deprecated$"):
        torch.zeros(4).resize(2, 2)
    with pytest.warns(UserWarning, match=lit("torch.range is deprecated and will be removed in a future release "
                                             "because its behavior is inconsistent with Python's range builtin. "
                                             "Instead, use torch.arange, which produces values in [start, end).")):
        assert torch.range(0, 3).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert no_warning(lambda: torch.zeros(4).reshape(2, 2)).shape == (2, 2)
    assert no_warning(lambda: torch.arange(0, 4)).tolist() == [0, 1, 2, 3]


# ---------------------------------------------------------------- NumPy interop

@pytest.mark.claim("tensor.errors.scalar-requires-grad-warning")
def test_scalar_of_requires_grad_warning():
    w = torch.ones(1, requires_grad=True)
    with pytest.warns(UserWarning, match=lit("Converting a tensor with requires_grad=True to a scalar may lead to "
                                             "unexpected behavior.\nConsider using tensor.detach() first.")):
        assert float(w) == 1.0
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        float(w)
    assert again == []  # a TORCH_WARN_ONCE: once per process
    assert no_warning(lambda: float(w.detach())) == 1.0 and no_warning(w.item) == 1.0


@pytest.mark.claim("tensor.errors.numpy-unsupported-dtype")
def test_numpy_unsupported_dtypes():
    for array, name in ((np.array(["a"]), "numpy.str_"), (np.zeros(2, dtype=np.longdouble), "numpy.longdouble")):
        with pytest.raises(TypeError, match=lit(f"can't convert np.ndarray of type {name}. The only supported types "
                                                "are: float64, float32, float16, complex64, complex128, int64, "
                                                "int32, int16, int8, uint64, uint32, uint16, uint8, and bool.")):
            torch.from_numpy(array)
    assert torch.from_numpy(np.zeros(2, dtype=np.longdouble).astype(np.float64)).dtype == torch.float64


@pytest.mark.claim("tensor.errors.uint64-arithmetic")
def test_uint64_arithmetic():
    big = torch.from_numpy(np.array([1, 2], dtype=np.uint64))
    with pytest.raises(NotImplementedError, match=lit("\"add_stub\" not implemented for 'UInt64'")):
        big + 1
    assert (big.to(torch.int64) + 1).tolist() == [2, 3]


@pytest.mark.claim("tensor.errors.numpy-method-names")
def test_numpy_method_names():
    with pytest.raises(AttributeError, match=r"^'Tensor' object has no attribute 'astype'$"):
        torch.ones(2).astype(np.float32)
    assert torch.ones(2).to(torch.float16).dtype == torch.float16 and torch.ones(2).numpy().astype(np.float16).dtype == np.float16
