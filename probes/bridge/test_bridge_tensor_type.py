"""Probes for docs/bridge/tensor-type.md."""
import importlib.machinery
import inspect
import re
import struct
import sys
from pathlib import Path

import pytest
import torch
import torchgen

Py_TPFLAGS_HEAPTYPE = 1 << 9  # set for classes created by a `class` statement, not for static C types


def yaml_entry(name):
    """The lines of the native_functions.yaml entry `- func: <name>(...`, up to the next entry."""
    text = (Path(torchgen.__file__).parent / "packaged/ATen/native/native_functions.yaml").read_text()
    match = re.search(rf"^- func: {re.escape(name)}\(.*?(?=^- func: |\Z)", text, re.M | re.S)
    assert match is not None, name
    return match.group(0)


@pytest.mark.claim("bridge.tensor-type.c-extension")
def test_torch_c_is_a_compiled_extension():
    spec = torch._C.__spec__
    assert isinstance(spec.loader, importlib.machinery.ExtensionFileLoader)
    assert spec.origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
    base = torch._C.TensorBase
    assert base.__module__ == "torch._C"
    assert not base.__flags__ & Py_TPFLAGS_HEAPTYPE  # a static type defined in C
    assert torch.Tensor.__flags__ & Py_TPFLAGS_HEAPTYPE  # a class statement in Python


@pytest.mark.claim("bridge.tensor-type.mro")
def test_tensor_derives_from_tensorbase():
    assert torch.Tensor.__mro__ == (torch.Tensor, torch._C.TensorBase, object)
    assert Path(torch.Tensor.backward.__code__.co_filename).parts[-2:] == ("torch", "_tensor.py")


@pytest.mark.claim("bridge.tensor-type.small-python-object")
def test_python_object_does_not_hold_the_data(device):
    pointer = struct.calcsize("P")
    assert torch._C.TensorBase.__basicsize__ == object.__basicsize__ + 3 * pointer
    small = torch.zeros(10, device=device)
    big = torch.zeros(1_000_000, device=device)
    assert big.nbytes == 100_000 * small.nbytes
    assert sys.getsizeof(small) == sys.getsizeof(big)


@pytest.mark.claim("bridge.tensor-type.methods-split")
def test_where_tensor_methods_live():
    base_dict, tensor_dict = torch._C.TensorBase.__dict__, torch.Tensor.__dict__
    for name in ("add", "mul", "sum", "view", "size", "add_"):
        assert name in base_dict and name not in tensor_dict, name
        assert type(base_dict[name]).__name__ == "method_descriptor", name
    for name in ("shape", "grad", "requires_grad", "grad_fn"):
        assert type(base_dict[name]).__name__ == "getset_descriptor", name
    assert torch.Tensor.add.__qualname__ == "TensorBase.add"
    for name in ("backward", "register_hook", "__repr__", "storage", "__reduce_ex__"):
        fn = tensor_dict[name]
        assert inspect.isfunction(fn), name
        assert Path(fn.__code__.co_filename).name == "_tensor.py", name


PYTHON_WRAPPERS = {
    "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_tensors", "cartesian_prod",
    "cdist", "chain_matmul", "einsum", "meshgrid", "norm", "split", "stft", "tensordot",
    "unique_consecutive",
}


@pytest.mark.claim("bridge.tensor-type.torch-namespace")
def test_torch_functions_are_builtins_with_fifteen_wrappers():
    vf = torch._C._VariableFunctions
    assert torch.add is vf.add
    assert type(torch.add).__name__ == "builtin_function_or_method"
    public = [n for n in dir(vf) if not n.startswith("_")]
    replaced = {n for n in public if getattr(torch, n, None) is not getattr(vf, n)}
    assert replaced == PYTHON_WRAPPERS | {"unique_dim"}
    for name in PYTHON_WRAPPERS:
        fn = getattr(torch, name)
        assert inspect.isfunction(fn) and fn.__module__ == "torch.functional", name
    assert not hasattr(torch, "unique_dim") and "unique_dim" in torch.PRIVATE_OPS


@pytest.mark.claim("bridge.tensor-type.yaml-placement")
def test_yaml_decides_where_a_binding_appears():
    assert re.search(r"^  variants: function, method$", yaml_entry("add.Tensor"), re.M)
    assert hasattr(torch, "add") and hasattr(torch.Tensor, "add")
    assert re.search(r"^  variants: method$", yaml_entry("new_zeros"), re.M)
    assert hasattr(torch.Tensor, "new_zeros") and not hasattr(torch, "new_zeros")
    assert "variants:" not in yaml_entry("zeros")  # default: function only
    assert hasattr(torch, "zeros") and not hasattr(torch.Tensor, "zeros")
    assert re.search(r"^  python_module: nn$", yaml_entry("linear"), re.M)
    assert torch.nn.functional.linear is torch._C._nn.linear
    assert not hasattr(torch._C._VariableFunctions, "linear") and not hasattr(torch, "linear")


@pytest.mark.claim("bridge.tensor-type.schema-from-yaml")
def test_registered_schema_is_the_yaml_line():
    aten = torch.ops.aten
    for yaml_name, op in (("add.Tensor", aten.add.Tensor), ("linear", aten.linear.default),
                          ("new_zeros", aten.new_zeros.default), ("max.dim", aten.max.dim)):
        func_line = yaml_entry(yaml_name).splitlines()[0].removeprefix("- func: ")
        assert str(op._schema) == "aten::" + func_line, yaml_name
