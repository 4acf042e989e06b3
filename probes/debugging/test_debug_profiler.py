"""Probes for docs/debugging/profiler.md."""
import json

import pytest
import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile, record_function, schedule


def small_model(device):
    torch.manual_seed(0)
    return torch.nn.Linear(16, 8).to(device), torch.randn(4, 16, device=device)


def named(prof, name):
    return [e for e in prof.events() if e.name == name]


def in_order(*values):
    """Whether the values are non-decreasing, ties kept in the given order (a stable sort that
    leaves every position where it is)."""
    return sorted(range(len(values)), key=values.__getitem__) == list(range(len(values)))


def ancestors(event):
    out = []
    while event.cpu_parent is not None:
        event = event.cpu_parent
        out.append(event.name)
    return out


@pytest.mark.claim("debug.profiler.nesting")
def test_linear_contains_t_and_addmm():
    lin, x = small_model("cpu")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        lin(x)
    (linear,) = named(prof, "aten::linear")
    assert [c.name for c in linear.cpu_children] == ["aten::t", "aten::addmm"]
    (addmm,) = named(prof, "aten::addmm")
    assert addmm.cpu_parent is linear
    assert in_order(linear.time_range.start, addmm.time_range.start, addmm.time_range.end, linear.time_range.end)
    assert all(e.name.startswith("aten::") for e in prof.events())  # nothing but operator calls here


@pytest.mark.claim("debug.profiler.record-function")
def test_record_function_labels_enclose_the_ops():
    lin, x = small_model("cpu")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with record_function("## forward ##"):
            y = lin(x)
        with record_function("## loss ##"):
            y.pow(2).mean()
    (fwd,) = named(prof, "## forward ##")
    (loss,) = named(prof, "## loss ##")
    assert [c.name for c in fwd.cpu_children] == ["aten::linear"]
    assert {c.name for c in loss.cpu_children} == {"aten::pow", "aten::mean"}
    assert "## forward ##" in ancestors(named(prof, "aten::addmm")[0])


@pytest.mark.claim("debug.profiler.record-function-same-object")
def test_record_function_is_one_object():
    assert torch.autograd.profiler.record_function is record_function


@pytest.mark.claim("debug.profiler.backward-nodes")
def test_backward_appears_as_autograd_nodes():
    lin, x = small_model("cpu")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        lin(x).sum().backward()
    (wrapper,) = named(prof, "autograd::engine::evaluate_function: AddmmBackward0")
    (node,) = named(prof, "AddmmBackward0")
    assert node.cpu_parent is wrapper
    assert "aten::mm" in [c.name for c in node.cpu_children]


@pytest.mark.claim("debug.profiler.sequence-nr")
def test_forward_op_and_backward_node_share_a_sequence_number():
    lin, x = small_model("cpu")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        lin(x).sum().backward()
    (node,) = named(prof, "AddmmBackward0")
    (fwd,) = named(prof, "aten::addmm")
    assert fwd.sequence_nr == node.sequence_nr
    assert node.fwd_thread == fwd.thread


@pytest.mark.claim("debug.profiler.sequence-nr")
def test_the_shared_number_is_the_graph_nodes():
    lin, x = small_model("cpu")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        y = lin(x)
        y.sum().backward()
    (node,) = named(prof, "AddmmBackward0")
    assert node.sequence_nr == y.grad_fn._sequence_nr()  # the number of the AddmmBackward0 node itself


@pytest.mark.claim("debug.profiler.accumulate-grad-events")
def test_accumulate_grad_events_per_leaf():
    lin, x = small_model("cpu")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        lin(x).sum().backward()
    assert len(named(prof, "torch::autograd::AccumulateGrad")) == 2  # weight and bias
    assert lin.weight.grad is not None and lin.bias.grad is not None


@pytest.mark.claim("debug.profiler.self-vs-total")
def test_key_averages_self_and_total_time():
    lin, x = small_model("cpu")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(3):
            lin(x)
    averages = {a.key: a for a in prof.key_averages()}
    linear, addmm, t = averages["aten::linear"], averages["aten::addmm"], averages["aten::t"]
    assert linear.count == 3 and addmm.count == 3 and t.count == 3
    # a parent's total includes its children; its self time is what is left
    assert linear.self_cpu_time_total == pytest.approx(linear.cpu_time_total - addmm.cpu_time_total - t.cpu_time_total)


@pytest.mark.claim("debug.profiler.table-header")
def test_table_header():
    lin, x = small_model("cpu")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        lin(x)
    header = prof.key_averages().table(sort_by="self_cpu_time_total").splitlines()[1].split()
    assert header[:2] == ["Name", "Self"]
    assert "total" in header and header[-3:] == ["#", "of", "Calls"]


@pytest.mark.claim("debug.profiler.chrome-trace")
def test_chrome_trace_is_json_with_complete_events(tmp_path):
    lin, x = small_model("cpu")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        lin(x)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    ops = {e["name"]: e for e in data["traceEvents"] if e.get("cat") == "cpu_op"}
    linear, addmm = ops["aten::linear"], ops["aten::addmm"]
    assert linear["ph"] == addmm["ph"] == "X"  # complete events: a start and a duration
    ends = [round(e["ts"] + e["dur"], 3) for e in (addmm, linear)]  # microseconds, to the nanosecond
    assert in_order(round(linear["ts"], 3), round(addmm["ts"], 3), *ends)
    assert linear["tid"] == addmm["tid"]


@pytest.mark.claim("debug.profiler.memory")
def test_profile_memory_attributes_bytes_to_ops():
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        a = torch.empty(1000)  # 4000 bytes
        b = torch.empty(250, dtype=torch.float64)  # 2000 bytes
        del b  # freed outside any operator
    averages = {e.key: e for e in prof.key_averages()}
    assert averages["aten::empty"].self_cpu_memory_usage == 6000
    assert averages["aten::empty"].count == 2
    assert averages["[memory]"].self_cpu_memory_usage == -2000
    assert a.numel() == 1000


@pytest.mark.claim("debug.profiler.record-shapes")
def test_record_shapes_splits_by_input_shape():
    lin = torch.nn.Linear(16, 8)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        lin(torch.randn(4, 16))
        lin(torch.randn(32, 16))
    (first, second) = named(prof, "aten::addmm")
    assert first.input_shapes[:3] == [[8], [4, 16], [16, 8]]
    assert second.input_shapes[:3] == [[8], [32, 16], [16, 8]]


@pytest.mark.claim("debug.profiler.group-by-shape")
def test_group_by_input_shape():
    lin = torch.nn.Linear(16, 8)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        lin(torch.randn(4, 16))
        lin(torch.randn(32, 16))
    grouped = [a for a in prof.key_averages(group_by_input_shape=True) if a.key == "aten::addmm"]
    assert len(grouped) == 2 and all(a.count == 1 for a in grouped)
    assert [a.count for a in prof.key_averages() if a.key == "aten::addmm"] == [2]


@pytest.mark.claim("debug.profiler.schedule")
def test_schedule_records_only_active_steps():
    lin, x = small_model("cpu")
    reports = []

    def ready(p):
        names = [e.name for e in p.events()]
        reports.append((p.step_num, names.count("aten::addmm")))

    sched = schedule(wait=1, warmup=1, active=2, repeat=2)
    with profile(activities=[ProfilerActivity.CPU], schedule=sched, on_trace_ready=ready) as prof:
        for _ in range(10):
            lin(x)
            prof.step()
    assert reports == [(4, 2), (8, 2)]  # two cycles of wait, warmup, 2 active steps; then nothing


@pytest.mark.claim("debug.profiler.legacy")
def test_legacy_autograd_profiler_records_the_same_ops():
    lin, x = small_model("cpu")
    with torch.autograd.profiler.profile() as old:
        lin(x)
    with profile(activities=[ProfilerActivity.CPU]) as new:
        lin(x)
    old_names = {e.name for e in old.function_events}
    new_names = {e.name for e in new.events()}
    assert all(name in old_names for name in ("aten::linear", "aten::t", "aten::addmm"))
    assert old_names == new_names
    assert type(old.key_averages()) is type(new.key_averages())
    assert torch.profiler.profile is not torch.autograd.profiler.profile


@pytest.mark.claim("debug.profiler.activities")
def test_cpu_activity_is_always_supported():
    assert ProfilerActivity.CPU in torch.profiler.supported_activities()


@pytest.mark.claim("debug.profiler.activities")
@pytest.mark.devices("cuda")
def test_cuda_activity_is_supported_with_a_gpu(device):
    assert ProfilerActivity.CUDA in torch.profiler.supported_activities()


@pytest.mark.claim("debug.profiler.cuda-kernels")
@pytest.mark.devices("cuda")
def test_cuda_activity_records_launches_and_kernels(device):
    a = torch.randn(1024, 1024, device=device)
    (a * 2).sum()
    torch.cuda.synchronize()  # warm up
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        a * 2
        torch.cuda.synchronize()
    events = prof.events()
    assert named(prof, "aten::mul")
    assert any(e.name.startswith("cudaLaunchKernel") and e.device_type == DeviceType.CPU for e in events)
    kernels = [e for e in events if e.device_type == DeviceType.CUDA]
    assert any("elementwise_kernel" in e.name for e in kernels)
