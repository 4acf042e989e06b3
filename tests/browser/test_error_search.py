"""Pasting a real message, with other shapes and numbers than the probes', into the site search
(search.html?q=…) finds its index entry or the page that explains it in the first three
results; the box on the error index page finds it too. Run by `make browser-test`."""
import json
import sys
from pathlib import Path

import layout
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from verified.probing import messages  # noqa: E402 - the entries' anchors, as the build makes them

# (what a reader pastes, the claim whose entry or page must come in the first three). The
# numbers, shapes, names and paths are not the probes' own.
PASTED = [
    ("RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 256x10)", "debug.error.mm-shapes"),
    ("IndexError: index 17 is out of bounds for dimension 1 with size 16", "debug.error.index-out-of-bounds"),
    ("IndexError: Dimension out of range (expected to be in range of [-2, 1], but got 2)", "debug.error.check-macros"),
    ("IndexError: Target 10 is out of bounds.", "debug.error.loss-target-out-of-bounds"),
    ("RuntimeError: The size of tensor a (128) must match the size of tensor b (64) at non-singleton dimension 3",
     "dispatch.call.tensoriterator-broadcast-error"),
    ("RuntimeError: Given groups=1, weight of size [64, 3, 7, 7], expected input[16, 1, 224, 224] to have 3 channels, "
     "but got 1 channels instead", "debug.error.conv-channels"),
    ("RuntimeError: Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [32, 1, 3, 28, 28]",
     "debug.error.conv-input-dim"),
    ("RuntimeError: shape '[-1, 784]' is invalid for input of size 1000", "debug.error.check-macros"),
    ("RuntimeError: Sizes of tensors must match except in dimension 1. Expected size 32 but got size 16 for tensor "
     "number 1 in the list.", "debug.error.cat-sizes"),
    ("RuntimeError: stack expects each tensor to be equal size, but got [3, 224, 224] at entry 0 and [3, 256, 256] at "
     "entry 5", "debug.error.stack-sizes"),
    ('RuntimeError: Error(s) in loading state_dict for ResNet:\n\tMissing key(s) in state_dict: "fc.bias". \n\t'
     'Unexpected key(s) in state_dict: "classifier.weight".', "module.state-dict.strict-errors"),
    ("RuntimeError: Error(s) in loading state_dict for Net:\n\tsize mismatch for fc.weight: copying a param with shape "
     "torch.Size([10, 512]) from checkpoint, the shape in current model is torch.Size([100, 512]).",
     "module.state-dict.shape-mismatch"),
    ("RuntimeError: mat1 and mat2 must have the same dtype, but got Float and Half", "debug.error.addmm-dtype"),
    ("RuntimeError: Given normalized_shape=[768], expected input with shape [*, 768], but got input of "
     "size[8, 128, 512]", "debug.error.layer-norm-shape"),
    ("RuntimeError: running_mean should contain 64 elements not 128", "debug.error.batchnorm-features"),
    ("ValueError: Expected input batch_size (32) to match target batch_size (64).", "debug.error.check-macros"),
    ("ValueError: Expected more than 1 value per channel when training, got input size torch.Size([1, 256])",
     "module.train-eval.batchnorm-batch-one"),
    ("RuntimeError: The expanded size of the tensor (10) must match the existing size (5) at non-singleton dimension 1."
     "  Target sizes: [2, 10].  Tensor sizes: [2, 5]", "debug.error.expand-size"),
    ("torch.distributed.DistStoreError: wait timeout after 30000ms, keys: /my-key", "distributed.store.get-timeout"),
    ("ValueError: Invalid learning rate: -0.01", "optim.group.invalid-hyperparameters"),
    ("RuntimeError: Function 'LogBackward0' returned nan values in its 0th output.", "autograd.anomaly.builtin-nan"),
    ("RuntimeError: function MyFnBackward returned an incorrect number of gradients (expected 3, got 2)",
     "autograd.function.gradient-count"),
    ("RuntimeError: Given input size: (512x1x1). Calculated output size: (512x0x0). Output size is too small",
     "debug.error.pool-output-too-small"),
    ("RuntimeError: Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size can't be "
     "greater than actual input size", "debug.error.conv-kernel-too-large"),
    ("ValueError: expected 4D input (got 3D input)", "debug.error.batchnorm-input-dim"),
    ("RuntimeError: Tensors must have same number of dimensions: got 4 and 3", "debug.error.cat-ndim"),
    ("RuntimeError: inconsistent tensor size, expected tensor [5] and src [7] to have the same number of elements, "
     "but got 5 and 7 elements respectively", "debug.error.dot-sizes"),
    ("ValueError: Target size (torch.Size([16, 1])) must be the same as input size (torch.Size([16]))",
     "debug.error.bce-target-size"),
    ("RuntimeError: Parent directory /home/me/checkpoints/run42 does not exist.",
     "debug.error.save-missing-directory"),
    ("IndexError: too many indices for tensor of dimension 2", "debug.error.too-many-indices"),
    ("RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn",
     "autograd.function.ctx-attr-double-backward"),
    ("TracerWarning: Converting a tensor to a Python boolean might cause the trace to be incorrect. We can't record "
     "the data flow of Python values, so this value will be treated as a constant in the future.",
     "compile.torchscript.trace-freezes-branch"),
    ("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error "
     "indicates that your module has parameters that were not used in producing loss. Parameter indices which did not "
     "receive grad for rank 3: 14 15 16", "distributed.ddp.unused-parameter-next-forward-error"),
    ("ValueError: DistributedDataParallel device_ids and output_device arguments only work with "
     "single-device/multiple-device GPU modules or CPU modules, but got device_ids [2], output_device None, and "
     "module parameters {device(type='cpu')}.", "distributed.ddp.cpu-rejects-device-ids"),
    ("RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the following "
     "reasons: 1) Use of a module parameter outside the `forward` function. Please make sure model parameters are not "
     "shared across multiple concurrent forward-backward passes.\nParameter at index 385 with name "
     "vision_model.encoder.layers.23.mlp.fc2.weight has been marked as ready twice.",
     "distributed.glooerr.ddp-ready-twice"),
    ('RuntimeError: Expected a default value of type Tensor (inferred) on parameter "scale".Because "scale" was not '
     "annotated with an explicit type it is assumed to be type 'Tensor'.", "compile.tserr.default-unannotated"),
    ("RuntimeError: DataLoader worker (pid 18231) is killed by signal: Killed.", "debug.dataloader.worker-exited"),
]


@pytest.fixture(scope="module")
def targets():
    """{claim id: (its page, the anchors of its index entries)}."""
    report = json.loads((layout.SITE / "verification.json").read_text())
    pages = {c["id"]: c["page"] for c in report["claims"]}
    anchors = {}
    for entry in report["errors"]:
        for claim_id in entry["claims"]:
            anchors.setdefault(claim_id, set()).add(messages.anchor(entry))
    return {claim_id: (page, anchors.get(claim_id, set())) for claim_id, page in pages.items()}


@pytest.fixture(scope="module")
def tab(browser):
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    yield context.new_page()
    context.close()


def search_hits(tab, server, query):
    return [href for href, _ in layout.search_results(tab, server, query)]


def rank_of(hits, page, anchors):
    """The 1-based rank of the first hit that is the claim's page or one of its entries, or None."""
    for rank, href in enumerate(hits, 1):
        path, _, anchor = href.partition("#")
        doc = path.split("?")[0].removesuffix(".html")
        if doc == page or (doc == "reference/errors" and anchor in anchors):
            return rank
    return None


@pytest.mark.parametrize("query, claim_id", PASTED, ids=[f"{i:02d}-{c}" for i, (_, c) in enumerate(PASTED)])
def test_a_pasted_message_finds_its_entry_or_page_in_the_first_three(server, tab, targets, query, claim_id):
    page, anchors = targets[claim_id]
    assert anchors, f"{claim_id} has no entry in the error index"
    hits = search_hits(tab, server, query)
    rank = rank_of(hits, page, anchors)
    print(f"rank {rank}: {query[:90]!r} -> {claim_id}")
    assert rank is not None and rank <= 3, (query, hits[:6])


# Messages no entry quotes (a CPU build never raises them), with words Sphinx's index lacks: Sphinx
# finds no page with every word, and the pages sharing the message's rarer words come instead.
UNINDEXED = [
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
     "23.65 GiB of which 1.12 GiB is free. Including non-PyTorch memory, this process has 22.51 GiB memory in use.",
     "memory/cuda-allocator"),
    # shorter: entries about other allocations match it weakly, and the named section comes first
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of 15.7 GiB",
     "debugging/symptoms"),
]


@pytest.mark.parametrize("query, page", UNINDEXED, ids=[f"{i}-{page}" for i, (_, page) in enumerate(UNINDEXED)])
def test_a_message_without_an_entry_still_finds_the_page_about_it(server, tab, query, page):
    hits = search_hits(tab, server, query)
    rank = rank_of(hits, page, set())
    print(f"rank {rank}: {query[:90]!r} -> {page}")
    assert rank is not None and rank <= 3, (query, hits[:6])


def test_the_box_on_the_error_index_finds_a_message(server, tab, targets):
    query, claim_id = PASTED[0]
    tab.goto(server + "reference/errors.html")
    tab.fill("#verified-error-query", query)
    tab.wait_for_selector("#verified-error-matches li a", timeout=10000)
    first = tab.eval_on_selector("#verified-error-matches li a", "a => a.getAttribute('href')")
    assert first.split("#", 1)[1] in targets[claim_id][1], first


def test_a_one_letter_word_is_not_highlighted(server, tab):
    hits = search_hits(tab, server, "tensor's stride")
    assert hits
    marked = tab.eval_on_selector_all("#search-results .highlighted", "els => els.map(e => e.textContent)")
    assert all(len(text) > 1 for text in marked), marked


def test_list_pages_are_not_search_results(server, tab):
    hits = search_hits(tab, server, "view size is not compatible with input tensor's size and stride")
    docs = [h.split("#")[0].split("?")[0].removesuffix(".html") for h in hits]
    assert not {"reference/claims", "reference/matrix", "reference/changes"} & set(docs), docs[:10]
