"""Summaries of a time window: a lane group's average utilization in bins (summary tiles),
the time each name's tasks took in it (a legend's order)."""

from __future__ import annotations

import numpy as np

from legate_prof.model.kinds import ANY_ACTIVE_GROUPS, ItemKind

# Up to this many ranks a summary adds the ranks' integrals at the bin edges; beyond, one
# step function of all ranks is built once (``TraceModel.all_ranks_step``).
SUM_RANKS_PER_FRAME = 64


def average_utilization(model, group, rank, t0, t1, bins):
    """Average utilization of a lane group in ``bins`` equal bins over [t0, t1].

    ``rank=None`` is the all-ranks summary: the per-rank averages weighted by each rank's
    denominator (processor count or memory capacity), which is exact.  Up to
    ``SUM_RANKS_PER_FRAME`` ranks it sums the ranks' integrals at the bin edges (nothing to
    build first); beyond, one step function of all ranks is built once.  Channels and
    dependent partitioning (``ANY_ACTIVE_GROUPS``) are busy when anything is, on any rank,
    as the reference's "all" line: their all-ranks step is the ranks' lines' union.
    """
    edges = np.linspace(t0, t1, bins + 1)
    step, steps, build = _steps_read(model, group, rank)
    if build:
        step = model.all_ranks_step(group)
    if step is not None:
        return step.average(edges)
    if not steps:
        return np.zeros(bins)
    acc = sum(np.diff(s.integral_at(edges)) for s in steps)
    den = np.diff(edges) * sum(s.denominator for s in steps)
    return np.divide(acc, den, out=np.zeros(bins), where=den > 0)


def _steps_read(model, group, rank):
    """What ``average_utilization`` reads: (the one step function, or None; else the ranks'
    own, added up at the bin edges; whether one step function of all ranks is built first
    instead)."""
    if rank is not None:
        return model.utilization_steps.get((rank, group)), [], False
    step = model.stored_all_ranks_step(group)
    steps = model.all_ranks_steps_of(group)
    build = step is None and (len(steps) > SUM_RANKS_PER_FRAME or group in ANY_ACTIVE_GROUPS)
    return step, steps, build


def average_at_hand(model, group, rank, cell_ns, bins):
    """Whether ``average_utilization`` of ``bins`` bins of ``cell_ns`` reads no large step
    function's cold pages and builds none (``StepIntegral.quick_at``)."""
    step, steps, build = _steps_read(model, group, rank)
    if step is not None:
        return step.quick_at(cell_ns, bins)
    if build and len(steps) > 1:
        return False  # (one step function of all ranks to build first)
    return all(s.quick_at(cell_ns, bins) for s in steps)


LEGEND_KINDS = (ItemKind.TASK, ItemKind.GPU_KERNEL)  # what a legend names


def name_times(model, t0, t1, kinds=LEGEND_KINDS, name_map=None, n_names=None):
    """Time (ns) the items of ``kinds`` spent inside [t0, t1], by name id (``name_map``: a
    rank's ids in the profile's), summed over lanes: which colours a picture shows most."""
    it = model.items
    n = len(model.names) if n_names is None else n_names
    sel = np.flatnonzero(np.isin(it["kind"], np.asarray(kinds, it["kind"].dtype)))
    inside = np.maximum(np.minimum(it["stop"][sel], t1) - np.maximum(it["start"][sel], t0), 0)
    names = it["name"][sel].astype(np.int64)
    if name_map is not None:
        names = np.asarray(name_map, np.int64)[names]
    return np.bincount(names, weights=inside.astype(np.float64), minlength=n)[:n]


def items_in(model, t0, t1) -> int:
    """How many items run at some time inside [t0, t1] (a picture of a window counts them)."""
    it = model.items
    return int(np.count_nonzero((it["start"] <= t1) & (it["stop"] >= t0)))
