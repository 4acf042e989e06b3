"""A claim's measured figures (verified.probing.measured): what its probes saw on this machine, shown
under the claim with the CPU code path it was measured on, and marked as not claimed."""
from docutils import nodes


def figures_of(entries):
    """[(device, name, value)] of every figure the claim's probes recorded, in entry order."""
    return [(entry["device"], name, value) for entry in entries
            for name, value in (entry.get("measured") or {}).items()]


def shown_value(value):
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def measured_note(entries, run):
    """A paragraph of the figures, or None when the probes recorded none."""
    figures = figures_of(entries)
    if not figures:
        return None
    line = nodes.paragraph(classes=["verified-claim-measured"])
    line += nodes.strong(text="Measured on this machine")
    line += nodes.Text(f" (CPU capability {run.get('cpu_capability') or 'not recorded'}; "
                       "a figure, not a claim: another CPU or BLAS may give another): ")
    for index, (device, name, value) in enumerate(figures):
        if index:
            line += nodes.Text("; ")
        line += nodes.Text(f"{name}{'' if device == 'cpu' else f' ({device})'}: ")
        line += nodes.literal(text=shown_value(value))
    return line
