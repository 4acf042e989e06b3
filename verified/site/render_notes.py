"""Docutils nodes for the checked official notes (verified.site.notes): a note's header, one
statement with its verdict and deciding claims, and the site-wide summary."""
import re

from docutils import nodes

from verified.site import notes as noteslib
from verified.site.render import table


def note_header(note, statements, claim_outcomes):
    """'Read: docs/source/notes/x.md at pytorch/pytorch@abcdef1234. 41 statements: …'"""
    para = nodes.paragraph(classes=["verified-note-header"])
    para += nodes.Text("Read: ")
    para += nodes.literal(text=note.source)
    para += nodes.Text(" at PyTorch commit ")
    para += nodes.reference("", note.revision[:10], refuri=note.url)
    para += nodes.Text(". " + noteslib.counts_sentence(statements, claim_outcomes))
    return para


def statement_node(statement, shown, body, detail, claim_refs, history=""):
    """The statement as the page shows it: number and verdict, the paraphrase, the nuance or
    what the build does now, and the claims that decide it (placeholders resolved later)."""
    box = nodes.container(ids=[statement.anchor], classes=["verified-note-statement",
                                                           "verified-note-" + re.sub(r"[^A-Za-z0-9]+", "-", shown)])
    label = nodes.strong(text=f"{statement.number}. {shown[0].upper()}{shown[1:]}. ")
    body = list(body)
    if body and isinstance(body[0], nodes.paragraph):
        body[0].insert(0, label)
    else:
        body.insert(0, nodes.paragraph("", "", label))
    box.extend(body)
    if detail:
        para = nodes.paragraph(classes=["verified-note-detail"])
        para += nodes.emphasis(text=noteslib.DETAIL_LABEL[statement.verdict] + ": ")
        para.extend(detail)
        box += para
    decided = nodes.paragraph(classes=["verified-note-claims"])
    decided += nodes.Text("Decided by its claim" if len(claim_refs) == 1 else
                          f"Decided by its {len(claim_refs)} claims together")
    decided.extend(claim_refs)  # each a status mark linked to its claim, the id in its title
    decided += nodes.Text(". " + history if history else ".")
    box += decided
    return box


def summary_section(notes, statements, claim_outcomes, builder, from_doc):
    """The overview: a count sentence, a table per note, and the out-of-date statements."""
    by_note = {}
    for s in statements:
        by_note.setdefault(s.note, []).append(s)
    notes = [n for n in notes if n.key in by_note]
    section = nodes.container(classes=["verified-notes-summary"])
    total = nodes.paragraph()
    total += nodes.strong(text=f"{len(notes)} note{'s' if len(notes) != 1 else ''}, "
                          + noteslib.counts_sentence(statements, claim_outcomes))
    section += total
    labels = [label for label in noteslib.SHOWN_ORDER if noteslib.counts(statements, claim_outcomes).get(label)]
    rows = []
    for note in notes:
        tally = noteslib.counts(by_note[note.key], claim_outcomes)
        link = nodes.reference("", note.title, refuri=builder.get_relative_uri(from_doc, note.docname))
        revision = nodes.reference("", note.revision[:10], refuri=note.url)
        rows.append([link, revision, nodes.Text(str(len(by_note[note.key])))]
                    + [nodes.Text(str(tally.get(label, 0))) for label in labels])
    section += table(["Note", "Revision read", "Statements", *labels], rows, classes=["verified-notes-table"])
    outdated = [s for s in statements if s.verdict == noteslib.OUT_OF_DATE]
    if outdated:
        heading = nodes.paragraph()
        heading += nodes.strong(text="Out of date on this build:")
        section += heading
        items = nodes.bullet_list()
        titles = {n.key: n.title for n in notes}
        for s in outdated:
            item = nodes.paragraph()
            uri = builder.get_relative_uri(from_doc, s.docname) + "#" + s.anchor
            item += nodes.reference("", f"{titles.get(s.note, s.note)}, {s.section or 'no section'}", refuri=uri)
            item += nodes.Text(f": {s.detail}")
            items += nodes.list_item("", item)
        section += items
    return section
