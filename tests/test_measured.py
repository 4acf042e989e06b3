"""verified.probing.measured (what a probe records) and verified.site.render_measured (how a claim shows it)."""
import pytest

from verified.probing import measured
from verified.site import render_measured


def test_record_keeps_scalars_in_order():
    measured.figures.clear()
    measured.record("draws that differ", "20 of 20")
    measured.record("bitwise", False)
    assert list(measured.figures.items()) == [("draws that differ", "20 of 20"), ("bitwise", False)]
    measured.figures.clear()


@pytest.mark.parametrize("name, value", [("", 1), (None, 1), ("x", [1]), ("x", None)])
def test_record_refuses_what_cannot_be_shown(name, value):
    with pytest.raises(TypeError):
        measured.record(name, value)


def test_note_names_the_cpu_capability_and_each_figure():
    entries = [{"device": "cpu", "measured": {"draws that differ": "20 of 20", "fused bitwise": True}},
               {"device": "cpu"}]
    note = render_measured.measured_note(entries, {"cpu_capability": "AVX512"})
    assert note.astext() == ("Measured on this machine (CPU capability AVX512; a figure, not a claim: another "
                             "CPU or BLAS may give another): draws that differ: 20 of 20; fused bitwise: yes")
    assert "verified-claim-measured" in note["classes"]


def test_no_figures_no_note():
    assert render_measured.measured_note([{"device": "cpu", "measured": {}}], {"cpu_capability": "AVX2"}) is None
