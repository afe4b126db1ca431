"""The columnar model of one profile: ``TraceModel``.

One row per timeline item in flat numpy columns, sorted by (lane, row, start); no Python object
per event.  The model holds columns and the indexes that find items fast (a lane's rows, its
items by duration, the all-ranks step functions); what a view makes of them — tiles, details,
search — is the query layer's (``legate_prof.query``), so a bundle file, a raw log or a
synthetic profile all look the same to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from legate_prof.model.intervals import StepIntegral, stack_lanes
from legate_prof.model.item_parts import ItemPart
from legate_prof.model.kinds import (ANY_ACTIVE_GROUPS, GROUP_KEYS, GROUP_TITLE, ItemKind,
                                     processor_lanes)
from legate_prof.model.lazy_table import LazyTable, sorted_lookup
from legate_prof.model.event_tables import empty_event_tables
from legate_prof.model.sort_order import lex_order, stable_order, unique_values
from legate_prof.model.stacking import (StackedLane, renumbered, running_durations,
                                         stacked_together)

ITEM_COLUMNS = {
    "start": np.int64, "stop": np.int64, "create": np.int64, "ready": np.int64,
    "lane": np.int32, "row": np.int16, "name": np.int32, "kind": np.uint8, "op_id": np.uint64,
    # string id: a task's variant, a mapper call's mapper, a runtime operation's shape (what
    # it did to its arrays: ``read.runtime_stream.operation_shape``); 0 otherwise
    "detail": np.int32,
    # Realm events (0: none), for the critical path (``model.event_tables``): the event that
    # names the item (its completion; an instance's uid), the event of what made it (a call's
    # or kernel's: the task it runs inside), the precondition the runtime says gated it
    "fevent": np.uint64, "creator": np.uint64, "critical": np.uint64,
}
EVENT_COLUMNS = ("fevent", "creator", "critical")
LANE_COLUMNS = {
    "group": np.int16, "rank": np.int32, "ref": np.uint64, "ref2": np.uint64,
    "capacity": np.int64, "rows": np.int32,
}



def time_range_of(first, last, markers=()):
    """The timeline extent for items from ``first`` to ``last`` (see TraceModel.time_range)."""
    for m in markers:
        last = max(last, int(m["time"]))
    start = 0
    if first > last // 2:
        start = min(max(first - (last - first) // 20, 0), INT64_MAX - 1)
    # at least 2**12 steps of a float64 near ``start`` (the view's coordinates), however late a
    # damaged log puts a run of one nanosecond; never past what an int64 holds (times at
    # 2^63 - 1 made the padded end overflow where it became a column's type)
    return start, min(max(last + (last - start) // 200, start + 1, start + (start >> 40)),
                      INT64_MAX)


INT64_MAX = 2**63 - 1
_NO_LANES = np.zeros(0, np.int64)


class _Indexes:
    """Lazily built lookup structures of one model (never part of its meaning)."""

    __slots__ = ("sub_offset", "sub_bounds", "dur_perm", "lane_dur_perm", "lane_scans",
                 "all_ranks_steps", "extent", "lane_rows", "lane_busy", "group_lanes",
                 "call_starts", "procs_not_read")

    def __init__(self):
        self.sub_offset = self.sub_bounds = self.dur_perm = None
        self.extent = None  # (first start, last stop) of the items
        self.lane_dur_perm = {}  # lane -> its items by (row, duration), before dur_perm exists
        self.lane_scans = {}  # lane -> items its drawings scanned before it had that order
        self.all_ranks_steps = {}
        self.lane_rows = {}  # lane -> StackedLane, in a model built unstacked
        self.lane_busy = {}  # lane -> running sums of its items' durations (busy_prefix)
        self.group_lanes = None  # (rank, group index) -> its lanes (``lanes_of``)
        self.call_starts = None  # (the calls by start, their starts): ``folded_calls``
        self.procs_not_read = None  # ``processors_not_read``


# the kinds of item a task calls into (``assemble.nested_calls.CALL_KINDS``), and how many
# calls starting at one nanosecond ``folded_calls`` compares a wait with at most (a damaged
# file's thousands at one time cannot make it quadratic: a wait past them reads as a wait)
CALL_KINDS = (int(ItemKind.MAPPER_CALL), int(ItemKind.RUNTIME_CALL), int(ItemKind.APP_CALL))
CALLS_AT_ONE_START = 64


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
    line_text: dict = field(default_factory=dict)  # provenance -> its line's code (runtime)
    oom_instances: list = field(default_factory=list)  # from legate's out-of-memory report
    warnings: list = field(default_factory=list)
    sources: list = field(default_factory=list)  # input file paths
    markers: list = field(default_factory=list)  # dicts: time, rank, kind, title, fields
    errors: list = field(default_factory=list)  # inputs that could not be read
    stacked: bool = True  # False: items by (lane, start) on row 0, lanes stacked when drawn
    # the Realm event graph's records, keyed by event, not by item (``model.event_tables``)
    events: dict = field(default_factory=empty_event_tables)
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
            ix.lane_busy = old.lane_busy
            ix.extent = old.extent
            if not changes.keys() & {"utilization_steps", "procs", "ranks"}:  # (the ranks'
                ix.all_ranks_steps = old.all_ranks_steps  # lines count what they describe)
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

    def stacked_lane(self, lane) -> StackedLane:
        """A lane of a model built unstacked, stacked on first need (the lanes shown)."""
        ix = self._ix
        st = ix.lane_rows.get(lane)
        if st is None:
            lo, hi = self.lane_range(lane)
            st = ix.lane_rows.setdefault(lane, StackedLane(
                lo, self.items["start"][lo:hi], self.items["stop"][lo:hi],
                int(self.lanes["rows"][lane])))
        return st

    def stack_together(self, lanes):
        """Stack ``lanes`` of a model built unstacked that are not yet, in one pass
        (``stacking.stacked_together``: a drawing of many small lanes)."""
        if self.stacked:
            return
        ix = self._ix
        todo = [L for L in lanes if L not in ix.lane_rows]
        if len(todo) < 2:
            return
        ranges = [self.lane_range(L) for L in todo]
        for L, st in zip(todo, stacked_together(self.items["start"], self.items["stop"],
                                                ranges, self.lanes["rows"][todo].tolist())):
            ix.lane_rows.setdefault(L, st)

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
        if len(ids) == 0:
            return out
        order = stable_order(lanes)  # (the ids lane by lane: one pass, not one a lane)
        lanes = lanes[order]
        cut = np.flatnonzero(lanes[1:] != lanes[:-1]) + 1
        for a, b in zip(np.r_[0, cut].tolist(), np.r_[cut, len(ids)].tolist()):
            L, sel = int(lanes[a]), order[a:b]
            out[sel] = self.stacked_lane(L).row_of[ids[sel] - self.lane_range(L)[0]]
        return out

    def row_space(self, lane, with_order=True):
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

    def busy_prefix(self, lane):
        """(sums, first): running sums of the durations (ns, as floats) of ``lane``'s items
        in the order ``row_space`` reads them, from its position ``first``: the items at
        positions [i, j) last ``sums[j - first] - sums[i - first]`` in all (what a merged
        band is busy, ``query.level_of_detail``).  Made on first need: 8 bytes per item of
        the lanes drawn."""
        if not self.stacked:
            return self.stacked_lane(lane).busy_prefix(), 0
        lo, hi = self.lane_range(lane)
        sums = self._ix.lane_busy.get(lane)
        if sums is None:
            sums = self._ix.lane_busy[lane] = running_durations(self.items["start"][lo:hi],
                                                                self.items["stop"][lo:hi])
        return sums, lo

    def _ensure_duration_index(self):
        """Per sublane, items ordered by duration (longest first): finds wide items fast.
        Built on the first drawing only (statistics never need it)."""
        self._ensure_index()
        ix = self._ix
        if ix.dur_perm is not None:
            return
        key = ix.sub_offset[self.items["lane"]] + self.items["row"]
        dur = self.items["stop"] - self.items["start"]
        order = lex_order((-dur, key))
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
            perm = ix.lane_dur_perm[lane] = lex_order((-dur, self.items["row"][lo:hi])) + lo
        return lo, perm

    def note_scanned(self, lane, n):
        """Drawings of ``lane`` scanned ``n`` items (its duration order pays once enough did)."""
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
        """The lanes of ``group`` (of ``rank``, or of every rank), in order."""
        g = GROUP_KEYS.index(group)
        if rank is None:
            return np.flatnonzero(self.lanes["group"] == g)
        return self._group_lanes()[0].get((int(rank), g), _NO_LANES).copy()

    def groups_present(self, rank=None):
        """(group key, title) of groups with at least one lane, in display order."""
        present = set(self.lanes["group"].tolist()) if rank is None else \
            self._group_lanes()[1].get(int(rank), ())
        return [(k, GROUP_TITLE[k]) for i, k in enumerate(GROUP_KEYS) if i in present]

    def _group_lanes(self):
        """({(rank, group index): its lanes}, {rank: its group indexes}), made once: each
        rank's question was a pass over every lane (1,000 ranks' 19,000 lanes: ranks x
        ranks)."""
        got = self._ix.group_lanes
        if got is None:
            key = self.lanes["rank"].astype(np.int64) * 64 + self.lanes["group"]
            o = stable_order(key).astype(np.int64)
            k = key[o]
            cut = np.flatnonzero(k[1:] != k[:-1]) + 1
            lanes, groups = {}, {}
            for a, b in zip(np.concatenate(([0], cut)).tolist(),
                            np.concatenate((cut, [len(k)])).tolist()):
                if b > a:
                    r, g = divmod(int(k[a]), 64)
                    lanes[r, g] = o[a:b]
                    groups.setdefault(r, set()).add(g)
            got = self._ix.group_lanes = (lanes, groups)
        return got

    def all_ranks_steps_of(self, group):
        """The step functions the all-ranks line of ``group`` adds up: each rank's, and one of
        no use for the processors of the group that the logs describe on ranks whose own logs
        were not read (a rank's log describes other nodes' processors: the reference counts
        them in its "all" lines, as it counts every processor the logs describe — "all (CPU)"
        of ranks 1 and 3 of 5 given alone read 0.5 where it reads 0.2, a review)."""
        steps = [s for (r, g), s in self.utilization_steps.items() if g == group]
        extra = self.idle_processors_counted().get(group, 0)
        if extra:
            steps.append(StepIntegral(np.zeros(1), np.zeros(1), extra))
        return steps

    def idle_processors_counted(self):
        """{group: the processors of ranks not read that its all-ranks line counts, idle}
        (``processors_not_read``, but in the groups whose line is "any lane active")."""
        return {g: n for g, n in self.processors_not_read().items()
                if g not in ANY_ACTIVE_GROUPS}

    def processors_not_read(self):
        """{group: how many processors of it the procs table describes on ranks this model
        read no log of}: a GPU counts in its host's group and its device's (its two lanes).
        Found once (the all-ranks rows' strips ask it at every frame)."""
        if self._ix.procs_not_read is None:
            own = {int(r["rank"]) for r in self.ranks if "rank" in r}
            out = {}
            if len(self.procs.get("rank", ())):
                for rank, group, _ in processor_lanes(self.procs):
                    if rank not in own:
                        out[group] = out.get(group, 0) + 1
            self._ix.procs_not_read = out
        return self._ix.procs_not_read

    def all_ranks_step(self, group):
        """One step function for the group over all ranks (summed levels and denominators),
        built on first use by merging the ranks' level changes: O(N log N) in breakpoints."""
        cache = self._ix.all_ranks_steps
        if group not in cache:
            steps = self.all_ranks_steps_of(group)
            if not steps:
                cache[group] = None
            elif len(steps) == 1:
                cache[group] = steps[0]
            elif group in ANY_ACTIVE_GROUPS:
                cache[group] = StepIntegral.any_active(steps)
            else:
                cache[group] = StepIntegral.sum(steps)
        return cache[group]

    def stored_all_ranks_step(self, group):
        """The all-ranks step function of ``group`` if it is made or stored (a bundle keeps
        them), else None: the summaries then add up the ranks' own."""
        return self._ix.all_ranks_steps.get(group)

    # -- the profile protocol: what a set of ranks' models (``RankSet``) answers too ----------
    def item_parts(self):
        """The models holding the items: this one."""
        return [ItemPart(self, 0, 0, None, None)]

    def summary_model(self):
        """The model of everything but the items: this one."""
        return self

    def merged_model(self):
        """The profile as one model: this one."""
        return self

    # -- lookups by item ---------------------------------------------------------------------
    def op_provenance(self, op_ids):
        """Provenance string index for each op id (0 = none)."""
        op_ids = np.asarray(op_ids, dtype=np.uint64)
        if isinstance(self.ops, LazyTable) and (len(op_ids) <= 4096  # labels, details
                                                or self.ops.striped() is not None):
            return self.ops.lookup(op_ids, "provenance", 0).astype(np.int32)
        return sorted_lookup(self.ops["op_id"], self.ops["provenance"], op_ids,
                             0).astype(np.int32)

    def waits_of(self, i):
        w = self.waits
        lo = np.searchsorted(w["item"], i, side="left")
        hi = np.searchsorted(w["item"], i, side="right")
        return list(zip(w["start"][lo:hi].tolist(), w["ready"][lo:hi].tolist(),
                        w["end"][lo:hi].tolist()))

    def folded_calls(self, rows):
        """Which of the wait rows ``rows`` are a call its item made, folded into its waits as
        the reference does (``assemble.nested_calls``): the item's time inside a mapper,
        runtime or application call — a task's body run as an application call among them —
        is not waiting (a review read a task's own body as 99 % "Waiting").  Such a row has
        no event, is ready as it ends and spans a call on its item's lane exactly."""
        rows = np.asarray(rows, np.int64)
        w, it = self.waits, self.items
        out = np.zeros(len(rows), bool)
        if len(rows) == 0 or "event" not in w:
            return out
        cand = np.flatnonzero((np.asarray(w["event"])[rows] == 0)
                              & (np.asarray(w["ready"])[rows] == np.asarray(w["end"])[rows]))
        if len(cand) == 0:
            return out
        order, starts = self._call_starts()
        r = rows[cand]
        a, e = np.asarray(w["start"])[r], np.asarray(w["end"])[r]
        lane = np.asarray(it["lane"])[np.asarray(w["item"])[r]]
        lo = np.searchsorted(starts, a, "left")
        width = np.searchsorted(starts, a, "right") - lo
        found = np.zeros(len(cand), bool)
        for k in range(min(int(width.max(initial=0)), CALLS_AT_ONE_START)):
            idx = order[np.minimum(lo + k, len(order) - 1)]
            found |= (k < width) & (np.asarray(it["stop"])[idx] == e) & \
                (np.asarray(it["lane"])[idx] == lane)
        out[cand] = found
        return out

    def _call_starts(self):
        ix = self._ix
        if ix.call_starts is None:
            calls = np.flatnonzero(np.isin(self.items["kind"], CALL_KINDS))
            order = calls[stable_order(np.asarray(self.items["start"])[calls])]
            ix.call_starts = (order, np.asarray(self.items["start"])[order])
        return ix.call_starts

    def transfer_of(self, i):
        t = self.transfers
        if len(t["item"]) == 0:
            return None
        p = int(np.searchsorted(t["item"], i))
        if p < len(t["item"]) and t["item"][p] == i:
            return int(t["size"][p]), int(t["src"][p]), int(t["dst"][p]), int(t["inst"][p])
        return None

    def memory_bytes(self):
        """Resident bytes of the model's arrays (for the bytes-per-item benchmark)."""
        total = 0
        for table in (self.items, self.lanes, self.ops, self.waits, self.transfers,
                      self.procs, self.mems, *self.events.values()):
            for v in table.values():
                if isinstance(v, np.ndarray):
                    total += v.nbytes
        total += sum(s.nbytes for s in self.utilization_steps.values())
        if self._ix.dur_perm is not None:
            total += self._ix.dur_perm.nbytes + self._ix.sub_bounds.nbytes
        return total
