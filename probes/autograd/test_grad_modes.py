"""Probes for docs/autograd/grad-modes.md."""
import re
import threading

import pytest
import torch

DispatchKey = torch._C.DispatchKey


@pytest.mark.claim("autograd.modes.no-grad-records-nothing")
def test_no_grad_records_and_saves_nothing(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    packed = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        with torch.no_grad():
            y = x.exp()
            assert not torch.is_grad_enabled()
        assert packed == []  # nothing was saved for backward
        z = x.exp()
        assert len(packed) == 1
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad and z.grad_fn is not None


@pytest.mark.claim("autograd.modes.switches")
def test_enable_grad_and_set_grad_enabled(device):
    x = torch.ones(2, device=device, requires_grad=True)
    with torch.no_grad():
        with torch.enable_grad():
            assert (x * 2).grad_fn is not None
        assert (x * 2).grad_fn is None


@pytest.mark.claim("autograd.modes.set-grad-enabled")
def test_set_grad_enabled_as_context_and_call(device):
    x = torch.ones(2, device=device, requires_grad=True)
    with torch.set_grad_enabled(False):
        assert (x * 2).grad_fn is None
    with torch.set_grad_enabled(True):
        assert (x * 2).grad_fn is not None
    torch.set_grad_enabled(False)  # also works as a plain call
    try:
        assert not torch.is_grad_enabled()
    finally:
        torch.set_grad_enabled(True)
    assert torch.is_grad_enabled()


@pytest.mark.claim("autograd.modes.decorators")
def test_no_grad_and_set_grad_enabled_as_decorators(device):
    x = torch.ones(2, device=device, requires_grad=True)

    @torch.no_grad()
    def doubled(t):
        return t * 2

    @torch.set_grad_enabled(False)
    def tripled(t):
        return t * 3

    assert doubled(x).grad_fn is None and tripled(x).grad_fn is None
    assert torch.is_grad_enabled() and (x * 2).grad_fn is not None  # only the calls are affected


@pytest.mark.claim("autograd.modes.no-grad-does-not-skip")
def test_what_no_grad_still_does(device):
    t = torch.ones(4, device=device)
    with torch.no_grad():
        v0 = t._version
        t.add_(1)
        assert t._version == v0 + 1  # version counters still bump


@pytest.mark.claim("autograd.modes.no-grad-views-record-base")
def test_views_record_their_base_under_no_grad(device):
    x = torch.ones(4, device=device, requires_grad=True)
    with torch.no_grad():
        v = x[:2]
        assert v._base is x and v._is_view()  # views still record their base


@pytest.mark.claim("autograd.modes.no-grad-explicit-requires-grad")
def test_explicit_requires_grad_honoured_under_no_grad(device):
    with torch.no_grad():
        f = torch.ones(2, device=device, requires_grad=True)
        assert f.requires_grad and f.is_leaf  # an explicit requires_grad=True is honoured
        p = torch.nn.Parameter(torch.ones(2, device=device))
        assert p.requires_grad


@pytest.mark.claim("autograd.modes.no-grad-keeps-existing-graph")
def test_no_grad_leaves_existing_graph_alone(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x.exp()
    with torch.no_grad():
        z = y * 2  # not recorded
        assert z.grad_fn is None
        assert torch.equal(y.grad_fn._saved_result, y)  # y's graph still holds its saved tensor
    y.sum().backward()
    assert torch.allclose(x.grad, x.detach().exp())


@pytest.mark.claim("autograd.modes.no-grad-view-then-inplace")
def test_view_made_under_no_grad_cannot_be_modified_with_grad(device):
    x = torch.ones(3, device=device, requires_grad=True).clone()
    with torch.no_grad():
        v = x[:2]
    assert v.requires_grad and v.grad_fn is None
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being modified inplace with grad mode enabled"):
        v.mul_(2)
    with torch.no_grad():
        v.mul_(2)
    assert x[:2].tolist() == [2.0, 2.0]


@pytest.mark.claim("autograd.modes.thread-local")
@pytest.mark.devices("cpu")
def test_grad_mode_is_thread_local(device):
    seen = {}
    with torch.no_grad():
        t = threading.Thread(target=lambda: seen.setdefault("worker", torch.is_grad_enabled()))
        t.start()
        t.join(timeout=30)
        seen["main"] = torch.is_grad_enabled()
    assert not t.is_alive()
    assert seen == {"worker": True, "main": False}

    def disable_in_worker():
        torch.set_grad_enabled(False)
        seen["worker after"] = torch.is_grad_enabled()

    t = threading.Thread(target=disable_in_worker)
    t.start()
    t.join(timeout=30)
    assert not t.is_alive()
    assert seen["worker after"] is False and torch.is_grad_enabled()


@pytest.mark.claim("autograd.modes.inference-tensors")
def test_inference_mode_makes_inference_tensors(device):
    x = torch.ones(3, device=device, requires_grad=True)
    normal = torch.ones(3, device=device)
    with torch.inference_mode():
        assert torch.is_inference_mode_enabled() and not torch.is_grad_enabled()
        made = torch.ones(3, device=device)
        from_grad = x * 2
    assert made.is_inference() and from_grad.is_inference()
    assert not from_grad.requires_grad
    assert not normal.is_inference()


@pytest.mark.claim("autograd.modes.inference-keys")
def test_inference_tensors_lack_autograd_keys(device):
    normal = torch.ones(3, device=device)
    with torch.inference_mode():
        made = torch.ones(3, device=device)
    keys = torch._C._dispatch_keys(made)
    assert not keys.has(DispatchKey.ADInplaceOrView)
    assert not keys.has(DispatchKey.AutogradCPU) and not keys.has(DispatchKey.AutogradCUDA)
    normal_keys = torch._C._dispatch_keys(normal)
    assert normal_keys.has(DispatchKey.ADInplaceOrView)
    assert normal_keys.has(DispatchKey.AutogradCPU if device == "cpu" else DispatchKey.AutogradCUDA)


@pytest.mark.claim("autograd.modes.inference-view-of-normal")
def test_inference_mode_view_of_a_normal_tensor_is_normal(device):
    normal = torch.ones(3, device=device)
    with torch.inference_mode():
        view = normal[:2]
    assert not view.is_inference() and view._base is normal  # a view of a normal tensor stays normal


@pytest.mark.claim("autograd.modes.inference-no-version")
def test_inference_tensors_have_no_version_counter(device):
    with torch.inference_mode():
        made = torch.ones(3, device=device)
    with pytest.raises(RuntimeError, match="Inference tensors do not track version counter"):
        made._version
    with torch.no_grad():
        kept = torch.ones(3, device=device)
    assert kept._version == 0


@pytest.mark.claim("autograd.modes.inference-tensor-limits")
def test_inference_tensors_outside_inference_mode(device):
    x = torch.ones(3, device=device, requires_grad=True)
    with torch.inference_mode():
        i = torch.ones(3, device=device)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        x * i
    assert (x + i).requires_grad  # add saves nothing, so an inference tensor is accepted there
    assert (x * i.clone()).requires_grad


@pytest.mark.claim("autograd.modes.inference-clone-normal")
def test_clone_of_an_inference_tensor_is_normal(device):
    x = torch.ones(3, device=device, requires_grad=True)
    with torch.inference_mode():
        i = torch.ones(3, device=device)
    ok = i.clone()
    assert i.is_inference() and not ok.is_inference()
    (x * ok).sum().backward()  # saved for backward without complaint
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
    before = ok._version  # it has a version counter
    ok.add_(1)  # and in-place updates outside inference mode are allowed
    assert ok._version == before + 1


@pytest.mark.claim("autograd.modes.inference-inplace-fails-after-writing")
def test_inplace_on_inference_tensor_raises_after_the_write(device):
    with torch.inference_mode():
        i = torch.ones(3, device=device)
        i.add_(1)  # fine inside inference mode
    assert i.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode is not allowed"):
        i.add_(1)
    assert i.tolist() == [3.0, 3.0, 3.0]  # the kernel already wrote: the check comes at the version bump
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode is not allowed"):
        i.copy_(torch.zeros(3, device=device))
    assert i.tolist() == [0.0, 0.0, 0.0]
    c = i.clone()
    c.add_(1)
    assert c.tolist() == [1.0, 1.0, 1.0] and not c.is_inference()


BUMP_SCRIPT = """
import torch
with torch.inference_mode():
    i = torch.ones(3)
try:
    i.add_(1)
except RuntimeError as err:
    print(str(err))
"""


@pytest.mark.claim("autograd.modes.inference-inplace-raised-in-bump")
def test_inference_inplace_error_is_raised_from_version_bump():
    import os
    import subprocess
    import sys

    env = dict(os.environ, TORCH_SHOW_CPP_STACKTRACES="1", TORCH_DISABLE_ADDR2LINE="1")
    out = subprocess.run([sys.executable, "-c", BUMP_SCRIPT], env=env, capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert "Inplace update to inference tensor outside InferenceMode is not allowed" in out
    assert re.search(r"Exception raised from bump at \S*c10/core/TensorImpl\.h:\d+", out)
