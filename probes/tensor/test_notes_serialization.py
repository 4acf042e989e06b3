"""Probes for the claims that check PyTorch's serialization note (docs/tensor/serialization.md)."""
import inspect
import io
import mmap
import os
import pickle
import struct
import sys
import warnings
import zipfile
import zlib

import numpy as np
import pytest
import torch
from torch import nn

CALLS = []


def record_call(tag):
    """Called by unpickling a `Runs`; appends to CALLS so a probe can tell whether it ran."""
    CALLS.append(tag)
    return tag


class Runs:
    """Pickles as a call of `record_call`: what a malicious pickle would do with os.system."""

    def __reduce__(self):
        return (record_call, ("ran",))


class Trusted:
    def __init__(self, value):
        self.value = value


def _saved(obj, **kwargs):
    buf = io.BytesIO()
    torch.save(obj, buf, **kwargs)
    return buf.getvalue()


def _load(raw, **kwargs):
    return torch.load(io.BytesIO(raw), **kwargs)


def _members(raw):
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        return [i.filename for i in zf.infolist()]


def _data_start(raw, info):
    name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
    return info.header_offset + 30 + name_len + extra_len


def _file_mappings(path):
    """(start, end, flags) of the mappings of `path` in this process."""
    real = os.path.realpath(path)
    out = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(None, 5)
            if len(fields) == 6 and fields[5].strip() == real:
                start, end = (int(x, 16) for x in fields[0].split("-"))
                out.append((start, end, fields[1]))
    return out


# --- Saving and loading tensors ---------------------------------------------------------

@pytest.mark.claim("tensor.serialization.containers-round-trip")
def test_containers_round_trip(tmp_path):
    path = tmp_path / "tensor_dict.pt"
    obj = {"a": torch.tensor([1.0, 2.0]), "b": [torch.tensor([3.0]), (torch.arange(2), "label", 7)]}
    torch.save(obj, path)
    back = torch.load(path)
    assert type(back) is dict and list(back) == ["a", "b"]
    assert torch.equal(back["a"], obj["a"])
    assert type(back["b"]) is list and type(back["b"][1]) is tuple
    assert torch.equal(back["b"][0], obj["b"][0]) and torch.equal(back["b"][1][0], obj["b"][1][0])
    assert back["b"][1][1:] == ("label", 7)


@pytest.mark.claim("tensor.serialization.load-not-plain-pickle")
def test_load_does_not_default_to_plain_pickle():
    assert inspect.signature(torch.save).parameters["pickle_module"].default is pickle
    assert inspect.signature(torch.load).parameters["pickle_module"].default is None
    assert inspect.signature(torch.load).parameters["weights_only"].default is None
    raw = _saved({"w": torch.zeros(2), "payload": Runs()})
    CALLS.clear()
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        _load(raw)
    assert CALLS == []  # the function named in the pickle was never called
    back = _load(raw, pickle_module=pickle)
    assert back["payload"] == "ran" and CALLS == ["ran"]


# --- Saving and loading tensors preserves views -----------------------------------------

@pytest.mark.claim("tensor.serialization.strided-view-write-reaches-base")
def test_loaded_strided_view_writes_into_loaded_base():
    numbers = torch.arange(1, 10)
    evens = numbers[1::2]
    raw = _saved([numbers, evens])
    assert [m.split("/", 1)[1] for m in _members(raw) if "/data/" in m and ".data/" not in m] == ["data/0"]
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        assert zf.getinfo("archive/data/0").file_size == 9 * 8
    loaded_numbers, loaded_evens = _load(raw)
    assert loaded_evens.stride() == (2,) and loaded_evens.storage_offset() == 1
    loaded_evens *= 2
    assert loaded_numbers.tolist() == [1, 4, 3, 8, 5, 12, 7, 16, 9]


@pytest.mark.claim("tensor.serialization.typed-storage-warns")
def test_storage_method_warns_but_reports_whole_storage():
    large = torch.arange(1, 1000)
    loaded_small = _load(_saved(large[0:5]))
    assert loaded_small.untyped_storage().nbytes() == 999 * 8
    torch.storage._reset_warn_typed_storage_removal()
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        size = loaded_small.storage().size()
    assert size == 999
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert loaded_small.storage().size() == 999  # once per process: the second call is silent
    clone_loaded = _load(_saved(large[0:5].clone()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert clone_loaded.storage().size() == 5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert loaded_small.untyped_storage().nbytes() == 999 * 8


@pytest.mark.claim("tensor.serialization.clones-save-separately")
def test_clones_lose_sharing():
    numbers = torch.arange(1, 10)
    evens = numbers[1::2]
    raw = _saved([numbers.clone(), evens.clone()])
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        sizes = sorted(i.file_size for i in zf.infolist() if "/data/" in i.filename and ".data/" not in i.filename)
    assert sizes == [4 * 8, 9 * 8]
    loaded_numbers, loaded_evens = _load(raw)
    assert loaded_numbers.untyped_storage().data_ptr() != loaded_evens.untyped_storage().data_ptr()
    loaded_evens *= 2
    assert loaded_numbers.tolist() == list(range(1, 10))


# --- Saving and loading modules ---------------------------------------------------------

@pytest.mark.claim("tensor.serialization.whole-module-needs-unsafe-load")
def test_whole_module_checkpoint(tmp_path):
    path = tmp_path / "module.pt"
    torch.save(nn.Linear(2, 2), path)
    with pytest.raises(pickle.UnpicklingError,
                       match="Unsupported global: GLOBAL torch.nn.modules.linear.Linear was not an allowed global"):
        torch.load(path)
    back = torch.load(path, weights_only=False)
    assert type(back) is nn.Linear and back.weight.shape == (2, 2)
    torch.save(nn.Linear(2, 2).state_dict(), tmp_path / "state.pt")
    assert sorted(torch.load(tmp_path / "state.pt")) == ["bias", "weight"]


# --- Serialized file format -------------------------------------------------------------

@pytest.mark.claim("tensor.serialization.zip64-records")
def test_zip64_end_records():
    raw = _saved(torch.arange(3.0))
    assert raw.startswith(b"PK\x03\x04")
    assert struct.pack("<I", 0x06064B50) in raw  # ZIP64 end of central directory record
    assert struct.pack("<I", 0x07064B50) in raw  # ZIP64 end of central directory locator
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_STORED}


@pytest.mark.claim("tensor.serialization.legacy-format-still-loads")
def test_legacy_format():
    t = torch.arange(4.0)
    raw = _saved({"t": t}, _use_new_zipfile_serialization=False)
    assert not zipfile.is_zipfile(io.BytesIO(raw))
    assert raw[:2] == b"\x80\x02"  # a bare pickle stream (protocol 2), not a zip
    assert torch.equal(_load(raw)["t"], t)


@pytest.mark.claim("tensor.serialization.extra-members")
def test_archive_member_order():
    raw = _saved(torch.arange(3.0))
    assert _members(raw) == [
        "archive/data.pkl", "archive/.format_version", "archive/.storage_alignment",
        "archive/byteorder", "archive/data/0", "archive/version", "archive/.data/serialization_id",
    ]


@pytest.mark.claim("tensor.serialization.small-records")
def test_small_record_contents():
    raw = _saved(torch.arange(3.0))
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        assert zf.read("archive/byteorder") == sys.byteorder.encode()
        assert zf.read("archive/version") == b"3\n"
        assert zf.read("archive/.format_version") == b"1"
        assert zf.read("archive/.storage_alignment") == b"64"


# --- Layout control ---------------------------------------------------------------------

@pytest.mark.claim("tensor.serialization.mmap-maps-file")
def test_mmap_load_maps_the_file(tmp_path):
    path = tmp_path / "ckpt.pt"
    torch.save({"w": torch.arange(1.0, 4097.0)}, path)
    plain = torch.load(path)["w"]
    assert _file_mappings(path) == []
    mapped = torch.load(path, mmap=True)["w"]
    ptr = mapped.data_ptr()
    hits = [(s, e, f) for s, e, f in _file_mappings(path) if ptr in range(s, e)]
    assert len(hits) == 1 and hits[0][2].endswith("p")  # a private mapping of the checkpoint file
    assert not any(plain.data_ptr() in range(s, e) for s, e, _ in _file_mappings(path))
    mapped[0] = -5.0
    assert torch.load(path)["w"][0].item() == 1.0  # copy-on-write: the file is unchanged
    del mapped


@pytest.mark.claim("tensor.serialization.mmap-needs-path")
def test_mmap_needs_a_path():
    buf = io.BytesIO(_saved(torch.ones(2)))
    with pytest.raises(ValueError, match="f must be a file path in order to use the mmap argument"):
        torch.load(buf, mmap=True)


@pytest.mark.claim("tensor.serialization.skip-data")
def test_skip_data_both_ways(tmp_path):
    path = tmp_path / "skip.pt"
    with torch.serialization.skip_data():
        torch.save({"w": torch.full((4096,), 7.0)}, path)
    raw = path.read_bytes()
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        info = zf.getinfo("skip/data/0")
        assert info.file_size == 4096 * 4
        start = _data_start(raw, info)
    assert raw[start:start + info.file_size] == bytes(4096 * 4)  # space reserved, nothing written
    assert torch.equal(torch.load(path)["w"], torch.zeros(4096))

    source = torch.full((64, 4096), 7.0)  # kept alive, so the load cannot get its memory back
    torch.save({"w": source}, path)
    with torch.serialization.skip_data():
        back = torch.load(path)["w"]
    assert back.shape == (64, 4096) and back.dtype == torch.float32
    assert not torch.equal(back, source)  # the bytes were not read
    assert torch.equal(torch.load(path)["w"], source)


@pytest.mark.claim("tensor.serialization.fake-load-offsets")
def test_fake_tensor_load_reports_offsets(tmp_path):
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    path = tmp_path / "checkpoint.pt"
    torch.save(nn.Linear(10, 10).state_dict(), path)
    raw = path.read_bytes()
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        starts = {i.filename.rsplit("/", 1)[1]: _data_start(raw, i) for i in zf.infolist()
                  if "/data/" in i.filename and ".data/" not in i.filename}
    with FakeTensorMode():
        fake_sd = torch.load(path)
    assert list(fake_sd) == ["weight", "bias"]
    w, b = fake_sd["weight"], fake_sd["bias"]
    assert isinstance(w, FakeTensor) and isinstance(b, FakeTensor)
    assert (w.shape, w.stride(), w.storage_offset()) == ((10, 10), (10, 1), 0)
    assert b.shape == (10,)
    assert sorted([w.untyped_storage()._checkpoint_offset, b.untyped_storage()._checkpoint_offset]) == sorted(starts.values())


# --- weights_only -----------------------------------------------------------------------

@pytest.mark.claim("tensor.serialization.pickle-module-disables-weights-only")
def test_pickle_module_turns_weights_only_off():
    raw = _saved({"obj": Trusted(3)})
    assert _load(raw, pickle_module=pickle)["obj"].value == 3
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit pickle_module is specified"):
        _load(raw, pickle_module=pickle, weights_only=True)
    assert _load(_saved(torch.ones(2)), weights_only=True).tolist() == [1.0, 1.0]


@pytest.mark.claim("tensor.serialization.unsupported-global-message")
def test_unsupported_global_message():
    raw = _saved({"obj": Trusted(1)})
    name = f"{Trusted.__module__}.Trusted"
    with pytest.raises(pickle.UnpicklingError) as info:
        _load(raw)
    text = str(info.value)
    assert text.startswith("Weights only load failed. This file can still be loaded")
    assert ("In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
            "from `False` to `True`") in text
    assert f"Unsupported global: GLOBAL {name} was not an allowed global by default." in text
    assert f"torch.serialization.add_safe_globals([{name}])" in text
    assert f"torch.serialization.safe_globals([{name}])" in text


@pytest.mark.claim("tensor.serialization.get-unsafe-globals")
def test_get_unsafe_globals_in_checkpoint():
    raw = _saved({"obj": Trusted(1), "w": torch.ones(1)})
    found = torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(raw))
    assert found == [f"{Trusted.__module__}.Trusted"]
    assert torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(_saved({"w": torch.ones(1)}))) == []


@pytest.mark.claim("tensor.serialization.safe-globals-allowlist")
def test_add_safe_globals_and_context_manager():
    raw = _saved({"obj": Trusted(5)})
    before = list(torch.serialization.get_safe_globals())
    try:
        with torch.serialization.safe_globals([Trusted]):
            assert _load(raw)["obj"].value == 5
            assert Trusted in torch.serialization.get_safe_globals()
        assert Trusted not in torch.serialization.get_safe_globals()
        with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
            _load(raw)
        torch.serialization.add_safe_globals([Trusted])
        assert _load(raw)["obj"].value == 5
        assert Trusted in torch.serialization.get_safe_globals()
    finally:
        torch.serialization.clear_safe_globals()
        torch.serialization.add_safe_globals(before)


@pytest.mark.claim("tensor.serialization.safe-globals-prefilled")
def test_get_safe_globals_is_not_only_user_entries():
    before = list(torch.serialization.get_safe_globals())
    try:
        from torch.nested._internal.nested_tensor import NestedTensor

        assert NestedTensor in before  # registered by torch itself, not by any user call
        torch.serialization.clear_safe_globals()
        assert torch.serialization.get_safe_globals() == []
    finally:
        torch.serialization.add_safe_globals(before)
    assert set(torch.serialization.get_safe_globals()) == set(before)


@pytest.mark.claim("tensor.serialization.numpy-dtype-allowlist")
def test_numpy_dtype_needs_its_own_entry():
    import importlib

    raw = _saved({"a": np.zeros(3, dtype=np.float32)})
    reported = torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(raw))
    objs = []
    for dotted in reported:
        mod, name = dotted.rsplit(".", 1)
        objs.append(getattr(importlib.import_module(mod), name))
    assert np.dtypes.Float32DType not in objs
    with torch.serialization.safe_globals(objs):
        with pytest.raises(pickle.UnpicklingError,
                           match=r"Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                                 r"`add_safe_globals`, but got <class 'numpy.dtypes.Float32DType'>"):
            _load(raw)
    with torch.serialization.safe_globals(objs + [np.dtypes.Float32DType]):
        back = _load(raw)["a"]
    assert isinstance(back, np.ndarray) and back.dtype == np.float32 and back.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.claim("tensor.serialization.env-force-weights-only")
def test_force_weights_only_env(monkeypatch):
    raw = _saved({"obj": Trusted(2)})
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        _load(raw, weights_only=False)
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit pickle_module is specified"):
        _load(raw, pickle_module=pickle)
    monkeypatch.delenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD")
    assert _load(raw, weights_only=False)["obj"].value == 2


@pytest.mark.claim("tensor.serialization.env-force-no-weights-only")
def test_force_no_weights_only_env(monkeypatch):
    raw = _saved({"obj": Trusted(4)})
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.warns(UserWarning, match="Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected"):
        assert _load(raw)["obj"].value == 4
    with warnings.catch_warnings(record=True) as explicit:
        warnings.simplefilter("always")
        assert _load(raw, weights_only=False)["obj"].value == 4
    assert [str(w.message) for w in explicit if "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD" in str(w.message)] == []
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        _load(raw, weights_only=True)
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
    with pytest.raises(RuntimeError, match="Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`"):
        _load(raw)


# --- Config -----------------------------------------------------------------------------

@pytest.mark.claim("tensor.serialization.config-save-defaults")
def test_save_config_defaults():
    from torch.utils.serialization import config

    assert config.save.compute_crc32 is True and torch.serialization.get_crc32_options() is True
    assert config.save.use_pinned_memory_for_d2h is False
    assert config.save.storage_alignment == 64
    with zipfile.ZipFile(io.BytesIO(_saved(torch.ones(3)))) as zf:
        assert all(i.CRC == zlib.crc32(zf.read(i)) for i in zf.infolist())  # the real checksum of each member
    torch.serialization.set_crc32_options(False)
    try:
        assert config.save.compute_crc32 is False
        with zipfile.ZipFile(io.BytesIO(_saved(torch.ones(3)))) as zf:
            assert all(i.CRC == 0 for i in zf.infolist())
    finally:
        torch.serialization.set_crc32_options(True)


@pytest.mark.claim("tensor.serialization.config-alignment")
def test_storage_alignment_config():
    from torch.utils.serialization import config

    old = config.save.storage_alignment
    config.save.storage_alignment = 256
    try:
        raw = _saved({"x": torch.arange(10.0), "y": torch.arange(3, dtype=torch.int8)})
    finally:
        config.save.storage_alignment = old
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        assert zf.read("archive/.storage_alignment") == b"256"
        data = [i for i in zf.infolist() if "/data/" in i.filename and ".data/" not in i.filename]
    assert len(data) == 2 and all(_data_start(raw, i) % 256 == 0 for i in data)
    assert torch.equal(_load(raw)["x"], torch.arange(10.0))


@pytest.mark.claim("tensor.serialization.config-load-defaults")
def test_load_config_defaults():
    from torch.utils.serialization import config

    assert config.load.mmap is False
    assert config.load.endianness is None
    assert torch.serialization.get_default_load_endianness() is None
    assert config.load.mmap_flags == mmap.MAP_PRIVATE == torch.serialization.get_default_mmap_options()
    assert config.load.calculate_storage_offsets is False


@pytest.mark.claim("tensor.serialization.config-load-mmap")
def test_load_mmap_config(tmp_path):
    from torch.utils.serialization import config

    path = tmp_path / "cfg.pt"
    torch.save({"w": torch.arange(1.0, 4097.0)}, path)
    config.load.mmap = True
    try:
        w = torch.load(path)["w"]
        assert any(w.data_ptr() in range(s, e) for s, e, _ in _file_mappings(path))
        del w
        buf = io.BytesIO(path.read_bytes())
        with pytest.raises(ValueError, match="f must be a file path in order to use the mmap argument"):
            torch.load(buf)
        w2 = torch.load(path, mmap=False)["w"]
        assert not any(w2.data_ptr() in range(s, e) for s, e, _ in _file_mappings(path))
    finally:
        config.load.mmap = False


@pytest.mark.claim("tensor.serialization.endianness-default-little")
def test_missing_byteorder_reads_as_little_endian(monkeypatch):
    from torch.serialization import LoadEndianness

    src = torch.arange(4.0)
    raw = _saved(src)
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw)) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            if not info.filename.endswith("/byteorder"):
                zout.writestr(info.filename, zin.read(info.filename))
    stripped = out.getvalue()
    assert "archive/byteorder" not in _members(stripped)
    assert torch.serialization.get_default_load_endianness() is None
    by_default = _load(stripped)
    try:
        torch.serialization.set_default_load_endianness(LoadEndianness.LITTLE)
        as_little = _load(stripped)
        torch.serialization.set_default_load_endianness(LoadEndianness.BIG)
        as_big = _load(stripped)
    finally:
        torch.serialization.set_default_load_endianness(None)
    assert torch.equal(by_default, as_little)
    assert torch.equal(as_little.view(torch.uint8), src.view(torch.uint8))  # little-endian bytes, as saved here
    assert torch.equal(as_big.view(torch.uint8).view(4, 4).flip(1).reshape(16), src.view(torch.uint8))
    assert torch.serialization.get_default_load_endianness() is None
    # On a machine that reports big-endian, None and NATIVE part ways: None still reads little.
    monkeypatch.setattr(sys, "byteorder", "big")
    with pytest.warns(UserWarning, match="was changed from 'native' to 'little' endian"):
        swapped = _load(stripped)
    assert torch.equal(swapped, as_big)
    try:
        torch.serialization.set_default_load_endianness(LoadEndianness.NATIVE)
        assert torch.equal(_load(stripped), src)  # "native" here means no swap at all
        torch.serialization.set_default_load_endianness(LoadEndianness.LITTLE)
        with warnings.catch_warnings(record=True) as chosen:
            warnings.simplefilter("always")
            assert torch.equal(_load(stripped), as_big)  # an explicit choice: the same swap, no warning
        assert [str(w.message) for w in chosen if "load endianness" in str(w.message)] == []
    finally:
        torch.serialization.set_default_load_endianness(None)
