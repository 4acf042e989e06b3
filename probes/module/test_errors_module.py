"""Probes for docs/module/errors.md: nn.Module registration, state_dict loading, layer inputs, losses.

Each probe triggers its messages the way the claim's cause says (`pytest.raises` / `pytest.warns`
with the stable part of the message in `match=`), then runs the claim's fix and checks it works.

Chosen from what users ask about (threads read for this page):
- https://kiwix.lema.org/stackoverflow.com_en_all_2023-11/questions/61854165/why-must-use-dataparallel-when-testing
  and https://deadends.dev/pytorch/state-dict-key-mismatch (the "module." prefix of DataParallel checkpoints)
- https://github.com/pytorch/pytorch/issues/4534, https://github.com/pytorch/pytorch/issues/13223,
  https://github.com/MCG-NKU/SCNet/issues/8, https://github.com/VinAIResearch/ISBNet/issues/12
  (Expected more than 1 value per channel when training)
"""
import re
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F


def lit(text):
    """A regex matching `text` literally."""
    return re.escape(text)


def no_warning(fn):
    """Run fn with every warning turned into an error, and return its result."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn()


# ---------------------------------------------------------------- load_state_dict

@pytest.mark.claim("module.errors.missing-keys")
def test_missing_keys():
    model = nn.Linear(3, 2)
    with pytest.raises(RuntimeError, match=lit('Error(s) in loading state_dict for Linear:\n\tMissing key(s) in '
                                               'state_dict: "bias". ')):
        model.load_state_dict({"weight": torch.zeros(2, 3)})
    result = model.load_state_dict({"weight": torch.zeros(2, 3)}, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == []


@pytest.mark.claim("module.errors.unexpected-keys")
def test_unexpected_keys():
    model = nn.Linear(3, 2, bias=False)
    state = {"weight": torch.zeros(2, 3), "bias": torch.zeros(2)}
    with pytest.raises(RuntimeError, match=lit('Error(s) in loading state_dict for Linear:\n\tUnexpected key(s) in '
                                               'state_dict: "bias". ')):
        model.load_state_dict(state)
    assert model.load_state_dict(state, strict=False).unexpected_keys == ["bias"]


@pytest.mark.claim("module.errors.module-prefix")
def test_dataparallel_module_prefix():
    model = nn.Linear(3, 2)
    saved = {"module." + k: v for k, v in nn.Linear(3, 2).state_dict().items()}  # as DataParallel/DDP save it
    with pytest.raises(RuntimeError, match=lit('Missing key(s) in state_dict: "weight", "bias". \n\tUnexpected '
                                               'key(s) in state_dict: "module.weight", "module.bias". ')):
        model.load_state_dict(saved)
    stripped = {k.removeprefix("module."): v for k, v in saved.items()}
    assert model.load_state_dict(stripped).missing_keys == []
    model.load_state_dict(saved.copy() | {}, strict=False)  # strict=False would silently load nothing
    nn.modules.utils.consume_prefix_in_state_dict_if_present(saved, "module.")
    assert sorted(saved) == ["bias", "weight"]


@pytest.mark.claim("module.errors.size-mismatch")
def test_size_mismatch():
    model = nn.Linear(3, 2)
    with pytest.raises(RuntimeError, match=lit("Error(s) in loading state_dict for Linear:\n\tsize mismatch for "
                                               "weight: copying a param with shape torch.Size([4, 3]) from "
                                               "checkpoint, the shape in current model is torch.Size([2, 3]).")):
        model.load_state_dict({"weight": torch.zeros(4, 3), "bias": torch.zeros(2)})
    with pytest.raises(RuntimeError, match=r"size mismatch for weight"):
        model.load_state_dict({"weight": torch.zeros(4, 3), "bias": torch.zeros(2)}, strict=False)
    assert nn.Linear(3, 4).load_state_dict({"weight": torch.zeros(4, 3), "bias": torch.zeros(4)}).missing_keys == []


@pytest.mark.claim("module.errors.state-dict-not-tensor")
def test_state_dict_value_not_tensor():
    model = nn.Linear(3, 2)
    with pytest.raises(RuntimeError, match=lit('While copying the parameter named "weight", expected torch.Tensor or '
                                               "Tensor-like object from checkpoint but received <class 'list'>")):
        model.load_state_dict({"weight": [[0.0] * 3] * 2, "bias": torch.zeros(2)})
    model.load_state_dict({"weight": torch.tensor([[0.0] * 3] * 2), "bias": torch.zeros(2)})
    assert model.weight.abs().sum().item() == 0.0


@pytest.mark.claim("module.errors.state-dict-positional")
def test_state_dict_positional_arguments():
    with pytest.warns(FutureWarning, match=lit("Positional args are being deprecated, use kwargs instead.")):
        nn.Linear(2, 2).state_dict({}, "")
    assert sorted(no_warning(lambda: nn.Linear(2, 2).state_dict(destination={}, prefix="p."))) == ["p.bias", "p.weight"]


# ---------------------------------------------------------------- registering parameters, buffers, submodules

@pytest.mark.claim("module.errors.before-init")
def test_assign_before_init():
    class NoSuper(nn.Module):
        def __init__(self, what):
            if what == "module":
                self.fc = nn.Linear(2, 2)
            elif what == "parameter":
                self.register_parameter("w", None)
            else:
                self.register_buffer("b", torch.zeros(1))

    for what in ("module", "parameter", "buffer"):
        with pytest.raises(AttributeError, match=lit(f"cannot assign {what} before Module.__init__() call")):
            NoSuper(what)

    class WithSuper(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

    assert [n for n, _ in WithSuper().named_parameters()] == ["fc.weight", "fc.bias"]


@pytest.mark.claim("module.errors.name-not-string")
def test_names_must_be_strings():
    for register, kind in ((lambda m: m.register_parameter(1, None), "parameter"),
                           (lambda m: m.register_buffer(1, torch.zeros(1)), "buffer"),
                           (lambda m: m.add_module(1, nn.ReLU()), "module")):
        with pytest.raises(TypeError, match=rf"^{kind} name should be a string\. Got int$"):
            register(nn.Module())
    m = nn.Module()
    m.register_buffer("1", torch.zeros(1))
    assert [n for n, _ in m.named_buffers()] == ["1"]


@pytest.mark.claim("module.errors.buffer-empty-name")
def test_buffer_empty_name():
    with pytest.raises(KeyError, match=r'buffer name can.{1,2}t be empty string ""'):
        nn.Module().register_buffer("", torch.zeros(1))
    m = nn.Module()
    m.register_buffer("running", torch.zeros(1))
    assert "running" in m.state_dict()


@pytest.mark.claim("module.errors.register-buffer-type")
def test_register_buffer_type():
    with pytest.raises(TypeError, match=lit("cannot assign 'int' object to buffer 'b' (torch Tensor or None "
                                            "required)")):
        nn.Module().register_buffer("b", 3)
    m = nn.Module()
    m.register_buffer("b", torch.tensor(3))
    assert m.b.item() == 3 and "b" in m.state_dict()


@pytest.mark.claim("module.errors.register-parameter-plain-tensor")
def test_register_parameter_plain_tensor():
    with pytest.raises(TypeError, match=lit("cannot assign 'torch.FloatTensor' object to parameter 'w' "
                                            "(torch.nn.Parameter or None required)")):
        nn.Module().register_parameter("w", torch.zeros(2))
    m = nn.Module()
    m.register_parameter("w", nn.Parameter(torch.zeros(2)))
    assert [n for n, _ in m.named_parameters()] == ["w"]


@pytest.mark.claim("module.errors.no-attribute")
def test_module_has_no_attribute():
    model = nn.Sequential(nn.Linear(2, 2))
    with pytest.raises(AttributeError, match=r"^'Sequential' object has no attribute 'fc'$"):
        model.fc
    assert isinstance(model[0], nn.Linear) and dict(model.named_children()).keys() == {"0"}


@pytest.mark.claim("module.errors.forward-arguments")
def test_forward_argument_count():
    with pytest.raises(TypeError, match=lit("Linear.forward() takes 2 positional arguments but 3 were given")):
        nn.Linear(2, 2)(torch.zeros(1, 2), torch.zeros(1, 2))
    assert nn.Linear(2, 2)(torch.cat([torch.zeros(1, 1), torch.zeros(1, 1)], dim=1)).shape == (1, 2)


@pytest.mark.claim("module.errors.float-feature-count")
def test_float_feature_count():
    with pytest.raises(TypeError, match=lit("empty(): argument 'size' failed to unpack the object at pos 2 with "
                                            "error \"type must be tuple of ints,but got float\"")):
        nn.Linear(6 / 2, 2)
    assert nn.Linear(6 // 2, 2).in_features == 3


@pytest.mark.claim("module.errors.sequential-index")
def test_sequential_index_out_of_range():
    seq = nn.Sequential(nn.ReLU())
    with pytest.raises(IndexError, match=r"^index 3 is out of range$"):
        seq[3]
    assert isinstance(seq[-1], nn.ReLU) and len(seq) == 1


@pytest.mark.claim("module.errors.container-forward")
def test_modulelist_has_no_forward():
    layers = nn.ModuleList([nn.ReLU(), nn.Tanh()])
    with pytest.raises(NotImplementedError, match=lit('Module [ModuleList] is missing the required "forward" '
                                                      'function')):
        layers(torch.zeros(1))
    x = torch.tensor([-1.0])
    for layer in layers:
        x = layer(x)
    assert x.tolist() == [0.0] and nn.Sequential(*layers)(torch.tensor([-1.0])).tolist() == [0.0]


# ---------------------------------------------------------------- convolution and pooling arguments

@pytest.mark.claim("module.errors.conv-padding-same")
def test_conv_padding_strings():
    with pytest.raises(ValueError, match=r"^padding='same' is not supported for strided convolutions$"):
        nn.Conv2d(3, 4, 3, stride=2, padding="same")
    # the two names come from a set: their order changes with the string hash seed
    with pytest.raises(ValueError, match=r"^Invalid padding string 'full', should be one of "
                                         r"\{'(same', 'valid|valid', 'same)'\}$"):
        nn.Conv2d(3, 4, 3, padding="full")
    assert nn.Conv2d(3, 4, 3, stride=2, padding=1)(torch.zeros(1, 3, 8, 8)).shape == (1, 4, 4, 4)
    assert nn.Conv2d(3, 4, 3, padding="same")(torch.zeros(1, 3, 8, 8)).shape == (1, 4, 8, 8)


@pytest.mark.claim("module.errors.conv-groups")
def test_conv_groups_divisibility():
    with pytest.raises(ValueError, match=r"^in_channels must be divisible by groups$"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match=r"^out_channels must be divisible by groups$"):
        nn.Conv2d(4, 3, 3, groups=2)
    assert nn.Conv2d(4, 6, 3, groups=2).weight.shape == (6, 2, 3, 3)


@pytest.mark.claim("module.errors.conv-stride")
def test_conv_non_positive_stride():
    with pytest.raises(RuntimeError, match=r"^non-positive stride is not supported$"):
        F.conv2d(torch.zeros(1, 1, 5, 5), torch.zeros(1, 1, 3, 3), stride=0)
    assert F.conv2d(torch.zeros(1, 1, 5, 5), torch.zeros(1, 1, 3, 3), stride=1).shape == (1, 1, 3, 3)


@pytest.mark.claim("module.errors.pool-padding")
def test_pool_padding_too_large():
    with pytest.raises(RuntimeError, match=lit("pad should be at most half of effective kernel size, but got pad=2, "
                                               "kernel_size=3 and dilation=1")):
        F.max_pool2d(torch.zeros(1, 1, 5, 5), 3, padding=2)
    assert F.max_pool2d(torch.zeros(1, 1, 5, 5), 3, padding=1).shape == (1, 1, 2, 2)


@pytest.mark.claim("module.errors.reflect-padding")
def test_reflect_padding_too_large():
    with pytest.raises(RuntimeError, match=lit("Argument #4: Padding size should be less than the corresponding input "
                                               "dimension, but got: padding (3, 3) at dimension 2 of input [1, 1, 2]")):
        F.pad(torch.zeros(1, 1, 2), (3, 3), mode="reflect")
    assert F.pad(torch.zeros(1, 1, 2), (3, 3), mode="replicate").shape == (1, 1, 8)
    assert F.pad(torch.zeros(1, 1, 4), (3, 3), mode="reflect").shape == (1, 1, 10)


def unfold_too_small(spatial_size):
    with pytest.raises(RuntimeError, match="^" + lit(f"Given input with spatial size {spatial_size}, kernel_size=(2, 2), "
                                                     "dilation=(1, 1), padding=(0, 0), calculated shape of the array "
                                                     "of sliding blocks as (0, 3), but its components must be at "
                                                     "least one.") + "$"):
        F.unfold(torch.zeros(1, 1, 4), 2)
    assert F.unfold(torch.zeros(1, 1, 2, 4), 2).shape == (1, 4, 3)


@pytest.mark.claim("module.errors.unfold-blocks-size-1-1")
@pytest.mark.torch_version("<2.11")
def test_unfold_too_small_until_2_10():
    unfold_too_small("(1, 1)")


@pytest.mark.claim("module.errors.unfold-blocks")
@pytest.mark.torch_version(">=2.11")
def test_unfold_too_small():
    unfold_too_small("(1, 4)")


@pytest.mark.claim("module.errors.pixel-shuffle")
def test_pixel_shuffle_channels():
    with pytest.raises(RuntimeError, match=lit("pixel_shuffle expects its input's 'channel' dimension to be divisible "
                                               "by the square of upscale_factor, but input.size(-3)=3 is not "
                                               "divisible by 4")):
        F.pixel_shuffle(torch.zeros(1, 3, 2, 2), 2)
    assert F.pixel_shuffle(torch.zeros(1, 4, 2, 2), 2).shape == (1, 1, 4, 4)


@pytest.mark.claim("module.errors.interpolate-dims")
def test_interpolate_arguments():
    with pytest.raises(ValueError, match=lit("Input and output must have the same number of spatial dimensions, but "
                                             "got input with spatial dimensions of [4] and output size of (2, 2).")):
        F.interpolate(torch.zeros(1, 1, 4), size=(2, 2))
    with pytest.raises(ValueError, match=lit("align_corners option can only be set with the interpolating modes: "
                                             "linear | bilinear | bicubic | trilinear")):
        F.interpolate(torch.zeros(1, 1, 4), size=2, mode="nearest", align_corners=True)
    with pytest.raises(NotImplementedError, match=lit("Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                                                      "1D) for the modes:")):
        F.interpolate(torch.zeros(4), size=2)
    assert F.interpolate(torch.zeros(4)[None, None], size=2).shape == (1, 1, 2)
    assert F.interpolate(torch.zeros(1, 1, 4, 4), size=(2, 2), mode="bilinear", align_corners=True).shape == (1, 1, 2, 2)


@pytest.mark.claim("module.errors.upsample-deprecated")
def test_upsample_deprecated():
    with pytest.warns(UserWarning, match=lit("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                                             "instead.")):
        F.upsample(torch.zeros(1, 1, 4), scale_factor=2)
    assert no_warning(lambda: F.interpolate(torch.zeros(1, 1, 4), scale_factor=2)).shape == (1, 1, 8)


# ---------------------------------------------------------------- normalisation and recurrent layers

@pytest.mark.claim("module.errors.batchnorm-one-value")
def test_batchnorm_one_value_per_channel():
    bn = nn.BatchNorm1d(4)
    with pytest.raises(ValueError, match=lit("Expected more than 1 value per channel when training, got input size "
                                             "torch.Size([1, 4])")):
        bn(torch.zeros(1, 4))
    assert bn.eval()(torch.zeros(1, 4)).shape == (1, 4)  # eval uses the running statistics
    assert bn.train()(torch.zeros(2, 4)).shape == (2, 4)


def groupnorm_divisible(message):
    with pytest.raises(ValueError, match="^" + lit(message) + "$"):
        nn.GroupNorm(3, 4)
    assert nn.GroupNorm(2, 4)(torch.zeros(2, 4, 3)).shape == (2, 4, 3)  # the fix: 2 groups divide 4 channels


@pytest.mark.claim("module.errors.groupnorm-divisible-bare")
@pytest.mark.torch_version("<2.10")
def test_groupnorm_divisible_until_2_9():
    groupnorm_divisible("num_channels must be divisible by num_groups")


@pytest.mark.claim("module.errors.groupnorm-divisible")
@pytest.mark.torch_version(">=2.10")
def test_groupnorm_divisible_since_2_10():
    groupnorm_divisible("num_channels (4) must be divisible by num_groups (3)")


@pytest.mark.claim("module.errors.groupnorm")
def test_groupnorm_checks():
    with pytest.raises(RuntimeError, match=lit("Expected weight to be a vector of size equal to the number of channels "
                                               "in input, but got weight of shape [4] and input of shape [2, 6, 3]")):
        nn.GroupNorm(2, 4)(torch.zeros(2, 6, 3))
    assert nn.GroupNorm(2, 6)(torch.zeros(2, 6, 3)).shape == (2, 6, 3)


@pytest.mark.claim("module.errors.instancenorm-features")
def test_instancenorm_num_features_warning():
    with pytest.warns(UserWarning, match=lit("input's size at dim=1 does not match num_features. You can silence this "
                                             "warning by not passing in num_features, which is not used because "
                                             "affine=False")):
        nn.InstanceNorm1d(4)(torch.zeros(2, 3, 5))
    assert no_warning(lambda: nn.InstanceNorm1d(3)(torch.zeros(2, 3, 5))).shape == (2, 3, 5)


@pytest.mark.claim("module.errors.rnn-hidden-size")
def test_rnn_hidden_size():
    x = torch.zeros(5, 3, 4)  # (seq, batch, features)
    with pytest.raises(RuntimeError, match=lit("Expected hidden size (1, 3, 4), got [1, 2, 4]")):
        nn.RNN(4, 4)(x, torch.zeros(1, 2, 4))
    with pytest.raises(RuntimeError, match=lit("Expected hidden[0] size (1, 3, 4), got [1, 2, 4]")):
        nn.LSTM(4, 4)(x, (torch.zeros(1, 2, 4), torch.zeros(1, 3, 4)))
    assert nn.RNN(4, 4)(x, torch.zeros(1, 3, 4))[1].shape == (1, 3, 4)
    assert nn.RNN(4, 4, batch_first=True)(x.transpose(0, 1), torch.zeros(1, 3, 4))[0].shape == (3, 5, 4)


@pytest.mark.claim("module.errors.rnn-dropout-one-layer")
def test_rnn_dropout_with_one_layer():
    with pytest.warns(UserWarning, match=lit("dropout option adds dropout after all but last recurrent layer, so "
                                             "non-zero dropout expects num_layers greater than 1, but got dropout=0.5 "
                                             "and num_layers=1")):
        nn.LSTM(4, 4, dropout=0.5)
    assert no_warning(lambda: nn.LSTM(4, 4, num_layers=2, dropout=0.5)).num_layers == 2


@pytest.mark.claim("module.errors.multihead-shapes")
def test_multihead_attention_checks():
    with pytest.raises(AssertionError, match=r"^embed_dim must be divisible by num_heads$"):
        nn.MultiheadAttention(5, 2)
    with pytest.raises(AssertionError, match=lit("key shape torch.Size([3, 2, 5]) does not match value shape "
                                                 "torch.Size([3, 2, 4])")):
        nn.MultiheadAttention(4, 2)(torch.zeros(3, 2, 4), torch.zeros(3, 2, 5), torch.zeros(3, 2, 4))
    out, _ = nn.MultiheadAttention(4, 2)(torch.zeros(3, 2, 4), torch.zeros(3, 2, 4), torch.zeros(3, 2, 4))
    assert out.shape == (3, 2, 4)


@pytest.mark.claim("module.errors.transformer-nested-tensor")
def test_transformer_nested_tensor_warning():
    with pytest.warns(UserWarning, match=lit("enable_nested_tensor is True, but self.use_nested_tensor is False because "
                                             "encoder_layer.self_attn.batch_first was not True")):
        nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2), 1)
    assert no_warning(lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, batch_first=True), 1))


@pytest.mark.claim("module.errors.embedding-padding-idx")
def test_embedding_padding_idx():
    with pytest.raises(AssertionError, match=r"^Padding_idx must be within num_embeddings$"):
        nn.Embedding(3, 2, padding_idx=5)
    assert nn.Embedding(3, 2, padding_idx=0).weight[0].abs().sum().item() == 0.0


@pytest.mark.claim("module.errors.dropout-probability")
def test_dropout_probability():
    with pytest.raises(ValueError, match=r"^dropout probability has to be between 0 and 1, but got 1\.5$"):
        nn.Dropout(1.5)
    assert nn.Dropout(0.5).p == 0.5


# ---------------------------------------------------------------- losses

@pytest.mark.claim("module.errors.ce-multi-target")
def test_cross_entropy_multi_target():
    logits = torch.zeros(3, 5)
    with pytest.raises(RuntimeError, match=r"^0D or 1D target tensor expected, multi-target not supported$"):
        F.cross_entropy(logits, torch.zeros(3, 1, dtype=torch.long))  # class indices with a trailing dim
    with pytest.raises(RuntimeError, match=r"^0D or 1D target tensor expected, multi-target not supported$"):
        F.cross_entropy(logits, torch.zeros(3, 4))  # probabilities with the wrong number of classes
    assert F.cross_entropy(logits, torch.zeros(3, 1, dtype=torch.long).squeeze(1)).shape == ()
    assert F.cross_entropy(logits, torch.full((3, 5), 0.2)).shape == ()


@pytest.mark.claim("module.errors.ce-spatial-target")
def test_cross_entropy_spatial_target():
    with pytest.raises(RuntimeError, match=lit("Expected target size [2, 4], got [2, 3]")):
        F.cross_entropy(torch.zeros(2, 5, 4), torch.zeros(2, 3, dtype=torch.long))
    with pytest.raises(RuntimeError, match=lit("only batches of spatial targets supported (3D tensors) but got targets "
                                               "of dimension: 2")):
        F.nll_loss(torch.zeros(2, 5, 4, 4), torch.zeros(2, 4, dtype=torch.long))
    assert F.cross_entropy(torch.zeros(2, 5, 4), torch.zeros(2, 4, dtype=torch.long)).shape == ()
    assert F.nll_loss(torch.zeros(2, 5, 4, 4), torch.zeros(2, 4, 4, dtype=torch.long)).shape == ()


@pytest.mark.claim("module.errors.ce-1d-input")
def test_nll_one_dimensional_input():
    with pytest.raises(ValueError, match=lit("For 1D input, 1D target must have size 1, but got target size: 5")):
        F.nll_loss(torch.zeros(5), torch.zeros(5, dtype=torch.long))
    assert F.nll_loss(torch.zeros(1, 5), torch.zeros(1, dtype=torch.long)).shape == ()


@pytest.mark.claim("module.errors.ce-weight-classes")
def test_cross_entropy_weight_size():
    with pytest.raises(RuntimeError, match=lit("weight tensor should be defined either for all 5 classes or no classes "
                                               "but got weight tensor of shape: [2]")):
        F.cross_entropy(torch.zeros(3, 5), torch.zeros(3, dtype=torch.long), weight=torch.ones(2))
    assert F.cross_entropy(torch.zeros(3, 5), torch.zeros(3, dtype=torch.long), weight=torch.ones(5)).shape == ()


@pytest.mark.claim("module.errors.ce-label-smoothing")
def test_cross_entropy_label_smoothing_range():
    with pytest.raises(RuntimeError, match=lit("label_smoothing must be between 0.0 and 1.0. Got: 1.5")):
        F.cross_entropy(torch.zeros(3, 5), torch.zeros(3, dtype=torch.long), label_smoothing=1.5)
    assert F.cross_entropy(torch.zeros(3, 5), torch.zeros(3, dtype=torch.long), label_smoothing=0.1).shape == ()


@pytest.mark.claim("module.errors.kl-div-mean")
def test_kl_div_mean_warning():
    with pytest.warns(UserWarning, match=lit("reduction: 'mean' divides the total loss by both the batch size and the "
                                             "support size.'batchmean' divides only by the batch size, and aligns "
                                             "with the KL div math definition.")):
        F.kl_div(torch.zeros(2, 3), torch.zeros(2, 3))
    assert no_warning(lambda: F.kl_div(torch.zeros(2, 3), torch.zeros(2, 3), reduction="batchmean")).shape == ()


@pytest.mark.claim("module.errors.size-average-deprecated")
def test_size_average_and_reduce_deprecated():
    with pytest.warns(UserWarning, match=lit("size_average and reduce args will be deprecated, please use "
                                             "reduction='sum' instead.")):
        nn.MSELoss(size_average=False)
    with pytest.warns(UserWarning, match=lit("size_average and reduce args will be deprecated, please use "
                                             "reduction='none' instead.")):
        F.cross_entropy(torch.zeros(3, 5), torch.zeros(3, dtype=torch.long), reduce=False)
    assert no_warning(lambda: nn.MSELoss(reduction="sum")).reduction == "sum"


@pytest.mark.claim("module.errors.log-softmax-implicit-dim")
def test_log_softmax_implicit_dim():
    with pytest.warns(UserWarning, match=lit("Implicit dimension choice for log_softmax has been deprecated. Change "
                                             "the call to include dim=X as an argument.")):
        F.log_softmax(torch.zeros(2, 3))
    assert no_warning(lambda: F.log_softmax(torch.zeros(2, 3), dim=1)).shape == (2, 3)


@pytest.mark.claim("module.errors.one-hot")
def test_one_hot_checks():
    with pytest.raises(RuntimeError, match=r"^Class values must be smaller than num_classes\.$"):
        F.one_hot(torch.tensor([3]), 2)
    with pytest.raises(RuntimeError, match=r"^one_hot is only applicable to index tensor of type LongTensor\.$"):
        F.one_hot(torch.tensor([1.0]), 2)
    assert F.one_hot(torch.tensor([1.0]).long(), 4).tolist() == [[0, 1, 0, 0]]
    assert F.one_hot(torch.tensor([3])).shape == (1, 4)  # num_classes inferred as max + 1


@pytest.mark.claim("module.errors.ctc-blank")
def test_ctc_blank_out_of_range():
    log_probs = torch.zeros(5, 2, 3).log_softmax(2)  # (time, batch, classes)
    targets = torch.tensor([[1, 1], [1, 1]])
    with pytest.raises(RuntimeError, match=r"^blank must be in label range$"):
        F.ctc_loss(log_probs, targets, (5, 5), (2, 2), blank=5)
    assert F.ctc_loss(log_probs, targets, (5, 5), (2, 2), blank=0).isfinite()


# ---------------------------------------------------------------- init and gradient clipping

@pytest.mark.claim("module.errors.init-fan")
def test_init_fan_and_empty():
    with pytest.raises(ValueError, match=lit("Fan in and fan out can not be computed for tensor with fewer than 2 "
                                             "dimensions")):
        nn.init.xavier_uniform_(torch.empty(3))
    with pytest.warns(UserWarning, match=r"^Initializing zero-element tensors is a no-op$"):
        nn.init.kaiming_uniform_(torch.empty(0, 3))
    assert nn.init.xavier_uniform_(torch.empty(3, 1)).shape == (3, 1)
    assert nn.init.zeros_(torch.empty(3)).tolist() == [0.0, 0.0, 0.0]  # biases: constant init


@pytest.mark.claim("module.errors.clip-grad-nonfinite")
def test_clip_grad_norm_nonfinite():
    p = nn.Parameter(torch.ones(2))
    p.grad = torch.tensor([float("inf"), 1.0])
    with pytest.raises(RuntimeError, match=lit("The total norm of order 2.0 for gradients from `parameters` is "
                                               "non-finite, so it cannot be clipped. To disable this error and scale "
                                               "the gradients by the non-finite norm anyway, set "
                                               "`error_if_nonfinite=False`")):
        nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert nn.utils.clip_grad_norm_([p], 1.0).isinf()  # the default returns the norm, the step should be skipped
    p.grad = torch.tensor([3.0, 4.0])
    assert nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True).item() == 5.0
