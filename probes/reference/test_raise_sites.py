"""Probe for docs/reference/sources.md: the raise sites that pin `.cpp` references to a line.

It runs the same table and the same child process as the resolver (verified.raise_sites),
so a function that a trigger no longer reaches, or that moved to another file, fails this
claim as well as the reference that names it.
"""
import pytest

from verified import raise_sites


@pytest.mark.claim("reference.sources.raise-sites")
def test_each_trigger_raises_inside_its_function():
    observed = raise_sites.observe()
    problems = {}
    for trigger in raise_sites.TRIGGERS:
        seen = observed[raise_sites.key(trigger)]
        raised = raise_sites.parse(seen["message"])
        problem = raise_sites.check(trigger, raised) if seen["type"] else "no error was raised"
        if problem:
            problems[raise_sites.key(trigger)] = f"{problem}: {seen['message'][:300]}"
        else:  # the message names the place as the claim says: `at <file>:<line>` or `[enforce fail at <file>:<line>]`
            assert f"at {raised.file}:{raised.line}" in seen["message"]
    assert problems == {}
    assert observed[raise_sites.key(raise_sites.BY_REFERENCE[
        ("torch/csrc/autograd/saved_variable.cpp", "SavedVariable::unpack")])]["message"].startswith(
        "one of the variables needed for gradient computation has been modified by an inplace operation")
