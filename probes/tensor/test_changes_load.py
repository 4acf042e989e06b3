"""Probes for the before/after pairs of docs/tensor/load-errors.md: the message of `torch.jit.load`
given a `torch.save` file, release by release (each side bounded to its releases with torch_version)."""
import io
import re

import pytest
import torch

NOT_FOUND = "PytorchStreamReader failed locating file constants.pkl: file not found"
HINT = (". This is an internal miniz error. If you are seeing this error, there is a high likelihood that your "
        "checkpoint file is corrupted. This can happen if the checkpoint was not saved properly, was transferred "
        "incorrectly, or the file was modified after saving.")


def save_file():
    buffer = io.BytesIO()
    torch.save(torch.ones(2), buffer)
    buffer.seek(0)
    return buffer


def fix_loads_it():
    assert torch.equal(torch.load(save_file()), torch.ones(2))  # the fix: torch.load reads a torch.save file


@pytest.mark.claim("tensor.load.jit-load-save-file-not-found")
@pytest.mark.torch_version("<2.11")
def test_jit_load_of_a_save_file_until_2_10():
    with pytest.raises(RuntimeError, match="^" + re.escape(NOT_FOUND) + "$"):
        torch.jit.load(save_file())
    fix_loads_it()


@pytest.mark.claim("tensor.load.jit-load-save-file-corrupt-hint")
@pytest.mark.torch_version(">=2.11")
def test_jit_load_of_a_save_file_since_2_11():
    with pytest.raises(RuntimeError, match="^" + re.escape(NOT_FOUND + HINT) + "$"):
        torch.jit.load(save_file())
    fix_loads_it()
