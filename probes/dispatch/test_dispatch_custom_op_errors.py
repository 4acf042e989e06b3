"""Probes for docs/dispatch/custom-op-errors.md: the errors of torch.library and custom ops.

Each probe triggers one message the way its claim's cause says, checks the stable part with
`pytest.raises(..., match=...)` / `pytest.warns(..., match=...)`, then shows that the claim's fix
makes the same code work. Every operator lives in a namespace of its own probe (`errprobe_<name>`),
so the probes also pass when run in one process.

Chosen from what users report (pytorch/pytorch issues and threads found with the site's search):
- https://github.com/pytorch/pytorch/issues/181851 (register_fake whose signature differs from the op)
- https://github.com/Lightning-AI/lightning-thunder/pull/2530 (no fake impl under torch.compile)
- https://github.com/pytorch/pytorch/pull/150806 (overriding a registered kernel)
- https://github.com/pytorch/pytorch/pull/124064 and #124066 (register_fake on existing operators)
- https://github.com/pytorch/pytorch/issues/96409 (Could not run ... with arguments from the 'Meta' backend)
"""
import re

import pytest
import torch
from torch.library import Library, custom_op


def lit(text):
    """A regex matching `text` literally."""
    return re.escape(text)


def fake_mode(dynamic=False):
    from torch._subclasses.fake_tensor import FakeTensorMode

    if not dynamic:
        return FakeTensorMode()
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    return FakeTensorMode(shape_env=ShapeEnv())


# ------------------------------------------------------------------ defining an operator


@pytest.mark.claim("dispatch.operr.duplicate-def")
def test_defining_the_same_schema_twice():
    lib = Library("errprobe_dup", "FRAGMENT")
    lib.define("foo(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match=lit("Tried to register an operator (errprobe_dup::foo(Tensor x) -> Tensor) "
                                               "with the same name and overload name multiple times.")) as info:
        lib.define("foo(Tensor x) -> Tensor")
    assert "Duplicate registration: registered at" in str(info.value)
    assert "Original registration: registered at" in str(info.value)
    lib.define("foo.scaled(Tensor x, float s) -> Tensor")  # the fix: a new overload name
    assert set(torch.ops.errprobe_dup.foo.overloads()) == {"default", "scaled"}


@pytest.mark.claim("dispatch.operr.single-def-library")
def test_two_def_libraries_for_one_namespace():
    first = Library("errprobe_two", "DEF")
    first.define("a(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match=lit("Only a single TORCH_LIBRARY can be used to register the namespace "
                                               "errprobe_two; please put all of your definitions in a single "
                                               "TORCH_LIBRARY block.")):
        Library("errprobe_two", "DEF")
    second = Library("errprobe_two", "FRAGMENT")  # the fix: FRAGMENT may be repeated
    second.define("b(Tensor x) -> Tensor")
    assert hasattr(torch.ops.errprobe_two, "a") and hasattr(torch.ops.errprobe_two, "b")


@pytest.mark.claim("dispatch.operr.library-kind")
@pytest.mark.torch_version(">=2.12")
def test_library_kind_must_be_def_impl_or_fragment():
    with pytest.raises(ValueError, match=r"^Unsupported kind: BOGUS$"):
        Library("errprobe_kind", "BOGUS")
    lib = Library("errprobe_kind", "FRAGMENT")
    lib.define("k(Tensor x) -> Tensor")
    assert hasattr(torch.ops.errprobe_kind, "k")


@pytest.mark.claim("dispatch.operr.impl-library-define")
def test_define_inside_an_impl_library():
    lib = Library("errprobe_impldef", "IMPL")
    with pytest.raises(RuntimeError, match=lit('def("q"): Cannot define an operator inside of a TORCH_LIBRARY_IMPL '
                                               "block.  All def()s should be placed in the (unique) TORCH_LIBRARY "
                                               "block for their namespace.")):
        lib.define("q(Tensor x) -> Tensor")
    definitions = Library("errprobe_impldef", "FRAGMENT")  # kept: a Library's registrations end with it
    definitions.define("q(Tensor x) -> Tensor")
    lib.impl("q", lambda x: x + 1, "CPU")  # the IMPL library may still add kernels
    assert torch.ops.errprobe_impldef.q(torch.zeros(1)).item() == 1.0


@pytest.mark.claim("dispatch.operr.schema-parse")
def test_schema_strings_that_do_not_parse():
    lib = Library("errprobe_schema", "FRAGMENT")
    with pytest.raises(RuntimeError, match=lit("expected ) but found 'arrow' here:")):
        lib.define("bar(Tensor x -> Tensor")
    with pytest.raises(RuntimeError, match=lit("expected arrow but found 'eof' here:")):
        lib.define("noret(Tensor x)")
    lib.define("bar(Tensor x) -> Tensor")
    lib.define("noret(Tensor x) -> ()")
    assert str(torch.ops.errprobe_schema.noret.default._schema) == "errprobe_schema::noret(Tensor x) -> ()"


@pytest.mark.claim("dispatch.operr.schema-type")
def test_schema_with_an_unknown_type():
    lib = Library("errprobe_type", "FRAGMENT")
    with pytest.raises(RuntimeError, match=lit("unknown type specifier. Common valid schema types include Tensor, "
                                               "SymInt, int, float, bool, Scalar;")) as info:
        lib.define("baz(Tensr x) -> Tensor")
    assert "Tensr x" in str(info.value)  # the message points at the word
    lib.define("baz(Tensor x) -> Tensor")
    assert hasattr(torch.ops.errprobe_type, "baz")


@pytest.mark.claim("dispatch.operr.qualname")
def test_qualname_without_a_namespace():
    with pytest.raises(ValueError, match=lit('Expected `qualname` to be of the form "namespace::name", but got '
                                             'noqual.')):
        torch.library.define("noqual", "(Tensor x) -> Tensor")
    lib = Library("errprobe_qual", "FRAGMENT")
    torch.library.define("errprobe_qual::ok", "(Tensor x) -> Tensor", lib=lib)
    assert hasattr(torch.ops.errprobe_qual, "ok")


@pytest.mark.claim("dispatch.operr.no-such-op")
def test_looking_up_an_operator_that_was_never_defined():
    with pytest.raises(AttributeError, match=lit("'_OpNamespace' 'errprobe_missing' object has no attribute 'nothere'")):
        torch.ops.errprobe_missing.nothere
    with pytest.raises(AttributeError, match=lit("The underlying op of 'aten.add' has no overload name 'nonexistent'")):
        torch.ops.aten.add.nonexistent
    with pytest.raises(RuntimeError, match=r"^operator errprobe_missing::zzz does not exist$"):
        torch.library.register_fake("errprobe_missing::zzz", lambda x: x)
    lib = Library("errprobe_missing", "FRAGMENT")
    lib.define("nothere(Tensor x) -> Tensor")  # the fix: define it (or import the module that does)
    torch.library.register_fake("errprobe_missing::nothere", lambda x: torch.empty_like(x), lib=lib)
    assert "Tensor" in torch.ops.aten.add.overloads()


@pytest.mark.claim("dispatch.operr.call-arguments")
def test_calling_an_operator_with_wrong_arguments():
    lib = Library("errprobe_args", "FRAGMENT")
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x * 2, "CPU")
    op = torch.ops.errprobe_args.foo
    with pytest.raises(RuntimeError, match=lit("errprobe_args::foo() Expected a value of type 'Tensor' for argument "
                                               "'x' but instead found type 'int'.")):
        op(3)
    with pytest.raises(RuntimeError, match=lit("errprobe_args::foo() expected at most 1 argument(s) but received 2 "
                                               "argument(s). Declaration: errprobe_args::foo(Tensor x) -> Tensor")):
        op(torch.ones(1), torch.ones(1))
    with pytest.raises(RuntimeError, match=lit("aten::add() is missing value for argument 'other'. Declaration: "
                                               "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")):
        torch.ops.aten.add.Tensor(torch.ones(1))
    assert op(torch.ones(1)).item() == 2.0


# ------------------------------------------------------------------ kernels and dispatch keys


@pytest.mark.claim("dispatch.operr.no-cpu-kernel")
def test_operator_defined_without_a_cpu_kernel():
    lib = Library("errprobe_nok", "FRAGMENT")
    lib.define("foo(Tensor x) -> Tensor")
    with pytest.raises(NotImplementedError, match=lit("Could not run 'errprobe_nok::foo' with arguments from the 'CPU' "
                                                      "backend. This could be because the operator doesn't exist for "
                                                      "this backend")) as info:
        torch.ops.errprobe_nok.foo(torch.ones(2))
    assert "'errprobe_nok::foo' is only available for these backends: [" in str(info.value)
    lib.impl("foo", lambda x: x * 2, "CPU")
    assert torch.ops.errprobe_nok.foo(torch.ones(2)).tolist() == [2.0, 2.0]


@pytest.mark.claim("dispatch.operr.bad-dispatch-key")
def test_impl_for_a_key_that_does_not_exist():
    lib = Library("errprobe_key", "FRAGMENT")
    lib.define("foo(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match=r"^could not parse dispatch key: NotAKey$"):
        lib.impl("foo", lambda x: x, "NotAKey")
    lib.impl("foo", lambda x: x + 1, "CompositeExplicitAutograd")
    assert torch.ops.errprobe_key.foo(torch.zeros(1)).item() == 1.0


@pytest.mark.claim("dispatch.operr.device-types")
def test_custom_op_with_an_unknown_device_type():
    with pytest.raises(RuntimeError, match=lit("device type at start of device string: notadevice")) as info:
        @custom_op("errprobe_dev::k", mutates_args=(), device_types="notadevice")
        def k(x: torch.Tensor) -> torch.Tensor:
            return x.clone()
    assert str(info.value).startswith("Expected one of cpu, cuda,")

    @custom_op("errprobe_dev::k2", mutates_args=(), device_types="cpu")
    def k2(x: torch.Tensor) -> torch.Tensor:
        return x + 1

    assert k2(torch.zeros(1)).item() == 1.0


@pytest.mark.claim("dispatch.operr.override-kernel")
def test_second_kernel_for_the_same_key_overrides_with_a_warning():
    lib = Library("errprobe_over", "FRAGMENT")
    lib.define("g(Tensor x) -> Tensor")
    lib.impl("g", lambda x: x * 2, "CPU")
    other = Library("errprobe_over", "FRAGMENT")
    with pytest.warns(UserWarning, match=lit("Overriding a previously registered kernel for the same operator and "
                                             "the same dispatch key")):
        other.impl("g", lambda x: x * 3, "CPU")
    assert torch.ops.errprobe_over.g(torch.ones(1)).item() == 3.0  # the later kernel wins
    other._destroy()  # registering once: without the second library, the first kernel is back
    assert torch.ops.errprobe_over.g(torch.ones(1)).item() == 2.0


# ------------------------------------------------------------------ custom_op: inferring the schema


@pytest.mark.claim("dispatch.operr.mutates-args-required")
def test_custom_op_needs_mutates_args():
    with pytest.raises(TypeError, match=lit("custom_op() missing 1 required keyword-only argument: 'mutates_args'")):
        @custom_op("errprobe_mut::f")
        def f(x: torch.Tensor) -> torch.Tensor:
            return x.clone()

    @custom_op("errprobe_mut::g", mutates_args=())
    def g(x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    assert g(torch.ones(1)).item() == 1.0


@pytest.mark.claim("dispatch.operr.infer-schema-types")
def test_custom_op_annotations_outside_the_schema_types():
    with pytest.raises(ValueError, match=lit("infer_schema(func): Return has unsupported type <class 'dict'>.")):
        @custom_op("errprobe_inf::r", mutates_args=())
        def r(x: torch.Tensor) -> dict:
            return {}
    # a bare `list` parameter: the pair of probes below (what it raises changed in 2.10)

    @custom_op("errprobe_inf::ok", mutates_args=())
    def ok(x: torch.Tensor, n: list[int]) -> torch.Tensor:
        return x * len(n)

    assert str(ok._opoverload._schema) == "errprobe_inf::ok(Tensor x, SymInt[] n) -> Tensor"


def bare_list_parameter(name):
    @custom_op(f"errprobe_inf::{name}", mutates_args=())
    def p(x: torch.Tensor, n: list) -> torch.Tensor:
        return x.clone()


def element_type_given(name):
    @custom_op(f"errprobe_inf::{name}", mutates_args=())
    def fixed(x: torch.Tensor, n: list[int]) -> torch.Tensor:  # the fix: the element type
        return x * len(n)

    assert fixed(torch.ones(2), [1, 2]).tolist() == [2.0, 2.0]


@pytest.mark.claim("dispatch.operr.infer-schema-bare-list-crashes")
@pytest.mark.torch_version("<2.10")
def test_custom_op_bare_list_parameter_until_2_9():
    with pytest.raises(AttributeError, match="^" + lit("type object 'list' has no attribute '__origin__'") + "$"):
        bare_list_parameter("p_old")
    element_type_given("fixed_old")


@pytest.mark.claim("dispatch.operr.infer-schema-bare-list")
@pytest.mark.torch_version(">=2.10")
def test_custom_op_bare_list_parameter_since_2_10():
    with pytest.raises(ValueError, match="^" + lit("infer_schema(func): Parameter n has unsupported type <class 'list'>.")):
        bare_list_parameter("p_new")
    element_type_given("fixed_new")


@pytest.mark.claim("dispatch.operr.infer-schema-signature")
def test_custom_op_signature_rules():
    with pytest.raises(ValueError, match=lit("infer_schema(func): We do not support positional-only args, varargs, "
                                             "or varkwargs.")):
        @custom_op("errprobe_sig::v", mutates_args=())
        def v(*args: torch.Tensor) -> torch.Tensor:
            return args[0]
    with pytest.raises(ValueError, match=lit("infer_schema(func): {'y'} in mutates_args were not found in the custom "
                                             "op's signature.")):
        @custom_op("errprobe_sig::m", mutates_args=["y"])
        def m(x: torch.Tensor) -> None:
            pass

    @custom_op("errprobe_sig::ok", mutates_args=["x"])
    def ok(x: torch.Tensor, y: torch.Tensor) -> None:
        x.add_(y)

    t = torch.zeros(1)
    ok(t, torch.ones(1))
    assert t.item() == 1.0


@pytest.mark.claim("dispatch.operr.output-aliases-input")
def test_custom_op_returning_its_input_or_a_view():
    message = lit("The output of this custom operator (1) must not also be an input to this custom operator and (2) "
                  "may not alias any inputs to this custom operator or other returns.")

    @custom_op("errprobe_alias::same", mutates_args=())
    def same(x: torch.Tensor) -> torch.Tensor:
        return x

    @custom_op("errprobe_alias::view", mutates_args=())
    def view(x: torch.Tensor) -> torch.Tensor:
        return x.view(-1)

    with pytest.raises(RuntimeError, match=message):
        same(torch.ones(2))
    with pytest.raises(RuntimeError, match=message):
        view(torch.ones(2))

    @custom_op("errprobe_alias::copy", mutates_args=())
    def copy(x: torch.Tensor) -> torch.Tensor:
        return x.view(-1).clone()

    x = torch.ones(2)
    assert copy(x).data_ptr() != x.data_ptr()


# ------------------------------------------------------------------ fake kernels, FakeTensor and compile


@pytest.mark.claim("dispatch.operr.meta-no-fake")
def test_meta_tensor_on_an_operator_without_fake_impl():
    lib = Library("errprobe_meta", "FRAGMENT")
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x * 2, "CPU")
    with pytest.raises(NotImplementedError, match=lit("errprobe_meta::foo: attempted to run this operator with Meta "
                                                      "tensors, but there was no fake impl or Meta kernel registered.")):
        torch.ops.errprobe_meta.foo(torch.ones(2, device="meta"))
    torch.library.register_fake("errprobe_meta::foo", lambda x: torch.empty_like(x), lib=lib)
    assert torch.ops.errprobe_meta.foo(torch.ones(2, device="meta")).shape == (2,)


@pytest.mark.claim("dispatch.operr.fake-unsupported-operator")
def test_faketensor_on_a_library_operator_without_fake_impl():
    from torch._subclasses.fake_tensor import UnsupportedOperatorException

    lib = Library("errprobe_fk", "FRAGMENT")
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x * 2, "CPU")
    with pytest.raises(UnsupportedOperatorException, match=r"^errprobe_fk\.foo\.default$"):
        with fake_mode():
            torch.ops.errprobe_fk.foo(torch.ones(2))
    torch.library.register_fake("errprobe_fk::foo", lambda x: torch.empty_like(x), lib=lib)
    with fake_mode():
        assert torch.ops.errprobe_fk.foo(torch.ones(2)).shape == (2,)


@pytest.mark.claim("dispatch.operr.custom-op-no-fake")
def test_custom_op_under_faketensor_and_compile_without_fake_impl():
    @custom_op("errprobe_cf::co", mutates_args=())
    def co(x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    message = lit("There was no fake impl registered for <CustomOpDef(errprobe_cf::co)>. This is necessary for "
                  "torch.compile/export/fx tracing to work. Please use `co.register_fake` to add an fake impl.")
    with pytest.raises(RuntimeError, match=message):
        with fake_mode():
            co(torch.ones(2))
    torch._dynamo.reset()
    compiled = torch.compile(lambda x: co(x) + 1, backend="eager", fullgraph=True)
    with pytest.raises(torch._dynamo.exc.TorchRuntimeError, match=lit("Dynamo failed to run FX node with fake "
                                                                      "tensors: call_function errprobe_cf.co.default")):
        compiled(torch.ones(2))

    @co.register_fake
    def _(x):
        return torch.empty_like(x)

    torch._dynamo.reset()
    compiled = torch.compile(lambda x: co(x) + 1, backend="eager", fullgraph=True)
    assert compiled(torch.ones(2)).tolist() == [2.0, 2.0]
    torch._dynamo.reset()


@pytest.mark.claim("dispatch.operr.fake-data-dependent")
def test_fake_impl_with_a_data_dependent_output_size():
    from torch._subclasses.fake_tensor import DynamicOutputShapeException

    @custom_op("errprobe_dd::nz", mutates_args=())
    def nz(x: torch.Tensor) -> torch.Tensor:
        return x.nonzero()

    @nz.register_fake
    def _(x):
        return x.nonzero()  # a fake tensor has no values to count

    with pytest.raises(DynamicOutputShapeException, match=r"^aten\.nonzero\.default$"):
        with fake_mode():  # no ShapeEnv: no symbol can stand for the unknown count
            nz(torch.ones(2))
    with fake_mode(dynamic=True):  # a ShapeEnv, as torch.compile and torch.export create
        assert str(nz(torch.ones(2)).shape[0]).startswith("u")

    @nz.register_fake
    def _(x):
        n = torch.library.get_ctx().new_dynamic_size()
        return x.new_empty(n, x.dim(), dtype=torch.long)

    with fake_mode(dynamic=True):
        out = nz(torch.ones(2))
    assert str(out.shape[0]).startswith("u") and out.shape[1] == 1  # an unbacked size
    assert nz(torch.tensor([0.0, 3.0])).tolist() == [[1]]


@pytest.mark.claim("dispatch.operr.no-autograd-formula")
def test_backward_through_custom_op_without_autograd():
    @custom_op("errprobe_ag::f", mutates_args=())
    def f(x: torch.Tensor) -> torch.Tensor:
        return x * 3

    with pytest.raises(RuntimeError, match=lit("Trying to backward through errprobe_ag.f.default but no autograd "
                                               "formula was registered. Please use register_autograd to add one.")):
        f(torch.ones(2, requires_grad=True)).sum().backward()

    f.register_autograd(lambda ctx, grad: grad * 3)
    x = torch.ones(2, requires_grad=True)
    f(x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


# ------------------------------------------------------------------ opcheck


@pytest.mark.claim("dispatch.operr.opcheck-mutation")
def test_opcheck_finds_an_undeclared_mutation():
    from torch.library import opcheck
    from torch.testing._internal.optests.generate_tests import OpCheckError

    @custom_op("errprobe_oc::mut", mutates_args=())
    def mut(x: torch.Tensor) -> None:
        x.add_(1)

    with pytest.raises(OpCheckError, match=lit("opcheck(op, ...): test_schema failed with Argument x is not defined "
                                               "as mutable but was mutated")):
        opcheck(mut, (torch.ones(2),), test_utils=("test_schema",))

    @custom_op("errprobe_oc::mut2", mutates_args=["x"])
    def mut2(x: torch.Tensor) -> None:
        x.add_(1)

    assert opcheck(mut2, (torch.ones(2),), test_utils=("test_schema",)) == {"test_schema": "SUCCESS"}


@pytest.mark.claim("dispatch.operr.opcheck-fake-shape")
def test_opcheck_finds_a_fake_impl_with_the_wrong_shape():
    from torch.library import opcheck
    from torch.testing._internal.optests.generate_tests import OpCheckError

    @custom_op("errprobe_oc::fs", mutates_args=())
    def fs(x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    @fs.register_fake
    def _(x):
        return x.new_empty(x.shape[0] + 1)

    with pytest.raises(OpCheckError, match=lit("opcheck(op, ...): test_faketensor failed with When comparing the output "
                                               "of errprobe_oc.fs.default on FakeTensor and concrete Tensors, found "
                                               "mismatched tensor metadata: Shapes torch.Size([2]) and "
                                               "torch.Size([3]) are not equal!")):
        opcheck(fs, (torch.ones(2),), test_utils=("test_faketensor",))

    @fs.register_fake
    def _(x):
        return torch.empty_like(x)

    assert opcheck(fs, (torch.ones(2),), test_utils=("test_faketensor",)) == {"test_faketensor": "SUCCESS"}


# ------------------------------------------------------------------ building C++ extensions (before compiling)


@pytest.mark.claim("dispatch.operr.cpp-extension-ninja")
def test_extension_build_without_ninja_on_the_path(monkeypatch):
    from torch.utils import cpp_extension

    cpp_extension.verify_ninja_availability()  # ninja is installed here
    monkeypatch.setenv("PATH", "")  # a shell where it is not found
    with pytest.raises(RuntimeError, match=lit("Ninja is required to load C++ extensions (pip install ninja to get "
                                               "it)")):
        cpp_extension.verify_ninja_availability()


@pytest.mark.claim("dispatch.operr.cpp-extension-cuda-home")
def test_cuda_extension_without_a_cuda_toolkit():
    from torch.utils import cpp_extension

    if cpp_extension.CUDA_HOME is not None:
        pytest.skip("not run here: this machine has a CUDA toolkit")
    message = lit("CUDA_HOME environment variable is not set. Please set it to your CUDA install root.")
    with pytest.raises(OSError, match=message):
        cpp_extension.CUDAExtension("probe_ext", ["kernel.cu"])
    with pytest.raises(OSError, match=message):
        cpp_extension.include_paths("cuda")
    cpu = cpp_extension.CppExtension("probe_ext", ["kernel.cpp"])  # the fix on a machine without CUDA: a CPU build
    assert cpu.name == "probe_ext" and any(p.endswith("include") for p in cpp_extension.include_paths("cpu"))
