"""
How many operators, and who implements them
===========================================

Counts read from this torch: the ``- func:`` entries written in ``native_functions.yaml``,
the operators torchgen makes of them once ``autogen:`` lines are expanded, the ``aten``
operators the dispatcher actually holds, and then, for a few dispatch keys, how many
``aten`` operators register a kernel there.

The 2021 census counted 2055 ``- func:`` entries :claim-ref:`dispatch.yaml.census`, and
torchgen's parser gives more operators than there are entries, because ``autogen:`` lines
add overloads of their own :claim-ref:`dispatch.yaml.autogen-and-extras`.
"""
import re
from pathlib import Path

import matplotlib.pyplot as plt
import torch
import torchgen
from torchgen.gen import parse_native_yaml
from torchgen.model import SchemaKind

native = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native"
written = re.findall(r"^- func: ", (native / "native_functions.yaml").read_text(), re.M)
parsed = parse_native_yaml(str(native / "native_functions.yaml"), str(native / "tags.yaml")).native_functions
registered = [name for name in torch._C._dispatch_get_all_op_names() if name.startswith("aten::")]
from_yaml = {"aten::" + str(f.func.name) for f in parsed}
outside = sorted(set(registered) - from_yaml)

print(f"torch {torch.__version__}")
print(f"- func: entries written in native_functions.yaml: {len(written)} (2055 in 2021)")
print(f"native functions after torchgen expands autogen:  {len(parsed)}")
print(f"aten operators in the dispatcher:                 {len(registered)}")
print(f"... registered from C++ outside the yaml:         {len(outside)}: {', '.join(outside)}")

kinds = {kind: sum(1 for f in parsed if f.func.kind() == kind) for kind in SchemaKind}
structured = sum(1 for f in parsed if f.structured)
delegates = sum(1 for f in parsed if f.structured_delegate is not None)
print({kind.name: n for kind, n in kinds.items()}, f"structured: {structured}, delegating: {delegates}")

# %%
# Left: where the operators come from. Right: how many ``aten`` operators have a kernel
# registered under each key. An alias key's kernel counts once, even though it fills many
# slots of the table: the one Autograd kernel fills every ``Autograd<Backend>`` slot
# :claim-ref:`dispatch.table.autograd-alias-slots`, and a CompositeImplicitAutograd kernel
# the backend and autograd slots :claim-ref:`dispatch.table.implicit-vs-explicit`.

keys = ["Autograd", "Meta", "ADInplaceOrView", "CPU", "CompositeExplicitAutograd", "CompositeImplicitAutograd",
        "FuncTorchBatched", "CompositeExplicitAutogradNonFunctional", "SparseCPU", "AutocastCPU", "BackendSelect"]
per_key = {key: sum(1 for name in torch._C._dispatch_get_registrations_for_dispatch_key(key)
                    if name.startswith("aten::")) for key in keys}
for key, n in per_key.items():
    print(f"{key:40s} {n}")

fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2), gridspec_kw={"width_ratios": [1, 1.6]})
labels = ["2021 census", "written\n(- func:)", "after\nautogen", "in the\ndispatcher"]
values = [2055, len(written), len(parsed), len(registered)]
bars = left.bar(labels, values, color=["#bbbbbb", "#4c72b0", "#55a868", "#dd8452"])
left.bar_label(bars)
left.set_ylabel("aten operators (overloads)")
left.set_title("native_functions.yaml and the dispatcher")
right.barh(list(per_key)[::-1], list(per_key.values())[::-1], color="#8172b3")
for y, n in enumerate(list(per_key.values())[::-1]):
    right.text(n, y, f" {n}", va="center", fontsize=8)
right.set_xlabel("aten operators with a kernel registered under the key")
right.set_title("kernels per dispatch key")
fig.tight_layout()
plt.show()
