"""Probe for docs/reference/sources.md: the raise sites that pin `.cpp` references to a line.

It runs the same table and the same child process as the resolver (verified.sources.raise_sites),
so a function that a trigger no longer reaches, or that moved to another file, fails this
claim as well as the reference that names it.
"""
import re

import pytest

from verified.probing import shared
from verified.sources import raise_sites

RAISED_FROM = re.compile(r"^Exception raised from \S+ at \S+:\d+ \(most recent call first\):$", re.M)
ENFORCE = re.compile(r"^\[enforce fail at [^\s/:]+:\d+\] ", re.M)
FRAME = re.compile(r"^#\d+ .+ from \S+$", re.M)
ENFORCE_TRIGGER = ("c10/core/impl/alloc_cpu.cpp", "alloc_cpu")  # CAFFE_ENFORCE(err == 0, ...) in alloc_cpu


def trigger_errors():
    """The triggers' errors, from one child process per probe run (both claims read the same run)."""
    return shared.once(["raise-site triggers", raise_sites.table_digest()], raise_sites.observe)


@pytest.mark.claim("reference.sources.raise-message-format")
def test_each_trigger_message_says_where_it_was_raised():
    observed = trigger_errors()
    enforce_key = raise_sites.key(raise_sites.BY_REFERENCE[ENFORCE_TRIGGER])
    for trigger in raise_sites.TRIGGERS:
        message = observed[raise_sites.key(trigger)]["message"]
        where = RAISED_FROM.search(message) or ENFORCE.search(message)
        assert where, (raise_sites.key(trigger), message[:300])
        if raise_sites.key(trigger) == enforce_key:  # the CAFFE_ENFORCE failure has the other form only
            assert ENFORCE.search(message) and not RAISED_FROM.search(message), message[:300]
        else:
            assert RAISED_FROM.search(message) and not ENFORCE.search(message), message[:300]
        assert FRAME.search(message, where.end()), message[:300]  # numbered C++ frames follow


@pytest.mark.claim("reference.sources.raise-sites")
def test_each_trigger_raises_inside_its_function():
    observed = trigger_errors()
    problems = {}
    for trigger in raise_sites.TRIGGERS:
        seen = observed[raise_sites.key(trigger)]
        raised = raise_sites.parse(seen["message"])
        problem = raise_sites.check(trigger, raised) if seen["type"] else "no error was raised"
        if problem:
            problems[raise_sites.key(trigger)] = f"{problem}: {seen['message'][:300]}"
    assert problems == {}
    owned = raise_sites.parse(observed[raise_sites.key(raise_sites.BY_REFERENCE[
        ("torch/csrc/autograd/saved_variable.cpp", "SavedVariable::unpack")])]["message"])
    assert owned.frame.endswith("SavedVariable::unpack")  # the owner the claim names is the first frame's
