"""Probes for docs/tensor/serialization.md."""
import io
import pickle
import pickletools
import struct
import zipfile

import pytest
import torch


def saved(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def loaded(raw, **kwargs):
    return torch.load(io.BytesIO(raw), **kwargs)


def records(raw):
    """{name without the top folder: size} for the data/N storage records."""
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        return {i.filename.split("/", 1)[1]: i.file_size for i in zf.infolist()
                if i.filename.split("/", 1)[1].startswith("data/")}


def raw_bytes(t):
    return bytes(t.untyped_storage().tolist())


class NotAllowed:
    pass


@pytest.mark.claim("tensor.serialization.zip-layout")
def test_zip_layout(tmp_path):
    path = tmp_path / "weights.pt"
    torch.save({"a": torch.zeros(3), "b": torch.ones(2, dtype=torch.int64)}, path)
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        assert all(n.startswith("weights/") for n in names)
        inner = {n.split("/", 1)[1] for n in names}
        assert inner == {"data.pkl", "byteorder", "version", "data/0", "data/1", ".data/serialization_id",
                         ".format_version", ".storage_alignment"}
        assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())
        assert zf.read("weights/byteorder") in (b"little", b"big")
        assert sorted(zf.read(f"weights/data/{k}") for k in "01") == sorted(
            [raw_bytes(torch.zeros(3)), raw_bytes(torch.ones(2, dtype=torch.int64))])
    assert zipfile.ZipFile(io.BytesIO(saved(torch.zeros(1)))).namelist()[0].startswith("archive/")


@pytest.mark.claim("tensor.serialization.records-aligned")
def test_records_are_64_byte_aligned():
    raw = saved({"x": torch.arange(10.0), "y": torch.arange(3, dtype=torch.int8), "z": torch.ones(7, 3)})
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        assert zf.read("archive/.storage_alignment") == b"64"
        data = [i for i in zf.infolist() if "/data/" in i.filename]
        assert len(data) == 3
        for info in data:
            name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
            start = info.header_offset + 30 + name_len + extra_len
            assert start % 64 == 0, info.filename


@pytest.mark.claim("tensor.serialization.view-saves-whole-storage")
def test_saving_a_view_saves_its_storage(device):
    small = saved(torch.arange(10, dtype=torch.float32, device=device)[:5])
    big = saved(torch.arange(100_000, dtype=torch.float32, device=device)[:5])
    assert records(small) == {"data/0": 10 * 4}
    assert records(big) == {"data/0": 100_000 * 4}
    assert len(big) - len(small) == 400_000  # the extra 99,990 floats, and 40 bytes of alignment padding
    trimmed = saved(torch.arange(100_000, dtype=torch.float32, device=device)[:5].clone())
    assert records(trimmed) == {"data/0": 5 * 4}


@pytest.mark.claim("tensor.serialization.shared-storage-once")
def test_views_reload_sharing_one_storage(device):
    base = torch.arange(12.0, device=device)
    raw = saved({"base": base, "row": base.view(3, 4)[1], "col": base.view(3, 4)[:, 2]})
    assert records(raw) == {"data/0": 12 * 4}
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        pickled = zf.read("archive/data.pkl")
    ops = [(op.name, arg) for op, arg, _ in pickletools.genops(pickled)]
    names = [op for op, _ in ops]
    assert ("GLOBAL", "torch._utils _rebuild_tensor_v2") in ops  # memoised and reused per tensor
    assert names.count("BINPERSID") == 3  # each tensor refers to the (same) storage by persistent id
    back = loaded(raw)
    ptrs = {back[k].untyped_storage().data_ptr() for k in ("base", "row", "col")}
    assert len(ptrs) == 1
    back["base"][6] = -1.0
    assert back["row"][2].item() == -1.0 and back["col"][1].item() == -1.0
    assert back["row"]._base is None  # storage is shared again, the autograd view link is not


@pytest.mark.claim("tensor.serialization.preserves-strides")
def test_strides_and_offset_survive(device):
    t = torch.arange(24.0, device=device).reshape(4, 6)[1:, 2:].t()
    back = loaded(saved(t))
    assert back.shape == t.shape and back.stride() == t.stride() == (1, 6)
    assert back.storage_offset() == t.storage_offset() == 8
    assert back.device == t.device
    assert torch.equal(back, t)
    assert loaded(saved(t), map_location="cpu").device.type == "cpu"


@pytest.mark.claim("tensor.serialization.weights-only-default")
def test_load_rejects_arbitrary_classes():
    raw = saved({"w": torch.zeros(2), "obj": NotAllowed()})
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        loaded(raw)
    assert isinstance(loaded(raw, weights_only=False)["obj"], NotAllowed)
    assert torch.equal(loaded(saved({"w": torch.zeros(2)}))["w"], torch.zeros(2))
    with torch.serialization.safe_globals([NotAllowed]):
        assert isinstance(loaded(raw)["obj"], NotAllowed)
