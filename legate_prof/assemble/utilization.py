"""Busy time and the step functions behind the utilization lines, per (rank, lane group)."""

from __future__ import annotations

import numpy as np

from legate_prof.model.intervals import StepIntegral, subtract_waits, union_sorted
from legate_prof.model.kinds import MEMORY_GROUPS, PROCESSOR_GROUPS

def busy_intervals(model, lanes):
    """Per lane, disjoint busy intervals (waits cut out). Returns list of (lane, starts, stops)."""
    it = model.items
    w = model.waits
    out = []
    for L in lanes:
        lo, hi = model.lane_range(L)
        if hi == lo:
            out.append((L, np.zeros(0, np.int64), np.zeros(0, np.int64)))
            continue
        s, e = it["start"][lo:hi], it["stop"][lo:hi]
        wl = np.searchsorted(w["item"], lo) if len(w["item"]) else 0
        wh = np.searchsorted(w["item"], hi) if len(w["item"]) else 0
        if wh > wl:
            witem = w["item"][wl:wh] - lo
            has = np.zeros(hi - lo, bool)
            has[witem] = True
            pi, ps, pe = subtract_waits(s, e, witem, w["start"][wl:wh], w["end"][wl:wh])
            s = np.concatenate([s[~has], ps])
            e = np.concatenate([e[~has], pe])
        o = np.argsort(s, kind="stable")
        us, ue = union_sorted(s[o], e[o])
        out.append((L, us, ue))
    return out


def with_utilization(model):
    """The model with its step-function integrals per (rank, group) for the average-utilization
    lines, and busy time per (rank, group)."""
    steps = {}
    busy = {}
    for rank in sorted(set(model.lanes["rank"].tolist())):
        for key, _title in model.groups_present(rank):
            lanes = model.lanes_of(key, rank)
            if key in MEMORY_GROUPS:
                s_all, e_all, w_all = [], [], []
                cap = 0
                for L in lanes:
                    lo, hi = model.lane_range(L)
                    s_all.append(model.items["start"][lo:hi])
                    e_all.append(model.items["stop"][lo:hi])
                    sz = model.transfers["size"][np.searchsorted(model.transfers["item"],
                                                                 np.arange(lo, hi))]
                    w_all.append(sz.astype(np.float64))
                    c = int(model.lanes["capacity"][L])
                    if c <= 0:  # unknown capacity: use this memory's peak
                        c = int(StepIntegral.from_intervals(s_all[-1], e_all[-1],
                                                            w_all[-1]).peak_level())
                    cap += c
                s, e, w = np.concatenate(s_all), np.concatenate(e_all), np.concatenate(w_all)
                steps[(rank, key)] = StepIntegral.from_intervals(s, e, w, max(cap, 1))
                o = np.argsort(s)
                us, ue = union_sorted(s[o], e[o])
                busy[(rank, key)] = int((ue - us).sum())
            elif key in PROCESSOR_GROUPS:
                per_lane = busy_intervals(model, lanes)
                s = np.concatenate([p[1] for p in per_lane])
                e = np.concatenate([p[2] for p in per_lane])
                steps[(rank, key)] = StepIntegral.from_intervals(s, e, None, len(lanes))
                busy[(rank, key)] = int((e - s).sum())
            else:  # channels, dp: busy when anything in the group is active
                per_lane = busy_intervals(model, lanes)
                s = np.concatenate([p[1] for p in per_lane])
                e = np.concatenate([p[2] for p in per_lane])
                o = np.argsort(s, kind="stable")
                us, ue = union_sorted(s[o], e[o])
                steps[(rank, key)] = StepIntegral.from_intervals(us, ue, None, 1)
                busy[(rank, key)] = int((ue - us).sum())
    return model.evolve(utilization_steps=steps, busy_ns=busy)
