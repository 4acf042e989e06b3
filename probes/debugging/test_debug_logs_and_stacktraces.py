"""Probes for docs/debugging/logs-and-stacktraces.md. Environment variables are read when
torch is imported, so most of these run a fresh interpreter."""
import os
import re
import subprocess
import sys
import warnings

import pytest
import torch

from verified.probing.message_capture import observed  # a child's error, for the error index

SHAPE_ERROR = """
import torch
try:
    torch.ones(2, 3) @ torch.ones(2, 3)
except RuntimeError as e:
    print(str(e))
"""

COMPILE = """
import torch
{setup}
def f(x):
    return torch.sin(x) + 1  # the line the log quotes
print(torch.compile(f, backend="eager")(torch.zeros(3)).tolist())
"""

LOG_VARS = ("TORCH_LOGS", "TORCH_LOGS_OUT", "TORCH_LOGS_FORMAT", "TORCH_SHOW_CPP_STACKTRACES")


def run(code, timeout=90, script=None, **env_updates):
    """Run `code` in a fresh interpreter (from the file `script` if given, so that
    tracebacks can quote its lines)."""
    env = {k: v for k, v in os.environ.items() if k not in LOG_VARS}
    env.update(env_updates)
    if script is not None:
        script.write_text(code)
        argv = [sys.executable, str(script)]
    else:
        argv = [sys.executable, "-c", code]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.claim("debug.stacktraces.cpp-location")
@pytest.mark.timeout(90)
def test_show_cpp_stacktraces_adds_the_cpp_source_location():
    plain = run(SHAPE_ERROR)
    assert plain.returncode == 0
    assert plain.stdout.strip() == "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"

    shown = run(SHAPE_ERROR, TORCH_SHOW_CPP_STACKTRACES="1", TORCH_DISABLE_ADDR2LINE="1")
    assert shown.returncode == 0
    lines = shown.stdout.splitlines()
    assert lines[0] == "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"
    where = re.match(r"Exception raised from (\w+) at (\S+\.cpp):(\d+) \(most recent call first\):", lines[1])
    assert where, lines[1]
    function, path, line = where.groups()
    assert function == "meta" and path.endswith("aten/src/ATen/native/LinearAlgebra.cpp")
    assert line.isdigit()  # a line number
    frames = [ln for ln in lines[2:] if re.match(r"(frame )?#\d+ ", ln)]
    numbers = [int(re.match(r"(?:frame )?#(\d+) ", ln).group(1)) for ln in frames]
    assert frames and numbers == list(range(numbers[0], numbers[0] + len(frames)))  # consecutively numbered
    assert any("structured_mm" in ln for ln in frames)  # the C++ frame of the check that failed
    assert any(re.search(r" from \S+\.so[.\d]*:\d+$", ln) for ln in frames)  # library + offset, no addr2line


@pytest.mark.claim("debug.stacktraces.warning-location")
def test_cpp_warnings_always_name_their_source_line():
    x = torch.tensor([0.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            y = torch.sqrt(x) * 0
            with pytest.raises(RuntimeError):
                y.sum().backward()
    traced = [str(w.message) for w in caught if str(w.message).startswith("Error detected in SqrtBackward0")]
    assert len(traced) == 1
    assert re.search(r"\(Triggered internally at \S+/torch/csrc/autograd/python_anomaly_mode\.cpp:\d+\.\)\s*$",
                     traced[0])


@pytest.mark.claim("debug.logs.read-at-import")
@pytest.mark.timeout(90)
def test_torch_logs_is_parsed_by_import_torch():
    bad = run("import torch", TORCH_LOGS="graphcode")  # a typo of graph_code
    assert bad.returncode != 0
    assert "ValueError" in bad.stderr
    assert "Valid settings:" in bad.stderr and "graph_code" in bad.stderr


@pytest.mark.claim("debug.logs.empty-fails-import")
@pytest.mark.timeout(90)
def test_empty_torch_logs_fails_the_import():
    empty = run("import torch", TORCH_LOGS="")
    assert empty.returncode != 0
    assert "AttributeError: 'dict' object has no attribute 'get_log_level_pairs'" in empty.stderr
    line = next(x for x in empty.stderr.splitlines() if x.startswith("AttributeError: 'dict' object has no"))
    observed(AttributeError, line.removeprefix("AttributeError: "))


@pytest.mark.claim("debug.logs.graph-code")
@pytest.mark.timeout(120)
def test_graph_code_logs_the_captured_graph(tmp_path):
    out = run(COMPILE.format(setup=""), timeout=120, script=tmp_path / "f.py", TORCH_LOGS="graph_code")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[1.0, 1.0, 1.0]"
    log = out.stderr
    assert "[__graph_code]" in log and "TRACED GRAPH" in log
    assert "code: return torch.sin(x) + 1" in log  # the user's source line
    assert re.search(r"sin: \"f32\[3\]\[1\]cpu\" = torch\.sin\(", log)


@pytest.mark.claim("debug.logs.set-logs")
@pytest.mark.timeout(120)
def test_set_logs_in_code_and_its_precedence(tmp_path):
    setup = "torch._logging.set_logs(graph_code=True)"
    in_code = run(COMPILE.format(setup=setup), timeout=120, script=tmp_path / "f.py")
    assert in_code.returncode == 0, in_code.stderr[-2000:]
    assert "[__graph_code]" in in_code.stderr and "code: return torch.sin(x) + 1" in in_code.stderr


@pytest.mark.claim("debug.logs.set-logs-ignored")
@pytest.mark.timeout(120)
def test_set_logs_is_ignored_when_torch_logs_is_set(tmp_path):
    setup = "torch._logging.set_logs(graph_code=True)"
    overridden = run(COMPILE.format(setup=setup), timeout=120, script=tmp_path / "f.py", TORCH_LOGS="recompiles")
    assert overridden.returncode == 0
    assert "Using TORCH_LOGS environment variable for log settings, ignoring call to set_logs" in overridden.stderr
    assert "[__graph_code]" not in overridden.stderr  # the call was ignored


@pytest.mark.claim("debug.stacktraces.handler-chooses")
def test_the_handler_chooses_the_message_by_the_switch():
    from pathlib import Path

    header = (Path(torch.__file__).parent / "include" / "torch" / "csrc" / "Exceptions.h").read_text()
    body = header[header.index("#define _CATCH_GENERIC_ERROR("):]
    body = body[: body.index("\n\n")]
    assert re.search(r"auto msg = torch::get_cpp_stacktraces_enabled\(\)\s*\\\s*\? e\.what\(\)\s*\\\s*"
                     r": e\.what_without_backtrace\(\);", body)
    assert "PyErr_SetString(PythonErrorType, torch::processErrorMsg(msg))" in body


@pytest.mark.claim("debug.logs.settings-syntax")
def test_torch_logs_syntax():
    import logging

    from torch._logging._internal import _parse_log_settings

    settings = _parse_log_settings("+dynamo,-inductor,graph_code,guards,recompiles")
    levels = dict(settings.get_log_level_pairs())
    assert levels["torch._dynamo"] == logging.DEBUG
    assert levels["torch._inductor"] == logging.ERROR
    assert sorted(settings.artifact_names) == ["graph_code", "guards", "recompiles"]
