"""Stacking the items of a lane into rows where boxes never overlap — the one place that
knows how: a lane stacked when it is first drawn (``StackedLane``), a whole model stored
stacked (``stacked_layout``), several lanes stacked at once on the machine's cores.

Whether a profile is stacked when it is built or lane by lane when drawn is decided once, by
the loader (``legate_prof.load.loader``): commands that draw few lanes of big profiles (view,
screenshot, report) stack when drawn; the others never need rows or stack at build.
"""

from __future__ import annotations

import os

import numpy as np

from legate_prof.model.intervals import lane_rows, ranges_end_to_end
from legate_prof.model.sort_order import lex_order, stable_order


class StackedLane:
    """One lane of a model built unstacked, stacked when it is first drawn: its items by
    (row, start) as positions with their item ids, and by (row, duration) for wide items
    once drawings have scanned enough (``duration_order``).  About 26 bytes per item of the
    lanes shown (34 with the duration order), none for the others."""

    __slots__ = ("ids", "bounds", "start", "stop", "row_of", "dur_perm", "busy")

    def __init__(self, lo, start, stop, n_rows):
        row, o = lane_rows(start, stop)  # (by item in start order; the (row, start) order)
        self._fill(lo, row, o, start[o], stop[o], n_rows)

    @classmethod
    def of_rows(cls, lo, row, o, start, stop, n_rows):
        """The lane whose items (in start order) are on rows ``row``, ``o`` the order that
        sorts them by (row, start), ``start`` and ``stop`` already in that order."""
        st = cls.__new__(cls)
        st._fill(lo, row, o, start, stop, n_rows)
        return st

    def _fill(self, lo, row, o, start, stop, n_rows):
        self.ids = o + lo
        self.row_of = row  # by item: item i is on row row_of[i - lo]
        r = row[o]
        self.bounds = np.searchsorted(r, np.arange(max(n_rows, int(r.max(initial=0)) + 1) + 1))
        self.start, self.stop = start, stop
        self.dur_perm = self.busy = None

    def busy_prefix(self):
        """Running sums of the durations by position (``TraceModel.busy_prefix``)."""
        if self.busy is None:
            self.busy = running_durations(self.start, self.stop)
        return self.busy

    def duration_order(self):
        """Positions by (row, duration longest first), made on first call."""
        if self.dur_perm is None:
            rows = np.repeat(np.arange(len(self.bounds) - 1), np.diff(self.bounds))
            self.dur_perm = lex_order((self.start - self.stop, rows))
        return self.dur_perm


def stacked_together(start, stop, ranges, n_rows):
    """The ``StackedLane`` of each lane ``[lo, hi)`` of ``ranges`` (items sorted by start,
    longer first on ties), equal to ``StackedLane(lo, start[lo:hi], stop[lo:hi], n)``: the
    rows as nesting depths (``intervals.stack_rows``' first try) of every lane at once, its
    items keyed by lane; a lane whose depths overlap on a row is stacked alone.  (A lane at a
    time: ~70 us each, 1.4 s of a report's 19,000 lanes of 1,000 ranks.)"""
    lo = np.array([a for a, _ in ranges], np.int64)
    size = np.array([b - a for a, b in ranges], np.int64)
    off = np.concatenate(([0], np.cumsum(size)))
    total = int(off[-1])
    pos = ranges_end_to_end(lo, size)
    s0, e0 = start[pos], stop[pos]
    s, e = s0.astype(np.int64), e0.astype(np.int64)
    lane = np.repeat(np.arange(len(ranges), dtype=np.int64), size)
    t_min = min(int(s.min(initial=0)), int(e.min(initial=0)))
    if total == 0 or max(int(s.max()), int(e.max())) - t_min >= 2**42 or len(ranges) >= 2**20:
        return [StackedLane(a, start[a:b], stop[a:b], int(n)) for (a, b), n in zip(ranges, n_rows)]
    key = lane << 42
    depth = np.arange(total) - np.searchsorted(np.sort(key | (e - t_min)), key | (s - t_min),
                                               side="right")
    depth = np.minimum(np.maximum(depth, 0), 32767).astype(np.int16)
    o = stable_order(lane * 32768 + depth)  # (lane, row, start): each lane's a block
    r, k = depth[o], lane[o]
    overlap = (k[1:] == k[:-1]) & (r[1:] == r[:-1]) & (s[o][1:] < e[o][:-1])
    crossing = set(k[1:][overlap].tolist())
    s_o, e_o = s0[o], e0[o]
    out = []
    for j, ((a, b), n) in enumerate(zip(ranges, n_rows)):
        if j in crossing:
            out.append(StackedLane(a, start[a:b], stop[a:b], int(n)))
            continue
        x, y = int(off[j]), int(off[j + 1])
        out.append(StackedLane.of_rows(a, depth[x:y], o[x:y] - x, s_o[x:y], e_o[x:y], int(n)))
    return out


def running_durations(start, stop):
    """[0, d0, d0 + d1, …]: running sums of the durations ``stop - start`` (ns, as floats:
    no sum of a stranger's times overflows)."""
    out = np.empty(len(start) + 1, np.float64)
    out[0] = 0.0
    np.cumsum(stop.astype(np.float64) - start.astype(np.float64), out=out[1:])
    return out


def stacked_layout(model):
    """(order, rows, waits, transfers, index) that store ``model`` stacked: the items'
    order (None: as they are) and rows, the tables keyed by item renumbered, and the index.
    An unstacked model is stacked lane by lane as the timeline stacks one
    (``TraceModel.stacked_lane``): 14 bytes per item, no copy of its columns."""
    if model.stacked:
        sub_offset, sub_bounds, dur_perm = model.stored_indexes()
        return None, model.items["row"], model.waits, model.transfers, {
            "sub_offset": sub_offset, "sub_bounds": sub_bounds, "dur_perm": dur_perm}
    it, n = model.items, model.n_items
    small = np.int32 if n < 2**31 else np.int64
    order, dur_perm = np.empty(n, small), np.empty(n, small)
    rows = np.zeros(n, np.int16)
    lane_rows = model.lanes["rows"].astype(np.int64)
    sub_offset = np.concatenate([[0], np.cumsum(lane_rows)])
    sub_bounds = np.full(int(sub_offset[-1]) + 1, n, np.int64)
    bounds = np.searchsorted(it["lane"], np.arange(model.n_lanes + 1))
    for L in range(model.n_lanes):
        lo, hi = int(bounds[L]), int(bounds[L + 1])
        st = StackedLane(lo, it["start"][lo:hi], it["stop"][lo:hi], int(lane_rows[L]))
        order[lo:hi] = st.ids
        rows[lo:hi] = st.row_of[st.ids - lo]
        dur_perm[lo:hi] = st.duration_order() + lo
        sub_bounds[sub_offset[L]:sub_offset[L + 1]] = st.bounds[:int(lane_rows[L])] + lo
    inv = np.empty(n, dtype=small)
    inv[order] = np.arange(n, dtype=small)
    waits, transfers = renumbered(model.waits, inv), renumbered(model.transfers, inv)
    del inv
    index = {"sub_offset": sub_offset, "sub_bounds": sub_bounds, "dur_perm": dur_perm}
    return order, rows, waits, transfers, index


def renumbered(table, new_id):
    """A table keyed by item id (waits, transfers) once items are reordered: ids become
    ``new_id[id]``, rows stay sorted by item (an item's own rows keep their order)."""
    item = new_id[table["item"]].astype(np.int64)
    o = stable_order(item)
    return {c: (item[o] if c == "item" else a[o]) for c, a in table.items()}


def stack_in_threads(jobs):
    """Stack the lanes ``[(model, lane)]`` not yet stacked, on a thread per core: the work is
    numpy sorts and gathers, which run without the GIL."""
    jobs = [(m, L) for m, L in jobs if m.lane_needs_stacking(L)]
    if len(jobs) > 1 and (os.cpu_count() or 1) > 1:
        from concurrent.futures import ThreadPoolExecutor
        try:
            with ThreadPoolExecutor(min(os.cpu_count(), len(jobs))) as pool:
                list(pool.map(lambda j: j[0].stacked_lane(j[1]), jobs))
            return
        except RuntimeError:  # no new threads while the interpreter shuts down
            pass
    for m, L in jobs:
        m.stacked_lane(L)
