"""Probes for the saved-tensor-hook and in-place claims added to
docs/autograd/saved-tensors.md (checked against the official note "Autograd mechanics")."""
import gc
import os
import threading
import uuid

import pytest
import torch
from torch.autograd.graph import saved_tensors_hooks


def _counting_hooks(calls):
    def pack(t):
        calls["pack"] += 1
        return t.detach().clone()

    def unpack(obj):
        calls["unpack"] += 1
        return obj

    return pack, unpack


@pytest.mark.claim("autograd.saved.hooks-unpack-per-access")
def test_pack_once_unpack_per_access(device):
    calls = {"pack": 0, "unpack": 0}
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    with saved_tensors_hooks(*_counting_hooks(calls)):
        y = x.exp()
    assert calls == {"pack": 1, "unpack": 0}
    y.grad_fn._saved_result
    y.grad_fn._saved_result
    assert calls == {"pack": 1, "unpack": 2}
    y.sum().backward()
    assert calls == {"pack": 1, "unpack": 3}
    assert torch.allclose(x.grad, x.detach().exp())


@pytest.mark.claim("autograd.saved.hooks-metadata-restored")
def test_unpacked_plain_tensor_gets_autograd_metadata_back(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    # pack to a Python list; unpack to a brand-new tensor that knows nothing about autograd
    with saved_tensors_hooks(lambda t: t.tolist(), lambda lst: torch.tensor(lst, device=device)):
        y = x.exp()
        z = x.pow(2)
    r = y.grad_fn._saved_result
    assert r.requires_grad and r.grad_fn is y.grad_fn  # an output of ExpBackward0 again
    s = z.grad_fn._saved_self
    assert s.requires_grad and s.is_leaf and s.grad_fn is None
    (y + z).sum().backward()
    assert torch.allclose(x.grad, x.detach().exp() + 2 * x.detach())


@pytest.mark.claim("autograd.saved.hooks-to-disk")
def test_pack_to_file_unpack_with_torch_load(tmp_path):
    class TempFile:
        def __init__(self):
            self.name = os.path.join(tmp_path, str(uuid.uuid4()))

        def __del__(self):
            os.remove(self.name)

    def pack(t):
        f = TempFile()
        torch.save(t, f.name)
        return f

    def unpack(f):
        return torch.load(f.name)  # default arguments: weights_only loading of a tensor

    x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(pack, unpack):
        y = x.sin()
    assert len(os.listdir(tmp_path)) == 1
    y.sum().backward()
    assert torch.allclose(x.grad, x.detach().cos())
    del y
    gc.collect()
    assert os.listdir(tmp_path) == []  # the file went with the graph


@pytest.mark.claim("autograd.saved.hooks-pack-inplace-error")
def test_pack_hook_may_not_modify_its_input(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="A saved tensor pack hook is modifying its input in place"):
        with saved_tensors_hooks(lambda t: t.mul_(2), lambda obj: obj):
            x.sin()


@pytest.mark.claim("autograd.saved.hooks-unpack-inplace-silent")
def test_unpack_hook_modifying_its_input_goes_unnoticed(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach().clone(), lambda obj: obj.mul_(0)):
        y = x.sin()
    y.sum().backward()  # no error: sin's backward saw zeros instead of x
    assert x.grad.tolist() == [1.0, 1.0]  # cos(0), not cos(x)
    assert not torch.allclose(x.grad, x.detach().cos())


@pytest.mark.claim("autograd.saved.raw-saved-register-hooks")
def test_register_hooks_on_one_saved_tensor(device):
    calls = {"pack": 0, "unpack": 0}
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x.pow(2)
    raw = y.grad_fn._raw_saved_self
    assert isinstance(raw, torch._C._autograd.SavedTensor)
    raw.register_hooks(*_counting_hooks(calls))
    assert calls == {"pack": 1, "unpack": 0}  # packed at registration
    y.grad_fn._saved_self
    assert calls == {"pack": 1, "unpack": 1}
    y.sum().backward()
    assert calls == {"pack": 1, "unpack": 2}
    assert x.grad.tolist() == [2.0, 4.0]


@pytest.mark.claim("autograd.saved.raw-saved-after-release")
def test_register_hooks_after_backward_raises(device):
    calls = {"pack": 0, "unpack": 0}
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x.pow(2)
    raw = y.grad_fn._raw_saved_self
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Calling register_hooks on a saved tensor after it has been freed"):
        raw.register_hooks(*_counting_hooks(calls))
    assert calls == {"pack": 0, "unpack": 0}


@pytest.mark.claim("autograd.saved.hooks-thread-local")
@pytest.mark.timeout(60)
def test_default_hooks_do_not_reach_other_threads():
    calls = {"pack": 0, "unpack": 0}
    out = {}

    def worker():
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        out["b"] = a.exp()

    with saved_tensors_hooks(*_counting_hooks(calls)):
        th = threading.Thread(target=worker)
        th.start()
        th.join(30)
        assert not th.is_alive()
        assert calls["pack"] == 0  # the other thread's exp saved its output without the hooks
        torch.tensor([1.0], requires_grad=True).exp()
    assert calls["pack"] == 1  # the same operation on this thread was packed
    assert out["b"].grad_fn is not None


@pytest.mark.claim("autograd.saved.hooks-new-objects")
def test_hooks_give_new_objects_on_the_same_memory(device):
    x = torch.randn(5, device=device, requires_grad=True)
    y = x * x
    assert y.grad_fn._saved_self is x and y.grad_fn._saved_other is x
    with saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
        x = torch.randn(5, device=device, requires_grad=True)
        y = x * x
    s, o = y.grad_fn._saved_self, y.grad_fn._saved_other
    assert s is not x and o is not x and s is not o
    assert s.data_ptr() == x.data_ptr() == o.data_ptr()  # no copy


@pytest.mark.claim("autograd.saved.inplace-with-views-allowed")
def test_inplace_while_other_tensors_share_the_storage(device):
    # the base is modified in place while a view of it exists
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    b = x * 1
    v = b[1:]
    b.mul_(2)
    assert v._version == 1 and type(v.grad_fn).__name__ == "AsStridedBackward0"
    (v * v).sum().backward()
    assert x.grad.tolist() == [0.0, 16.0, 24.0]  # d/dx of (2x)^2 on the last two elements


@pytest.mark.claim("autograd.saved.view-inplace-copyslices")
def test_inplace_on_a_view_rewrites_the_base_history(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    b = x * 1
    b[1:].mul_(3)
    assert type(b.grad_fn).__name__ == "CopySlices"
    b.sum().backward()
    assert x.grad.tolist() == [1.0, 3.0, 3.0]
