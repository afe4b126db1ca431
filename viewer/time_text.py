"""Times written with as many digits as the zoom shows: a 0.6 ms view at 1 s reads
"1.006000 s – 1.006600 s", never "1.006 s – 1.006 s"; one unit for every tick of a view."""

from __future__ import annotations

import math

from legate_prof.present.units import format_ns

UNITS = (("s", 1e9), ("ms", 1e6), ("µs", 1e3), ("ns", 1.0))
MAX_DIGITS = 9


def unit_for(ns):
    """(name, ns per unit): the largest unit that ``ns`` reaches (ns below 1 µs)."""
    ns = abs(float(ns))
    return next(((u, d) for u, d in UNITS if ns >= d), UNITS[-1])


def digits_for(step_ns, div):
    """Decimals that tell apart two times ``step_ns`` apart, in a unit of ``div`` ns."""
    if step_ns <= 0 or not math.isfinite(step_ns):
        return 3
    return min(MAX_DIGITS, max(0, math.ceil(-math.log10(step_ns / div) - 1e-9)))


def format_time(ns, step_ns, unit=None):
    """``ns`` in its largest unit (or ``unit``'s), with the decimals ``step_ns`` needs."""
    name, div = unit or unit_for(ns)
    return f"{ns / div:.{digits_for(step_ns, div)}f} {name}"


def format_range(a, b):
    """'1.006000 s – 1.006600 s (600.000 µs)': both ends to a thousandth of the span, in the
    unit of the larger, and the span."""
    span = max(b - a, 0.0)
    unit = unit_for(max(abs(a), abs(b)))
    step = span / 1000 if span > 0 else 1.0
    return (f"{format_time(a, step, unit)} – {format_time(b, step, unit)} "
            f"({format_ns(span)})")
