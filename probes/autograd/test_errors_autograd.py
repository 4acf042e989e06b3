"""Probes for docs/autograd/errors.md: backward without a graph, arguments of backward/grad, hooks.

Each probe triggers its messages the way the claim's cause says (`pytest.raises` / `pytest.warns`
with the stable part of the message in `match=`), then runs the claim's fix and checks it works.

Chosen from what users ask about (threads read for this page):
- https://github.com/nianticlabs/monodepth2/issues/24 (backward of a loss computed under torch.no_grad)
- https://github.com/yandexdataschool/Practical_RL/pull/368 and https://github.com/pytorch/pytorch/issues/7174
  (detach, no_grad and requires_grad confused)
- https://deadends.dev/pytorch/state-dict-key-mismatch (its list of frequent PyTorch errors names
  "element 0 of tensors does not require grad and does not have a grad_fn")
- the issue text of this site (issue 26: the no-grad-fn entry linked only custom-Function causes)
"""
import re
import warnings

import pytest
import torch
import torch.nn as nn


def lit(text):
    """A regex matching `text` literally."""
    return re.escape(text)


NO_GRAD_FN = r"^element 0 of tensors does not require grad and does not have a grad_fn$"


def leaf():
    return torch.ones(2, requires_grad=True)


# ---------------------------------------------------------------- backward of something that has no graph

@pytest.mark.claim("autograd.errors.no-grad-fn-under-no-grad")
def test_no_grad_fn_from_no_grad():
    w = leaf()
    with torch.no_grad():
        loss = (w * 2).sum()
    assert loss.grad_fn is None and not loss.requires_grad
    with pytest.raises(RuntimeError, match=NO_GRAD_FN):
        loss.backward()
    loss = (w * 2).sum()  # the same computation outside no_grad
    loss.backward()
    assert w.grad.tolist() == [2.0, 2.0]


@pytest.mark.claim("autograd.errors.no-grad-fn-detached")
def test_no_grad_fn_from_detach():
    w = leaf()
    with pytest.raises(RuntimeError, match=NO_GRAD_FN):
        (w * 2).detach().sum().backward()
    with pytest.raises(RuntimeError, match=NO_GRAD_FN):
        torch.tensor((w * 2).tolist()).sum().backward()  # a round trip through Python numbers cuts the graph too
    (w * 2).sum().backward()
    assert w.grad.tolist() == [2.0, 2.0]


@pytest.mark.claim("autograd.errors.no-grad-fn-no-requires-grad")
def test_no_grad_fn_without_requires_grad():
    w = torch.ones(2)  # a parameter made as a plain tensor
    with pytest.raises(RuntimeError, match=NO_GRAD_FN):
        (w * 2).sum().backward()
    frozen = nn.Linear(2, 1)
    frozen.requires_grad_(False)
    with pytest.raises(RuntimeError, match=NO_GRAD_FN):
        frozen(torch.ones(1, 2)).sum().backward()
    w.requires_grad_()
    (w * 2).sum().backward()
    assert w.grad.tolist() == [2.0, 2.0]
    frozen.weight.requires_grad_(True)
    frozen(torch.ones(1, 2)).sum().backward()
    assert frozen.weight.grad.tolist() == [[1.0, 1.0]] and frozen.bias.grad is None


# ---------------------------------------------------------------- arguments of backward() and grad()

@pytest.mark.claim("autograd.errors.empty-inputs")
@pytest.mark.torch_version(">=2.13")
def test_empty_inputs():
    w = leaf()
    with pytest.raises(RuntimeError, match=r"^`inputs` argument to `grad\(\)` cannot be empty\.$"):
        torch.autograd.grad((w * 2).sum(), [])
    with pytest.raises(RuntimeError, match=r"^`inputs` argument to `backward\(\)` cannot be empty\.$"):
        (w * 2).sum().backward(inputs=[])
    assert torch.autograd.grad((w * 2).sum(), [w])[0].tolist() == [2.0, 2.0]


@pytest.mark.claim("autograd.errors.tensors-gradients-count")
def test_tensors_and_gradients_count():
    w = leaf()
    y = w * 2
    with pytest.raises(RuntimeError, match=r"^got 2 tensors and 1 gradients$"):
        torch.autograd.backward([y, y * 3], [torch.ones(2)])
    torch.autograd.backward([y, y * 3], [torch.ones(2), torch.ones(2)])
    assert w.grad.tolist() == [8.0, 8.0]


@pytest.mark.claim("autograd.errors.jacobian-output-type")
def test_jacobian_output_type():
    with pytest.raises(TypeError, match=lit("The outputs of the user-provided function given to jacobian must be "
                                            "either a Tensor or a tuple of Tensors but the given outputs of the "
                                            "user-provided function has type <class 'float'>.")):
        torch.autograd.functional.jacobian(lambda x: (x ** 2).sum().item(), torch.ones(2))
    assert torch.autograd.functional.jacobian(lambda x: (x ** 2).sum(), torch.ones(2)).tolist() == [2.0, 2.0]


@pytest.mark.claim("autograd.errors.forward-grad-size")
def test_forward_gradient_size():
    import torch.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match=lit("Trying to set a forward gradient that has a different size than "
                                                   "that of the original Tensor, this is not supported. Tensor is of "
                                                   "size [2] while the given forward gradient is of size [3].")):
            fwAD.make_dual(torch.ones(2), torch.ones(3))
        dual = fwAD.make_dual(torch.ones(2), torch.ones(2))
        assert fwAD.unpack_dual(dual * 3).tangent.tolist() == [3.0, 3.0]


@pytest.mark.claim("autograd.errors.data-integer")
def test_set_data_to_integer():
    w = leaf()
    with pytest.raises(RuntimeError, match=lit("data set to a tensor that requires gradients must be floating point "
                                               "or complex dtype")):
        w.data = torch.ones(2, dtype=torch.long)
    with torch.no_grad():
        w.copy_(torch.ones(2, dtype=torch.long) * 3)  # copy_ casts into w's own dtype
    assert w.dtype == torch.float32 and w.tolist() == [3.0, 3.0]


@pytest.mark.claim("autograd.errors.volatile-removed")
def test_variable_volatile_removed():
    from torch.autograd import Variable
    with pytest.warns(UserWarning, match=lit("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                                             "instead.")):
        v = Variable(torch.ones(2), volatile=True)
    assert isinstance(v, torch.Tensor)
    with torch.no_grad():
        assert not (leaf() * 2).requires_grad


@pytest.mark.claim("autograd.errors.non-leaf-grad-warning")
def test_non_leaf_grad_access_warning():
    w = leaf()
    y = w * 2
    y.sum().backward(retain_graph=True)
    with pytest.warns(UserWarning, match=lit("The .grad attribute of a Tensor that is not a leaf Tensor is being "
                                             "accessed. Its .grad attribute won't be populated during "
                                             "autograd.backward().")):
        assert y.grad is None
    z = w * 2
    z.retain_grad()
    z.sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert z.grad.tolist() == [1.0, 1.0]


# ---------------------------------------------------------------- hooks

@pytest.mark.claim("autograd.errors.hook-changed-value")
def test_tensor_hook_changes_size_or_type():
    for bad, word in ((lambda g: torch.ones(3), "size"), (lambda g: g.double(), "type")):
        w = leaf()
        y = w * 2
        y.register_hook(bad)
        with pytest.raises(RuntimeError, match=rf"^hook '<lambda>' has changed the {word} of value"):
            y.sum().backward()
    with pytest.raises(RuntimeError, match=lit("hook '<lambda>' has changed the type of value (was torch.FloatTensor "
                                               "got torch.DoubleTensor)")):
        w = leaf()
        w.register_hook(lambda g: g.double())
        (w * 2).sum().backward()
    w = leaf()
    w.register_hook(lambda g: g * 10)  # same size and dtype: accepted
    (w * 2).sum().backward()
    assert w.grad.tolist() == [20.0, 20.0]


@pytest.mark.claim("autograd.errors.module-hook-kinds")
def test_regular_and_full_backward_hooks():
    m = nn.Linear(2, 2)
    m.register_backward_hook(lambda *args: None)
    with pytest.raises(RuntimeError, match=lit("Cannot use both regular backward hooks and full backward hooks on a "
                                               "single Module. Please use only one of them.")):
        m.register_full_backward_hook(lambda *args: None)  # refused when it is registered
    seen = []
    n = nn.Linear(2, 2)
    n.register_full_backward_hook(lambda mod, grad_in, grad_out: seen.append(grad_out[0].shape))
    n(torch.ones(1, 2, requires_grad=True)).sum().backward()
    assert seen == [(1, 2)]


@pytest.mark.claim("autograd.errors.non-full-hook-warning")
def test_non_full_backward_hook_warning():
    class TwoOps(nn.Module):
        def forward(self, x):
            return x * 2 + 1

    m = TwoOps()
    m.register_backward_hook(lambda *args: None)
    with pytest.warns(FutureWarning, match=lit("Using a non-full backward hook when the forward contains multiple "
                                               "autograd Nodes is deprecated and will be removed in future versions.")):
        m(torch.ones(2, requires_grad=True)).sum().backward()
    n = TwoOps()
    n.register_full_backward_hook(lambda *args: None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        n(torch.ones(2, requires_grad=True)).sum().backward()


@pytest.mark.claim("autograd.errors.full-hook-return")
def test_full_backward_hook_return_value():
    m = nn.Linear(2, 2)
    m.register_full_backward_hook(lambda mod, grad_in, grad_out: (grad_in[0], grad_in[0]))
    with pytest.raises(RuntimeError, match=r"^Backward hook returned an invalid number of grad_input, got 2, but "
                                           r"expected 1$"):
        m(torch.ones(1, 2, requires_grad=True)).sum().backward()
    n = nn.Linear(2, 2)
    n.register_full_backward_hook(lambda mod, grad_in, grad_out: (torch.ones(3),))
    with pytest.raises(RuntimeError, match=r"^hook 'hook' has changed the size of value$"):
        n(torch.ones(1, 2, requires_grad=True)).sum().backward()
    k = nn.Linear(2, 2)
    k.register_full_backward_hook(lambda mod, grad_in, grad_out: (grad_in[0] * 0,))
    x = torch.ones(1, 2, requires_grad=True)
    k(x).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0]]
