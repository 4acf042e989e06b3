"""Probes for docs/debugging/random-streams.md and the additions to docs/debugging/determinism.md
(checked against the official note on reproducibility)."""
import random
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F
import torch.utils.deterministic
from torch.utils.data import DataLoader, Dataset, get_worker_info

FRESH_PROCESS = "import torch; torch.manual_seed(0); print(torch.randn(4).tolist())"


# ---------------------------------------------------------------- seeding


@pytest.mark.claim("debug.rng.manual-seed-every-device")
def test_manual_seed_sets_the_default_generator():
    gen = torch.manual_seed(4321)
    assert gen is torch.default_generator
    assert torch.initial_seed() == 4321


@pytest.mark.claim("debug.rng.manual-seed-cuda")
@pytest.mark.devices("cuda")
def test_manual_seed_sets_the_cuda_generator(device):
    torch.manual_seed(4321)
    assert torch.cuda.initial_seed() == 4321
    first = torch.randn(3, device=device)
    torch.manual_seed(4321)
    assert torch.equal(torch.randn(3, device=device), first)


@pytest.mark.claim("debug.rng.internal-draws")
def test_svd_lowrank_draws_from_the_global_generator():
    m = torch.randn(60, 40, generator=torch.Generator().manual_seed(0))
    before = torch.get_rng_state()
    _, s1, _ = torch.svd_lowrank(m, q=5, niter=0)
    assert not torch.equal(torch.get_rng_state(), before)  # it consumed random numbers
    _, s2, _ = torch.svd_lowrank(m, q=5, niter=0)
    assert not torch.equal(s1, s2)  # back to back: different results
    torch.manual_seed(7)
    a = torch.svd_lowrank(m, q=5, niter=0)
    torch.manual_seed(7)
    b = torch.svd_lowrank(m, q=5, niter=0)
    assert all(torch.equal(x, y) for x, y in zip(a, b))


@pytest.mark.claim("debug.rng.fresh-process-repeats")
@pytest.mark.timeout(180)
def test_a_fresh_process_repeats_the_stream():
    runs = [subprocess.run([sys.executable, "-c", FRESH_PROCESS], capture_output=True, text=True,
                           timeout=150, check=True).stdout.strip() for _ in range(2)]
    assert runs[0] == runs[1]
    torch.manual_seed(0)
    assert runs[0] == str(torch.randn(4).tolist())  # and equals this process's draw


@pytest.mark.claim("debug.rng.torch-seed-only")
def test_manual_seed_leaves_python_and_numpy_alone():
    py_state, np_state = random.getstate(), np.random.get_state()
    torch.manual_seed(0)
    assert random.getstate() == py_state
    after = np.random.get_state()
    assert after[0] == np_state[0] and np.array_equal(after[1], np_state[1]) and after[2:] == np_state[2:]
    random.seed(0)
    first = random.random()
    torch.manual_seed(1)
    random.seed(0)
    assert random.random() == first


# ---------------------------------------------------------------- DataLoader workers


class _NotesSeedReport(Dataset):
    """Each item reports what the worker that produced it sees."""

    def __init__(self, carried=None):
        self.carried = carried  # a NumPy Generator object created in the parent process

    def __len__(self):
        return 4

    def __getitem__(self, index):
        info = get_worker_info()
        carried = int(self.carried.integers(2**31)) if self.carried is not None else -1
        return (info.id, info.seed, torch.initial_seed(), random.getrandbits(31),
                int(np.random.randint(2**31)), carried)


def _collect(generator, carried=None):
    loader = DataLoader(_NotesSeedReport(carried), batch_size=None, num_workers=2,
                        generator=generator, multiprocessing_context="fork")
    return [tuple(int(v) for v in item) for item in loader]


@pytest.mark.claim("debug.rng.worker-seeds")
@pytest.mark.timeout(120)
def test_workers_are_seeded_from_the_loader_generator():
    expected_base = torch.empty((), dtype=torch.int64).random_(generator=torch.Generator().manual_seed(0)).item()
    first = _collect(torch.Generator().manual_seed(0))
    workers = set()
    for worker, info_seed, torch_seed, *_ in first:
        assert info_seed == torch_seed == expected_base + worker
        workers.add(worker)
    assert sorted(workers) == [0, 1]


@pytest.mark.claim("debug.rng.worker-libraries-differ")
@pytest.mark.timeout(120)
def test_workers_draw_different_python_and_numpy_numbers():
    by_worker = {}
    for worker, _, _, py_draw, np_draw, _ in _collect(torch.Generator().manual_seed(0)):
        by_worker.setdefault(worker, (py_draw, np_draw))
    assert sorted(by_worker) == [0, 1]
    (py0, np0), (py1, np1) = by_worker[0], by_worker[1]
    assert py0 != py1  # Python's random differs per worker
    assert np0 != np1  # and NumPy's global RNG


@pytest.mark.claim("debug.rng.loader-generator-reproduces")
@pytest.mark.timeout(120)
def test_the_loader_generator_reproduces_every_library():
    first = _collect(torch.Generator().manual_seed(0))
    again = _collect(torch.Generator().manual_seed(0))
    other = _collect(torch.Generator().manual_seed(1))
    assert first == again  # same generator seed: the same numbers, in every library
    assert [item[3:5] for item in first] != [item[3:5] for item in other]  # Python and NumPy draws change
    assert [item[2] for item in first] != [item[2] for item in other]  # and the torch seeds


@pytest.mark.claim("debug.rng.worker-base-from-default")
@pytest.mark.timeout(120)
def test_without_a_generator_the_base_comes_from_the_default_one():
    torch.manual_seed(0)
    expected_base = torch.empty((), dtype=torch.int64).random_().item()
    torch.manual_seed(0)
    items = _collect(None)
    assert sorted({item[0] for item in items}) == [0, 1]
    for worker, info_seed, *_ in items:
        assert info_seed == expected_base + worker


@pytest.mark.claim("debug.rng.worker-carried-generator-repeats")
@pytest.mark.timeout(120)
def test_a_generator_object_copied_into_workers_repeats():
    items = _collect(torch.Generator().manual_seed(0), carried=np.random.default_rng(0))
    first_of_each = {}
    for worker, *_, carried in items:
        first_of_each.setdefault(worker, carried)
    assert sorted(first_of_each) == [0, 1]
    assert first_of_each[0] == first_of_each[1] == int(np.random.default_rng(0).integers(2**31))


# ---------------------------------------------------------------- deterministic mode, docs and CUDA


def _sections_of_docstring():
    doc = torch.use_deterministic_algorithms.__doc__
    start = doc.index("operations will act")
    middle = doc.index("operations will throw", start)
    end = doc.index("In addition, several operations fill", middle)
    return doc[start:middle], doc[middle:end]


@pytest.mark.claim("debug.determinism.docstring-index-add")
def test_docstring_lists_index_add_cuda_as_deterministic():
    acts, throws = _sections_of_docstring()
    assert ":func:`torch.index_add` when called on CUDA tensor" in acts
    assert "index_add" not in throws
    assert ":func:`torch.bmm` when called on sparse-dense CUDA tensors" in acts


@pytest.mark.claim("debug.determinism.cuda-index-add-runs")
@pytest.mark.devices("cuda")
def test_cuda_index_add_runs_under_deterministic_mode(device):
    index = torch.tensor([0, 1, 0], device=device)
    source = torch.arange(6.0, device=device).view(3, 2)
    torch.use_deterministic_algorithms(True)
    try:
        out = torch.zeros(2, 2, device=device).index_add_(0, index, source)
    finally:
        torch.use_deterministic_algorithms(False)
    assert out.tolist() == [[4.0, 6.0], [2.0, 3.0]]


@pytest.mark.claim("debug.determinism.cuda-sparse-bmm")
@pytest.mark.devices("cuda")
def test_cuda_sparse_dense_bmm_runs_under_deterministic_mode(device):
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(2, 3, 3, generator=g), torch.randn(2, 3, 2, generator=g)
    expected = torch.bmm(a, b)
    torch.use_deterministic_algorithms(True)
    try:
        out1 = torch.bmm(a.to_sparse().to(device), b.to(device))
        out2 = torch.bmm(a.to_sparse().to(device), b.to(device))
    finally:
        torch.use_deterministic_algorithms(False)
    assert torch.equal(out1, out2)
    assert torch.allclose(out1.cpu(), expected, atol=1e-5)


@pytest.mark.claim("debug.determinism.cudnn-flag-scope")
def test_cudnn_flags_do_not_switch_deterministic_mode():
    cudnn = torch.backends.cudnn
    try:
        cudnn.deterministic = True
        assert torch._C._get_cudnn_deterministic() is True
        assert torch.are_deterministic_algorithms_enabled() is False
        assert cudnn.benchmark is False
        # put_ without accumulation, which deterministic mode refuses, still runs
        assert torch.zeros(3).put_(torch.tensor([1]), torch.tensor([5.0])).tolist() == [0.0, 5.0, 0.0]
    finally:
        cudnn.deterministic = False


@pytest.mark.claim("debug.determinism.cudnn-benchmark-independent")
def test_cudnn_benchmark_leaves_deterministic_off():
    cudnn = torch.backends.cudnn
    try:
        cudnn.benchmark = True
        assert cudnn.deterministic is False
    finally:
        cudnn.benchmark = False


@pytest.mark.claim("debug.determinism.cudnn-flags-default-off")
def test_cudnn_flags_are_off_by_default():
    assert torch.backends.cudnn.deterministic is False
    assert torch.backends.cudnn.benchmark is False


@pytest.mark.claim("debug.determinism.fill-flag-settable")
def test_fill_uninitialized_memory_is_a_context_flag():
    assert torch._C._get_deterministic_fill_uninitialized_memory() is True
    try:
        torch.utils.deterministic.fill_uninitialized_memory = False
        assert torch._C._get_deterministic_fill_uninitialized_memory() is False
        assert torch.utils.deterministic.fill_uninitialized_memory is False
    finally:
        torch.utils.deterministic.fill_uninitialized_memory = True
    assert torch._C._get_deterministic_fill_uninitialized_memory() is True


@pytest.mark.claim("debug.determinism.cuda-cudnn-sdpa-disabled")
@pytest.mark.devices("cuda")
def test_cudnn_attention_is_unavailable_under_deterministic_mode(device):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 128, 64, generator=g).to(device, torch.float16) for _ in range(3))
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        assert F.scaled_dot_product_attention(q, k, v).shape == (1, 2, 128, 64)
        torch.use_deterministic_algorithms(True)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with pytest.raises(RuntimeError, match=r"No available kernel|No viable backend"):
                    F.scaled_dot_product_attention(q, k, v)
        finally:
            torch.use_deterministic_algorithms(False)
