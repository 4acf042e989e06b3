"""Probes for docs/dispatch/native-functions.md: where aten operators come from."""
import re
from pathlib import Path

import pytest
import torch
import torchgen

from verified.probing import measured

PACKAGED = Path(torchgen.__file__).parent / "packaged"
NATIVE_FUNCTIONS = PACKAGED / "ATen/native/native_functions.yaml"
INCLUDE = Path(torch.__file__).parent / "include"


def written_entries():
    """The `- func:` lines of the installed native_functions.yaml, as written."""
    return re.findall(r"^- func: (.*\S)\s*$", NATIVE_FUNCTIONS.read_text(), re.M)


def op_of(func_line):
    name = func_line.split("(", 1)[0]
    base, _, overload = name.partition(".")
    return getattr(getattr(torch.ops.aten, base), overload or "default")


def _parse():
    """torchgen's own reading of the yaml: the model the code generator works from."""
    from torchgen.gen import parse_native_yaml

    return parse_native_yaml(str(NATIVE_FUNCTIONS), str(PACKAGED / "ATen/native/tags.yaml"))


# Parsed once, when pytest imports this file, so the forked probes share it: 19 probes read the
# model, and a parse takes about 1.5 s (it reads YAML and builds Python objects; no tensor work).
# The model holds lambdas, so it cannot be kept on disk instead.
_PARSED = _parse()


def parsed():
    return _PARSED


def functions():
    return {str(f.func.name): f for f in parsed().native_functions}


def registered_aten():
    return {name for name in torch._C._dispatch_get_all_op_names() if name.startswith("aten::")}


def aten_name(func_name):
    return "aten::" + func_name


@pytest.mark.claim("dispatch.yaml.census")
def test_number_of_written_operators():
    written = len(written_entries())
    measured.record("- func: entries", written)
    assert written in range(2500, 2801)  # 2055 in the 2021 census


@pytest.mark.claim("dispatch.yaml.one-entry-per-overload")
def test_one_entry_per_overload():
    entries = written_entries()
    assert len(set(e.split("(", 1)[0] for e in entries)) == len(entries)


@pytest.mark.claim("dispatch.yaml.entries-registered")
def test_every_entry_is_registered():
    registered = registered_aten()
    missing = [e for e in written_entries() if aten_name(e.split("(", 1)[0]) not in registered]
    assert missing == []


def raw_entries():
    import yaml

    return yaml.load(NATIVE_FUNCTIONS.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@pytest.mark.claim("dispatch.yaml.implicit-default")
def test_entries_without_dispatch_are_composite_implicit(dispatcher):
    plain = [e["func"].split("(", 1)[0] for e in raw_entries()
             if "dispatch" not in e and "structured_delegate" not in e]
    assert plain  # there are such entries
    assert [name for name in plain if "CompositeImplicitAutograd" not in dispatcher.active(aten_name(name))] == []


@pytest.mark.claim("dispatch.yaml.tags")
def test_tags_reach_the_operator():
    assert torch.ops.aten.add.Tensor.tags == [torch.Tag.core, torch.Tag.pointwise, torch.Tag.pt2_compliant_tag]


@pytest.mark.claim("dispatch.yaml.autogen-and-extras")
def test_codegen_adds_operators():
    generated = {aten_name(name) for name in functions()}
    added = len(generated) - len(written_entries())  # added for `autogen:` lines
    measured.record("operators torchgen adds", added)
    assert added in range(500, 551)
    assert re.search(r"^  autogen: \S", NATIVE_FUNCTIONS.read_text(), re.M)
    assert generated - registered_aten() == set()  # all of them registered


@pytest.mark.claim("dispatch.yaml.autogen-out-forms")
def test_autogen_adds_mostly_out_forms():
    from torchgen.model import SchemaKind

    written = {e.split("(", 1)[0] for e in written_entries()}
    kinds = [f.func.kind() for name, f in functions().items() if name not in written]
    out, functional = kinds.count(SchemaKind.out), kinds.count(SchemaKind.functional)
    measured.record("added out= forms", out)
    measured.record("added functional forms", functional)
    assert out in range(450, 501) and functional in range(30, 51)
    assert out + functional == len(kinds)  # no other kind


@pytest.mark.claim("dispatch.yaml.cpp-only-operators")
def test_a_few_operators_come_from_cpp_alone():
    extras = registered_aten() - {aten_name(name) for name in functions()}
    measured.record("aten operators from C++ alone", len(extras))
    assert len(extras) in range(5, 16)
    assert "aten::quantized_lstm.input" in extras
    assert "aten::get_gradients" in extras


def without_defaults(schema):
    """The schema text with every `=default` removed (defaults may hold lists and strings)."""
    out, i, depth = [], 0, 0
    while i < len(schema):
        c = schema[i]
        if c == "=" and depth == 1:
            i += 1
            nest, quote = 0, None
            while i < len(schema):
                d = schema[i]
                if quote:
                    quote = None if d == quote else quote
                elif d in "\"'":
                    quote = d
                elif d == "[":
                    nest += 1
                elif d == "]":
                    nest -= 1
                elif d in ",)" and nest == 0:
                    break
                i += 1
            continue
        depth += c == "("
        depth -= c == ")"
        out.append(c)
        i += 1
    return "".join(out)


def compare_schemas():
    """Check every entry's parsed line against the registered schema; count the respellings."""
    entries = written_entries()
    differing_text, device_index = 0, 0
    for entry in entries:
        schema = op_of(entry)._schema
        written = "aten::" + entry
        assert torch._C.parse_schema(written) == schema, entry
        if str(schema) != written:
            differing_text += 1
            if without_defaults(str(schema)) != without_defaults(written):
                # the one other respelling: the DeviceIndex type prints as int
                assert "DeviceIndex" in written, entry
                assert without_defaults(str(schema)) == without_defaults(written.replace("DeviceIndex", "int"))
                device_index += 1
    return differing_text, device_index


@pytest.mark.claim("dispatch.yaml.schema-is-the-func-line")
def test_registered_schema_equals_the_yaml_line():
    compare_schemas()


@pytest.mark.claim("dispatch.yaml.schema-respelling")
@pytest.mark.torch_version(">=2.13")  # before, a schema differs from its line (dispatch.yaml.schema-is-the-func-line)
def test_how_many_schemas_print_differently():
    differing, device_index = compare_schemas()
    measured.record("schemas printed otherwise than written", differing)
    assert (differing, device_index) == (165, 4)


@pytest.mark.claim("dispatch.yaml.add-schema-text")
def test_add_schema_prints_as_written():
    assert str(torch.ops.aten.add.Tensor._schema) == \
        "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    assert "- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" in NATIVE_FUNCTIONS.read_text()


@pytest.mark.claim("dispatch.yaml.structured")
def test_structured_delegate_and_inheritance():
    fs = functions()
    add, add_, out = fs["add.Tensor"], fs["add_.Tensor"], fs["add.out"]
    assert str(add.structured_delegate) == "add.out" and not add.structured
    assert str(add_.structured_delegate) == "add.out"
    assert out.structured and out.structured_inherits == "TensorIteratorBase"
    assert out.ufunc_inner_loop  # the add loop body itself is generated from the ufunc entry


@pytest.mark.claim("dispatch.yaml.structured-count")
def test_how_many_are_structured():
    fs = functions()
    structured = sum(1 for f in fs.values() if f.structured)
    delegating = sum(1 for f in fs.values() if f.structured_delegate is not None)
    measured.record("structured operators", structured)
    measured.record("operators delegating to one", delegating)
    assert structured in range(250, 301) and delegating in range(350, 421)


@pytest.mark.claim("dispatch.yaml.variants")
def test_variants_decide_the_python_bindings():
    from torchgen.model import Variant

    fs = functions()
    assert fs["add.Tensor"].variants == {Variant.function, Variant.method}
    assert fs["add_.Tensor"].variants == {Variant.method}
    assert fs["cat"].variants == {Variant.function}
    assert hasattr(torch, "add") and hasattr(torch.Tensor, "add")
    assert hasattr(torch.Tensor, "add_") and not hasattr(torch, "add_")
    assert hasattr(torch, "cat") and not hasattr(torch.Tensor, "cat")


@pytest.mark.claim("dispatch.yaml.triple")
def test_functional_inplace_out_triple():
    from torchgen.model import SchemaKind

    fs = functions()
    kinds = {name: fs[name].func.kind() for name in ("abs", "abs_", "abs.out")}
    assert kinds == {"abs": SchemaKind.functional, "abs_": SchemaKind.inplace, "abs.out": SchemaKind.out}
    assert str(torch.ops.aten.abs.default._schema) == "aten::abs(Tensor self) -> Tensor"
    assert str(torch.ops.aten.abs_.default._schema) == "aten::abs_(Tensor(a!) self) -> Tensor(a!)"
    assert str(torch.ops.aten.abs.out._schema) == "aten::abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"


@pytest.mark.claim("dispatch.yaml.out-returns-out")
def test_out_and_inplace_forms_return_what_they_wrote():
    x = torch.tensor([-1.0, 2.0])
    out = torch.empty(2)
    assert torch.abs(x, out=out) is out and out.tolist() == [1.0, 2.0]
    assert x.abs_() is x and x.tolist() == [1.0, 2.0]


@pytest.mark.claim("dispatch.yaml.kind-counts")
def test_how_many_of_each_kind():
    from torchgen.model import SchemaKind

    counts = {}
    for f in functions().values():
        counts[f.func.kind()] = counts.get(f.func.kind(), 0) + 1
    for kind, count in counts.items():
        measured.record(f"{kind.name} operators", count)
    assert set(counts) == {SchemaKind.functional, SchemaKind.out, SchemaKind.inplace, SchemaKind.mutable}
    assert counts[SchemaKind.functional] in range(1600, 1801) and counts[SchemaKind.out] in range(1050, 1201)
    assert counts[SchemaKind.inplace] in range(300, 381) and counts[SchemaKind.mutable] in range(5, 16)


@pytest.mark.claim("dispatch.yaml.dispatch-section")
def test_dispatch_section_becomes_registrations(dispatcher):
    fs = functions()
    indices = parsed().backend_indices
    named = sorted(str(key) for key, index in indices.items() if index.has_kernel(fs["add.Tensor"]))
    assert named == ["MkldnnCPU", "NestedTensorCPU", "NestedTensorCUDA", "NestedTensorHPU", "SparseCPU",
                     "SparseCUDA", "SparseCsrCPU", "SparseCsrCUDA", "SparseCsrMeta", "SparseMPS", "SparseMeta",
                     "ZeroTensor"]  # no CPU: the CPU kernel comes from the structured delegate
    gcd_out = {str(key) for key, index in indices.items() if index.has_kernel(fs["gcd.out"])}
    assert gcd_out == {"CPU", "CUDA", "MPS"}


@pytest.mark.claim("dispatch.yaml.dispatch-section-registered")
def test_named_keys_the_build_compiles_are_registered(dispatcher):
    fs = functions()
    named = {str(key) for key, index in parsed().backend_indices.items() if index.has_kernel(fs["add.Tensor"])}
    registered = set(dispatcher.active("aten::add.Tensor"))
    # a key the build compiles has kernels for many operators (a CPU wheel has almost none for CUDA, MPS or XPU)
    compiled = {key for key in named if len(torch._C._dispatch_get_registrations_for_dispatch_key(key)) >= 10}
    for key in ("SparseCPU", "SparseCsrCPU", "MkldnnCPU", "NestedTensorCPU"):
        assert key in compiled, key
    assert compiled - registered == set()
    assert "CPU" in registered


@pytest.mark.claim("dispatch.yaml.ufunc-adds-kernels")
def test_ufunc_entry_adds_cpu_and_cuda_kernels():
    fs = functions()
    (entry,) = [e for e in raw_entries() if e["func"].startswith("add.out(")]
    assert "ufunc_inner_loop" in entry
    written_keys = {key.strip() for keys in entry["dispatch"] for key in keys.split(",")}
    assert "CPU" not in written_keys and "CUDA" not in written_keys
    out_named = {str(key) for key, index in parsed().backend_indices.items() if index.has_kernel(fs["add.out"])}
    assert "CPU" in out_named and "CUDA" in out_named  # added by torchgen for the ufunc entry


@pytest.mark.claim("dispatch.yaml.codegen")
def test_generated_files_come_from_templates():
    templates = PACKAGED / "ATen/templates"
    register = (templates / "RegisterDispatchKey.cpp").read_text()
    assert "$dispatch_definitions" in register and "#include <torch/library.h>" in register
    definitions = (templates / "RegisterDispatchDefinitions.ini").read_text()
    assert "${static_init_dispatch_registrations}" in definitions
    assert "${type_derived_method_definitions}" in (PACKAGED / "autograd/templates/VariableType.cpp").read_text()


@pytest.mark.claim("dispatch.yaml.derivatives-count")
def test_how_many_derivative_entries():
    derivatives = re.findall(r"^- name: ", (PACKAGED / "autograd/derivatives.yaml").read_text(), re.M)
    measured.record("- name: entries", len(derivatives))
    assert len(derivatives) in range(650, 721)


@pytest.mark.claim("dispatch.yaml.generated-not-shipped")
def test_generated_sources_are_not_installed():
    for generated in ("RegisterCPU_0.cpp", "RegisterBackendSelect.cpp"):
        assert not (INCLUDE / "ATen" / generated).exists(), generated
    assert "// @generated by torchgen/gen.py from Functions.h" in (INCLUDE / "ATen/Functions.h").read_text()


@pytest.mark.claim("dispatch.yaml.dtype-macros")
def test_dtype_dispatch_macros():
    at_dispatch = (INCLUDE / "ATen/Dispatch.h").read_text()
    body = re.search(r"#define AT_DISPATCH_FLOATING_TYPES\(TYPE, NAME, \.\.\.\) \\\n(.*?)\n\n", at_dispatch, re.S)
    assert "AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__))" in body.group(1)
    cases = re.search(r"#define AT_DISPATCH_CASE_FLOATING_TYPES\(\.\.\.\) +\\\n(.*?)\n\n", at_dispatch, re.S)
    assert re.findall(r"at::ScalarType::(\w+)", cases.group(1)) == ["Double", "Float"]
    switch = re.search(r"#define AT_DISPATCH_SWITCH\(TYPE, NAME, \.\.\.\) \\\n(.*?)\n\n", at_dispatch, re.S)
    assert "THO_DISPATCH_SWITCH_TMPL" in switch.group(1) and "TORCH_CHECK_NOT_IMPLEMENTED" in switch.group(1)
    headeronly = (INCLUDE / "torch/headeronly/core/Dispatch.h").read_text()
    tmpl = re.search(r"#define THO_DISPATCH_SWITCH_TMPL\(.*?\n\n", headeronly, re.S).group(0)
    assert "switch (_st)" in tmpl and "default:" in tmpl and "\\\" not implemented for '\"" in tmpl


@pytest.mark.claim("dispatch.yaml.torchscript-overloads")
def test_not_every_aten_overload_is_a_dispatcher_operator():
    registered = registered_aten()
    overloads = torch.ops.aten.add.overloads()
    assert len(overloads) == 16
    in_dispatcher = sorted(o for o in overloads if "aten::add." + o in registered)
    assert in_dispatcher == ["Scalar", "Scalar_out", "Tensor", "out"]
    generated = set(functions())  # written entries plus autogen ones (add.Scalar_out)
    assert [o for o in in_dispatcher if "add." + o not in generated] == []
    others = set(overloads) - set(in_dispatcher)
    for name in ("int", "float", "str", "default"):
        assert name in others, name


@pytest.mark.claim("dispatch.yaml.add-int-torchscript")
def test_add_int_runs_without_the_dispatcher():
    assert str(torch.ops.aten.add.int._schema) == "aten::add.int(int a, int b) -> int"
    assert torch.ops.aten.add.int(2, 3) == 5  # a TorchScript operator, run without the dispatcher
    assert "aten::add.int" not in registered_aten()
    assert "add.int" not in functions()
