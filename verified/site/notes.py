"""PyTorch's official notes, checked: each statement a note makes, paraphrased, with a
verdict and the claims that decide it (the ``official-note`` and ``note-statement``
directives, the ``official-notes-summary`` table and verification.json ``official_notes``).

Pure data like verified.claims: the rules, the live verdicts and the counts are tested
directly.
"""
import re
from dataclasses import dataclass, field

from verified import claims as claimlib
from verified import outcomes
from verified.releases import history as historylib

HOLDS, NUANCE, DEPRECATED, OUT_OF_DATE, CUDA = "holds", "nuance", "deprecated", "out-of-date", "cuda"
VERDICTS = (HOLDS, NUANCE, DEPRECATED, OUT_OF_DATE, CUDA)  # as written in a note-statement
NEEDS_DETAIL = (NUANCE, DEPRECATED, OUT_OF_DATE)
# deprecated: the API the note describes still works as it says, and warns that it is deprecated
# (the detail says what the warning names instead); out-of-date: this build does otherwise.

# What a page and verification.json show: the written verdict, except that a CUDA statement
# is only "holds" where this build ran its claims on a GPU.
SHOWN = {HOLDS: "holds", NUANCE: "holds with a nuance", DEPRECATED: "deprecated: still works, warns",
         OUT_OF_DATE: "out of date on this build"}
CUDA_NOT_RUN, CUDA_HOLDS = f"CUDA, {outcomes.NOT_RUN_HERE}", "holds on CUDA"
SHOWN_ORDER = ("holds", "holds with a nuance", "deprecated: still works, warns", "out of date on this build",
               CUDA_HOLDS, CUDA_NOT_RUN)
DETAIL_LABEL = {NUANCE: "The nuance", DEPRECATED: "The warning", OUT_OF_DATE: "This build"}
EVERY_RELEASE = "Its claims hold on every recorded release"  # the start of history_line's all-holding line

REVISION = re.compile(r"^[0-9a-f]{40}$")
NOTE_KEY = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
SOURCE_URL = "https://github.com/pytorch/pytorch/blob/{revision}/{source}"


@dataclass
class Note:
    """One official note, as the ``official-note`` directive of its checked page names it."""
    key: str
    title: str
    source: str      # its path in the PyTorch repository
    revision: str    # the commit of that file that was read
    docname: str
    file: str
    line: int

    @property
    def url(self):
        return SOURCE_URL.format(revision=self.revision, source=self.source)


@dataclass
class Statement:
    """One statement of a note: the paraphrase, the verdict and the claims deciding it."""
    note: str | None  # the key of the page's note (None: no official-note above it)
    verdict: str
    claims: list
    detail: str
    text: str
    docname: str
    file: str
    line: int
    number: int       # its place on the page, from 1
    section: str = ""  # the title of the section it is under (set when the page is read)
    history: list = field(default_factory=list)

    @property
    def anchor(self):
        return f"note-{self.note or 'none'}-{self.number}"


def note_problems(note, options):
    """What is wrong with an ``official-note`` directive's options (messages)."""
    found = []
    if not NOTE_KEY.match(note.key):
        found.append(f"official-note key {note.key!r} is not lowercase words joined by '-' (e.g. 'autograd')")
    for name in ("title", "source", "revision"):
        if not options.get(name, "").strip():
            found.append(f"official-note {note.key!r} lacks :{name}:")
    if note.revision and not REVISION.match(note.revision):
        found.append(f"official-note {note.key!r}: :revision: {note.revision!r} is not a 40-digit commit")
    return found


def statement_problems(statement):
    """What is wrong with a ``note-statement`` on its own (messages); claims are checked later."""
    found = []
    if statement.note is None:
        found.append("note-statement before any official-note on this page: which note does it check?")
    if statement.verdict not in VERDICTS:
        found.append(f"note-statement verdict {statement.verdict!r} is not one of {', '.join(VERDICTS)}")
    if not statement.text.strip():
        found.append("note-statement has no statement")
    if not statement.claims:
        found.append("note-statement cites no claim (:claims: id; id)")
    if statement.verdict in NEEDS_DETAIL and not statement.detail:
        what = {NUANCE: "which nuance", DEPRECATED: "what the deprecation warning says"}.get(
            statement.verdict, "what this build does now")
        found.append(f"note-statement with verdict {statement.verdict!r} needs :detail: (say {what})")
    if statement.verdict in (HOLDS, CUDA) and statement.detail:
        found.append(f"note-statement with verdict {statement.verdict!r} takes no :detail: "
                     f"(use verdict nuance, deprecated or out-of-date)")
    return found


def duplicate_notes(notes):
    """Problems for a note key used on two pages, and for two notes on one page."""
    found, by_key, by_page = [], {}, {}
    for note in sorted(notes, key=lambda n: (n.file, n.line)):
        if note.key in by_key:
            other = by_key[note.key]
            first = f"{other.file}:{other.line}"
            found.append(claimlib.Problem(note.file, note.line,
                                          f"official-note {note.key!r} is checked twice (first at {first})", "note"))
        elif note.docname in by_page:
            found.append(claimlib.Problem(note.file, note.line, "a second official-note on one page; "
                                          "give each note its own page", "note"))
        by_key.setdefault(note.key, note)
        by_page.setdefault(note.docname, note)
    return found


def shown_verdict(statement, claim_outcomes):
    """The verdict a reader sees, given {claim id: {device: outcome}} of this build."""
    if statement.verdict != CUDA:
        return SHOWN.get(statement.verdict, statement.verdict)
    cuda = [claim_outcomes.get(c, {}).get(outcomes.CUDA) for c in statement.claims]
    return CUDA_HOLDS if cuda and all(o == outcomes.PASSED for o in cuda) else CUDA_NOT_RUN


def status(statement, claim_outcomes):
    """The statement's live status on the device its verdict rests on: 'passed' when every
    cited claim that runs there passed, else the worst outcome, as for a claim."""
    device = outcomes.CUDA if statement.verdict == CUDA else outcomes.CPU
    found = [claim_outcomes.get(c, {}).get(device, outcomes.NOT_APPLICABLE) for c in statement.claims]
    found = [o for o in found if o != outcomes.NOT_APPLICABLE]
    for bad in outcomes.BAD + (outcomes.NOT_RUN,):
        if bad in found:
            return bad
    return outcomes.PASSED if found else outcomes.NOT_APPLICABLE


def never_ran(device_outcomes):
    """Whether a claim ran on no device of this build: every outcome "not run" or "not applicable"."""
    return all(o in (outcomes.NOT_RUN, outcomes.NOT_APPLICABLE) for o in device_outcomes.values())


def claim_problems(statements, claim_outcomes):
    """Problems of statements against the claims of this build: an unknown claim is
    reported by the claim-ref check; here, a verdict its claims cannot carry. A verdict other
    than 'cuda' rests only on claims that ran: one citing a claim that ran on no device here
    (a CUDA-only claim on a machine without a GPU) is a ``note-not-run`` problem."""
    found = []
    for s in statements:
        known = [c for c in s.claims if c in claim_outcomes]
        if len(known) < len(s.claims) or s.verdict not in VERDICTS:
            continue
        where = (s.file, s.line)
        if s.verdict == CUDA:
            no_cuda = [c for c in known if claim_outcomes[c][outcomes.CUDA] == outcomes.NOT_APPLICABLE]
            if no_cuda:
                found.append(claimlib.Problem(*where, f"note-statement with verdict 'cuda' cites claims with no "
                                                      f"CUDA case: {', '.join(no_cuda)}", "note"))
        elif not any(claim_outcomes[c][outcomes.CPU] != outcomes.NOT_APPLICABLE for c in known):
            found.append(claimlib.Problem(*where, f"note-statement with verdict {s.verdict!r} cites no claim checked "
                                                  f"on the CPU; cite one, or use verdict 'cuda'", "note"))
        elif any(never_ran(claim_outcomes[c]) for c in known):
            found.append(claimlib.Problem(*where, f"note-statement with verdict {s.verdict!r} rests on claims that "
                                                  f"never ran here: "
                                                  f"{', '.join(c for c in known if never_ran(claim_outcomes[c]))}; "
                                                  f"cite only claims that ran, or give the CUDA part a statement "
                                                  f"of its own with verdict 'cuda'", "note-not-run"))
        bad = status(s, claim_outcomes)
        if bad in outcomes.BAD:
            found.append(claimlib.Problem(*where, f"note-statement's verdict {s.verdict!r} rests on claims that "
                                                  f"{bad}: {', '.join(known)}", "note"))
    return found


def history_problems(statements, histories):
    """A statement whose line says its claims hold on every recorded release while one of them
    ran on no recorded release (a ``note-not-run`` problem). `histories`: {claim id: claim history}."""
    found = []
    for s in statements:
        if not history_line(s.history).startswith(EVERY_RELEASE):
            continue
        unrecorded = [c for c in s.claims if not any(
            step["verdict"] not in (outcomes.NOT_APPLICABLE, outcomes.NOT_RUN, historylib.MISSING)
            for step in histories.get(c, []))]
        if unrecorded:
            found.append(claimlib.Problem(s.file, s.line, f"note-statement says \"{EVERY_RELEASE}\" but "
                                                          f"{', '.join(unrecorded)} ran on no recorded release",
                                          "note-not-run"))
    return found


def statement_history(statement, histories):
    """[{version, holds}] over the recorded CPU releases: a statement holds on a release when
    every claim it cites does (claims not applicable there are left out); None where no
    cited claim applies or one was not recorded there. `histories`: {claim id: claim history}."""
    if statement.verdict == CUDA:
        return []
    steps = [histories.get(c, []) for c in statement.claims]
    if not steps or not all(steps):
        return []
    result = []
    for per_version in zip(*steps):
        verdicts = [s["verdict"] for s in per_version if s["verdict"] != outcomes.NOT_APPLICABLE]
        known = verdicts and all(v != "missing" for v in verdicts)
        result.append({"version": per_version[0]["version"],
                       "holds": all(v == historylib.HOLDS for v in verdicts) if known else None})
    return result


def history_line(steps):
    """'Decided the same way on 2.9.1–2.14.1', or the releases where it is decided otherwise."""
    decided = [s for s in steps if s["holds"] is not None]
    if not decided:
        return ""
    if all(s["holds"] for s in decided):
        return f"{EVERY_RELEASE} ({decided[0]['version']}–{decided[-1]['version']})."
    not_holding = [s["version"] for s in decided if not s["holds"]]
    return f"Its claims do not all hold on {', '.join(not_holding)} (see the matrix)."


def step_changes(statements, before, after):
    """Statements whose claims hold on one of two recorded releases and not on the other:
    [{note, page, anchor, section, statement, kind}] for the what-changed page."""
    found = []
    for s in statements:
        holds = {step["version"]: step["holds"] for step in s.history}
        old, new = holds.get(before), holds.get(after)
        if old is not None and new is not None and old != new:
            found.append({"note": s.note, "page": s.docname, "anchor": s.anchor, "section": s.section,
                          "statement": s.text, "kind": "starts holding" if new else "stops holding"})
    return found


def counts(statements, claim_outcomes):
    """{shown verdict: count} in SHOWN_ORDER, zeros left out."""
    tally = {label: 0 for label in SHOWN_ORDER}
    for s in statements:
        label = shown_verdict(s, claim_outcomes)
        tally[label] = tally.get(label, 0) + 1
    return {label: n for label, n in tally.items() if n}


def counts_sentence(statements, claim_outcomes):
    """'41 statements: 30 hold, 8 hold with a nuance, 1 out of date on this build, 2 CUDA, not run here.'"""
    tally = counts(statements, claim_outcomes)
    total = len(statements)
    parts = [f"{n} {_plural(label, n)}" for label, n in tally.items()]
    return f"{total} statement{'s' if total != 1 else ''}" + (": " + ", ".join(parts) if parts else "") + "."


def _plural(label, n):
    """'holds' -> 'hold' for several; the other labels read the same for any count."""
    return "hold" + label[len("holds"):] if label.startswith("holds") and n != 1 else label


def report(notes, statements, claim_outcomes):
    """verification.json's ``official_notes``: one entry per statement, notes in page order."""
    by_key = {n.key: n for n in notes}
    entries = []
    for s in statements:
        note = by_key.get(s.note)
        entries.append({
            "note": s.note,
            "note_title": note.title if note else None,
            "source": note.source if note else None,
            "revision": note.revision if note else None,
            "section": s.section,
            "statement": s.text,
            "verdict": shown_verdict(s, claim_outcomes),
            "written_verdict": s.verdict,
            "detail": s.detail or None,
            "claims": list(s.claims),
            "status": status(s, claim_outcomes),
            "page": s.docname,
            "anchor": s.anchor,
            "history": {step["version"]: step["holds"] for step in s.history},
        })
    return entries
