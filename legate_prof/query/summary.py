"""Summary tiles: a lane group's average utilization over a time window, in bins."""

from __future__ import annotations

import numpy as np

from legate_prof.model.kinds import ANY_ACTIVE_GROUPS

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
    if rank is not None:
        step = model.utilization_steps.get((rank, group))
        return step.average(edges) if step is not None else np.zeros(bins)
    step = model.stored_all_ranks_step(group)
    steps = [s for (r, g), s in model.utilization_steps.items() if g == group]
    if step is None and (len(steps) > SUM_RANKS_PER_FRAME or group in ANY_ACTIVE_GROUPS):
        step = model.all_ranks_step(group)
    if step is not None:
        return step.average(edges)
    if not steps:
        return np.zeros(bins)
    acc = sum(np.diff(s.integral_at(edges)) for s in steps)
    den = np.diff(edges) * sum(s.denominator for s in steps)
    return np.divide(acc, den, out=np.zeros(bins), where=den > 0)
