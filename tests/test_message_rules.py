"""The normalisation rules and the ranking of the pasted-message lookup (verified.probing.message_rules),
and that the browser's script reads a message exactly as the build does."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from verified.probing import message_rules as rules

SCRIPT = Path(__file__).resolve().parents[1] / "verified" / "site" / "static" / "verified-errors.js"

MESSAGES = [
    ("RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 256x10)",
     "mat1 and mat2 shapes cannot be multiplied (‹shape› and ‹shape›)"),
    ("mat1 and mat2 shapes cannot be multiplied (10x7 and 5x3)",  # the 0x7 of 10x7 is no address
     "mat1 and mat2 shapes cannot be multiplied (‹shape› and ‹shape›)"),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
     "79.15 GiB of which 3.06 MiB is free.",
     "CUDA out of memory. Tried to allocate ‹bytes›. GPU ‹n› has a total capacity of ‹bytes› of which ‹bytes› is free."),
    ("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
     "Expected all tensors to be on the same device, but found at least two devices, ‹device› and ‹device›!"),
    ("shape '[3, 5]' is invalid for input of size 12", "shape '‹shape›' is invalid for input of size ‹n›"),
    ("got torch.Size([2, 3]) at 0x7f3a2c, stride (1, 2)\n  next", "got ‹shape› at ‹address›, stride ‹shape› next"),
    ("cannot assign 'torch.FloatTensor' as parameter 'bias'", "cannot assign ‹name› as parameter ‹name›"),
    ('Missing key(s) in state_dict: "0.bias", "1.weight".', "Missing key(s) in state_dict: ‹name›."),
    ('Error(s) in loading state_dict for ResNet:\n\tUnexpected key(s) in state_dict: "fc.w".',
     "Error(s) in loading state_dict for ‹name›: Unexpected key(s) in state_dict: ‹name›."),
    ("No such file or directory: '/tmp/run3/model.pt' and /home/ann/ckpt/last.pt, not single-device/multi-device",
     "No such file or directory: '‹path›' and ‹path›, not single-device/multi-device"),
    ("wait timeout after 1000ms, forward() returned 2.5e-3", "wait timeout after ‹n›, forward() returned ‹n›"),
    ("float32 and conv2d and gcd_cpu stay, 3D too", "float32 and conv2d and gcd_cpu stay, ‹n› too"),
    ("\x1b[1mWeights only load failed\x1b[0m", "Weights only load failed"),
    ("W0110 12:27:06.332000 158 torch/_dynamo/convert_frame.py:1551] [2/8] torch._dynamo hit a limit (8)",
     "torch._dynamo hit a limit ‹shape›"),  # a logger's prefix goes
    ("[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] Watchdog caught a timeout", "Watchdog caught a timeout"),
    ("torch._dynamo.exc.Unsupported: comparison of x", "comparison of x"),  # a class named with its module
    ("connect [172.31.71.170]:29500: Connection refused", "connect [‹address›]:‹n›: Connection refused"),
    ('File "torch/_dynamo/eval_frame.py" and model\\layers.py', 'File "‹path›" and ‹path›'),
]


@pytest.mark.parametrize("message, expected", MESSAGES)
def test_what_the_input_decides_becomes_a_placeholder(message, expected):
    assert rules.normalise(message) == expected


def test_the_type_a_pasted_line_starts_with():
    assert rules.query_type("torch.OutOfMemoryError: CUDA out of memory.") == "torch.OutOfMemoryError"
    assert rules.query_type("RuntimeError : x") == "RuntimeError"
    assert rules.query_type("mat1 and mat2") == ""
    assert rules.query_type("[rank0]: W0110 12:27:06.3 158 x.py:1] torch._dynamo.exc.Unsupported: y") == \
        "torch._dynamo.exc.Unsupported"
    assert rules.query_type("Note: the file") == ""


ENTRIES = [
    {"type": "RuntimeError", "normalised": rules.normalise("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)")},
    {"type": "RuntimeError", "normalised": rules.normalise("The size of tensor a (3) must match the size of tensor b "
                                                           "(4) at non-singleton dimension 1")},
    {"type": "torch.OutOfMemoryError", "normalised": rules.normalise(
        "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 7.6 GiB")},
    {"type": "RuntimeError", "normalised": rules.normalise("element 0 of tensors does not require grad and does not "
                                                           "have a grad_fn")},
    {"type": "UserWarning", "normalised": "Converting a tensor to a Python boolean might cause the trace to be incorrect"},
]


@pytest.mark.parametrize("query, best", [
    ("RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 256x10)", 0),
    ("The size of tensor a (128) must match the size of tensor b (64) at non-singleton dimension 3", 1),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 1 has a total capacity of "
     "79.15 GiB of which 3.06 MiB is free. Including non-PyTorch memory, this process has 79.14 GiB in use.", 2),
    ("element 0 of tensors does not require grad", 3),  # a part of the message
    ("my loss.backward() says: element 0 of tensors does not require grad and does not have a grad_fn", 3),
])
def test_an_unknown_number_or_extra_words_still_rank_the_entry_first(query, best):
    ranked = rules.rank(query, ENTRIES)
    assert ranked and ranked[0][1] is ENTRIES[best], [(round(s, 3), e["normalised"]) for s, e in ranked]


def test_a_query_sharing_nothing_ranks_nothing():
    assert rules.rank("zzz qqq", ENTRIES) == []


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the browser's script")
def test_the_browser_reads_messages_and_ranks_as_the_build_does():
    data = {"index": "reference/errors", **rules.rules_for_browser(),
            "entries": [{"t": e["type"], "k": "error", "m": e["normalised"], "n": e["normalised"], "a": f"m{i}",
                         "c": []} for i, e in enumerate(ENTRIES)]}
    queries = [m for m, _ in MESSAGES] + ["element 0 of tensors does not require grad", "CUDA out of memory"]
    program = f"""
global.window = {{VERIFIED_ERRORS: {json.dumps(data)}}};
global.document = {{addEventListener: () => {{}}}};
{SCRIPT.read_text()}
const queries = {json.dumps(queries)};
console.log(JSON.stringify(queries.map((q) => [VerifiedErrors.normalise(q), VerifiedErrors.queryType(q),
  VerifiedErrors.rank(q).map(([s, e]) => [Math.round(s * 1e6) / 1e6, e.a])])));
"""
    out = subprocess.run(["node", "-e", program], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    for query, (normalised, kind, ranked) in zip(queries, seen):
        assert normalised == rules.normalise(query), query
        assert kind == rules.query_type(query), query
        expected = [[round(s, 6), f"m{ENTRIES.index(e)}"] for s, e in rules.rank(query, ENTRIES)]
        assert [a for _, a in ranked] == [a for _, a in expected], query
        assert all(abs(a[0] - b[0]) < 1e-5 for a, b in zip(ranked, expected)), query
