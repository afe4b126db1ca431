"""Busy time and the step functions behind the utilization lines, per (rank, lane group)."""

from __future__ import annotations

import numpy as np

from legate_prof.model.kinds import processor_lanes
from legate_prof.model.intervals import (StepIntegral, ranges_end_to_end, sorted_steps,
                                         union_sorted)
from legate_prof.model.kinds import GROUP_KEYS, MEMORY_GROUPS, PROCESSOR_GROUPS, node_of_id
from legate_prof.model.sort_order import stable_order


# Lanes are keyed together this many items at a time at most, and a lane of more is worked
# out alone (``_lane_busy``): lanes keyed together hold copies of their items' and waits'
# times (a run's million calls on one lane: +200 MB at the peak of ``stats``).
LANES_AT_ONCE_ITEMS = 1 << 16


def lanes_busy(model, lanes, folded=None):
    """{lane: (starts, stops)}: each lane's disjoint busy intervals (waits cut out, as
    ``_lane_busy`` finds them), small lanes many at once (``_together``: one sort and one
    running sum of their times keyed by lane).  (The utilization lines, a pass a lane, were
    22 % of building 200 ranks of 2,000 items.)  ``folded``: (wait rows, calls) of the calls
    folded into waits (``nest_calls``), left out where they cancel (``_cancelled``)."""
    drop = _cancelled(model, folded)
    out, batch, spans, size = {}, [], [], 0
    for L in sorted({int(L) for L in lanes}):
        a, b = model.lane_range(L)
        if b - a > LANES_AT_ONCE_ITEMS:
            out[L] = _lane_busy(model, L, drop)
            continue
        if size + b - a > LANES_AT_ONCE_ITEMS:
            out.update(_together(model, batch, spans, drop))
            batch, spans, size = [], [], 0
        batch.append(L)
        spans.append((a, b))
        size += b - a
    if batch:
        out.update(_together(model, batch, spans, drop))
    return out


def _cancelled(model, folded):
    """(items, wait rows) that count nothing in ``busy_by_count``: a call folded into a wait
    of an item on the call's own lane, and that wait.  The call adds +1 at its start and -1
    at its stop, the wait -1 and +1 at the same times; at each time every +1 comes before
    every -1, so the pair changes the count after each time by nothing and can only add an
    interval of no length (dropped).  The guide's 10 M example: 903 k of its 966 k waits,
    the sort of 4.5 M times down to 0.9 M.  None: nothing left out."""
    if folded is None or len(folded[0]) == 0:
        return None
    rows, calls = folded
    lane = model.items["lane"]
    same = lane[calls] == lane[model.waits["item"][rows]]
    items = np.zeros(model.n_items, bool)
    items[calls[same]] = True
    waits = np.zeros(len(model.waits["item"]), bool)
    waits[rows[same]] = True
    return items, waits


def _together(model, lanes, spans, drop=None):
    """``lanes_busy`` of ``lanes`` (sorted; their item ranges ``spans``) at once: their
    items' and waits' times keyed by lane (``lane << 42 | time``), so that one sort and one
    running sum serve all lanes as they would each (a lane's +1s and -1s sum to 0, and a key
    of a later lane is above every key of an earlier one); lane by lane where the keys do
    not pack."""
    it, w = model.items, model.waits
    size = np.array([b - a for a, b in spans], np.int64)
    lo = np.array([a for a, _ in spans], np.int64)
    pos = ranges_end_to_end(lo, size)
    lane = np.repeat(np.arange(len(lanes), dtype=np.int64), size)
    # the waits of those items (waits are sorted by item; a lane's items are a range)
    wa = np.searchsorted(w["item"], lo) if len(w["item"]) else np.zeros(len(lanes), np.int64)
    wb = np.searchsorted(w["item"], lo + size) if len(w["item"]) else wa
    n_wait = wb - wa
    wpos = ranges_end_to_end(wa, n_wait)
    w_lane = np.repeat(np.arange(len(lanes), dtype=np.int64), n_wait)
    if drop is not None:  # (a lane with waits is still counted: ``counted`` below)
        keep, w_keep = ~drop[0][pos], ~drop[1][wpos]
        pos, lane, wpos, w_lane = pos[keep], lane[keep], wpos[w_keep], w_lane[w_keep]
    s, e = it["start"][pos].astype(np.int64), it["stop"][pos].astype(np.int64)
    ws, we = (w["start"][wpos].astype(np.int64), w["end"][wpos].astype(np.int64)) \
        if len(wpos) else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    t_min = min((int(a.min()) for a in (s, e, ws, we) if len(a)), default=0)
    t_max = max((int(a.max()) for a in (s, e, ws, we) if len(a)), default=0)
    if t_max - t_min >= 2**42 or len(lanes) >= 2**19:
        return {L: _lane_busy(model, L, drop) for L in lanes}
    key = lane << 42
    counted = n_wait > 0  # (lanes with waits: counted as the reference counts them)
    out = {}
    sel = counted[lane]
    if sel.any():
        w_lane = w_lane << 42
        ks = key[sel]
        t, delta = sorted_steps(np.concatenate([ks | (s[sel] - t_min), w_lane | (we - t_min)]),
                                np.concatenate([ks | (e[sel] - t_min), w_lane | (ws - t_min)]))
        count = np.cumsum(delta)
        before = count - delta
        us, ue = t[(before < 1) & (count >= 1)], t[(before >= 1) & (count < 1)]
        keep = ue > us
        _split(out, lanes, us[keep], ue[keep], t_min)
    if not sel.all():  # (the others: the union of their items)
        ks, ke = key[~sel] | (s[~sel] - t_min), key[~sel] | (e[~sel] - t_min)
        o = stable_order(ks)
        us, ue = union_sorted(ks[o], ke[o])
        _split(out, lanes, us, ue, t_min)
    empty = np.zeros(0, np.int64)
    return {L: out.get(k, (empty, empty)) for k, L in enumerate(lanes)}


def _split(out, lanes, us, ue, t_min):
    """Lane-keyed busy intervals into ``out[k]`` = (starts, stops) of lane ``lanes[k]``."""
    k = us >> 42
    mask = (1 << 42) - 1
    us, ue = (us & mask) + t_min, (ue & mask) + t_min
    cut = np.flatnonzero(k[1:] != k[:-1]) + 1
    for a, b in zip(np.concatenate(([0], cut)).tolist(), np.concatenate((cut, [len(k)])).tolist()):
        if b > a:
            out[int(k[a])] = (us[a:b], ue[a:b])


def _lane_busy(model, L, drop=None):
    """One lane's busy intervals: its items' union, or (with waits) ``busy_by_count``
    (without the pairs ``drop`` says cancel: ``_cancelled``)."""
    it, w = model.items, model.waits
    lo, hi = model.lane_range(L)
    if hi == lo:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    s, e = it["start"][lo:hi], it["stop"][lo:hi]
    wl = np.searchsorted(w["item"], lo) if len(w["item"]) else 0
    wh = np.searchsorted(w["item"], hi) if len(w["item"]) else 0
    if wh > wl:
        ws, we = w["start"][wl:wh], w["end"][wl:wh]
        if drop is not None:
            keep, w_keep = ~drop[0][lo:hi], ~drop[1][wl:wh]
            s, e, ws, we = s[keep], e[keep], ws[w_keep], we[w_keep]
        return busy_by_count(s, e, ws, we)
    o = stable_order(s)
    return union_sorted(s[o], e[o])


def busy_by_count(start, stop, wait_start, wait_end):
    """Busy intervals of one lane as the reference counts them (``Proc::sort_time_range``,
    ``convert_points_to_utilization``): +1 at each item's start and each wait's end, -1 at
    each item's stop and each wait's start, starts before stops at equal times; the lane is
    busy while the count is at least 1.  The same as the union of the items with their own
    waits cut out when every wait lies inside its item; it differs where Legion wrote a wait
    that begins before its task (the external thread's implicit task on multi-rank runs):
    then the wait also stops what else runs on the lane.  Returns (starts, stops), disjoint,
    sorted, no empty interval."""
    t, delta = sorted_steps(np.concatenate([start, wait_end]),
                            np.concatenate([stop, wait_start]))
    count = np.cumsum(delta)
    before = count - delta
    us = t[(before < 1) & (count >= 1)]
    ue = t[(before >= 1) & (count < 1)]
    keep = ue > us
    return us[keep], ue[keep]


def channel_lanes(model, rank):
    """The channel lanes whose copies count in ``rank``'s channel utilization: as in the
    reference (``group_node_chan_kind_timepoints``), a copy channel counts on the node of its
    source and on the node of its destination memory, a fill on its destination's.  (Our
    lane sits on the rank that recorded its copies: ``record_items.recording_rank``.)  A
    channel whose memories are unknown counts on its lane's rank."""
    lanes = model.lanes_of("channel")
    return lanes[_channel_nodes(model, lanes, rank)]


def _channel_nodes(model, lanes, rank):
    """Which of the channel ``lanes`` count on ``rank``'s line."""
    src, dst = model.lanes["ref"][lanes], model.lanes["ref2"][lanes]
    known = (src != 0) | (dst != 0)
    return (((src != 0) & (node_of_id(src) == rank)) | ((dst != 0) & (node_of_id(dst) == rank))
            | (~known & (model.lanes["rank"][lanes] == rank)))


def _channel_ranks(model):
    """Ranks whose channel utilization has a copy: each channel's source's and destination's
    node (a channel of unknown memories: its lane's rank)."""
    lanes = model.lanes_of("channel")
    src, dst = model.lanes["ref"][lanes], model.lanes["ref2"][lanes]
    known = (src != 0) | (dst != 0)
    return (set(node_of_id(src[src != 0]).astype(np.int64).tolist())
            | set(node_of_id(dst[dst != 0]).astype(np.int64).tolist())
            | set(model.lanes["rank"][lanes][~known].tolist()))


def _any_busy(busy, lanes):
    """Disjoint intervals where any of ``lanes`` is busy (``busy``: ``lanes_busy``)."""
    s = np.concatenate([busy[L][0] for L in lanes] or [np.zeros(0, np.int64)])
    e = np.concatenate([busy[L][1] for L in lanes] or [np.zeros(0, np.int64)])
    o = stable_order(s)
    return union_sorted(s[o], e[o])


def with_utilization(model, folded=None):
    """The model with its step-function integrals per (rank, group) for the average-utilization
    lines, and busy time per (rank, group).  ``folded``: the calls folded into its waits
    (``nest_calls``), which count nothing on their own lane (``_cancelled``)."""
    steps = {}
    busy = {}
    ranks = set(model.lanes["rank"].tolist())
    chan_ranks = _channel_ranks(model)
    memory = np.isin(model.lanes["group"], [GROUP_KEYS.index(g) for g in MEMORY_GROUPS])
    busy_of = lanes_busy(model, np.flatnonzero(~memory).tolist(), folded)  # (all at once)
    for rank in sorted(ranks | chan_ranks):
        present = model.groups_present(rank)
        if rank in chan_ranks and all(k != "channel" for k, _ in present):
            present.append(("channel", ""))  # copies into this rank recorded on another's lane
        for key, _title in present:
            lanes = channel_lanes(model, rank) if key == "channel" else model.lanes_of(key, rank)
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
                s = np.concatenate([busy_of[L][0] for L in lanes])
                e = np.concatenate([busy_of[L][1] for L in lanes])
                steps[(rank, key)] = StepIntegral.from_intervals(s, e, None, len(lanes))
                busy[(rank, key)] = int((e - s).sum())
            else:  # channels, dp: busy when anything in the group is active
                us, ue = _any_busy(busy_of, lanes)
                steps[(rank, key)] = StepIntegral.from_intervals(us, ue, None, 1)
                own = model.lanes_of(key, rank)
                if len(own):  # busy time: the rank's own lanes (the stats' groups count those)
                    if len(own) != len(lanes):
                        us, ue = _any_busy(busy_of, own)
                    busy[(rank, key)] = int((ue - us).sum())
    _idle_groups(model, steps)
    return model.evolve(utilization_steps=in_lane_order(steps), busy_ns=busy)


def _idle_groups(model, steps):
    """A step function of no use for each rank's processors of a group none of which ran
    anything (the group is hidden, as the reference shows no line of it): they count in the
    all-ranks line of their kind, as the reference counts every processor the logs describe
    ("all (CPU)" of two ranks whose second CPU ran nothing: 0.5 where one CPU ran, not 1).
    Only the ranks whose logs this model read: a rank's log describes other ranks'
    processors too, and ranks built apart would count them twice."""
    own = {int(r["rank"]) for r in model.ranks}
    count = {}
    for rank, group, _ in processor_lanes(model.procs):
        if rank in own:
            count[(rank, group)] = count.get((rank, group), 0) + 1
    for key, n in count.items():
        if key not in steps:
            steps[key] = StepIntegral(np.zeros(1), np.zeros(1), n)


def in_lane_order(steps):
    """Step functions by (rank, group) in the lanes' order (one order however they were made:
    bundles store them in it)."""
    return dict(sorted(steps.items(), key=lambda kv: (kv[0][0], GROUP_KEYS.index(kv[0][1]))))
