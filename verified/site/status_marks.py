"""The one status mark a claim shows: what its outcomes on every device add up to, as a short
glyph and the words that say it (for screen readers, tooltips and verification.json).

A failure anywhere wins; then a pass (with the devices it was not run on said after it);
then "not run here" (a CUDA-only claim on a machine without a GPU); a device on which the
claim has no case at all (every entry "not applicable") is not mentioned.
"""
from verified.outcomes import BAD, DEVICES, LABELS, NOT_APPLICABLE, NOT_RUN, NOT_RUN_HERE, PASSED

VERIFIED, FAILED, NOT_RUN_KIND, NOT_APPLICABLE_KIND = "verified", "failed", "not-run", "not-applicable"
GLYPHS = {VERIFIED: "✓", FAILED: "✗", NOT_RUN_KIND: "○", NOT_APPLICABLE_KIND: "–"}


def _names(devices):
    return " and ".join(d.upper() for d in devices)


def devices_shown(device_outcomes):
    """The devices a claim has a case on, in DEVICES order (the CPU when it has none at all)."""
    shown = [d for d in DEVICES if device_outcomes[d] != NOT_APPLICABLE]
    return shown or [DEVICES[0]]


def status(device_outcomes):
    """(kind, label) of a claim from {device: claim outcome}, e.g. ("verified", "verified on CPU")."""
    bad = [d for d in DEVICES if device_outcomes[d] in BAD]
    passed = [d for d in DEVICES if device_outcomes[d] == PASSED]
    not_run = [d for d in DEVICES if device_outcomes[d] == NOT_RUN]
    if bad:
        return FAILED, "; ".join(f"{LABELS[device_outcomes[d]]} on {d.upper()}" for d in bad)
    if passed:
        label = f"verified on {_names(passed)}"
        return VERIFIED, label + (f"; {_names(not_run)} {NOT_RUN_HERE}" if not_run else "")
    if not_run:
        return NOT_RUN_KIND, f"{_names(not_run)} only: {NOT_RUN_HERE}"
    return NOT_APPLICABLE_KIND, "not applicable to this torch"


def glyph(kind):
    return GLYPHS[kind]
