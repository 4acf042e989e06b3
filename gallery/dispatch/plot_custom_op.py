"""
A custom operator, from its definition to its gradient
======================================================

This script defines ``gallery_ops::soft_clip`` (``limit * tanh(x / limit)``,
which squashes values smoothly into ``(-limit, limit)``), looks at what the definition
registered, gives it a fake kernel and a backward formula, lets ``opcheck`` test the
registrations, and finally compares its gradient with the one autograd derives from the
same formula written with ordinary operators.

``torch.library.custom_op`` infers the operator's schema from the function's type
annotations :claim-ref:`dispatch.python.custom-op-schema`.
"""

import matplotlib.pyplot as plt
import torch
from torch.library import custom_op, opcheck
from torch.utils._python_dispatch import TorchDispatchMode


@custom_op("gallery_ops::soft_clip", mutates_args=())
def soft_clip(x: torch.Tensor, limit: float) -> torch.Tensor:
    return limit * torch.tanh(x / limit)


# %%
# The schema inferred from the type annotations, and the kernels registered so far.
# Right after its definition a custom op has three registrations, Meta, Autograd and
# CompositeExplicitAutograd, all from ``torch/_library/custom_ops.py``
# :claim-ref:`dispatch.python.custom-op-end-to-end`.

print(torch.ops.gallery_ops.soft_clip.default._schema)
for line in torch._C._dispatch_dump("gallery_ops::soft_clip").splitlines():
    if " registered at " in line and not line.startswith("debug"):
        key, _, where = line.partition(": registered at ")
        path = where.split(" :: ")[0].rsplit(":", 1)[0]
        print(f"  {key:34s} {path.rsplit('site-packages/', 1)[-1]}")

# %%
# Before ``register_fake`` a call on a meta tensor raises an error saying that no fake
# implementation was registered :claim-ref:`dispatch.python.custom-op-no-fake`, and before
# ``register_autograd`` the forward pass runs but ``backward()`` raises
# :claim-ref:`dispatch.python.custom-op-no-autograd`.

try:
    soft_clip(torch.ones(3, device="meta"), 2.0)
except RuntimeError as error:
    print("meta:", str(error).split(".")[0])
x = torch.ones(3, requires_grad=True)
try:
    soft_clip(x, 2.0).sum().backward()
except RuntimeError as error:
    print("backward:", str(error).splitlines()[0])


@soft_clip.register_fake
def _(x, limit):
    return torch.empty_like(x)


def setup_context(ctx, inputs, output):
    x, limit = inputs
    ctx.save_for_backward(output)
    ctx.limit = limit


def backward(ctx, grad):
    (y,) = ctx.saved_tensors
    # d/dx limit * tanh(x / limit) = 1 - tanh^2 = 1 - (y / limit)^2
    return grad * (1 - (y / ctx.limit) ** 2), None


soft_clip.register_autograd(backward, setup_context=setup_context)
print("meta now:", soft_clip(torch.ones(3, device="meta"), 2.0))

# %%
# ``opcheck`` runs the operator through the schema, autograd-registration, fake-tensor and
# ahead-of-time-autograd tests :claim-ref:`dispatch.python.custom-op-opcheck`.

print(opcheck(soft_clip, (torch.randn(5, requires_grad=True), 1.5)))

# %%
# The operator called under a dispatch mode: the script prints the calls the mode saw
# and the type of the output's ``grad_fn``. Below autograd a custom op is one opaque call,
# and autograd records one node for it :claim-ref:`dispatch.python.custom-op-opaque`.


class Ops(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(str(func))
        return func(*args, **(kwargs or {}))


inputs = torch.linspace(-3, 3, 5, requires_grad=True)
with Ops() as ops:
    y = soft_clip(inputs, 1.0)
print("the mode saw:", ops.names, "| grad_fn:", type(y.grad_fn).__name__)

# %%
# The gradient from the registered formula against the one autograd derives from the
# reference expression ``limit * tanh(x / limit)`` written with aten operators.

xs = torch.linspace(-6, 6, 241, requires_grad=True)
ref = torch.linspace(-6, 6, 241, requires_grad=True)
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
for limit, colour in ((1.0, "#4c72b0"), (2.5, "#dd8452")):
    out = soft_clip(xs, limit)
    (grad,) = torch.autograd.grad(out.sum(), xs)
    (grad_ref,) = torch.autograd.grad((limit * torch.tanh(ref / limit)).sum(), ref)
    assert torch.allclose(grad, grad_ref, atol=1e-6)
    left.plot(xs.detach(), out.detach(), color=colour, label=f"limit={limit}")
    right.plot(xs.detach(), grad, color=colour, label=f"registered backward, limit={limit}")
    right.plot(ref.detach()[::12], grad_ref[::12], "o", color=colour, ms=3, label="autograd of the formula")
left.set_title("gallery_ops::soft_clip(x, limit)")
right.set_title("d soft_clip / dx")
for ax in (left, right):
    ax.set_xlabel("x")
    ax.grid(alpha=0.3)
left.legend(fontsize=8)
right.legend(fontsize=7)
fig.tight_layout()
plt.show()
