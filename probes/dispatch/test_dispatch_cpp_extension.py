"""Probes for docs/dispatch/cpp-extension.md: an operator registered from C++.

The extension (dispatch_probe_ext.cpp) is compiled by the `cpp_extension` fixture in
conftest.py, once: later loads, in this process or another, reuse the build."""
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

INCLUDE = Path(torch.__file__).parent / "include"


@pytest.mark.claim("dispatch.cpp.headers")
def test_registration_macros_ship_in_the_wheel():
    library_h = (INCLUDE / "torch/library.h").read_text()
    for macro in ("TORCH_LIBRARY", "TORCH_LIBRARY_IMPL", "TORCH_LIBRARY_FRAGMENT"):
        assert re.search(rf"^#define {macro}\(", library_h, re.M), macro
    assert re.search(r"^class TORCH_API Library final \{", library_h, re.M)
    assert (INCLUDE / "torch/extension.h").is_file()


@pytest.mark.claim("dispatch.cpp.static-init")
def test_registration_macros_define_static_initialisers():
    library_h = (INCLUDE / "torch/library.h").read_text()
    for macro, name in (("TORCH_LIBRARY", "TORCH_LIBRARY_static_init_"),
                        ("_TORCH_LIBRARY_IMPL", "TORCH_LIBRARY_IMPL_static_init_")):
        body = re.search(rf"^#define {macro}\(.*?\n\n", library_h, re.M | re.S).group(0)
        assert "static const torch::detail::TorchLibraryInit" in body, macro
        assert name in body, macro


@pytest.mark.timeout(600)
@pytest.mark.claim("dispatch.cpp.load-inline")
def test_extension_operator_is_in_the_dispatcher(cpp_extension, dispatcher):
    ops = torch.ops.dispatch_probe_cpp
    assert str(ops.scale_add.default._schema) == \
        "dispatch_probe_cpp::scale_add(Tensor x, Tensor y, float alpha) -> Tensor"


@pytest.mark.timeout(600)
@pytest.mark.claim("dispatch.cpp.kernels-compute")
def test_extension_kernels_compute(cpp_extension):
    ops = torch.ops.dispatch_probe_cpp
    assert ops.scale_add(torch.ones(3), torch.arange(3.0), 2.0).tolist() == [1.0, 3.0, 5.0]
    meta = ops.scale_add(torch.ones(3, device="meta"), torch.ones(3, device="meta"), 2.0)
    assert meta.device.type == "meta" and meta.shape == (3,)


@pytest.mark.timeout(600)
@pytest.mark.claim("dispatch.cpp.registrations-at-source")
def test_extension_registrations_name_its_source(cpp_extension, dispatcher):
    regs = dispatcher.registrations("dispatch_probe_cpp::scale_add")
    assert [r["key"] for r in regs] == ["CPU", "Meta"]
    for r in regs:
        assert Path(r["raw_path"]) == cpp_extension.source  # the extension's own main.cpp


@pytest.mark.timeout(600)
@pytest.mark.claim("dispatch.cpp.schema-debug-line")
def test_schema_debug_line_points_at_torch_library(cpp_extension):
    schema_line = [line for line in torch._C._dispatch_dump("dispatch_probe_cpp::scale_add").splitlines()
                   if line.startswith("debug: registered at ")]
    assert schema_line == [f"debug: registered at {cpp_extension.source}:"
                           f"{schema_line[0].rsplit(':', 1)[1]}"]
    source_lines = cpp_extension.source.read_text().splitlines()
    line = int(schema_line[0].rsplit(":", 1)[1])
    assert source_lines[line - 1].startswith("TORCH_LIBRARY(dispatch_probe_cpp, m)")


@pytest.mark.timeout(600)
@pytest.mark.claim("dispatch.cpp.dtype-switch")
def test_extension_kernel_switches_on_dtype(cpp_extension):
    ops = torch.ops.dispatch_probe_cpp
    doubles = torch.ones(2, dtype=torch.float64)
    assert ops.scale_add(doubles, doubles, 0.5).dtype == torch.float64
    floats = torch.ones(2, dtype=torch.float32)
    assert ops.scale_add(floats, floats, 0.5).tolist() == [1.5, 1.5]
    longs = torch.ones(2, dtype=torch.int64)
    assert torch._C._dispatch_keys(longs) == torch._C._dispatch_keys(doubles)
    with pytest.raises(NotImplementedError, match="^\"scale_add_cpu\" not implemented for 'Long'$"):
        ops.scale_add(longs, longs, 0.5)


@pytest.mark.timeout(600)
@pytest.mark.claim("dispatch.cpp.meta-no-switch")
def test_extension_meta_kernel_takes_any_dtype(cpp_extension):
    ops = torch.ops.dispatch_probe_cpp
    meta = torch.ones(2, dtype=torch.int64, device="meta")
    assert ops.scale_add(meta, meta, 0.5).dtype == torch.int64  # the Meta kernel has no switch


@pytest.mark.timeout(600)
@pytest.mark.claim("dispatch.cpp.def-with-kernel")
def test_def_with_a_kernel_registers_composite_implicit(cpp_extension, dispatcher):
    (twice,) = dispatcher.registrations("dispatch_probe_cpp::twice")
    assert twice["key"] == "CompositeImplicitAutograd" and twice["alias"]
    assert Path(twice["raw_path"]) == cpp_extension.source


@pytest.mark.timeout(600)
@pytest.mark.claim("dispatch.cpp.twice-autograd")
def test_autograd_sees_the_calls_of_twice(cpp_extension):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.ops.dispatch_probe_cpp.twice(x)
    assert y.grad_fn.name() == "AddBackward0"  # autograd of x.add(x), the body of the kernel
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


@pytest.mark.timeout(600)
@pytest.mark.claim("dispatch.cpp.twice-meta")
def test_twice_works_on_meta(cpp_extension):
    out = torch.ops.dispatch_probe_cpp.twice(torch.ones(2, device="meta"))
    assert out.device.type == "meta" and out.shape == (2,)


@pytest.mark.timeout(600)
@pytest.mark.claim("dispatch.cpp.no-autograd-kernel")
def test_missing_autograd_kernel_only_warns(cpp_extension, dispatcher):
    slot = dispatcher.table("dispatch_probe_cpp::scale_add")["AutogradCPU"]
    assert slot["kind"] == "backend fallback" and slot["path"] == "aten/src/ATen/core/VariableFallbackKernel.cpp"


@pytest.mark.timeout(600)
@pytest.mark.claim("dispatch.cpp.warn-not-implemented")
def test_missing_autograd_kernel_gives_a_warning_node(cpp_extension):
    assert torch._C._get_autograd_fallback_mode() == "warn"
    x = torch.ones(3, requires_grad=True)
    y = torch.ops.dispatch_probe_cpp.scale_add(x, torch.ones(3), 2.0)
    assert y.requires_grad and y.grad_fn.name() == "torch::autograd::WarnNotImplemented"


@pytest.mark.timeout(600)
@pytest.mark.claim("dispatch.cpp.backward-warns")
def test_backward_through_it_only_warns(cpp_extension):
    x = torch.ones(3, requires_grad=True)
    y = torch.ops.dispatch_probe_cpp.scale_add(x, torch.ones(3), 2.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y.sum().backward()
    messages = [str(w.message) for w in caught]
    assert any(m.startswith("dispatch_probe_cpp::scale_add: an autograd kernel was not registered to the "
                            "Autograd key(s) but we are trying to backprop through it") for m in messages)
    assert x.grad is None  # no gradient, and no error


LOAD_IN_A_NEW_PROCESS = """
import sys
import torch
from torch.utils.cpp_extension import load_inline
name, source, build = sys.argv[1:4]
load_inline(name, open(source).read(), build_directory=build, is_python_module=False, no_implicit_headers=True)
print(torch.ops.dispatch_probe_cpp.scale_add.default._schema)
"""


@pytest.mark.timeout(600)
@pytest.mark.claim("dispatch.cpp.cached-build")
def test_second_load_reuses_the_build(cpp_extension):
    library = cpp_extension.library
    stamp = library.stat().st_mtime_ns
    ninja_log = cpp_extension.build_directory / ".ninja_log"
    log_before = ninja_log.read_text()
    child = subprocess.run([sys.executable, "-c", LOAD_IN_A_NEW_PROCESS, library.stem, str(cpp_extension.original),
                            str(cpp_extension.build_directory)], capture_output=True, text=True, check=True)
    schema = child.stdout.strip().splitlines()[-1]
    assert schema.startswith("dispatch_probe_cpp::scale_add(")
    assert library.stat().st_mtime_ns == stamp  # the library was not rebuilt ...
    assert ninja_log.read_text() == log_before  # ... and ninja compiled nothing
