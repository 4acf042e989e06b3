"""The preprocessor: this build's macros, `#if` conditions, and each line's branch state."""
from pathlib import Path

import pytest

from verified.sources import cpp_lines, cpp_preprocessor
from verified.sources.cpp_preprocessor import ALT, MAYBE, SKIPPED, TAKEN

FIXTURE = Path(__file__).parent / "sources_fixture"
MACROS = cpp_preprocessor.build_macros()  # Linux x86-64, CPU only


@pytest.mark.parametrize("expression, value", [
    ("defined(C10_MOBILE)", False),
    ("!defined(TORCH_STABLE_ONLY) && !defined(TORCH_TARGET_VERSION)", True),
    ("defined(_MSC_VER) || defined(C10_ANDROID) || defined(C10_IPHONE)", False),
    ("defined(__linux__) && defined(__x86_64__)", True),
    ("defined(SOMETHING_UNKNOWN)", None),
    ("defined(SOMETHING_UNKNOWN) || defined(__linux__)", True),
    ("defined(SOMETHING_UNKNOWN) && defined(_WIN32)", False),
    ("__GNUC__ >= 5", None),  # defined, value unknown here
    ("__has_include(<optional>)", None),
    ("C10_CLANG_HAS_WARNING(\"-Wfoo\")", None),
    ("1 + 1 == 2 ? 1 : 0", True),
    ("UNDEFINED_BY_THE_BUILD", None),
])
def test_evaluate(expression, value):
    assert cpp_preprocessor.evaluate(expression, MACROS) == value


def test_build_macros_read_the_installed_cmake_macros(tmp_path):
    header = tmp_path / "torch/headeronly/macros/cmake_macros.h"
    header.parent.mkdir(parents=True)
    header.write_text("#define C10_BUILD_SHARED_LIBS\n/* #undef C10_USE_GLOG */\n#define C10_SOMETHING 3\n")
    macros = cpp_preprocessor.build_macros(tmp_path)
    assert cpp_preprocessor.evaluate("defined(C10_BUILD_SHARED_LIBS) && !defined(C10_USE_GLOG)", macros) is True
    assert cpp_preprocessor.evaluate("C10_SOMETHING == 3", macros) is True
    device_build = cpp_preprocessor.build_macros(tmp_path, device_build=True)
    assert cpp_preprocessor.evaluate("defined(__CUDACC__)", device_build) is None
    assert cpp_preprocessor.evaluate("defined(__CUDACC__)", macros) is False


def test_branch_states():
    code = cpp_lines.strip_comments((FIXTURE / "preprocessor.h").read_text()).splitlines()
    states, directive_lines = cpp_preprocessor.branch_states(code, MACROS)
    state = {i + 1: s for i, s in enumerate(states)}
    assert {5, 7, 9, 12, 25, 27, 31} <= {i + 1 for i in directive_lines}
    assert state[6] == SKIPPED and state[8] == TAKEN  # C10_MOBILE / else
    assert state[13] == SKIPPED and state[15] == SKIPPED and state[19] == SKIPPED and state[21] == TAKEN
    assert state[26] == SKIPPED and state[28] == TAKEN
    assert state[34] == MAYBE and state[36] == ALT  # undecided: both searchable, one for the braces
    assert state[40] == SKIPPED and state[42] == SKIPPED and state[44] == TAKEN
