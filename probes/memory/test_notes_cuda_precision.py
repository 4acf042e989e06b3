"""Probes for docs/memory/cuda-precision.md: the TF32 and reduced-precision switches.

The switches are process-wide, and once the legacy and the new API have been mixed some
getters raise for the rest of the process, so every check that sets one runs in a fresh
process: one that has imported torch and done nothing else (verified.probing.fresh_torch forks it
from a process that only imported torch, instead of paying a torch import per check).
"""
import json
import re
from pathlib import Path

import pytest
import torch

from verified.probing import fresh_torch

HEADERS = Path(torch.__file__).parent / "include"


def run_fresh(code, timeout=60):
    """Run `code` in a fresh torch process; return (returncode, stdout, stderr)."""
    return fresh_torch.run("import json, torch\n" + code, timeout)


def fresh_json(code, timeout=60):
    rc, out, err = run_fresh(code, timeout)
    assert rc == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


PRECISIONS = """
b = torch.backends
print(json.dumps({"generic": b.fp32_precision, "matmul": b.cuda.matmul.fp32_precision,
                  "cudnn": b.cudnn.fp32_precision, "conv": b.cudnn.conv.fp32_precision,
                  "rnn": b.cudnn.rnn.fp32_precision}))
"""


@pytest.mark.claim("memory.precision.fp32-defaults")
@pytest.mark.timeout(60)
def test_fp32_precision_defaults():
    assert fresh_json(PRECISIONS) == {"generic": "none", "matmul": "none", "cudnn": "none",
                                      "conv": "tf32", "rnn": "tf32"}


@pytest.mark.claim("memory.precision.fp32-values")
@pytest.mark.timeout(60)
def test_fp32_precision_accepts_ieee_and_tf32_only():
    got = fresh_json("torch.backends.cuda.matmul.fp32_precision = 'ieee'\n"
                     "a = torch.backends.cuda.matmul.fp32_precision\n"
                     "torch.backends.cuda.matmul.fp32_precision = 'tf32'\n"
                     "print(json.dumps([a, torch.backends.cuda.matmul.fp32_precision]))")
    assert got == ["ieee", "tf32"]
    # other strings: the pair of probes below (refused since 2.10)


@pytest.mark.claim("memory.precision.fp32-values-ignored")
@pytest.mark.torch_version("<2.10")
def test_fp32_precision_ignores_other_strings_until_2_9():
    assert torch.backends.cuda.matmul.fp32_precision == "none"
    torch._C._set_fp32_precision_setter("cuda", "matmul", "bogus")  # no error
    torch._C._set_fp32_precision_setter("cuda", "matmul", "bf16")  # no error
    assert torch.backends.cuda.matmul.fp32_precision == "none"  # and no effect


@pytest.mark.claim("memory.precision.fp32-values-refused")
@pytest.mark.torch_version(">=2.10")
def test_fp32_precision_refuses_other_strings_since_2_10():
    assert torch.backends.cuda.matmul.fp32_precision == "none"
    with pytest.raises(RuntimeError, match="^Unknown precision: bogus$"):
        torch._C._set_fp32_precision_setter("cuda", "matmul", "bogus")
    with pytest.raises(RuntimeError, match="^backend 'cuda' does not support precision 'bf16'$"):
        torch._C._set_fp32_precision_setter("cuda", "matmul", "bf16")
    assert torch.backends.cuda.matmul.fp32_precision == "none"  # the failed calls changed nothing
    torch._C._set_fp32_precision_setter("cuda", "matmul", "tf32")  # the fix: a value it accepts
    assert torch.backends.cuda.matmul.fp32_precision == "tf32"
    torch._C._set_fp32_precision_setter("cuda", "matmul", "none")  # back to the default
    assert torch.backends.cuda.matmul.fp32_precision == "none"


@pytest.mark.claim("memory.precision.operator-override")
@pytest.mark.timeout(60)
def test_operator_setting_overrides_backend_setting():
    got = fresh_json("b = torch.backends\n"
                     "b.cudnn.fp32_precision = 'tf32'\n"
                     "b.cudnn.conv.fp32_precision = 'ieee'\n"
                     "b.cudnn.rnn.fp32_precision = 'ieee'\n" + PRECISIONS)
    assert got == {"generic": "none", "matmul": "tf32", "cudnn": "tf32", "conv": "ieee", "rnn": "ieee"}


@pytest.mark.claim("memory.precision.backend-override")
@pytest.mark.torch_version(">=2.13")
@pytest.mark.timeout(60)
def test_generic_setting_propagates_and_a_backend_overrides_it():
    down = fresh_json("torch.backends.fp32_precision = 'tf32'\n" + PRECISIONS)
    assert down == {"generic": "tf32", "matmul": "tf32", "cudnn": "tf32", "conv": "tf32", "rnn": "tf32"}
    over = fresh_json("torch.backends.fp32_precision = 'tf32'\n"
                      "torch.backends.cudnn.fp32_precision = 'ieee'\n" + PRECISIONS)
    assert over == {"generic": "tf32", "matmul": "ieee", "cudnn": "ieee", "conv": "ieee", "rnn": "ieee"}


@pytest.mark.claim("memory.precision.cudnn-is-cuda-wide")
@pytest.mark.torch_version(">=2.13")
@pytest.mark.timeout(60)
def test_cudnn_precision_is_the_cuda_backend_setting():
    got = fresh_json("torch.backends.cudnn.fp32_precision = 'ieee'\n" + PRECISIONS)
    assert got == {"generic": "none", "matmul": "ieee", "cudnn": "ieee", "conv": "ieee", "rnn": "ieee"}
    got = fresh_json("torch.backends.cudnn.fp32_precision = 'tf32'\n"
                     "print(json.dumps([torch._C._get_fp32_precision_getter('cuda', 'all'),"
                     " torch.backends.cuda.matmul.fp32_precision]))")
    assert got == ["tf32", "tf32"]
    # the matmul setting does not flow back up
    got = fresh_json("torch.backends.cuda.matmul.fp32_precision = 'tf32'\n" + PRECISIONS)
    assert got == {"generic": "none", "matmul": "tf32", "cudnn": "none", "conv": "tf32", "rnn": "tf32"}


@pytest.mark.claim("memory.precision.mixing-raises")
@pytest.mark.timeout(60)
def test_reading_the_legacy_flag_after_the_new_api_raises():
    code = ("torch.backends.cuda.matmul.fp32_precision = 'tf32'\n"
            "try:\n    torch.backends.cuda.matmul.allow_tf32\nexcept RuntimeError as e:\n    print(str(e))\n"
            "try:\n    torch.get_float32_matmul_precision()\nexcept RuntimeError as e:\n    print(str(e))\n")
    rc, out, err = run_fresh(code)
    assert rc == 0, err[-3000:]
    legacy, generic = out.strip().splitlines()
    assert legacy.startswith("PyTorch is checking whether allow_tf32_new is enabled for cuBlas matmul")
    assert "you have used mix of the legacy and new APIs to set the TF32 status for cublas matmul" in legacy
    assert generic.startswith("PyTorch is checking the matmul precision without a specific backend name")
    assert "mix of the legacy and new APIs to set the matmul precision" in generic
    # cuDNN: a per-operator setting that splits conv from rnn makes the legacy getter raise
    rc, out, err = run_fresh("torch.backends.cudnn.conv.fp32_precision = 'ieee'\ntorch.backends.cudnn.allow_tf32")
    assert rc != 0
    assert "cuDNN conv and cuDNN RNN have different TF32 flags" in err


@pytest.mark.claim("memory.precision.legacy-flag-maps")
@pytest.mark.timeout(60)
def test_legacy_flags_write_through_to_the_new_settings_without_warning():
    code = ("import warnings\nwarnings.simplefilter('error')\n"
            "torch.backends.cuda.matmul.allow_tf32 = True\n"
            "torch.backends.cudnn.allow_tf32 = False\n"
            "print(json.dumps([torch.backends.cuda.matmul.allow_tf32, torch.backends.cuda.matmul.fp32_precision,"
            " torch.get_float32_matmul_precision(), torch.backends.cudnn.allow_tf32,"
            " torch.backends.cudnn.conv.fp32_precision, torch.backends.cudnn.rnn.fp32_precision]))")
    # warnings are errors in the child: setting and reading the legacy flags warns about nothing
    assert fresh_json(code) == [True, "tf32", "high", False, "none", "none"]


@pytest.mark.claim("memory.precision.tf32-defaults")
@pytest.mark.timeout(60)
def test_tf32_defaults():
    got = fresh_json("print(json.dumps([torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,"
                     " torch._C._get_cublas_allow_tf32(), torch._C._get_cudnn_allow_tf32()]))")
    assert got == [False, True, False, True]


@pytest.mark.claim("memory.precision.matmul-precision-api")
@pytest.mark.timeout(60)
def test_set_float32_matmul_precision_drives_the_cuda_flag():
    got = fresh_json("out = [torch.get_float32_matmul_precision()]\n"
                     "for p in ('high', 'medium', 'highest'):\n"
                     "    torch.set_float32_matmul_precision(p)\n"
                     "    out.append([torch.get_float32_matmul_precision(), torch.backends.cuda.matmul.allow_tf32])\n"
                     "print(json.dumps(out))")
    assert got == ["highest", ["high", True], ["medium", True], ["highest", False]]


@pytest.mark.claim("memory.precision.cpp-setters")
def test_context_declares_the_cpp_switches():
    text = (HEADERS / "ATen" / "Context.h").read_text()
    for name in ("setAllowTF32CuBLAS", "setAllowTF32CuDNN", "setAllowFP16ReductionCuBLAS",
                 "setAllowBF16ReductionCuBLAS", "setAllowFP16AccumulationCuBLAS"):
        assert re.search(rf"\bvoid {name}\(", text), name
    # none of them is marked deprecated
    assert not re.search(r"(deprecated|DEPRECATED)[^;]*setAllowTF32", text)


@pytest.mark.claim("memory.precision.reduced-reduction-defaults")
@pytest.mark.timeout(60)
def test_reduced_precision_defaults_and_setters():
    got = fresh_json(
        "m = torch.backends.cuda.matmul\n"
        "out = [m.allow_fp16_reduced_precision_reduction, m.allow_bf16_reduced_precision_reduction,"
        " m.allow_fp16_accumulation]\n"
        "m.allow_fp16_reduced_precision_reduction = False\n"
        "m.allow_bf16_reduced_precision_reduction = False\n"
        "m.allow_fp16_accumulation = True\n"
        "out += [m.allow_fp16_reduced_precision_reduction, m.allow_bf16_reduced_precision_reduction,"
        " m.allow_fp16_accumulation, torch._C._get_cublas_allow_fp16_accumulation()]\n"
        "print(json.dumps(out))")
    assert got == [True, True, False, False, False, True, True]


@pytest.mark.claim("memory.precision.tf32-error")
@pytest.mark.devices("cuda")
def test_tf32_matmul_is_less_accurate(device):
    if torch.cuda.get_device_capability() < (8, 0):
        pytest.skip("TF32 needs compute capability 8.0 or newer")
    g = torch.Generator(device=device).manual_seed(0)
    a_full = torch.randn(2048, 2048, dtype=torch.float64, device=device, generator=g)
    b_full = torch.randn(2048, 2048, dtype=torch.float64, device=device, generator=g)
    ab_full = a_full @ b_full
    a, b = a_full.float(), b_full.float()
    old = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = True
        err_tf32 = (a @ b - ab_full).abs().max().item()
        torch.backends.cuda.matmul.allow_tf32 = False
        err_fp32 = (a @ b - ab_full).abs().max().item()
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old
    assert err_tf32 > 10 * err_fp32
