"""No claim is declared for exactly one recorded release: a probe bounded to one release
(`torch_version("==2.13.0")`) turns 'not applicable' on the next and hides what moved. A bound
open towards releases not recorded yet (`>=2.14` while 2.14.1 is the newest, `<2.10` while 2.9.1
is the oldest) is the side of a before/after pair, not a pin: it admits every later (earlier) one.
A behaviour found in one release only (a regression fixed in the next) is the middle of a chain:
its file bounds other probes to the releases just before and just after it, so each step shows
both what went and what came."""
import ast
import json
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import Version

REPO = Path(__file__).resolve().parent.parent


def bounds(source):
    """(line, spec) of every @pytest.mark.torch_version(spec) in a probe file's text."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "torch_version"
                and node.args and isinstance(node.args[0], ast.Constant)):
            found.append((node.lineno, node.args[0].value))
    return found


def recorded_releases():
    return sorted({Version(json.loads(p.read_text())["run"]["torch"]["version"].split("+")[0])
                   for p in (REPO / "results").glob("*.json")})


def pinned(spec, releases):
    """Whether `spec` admits exactly one of `releases` and is closed on both sides of it."""
    spec = SpecifierSet(spec)
    admitted = [release for release in releases if release in spec]
    if len(admitted) != 1:
        return False
    open_ahead = admitted[0] == max(releases) and Version("999") in spec
    open_behind = admitted[0] == min(releases) and Version("0.0.1") in spec
    return not (open_ahead or open_behind)


def middle_of_a_chain(spec, specs, releases):
    """Whether other bounds among `specs` admit the releases on both sides of the one `spec` admits."""
    (release,) = [r for r in releases if r in SpecifierSet(spec)]
    index = releases.index(release)
    if index in (0, len(releases) - 1):
        return False
    neighbour_bounds = [SpecifierSet(other) for other in specs if release not in SpecifierSet(other)]
    return all(any(releases[side] in other for other in neighbour_bounds) for side in (index - 1, index + 1))


def single_release_bounds(probe_files, releases):
    """'file:line spec' of each bound that pins a probe to exactly one of `releases`, unless it is the
    middle of a before/during/after chain in its file."""
    releases = sorted(releases)
    found = []
    for path in probe_files:
        file_bounds = bounds(Path(path).read_text())
        specs = [spec for _, spec in file_bounds]
        found += [f"{path}:{line} {spec}" for line, spec in file_bounds
                  if pinned(spec, releases) and not middle_of_a_chain(spec, specs, releases)]
    return found


def test_the_check_finds_a_bound_to_one_release(tmp_path):
    probe = tmp_path / "test_x.py"
    probe.write_text('import pytest\n\n@pytest.mark.torch_version("==2.13.0")\ndef test_a():\n    pass\n\n'
                     '@pytest.mark.torch_version(">=2.13")\ndef test_b():\n    pass\n\n'
                     '@pytest.mark.torch_version(">=2.14")\ndef test_c():\n    pass\n\n'
                     '@pytest.mark.torch_version(">=2.14,<2.15")\ndef test_d():\n    pass\n')
    releases = [Version(v) for v in ("2.12.1", "2.13.0", "2.14.1")]
    assert single_release_bounds([probe], releases) == [f"{probe}:3 ==2.13.0", f"{probe}:15 >=2.14,<2.15"]


def test_a_release_between_a_before_and_an_after_is_a_chain_not_a_pin(tmp_path):
    releases = [Version(v) for v in ("2.12.1", "2.13.0", "2.14.1")]
    chain = tmp_path / "test_chain.py"
    chain.write_text('import pytest\n\n@pytest.mark.torch_version("<2.13")\ndef test_before():\n    pass\n\n'
                     '@pytest.mark.torch_version("==2.13.*")\ndef test_during():\n    pass\n\n'
                     '@pytest.mark.torch_version(">=2.14")\ndef test_after():\n    pass\n')
    assert single_release_bounds([chain], releases) == []
    half = tmp_path / "test_half.py"  # an 'after' alone does not make the pin a chain
    half.write_text('import pytest\n\n@pytest.mark.torch_version("==2.13.*")\ndef test_during():\n    pass\n\n'
                    '@pytest.mark.torch_version(">=2.14")\ndef test_after():\n    pass\n')
    assert single_release_bounds([half], releases) == [f"{half}:3 ==2.13.*"]


def test_no_probe_is_bounded_to_exactly_one_recorded_release():
    releases = recorded_releases()
    assert len(releases) >= 2
    assert single_release_bounds(sorted((REPO / "probes").rglob("test_*.py")), releases) == []
