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
    assert spec.origin.endswith(".so")


@pytest.mark.claim("bridge.tensor-type.tensorbase-static")
def test_tensorbase_is_a_static_c_type():
    base = torch._C.TensorBase
    assert base.__module__ == "torch._C"
    assert not base.__flags__ & Py_TPFLAGS_HEAPTYPE  # a static type defined in C
    assert torch.Tensor.__flags__ & Py_TPFLAGS_HEAPTYPE  # a class statement in Python


@pytest.mark.claim("bridge.tensor-type.mro")
def test_tensor_derives_from_tensorbase():
    assert torch.Tensor.__mro__ == (torch.Tensor, torch._C.TensorBase, object)
    assert Path(torch.Tensor.backward.__code__.co_filename).parts[-2:] == ("torch", "_tensor.py")


@pytest.mark.claim("bridge.tensor-type.basicsize")
def test_tensorbase_instance_is_an_object_and_three_pointers():
    pointer = struct.calcsize("P")
    assert pointer == 8
    assert torch._C.TensorBase.__basicsize__ == object.__basicsize__ + 3 * pointer
    assert torch._C.TensorBase.__basicsize__ == 40


@pytest.mark.claim("bridge.tensor-type.small-python-object")
def test_python_object_does_not_hold_the_data(device):
    small = torch.zeros(10, device=device)
    big = torch.zeros(1_000_000, device=device)
    assert big.nbytes == 100_000 * small.nbytes
    assert sys.getsizeof(small) == sys.getsizeof(big)


@pytest.mark.claim("bridge.tensor-type.methods-split")
def test_operator_methods_are_c_methods_of_tensorbase():
    base_dict, tensor_dict = torch._C.TensorBase.__dict__, torch.Tensor.__dict__
    for name in ("add", "mul", "sum", "view", "size", "add_"):
        assert name in base_dict and name not in tensor_dict, name
        assert type(base_dict[name]).__name__ == "method_descriptor", name
    assert torch.Tensor.add.__qualname__ == "TensorBase.add"
    assert repr(torch.Tensor.add) == "<method 'add' of 'torch._C.TensorBase' objects>"


@pytest.mark.claim("bridge.tensor-type.properties-getset")
def test_tensor_properties_are_c_getsets():
    for name in ("shape", "grad", "requires_grad", "grad_fn"):
        assert type(torch._C.TensorBase.__dict__[name]).__name__ == "getset_descriptor", name


@pytest.mark.claim("bridge.tensor-type.python-methods")
def test_some_tensor_methods_are_python_functions():
    for name in ("backward", "register_hook", "__repr__", "storage", "__reduce_ex__"):
        fn = torch.Tensor.__dict__[name]
        assert inspect.isfunction(fn), name
        assert Path(fn.__code__.co_filename).name == "_tensor.py", name


PYTHON_WRAPPERS = {
    "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_tensors", "cartesian_prod",
    "cdist", "chain_matmul", "einsum", "meshgrid", "norm", "split", "stft", "tensordot",
    "unique_consecutive",
}


def public_variable_functions():
    vf = torch._C._VariableFunctions
    return vf, [n for n in dir(vf) if not n.startswith("_")]


@pytest.mark.claim("bridge.tensor-type.torch-namespace")
def test_torch_add_is_the_generated_builtin():
    vf = torch._C._VariableFunctions
    assert torch.add is vf.add
    assert type(torch.add).__name__ == "builtin_function_or_method"
    assert torch.add.__module__ == "torch"


@pytest.mark.claim("bridge.tensor-type.functional-wrappers")
@pytest.mark.torch_version(">=2.13")
def test_fifteen_names_are_python_wrappers():
    vf, public = public_variable_functions()
    wrapped = {n for n in public
               if inspect.isfunction(getattr(torch, n, None))
               and getattr(torch, n).__module__ == "torch.functional"}
    assert wrapped == PYTHON_WRAPPERS
    assert len(wrapped) == 15
    assert torch.einsum.__module__ == "torch.functional"


@pytest.mark.claim("bridge.tensor-type.unique-dim-private")
def test_unique_dim_is_the_one_name_not_exported():
    vf, public = public_variable_functions()
    replaced = {n for n in public if getattr(torch, n, None) is not getattr(vf, n)}
    wrapped = {n for n in public
               if inspect.isfunction(getattr(torch, n, None))
               and getattr(torch, n).__module__ == "torch.functional"}
    assert PYTHON_WRAPPERS <= wrapped <= replaced
    assert replaced - wrapped == {"unique_dim"}
    assert not hasattr(torch, "unique_dim") and "unique_dim" in torch.PRIVATE_OPS


@pytest.mark.claim("bridge.tensor-type.yaml-placement")
def test_function_and_method_variants():
    assert re.search(r"^  variants: function, method$", yaml_entry("add.Tensor"), re.M)
    assert hasattr(torch, "add") and hasattr(torch.Tensor, "add")


@pytest.mark.claim("bridge.tensor-type.variants-method-only")
def test_method_only_variant():
    assert re.search(r"^  variants: method$", yaml_entry("new_zeros"), re.M)
    assert hasattr(torch.Tensor, "new_zeros") and not hasattr(torch, "new_zeros")


@pytest.mark.claim("bridge.tensor-type.variants-default-function")
def test_no_variants_line_means_function_only():
    assert "variants:" not in yaml_entry("zeros")
    assert hasattr(torch, "zeros") and not hasattr(torch.Tensor, "zeros")


@pytest.mark.claim("bridge.tensor-type.python-module")
def test_python_module_moves_the_binding():
    assert re.search(r"^  python_module: nn$", yaml_entry("linear"), re.M)
    assert torch.nn.functional.linear is torch._C._nn.linear
    assert not hasattr(torch._C._VariableFunctions, "linear") and not hasattr(torch, "linear")
    assert re.search(r"^  python_module: linalg$", yaml_entry("linalg_svd"), re.M)
    assert torch.linalg.svd is torch._C._linalg.linalg_svd


@pytest.mark.claim("bridge.tensor-type.schema-from-yaml")
def test_registered_schema_is_the_yaml_line():
    aten = torch.ops.aten
    for yaml_name, op in (("add.Tensor", aten.add.Tensor), ("linear", aten.linear.default),
                          ("new_zeros", aten.new_zeros.default), ("max.dim", aten.max.dim)):
        func_line = yaml_entry(yaml_name).splitlines()[0].removeprefix("- func: ")
        assert str(op._schema) == "aten::" + func_line, yaml_name
