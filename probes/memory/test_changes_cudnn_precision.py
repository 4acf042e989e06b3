"""Probes for the older sides of the before/after pairs of docs/memory/cuda-precision.md on the
cuDNN fp32_precision setting: until 2.13, setting it does not reach the conv and RNN settings,
which keep their "tf32" defaults; since 2.13 it flows down to both. Each check runs in a fresh
torch process, as in test_notes_cuda_precision.py."""
import json

import pytest

from verified.probing import fresh_torch

PRECISIONS = """
b = torch.backends
print(json.dumps({"generic": b.fp32_precision, "matmul": b.cuda.matmul.fp32_precision,
                  "cudnn": b.cudnn.fp32_precision, "conv": b.cudnn.conv.fp32_precision,
                  "rnn": b.cudnn.rnn.fp32_precision}))
"""


def fresh_json(code, timeout=60):
    rc, out, err = fresh_torch.run("import json, torch\n" + code, timeout)
    assert rc == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.claim("memory.precision.backend-override-keeps-conv-rnn")
@pytest.mark.torch_version("<2.13")
@pytest.mark.timeout(60)
def test_cudnn_override_stops_above_conv_and_rnn():
    down = fresh_json("torch.backends.fp32_precision = 'tf32'\n" + PRECISIONS)
    assert down == {"generic": "tf32", "matmul": "tf32", "cudnn": "tf32", "conv": "tf32", "rnn": "tf32"}
    over = fresh_json("torch.backends.fp32_precision = 'tf32'\n"
                      "torch.backends.cudnn.fp32_precision = 'ieee'\n" + PRECISIONS)
    assert over == {"generic": "tf32", "matmul": "ieee", "cudnn": "ieee", "conv": "tf32", "rnn": "tf32"}


@pytest.mark.claim("memory.precision.cudnn-leaves-conv-rnn")
@pytest.mark.torch_version("<2.13")
@pytest.mark.timeout(60)
def test_cudnn_precision_reaches_matmul_but_not_conv_and_rnn():
    got = fresh_json("torch.backends.cudnn.fp32_precision = 'ieee'\n" + PRECISIONS)
    assert got == {"generic": "none", "matmul": "ieee", "cudnn": "ieee", "conv": "tf32", "rnn": "tf32"}
    got = fresh_json("torch.backends.cudnn.fp32_precision = 'tf32'\n"
                     "print(json.dumps([torch._C._get_fp32_precision_getter('cuda', 'all'),"
                     " torch.backends.cuda.matmul.fp32_precision]))")
    assert got == ["tf32", "tf32"]
    got = fresh_json("torch.backends.cuda.matmul.fp32_precision = 'tf32'\n" + PRECISIONS)
    assert got == {"generic": "none", "matmul": "tf32", "cudnn": "none", "conv": "tf32", "rnn": "tf32"}
