"""The ``verified`` Sphinx domain: it holds what reading the pages recorded (verified.site.records),
resolves ``{claim-ref}`` as a cross-reference, and lists every claim and official-notes
statement in objects.inv, so that another Sphinx site can link to one through intersphinx
(``:external+verified:verified:claim:`tensor.view.shares-storage```). The user API of each side
of a before/after pair (``:api:``) is an object too, so that searching ``torch.jit.script`` finds
the claims that say what changed for it."""
from sphinx.domains import Domain, ObjType

from verified.releases import changes
from verified.site import build_results, records, render


def changed_apis(claims):
    """(claim, API name) for each side of every before/after pair (verified.releases.changes.pairs_of),
    a name per API its :api: lists."""
    sides = {}
    for listed, old, new in changes.pairs_of(claims):
        sides.setdefault(new.id, (new, listed))
        sides.setdefault(old.id, (old, listed))
    for _, (claim, listed) in sorted(sides.items()):
        for api in filter(None, (name.strip() for name in listed.split(","))):
            yield claim, api


class VerifiedDomain(Domain):
    name = records.DOMAIN
    label = "Verified"
    object_types = {"claim": ObjType("claim", "claim"), "statement": ObjType("note statement", "statement"),
                    "change": ObjType("change between releases", "change")}
    initial_data = records.initial_data()
    data_version = 1

    def clear_doc(self, docname):
        for kind in records.KINDS:
            self.data[kind].pop(docname, None)

    def merge_domaindata(self, docnames, otherdata):
        for kind in records.KINDS:
            for docname in docnames:
                if docname in otherdata[kind]:
                    self.data[kind][docname] = otherdata[kind][docname]

    def resolve_xref(self, env, fromdocname, builder, typ, target, node, contnode):
        """A claim, as a link to it followed by its status on each device; None for an unknown ID
        (the build reports it: report.unknown_claim_refs)."""
        if typ != "claim":
            return None
        claim = build_results.claims_by_id(env.app).get(target)
        if claim is None:
            return None
        return render.claim_reference(claim, build_results.outcomes_of(env.app, target), builder, fromdocname)

    def resolve_any_xref(self, env, fromdocname, builder, target, node, contnode):
        found = self.resolve_xref(env, fromdocname, builder, "claim", target, node, contnode)
        return [(f"{self.name}:claim", found)] if found is not None else []

    def get_objects(self):
        claims = list(records.every(self.env, "claims"))
        for claim in claims:
            yield claim.id, claim.id, "claim", claim.docname, render.claim_anchor(claim.id), 1
        for claim, api in changed_apis(claims):
            yield f"{api} ({claim.id})", api, "change", claim.docname, render.claim_anchor(claim.id), 1
        for statement in records.every(self.env, "statements"):
            yield statement.anchor, f"{statement.note} {statement.number}", "statement", statement.docname, \
                statement.anchor, 1
