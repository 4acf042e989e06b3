"""Docutils nodes for the error-message index, a claim's checked messages and {error-ref}."""
import re

from docutils import nodes
from sphinx import addnodes

from verified.probing import messages
from verified.site.render import NO_SEARCH, claim_reference

KIND_TITLES = {messages.ERROR: "Errors", messages.WARNING: "Warnings"}


def type_anchor(kind, type_name):
    return f"{kind}-{type_name.lower().replace('.', '-').replace('_', '-')}"


def search_forms(item):
    """The texts a reader may paste for a message: with and without its type, whole and its
    first sentence (';' would split an index entry in two, so it becomes ',')."""
    text = messages.one_line(item["message"])
    first_sentence = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    forms = {f"{item['type']}: {text}", text, f"{item['type']}: {first_sentence}", first_sentence}
    return sorted(form.replace(";", ",") for form in forms if form)


def search_entries(item, target_id):
    """Index entries (invisible) that make the site search rank `target_id` first for a pasted
    message: Sphinx's search scores an index entry that contains the query at up to 100, where
    a page that merely holds its words scores 5."""
    return addnodes.index(entries=[("single", form, target_id, "main", None) for form in search_forms(item)])


FOLD_AT = 300  # characters of a message shown before the rest folds away (the rest is on the page)


def _message_literal(item):
    return nodes.literal(text=f"{item['type']}: {messages.one_line(item['message'])}")


def _message_shown(item):
    """The message whole; a long one shows its first FOLD_AT characters, the rest one click away."""
    text = f"{item['type']}: {messages.one_line(item['message'])}"
    if len(text) <= FOLD_AT:
        return [nodes.literal(text=text)]
    return [nodes.raw("", '<details class="verified-error-fold"><summary>', format="html"),
            nodes.literal(text=text[:FOLD_AT] + "…"), nodes.raw("", "</summary>", format="html"),
            nodes.literal(text=text), nodes.raw("", "</details>", format="html")]


def _cause_lines(item, claims, outcomes_of, builder, from_doc):
    """'Cause: … Fix: …' per claim that gives them, each with the mark of its claim."""
    found = []
    for given in item["causes"]:
        line = nodes.paragraph(classes=["verified-error-cause"])
        if given["cause"]:
            line += nodes.strong(text="Cause: ")
            line += nodes.Text(given["cause"] + " ")
        if given["fix"]:
            line += nodes.strong(text="Fix: ")
            line += nodes.Text(given["fix"] + " ")
        line += claim_reference(claims[given["claim"]], outcomes_of(given["claim"]), builder, from_doc)
        found.append(line)
    return found


def _raise_site_line(item):
    site = item["raised_at"]
    line = nodes.paragraph(classes=["verified-error-raised", NO_SEARCH])
    line += nodes.strong(text="Raised at: ")
    where = f"{site['path']}:{site['line']}" + (f" ({site['function']})" if site.get("function") else "")
    how = "the raise line the traceback named" if site["how"] == "python" else \
        "read off this build's error (verified/raise_sites.py)"
    line += nodes.reference("", "", nodes.literal(text=where), refuri=site["url"], reftitle=how) \
        if site.get("url") else nodes.literal(text=where)
    return line


SEARCH_BOX = """<div class="verified-error-search" role="search">
<label for="verified-error-query">Paste the message you got</label>
<textarea id="verified-error-query" rows="2" spellcheck="false"
 placeholder="RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 256x10)"></textarea>
<ol id="verified-error-matches" aria-live="polite"></ol>
</div>"""


def error_index_section(items, claims, outcomes_of, builder, from_doc):
    """Every checked message, grouped by kind and exception or warning type, each with the
    claims whose probes produced it and their status. `outcomes_of(claim_id)` gives the badges."""
    section = nodes.container(classes=["verified-error-index"])
    kinds = {kind: [i for i in items if i["kind"] == kind] for kind in KIND_TITLES}
    types = {kind: sorted({i["type"] for i in group}) for kind, group in kinds.items()}
    intro = nodes.paragraph(classes=["verified-error-summary"])
    intro += nodes.Text(f"{len(items)} distinct messages ({len(kinds[messages.ERROR])} errors of "
                        f"{len(types[messages.ERROR])} types, {len(kinds[messages.WARNING])} warnings of "
                        f"{len(types[messages.WARNING])} types), checked by the probes of "
                        f"{len({c for i in items for c in i['claims']})} claims in this build.")
    section += intro
    without = sum(1 for i in items if not i["causes"])
    counts = nodes.paragraph(classes=["verified-error-summary", NO_SEARCH])
    counts += nodes.Text(f"{len(items) - without} of them with a cause and fix from their claims; "
                         f"{sum(1 for i in items if i['raised_at'])} pinned to the line that raises them.")
    section += counts
    section += nodes.raw("", SEARCH_BOX, format="html")
    for kind, group in kinds.items():
        if not group:
            continue
        jump = nodes.paragraph(classes=["verified-error-types", NO_SEARCH])
        jump += nodes.strong(text=f"{KIND_TITLES[kind]}: ")
        for index, type_name in enumerate(types[kind]):
            if index:
                jump += nodes.Text(" · ")
            count = sum(1 for i in group if i["type"] == type_name)
            jump += nodes.reference("", f"{type_name} ({count})", refid=type_anchor(kind, type_name))
        section += jump
    for kind, group in kinds.items():
        for type_name in types[kind]:
            section += nodes.rubric(text=f"{type_name} ({KIND_TITLES[kind].lower()})",
                                    ids=[type_anchor(kind, type_name)])
            entries = nodes.bullet_list(classes=["verified-error-list"])
            for item in (i for i in group if i["type"] == type_name):
                entry = nodes.list_item(ids=[messages.anchor(item)])
                entry += nodes.paragraph("", "", search_entries(item, messages.anchor(item)), *_message_shown(item),
                                         classes=["verified-error-message"])
                entry.extend(_cause_lines(item, claims, outcomes_of, builder, from_doc))
                if item["raised_at"]:
                    entry += _raise_site_line(item)
                explained = nodes.paragraph(classes=["verified-error-claims", NO_SEARCH])
                explained += nodes.Text("Explained by ")
                for index, claim_id in enumerate(item["claims"]):
                    if index:
                        explained += nodes.Text(" · ")
                    explained += claim_reference(claims[claim_id], outcomes_of(claim_id), builder, from_doc,
                                                 show_id=True)
                entry += explained
                entries += entry
            section += entries
    return section


def _index_uri(builder, from_doc, index_doc, item):
    return builder.get_relative_uri(from_doc, index_doc) + "#" + messages.anchor(item)


def claim_messages(items, index_doc, builder, from_doc, claim_anchor):
    """The line under a claim naming the messages its probes checked, each linked to the index
    (and found by the site search: see search_entries)."""
    line = nodes.paragraph(classes=["verified-claim-messages"])
    for item in items:
        line += search_entries(item, claim_anchor)
    line += nodes.strong(text="Message checked: " if len(items) == 1 else "Messages checked: ")
    for index, item in enumerate(items):
        if index:
            line += nodes.Text(" · ")
        literal = _message_literal(item)
        line += nodes.reference("", "", literal, refuri=_index_uri(builder, from_doc, index_doc, item)) \
            if index_doc else literal
    return line


def error_reference(item, index_doc, builder, from_doc):
    """{error-ref}: the message as this build produced it, linked to its index entry."""
    literal = _message_literal(item)
    if not index_doc:
        return literal
    return nodes.reference("", "", literal, refuri=_index_uri(builder, from_doc, index_doc, item),
                           classes=["verified-error-ref"])
