"""The raise-site table: reading where an error was raised, and checking it against the table."""
import pytest

from verified.sources import raise_sites
from verified.sources.raise_sites import Raised, Trigger

UNPACK = Trigger("torch/csrc/autograd/saved_variable.cpp", "SavedVariable::unpack", "x", "pass")
FREE = Trigger("c10/core/Device.cpp", "parse_type", "x", "pass")
ENFORCE = Trigger("c10/core/impl/alloc_cpu.cpp", "alloc_cpu", "x", "pass")

MESSAGE = """one of the variables needed for gradient computation has been modified by an inplace operation
Exception raised from unpack at /__w/pytorch/pytorch/torch/csrc/autograd/saved_variable.cpp:197 (most recent call first)
C++ CapturedTraceback:
#4 std::_Function_handler<std::shared_ptr<c10::LazyValue<std::string> const> ()>::_M_invoke() from Logging.cpp:0
#5 c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char>) from ??:0
#6 c10::detail::torchCheckFail(char const*, char const*, unsigned int, std::string const&) from ??:0
#7 torch::autograd::SavedVariable::unpack(c10::intrusive_ptr<torch::autograd::Node>) const from ??:0
#8 torch::autograd::generated::ExpBackward0::apply(std::vector<at::Tensor>&&) from ??:0
"""

ENFORCE_MESSAGE = """[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory
C++ CapturedTraceback:
#5 c10::ThrowEnforceNotMet(char const*, int, char const*, std::string const&, void const*) from ??:0
#6 c10::alloc_cpu(unsigned long) from ??:0
"""


def test_parse_reads_function_file_line_and_frame():
    assert raise_sites.parse(MESSAGE) == Raised(
        "unpack", "/__w/pytorch/pytorch/torch/csrc/autograd/saved_variable.cpp", 197,
        "torch::autograd::SavedVariable::unpack")
    assert raise_sites.parse(ENFORCE_MESSAGE) == Raised("alloc_cpu", "alloc_cpu.cpp", 127, "c10::alloc_cpu")
    assert raise_sites.parse("a plain Python error") is None


@pytest.mark.parametrize("frame, name", [
    ("void torch::autograd::validate_outputs_impl<torch::autograd::Edge>(std::vector<Edge>&) const",
     "torch::autograd::validate_outputs_impl"),
    ("torch::utils::(anonymous namespace)::infer_scalar_type(_object*) [clone .cold]",
     "torch::utils::infer_scalar_type"),
    ("THPEngine_run_backward(_object*, _object*, _object*)", "THPEngine_run_backward"),
    ("??", None),
])
def test_qualified_name(frame, name):
    assert raise_sites.qualified_name(frame) == name


@pytest.mark.parametrize("trigger, raised, problem", [
    (UNPACK, raise_sites.parse(MESSAGE), None),
    (ENFORCE, raise_sites.parse(ENFORCE_MESSAGE), None),
    (UNPACK, Raised("unpack", "/x/torch/csrc/autograd/other.cpp", 3, "torch::autograd::SavedVariable::unpack"),
     "raised in /x/torch/csrc/autograd/other.cpp, not torch/csrc/autograd/saved_variable.cpp"),
    (UNPACK, Raised("reset_data", "/x/torch/csrc/autograd/saved_variable.cpp", 3, None),
     "raised from reset_data, not unpack"),
    (UNPACK, Raised("unpack", "/x/torch/csrc/autograd/saved_variable.cpp", 3, "torch::autograd::unpack"),
     "the raising frame is torch::autograd::unpack, not SavedVariable::unpack"),  # the owner is not confirmed
    (FREE, Raised("parse_type", "/x/c10/core/Device.cpp", 62, "c10::Device::Device"), None),  # inlined: no owner asked
    (UNPACK, None, "the error names no place it was raised from"),
])
def test_check(trigger, raised, problem):
    assert raise_sites.check(trigger, raised) == problem


def test_table_is_unique_and_names_cpp_files():
    assert len(raise_sites.BY_REFERENCE) == len(raise_sites.TRIGGERS)
    assert all(t.path.endswith((".cpp", ".cc")) for t in raise_sites.TRIGGERS)
    assert len(raise_sites.TRIGGERS) >= 25
