"""
A custom ``autograd.Function`` in the graph
===========================================

``Cube`` computes ``x ** 3`` with its own ``forward`` and ``backward``. The script records
what each method sees when it runs (grad mode, the identity of ``ctx``) and then walks the
output's ``grad_fn`` as in the graph figure, printing each node's class and that class's
direct base.

The output's ``grad_fn`` is an instance of the class generated for ``Cube``, named
``CubeBackward``, whose direct base is ``BackwardCFunction``, and its edge leads to ``x``'s
``AccumulateGrad`` :claim-ref:`autograd.function.node-class`; ``forward`` runs with grad
mode off :claim-ref:`autograd.function.forward-no-grad`, and the ``ctx`` both methods receive
is that ``grad_fn`` object :claim-ref:`autograd.function.ctx-is-node`.
"""
import matplotlib.pyplot as plt
import torch

log = []  # (step, what the script observed)


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        log.append(("forward", f"grad mode on: {torch.is_grad_enabled()}\nid(ctx) = {id(ctx):#x}"))
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        log.append(("backward", f"id(ctx) = {id(ctx):#x}\ngrad_out = {grad_out.tolist()}"))
        return grad_out * 3 * x ** 2


x = torch.tensor([1.0, 2.0], requires_grad=True)
y = Cube.apply(x)
log.append(("after apply", f"id(y.grad_fn) = {id(y.grad_fn):#x}\n"
                           f"grad mode on: {torch.is_grad_enabled()}"))
out = (y * 2).sum()

chain, node = [], out.grad_fn
while node is not None:
    chain.append(node)
    node = node.next_functions[0][0] if node.next_functions else None
out.backward()
log.append(("x.grad", f"{x.grad.tolist()}\n(3 x² · 2 = {(6 * x.detach() ** 2).tolist()})"))
for step, text in log:
    print(f"{step:12s}", text.replace("\n", "; "))

# %%
# Left: the chain of nodes from ``out`` to ``x``, each with its class and that class's direct
# base. Right: what the script observed, in the order it happened.

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2), gridspec_kw={"width_ratios": [1, 1.2]})
for i, node in enumerate(chain):
    cls = type(node)
    base = cls.__bases__[0].__name__ if cls.__bases__ else ""
    highlight = node is y.grad_fn
    left.text(0.5, -i, f"{node.name()}\nclass {cls.__name__}({base})", ha="center", va="center", fontsize=8,
              bbox={"boxstyle": "round", "facecolor": "tab:orange" if highlight else "0.9", "alpha": 0.6})
    if i:
        left.annotate("", xy=(0.5, -i + 0.3), xytext=(0.5, -i + 0.7), arrowprops={"arrowstyle": "->"})
left.set_xlim(0, 1)
left.set_ylim(-len(chain) + 0.4, 0.6)
left.axis("off")
left.set_title("out.grad_fn, following next_functions", fontsize=9)
for i, (step, text) in enumerate(log):
    right.text(0.02, -i, step, fontsize=9, fontweight="bold", va="center")
    right.text(0.32, -i, text, fontsize=8, va="center", family="monospace")
right.set_xlim(0, 1)
right.set_ylim(-len(log) + 0.4, 0.6)
right.axis("off")
right.set_title("what forward, backward and the caller saw, in order", fontsize=9)
fig.tight_layout()
plt.show()
