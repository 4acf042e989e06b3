"""The dispatcher's dumps, parsed from their text (verified.sources.dispatch_dump)."""
import subprocess
import sys
from pathlib import Path

import pytest

from verified.sources.dispatch_dump import Registration, Slot, is_generated, registrations, repository_path, slots

W = "/__w/pytorch/pytorch"
SITE = "/work/main/.venv/lib/python3.11/site-packages"


@pytest.mark.parametrize("build_path, expected", [
    (f"{W}/aten/src/ATen/native/NegateFallback.cpp", "aten/src/ATen/native/NegateFallback.cpp"),
    (f"{W}/build/aten/src/ATen/RegisterCPU_0.cpp", "build/aten/src/ATen/RegisterCPU_0.cpp"),  # generated: keeps build/
    (f"{W}/torch/csrc/autograd/generated/VariableType_2.cpp", "torch/csrc/autograd/generated/VariableType_2.cpp"),
    (f"{W}/torch/csrc/autograd/VariableTypeManual.cpp", "torch/csrc/autograd/VariableTypeManual.cpp"),
    (f"{W}/c10/core/impl/LocalDispatchKeySet.cpp", "c10/core/impl/LocalDispatchKeySet.cpp"),
    (f"{W}/caffe2/serialize/inline_container.cc", "caffe2/serialize/inline_container.cc"),  # the resolver's marker
    (f"{SITE}/torch/_meta_registrations.py", "torch/_meta_registrations.py"),
    (f"{SITE}/torch/_library/custom_ops.py", "torch/_library/custom_ops.py"),
    ("/opt/build/venv/lib/site-packages/torch/_meta_registrations.py", "torch/_meta_registrations.py"),  # not build/
    ("/home/x/torch/ext/torch/csrc/a.cpp", "torch/csrc/a.cpp"),  # torch/csrc/ before a bare torch/
    ("/work/main/_build/cpp-extensions/torch-2.13.0+cpu/dispatch_probe_ext/main.cpp",
     "/work/main/_build/cpp-extensions/torch-2.13.0+cpu/dispatch_probe_ext/main.cpp"),  # an extension's own file
    ("/work/main/probes/dispatch/test_dispatch_python_extension.py",
     "/work/main/probes/dispatch/test_dispatch_python_extension.py"),
])
def test_repository_path(build_path, expected):
    assert repository_path(build_path) == expected


@pytest.mark.parametrize("path, generated", [
    ("build/aten/src/ATen/RegisterCPU_0.cpp", True),
    ("torch/csrc/autograd/generated/VariableType_2.cpp", True),
    ("aten/src/ATen/core/VariableFallbackKernel.cpp", False),
])
def test_is_generated(path, generated):
    assert is_generated(path) is generated


DUMP = f"""name: aten::add.Tensor
schema: aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
debug: registered at {W}/build/aten/src/ATen/RegisterSchema.cpp:6
alias analysis kind: FROM_SCHEMA
Conjugate: registered at {W}/aten/src/ATen/ConjugateFallback.cpp:21 :: (none) [ fallthrough boxed ]
CPU: registered at {W}/build/aten/src/ATen/RegisterCPU_0.cpp:1297 :: (Tensor _0, Tensor _1, Scalar _2) -> Tensor _0 [ boxed unboxed ]
Meta: registered at {SITE}/torch/_meta_registrations.py:54 :: (none) [ boxed ]
Meta (inactive): registered at {W}/build/aten/src/ATen/RegisterMeta_0.cpp:1106 :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
Autograd[alias]: registered at {W}/torch/csrc/autograd/generated/VariableType_2.cpp:10455 :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
"""

TABLE = f"""Undefined: registered at {W}/build/aten/src/ATen/RegisterCompositeExplicitAutogradNonFunctional_0.cpp:1342 [default backend kernel]
CPU: registered at {W}/build/aten/src/ATen/RegisterCPU_0.cpp:1297 [kernel]
BackendSelect: fallthrough registered at {W}/aten/src/ATen/core/BackendSelectFallbackKernel.cpp:3 [backend fallback]
AutogradCPU: registered at {W}/torch/csrc/autograd/generated/VariableType_2.cpp:10455 [autograd kernel]
"""


def test_registrations_are_the_kernel_lines_in_order():
    """The schema's `debug:` line is not a kernel; `[alias]` and `(inactive)` are flags of the key."""
    assert registrations(DUMP) == [
        Registration("Conjugate", False, False, "aten/src/ATen/ConjugateFallback.cpp",
                     f"{W}/aten/src/ATen/ConjugateFallback.cpp", 21, ("fallthrough", "boxed")),
        Registration("CPU", False, False, "build/aten/src/ATen/RegisterCPU_0.cpp",
                     f"{W}/build/aten/src/ATen/RegisterCPU_0.cpp", 1297, ("boxed", "unboxed")),
        Registration("Meta", False, False, "torch/_meta_registrations.py", f"{SITE}/torch/_meta_registrations.py",
                     54, ("boxed",)),
        Registration("Meta", False, True, "build/aten/src/ATen/RegisterMeta_0.cpp",
                     f"{W}/build/aten/src/ATen/RegisterMeta_0.cpp", 1106, ("boxed", "unboxed")),
        Registration("Autograd", True, False, "torch/csrc/autograd/generated/VariableType_2.cpp",
                     f"{W}/torch/csrc/autograd/generated/VariableType_2.cpp", 10455, ("boxed", "unboxed")),
    ]


def test_slots_are_the_table_lines_in_order():
    found = slots(TABLE)
    assert [s.key for s in found] == ["Undefined", "CPU", "BackendSelect", "AutogradCPU"]
    assert found[2] == Slot("BackendSelect", "aten/src/ATen/core/BackendSelectFallbackKernel.cpp",
                            f"{W}/aten/src/ATen/core/BackendSelectFallbackKernel.cpp", 3, "backend fallback", True)
    assert (found[0].kind, found[0].fallthrough, found[0].line) == ("default backend kernel", False, 1342)


def test_the_dumps_do_not_parse_each_other():
    assert slots(DUMP) == [] and registrations(TABLE) == []


def test_parsing_does_not_import_torch():
    code = "import sys, verified.sources.dispatch_dump; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1]).returncode == 0
