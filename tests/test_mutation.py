"""The assertion-flipping check finds probes that assert nothing."""
import sys

from verified import mutation

PROBES = '''import pytest

HELPER = 2

@pytest.mark.claim("m.live")
def test_live():
    assert HELPER + 1 == 3
    assert HELPER * 2 == 4

@pytest.mark.claim("m.dead")
def test_dead():
    value = HELPER + 1
    if value == 99:
        assert value == 99
'''


def test_mutants_negate_one_assert_each(tmp_path):
    probe = tmp_path / "test_p.py"
    probe.write_text(PROBES)
    found = list(mutation.mutants(probe))
    assert [(name, line) for name, line, _ in found] == [("test_live", 7), ("test_live", 8), ("test_dead", 14)]
    first = found[0][2]
    assert "assert not HELPER + 1 == 3" in first and "assert HELPER * 2 == 4" in first
    assert "def test_dead" not in first and "HELPER = 2" in first


def test_check_reports_the_assertion_that_never_bites(tmp_path):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes/test_p.py").write_text(PROBES)
    total, survivors = mutation.check([tmp_path / "probes"], sys.executable, echo=lambda *_: None)
    assert total == 3
    assert [(line, name) for _, line, name, _ in survivors] == [(14, "test_dead")]
