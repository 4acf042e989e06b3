"""Docutils nodes for the what-changed page: the newest step first, each opening with the
behaviour changes user code notices (before/after pairs of claims, verified.releases.changes), then,
folded, the differences that are not such changes, what the probes reported, the source
references and the API census; a table of every step closes the page.

What a probe reported (an assertion's text) is shown only inside a folded <details>."""
from docutils import nodes

from verified.releases import changes
from verified.site.render import claim_link, page_links, table


def _folded(summary, content):
    """`content` (nodes) inside a closed <details> with `summary`."""
    escaped = summary.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    opening = nodes.raw("", f'<details class="verified-folded"><summary>{escaped}</summary>', format="html")
    return [opening, *content, nodes.raw("", "</details>", format="html")]


def counted(n, singular, plural):
    """'1 internal difference', '5 internal differences'."""
    return f"{n} {singular if n == 1 else plural}"


def first_sentence(statement, limit=240):
    """The statement's first sentence (its first paragraph, at most `limit` characters)."""
    paragraph = " ".join(statement.split("\n\n")[0].split())
    end = next((i + 1 for i in range(len(paragraph) - 1)
                if paragraph[i] == "." and paragraph[i + 1] == " " and paragraph[i + 2:i + 3].isupper()
                and paragraph[:i].count('"') % 2 == 0), None)  # not inside a quotation
    sentence = paragraph[:end] if end else paragraph
    return sentence if len(sentence) <= limit else sentence[:limit - 1].rstrip() + "…"


def reported(verdict, message):
    """What a probe reported, without the verdict said twice ('not applicable: not applicable: …')."""
    message = message.strip()
    return message[len(verdict) + 1:].strip() if message.lower().startswith(verdict + ":") else message


def step_anchor(s):
    return "step-" + f"{s['from']}-to-{s['to']}".replace(" ", "-").replace(".", "-")


def _links(claims, builder, from_doc):
    cell = nodes.inline()
    for index, claim in enumerate(claims):
        if index:
            cell += nodes.Text(" · ")
        cell += claim_link(claim, builder, from_doc)
    return cell


def pairs_table(s, by_id, builder, from_doc):
    """The step's user-visible changes: API, the behaviour until and since, both claims."""
    rows = [[nodes.literal(text=p["api"]), nodes.Text(first_sentence(by_id[p["before"]].statement)),
             nodes.Text(first_sentence(by_id[p["after"]].statement)),
             _links([by_id[p["before"]], by_id[p["after"]]], builder, from_doc)] for p in s["pairs"]]
    return table(["API", f"Until {s['from_version']}", f"Since {s['to_version']}", "Claims (before · after)"],
                 rows, classes=["verified-changes-pairs"])


def _differences(found, by_id, builder, from_doc, with_reason=False):
    rows = []
    for c in found:
        claim = by_id[c["claim"]]
        rows.append([claim_link(claim, builder, from_doc),
                     nodes.Text(c["reason"] if with_reason else first_sentence(claim.statement, 160)),
                     nodes.Text(f"{c['before']} → {c['after']}")])
    return table(["Claim", "Why it is not user-visible" if with_reason else "Statement", "Verdict"], rows,
                 classes=["verified-changes-claims"])


def _reports(s, found):
    """What each probe reported on both releases, folded: the raw text of assertions."""
    rows = [[nodes.literal(text=c["claim"]), nodes.Text(reported(c["before"], c["before_message"]) or "—"),
             nodes.Text(reported(c["after"], c["after_message"]) or "—")]
            for c in found if c["before_message"] or c["after_message"]]
    if not rows:
        return []
    return _folded(f"What the probes reported ({len(rows)})",
                   [table(["Claim", s["from"], s["to"]], rows, classes=["verified-changes-reports"])])


def behaviour(s, by_id, builder, from_doc):
    """The step's changes: the pairs in the open, every other difference under its own fold."""
    found = []
    if s["pairs"]:
        found.append(pairs_table(s, by_id, builder, from_doc))
    else:
        found.append(nodes.paragraph(text="No before/after pair of claims marks a change at this step."))
    kinds = {kind: [c for c in s["claims"] if c["kind"] == kind] for kind in changes.KINDS}
    unexplained = [c for c in s["claims"] if c["kind"] in changes.UNEXPLAINED]
    if unexplained:
        found.append(nodes.paragraph(text=f"{len(unexplained)} other claim(s) changed verdict and are not yet "
                                          "a before/after pair:", classes=["verified-changes-note"]))
        found.append(_differences(unexplained, by_id, builder, from_doc))
    if kinds[changes.HIDDEN]:
        hidden = counted(len(kinds[changes.HIDDEN]), 'internal difference', 'internal differences')
        found.extend(_folded(f"Not user-visible: {hidden}",
                             [_differences(kinds[changes.HIDDEN], by_id, builder, from_doc, with_reason=True)]))
    if kinds[changes.FLAVOUR]:
        flavour = counted(len(kinds[changes.FLAVOUR]), 'claim', 'claims')
        found.extend(_folded(f"Build flavour: {flavour} about the build "
                             f"({s['from_flavour']}, then {s['to_flavour']}), not the release",
                             [_differences(kinds[changes.FLAVOUR], by_id, builder, from_doc)]))
    found.extend(_reports(s, s["claims"]))
    return found


def _measured(s, by_id, builder, from_doc):
    if not s.get("measured"):
        return []
    rows = [[claim_link(by_id[m["claim"]], builder, from_doc), nodes.Text(m["name"]),
             nodes.literal(text=str(m["before"])), nodes.literal(text=str(m["after"]))] for m in s["measured"]]
    return _folded(f"Measured figures that moved: {len(rows)}",
                   [table(["Claim", "Figure", s["from"], s["to"]], rows, classes=["verified-changes-measured"])])


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
        para += nodes.Text(f" ({c['kind']}): {first_sentence(c['statement'])}")
        items += nodes.list_item("", para)
    return _folded(f"Official notes: {counted(len(changed), 'statement', 'statements')} decided otherwise", [items])


def _references(s, builder, from_doc):
    found = []
    if s["sources"]:
        found.append(table(["Reference", s["from"], s["to"], "Change", "Pages"],
                           [[nodes.reference("", "", nodes.literal(text=r["ref"]), refuri=r["url"])
                             if r["url"] else nodes.literal(text=r["ref"]),
                             nodes.Text(r["before"]), nodes.Text(r["after"]), nodes.Text(r["kind"]),
                             page_links(r["pages"], builder, from_doc)] for r in s["sources"]],
                           classes=["verified-changes-sources"]))
    if s["moved"]:
        found.append(nodes.paragraph(
            text=f"{len(s['moved'])} references moved to another line, in {len(s['moved_by_file'])} files: "
                 + ", ".join(f"{path} ({n})" for path, n in s["moved_by_file"].items()) + ".",
            classes=["verified-moved-files"]))
    summary = (f"Source references: {len(s['sources'])} vanished or appeared, {len(s['moved'])} moved "
               "to another line")
    return _folded(summary, found or [nodes.paragraph(text="None vanished, appeared or moved.")])


def _census(s):
    census = s["census"]
    if census is None:
        return [nodes.paragraph(text="API census: one of these runs recorded none.")]
    found = []
    keys, ops = census["dispatch_keys"], census["operators"]
    found.append(nodes.paragraph(text=(
        f"Dispatch keys: {len(keys['added'])} added" + (f" ({', '.join(keys['added'])})" if keys["added"] else "")
        + f", {len(keys['removed'])} removed" + (f" ({', '.join(keys['removed'])})" if keys["removed"] else "")
        + ".")))
    if ops["added"] or ops["removed"]:
        found.append(table(["Change", "Operators"],
                           [[nodes.Text("added"), nodes.literal(text=", ".join(ops["added"]))],
                            [nodes.Text("removed"), nodes.literal(text=", ".join(ops["removed"]))]]))
    if ops["changed"]:
        found.append(table(["Operator", s["from"], s["to"]],
                           [[nodes.literal(text=c["name"]), nodes.literal(text=c["before"]),
                             nodes.literal(text=c["after"])] for c in ops["changed"]],
                           classes=["verified-changes-schemas"]))
    for title, key in (("Deprecation warnings of fixed calls", "warnings"), ("Defaults of arguments", "defaults")):
        if census[key]:
            found.append(nodes.paragraph(text=f"{title}, where they changed:"))
            found.append(table(["Call" if key == "warnings" else "Argument", s["from"], s["to"]],
                               [[nodes.literal(text=c["item"]), nodes.Text(c["before"]), nodes.Text(c["after"])]
                                for c in census[key]], classes=[f"verified-changes-{key}"]))
        else:
            found.append(nodes.paragraph(text=f"{title}: none changed."))
    summary = (f"API census: aten operators {ops['before']} → {ops['after']} ({len(ops['added'])} added, "
               f"{len(ops['removed'])} removed, {len(ops['changed'])} schemas changed)")
    return _folded(summary, found)


def summary_table(all_steps):
    rows = []
    for s in all_steps:
        counts = changes.tally(s["claims"])
        census = s["census"]
        ops = f"{census['operators']['before']} → {census['operators']['after']}" if census else "not recorded"
        rows.append([nodes.reference("", f"{s['from']} → {s['to']}", refid=step_anchor(s)),
                     nodes.Text(str(len(s["pairs"]))),
                     nodes.Text(str(sum(counts[k] for k in changes.UNEXPLAINED))),
                     nodes.Text(str(counts[changes.HIDDEN])), nodes.Text(str(counts[changes.FLAVOUR])),
                     nodes.Text(str(len(s["sources"]))), nodes.Text(ops)])
    return table(["Step", "User-visible changes", "Not yet explained", "Not user-visible", "Build flavour",
                  "References vanished or appeared", "aten operators"], rows, classes=["verified-changes-summary"])


def changes_section(claims, all_steps, builder, from_doc):
    """The what-changed page's body, from the steps between recorded releases
    (verified.releases.changes.steps, the newest first)."""
    section = nodes.container(classes=["verified-changes"])
    by_id = {c.id: c for c in claims}
    if not all_steps:
        section += nodes.paragraph(text="Fewer than two recorded runs: nothing to compare yet.")
        return section
    for s in all_steps:
        title = nodes.rubric(text=f"{s['from_version']} → {s['to_version']}", ids=[step_anchor(s)],
                             classes=["verified-changes-step"])
        section += title
        if not s["same_suite"]:
            section += nodes.paragraph(text="These runs used different probe suites: a change may come from the "
                                            "probes, not from torch.", classes=["verified-changes-note"])
        section.extend(behaviour(s, by_id, builder, from_doc))
        section.extend(_measured(s, by_id, builder, from_doc))
        section.extend(_official_notes(s, builder, from_doc))
        section.extend(_references(s, builder, from_doc))
        section.extend(_census(s))
    section += nodes.rubric(text="Every step at a glance", ids=["every-step"])
    section += summary_table(all_steps)
    return section
