"""One buffered, time-anchored cache for everything computed per view (lane tiles and
utilization strips).

Results are computed on a grid of ``cell_ns`` (a power of two chosen by the caller), anchored
to absolute time, for the view plus half a view on each side (Perfetto's buffered bounds),
and kept until the view leaves them, the cell size changes or the generation moves on.  A
stale but covering entry (cell size within 8×) is shown while a later frame recomputes it.

While the view moves, an entry made for an earlier view that covers this one is drawn as it
is; once the view rests (``exact``), only the entry a fresh frame would make is (its cells
from the same first one, the same ``variant``): one kept from an earlier view differs by a
pixel here and there (its strip's picture anchored at another bin, its tile merged for another
pixel size), and a view at rest is drawn as a timeline opened there draws it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class CachedGrid:
    cell_ns: float
    first: int  # first cell index (absolute: cell k covers [k, k+1) · cell_ns)
    end: int  # one past the last cell
    data: object  # what ``compute`` returned
    generation: int
    variant: object = None  # what else ``compute`` was made for (a tile's pixel size)


def cells_for(cell_ns, x0, x1, extent=None):
    """(first, end): the cells an entry made for the view [x0, x1] covers: the view and half
    a view each side, within the run's ``extent`` (and a cell)."""
    lo, hi = math.floor(x0 / cell_ns), math.ceil(x1 / cell_ns)
    n = hi - lo
    return _within(cell_ns, lo - n // 2, hi + n // 2, extent)


def _within(cell_ns, first, end, extent):
    """Cells [first, end) cut to the run's ``extent`` and a cell each side (nothing is
    there to compute); as they are where none of them is within it."""
    if extent is None:
        return first, end
    a = max(first, math.floor(extent[0] / cell_ns) - 1)
    b = min(end, math.ceil(extent[1] / cell_ns) + 1)
    return (a, b) if a < b else (first, end)


class GridCache:
    """``extent``: (t0, t1), the run's times; no entry computes cells beyond it (the view
    and half a view each side, at the whole run's view, was twice the run: half the strips'
    work of a first frame was empty time)."""

    def __init__(self, extent=None):
        self._entries = {}
        self.extent = extent

    def clear(self):
        self._entries.clear()

    def peek(self, key) -> CachedGrid | None:
        return self._entries.get(key)

    def __len__(self):
        return len(self._entries)

    def put(self, key, entry: CachedGrid):
        """Keep an entry computed elsewhere (the tiles' thread)."""
        self._entries[key] = entry

    def get(self, key, cell_ns, x0, x1, compute, may_compute, generation, ask=None,
            variant=None, exact=True):
        """The entry covering [x0, x1]: cached, recomputed through ``compute(t0, t1, cells)``
        when ``may_compute()`` allows, else a stale covering one, else None.  With ``ask``
        nothing is computed here: ``ask(key, spec, make)`` is given what would be (``make()``
        returns the entry, for ``put``), and the stale covering one or None is returned.
        ``exact``: only the entry made for this view will do (``is_exact``); else any of
        this cell size and generation that covers the view."""
        lo, hi = _within(cell_ns, math.floor(x0 / cell_ns), math.ceil(x1 / cell_ns),
                         self.extent)
        c = self._entries.get(key)
        if is_exact(c, cell_ns, x0, x1, generation, variant, self.extent) or not exact and \
                c is not None and c.cell_ns == cell_ns and c.generation == generation and \
                c.first <= lo and hi <= c.end:
            return c
        usable = c is not None and c.first * c.cell_ns <= lo * cell_ns and \
            hi * cell_ns <= c.end * c.cell_ns and 0.125 <= c.cell_ns / cell_ns <= 8
        a, b = cells_for(cell_ns, x0, x1, self.extent)

        def make():
            return CachedGrid(cell_ns, a, b, compute(a * cell_ns, b * cell_ns, b - a),
                              generation, variant)
        if ask is not None:
            ask(key, (cell_ns, a, b, generation, variant), make)
            return c if usable else None
        if not may_compute():
            return c if usable else None
        c = self._entries[key] = make()
        return c


def is_exact(c, cell_ns, x0, x1, generation, variant=None, extent=None):
    """Whether ``c`` is the entry a fresh frame of the view [x0, x1] would make."""
    return c is not None and c.cell_ns == cell_ns and c.generation == generation and \
        (c.first, c.end) == cells_for(cell_ns, x0, x1, extent) and c.variant == variant
