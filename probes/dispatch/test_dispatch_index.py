"""Probes for docs/dispatch/index.md: one registry of operators, many kernels per operator."""
import pytest
import torch

from verified.probing import measured


@pytest.mark.claim("dispatch.overview.one-registry")
def test_one_registry_for_every_namespace():
    names = torch._C._dispatch_get_all_op_names()
    namespaces = {}
    for name in names:
        namespaces.setdefault(name.split("::", 1)[0], []).append(name)
    for namespace in ("aten", "prims", "quantized"):
        assert namespace in namespaces, namespace
    for name in names:  # every one of them, through torch.ops
        namespace, rest = name.split("::", 1)
        base, _, overload = rest.partition(".")
        op = getattr(getattr(getattr(torch.ops, namespace), base), overload or "default")
        assert (op._schema.name, op._schema.overload_name) == (f"{namespace}::{base}", overload), name
    assert str(torch.ops.prims.add.default._schema).startswith("prims::add(")


@pytest.mark.claim("dispatch.overview.aten-count")
def test_aten_operator_count():
    names = torch._C._dispatch_get_all_op_names()
    count = sum(name.startswith("aten::") for name in names)
    measured.record("aten:: operators in the registry", count)
    assert count in range(3000, 3301)


@pytest.mark.claim("dispatch.overview.many-kernels")
def test_one_operator_many_kernels(dispatcher):
    registered = dispatcher.active("aten::add.Tensor")
    paths = {registered[key]["raw_path"] for key in ("CPU", "Meta", "SparseCPU", "Autograd")}
    assert len(paths) == 4  # four kernels, four files


@pytest.mark.claim("dispatch.overview.one-call-many-results")
def test_one_call_many_results():
    op = torch.ops.aten.add.Tensor
    dense = op(torch.ones(2, 2), torch.ones(2, 2))
    assert dense.layout == torch.strided and dense.sum().item() == 8.0
    meta = op(torch.ones(2, 2, device="meta"), torch.ones(2, 2, device="meta"))
    assert meta.is_meta and meta.shape == (2, 2)  # shape computed, nothing stored
    sparse = op(torch.eye(2).to_sparse(), torch.eye(2).to_sparse())
    assert sparse.layout == torch.sparse_coo and sparse.to_dense().tolist() == [[2.0, 0.0], [0.0, 2.0]]
