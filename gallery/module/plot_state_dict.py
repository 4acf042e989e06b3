"""
What ``state_dict()`` returns, and what loading it does
=======================================================

For ``Sequential(Linear(2, 3), ReLU(), BatchNorm1d(3))`` the script lists every entry of
``state_dict()`` and asks each one, live: is it one of the module's parameters or buffers,
does it require grad, does it share memory (``data_ptr()``) with the module's own tensor,
and, after ``load_state_dict`` into a fresh model of the same shape, does that model's
tensor keep its own memory and the same ``Parameter`` object.

The keys and their order are those of :claim-ref:`module.state-dict.keys`; the entries are
plain tensors sharing memory with the module's :claim-ref:`module.state-dict.aliases`, and a
normal load copies into the existing parameters :claim-ref:`module.state-dict.load-copies`.
"""
import matplotlib.pyplot as plt
import torch
from torch import nn


def make():
    return nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.BatchNorm1d(3))


torch.manual_seed(0)
model = make()
own = dict(model.named_parameters()) | dict(model.named_buffers())
state = model.state_dict()

fresh = make()
fresh_before = dict(fresh.named_parameters()) | dict(fresh.named_buffers())
fresh.load_state_dict(state)
fresh_after = dict(fresh.named_parameters()) | dict(fresh.named_buffers())

questions = ["parameter\n(else buffer)", "entry is a\nParameter", "entry requires\ngrad",
             "same data_ptr\nas the module's", "after load: same\nobject as before",
             "after load: own\nmemory", "after load:\nequal values"]
rows = {}
for key, value in state.items():
    rows[key] = [key in dict(model.named_parameters()), isinstance(value, nn.Parameter),
                 value.requires_grad, value.data_ptr() == own[key].data_ptr(),
                 fresh_after[key] is fresh_before[key],
                 fresh_after[key].data_ptr() != value.data_ptr(),
                 torch.equal(fresh_after[key], value)]
    print(f"{key:22s} {str(value.dtype):14s}", rows[key])

# %%
# Green: yes; grey: no. One row per entry of ``state_dict()``, in its order.

fig, ax = plt.subplots(figsize=(10.5, 3.8))
grid = [[1.0 if answer else 0.0 for answer in answers] for answers in rows.values()]
ax.imshow(grid, cmap="Greens", vmin=-0.3, vmax=1.0, aspect="auto")
for i, answers in enumerate(rows.values()):
    for j, answer in enumerate(answers):
        ax.text(j, i, "yes" if answer else "no", ha="center", va="center", fontsize=8,
                color="white" if answer else "black")
ax.set_xticks(range(len(questions)), questions, fontsize=8)
ax.xaxis.tick_top()
ax.set_yticks(range(len(rows)), [f"{k} ({state[k].dtype})".replace("torch.", "") for k in rows], fontsize=8)
ax.set_xticks([x - 0.5 for x in range(1, len(questions))], minor=True)
ax.set_yticks([y - 0.5 for y in range(1, len(rows))], minor=True)
ax.grid(which="minor", color="white", linewidth=2)
ax.tick_params(which="minor", length=0)
fig.tight_layout()
plt.show()
