"""
What SGD with momentum and Adam do, step by step
================================================

A two-element parameter ``w`` starts at ``(-4, 1.5)`` on the quadratic loss
``0.5 * (w[0]**2 + 10 * w[1]**2)``, which is ten times steeper along ``w[1]``. Two optimizers
take 40 steps each from the same start: ``SGD(lr=0.05, momentum=0.9)`` and ``Adam(lr=0.3)``.
After every step the script reads the parameter and the optimizer's own state,
``opt.state[w]``, so everything drawn is what the optimizer held at that moment:

* SGD keeps one entry, ``momentum_buffer`` :claim-ref:`optim.state.lazy`, which starts
  as the first gradient and is then updated in place to ``0.9 * buffer + grad``
  :claim-ref:`optim.state.sgd-momentum-buffer`;
* Adam keeps ``step``, ``exp_avg`` and ``exp_avg_sq``; after the first step ``exp_avg``
  is ``(1 - 0.9) * grad`` and ``exp_avg_sq`` is ``(1 - 0.999) * grad**2``
  :claim-ref:`optim.state.adam`.
"""
import matplotlib.pyplot as plt
import torch

STEPS = 40
START = (-4.0, 1.5)
CURVATURE = torch.tensor([1.0, 10.0])


def loss_fn(w):
    return 0.5 * (CURVATURE * w * w).sum()


def run(make_optimizer, keys):
    w = torch.nn.Parameter(torch.tensor(START))
    opt = make_optimizer([w])
    path, state = [w.detach().clone()], {k: [] for k in keys}
    for _ in range(STEPS):
        opt.zero_grad()
        loss_fn(w).backward()
        opt.step()
        path.append(w.detach().clone())
        for k in keys:
            state[k].append(opt.state[w][k].clone())
    return torch.stack(path), {k: torch.stack(v) for k, v in state.items()}, opt.state[w]


sgd_path, sgd_state, sgd_final = run(lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9),
                                     ["momentum_buffer"])
adam_path, adam_state, adam_final = run(lambda p: torch.optim.Adam(p, lr=0.3),
                                        ["exp_avg", "exp_avg_sq"])

print("SGD state keys: ", list(sgd_final))
print("Adam state keys:", list(adam_final), "step =", adam_final["step"].item())
for name, path in (("SGD", sgd_path), ("Adam", adam_path)):
    print(f"{name:4s} w after {STEPS} steps: {path[-1].tolist()}, loss {loss_fn(path[-1]).item():.2e}")

# %%
# Left: the two paths over the loss contours. Right: each optimizer's state after every
# step, per element of ``w``. Adam's first step moves every element by about ``lr``
# against the sign of its gradient, whatever the gradient's size
# :claim-ref:`optim.step.adam-first-step`, so it has about the same length along both axes
# although the loss is ten times steeper along ``w[1]``.

fig, axes = plt.subplots(2, 2, figsize=(11, 8))
paths, buf_ax = axes[0]
avg_ax, sq_ax = axes[1]

xs = torch.linspace(-4.5, 4.5, 200)
ys = torch.linspace(-2.0, 2.0, 200)
gx, gy = torch.meshgrid(xs, ys, indexing="xy")
paths.contour(gx, gy, 0.5 * (CURVATURE[0] * gx**2 + CURVATURE[1] * gy**2), levels=15, colors="0.8")
for name, path, style in (("SGD, momentum 0.9", sgd_path, "o-"), ("Adam", adam_path, "s-")):
    paths.plot(path[:, 0], path[:, 1], style, markersize=3, label=name)
paths.plot(*START, "k*", markersize=12)
paths.set_xlabel("w[0]")
paths.set_ylabel("w[1]")
paths.set_title("Parameter after each step")
paths.legend()

steps = range(1, STEPS + 1)
for axis, data, title in ((buf_ax, sgd_state["momentum_buffer"], "SGD: state['momentum_buffer']"),
                          (avg_ax, adam_state["exp_avg"], "Adam: state['exp_avg']"),
                          (sq_ax, adam_state["exp_avg_sq"], "Adam: state['exp_avg_sq']")):
    axis.plot(steps, data[:, 0], label="element 0")
    axis.plot(steps, data[:, 1], label="element 1 (10x steeper)")
    axis.axhline(0.0, color="0.6", linewidth=0.8)
    axis.set_xlabel("step")
    axis.set_title(title)
    axis.legend(fontsize=8)
sq_ax.set_yscale("log")
fig.tight_layout()
plt.show()
