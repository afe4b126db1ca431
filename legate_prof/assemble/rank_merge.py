"""Merge the models of single ranks (built in parallel, or per-rank bundles) into one.

Each rank's model already has its lanes, rows, waits and utilization; merging renumbers string
ids (names, provenances), offsets lane and item indices, and concatenates.  Lanes must come out
in the order one build of all files would give them — (rank, group, ref, ref2) — and no rank may
appear in two models (two logs of one rank would need a lane's rows stacked together):
``merge_opened`` raises ``CannotMerge`` then, and the caller builds all files at once instead.
A rank's log holds only that rank's lanes (a copy between two nodes is on the lanes of the node
that recorded it: ``record_items.recording_rank``), so the ranks of one run always merge.

Models are opened one at a time, twice (``open_model(i)``, typically mapping a bundle): once for
their small tables, once to copy their big columns into place.  So the peak is the merged model
plus one rank's, not every rank's twice.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from legate_prof.model.intervals import StepIntegral
from legate_prof.assemble.lane_layout import lane_table
from legate_prof.assemble.rank_checks import cross_file_problems
from legate_prof.assemble.record_items import dedup, first_by_key
from legate_prof.model.event_tables import concat_event_tables
from legate_prof.model.sort_order import unique_values
from legate_prof.model.trace_model import LazyTable, TraceModel
from legate_prof.assemble.utilization import in_lane_order

_LANE_KEYS = ("rank", "group", "ref", "ref2")


class CannotMerge(Exception):
    """These models cannot be concatenated into what one build would give."""


def _union_strings(tables):
    """One string table for several; per table, the array mapping its ids to the union's."""
    index, strings, remaps = {}, [], []
    for table in tables:
        remap = np.empty(len(table), np.int64)
        for i, s in enumerate(table):
            j = index.get(s)
            if j is None:
                j = index[s] = len(strings)
                strings.append(s)
            remap[i] = j
        remaps.append(remap)
    return strings, remaps


class ModelSummary:
    """What pass one keeps of a model: everything but its per-item columns.  ``keep``: refer
    to the model's own small arrays and step functions (it stays open: ``RankSet``)
    instead of copies (it is closed before the merge maps the next one)."""

    def __init__(self, m, keep=False):
        self.n_items, self.n_lanes = m.n_items, m.n_lanes
        self.n_waits = len(next(iter(m.waits.values()))) if m.waits else 0
        self.n_transfers = len(m.transfers["item"])
        self.names, self.provenances, self.ranks = list(m.names), list(m.provenances), m.ranks
        self.lanes = {k: np.array(m.lanes[k]) for k in (*_LANE_KEYS, "rows", "capacity")}
        self.lane_ranks = set(unique_values(m.lanes["rank"]).tolist())
        self.n_ops = len(m.ops["op_id"])
        self.extent = m.extent()
        self.procs = {k: np.array(v) for k, v in m.procs.items()}
        self.mems = {k: np.array(v) for k, v in m.mems.items()}
        self.steps = dict(m.utilization_steps) if keep else {
            k: StepIntegral(np.array(s.t), np.array(s.integral), s.denominator)
            for k, s in m.utilization_steps.items()}
        self.busy_ns, self.variants = dict(m.busy_ns), dict(m.variant_by_name_group)
        self.warnings, self.markers, self.sources = list(m.warnings), list(m.markers), list(
            m.sources)
        self.runtime_end_ns, self.stacked = m.runtime_end_ns, m.stacked
        self.line_text = dict(m.line_text)
        self.dtypes = ({k: v.dtype for k, v in m.items.items()},
                       {k: v.dtype for k, v in m.waits.items()},
                       {k: v.dtype for k, v in m.transfers.items()},
                       {k: v.dtype for k, v in m.ops.items()})


# Threads that copy columns into the merged model: numpy copies, gathers and sorts release the
# GIL, so on two cores the merge takes about half the time (its copying is bound by faulting in
# fresh pages, not by Python).
COPY_THREADS = 2


def _copy_into(dst, src):
    dst[...] = src


def _take_into(dst, table, keys):
    """``dst[:] = table[keys]`` without a temporary (keys are in range: the models are ours
    or were checked)."""
    np.take(table.astype(dst.dtype, copy=False), keys, out=dst, mode="clip")


def _add_into(dst, src, offset):
    np.add(src, offset, out=dst, casting="unsafe")


def _run_all(pool, jobs):
    """Run ``jobs`` (function, args...) on ``pool`` — or here, once the interpreter is shutting
    down and no thread can start (the merge of ``view``'s cache writer, after a quick close)."""
    futures = []
    try:
        for job in jobs:
            futures.append(pool.submit(*job))
    except RuntimeError:  # "cannot schedule new futures after interpreter shutdown"
        for job in jobs[len(futures):]:
            job[0](*job[1:])
    for f in futures:
        f.result()


def release_pages(model):
    """Let go of the pages of the files a model maps (``madvise(MADV_DONTNEED)``): they stay
    in the page cache and come back on the next read, but no longer count as this process's
    memory.  Merging ranks that stay open (``RankSet``) reads every page of each; without
    this the merge would hold all ranks' pages besides the merged copy."""
    import mmap
    advice = getattr(mmap, "MADV_DONTNEED", None)
    if advice is None:
        return
    seen = set()
    for table in (model.items, model.waits, model.transfers, model.ops):
        for col in table.values():
            base = col
            while isinstance(base, (np.ndarray, memoryview)):
                base = base.base if isinstance(base, np.ndarray) else base.obj
            if isinstance(base, mmap.mmap) and id(base) not in seen:
                seen.add(id(base))
                try:
                    base.madvise(advice)
                except (OSError, ValueError):
                    pass


def sorted_ops(ops_all):
    """The merged ops table, made on first use (``LazyTable``) — possibly by the cache's
    writer while the interpreter shuts down, when no thread pool can start: then alone."""
    try:
        with ThreadPoolExecutor(COPY_THREADS, thread_name_prefix="legate_prof ops") as pool:
            ops = first_by_key(ops_all, "op_id", pool)
    except RuntimeError:  # "cannot schedule new futures after interpreter shutdown"
        ops = first_by_key(ops_all, "op_id")
    ops["provenance"] = ops["provenance"].astype(np.int32, copy=False)
    return ops


class MergePlan:
    """How models of disjoint ranks line up as one: their order (by rank), the union of their
    string tables with each model's map into it, the offsets of their lanes, items, waits,
    transfers and ops, and everything of the merged model but its per-item columns."""

    def __init__(self, small):
        if len({s.stacked for s in small}) != 1:
            raise CannotMerge("stacked and unstacked models")
        seen = [s.lane_ranks for s in small]
        if sum(len(r) for r in seen) != len(set().union(*seen)):
            raise CannotMerge("a rank's lanes are in two models")
        order = sorted(range(len(small)), key=lambda k: min(seen[k], default=1 << 30))
        spans = [(min(seen[k], default=0), max(seen[k], default=-1)) for k in order]
        for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
            if a1 >= 0 and b1 >= 0 and a1 >= b0:
                raise CannotMerge("ranks of two models interleave")
        self.order = order
        self.small = small = [small[k] for k in order]
        self.names, self.name_maps = _union_strings([s.names for s in small])
        self.provenances, self.prov_maps = _union_strings([s.provenances for s in small])
        self.item_off = np.cumsum([0] + [s.n_items for s in small])
        self.lane_off = np.cumsum([0] + [s.n_lanes for s in small])
        self.wait_off = np.cumsum([0] + [s.n_waits for s in small])
        self.tr_off = np.cumsum([0] + [s.n_transfers for s in small])
        self.op_off = np.cumsum([0] + [s.n_ops for s in small])

    def empty_columns(self, sizes=True):
        """(items, waits, transfers, ops) tables of the merged size (``sizes=False``: empty)."""
        item_dt, wait_dt, tr_dt, op_dt = self.small[0].dtypes
        out = []
        for dts, off in ((item_dt, self.item_off), (wait_dt, self.wait_off),
                         (tr_dt, self.tr_off), (op_dt, self.op_off)):
            out.append({k: np.empty(int(off[-1]) if sizes else 0, dt) for k, dt in dts.items()})
        return tuple(out)

    def model(self, items, waits, transfers, ops, events=None) -> TraceModel:
        """The merged model around these per-item tables (the small tables made here) and
        event tables (default: none)."""
        small = self.small
        procs = dedup({c: np.concatenate([s.procs[c] for s in small]) for c in small[0].procs},
                      "proc_id")
        mems = dedup({c: np.concatenate([s.mems[c] for s in small]) for c in small[0].mems},
                     "mem_id")
        key_dtype = np.dtype([("rank", "<i4"), ("group", "<i2"), ("ref", "<u8"),
                              ("ref2", "<u8")])
        lane_tab = np.empty(int(self.lane_off[-1]), key_dtype)
        for c in _LANE_KEYS:
            lane_tab[c] = np.concatenate([s.lanes[c] for s in small])
        lanes = lane_table(lane_tab, np.concatenate([s.lanes["rows"] for s in small]), procs,
                           mems)
        lanes["capacity"] = np.concatenate([s.lanes["capacity"] for s in small])
        ranks = [r for s in small for r in s.ranks]
        # warnings about the set of files are made again over all ranks (a rank's bundle has
        # its own)
        warnings = [w for s in small for w in s.warnings
                    if w not in set(cross_file_problems(s.ranks))] + cross_file_problems(ranks)
        variants = {(int(nm[i]), g): v for s, nm in zip(small, self.name_maps)
                    for (i, g), v in s.variants.items()}
        ends = [s.runtime_end_ns for s in small if s.runtime_end_ns is not None]
        steps, busy = {}, {}
        for s in small:
            for k, v in s.steps.items():
                # a rank's channel line from two models: copies into it recorded by another
                steps[k] = StepIntegral.any_active([steps[k], v]) if k in steps else v
            busy.update(s.busy_ns)  # (own lanes only: the ranks' are disjoint)
        merged = TraceModel(
            items=items, lanes=lanes, names=self.names, ops=ops, provenances=self.provenances,
            waits=waits, transfers=transfers, ranks=ranks, procs=procs, mems=mems,
            utilization_steps=in_lane_order(steps), busy_ns=busy,
            variant_by_name_group=variants, runtime_end_ns=max(ends) if ends else None,
            line_text={k: v for s in small for k, v in s.line_text.items()},
            warnings=warnings, markers=[mk for s in small for mk in s.markers],
            sources=[p for s in small for p in s.sources], stacked=small[0].stacked,
            **({} if events is None else {"events": events}))
        spans = [s.extent for s in small if s.n_items]
        if spans:
            merged.adopt_extent((min(a for a, _ in spans), max(b for _, b in spans)))
        return merged


def merge_opened(n, open_model) -> TraceModel:
    """Merge ``n`` models (ranks disjoint) that ``open_model(i)`` opens, and may open again."""
    plan = MergePlan([ModelSummary(open_model(i)) for i in range(n)])
    items, waits, transfers, ops_all = plan.empty_columns()
    item_off, wait_off, tr_off, op_off = plan.item_off, plan.wait_off, plan.tr_off, plan.op_off
    events = []  # (keyed by event: concatenated in the ranks' order, nothing renumbered)
    with ThreadPoolExecutor(COPY_THREADS, thread_name_prefix="legate_prof merge") as pool:
        for j, k in enumerate(plan.order):  # pass two: the big columns, one model at a time
            m = open_model(k)
            a, b = item_off[j], item_off[j + 1]
            jobs = []
            for c, col in m.items.items():
                if c in ("name", "detail"):
                    jobs.append((_take_into, items[c][a:b], plan.name_maps[j], col))
                elif c == "lane":
                    jobs.append((_add_into, items[c][a:b], col, plan.lane_off[j]))
                else:
                    jobs.append((_copy_into, items[c][a:b], col))
            for table, out, off in ((m.waits, waits, wait_off),
                                    (m.transfers, transfers, tr_off)):
                for c, col in table.items():
                    dst = out[c][off[j]:off[j + 1]]
                    jobs.append((_add_into, dst, col, a) if c == "item" else
                                (_copy_into, dst, col))
            for c, col in m.ops.items():
                dst = ops_all[c][op_off[j]:op_off[j + 1]]
                jobs.append((_take_into, dst, plan.prov_maps[j], col) if c == "provenance" else
                            (_copy_into, dst, col))
            _run_all(pool, jobs)
            events.append(copied_events(m.events))
            release_pages(m)
            del m, jobs
    # sorted when first read in full (details of a few ops search each rank's sorted run)
    ops = LazyTable(lambda: sorted_ops(ops_all), "op_id", runs=ops_all, offsets=op_off)
    return plan.model(items, waits, transfers, ops, concat_event_tables(events))


def copied_events(events):
    """A model's event tables copied out of its mapped file (the merge lets its pages go)."""
    return {name: {c: np.array(a) for c, a in t.items()} for name, t in events.items()}
