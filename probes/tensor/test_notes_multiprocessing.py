"""Probes for docs/tensor/multiprocessing.md (and the checked note on multiprocessing).

The probes that need other processes run their experiment as a separate program
(`_notes_mp_launch.run_mp_script`), which starts its children with an explicit start method,
joins them with a timeout and terminates them on failure; the whole program's process group
is killed when it ends. Tensors are a few elements each.
"""
import multiprocessing
import os
import pickle
import re
import threading
from multiprocessing.reduction import ForkingPickler

import pytest
import torch
import torch.multiprocessing as tmp
from _notes_mp_launch import run_mp_script


def lit(text):
    return re.escape(text)


# ----------------------------------------------------------------------------- the module


@pytest.mark.claim("tensor.mp.drop-in")
def test_torch_multiprocessing_reexports_multiprocessing():
    for name in multiprocessing.__all__:
        assert getattr(tmp, name) is getattr(multiprocessing, name), name
    for name in ("Process", "Queue", "SimpleQueue", "get_context", "set_start_method"):
        assert name in multiprocessing.__all__
    assert set(tmp.__all__) - set(multiprocessing.__all__) == {"set_sharing_strategy", "get_sharing_strategy",
                                                                "get_all_sharing_strategies"}
    assert callable(tmp.spawn)


@pytest.mark.claim("tensor.mp.sharing-strategies")
def test_sharing_strategies_on_linux():
    assert tmp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    assert tmp.get_sharing_strategy() == "file_descriptor"
    try:
        tmp.set_sharing_strategy("file_system")
        assert tmp.get_sharing_strategy() == "file_system"
    finally:
        tmp.set_sharing_strategy("file_descriptor")
    assert tmp.get_sharing_strategy() == "file_descriptor"


# ----------------------------------------------------------------------------- pickling moves storage


@pytest.mark.claim("tensor.mp.pickle-moves-storage")
def test_pickling_moves_storage_once():
    t = torch.arange(4.0)
    assert not t.is_shared()
    before = t.data_ptr()
    ForkingPickler.dumps(t)
    assert t.is_shared()
    assert t.data_ptr() != before  # the bytes were copied into new, shared memory
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    shared_at = t.data_ptr()
    ForkingPickler.dumps(t)  # already shared: nothing moves
    assert t.data_ptr() == shared_at
    u = torch.zeros(3).share_memory_()
    at = u.data_ptr()
    ForkingPickler.dumps(u)
    assert u.is_shared() and u.data_ptr() == at


@pytest.mark.claim("tensor.mp.view-moves-whole-storage")
def test_pickling_a_view_moves_the_base_storage():
    base = torch.zeros(8)
    view = base[2:4]
    ForkingPickler.dumps(view)
    assert view.is_shared() and base.is_shared()
    assert view.data_ptr() == base.data_ptr() + 2 * 4
    assert base.untyped_storage().nbytes() == 32
    view.fill_(1.0)
    assert base.tolist() == [0, 0, 1, 1, 0, 0, 0, 0]


@pytest.mark.claim("tensor.mp.non-leaf-refused")
def test_non_leaf_requiring_grad_is_not_serialized():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match=lit("Cowardly refusing to serialize non-leaf tensor which requires_grad")):
        ForkingPickler.dumps(y)
    r = pickle.loads(ForkingPickler.dumps(y.detach()))
    assert r.tolist() == [2.0, 2.0, 2.0] and not r.requires_grad


@pytest.mark.claim("tensor.mp.grad-not-sent")
def test_reducer_sends_storage_and_metadata_only():
    from torch.multiprocessing import reductions
    a = torch.zeros(2, 3, requires_grad=True)
    a.grad = torch.ones(2, 3)
    fn, args = reductions.reduce_tensor(a)
    assert fn is reductions.rebuild_tensor
    cls, storage, metadata = args
    assert cls is torch.Tensor
    assert isinstance(storage, torch.TypedStorage)
    assert metadata == (0, torch.Size([2, 3]), (3, 1), True)


@pytest.mark.claim("tensor.mp.module-share-memory")
def test_module_share_memory_covers_params_buffers_grads():
    m = torch.nn.Linear(2, 2)
    m.register_buffer("running", torch.zeros(2))
    m(torch.ones(1, 2)).sum().backward()
    assert not any(p.is_shared() for p in m.parameters())
    assert m.share_memory() is m
    assert all(p.is_shared() for p in m.parameters())
    assert m.running.is_shared()
    assert all(p.grad.is_shared() for p in m.parameters())


@pytest.mark.claim("tensor.mp.queue-feeder-thread")
def test_queue_put_starts_a_feeder_thread_simplequeue_does_not():
    ctx = tmp.get_context("spawn")
    s = ctx.SimpleQueue()
    before = set(threading.enumerate())
    s.put(1)
    assert set(threading.enumerate()) == before
    assert s.get() == 1
    s.close()
    q = ctx.Queue()
    try:
        before = set(threading.enumerate())
        q.put(1)
        new = set(threading.enumerate()) - before
        assert [t.name for t in new] == ["QueueFeederThread"]
    finally:
        q.close()
        q.join_thread()


# ----------------------------------------------------------------------------- across processes


QUEUE_SHARES = '''
import torch, torch.multiprocessing as mp

def child(q, out):
    r = q.get()
    out.put(r.is_shared())
    r.fill_(7.0)
    out.put("written")

if __name__ == "__main__":
    result = {}
    for method in ("spawn", "fork"):
        ctx = mp.get_context(method)
        q, out = ctx.SimpleQueue(), ctx.SimpleQueue()
        t = torch.zeros(3)
        before = t.is_shared()
        p = ctx.Process(target=child, args=(q, out))
        p.start()
        q.put(t)
        after = t.is_shared()
        received_shared = out.get()
        assert out.get() == "written"
        finish(p)
        result[method] = dict(before=before, after=after, received_shared=received_shared, values=t.tolist())
    report(result)
'''


@pytest.mark.timeout(200)
@pytest.mark.claim("tensor.mp.queue-shares-storage")
def test_queue_sent_tensor_is_shared_both_ways(tmp_path):
    result = run_mp_script(tmp_path, QUEUE_SHARES, timeout=170)
    for method in ("spawn", "fork"):
        r = result[method]
        assert r["before"] is False and r["after"] is True, method
        assert r["received_shared"] is True, method
        assert r["values"] == [7.0, 7.0, 7.0], method


GRADS = '''
import torch, torch.multiprocessing as mp

def child(q, out):
    with_grad, without_grad = q.get()
    info = dict(with_grad_arrives=None if with_grad.grad is None else with_grad.grad.tolist(),
                without_grad_arrives=None if without_grad.grad is None else without_grad.grad.tolist(),
                requires_grad=[with_grad.requires_grad, without_grad.requires_grad])
    (with_grad * 2).sum().backward()
    (without_grad * 3).sum().backward()
    info["child_grads"] = [with_grad.grad.tolist(), without_grad.grad.tolist()]
    out.put(info)

if __name__ == "__main__":
    ctx = mp.get_context("fork")
    q, out = ctx.SimpleQueue(), ctx.SimpleQueue()
    a = torch.zeros(2, requires_grad=True)
    a.grad = torch.full((2,), 5.0)
    b = torch.zeros(2, requires_grad=True)
    p = ctx.Process(target=child, args=(q, out))
    p.start()
    q.put((a, b))
    info = out.get()
    finish(p)
    info["parent_after"] = [a.grad.tolist(), b.grad]
    report(info)
'''


@pytest.mark.timeout(200)
@pytest.mark.claim("tensor.mp.grad-not-sent")
@pytest.mark.claim("tensor.mp.receiver-grad-is-local")
def test_grads_stay_in_their_process(tmp_path):
    info = run_mp_script(tmp_path, GRADS, timeout=170)
    assert info["requires_grad"] == [True, True]
    assert info["with_grad_arrives"] is None  # the sender's .grad did not travel
    assert info["without_grad_arrives"] is None
    assert info["child_grads"] == [[2.0, 2.0], [3.0, 3.0]]
    assert info["parent_after"] == [[5.0, 5.0], None]  # the child's gradients stayed in the child


ROUND_TRIP = '''
import torch, torch.multiprocessing as mp

def child(q_in, q_out):
    r = q_in.get()
    q_out.put(r)
    q_in.get()  # stay alive until the parent has taken the tensor back

if __name__ == "__main__":
    ctx = mp.get_context("fork")
    a, b = ctx.SimpleQueue(), ctx.SimpleQueue()
    t = torch.arange(4.0).share_memory_()
    p = ctx.Process(target=child, args=(a, b))
    p.start()
    a.put(t)
    back = b.get()
    a.put(None)
    finish(p)
    back[0] = 9.0
    report(dict(same_ptr=back.data_ptr() == t.data_ptr(), is_same_object=back is t, t=t.tolist()))
'''


@pytest.mark.timeout(200)
@pytest.mark.claim("tensor.mp.round-trip-same-memory")
def test_buffer_sent_back_lands_on_the_original_memory(tmp_path):
    info = run_mp_script(tmp_path, ROUND_TRIP, timeout=170)
    assert info["same_ptr"] is True
    assert info["is_same_object"] is False
    assert info["t"] == [9.0, 1.0, 2.0, 3.0]


HOGWILD = '''
import torch, torch.multiprocessing as mp

def train(model, out):
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    model(torch.ones(1, 2)).sum().backward()
    opt.step()
    out.put(model.weight.detach().clone().tolist())

def run(method, share):
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 1)
    if share:
        model.share_memory()
    start = model.weight.detach().clone().tolist()
    ctx = mp.get_context(method)
    out = ctx.SimpleQueue()
    p = ctx.Process(target=train, args=(model, out))
    p.start()
    child_w = out.get()
    finish(p)
    return dict(start=start, child=child_w, parent=model.weight.detach().tolist(),
                shared=model.weight.is_shared())

if __name__ == "__main__":
    report(dict(fork_plain=run("fork", False), fork_shared=run("fork", True), spawn_plain=run("spawn", False)))
'''


@pytest.mark.timeout(200)
@pytest.mark.claim("tensor.mp.fork-needs-share-memory")
@pytest.mark.claim("tensor.mp.spawn-args-are-pickled")
def test_child_updates_reach_parent_only_through_shared_memory(tmp_path):
    r = run_mp_script(tmp_path, HOGWILD, timeout=170)
    for case in r.values():
        assert case["child"] != case["start"]  # the child's step changed its weights
        assert case["child"] == (torch.tensor(case["start"]) - 0.5).tolist()  # one SGD step, grad 1
    fork_plain, fork_shared, spawn_plain = r["fork_plain"], r["fork_shared"], r["spawn_plain"]
    # fork, no share_memory(): the child wrote to its own copy-on-write pages
    assert fork_plain["shared"] is False and fork_plain["parent"] == fork_plain["start"]
    # fork after model.share_memory(): the child's step is the parent's step
    assert fork_shared["shared"] is True and fork_shared["parent"] == fork_shared["child"]
    # spawn: the Process arguments are pickled, which moved the parameters to shared memory
    assert spawn_plain["shared"] is True and spawn_plain["parent"] == spawn_plain["child"]


START_METHOD = '''
import os, sys
with open("marker.txt", "a") as _f:  # an unguarded top-level statement
    _f.write(__name__ + "\\n")
import torch.multiprocessing as mp

def child(out):
    out.put((sys.modules["__main__"].__name__, mp.get_start_method()))

def run(ctx):
    out = ctx.SimpleQueue()
    p = ctx.Process(target=child, args=(out,))
    p.start()
    got = out.get()
    finish(p)
    return list(got)

if __name__ == "__main__":
    res = {}
    mp.set_start_method("spawn")
    res["set_start_method"] = mp.get_start_method()
    res["default_ctx_child"] = run(mp)
    fork = mp.get_context("fork")
    res["get_context"] = fork.get_start_method()
    res["fork_child"] = run(fork)
    res["global_default_after"] = mp.get_start_method()
    with open("marker.txt") as f:
        res["marker"] = f.read().split()
    report(res)
'''


@pytest.mark.timeout(200)
@pytest.mark.claim("tensor.mp.start-method-selection")
@pytest.mark.claim("tensor.mp.spawn-reruns-main-module")
def test_start_methods_and_unguarded_top_level_code(tmp_path):
    r = run_mp_script(tmp_path, START_METHOD, timeout=170)
    assert r["set_start_method"] == "spawn"
    assert r["default_ctx_child"] == ["__mp_main__", "spawn"]
    assert r["get_context"] == "fork"
    assert r["fork_child"] == ["__main__", "fork"]
    assert r["global_default_after"] == "spawn"
    # the top-level statement ran in the parent and again in the spawned child, not in the forked one
    assert r["marker"] == ["__main__", "__mp_main__"]


FD_THREAD = '''
import threading
import torch, torch.multiprocessing as mp

if __name__ == "__main__":
    assert mp.get_sharing_strategy() == "file_descriptor"
    ctx = mp.get_context("spawn")
    s = ctx.SimpleQueue()
    base = set(threading.enumerate())
    s.put(123)
    after_int = set(threading.enumerate()) - base
    s.put(torch.ones(2))
    after_tensor = set(threading.enumerate()) - base
    report(dict(after_int=len(after_int), after_tensor=len(after_tensor),
                daemon=[t.daemon for t in after_tensor]))
'''


@pytest.mark.timeout(200)
@pytest.mark.claim("tensor.mp.fd-strategy-starts-a-thread")
def test_sending_a_tensor_by_fd_starts_a_thread(tmp_path):
    r = run_mp_script(tmp_path, FD_THREAD, timeout=170)
    assert r["after_int"] == 0
    assert r["after_tensor"] == 1
    assert r["daemon"] == [True]


NUM_THREADS = '''
import torch, torch.multiprocessing as mp

def child(out, set_to):
    if set_to:
        torch.set_num_threads(set_to)
    out.put(torch.get_num_threads())

def run(method, set_to=0):
    ctx = mp.get_context(method)
    out = ctx.SimpleQueue()
    p = ctx.Process(target=child, args=(out, set_to))
    p.start()
    n = out.get()
    finish(p)
    return n

if __name__ == "__main__":
    default = torch.get_num_threads()
    torch.set_num_threads(default + 1)
    report(dict(default=default, parent=torch.get_num_threads(), fork=run("fork"), spawn=run("spawn"),
                spawn_set=run("spawn", 1)))
'''


@pytest.mark.timeout(200)
@pytest.mark.claim("tensor.mp.num-threads-per-process")
def test_intra_op_thread_count_is_per_process(tmp_path):
    r = run_mp_script(tmp_path, NUM_THREADS, timeout=170)
    d = r["default"]
    assert d in range(1, os.cpu_count() + 1)
    assert r["parent"] == d + 1
    assert r["fork"] == d + 1  # a forked child keeps the parent's setting
    assert r["spawn"] == d  # a spawned child starts from the default again
    assert r["spawn_set"] == 1


# ----------------------------------------------------------------------------- CUDA


CUDA_FORK = '''
import torch, torch.multiprocessing as mp

def child(out):
    try:
        t = torch.ones(1, device="cuda")
        out.put(["ok", str(t.device)])
    except RuntimeError as e:
        out.put(["error", str(e)])

def run(method):
    ctx = mp.get_context(method)
    out = ctx.SimpleQueue()
    p = ctx.Process(target=child, args=(out,))
    p.start()
    got = out.get()
    finish(p)
    return got

if __name__ == "__main__":
    torch.ones(1, device="cuda")  # CUDA is initialised in the parent
    report(dict(fork=run("fork"), spawn=run("spawn")))
'''


@pytest.mark.devices("cuda")
@pytest.mark.timeout(200)
@pytest.mark.claim("tensor.mp.cuda-poison-fork")
def test_cuda_in_a_forked_child(device, tmp_path):
    r = run_mp_script(tmp_path, CUDA_FORK, timeout=170)
    assert r["fork"][0] == "error"
    assert "Cannot re-initialize CUDA in forked subprocess" in r["fork"][1]
    assert r["spawn"] == ["ok", "cuda:0"]


CUDA_QUEUE = '''
import torch, torch.multiprocessing as mp

def child(q, out):
    r = q.get()
    info = [str(r.device), r.is_shared(), r.tolist()]
    r.fill_(3.0)
    torch.cuda.synchronize()
    del r
    out.put(info)

if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    q, out = ctx.SimpleQueue(), ctx.SimpleQueue()
    t = torch.arange(4.0, device="cuda")
    p = ctx.Process(target=child, args=(q, out))
    p.start()
    q.put(t)
    info = out.get()
    finish(p)
    torch.cuda.synchronize()
    report(dict(child=info, parent=t.tolist()))
'''


@pytest.mark.devices("cuda")
@pytest.mark.timeout(200)
@pytest.mark.claim("tensor.mp.cuda-queue-shares")
def test_cuda_tensor_through_a_spawn_queue(device, tmp_path):
    r = run_mp_script(tmp_path, CUDA_QUEUE, timeout=170)
    assert r["child"] == ["cuda:0", True, [0.0, 1.0, 2.0, 3.0]]
    assert r["parent"] == [3.0, 3.0, 3.0, 3.0]
