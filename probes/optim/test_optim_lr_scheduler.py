"""Probes for docs/optim/lr-schedulers.md."""
import re
import warnings

import pytest
import torch
from torch import nn
from torch.optim.lr_scheduler import LinearLR, StepLR


def sgd(device, lr=1.0):
    p = nn.Parameter(torch.ones(2, device=device))
    p.grad = torch.ones(2, device=device)
    return torch.optim.SGD([p], lr=lr)


@pytest.mark.claim("optim.sched.lr-read-each-step")
def test_the_step_reads_lr_from_the_group(device):
    opt = sgd(device)
    (p,) = opt.param_groups[0]["params"]
    p.grad = torch.tensor([1.0, -2.0], device=device)
    opt.param_groups[0]["lr"] = 0.25
    before = p.detach().clone()
    opt.step()
    assert torch.equal(p.detach(), before - 0.25 * p.grad)


@pytest.mark.claim("optim.sched.construction")
def test_constructing_a_scheduler_sets_initial_lr_and_steps_once(device):
    opt = sgd(device)
    assert "initial_lr" not in opt.param_groups[0]
    assert "step" not in vars(opt)
    sched = StepLR(opt, step_size=2, gamma=0.5)
    assert opt.param_groups[0]["initial_lr"] == 1.0 and sched.base_lrs == [1.0]
    assert sched.last_epoch == 0 and sched._step_count == 1  # the constructor already called step()
    assert sched.get_last_lr() == [1.0]
    wrapper = vars(opt)["step"]  # an instance attribute now shadows the class's step
    assert wrapper._wrapped_by_lr_sched is True
    assert not getattr(opt, "_opt_called", False)
    opt.step()
    assert opt._opt_called is True


@pytest.mark.claim("optim.sched.steplr")
def test_steplr_writes_lr_into_the_param_group(device):
    opt = sgd(device)
    sched = StepLR(opt, step_size=2, gamma=0.5)
    seen = []
    for _ in range(6):
        seen.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert seen == [0.5 ** (epoch // 2) for epoch in range(6)]  # 1, 1, .5, .5, .25, .25
    assert sched.last_epoch == 6
    assert sched.get_last_lr() == [opt.param_groups[0]["lr"]] == [0.5 ** 3]


@pytest.mark.claim("optim.sched.order-warning")
def test_scheduler_step_before_optimizer_step_warns_and_skips_a_value(device):
    opt = sgd(device)
    sched = StepLR(opt, step_size=1, gamma=0.5)
    with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler\.step\(\)` before `optimizer\.step\(\)`\. "
                                         r"In PyTorch 1\.1\.0 and later, you should call them in the opposite order"):
        sched.step()
    assert opt.param_groups[0]["lr"] == 0.5  # the first optimizer step will already use the second value
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # only the first scheduler step is checked
        sched.step()
    opt2 = sgd(device)
    sched2 = StepLR(opt2, step_size=1, gamma=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt2.step()
        sched2.step()
    assert opt2.param_groups[0]["lr"] == 0.5


@pytest.mark.claim("optim.sched.chainable")
def test_steplr_decays_the_current_lr_not_the_base(device):
    opt = sgd(device)
    sched = StepLR(opt, step_size=1, gamma=0.5)
    opt.step()
    opt.param_groups[0]["lr"] = 10.0  # set by hand between steps
    sched.step()
    assert opt.param_groups[0]["lr"] == 5.0  # 10 * gamma: the manual change is kept
    assert sched.base_lrs == [1.0]
    with pytest.warns(UserWarning, match=r"The epoch parameter in `scheduler\.step\(\)` was not necessary and is "
                                         r"being deprecated where possible"):
        sched.step(3)
    assert opt.param_groups[0]["lr"] == 1.0 * 0.5 ** 3  # an explicit epoch uses the closed form on base_lrs


@pytest.mark.claim("optim.sched.get-lr-warning")
def test_calling_get_lr_directly_warns(device):
    sched = StepLR(sgd(device), step_size=1)
    with pytest.warns(UserWarning, match=r"To get the last learning rate computed by the scheduler, "
                                         r"please use `get_last_lr\(\)`\."):
        sched.get_lr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sched.get_last_lr() == [1.0]


@pytest.mark.claim("optim.sched.resume-order")
def test_a_scheduler_built_after_loading_overwrites_the_loaded_lr(device):
    opt = sgd(device, lr=0.8)
    sched = LinearLR(opt, start_factor=0.25, total_iters=4)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.2)  # construction already applied start_factor
    for _ in range(4):
        opt.step()
        sched.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(0.8)
    checkpoint = {"opt": opt.state_dict(), "sched": sched.state_dict()}
    assert "optimizer" not in checkpoint["sched"] and checkpoint["sched"]["last_epoch"] == 4
    # Wrong order: load the optimizer, then build the scheduler.
    wrong = sgd(device, lr=0.8)
    wrong.load_state_dict(checkpoint["opt"])
    assert wrong.param_groups[0]["lr"] == pytest.approx(0.8)
    LinearLR(wrong, start_factor=0.25, total_iters=4)
    assert wrong.param_groups[0]["lr"] == pytest.approx(0.2)  # the loaded lr is gone
    # Right order: build the scheduler, then load both.
    right = sgd(device, lr=0.8)
    right_sched = LinearLR(right, start_factor=0.25, total_iters=4)
    right.load_state_dict(checkpoint["opt"])
    right_sched.load_state_dict(checkpoint["sched"])
    assert right.param_groups[0]["lr"] == pytest.approx(0.8) and right_sched.last_epoch == 4


def last_epoch_needs_initial_lr(device, message):
    opt = sgd(device)
    with pytest.raises(KeyError, match=re.escape(message)):
        StepLR(opt, step_size=1, last_epoch=3)
    with pytest.raises(TypeError, match=r"object is not an Optimizer"):
        StepLR(object(), step_size=1)
    opt3 = sgd(device)
    resumed = StepLR(opt3, step_size=1)
    resumed.load_state_dict({**StepLR(sgd(device), step_size=1).state_dict(), "last_epoch": 3})
    assert resumed.last_epoch == 3


@pytest.mark.claim("optim.sched.resume-needs-initial-lr-optimizer")
@pytest.mark.torch_version("<2.10")
def test_last_epoch_needs_initial_lr_until_2_9(device):
    last_epoch_needs_initial_lr(device, "param 'initial_lr' is not specified in param_groups[0] when resuming an "
                                        "optimizer")


@pytest.mark.claim("optim.sched.resume-needs-initial-lr")
@pytest.mark.torch_version(">=2.10")
def test_last_epoch_needs_initial_lr(device):
    last_epoch_needs_initial_lr(device, "param 'initial_lr' is not specified in param_groups[0] when resuming "
                                        "scheduler with last_epoch >= 0")
