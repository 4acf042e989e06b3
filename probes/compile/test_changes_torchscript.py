"""Probes for the before/after pairs of docs/compile/torchscript.md: which warning TorchScript's
entry points emit, release by release (each side bounded to its releases with torch_version)."""
import warnings

import pytest
import torch

SCRIPT = r"`torch\.jit\.script` is deprecated\. Please switch to `torch\.compile` or `torch\.export`"
TRACE = r"`torch\.jit\.trace` is deprecated\. Please switch to `torch\.compile` or `torch\.export`"
SAVE = r"`torch\.jit\.save` is deprecated\. Please switch to `torch\.export`"
LOAD = r"`torch\.jit\.load` is deprecated\. Please switch to `torch\.export`"


def three_steps(x):
    for _ in range(3):
        x = x * 2
    return x


def warnings_of(call):
    """(result, [(category, text)]) of every warning `call` emits, none filtered out."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [(w.category, str(w.message)) for w in caught]


def deprecations(found):
    return [(category, text) for category, text in found if "deprecated" in text]


@pytest.mark.claim("compile.torchscript.script-trace-silent")
@pytest.mark.torch_version("<2.10")
def test_script_and_trace_warn_nothing_about_deprecation():
    scripted, found = warnings_of(lambda: torch.jit.script(three_steps))
    assert deprecations(found) == []
    traced, found = warnings_of(lambda: torch.jit.trace(three_steps, torch.ones(2)))
    assert deprecations(found) == []
    assert torch.equal(scripted(torch.ones(2)), torch.full((2,), 8.0))
    assert torch.equal(traced(torch.ones(2)), torch.full((2,), 8.0))


@pytest.mark.claim("compile.torchscript.save-load-silent")
@pytest.mark.torch_version("<2.10")
def test_save_and_load_warn_nothing_about_deprecation(tmp_path):
    scripted = torch.jit.script(three_steps)
    path = str(tmp_path / "f.pt")
    _, found = warnings_of(lambda: torch.jit.save(scripted, path))
    assert deprecations(found) == []
    loaded, found = warnings_of(lambda: torch.jit.load(path))
    assert deprecations(found) == []
    assert torch.equal(loaded(torch.ones(2)), torch.full((2,), 8.0))


@pytest.mark.claim("compile.torchscript.future-warning")
@pytest.mark.torch_version(">=2.14")
def test_script_and_trace_emit_a_future_warning():
    with pytest.warns(FutureWarning, match=SCRIPT) as caught:
        torch.jit.script(three_steps)
    with pytest.warns(FutureWarning, match=TRACE) as traced:
        torch.jit.trace(three_steps, torch.ones(2))
    # only FutureWarning, which is no DeprecationWarning (Python shows it by default, in any module)
    assert {w.category for w in [*caught, *traced] if "deprecated" in str(w.message)} == {FutureWarning}
    assert not issubclass(FutureWarning, DeprecationWarning)


@pytest.mark.claim("compile.torchscript.save-load-future-warning")
@pytest.mark.torch_version(">=2.14")
def test_save_and_load_emit_a_future_warning(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        scripted = torch.jit.script(three_steps)
    path = str(tmp_path / "f.pt")
    with pytest.warns(FutureWarning, match=SAVE):
        torch.jit.save(scripted, path)
    with pytest.warns(FutureWarning, match=LOAD):
        loaded = torch.jit.load(path)
    assert torch.equal(loaded(torch.ones(2)), torch.full((2,), 8.0))
