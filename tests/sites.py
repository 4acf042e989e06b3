"""The two fixture sites most build tests read: a good one that uses every feature, and a
broken one that holds every kind of problem at once. Each is built once per session
(conftest.py); the tests then read its output.
"""
import json

GOOD_PROBE = "probes/test_fixture.py"
NOTE_REVISION = "95ed7f2fe0b76e57b17249c894d3ef8f3d1d24a7"

NOTE_PAGE = f"""# A note, checked

:::{{official-note}} fixture-note
:title: The fixture note
:source: docs/source/notes/fixture.md
:revision: {NOTE_REVISION}
:::

## Adding

:::{{note-statement}} holds
:claims: fixture.add.commutes
The note says addition commutes.
:::

:::{{note-statement}} out-of-date
:claims: fixture.add.commutes; fixture.storage.untyped
:detail: this build counts `bytes`
The note says storage counts elements.
:::

## On the GPU

:::{{note-statement}} cuda
:claims: fixture.add.commutes
The note says it commutes on CUDA too.
:::
"""

SITE_TABLES = """
See {claim-ref}`fixture.add.commutes`.

:::{claim-summary}
:::

:::{source-index}
:::

:::{claim-matrix}
:::

:::{version-changes}
:::

:::{official-notes-summary}
:::
"""

MORE_SOURCES = ("torch/csrc/autograd/engine.h | Engine::execute | The engine's entry point.\n"
                "torch/csrc/autograd/saved_variable.cpp | SavedVariable::unpack | The version check.\n"
                "torch/csrc/autograd/VariableTypeManual.cpp | aten::detach@Autograd | A registration.\n")


def recorded(version, outcome):
    """A recorded results file of one release, with one probe for fixture.add.commutes."""
    return json.dumps({"run": {"torch": {"version": version}, "devices": ["cpu"], "date": "d",
                               "repository_commit": "c", "suite": "s"},
                       "probes": [{"nodeid": "n", "file": GOOD_PROBE, "line": 5, "function": "test_add_commutes",
                                   "claims": ["fixture.add.commutes"], "device": "cpu", "outcome": outcome,
                                   "message": "old torch disagreed" if outcome == "failed" else ""}],
                       "sources": []})


def make_good(site):
    """Every feature, nothing broken: claim references, the site tables, a checked note, the
    source kinds and two recorded releases."""
    site.write("docs/note.md", NOTE_PAGE)
    site.append("docs/claims.md", SITE_TABLES)
    site.replace("docs/index.md", "```{toctree}\nclaims\n", "```{toctree}\nclaims\nnote\n")
    site.replace("docs/index.md", "aten/src/ATen/native/TensorShape.cpp | | View kernels.\n",
                 "aten/src/ATen/native/TensorShape.cpp | | View kernels.\n" + MORE_SOURCES)
    site.write("results/torch-2.0.0-cpu.json", recorded("2.0.0", "failed"))
    site.write("results/torch-2.1.0-cpu.json", recorded("2.1.0", "passed"))
    return site


BROKEN_NOTE_PAGE = """# Broken

:::{note-statement} holds
:claims: fixture.add.commutes
Before any note.
:::

:::{official-note} fixture-note
:title: The fixture note
:source: docs/source/notes/fixture.md
:revision: 12345
:::

:::{note-statement} nuance
:claims: fixture.add.commutes
No detail.
:::

:::{note-statement} holds
:claims: fixture.no-such.claim
Unknown claim.
:::

:::{note-statement} cuda
:claims: fixture.storage.untyped
CPU-only claim under a CUDA verdict.
:::

:::{note-statement} holds
:claims: fixture.add.commutes-too; fixture.never.here
A claim that ran on no device under a CPU verdict.
:::
"""

BROKEN_CLAIMS = """
:::{claim} fixture.orphan.claim
Nothing checks this.
:::

:::{claim} fixture.twice.said
Said here first.
:::

:::{claim} fixture.twice.said
Said twice.
:::

:::{claim} fixture.add.commutes-too
:::

:::{claim} Fixture.Add
A bad ID.
:::

:::{claim} fixture.hang.forever
A probe that never ends.
:::

:::{claim} fixture.skipped.here
A probe that skips on the CPU, which this machine has.
:::

:::{claim} fixture.never.here
:replaces: fixture.gone.before
A probe bounded to releases before 1.0: it runs on no device of this build.
:::

See {claim-ref}`fixture.no.such`.

See {error-ref}`never printed`.

:::{source-map}
:::

See {doc}`missing-page`.
"""

BROKEN_PROBES = '''

@pytest.mark.claim("fixture.no.such-claim")
def test_stray():
    assert True


def test_unmarked():
    assert True


@pytest.mark.claim("fixture.twice.said")
def test_twice():
    assert True


@pytest.mark.claim("fixture.add.commutes-too")
def test_too():
    assert True


@pytest.mark.claim("fixture.storage.untyped")
def test_crash():
    import ctypes
    ctypes.string_at(0)


@pytest.mark.claim("fixture.skipped.here")
def test_skipped():
    pytest.skip("nothing to see")


@pytest.mark.torch_version("<1.0")
@pytest.mark.claim("fixture.never.here")
def test_never_here():
    assert True


@pytest.mark.timeout(2)
@pytest.mark.claim("fixture.hang.forever")
def test_hang():
    import time
    time.sleep(60)
'''


BROKEN_FIGURE = """
## A figure

:::{gallery-figure} tensor/plot_no_such_script
A script that does not exist.
:::
"""


def make_broken(site):
    """Every problem kind a build reports, at once: built with --keep-going, each shows."""
    site.replace(GOOD_PROBE, "torch.equal(a + b, b + a)", "torch.equal(a + b, a - b)")
    site.append(GOOD_PROBE, BROKEN_PROBES)
    site.write("probes/test_broken.py", "import no_such_module_here\n")
    site.append("docs/claims.md", BROKEN_CLAIMS)
    site.write("docs/broken.md", BROKEN_NOTE_PAGE + BROKEN_FIGURE)
    site.replace("docs/index.md", "```{toctree}\nclaims\n", "```{toctree}\nclaims\nbroken\n")
    site.replace("docs/index.md", "{src}`c10/core/StorageImpl.h StorageImpl`", "{src}`../StorageImpl.h`")
    site.replace("docs/index.md", "c10/core/TensorImpl.h | TensorImpl | The tensor object.",
                 "c10/core/TensorImpl.h | TensorImplMoved | The tensor object.\nc10/core/TensorImpl.h TensorImpl")
    site.replace("docs/index.md", "native/TensorShape.cpp", "native/TensorShapeGone.cpp")
    return site
