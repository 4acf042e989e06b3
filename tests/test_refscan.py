"""The page syntax of source references: one parser (verified.sources.references) and the scan of the
pages that `make matrix` resolves (verified.sources.refscan), which must find what the build finds."""
import pytest

from verified.sources import references, refscan


@pytest.mark.parametrize("text, expected", [
    ("c10/core/TensorImpl.h TensorImpl", (None, "c10/core/TensorImpl.h TensorImpl")),
    ("the class <c10/core/TensorImpl.h TensorImpl>", ("the class", "c10/core/TensorImpl.h TensorImpl")),
    ("c10/a.h <c10/a.h>", (None, "c10/a.h")),  # a title equal to its target is no title
    ("a < b", (None, "a < b")),
])
def test_role_parts(text, expected):
    assert references.role_parts(text) == expected


def test_option_references_split_on_semicolons():
    assert references.option_references(" c10/a.h A;  ; c10/b.h ") == ["c10/a.h A", "c10/b.h"]
    assert references.option_references(None) == []


@pytest.mark.parametrize("line, expected", [
    ("c10/c.h | C | what", ("c10/c.h C", "what")),
    ("aten/src/ATen/native/X.cpp |  | kernels", ("aten/src/ATen/native/X.cpp", "kernels")),
    ("c10/c.h | C |", None),  # no description: the build rejects the line
    ("c10/c.h | C", None),
    (" | C | what", None),
])
def test_source_map_row(line, expected):
    assert references.source_map_row(line) == expected


PAGE = """# Title

Prose {src}`c10/core/TensorImpl.h TensorImpl` and {src}`the map <torch/x.py  f>`.

```markdown
:::{claim} example.fenced
:src: c10/core/Gone.h Gone
Quoted {src}`c10/core/Gone.h Gone2`.
:::
```

~~~
{src}`c10/core/Gone.h Gone3`
~~~

````{literalinclude} x.py
{src}`c10/core/Gone.h Gone4`
````

Inline code is not a role: ``{src}`c10/core/Gone.h Gone5` `` nor `` {src}`c10/core/Gone.h Gone6` ``,
and a code span may cross lines: `one
{src}`c10/core/Gone.h Gone7`` end.

::::{admonition} A note
:::{claim} a.b
:src: c10/a.h A; c10/b.h
:flavour-dependent:
Body {src}`c10/core/TensorImpl.h TensorImpl`; an option line after the body is text:
:src: c10/core/Gone.h Gone8
:::
::::

:::{note-statement} x
:src: c10/core/Gone.h Gone9
:::

:::{claim} c.d
---
src: c10/y.h Y
---
Body.
:::

```{glossary}
term
  {src}`c10/g.h G`
```

:::{source-map}
c10/c.h | C | what
aten/src/ATen/native/X.cpp | | kernels
c10/core/Gone.h | Gone10 |
:::
"""


def test_scan_reads_references_where_the_build_does():
    assert refscan.references_in(PAGE) == [
        "c10/core/TensorImpl.h TensorImpl", "torch/x.py f", "c10/a.h A", "c10/b.h", "c10/y.h Y", "c10/g.h G",
        "c10/c.h C", "aten/src/ATen/native/X.cpp"]


def test_fenced_example_is_not_a_reference():
    """Regression: a fenced example of the syntax was read as `c10/core/Gone.h Gone`."""
    assert not [ref for ref in refscan.references_in(PAGE) if "Gone" in ref]


def test_sites_carry_their_page_lines():
    sites = refscan.reference_sites(PAGE)
    lines = PAGE.splitlines()
    for number, ref in sites:
        path = ref.split()[0]
        assert path in lines[number - 1], (number, ref)
    assert sites[0] == (3, "c10/core/TensorImpl.h TensorImpl")


def test_unclosed_backticks_are_plain_text():
    assert refscan.references_in("a `` b {src}`c10/a.h A`\n") == ["c10/a.h A"]
    assert refscan.references_in("a \\`{src}`c10/a.h A`\n") == ["c10/a.h A"]


def test_the_scan_finds_what_a_build_resolved(good_site):
    """On the good fixture site, built once per session, the scan (what `make matrix` reads) and
    the build find the same references."""
    built = {(s["path"], s["symbol"]) for s in good_site.report()["sources"]}
    scanned = {(r.path, r.symbol) for r in map(references.parse_reference,
                                                refscan.site_references(good_site.root / "docs"))}
    assert scanned == built and len(built) == 7
