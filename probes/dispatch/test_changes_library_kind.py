"""Probe for the older side of the before/after pair of docs/dispatch/custom-op-errors.md on
Library's unknown kind: until 2.12 the ValueError's message is a tuple's repr."""
import re

import pytest
import torch
from torch.library import Library


@pytest.mark.claim("dispatch.operr.library-kind-tuple")
@pytest.mark.torch_version("<2.12")
def test_library_kind_message_is_a_tuple():
    with pytest.raises(ValueError, match="^" + re.escape("('Unsupported kind: ', 'BOGUS')") + "$") as info:
        Library("errprobe_kind_old", "BOGUS")
    assert info.value.args == ("Unsupported kind: ", "BOGUS")
    lib = Library("errprobe_kind_old", "FRAGMENT")
    lib.define("k(Tensor x) -> Tensor")
    assert hasattr(torch.ops.errprobe_kind_old, "k")
