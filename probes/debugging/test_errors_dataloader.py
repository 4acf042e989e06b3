"""Probes for docs/debugging/dataloader-errors.md: DataLoader, sampler and worker errors.

Each probe triggers one message the way its claim's cause says, checks its stable part with
`pytest.raises(..., match=...)` / `pytest.warns(..., match=...)`, and then shows that the claim's
fix makes the same code succeed. Worker probes start one forked worker (about 0.1 s each).

Chosen from what users ask about (issue and forum threads read for this page):
- https://github.com/pytorch/pytorch/issues/106634 (timeout with num_workers=0)
- https://github.com/pytorch/pytorch/issues/23141 (default_collate of nested lists)
- https://github.com/rowanz/r2c/issues/27, https://github.com/xuebinqin/BASNet/issues/32,
  https://github.com/patrickloeber/pytorchTutorial/issues/3 (worker exited unexpectedly)
- https://github.com/Megvii-BaseDetection/YOLOX/issues/1523, https://github.com/dreamquark-ai/tabnet/issues/440,
  https://github.com/nitsaick/kits19-challenge/issues/14 (default_collate: found NoneType / object / <U14)
- https://github.com/Suanmd/TR-MISR/issues/3, https://github.com/kohya-ss/sd-scripts/issues/677
  (stack expects each tensor to be equal size, inside a worker)
- https://github.com/open-edge-platform/anomalib/issues/1855, https://github.com/voletiv/mcvd-pytorch/issues/22
  (Trying to resize storage that is not resizable, in a worker's collate)
- https://github.com/bshall/hubert/issues/3 (This DataLoader will create N worker processes)
- https://discuss.pytorch.org/t/distributed-data-parallel-repeated-pickling/104098 and
  https://buglyst.com/learn/guides/python-multiprocessing-pickling-debug (pickling a lambda for workers)
"""
import os
import re
import signal
import time
import warnings
from contextlib import contextmanager
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest
import torch
from torch.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    random_split,
)


def lit(text):
    """A regex matching `text` literally."""
    return re.escape(text)


@contextmanager
def batches(loader):
    """An iterator of `loader` whose workers are shut down on leaving the block. A failed iterator is
    otherwise kept alive by the caught exception's traceback, and its workers are joined only when the
    process exits, after a 5 s timeout."""
    iterator = iter(loader)
    try:
        yield iterator
    finally:
        iterator._shutdown_workers()


class Samples(Dataset):
    """A map-style dataset whose item i is make(i)."""

    def __init__(self, make, n=2):
        self.make, self.n = make, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.make(i)


class Stream(IterableDataset):
    """An iterable-style dataset of 0, 1, 2, which may report a length of its own."""

    def __init__(self, reported_len=None):
        self.reported_len = reported_len

    def __iter__(self):
        return iter(range(3))

    def __len__(self):
        if self.reported_len is None:
            raise TypeError("no length")
        return self.reported_len


def fail_value(i):
    raise ValueError(f"bad sample {i}")


def fail_key(i):
    return {}["label"]


def exit_worker(i):
    os._exit(1)


def kill_worker(i):
    os.kill(os.getpid(), signal.SIGKILL)


def slow_sample(i):
    time.sleep(0.5)
    return i


def grows(i):
    return torch.zeros(i + 1)


# ---------------------------------------------------------------- worker errors, re-raised in the main process

@pytest.mark.claim("debug.dataloader.worker-exception-reraised")
def test_worker_exception_reraised():
    with batches(DataLoader(Samples(fail_value), num_workers=1)) as it, \
            pytest.raises(ValueError, match=r"^Caught ValueError in DataLoader worker process 0\.\nOriginal Traceback") as info:
        list(it)
    assert "ValueError: bad sample 0" in str(info.value)  # the worker's own message, at the end
    with pytest.raises(ValueError, match=r"^bad sample 0$"):  # num_workers=0: the original error, unwrapped
        list(DataLoader(Samples(fail_value), num_workers=0))
    assert [b.tolist() for b in DataLoader(Samples(lambda i: i), num_workers=1)] == [[0], [1]]


@pytest.mark.claim("debug.dataloader.worker-keyerror")
def test_worker_keyerror_reraised():
    with batches(DataLoader(Samples(fail_key), num_workers=1)) as it, \
            pytest.raises(KeyError, match=r"Caught KeyError in DataLoader worker process 0\.") as info:
        list(it)
    assert type(info.value) is KeyError and "KeyError: 'label'" in info.value.args[0]
    assert [b["label"].tolist() for b in DataLoader(Samples(lambda i: {"label": i}), num_workers=1)] == [[0], [1]]


@pytest.mark.claim("debug.dataloader.worker-init-fn-error")
def test_worker_init_fn_error():
    def broken_init(worker_id):
        return 1 / 0

    with batches(DataLoader(Samples(lambda i: i), num_workers=1, worker_init_fn=broken_init)) as it, \
            pytest.raises(ZeroDivisionError, match=r"^Caught ZeroDivisionError in DataLoader worker process 0\.") as info:
        list(it)
    assert "init_fn(worker_id)" in str(info.value)
    seen = []
    assert len(list(DataLoader(Samples(lambda i: i), num_workers=1, worker_init_fn=seen.append))) == 2


@pytest.mark.claim("debug.dataloader.worker-stack-sizes")
def test_worker_stack_sizes():
    # With the smaller sample first, the worker's shared buffer is large enough and torch.stack's own
    # check fires.
    with batches(DataLoader(Samples(grows), batch_size=2, num_workers=1)) as it, \
            pytest.raises(RuntimeError, match=r"^Caught RuntimeError in DataLoader worker process 0\.\n") as info:
        list(it)
    assert info.value.args[0].rstrip().endswith(
        "RuntimeError: stack expects each tensor to be equal size, but got [1] at entry 0 and [2] at entry 1")
    padded = lambda batch: torch.nn.utils.rnn.pad_sequence(batch, batch_first=True)  # noqa: E731
    assert next(iter(DataLoader(Samples(grows), batch_size=2, num_workers=1, collate_fn=padded))).shape == (2, 2)


@pytest.mark.claim("debug.dataloader.worker-resize-storage")
def test_worker_resize_storage():
    # In a worker, collate stacks into a shared-memory storage sized for the batch's total elements; with
    # the larger sample first, the output shape (2, 2) needs more than that, and shared storage cannot grow.
    shrinks = lambda i: torch.zeros(2 - i)  # noqa: E731
    with batches(DataLoader(Samples(shrinks), batch_size=2, num_workers=1)) as it, \
            pytest.raises(RuntimeError, match=r"^Caught RuntimeError in DataLoader worker process 0\.\n") as info:
        list(it)
    message = info.value.args[0].rstrip()
    assert message.endswith("RuntimeError: Trying to resize storage that is not resizable")
    assert "collate_tensor_fn" in message
    with pytest.raises(RuntimeError, match=lit("stack expects each tensor to be equal size, but got [2] at entry 0 "
                                               "and [1] at entry 1")):
        list(DataLoader(Samples(shrinks), batch_size=2, num_workers=0))  # the same batch without a worker
    assert [t.shape for t in next(iter(DataLoader(Samples(shrinks), batch_size=2, num_workers=1,
                                                  collate_fn=list)))] == [(2,), (1,)]


WAITING_FOR_A_BATCH = r"^DataLoader worker \(pid\(s\) \d+\) exited unexpectedly$"
SIGCHLD_SAYS = {exit_worker: r"^DataLoader worker \(pid \d+\) exited unexpectedly with exit code 1\. " + lit(
                    "Details are lost due to multiprocessing. Rerunning with num_workers=0 may give better error trace.")
                + "$",
                kill_worker: r"^DataLoader worker \(pid \d+\) is killed by signal: Killed\. $"}


def wait_for_death(worker):
    """Block until `worker` has ended, leaving it unreaped (WNOWAIT), as the loader's own checks expect."""
    os.waitid(os.P_PID, worker.pid, os.WEXITED | os.WNOWAIT)


@pytest.mark.claim("debug.dataloader.worker-exited")
def test_worker_exited_unexpectedly():
    for end in (exit_worker, kill_worker):
        # a plain loop: either message, by where the main process is when the death is noticed
        with pytest.raises(RuntimeError, match=f"{WAITING_FOR_A_BATCH}|{SIGCHLD_SAYS[end]}"):
            list(DataLoader(Samples(end), num_workers=1))
        # noticed while waiting for a batch: SIGCHLD held back, so only the wait's own check can see it
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
        try:
            with batches(DataLoader(Samples(end), num_workers=1, timeout=0.2)) as it:
                wait_for_death(it._workers[0])
                with pytest.raises(RuntimeError, match=WAITING_FOR_A_BATCH):
                    next(it)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)  # the worker is reaped: the handler finds nothing
        # noticed anywhere else: the loader's SIGCHLD handler raises wherever the main process is
        with pytest.raises(RuntimeError, match=SIGCHLD_SAYS[end]):
            with batches(DataLoader(Samples(end), num_workers=1)) as it:
                wait_for_death(it._workers[0])
                time.sleep(30)  # the handler's error ends the sleep
    with pytest.raises(RuntimeError, match=r"^bad sample 0$"):
        # num_workers=0 runs the same code in the main process, where its own error shows
        list(DataLoader(Samples(lambda i: (_ for _ in ()).throw(RuntimeError("bad sample 0"))), num_workers=0))


@pytest.mark.claim("debug.dataloader.worker-timeout")
def test_worker_timeout():
    with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 0\.1 seconds$"):
        list(DataLoader(Samples(slow_sample, 1), num_workers=1, timeout=0.1))
    assert [b.tolist() for b in DataLoader(Samples(slow_sample, 1), num_workers=1, timeout=5)] == [[0]]


def spawn_pickles_lambda():
    """A spawned worker's loader whose collate_fn is a local lambda, the lambda, and the error's regex."""
    collate = lambda batch: batch  # noqa: E731, a local lambda: pickle cannot name it
    loader = DataLoader(Samples(lambda i: i), num_workers=1, multiprocessing_context="spawn", collate_fn=collate)
    return loader, collate, lit("Can't pickle local object 'spawn_pickles_lambda.<locals>.<lambda>'")


def fork_pickles_nothing(collate):
    ForkingPickler.dumps(default_collate)  # a function at a module's top level pickles by name
    fork = DataLoader(Samples(lambda i: i), num_workers=1, multiprocessing_context="fork", collate_fn=collate)
    assert list(fork) == [[0], [1]]  # fork copies the process: nothing is pickled


@pytest.mark.claim("debug.dataloader.spawn-lambda-no-warning")
@pytest.mark.torch_version("<2.10")
def test_spawn_pickles_lambda_until_2_9():
    loader, collate, pickled = spawn_pickles_lambda()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(AttributeError, match=pickled):
            iter(loader)
    assert [str(w.message) for w in caught if "pickle" in str(w.message)] == []
    fork_pickles_nothing(collate)


@pytest.mark.claim("debug.dataloader.spawn-lambda")
@pytest.mark.torch_version(">=2.10")
def test_spawn_pickles_lambda():
    loader, collate, pickled = spawn_pickles_lambda()
    # the warning goes on, in words that vary by release, about Python 3.14's start method
    with pytest.warns(UserWarning, match="^" + lit("Got pickle error when attempting to start a worker Process. "
                                                   "This might be because the worker Process arguments are not "
                                                   "picklable.")) as caught:
        with pytest.raises(AttributeError, match=pickled):
            iter(loader)
    assert len([w for w in caught if "pickle" in str(w.message)]) == 1
    fork_pickles_nothing(collate)


# ---------------------------------------------------------------- default_collate

@pytest.mark.claim("debug.dataloader.collate-none")
def test_collate_none_sample():
    none_at_1 = lambda i: None if i == 1 else torch.zeros(2)  # noqa: E731, a failed read returning None
    with pytest.raises(TypeError, match=r"^expected Tensor as element 1 in argument 0, but got NoneType$"):
        list(DataLoader(Samples(none_at_1), batch_size=2))  # torch.stack meets the None
    with pytest.raises(TypeError, match=lit("default_collate: batch must contain tensors, numpy arrays, numbers, "
                                            "dicts or lists; found <class 'NoneType'>")):
        list(DataLoader(Samples(lambda i: None), batch_size=2))  # the first sample decides the rule
    keep = lambda batch: default_collate([b for b in batch if b is not None])  # noqa: E731
    assert next(iter(DataLoader(Samples(none_at_1), batch_size=2, collate_fn=keep))).shape == (1, 2)


@pytest.mark.claim("debug.dataloader.collate-numpy-dtype")
def test_collate_numpy_object_and_string_arrays():
    for make, found in ((lambda i: np.array([object()]), "object"), (lambda i: np.array(["a"]), "<U1")):
        with pytest.raises(TypeError, match=lit("default_collate: batch must contain tensors, numpy arrays, numbers, "
                                                f"dicts or lists; found {found}") + "$"):
            list(DataLoader(Samples(make), batch_size=2))
    assert next(iter(DataLoader(Samples(lambda i: np.array([1.5])), batch_size=2))).dtype == torch.float64


@pytest.mark.claim("debug.dataloader.collate-list-sizes")
def test_collate_lists_of_different_lengths():
    with pytest.raises(RuntimeError, match=r"^each element in list of batch should be of equal size$"):
        list(DataLoader(Samples(lambda i: [0] * (i + 1)), batch_size=2))
    with pytest.raises(RuntimeError, match=r"^each element in list of batch should be of equal size$"):
        list(DataLoader(Samples(lambda i: (1, 2) if i == 0 else (1,)), batch_size=2))
    assert next(iter(DataLoader(Samples(lambda i: [0] * (i + 1)), batch_size=2, collate_fn=list))) == [[0], [0, 0]]


@pytest.mark.claim("debug.dataloader.collate-string-mixed")
def test_collate_number_then_string():
    with pytest.raises(TypeError, match=r"^new\(\): invalid data type 'str'$"):
        list(DataLoader(Samples(lambda i: 1 if i == 0 else "a"), batch_size=2))
    assert next(iter(DataLoader(Samples(lambda i: "ab"[i]), batch_size=2))) == ["a", "b"]


# ---------------------------------------------------------------- DataLoader arguments

@pytest.mark.claim("debug.dataloader.num-workers-negative")
def test_num_workers_negative():
    with pytest.raises(ValueError, match=lit("num_workers option should be non-negative; use num_workers=0 to "
                                             "disable multiprocessing.")):
        DataLoader(Samples(lambda i: i), num_workers=-1)
    assert DataLoader(Samples(lambda i: i), num_workers=0).num_workers == 0


@pytest.mark.claim("debug.dataloader.timeout-negative")
def test_timeout_negative():
    with pytest.raises(ValueError, match=r"^timeout option should be non-negative$"):
        DataLoader(Samples(lambda i: i), timeout=-1)
    assert DataLoader(Samples(lambda i: i), timeout=0).timeout == 0


def timeout_without_workers(message):
    with pytest.raises(AssertionError, match="^" + lit(message) + "$"):
        iter(DataLoader(Samples(lambda i: i), num_workers=0, timeout=1))
    assert len(list(DataLoader(Samples(lambda i: i), num_workers=0, timeout=0))) == 2


@pytest.mark.claim("debug.dataloader.timeout-without-workers-bare")
@pytest.mark.torch_version("<2.10")
def test_timeout_without_workers_until_2_9():
    timeout_without_workers("")


@pytest.mark.claim("debug.dataloader.timeout-without-workers")
@pytest.mark.torch_version(">=2.10")
def test_timeout_without_workers():
    timeout_without_workers("_SingleProcessDataLoaderIter requires timeout == 0")


@pytest.mark.claim("debug.dataloader.prefetch-without-workers")
def test_prefetch_factor_without_workers():
    with pytest.raises(ValueError, match=lit("prefetch_factor option could only be specified in multiprocessing."
                                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                                             "prefetch_factor to None.")):
        DataLoader(Samples(lambda i: i), prefetch_factor=2)
    assert DataLoader(Samples(lambda i: i), num_workers=1, prefetch_factor=2).prefetch_factor == 2


@pytest.mark.claim("debug.dataloader.persistent-without-workers")
def test_persistent_workers_without_workers():
    with pytest.raises(ValueError, match=r"^persistent_workers option needs num_workers > 0$"):
        DataLoader(Samples(lambda i: i), persistent_workers=True)
    assert DataLoader(Samples(lambda i: i), num_workers=1, persistent_workers=True).persistent_workers


@pytest.mark.claim("debug.dataloader.context-without-workers")
def test_multiprocessing_context_errors():
    with pytest.raises(ValueError, match=lit("multiprocessing_context can only be used with multi-process loading "
                                             "(num_workers > 0), but got num_workers=0")):
        DataLoader(Samples(lambda i: i), multiprocessing_context="spawn")
    with pytest.raises(ValueError, match=lit("multiprocessing_context option should specify a valid start method in "
                                             "['fork', 'spawn', 'forkserver'], but got multiprocessing_context='threads'")):
        DataLoader(Samples(lambda i: i), num_workers=1, multiprocessing_context="threads")
    with pytest.raises(TypeError, match=lit("multiprocessing_context option should be a valid context object or a "
                                            "string specifying the start method, but got multiprocessing_context=1")):
        DataLoader(Samples(lambda i: i), num_workers=1, multiprocessing_context=1)
    assert DataLoader(Samples(lambda i: i), num_workers=1, multiprocessing_context="fork").multiprocessing_context


@pytest.mark.claim("debug.dataloader.batch-size-none-drop-last")
def test_batch_size_none_and_drop_last():
    with pytest.raises(ValueError, match=r"^batch_size=None option disables auto-batching and is mutually exclusive "
                                         r"with drop_last$"):
        DataLoader(Samples(lambda i: i), batch_size=None, drop_last=True)
    assert list(DataLoader(Samples(lambda i: i), batch_size=None)) == [0, 1]  # samples unbatched


@pytest.mark.claim("debug.dataloader.iterable-options")
def test_iterable_dataset_options():
    for option, value in (("sampler", [0]), ("shuffle", True), ("batch_sampler", [[0]])):
        with pytest.raises(ValueError, match=lit(f"DataLoader with IterableDataset: expected unspecified {option} "
                                                 f"option, but got {option}={value!r}")):
            DataLoader(Stream(), **{option: value})
    assert [b.tolist() for b in DataLoader(Stream(), batch_size=2)] == [[0, 1], [2]]


@pytest.mark.claim("debug.dataloader.iterable-length-warning")
def test_iterable_dataset_length_warning():
    with pytest.warns(UserWarning, match=lit("Length of IterableDataset <") + r".*" +
                      lit("> was reported to be 2(when accessing len(dataloader)), but 3 samples have been fetched. ")):
        loader = DataLoader(Stream(reported_len=2))
        assert len(loader) == 2
        list(loader)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loader = DataLoader(Stream(reported_len=3))
        assert len(loader) == 3 and len(list(loader)) == 3


@pytest.mark.claim("debug.dataloader.too-many-workers")
def test_too_many_workers_warning():
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    message = lit(f"This DataLoader will create {cpus + 1} worker processes in total. "
                  f"Our suggested max number of worker in current system is {cpus}")
    with pytest.warns(UserWarning, match=message):
        loader = DataLoader(Samples(lambda i: i), num_workers=cpus + 1)  # checked when the loader is made
    with pytest.warns(UserWarning, match=message):
        loader.check_worker_number_rationality()  # and again by iter(loader), before it starts the workers
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DataLoader(Samples(lambda i: i), num_workers=cpus).check_worker_number_rationality()


@pytest.mark.claim("debug.dataloader.pin-memory-no-accelerator")
@pytest.mark.skipif(torch.accelerator.is_available(), reason="the warning is for a machine without an accelerator")
def test_pin_memory_without_accelerator():
    with pytest.warns(UserWarning, match=lit("'pin_memory' argument is set as true but no accelerator is found, then "
                                             "device pinned memory won't be used.")):
        batch = next(iter(DataLoader(TensorDataset(torch.zeros(2)), pin_memory=True)))
    assert not batch[0].is_pinned()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        next(iter(DataLoader(TensorDataset(torch.zeros(2)), pin_memory=False)))


# ---------------------------------------------------------------- samplers, splits and dataset wrappers

@pytest.mark.claim("debug.dataloader.sampler-num-samples")
def test_sampler_num_samples():
    message = r"^num_samples should be a positive integer value, but got num_samples=0$"
    with pytest.raises(ValueError, match=message):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(ValueError, match=message):
        WeightedRandomSampler([1.0, 1.0], num_samples=0)
    assert len(list(RandomSampler(range(3), num_samples=5, replacement=True))) == 5


@pytest.mark.claim("debug.dataloader.sampler-replacement-bool")
def test_sampler_replacement_bool():
    with pytest.raises(TypeError, match=r"^replacement should be a boolean value, but got replacement=0$"):
        RandomSampler(range(3), replacement=0)
    assert sorted(RandomSampler(range(3), replacement=False)) == [0, 1, 2]


@pytest.mark.claim("debug.dataloader.weighted-sampler-shape")
def test_weighted_sampler_2d_weights():
    with pytest.raises(ValueError, match=lit("weights should be a 1d sequence but given weights have shape (1, 2)")):
        WeightedRandomSampler([[1.0, 1.0]], num_samples=1)
    assert len(list(WeightedRandomSampler([1.0, 1.0], num_samples=4))) == 4


@pytest.mark.claim("debug.dataloader.batch-sampler-args")
def test_batch_sampler_arguments():
    with pytest.raises(ValueError, match=r"^batch_size should be a positive integer value, but got batch_size=0$"):
        BatchSampler(SequentialSampler(range(3)), batch_size=0, drop_last=False)
    with pytest.raises(ValueError, match=r"^drop_last should be a boolean value, but got drop_last=1$"):
        BatchSampler(SequentialSampler(range(3)), batch_size=2, drop_last=1)
    assert list(BatchSampler(SequentialSampler(range(3)), batch_size=2, drop_last=True)) == [[0, 1]]


@pytest.mark.claim("debug.dataloader.random-split-lengths")
def test_random_split_lengths():
    with pytest.raises(ValueError, match=r"^Sum of input lengths does not equal the length of the input dataset!$"):
        random_split(range(5), [2, 2])
    assert [len(s) for s in random_split(range(5), [2, 3])] == [2, 3]
    assert [len(s) for s in random_split(range(5), [0.4, 0.6])] == [2, 3]


@pytest.mark.claim("debug.dataloader.random-split-empty")
def test_random_split_empty_fraction():
    with pytest.warns(UserWarning, match=r"^Length of split at index 1 is 0\. This might result in an empty dataset\.$"):
        parts = random_split(range(2), [0.9, 0.1])
    assert [len(p) for p in parts] == [2, 0]
    assert [len(p) for p in random_split(range(2), [0.5, 0.5])] == [1, 1]


@pytest.mark.claim("debug.dataloader.concat-dataset")
def test_concat_dataset_checks():
    with pytest.raises(AssertionError, match=r"^datasets should not be an empty iterable$"):
        ConcatDataset([])
    with pytest.raises(AssertionError, match=r"^ConcatDataset does not support IterableDataset$"):
        ConcatDataset([Stream()])
    assert len(ConcatDataset([range(2), range(3)])) == 5


def tensor_dataset_checks_sizes():
    with pytest.raises(AssertionError, match=r"^Size mismatch between tensors$"):
        TensorDataset(torch.zeros(2), torch.zeros(3))
    assert len(TensorDataset(torch.zeros(3), torch.zeros(3, 4))) == 3


@pytest.mark.claim("debug.dataloader.tensor-dataset-sizes-checked")
@pytest.mark.torch_version("<2.10")
def test_tensor_dataset_sizes_until_2_9():
    tensor_dataset_checks_sizes()


@pytest.mark.claim("debug.dataloader.tensor-dataset-sizes-unchecked")
@pytest.mark.torch_version("==2.10.*")
def test_tensor_dataset_sizes_unchecked_in_2_10():
    dataset = TensorDataset(torch.zeros(2), torch.zeros(3))  # no error
    assert len(dataset) == 2
    assert dataset[1] == (torch.tensor(0.0), torch.tensor(0.0))
    with pytest.raises(IndexError, match=r"^index 2 is out of bounds for dimension 0 with size 2$"):
        dataset[2]
    assert len(TensorDataset(torch.zeros(3), torch.zeros(2), torch.zeros(2))) == 3  # nor with three tensors
    assert len(TensorDataset(torch.zeros(3), torch.zeros(3, 4))) == 3


@pytest.mark.claim("debug.dataloader.tensor-dataset-sizes")
@pytest.mark.torch_version(">=2.11")
def test_tensor_dataset_sizes():
    tensor_dataset_checks_sizes()


@pytest.mark.claim("debug.dataloader.dataset-getitem")
def test_dataset_without_getitem():
    class NoItems(Dataset):
        pass

    with pytest.raises(NotImplementedError, match=r"^Subclasses of Dataset should implement __getitem__\.$"):
        NoItems()[0]
    assert Samples(lambda i: i * 10)[1] == 10
