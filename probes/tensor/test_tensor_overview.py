"""Probes for docs/tensor/index.md: a tensor is metadata over a storage."""
import re
from pathlib import Path

import pytest
import torch


@pytest.mark.claim("tensor.impl.metadata-over-storage")
def test_second_tensor_from_storage_and_metadata(device):
    base = torch.arange(12.0, device=device)
    # A brand-new tensor, given only the base's storage plus our own sizes, strides, offset.
    other = torch.empty(0, device=device).set_(base.untyped_storage(), 2, (2, 3), (1, 2))
    assert other.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    assert other.storage_offset() == 2 and other.stride() == (1, 2) and other.shape == (2, 3)
    expected = [[2.0 + i + 2 * j for j in range(3)] for i in range(2)]
    assert other.cpu().tolist() == expected
    other[1, 2] = -1.0  # element at storage index 2 + 1*1 + 2*2 = 7
    assert base[7].item() == -1.0
    assert not other._is_view() and other._base is None  # no autograd view relation, just shared bytes


def _installed(rel):
    return Path(torch.__file__).parent / "include" / rel


@pytest.mark.claim("tensor.impl.fields")
def test_tensorimpl_declares_its_fields():
    text = _installed("c10/core/TensorImpl.h").read_text()
    start = text.index("struct C10_API TensorImpl : public c10::intrusive_ptr_target {")
    body = text[start:]
    for decl in (
        r"\n\s*Storage storage_;",
        r"\n\s*c10::impl::SizesAndStrides sizes_and_strides_;",
        r"\n\s*int64_t storage_offset_ = 0;",
        r"\n\s*DispatchKeySet key_set_;",
        r"\n\s*c10::VariableVersion version_counter_;",
        r"\n\s*std::unique_ptr<c10::AutogradMetaInterface> autograd_meta_ = nullptr;",
        r"\n\s*caffe2::TypeMeta data_type_;",
        r"\n\s*std::optional<c10::Device> device_opt_;",
    ):
        assert re.search(decl, body), decl
    storage = _installed("c10/core/StorageImpl.h").read_text()
    for decl in (r"\n\s*DataPtr data_ptr_;", r"\n\s*SymInt size_bytes_;", r"\n\s*Allocator\* allocator_;"):
        assert re.search(decl, storage), decl
