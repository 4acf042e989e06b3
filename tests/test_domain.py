"""The `verified` domain's objects: the user API of each side of a before/after pair is searchable."""
from verified.claims import Claim
from verified.site.domain import changed_apis


def claim(claim_id, **kw):
    return Claim(id=claim_id, docname="page", file="page.md", line=1, statement="", **kw)


def test_both_sides_of_a_pair_are_listed_under_each_api_the_pair_names():
    claims = [claim("a.before"), claim("a.after", api="torch.jit.script, torch.jit.trace", replaces="a.before"),
              claim("b.before", api="torch.clamp"), claim("b.after", replaces="b.before"), claim("c.alone")]
    assert sorted((c.id, api) for c, api in changed_apis(claims)) == [
        ("a.after", "torch.jit.script"), ("a.after", "torch.jit.trace"),
        ("a.before", "torch.jit.script"), ("a.before", "torch.jit.trace"),
        ("b.after", "torch.clamp"), ("b.before", "torch.clamp")]


def test_a_claim_replacing_no_known_claim_is_no_change():
    assert list(changed_apis([claim("x", api="torch.clamp", replaces="gone")])) == []
