"""Lines inside `.cpp` functions the wheel does not ship, read off errors this build raises there.

A `c10::Error` records where it was thrown. With ``TORCH_SHOW_CPP_STACKTRACES=1`` its message
says "Exception raised from <function> at <file>:<line>" (the compiler's ``__func__``,
``__FILE__`` and ``__LINE__`` at the throw) and is followed by the C++ stack, whose first frame
after the error machinery is the qualified name of the function that threw (when it was not
inlined into its caller). A `CAFFE_ENFORCE` failure says "[enforce fail at <file name>:<line>]"
instead, and its function is that first frame.

`TRIGGERS` is a fixed table: for a repository path and a function, a few lines of Python that
make this build raise an error inside that function. `observe()` runs them all in one child
process with the torch importable there and returns each error's message. The resolver
(`verified.sources.resolver`) caches that per torch build and pins a reference ``path Function`` to the
line the error names (kind ``raise-site``) once `check()` agrees that the function and file are
those of the table. The probes in ``probes/reference/test_raise_sites.py`` assert the same for
every trigger: that its message has one of the two forms above (claim
``reference.sources.raise-message-format``) and names the function and file of the table (claim
``reference.sources.raise-sites``), so a function that moves to another file or is renamed fails
the build rather than leaving a stale line.
"""
import hashlib
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Trigger:
    path: str  # repository path of the .cpp file
    function: str  # as a reference names it: `Owner::name` or `name`
    what: str  # the error, in a few words
    code: str  # Python that raises it (torch, dist and gloo_world() are in scope)


def _t(path, function, what, code):
    return Trigger(path, function, what, code.strip())


_AUTOGRAD = "torch/csrc/autograd/"
TRIGGERS = [
    # the autograd engine and custom functions
    _t(_AUTOGRAD + "engine.cpp", "validate_outputs_impl", "a gradient on the wrong device", """
class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a): return a * 2
    @staticmethod
    def backward(ctx, g): return torch.ones(3, device="meta")
F.apply(torch.ones(3, requires_grad=True)).sum().backward()
"""),
    _t(_AUTOGRAD + "engine.cpp", "Engine::evaluate_function", "a NaN gradient under anomaly detection", """
import warnings
class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a): return a * 2
    @staticmethod
    def backward(ctx, g): return g * float("nan")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    with torch.autograd.detect_anomaly():
        F.apply(torch.ones(3, requires_grad=True)).sum().backward()
"""),
    _t(_AUTOGRAD + "python_engine.cpp", "THPEngine_run_backward", "backward of a tensor that does not require grad",
       "torch.ones(3).sum().backward()"),
    _t(_AUTOGRAD + "python_function.cpp", "PyNode::apply", "a custom backward returning too few gradients", """
class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b): return a + b
    @staticmethod
    def backward(ctx, g): return (g,)
a = torch.ones(3, requires_grad=True)
F.apply(a, a).sum().backward()
"""),
    _t(_AUTOGRAD + "python_function.cpp", "_get_tensors_to_save", "save_for_backward given a non-tensor", """
class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(1)
        return a * 2
    @staticmethod
    def backward(ctx, g): return g
F.apply(torch.ones(3, requires_grad=True))
"""),
    _t(_AUTOGRAD + "custom_function.cpp", "check_variable_result", "a tensor hook returning another shape", """
x = torch.ones(3, requires_grad=True)
y = x * 2
y.register_hook(lambda g: torch.ones(2))
y.sum().backward()
"""),
    # saved variables
    _t(_AUTOGRAD + "saved_variable.cpp", "SavedVariable::unpack", "a saved tensor modified in place before backward",
       """
x = torch.ones(3, requires_grad=True)
y = x.exp()
y.add_(1)
y.sum().backward()
"""),
    _t(_AUTOGRAD + "saved_variable.cpp", "SavedVariable::register_hooks", "a second pair of hooks on a saved tensor",
       """
saved = torch.ones(3, requires_grad=True).exp().grad_fn._raw_saved_result
saved.register_hooks(lambda t: t, lambda t: t)
saved.register_hooks(lambda t: t, lambda t: t)
"""),
    _t(_AUTOGRAD + "python_saved_variable_hooks.cpp", "PySavedVariableHooks::call_unpack_hook",
       "an unpack hook returning a non-tensor", """
x = torch.ones(3, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 1):
    y = x.exp()
y.sum().backward()
"""),
    # variables, views, .grad, indexing
    _t(_AUTOGRAD + "variable.cpp", "handle_view_on_rebase", "an in-place change to one of several views", """
x = torch.ones(3, 2, requires_grad=True).clone()
x.unbind()[0].mul_(2)
"""),
    _t(_AUTOGRAD + "variable.cpp", "VariableHooks::retain_grad", "retain_grad on a tensor that does not require grad",
       "torch.ones(2).retain_grad()"),
    _t(_AUTOGRAD + "VariableTypeManual.cpp", "detach_", "detach_ on a view", """
x = torch.ones(3, requires_grad=True).clone()
x[:2].detach_()
"""),
    _t(_AUTOGRAD + "python_variable.cpp", "THPVariable_set_grad", "assigning a gradient of another size to .grad", """
x = torch.ones(3, requires_grad=True)
x.grad = torch.ones(2)
"""),
    _t(_AUTOGRAD + "python_variable_indexing.cpp", "applySlicing", "more indices than dimensions",
       "torch.ones(3)[0, 0]"),
    # the dispatcher
    _t("aten/src/ATen/core/dispatch/Dispatcher.cpp", "Dispatcher::registerDef", "defining an operator twice", """
lib = torch.library.Library("raise_sites_def", "DEF")
lib.define("f(Tensor x) -> Tensor")
lib.define("f(Tensor x) -> Tensor")
"""),
    _t("aten/src/ATen/core/dispatch/Dispatcher.cpp", "Dispatcher::registerLibrary", "a second library for a namespace",
       'torch.library.Library("aten", "DEF")'),
    _t("aten/src/ATen/core/dispatch/Dispatcher.cpp", "Dispatcher::findSchemaOrThrow", "an operator name with no schema",
       'torch._C._dispatch_find_schema_or_throw("aten::not_an_operator", "")'),
    _t("aten/src/ATen/core/dispatch/OperatorEntry.cpp", "OperatorEntry::reportError", "no kernel for the CPU key", """
lib = torch.library.Library("raise_sites_nokernel", "DEF")
lib.define("f(Tensor x) -> Tensor")
torch.ops.raise_sites_nokernel.f(torch.ones(1))
"""),
    _t("c10/core/DispatchKey.cpp", "parseDispatchKey", "an unknown dispatch key name",
       'torch._C._dispatch_keyset_full_after("NotAKey")'),
    _t("aten/src/ATen/core/library.cpp", "Library::_parseNameForLib", "an impl naming another namespace", """
lib = torch.library.Library("raise_sites_ns", "FRAGMENT")
lib.impl("raise_sites_other::f", lambda x: x, "CPU")
"""),
    # TensorImpl
    _t("c10/core/TensorImpl.cpp", "TensorImpl::set_requires_grad", "requires_grad on an inference tensor", """
with torch.inference_mode():
    t = torch.ones(3)
t.requires_grad_()
"""),
    _t("c10/core/TensorImpl.cpp", "TensorImpl::throw_storage_access_error", "the storage of a sparse tensor",
       "torch.ones(2).to_sparse().untyped_storage()"),
    _t("c10/core/TensorImpl.cpp", "TensorImpl::throw_data_ptr_access_error", "the data pointer of a sparse tensor",
       "torch.ones(2).to_sparse().data_ptr()"),
    # Python argument parsing and tensor construction
    _t("torch/csrc/utils/python_arg_parser.cpp", "PythonArgParser::print_error", "no signature matches the arguments",
       "torch.ones(2).sum(foo=1)"),
    _t("torch/csrc/utils/python_arg_parser.cpp", "extra_args", "too many positional arguments",
       "torch.add(1, 2, 3, 4)"),
    _t("torch/csrc/utils/tensor_new.cpp", "infer_scalar_type", "torch.tensor of a string", 'torch.tensor([1, "a"])'),
    _t("torch/csrc/utils/tensor_new.cpp", "recursive_store", "torch.tensor of a ragged list",
       "torch.tensor([[1, 2], [3]])"),
    _t("torch/csrc/utils/tensor_numpy.cpp", "tensor_to_numpy", "numpy() of a tensor that requires grad",
       "torch.ones(3, requires_grad=True).numpy()"),
    _t("torch/csrc/utils/tensor_numpy.cpp", "numpy_dtype_to_aten", "from_numpy of an array of strings", """
import numpy
torch.from_numpy(numpy.array(["a"]))
"""),
    _t("c10/core/Device.cpp", "parse_type", "an unknown device type", 'torch.device("not_a_device")'),
    # memory
    _t("c10/core/impl/alloc_cpu.cpp", "alloc_cpu", "an allocation larger than memory",
       "torch.empty(2 ** 62, dtype=torch.uint8)"),
    _t("aten/src/ATen/native/Resize.cpp", "resize_bytes_cpu", "resizing a storage that is not resizable",
       "torch.frombuffer(bytearray(4), dtype=torch.uint8).resize_(100)"),
    _t("aten/src/ATen/EmptyTensor.cpp", "computeStorageNbytesContiguous", "a size whose byte count overflows",
       "torch.empty(2 ** 40, 2 ** 40)"),
    # tensors and operators
    _t("aten/src/ATen/native/TensorShape.cpp", "view_impl", "a view across incompatible strides",
       "torch.ones(2, 3).t().view(6)"),
    _t("aten/src/ATen/TensorIterator.cpp", "TensorIteratorBase::compute_types", "an in-place result of a wider dtype",
       "torch.ones(2).add_(torch.ones(2, dtype=torch.complex64))"),
    _t("aten/src/ATen/ExpandUtils.cpp", "infer_size_impl", "shapes that do not broadcast",
       "torch.ones(2) + torch.ones(3)"),
    _t("caffe2/serialize/inline_container.cc", "PyTorchStreamReader::valid", "torch.load of bytes that are not a zip",
       """
import io
torch.load(io.BytesIO(b"PK\\x03\\x04 not a zip archive"))
"""),
    # c10d
    _t("torch/csrc/distributed/c10d/FileStore.cpp", "FileStore::get", "a key that never arrives", """
store = dist.FileStore(os.path.join(tempdir, "filestore"), 1)
store.set_timeout(datetime.timedelta(milliseconds=10))
store.get("missing")
"""),
    _t("torch/csrc/distributed/c10d/ProcessGroup.cpp", "ProcessGroup::getBackend", "a device type with no backend", """
gloo_world()._get_backend(torch.device("meta"))
"""),
    _t("torch/csrc/distributed/c10d/reducer.cpp", "Reducer::ensure_prior_reduction_finished",
       "a DDP parameter that got no gradient", """
gloo_world()
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.used, self.unused = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    def forward(self, x):
        return self.used(x)
ddp = torch.nn.parallel.DistributedDataParallel(Model())
ddp(torch.ones(1, 2)).sum().backward()
ddp(torch.ones(1, 2))
"""),
]
BY_REFERENCE = {(t.path, t.function): t for t in TRIGGERS}

# The child: run each trigger, print {key: {"type", "message"}} as JSON on its last line
# (torch may print to stdout on its own: Gloo 2.9 and 2.10 announce their peer ranks there).
_CHILD = r'''
import datetime, io, json, os, sys, tempfile
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

def gloo_world():
    if not dist.is_initialized():
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    return dist.group.WORLD

seen = {}
with tempfile.TemporaryDirectory() as tempdir:
    for key, code in json.load(sys.stdin):
        try:
            exec(compile(code, key, "exec"), {"torch": torch, "dist": dist, "nn": nn, "F": F, "io": io,
                                              "datetime": datetime, "os": os, "tempdir": tempdir,
                                              "gloo_world": gloo_world})
            seen[key] = {"type": None, "message": ""}
        except BaseException as exc:
            seen[key] = {"type": type(exc).__name__, "message": "\n".join(str(exc).splitlines()[:80])}
print()
print(json.dumps(seen))
'''


def key(trigger):
    return f"{trigger.path} {trigger.function}"


def table_digest(triggers=TRIGGERS):
    """What the observations depend on besides the torch build: the triggers' code."""
    text = json.dumps([[key(t), t.code] for t in triggers]) + _CHILD
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def observe(triggers=TRIGGERS, python=None, timeout=300):
    """{trigger key: {"type", "message"}} from one child process with TORCH_SHOW_CPP_STACKTRACES=1."""
    return observe_code({key(t): t.code for t in triggers}, python=python, timeout=timeout)


def observe_code(cases, python=None, timeout=300, symbolise=True):
    """{case: {"type", "message"}} for {case: code}, each run in turn in one child process with
    TORCH_SHOW_CPP_STACKTRACES=1 (the code sees torch, dist, nn, F, io, datetime, os, tempdir and
    gloo_world). With `symbolise` False the stack frames stay unnamed, which is much faster; the
    "Exception raised from" line does not need them."""
    env = dict(os.environ, TORCH_SHOW_CPP_STACKTRACES="1", CUDA_VISIBLE_DEVICES="")
    if not symbolise:
        env["TORCH_DISABLE_ADDR2LINE"] = "1"
    proc = subprocess.run([python or sys.executable, "-c", _CHILD], input=json.dumps(list(cases.items())),
                          capture_output=True, text=True, env=env, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"the raise-site triggers failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- reading an error

_RAISED = re.compile(r"Exception raised from (?P<function>\S+) at (?P<file>\S+):(?P<line>\d+)")
_ENFORCE = re.compile(r"\[enforce fail at (?P<file>[^\s:]+):(?P<line>\d+)\]")
_FRAME = re.compile(r"^#\d+ (?P<name>.+?) from \S+$", re.M)
_MACHINERY = re.compile(r"^(?:c10::(?:\w*Error|EnforceNotMet)::|c10::ThrowEnforceNotMet\(|c10::detail::torch\w+Fail\(|"
                        r"std::|c10::SetStackTraceFetcher|c10::get_backtrace|c10::Warning)")


@dataclass(frozen=True)
class Raised:
    function: str  # __func__ at the throw (for an enforce failure: the first frame's name)
    file: str  # as __FILE__ gave it: a build path, or a bare file name for an enforce failure
    line: int
    frame: str | None  # qualified name of the first frame after the error machinery, if symbolised


def parse(message):
    """The Raised location in an error message, or None if it names none."""
    frame = first_frame(message)
    match = _RAISED.search(message)
    if match:
        return Raised(match["function"], match["file"], int(match["line"]), frame)
    match = _ENFORCE.search(message)
    if match and frame:
        return Raised(frame.split("::")[-1], match["file"], int(match["line"]), frame)
    return None


def first_frame(message):
    """The qualified name (no arguments, templates or return type) of the first frame that is not
    the error machinery, or None if that frame is not symbolised."""
    for match in _FRAME.finditer(message):
        name = match["name"]
        if _MACHINERY.match(name):
            continue
        return qualified_name(name)
    return None


def qualified_name(frame):
    """`void ns::(anonymous namespace)::f<int>(int) const [clone .cold]` -> `ns::f`; `??` -> None."""
    text = frame.replace("(anonymous namespace)::", "")
    depth, cut = 0, len(text)
    for i, char in enumerate(text):
        if char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
        elif char == "(" and depth == 0:
            cut = i
            break
    head, plain, depth = text[:cut], [], 0
    for char in head:
        if char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
        elif depth == 0:
            plain.append(char)
    name = "".join(plain).split()[-1] if "".join(plain).split() else ""
    return name if re.fullmatch(r"[\w:~]+", name) else None


def check(trigger, raised):
    """None if `raised` is inside trigger.function in trigger.path, else why not.

    The file must be the trigger's (an enforce failure gives only the file name); `__func__`
    must be the function's last name; and where the function has an owner (`Owner::name`),
    the first frame must be that function, so the owner is confirmed, not assumed.
    """
    if raised is None:
        return "the error names no place it was raised from"
    file = raised.file.replace("\\", "/")
    if not (file.endswith("/" + trigger.path) or ("/" not in file and trigger.path.endswith("/" + file))):
        return f"raised in {raised.file}, not {trigger.path}"
    *owners, name = trigger.function.split("::")
    if raised.function != name:
        return f"raised from {raised.function}, not {name}"
    if owners:
        frame = (raised.frame or "").split("::")
        if frame[-len(owners) - 1:] != [*owners, name]:
            return f"the raising frame is {raised.frame or 'not symbolised'}, not {trigger.function}"
    return None


def observed_sites(observed, triggers=TRIGGERS):
    """[(message, {"path", "line", "function"})] of each trigger whose observed error checks out
    (`observed`: what observe() returned): the error index pins a C++ message to its line so."""
    found = []
    for trigger in triggers:
        seen = observed.get(key(trigger))
        if not seen or not seen.get("type"):
            continue
        raised = parse(seen["message"])
        if check(trigger, raised) is None:
            found.append((seen["message"], {"path": trigger.path, "line": raised.line, "function": trigger.function}))
    return found
