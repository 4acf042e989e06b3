"""An API census of one torch build, recorded with each matrix run and diffed between versions.

Run as ``python -m verified.releases.census`` by the Python of a version's environment: it prints one
JSON object with
- ``dispatch_keys``: the names of ``torch._C.DispatchKey``'s members;
- ``aten_schemas``: ``{"add.Tensor": "aten::add.Tensor(Tensor self, ...) -> Tensor"}`` for every
  registered ``aten`` operator;
- ``warnings``: per call of CALLS, what it warned (``"FutureWarning: ..."``, ``"none"``), or
  ``"absent: ..."`` / ``"error: ..."`` when the call could not be made;
- ``defaults``: per argument of DEFAULTS, the default's ``repr``, or ``"absent: ..."``.

The lists are fixed here, so two versions' censuses compare entry by entry.
"""
import inspect
import io
import json
import re
import sys
import warnings

ABSENT_ERRORS = (AttributeError, ImportError)


def _script():
    import torch

    def double(x):
        return x * 2

    torch.jit.script(double)


def _trace():
    import torch

    torch.jit.trace(lambda x: x * 2, torch.ones(2))


def _storage():
    import torch

    torch.ones(2).storage()


def _load_default():
    import torch

    buffer = io.BytesIO()
    torch.save({"w": torch.ones(2)}, buffer)
    buffer.seek(0)
    torch.load(buffer)


def _checkpoint_default():
    import torch
    from torch.utils.checkpoint import checkpoint

    checkpoint(lambda x: x.sin(), torch.ones(2, requires_grad=True))


def _cuda_amp_autocast():
    import torch

    with torch.cuda.amp.autocast(enabled=False):
        pass


def _cpu_amp_autocast():
    import torch

    with torch.cpu.amp.autocast(enabled=False):
        pass


def _weight_norm():
    import torch

    torch.nn.utils.weight_norm(torch.nn.Linear(2, 2))


def _meshgrid_no_indexing():
    import torch

    torch.meshgrid(torch.ones(2), torch.ones(3))


def _range():
    import torch

    torch.range(0, 3)


def _upsample():
    import torch

    torch.nn.functional.upsample(torch.ones(1, 1, 2), scale_factor=2)


def _set_default_tensor_type():
    import torch

    torch.set_default_tensor_type(torch.FloatTensor)


def _sdp_kernel():
    import torch

    with torch.backends.cuda.sdp_kernel():
        pass


def _lu():
    import torch

    torch.lu(torch.eye(2))


def _functorch_vmap():
    import torch
    from functorch import vmap

    vmap(torch.sin)(torch.ones(2))


def _jit_save_load():
    import torch

    buffer = io.BytesIO()
    torch.jit.save(torch.jit.trace(torch.nn.Identity(), torch.ones(1)), buffer)
    buffer.seek(0)
    torch.jit.load(buffer)


CALLS = {
    "torch.jit.script(a function)": _script,
    "torch.jit.trace(a function)": _trace,
    "torch.jit.save / torch.jit.load": _jit_save_load,
    "Tensor.storage()": _storage,
    "torch.load(f) without weights_only": _load_default,
    "checkpoint(fn, x) without use_reentrant": _checkpoint_default,
    "torch.cuda.amp.autocast(enabled=False)": _cuda_amp_autocast,
    "torch.cpu.amp.autocast(enabled=False)": _cpu_amp_autocast,
    "torch.nn.utils.weight_norm(module)": _weight_norm,
    "torch.meshgrid(a, b) without indexing": _meshgrid_no_indexing,
    "torch.range(0, 3)": _range,
    "torch.nn.functional.upsample(...)": _upsample,
    "torch.set_default_tensor_type(torch.FloatTensor)": _set_default_tensor_type,
    "torch.backends.cuda.sdp_kernel()": _sdp_kernel,
    "torch.lu(A)": _lu,
    "functorch.vmap(fn)": _functorch_vmap,
}

# (importable owner, attribute path, argument): the defaults users trip on.
DEFAULTS = [
    ("torch", "load", "weights_only"),
    ("torch", "load", "mmap"),
    ("torch.utils.checkpoint", "checkpoint", "use_reentrant"),
    ("torch", "compile", "mode"),
    ("torch", "compile", "dynamic"),
    ("torch", "compile", "fullgraph"),
    ("torch", "compile", "backend"),
    ("torch.export", "export", "strict"),
    ("torch.optim", "Optimizer.zero_grad", "set_to_none"),
    ("torch.nn", "Module.zero_grad", "set_to_none"),
    ("torch.nn", "Module.load_state_dict", "strict"),
    ("torch.nn", "Module.load_state_dict", "assign"),
    ("torch.optim", "Adam.__init__", "foreach"),
    ("torch.optim", "Adam.__init__", "fused"),
    ("torch.optim", "SGD.__init__", "lr"),
    ("torch.autograd", "grad", "allow_unused"),
    ("torch.autograd", "grad", "materialize_grads"),
    ("torch.autograd", "backward", "retain_graph"),
    ("torch.nn.utils", "clip_grad_norm_", "error_if_nonfinite"),
    ("torch.nn.utils", "clip_grad_norm_", "foreach"),
    ("torch.utils.data", "DataLoader.__init__", "num_workers"),
    ("torch.utils.data", "DataLoader.__init__", "pin_memory"),
    ("torch.utils.data", "DataLoader.__init__", "persistent_workers"),
    ("torch", "save", "_use_new_zipfile_serialization"),
    ("torch.nn.parallel", "DistributedDataParallel.__init__", "find_unused_parameters"),
    ("torch.nn.parallel", "DistributedDataParallel.__init__", "static_graph"),
    ("torch.nn.functional", "interpolate", "align_corners"),
    ("torch.nn.functional", "grid_sample", "align_corners"),
    ("torch.nn", "TransformerEncoderLayer.__init__", "batch_first"),
    ("torch.nn", "TransformerEncoderLayer.__init__", "norm_first"),
    ("torch.nn", "MultiheadAttention.__init__", "batch_first"),
    ("torch.distributed", "init_process_group", "timeout"),
]


def _first_line(text):
    """The first line, without the C++ source path some warnings append (it names the build machine)."""
    line = (str(text).strip().splitlines() or [""])[0]
    return re.sub(r"\s*\(Triggered internally at [^)]*\)", "", line)[:240]


def what_it_warns(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
        except ABSENT_ERRORS as exc:
            return f"absent: {type(exc).__name__}: {_first_line(exc)}"
        except Exception as exc:  # noqa: BLE001 - recorded, not raised: the census goes on
            return f"error: {type(exc).__name__}: {_first_line(exc)}"
    found = [w for w in caught if issubclass(w.category, (DeprecationWarning, FutureWarning, UserWarning))]
    return "; ".join(sorted({f"{w.category.__name__}: {_first_line(w.message)}" for w in found})) or "none"


def default_of(module_name, attribute, argument):
    import importlib

    try:
        target = importlib.import_module(module_name)
        for part in attribute.split("."):
            target = getattr(target, part)
        parameter = inspect.signature(target).parameters.get(argument)
    except ABSENT_ERRORS as exc:
        return f"absent: {type(exc).__name__}: {_first_line(exc)}"
    except (TypeError, ValueError) as exc:  # no signature (a builtin)
        return f"absent: no signature ({_first_line(exc)})"
    if parameter is None:
        return "absent: no such argument"
    return "required" if parameter.default is inspect.Parameter.empty else repr(parameter.default)


def census():
    import torch

    schemas = {}
    for schema in torch._C._jit_get_all_schemas():
        if schema.name.startswith("aten::"):
            name = schema.name[len("aten::"):] + (f".{schema.overload_name}" if schema.overload_name else "")
            schemas[name] = str(schema)
    return {
        "torch": torch.__version__,
        "dispatch_keys": sorted(torch._C.DispatchKey.__members__),
        "aten_schemas": dict(sorted(schemas.items())),
        "warnings": {label: what_it_warns(call) for label, call in CALLS.items()},
        "defaults": {f"{module}.{attribute}({argument}=)": default_of(module, attribute, argument)
                     for module, attribute, argument in DEFAULTS},
    }


def diff(older, newer):
    """What changed from one census to the next: keys, schemas, warnings, defaults."""
    old_schemas, new_schemas = older.get("aten_schemas", {}), newer.get("aten_schemas", {})
    old_keys, new_keys = set(older.get("dispatch_keys", [])), set(newer.get("dispatch_keys", []))
    return {
        "dispatch_keys": {"added": sorted(new_keys - old_keys), "removed": sorted(old_keys - new_keys)},
        "operators": {"before": len(old_schemas), "after": len(new_schemas),
                      "added": sorted(set(new_schemas) - set(old_schemas)),
                      "removed": sorted(set(old_schemas) - set(new_schemas)),
                      "changed": [{"name": n, "before": old_schemas[n], "after": new_schemas[n]}
                                  for n in sorted(set(old_schemas) & set(new_schemas))
                                  if old_schemas[n] != new_schemas[n]]},
        "warnings": _changed(older.get("warnings", {}), newer.get("warnings", {})),
        "defaults": _changed(older.get("defaults", {}), newer.get("defaults", {})),
    }


def _changed(before, after):
    return [{"item": key, "before": before.get(key, "not recorded"), "after": after.get(key, "not recorded")}
            for key in sorted(set(before) | set(after)) if before.get(key) != after.get(key)]


if __name__ == "__main__":
    warnings.simplefilter("ignore")  # only what_it_warns looks at warnings
    json.dump(census(), sys.stdout)
