"""Probe for the older side of the before/after pair of docs/optim/errors.md on SWALR's message
for an unknown anneal_strategy (until 2.13 it read "must by one of")."""
import pytest
import torch


@pytest.mark.claim("optim.errors.swa-anneal-must-by")
@pytest.mark.torch_version("<2.13")
def test_swalr_anneal_strategy_says_must_by():
    from torch.optim.swa_utils import SWALR
    opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(2))], lr=0.1)
    with pytest.raises(ValueError, match=r"^anneal_strategy must by one of 'cos' or 'linear', instead got bad$"):
        SWALR(opt, swa_lr=0.1, anneal_strategy="bad")
    assert SWALR(opt, swa_lr=0.1, anneal_strategy="linear").anneal_func.__name__ == "_linear_anneal"
