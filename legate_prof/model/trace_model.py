"""The merged, columnar trace model and its queries by time window.

One row per timeline item in flat numpy columns, sorted by (lane, row, start); no Python object
per event.  Everything the viewer draws comes from the query methods here (``items_in``,
``draw_list``, ``utilization``, ``item_details``, ``search``), so a bundle file, a raw log or a
synthetic profile all look the same to it.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from legate_prof.model.intervals import StepIntegral, stack_lanes, stack_rows
from legate_prof.model.kinds import GROUP_KEYS, GROUP_TITLE, ItemKind

ITEM_COLUMNS = {
    "start": np.int64, "stop": np.int64, "create": np.int64, "ready": np.int64,
    "lane": np.int32, "row": np.int16, "name": np.int32, "kind": np.uint8, "op_id": np.uint64,
    "detail": np.int32,  # string id: a task's variant, a mapper call's mapper; 0 otherwise
}
LANE_COLUMNS = {
    "group": np.int16, "rank": np.int32, "ref": np.uint64, "ref2": np.uint64,
    "capacity": np.int64, "rows": np.int32,
}


@dataclass
class DrawRow:
    """What to paint on one row of one lane for a view: boxes and merged gray bands.

    ``box_x0/x1`` are pixel columns (float), ``box_item`` indexes the model's items.
    ``band_x0/x1`` are pixel columns of merged bands and ``band_count`` the items in each.
    """

    lane: int
    row: int
    box_x0: np.ndarray
    box_x1: np.ndarray
    box_item: np.ndarray
    band_x0: np.ndarray
    band_x1: np.ndarray
    band_count: np.ndarray
    band_first: np.ndarray  # first item index of each band


SUM_RANKS_PER_FRAME = 64
# groups whose utilization is 1 while anything in them is active (not a share of lanes)
ANY_ACTIVE_GROUPS = ("channel", "dp")


def time_range_of(first, last, markers=()):
    """The timeline extent for items from ``first`` to ``last`` (see TraceModel.time_range)."""
    for m in markers:
        last = max(last, int(m["time"]))
    start = 0
    if first > last // 2:
        start = max(first - (last - first) // 20, 0)
    # at least 2**12 steps of a float64 near ``start`` (the view's coordinates), however late a
    # damaged log puts a run of one nanosecond
    return start, max(last + (last - start) // 200, start + 1, start + (start >> 40))


def sorted_lookup(ids, values, keys, default):
    """``values`` of the row of each of ``keys`` in ``ids`` (sorted), ``default`` where none."""
    keys = np.asarray(keys)
    if len(ids) == 0:
        return np.full(len(keys), default, values.dtype)
    pos = np.minimum(np.searchsorted(ids, keys), len(ids) - 1)
    return np.where(ids[pos] == keys, values[pos], default)


class LazyTable(Mapping):
    """A table (column name -> array) made on first use, once, by ``make()``.

    What a first frame never reads need not delay it: the ops of merged ranks, sorted by op
    id (half a second at 10 M items), are made when details, search or the findings first
    ask.  Until then ``lookup`` answers a few keys from ``runs``: the unmerged columns, whose
    slices between ``offsets`` are each sorted by ``key`` (each rank's table), the first run
    that has a key winning — as in the merged table.  Thread-safe: the findings run in a
    thread beside the viewer."""

    MAX_RUNS = 64  # beyond, a lookup makes the table (one search per run and key)

    def __init__(self, make, key, runs=None, offsets=None):
        self._make, self._columns, self._lock = make, None, threading.Lock()
        self._key = key
        self._runs = (runs, offsets) if runs is not None else None

    def _table(self):
        if self._columns is None:
            with self._lock:
                if self._columns is None:
                    self._columns = self._make()
                    self._make = self._runs = None  # and what they held
        return self._columns

    def lookup(self, keys, column, default):
        """``column`` of the row of each of ``keys`` (``default`` where none)."""
        keys = np.asarray(keys)
        runs = self._runs
        if self._columns is None and runs is not None and len(runs[1]) - 1 <= self.MAX_RUNS:
            cols, offsets = runs
            key = self._key
            out = np.full(len(keys), default, cols[column].dtype)
            todo = np.ones(len(keys), bool)
            for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
                if b == a or not todo.any():
                    continue
                ids = cols[key][a:b]
                pos = np.minimum(np.searchsorted(ids, keys), b - a - 1)
                hit = todo & (ids[pos] == keys)
                out[hit] = cols[column][a:b][pos[hit]]
                todo &= ~hit
            return out
        table = self._table()
        return sorted_lookup(table[self._key], table[column], keys, default)

    def __getitem__(self, key):
        return self._table()[key]

    def __iter__(self):
        return iter(self._table())

    def __len__(self):
        return len(self._table())


class _Indexes:
    """Lazily built lookup structures of one model (never part of its meaning)."""

    __slots__ = ("sub_offset", "sub_bounds", "dur_perm", "lane_dur_perm", "lane_scans",
                 "all_ranks_steps", "extent", "lane_rows")

    def __init__(self):
        self.sub_offset = self.sub_bounds = self.dur_perm = None
        self.extent = None  # (first start, last stop) of the items
        self.lane_dur_perm = {}  # lane -> its items by (row, duration), before dur_perm exists
        self.lane_scans = {}  # lane -> items its drawings scanned before it had that order
        self.all_ranks_steps = {}
        self.lane_rows = {}  # lane -> _StackedLane, in a model built unstacked


class _StackedLane:
    """One lane of a model built unstacked, stacked when it is first drawn: its items by
    (row, start) as positions with their item ids, and by (row, duration) for wide items
    once drawings have scanned enough (``duration_order``).  About 26 bytes per item of the
    lanes shown (34 with the duration order), none for the others."""

    __slots__ = ("ids", "bounds", "start", "stop", "row_of", "dur_perm")

    def __init__(self, lo, start, stop, n_rows):
        row = stack_rows(start, stop)  # in the lane's (start, longer first) order, as a build
        o = np.argsort(row, kind="stable")  # int16: a radix sort, keeps the start order
        self.ids = o + lo
        self.row_of = row  # by item: item i is on row row_of[i - lo]
        r = row[o]
        self.bounds = np.searchsorted(r, np.arange(max(n_rows, int(r.max(initial=0)) + 1) + 1))
        self.start, self.stop = start[o], stop[o]
        self.dur_perm = None

    def duration_order(self):
        """Positions by (row, duration longest first), made on first call."""
        if self.dur_perm is None:
            rows = np.repeat(np.arange(len(self.bounds) - 1), np.diff(self.bounds))
            self.dur_perm = np.lexsort((self.start - self.stop, rows))
        return self.dur_perm


@dataclass(frozen=True)
class TraceModel:
    """One profile, all ranks merged.  Frozen: a stage that adds to a model (the loader's
    sources and errors, the OOM report's instances) makes a new one with ``evolve``; only
    lazily built indexes are filled in later, inside ``_ix``."""

    items: dict  # column name -> array, sorted by (lane, row, start) (see ``stacked``)
    lanes: dict  # column name -> array, plus "name"/"title" lists
    names: list  # string table for items' names
    ops: Mapping  # op_id (sorted), kind, provenance index, parent (maybe a LazyTable)
    provenances: list  # provenance strings; index 0 is ""
    waits: dict  # item, start, ready, end (sorted by item)
    transfers: dict  # item (sorted), size, src, dst, inst for copies, fills, instances
    ranks: list  # dicts: rank, file, hostname, legion_version, zero_time, ...
    procs: dict  # proc_id, kind, rank
    mems: dict  # mem_id, kind, capacity, rank
    utilization_steps: dict = field(default_factory=dict)  # (rank, group) -> StepIntegral
    busy_ns: dict = field(default_factory=dict)  # (rank, group) -> busy time, waits excluded
    variant_by_name_group: dict = field(default_factory=dict)  # (name id, group) -> variant
    runtime_end_ns: int | None = None  # last time the runtime's event stream saw
    oom_instances: list = field(default_factory=list)  # from legate's out-of-memory report
    warnings: list = field(default_factory=list)
    sources: list = field(default_factory=list)  # input file paths
    markers: list = field(default_factory=list)  # dicts: time, rank, kind, title, fields
    errors: list = field(default_factory=list)  # inputs that could not be read
    stacked: bool = True  # False: items by (lane, start) on row 0, lanes stacked when drawn
    _ix: _Indexes = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "_ix", _Indexes())

    def evolve(self, **changes) -> "TraceModel":
        """A copy with ``changes``; the lazy indexes come along while items and lanes do."""
        new = replace(self, **changes)
        if not changes.keys() & {"items", "lanes"}:
            old, ix = self._ix, new._ix
            ix.sub_offset, ix.sub_bounds, ix.dur_perm = old.sub_offset, old.sub_bounds, old.dur_perm
            ix.lane_dur_perm, ix.lane_scans = old.lane_dur_perm, old.lane_scans
            ix.extent = old.extent
            if "utilization_steps" not in changes:
                ix.all_ranks_steps = old.all_ranks_steps
        return new

    def adopt_indexes(self, sub_offset, sub_bounds, dur_perm, all_ranks_steps):
        """Take indexes stored beside the model (a bundle keeps them: rebuilding costs seconds
        at 10M items).  They are checked by the bundle's reader."""
        ix = self._ix
        ix.sub_offset, ix.sub_bounds, ix.dur_perm = sub_offset, sub_bounds, dur_perm
        ix.all_ranks_steps = dict(all_ranks_steps)

    def adopt_extent(self, extent):
        """Take the items' extent found before (a bundle's, or the merged ranks')."""
        self._ix.extent = (int(extent[0]), int(extent[1]))

    def extent(self):
        """(first start, last stop) of the items, (0, 0) without items: found once (a pass
        over two columns: 160 MB of a mapped bundle at 10 M items), or stored in a bundle."""
        ix = self._ix
        if ix.extent is None:
            ix.extent = ((int(self.items["start"].min()), int(self.items["stop"].max()))
                         if self.n_items else (0, 0))
        return ix.extent

    def stored_indexes(self):
        """(sub_offset, sub_bounds, dur_perm), built if needed: what a bundle stores."""
        self._ensure_duration_index()
        return self._ix.sub_offset, self._ix.sub_bounds, self._ix.dur_perm

    @property
    def n_items(self):
        return len(self.items["start"])

    @property
    def n_lanes(self):
        return len(self.lanes["group"])

    @property
    def n_ranks(self):
        return len(self.ranks)

    def time_range(self):
        """Timeline extent: [0, last + last/200], as the reference viewer shows it.

        When everything happened in the last half (a crashed run seen through the runtime's
        event stream, say), start just before the first item instead of at 0.
        """
        first, last = self.extent()
        return time_range_of(first, last, self.markers)

    def _ensure_index(self):
        ix = self._ix
        if ix.sub_bounds is not None:
            return
        rows = self._stored_rows()
        ix.sub_offset = np.concatenate([[0], np.cumsum(rows)])
        key = ix.sub_offset[self.items["lane"]] + self.items["row"]
        ix.sub_bounds = np.searchsorted(key, np.arange(ix.sub_offset[-1] + 1))

    def _stored_rows(self):
        """Rows per lane in the items' order: a model built unstacked keeps each lane's items
        on row 0 in start order (``lanes["rows"]`` says how many rows it will have)."""
        if self.stacked:
            return self.lanes["rows"].astype(np.int64)
        return np.ones(self.n_lanes, np.int64)

    def lane_needs_stacking(self, lane) -> bool:
        """Whether drawing ``lane`` would stack it first (built unstacked, not yet drawn)."""
        return not self.stacked and lane not in self._ix.lane_rows

    def stacked_lane(self, lane) -> _StackedLane:
        """A lane of a model built unstacked, stacked on first need (the lanes shown)."""
        ix = self._ix
        st = ix.lane_rows.get(lane)
        if st is None:
            lo, hi = self.lane_range(lane)
            st = ix.lane_rows.setdefault(lane, _StackedLane(
                lo, self.items["start"][lo:hi], self.items["stop"][lo:hi],
                int(self.lanes["rows"][lane])))
        return st

    def as_stacked(self) -> "TraceModel":
        """This model with its items in (lane, row, start) order, every lane stacked (for
        what reads rows from the items: exports, the OOM report); itself when it is."""
        if self.stacked:
            return self
        bounds = np.searchsorted(self.items["lane"], np.arange(self.n_lanes + 1))
        perm, rows, _ = stack_lanes(self.items["start"], self.items["stop"], bounds)
        items = {c: (rows if c == "row" else a[perm]) for c, a in self.items.items()}
        inv = np.empty(len(perm), dtype=np.int64)
        inv[perm] = np.arange(len(perm))
        return self.evolve(items=items, waits=renumbered(self.waits, inv),
                           transfers=renumbered(self.transfers, inv), stacked=True)

    def rows_of(self, ids) -> np.ndarray:
        """The row of each item (stacking the lanes they are on, in a model built unstacked)."""
        ids = np.asarray(ids, dtype=np.int64)
        if self.stacked:
            return self.items["row"][ids].astype(np.int64)
        lanes = self.items["lane"][ids]
        out = np.zeros(len(ids), np.int64)
        for L in np.unique(lanes).tolist():
            sel = lanes == L
            out[sel] = self.stacked_lane(L).row_of[ids[sel] - self.lane_range(L)[0]]
        return out

    def _row_space(self, lane, with_order=True):
        """How the rows of ``lane`` are read: (start and stop arrays, the row bounds in them,
        the first position of the lane, its duration order or None (see
        ``_lane_duration_order``), the item id at each position or None where positions are
        item ids).  A stacked model's rows are runs of its items; a lane of a model built
        unstacked is read from its stacked copy."""
        if not self.stacked:  # (its duration order as a stacked model's: after some scans)
            st = self.stacked_lane(lane)
            perm = st.dur_perm
            if perm is None and with_order and \
                    self._ix.lane_scans.get(lane, 0) >= self.SCANS_BEFORE_SORT * len(st.ids):
                perm = st.duration_order()
            return st.start, st.stop, st.bounds, 0, perm, st.ids
        self._ensure_index()
        k = int(self._ix.sub_offset[lane])
        bounds = self._ix.sub_bounds[k:k + int(self.lanes["rows"][lane]) + 1]
        lo, perm = self._lane_duration_order(lane) if with_order else (0, None)
        return self.items["start"], self.items["stop"], bounds, lo, perm, None

    def _ensure_duration_index(self):
        """Per sublane, items ordered by duration (longest first): finds wide items fast.
        Built on the first drawing only (statistics never need it)."""
        self._ensure_index()
        ix = self._ix
        if ix.dur_perm is not None:
            return
        key = ix.sub_offset[self.items["lane"]] + self.items["row"]
        dur = self.items["stop"] - self.items["start"]
        order = np.lexsort((-dur, key))
        ix.dur_perm = order.astype(np.int64 if self.n_items >= 2**31 else np.int32)

    # A lane's duration order is built once its drawings have scanned this many times its
    # items: sorting costs about that much once, so scanning instead never costs more than
    # twice the sort, and the first frames of a big profile sort nothing.
    SCANS_BEFORE_SORT = 8

    def _lane_duration_order(self, lane):
        """(first item of ``lane``, its items by (row, duration longest first) as item
        indices, or None while drawings scan the items in view instead; see above): a slice
        of the stored index, or built for this lane."""
        lo, hi = self.lane_range(lane)
        ix = self._ix
        if ix.dur_perm is not None:
            return lo, ix.dur_perm[lo:hi]
        perm = ix.lane_dur_perm.get(lane)
        if perm is None:
            if ix.lane_scans.get(lane, 0) < self.SCANS_BEFORE_SORT * (hi - lo):
                return lo, None
            dur = self.items["stop"][lo:hi] - self.items["start"][lo:hi]
            perm = ix.lane_dur_perm[lane] = np.lexsort((-dur, self.items["row"][lo:hi])) + lo
        return lo, perm

    def _scanned(self, lane, n):
        ix = self._ix
        ix.lane_scans[lane] = ix.lane_scans.get(lane, 0) + n

    def sublane(self, lane, row):
        """Item ids [lo, hi) of one row of a stacked model (unstacked: row 0 is the lane;
        its rows are in ``stacked_lane``)."""
        self._ensure_index()
        k = self._ix.sub_offset[lane] + row
        return int(self._ix.sub_bounds[k]), int(self._ix.sub_bounds[k + 1])

    def lane_range(self, lane):
        self._ensure_index()
        off, b = self._ix.sub_offset, self._ix.sub_bounds
        return int(b[off[lane]]), int(b[off[lane + 1]])

    # -- lanes ---------------------------------------------------------------------------
    def lane_group(self, lane) -> str:
        return GROUP_KEYS[int(self.lanes["group"][lane])]

    def lanes_of(self, group: str, rank=None):
        g = GROUP_KEYS.index(group)
        sel = self.lanes["group"] == g
        if rank is not None:
            sel &= self.lanes["rank"] == rank
        return np.flatnonzero(sel)

    def groups_present(self, rank=None):
        """(group key, title) of groups with at least one lane, in display order."""
        sel = np.ones(self.n_lanes, bool) if rank is None else self.lanes["rank"] == rank
        present = set(self.lanes["group"][sel].tolist())
        return [(k, GROUP_TITLE[k]) for i, k in enumerate(GROUP_KEYS) if i in present]

    # -- queries by time window ----------------------------------------------------------
    def items_in(self, lane, t0, t1):
        """Indices of the items of ``lane`` that overlap [t0, t1]."""
        start_all, stop_all, bounds, _, _, ids = self._row_space(lane, with_order=False)
        out = []
        for row in range(len(bounds) - 1):
            lo, hi = int(bounds[row]), int(bounds[row + 1])
            i0 = lo + int(np.searchsorted(stop_all[lo:hi], t0, side="left"))
            i1 = lo + int(np.searchsorted(start_all[lo:hi], t1, side="right"))
            if i1 > i0:
                out.append(np.arange(i0, i1) if ids is None else ids[i0:i1])
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)

    def draw_list(self, lane, t0, t1, width_px, min_px=3.0):
        """Per row of ``lane``, the boxes and gray bands to draw for a view of ``width_px``.

        Cost is bounded by pixels, not by items: items narrower than ``min_px`` are counted
        per pixel column (``searchsorted`` over the row's starts) and runs of such columns
        become one gray band carrying the count; wide items are found through the
        per-row duration order, whose prefix of wide-enough items is short.
        """
        rows = []
        ns_px = (t1 - t0) / float(width_px)
        min_dur = min_px * ns_px
        start_all, stop_all, bounds, lane_lo, lane_perm, ids = self._row_space(lane)
        for row in range(len(bounds) - 1):
            lo, hi = int(bounds[row]), int(bounds[row + 1])
            if hi == lo:
                continue
            start = start_all[lo:hi]
            stop = stop_all[lo:hi]
            i0 = int(np.searchsorted(stop, t0, side="left"))
            i1 = int(np.searchsorted(start, t1, side="right"))
            if i1 <= i0:
                continue
            n_view = i1 - i0
            if lane_perm is None:  # no duration order yet: scan the items in view
                k = n_view
                self._scanned(lane, n_view)
            else:
                perm = lane_perm[lo - lane_lo:hi - lane_lo]
                # wide items: prefix of the duration order with dur >= min_dur
                k = bisect.bisect_left(range(hi - lo), -min_dur,
                                       key=lambda j: -(stop[perm[j] - lo] - start[perm[j] - lo]))
            if k < n_view:
                wide = np.asarray(perm[:k], dtype=np.int64) - lo
                wide = np.sort(wide[(wide >= i0) & (wide < i1)])
                edges = t0 + ns_px * np.arange(width_px + 1)
                pos = np.searchsorted(start[i0:i1], edges[1:-1], side="left") + i0
                cuts = np.concatenate([[i0], pos, [i1]])
                counts = np.diff(cuts)
                # narrow items per pixel column = all starts there minus the wide ones
                wpx = np.clip(((start[wide] - t0) / ns_px).astype(np.int64), 0, width_px - 1)
                counts = counts - np.bincount(wpx, minlength=width_px)
                narrow_px = counts
                first_of_px = cuts[:-1]
            else:  # scan the items in view (slices, no index arrays over all of them)
                is_wide = (stop[i0:i1] - start[i0:i1]) >= min_dur
                wide = np.flatnonzero(is_wide) + i0
                nar = np.flatnonzero(~is_wide) + i0
                npx = np.clip(((start[nar] - t0) / ns_px).astype(np.int64), 0, width_px - 1)
                # starts are in order, so each pixel's narrow items are one run of npx
                cuts = np.searchsorted(npx, np.arange(width_px + 1))
                narrow_px = np.diff(cuts)
                first_of_px = np.where(narrow_px > 0, nar[np.minimum(cuts[:-1], len(nar) - 1)]
                                       if len(nar) else -1, -1)
            bx0 = (start[wide] - t0) / ns_px
            bx1 = (stop[wide] - t0) / ns_px
            band = _bands(narrow_px, min_px)
            b0, b1, bc = band
            bfirst = first_of_px[b0.astype(np.int64)] if len(b0) else np.zeros(0, np.int64)
            # a band of one item is that item, widened to be visible
            single = bc == 1
            s_items = _first_narrow(start, stop, bfirst[single], min_dur)
            s_x0 = b0[single].astype(np.float64)
            box_item = np.concatenate([wide, s_items]).astype(np.int64) + lo
            band_first = bfirst[~single].astype(np.int64) + lo
            if ids is not None:  # positions in a lane stacked on demand: item ids
                box_item, band_first = ids[box_item], ids[band_first]
            rows.append(DrawRow(
                lane=lane, row=row,
                box_x0=np.concatenate([bx0, s_x0]),
                box_x1=np.concatenate([np.maximum(bx1, bx0 + 1.0), s_x0 + min_px]),
                box_item=box_item,
                band_x0=b0[~single].astype(np.float64),
                band_x1=(b1[~single] + 1).astype(np.float64),
                band_count=bc[~single],
                band_first=band_first,
            ))
        return rows

    def utilization(self, group, rank, t0, t1, bins):
        """Average utilization of a lane group in ``bins`` equal bins over [t0, t1].

        ``rank=None`` is the all-ranks summary: the per-rank averages weighted by each rank's
        denominator (processor count or memory capacity), which is exact.  Up to
        ``SUM_RANKS_PER_FRAME`` ranks it sums the ranks' integrals at the bin edges (nothing to
        build first); beyond, one step function of all ranks is built once.  Channels and
        dependent partitioning (``ANY_ACTIVE_GROUPS``) are busy when anything is, on any rank,
        as the reference's "all" line: their all-ranks step is the ranks' lines' union.
        """
        edges = np.linspace(t0, t1, bins + 1)
        if rank is not None:
            step = self.utilization_steps.get((rank, group))
            return step.average(edges) if step is not None else np.zeros(bins)
        step = self._ix.all_ranks_steps.get(group)
        steps = [s for (r, g), s in self.utilization_steps.items() if g == group]
        if step is None and (len(steps) > SUM_RANKS_PER_FRAME or group in ANY_ACTIVE_GROUPS):
            step = self._all_ranks_step(group)
        if step is not None:
            return step.average(edges)
        if not steps:
            return np.zeros(bins)
        acc = sum(np.diff(s.integral_at(edges)) for s in steps)
        den = np.diff(edges) * sum(s.denominator for s in steps)
        return np.divide(acc, den, out=np.zeros(bins), where=den > 0)

    def _all_ranks_step(self, group):
        """One step function for the group over all ranks (summed levels and denominators),
        built on first use by merging the ranks' level changes: O(N log N) in breakpoints."""
        cache = self._ix.all_ranks_steps
        if group not in cache:
            steps = [s for (r, g), s in self.utilization_steps.items() if g == group]
            if not steps:
                cache[group] = None
            elif len(steps) == 1:
                cache[group] = steps[0]
            elif group in ANY_ACTIVE_GROUPS:
                cache[group] = StepIntegral.any_active(steps)
            else:
                cache[group] = StepIntegral.sum(steps)
        return cache[group]

    # -- details and search ----------------------------------------------------------------
    def op_provenance(self, op_ids):
        """Provenance string index for each op id (0 = none)."""
        op_ids = np.asarray(op_ids, dtype=np.uint64)
        if isinstance(self.ops, LazyTable) and len(op_ids) <= 4096:  # labels, details
            return self.ops.lookup(op_ids, "provenance", 0).astype(np.int32)
        return sorted_lookup(self.ops["op_id"], self.ops["provenance"], op_ids,
                             0).astype(np.int32)

    def item_title(self, i):
        kind = ItemKind(int(self.items["kind"][i]))
        name = self.names[int(self.items["name"][i])]
        prov = self.provenances[int(self.op_provenance([self.items["op_id"][i]])[0])]
        if kind in (ItemKind.TASK, ItemKind.GPU_KERNEL, ItemKind.RUNTIME_OP) and prov \
                and prov != name:
            return f"{name}[{prov.rsplit('/', 1)[-1]}]"  # prog.py:16; details keep the path
        return name

    def item_details(self, i) -> dict:
        """Fields shown for one item (hover tooltip and pinned detail panel)."""
        it = self.items
        i = int(i)
        kind = ItemKind(int(it["kind"][i]))
        lane = int(it["lane"][i])
        start, stop = int(it["start"][i]), int(it["stop"][i])
        create, ready = int(it["create"][i]), int(it["ready"][i])
        op = int(it["op_id"][i])
        d = {
            "title": self.item_title(i),
            "kind": kind.name.lower(),
            "name": self.names[int(it["name"][i])],
            "rank": int(self.lanes["rank"][lane]),
            "lane": self.lanes["title"][lane],
            "start_ns": start, "stop_ns": stop, "duration_ns": stop - start,
        }
        if op and op != 0xFFFFFFFFFFFFFFFF:
            d["op_id"] = op
        prov = self.provenances[int(self.op_provenance([op])[0])]
        if prov:
            d["provenance"] = prov
        if kind in (ItemKind.TASK, ItemKind.GPU_KERNEL, ItemKind.META, ItemKind.MESSAGE,
                    ItemKind.COPY, ItemKind.FILL, ItemKind.DEP_PART):
            d["create_ns"], d["ready_ns"] = create, ready
            if ready >= create > 0 or (ready >= create and kind != ItemKind.INSTANCE):
                d["deferred_ns"] = ready - create
                d["delayed_ns"] = start - ready
        variant = self.variant_by_name_group.get(
            (int(it["name"][i]), self.lane_group(lane)))
        if variant:
            d["variant"] = variant
        w = self.waits_of(i)
        if len(w):
            d["waits"] = [{"start_ns": int(a), "ready_ns": int(b), "end_ns": int(c)} for a, b, c in w]
            d["waiting_ns"] = int(sum(c - a for a, b, c in w))
            d["running_ns"] = (stop - start) - d["waiting_ns"]
        t = self.transfer_of(i)
        if t is not None:
            size, src, dst, inst = t
            d["size_bytes"] = size
            if kind == ItemKind.INSTANCE:
                d["memory"] = self.memory_title(dst)
                d["instance"] = f"0x{inst:x}"
                d["lifetime_ns"] = stop - start
                d["create_ns"], d["ready_ns"] = create, ready
                d["deferred_ns"] = ready - create
            else:
                if src:
                    d["source"] = self.memory_title(src)
                d["destination"] = self.memory_title(dst)
                if stop > start:
                    d["bandwidth_GBps"] = size / (stop - start)
        return d

    def waits_of(self, i):
        w = self.waits
        lo = np.searchsorted(w["item"], i, side="left")
        hi = np.searchsorted(w["item"], i, side="right")
        return list(zip(w["start"][lo:hi].tolist(), w["ready"][lo:hi].tolist(),
                        w["end"][lo:hi].tolist()))

    def transfer_of(self, i):
        t = self.transfers
        if len(t["item"]) == 0:
            return None
        p = int(np.searchsorted(t["item"], i))
        if p < len(t["item"]) and t["item"][p] == i:
            return int(t["size"][p]), int(t["src"][p]), int(t["dst"][p]), int(t["inst"][p])
        return None

    def memory_title(self, mem_id):
        m = self.mems
        hit = np.flatnonzero(m["mem_id"] == np.uint64(mem_id))
        if len(hit) == 0:
            return f"memory 0x{int(mem_id):x}"
        j = hit[0]
        from legate_prof.model.kinds import MEM_GROUP, MemKind
        try:
            kind = MemKind(int(m["kind"][j]))
            title = GROUP_TITLE.get(MEM_GROUP.get(kind, ""), kind.name.title())
        except ValueError:
            title = f"Memory kind {int(m['kind'][j])}"
        return f"Rank {int(m['rank'][j])} {title} 0x{int(mem_id):x}"

    def search(self, text, limit=100_000):
        """Items whose name or provenance contains ``text`` (case-insensitive)."""
        q = text.lower()
        name_hit = np.array([q in n.lower() for n in self.names], dtype=bool)
        prov_hit = np.array([bool(p) and q in p.lower() for p in self.provenances], dtype=bool)
        sel = name_hit[self.items["name"]]
        if prov_hit.any():
            sel |= prov_hit[self.op_provenance(self.items["op_id"])]
        return np.flatnonzero(sel)[:limit]

    def memory_bytes(self):
        """Resident bytes of the model's arrays (for the bytes-per-item benchmark)."""
        total = 0
        for table in (self.items, self.lanes, self.ops, self.waits, self.transfers,
                      self.procs, self.mems):
            for v in table.values():
                if isinstance(v, np.ndarray):
                    total += v.nbytes
        total += sum(s.nbytes for s in self.utilization_steps.values())
        if self._ix.dur_perm is not None:
            total += self._ix.dur_perm.nbytes + self._ix.sub_bounds.nbytes
        return total



def renumbered(table, new_id):
    """A table keyed by item id (waits, transfers) once items are reordered: ids become
    ``new_id[id]``, rows stay sorted by item (an item's own rows keep their order)."""
    item = new_id[table["item"]].astype(np.int64)
    o = np.argsort(item, kind="stable")
    return {c: (item[o] if c == "item" else a[o]) for c, a in table.items()}


def _bands(counts, min_px):
    """Runs of pixel columns with narrow items; gaps shorter than ``min_px`` are bridged."""
    px = np.flatnonzero(counts > 0)
    if len(px) == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z
    brk = np.flatnonzero(np.diff(px) > min_px) + 1
    starts = np.concatenate([[0], brk])
    ends = np.concatenate([brk, [len(px)]]) - 1
    csum = np.concatenate([[0], np.cumsum(counts[px])])
    count = csum[ends + 1] - csum[starts]
    x0 = px[starts]
    x1 = np.maximum(px[ends], x0 + int(np.ceil(min_px)) - 1)
    return x0, x1, count


def _first_narrow(start, stop, first, min_dur):
    """The narrow item at or after each index (a single-item band's item).

    At most one wide item can start in a pixel column, so one step past it is enough.
    """
    out = np.asarray(first, dtype=np.int64).copy()
    if len(out) == 0:
        return out
    wide = (stop[out] - start[out]) >= min_dur
    out[wide] = np.minimum(out[wide] + 1, len(start) - 1)
    return out
