"""Probes for docs/bridge/arguments.md."""
import ast
import mmap
import re
import threading
import time
import warnings
from pathlib import Path

import pytest
import torch
import torchgen
from torch.utils._python_dispatch import TorchDispatchMode


class AtenLog(TorchDispatchMode):
    """Records every aten call (overload and argument types) below autograd."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls.append((func, [type(a).__name__ for a in args], dict(kwargs or {})))
        return func(*args, **(kwargs or {}))


@pytest.mark.claim("bridge.arguments.lists-overloads")
@pytest.mark.torch_version(">=2.13")
def test_invalid_combination_lists_every_visible_signature(device):
    t = torch.ones(3, device=device)
    with pytest.raises(TypeError) as info:
        torch.max(t, "x")
    lines = str(info.value).splitlines()
    assert lines[0] == ("max() received an invalid combination of arguments - got (Tensor, str), "
                        "but expected one of:")
    assert [line for line in lines[1:] if line.strip()] == [
        " * (Tensor input, *, Tensor out = None)",
        " * (Tensor input, Tensor other, *, Tensor out = None)",
        " * (Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)",
    ]


@pytest.mark.claim("bridge.arguments.max-six-overloads")
@pytest.mark.torch_version(">=2.13")
def test_max_has_six_schema_overloads():
    # six schema overloads are folded into the three Python signatures of torch.max
    assert sorted(torch.ops.aten.max.overloads()) == ["default", "dim", "dim_max", "other", "out", "unary_out"]


@pytest.mark.claim("bridge.arguments.one-plausible-signature")
def test_single_plausible_signature_names_the_argument(device):
    t = torch.ones(3, device=device)
    with pytest.raises(TypeError, match=re.escape("add(): argument 'other' (position 2) must be Tensor, not str")):
        torch.add(t, "x")
    assert torch.add(t, float("2")).tolist() == [3.0, 3.0, 3.0]


@pytest.mark.claim("bridge.arguments.method-position-skips-self")
def test_method_error_does_not_count_self(device):
    t = torch.ones(3, device=device)
    with pytest.raises(TypeError, match=re.escape("add(): argument 'other' (position 1) must be Tensor, not str")):
        t.add("x")


@pytest.mark.claim("bridge.arguments.unknown-keyword")
def test_unknown_keyword_is_named(device):
    t = torch.ones(3, device=device)
    with pytest.raises(TypeError, match=re.escape("add() got an unexpected keyword argument 'foo'")):
        torch.add(t, t, foo=1)
    assert torch.add(t, t, alpha=2).tolist() == [3.0, 3.0, 3.0]


@pytest.mark.claim("bridge.arguments.keyword-selects-signature")
@pytest.mark.torch_version(">=2.13")
def test_keywords_leave_one_signature(device):
    t = torch.ones(3, device=device)
    with pytest.raises(TypeError, match=re.escape("max(): argument 'dim' must be int, not str")):
        torch.max(t, dim="a", keepdim=True, out=None)
    assert torch.max(t, dim=0, keepdim=True).values.shape == (1,)


@pytest.mark.claim("bridge.arguments.hidden-deprecated")
def test_deprecated_signature_is_hidden_but_accepted(device):
    t = torch.ones(2, device=device)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = torch.add(t, 2, t)  # the old (input, alpha, other) order
    assert out.cpu().tolist() == [3.0, 3.0]
    assert any("This overload of add is deprecated" in str(w.message) for w in caught)


@pytest.mark.claim("bridge.arguments.deprecated-not-listed")
def test_deprecated_signature_is_not_listed(device):
    t = torch.ones(2, device=device)
    with pytest.raises(TypeError) as info:
        torch.add(t)
    assert "Number alpha, Tensor other" not in str(info.value)
    assert "(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)" in str(info.value)


@pytest.mark.claim("bridge.arguments.same-aten-call")
def test_three_spellings_make_one_aten_call(device):
    t = torch.ones(2, device=device)
    with AtenLog() as log:
        t + 2
        t.add(2)
        torch.add(t, 2)
        2 + t
    assert [func for func, _, _ in log.calls] == [torch.ops.aten.add.Tensor] * 4
    assert all(types == ["Tensor", "int"] and kwargs == {} for _, types, kwargs in log.calls)


@pytest.mark.claim("bridge.arguments.dunder-returns-notimplemented")
def test_operator_turns_parser_error_into_notimplemented(device):
    t = torch.ones(2, device=device)
    assert t.__add__("x") is NotImplemented
    with pytest.raises(TypeError, match=re.escape("unsupported operand type(s) for +: 'Tensor' and 'str'")):
        t + "x"
    assert (t + float("1")).tolist() == [2.0, 2.0]



@pytest.mark.claim("bridge.arguments.reflected-operand")
def test_other_operand_reflected_method_runs(device):
    t = torch.ones(2, device=device)

    class Right:
        def __radd__(self, other):
            assert other is t
            return "Right.__radd__"

    assert t + Right() == "Right.__radd__"


@pytest.mark.claim("bridge.arguments.dunder-wrapper-in-template")
def test_template_wraps_add_slots():
    template = (TEMPLATES / "python_variable_methods.cpp").read_text()
    for slot in ("__add__", "__radd__"):
        assert re.search(r'\{"' + slot + r'", castPyCFunctionWithKeywords\(TypeError_to_NotImplemented_<THPVariable_add>\)',
                         template), slot


TEMPLATES = Path(torchgen.__file__).parent / "packaged/autograd/templates"


@pytest.mark.claim("bridge.arguments.generated-bindings")
def test_bindings_are_generated_not_written():
    template = (TEMPLATES / "python_variable_methods.cpp").read_text()
    assert "${py_methods}" in template  # where the generator pastes the bindings
    assert "THPVariable_add>" in template  # the method table refers to the binding ...
    assert not re.search(r"PyObject\s*\*\s*THPVariable_add\s*\(", template)  # ... but does not define it
    torch_functions = (TEMPLATES / "python_torch_functions.cpp").read_text()
    assert "${py_methods}" in torch_functions


@pytest.mark.claim("bridge.arguments.binding-internal-linkage")
def test_binding_is_a_static_function_in_the_library():
    lib = Path(torch.__file__).parent / "lib" / "libtorch_python.so"
    with open(lib, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        # internal linkage ("L" in the mangled name): a static function of a generated file
        assert data.find(b"_ZN5torch8autogradL15THPVariable_addEP7_objectS2_S2_") != -1


@pytest.mark.claim("bridge.arguments.three-shards")
def test_torch_functions_are_compiled_from_three_shards():
    lib = Path(torch.__file__).parent / "lib" / "libtorch_python.so"
    with open(lib, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        present = [i for i in range(6) if data.find(b"_GLOBAL__sub_I_python_torch_functions_%d.cpp" % i) != -1]
    assert present == [0, 1, 2]


@pytest.mark.claim("bridge.arguments.static-parser")
def test_generator_writes_a_static_parser():
    source = (Path(torchgen.__file__).parent / "packaged/autograd/gen_python_functions.py").read_text()
    assert "static PythonArgParser parser({" in source


@pytest.mark.claim("bridge.arguments.deprecated-last")
def test_deprecated_signatures_come_last():
    source = (Path(torchgen.__file__).parent / "packaged/autograd/gen_python_functions.py").read_text()
    fn = next(n for n in ast.walk(ast.parse(source))
              if isinstance(n, ast.FunctionDef) and n.name == "load_signatures")
    assert ast.get_source_segment(source, fn.body[-1]) == "return pairs if skip_deprecated else pairs + deprecated"


@pytest.mark.claim("bridge.arguments.codegen-releases-gil")
def test_generator_releases_the_gil_around_the_call():
    source = (Path(torchgen.__file__).parent / "packaged/autograd/gen_python_functions.py").read_text()
    fn = next(n for n in ast.walk(ast.parse(source))
              if isinstance(n, ast.FunctionDef) and n.name == "emit_single_dispatch")
    body = ast.get_source_segment(source, fn)
    lambdas = re.findall(r"auto dispatch_\{name\} = \[\]\(\{lambda_formals\}\) -> \{lambda_return\} \{\{\n"
                         r"  pybind11::gil_scoped_release no_gil;\n  (?:return )?\{dispatch_callee\}", body)
    assert len(lambdas) == 2  # the void and the value-returning template
    assert "wrap(" in body.split("gil_scoped_release", 2)[2]  # results are wrapped after the lambda returns


def longest_stall(work):
    """Runs `work()` while a second Python thread spins; returns (longest gap between two
    iterations of the spinning thread while work ran, duration of work)."""
    state = {"stop": False, "reset": False, "gap": 0.0}
    ready = threading.Event()

    def spin():
        last = time.perf_counter()
        ready.set()
        while not state["stop"]:
            now = time.perf_counter()
            if state["reset"]:
                state["reset"], state["gap"] = False, 0.0
            elif now - last > state["gap"]:
                state["gap"] = now - last
            last = now

    thread = threading.Thread(target=spin)
    thread.start()
    ready.wait()
    time.sleep(0.02)
    state["reset"] = True
    time.sleep(0.02)
    start = time.perf_counter()
    work()
    duration = time.perf_counter() - start
    gap = state["gap"]
    state["stop"] = True
    thread.join()
    return gap, duration


@pytest.mark.claim("bridge.arguments.gil-released-behaviour")
@pytest.mark.timeout(60)
def test_other_python_threads_run_during_an_op():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        a = torch.randn(2000, 2000)
        torch_gaps, held_gaps = [], []
        for _ in range(3):
            gap, duration = longest_stall(lambda: a @ a)
            torch_gaps.append(gap / duration)
            gap, duration = longest_stall(lambda: sum(range(20_000_000)))  # a C loop that keeps the GIL
            held_gaps.append(gap / duration)
    finally:
        torch.set_num_threads(threads)
    assert min(torch_gaps) < 0.25  # the other thread never waited for the matmul to finish
    assert min(held_gaps) > 0.5  # control: it does wait for a call that keeps the GIL
