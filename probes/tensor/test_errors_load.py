"""Probes for docs/tensor/load-errors.md: torch.load and torch.save errors (weights_only, map_location,
files that are not checkpoints, pickled classes).

Each probe triggers its messages the way the claim's cause says (`pytest.raises` / `pytest.warns`
with the stable part of the message in `match=`), then runs the claim's fix and checks it works.
Files are in-memory buffers; the CUDA checkpoint is made by saving with torch.serialization's
location tag replaced, so no GPU is needed.

Chosen from what users ask about (threads read for this page):
- the issue text of this site (issue 26: "WeightsUnpickler error: Unsupported operand 118", here the first byte
  of a git-lfs pointer file)
- https://kiwix.lema.org/stackoverflow.com_en_all_2023-11/questions/61854165/why-must-use-dataparallel-when-testing
  (checkpoints made on one setup, loaded on another)
- https://duoke360.com/post/35018 (pickling lambdas in torch.save and DataLoader)
"""
import argparse
import io
import re
import sys
import types

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.serialization as serialization


def lit(text):
    """A regex matching `text` literally."""
    return re.escape(text)


def saved(obj, **kw):
    buffer = io.BytesIO()
    torch.save(obj, buffer, **kw)
    buffer.seek(0)
    return buffer


def saved_as_cuda(obj):
    """A checkpoint whose storages are tagged 'cuda:0', as torch.save writes them on a GPU."""
    tag = serialization.location_tag
    serialization.location_tag = lambda storage: "cuda:0"
    try:
        return saved(obj)
    finally:
        serialization.location_tag = tag


WEIGHTS_ONLY = "Weights only load failed."
LFS_POINTER = b"version https://git-lfs.github.com/spec/v1\noid sha256:0123\nsize 1234\n"


@pytest.mark.claim("tensor.load.numpy-array-global")
def test_numpy_array_in_checkpoint():
    with pytest.raises(pickle_error(), match=lit(WEIGHTS_ONLY) + r"(.|\n)*" +
                       lit("Unsupported global: GLOBAL numpy._core.multiarray._reconstruct was not an allowed global "
                           "by default.")):
        torch.load(saved({"mean": np.zeros(2)}))
    with serialization.safe_globals([np._core.multiarray._reconstruct, np.ndarray, np.dtype,
                                     type(np.dtype(np.float64))]):
        assert torch.load(saved({"mean": np.zeros(2)}))["mean"].tolist() == [0.0, 0.0]
    assert torch.load(saved({"mean": torch.from_numpy(np.zeros(2))}))["mean"].tolist() == [0.0, 0.0]


@pytest.mark.claim("tensor.load.namespace-global")
def test_argparse_namespace_in_checkpoint():
    checkpoint = {"args": argparse.Namespace(lr=0.1), "w": torch.ones(1)}
    with pytest.raises(pickle_error(), match=r"(.|\n)*" + lit("Unsupported global: GLOBAL argparse.Namespace was not "
                                                              "an allowed global by default. Please use "
                                                              "`torch.serialization.add_safe_globals([argparse.Namespace])`")):
        torch.load(saved(checkpoint))
    with serialization.safe_globals([argparse.Namespace]):
        assert torch.load(saved(checkpoint))["args"].lr == 0.1
    assert torch.load(saved({"args": vars(argparse.Namespace(lr=0.1))}))["args"] == {"lr": 0.1}


@pytest.mark.claim("tensor.load.class-global")
def test_pickled_module_class():
    lib = types.ModuleType("trainlib_probe")
    exec("import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
         "        self.fc = nn.Linear(2, 2)\n", lib.__dict__)
    sys.modules["trainlib_probe"] = lib
    try:
        whole = saved(lib.Net())
        with pytest.raises(pickle_error(), match=r"(.|\n)*" + lit("Unsupported global: GLOBAL trainlib_probe.Net was "
                                                                  "not an allowed global by default.")):
            torch.load(whole)
        whole.seek(0)
        assert isinstance(torch.load(whole, weights_only=False), lib.Net)  # only for a file you trust
        del lib.Net
        whole.seek(0)
        with pytest.raises(AttributeError, match=r"^Can't get attribute 'Net' on <module 'trainlib_probe'>$"):
            torch.load(whole, weights_only=False)
    finally:
        del sys.modules["trainlib_probe"]
    whole.seek(0)
    with pytest.raises(ModuleNotFoundError, match=r"^No module named 'trainlib_probe'$"):
        torch.load(whole, weights_only=False)
    state = nn.Linear(2, 2).state_dict()
    assert sorted(torch.load(saved(state))) == ["bias", "weight"]  # a state_dict needs no class


def pickle_error():
    import pickle
    return pickle.UnpicklingError


@pytest.mark.claim("tensor.load.lfs-pointer")
def test_git_lfs_pointer_file():
    with pytest.raises(pickle_error(), match=lit(WEIGHTS_ONLY) + r"(.|\n)*WeightsUnpickler error: \n\n"
                                                                 r"Unsupported operand 118\n"):
        torch.load(io.BytesIO(LFS_POINTER))
    with pytest.raises(pickle_error(), match=r"^invalid load key, 'v'\.$"):
        torch.load(io.BytesIO(LFS_POINTER), weights_only=False)
    assert LFS_POINTER.startswith(b"version https://git-lfs") and ord("v") == 118
    assert torch.load(saved(torch.ones(2))).tolist() == [1.0, 1.0]  # the real file loads


@pytest.mark.claim("tensor.load.html-file")
def test_html_page_instead_of_checkpoint():
    with pytest.raises(pickle_error(), match=r"(.|\n)*WeightsUnpickler error: \n\nUnsupported operand 60\n"):
        torch.load(io.BytesIO(b"<!DOCTYPE html><html></html>"))
    assert ord("<") == 60


@pytest.mark.claim("tensor.load.cuda-on-cpu")
@pytest.mark.skipif(torch.cuda.is_available(), reason="the message is the one of a machine without CUDA")
def test_cuda_checkpoint_on_cpu_machine():
    with pytest.raises(RuntimeError, match=lit("Attempting to deserialize object on a CUDA device but "
                                               "torch.cuda.is_available() is False. If you are running on a CPU-only "
                                               "machine, please use torch.load with "
                                               "map_location=torch.device('cpu') to map your storages to the CPU.")):
        torch.load(saved_as_cuda({"w": torch.ones(2)}))
    for where in ("cpu", torch.device("cpu"), {"cuda:0": "cpu"}, lambda storage, location: storage):
        assert torch.load(saved_as_cuda({"w": torch.ones(2)}), map_location=where)["w"].device.type == "cpu"


@pytest.mark.claim("tensor.load.unknown-location")
def test_unknown_map_location():
    with pytest.raises(RuntimeError, match=lit("don't know how to restore data location of "
                                               "torch.storage.UntypedStorage (tagged with gpu)")):
        torch.load(saved(torch.ones(2)), map_location="gpu")
    assert torch.load(saved(torch.ones(2)), map_location="cpu").device.type == "cpu"


@pytest.mark.claim("tensor.load.torchscript-archive")
def test_torchscript_archive_through_torch_load():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit.* says it is deprecated
        archive = io.BytesIO()
        torch.jit.save(torch.jit.script(nn.Linear(2, 2)), archive)
        archive.seek(0)
        with pytest.warns(UserWarning, match=lit("'torch.load' received a zip file that looks like a TorchScript "
                                                 "archive dispatching to 'torch.jit.load' (call 'torch.jit.load' "
                                                 "directly to silence this warning)")):
            with pytest.raises(RuntimeError, match=lit("Cannot use ``weights_only=True`` with TorchScript archives "
                                                       "passed to ``torch.load``.")):
                torch.load(archive)
        archive.seek(0)
        assert torch.jit.load(archive)(torch.zeros(1, 2)).shape == (1, 2)
        # the reverse (a torch.save file given to torch.jit.load): probes/tensor/test_changes_load.py


@pytest.mark.claim("tensor.load.save-lambda")
def test_save_module_with_lambda():
    model = nn.Linear(2, 2)
    model.activation = lambda x: x.relu()
    with pytest.raises(AttributeError, match=lit("Can't pickle local object "
                                                 "'test_save_module_with_lambda.<locals>.<lambda>'")):
        torch.save(model, io.BytesIO())
    assert sorted(torch.load(saved(model.state_dict()))) == ["bias", "weight"]
