"""What reading the pages records, page by page: the data of the ``verified`` Sphinx domain.

Each kind maps a docname to what that page holds. Sphinx keeps the domain's data in the
pickled environment, clears a page's entries before it is read again (``clear_doc``) and
merges the entries that parallel readers made (``merge_domaindata``): see verified.site.domain.
"""
from pathlib import Path

DOMAIN = "verified"
KINDS = (
    "claims",         # [claims.Claim] in page order
    "sources",        # [source reference record] (directives.resolve_reference)
    "problems",       # [claims.Problem] found while reading
    "claim_refs",     # [(claim id, line)] of every {claim-ref}, checked on every build
    "error_refs",     # [(text, line)] of every {error-ref}
    "error_index",    # True on the page that holds the error index
    "notes",          # [notes.Note] an official-note directive names
    "statements",     # [notes.Statement] in page order
    "page_inputs",    # digest of what the written page takes from the probes (incremental)
    "index_docs",     # True on a page that shows other pages' state (written again when anything changes)
)


def initial_data():
    return {kind: {} for kind in KINDS}


def of(env, kind):
    """{docname: entry} of one kind."""
    return env.domaindata[DOMAIN][kind]


def add(env, kind, docname, item):
    of(env, kind).setdefault(docname, []).append(item)


def every(env, kind):
    """Every entry of a list kind, over the pages that still exist, in docname order."""
    found = of(env, kind)
    return [item for docname in sorted(found) if docname in env.found_docs for item in found[docname]]


def pages_with(env, kind):
    """The existing pages that set a flag kind."""
    return sorted(docname for docname in of(env, kind) if docname in env.found_docs)


def mark_shows_other_pages(env):
    """The page being read shows other pages' claims or the probes' messages: it is written again
    whenever any page is read again or the probes' results change (incremental.pages_to_write)."""
    of(env, "index_docs")[env.docname] = True


def page_file(env, docname):
    """The page's path relative to the project root (where conf.py is), as the user sees it."""
    return Path(env.doc2path(docname)).relative_to(env.app.confdir).as_posix()
