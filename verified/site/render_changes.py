"""Docutils nodes for the what-changed page: a summary of every step between recorded
releases, then per step the behaviour changes, source references and API census."""
from docutils import nodes

from verified.releases import changes
from verified.site.render import claim_link, page_links, table


def _folded(summary, content):
    """`content` (nodes) inside a closed <details> with `summary`."""
    escaped = summary.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    opening = nodes.raw("", f'<details class="verified-folded"><summary>{escaped}</summary>', format="html")
    return [opening, *content, nodes.raw("", "</details>", format="html")]


def _verdict(verdict, message):
    text = verdict + (f": {message}" if message else "")
    return nodes.inline("", text, classes=[f"verified-verdict-{verdict.replace(' ', '-')}"])


def _first_sentence(statement):
    paragraph = " ".join(statement.split("\n\n")[0].split())
    return paragraph if len(paragraph) <= 240 else paragraph[:239].rstrip() + "…"


def summary_table(all_steps):
    rows = []
    for s in all_steps:
        counts = changes.tally(s["claims"])
        census = s["census"]
        ops = f"{census['operators']['before']} → {census['operators']['after']}" if census else "not recorded"
        schemas = str(len(census["operators"]["changed"])) if census else "—"
        rows.append([nodes.reference("", f"{s['from']} → {s['to']}", refid=_step_anchor(s)),
                     nodes.Text(str(counts[changes.STARTS])), nodes.Text(str(counts[changes.STOPS])),
                     nodes.Text(str(counts[changes.CHANGED] + counts[changes.FLAVOUR])),
                     nodes.Text(str(len(s["sources"]))), nodes.Text(str(len(s["moved"]))),
                     nodes.Text(ops), nodes.Text(schemas)])
    return table(["Step", "Claims starting to hold", "Claims stopping", "Other claim changes",
                  "References vanished or appeared", "Lines moved", "aten operators", "Schemas changed"],
                 rows, classes=["verified-changes-summary"])


def _step_anchor(s):
    return "step-" + f"{s['from']}-to-{s['to']}".replace(" ", "-").replace(".", "-")


def _behaviour(s, by_id, builder, from_doc):
    if not s["claims"]:
        return [nodes.paragraph(text="No claim changed its outcome.")]
    rows = [[claim_link(by_id[c["claim"]], builder, from_doc), nodes.Text(_first_sentence(by_id[c["claim"]].statement)),
             nodes.Text(c["kind"]), _verdict(c["before"], c["before_message"]), _verdict(c["after"], c["after_message"])]
            for c in s["claims"]]
    return [table(["Claim", "Statement", "Change", s["from"], s["to"]], rows, classes=["verified-changes-claims"])]


def _official_notes(s, builder, from_doc):
    """The statements of PyTorch's notes (verified.site.notes) this step decides otherwise."""
    changed = s.get("official_notes") or []
    if not changed:
        return []
    items = nodes.bullet_list()
    for c in changed:
        para = nodes.paragraph()
        uri = builder.get_relative_uri(from_doc, c["page"]) + "#" + c["anchor"]
        para += nodes.reference("", f"{c['note']}, {c['section'] or 'no section'}", refuri=uri)
        para += nodes.Text(f" ({c['kind']}): {_first_sentence(c['statement'])}")
        items += nodes.list_item("", para)
    return [nodes.paragraph("", "", nodes.strong(text="Official notes")),
            nodes.paragraph(text="Statements of PyTorch's notes whose claims hold on one release and not the other:"),
            items]


def _references(s, builder, from_doc):
    found = []
    if s["sources"]:
        found.append(table(["Reference", s["from"], s["to"], "Change", "Pages"],
                           [[nodes.reference("", "", nodes.literal(text=r["ref"]), refuri=r["url"])
                             if r["url"] else nodes.literal(text=r["ref"]),
                             nodes.Text(r["before"]), nodes.Text(r["after"]), nodes.Text(r["kind"]),
                             page_links(r["pages"], builder, from_doc)] for r in s["sources"]],
                           classes=["verified-changes-sources"]))
    else:
        found.append(nodes.paragraph(text="No source reference vanished or appeared."))
    if s["moved"]:
        per_file = nodes.paragraph(classes=["verified-moved-files"])
        per_file += nodes.Text(f"{len(s['moved'])} references moved to another line, in "
                               f"{len(s['moved_by_file'])} files: ")
        per_file += nodes.Text(", ".join(f"{path} ({n})" for path, n in s["moved_by_file"].items()) + ".")
        found.append(per_file)
        detail = table(["Reference", s["from"], s["to"]],
                       [[nodes.reference("", "", nodes.literal(text=r["ref"]), refuri=r["url"])
                         if r["url"] else nodes.literal(text=r["ref"]), nodes.Text(r["before"]), nodes.Text(r["after"])]
                        for r in s["moved"]], classes=["verified-changes-moved"])
        found.extend(_folded("Every moved line", [detail]))
    return found


def _census(s):
    census = s["census"]
    if census is None:
        return [nodes.paragraph(text="One of these runs recorded no API census.")]
    found = []
    keys, ops = census["dispatch_keys"], census["operators"]
    line = nodes.paragraph()
    line += nodes.Text(f"Dispatch keys: {len(keys['added'])} added" + (f" ({', '.join(keys['added'])})"
                                                                          if keys["added"] else "")
                       + f", {len(keys['removed'])} removed" + (f" ({', '.join(keys['removed'])})"
                                                                 if keys["removed"] else "")
                       + f". aten operators (overloads): {ops['before']} → {ops['after']}, {len(ops['added'])} added, "
                       f"{len(ops['removed'])} removed, {len(ops['changed'])} schemas changed.")
    found.append(line)
    if ops["added"] or ops["removed"]:
        found.extend(_folded("Operators added and removed", [table(
            ["Change", "Operators"], [[nodes.Text("added"), nodes.literal(text=", ".join(ops["added"]))],
                                      [nodes.Text("removed"), nodes.literal(text=", ".join(ops["removed"]))]])]))
    if ops["changed"]:
        found.extend(_folded("Schemas that changed", [table(
            ["Operator", s["from"], s["to"]],
            [[nodes.literal(text=c["name"]), nodes.literal(text=c["before"]), nodes.literal(text=c["after"])]
             for c in ops["changed"]], classes=["verified-changes-schemas"])]))
    for title, key in (("Deprecation warnings of fixed calls", "warnings"), ("Defaults of arguments", "defaults")):
        if census[key]:
            found.append(nodes.paragraph(text=f"{title}, where they changed:"))
            found.append(table(["Call" if key == "warnings" else "Argument", s["from"], s["to"]],
                               [[nodes.literal(text=c["item"]), nodes.Text(c["before"]), nodes.Text(c["after"])]
                                for c in census[key]], classes=[f"verified-changes-{key}"]))
        else:
            found.append(nodes.paragraph(text=f"{title}: none changed."))
    return found


def changes_section(claims, all_steps, builder, from_doc):
    """The what-changed page's body, from the steps between recorded releases (verified.releases.changes.steps)."""
    section = nodes.container(classes=["verified-changes"])
    by_id = {c.id: c for c in claims}
    if not all_steps:
        section += nodes.paragraph(text="Fewer than two recorded runs: nothing to compare yet.")
        return section
    section += summary_table(all_steps)
    for s in all_steps:
        section += nodes.rubric(text=f"{s['from']} → {s['to']}", ids=[_step_anchor(s)])
        notes = []
        if not s["same_suite"]:
            notes.append("These runs used different probe suites: a change may come from the probes, not from torch.")
        if s["from_flavour"] != s["to_flavour"]:
            notes.append(f"The builds differ ({s['from_flavour']}, then {s['to_flavour']}): a claim marked as "
                         f"depending on the build is listed as a build-flavour change, not a release change.")
        for note in notes:
            section += nodes.paragraph(text=note, classes=["verified-changes-note"])
        section += nodes.paragraph("", "", nodes.strong(text="Behaviour"))
        section.extend(_behaviour(s, by_id, builder, from_doc))
        section.extend(_official_notes(s, builder, from_doc))
        section += nodes.paragraph("", "", nodes.strong(text="Source references"))
        section.extend(_references(s, builder, from_doc))
        section += nodes.paragraph("", "", nodes.strong(text="API census"))
        section.extend(_census(s))
    return section
