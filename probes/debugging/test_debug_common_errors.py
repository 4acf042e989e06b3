"""Probes for docs/debugging/common-errors.md.

Each probe triggers one error (or warning) and checks the stable part of its message with
`pytest.raises(..., match=...)` / `pytest.warns(..., match=...)`; the site's error index is
built from these checks. The probes without a `device` argument run once, on the CPU.
"""
import io
import json
import pickle
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from verified.probing import shared
from verified.sources import raise_sites


def lit(text):
    """A regex matching `text` literally."""
    return re.escape(text)


def leaves_behind(node):
    """The leaf tensors whose AccumulateGrad nodes are reachable from a graph node."""
    seen, stack, leaves = set(), [node], []
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        if hasattr(n, "variable"):
            leaves.append(n.variable)
        stack.extend(next_node for next_node, _ in n.next_functions)
    return leaves


def raised_in(info, function):
    """Whether a Python function of that name is on the traceback of the caught exception."""
    return any(entry.name == function for entry in info.traceback)


# Where the C++ checks are. Each case runs in one child process with TORCH_SHOW_CPP_STACKTRACES=1,
# whose messages then end with "Exception raised from <function> at <path>:<line>".
# claim -> [(code, C++ function, repository path), ...]
ORIGINS = {
    "debug.error.requires-grad-integer": [
        ("torch.tensor([1, 2], requires_grad=True)", "set_requires_grad", "torch/csrc/autograd/variable.h"),
    ],
    "debug.error.inference-requires-grad": [
        ("with torch.inference_mode():\n    x = torch.ones(2)\nx.requires_grad_()",
         "set_requires_grad", "c10/core/TensorImpl.cpp"),
    ],
    "debug.error.grad-assign-mismatch": [
        ("a = torch.ones(2, requires_grad=True)\na.grad = torch.ones(3)",
         "THPVariable_set_grad", "torch/csrc/autograd/python_variable.cpp"),
    ],
    "debug.error.resize-requires-grad": [
        ("torch.ones(2, requires_grad=True).resize_(3)", "resize_", "torch/csrc/autograd/VariableTypeManual.cpp"),
    ],
    "debug.error.retain-grad-no-grad": [
        ("torch.ones(2).retain_grad()", "retain_grad", "torch/csrc/autograd/variable.cpp"),
    ],
    "debug.error.grad-input-no-grad": [
        ("torch.autograd.grad((torch.ones(2, requires_grad=True) * 2).sum(), [torch.ones(2)])",
         "THPEngine_run_backward", "torch/csrc/autograd/python_engine.cpp"),
    ],
    "debug.error.multi-output-view-inplace": [
        ("torch.ones(2, 3, requires_grad=True).clone().unbind(0)[0].mul_(2)",
         "handle_view_on_rebase", "torch/csrc/autograd/variable.cpp"),
    ],
    "debug.error.detach-view-inplace": [
        ("torch.ones(4, requires_grad=True).clone()[:2].detach_()", "detach_",
         "torch/csrc/autograd/VariableTypeManual.cpp"),
    ],
    "debug.error.mm-shapes": [
        ("torch.randn(2, 3) @ torch.randn(4, 5)", "meta", "aten/src/ATen/native/LinearAlgebra.cpp"),
    ],
    "debug.error.linear-shapes-transposed": [
        ("nn.Linear(3, 4)(torch.zeros(2, 5))", "meta", "aten/src/ATen/native/LinearAlgebra.cpp"),
    ],
    "debug.error.shape-invalid": [
        ("torch.zeros(12).view(3, 5)", "infer_size_impl", "aten/src/ATen/InferSize.h"),
    ],
    "debug.error.infer-one-dim": [
        ("torch.zeros(12).view(-1, -1)", "infer_size_impl", "aten/src/ATen/InferSize.h"),
    ],
    "debug.error.cat-sizes": [
        ("torch.cat([torch.zeros(2, 3), torch.zeros(3, 4)], dim=1)", "check_cat_shape_except_dim",
         "aten/src/ATen/native/TensorShape.h"),
    ],
    "debug.error.cat-ndim": [
        ("torch.cat([torch.zeros(2, 3), torch.zeros(3)])", "check_cat_shape_except_dim",
         "aten/src/ATen/native/TensorShape.h"),
    ],
    "debug.error.empty-list": [
        ("torch.cat([])", "meta", "aten/src/ATen/native/TensorShape.cpp"),
        ("torch.stack([])", "stack", "aten/src/ATen/native/TensorShape.cpp"),
    ],
    "debug.error.stack-sizes": [
        ("torch.stack([torch.zeros(2), torch.zeros(3)])", "check_stack_inputs",
         "aten/src/ATen/native/TensorShape.cpp"),
    ],
    "debug.error.expand-size": [
        ("torch.zeros(2, 3).expand(2, 4)", "inferExpandGeometryImpl", "aten/src/ATen/ExpandUtils.cpp"),
    ],
    "debug.error.slice-assign-expands": [
        ("t = torch.zeros(3)\nt[:] = torch.ones(4)", "inferExpandGeometryImpl", "aten/src/ATen/ExpandUtils.cpp"),
    ],
    "debug.error.dim-out-of-range": [
        ("torch.zeros(2, 3).sum(2)", "maybe_wrap_dims_n", "aten/src/ATen/WrapDimUtils.h"),
        ("torch.zeros(2, 3).transpose(0, 2)", "maybe_wrap_dim_slow", "c10/core/WrapDimMinimal.cpp"),
    ],
    "debug.error.permute-length": [
        ("torch.zeros(2, 3).permute(0)", "_permute_size_stride_estimation", "aten/src/ATen/native/TensorShape.cpp"),
    ],
    "debug.error.bmm-shapes": [
        ("torch.bmm(torch.zeros(2, 3, 4), torch.zeros(2, 5, 6))", "common_checks_baddbmm_bmm",
         "aten/src/ATen/native/LinearAlgebra.cpp"),
        ("torch.bmm(torch.zeros(3, 4), torch.zeros(4, 6))", "common_checks_baddbmm_bmm", "aten/src/ATen/native/LinearAlgebra.cpp"),
    ],
    "debug.error.dot-sizes": [
        ("torch.dot(torch.zeros(3), torch.zeros(4))", "dot_check", "aten/src/ATen/native/Blas.cpp"),
        ("torch.zeros(3) @ torch.zeros(4)", "dot_check", "aten/src/ATen/native/Blas.cpp"),
    ],
    "debug.error.inplace-broadcast": [
        ("torch.zeros(3).add_(torch.ones(2, 3))", "mark_resize_outputs", "aten/src/ATen/TensorIterator.cpp"),
    ],
    "debug.error.mm-dtype": [
        ("torch.mm(torch.randn(2, 3), torch.randn(3, 4, dtype=torch.float64))", "addmm_impl_cpu_",
         "aten/src/ATen/native/LinearAlgebra.cpp"),
        ("torch.randn(2, 2, 3) @ torch.randn(3, 4, dtype=torch.float64)", "addmm_impl_cpu_",
         "aten/src/ATen/native/LinearAlgebra.cpp"),
    ],
    "debug.error.addmm-dtype": [
        ("nn.Linear(3, 4)(torch.randn(2, 3, dtype=torch.float64))", "meta", "aten/src/ATen/native/LinearAlgebra.cpp"),
    ],
    "debug.error.scalar-type-mismatch": [
        ("torch.bmm(torch.zeros(2, 2, 3), torch.zeros(2, 3, 4, dtype=torch.float64))", "check_type",
         "build/aten/src/ATen/core/TensorMethods.cpp"),
        ("F.conv2d(torch.zeros(1, 3, 5, 5), torch.zeros(2, 3, 3, 3, dtype=torch.float64))", "check_type", "build/aten/src/ATen/core/TensorMethods.cpp"),
    ],
    "debug.error.conv-bias-dtype": [
        ("nn.Conv2d(3, 8, 3)(torch.randn(1, 3, 8, 8, dtype=torch.float64))", "conv2d_symint",
         "aten/src/ATen/native/Convolution.cpp"),
    ],
    "debug.error.inplace-cast": [
        ("torch.arange(3).add_(1.5)", "compute_types", "aten/src/ATen/TensorIterator.cpp"),
    ],
    "debug.error.found-dtype": [
        ("F.binary_cross_entropy(torch.full((3,), 0.5), torch.tensor([0, 1, 1]))", "compute_types",
         "aten/src/ATen/TensorIterator.cpp"),
    ],
    "debug.error.nll-target-dtype": [
        ("F.cross_entropy(torch.randn(4, 3), torch.tensor([0.0, 1, 2, 1]))", "meta", "aten/src/ATen/native/LossNLL.cpp"),
    ],
    "debug.error.class-probabilities-target": [
        ("F.cross_entropy(torch.randn(4), torch.tensor([0, 1, 2, 3]))", "cross_entropy_loss_symint",
         "aten/src/ATen/native/LossNLL.cpp"),
    ],
    "debug.error.mean-integer": [
        ("torch.arange(3).mean()", "meta", "aten/src/ATen/native/ReduceOps.cpp"),
    ],
    "debug.error.bool-minus": [
        ("torch.tensor([True]) - torch.tensor([True])", "sub_check", "aten/src/ATen/native/BinaryOps.h"),
        ("1 - torch.tensor([True])", "sub_check", "aten/src/ATen/native/BinaryOps.h"),
    ],
    "debug.error.bool-neg": [
        ("-torch.tensor([True])", "meta", "aten/src/ATen/native/UnaryOps.cpp"),
    ],
    "debug.error.embedding-index-dtype": [
        ("nn.Embedding(3, 2)(torch.tensor([1.0]))", "checkScalarTypes", "aten/src/ATen/TensorUtils.cpp"),
    ],
    "debug.error.index-tensor-dtype": [
        ("torch.zeros(3)[torch.tensor([0.0])]", "checkIndexTensorTypes", "aten/src/ATen/native/IndexingUtils.h"),
    ],
    "debug.error.masked-fill-bool": [
        ("torch.zeros(3).masked_fill(torch.tensor([1, 0, 1]), 1.0)", "masked_fill_impl_cpu",
         "aten/src/ATen/native/TensorAdvancedIndexing.cpp"),
    ],
    "debug.error.index-out-of-bounds": [
        ("torch.arange(3)[5]", "applySelect", "aten/src/ATen/TensorIndexing.h"),
        ("torch.arange(3)[torch.tensor([5])]", "get", "aten/src/ATen/native/cpu/IndexKernelUtils.h"),
    ],
    "debug.error.embedding-out-of-range": [
        ("nn.Embedding(3, 2)(torch.tensor([3]))", "operator()", "aten/src/ATen/native/TensorAdvancedIndexing.cpp"),
        ("torch.zeros(3, 2).index_select(0, torch.tensor([5]))", "operator()", "aten/src/ATen/native/TensorAdvancedIndexing.cpp"),
    ],
    "debug.error.scatter-out-of-bounds": [
        ("torch.zeros(3).scatter_(0, torch.tensor([5]), 1.0)", "operator()",
         "aten/src/ATen/native/cpu/ScatterGatherKernel.cpp"),
        ("torch.zeros(3).gather(0, torch.tensor([5]))", "operator()", "aten/src/ATen/native/cpu/ScatterGatherKernel.cpp"),
    ],
    "debug.error.too-many-indices": [
        ("torch.zeros(3)[0, 0]", "applySlicing", "torch/csrc/autograd/python_variable_indexing.cpp"),
    ],
    "debug.error.mask-shape": [
        ("torch.zeros(3)[torch.tensor([True, False])]", "invalid_mask", "aten/src/ATen/native/IndexingUtils.h"),
    ],
    "debug.error.item-not-one-element": [
        ("torch.randn(3).item()", "item", "aten/src/ATen/native/Scalar.cpp"),
    ],
    "debug.error.python-scalar-not-one-element": [
        ("float(torch.randn(3))", "dispatch_to", "torch/csrc/autograd/generated/python_variable_methods.cpp"),
        ("torch.tensor([torch.ones(2), torch.ones(2)])", "dispatch_to",
         "torch/csrc/autograd/generated/python_variable_methods.cpp"),
    ],
    "debug.error.bool-ambiguous": [
        ("bool(torch.ones(2))", "is_nonzero", "aten/src/ATen/native/prim_native_functions.cpp"),
        ("torch.ones(2) and torch.ones(2)", "is_nonzero", "aten/src/ATen/native/prim_native_functions.cpp"),
    ],
    "debug.error.ragged-nested-list": [
        ("torch.tensor([[1, 2], [3]])", "recursive_store", "torch/csrc/utils/tensor_new.cpp"),
    ],
    "debug.error.conv-channels": [
        ("nn.Conv2d(3, 8, 3)(torch.randn(1, 4, 8, 8))", "check_shape_forward", "aten/src/ATen/native/Convolution.cpp"),
    ],
    "debug.error.conv-input-dim": [
        ("nn.Conv2d(3, 8, 3)(torch.randn(8, 8))", "batchify", "aten/src/ATen/native/Convolution.cpp"),
    ],
    "debug.error.conv-kernel-too-large": [
        ("nn.Conv2d(3, 8, 5)(torch.randn(1, 3, 3, 3))", "check_shape_forward", "aten/src/ATen/native/Convolution.cpp"),
    ],
    "debug.error.batchnorm-features": [
        ("nn.BatchNorm1d(3)(torch.zeros(2, 4))", "check_dims_match_num_input_features",
         "aten/src/ATen/native/Normalization.cpp"),
    ],
    "debug.error.layer-norm-shape": [
        ("nn.LayerNorm(4)(torch.zeros(2, 3))", "_check_layer_norm_inputs", "aten/src/ATen/native/layer_norm.h"),
    ],
    "debug.error.pool-output-too-small": [
        ("nn.MaxPool2d(4)(torch.zeros(1, 1, 2, 2))", "pool2d_shape_check", "aten/src/ATen/native/Pool.h"),
    ],
    "debug.error.loss-batch-size": [
        ("F.cross_entropy(torch.randn(4, 3), torch.tensor([0, 1, 2]))", "nll_loss_nd_symint",
         "aten/src/ATen/native/LossNLL.cpp"),
        ("F.nll_loss(torch.randn(4, 3), torch.tensor([0, 1, 2]))", "nll_loss_nd_symint", "aten/src/ATen/native/LossNLL.cpp"),
    ],
    "debug.error.loss-target-out-of-bounds": [
        ("F.cross_entropy(torch.randn(2, 3), torch.tensor([0, 5]))", "nll_loss_out_frame",
         "aten/src/ATen/native/LossNLL.cpp"),
    ],
    "debug.error.bce-input-range": [
        ("F.binary_cross_entropy(torch.tensor([1.5]), torch.tensor([1.0]))", "operator()", "aten/src/ATen/native/Loss.cpp"),
    ],
    "debug.error.load-corrupted-zip": [
        ("b = io.BytesIO()\ntorch.save(torch.ones(3), b)\ntorch.load(io.BytesIO(b.getvalue()[:700]))",
         "valid", "caffe2/serialize/inline_container.cc"),
    ],
    "debug.error.save-missing-directory": [
        ("torch.save(torch.ones(1), '/nonexistent-directory-of-a-probe/x.pt')", "setup",
         "caffe2/serialize/inline_container.cc"),
    ],
    "debug.error.partial-overlap": [
        ("x = torch.arange(6.0)\nx[1:].copy_(x[:-1])", "assert_no_partial_overlap", "aten/src/ATen/MemoryOverlap.cpp"),
    ],
}

# ----------------------------------------------------------------------------- where messages come from


@pytest.mark.claim("debug.error.check-macros")
def test_check_macros_choose_the_python_exception_type():
    include = Path(torch.__file__).parent / "include"
    exception_h = (include / "c10" / "util" / "Exception.h").read_text()
    for macro, error in (("INDEX", "IndexError"), ("VALUE", "ValueError"), ("TYPE", "TypeError"),
                         ("NOT_IMPLEMENTED", "NotImplementedError")):
        assert re.search(rf"#define TORCH_CHECK_{macro}\(cond, \.\.\.\) \\\s*TORCH_CHECK_WITH_MSG\({error}, cond",
                         exception_h), macro
    translate = (include / "torch" / "csrc" / "Exceptions.h").read_text()
    for error in ("IndexError", "ValueError", "TypeError", "NotImplementedError"):
        assert re.search(rf"_CATCH_GENERIC_ERROR\([\s\\]*{error},[\s\\]*PyExc_{error},[\s\\]*retstmnt\)", translate), error
    assert re.search(r"_CATCH_GENERIC_ERROR\(Error, PyExc_RuntimeError, retstmnt\)", translate)
    # the same C++ layer, four Python types
    for call, kind in ((lambda: torch.zeros(2, 3).sum(2), IndexError),
                       (lambda: F.nll_loss(torch.randn(4, 3), torch.tensor([0, 1, 2])), ValueError),
                       (lambda: torch.zeros(2) & torch.zeros(2), NotImplementedError),
                       (lambda: torch.zeros(2, 3).view(4), RuntimeError)):
        with pytest.raises(Exception) as info:
            call()
        assert type(info.value) is kind


def observed_origins():
    """{case: [function, path] or None} for every case of ORIGINS, or {"error": why}.

    All cases run in one child process with TORCH_SHOW_CPP_STACKTRACES=1 (the site's raise-site
    oracle, verified.sources.raise_sites), once per probe run (verified.probing.shared): the
    probes below share one Python start, and each claim still gets its own probe, so a moved
    raise site fails only the claim it belongs to."""
    cases = {f"{claim}#{n}": code for claim, listed in ORIGINS.items() for n, (code, _, _) in enumerate(listed)}

    def observe():
        try:
            seen = raise_sites.observe_code(cases, timeout=170, symbolise=False)
        except RuntimeError as error:
            return {"error": str(error)}
        raised = {case: raise_sites.parse(seen[case]["message"]) for case in cases}
        return {case: [r.function, r.file] if r else None for case, r in raised.items()}

    return shared.once(["debug.error origins", cases], observe)


@pytest.mark.parametrize("claim", [pytest.param(claim, marks=pytest.mark.claim(claim), id=claim) for claim in ORIGINS])
def test_cpp_origin(claim):
    observed = observed_origins()
    assert "error" not in observed, observed.get("error")
    for n, (_, function, path) in enumerate(ORIGINS[claim]):
        case = f"{claim}#{n}"
        assert observed[case] is not None, f"{case}: no 'Exception raised from' location"
        raised_from, where = observed[case]
        assert raised_from == function, (case, raised_from)
        assert where.endswith("/" + path), (case, where)


# ----------------------------------------------------------------------------- autograd


@pytest.mark.claim("debug.error.requires-grad-non-leaf")
def test_requires_grad_flag_of_a_non_leaf():
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    assert not y.is_leaf and y.requires_grad  # derived from the input
    assert not (torch.ones(2) * 2).requires_grad
    with pytest.raises(RuntimeError, match=lit("you can only change requires_grad flags of leaf variables. "
                                               "If you want to use a computed variable in a subgraph that "
                                               "doesn't require differentiation use var_no_grad = var.detach().")):
        y.requires_grad = False
    with pytest.raises(RuntimeError, match=lit("you can only change requires_grad flags of leaf variables.")) as info:
        y.requires_grad = True
    assert "var.detach()" not in str(info.value)  # the hint is only added when switching it off
    d = y.detach()
    assert d.is_leaf and not d.requires_grad


@pytest.mark.claim("debug.error.detach-leaf-settable")
def test_detach_of_a_non_leaf_is_a_settable_leaf():
    y = torch.ones(2, requires_grad=True) * 2
    d = y.detach()
    assert d.is_leaf and not d.requires_grad
    d.requires_grad = True  # a detached tensor is a leaf: allowed


@pytest.mark.claim("debug.error.requires-grad-integer")
def test_three_wordings_for_integer_requires_grad():
    with pytest.raises(RuntimeError, match=r"^only Tensors of floating point dtype can require gradients$"):
        torch.arange(3).requires_grad_()
    t = torch.arange(3)
    with pytest.raises(RuntimeError, match=r"^only Tensors of floating point and complex dtype can require gradients$"):
        t.requires_grad = True
    with pytest.raises(RuntimeError, match=r"^Only Tensors of floating point and complex dtype can require gradients$"):
        torch.tensor([1, 2], requires_grad=True)
    assert torch.zeros(2, dtype=torch.complex64).requires_grad_().requires_grad  # complex passes requires_grad_()
    import torchgen
    template = (Path(torchgen.__file__).parent / "packaged" / "autograd" / "templates"
                / "python_variable_methods.cpp").read_text()
    body = template[template.index("THPVariable_requires_grad_(PyObject* self"):]
    body = body[:body.index("\n}\n")]  # the function's body
    assert '"only Tensors of floating point dtype can require gradients"' in body
    assert torch.arange(3).float().requires_grad_().requires_grad


@pytest.mark.claim("debug.error.inference-requires-grad")
def test_inference_tensor_cannot_require_grad():
    with torch.inference_mode():
        x = torch.ones(2)
    assert x.is_inference()
    message = lit("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
    with pytest.raises(RuntimeError, match=message):
        x.requires_grad_()
    with pytest.raises(RuntimeError, match=message):
        x.requires_grad = True
    c = x.clone()  # a clone made outside inference mode is an ordinary tensor
    assert not c.is_inference() and c.requires_grad_().requires_grad


@pytest.mark.claim("debug.error.backward-gradient-shape")
def test_backward_gradient_of_the_wrong_shape():
    y = torch.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match=lit("Mismatch in shape: grad_output[0] has a shape of torch.Size([3]) "
                                               "and output[0] has a shape of torch.Size([2]).")) as info:
        y.backward(torch.ones(3))
    assert any(entry.name == "_make_grads" for entry in info.traceback)  # raised in Python, before the engine
    x = torch.ones(2, requires_grad=True)
    (x * 2).backward(torch.ones_like(x))
    assert x.grad.tolist() == [2.0, 2.0]


@pytest.mark.claim("debug.error.grad-assign-mismatch")
def test_assigning_a_grad_of_the_wrong_size_or_dtype():
    a = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=lit("attempting to assign a gradient of size '[3]' to a tensor of size "
                                               "'[2]'. Please ensure that the gradient and the tensor are the same size")):
        a.grad = torch.ones(3)
    assert a.grad is None
    a.grad = torch.full((2,), 5.0)
    assert a.grad.tolist() == [5.0, 5.0]
    # a wrong dtype: the pair of probes below (its message changed in 2.10)


def assigning_a_grad_of_the_wrong_dtype(message):
    a = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="^" + lit(message)):
        a.grad = torch.ones(2, dtype=torch.float64)
    assert a.grad is None
    a.grad = torch.zeros_like(a)  # the fix: the parameter's shape and dtype
    assert a.grad.dtype == torch.float32 and a.grad.tolist() == [0.0, 0.0]


@pytest.mark.claim("debug.error.grad-assign-dtype")
@pytest.mark.torch_version("<2.10")
def test_assigning_a_grad_of_the_wrong_dtype_until_2_9():
    assigning_a_grad_of_the_wrong_dtype("attempting to assign a gradient with dtype 'double' to a tensor with dtype "
                                        "'float'. Please ensure that the gradient and the tensor have the same dtype")


@pytest.mark.claim("debug.error.grad-assign-grad-dtype")
@pytest.mark.torch_version(">=2.10")
def test_assigning_a_grad_of_the_wrong_dtype_since_2_10():
    assigning_a_grad_of_the_wrong_dtype("attempting to assign a gradient with dtype 'double' to a tensor with "
                                        "grad_dtype 'Float'. The gradient must match the tensor's grad_dtype "
                                        "(defaults to the tensor's dtype).")


@pytest.mark.claim("debug.error.resize-requires-grad")
def test_resize_of_a_tensor_that_requires_grad():
    a = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^cannot resize variables that require grad$"):
        a.resize_(3)
    with torch.no_grad():
        with pytest.raises(RuntimeError, match=r"^cannot resize variables that require grad$"):
            a.resize_(3)  # no_grad does not help: the check reads the tensor's flag
    assert a.detach().resize_(3).shape == (3,)


@pytest.mark.claim("debug.error.retain-grad-no-grad")
def test_retain_grad_without_requires_grad():
    with pytest.raises(RuntimeError, match=r"^can't retain_grad on Tensor that has requires_grad=False$"):
        torch.ones(2).retain_grad()
    y = torch.ones(2, requires_grad=True) * 3
    y.retain_grad()
    y.sum().backward()
    assert y.grad.tolist() == [1.0, 1.0]


@pytest.mark.claim("debug.error.grad-input-no-grad")
def test_autograd_grad_wrt_a_tensor_without_requires_grad():
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^One of the differentiated Tensors does not require grad$"):
        torch.autograd.grad((x * 2).sum(), [torch.ones(2)])
    assert torch.autograd.grad((x * 2).sum(), [x])[0].tolist() == [2.0, 2.0]


@pytest.mark.claim("debug.error.multi-output-view-inplace")
@pytest.mark.torch_version(">=2.13")
def test_inplace_on_an_output_of_unbind_or_split():
    tail = lit(" is a view and is being modified inplace. This view is the output of a function that returns "
               "multiple views. Such functions do not allow the output views to be modified inplace.")
    a = torch.ones(2, 3, requires_grad=True).clone()
    first, _ = a.unbind(0)
    with pytest.raises(RuntimeError, match="^Output 0 of Unbind" + tail):
        first.mul_(2)
    b = torch.ones(4, requires_grad=True).clone()
    for part in (b.split(2)[0], b.chunk(2)[0]):
        with pytest.raises(RuntimeError, match="^Output 0 of Split" + tail):
            part.mul_(2)
    doubled = a.unbind(0)[0].clone().mul_(2)
    assert doubled.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.claim("debug.error.multi-output-creation-meta")
def test_creation_meta_of_unbind_and_slice():
    a = torch.ones(2, 3, requires_grad=True).clone()
    first, _ = a.unbind(0)
    creation_meta = torch._C._autograd._get_creation_meta
    assert creation_meta(first) == torch._C._autograd.CreationMeta.MULTI_OUTPUT_NODE
    assert creation_meta(a[0]) == torch._C._autograd.CreationMeta.DEFAULT


@pytest.mark.claim("debug.error.slice-inplace-allowed")
def test_inplace_through_a_slice_is_allowed():
    c = torch.ones(4, requires_grad=True).clone()
    c[:2].mul_(2)  # a single-output view may be modified: the base's grad_fn is rewritten
    assert type(c.grad_fn).__name__ == "CopySlices"
    assert c.tolist() == [2.0, 2.0, 1.0, 1.0]


@pytest.mark.claim("debug.error.multi-output-unchecked-without-grad")
def test_unbind_output_without_grad_may_be_modified():
    plain = torch.ones(2, 3)
    plain.unbind(0)[0].mul_(2)  # without autograd there is no check
    assert plain[0].tolist() == [2.0, 2.0, 2.0]


@pytest.mark.claim("debug.error.detach-view-inplace")
def test_detach_inplace_on_a_view():
    a = torch.ones(4, requires_grad=True).clone()
    with pytest.raises(RuntimeError, match=lit("Can't detach views in-place. Use detach() instead.")):
        a[:2].detach_()
    d = a[:2].detach()
    assert not d.requires_grad and d.data_ptr() == a.data_ptr()


@pytest.mark.claim("debug.error.create-graph-warning")
def test_backward_with_create_graph_warns():
    message = lit("Using backward() with create_graph=True will create a reference cycle between the parameter "
                  "and its gradient which can cause a memory leak. We recommend using autograd.grad")
    previous = torch.is_warn_always_enabled()
    torch.set_warn_always(True)  # the C++ side warns once per process otherwise
    try:
        x = torch.ones(2, requires_grad=True)
        with pytest.warns(UserWarning, match=message) as record:
            (x * x).sum().backward(create_graph=True)
        text = str(next(w.message for w in record if "reference cycle" in str(w.message)))
        assert re.search(r"\(Triggered internally at \S*/torch/csrc/autograd/engine\.cpp:\d+\.\)$", text)
        assert x.grad.requires_grad and x.grad.grad_fn is not None  # the cycle: x -> x.grad -> graph -> x
        assert x in leaves_behind(x.grad.grad_fn)
    finally:
        torch.set_warn_always(previous)
    z = torch.ones(2, requires_grad=True)
    (g,) = torch.autograd.grad((z * z).sum(), z, create_graph=True)
    assert g.requires_grad and z.grad is None


@pytest.mark.claim("debug.error.grad-create-graph-no-warning")
def test_autograd_grad_with_create_graph_does_not_warn():
    previous = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    try:
        z = torch.ones(2, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            (g,) = torch.autograd.grad((z * z).sum(), z, create_graph=True)
        assert not any("reference cycle" in str(w.message) for w in caught)
        assert g.requires_grad
        assert z.grad is None
    finally:
        torch.set_warn_always(previous)


WARN_ONCE_SCRIPT = """
import json, warnings
import torch
counts = []
for warn_always in (False, False, True, True):
    torch.set_warn_always(warn_always)
    w = torch.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (w * w).sum().backward(create_graph=True)
    counts.append(sum("reference cycle" in str(c.message) for c in caught))
print(json.dumps(counts))
"""


@pytest.mark.claim("debug.error.create-graph-warning-once")
def test_create_graph_warning_once_per_process():
    # a fresh process, so that no earlier backward has used up the one warning
    run = subprocess.run([sys.executable, "-c", WARN_ONCE_SCRIPT], capture_output=True, text=True, timeout=100)
    assert run.returncode == 0, run.stderr[-2000:]
    counts = json.loads(run.stdout.strip().splitlines()[-1])
    assert counts == [1, 0, 1, 1]  # once, then silent; every time with set_warn_always(True)


# ----------------------------------------------------------------------------- shapes and views


@pytest.mark.claim("debug.error.mm-shapes")
def test_matrix_product_shapes():
    with pytest.raises(RuntimeError, match=lit("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)")):
        torch.randn(2, 3) @ torch.randn(4, 5)
    import torchgen
    yaml = (Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml").read_text()
    for op in ("mm.out", "addmm.out"):
        entry = yaml[yaml.index(f"- func: {op}("):]
        entry = entry[:entry.index("\n\n")]
        assert "structured: True" in entry, op  # a structured kernel: its meta function checks shapes
    assert (torch.randn(2, 3) @ torch.randn(3, 5)).shape == (2, 5)


@pytest.mark.claim("debug.error.linear-shapes-transposed")
def test_linear_reports_the_transposed_weight_and_folded_rows():
    with pytest.raises(RuntimeError, match=lit("mat1 and mat2 shapes cannot be multiplied (2x5 and 3x4)")):
        nn.Linear(3, 4)(torch.zeros(2, 5))  # weight (4, 3) is used transposed: 3x4
    with pytest.raises(RuntimeError, match=lit("mat1 and mat2 shapes cannot be multiplied (10x7 and 3x4)")):
        nn.Linear(3, 4)(torch.zeros(2, 5, 7))  # leading dimensions folded: 2*5 rows
    assert nn.Linear(5, 4)(torch.zeros(2, 5)).shape == (2, 4)
    assert nn.Linear(7, 4)(torch.zeros(2, 5, 7)).shape == (2, 5, 4)


@pytest.mark.claim("debug.error.shape-invalid")
def test_view_or_reshape_to_a_shape_of_another_size():
    for op in (torch.Tensor.view, torch.Tensor.reshape):
        with pytest.raises(RuntimeError, match=lit("shape '[3, 5]' is invalid for input of size 12")):
            op(torch.zeros(12), 3, 5)
    with pytest.raises(RuntimeError, match=lit("shape '[-1, 5]' is invalid for input of size 12")):
        torch.zeros(12).view(-1, 5)
    assert torch.zeros(12).view(-1, 4).shape == (3, 4)


@pytest.mark.claim("debug.error.infer-one-dim")
def test_only_one_inferred_dimension():
    with pytest.raises(RuntimeError, match=r"^only one dimension can be inferred$"):
        torch.zeros(12).view(-1, -1)
    with pytest.raises(RuntimeError, match=r"^only one dimension can be inferred$"):
        torch.zeros(12).reshape(-1, 2, -1)
    assert torch.zeros(12).view(-1, 4).shape == (3, 4)


@pytest.mark.claim("debug.error.cat-sizes")
def test_cat_of_mismatched_sizes():
    with pytest.raises(RuntimeError, match=lit("Sizes of tensors must match except in dimension 1. Expected size 2 "
                                               "but got size 3 for tensor number 1 in the list.")):
        torch.cat([torch.zeros(2, 3), torch.zeros(3, 4)], dim=1)
    with pytest.raises(RuntimeError, match=lit("Sizes of tensors must match except in dimension 0. Expected size 3 "
                                               "but got size 4 for tensor number 1 in the list.")):
        torch.cat([torch.zeros(2, 3), torch.zeros(3, 4)])
    assert torch.cat([torch.zeros(2, 3), torch.zeros(2, 4)], dim=1).shape == (2, 7)


@pytest.mark.claim("debug.error.cat-ndim")
def test_cat_of_different_ranks():
    with pytest.raises(RuntimeError, match=lit("Tensors must have same number of dimensions: got 2 and 1")):
        torch.cat([torch.zeros(2, 3), torch.zeros(3)])
    assert torch.cat([torch.zeros(2, 3), torch.zeros(0)]).shape == (2, 3)  # a 1-D empty tensor is skipped
    assert torch.cat([torch.zeros(2, 3), torch.zeros(3).unsqueeze(0)]).shape == (3, 3)


@pytest.mark.claim("debug.error.empty-list")
def test_cat_and_stack_of_an_empty_list():
    with pytest.raises(ValueError, match=lit("torch.cat(): expected a non-empty list of Tensors")):
        torch.cat([])
    with pytest.raises(RuntimeError, match=r"^stack expects a non-empty TensorList$") as info:
        torch.stack([])
    assert not isinstance(info.value, ValueError)
    assert torch.stack([torch.zeros(2)]).shape == (1, 2) and torch.cat([torch.zeros(2)]).shape == (2,)


@pytest.mark.claim("debug.error.stack-sizes")
def test_stack_of_unequal_tensors_and_default_collate():
    message = lit("stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1")
    with pytest.raises(RuntimeError, match=message):
        torch.stack([torch.zeros(2), torch.zeros(3)])
    from torch.utils.data import DataLoader, default_collate
    with pytest.raises(RuntimeError, match=message):
        default_collate([torch.zeros(2), torch.zeros(3)])
    with pytest.raises(RuntimeError, match=message):
        next(iter(DataLoader([torch.zeros(2), torch.zeros(3)], batch_size=2)))
    padded = torch.nn.utils.rnn.pad_sequence([torch.zeros(2), torch.zeros(3)], batch_first=True)
    assert padded.shape == (2, 3)


@pytest.mark.claim("debug.error.expand-size")
def test_expand_and_slice_assignment_of_a_wrong_size():
    with pytest.raises(RuntimeError, match=lit("The expanded size of the tensor (4) must match the existing size (3) "
                                               "at non-singleton dimension 1.  Target sizes: [2, 4].  Tensor sizes: [2, 3]")):
        torch.zeros(2, 3).expand(2, 4)
    assert torch.zeros(2, 1).expand(2, 4).shape == (2, 4) and torch.zeros(2, 3).repeat(1, 2).shape == (2, 6)


@pytest.mark.claim("debug.error.slice-assign-expands")
def test_slice_assignment_of_a_wrong_size():
    t = torch.zeros(3)
    with pytest.raises(RuntimeError, match=lit("The expanded size of the tensor (3) must match the existing size (4) "
                                               "at non-singleton dimension 0.  Target sizes: [3].  Tensor sizes: [4]")):
        t[:] = torch.ones(4)
    t[:] = torch.ones(3)
    assert t.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.claim("debug.error.expand-minus-one")
def test_expand_minus_one_keeps_a_size():
    assert torch.zeros(1, 3).expand(2, -1).shape == (2, 3)  # size-1 dimensions may grow, -1 keeps a size


@pytest.mark.claim("debug.error.dim-out-of-range")
def test_dimension_out_of_range():
    with pytest.raises(IndexError, match=lit("Dimension out of range (expected to be in range of [-2, 1], but got 2)")):
        torch.zeros(2, 3).sum(2)
    with pytest.raises(IndexError, match=lit("Dimension out of range (expected to be in range of [-2, 1], but got 2)")):
        torch.zeros(2, 3).transpose(0, 2)
    with pytest.raises(IndexError, match=lit("Dimension out of range (expected to be in range of [-1, 0], but got 1)")):
        torch.tensor(1.0).sum(1)
    assert torch.zeros(2, 3).sum(-1).shape == (2,)


@pytest.mark.claim("debug.error.permute-length")
def test_permute_with_the_wrong_number_of_dims():
    dense = torch.zeros(2, 3)
    assert dense.layout == torch.strided
    with pytest.raises(RuntimeError, match=lit("permute(sparse_coo): number of dimensions in the tensor input does not "
                                               "match the length of the desired ordering of dimensions i.e. "
                                               "input.dim() = 2 is not equal to len(dims) = 1")):
        dense.permute(0)
    with pytest.raises(RuntimeError, match=lit("permute(): duplicate dims are not allowed.")):
        dense.permute(0, 0)
    assert dense.permute(1, 0).shape == (3, 2) and dense.transpose(0, 1).shape == (3, 2)


@pytest.mark.claim("debug.error.bmm-shapes")
def test_bmm_shape_checks():
    with pytest.raises(RuntimeError, match=lit("Expected size for first two dimensions of batch2 tensor to be: "
                                               "[2, 4] but got: [2, 5].")):
        torch.bmm(torch.zeros(2, 3, 4), torch.zeros(2, 5, 6))
    with pytest.raises(RuntimeError, match=lit("Expected size for first two dimensions of batch2 tensor to be: "
                                               "[2, 4] but got: [3, 4].")):
        torch.bmm(torch.zeros(2, 3, 4), torch.zeros(3, 4, 6))
    with pytest.raises(RuntimeError, match=r"^batch1 must be a 3D tensor$"):
        torch.bmm(torch.zeros(3, 4), torch.zeros(4, 6))
    assert torch.bmm(torch.zeros(2, 3, 4), torch.zeros(2, 4, 6)).shape == (2, 3, 6)


@pytest.mark.claim("debug.error.dot-sizes")
def test_dot_of_vectors_of_different_lengths():
    message = lit("inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, "
                  "but got 3 and 4 elements respectively")
    with pytest.raises(RuntimeError, match=message):
        torch.dot(torch.zeros(3), torch.zeros(4))
    with pytest.raises(RuntimeError, match=message):
        torch.zeros(3) @ torch.zeros(4)
    assert torch.dot(torch.ones(3), torch.ones(3)).item() == 3.0


@pytest.mark.claim("debug.error.inplace-broadcast")
def test_inplace_result_cannot_grow():
    with pytest.raises(RuntimeError, match=lit("output with shape [3] doesn't match the broadcast shape [2, 3]")):
        torch.zeros(3).add_(torch.ones(2, 3))
    assert (torch.zeros(3) + torch.ones(2, 3)).shape == (2, 3)
    assert torch.zeros(2, 3).add_(torch.ones(3)).shape == (2, 3)


# ----------------------------------------------------------------------------- dtypes and devices


@pytest.mark.claim("debug.error.mm-dtype")
def test_mm_of_mixed_dtypes():
    message = lit("expected m1 and m2 to have the same dtype, but got: float != double")
    with pytest.raises(RuntimeError, match=message):
        torch.mm(torch.randn(2, 3), torch.randn(3, 4, dtype=torch.float64))
    with pytest.raises(RuntimeError, match=message):
        torch.randn(2, 2, 3) @ torch.randn(3, 4, dtype=torch.float64)  # folded to one mm
    assert torch.mm(torch.randn(2, 3), torch.randn(3, 4, dtype=torch.float64).float()).dtype == torch.float32


@pytest.mark.claim("debug.error.addmm-dtype")
def test_linear_and_addmm_of_mixed_dtypes():
    with pytest.raises(RuntimeError, match=lit("mat1 and mat2 must have the same dtype, but got Double and Float")):
        nn.Linear(3, 4)(torch.randn(2, 3, dtype=torch.float64))
    assert nn.Linear(3, 4)(torch.randn(2, 3, dtype=torch.float64).float()).dtype == torch.float32


@pytest.mark.claim("debug.error.addmm-self-dtype")
def test_addmm_of_a_float_self_and_double_mat2():
    with pytest.raises(RuntimeError, match=lit("self and mat2 must have the same dtype, but got Float and Double")):
        torch.addmm(torch.zeros(2, 4), torch.zeros(2, 3), torch.zeros(3, 4, dtype=torch.float64))
    assert torch.addmm(torch.zeros(2, 4), torch.zeros(2, 3), torch.zeros(3, 4, dtype=torch.float64).float()).dtype == torch.float32


@pytest.mark.claim("debug.error.linear-double-accepts")
def test_a_double_linear_accepts_double_input():
    assert nn.Linear(3, 4).double()(torch.randn(2, 3, dtype=torch.float64)).dtype == torch.float64


@pytest.mark.claim("debug.error.scalar-type-mismatch")
def test_expected_scalar_type_from_a_kernel():
    with pytest.raises(RuntimeError, match=r"^expected scalar type Float but found Double$"):
        torch.bmm(torch.zeros(2, 2, 3), torch.zeros(2, 3, 4, dtype=torch.float64))
    with pytest.raises(RuntimeError, match=r"^expected scalar type Float but found Double$"):
        F.conv2d(torch.zeros(1, 3, 5, 5), torch.zeros(2, 3, 3, 3, dtype=torch.float64))
    with pytest.raises(RuntimeError, match=r"^expected scalar type Double but found Float$"):
        nn.Conv2d(3, 2, 3, bias=False)(torch.zeros(1, 3, 5, 5, dtype=torch.float64))
    import torchgen
    template = (Path(torchgen.__file__).parent / "packaged" / "ATen" / "templates" / "TensorMethods.cpp").read_text()
    assert '"expected scalar type ", type, " but found ", tensor.scalar_type()' in template
    for accessor in ("const T* TensorBase::const_data_ptr() const {", "T* TensorBase::mutable_data_ptr() const {"):
        body = template[template.index(accessor):]
        assert "check_type(*this" in body[:body.index("\n}\n")], accessor
    assert re.search(r"T\* TensorBase::data_ptr\(\) const \{\s*return this->mutable_data_ptr<T>\(\);", template)
    assert torch.bmm(torch.zeros(2, 2, 3), torch.zeros(2, 3, 4, dtype=torch.float64).float()).shape == (2, 2, 4)


@pytest.mark.claim("debug.error.conv-bias-dtype")
def test_conv_input_and_bias_dtype():
    with pytest.raises(RuntimeError, match=lit("Input type (double) and bias type (float) should be the same")):
        nn.Conv2d(3, 8, 3)(torch.randn(1, 3, 8, 8, dtype=torch.float64))
    assert nn.Conv2d(3, 8, 3)(torch.randn(1, 3, 8, 8, dtype=torch.float64).float()).dtype == torch.float32


@pytest.mark.claim("debug.error.inplace-cast")
def test_inplace_result_type_cannot_be_cast():
    message = lit("result type Float can't be cast to the desired output type Long")
    with pytest.raises(RuntimeError, match=message):
        torch.arange(3).add_(1.5)
    with pytest.raises(RuntimeError, match=message):
        F.binary_cross_entropy_with_logits(torch.zeros(3), torch.tensor([0, 1, 1]))
    assert (torch.arange(3) + 1.5).dtype == torch.float32  # out of place: promoted
    assert torch.arange(3.0).add_(torch.arange(3)).dtype == torch.float32  # Long into Float is allowed


@pytest.mark.claim("debug.error.found-dtype")
def test_binary_cross_entropy_integer_target():
    with pytest.raises(RuntimeError, match=r"^Found dtype Long but expected Float$"):
        F.binary_cross_entropy(torch.full((3,), 0.5), torch.tensor([0, 1, 1]))
    assert F.binary_cross_entropy(torch.full((3,), 0.5), torch.tensor([0.0, 1.0, 1.0])).dtype == torch.float32


@pytest.mark.claim("debug.error.nll-target-dtype")
def test_class_index_target_must_be_long():
    with pytest.raises(RuntimeError, match=r"^expected target dtype to be Long or Byte, but got Float$"):
        F.cross_entropy(torch.randn(4, 3), torch.tensor([0.0, 1, 2, 1]))
    with pytest.raises(RuntimeError, match=r"^expected target dtype to be Long or Byte, but got Int$"):
        F.cross_entropy(torch.randn(4, 3), torch.tensor([0, 1, 2, 1], dtype=torch.int32))
    with pytest.raises(RuntimeError, match=r"^expected target dtype to be Long or Byte, but got Float$"):
        F.nll_loss(torch.randn(4, 3), torch.tensor([0.0, 1, 2, 1]))
    assert F.cross_entropy(torch.randn(4, 3), torch.tensor([0.0, 1, 2, 1]).long()).shape == ()


@pytest.mark.claim("debug.error.class-probabilities-target")
def test_same_shape_target_is_read_as_probabilities():
    with pytest.raises(RuntimeError, match=lit("Expected floating point type for target with class probabilities, "
                                               "got Long")):
        F.cross_entropy(torch.randn(4), torch.tensor([0, 1, 2, 3]))
    probs = torch.softmax(torch.randn(2, 3), 1)
    assert F.cross_entropy(torch.randn(2, 3), probs).shape == ()  # same shape, floating: probabilities


@pytest.mark.claim("debug.error.mean-integer")
def test_mean_of_an_integer_tensor():
    with pytest.raises(RuntimeError, match=lit("mean(): could not infer output dtype. Input dtype must be either a "
                                               "floating point or complex dtype. Got: Long")):
        torch.arange(3).mean()
    assert torch.arange(3).float().mean().item() == 1.0


@pytest.mark.claim("debug.error.mean-dtype-argument")
def test_sum_and_mean_with_a_dtype_accept_integers():
    assert torch.arange(3).sum().item() == 3  # sum accepts integers
    assert torch.arange(3).mean(dtype=torch.float32).item() == 1.0


@pytest.mark.claim("debug.error.bool-minus")
def test_minus_on_bool_tensors():
    mask = torch.tensor([True, False])
    with pytest.raises(RuntimeError, match=lit("Subtraction, the `-` operator, with two bool tensors is not "
                                               "supported. Use the `^` or `logical_xor()` operator instead.")):
        mask - mask
    with pytest.raises(RuntimeError, match=lit("Subtraction, the `-` operator, with a bool tensor is not supported. "
                                               "If you are trying to invert a mask, use the `~` or `logical_not()` "
                                               "operator instead.")):
        1 - mask
    assert (~mask).tolist() == [False, True] and (mask ^ mask).tolist() == [False, False]


@pytest.mark.claim("debug.error.bool-neg")
def test_negation_of_a_bool_tensor():
    mask = torch.tensor([True, False])
    with pytest.raises(RuntimeError, match=lit("Negation, the `-` operator, on a bool tensor is not supported. "
                                               "If you are trying to invert a mask, use the `~` or `logical_not()` "
                                               "operator instead.")):
        -mask
    assert (~mask).tolist() == [False, True] and mask.logical_not().tolist() == [False, True]


@pytest.mark.claim("debug.error.embedding-index-dtype")
def test_embedding_with_float_indices():
    with pytest.raises(RuntimeError, match=lit("Expected tensor for argument #1 'indices' to have one of the following "
                                               "scalar types: Long, Int; but got torch.FloatTensor instead (while "
                                               "checking arguments for embedding)")):
        nn.Embedding(3, 2)(torch.tensor([1.0]))
    assert nn.Embedding(3, 2)(torch.tensor([1], dtype=torch.int32)).shape == (1, 2)
    assert nn.Embedding(3, 2)(torch.tensor([1.0]).long()).shape == (1, 2)


@pytest.mark.claim("debug.error.index-tensor-dtype")
def test_indexing_with_a_float_tensor():
    with pytest.raises(IndexError, match=lit("tensors used as indices must be long, int, byte or bool tensors")):
        torch.zeros(3)[torch.tensor([0.0])]
    with pytest.raises(RuntimeError, match=lit("index_select(): Expected dtype int32 or int64 for index")):
        torch.zeros(3).index_select(0, torch.tensor([0.0]))
    assert torch.zeros(3)[torch.tensor([0.0]).long()].shape == (1,)


@pytest.mark.claim("debug.error.masked-fill-bool")
def test_masked_fill_needs_a_bool_mask():
    with pytest.raises(RuntimeError, match=lit("masked_fill_ only supports boolean masks, but got mask with dtype "
                                               "long int")):
        torch.zeros(3).masked_fill(torch.tensor([1, 0, 1]), 1.0)
    assert torch.zeros(3).masked_fill(torch.tensor([1, 0, 1]).bool(), 1.0).tolist() == [1.0, 0.0, 1.0]


@pytest.mark.claim("debug.error.device-meta-vs-cpu")
def test_meta_and_cpu_operands():
    cpu, meta = torch.zeros(2, 2), torch.zeros(2, 2, device="meta")
    message = lit("Tensor on device meta is not on the expected device cpu!")
    for op, name in ((torch.add, "aten::add.Tensor"), (torch.mul, "aten::mul.Tensor"), (torch.cat, "aten::cat")):
        with pytest.raises(RuntimeError, match=message) as info:
            op([cpu, meta]) if op is torch.cat else op(cpu, meta)
        assert raised_in(info, "check_same_device")  # torch/_prims_common
        assert any(entry.path.parent.name == "_refs" for entry in info.traceback)  # via the Python reference
        meta_kernel = next(line for line in torch._C._dispatch_dump(name).splitlines() if line.startswith("Meta:"))
        assert re.search(r"registered at \S*/torch/_meta_registrations\.py:\d+", meta_kernel), meta_kernel
    assert (cpu + torch.zeros_like(meta, device="cpu")).shape == (2, 2)


@pytest.mark.claim("debug.error.device-fake-tensor")
@pytest.mark.torch_version(">=2.13")  # FakeTensorDeviceMismatchError is absent from 2.9.1-2.12.1
def test_fake_cuda_and_cpu_operands():
    from torch._subclasses.fake_tensor import FakeTensorDeviceMismatchError, FakeTensorMode
    assert issubclass(FakeTensorDeviceMismatchError, RuntimeError)
    with FakeTensorMode():
        on_gpu = torch.empty(2, 2, device="cuda")  # no GPU needed: a fake tensor has no data
        assert on_gpu.is_cuda
        with pytest.raises(FakeTensorDeviceMismatchError,
                           match=lit("Expected all tensors to be on the same device, but found at least two "
                                     "devices, cuda:0 and cpu!")) as info:
            on_gpu + torch.empty(2, 2)
        assert raised_in(info, "_find_common_device")
        assert (on_gpu + torch.tensor(2.0)).device.type == "cuda"  # a 0-dim CPU tensor is accepted


@pytest.mark.claim("debug.error.device-cuda-vs-cpu")
@pytest.mark.devices("cuda")
def test_cuda_and_cpu_operands(device):
    on_gpu = torch.ones(2, device=device)
    with pytest.raises(RuntimeError, match=lit("Expected all tensors to be on the same device, but found at least "
                                               "two devices, cuda:0 and cpu!")):
        on_gpu + torch.ones(2)
    assert (on_gpu + torch.tensor(2.0)).device.type == "cuda"
    assert (on_gpu + torch.ones(2).to(on_gpu.device)).device.type == "cuda"


# ----------------------------------------------------------------------------- indexing


@pytest.mark.claim("debug.error.index-out-of-bounds")
def test_index_out_of_bounds():
    t = torch.arange(3)
    with pytest.raises(IndexError, match=lit("index 5 is out of bounds for dimension 0 with size 3")):
        t[5]
    with pytest.raises(IndexError, match=lit("index 5 is out of bounds for dimension 0 with size 3")):
        t[torch.tensor([5])]
    with pytest.raises(IndexError, match=lit("index -4 is out of bounds for dimension 0 with size 3")):
        t[-4]
    assert t[-3].item() == 0 and t[torch.tensor([-1])].tolist() == [2]


@pytest.mark.claim("debug.error.embedding-out-of-range")
def test_embedding_index_out_of_range():
    emb = nn.Embedding(3, 2)
    for bad in (3, -1):
        with pytest.raises(IndexError, match=r"^index out of range in self$"):
            emb(torch.tensor([bad]))
    with pytest.raises(IndexError, match=r"^index out of range in self$"):
        torch.zeros(3, 2).index_select(0, torch.tensor([5]))  # the same kernel check
    from torch.profiler import profile
    with profile() as prof:
        emb(torch.tensor([1]))
    assert any(e.name == "aten::index_select" and e.cpu_parent is not None and e.cpu_parent.name == "aten::embedding"
               for e in prof.events())
    assert emb(torch.tensor([2])).shape == (1, 2)


@pytest.mark.claim("debug.error.scatter-out-of-bounds")
def test_scatter_index_out_of_bounds_is_a_runtime_error():
    with pytest.raises(RuntimeError, match=lit("index 5 is out of bounds for dimension 0 with size 3")) as info:
        torch.zeros(3).scatter_(0, torch.tensor([5]), 1.0)
    assert not isinstance(info.value, IndexError)
    with pytest.raises(RuntimeError, match=lit("index 5 is out of bounds for dimension 0 with size 3")) as info:
        torch.zeros(3).gather(0, torch.tensor([5]))
    assert not isinstance(info.value, IndexError)
    assert torch.zeros(3).scatter_(0, torch.tensor([2]), 1.0).tolist() == [0.0, 0.0, 1.0]


@pytest.mark.claim("debug.error.too-many-indices")
def test_too_many_indices():
    with pytest.raises(IndexError, match=r"^too many indices for tensor of dimension 1$"):
        torch.zeros(3)[0, 0]
    with pytest.raises(IndexError, match=r"^too many indices for tensor of dimension 2$"):
        torch.zeros(2, 3)[0, 0, 0]
    assert torch.zeros(2, 3)[0, 0].item() == 0.0


@pytest.mark.claim("debug.error.mask-shape")
def test_boolean_mask_of_the_wrong_shape():
    with pytest.raises(IndexError, match=lit("The shape of the mask [2] at index 0 does not match the shape of the "
                                             "indexed tensor [3] at index 0")):
        torch.zeros(3)[torch.tensor([True, False])]
    assert torch.arange(3)[torch.tensor([True, False, True])].tolist() == [0, 2]


# ----------------------------------------------------------------------------- tensors to Python values


@pytest.mark.claim("debug.error.item-not-one-element")
def test_item_of_several_elements():
    with pytest.raises(RuntimeError, match=r"^a Tensor with 3 elements cannot be converted to Scalar$"):
        torch.randn(3).item()
    with pytest.raises(RuntimeError, match=r"^a Tensor with 0 elements cannot be converted to Scalar$"):
        torch.tensor([]).item()
    assert torch.ones(3).sum().item() == 3.0 and torch.ones(3).tolist() == [1.0, 1.0, 1.0]


@pytest.mark.claim("debug.error.item-any-rank")
def test_item_of_one_element_of_any_rank():
    assert torch.tensor([[4.0]]).item() == 4.0  # one element, any number of dimensions


@pytest.mark.claim("debug.error.python-scalar-not-one-element")
def test_float_int_and_nested_tensors():
    message = r"^only one element tensors can be converted to Python scalars$"
    for convert in (float, int):
        with pytest.raises(ValueError, match=message):
            convert(torch.randn(3))
    with pytest.raises(ValueError, match=message):
        torch.tensor([torch.ones(2), torch.ones(2)])
    assert torch.tensor([torch.tensor(1.0), torch.tensor(2.0)]).tolist() == [1.0, 2.0]
    assert torch.stack([torch.ones(2), torch.ones(2)]).shape == (2, 2) and float(torch.ones(3).sum()) == 3.0


@pytest.mark.claim("debug.error.bool-ambiguous")
def test_truth_value_of_a_tensor():
    with pytest.raises(RuntimeError, match=r"^Boolean value of Tensor with more than one value is ambiguous$"):
        bool(torch.ones(2))
    with pytest.raises(RuntimeError, match=r"^Boolean value of Tensor with more than one value is ambiguous$"):
        torch.ones(2) and torch.ones(2)
    with pytest.raises(RuntimeError, match=r"^Boolean value of Tensor with more than one value is ambiguous$"):
        if torch.ones(2):
            pass
    with pytest.raises(RuntimeError, match=r"^Boolean value of Tensor with no values is ambiguous$"):
        bool(torch.tensor([]))
    assert bool(torch.tensor([2.0])) is True and bool(torch.tensor(0)) is False
    assert bool(torch.ones(2).all()) is True and (torch.ones(2).bool() & torch.ones(2).bool()).all()


@pytest.mark.claim("debug.error.ragged-nested-list")
def test_tensor_from_a_ragged_list():
    with pytest.raises(ValueError, match=lit("expected sequence of length 2 at dim 1 (got 1)")):
        torch.tensor([[1, 2], [3]])
    with pytest.raises(ValueError, match=lit("expected sequence of length 1 at dim 1 (got 2)")):
        torch.tensor([[1], [2, 3]])
    assert torch.tensor([[1, 2], [3, 0]]).shape == (2, 2)


# ----------------------------------------------------------------------------- modules


@pytest.mark.claim("debug.error.register-parameter-tensor")
def test_register_parameter_of_a_plain_tensor():
    m = nn.Module()
    with pytest.raises(TypeError, match=lit("cannot assign 'torch.FloatTensor' object to parameter 'w' "
                                            "(torch.nn.Parameter or None required)")) as info:
        m.register_parameter("w", torch.zeros(1))
    assert raised_in(info, "register_parameter")
    assert "w" not in m._parameters  # nothing was registered
    m.register_parameter("w", nn.Parameter(torch.zeros(1)))
    m.register_parameter("b", None)
    assert list(m._parameters) == ["w", "b"]


@pytest.mark.claim("debug.error.module-name-dot")
def test_dotted_module_and_buffer_names():
    # str() of a KeyError is the repr of its argument, so the apostrophe arrives escaped
    with pytest.raises(KeyError, match=r'module name can.{1,2}t contain "\.", got: a\.b') as info:
        nn.Module().add_module("a.b", nn.Linear(1, 1))
    assert raised_in(info, "add_module") and str(info.value).startswith("'")  # repr of the text
    with pytest.raises(KeyError, match=r'buffer name can.{1,2}t contain "\."') as info:
        nn.Module().register_buffer("a.b", torch.zeros(1))
    assert raised_in(info, "register_buffer")
    nested = nn.Sequential(nn.Sequential(nn.Linear(1, 1)))
    assert list(nested.state_dict()) == ["0.0.weight", "0.0.bias"]  # "." joins the levels
    with pytest.raises(KeyError, match=r'module name can.{1,2}t be empty string ""'):
        nn.Module().add_module("", nn.Linear(1, 1))
    ok = nn.Module()
    ok.add_module("a_b", nn.Linear(1, 1))
    assert list(ok.state_dict()) == ["a_b.weight", "a_b.bias"]


@pytest.mark.claim("debug.error.add-module-not-module")
def test_add_module_of_a_non_module():
    with pytest.raises(TypeError, match=r"^int is not a Module subclass$") as info:
        nn.Module().add_module("a", 3)
    assert raised_in(info, "add_module")
    with pytest.raises(TypeError, match=r"^list is not a Module subclass$"):
        nn.Module().add_module("a", [nn.Linear(1, 1)])
    holder = nn.Module()
    holder.add_module("a", nn.ModuleList([nn.Linear(1, 1)]))
    assert len(list(holder.parameters())) == 2


@pytest.mark.claim("debug.error.missing-forward")
def test_module_without_forward():
    class Net(nn.Module):
        def forwad(self, x):  # misspelled
            return x

    with pytest.raises(NotImplementedError, match=lit('Module [Net] is missing the required "forward" function')) as info:
        Net()(torch.zeros(1))
    assert raised_in(info, "_forward_unimplemented") and Net.forward is nn.Module.forward
    with pytest.raises(NotImplementedError, match=lit('Module [Module] is missing the required "forward" function')):
        nn.Module()(torch.zeros(1))
    class Fixed(nn.Module):
        def forward(self, x):
            return x
    assert Fixed()(torch.zeros(1)).shape == (1,)


@pytest.mark.claim("debug.error.load-state-dict-not-mapping")
def test_load_state_dict_of_a_module_object():
    m = nn.Linear(1, 1)
    with pytest.raises(TypeError, match=lit("Expected state_dict to be dict-like, got "
                                            "<class 'torch.nn.modules.linear.Linear'>.")) as info:
        m.load_state_dict(nn.Linear(1, 1))
    assert raised_in(info, "load_state_dict")
    assert m.load_state_dict(nn.Linear(1, 1).state_dict()).missing_keys == []


@pytest.mark.claim("debug.error.conv-channels")
def test_conv_channel_mismatch():
    with pytest.raises(RuntimeError, match=lit("Given groups=1, weight of size [8, 3, 3, 3], expected input[1, 4, 8, 8] "
                                               "to have 3 channels, but got 4 channels instead")):
        nn.Conv2d(3, 8, 3)(torch.randn(1, 4, 8, 8))
    with pytest.raises(RuntimeError, match=lit("Given groups=1, weight of size [8, 3, 3, 3], expected input[1, 8, 8, 3] "
                                               "to have 3 channels, but got 8 channels instead")):
        nn.Conv2d(3, 8, 3)(torch.randn(1, 8, 8, 3))  # channels-last data passed as NCHW
    with pytest.raises(RuntimeError, match=lit("Given groups=2, weight of size [8, 2, 3, 3], expected input[1, 3, 8, 8] "
                                               "to have 4 channels, but got 3 channels instead")):
        nn.Conv2d(4, 8, 3, groups=2)(torch.randn(1, 3, 8, 8))  # 2 input channels per group, 2 groups
    assert nn.Conv2d(3, 8, 3)(torch.randn(1, 8, 8, 3).permute(0, 3, 1, 2)).shape == (1, 8, 6, 6)


@pytest.mark.claim("debug.error.conv-input-dim")
def test_conv_input_rank():
    with pytest.raises(RuntimeError, match=lit("Expected 3D (unbatched) or 4D (batched) input to conv2d, but got "
                                               "input of size: [8, 8]")):
        nn.Conv2d(3, 8, 3)(torch.randn(8, 8))
    with pytest.raises(RuntimeError, match=lit("Expected 2D (unbatched) or 3D (batched) input to conv1d, but got "
                                               "input of size: [2, 3, 4, 5]")):
        nn.Conv1d(3, 8, 3)(torch.zeros(2, 3, 4, 5))
    assert nn.Conv2d(3, 8, 3)(torch.randn(3, 8, 8)).shape == (8, 6, 6)  # unbatched input is accepted


@pytest.mark.claim("debug.error.conv-kernel-too-large")
def test_conv_kernel_larger_than_input():
    with pytest.raises(RuntimeError, match=lit("Calculated padded input size per channel: (3 x 3). Kernel size: (5 x 5). "
                                               "Kernel size can't be greater than actual input size")):
        nn.Conv2d(3, 8, 5)(torch.randn(1, 3, 3, 3))
    assert nn.Conv2d(3, 8, 5, padding=1)(torch.randn(1, 3, 3, 3)).shape == (1, 8, 1, 1)


@pytest.mark.claim("debug.error.batchnorm-input-dim")
def test_batchnorm_input_rank():
    with pytest.raises(ValueError, match=lit("expected 4D input (got 2D input)")) as info:
        nn.BatchNorm2d(3)(torch.zeros(2, 3))
    assert raised_in(info, "_check_input_dim")
    with pytest.raises(ValueError, match=lit("expected 2D or 3D input (got 4D input)")) as info:
        nn.BatchNorm1d(3)(torch.zeros(2, 3, 4, 5))
    assert raised_in(info, "_check_input_dim")
    assert nn.BatchNorm1d(3)(torch.zeros(2, 3)).shape == (2, 3)


@pytest.mark.claim("debug.error.batchnorm-features")
def test_batchnorm_feature_count():
    with pytest.raises(RuntimeError, match=r"^running_mean should contain 4 elements not 3$"):
        nn.BatchNorm1d(3)(torch.zeros(2, 4))
    with pytest.raises(RuntimeError, match=r"^running_mean should contain 4 elements not 3$"):
        nn.BatchNorm1d(3).eval()(torch.zeros(2, 4))
    assert nn.BatchNorm1d(4)(torch.zeros(2, 4)).shape == (2, 4)


@pytest.mark.claim("debug.error.rnn-input-size")
def test_lstm_input_feature_size_and_rank():
    with pytest.raises(RuntimeError, match=lit("input.size(-1) must be equal to input_size. Expected 3, got 6")) as info:
        nn.LSTM(3, 4)(torch.zeros(5, 2, 6))
    assert raised_in(info, "check_input")
    with pytest.raises(ValueError, match=lit("LSTM: Expected input to be 2D or 3D, got 4D instead")) as info:
        nn.LSTM(3, 4)(torch.zeros(5, 2, 3, 1))
    assert info.traceback[-1].path.name == "rnn.py"  # raised by LSTM.forward itself
    assert nn.LSTM(3, 4)(torch.zeros(5, 2, 3))[0].shape == (5, 2, 4)
    # a float64 input: the pair of probes below (its message changed in 2.11)


def lstm_rejects_a_float64_input(message):
    with pytest.raises(ValueError, match="^" + lit(message) + "$") as info:
        nn.LSTM(3, 4)(torch.zeros(5, 2, 3, dtype=torch.float64))
    assert raised_in(info, "check_input")
    # the fix: an input in the weights' dtype, or the model converted to the input's
    assert nn.LSTM(3, 4)(torch.zeros(5, 2, 3))[0].dtype == torch.float32
    assert nn.LSTM(3, 4).to(torch.float64)(torch.zeros(5, 2, 3, dtype=torch.float64))[0].dtype == torch.float64


@pytest.mark.claim("debug.error.rnn-input-dtype-must-have-type")
@pytest.mark.torch_version("<2.11")
def test_lstm_input_dtype_until_2_10():
    lstm_rejects_a_float64_input("input must have the type torch.float32, got type torch.float64")


@pytest.mark.claim("debug.error.rnn-input-dtype")
@pytest.mark.torch_version(">=2.11")
def test_lstm_input_dtype_since_2_11():
    lstm_rejects_a_float64_input("RNN input dtype (torch.float64) does not match weight dtype (torch.float32). "
                                 "Convert input: input.to(torch.float32), or convert model: model.to(torch.float64)")


@pytest.mark.claim("debug.error.layer-norm-shape")
def test_layer_norm_trailing_shape():
    with pytest.raises(RuntimeError, match=lit("Given normalized_shape=[4], expected input with shape [*, 4], but got "
                                               "input of size[2, 3]")):
        nn.LayerNorm(4)(torch.zeros(2, 3))
    assert nn.LayerNorm(3)(torch.zeros(5, 2, 3)).shape == (5, 2, 3)


@pytest.mark.claim("debug.error.pool-output-too-small")
def test_pooling_output_too_small():
    with pytest.raises(RuntimeError, match=lit("Given input size: (1x2x2). Calculated output size: (1x0x0). "
                                               "Output size is too small")):
        nn.MaxPool2d(4)(torch.zeros(1, 1, 2, 2))
    assert nn.MaxPool2d(2)(torch.zeros(1, 1, 2, 2)).shape == (1, 1, 1, 1)


# ----------------------------------------------------------------------------- losses


@pytest.mark.claim("debug.error.loss-batch-size")
def test_loss_batch_size_mismatch():
    with pytest.raises(ValueError, match=lit("Expected input batch_size (4) to match target batch_size (3).")):
        F.cross_entropy(torch.randn(4, 3), torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match=lit("Expected input batch_size (4) to match target batch_size (3).")):
        F.nll_loss(torch.randn(4, 3), torch.tensor([0, 1, 2]))
    assert F.cross_entropy(torch.randn(3, 3), torch.tensor([0, 1, 2])).shape == ()


@pytest.mark.claim("debug.error.loss-target-out-of-bounds")
def test_class_index_out_of_bounds():
    with pytest.raises(IndexError, match=r"^Target 5 is out of bounds\.$"):
        F.cross_entropy(torch.randn(2, 3), torch.tensor([0, 5]))
    with pytest.raises(IndexError, match=r"^Target 3 is out of bounds\.$"):
        F.cross_entropy(torch.randn(2, 3), torch.tensor([0, 3]))  # classes are 0 .. C-1
    with pytest.raises(IndexError, match=r"^Target -1 is out of bounds\.$"):
        F.cross_entropy(torch.randn(2, 3), torch.tensor([0, -1]))
    assert F.cross_entropy(torch.randn(2, 6), torch.tensor([0, 5])).isfinite()


@pytest.mark.claim("debug.error.loss-ignore-index")
def test_the_ignore_index_is_skipped():
    assert F.cross_entropy(torch.randn(2, 3), torch.tensor([0, -100])).isfinite()  # ignore_index=-100 is skipped


@pytest.mark.claim("debug.error.mse-size-warning")
def test_mse_loss_broadcast_warning():
    a, b = torch.arange(3.0).view(3, 1), torch.arange(3.0)
    with pytest.warns(UserWarning, match=lit("Using a target size (torch.Size([3])) that is different to the input "
                                             "size (torch.Size([3, 1])). This will likely lead to incorrect results "
                                             "due to broadcasting.")):
        loss = F.mse_loss(a, b)
    assert torch.equal(loss, ((a - b) ** 2).mean())  # a (3, 3) broadcast: 9 terms
    assert torch.equal(loss, torch.tensor(12.0) / 9)  # squares of i - j for i, j in 0..2: 12 over 9 terms
    assert F.mse_loss(a.view(3), b).item() == 0.0  # the values agree element for element


@pytest.mark.claim("debug.error.bce-target-size")
def test_binary_cross_entropy_size_mismatch_raises():
    with pytest.raises(ValueError, match=lit("Using a target size (torch.Size([1, 2])) that is different to the input "
                                             "size (torch.Size([2])) is deprecated. Please ensure they have the same size.")) as info:
        F.binary_cross_entropy(torch.tensor([0.5, 0.5]), torch.tensor([[1.0, 0.0]]))
    assert info.traceback[-1].name == "binary_cross_entropy"  # a Python check
    with pytest.raises(ValueError, match=lit("Target size (torch.Size([3, 1])) must be the same as input size "
                                             "(torch.Size([3]))")) as info:
        F.binary_cross_entropy_with_logits(torch.zeros(3), torch.zeros(3, 1))
    assert info.traceback[-1].name == "binary_cross_entropy_with_logits"
    assert F.binary_cross_entropy_with_logits(torch.zeros(3), torch.zeros(3, 1).view(3)).shape == ()


@pytest.mark.claim("debug.error.bce-input-range")
def test_binary_cross_entropy_input_outside_zero_one():
    with pytest.raises(RuntimeError, match=r"^all elements of input should be between 0 and 1$"):
        F.binary_cross_entropy(torch.tensor([1.5]), torch.tensor([1.0]))
    with pytest.raises(RuntimeError, match=r"^all elements of input should be between 0 and 1$"):
        F.binary_cross_entropy(torch.tensor([-0.5]), torch.tensor([1.0]))
    assert F.binary_cross_entropy_with_logits(torch.tensor([1.5]), torch.tensor([1.0])).isfinite()


@pytest.mark.claim("debug.error.softmax-implicit-dim")
def test_softmax_without_dim():
    message = lit("Implicit dimension choice for softmax has been deprecated. Change the call to include dim=X as an "
                  "argument.")
    x2, x3 = torch.randn(2, 3), torch.randn(2, 3, 4)
    with pytest.warns(UserWarning, match=message):
        y2 = F.softmax(x2)
    with pytest.warns(UserWarning, match=message):
        y3 = F.softmax(x3)
    assert torch.equal(y2, F.softmax(x2, dim=1))
    assert torch.equal(y3, F.softmax(x3, dim=0))  # 3-D input: dim 0, not the last dimension
    for shape, dim in (((), 0), ((5,), 0), ((2, 3, 4, 5), 1)):
        x = torch.randn(shape)
        with pytest.warns(UserWarning, match=message):
            y = F.softmax(x)
        assert torch.equal(y, F.softmax(x, dim=dim)), shape
    assert not torch.allclose(y3, F.softmax(x3, dim=-1))


# ----------------------------------------------------------------------------- serialization


@pytest.mark.claim("debug.error.load-corrupted-zip")
def test_loading_a_truncated_checkpoint():
    buffer = io.BytesIO()
    torch.save(torch.ones(3), buffer)
    data = buffer.getvalue()
    assert data[:4] == b"PK\x03\x04"  # a zip archive
    assert data[-22:-18] == b"PK\x05\x06"  # ending with its directory record
    with pytest.raises(RuntimeError, match=lit("PytorchStreamReader failed reading zip archive: failed finding "
                                               "central directory")):
        torch.load(io.BytesIO(data[: len(data) // 2]))
    assert torch.equal(torch.load(io.BytesIO(data)), torch.ones(3))


@pytest.mark.claim("debug.error.load-not-zip-legacy")
def test_loading_a_file_without_the_zip_header():
    with pytest.raises(Exception, match=r"Weights only load failed(.|\n)*Unsupported operand") as info:
        torch.load(io.BytesIO(b"not a checkpoint"))  # no zip header: read as a legacy pickle
    assert not torch.serialization._is_zipfile(io.BytesIO(b"not a checkpoint"))
    assert isinstance(info.value, pickle.UnpicklingError)
    buffer = io.BytesIO()
    torch.save(torch.ones(1), buffer)
    assert torch.serialization._is_zipfile(io.BytesIO(buffer.getvalue()))


@pytest.mark.claim("debug.error.save-missing-directory")
def test_saving_into_a_missing_directory(tmp_path):
    target = tmp_path / "missing" / "model.pt"
    with pytest.raises(RuntimeError, match=lit(f"Parent directory {tmp_path / 'missing'} does not exist.")):
        torch.save(torch.ones(1), target)
    assert not target.parent.exists()
    target.parent.mkdir()
    torch.save(torch.ones(1), target)
    assert torch.equal(torch.load(target), torch.ones(1))  # the file was written, and reads back


# ----------------------------------------------------------------------------- memory and aliasing


@pytest.mark.claim("debug.error.partial-overlap")
def test_inplace_copy_between_overlapping_slices():
    message = lit("unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                  "single memory location. Please clone() the tensor before performing the operation.")
    x = torch.arange(6.0)
    with pytest.raises(RuntimeError, match=message):
        x[1:].copy_(x[:-1])
    with pytest.raises(RuntimeError, match=message):
        torch.add(x[:-1], 1, out=x[1:])
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]  # nothing was written
    x[1:].copy_(x[:-1].clone())
    assert x.tolist() == [0.0, 0.0, 1.0, 2.0, 3.0, 4.0]


@pytest.mark.claim("debug.error.full-overlap-allowed")
def test_copy_from_a_clone_and_complete_overlap_are_allowed():
    x = torch.arange(6.0)
    x[1:].copy_(x[:-1].clone())
    assert x.tolist() == [0.0, 0.0, 1.0, 2.0, 3.0, 4.0]
    x.add_(x)  # complete overlap (the same elements) is allowed
    assert x.tolist() == [0.0, 0.0, 2.0, 4.0, 6.0, 8.0]


# ----------------------------------------------------------------------------- data loading


@pytest.mark.claim("debug.error.collate-type")
def test_default_collate_of_an_unsupported_type():
    from torch.utils.data import DataLoader, default_collate
    message = lit("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                  "found <class 'object'>")
    with pytest.raises(TypeError, match=message) as info:
        default_collate([object(), object()])
    assert info.traceback[-1].name == "collate"
    with pytest.raises(TypeError, match=message):
        next(iter(DataLoader([object(), object()], batch_size=2)))
    assert default_collate([{"x": 1}, {"x": 2}])["x"].tolist() == [1, 2]
    assert next(iter(DataLoader([object(), object()], batch_size=2, collate_fn=list)))[0] is not None


@pytest.mark.claim("debug.error.dataloader-sampler-shuffle")
def test_dataloader_sampler_and_shuffle():
    from torch.utils.data import DataLoader
    with pytest.raises(ValueError, match=r"^sampler option is mutually exclusive with shuffle$") as info:
        DataLoader(list(range(4)), shuffle=True, sampler=list(range(4)))
    assert info.traceback[-1].name == "__init__" and info.traceback[-1].path.name == "dataloader.py"
    assert type(DataLoader(list(range(4)), shuffle=True).sampler).__name__ == "RandomSampler"
    with pytest.raises(ValueError, match=lit("batch_sampler option is mutually exclusive with batch_size, shuffle, "
                                             "sampler, and drop_last")):
        DataLoader(list(range(4)), batch_size=2, batch_sampler=[[0, 1]])
