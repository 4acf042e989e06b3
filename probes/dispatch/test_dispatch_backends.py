"""Probes for docs/dispatch/backends.md: PrivateUse1, renaming it, and a toy device.

Renaming the PrivateUse1 backend, registering a device module and loading the C++
extension are process-wide and cannot be undone. The build runs each probe in its own
forked child, so each starts afresh; in a plain `pytest` run the probes share a process
and run in file order, which is why the probes that expect a bare device come first."""
import json
import subprocess
import sys
import types

import pytest
import torch
from torch.profiler import profile

DK = torch._C.DispatchKey
KS = torch._C.DispatchKeySet


def make_device(name):
    """The Python half of a device: the name, and a `torch.<name>` module. (Idempotent, so
    that a plain, unforked `pytest` run, where the probes share one process, works too.)"""
    torch.utils.rename_privateuse1_backend(name)
    if not hasattr(torch, name):
        module = types.ModuleType(name)
        module.is_available = lambda: True
        module.device_count = lambda: 1
        # tools that save and restore every device's random state (opcheck, checkpoint) ask for these
        module.get_rng_state = lambda device="toy": torch.empty(0, dtype=torch.uint8)
        module.set_rng_state = lambda state, device="toy": None
        module.manual_seed_all = lambda seed: None
        module._is_in_bad_fork = lambda: False
        torch._register_device_module(name, module)


@pytest.mark.claim("dispatch.backend.privateuse1-keys")
def test_privateuse1_is_a_backend_like_the_others():
    for functionality in ("", "Autograd", "Sparse", "Quantized", "SparseCsr", "NestedTensor"):
        for n in ("1", "2", "3"):
            assert hasattr(DK, f"{functionality}PrivateUse{n}"), (functionality, n)


FRESH_REGISTRATIONS = """
import json, torch
print(json.dumps({k: torch._C._dispatch_get_registrations_for_dispatch_key(k)
                  for k in ("PrivateUse1", "PrivateUse2", "PrivateUse3")}))
"""


@pytest.mark.claim("dispatch.backend.privateuse1-unused")
def test_torch_registers_no_aten_kernel_for_private_use():
    # a fresh process, as the claim says: modules imported later (torch.distributed.fsdp) add their own
    found = json.loads(subprocess.run([sys.executable, "-c", FRESH_REGISTRATIONS], capture_output=True, text=True,
                                      check=True, timeout=120).stdout)
    assert found["PrivateUse1"]  # some, but ...
    assert [op for op in found["PrivateUse1"] if not op.startswith("c10d::")] == []  # ... only distributed ones
    assert (found["PrivateUse2"], found["PrivateUse3"]) == ([], [])


@pytest.mark.claim("dispatch.backend.autocast-privateuse1")
def test_autocast_privateuse1_has_no_fallback_yet():
    assert hasattr(DK, "AutocastPrivateUse1")
    assert not torch._C._dispatch_has_backend_fallback(DK.AutocastPrivateUse1)
    assert torch._C._dispatch_has_backend_fallback(DK.AutocastCPU)


@pytest.mark.claim("dispatch.backend.default-name")
def test_default_name_is_privateuseone():
    assert torch._C._get_privateuse1_backend_name() == "privateuseone"
    assert torch.device("privateuseone").type == "privateuseone"


@pytest.mark.claim("dispatch.backend.rename")
def test_rename_is_once_per_process():
    torch.utils.rename_privateuse1_backend("toy")
    assert torch._C._get_privateuse1_backend_name() == "toy"
    assert torch.device("toy:1").type == "toy" and torch.device("toy:1").index == 1
    assert torch.device("privateuseone").type == "toy"  # one device type, two spellings


@pytest.mark.claim("dispatch.backend.rename-once")
def test_rename_to_another_name_fails():
    torch.utils.rename_privateuse1_backend("toy")
    torch.utils.rename_privateuse1_backend("toy")  # the same name again is accepted
    with pytest.raises(RuntimeError, match="torch.register_privateuse1_backend\\(\\) has already been set! "
                                           "Current backend: toy"):
        torch.utils.rename_privateuse1_backend("other")


@pytest.mark.claim("dispatch.backend.device-module")
def test_a_device_needs_a_python_module():
    torch.utils.rename_privateuse1_backend("toy")
    with pytest.raises(ModuleNotFoundError, match="No module named 'torch.toy'"):
        torch.empty(2, device="toy")


@pytest.mark.claim("dispatch.backend.generated-methods")
def test_generated_methods():
    make_device("toy")
    assert not hasattr(torch.Tensor, "is_toy")
    torch.utils.generate_methods_for_privateuse1_backend()
    assert torch.ones(2).is_toy is False
    assert callable(torch.Tensor.toy) and callable(torch.nn.Module.toy)


@pytest.mark.claim("dispatch.backend.module-reaches-dispatcher")
def test_with_a_module_the_dispatcher_is_reached():
    make_device("toy")
    with pytest.raises(NotImplementedError,
                       match="Could not run 'aten::empty.memory_format' with arguments from the 'toy' backend"):
        torch.empty(2, device="toy")  # now the dispatcher is reached, and has no kernel


@pytest.mark.claim("dispatch.backend.python-fallback")
def test_python_fallback_receives_what_the_backend_lacks():
    make_device("toy")
    seen = []

    def fallback(op, *args, **kwargs):
        seen.append((op, args, kwargs))
        raise RuntimeError("toy fallback reached")

    lib = torch.library.Library("_", "IMPL")
    lib.fallback(fallback, "PrivateUse1")
    for make in (lambda: torch.empty(2, 3, device="toy"), lambda: torch.zeros(4, device="toy"),
                 lambda: torch.full((2,), 7.0, device="toy")):
        with pytest.raises(RuntimeError, match="toy fallback reached"):
            make()
    assert [op for op, _, _ in seen] == [torch.ops.aten.empty.memory_format] * 3
    assert [args for _, args, _ in seen] == [([2, 3],), ([4],), ([2],)]
    assert all(kwargs["device"] == torch.device("toy") for _, _, kwargs in seen)


@pytest.mark.timeout(600)
@pytest.mark.claim("dispatch.backend.toy-device")
def test_cpp_toy_device(cpp_extension, dispatcher):
    make_device("toy")
    a = torch.arange(6.0).reshape(2, 3).to("toy")
    assert str(a.device) == "toy:0"
    assert str(torch._C._dispatch_keys(a)) == \
        "DispatchKeySet(PrivateUse1, ADInplaceOrView, AutogradPrivateUse1, AutocastPrivateUse1)"
    assert a.cpu().tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


@pytest.mark.timeout(600)
@pytest.mark.claim("dispatch.backend.toy-kernels-registered")
def test_cpp_toy_device_kernels(cpp_extension, dispatcher):
    for op in ("aten::empty.memory_format", "aten::empty_strided", "aten::_copy_from", "aten::add.out"):
        assert str(dispatcher.active(op)["PrivateUse1"]["raw_path"]) == str(cpp_extension.source), op


@pytest.mark.timeout(600)
@pytest.mark.claim("dispatch.backend.toy-add-composite")
def test_cpp_toy_device_add_through_the_composite(cpp_extension, dispatcher):
    make_device("toy")
    a = torch.arange(6.0).reshape(2, 3).to("toy")
    b = torch.ones(3).to("toy")
    with profile() as prof:
        total = torch.add(a, b, alpha=10)  # add.Tensor -> default backend kernel -> our add.out
    assert total.device == a.device and total.cpu().tolist() == [[10.0, 11.0, 12.0], [13.0, 14.0, 15.0]]
    (outer,) = [e for e in prof.events() if e.cpu_parent is None]
    inner = [e.name for e in prof.events() if e.cpu_parent is not None and e.cpu_parent.id == outer.id]
    assert outer.name == "aten::add" and inner[:2] == ["aten::empty", "aten::add"]  # allocate, then add.out
    assert dispatcher.table("aten::add.Tensor")["PrivateUse1"]["kind"] == "default backend kernel"


@pytest.mark.timeout(600)
@pytest.mark.claim("dispatch.backend.toy-missing-kernels")
def test_cpp_toy_device_missing_kernels(cpp_extension):
    make_device("toy")
    a = torch.arange(6.0).reshape(2, 3).to("toy")
    b = torch.ones(3).to("toy")
    with pytest.raises(NotImplementedError,
                       match="Could not run 'aten::mul.out' with arguments from the 'toy' backend"):
        torch.mul(a, b)
    with pytest.raises(NotImplementedError,
                       match="Could not run 'aten::fill_.Scalar' with arguments from the 'toy' backend"):
        torch.ones(2, device="toy")  # ones = empty + fill_


@pytest.mark.timeout(600)
@pytest.mark.claim("dispatch.backend.autograd-needs-hooks")
def test_toy_device_autograd(cpp_extension):
    make_device("toy")
    a = torch.tensor([1.0, 2.0]).to("toy").requires_grad_()
    c = torch.add(a, torch.ones(2).to("toy"))
    assert c.grad_fn.name() == "AddBackward0"  # the forward half of autograd needs nothing
    with pytest.raises(RuntimeError, match="Please register PrivateUse1HooksInterface by "
                                           "`RegisterPrivateUse1HooksInterface` first"):
        c.backward(torch.ones(2).to("toy"))
