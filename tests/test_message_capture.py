"""What a probe's process notes of the messages it observed (verified.probing.message_capture)."""
import inspect
import json
import warnings

import pytest
import torch

from verified.probing import message_capture as capture


@pytest.fixture
def notes():
    capture.record_checked_messages()
    capture.record_checked_messages()  # twice is harmless
    capture.checked.clear()
    yield capture.checked
    capture.checked.clear()


def test_type_names_are_public():
    import pickle as public_pickle

    assert capture.type_name(RuntimeError) == "RuntimeError"
    assert capture.type_name(public_pickle.UnpicklingError) == "pickle.UnpicklingError"
    assert capture.type_name(json.JSONDecodeError) == "json.decoder.JSONDecodeError"
    assert capture.type_name(torch.OutOfMemoryError) == "torch.OutOfMemoryError"


@pytest.mark.filterwarnings("ignore:other text")
def test_raises_and_warns_blocks_are_noted_with_or_without_match(notes):
    with pytest.raises(ValueError, match="invalid literal"):
        int("three")
    with pytest.raises(TypeError):  # no match=: noted all the same
        object() + 1
    with pytest.raises(KeyError):
        raise KeyError("unchecked")  # the probe's own text: not noted
    with pytest.raises(ValueError, match="own"):
        raise ValueError("own text")
    with pytest.raises(AssertionError):  # a block whose match fails notes nothing
        with pytest.raises(ValueError, match="nowhere"):
            int("absent")
    with pytest.warns(UserWarning, match="careful"):
        warnings.warn("careful now", stacklevel=1)  # the probe's own warning: not noted
    with pytest.raises(TypeError):  # a `raise` line of the standard library (inspect.py): not the probe's
        inspect.getfile(int)
    assert [(n["kind"], n["type"], n["message"]) for n in notes] == [
        ("error", "ValueError", "invalid literal for int() with base 10: 'three'"),
        ("error", "TypeError", "unsupported operand type(s) for +: 'object' and 'int'"),
        ("error", "TypeError", "<class 'int'> is a built-in class"),
    ]


def test_a_torch_message_is_noted_with_its_python_raise_line(notes):
    with pytest.raises(RuntimeError):  # no match=
        torch.nn.Linear(2, 2).load_state_dict({})
    with pytest.raises(RuntimeError):  # raised in C++: no Python raise line
        torch.zeros(6).view(4, 2)
    torch.storage._reset_warn_typed_storage_removal()  # torch warns once per process: another test may have
    with pytest.warns(UserWarning):
        torch.tensor([1.0]).storage()  # TypedStorage is deprecated, warned from torch's Python
    state_dict, view, storage = notes
    assert state_dict["type"] == "RuntimeError" and "Missing key(s) in state_dict" in state_dict["message"]
    at = state_dict["raised_at"]
    assert at["path"] == "torch/nn/modules/module.py"
    installed = torch.__file__.rsplit("/torch/", 1)[0] + "/" + at["path"]
    assert open(installed).read().splitlines()[at["line"] - 1].lstrip().startswith("raise ")
    assert view["message"] == "shape '[4, 2]' is invalid for input of size 6" and "raised_at" not in view
    assert storage["kind"] == "warning" and "TypedStorage is deprecated" in storage["message"]


def test_a_message_from_a_child_process_is_noted_by_the_probe(notes):
    capture.observed(ValueError, "DistributedDataParallel device_ids ... but got device_ids [1]")
    capture.observed("torch.distributed.DistStoreError", "wait timeout after 1000ms, keys: /never-set")
    capture.observed(ValueError, "DistributedDataParallel device_ids ... but got device_ids [1]")  # once
    capture.observed(UserWarning, "traced", kind="warning")
    assert [(n["kind"], n["type"]) for n in notes] == [
        ("error", "ValueError"), ("error", "torch.distributed.DistStoreError"), ("warning", "UserWarning")]
    with pytest.raises(ValueError, match="needs the message as text"):
        capture.observed(ValueError, None)
    with pytest.raises(ValueError, match="kind must be"):
        capture.observed(ValueError, "x", kind="info")
