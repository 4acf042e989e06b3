"""Probes for docs/module/state-dict.md."""
import collections
import inspect
import re

import pytest
import torch
from torch import nn
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present


def small_net(device):
    return nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.BatchNorm1d(3)).to(device)


class Wrapper(nn.Module):
    """What DataParallel and DistributedDataParallel do to a model: keep it as `self.module`."""

    def __init__(self, module):
        super().__init__()
        self.module = module


@pytest.mark.claim("module.state-dict.keys")
def test_keys_are_dotted_paths_in_registration_order(device):
    net = small_net(device)
    sd = net.state_dict()
    assert isinstance(sd, collections.OrderedDict)
    assert list(sd) == ["0.weight", "0.bias", "2.weight", "2.bias",
                        "2.running_mean", "2.running_var", "2.num_batches_tracked"]
    assert sd["2.num_batches_tracked"].dtype == torch.int64


@pytest.mark.claim("module.state-dict.aliases")
def test_state_dict_values_alias_the_parameters(device):
    net = small_net(device)
    sd = net.state_dict()
    w = sd["0.weight"]
    assert type(w) is torch.Tensor and not w.requires_grad
    assert w.data_ptr() == net[0].weight.data_ptr()
    w.fill_(3.0)  # writes through to the model
    assert (net[0].weight == 3.0).all()
    kept = net.state_dict(keep_vars=True)
    assert kept["0.weight"] is net[0].weight


@pytest.mark.claim("module.state-dict.excludes")
def test_what_state_dict_leaves_out(device):
    m = nn.Linear(2, 2, bias=False, device=device)
    m.register_buffer("scratch", torch.zeros(1, device=device), persistent=False)
    m.cache = torch.zeros(1, device=device)
    m.helpers = [nn.Linear(1, 1)]
    assert m._parameters["bias"] is None
    assert list(m.state_dict()) == ["weight"]


@pytest.mark.claim("module.state-dict.strict-errors")
def test_strict_load_lists_missing_and_unexpected(device):
    net = small_net(device)
    sd = dict(net.state_dict())
    sd.pop("0.bias")
    sd["extra.weight"] = torch.zeros(1)
    with pytest.raises(RuntimeError) as info:
        net.load_state_dict(sd)
    message = str(info.value)
    assert message.startswith("Error(s) in loading state_dict for Sequential:")
    assert 'Missing key(s) in state_dict: "0.bias".' in message
    assert 'Unexpected key(s) in state_dict: "extra.weight".' in message


@pytest.mark.claim("module.state-dict.wrapper-prefix")
def test_wrapper_adds_module_prefix(device):
    wrapped = Wrapper(small_net(device))
    sd = wrapped.state_dict()
    assert all(k.startswith("module.") for k in sd)
    bare = small_net(device)
    with pytest.raises(RuntimeError) as info:
        bare.load_state_dict(sd)
    assert 'Missing key(s) in state_dict: "0.weight", "0.bias"' in str(info.value)
    assert 'Unexpected key(s) in state_dict: "module.0.weight", "module.0.bias"' in str(info.value)
    consume_prefix_in_state_dict_if_present(sd, "module.")
    assert list(sd) == list(bare.state_dict())
    assert bare.load_state_dict(sd).missing_keys == []
    for wrapper in (nn.DataParallel, nn.parallel.DistributedDataParallel):  # both keep the model as `module`
        assert "self.module = module" in inspect.getsource(wrapper.__init__), wrapper


@pytest.mark.claim("module.state-dict.non-strict")
def test_non_strict_load_reports_instead_of_raising(device):
    source = small_net(device)
    target = small_net(device)
    sd = dict(source.state_dict())
    sd.pop("0.bias")
    sd["extra"] = torch.ones(1)
    result = target.load_state_dict(sd, strict=False)
    assert type(result).__name__ == "_IncompatibleKeys"
    assert result.missing_keys == ["0.bias"] and result.unexpected_keys == ["extra"]
    assert torch.equal(target[0].weight, source[0].weight)  # the rest was loaded
    assert not torch.equal(target[0].bias, source[0].bias)


@pytest.mark.claim("module.state-dict.shape-mismatch")
def test_size_mismatch_raises_even_when_not_strict(device):
    net = small_net(device)
    with pytest.raises(RuntimeError, match=re.escape(
            "size mismatch for 0.weight: copying a param with shape torch.Size([4, 4]) from checkpoint, "
            "the shape in current model is torch.Size([3, 2])")):
        net.load_state_dict({"0.weight": torch.zeros(4, 4)}, strict=False)
    assert net.load_state_dict({k: v for k, v in {"0.weight": torch.zeros(4, 4)}.items() if v.shape == net.state_dict()[k].shape}, strict=False).missing_keys


@pytest.mark.claim("module.state-dict.load-copies")
def test_load_copies_into_the_existing_parameters(device):
    source = small_net(device)
    target = small_net(device)
    weight = target[0].weight
    sd = source.state_dict()
    target.load_state_dict(sd)
    assert target[0].weight is weight  # same Parameter object ...
    assert target[0].weight.data_ptr() != sd["0.weight"].data_ptr()  # ... own memory, values copied
    assert torch.equal(target[0].weight, source[0].weight)


@pytest.mark.claim("module.state-dict.assign")
def test_assign_true_adopts_the_given_tensors(device):
    target = small_net(device)
    weight = target[0].weight
    sd = {k: v.clone() for k, v in small_net(device).state_dict().items()}
    assert not sd["0.weight"].requires_grad
    target.load_state_dict(sd, assign=True)
    new = target[0].weight
    assert new is not weight and type(new) is nn.Parameter
    assert new.data_ptr() == sd["0.weight"].data_ptr()  # no copy
    assert new.requires_grad  # taken from the module's old parameter, not from the tensor
    assert target[2].running_mean is sd["2.running_mean"]  # buffers are taken as they are
    frozen = small_net(device)
    frozen[0].weight.requires_grad_(False)  # an old parameter that does not require grad ...
    frozen.load_state_dict({k: v.clone() for k, v in sd.items()}, assign=True)
    assert not frozen[0].weight.requires_grad and frozen[0].bias.requires_grad  # ... passes that on


@pytest.mark.claim("module.state-dict.metadata-version")
def test_metadata_carries_module_versions(device):
    net = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3)).to(device)
    sd = net.state_dict()
    assert "_metadata" not in sd  # an attribute, not a key
    assert sd._metadata["1"] == {"version": nn.BatchNorm1d._version} and nn.BatchNorm1d._version == 2
    old = {k: v for k, v in sd.items() if k != "1.num_batches_tracked"}  # a plain dict: no metadata
    assert net.load_state_dict(old).missing_keys == []  # treated as an old checkpoint: filled in
    with_meta = collections.OrderedDict(old)
    with_meta._metadata = sd._metadata
    with pytest.raises(RuntimeError, match=re.escape('Missing key(s) in state_dict: "1.num_batches_tracked"')):
        net.load_state_dict(with_meta)


@pytest.mark.claim("module.state-dict.meta-needs-assign")
def test_loading_into_a_meta_module_needs_assign(device):
    checkpoint = nn.Linear(2, 2, device=device).state_dict()
    shell = nn.Linear(2, 2, device="meta")
    with pytest.warns(UserWarning, match="copying from a non-meta parameter in the checkpoint to a meta "
                                         "parameter in the current model, which is a no-op"):
        result = shell.load_state_dict(checkpoint)
    assert result.missing_keys == [] and shell.weight.is_meta  # "loaded", yet still without data
    shell.load_state_dict(checkpoint, assign=True)
    assert shell.weight.device == checkpoint["weight"].device and not shell.weight.is_meta
    assert shell.weight.data_ptr() == checkpoint["weight"].data_ptr()
