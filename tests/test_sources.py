"""The source resolver and its parts: reference syntax, symbol finders, the installed build, statuses."""
from pathlib import Path

import pytest

from verified.sources import raise_sites, references, torch_build
from verified.sources import resolver as sources
from verified.sources.references import SourceRef, parse_reference
from verified.sources.resolver import (
    BROKEN,
    DECLARATION,
    DEFINITION,
    FILE,
    RAISE_SITE,
    REGISTRATION,
    UNVERIFIED,
    VERIFIED,
)
from verified.sources.symbols import find_symbol

FIXTURE = Path(__file__).parent / "sources_fixture"

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize("text, expected", [
    ("c10/core/TensorImpl.h", SourceRef("c10/core/TensorImpl.h")),
    ("c10/core/TensorImpl.h  TensorImpl", SourceRef("c10/core/TensorImpl.h", "TensorImpl")),
    ("torch/_tensor.py Tensor.storage", SourceRef("torch/_tensor.py", "Tensor.storage")),
    ("x/y.cpp aten::copy_@ADInplaceOrView", SourceRef("x/y.cpp", "aten::copy_@ADInplaceOrView")),
])
def test_parse_reference(text, expected):
    assert parse_reference(text) == expected


@pytest.mark.parametrize("text, message", [
    ("", "expected 'path' or 'path symbol'"),
    ("a.h b c", "expected 'path' or 'path symbol'"),
    ("/abs/file.h", "is not a repository file path"),
    ("c10/../etc/passwd.h", "is not a repository file path"),
    ("c10/core/", "is not a repository file path"),
    ("c10/core/TensorImpl", "has no file extension"),
    ("c10/core/TensorImpl.h Tensor(Impl", "is not a symbol"),
])
def test_malformed_references_are_rejected(text, message):
    with pytest.raises(references.MalformedReference, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_reference(text)


HEADER = """#if !defined(TORCH_STABLE_ONLY) && !defined(TORCH_TARGET_VERSION)
#pragma once
struct Storage;
namespace c10 {
struct C10_API Storage {
  Storage() = default;
  size_t nbytes() const;
  void* data_ptr_;
  int64_t size_bytes_ = 0;
};
#define C10_THING 1
inline bool is_thing(int x) {
  return helper(x);
}
enum class Color : uint8_t { Red };
}
#endif
"""

PYTHON = '''import os
LIMIT = 3

class Tensor:
    def storage(self):
        return 1

    @property
    def grad(self):
        return None


def storage():
    pass
'''

YAML = """- func: add.Tensor(Tensor self, Tensor other) -> Tensor
  variants: function, method

- func: add.out(Tensor self) -> Tensor(a!)
"""


@pytest.mark.parametrize("symbol, line", [
    ("Storage", 5),            # the definition, not the forward declaration on line 3
    ("Storage::nbytes", 7),
    ("data_ptr_", 8),
    ("size_bytes_", 9),
    ("C10_THING", 11),
    ("is_thing", 12),          # not the call to helper inside it
    ("Color", 15),
    ("helper", None),          # only ever called
    ("Missing", None),
])
def test_find_symbol_in_header(tmp_path, symbol, line):
    path = tmp_path / "Storage.h"
    path.write_text(HEADER)
    assert find_symbol(path, symbol) == line


@pytest.mark.parametrize("symbol, line", [
    ("Tensor", 4), ("Tensor.storage", 5), ("Tensor.grad", 9), ("storage", 13), ("LIMIT", 2),
    ("Tensor.missing", None), ("Nope.storage", None),
])
def test_find_symbol_in_python(tmp_path, symbol, line):
    """A bare name prefers the module level (breadth first); `Class.name` looks inside the class."""
    path = tmp_path / "mod.py"
    path.write_text(PYTHON)
    assert find_symbol(path, symbol) == line


def test_find_symbol_in_yaml(tmp_path):
    path = tmp_path / "native_functions.yaml"
    path.write_text(YAML)
    assert find_symbol(path, "add.out") == 4
    assert find_symbol(path, "add") is None  # an overload name must be exact


def fake_torch(tmp_path):
    torch_dir = tmp_path / "torch"
    (torch_dir / "include/c10/core").mkdir(parents=True)
    (torch_dir / "include/c10/core/Storage.h").write_text(HEADER)
    (torch_dir / "_tensor.py").write_text(PYTHON)
    torchgen = tmp_path / "torchgen"
    (torchgen / "packaged/ATen/native").mkdir(parents=True)
    (torchgen / "packaged/ATen/native/native_functions.yaml").write_text(YAML)
    return torch_dir, torchgen


DUMP = """name: aten::copy_
ADInplaceOrView: registered at /__w/pytorch/pytorch/torch/csrc/autograd/VariableTypeManual.cpp:532 :: (x) [ boxed ]
CPU: registered at /__w/pytorch/pytorch/build/aten/src/ATen/RegisterCPU_0.cpp:99 :: (x) [ boxed ]
Autograd[alias]: registered at /__w/pytorch/pytorch/torch/csrc/autograd/VariableTypeManual.cpp:349 :: (x) [ boxed ]
"""


UNPACK = "torch/csrc/autograd/saved_variable.cpp SavedVariable::unpack"
RAISED = {UNPACK: {"type": "RuntimeError", "message": (
    "one of the variables needed ...\nException raised from unpack at "
    "/__w/pytorch/pytorch/torch/csrc/autograd/saved_variable.cpp:197 (most recent call first):\n"
    "#5 c10::Error::Error(c10::SourceLocation, std::string) from ??:0\n"
    "#7 torch::autograd::SavedVariable::unpack(c10::intrusive_ptr<torch::autograd::Node>) const from ??:0\n")}}
COMPILED = ["aten/src/ATen/native/TensorShape.cpp", "torch/csrc/autograd/saved_variable.cpp",
            "torch/csrc/autograd/variable.cpp"]


def make_resolver(tmp_path, checkout=None, raised=RAISED):
    torch_dir, torchgen = fake_torch(tmp_path)

    def dump(op):
        return DUMP if op == "aten::copy_" else ""

    return sources.Resolver(torch_dir, torchgen, COMMIT, COMPILED, dump, checkout, lambda: raised)


@pytest.mark.parametrize("text, status, line, kind", [
    ("c10/core/Storage.h Storage", VERIFIED, 4, DEFINITION),          # installed line 5, minus the guard line
    ("c10/core/Storage.h Storage::nbytes", VERIFIED, 6, DECLARATION),  # no body ships
    ("c10/core/Storage.h", VERIFIED, None, FILE),
    ("c10/core/Storage.h Gone", BROKEN, None, None),
    ("c10/core/Missing.h Storage", BROKEN, None, None),        # headers ship: a missing one moved
    ("torch/_tensor.py Tensor.storage", VERIFIED, 5, DEFINITION),    # .py files are verbatim
    ("aten/src/ATen/native/native_functions.yaml add.out", VERIFIED, 4, DEFINITION),
    ("aten/src/ATen/native/TensorShape.cpp", VERIFIED, None, FILE),
    ("aten/src/ATen/native/TensorShape.cpp view", UNVERIFIED, None, FILE),  # no raise site for it
    ("aten/src/ATen/native/Gone.cpp", BROKEN, None, None),
    (UNPACK, VERIFIED, 197, RAISE_SITE),
    ("torch/csrc/autograd/variable.cpp handle_view_on_rebase", BROKEN, None, None),  # in the table, not observed
    ("torch/csrc/autograd/VariableTypeManual.cpp aten::copy_@ADInplaceOrView", VERIFIED, 532, REGISTRATION),
    ("torch/csrc/autograd/VariableTypeManual.cpp aten::copy_@Autograd", VERIFIED, 349, REGISTRATION),
    ("aten/src/ATen/native/Copy.cpp aten::copy_@ADInplaceOrView", BROKEN, None, None),
    ("torch/csrc/autograd/VariableTypeManual.cpp aten::copy_@Meta", BROKEN, None, None),
    ("aten/src/ATen/native/README.md", UNVERIFIED, None, FILE),
])
def test_resolver_statuses(tmp_path, text, status, line, kind):
    resolution = make_resolver(tmp_path).resolve(parse_reference(text))
    assert (resolution.status, resolution.line, resolution.kind) == (status, line, kind), resolution.reason
    path = text.split()[0]
    assert kind in sources.KINDS or kind is None
    if status == VERIFIED and "@" not in text:
        expected = f"https://github.com/pytorch/pytorch/blob/{COMMIT}/{path}"
        assert resolution.url == expected + (f"#L{line}" if line else "")


def test_registration_in_generated_file_names_it(tmp_path):
    resolution = make_resolver(tmp_path).resolve(parse_reference("aten/src/ATen/native/X.cpp aten::copy_@CPU"))
    assert resolution.status == BROKEN
    assert resolution.reason == "aten::copy_ CPU kernel is registered in build/aten/src/ATen/RegisterCPU_0.cpp, " \
                                "not aten/src/ATen/native/X.cpp"


def test_checkout_checks_files_the_wheel_lacks(tmp_path):
    checkout = tmp_path / "pytorch"
    (checkout / "aten/src/ATen/native").mkdir(parents=True)
    (checkout / "aten/src/ATen/native/TensorShape.cpp").write_text("// x\nTensor view(const Tensor& self) {\n}\n")
    resolver = make_resolver(tmp_path, checkout)
    assert resolver.resolve(parse_reference("aten/src/ATen/native/TensorShape.cpp view")).line == 2
    assert resolver.resolve(parse_reference("aten/src/ATen/native/TensorShape.cpp gone")).status == BROKEN


def test_compiled_sources_skips_build_outputs(tmp_path):
    lib = tmp_path / "libfake.so"
    lib.write_bytes(b"\0/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp\0junk"
                    b"\0/__w/pytorch/pytorch/build/aten/src/ATen/RegisterCPU_0.cpp\0"
                    b"\0/__w/pytorch/pytorch/torch/csrc/autograd/generated/VariableType_0.cpp\0"
                    b"at \"/pytorch/c10/core/TensorImpl.cpp\":12\0")
    assert torch_build.compiled_sources(tmp_path) == {"aten/src/ATen/native/TensorShape.cpp", "c10/core/TensorImpl.cpp"}


def test_installed_torch_lines_point_at_definitions(tmp_path):
    """Against the real wheel: the repository line is the installed line minus the guard."""
    resolver = sources.resolver_for_installed_torch(tmp_path)
    resolution = resolver.resolve(parse_reference("c10/core/TensorImpl.h TensorImpl"))
    installed = resolver.installed_file("c10/core/TensorImpl.h").read_text().splitlines()
    assert installed[0].startswith(sources.HEADER_GUARD)
    assert "struct C10_API TensorImpl" in installed[resolution.line]  # 0-based index = line + 1 - 1
    assert Path(tmp_path, f"compiled-sources-{resolver.git_version}.json").is_file()


def test_constructor_initialisers_are_not_definitions(tmp_path):
    path = tmp_path / "Node.h"
    path.write_text("struct Node {\n  explicit Node(int n)\n      : sequence_nr_(n),\n        next_(n) {}\n"
                    "  int sequence_nr() const { return sequence_nr_; }\n  uint64_t sequence_nr_;\n  int next_;\n};\n")
    assert find_symbol(path, "Node::sequence_nr_") == 6
    assert find_symbol(path, "next_") == 7
    assert find_symbol(path, "Node::Node") == 2
    assert find_symbol(path, "sequence_nr") == 5


@pytest.mark.parametrize("observed, reason", [
    ({UNPACK: {"type": "RuntimeError", "message": RAISED[UNPACK]["message"].replace("unpack at", "reset_data at")}},
     "raised from reset_data, not unpack"),
    ({UNPACK: {"type": None, "message": ""}}, "the trigger raised no error"),
    ({}, "did not run"),
])
def test_raise_site_that_moved_is_broken(tmp_path, observed, reason):
    resolution = make_resolver(tmp_path, raised=observed).resolve(parse_reference(UNPACK))
    assert resolution.status == BROKEN and reason in resolution.reason


def test_raise_sites_are_observed_once_and_only_when_needed(tmp_path):
    calls = []
    resolver = make_resolver(tmp_path, raised=None)
    resolver._raise_sites = lambda: calls.append(1) or RAISED
    resolver.resolve(parse_reference("c10/core/Storage.h Storage"))
    assert calls == []
    resolver.resolve(parse_reference(UNPACK))
    resolver.resolve(parse_reference("torch/csrc/autograd/variable.cpp handle_view_on_rebase"))
    assert calls == [1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A resolver for the installed torch (its compiled-source scan made once for this module)."""
    return sources.resolver_for_installed_torch(tmp_path_factory.mktemp("cache"))


def test_every_trigger_names_a_file_compiled_into_this_torch(installed):
    assert [t.path for t in raise_sites.TRIGGERS if t.path not in installed.compiled_sources] == []


@pytest.mark.parametrize("symbol, line", [
    ("compile", 15),                   # not the two @overload stubs
    ("typed_only", 4),                 # only a TYPE_CHECKING stub defines it: that is taken
    ("Module.limit", 22),              # not the `limit = None` placeholder
    ("Module.state_dict", 27),
    ("Module.forward", 33),            # the runtime branch, not the TYPE_CHECKING stub
])
def test_python_stubs_and_placeholders_are_passed_over(symbol, line):
    assert find_symbol(FIXTURE / "stubs.py", symbol) == line


def test_companion_header_holds_the_body(tmp_path):
    include = tmp_path / "torch/include/ATen/core"
    include.mkdir(parents=True)
    for name in ("members.h", "members_impl.h"):
        (include / name).write_text((FIXTURE / name).read_text())
    resolver = make_resolver(tmp_path)
    found = resolver.resolve(parse_reference("aten/src/ATen/core/members.h Dispatcher::boxed"))
    assert (found.status, found.line, found.kind) == (VERIFIED, 4, DEFINITION)
    assert found.url.endswith("/aten/src/ATen/core/members_impl.h#L4")
    assert "the body in aten/src/ATen/core/members_impl.h" in found.reason
    assert found.text.startswith("inline void Dispatcher::boxed(")


# The wrong and ambiguous lines of issue 14, against the installed torch: each must land on
# the definition the pages mean (the line's text says which; its number is the wheel's).
@pytest.mark.parametrize("text, expected", [
    ("torch/__init__.py compile", "def compile("),                  # with the line before not @_overload
    ("torch/autograd/__init__.py grad", "def grad("),
    ("torch/nn/modules/module.py Module.state_dict", "def state_dict(self, *args"),
    ("torch/backends/cudnn/__init__.py CudnnModule.benchmark_limit", "benchmark_limit = ContextProp("),
    ("c10/core/alignment.h gAlignment", "constexpr size_t gAlignment = 64;"),
    ("c10/core/impl/LocalDispatchKeySet.h tls_local_dispatch_key_set",
     "inline C10_API LocalDispatchKeySet tls_local_dispatch_key_set() {"),
    ("aten/src/ATen/core/dispatch/Dispatcher.h Dispatcher::call", "Return Dispatcher::call("),
    ("aten/src/ATen/core/dispatch/Dispatcher.h Dispatcher::redispatch", "inline Return Dispatcher::redispatch("),
    ("c10/cuda/CUDACachingAllocator.h raw_alloc", "inline void* raw_alloc(size_t nbytes) {"),
    ("c10/cuda/CUDACachingAllocator.h recordStream", "inline void recordStream("),
    ("c10/cuda/CUDACachingAllocator.h snapshot", "inline SnapshotInfo snapshot("),
    ("c10/cuda/CUDACachingAllocator.h recordHistory", "inline void recordHistory("),
])
def test_issue_lines_resolve_to_the_definition(installed, text, expected):
    resolver = installed
    found = resolver.resolve(parse_reference(text))
    assert found.status == VERIFIED and found.kind == DEFINITION, found.reason
    assert expected in found.text
    installed = resolver.installed_file(text.split()[0]).read_text().splitlines()
    offset = 1 if installed[0].startswith(sources.HEADER_GUARD) else 0
    assert installed[found.line - 1 + offset] == found.text
    if text.endswith(".py compile"):
        assert "@_overload" not in installed[found.line - 2]


def test_torch_check_is_the_branch_this_build_compiles(installed):
    resolver = installed
    found = resolver.resolve(parse_reference("c10/util/Exception.h TORCH_CHECK"))
    installed = resolver.installed_file("c10/util/Exception.h").read_text().splitlines()
    above = [line.strip() for line in installed[:found.line] if line.strip().startswith("#")]
    assert above[-1] == "#else" and above[-2].startswith("#define TORCH_CHECK")  # the #else of STRIP_ERROR_MESSAGES
    assert "#ifdef STRIP_ERROR_MESSAGES" in above[-3] and above[-4] == "#else"  # ... of STANDALONE_TORCH_HEADER


def test_declaration_only_headers_say_so(installed):
    found = installed.resolve(parse_reference("torch/csrc/autograd/engine.h Engine::execute"))
    assert (found.status, found.kind) == (VERIFIED, DECLARATION) and "only a declaration ships" in found.reason


def test_resolve_texts_is_the_command_line_of_make_matrix(tmp_path):
    """What `python -m verified.sources.resolver` answers for each reference text, in order."""
    from verified.sources import resolver as sources
    found = sources.resolve_texts(["c10/core/TensorImpl.h TensorImpl", "../StorageImpl.h"], tmp_path)
    assert [(r["path"], r["symbol"], r["status"]) for r in found] == [
        ("c10/core/TensorImpl.h", "TensorImpl", sources.VERIFIED), (None, None, sources.BROKEN)]
    assert found[0]["line"] and "malformed source reference" in found[1]["reason"]
