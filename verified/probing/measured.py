"""Figures a probe measured on this machine, shown beside its claim but never claimed.

Some numbers depend on the CPU, its code path or the BLAS (how many of 20 batched products
differ bitwise from the single ones). A claim states what holds on every machine; the
probe records the figure it saw with ``measured.record(name, value)``, and the plugin
stores the figures in the probe's entry (``measured`` in the results file), next to the
run's CPU capability (``run.cpu_capability``). Nothing asserts them.
"""
SCALARS = (bool, int, float, str)
figures = {}  # in a probe's process: name -> value, in the order recorded


def record(name, value):
    """Note that this probe measured `value` (a number, a boolean or a short text) as `name`."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"a measured figure needs a name, not {name!r}")
    if not isinstance(value, SCALARS):
        raise TypeError(f"measured figure {name!r}: {type(value).__name__} is not a number, boolean or text")
    figures[name] = value
