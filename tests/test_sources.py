"""The source resolver: reference syntax, symbol finders, path mapping, statuses."""
from pathlib import Path

import pytest

from verified import sources
from verified.sources import BROKEN, UNVERIFIED, VERIFIED, SourceRef, parse_reference

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
    with pytest.raises(sources.MalformedReference, match=message.replace("(", r"\(").replace(")", r"\)")):
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
    assert sources.find_symbol(path, symbol) == line


@pytest.mark.parametrize("symbol, line", [
    ("Tensor", 4), ("Tensor.storage", 5), ("Tensor.grad", 9), ("storage", 13), ("LIMIT", 2),
    ("Tensor.missing", None), ("Nope.storage", None),
])
def test_find_symbol_in_python(tmp_path, symbol, line):
    """A bare name prefers the module level (breadth first); `Class.name` looks inside the class."""
    path = tmp_path / "mod.py"
    path.write_text(PYTHON)
    assert sources.find_symbol(path, symbol) == line


def test_find_symbol_in_yaml(tmp_path):
    path = tmp_path / "native_functions.yaml"
    path.write_text(YAML)
    assert sources.find_symbol(path, "add.out") == 4
    assert sources.find_symbol(path, "add") is None  # an overload name must be exact


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


def make_resolver(tmp_path, checkout=None):
    torch_dir, torchgen = fake_torch(tmp_path)

    def dump(op):
        return DUMP if op == "aten::copy_" else ""

    return sources.Resolver(torch_dir, torchgen, COMMIT, ["aten/src/ATen/native/TensorShape.cpp"], dump, checkout)


@pytest.mark.parametrize("text, status, line", [
    ("c10/core/Storage.h Storage", VERIFIED, 4),         # installed line 5, minus the guard line
    ("c10/core/Storage.h", VERIFIED, None),
    ("c10/core/Storage.h Gone", BROKEN, None),
    ("c10/core/Missing.h Storage", BROKEN, None),        # headers ship: a missing one moved
    ("torch/_tensor.py Tensor.storage", VERIFIED, 5),    # .py files are verbatim
    ("aten/src/ATen/native/native_functions.yaml add.out", VERIFIED, 4),
    ("aten/src/ATen/native/TensorShape.cpp", VERIFIED, None),
    ("aten/src/ATen/native/TensorShape.cpp view", UNVERIFIED, None),
    ("aten/src/ATen/native/Gone.cpp", BROKEN, None),
    ("torch/csrc/autograd/VariableTypeManual.cpp aten::copy_@ADInplaceOrView", VERIFIED, 532),
    ("torch/csrc/autograd/VariableTypeManual.cpp aten::copy_@Autograd", VERIFIED, 349),
    ("aten/src/ATen/native/Copy.cpp aten::copy_@ADInplaceOrView", BROKEN, None),
    ("torch/csrc/autograd/VariableTypeManual.cpp aten::copy_@Meta", BROKEN, None),
    ("aten/src/ATen/native/README.md", UNVERIFIED, None),
])
def test_resolver_statuses(tmp_path, text, status, line):
    resolution = make_resolver(tmp_path).resolve(parse_reference(text))
    assert (resolution.status, resolution.line) == (status, line), resolution.reason
    path = text.split()[0]
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
    assert sources.compiled_sources(tmp_path) == {"aten/src/ATen/native/TensorShape.cpp", "c10/core/TensorImpl.cpp"}


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
    assert sources.find_symbol(path, "Node::sequence_nr_") == 6
    assert sources.find_symbol(path, "next_") == 7
    assert sources.find_symbol(path, "Node::Node") == 2
    assert sources.find_symbol(path, "sequence_nr") == 5
