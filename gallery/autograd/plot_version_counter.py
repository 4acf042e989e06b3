"""
The version counter and in-place detection
==========================================

Handles on one saved tensor, changed in place in different ways: the script reads every
handle's ``_version`` and whether backward noticed. Everything below is measured from
live tensors.

An in-place operation (``add_``, ``mul_``, ``copy_``, ...) increments ``_version`` by one,
on a tensor and on all its views alike :claim-ref:`tensor.view.version-counter-shared`;
``detach()`` shares the counter too :claim-ref:`tensor.view.detach-shares-version`.
Backward raises when a tensor it saved is no longer at the version it was saved at
:claim-ref:`autograd.saved.version-check`. ``.data`` gives an alias whose changes bump only
its own counter, so backward does not notice them and returns a wrong gradient
:claim-ref:`autograd.saved.data-bypasses-version`.
"""
import matplotlib.pyplot as plt
import torch

# %%
# Left: one tensor ``y`` and four handles on its memory; ``SigmoidBackward0`` saves its
# output, ``y`` :claim-ref:`autograd.saved.what-each-node-saves`. After each in-place step
# the script reads every handle's ``_version``.

x = torch.tensor([0.5, 1.0, 2.0, -1.0], requires_grad=True)
y = x.sigmoid()
handles = {"y": y, "y[:2] (view)": y[:2], "y.detach()": y.detach(), "y.data": y.data}
steps = [
    ("start", lambda: None),
    ("y.mul_(1)", lambda: y.mul_(1)),
    ("y[:2].add_(0)", lambda: handles["y[:2] (view)"].add_(0)),
    ("y.detach().mul_(1)", lambda: handles["y.detach()"].mul_(1)),
    ("y.data.add_(0)", lambda: handles["y.data"].add_(0)),
    ("y.data.mul_(1)", lambda: handles["y.data"].mul_(1)),
]
history = {name: [] for name in handles}
for _, step in steps:
    step()
    for name, t in handles.items():
        history[name].append(t._version)

# %%
# Right: five fresh copies of the same graph, each changed once in a different way
# (halving the saved output), then differentiated. The script records whether backward raised,
# and how far the gradient it produced is from the true one.

def true_grad():
    x = torch.tensor([0.5, 1.0, 2.0, -1.0], requires_grad=True)
    x.sigmoid().sum().backward()
    return x.grad


reference = true_grad()
ways = {
    "untouched": lambda y: None,
    "y.mul_(0.5)": lambda y: y.mul_(0.5),
    "y[:2].mul_(0.5)": lambda y: y[:2].mul_(0.5),
    "y.detach().mul_(0.5)": lambda y: y.detach().mul_(0.5),
    "y.data.mul_(0.5)": lambda y: y.data.mul_(0.5),
}
outcomes = {}
for name, change in ways.items():
    x = torch.tensor([0.5, 1.0, 2.0, -1.0], requires_grad=True)
    y = x.sigmoid()
    out = y.sum()  # taken before the change: it reaches SigmoidBackward0 directly
    saved_at = y._version  # what SigmoidBackward0 recorded when it saved y
    change(y)
    try:
        (g,) = torch.autograd.grad(out, x)
        outcomes[name] = ("no error", (g - reference).abs().max().item(), y._version, saved_at)
    except RuntimeError as err:
        assert "modified by an inplace operation" in str(err)
        outcomes[name] = ("RuntimeError", None, y._version, saved_at)

fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8))
labels = [s for s, _ in steps]
for offset, (name, versions) in enumerate(history.items()):
    left.plot(range(len(labels)), [v + 0.04 * offset for v in versions], marker="o", label=name)
left.set_xticks(range(len(labels)), labels, rotation=25, ha="right", fontsize=8)
left.set_ylabel("_version (lines nudged apart)")
left.set_title("y, its view and y.detach() share one counter; y.data has its own", fontsize=9)
left.legend(fontsize=8)

names = list(outcomes)
for i, name in enumerate(names):
    kind, err, version, saved_at = outcomes[name]
    if kind == "RuntimeError":
        right.text(0.002, i, f"RuntimeError: modified by an inplace operation (version {version}, saved at {saved_at})",
                   va="center", fontsize=8, color="tab:red")
    else:
        wrong = err > 1e-6
        right.barh(i, max(err, 0.001), color="tab:orange" if wrong else "tab:green")  # 0.001: visible
        right.text(max(err, 0.001) + 0.002, i,
                   f"no error, version {version}: " + ("gradient WRONG" if wrong else "gradient exact"),
                   va="center", fontsize=8)
right.set_yticks(range(len(names)), names, fontsize=8)
right.invert_yaxis()
right.set_xlim(0, 0.3)
right.set_xlabel("max |gradient - true gradient|")
right.set_title("the same change (halve the saved output), made five ways", fontsize=9)
fig.tight_layout()
for name, (kind, err, version, _saved_at) in outcomes.items():
    print(f"{name:22s} version={version}  {kind}" + (f", max |grad error| = {err:.4f}" if err is not None else ""))
plt.show()
