"""Docutils nodes for claims, badges, source links and tables."""
import ast
import functools
from pathlib import Path

from docutils import nodes

from verified.claims import outcomes
from verified.outcomes import BAD, DEVICES, LABELS, NOT_RUN_HERE, PASSED
from verified.releases import history as historylib
from verified.releases import matrix
from verified.releases.history import verdict
from verified.site import status_marks

COMMIT_URL = "https://github.com/pytorch/pytorch/tree/{commit}"


NO_SEARCH = "no-search"  # Sphinx's indexer skips a node with this class (probe code, badges, status lines)


def claim_anchor(claim_id):
    """A claim's HTML id: its dots as underscores (`claim-tensor_view_base-is-root`), so that
    `#claim-…` is a plain CSS selector; ids have no "_", so two claims never share one."""
    return f"claim-{claim_id.replace('.', '_')}"


def legacy_claim_anchor(claim_id):
    """The id claims had before (`claim-tensor.view.base-is-root`), kept on an empty span so old links land."""
    return f"claim-{claim_id}"


def badge(device, outcome):
    """A status badge whose text says the status (colour is only a second cue)."""
    css = outcome.replace(" ", "-")
    return nodes.inline("", f"{device}: {LABELS[outcome]}", classes=["verified-badge", f"verified-{css}"])


class status_mark(nodes.inline):
    """A claim's one status glyph. In HTML a span with role="img" whose aria-label and title say
    the status in words (visit_status_mark); other builders write the glyph as plain text."""


def visit_status_mark(translator, node):
    translator.body.append(translator.starttag(node, "span", "", role="img", title=node["title"],
                                               **{"aria-label": node["label"]}))


def depart_status_mark(translator, node):
    translator.body.append("</span>")


def mark(device_outcomes, about=""):
    """The status mark of a claim with these outcomes; `about` (a claim id) starts its title."""
    kind, label = status_marks.status(device_outcomes)
    said = f"{about}: {label}" if about else label
    return status_mark("", status_marks.glyph(kind), classes=["verified-mark", f"verified-mark-{kind}"],
                       label=said, title=said)


def claim_node(claim, device_outcomes, body, sources, probes, history="", notes=(), history_note=""):
    """A claim as the page shows it: the statement in the flow with one status mark; the id, the
    status per device, the history, the sources, the checked messages and the probes one click
    away, in a native <details> (no script, keyboard and screen-reader support for free, and
    everything stays in the HTML for search and for readers without JavaScript). Where the
    claim's history differs from "holds on every recorded release", `history_note` (the short
    form, verified.releases.history.short_line) is shown under the statement."""
    box = nodes.container(classes=["verified-claim"], ids=[claim_anchor(claim.id)])
    box += nodes.inline(ids=[legacy_claim_anchor(claim.id)])
    box += nodes.container("", *body, classes=["verified-claim-statement"])
    if history_note:
        box += nodes.paragraph("", history_note, classes=["verified-claim-history", NO_SEARCH])
    proof = nodes.container(classes=["verified-claim-proof", NO_SEARCH])  # the site search indexes none of it
    box += proof
    box = proof
    box += nodes.raw("", '<details class="verified-claim-details"><summary>', format="html")
    box += mark(device_outcomes, claim.id)
    box += nodes.raw("", "</summary>", format="html")
    facts = nodes.paragraph(classes=["verified-claim-header"])
    facts += nodes.reference("", "", nodes.literal(text=claim.id), refid=claim_anchor(claim.id),
                             classes=["verified-claim-id"])
    for device in status_marks.devices_shown(device_outcomes):
        facts += nodes.Text(" ")
        facts += badge(device, device_outcomes[device])
    box += facts
    if history:
        box += history_paragraph(history)
    if sources:
        line = nodes.paragraph(classes=["verified-claim-sources"])
        line += nodes.strong(text="Source: ")
        for index, record in enumerate(sources):
            if index:
                line += nodes.Text(" · ")
            line += source_link(record)
        box += line
    box.extend(notes)
    for label, code in probes:
        box += nodes.raw("", f'<details class="verified-probe"><summary>Probe: {_escape(label)}</summary>',
                         format="html")
        box += nodes.literal_block(code, code, language="python")
        box += nodes.raw("", "</details>", format="html")
    box += nodes.raw("", "</details>", format="html")
    return proof.parent


def history_paragraph(history):
    line = nodes.paragraph(classes=["verified-claim-history"])
    line += nodes.strong(text="Across releases: ")
    line += nodes.Text(history)
    return line


def probe_sources(entries, root):
    """[(label, source code)] of each distinct probe function named by `entries`."""
    seen, found = set(), []
    for entry in entries:
        key = (entry["file"], entry["function"])
        if key in seen:
            continue
        seen.add(key)
        found.append((f"{entry['file']}::{entry['function']}", function_source(Path(root, entry["file"]),
                                                                               entry["function"])))
    return found


def function_source(path, name):
    """The source of top-level function `name` in `path`, decorators included."""
    text = Path(path).read_text()
    for node in _parsed(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            start = min([d.lineno for d in node.decorator_list] + [node.lineno])
            return "\n".join(text.splitlines()[start - 1:node.end_lineno])
    return f"# {name} not found in {path.name}"


@functools.lru_cache(maxsize=64)
def _parsed(text):
    """A probe file's tree: one parse per file, not one per claim it checks."""
    return ast.parse(text)


KIND_LABELS = {  # what a reference's line is, as the pages say it (legend: docs/reference/sources.md)
    "definition": "definition",
    "declaration": "declaration",
    "registration": "registration",
    "raise-site": "raise site",
    "file": "file",
}


def source_link(record, title=None):
    """A link to the pinned line; a kind other than definition is said after it."""
    kind = record.get("kind")
    where = record["path"] + (f":{record['line']}" if record["line"] else "")
    text = title or (f"{record['path']} {record['symbol']}" if record["symbol"] else record["path"])
    classes = ["verified-src", f"verified-src-{record['status']}"] + ([f"verified-kind-{kind}"] if kind else [])
    hover = f"{where} — {record['status']}{' ' + KIND_LABELS[kind] if kind else ''}: {record['reason']}"
    if record["status"] == "broken":
        return nodes.literal(text=text, classes=classes)
    link = nodes.reference("", "", nodes.literal(text=text), refuri=record["url"], classes=classes,
                           reftitle=hover)
    notes = [KIND_LABELS[kind]] if kind in ("declaration", "registration", "raise-site") else []
    notes += ["unverified"] if record["status"] == "unverified" else []
    if notes:
        return nodes.inline("", "", link, nodes.Text(f" ({', '.join(notes)})"), classes=classes)
    return link


def source_map_table(rows):
    """File, Symbol, What it does. The file links to the pinned line (line, kind and status in
    the link's title); a kind other than definition, or a status other than verified, is said
    after the symbol. `rows`: [(record, [inline nodes of the description])]."""
    body = []
    for record, what in rows:
        kind = KIND_LABELS.get(record.get("kind"), "")
        line = f"line {record['line']}" if record["line"] else "the file"
        path = breakable_path(record["path"])
        title = f"pinned to {line}{', ' + kind if kind else ''}: {record['reason']}"
        where = path if record["status"] == "broken" else nodes.reference("", "", path, refuri=record["url"],
                                                                          reftitle=title)
        symbol = nodes.inline()
        if record["symbol"]:
            symbol += nodes.literal(text=record["symbol"])
        said = ([kind] if kind not in ("definition", "") else []) + \
            ([record["status"]] if record["status"] != "verified" else [])
        if said:
            symbol += nodes.inline("", f" ({', '.join(said)})", classes=["verified-src-kind"])
        body.append([where, symbol, nodes.inline("", "", *what)])
    return table(["File", "Symbol", "What it does"], body, classes=["verified-source-map"])


def breakable_path(path):
    """`path` as code that a narrow column may break after a "/" (an HTML <wbr>), not mid-name."""
    literal = nodes.literal()
    for index, part in enumerate(path.split("/")):
        if index:
            literal += nodes.Text("/")
            literal += nodes.raw("", "<wbr>", format="html")
        literal += nodes.Text(part)
    return literal


def kind_counts(records):
    """{kind: number of distinct references} over source records (a reference cited twice counts once)."""
    distinct = {(r["path"], r["symbol"]): r for r in records if r["status"] != "broken"}
    counts = {}
    for record in distinct.values():
        counts[record.get("kind")] = counts.get(record.get("kind"), 0) + 1
    return counts


def kinds_sentence(records):
    """`N source references: D pinned to a definition; the rest: 3 declarations, 1 raise site, 2 files`."""
    counts = kind_counts(records)
    rest = [f"{counts[k]} {KIND_LABELS[k]}{'s' if counts[k] != 1 else ''}" for k in KIND_LABELS
            if k != "definition" and counts.get(k)]
    total = sum(counts.values())
    text = f"{total} source reference{'s' if total != 1 else ''}, {counts.get('definition', 0)} pinned to a definition"
    return text + (f"; the rest: {', '.join(rest)}" if rest else "")


def page_status(run, page_claims, by_claim, page_sources=(), histories=None):
    """The line under a page's title: the torch and devices that verified it, its claims, its
    sources, and once for the page whether its claims hold on every recorded release
    (`histories`: {claim id: verified.releases.history.claim_history}); a claim whose history differs
    says so itself."""
    torch = run["torch"]
    para = nodes.paragraph(classes=["verified-page-status", NO_SEARCH])
    para += nodes.Text(f"Verified with torch {torch['version']} (")
    para += nodes.reference("", torch["git_version"][:10], refuri=COMMIT_URL.format(commit=torch["git_version"]))
    ran = [d for d in DEVICES if d in run["devices"]]
    missing = [d for d in DEVICES if d not in run["devices"]]
    text = f") on {', '.join(ran)}"
    if missing:
        text += "; " + ", ".join(f"{d} {NOT_RUN_HERE}" for d in missing)
    text += "."
    if page_claims:
        verified = {d: sum(outcomes(by_claim.get(c.id, []))[d] == PASSED for c in page_claims) for d in DEVICES}
        text += f" This page: {len(page_claims)} claims; " + ", ".join(
            f"{verified[d]} verified on {d}" for d in ran) + "."
        text += releases_sentence([(histories or {}).get(c.id, []) for c in page_claims])
    if page_sources:
        text += f" {kinds_sentence(page_sources)}."
    para += nodes.Text(text)
    return para


def releases_sentence(histories):
    """' All hold on every recorded release (2.9.1–2.14.1).' or how many do; '' with no history."""
    recorded = [h for h in histories if h]
    if not recorded:
        return ""
    others = [h for h in recorded if not historylib.holds_on_every_release(h)]
    holding = len(recorded) - len(others)
    span = historylib.releases(recorded[0])
    if holding == len(histories):
        return f" All hold on every recorded release ({span})."
    newer = sum(1 for h in others if any(step["verdict"] == matrix.MISSING for step in h))
    parts = [f"{holding} of them hold on every recorded release ({span})"]
    if newer:  # a run recorded before the claim existed says nothing of that release
        parts.append(f"{newer} {'is' if newer == 1 else 'are'} newer than some recorded runs, missing there")
    if len(histories) - holding - newer:
        parts.append("each of the others says where it differs")
    return " " + "; ".join(parts) + "."


def summary(claims, by_claim, run, source_records):
    """One paragraph: how much of the site this build verified."""
    para = nodes.paragraph(classes=["verified-summary"])
    tallies = [sum(outcomes(by_claim.get(c.id, []))[d] == PASSED for c in claims) for d in DEVICES]
    text = f"This build: {len(claims)} claims; " + ", ".join(
        f"{n} verified on {d}" if d in run["devices"] else f"{d} {NOT_RUN_HERE}"
        for n, d in zip(tallies, DEVICES))
    text += (f". {kinds_sentence(source_records)}. Every line is read from torch "
             f"{run['torch']['version']} ({run['torch']['git_version'][:10]}).")
    para += nodes.Text(text)
    return para


def source_index_table(sources, builder, from_doc):
    """Every distinct source reference of the site (`sources`: build_results.distinct_sources):
    where it points, its kind and status, who cites it; above the table, how many there are of
    each kind."""
    rows = []
    for record in sources:
        path, symbol = record["path"], record["symbol"]
        rows.append([nodes.literal(text=path), nodes.literal(text=symbol) if symbol else nodes.Text(""),
                     source_link(dict(record, symbol=None, kind=None),
                                 f"L{record['line']}" if record["line"] else "file"),
                     nodes.Text(KIND_LABELS.get(record.get("kind"), "—")), nodes.Text(record["status"]),
                     page_links(sorted(record["pages"]), builder, from_doc)])
    section = nodes.container(classes=["verified-source-index"])
    counts = kind_counts(sources)
    tally = nodes.paragraph(classes=["verified-source-kinds"])
    tally += nodes.Text("By kind: " + "; ".join(f"{KIND_LABELS[k]}: {counts.get(k, 0)}" for k in KIND_LABELS)
                        + f" (of {sum(counts.values())} references).")
    section += tally
    section += table(["File", "Symbol", "Pinned", "Kind", "Status", "Cited on"], rows,
                     classes=["verified-source-index"])
    return section


def claim_index_table(claims, by_claim, builder, from_doc):
    body = []
    for claim in claims:
        uri = builder.get_relative_uri(from_doc, claim.docname) + "#" + claim_anchor(claim.id)
        device_outcomes = outcomes(by_claim.get(claim.id, []))
        body.append([nodes.reference("", "", nodes.literal(text=claim.id), refuri=uri),
                     nodes.Text(claim.statement.split("\n\n")[0])]
                    + [badge(d, device_outcomes[d]) for d in DEVICES])
    return table(["Claim", "Statement"] + list(DEVICES), body, classes=["verified-claim-index"])


def cell(result):
    css = result.replace(" ", "-")
    return nodes.inline("", LABELS.get(result, result), classes=["verified-badge", f"verified-{css}"])


def verdict_cell(column, claim_id):
    """A matrix cell: the outcome, and for a failure whether the behaviour differs, the API is
    absent, or the probe broke (verified.releases.history)."""
    result = column.outcome(claim_id)
    if result not in BAD:
        return cell(result)
    found, message = verdict(column.by_claim.get(claim_id, []), column.device)
    css = result.replace(" ", "-")
    return nodes.inline("", f"{LABELS.get(result, result)}: {found}", classes=["verified-badge", f"verified-{css}"],
                        title=message)


def claim_reference(claim, device_outcomes, builder, from_doc, show_id=False):
    """A citation of a claim: a small status mark linked to the claim, its id and status in the
    link's title and the mark's label (the id also shown, with `show_id`, where a list of claims
    is the content, as in the error index)."""
    kind, label = status_marks.status(device_outcomes)
    uri = builder.get_relative_uri(from_doc, claim.docname) + "#" + claim_anchor(claim.id)
    ref = nodes.reference("", "", refuri=uri, reftitle=f"{claim.id}: {label}", internal=True,
                          classes=["verified-claim-ref", f"verified-mark-{kind}"])
    if show_id:
        ref += nodes.literal(text=claim.id)
        ref += nodes.Text(" ")
    ref += mark(device_outcomes, f"claim {claim.id}")
    return ref


CITATION_SEPARATORS = {"", ",", ";", "and", ", and"}


def _is_citation(node):
    return isinstance(node, nodes.reference) and "verified-claim-ref" in node["classes"]


def tidy_citations(doctree):
    """`text ({claim-ref}`a`, {claim-ref}`b`).` reads `text✓✓.`: a parenthesis that holds
    nothing but citations and their separators gives way to the marks themselves."""
    for parent in list(doctree.findall(nodes.TextElement)):
        index = 0
        while index < len(parent.children):
            end = _citation_group_end(parent.children, index)
            if end is None:
                index += 1
                continue
            opening, closing = parent.children[index], parent.children[end]
            citations = [c for c in parent.children[index + 1:end] if _is_citation(c)]
            replacement = [nodes.Text(str(opening).rstrip()[:-1].rstrip()), *citations,
                           nodes.Text(str(closing).lstrip()[1:])]
            parent[index:end + 1] = replacement
            index += len(replacement) - 1


def _citation_group_end(children, start):
    """The index of the text that closes a citations-only parenthesis opened at children[start]."""
    opening = children[start]
    if not isinstance(opening, nodes.Text) or not str(opening).rstrip().endswith("("):
        return None
    seen = False
    for index in range(start + 1, len(children)):
        child = children[index]
        if _is_citation(child):
            seen = True
        elif isinstance(child, nodes.Text) and seen and str(child).lstrip().startswith(")"):
            return index
        elif not (isinstance(child, nodes.Text) and seen and str(child).strip() in CITATION_SEPARATORS):
            return None
    return None


def claim_link(claim, builder, from_doc):
    uri = builder.get_relative_uri(from_doc, claim.docname) + "#" + claim_anchor(claim.id)
    return nodes.reference("", "", nodes.literal(text=claim.id), refuri=uri)


def page_links(docnames, builder, from_doc):
    links = nodes.inline()
    for index, docname in enumerate(docnames):
        if index:
            links += nodes.Text(", ")
        links += nodes.reference("", docname, refuri=builder.get_relative_uri(from_doc, docname))
    return links


def columns_table(columns):
    rows = [[nodes.Text(c.label), nodes.literal(text=c.torch), nodes.Text(c.flavour), nodes.Text(c.source),
             nodes.Text(c.date or ""), nodes.literal(text=(c.repository_commit or "?")[:10]),
             nodes.literal(text=c.suite or "?")]
            for c in columns]
    return table(["Column", "torch", "Build", "Results", "Date", "Project commit", "Probe suite"], rows,
                 classes=["verified-columns"])


def _matrix_table(claims, columns, builder, from_doc):
    rows = [[claim_link(claim, builder, from_doc)] + [verdict_cell(column, claim.id) for column in columns]
            for claim in claims]
    headers = ["Claim"] + [f"{c.label}{' (live)' if c.source == 'this build' else ''}" for c in columns]
    return table(headers, rows, classes=["verified-matrix-table"])


def matrix_section(claims, columns, builder, from_doc, area=""):
    """The matrix, newest release first. Without `area`: only the claims whose outcome differs
    between columns of a device, grouped by area. With `area` (a claim ID's first word): every
    claim of that area, with its totals per column."""
    section = nodes.container(classes=["verified-matrix"])
    columns = matrix.newest_first(columns)
    if area:
        mine = [c for c in claims if matrix.area_of(c.id) == area]
        if not mine:
            section += nodes.paragraph(text=f"No claim of the site is in area {area!r}.")
            return section
        totals = matrix.area_totals([c.id for c in mine], columns)[area]
        section += table(["Column", "Claims by outcome"],
                         [[nodes.Text(column.label + (" (live)" if column.source == "this build" else "")),
                           nodes.Text(", ".join(f"{n} {LABELS.get(o, o)}" for o, n in sorted(tally.items())))]
                          for column, tally in zip(columns, totals)], classes=["verified-matrix-totals"])
        section += _matrix_table(mine, columns, builder, from_doc)
        return section
    section += columns_table(columns)
    differing = [c for c in claims if matrix.differs_somewhere(c.id, columns)]
    by_area = {}
    for claim in claims:
        by_area.setdefault(matrix.area_of(claim.id), [0, []])[0] += 1
    for claim in differing:
        by_area[matrix.area_of(claim.id)][1].append(claim)
    newer = sum(1 for c in claims if matrix.missing_somewhere(c.id, columns))
    section += nodes.paragraph(text=f"{len(differing)} of {len(claims)} claims have an outcome that differs "
                                    "between the columns that ran them; the others are the same in every such "
                                    "column. Missing from some column (that run was recorded before the claim "
                                    f"existed): {newer} claim{'s' if newer != 1 else ''}, whose cells are on the "
                                    "area pages.",
                               classes=["verified-matrix-count"])
    for name in sorted(by_area):
        total, shown = by_area[name]
        if not shown:
            continue
        section += nodes.rubric(text=f"Area: {name} ({len(shown)} of {total} claims differ)")
        section += _matrix_table(shown, columns, builder, from_doc)
    return section


def table(headers, rows, classes=()):
    tbl = nodes.table(classes=list(classes))
    group = nodes.tgroup(cols=len(headers))
    tbl += group
    group.extend(nodes.colspec(colwidth=1) for _ in headers)
    head = nodes.thead()
    head += _row([nodes.Text(h) for h in headers])
    group += head
    tbody = nodes.tbody()
    tbody.extend(_row(cells) for cells in rows)
    group += tbody
    return tbl


def _row(cells):
    row = nodes.row()
    for cell in cells:
        entry = nodes.entry()
        entry += nodes.paragraph("", "", cell)
        row += entry
    return row


def counts(report):
    """One line: claims per outcome and device, sources per status and per kind."""
    parts = []
    for device in DEVICES:
        tally = {}
        for claim in report["claims"]:
            tally[claim["outcome"][device]] = tally.get(claim["outcome"][device], 0) + 1
        parts.append(f"{device}: " + ", ".join(f"{n} {o}" for o, n in sorted(tally.items())))
    status, kinds = {}, {}
    for source in report["sources"]:
        status[source["status"]] = status.get(source["status"], 0) + 1
        if source.get("kind"):
            kinds[source["kind"]] = kinds.get(source["kind"], 0) + 1
    with_line = sum(1 for s in report["sources"] if s["status"] == "verified" and s["line"])
    return (f"{len(report['claims'])} claims ({'; '.join(parts)}); {len(report['sources'])} source references ("
            + ", ".join(f"{n} {s}" for s, n in sorted(status.items())) + f"; {with_line} verified with a line; "
            + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) + ")")


def _escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


