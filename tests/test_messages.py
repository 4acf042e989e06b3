"""The error-message index: what a probe's raises/warns block records, how messages group,
and what a build shows of them."""
import html
import json
import pickle
import re

import pytest

from verified.claims import Claim
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
        warnings.warn("look out: {key}")  # the probe's own warning: not indexed
    with pytest.warns(UserWarning):  # no match=: indexed all the same
        torch.tensor([1.0]).storage()
    with pytest.raises(KeyError):  # the probe's own raise: not indexed
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
            "messages": [{"kind": kind, "type": kind_type, "message": text, **(extra[0] if extra else {})}
                         for kind, kind_type, text, *extra in records]}


def claim(claim_id, docname, cause="", fix=""):
    return Claim(claim_id, docname, f"docs/{docname}.md", 1, "statement", cause=cause, fix=fix)


def test_one_line_drops_terminal_escapes_joins_lines_and_keeps_the_whole_text():
    assert messages.one_line("\n\x1b[1mWeights\x1b[0m only:\n\tsecond line") == "Weights only: second line"
    assert messages.one_line("x" * 400 + " Unsupported operand 118") == "x" * 400 + " Unsupported operand 118"


def test_one_entry_per_normalised_message_with_all_its_claims_causes_and_raise_site():
    at = {"raised_at": {"path": "torch/nn/modules/module.py", "line": 12}}
    items = messages.index([
        entry(["a.one"], ("error", "RuntimeError", "size 3 is bad"), function="test_a"),
        entry(["a.two", "not.on.site"], ("error", "RuntimeError", "size 12 is bad", at), function="test_b"),
        entry(["a.two"], ("warning", "UserWarning", "size 3 is bad")),
        entry(["not.on.site"], ("error", "ValueError", "orphan")),
    ], {"a.one": claim("a.one", "page/one"), "a.two": claim("a.two", "page/two", cause="a bad size", fix="fix it")},
        pin=lambda path, line: f"https://x/{path}#L{line}")
    assert [(i["kind"], i["type"], i["normalised"]) for i in items] == [
        ("error", "RuntimeError", "size ‹n› is bad"), ("warning", "UserWarning", "size ‹n› is bad")]
    first = items[0]
    assert first["message"] == "size 3 is bad" and first["variants"] == ["size 12 is bad"]
    assert first["claims"] == ["a.one", "a.two"] and first["pages"] == ["page/one", "page/two"]
    assert first["probes"] == ["probes/test_x.py::test_a", "probes/test_x.py::test_b"]
    assert first["causes"] == [{"claim": "a.two", "cause": "a bad size", "fix": "fix it"}]
    assert first["raised_at"] == {"path": "torch/nn/modules/module.py", "line": 12, "how": "python",
                                  "url": "https://x/torch/nn/modules/module.py#L12"}
    assert items[1]["raised_at"] is None
    assert messages.anchor(first) != messages.anchor(items[1])


def test_a_cpp_message_is_pinned_by_the_raise_site_oracle():
    oracle = [("shape '[4, 2]' is invalid for input of size 6\nException raised from infer_size_impl at "
               "/build/aten/src/ATen/InferSize.h:72 (most recent call first):\n#0 ...",
               {"path": "aten/src/ATen/InferSize.h", "line": 72, "function": "infer_size_impl"})]
    items = messages.index([entry(["a.one"], ("error", "RuntimeError", "shape '[3]' is invalid for input of size 2"))],
                           {"a.one": claim("a.one", "p")}, cpp_sites=oracle)
    assert items[0]["raised_at"] == {"path": "aten/src/ATen/InferSize.h", "line": 72, "function": "infer_size_impl",
                                     "how": "c++"}


def test_claims_that_quote_a_message_without_its_entry():
    quotes = {"a.one": messages.quoted_messages("Viewing fails with `RuntimeError: shape '[4, 2]' is invalid for "
                                                "input of size 6`; also `KeyError` alone is no quote."),
              "a.two": messages.quoted_messages("It says `ValueError: device_ids can only be None or a list`.")}
    assert quotes["a.one"] == [("RuntimeError", "shape '[4, 2]' is invalid for input of size 6")]
    items = messages.index([entry(["a.one"], ("error", "RuntimeError", "shape '[9, 9]' is invalid for input of size 7"))],
                           {"a.one": claim("a.one", "p"), "a.two": claim("a.two", "p")})
    assert messages.quotes_without_entry(quotes, items) == [
        ("a.two", "ValueError", "device_ids can only be None or a list")]
    # gaps in a quote ("...", a <placeholder>), a quote wrapped onto two lines, a KeyError's repr
    quotes = {"a.one": messages.quoted_messages("`RuntimeError: Could not run '<op>' with\n  arguments from the "
                                                "'SparseCPU' backend`, `KeyError: can't contain \".\"`")}
    items = messages.index([entry(["a.one"], ("error", "RuntimeError", "Could not run 'aten::add' with arguments "
                                              "from the 'SparseCPU' backend. This could be ..."),
                                  ("error", "KeyError", "'can\\'t contain \".\"'"))], {"a.one": claim("a.one", "p")})
    assert messages.quotes_without_entry(quotes, items) == []


def test_a_quote_is_normalised_whole_before_its_gaps_and_ns_stands_for_a_namespace():
    def missing(page, *records):
        items = messages.index([entry(["a.one"], *records)], {"a.one": claim("a.one", "p")})
        return messages.quotes_without_entry({"a.one": messages.quoted_messages(page)}, items)

    # <locals> inside a quoted name is the name's text, not a placeholder
    pickle = ("error", "AttributeError", "Can't pickle local object 'test_x.<locals>.<lambda>'")
    assert missing("`AttributeError: Can't pickle local object 'test_x.<locals>.<lambda>'`", pickle) == []
    assert missing("`AttributeError: Can't pickle global object 'test_x.<locals>.<lambda>'`", pickle) != []
    # a KeyError quoted as Python prints it (the repr), as well as its bare text
    key = ("error", "KeyError", "'param_groups'")
    assert missing("`KeyError: 'param_groups'`", key) == missing("`KeyError: param_groups`", key) == []
    # a path after "..." is still a path
    gloo = ("error", "RuntimeError", "[enforce fail at /w/third_party/gloo/gloo/context.cc:23] rank < size. 2 vs 1")
    assert missing("`RuntimeError: [enforce fail at .../gloo/context.cc:...] rank < size. 2 vs 1`", gloo) == []
    # a bare ns is any namespace: `ns::foo`, `ns.foo.default`, `the namespace ns;`
    ops = [("error", "RuntimeError", "operator probe_ns::zzz does not exist"),
           ("error", "RuntimeError", "Trying to backward through probe_ns.f.default but no autograd formula"),
           ("error", "RuntimeError", "Only a single TORCH_LIBRARY can be used to register the namespace probe_ns; "
                                     "please put all of your definitions in a single TORCH_LIBRARY block.")]
    assert missing("`RuntimeError: operator ns::zzz does not exist`, `RuntimeError: Trying to backward through "
                   "ns.f.default but no autograd formula`, `RuntimeError: Only a single TORCH_LIBRARY can be used to "
                   "register the namespace ns; please put all of your definitions`", *ops) == []
    # ... but only the whole word, and the rest of the quote must still be there
    assert [q for _, _, q in missing("`RuntimeError: operator ns::yyy does not exist`, "
                                     "`RuntimeError: operator nsx::zzz does not exist`", *ops)] == [
        "operator ns::yyy does not exist", "operator nsx::zzz does not exist"]


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
    assert [(e["type"], e["message"][:20], e["claims"], e["pages"]) for e in report["errors"]] == [
        ("RuntimeError", "no such key: alpha 7", ["fixture.message.custom"], ["messages"]),
        ("RuntimeError", "shape '[4, 2]' is in", ["fixture.message.view"], ["messages"]),
        ("UserWarning", "TypedStorage is depr", ["fixture.message.custom"], ["messages"]),  # caught without match=
    ]
    raised = report["errors"][0]["raised_at"]  # torch._check raises in torch/__init__.py
    assert raised["how"] == "python" and raised["path"].startswith("torch/") and "#L" in raised["url"]
    errors_page = page_text(message_site.root / "_build/html/errors.html")
    assert "RuntimeError: no such key: alpha 7" in errors_page and "unchecked text" not in errors_page
    assert "look out" not in errors_page  # the probe's own warning
    assert "3 distinct messages (2 errors of 1 types, 1 warnings of 1 types)" in errors_page
    errors_html = (message_site.root / "_build/html/errors.html").read_text()
    assert 'id="verified-error-query"' in errors_html and "verified-errors.js" in errors_html
    assert "verified-errors.js" in (message_site.root / "_build/html/search.html").read_text()
    data = (message_site.root / "_build/html/_static/verified-errors-data.js").read_text()
    assert data.startswith("window.VERIFIED_ERRORS = ") and '"no such key: alpha 7"' in data and '"rules"' in data
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
    for target in ("message-", "claim-fixture_message_custom"):
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
