"""A claim across the recorded torch releases: where it holds, since when, and why it fails
where it does.

A failure on a recorded release is one of
- ``differs``: the probe ran and the behaviour is not what the claim states (an assertion, a
  missing or different error);
- ``absent``: the API the probe uses does not exist there (ImportError, AttributeError, an
  unknown keyword argument or operator);
- ``probe error``: the probe itself broke there (a fixture error, a crash, a timeout).
A claim whose probe is bounded to a range of releases (``torch_version``) is ``not
applicable`` outside it, and a release recorded before the claim existed is ``missing``.
"""
import re

from verified import claims as claimlib
from verified.outcomes import FAILED, NOT_APPLICABLE, NOT_RUN, PASSED
from verified.releases.matrix import MISSING

HOLDS, DIFFERS, ABSENT, PROBE_ERROR = "holds", "differs", "absent", "probe error"  # or MISSING, NOT_APPLICABLE, NOT_RUN

ABSENT_MESSAGE = re.compile(
    r"^(AttributeError|ImportError|ModuleNotFoundError)\b|has no attribute|No module named|cannot import name"
    r"|unexpected keyword argument|No such operator|is not a registered operator|Could not find schema",
    re.MULTILINE)
PROBE_BUG = re.compile(r"^(AttributeError|TypeError): 'NoneType' object")  # the probe's own lookup found nothing


def verdict(entries, device):
    """(verdict, message) of a claim on one device of one run, from its probes' entries."""
    if not entries:
        return MISSING, ""
    outcome = claimlib.outcome(entries, device)
    if outcome == PASSED:
        return HOLDS, ""
    if outcome in (NOT_APPLICABLE, NOT_RUN):
        reason = next((e["message"] for e in entries if e["device"] == device and e["message"]), "")
        return outcome, claimlib.first_line(reason)
    bad = [e for e in entries if e["device"] == device and e["outcome"] == outcome]
    message = claimlib.first_line(bad[0]["message"]) if bad else ""
    if outcome != FAILED:
        return PROBE_ERROR, f"{outcome}: {message}"
    if any(PROBE_BUG.search(e["message"]) for e in bad):
        return PROBE_ERROR, message
    if any(ABSENT_MESSAGE.search(e["message"]) for e in bad):
        return ABSENT, message
    return DIFFERS, message


def version_of(column):
    return column.torch.split("+")[0]


def claim_history(claim_id, columns):
    """[{version, flavour, outcome, verdict, message}] over `columns` (one device, oldest first)."""
    history = []
    for column in columns:
        found, message = verdict(column.by_claim.get(claim_id, []), column.device)
        history.append({"version": version_of(column), "flavour": column.flavour, "outcome": column.outcome(claim_id),
                        "verdict": found, "message": message})
    return history


def since(history):
    """The first release from which the claim holds on every later recorded one, or None."""
    first = None
    for step in reversed(history):
        if step["verdict"] != HOLDS:
            break
        first = step["version"]
    return first


def holds_on_every_release(history):
    """Whether the claim holds on every recorded release (what a page says once, for all its claims)."""
    return bool(history) and since(history) == history[0]["version"]


def releases(history):
    """'2.9.1–2.14.1': the recorded releases a history spans."""
    return f"{history[0]['version']}–{history[-1]['version']}" if history else ""


def short_line(history):
    """What a claim's page shows of its history without opening it: nothing where it holds on
    every recorded release (the page says that once) or no recorded CPU run applies; else
    'Holds since 2.12.1.' or 'Not on 2.14.1 (differs).'. The whole line is one click away."""
    if not history or holds_on_every_release(history) or all(s["verdict"] == NOT_APPLICABLE for s in history):
        return ""
    first = since(history)
    if first is None:
        return f"Not on {history[-1]['version']} ({history[-1]['verdict']})."
    return f"Holds since {first}."


def _short(message, limit=90):
    message = " ".join(message.split())
    return message if len(message) <= limit else message[:limit - 1].rstrip() + "…"


def history_line(history):
    """One line for a claim's page: 'Holds on 2.9.1–2.14.1', 'Since 2.12.1; 2.11.0: differs (…)'."""
    if not history:
        return ""
    if all(step["verdict"] == NOT_APPLICABLE for step in history):
        return "No recorded CPU run applies to it."
    first = since(history)
    others = [f"{s['version']}: {s['verdict']}" + (f" ({_short(s['message'])})" if s["message"] else "")
              for s in history if s["verdict"] != HOLDS]
    if holds_on_every_release(history):
        return f"Holds on {releases(history)} (every recorded release)."
    if first is None:
        return f"Does not hold on {history[-1]['version']}; " + "; ".join(others) + "."
    return f"Since {first}; " + "; ".join(others) + "."
