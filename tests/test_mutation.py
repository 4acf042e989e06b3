"""The mutation check: every kind of mutant, which probes it keeps, and what it reports."""
import sys

from verified.mutation import cache as mutation_cache
from verified.mutation import run as mutation
from verified.probing import probe_cache

PROBES = '''import pytest

HELPER = 2
SCRIPT = "x = 1"

def worker(value):
    assert value == 3

@pytest.mark.claim("m.live")
def test_live():
    assert HELPER + 1 == 3
    worker(HELPER + 1)

@pytest.mark.claim("m.dead")
def test_dead():
    value = HELPER + 1
    if value == 99:
        assert value == 99

@pytest.mark.claim("m.raises")
def test_raises():
    with pytest.raises(ZeroDivisionError, match="division by zero"):
        1 / 0

@pytest.mark.claim("m.bound")
def test_bound():
    assert HELPER < 10

@pytest.mark.claim("m.tolerance")
def test_tolerance():
    assert abs(0.1 + 0.2 - 0.3) < 1e-9
    assert HELPER > 1e-3

@pytest.mark.claim("m.script")
def test_script():
    code = "import sys\\nassert len(sys.argv) == 1\\n"
    exec(code)

@pytest.mark.claim("m.nothing")
def test_nothing():
    HELPER + 1
'''


def _kinds(found):
    return [(m.function, m.kind, m.line) for m in found]


def test_every_kind_of_mutant(tmp_path):
    probe = tmp_path / "test_p.py"
    probe.write_text(PROBES)
    found = list(mutation.mutants(probe))
    assert _kinds(found) == [
        ("worker", "negate", 7), ("worker", "constant", 7),
        ("test_live", "negate", 11), ("test_live", "constant", 11),
        ("test_dead", "negate", 18), ("test_dead", "constant", 18),
        ("test_raises", "no-raise", 22), ("test_raises", "match", 22),
        ("test_bound", "negate", 27), ("test_bound", "boundary", 27), ("test_bound", "constant", 27),
        ("test_tolerance", "negate", 31), ("test_tolerance", "tolerance", 31),
        ("test_tolerance", "negate", 32), ("test_tolerance", "tolerance", 32),
        ("test_script", "negate in script", 37), ("test_script", "constant in script", 37),
    ]
    by = {(m.function, m.kind): m.source for m in found}
    assert "assert not HELPER + 1 == 3" in by["test_live", "negate"]
    assert "def test_dead" not in by["test_live", "negate"] and "HELPER = 2" in by["test_live", "negate"]
    assert "assert value == 4" in by["worker", "constant"] and "def test_live" in by["worker", "constant"]
    assert "def test_raises" not in by["worker", "constant"]  # only the probes that use the helper
    assert "1 / 0" not in by["test_raises", "no-raise"] and mutation.NO_SUCH_MESSAGE in by["test_raises", "match"]
    assert "HELPER <= 10" in by["test_bound", "boundary"] and "HELPER < 11" in by["test_bound", "constant"]
    assert "assert not len(sys.argv) == 1" in by["test_script", "negate in script"]
    tolerances = [m.source for m in found if m.kind == "tolerance"]
    assert "abs(0.1 + 0.2 - 0.3) < 1e-15" in tolerances[0]  # an upper bound, a million times tighter
    assert "assert HELPER > 1000.0" in tolerances[1]  # a lower bound, a million times larger


def test_a_probe_that_checks_nothing_is_reported(tmp_path):
    probe = tmp_path / "test_p.py"
    probe.write_text(PROBES)
    assert mutation.unchecked(probe) == [(40, "test_nothing")]


def test_check_kills_survives_and_reports_not_run(tmp_path):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes/test_p.py").write_text(PROBES)
    (tmp_path / "probes/test_gpu.py").write_text(
        'import pytest\n\n\n@pytest.mark.claim("m.gpu")\n@pytest.mark.skip(reason="no GPU here")\n'
        'def test_gpu():\n    assert 1 == 1\n')
    outcome = mutation.check([tmp_path / "probes"], sys.executable, echo=lambda *_: None)
    survived = sorted((m.function, m.kind) for m, _ in outcome.survived)
    # test_dead never reaches its assert; HELPER < 10 holds as <= too, and for 11; the float
    # error 5.6e-17 is below 1e-9 and below the tightened 1e-15 too: that tolerance is far too loose.
    assert survived == [("test_bound", "boundary"), ("test_bound", "constant"),
                        ("test_dead", "constant"), ("test_dead", "negate"), ("test_tolerance", "tolerance")]
    assert len(outcome.not_run) == 3 and outcome.mutants == 20
    assert mutation.summary(outcome) == "mutation: 20 mutants, 12 killed, 5 survived on cpu, 3 not run here"
    assert [(line, name) for _, line, name in outcome.unchecked] == [(40, "test_nothing")]


def test_a_single_file_can_be_checked(tmp_path, capsys):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes/test_p.py").write_text(
        'import pytest\n\n\n@pytest.mark.claim("m.x")\ndef test_x():\n    assert 1 + 1 == 2\n')
    (tmp_path / "probes/test_other.py").write_text(PROBES)
    assert mutation.main([str(tmp_path / "probes/test_p.py")]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == \
        "mutation: 2 mutants, 2 killed, 0 survived on cpu, 0 not run here"


def test_a_mutant_that_does_not_import_is_a_fault_not_a_kill(tmp_path, capsys):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes/test_p.py").write_text(  # imports in place only: its mutants' folder has another name
        'import os\nimport pytest\n\nassert os.path.basename(os.path.dirname(__file__)) == "probes"\n\n\n'
        '@pytest.mark.claim("m.x")\ndef test_x():\n    assert 1 + 1 == 2\n')
    assert mutation.main([str(tmp_path / "probes")]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1] == "mutation: 2 mutants, 0 killed, 0 survived on cpu, 0 not run here, 2 not collected"
    assert "the negate mutant's file did not import" in "\n".join(lines)


def test_cached_verdicts_are_reused_until_the_probe_file_changes(tmp_path):
    (tmp_path / "probes/a").mkdir(parents=True)
    (tmp_path / "probes/b").mkdir()
    (tmp_path / "probes/a/test_a.py").write_text(
        'import pytest\n\n\n@pytest.mark.claim("m.a")\ndef test_a():\n    assert 1 + 1 == 2\n')
    (tmp_path / "probes/b/test_b.py").write_text(
        'import pytest\n\n\n@pytest.mark.claim("m.b")\ndef test_b():\n    assert 2 < 3\n')
    cache, lines = tmp_path / "cache", []
    first = mutation.check([tmp_path / "probes"], sys.executable, echo=lines.append, cache_dir=cache)
    assert mutation.summary(first) == "mutation: 6 mutants, 4 killed, 2 survived on cpu, 0 not run here"
    assert lines[0].startswith("mutation: running 6 mutants; 0 more have a cached verdict")
    assert sum(line.startswith("mutation: ") and "probe file(s)" in line for line in lines) == 2  # a run per folder

    lines.clear()
    again = mutation.check([tmp_path / "probes"], sys.executable, echo=lines.append, cache_dir=cache)
    assert mutation.summary(again) == mutation.summary(first)
    assert lines == ["mutation: running 0 mutants; 6 more have a cached verdict (their probe files and what "
                     "those import are unchanged since they ran)"]
    # 2 <= 3 and 2 < 4 hold too
    assert sorted((m.function, m.kind) for m, _ in again.survived) == [("test_b", "boundary"), ("test_b", "constant")]

    (tmp_path / "probes/b/test_b.py").write_text(
        'import pytest\n\n\n@pytest.mark.claim("m.b")\ndef test_b():\n    assert 2 + 1 == 3\n')
    lines.clear()
    changed = mutation.check([tmp_path / "probes"], sys.executable, echo=lines.append, cache_dir=cache)
    assert lines[0].startswith("mutation: running 2 mutants; 2 more have a cached verdict")
    assert mutation.summary(changed) == "mutation: 4 mutants, 4 killed, 0 survived on cpu, 0 not run here"


def test_a_bad_cache_entry_is_reported_discarded_and_run_again(tmp_path):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes/test_a.py").write_text(
        'import pytest\n\n\n@pytest.mark.claim("m.a")\ndef test_a():\n    assert 1 + 1 == 2\n')
    cache = tmp_path / "cache"
    mutation.check([tmp_path / "probes"], sys.executable, echo=lambda *_: None, cache_dir=cache)
    (entry,) = cache.glob("files/*/*.json")
    entry.write_text("{not json")
    lines = []
    outcome = mutation.check([tmp_path / "probes"], sys.executable, echo=lines.append, cache_dir=cache)
    assert lines[0].startswith(f"mutation: discarded cache entry {entry}: not JSON")
    assert lines[1].startswith("mutation: running 2 mutants; 0 more have a cached verdict")
    assert mutation.summary(outcome) == "mutation: 2 mutants, 2 killed, 0 survived on cpu, 0 not run here"


def test_the_cache_key_follows_the_mutants_not_the_mutation_code(tmp_path):
    """A changed way of making mutants changes the key; the code that reads verdicts is not in it."""
    one = [mutation.Mutant("p.py", 3, "test_a", "negate", "assert not x\n")]
    other = [mutation.Mutant("p.py", 3, "test_a", "negate", "assert not (x)\n")]
    assert mutation_cache.key("k", one) == mutation_cache.key("k", list(one))
    assert mutation_cache.key("k", one) != mutation_cache.key("k", other) != mutation_cache.key("j", other)
    assert not [m for m in probe_cache.tooling_modules() if m.startswith("mutation")]
