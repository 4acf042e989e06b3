"""Probes for docs/compile/torchscript-errors.md: the errors of torch.jit.script, the warnings and
errors of torch.jit.trace, and loading TorchScript files.

Each probe triggers its message as the claim's cause says and shows that the fix works.
torch.jit.script and torch.jit.trace warn that they are deprecated (checked on the TorchScript
page); that warning is ignored here.
A message whose text changed between releases is checked as a pair of probes, each bounded
with torch_version to the releases it holds on (the 2.14 wording next to the 2.13 one).
torch.jit.script reads a function's source from this file on disk, by line number: a run
during which the file is edited compiles the wrong lines (a recorded 2.9.1 column once failed
15 of these probes that way), so record the matrix from a tree that stays put.

Chosen from what users report:
- https://github.com/pytorch/pytorch/issues/36117 (Arguments for call are not valid / list(tensor))
- https://github.com/pytorch/pytorch/issues/10795 and #6073 (wrong argument types to a script function)
- https://github.com/pytorch/pytorch/issues/48795 (Python type cannot be used as a value)
- https://github.com/pytorch/pytorch/issues/24256 (Unknown builtin op, unsupported constructs)
- https://github.com/pytorch/pytorch/issues/42391 (Only tuples, lists and Variables supported as JIT inputs/outputs)
- https://errorcanon.top/errors/pytorch/torchscript-dynamic-control-flow/ (trace and data-dependent control flow)
"""
import io
import re
import warnings

import pytest
import torch
from torch.jit import TracerWarning

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def lit(text):
    """A regex matching `text` literally."""
    return re.escape(text)


def script(fn):
    return torch.jit.script(fn)


def trace(fn, *args, **kwargs):
    return torch.jit.trace(fn, args, **kwargs)


# ------------------------------------------------------------------ script: types


def add_str(x):
    return x + "a"


def add_number(x):
    return x + 1.5


@pytest.mark.claim("compile.tserr.call-not-valid")
def test_no_overload_accepts_the_argument_types():
    with pytest.raises(RuntimeError, match=lit("Arguments for call are not valid.")) as info:
        script(add_str)
    text = str(info.value)
    assert "The following variants are available:" in text
    assert "Expected a value of type 'Tensor' for argument 'other' but instead found type 'str'." in text
    assert script(add_number)(torch.zeros(1)).item() == 1.5


def optional_plus(x: torch.Tensor | None):
    return x + 1


def optional_refined(x: torch.Tensor | None):
    if x is None:
        return torch.zeros(1)
    return x + 1


@pytest.mark.claim("compile.tserr.optional-not-refined")
def test_optional_used_without_a_none_check():
    with pytest.raises(RuntimeError, match=lit("Expected a value of type 'Tensor' for argument 'self' but instead "
                                               "found type 'Optional[Tensor]'.")):
        script(optional_plus)
    refined = script(optional_refined)
    assert refined(torch.ones(1)).item() == 2.0 and refined(None).item() == 0.0


def int_sum(x: int):
    return x.sum()


def tensor_numpy(x):
    return x.numpy()


@pytest.mark.claim("compile.tserr.no-attribute")
def test_attribute_the_type_does_not_have():
    with pytest.raises(RuntimeError, match=lit("'int' object has no attribute or method 'sum'.")):
        script(int_sum)
    with pytest.raises(RuntimeError, match=lit("'Tensor (inferred)' object has no attribute or method 'numpy'.")):
        script(tensor_numpy)

    def tensor_sum(x: torch.Tensor):
        return x.sum()

    assert script(tensor_sum)(torch.ones(3)).item() == 3.0


def changes_type(x):
    y = 1
    if bool(x.sum() > 0):
        y = "a"
    return y


def keeps_type(x):
    y = "b"
    if bool(x.sum() > 0):
        y = "a"
    return y


@pytest.mark.claim("compile.tserr.variable-retyped")
def test_variable_assigned_two_types():
    with pytest.raises(RuntimeError, match=lit("Variable 'y' previously had type int but is now being assigned to a "
                                               "value of type str")):
        script(changes_type)
    assert script(keeps_type)(torch.ones(1)) == "a"


def empty_list_of_ints(x):
    values = []
    values.append(1)
    return values


def typed_list_of_ints(x):
    values: list[int] = []
    values.append(1)
    return values


def mixed_keys(x):
    return {1: x, "a": x}


def string_keys(x):
    return {"1": x, "a": x}


@pytest.mark.claim("compile.tserr.container-types")
def test_empty_containers_and_mixed_keys():
    with pytest.raises(RuntimeError, match=lit("Could not match type int to t in argument 'el': Type variable 't' "
                                               "previously matched to type Tensor is matched to type int.")):
        script(empty_list_of_ints)
    with pytest.raises(RuntimeError, match=lit("Dict keys must contain only a single type. Expected: int but found "
                                               "str instead")):
        script(mixed_keys)
    assert script(typed_list_of_ints)(torch.ones(1)) == [1]
    assert set(script(string_keys)(torch.ones(1))) == {"1", "a"}


def bad_default(x: int, y: int = "a"):
    return x


@pytest.mark.claim("compile.tserr.default-type")
def test_default_value_of_the_wrong_type():
    with pytest.raises(RuntimeError, match=lit('Expected a default value of type int on parameter "y".')):
        script(bad_default)

    def good_default(x: int, y: int = 2):
        return x + y

    assert script(good_default)(1) == 3


def unannotated_default(x, n=3):
    return x * n


def annotated_default(x, n: int = 3):
    return x * n


def unannotated_none_default(x, mask=None):
    return x


@pytest.mark.claim("compile.tserr.default-unannotated")
def test_default_value_of_a_parameter_without_annotation():
    with pytest.raises(RuntimeError, match="^\n" + lit(
            'Expected a default value of type Tensor (inferred) on parameter "n".Because "n" was not annotated '
            "with an explicit type it is assumed to be type 'Tensor'.")) as info:
        script(unannotated_default)
    assert "def unannotated_default(x, n=3):" in str(info.value)
    assert script(annotated_default)(torch.ones(2)).tolist() == [3.0, 3.0]
    assert script(unannotated_none_default)(torch.ones(2)).tolist() == [1.0, 1.0]


def unpack_three(x):
    a, b = x, x, x  # noqa: F841 (the error under test)
    return a


@pytest.mark.claim("compile.tserr.unpack")
def test_unpacking_the_wrong_number_of_values():
    with pytest.raises(RuntimeError, match=lit("too many values to unpack: need 2 but found 3")):
        script(unpack_three)

    def unpack_two(x):
        _, b = x, x + 1
        return b

    assert script(unpack_two)(torch.zeros(1)).item() == 1.0


# ------------------------------------------------------------------ script: Python it does not compile


def nested_def(x):
    def inner(y):
        return y
    return inner(x)


def imports(x):
    import math
    return x * math.pi


def tries(x):
    try:
        return x
    except Exception:
        return x


def uses_global(x):
    global COUNTER
    return x


def makes_lambda(x):
    return lambda y: y


def generates(x):
    yield x


@pytest.mark.claim("compile.tserr.unsupported-statement")
def test_statements_the_script_compiler_rejects():
    from torch.jit.frontend import UnsupportedNodeError

    for fn, what in [(nested_def, "function definitions aren't supported"),
                     (imports, "import statements aren't supported"),
                     (tries, "try blocks aren't supported"),
                     (uses_global, "global variables aren't supported"),
                     (makes_lambda, "Lambda aren't supported"),
                     (generates, "Yield aren't supported")]:
        with pytest.raises(UnsupportedNodeError, match=lit(what)):
            script(fn)

    @torch.jit.ignore
    def helper(x: torch.Tensor) -> torch.Tensor:  # left to Python: may use anything
        import math
        return x * math.pi

    def calls_helper(x):
        return helper(x)

    assert abs(script(calls_helper)(torch.ones(1)).item() - 3.14159) < 1e-5


def varargs(x, *args):
    return x


@pytest.mark.claim("compile.tserr.varargs")
def test_functions_with_varargs():
    from torch.jit.frontend import NotSupportedError

    with pytest.raises(NotSupportedError, match=lit("Compiled functions can't take variable number of arguments or "
                                                    "use keyword-only arguments with defaults")):
        script(varargs)

    def explicit(x, y: torch.Tensor | None = None):
        return x if y is None else x + y

    assert script(explicit)(torch.ones(1)).item() == 1.0


def opens_file(x):
    with open("a"):
        pass
    return x


def prints_to(x):
    print(x, file=None)
    return x


@pytest.mark.claim("compile.tserr.python-builtin")
def test_python_builtins_the_compiler_does_not_know():
    with pytest.raises(RuntimeError, match=lit("Python builtin <built-in function open> is currently not supported in "
                                               "Torchscript")):
        script(opens_file)
    with pytest.raises(RuntimeError, match=lit("print doesn't accept any keyword arguments")):
        script(prints_to)

    def prints(x):
        print(x)
        return x

    assert script(prints)(torch.ones(1)).item() == 1.0


class Holder:
    pass


HELD = Holder()


def returns_held(x):
    return HELD


def unknown_torch_function(x):
    return torch.nonexistent_fn(x)


@pytest.mark.claim("compile.tserr.python-value")
def test_closed_over_python_object_and_unknown_function():
    with pytest.raises(RuntimeError, match=lit("python value of type 'Holder' cannot be used as a value. Perhaps it is "
                                               "a closed over global variable?")):
        script(returns_held)
    with pytest.raises(RuntimeError, match=lit("object has no attribute nonexistent_fn")):
        script(unknown_torch_function)

    def passes_it_in(x, scale: float):
        return x * scale

    assert script(passes_it_in)(torch.ones(1), 2.0).item() == 2.0


@pytest.mark.claim("compile.tserr.script-builtin-class")
def test_script_of_something_that_is_not_a_function_or_module():
    with pytest.raises(TypeError, match=lit("<class 'int'> is a built-in class")):
        torch.jit.script(3)  # an object, not a function, class or module
    assert isinstance(torch.jit.script(torch.nn.ReLU()), torch.jit.ScriptModule)


@pytest.mark.claim("compile.tserr.no-source")
def test_script_of_a_function_without_source_file():
    namespace = {"torch": torch, "__name__": "exec_made"}
    exec("def made_by_exec(x):\n    return x + 1\n", namespace)  # no .py file holds its source
    with pytest.raises(OSError, match=lit("TorchScript requires source access in order to carry out compilation, "
                                          "make sure original .py files are available.")) as info:
        torch.jit.script(namespace["made_by_exec"])
    assert str(info.value).startswith("Can't get source for <function made_by_exec at 0x")

    def in_this_file(x):
        return x + 1

    assert script(in_this_file)(torch.zeros(1)).item() == 1.0


class MissingAttribute(torch.nn.Module):
    def forward(self, x):
        return self.scale * x


class LambdaAttribute(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.f = lambda x: x

    def forward(self, x):
        return self.f(x)


class WithAttribute(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 2.0

    def forward(self, x):
        return self.scale * x


@pytest.mark.claim("compile.tserr.module-attribute")
def test_module_attribute_missing_or_not_compilable():
    with pytest.raises(RuntimeError, match=lit("Module 'MissingAttribute' has no attribute 'scale'")):
        torch.jit.script(MissingAttribute())
    with pytest.raises(RuntimeError, match=lit("Module 'LambdaAttribute' has no attribute 'f' (This function exists as "
                                               "an attribute on the Python module, but we failed to compile it to a "
                                               "TorchScript function.")):
        torch.jit.script(LambdaAttribute())
    assert torch.jit.script(WithAttribute())(torch.ones(1)).item() == 2.0


# ------------------------------------------------------------------ calling a compiled function


@pytest.mark.claim("compile.tserr.script-call-arguments")
def test_calling_a_script_function_with_the_wrong_arguments():
    def g(x: torch.Tensor):
        return x + 1

    compiled = script(g)
    with pytest.raises(RuntimeError, match=lit("g() Expected a value of type 'Tensor' for argument 'x' but instead "
                                               "found type 'int'.")):
        compiled(3)
    with pytest.raises(RuntimeError, match=lit("g() expected at most 1 argument(s) but received 2 argument(s).")):
        compiled(torch.ones(1), torch.ones(1))
    with pytest.raises(RuntimeError, match=lit("g() is missing value for argument 'x'. Declaration: g(Tensor x) -> "
                                               "Tensor")):
        compiled(y=torch.ones(1))

    def takes_ints(x: list[int]):
        return x

    with pytest.raises(RuntimeError, match=lit("takes_ints() Expected a value of type 'List[int]' for argument 'x' but "
                                               "instead found type 'list'.")):
        script(takes_ints)([1.5])
    assert compiled(torch.ones(1)).item() == 2.0 and script(takes_ints)([1]) == [1]


# ------------------------------------------------------------------ trace: warnings


def branches(x):
    if x.sum() > 0:
        return x * 2
    return x


@pytest.mark.claim("compile.tserr.tracer-python-value")
def test_tracer_warns_when_a_tensor_becomes_a_python_value():
    cases = [(branches, "Python boolean"),
             (lambda x: x * x.sum().item(), "Python number"),
             (lambda x: x * int(x.sum()), "Python integer"),
             (lambda x: x * x.tolist()[0], "Python list"),
             (lambda x: x * float(x.numpy()[0]), "NumPy array")]
    for fn, kind in cases:
        with pytest.warns(TracerWarning, match=lit(f"Converting a tensor to a {kind} might cause the trace to be "
                                                   "incorrect. We can't record the data flow of Python values, so this "
                                                   "value will be treated as a constant in the future.")):
            trace(fn, torch.ones(2))
    with pytest.warns(TracerWarning):
        traced = trace(branches, torch.ones(2))
    assert traced(-torch.ones(2)).tolist() == [-2.0, -2.0]  # the branch was frozen: wrong for negative input
    scripted = script(branches)  # the fix: script keeps the branch
    assert scripted(-torch.ones(2)).tolist() == [-1.0, -1.0]


@pytest.mark.claim("compile.tserr.tracer-constant")
def test_tracer_warns_about_tensors_made_from_python_data():
    with pytest.warns(TracerWarning, match=lit("torch.tensor results are registered as constants in the trace.")):
        trace(lambda x: x + torch.tensor([1.0, 2.0]), torch.ones(2))
    with pytest.warns(TracerWarning, match=lit("Using len to get tensor shape might cause the trace to be incorrect. "
                                               "Recommended usage would be tensor.shape[0].")):
        trace(lambda x: x * len(x), torch.ones(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", TracerWarning)
        traced = trace(lambda x: x * x.shape[0], torch.ones(2))  # the fix: no warning
    assert traced(torch.ones(3)).tolist() == [3.0, 3.0, 3.0]


@pytest.mark.claim("compile.tserr.tracer-nondeterministic")
def test_trace_check_fails_on_random_nodes():
    with pytest.warns(TracerWarning, match="^" + lit("Trace had nondeterministic nodes. Did you forget")):
        with pytest.warns(TracerWarning, match=lit("Output nr 1. of the traced function does not match the "
                                                   "corresponding output of the Python function.")):
            trace(torch.nn.Dropout(0.5), torch.ones(20))
    dropout = torch.nn.Dropout(0.5).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error", TracerWarning)
        traced = trace(dropout, torch.ones(20))
    assert traced(torch.ones(20)).tolist() == [1.0] * 20


def nondeterministic_warning():
    """The text of the TracerWarning that tracing a training-mode dropout gives."""
    with pytest.warns(TracerWarning, match=lit("Trace had nondeterministic nodes.")) as caught:
        trace(torch.nn.Dropout(0.5), torch.ones(20))
    return next(str(w.message) for w in caught if str(w.message).startswith("Trace had"))


@pytest.mark.claim("compile.tserr.tracer-forget-call")
@pytest.mark.torch_version("<2.14")
def test_nondeterministic_trace_until_2_13():
    text = nondeterministic_warning()
    assert text.startswith("Trace had nondeterministic nodes. Did you forget call .eval() on your model? Nodes:\n")


@pytest.mark.claim("compile.tserr.tracer-forget-to-call")
@pytest.mark.torch_version(">=2.14")
def test_nondeterministic_trace_since_2_14():
    text = nondeterministic_warning()
    assert text.startswith("Trace had nondeterministic nodes. Did you forget to call .eval() on your model? Nodes:\n")


@pytest.mark.claim("compile.tserr.tracer-container-output")
def test_trace_outputs_lists_and_dicts():
    with pytest.warns(TracerWarning, match=lit("Encountering a list at the output of the tracer might cause the trace "
                                               "to be incorrect")):
        trace(lambda x: [x, x], torch.ones(2))
    with pytest.raises(RuntimeError, match=lit("Encountering a dict at the output of the tracer might cause the trace "
                                               "to be incorrect")) as info:
        trace(lambda x: {"a": x}, torch.ones(2))
    assert "pass strict=False to trace()" in str(info.value)
    as_dict = trace(lambda x: {"a": x}, torch.ones(2), strict=False)
    assert as_dict(torch.zeros(2))["a"].tolist() == [0.0, 0.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", TracerWarning)
        as_tuple = trace(lambda x: (x, x), torch.ones(2))
    assert len(as_tuple(torch.ones(2))) == 2


@pytest.mark.claim("compile.tserr.tracer-outputs")
def test_trace_of_a_function_returning_nothing_or_a_number():
    with pytest.raises(RuntimeError, match=lit("The traced function didn't return any values! Side-effects are not "
                                               "captured in traces, so it would be a no-op.")):
        trace(lambda x: None, torch.ones(2))
    with pytest.raises(RuntimeError, match=lit("Only tensors, lists, tuples of tensors, or dictionary of tensors can be "
                                               "output from traced functions")):
        trace(lambda x: 3, torch.ones(2))
    assert trace(lambda x: x * 3, torch.ones(2))(torch.ones(2)).tolist() == [3.0, 3.0]


# ------------------------------------------------------------------ files


@pytest.mark.claim("compile.tserr.load-files")
def test_loading_the_wrong_kind_of_file(tmp_path):
    with pytest.raises(ValueError, match=lit(f"The provided filename {tmp_path / 'missing.pt'} does not exist")):
        torch.jit.load(str(tmp_path / "missing.pt"))
    plain = io.BytesIO()
    torch.save({"a": torch.ones(1)}, plain)
    plain.seek(0)
    with pytest.raises(RuntimeError, match=lit("PytorchStreamReader failed locating file constants.pkl: file not "
                                               "found")):
        torch.jit.load(plain)
    plain.seek(0)
    assert torch.load(plain)["a"].item() == 1.0  # a torch.save file is read by torch.load
    scripted = io.BytesIO()
    torch.jit.save(torch.jit.script(torch.nn.Linear(1, 1)), scripted)
    scripted.seek(0)
    with pytest.warns(UserWarning, match=lit("'torch.load' received a zip file that looks like a TorchScript archive "
                                             "dispatching to 'torch.jit.load' (call 'torch.jit.load' directly to "
                                             "silence this warning)")):
        with pytest.raises(RuntimeError, match=lit("Cannot use ``weights_only=True`` with TorchScript archives passed "
                                                   "to ``torch.load``.")):
            torch.load(scripted)
    scripted.seek(0)
    assert isinstance(torch.jit.load(scripted), torch.jit.ScriptModule)  # and a TorchScript file by torch.jit.load


@pytest.mark.claim("compile.tserr.export-scriptmodule")
def test_export_of_a_script_module():
    lin = torch.nn.Linear(1, 1)
    with pytest.raises(ValueError, match=lit("Exporting a ScriptModule is not supported. Maybe try converting your "
                                             "ScriptModule to an ExportedProgram using `TS2EPConverter(mod, args, "
                                             "kwargs).convert()` instead.")):
        torch.export.export(torch.jit.script(lin), (torch.ones(1),))
    ep = torch.export.export(lin, (torch.ones(1),))  # the fix: export the nn.Module itself
    assert torch.allclose(ep.module()(torch.ones(1)), lin(torch.ones(1)))
