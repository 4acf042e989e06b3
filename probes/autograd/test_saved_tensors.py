"""Probes for docs/autograd/saved-tensors.md."""
import gc
import weakref

import pytest
import torch

FREED = r"Trying to backward through the graph a second time \(or directly access saved tensors after they have already been freed\)"
MODIFIED = r"one of the variables needed for gradient computation has been modified by an inplace operation"


def saved_names(node):
    return sorted(n for n in dir(node) if n.startswith("_saved_"))


@pytest.mark.claim("autograd.saved.what-each-node-saves")
def test_nodes_expose_what_they_saved(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    w = torch.tensor([4.0, 5.0, 6.0], device=device, requires_grad=True)
    e = x.exp()
    assert saved_names(e.grad_fn) == ["_saved_result"]
    m = x * w
    assert saved_names(m.grad_fn) == ["_saved_other", "_saved_self"]
    assert m.grad_fn._saved_self is not None and torch.equal(m.grad_fn._saved_self, x)
    assert torch.equal(m.grad_fn._saved_other, w)
    assert saved_names(x.sigmoid().grad_fn) == ["_saved_result"]
    add = (x + w).grad_fn
    assert saved_names(add) == ["_saved_alpha"]  # add saves no tensor, only the scalar alpha
    assert add._saved_alpha == 1


@pytest.mark.claim("autograd.saved.saved-result-new-object")
def test_saved_output_is_a_new_python_object_per_access(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    e = x.exp()
    saved = e.grad_fn._saved_result
    assert torch.equal(saved, e) and saved.data_ptr() == e.data_ptr()
    assert saved is not e  # unpacked into a new Python tensor on each access
    assert e.grad_fn._saved_result is not saved


@pytest.mark.claim("autograd.saved.only-what-is-needed")
def test_mul_saves_only_for_inputs_that_require_grad(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    c = torch.tensor([3.0, 4.0], device=device)  # constant
    node = (x * c).grad_fn
    assert torch.equal(node._saved_other, c)  # needed for dx
    assert node._saved_self is None  # only needed for dc, which nobody asked for


@pytest.mark.claim("autograd.saved.freed-by-backward")
def test_backward_frees_saved_tensors(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x.exp()
    node = y.grad_fn
    y.sum().backward()
    with pytest.raises(RuntimeError, match=FREED):
        node._saved_result
    assert y.grad_fn is node  # the node itself is still there
    assert node.next_functions[0][0].variable is x  # and so are its edges
    x2 = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y2 = x2.exp()
    y2.sum().backward(retain_graph=True)
    y2.sum().backward()
    assert torch.allclose(x2.grad, 2 * x2.detach().exp())


@pytest.mark.claim("autograd.saved.second-backward-fails-only-where-saved")
def test_second_backward_fails_only_through_saved_tensors(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    nothing_saved = (x + 1).sum()
    nothing_saved.backward()
    nothing_saved.backward()  # no error: AddBackward0 and SumBackward0 saved nothing
    assert x.grad.tolist() == [2.0, 2.0]
    x.grad = None
    saved = (x * x).sum()
    saved.backward()
    with pytest.raises(RuntimeError, match=FREED):
        saved.backward()


@pytest.mark.claim("autograd.saved.python-scalar-saved")
def test_a_python_number_factor_is_saved_as_a_tensor(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    doubled = x * 2
    wrapped = doubled.grad_fn._saved_other  # the 2 became a saved 0-dim tensor
    assert wrapped.dim() == 0 and wrapped.item() == 2.0
    scalar = doubled.sum()
    scalar.backward()
    with pytest.raises(RuntimeError, match=FREED):
        scalar.backward()


@pytest.mark.claim("autograd.saved.retain-graph")
def test_retain_graph_keeps_saved_tensors(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()  # allowed; this one frees
    assert x.grad.tolist() == [4.0, 8.0]  # 2x, twice
    with pytest.raises(RuntimeError, match=FREED):
        y.backward()


@pytest.mark.claim("autograd.saved.hooks")
def test_saved_tensors_hooks_pack_and_unpack(device):
    log = []

    def pack(t):
        log.append(("pack", tuple(t.shape)))
        return t.cpu().tolist()  # anything may stand in for the tensor

    def unpack(packed):
        log.append(("unpack", len(packed)))
        return torch.tensor(packed, device=device)

    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = x.exp()
    assert log == [("pack", (3,))]
    y.sum().backward()
    assert log == [("pack", (3,)), ("unpack", 3)]
    assert torch.allclose(x.grad, x.detach().exp())


@pytest.mark.claim("autograd.saved.version-check")
def test_inplace_on_saved_tensor_is_detected(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    y = x.exp()
    assert y._version == 0
    y.add_(1)
    assert y._version == 1
    with pytest.raises(RuntimeError, match=MODIFIED + r".*is at version 1; expected version 0 instead"):
        y.sum().backward()
    x2 = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    y2 = x2.exp()
    (y2 + 1).sum().backward()
    assert torch.allclose(x2.grad, x2.detach().exp())


@pytest.mark.claim("autograd.saved.inplace-rewrites-grad-fn")
def test_inplace_on_unsaved_tensor_is_fine_and_rebases(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x + 1  # AddBackward0 saves nothing
    old = y.grad_fn
    y.mul_(3)  # y is not saved by anyone, so this is allowed
    assert y.grad_fn is not old
    assert y.grad_fn.name() == "MulBackward0"
    assert y.grad_fn.next_functions[0][0] is old
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


@pytest.mark.claim("autograd.saved.data-bypasses-version")
def test_data_bypasses_the_version_counter(device):
    x = torch.tensor([0.5, 1.0, 2.0], device=device, requires_grad=True)
    y = x.sigmoid()  # saves its result y
    d = y.data
    assert not d.requires_grad and d.untyped_storage().data_ptr() == y.untyped_storage().data_ptr()
    d.mul_(0)  # same bytes, separate version counter
    assert y._version == 0 and d._version == 1
    y.sum().backward()  # no error
    assert x.grad.abs().sum().item() == 0.0  # silently wrong: sigmoid' is never 0

    x.grad = None
    y = x.sigmoid()
    y.detach().mul_(0)  # shares the version counter
    assert y._version == 1
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()


@pytest.mark.claim("autograd.saved.leaf-inplace")
def test_inplace_on_leaf_that_requires_grad(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place operation"):
        x[0].mul_(2)
    with torch.no_grad():
        x.add_(1)
        x[0].mul_(2)
    assert x.tolist() == [4.0, 3.0] and x.requires_grad


@pytest.mark.claim("autograd.saved.leaf-inplace-no-grad")
def test_inplace_on_leaf_allowed_under_no_grad(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    with torch.no_grad():
        x.add_(1)
    assert x.is_leaf and x.requires_grad and x._version == 1
    assert x.tolist() == [2.0, 3.0]


@pytest.mark.claim("autograd.saved.graph-keeps-activations")
def test_graph_keeps_saved_activations_alive(device):
    x = torch.ones(1000, device=device, requires_grad=True)
    y = x.exp()  # saved by ExpBackward0
    z = y.sum()
    ref = weakref.ref(y)
    del y
    gc.collect()
    assert ref() is None  # the Python object is gone ...
    saved = z.grad_fn.next_functions[0][0]._saved_result
    assert saved.numel() == 1000  # ... the data is still held by the graph
    del saved
    z.backward()
    with pytest.raises(RuntimeError, match=FREED):
        z.grad_fn.next_functions[0][0]._saved_result


@pytest.mark.claim("autograd.saved.unpack-must-return-tensor")
def test_unpack_hook_must_return_a_tensor(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda packed: 5):
        y = x.exp()
    with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a Tensor but got result of type int"):
        y.sum().backward()


@pytest.mark.claim("autograd.saved.hooks-built-on")
def test_offloading_and_checkpointing_are_saved_tensors_hooks():
    import torch.utils.checkpoint as checkpoint

    hooks = torch.autograd.graph.saved_tensors_hooks
    assert issubclass(torch.autograd.graph.save_on_cpu, hooks)
    assert issubclass(checkpoint._checkpoint_hook, hooks)
    assert issubclass(checkpoint._recomputation_hook, hooks)
