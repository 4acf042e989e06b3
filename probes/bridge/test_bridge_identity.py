"""Probes for docs/bridge/identity.md."""
import gc
import re
import sys
import weakref
from pathlib import Path

import pytest
import torch


@pytest.mark.claim("bridge.identity.same-object")
def test_same_cxx_tensor_same_python_object(device):
    x = torch.randn(3, device=device, requires_grad=True)
    y = x.pow(2)
    assert y.grad_fn._saved_self is x  # saved in C++, handed back as the caller's object
    base = torch.zeros(4, device=device)
    view = base[1:]
    assert view._base is base
    assert base.add_(1) is base
    out = torch.empty(4, device=device)
    assert torch.add(base, base, out=out) is out


@pytest.mark.claim("bridge.identity.survives-python-death")
def test_python_object_outlives_its_last_python_reference(device):
    base = torch.zeros(4, device=device)
    base.tag = "set in Python"
    first_id = id(base)
    view = base[1:]
    del base
    gc.collect()
    revived = view._base
    assert id(revived) == first_id
    assert revived.tag == "set in Python"
    assert type(revived) is torch.Tensor


@pytest.mark.claim("bridge.identity.cxx-holds-one-reference")
def test_cxx_side_owns_exactly_one_python_reference(device):
    base = torch.zeros(4, device=device)
    alone = sys.getrefcount(base)
    view1 = base[1:]  # a second C++ owner of base's TensorImpl (the view's recorded base)
    assert sys.getrefcount(base) == alone + 1
    view2 = base[2:]  # a third C++ owner: no further Python reference
    assert sys.getrefcount(base) == alone + 1
    del view1, view2
    gc.collect()
    assert sys.getrefcount(base) == alone


@pytest.mark.claim("bridge.identity.weakrefs")
def test_tensors_take_weak_references(device):
    assert torch._C.TensorBase.__weakrefoffset__ == 0
    # the slot comes from the Python subclass, right after TensorBase's C struct
    assert torch.Tensor.__weakrefoffset__ == torch._C.TensorBase.__basicsize__
    x = torch.randn(3, device=device)
    assert weakref.ref(x)() is x


@pytest.mark.claim("bridge.identity.weakref-leaf-lifetime")
def test_weak_reference_to_a_leaf_lives_with_its_graph(device):
    x = torch.randn(3, device=device, requires_grad=True)
    ref = weakref.ref(x)
    y = x.exp()
    del x
    gc.collect()
    assert ref() is not None  # y's graph (its AccumulateGrad node) still owns x in C++
    del y
    gc.collect()
    assert ref() is None


@pytest.mark.claim("bridge.identity.node-no-weakref")
def test_graph_nodes_take_no_weak_references(device):
    y = torch.randn(3, device=device, requires_grad=True).exp()
    with pytest.raises(TypeError, match="cannot create weak reference to 'ExpBackward0' object"):
        weakref.ref(y.grad_fn)


@pytest.mark.claim("bridge.identity.haspyobject-top-bit")
def test_has_pyobject_flag_is_the_top_bit():
    header = (Path(torch.__file__).parent / "include/c10/util/intrusive_ptr.h").read_text()
    found = re.search(r"constexpr uint64_t kHasPyObject = \(uint64_t\(1\) << (\d+)\);", header)
    assert found is not None
    assert int(found.group(1)) == 63


@pytest.mark.claim("bridge.identity.storage-and-node")
def test_storages_and_nodes_keep_their_python_object(device):
    t = torch.zeros(3, device=device)
    assert t.untyped_storage() is t.untyped_storage()
    assert t[1:].untyped_storage() is t.untyped_storage()


@pytest.mark.claim("bridge.identity.node-same-object")
def test_graph_nodes_keep_their_python_object(device):
    y = torch.randn(2, device=device, requires_grad=True).sin()
    assert y.grad_fn is y.grad_fn


@pytest.mark.claim("bridge.identity.thpvariable-layout")
def test_thpvariable_holds_an_at_tensor():
    header = (Path(torch.__file__).parent / "include/torch/csrc/autograd/python_variable.h").read_text()
    struct = re.search(r"struct THPVariable \{(.*?)\n\};", header, re.S).group(1)
    members = re.findall(r"^\s+([\w:<>*]+\*?)\s+(\w+)(?: = nullptr)?;", struct, re.M)
    assert members == [("at::Tensor", "cdata"), ("PyObject*", "backward_hooks"),
                       ("PyObject*", "post_accumulate_grad_hooks")]
    assert "shared_ptr" not in struct
