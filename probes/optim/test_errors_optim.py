"""Probes for docs/optim/errors.md: optimizer arguments, sparse gradients, LR scheduler errors and warnings.

Each probe triggers its messages the way the claim's cause says (`pytest.raises` / `pytest.warns`
with the stable part of the message in `match=`), then runs the claim's fix and checks it works.

Chosen from what users ask about (threads read for this page):
- https://github.com/pytorch/pytorch/issues/44511, https://github.com/pytorch/pytorch/issues/55585,
  https://github.com/pytorch/pytorch/issues/67590, https://github.com/princeton-vl/RAFT/issues/104
  (scheduler step-order warnings with GradScaler and wrapped optimizers)
- https://github.com/pytorch/pytorch/issues/38170, https://github.com/pytorch/pytorch/issues/34531,
  https://github.com/pytorch/pytorch/issues/44619 (OneCycleLR total_steps and its step count)
"""
import re
import warnings

import pytest
import torch
import torch.nn as nn
from torch.optim import lr_scheduler as sched


def lit(text):
    """A regex matching `text` literally."""
    return re.escape(text)


def params():
    return [nn.Parameter(torch.ones(2))]


def sgd(**kw):
    return torch.optim.SGD(params(), lr=0.1, **kw)


@pytest.mark.claim("optim.errors.invalid-hyperparameter")
def test_invalid_hyperparameters():
    cases = [(lambda: torch.optim.Adam(params(), weight_decay=-1), "Invalid weight_decay value: -1"),
             (lambda: torch.optim.RMSprop(params(), alpha=-1), "Invalid alpha value: -1"),
             (lambda: torch.optim.Adagrad(params(), lr_decay=-1), "Invalid lr_decay value: -1"),
             (lambda: torch.optim.Adadelta(params(), rho=2), "Invalid rho value: 2")]
    for make, message in cases:
        with pytest.raises(ValueError, match="^" + lit(message) + "$"):
            make()
    assert torch.optim.Adam(params(), weight_decay=0.01).defaults["weight_decay"] == 0.01


@pytest.mark.claim("optim.errors.lbfgs")
def test_lbfgs_groups_and_closure():
    with pytest.raises(ValueError, match=lit("LBFGS doesn't support per-parameter options (parameter groups)")):
        torch.optim.LBFGS([{"params": params()}, {"params": params()}])
    w = nn.Parameter(torch.tensor([3.0]))
    opt = torch.optim.LBFGS([w])
    with pytest.raises(TypeError, match=lit("LBFGS.step() missing 1 required positional argument: 'closure'")):
        opt.step()

    def closure():
        opt.zero_grad()
        loss = (w ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    assert abs(w.item()) < 1e-3


@pytest.mark.claim("optim.errors.sparse-gradients")
def test_sparse_and_dense_gradients():
    emb = nn.Embedding(3, 2, sparse=True)
    opt = torch.optim.Adam(emb.parameters())
    emb(torch.tensor([1])).sum().backward()
    with pytest.raises(RuntimeError, match=r"^Adam does not support sparse gradients, please consider SparseAdam "
                                           r"instead$"):
        opt.step()
    torch.optim.SparseAdam(emb.parameters()).step()
    lin = nn.Linear(2, 2)
    lin(torch.ones(1, 2)).sum().backward()
    with pytest.raises(RuntimeError, match=r"^SparseAdam does not support dense gradients, please consider Adam "
                                           r"instead$"):
        torch.optim.SparseAdam(lin.parameters()).step()
    torch.optim.Adam(lin.parameters()).step()
    assert emb.weight.grad.is_sparse and not lin.weight.grad.is_sparse


@pytest.mark.claim("optim.errors.step-overridden")
def test_step_overridden_after_scheduler():
    opt = sgd()
    scheduler = sched.StepLR(opt, 1)
    opt.step = lambda *a, **k: None  # replaced after the scheduler wrapped it
    with pytest.warns(UserWarning, match=lit("Seems like `optimizer.step()` has been overridden after learning rate "
                                             "scheduler initialization. Please, make sure to call `optimizer.step()` "
                                             "before `lr_scheduler.step()`.")):
        scheduler.step()
    opt = sgd()
    scheduler = sched.StepLR(opt, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        scheduler.step()
    assert scheduler.get_last_lr() == [pytest.approx(0.01)]


@pytest.mark.claim("optim.errors.plateau-arguments")
def test_reduce_lr_on_plateau_arguments():
    with pytest.raises(ValueError, match=r"^mode bad is unknown!$"):
        sched.ReduceLROnPlateau(sgd(), mode="bad")
    with pytest.raises(ValueError, match=r"^threshold mode bad is unknown!$"):
        sched.ReduceLROnPlateau(sgd(), threshold_mode="bad")
    with pytest.raises(ValueError, match=r"^Factor should be < 1\.0\.$"):
        sched.ReduceLROnPlateau(sgd(), factor=1.5)
    opt = sgd()
    plateau = sched.ReduceLROnPlateau(opt, mode="max", factor=0.5, patience=0)
    plateau.step(1.0)
    plateau.step(0.5)  # no improvement in "max" mode: the rate is halved
    assert opt.param_groups[0]["lr"] == pytest.approx(0.05)


@pytest.mark.claim("optim.errors.onecycle-steps")
def test_onecycle_total_steps():
    with pytest.raises(ValueError, match=lit("You must define either total_steps OR (epochs AND steps_per_epoch)")):
        sched.OneCycleLR(sgd(), max_lr=0.1)
    with pytest.raises(ValueError, match=r"^Expected positive integer total_steps, but got -1$"):
        sched.OneCycleLR(sgd(), max_lr=0.1, total_steps=-1)
    opt = sgd()
    s = sched.OneCycleLR(opt, max_lr=0.1, total_steps=2)
    with pytest.raises(ValueError, match=r"^Tried to step 3 times\. The specified number of total steps is 2$"):
        for _ in range(3):
            opt.step()
            s.step()
    opt = sgd()
    s = sched.OneCycleLR(opt, max_lr=0.1, epochs=3, steps_per_epoch=1)
    for _ in range(2):  # the constructor took step 1: total_steps - 1 more are allowed
        opt.step()
        s.step()
    assert s.total_steps == 3


@pytest.mark.claim("optim.errors.cyclic-momentum")
def test_cyclic_lr_momentum_and_lengths():
    with pytest.raises(ValueError, match=lit("optimizer must support momentum or beta1 with `cycle_momentum` option "
                                             "enabled")):
        sched.CyclicLR(torch.optim.Adagrad(params()), 0.01, 0.1)
    two_groups = torch.optim.SGD([{"params": params()}, {"params": params()}], lr=0.1, momentum=0.9)
    with pytest.raises(ValueError, match=lit("base_lr must have the same length as optimizer.param_groups. base_lr has "
                                             "1 values, param_groups has 2.")):
        sched.CyclicLR(two_groups, [0.01], 0.1)
    assert sched.CyclicLR(torch.optim.Adagrad(params()), 0.01, 0.1, cycle_momentum=False).base_lrs == [0.01]
    assert sched.CyclicLR(two_groups, [0.01, 0.02], 0.1).base_lrs == [0.01, 0.02]


@pytest.mark.claim("optim.errors.lambda-count")
def test_lambda_lr_count():
    two_groups = torch.optim.SGD([{"params": params()}, {"params": params()}], lr=0.1)
    with pytest.raises(ValueError, match=r"^Expected 2 lr_lambdas, but got 1$"):
        sched.LambdaLR(two_groups, [lambda e: 1.0])
    assert len(sched.LambdaLR(two_groups, lambda e: 1.0).lr_lambdas) == 2  # one function is used for every group


@pytest.mark.claim("optim.errors.sequential-milestones")
def test_sequential_lr_milestones_and_optimizer():
    opt = sgd()
    with pytest.raises(ValueError, match=lit("Sequential Schedulers expects number of schedulers provided to be one "
                                             "more than the number of milestone points, but got number of schedulers "
                                             "2 and the number of milestones to be equal to 2")):
        sched.SequentialLR(opt, [sched.StepLR(opt, 1), sched.StepLR(opt, 1)], milestones=[1, 2])
    other = sgd()
    with pytest.raises(ValueError, match=r"^SequentialLR expects all schedulers to belong to the same optimizer, but "
                                         r"got scheduler StepLR at index 1 has SGD \("):
        sched.SequentialLR(opt, [sched.StepLR(opt, 1), sched.StepLR(other, 1)], milestones=[1])
    with pytest.raises(ValueError, match=r"^ChainedScheduler expects all schedulers to belong to the same optimizer"):
        sched.ChainedScheduler([sched.StepLR(opt, 1), sched.StepLR(other, 1)])
    warm = sched.LinearLR(opt, start_factor=0.5, total_iters=1)
    assert sched.SequentialLR(opt, [warm, sched.StepLR(opt, 1)], milestones=[1]).optimizer is opt


@pytest.mark.claim("optim.errors.scheduler-factors")
def test_scheduler_factor_ranges():
    with pytest.raises(ValueError, match=lit("Starting multiplicative factor expected to be greater than 0 and less or "
                                             "equal to 1.")):
        sched.LinearLR(sgd(), start_factor=0)
    with pytest.raises(ValueError, match=lit("Constant multiplicative factor expected to be between 0 and 1.")):
        sched.ConstantLR(sgd(), factor=2)
    with pytest.raises(ValueError, match=r"^Expected positive integer T_0, but got 0$"):
        sched.CosineAnnealingWarmRestarts(sgd(), T_0=0)
    with pytest.raises(ValueError, match=r"^Expected integer T_mult >= 1, but got 0$"):
        sched.CosineAnnealingWarmRestarts(sgd(), T_0=2, T_mult=0)
    assert sched.LinearLR(sgd(), start_factor=0.01).start_factor == 0.01
    assert sched.CosineAnnealingWarmRestarts(sgd(), T_0=2, T_mult=2).T_mult == 2


@pytest.mark.claim("optim.errors.swa-anneal")
@pytest.mark.torch_version(">=2.13")
def test_swalr_anneal_strategy():
    from torch.optim.swa_utils import SWALR
    with pytest.raises(ValueError, match=r"^anneal_strategy must be one of 'cos' or 'linear', instead got bad$"):
        SWALR(sgd(), swa_lr=0.1, anneal_strategy="bad")
    assert SWALR(sgd(), swa_lr=0.1, anneal_strategy="linear").anneal_func.__name__ == "_linear_anneal"


@pytest.mark.claim("optim.errors.verbose-removed")
def test_scheduler_verbose_removed():
    with pytest.raises(TypeError, match=lit("StepLR.__init__() got an unexpected keyword argument 'verbose'")):
        sched.StepLR(sgd(), 1, verbose=True)
    opt = sgd()
    s = sched.StepLR(opt, 1)
    opt.step()
    s.step()
    assert s.get_last_lr() == [pytest.approx(0.01)]  # read the rate instead of printing it


@pytest.mark.claim("optim.errors.state-dict-keys")
def test_optimizer_state_dict_without_param_groups():
    opt = sgd()
    with pytest.raises(KeyError, match=r"^'param_groups'$"):
        opt.load_state_dict({"state": {}})
    opt.load_state_dict(sgd().state_dict())
    assert opt.param_groups[0]["lr"] == 0.1


@pytest.mark.claim("optim.errors.gradscaler-no-cuda")
@pytest.mark.skipif(torch.cuda.is_available(), reason="the warnings are the ones of a machine without CUDA")
def test_gradscaler_without_cuda():
    with pytest.warns(FutureWarning, match=lit("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                                               "`torch.amp.GradScaler('cuda', args...)` instead.")):
        with pytest.warns(UserWarning, match=lit("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                                                 "Disabling.")):
            scaler = torch.cuda.amp.GradScaler()
    assert not scaler.is_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cpu_scaler = torch.amp.GradScaler("cpu")
    assert cpu_scaler.is_enabled()
