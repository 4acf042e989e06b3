"""Probes for docs/autograd/derivatives.md."""
import re
import warnings
from pathlib import Path

import pytest
import torch
import torchgen
import yaml


def derivative_entries():
    """The installed derivatives.yaml as a list of entries, in file order."""
    path = Path(torchgen.__file__).parent / "packaged" / "autograd" / "derivatives.yaml"
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(path.read_text(), Loader=loader)


def by_name(entries):
    return {e["name"].split("(")[0]: e for e in entries}


def saved_tensor_names(node):
    return sorted(n.removeprefix("_saved_") for n in dir(node)
                  if n.startswith("_saved_") and isinstance(getattr(node, n), torch.Tensor))


@pytest.mark.claim("autograd.derivatives.mul-entry")
def test_mul_tensor_entry():
    mul = by_name(derivative_entries())["mul.Tensor"]
    assert mul["name"] == "mul.Tensor(Tensor self, Tensor other) -> Tensor"
    assert mul["self"] == "mul_tensor_backward(grad, other, self.scalar_type())"
    assert mul["other"] == "mul_tensor_backward(grad, self, other.scalar_type())"
    assert mul["result"] == "other_t * self_p + self_t * other_p"  # forward mode (JVP)


FORMULA_USES = {  # op -> (call, entry, tensor names the backward formula reads)
    "exp": (torch.exp, "exp", ["result"]),
    "sigmoid": (torch.sigmoid, "sigmoid", ["result"]),
    "tanh": (torch.tanh, "tanh", ["result"]),
    "relu": (torch.relu, "relu", ["result"]),
    "sin": (torch.sin, "sin", ["self"]),
    "mul": (lambda t: t * t.detach().flip(0).requires_grad_(), "mul.Tensor", ["other", "self"]),
}


@pytest.mark.claim("autograd.derivatives.formula-decides-saved")
def test_formula_decides_what_is_saved(device):
    entries = by_name(derivative_entries())
    for op, (call, entry, names) in FORMULA_USES.items():
        formulas = " ".join(v for k, v in entries[entry].items() if k not in ("name", "result"))
        read = set(re.findall(r"[A-Za-z_]\w*", formulas)) & {"self", "other", "result"}
        assert sorted(read) == names, op
        x = torch.tensor([0.5, -1.0, 2.0], device=device, requires_grad=True)
        assert saved_tensor_names(call(x).grad_fn) == names, op


def overloads_in_order(entries, base):
    return [e["name"].split("(")[0] for e in entries if e["name"].split("(")[0].split(".")[0] == base]


@pytest.mark.claim("autograd.derivatives.node-names")
def test_node_class_names_follow_the_yaml(device):
    entries = derivative_entries()
    assert overloads_in_order(entries, "sum") == ["sum", "sum.dim_IntList"]
    assert overloads_in_order(entries, "mul") == ["mul.Tensor", "mul.Scalar"]
    x = torch.ones(2, 3, device=device, requires_grad=True)
    assert x.sum().grad_fn.name() == "SumBackward0"
    assert x.sum(0).grad_fn.name() == "SumBackward1"
    assert (x * 2).grad_fn.name() == "MulBackward0"  # Python turns 2 into a tensor: mul.Tensor
    assert torch.ops.aten.mul.Scalar(x, 2).grad_fn.name() == "MulBackward1"
    for name in ("SumBackward0", "SumBackward1", "MulBackward0", "MulBackward1"):
        assert hasattr(torch._C._functions, name), name


@pytest.mark.claim("autograd.derivatives.node-name-camelcase")
def test_node_names_are_camel_case(device):
    assert "native_layer_norm" in by_name(derivative_entries())
    x = torch.ones(2, 3, device=device, requires_grad=True)
    assert torch.nn.functional.layer_norm(x, (3,)).grad_fn.name() == "NativeLayerNormBackward0"
    assert hasattr(torch._C._functions, "NativeLayerNormBackward0")


@pytest.mark.claim("autograd.derivatives.kink-formulas")
def test_relu_and_maximum_formulas():
    entries = by_name(derivative_entries())
    assert entries["relu"]["self"] == "threshold_backward(grad, result, 0)"
    assert entries["maximum"]["self"] == "at::where(self == other, grad / 2, grad).masked_fill_(self < other, 0)"
    assert entries["maximum"]["other"] == "at::where(self == other, grad / 2, grad).masked_fill_(self > other, 0)"


@pytest.mark.claim("autograd.derivatives.generated-header-shipped")
def test_generated_header_and_its_template_ship():
    header = Path(torch.__file__).parent / "include/torch/csrc/autograd/generated/Functions.h"
    template = Path(torchgen.__file__).parent / "packaged/autograd/templates/Functions.h"
    assert "struct TORCH_API MulBackward0 : public TraceableFunction" in header.read_text()
    assert re.findall(r"\$\{\w+\}", template.read_text()) == ["${generated_comment}", "${autograd_function_declarations}"]


@pytest.mark.claim("autograd.derivatives.composite-ops")
def test_ops_without_own_formula_record_their_parts(device):
    entries = by_name(derivative_entries())
    assert "square" not in entries
    x = torch.ones(4, 3, device=device, requires_grad=True)
    assert torch.square(x).grad_fn.name() == "PowBackward0"
    table = torch._C._dispatch_dump_table("aten::square")
    assert "AutogradCPU: registered at" in table and "[math kernel]" in table


@pytest.mark.claim("autograd.derivatives.entry-not-always-used")
def test_linear_entry_applies_to_nested_tensors_only(device):
    entries = by_name(derivative_entries())
    assert "linear" in entries
    table = {line.split(":")[0]: line for line in torch._C._dispatch_dump_table("aten::linear").splitlines()}
    assert table["AutogradCPU"].endswith("[math kernel]")
    assert table["AutogradNestedTensor"].endswith("[autograd kernel]")
    x = torch.ones(4, 3, device=device, requires_grad=True)
    w = torch.ones(5, 3, device=device, requires_grad=True)
    b = torch.ones(5, device=device, requires_grad=True)
    assert torch.nn.functional.linear(x, w, b).grad_fn.name() == "AddmmBackward0"
    assert torch.nn.functional.linear(x, w).grad_fn.name() == "MmBackward0"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nested tensors warn that they are a prototype
        nt = torch.nested.nested_tensor([torch.ones(2, 3), torch.ones(4, 3)], device=device, requires_grad=True)
    assert torch.nn.functional.linear(nt, w).grad_fn.name() == "LinearBackward0"


@pytest.mark.claim("autograd.derivatives.inplace-shares-formula")
def test_inplace_variants_use_the_out_of_place_formula(device):
    names = set(by_name(derivative_entries()))
    assert "exp" in names and "exp_" not in names
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x.clone()
    y.exp_()
    assert y.grad_fn.name() == "ExpBackward0"
    y.sum().backward()
    assert torch.allclose(x.grad, x.detach().exp())
    z = x.clone()
    z.mul_(3)
    assert z.grad_fn.name() == "MulBackward0"


@pytest.mark.claim("autograd.derivatives.not-implemented")
def test_not_implemented_fails_in_backward(device):
    assert by_name(derivative_entries())["geqrf"]["self"] == 'not_implemented("geqrf")'
    a = torch.eye(3, device=device, requires_grad=True)
    q, tau = torch.geqrf(a)  # the forward works and records a node
    assert q.grad_fn.name() == "GeqrfBackward0"
    with pytest.raises(RuntimeError, match="the derivative for 'geqrf' is not implemented"):
        q.sum().backward()
    b = torch.eye(3, device=device, requires_grad=True)
    torch.linalg.qr(b).Q.sum().backward()  # the differentiable QR has a formula
    assert b.grad is not None and b.grad.shape == (3, 3)


@pytest.mark.claim("autograd.derivatives.zero-gradient-ops")
def test_piecewise_constant_ops_give_zero_gradient(device):
    entries = by_name(derivative_entries())
    for op in ("floor", "round", "sign"):
        assert entries[op]["self"] == "zeros_like(grad)", op
    x = torch.tensor([0.3, 1.7, -2.2], device=device, requires_grad=True)
    y = x.floor() + x.round() + x.sign()
    assert y.requires_grad and y.grad_fn is not None
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


def generated_struct(name):
    """The text of one node struct in the generated Functions.h that the wheel ships."""
    header = Path(torch.__file__).parent / "include" / "torch" / "csrc" / "autograd" / "generated" / "Functions.h"
    text = header.read_text()
    start = text.index(f"struct TORCH_API {name} : public TraceableFunction {{")
    return text[start:text.index("\n};", start)]


@pytest.mark.claim("autograd.derivatives.generated-struct")
def test_generated_node_struct():
    body = generated_struct("MulBackward0")
    assert "SavedVariable other_;" in body and "SavedVariable self_;" in body
    assert "at::ScalarType self_scalar_type;" in body  # what self.scalar_type() needs, kept as a plain value
    assert 'std::string name() const override { return "MulBackward0"; }' in body
    release = body[body.index("void release_variables() override {"):]
    release = release[:release.index("}")]
    assert "other_.reset_data();" in release and "self_.reset_data();" in release
    exp = generated_struct("ExpBackward0")
    assert "SavedVariable result_;" in exp and "SavedVariable self_;" not in exp
