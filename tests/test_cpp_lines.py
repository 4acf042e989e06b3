"""The C++ reader: comments, scopes, and the line that defines a name in this build."""
from pathlib import Path

import pytest

from verified.sources import cpp_lines, cpp_preprocessor
from verified.sources.cpp_lines import DECLARATION, DEFINITION

FIXTURE = Path(__file__).parent / "sources_fixture"
MACROS = cpp_preprocessor.build_macros()  # Linux x86-64, CPU only


def source(name):
    return cpp_lines.Source((FIXTURE / name).read_text(), MACROS)


def test_strip_comments_keeps_lines_and_empties_literals():
    text = ('int a; // one\n/* two\nthree */ int b;\nconst char* s = "// not a comment";\n'
            "char c = '{';\nint n = 1'000;\n")
    assert cpp_lines.strip_comments(text).splitlines() == [
        "int a; ", "      ", "         int b;", 'const char* s = "";', "char c = '';", "int n = 1'000;"]


@pytest.mark.parametrize("symbol, line, form", [
    ("kAlignment", 8, DEFINITION),        # not the C10_MOBILE value
    ("CHECK_IT", 21, DEFINITION),         # not the standalone or stripped macro
    ("local_state", 28, DEFINITION),      # the inline body, not the _MSC_VER declaration
    ("undecided", 34, DEFINITION),        # an undecided branch: the first one
    ("platform", 44, DEFINITION),
    ("after_comment", 50, DECLARATION),
    ("commented_out", None, None),
    ("in_a_string", None, None),
])
def test_find_takes_the_branch_this_build_compiles(symbol, line, form):
    found = cpp_lines.find(source("preprocessor.h"), symbol)
    assert (found.line, found.form) == (line, form) if line else found is None


@pytest.mark.parametrize("symbol, line, form, companion", [
    ("raw_alloc", 30, DEFINITION, 0),                 # the free function, not the pure virtual member
    ("Allocator::raw_alloc", 6, DECLARATION, 0),      # named with its owner: the member
    ("record", 7, DECLARATION, 0),                    # only a member has that name
    ("Allocator::handle", 8, DECLARATION, 0),         # bounded to Allocator: not Other::handle (line 27)
    ("Other::handle", 27, DEFINITION, 0),
    ("Allocator::inline_body", 9, DEFINITION, 0),
    ("Dispatcher::call", 35, DEFINITION, 0),          # the out-of-class body, not the in-class declaration
    ("Dispatcher::redispatch", 39, DEFINITION, 0),
    ("Dispatcher::boxed", 4, DEFINITION, 1),          # the body is in members_impl.h
    ("Allocator::Nested::f", 41, DEFINITION, 0),
    ("Allocator::Nested", 12, DEFINITION, 0),
    ("Dispatcher", 17, DEFINITION, 0),
    ("Handle", 42, DEFINITION, 0),                    # a type alias
    ("Other::raw_alloc", None, None, None),
    ("Missing::handle", None, None, None),
])
def test_find_members_and_bodies(symbol, line, form, companion):
    found = cpp_lines.find(source("members.h"), symbol, [source("members_impl.h")])
    if line is None:
        assert found is None
    else:
        assert (found.line, found.form, found.source) == (line, form, companion)


def test_scopes():
    src = source("members.h")
    assert [s.name for s in src.scopes[5]] == ["demo", "Allocator"]  # line 6
    assert [s.kind for s in src.scopes[12]] == ["namespace", "class", "class"]  # inside Nested
    assert src.place(29) == "namespace" and src.place(5) == "member" and src.place(9) == "body"
