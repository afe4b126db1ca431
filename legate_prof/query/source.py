"""``ProfileSource``: the one Qt-free door to a profile that the viewer, screenshots and the
report draw from.

Modelled on prof-viewer's ``DataSource``: ``info()`` describes the lane tree once;
``lane_tile`` / ``summary_tile`` answer for a time window at a pixel width; ``item_details``
and ``search`` answer about items.  Hit-testing answers from the last tile produced, so a click
means what the picture shows.  Callers never touch the model's tables.
"""

from __future__ import annotations

import threading
from dataclasses import replace

import numpy as np

from legate_prof.model.kinds import ItemKind
from legate_prof.model.stacking import stack_in_threads
from legate_prof.query.critical import CriticalLink, CriticalPaths
from legate_prof.query.details import detail_fields, item_facts, item_title
from legate_prof.query.lane_tree import ProfileInfo, describe
from legate_prof.causality.message_latency import MessageLatency, message_latency, one_host
from legate_prof.query.search import items_of_lines, search_items
from legate_prof.query.summary import average_at_hand, average_utilization, items_in, name_times
from legate_prof.query.tiles import Hit, LaneTile, hit_in_tile, lane_tile, lane_tiles

ITEM_COLUMNS = ("start", "stop", "row", "name")  # (``items_columns``)
# what a copy of the process begins on a model built in it for ``critical`` and ``insights``
# (``load.early_analysis``): the messages' latency, which reads no waits, beside the build's
# waits and the links (0.15 s of the guide's 4-rank run, asked by both after the links)
LATENCY_EARLY = "legate_prof.query.source:latency_of_model"


def latency_of_model(model) -> MessageLatency:
    """``message_latency`` of one model's items (``LATENCY_EARLY``)."""
    return message_latency(model.item_parts())


class ProfileSource:
    """The query API over one ``TraceModel``."""

    def __init__(self, model):
        self._m = model
        self._info = None
        self._outline = None  # info() without its notices (``outline``)
        self.last_tiles = {}  # lane -> the LaneTile last produced (hit-testing reads it)
        self._critical = CriticalPaths(self.item_parts)
        self._latency = None
        self._latency_lock = threading.Lock()

    # -- description ---------------------------------------------------------------------
    def info(self) -> ProfileInfo:
        if self._info is None:
            self._info = replace(self.outline(), notices=self.message_latency().notices())
        return self._info

    def outline(self) -> ProfileInfo:
        """``info()`` but for its notices until they are worked out: the lane tree, the time
        range, the markers, what a picture of the lanes needs.  The notices come from the
        messages' latency over every item (0.7 s of a 1 s first frame at 10 M items), which
        a window works out after its first frame."""
        if self._info is not None:
            return self._info
        if self._outline is None:
            self._outline = self._describe()
        return self._outline

    def _describe(self) -> ProfileInfo:
        return describe(self._m)

    def message_latency(self) -> MessageLatency:
        """The messages' clock skew and latency (``causality.message_latency``), computed once
        (or by a copy of this process while the model was built: ``LATENCY_EARLY``)."""
        with self._latency_lock:  # (asked by a window's notices and its critical path at once)
            if self._latency is None:
                got = self._latency_worked_out_early()
                self._latency = replace(got if got is not None else
                                        message_latency(self.item_parts()),
                                        one_host=one_host(self.summary_model().ranks))
        return self._latency

    def _latency_worked_out_early(self):
        from legate_prof.load.early_analysis import early_answer_of
        got = early_answer_of(self, LATENCY_EARLY)
        return got if isinstance(got, MessageLatency) else None

    # -- tiles -----------------------------------------------------------------------------
    def prepare_lanes(self, lanes):
        """Get ``lanes`` ready to draw before their tiles are asked: a model built unstacked
        stacks them now, several at once on the machine's cores (a lane's first tile would
        otherwise stack it alone).  Nothing to do for lanes already stacked."""
        stack_in_threads([(self._m, int(L)) for L in lanes])

    def lane_tile(self, lane, t0, t1, width_px, px_scale=1.0) -> LaneTile:
        """Boxes (with state pieces) and merged gray bands of one lane (``tiles.lane_tile``);
        kept as the lane's last tile for hit-testing."""
        tile = lane_tile(self._m, int(lane), t0, t1, width_px, px_scale)
        self.last_tiles[int(lane)] = tile
        return tile

    def lane_tiles(self, lanes, t0, t1, width_px, px_scale=1.0) -> list:
        """``lane_tile`` of each of ``lanes``, drawn together (``tiles.lane_tiles``: a
        report's tile of many small lanes)."""
        tiles = lane_tiles(self._m, [int(L) for L in lanes], t0, t1, width_px, px_scale)
        self.last_tiles.update((t.lane, t) for t in tiles)
        return tiles

    def summary_tile(self, group, rank, t0, t1, bins) -> np.ndarray:
        """Average utilization (0..1) of a lane group in ``bins`` equal bins; ``rank=None``
        is the all-ranks summary."""
        u = average_utilization(self._m, group, rank, t0, t1, int(bins))
        return np.clip(u, 0.0, 1.0)

    def summary_at_hand(self, group, rank, cell_ns, bins) -> bool:
        """Whether ``summary_tile`` of ``bins`` bins of ``cell_ns`` (and ``summary_bytes``)
        reads no large step function's cold pages and builds none: a window draws such a
        row's strip as the row appears (a first frame every row at once, not each again as
        it comes from its tiles' thread)."""
        if not average_at_hand(self._m, group, rank, cell_ns, bins):
            return False
        if not self._on_bytes_scale(group, rank):
            return True
        steps = self._m.utilization_steps  # a peak over the whole step function, below
        if rank is not None:
            step = steps.get((rank, group))
        else:
            step = self._m.stored_all_ranks_step(group)
            if step is None and sum(g == group for (_, g) in steps) > 1:
                return False
            if step is None:
                step = next((s for (_, g), s in steps.items() if g == group), None)
        return step is None or not step.mapped or len(step.t) < step.SAMPLED_MIN

    def summary_bytes(self, group, rank):
        """For a memory group with a memory of unknown capacity: ``(bytes, peak)``, where
        ``summary_tile(...) * bytes`` is the bytes in use and ``peak`` the most ever in use,
        so its row is drawn on a bytes scale (a share of a capacity nobody knows would look
        full).  None where the row is a share: processors, channels, memories whose
        capacity is known.  ``rank=None``: all ranks."""
        return self.memory_use(group, rank) if self._on_bytes_scale(group, rank) else None

    def _on_bytes_scale(self, group, rank):
        """Whether the row is a memory group's with a memory of unknown capacity."""
        lanes = self._memory_lanes().get((group, rank), [])
        info = self.outline()
        return bool(lanes) and not all(info.lanes[L].capacity > 0 for L in lanes)

    def memory_use(self, group, rank):
        """For a memory group: (the bytes its utilization is a share of — its capacity, or
        its peak where a memory's capacity is unknown — the most ever in use); None for other
        groups.  ``rank=None``: all ranks.  (An out-of-memory story wants the bytes: "60 %"
        alone did not say of what.)"""
        if not self._memory_lanes().get((group, rank)):
            return None
        steps = self._m.utilization_steps
        if rank is not None:
            step = steps.get((rank, group))
            den = step.denominator if step is not None else 0.0
        else:
            step = self._m.all_ranks_step(group)
            den = sum(s.denominator for (r, g), s in steps.items() if g == group)
        peak = step.peak_level() if step is not None else 0.0
        return float(den), float(peak)

    def _memory_lanes(self):
        """{(group, rank): its memory lanes; (group, None): every rank's}, made once (a
        search of every group per tile was most of a 1,000-rank report)."""
        if getattr(self, "_memory_lanes_by", None) is None:
            by = {}
            for g in self.outline().groups:
                if g.kind == "memory":
                    by.setdefault((g.group, g.rank), []).extend(g.lanes)
                    by.setdefault((g.group, None), []).extend(g.lanes)
            self._memory_lanes_by = by
        return self._memory_lanes_by

    # -- hit-testing -------------------------------------------------------------------------
    def last_tile(self, lane):
        return self.last_tiles.get(int(lane))

    def hit(self, lane, row, x_px) -> Hit | None:
        """What the last tile of ``lane`` shows at pixel column ``x_px`` of row ``row``."""
        return self.hit_tile(self.last_tiles.get(int(lane)), row, x_px)

    def hit_tile(self, tile, row, x_px) -> Hit | None:
        """What ``tile`` shows at pixel column ``x_px`` of ``row`` (for callers that keep
        their own tiles, such as the viewer's cache: the tile drawn is the tile asked)."""
        return hit_in_tile(tile, row, x_px, self.item_extent)

    # -- items -------------------------------------------------------------------------------
    def item_extent(self, i):
        return int(self._m.items["start"][i]), int(self._m.items["stop"][i])

    def item_lane(self, i):
        return int(self._m.items["lane"][i]), int(self._m.rows_of([i])[0])

    def lane_item_range(self, lane):
        """Item ids of a lane are the contiguous range [lo, hi) (items sorted by lane)."""
        return self._m.lane_range(int(lane))

    def items_columns(self, ids, columns=ITEM_COLUMNS) -> dict:
        """start, stop, row, name id of many items at once (arrays), or those of them
        ``columns`` names (a row may stack the items' lanes: asked only where it is needed;
        "kind", an ``ItemKind`` value, and "lane", where asked)."""
        ids = np.asarray(ids, dtype=np.int64)
        it = self._m.items
        get = {"start": lambda: it["start"][ids], "stop": lambda: it["stop"][ids],
               "row": lambda: self._m.rows_of(ids),
               "name": lambda: it["name"][ids].astype(np.int64),
               "kind": lambda: it["kind"][ids].astype(np.int64),
               "lane": lambda: it["lane"][ids].astype(np.int64)}
        return {c: get[c]() for c in columns}

    def items_provenance(self, ids) -> np.ndarray:
        """Provenance id (into ``provenances``; 0: none) of many items at once."""
        ids = np.asarray(ids, dtype=np.int64)
        return self._m.op_provenance(self._m.items["op_id"][ids]).astype(np.int64)

    def item_title(self, i) -> str:
        """The label drawn on a box (``details.item_title``)."""
        return item_title(self._m, i)

    def instances_of_op(self, op_id) -> np.ndarray:
        """Item ids of the instances created for an operation (details link to them)."""
        it = self._m.items
        sel = (it["op_id"] == np.uint64(op_id)) & (it["kind"] == ItemKind.INSTANCE)
        return np.flatnonzero(sel)

    def items_of_op(self, op_id, kinds=None) -> np.ndarray:
        """Item ids of an operation (its task, the copies, fills and instances it made),
        sorted; ``kinds`` (``ItemKind``s): only those (details link to them)."""
        it = self._m.items
        sel = it["op_id"] == np.uint64(op_id)
        if kinds is not None:
            sel &= np.isin(it["kind"], [int(k) for k in kinds])
        return np.flatnonzero(sel)

    def item_name_id(self, i) -> int:
        return int(self._m.items["name"][i])

    def name_of(self, name_id) -> str:
        return self._m.names[int(name_id)]

    def item_facts(self, i) -> dict:
        """What is known of one item, as plain values (``details.item_facts``)."""
        return item_facts(self._m, i)

    def item_transfer(self, i):
        """(size, source memory, destination memory, instance) of a copy, fill or instance;
        None for other items."""
        return self._m.transfer_of(i)

    def item_details(self, i, critical=True) -> list:
        """Ordered ``Field`` rows for one item, times in µs to the ns, with links.
        ``critical=False`` leaves out the critical-path rows (a viewer's hover, or details
        asked before ``critical_path_ready``: they would compute it first)."""
        return detail_fields(self, i, critical=critical)

    def name_times(self, t0, t1) -> np.ndarray:
        """Time (ns, float) each name's tasks and GPU kernels spent inside [t0, t1], by name
        id (into ``names``), summed over lanes: what a picture's legend names first."""
        return name_times(self._m, t0, t1)

    def items_in(self, t0, t1) -> int:
        """How many items run at some time inside [t0, t1]."""
        return items_in(self._m, t0, t1)

    def search(self, text, limit=100_000) -> np.ndarray:
        """Item ids whose name or provenance contains ``text`` (case-insensitive), sorted."""
        if not text:
            return np.zeros(0, np.int64)
        return np.asarray(search_items(self._m, text, limit=limit), dtype=np.int64)

    def items_of_lines(self, lines) -> np.ndarray:
        """Item ids launched from one of ``lines`` (provenance strings, whole), and the
        application calls made inside them, sorted (``search.items_of_lines``)."""
        return np.asarray(items_of_lines(self._m, lines), dtype=np.int64)

    def search_lanes(self, text) -> list:
        """Lane ids whose short or long name contains ``text`` (e.g. "I/O" finds the
        top-level task's lane)."""
        q = text.lower()
        return [x.lane for x in self.outline().lanes
                if q in x.short.lower() or q in x.long.lower()]

    # -- the critical path (``query.critical``) ----------------------------------------------
    def prepare_critical_path(self):
        """Compute every item's critical predecessor now (seconds at millions of items; the
        calls below do it on first use otherwise): e.g. in a thread after the first frame."""
        self._critical.links()

    @property
    def critical_path_ready(self) -> bool:
        """Whether the critical path is computed (the calls below answer at once)."""
        return self._critical.ready

    def critical_predecessor(self, i) -> CriticalLink | None:
        """What held item ``i`` up (``CriticalLink``); None for an item the reference gives
        no critical path (calls, kernels, a profile without event records)."""
        return self._critical.predecessor(i)

    def critical_successors(self, i) -> np.ndarray:
        """Item ids whose critical predecessor is ``i``, sorted."""
        return self._critical.successors(i)

    def run_critical_path(self, item=None) -> list:
        """The run's critical path as ``PathStep``s, from the item that ended last (or
        ``item``) back to where the chain stops."""
        return self._critical.run_path(item)

    def computed_once(self, key, compute):
        """``compute()``, once per source and ``key``: an analysis several readers of one
        source share (the path's pieces: the report's split, its findings' costs)."""
        memo = self.__dict__.setdefault("_memo", {})
        if key not in memo:
            memo[key] = compute()
        return memo[key]

    def computed(self, key):
        """What ``computed_once`` worked out for ``key``, or None where nothing asked yet."""
        return self.__dict__.get("_memo", {}).get(key)

    @property
    def run_critical_path_walked(self):
        """Whether the run's path is known (walked, or given by ``use_run_critical_path``)."""
        return self._critical.walked

    def use_run_critical_path(self, steps, has_event_graph=None):
        """Take the run's path as walked before on the same run (``store.results``): what
        needs only the path then needs no links (``has_event_graph``: as they said, when
        known)."""
        self._critical.prime(steps, has_event_graph)

    def has_event_graph(self) -> bool:
        """Whether the profile holds Legion's event graph (format 1011 on): its critical links
        follow events, not creators only."""
        return self._critical.has_event_graph()

    def critical_links(self):
        """Every item's link at once (``causality.critical_links.CriticalLinks``), for analyses."""
        return self._critical.links()

    # -- the whole profile -------------------------------------------------------------------
    def item_parts(self) -> list:
        """The models that hold the items, as ``ItemPart``s: analyses over all items (the
        findings, statistics) read their columns part by part instead of a merged copy."""
        return self._m.item_parts()

    @property
    def names(self) -> list:
        """The name table that tiles' and columns' name ids index."""
        return self._m.names

    @property
    def provenances(self) -> list:
        """The provenance table (``file:line``; index 0 is none) that provenance ids index."""
        return self._m.provenances

    def summary_model(self):
        """The model of everything but the items (lanes, string tables, step functions,
        busy times, markers), numbered as this source numbers lanes."""
        return self._m.summary_model()

    def merged_model(self):
        """The profile as one ``TraceModel``, for analyses that need one (exports, the cache);
        a source over ranks' models merges them on first call."""
        return self._m.merged_model()

    @property
    def warnings(self):
        return self._m.warnings

    @property
    def errors(self):
        return self._m.errors

    @property
    def sources(self):
        return self._m.sources
