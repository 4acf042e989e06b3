"""The error-message index: what a probe's raises/warns block records, how messages group,
and what a build shows of them."""
import html
import json
import pickle
import re
import warnings

import pytest

from verified.probing import messages

MESSAGE_PROBE = '''import warnings

import pytest
import torch


@pytest.mark.claim("fixture.message.view")
def test_view_message():
    with pytest.raises(RuntimeError, match="is invalid for input of size"):
        torch.zeros(6).view(4, 2)


@pytest.mark.claim("fixture.message.custom")
def test_custom_message():
    with pytest.raises(RuntimeError, match="no such key"):  # raised inside torch, with this text
        torch._check(False, lambda: "no such key: {key}")
    with pytest.warns(UserWarning, match="look out"):
        warnings.warn("look out: {key}")
    with pytest.raises(KeyError):  # no match=: only the type is checked, so nothing is indexed
        raise KeyError("unchecked text")
'''

PAGE = """# Messages

:::{{claim}} fixture.message.view
Viewing six elements as four by two fails.
:::

:::{{claim}} fixture.message.custom
A failed check raises a RuntimeError, after a warning.
:::

A missing key says {{error-ref}}`{ref}`.
"""


def page_text(path):
    """A built page's text, without its tags (Sphinx puts each word of a literal in a span)."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", path.read_text())).split())


def entry(claims, *records, function="test_x"):
    return {"file": "probes/test_x.py", "function": function, "claims": claims,
            "messages": [{"kind": kind, "type": kind_type, "message": text} for kind, kind_type, text in records]}


def test_numbers_shapes_and_addresses_are_normalised():
    assert messages.normalise("The size of tensor a (3) must match the size of tensor b (4) at dimension 1") == \
        "The size of tensor a (N) must match the size of tensor b (N) at dimension N"
    assert messages.normalise("shape '[3, 5]' is invalid for input of size 12") == \
        "shape '[…]' is invalid for input of size N"
    assert messages.normalise("got torch.Size([2, 3]) at 0x7f3a2c, stride (1, 2)\n  next") == \
        "got torch.Size([…]) at 0x…, stride (…) next"
    assert messages.normalise("float32 and conv2d stay") == "float32 and conv2d stay"


def test_one_line_drops_terminal_escapes_joins_lines_and_shortens():
    assert messages.one_line("\n\x1b[1mWeights\x1b[0m only:\n\tsecond line") == "Weights only: second line"
    assert messages.one_line("x" * 400, limit=10) == "x" * 9 + "…"


def test_one_entry_per_normalised_message_with_all_its_claims():
    items = messages.index([
        entry(["a.one"], ("error", "RuntimeError", "size 3 is bad"), function="test_a"),
        entry(["a.two", "not.on.site"], ("error", "RuntimeError", "size 12 is bad"), function="test_b"),
        entry(["a.two"], ("warning", "UserWarning", "size 3 is bad")),
        entry(["not.on.site"], ("error", "ValueError", "orphan")),
    ], {"a.one": "page/one", "a.two": "page/two"})
    assert [(i["kind"], i["type"], i["normalised"]) for i in items] == [
        ("error", "RuntimeError", "size N is bad"), ("warning", "UserWarning", "size N is bad")]
    first = items[0]
    assert first["message"] == "size 3 is bad" and first["variants"] == ["size 12 is bad"]
    assert first["claims"] == ["a.one", "a.two"] and first["pages"] == ["page/one", "page/two"]
    assert first["probes"] == ["probes/test_x.py::test_a", "probes/test_x.py::test_b"]
    assert messages.anchor(first) != messages.anchor(items[1])


def test_type_names_are_public():
    import pickle as public_pickle

    assert messages.type_name(RuntimeError) == "RuntimeError"
    assert messages.type_name(public_pickle.UnpicklingError) == "pickle.UnpicklingError"
    assert messages.type_name(json.JSONDecodeError) == "json.decoder.JSONDecodeError"


@pytest.mark.filterwarnings("ignore:other text")
def test_raises_and_warns_with_match_are_recorded_and_without_match_are_not():
    messages.record_checked_messages()
    messages.record_checked_messages()  # twice is harmless
    messages.checked.clear()
    with pytest.raises(ValueError, match="invalid literal"):
        int("three")
    with pytest.raises(KeyError):
        raise KeyError("unchecked")
    with pytest.raises(ValueError, match="own"):  # the probe's own text, not PyTorch's
        raise ValueError("own text")
    with pytest.raises(TypeError, match="unsupported operand"):  # raised by Python for this line
        object() + 1
    with pytest.warns(UserWarning, match="careful"):
        warnings.warn("careful now", stacklevel=1)
        warnings.warn("other text", stacklevel=1)
    with pytest.raises(AssertionError):  # a block whose match fails records nothing
        with pytest.raises(ValueError, match="absent"):
            raise ValueError("present")
    assert messages.checked == [{"kind": "error", "type": "ValueError", "message": "invalid literal for int() with base 10: 'three'"},
                                {"kind": "error", "type": "TypeError",
                                 "message": "unsupported operand type(s) for +: 'object' and 'int'"},
                                {"kind": "warning", "type": "UserWarning", "message": "careful now"}]
    messages.checked.clear()


@pytest.fixture
def message_site(site):
    site.write("probes/test_messages.py", MESSAGE_PROBE.replace("{key}", "alpha 7"))
    site.write("docs/messages.md", PAGE.format(ref="no such key"))
    site.write("docs/errors.md", "# Errors\n\n:::{error-index}\n:::\n")
    site.replace("docs/index.md", "claims\n```", "claims\nmessages\nerrors\n```")
    return site


def test_the_index_shows_what_the_probes_checked_and_follows_a_changed_message(message_site):
    code, out = message_site.build()
    assert code == 0, out
    report = json.loads((message_site.root / "_build/html/verification.json").read_text())
    assert [(e["type"], e["message"], e["claims"], e["pages"]) for e in report["errors"]] == [
        ("RuntimeError", "no such key: alpha 7", ["fixture.message.custom"], ["messages"]),
        ("RuntimeError", "shape '[4, 2]' is invalid for input of size 6", ["fixture.message.view"], ["messages"]),
        ("UserWarning", "look out: alpha 7", ["fixture.message.custom"], ["messages"]),
    ]
    errors_page = page_text(message_site.root / "_build/html/errors.html")
    assert "RuntimeError: no such key: alpha 7" in errors_page and "unchecked text" not in errors_page
    assert "3 distinct messages (2 errors of 1 types, 1 warnings of 1 types)" in errors_page
    claim_page = page_text(message_site.root / "_build/html/messages.html")
    assert claim_page.count("RuntimeError: no such key: alpha 7") == 2  # under its claim, and the {error-ref}

    message_site.replace("probes/test_messages.py", "alpha 7", "beta 8")
    code, out = message_site.build()
    assert code == 0, out
    for page in ("errors.html", "messages.html"):
        text = page_text(message_site.root / "_build/html" / page)
        assert "no such key: beta 8" in text and "alpha 7" not in text, page
    code, out = message_site.build()  # nothing changed: no page is written, the search entries stay
    assert code == 0 and "reading sources... [" not in out and "writing output... [" not in out, out
    search = (message_site.root / "_build/html/searchindex.js").read_text()
    for target in ("message-", "claim-fixture.message.custom"):
        assert '"runtimeerror: no such key: beta 8":' in search and target in search
    assert "alpha 7" not in search


def test_an_error_ref_must_match_exactly_one_checked_message(message_site):
    message_site.replace("docs/messages.md", "{error-ref}`no such key`", "{error-ref}`never printed`")
    code, out = message_site.build()
    assert code != 0
    assert "docs/messages.md:11: WARNING: error reference 'never printed' matches no message checked by a probe; it must match exactly one [verified.error-ref]" in out
    pickled = message_site.root / "_build/html/.doctrees/environment.pickle"
    assert pickle.loads(pickled.read_bytes()).domaindata["verified"]["error_refs"]["messages"]
    code, out = message_site.build()  # a warm build reports it again
    assert code != 0 and "error reference 'never printed'" in out
