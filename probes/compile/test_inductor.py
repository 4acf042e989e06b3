"""Probes for docs/compile/inductor.md.

The Inductor probe is slow: it compiles a C++ kernel with the host compiler into an empty
cache directory of its own (about 30 s on two cores), so that finding the compiled library
there proves this run wrote it.
"""
import re

import pytest
import torch
import torch._dynamo


def pointwise_chain(x):
    return (x.sin() * 2 + 1).relu()


@pytest.mark.claim("compile.backends.registry")
def test_backend_registry():
    torch._dynamo.reset()
    listed = torch._dynamo.list_backends()
    everything = torch._dynamo.list_backends(exclude_tags=())
    assert "inductor" in listed
    assert "eager" not in listed and "aot_eager" not in listed  # tagged "debug", hidden by default
    assert all(name in everything for name in ("eager", "aot_eager", "inductor"))
    x = torch.randn(4)
    for name in ("eager", "aot_eager"):
        torch._dynamo.reset()
        assert torch.allclose(torch.compile(pointwise_chain, backend=name)(x), pointwise_chain(x))


@pytest.mark.claim("compile.inductor.cpp-kernel")
@pytest.mark.timeout(300)
def test_inductor_fuses_into_one_cpp_kernel(monkeypatch, tmp_path):
    from torch._inductor import config as inductor_config
    from torch._inductor.utils import run_and_get_code

    cache = tmp_path / "inductor-cache"  # empty: the library found below was written by this compile
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(cache))
    monkeypatch.setattr(inductor_config, "compile_threads", 1)  # no worker pool inside a forked probe
    assert not cache.exists()
    torch._dynamo.reset()
    x = torch.randn(16, generator=torch.Generator().manual_seed(0))
    compiled = torch.compile(pointwise_chain)  # no backend named: the default
    out, (code, *_) = run_and_get_code(compiled, x)
    # Not bitwise: where 2*sin(x)+1 is near 0, the fused kernel and eager differ by a float32
    # rounding step, beyond allclose's default atol (1e-8); assert_close allows float32 rounding.
    torch.testing.assert_close(out, pointwise_chain(x))
    kernels = re.findall(r"^(cpp_fused_\w+) = async_compile\.cpp_pybinding", code, flags=re.MULTILINE)
    assert kernels == ["cpp_fused_add_mul_relu_sin_0"]  # one kernel for the four operations
    assert '#include <torch/csrc/inductor/cpp_prefix.h>' in code and 'extern "C"' in code
    assert "at::vec::Vectorized<float>" in code
    assert "aten.sin" not in code and "extern_kernels" not in code.split("def call(")[-1]
    assert any(cache.rglob("*.so"))  # the compiled kernel lives in the cache
