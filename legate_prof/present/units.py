"""Numbers as people read them: times and byte counts in the largest unit they reach.

One formatting for every output — terminal tables, the viewer, screenshots, the report — so a
figure reads the same wherever it is shown.
"""

from __future__ import annotations


def format_ns(ns):
    """ns -> '1.250 ms': the largest unit the value reaches, three decimals."""
    ns = float(ns)
    for unit, div in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(ns) >= div:
            return f"{ns / div:.3f} {unit}"
    return f"{ns:.0f} ns" if round(ns) != 0 else "0 ns"  # (not "-0 ns")


def format_ns_us(ns):
    """Times in details: µs with three decimals (ns precision), copyable."""
    return f"{ns / 1000:,.3f} µs"


def format_bytes(n, digits=1, exact=False):
    """'1.5 MiB' (the largest unit reached); ``exact`` adds the byte count: stats, API, report."""
    n = int(n)
    for unit, div in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= div:
            return f"{n / div:.{digits}f} {unit}" + (f" ({n:,} bytes)" if exact else "")
    return f"{n:,} bytes" if exact else f"{n} B"


def format_capacity(n):
    """A memory's capacity, which a log may not give (0)."""
    return format_bytes(n) if n else "capacity unknown"
