"""Idle time explained: per lane group, the time its processors sat idle inside the run,
split by what the item each processor ran next was waiting for — its critical predecessor
(``causality.critical_links``).

A processor's idle time is the time between its items (from its node's first item — by that
node's own clock, which may disagree with the others' by seconds: a run's first start on
another node says nothing of this one's — to its last item's stop: after that it had nothing
more to do).  Each stretch counts for the item
that ended it, by what held that item up:

* ``copy_fill``: a copy, fill or dependent-partitioning operation on a channel;
* ``mapping``: mapping and runtime work on a utility processor (meta-tasks, mapper and
  runtime calls there);
* ``task``: another task (or a call inside one: the program's thread launching it, say);
* ``message``: a message from another node (or this one);
* ``memory``: an instance (its allocation waited for others to be freed);
* ``unknown``: nothing known (an event no loaded profile records, no event records at all).

And by source line: the line of the item that ended the stretch (a meta-task's: its
operation's).  Also: the same per line as ``insights`` evidence.
"""

from __future__ import annotations

import numpy as np

from legate_prof.model.kinds import GROUP_KEYS, GROUP_TITLE, PROCESSOR_GROUPS, ItemKind
from legate_prof.causality.critical_inputs import kinds_mask
from legate_prof.causality.critical_links import NO_ROW, VIA_DEALLOCATION, link_for_classes
from legate_prof.causality.event_graph import sorted_unique
from legate_prof.model.sort_order import lex_order

WAITS = ("copy_fill", "mapping", "task", "message", "memory", "unknown")
# up to this many items in all, several ranks' items are linked for their classes at once
# (``link_for_classes``: 1,000 ranks of 2,000 items, 0.7 s where linking every item rank by
# rank took 1.7 s); more, every item's links rank by rank, a rank's graph at a time
FEW_LINKS_AT_ONCE_MAX_ITEMS = 4_000_000
_RUNNERS = (ItemKind.TASK, ItemKind.META, ItemKind.MESSAGE, ItemKind.PROF_TASK,
            ItemKind.GPU_KERNEL)
_PROC_GROUPS = np.array([g in PROCESSOR_GROUPS for g in GROUP_KEYS])


def lane_gaps(model):
    """The stretches before each item of one model's processor lanes: per item (its id, by
    lane and start), its start, the latest stop before it on its lane (the first item of a
    lane: its rank's first start, ``rank_starts``), whether it is its lane's first, and its
    lane."""
    it = model.items
    lanes = model.lanes
    sel = np.flatnonzero(kinds_mask(it["kind"], _RUNNERS)
                         & _PROC_GROUPS[lanes["group"]][it["lane"]])  # (by lane: one gather)
    lane, start, stop = it["lane"][sel], it["start"][sel], it["stop"][sel]
    if not _by_lane_and_start(lane, start):  # (an unstacked model's order already)
        o = lex_order((start, lane))
        sel, lane, start, stop = sel[o], lane[o], start[o], stop[o]
    first = np.ones(len(sel), bool)
    first[1:] = lane[1:] != lane[:-1]
    # the latest stop before each item on its lane: a running maximum restarted per lane
    seg = np.cumsum(first) - 1
    lo = int(min(start.min(), stop.min())) if len(sel) else 0
    shift = (stop - lo).astype(np.int64) + 1
    width = int(shift.max()) + 1 if len(shift) else 1
    key = seg.astype(np.int64, copy=False) * width + shift
    latest = np.maximum.accumulate(key)  # (less its lane's part: the latest stop's shift)
    latest -= key
    latest += shift
    latest -= 1
    latest += lo
    before = start.copy()
    before[1:] = latest[:-1]
    f = np.flatnonzero(first)
    before[f] = rank_starts(model)[lanes["rank"][lane[f]]]
    return sel, start, before, first, lane


def rank_starts(model):
    """Each rank's first item start (by rank number; 0 where a rank has no item): where a
    node's processors begin to count idle time, by its own clock."""
    it, ranks = model.items, np.asarray(model.lanes["rank"], np.int64)
    out = np.zeros(int(ranks.max()) + 1 if len(ranks) else 0, np.int64)
    if model.n_items == 0:
        return out
    present = sorted_unique(ranks)
    if len(present) == 1:  # (a rank's own model: its first start)
        out[present] = model.extent()[0]
        return out
    lane_first = np.full(len(ranks), np.iinfo(np.int64).max, np.int64)
    np.minimum.at(lane_first, it["lane"], it["start"])
    has = lane_first < np.iinfo(np.int64).max
    out[:] = np.iinfo(np.int64).max
    np.minimum.at(out, ranks[has], lane_first[has])
    out[out == np.iinfo(np.int64).max] = 0
    return out


def _by_lane_and_start(lane, start):
    same = lane[1:] == lane[:-1]
    return bool(np.all(lane[1:] >= lane[:-1]) and np.all(~same | (start[1:] >= start[:-1])))


def _gaps_of_part(p):
    """The idle stretches of one part's processor lanes, as (global item ids, idle ns, rank,
    lane group, provenance id) of the items after a stretch."""
    sel, start, before, first, lane = lane_gaps(p.model)
    idle = np.maximum(start - before, 0)
    keep = idle > 0
    sel, lane, idle = sel[keep], lane[keep], idle[keep]
    lanes = p.model.lanes
    return (sel + p.item_off, idle, lanes["rank"][lane].astype(np.int64),
            lanes["group"][lane].astype(np.int64), p.provenances(sel).astype(np.int64))


def classes(via, target, kind, group):
    """What held each item up (an index into ``WAITS``), from its row (``via``, ``target``)
    and its target's ``kind`` and lane ``group`` (read where ``target >= 0``)."""
    out = np.full(len(via), WAITS.index("unknown"), np.int64)
    out[via == VIA_DEALLOCATION] = WAITS.index("memory")
    has = (via != NO_ROW) & (target >= 0)
    cls = np.full(len(via), WAITS.index("task"), np.int64)
    cls[group == GROUP_KEYS.index("utility")] = WAITS.index("mapping")
    cls[kind == ItemKind.MESSAGE] = WAITS.index("message")
    cls[kinds_mask(kind, (ItemKind.COPY, ItemKind.FILL, ItemKind.DEP_PART))] = \
        WAITS.index("copy_fill")
    cls[kind == ItemKind.INSTANCE] = WAITS.index("memory")
    out[has] = cls[has]
    return out


def classify(links, ids):
    """What held each item of ``ids`` up, as an index into ``WAITS``."""
    ids = np.asarray(ids, np.int64)
    kernel = links.values("kind", ids) == ItemKind.GPU_KERNEL  # a kernel: as its task
    if kernel.any():
        ids = ids.copy()
        creator = links.values("creator", ids[kernel]).astype(np.uint64)
        task = links.find_entry(creator)
        ids[np.flatnonzero(kernel)[task >= 0]] = task[task >= 0]
    via, target = links.items.via[ids], links.items.target[ids]
    t = np.maximum(target, 0).astype(np.int64)
    has = np.flatnonzero(target >= 0)
    kind, group = np.zeros(len(ids), np.uint8), np.zeros(len(ids), np.int64)
    kind[has] = links.values("kind", t[has])
    group[has] = links.inputs.lane_group(t[has])
    return classes(via, target, kind, group)


def idle_gaps(source) -> dict:
    """The idle time of ``source``'s processor lane groups, explained (see above); JSON as
    ``stats --json``'s ``idle`` (docs/stats_json.md)."""
    run_start, run_stop = source.summary_model().extent()
    parts = source.item_parts()
    got = [_gaps_of_part(p) for p in parts]
    ids, idle, rank, group, prov = (np.concatenate([g[k] for g in got]) for k in range(5))
    if source.critical_path_ready or (len(parts) > 1 and sum(p.model.n_items for p in parts)
                                      > FEW_LINKS_AT_ONCE_MAX_ITEMS):
        links = source.critical_links()  # (ranks of many items: rank by rank)
    else:  # (what a command needs that wants no more of the links than these classes)
        links = link_for_classes(parts, ids)
    cls = classify(links, ids)
    summary = source.summary_model()
    return {"span_ns": [int(run_start), int(run_stop)], "waits": list(WAITS),
            "groups": _by_group(summary, rank, group, cls, idle),
            "by_provenance": _by_line(source.provenances, prov, cls, idle)}


def _sums(key, cls, idle):
    """(the keys present, their idle ns by wait: one row per key); keys are small
    non-negative ints (provenance ids, rank * 64 + group): counted, not sorted."""
    n = int(key.max()) + 1 if len(key) else 0
    sums = np.bincount(key * len(WAITS) + cls, weights=idle.astype(np.float64),
                       minlength=n * len(WAITS)).reshape(n, len(WAITS))
    keys = np.flatnonzero(np.bincount(key, minlength=n))
    return keys, np.clip(np.nan_to_num(sums[keys]), 0, 2.0**62).astype(np.int64)


def _row(sums):
    return {"idle_ns": int(sums.sum()), "by_wait": dict(zip(WAITS, sums.tolist()))}


def _by_group(summary, rank, group, cls, idle):
    keys, sums = _sums(rank * 64 + group, cls, idle)
    return [{"rank": int(k // 64), "kind": GROUP_KEYS[int(k % 64)],
             "lanes": int(len(summary.lanes_of(GROUP_KEYS[int(k % 64)], int(k // 64)))),
             **_row(s)} for k, s in zip(keys.tolist(), sums)]


def _by_line(provenances, prov, cls, idle, top=20):
    keys, sums = _sums(prov, cls, idle)
    rows = [{"provenance": provenances[k], **_row(s)}
            for k, s in zip(keys.tolist(), sums) if k]
    rows.sort(key=lambda r: (-r["idle_ns"], r["provenance"]))
    return rows[:top]


def format_idle(idle) -> list:
    """Text lines for ``stats``."""
    from legate_prof.present.units import format_ns
    rows = [g for g in idle["groups"] if g["idle_ns"]]
    if not rows:
        return []
    lines = ["Idle time inside the run, by what the next item waited for (summed over each "
             "group's lanes: 2 lanes idle 1 s each make 2 s)",
             f"  {'rank':>4}  {'group':<12}{'idle':>12}" + "".join(f"{w:>12}" for w in WAITS)]
    for g in rows:
        title = GROUP_TITLE.get(g["kind"], g["kind"])
        lines.append(f"  {g['rank']:>4}  {title:<12}{format_ns(g['idle_ns']):>12}"
                     + "".join(f"{format_ns(g['by_wait'][w]):>12}" for w in WAITS))
    lines_ = idle["by_provenance"][:5]
    if lines_:
        # (processors' idle time, summed over lanes: not wall-clock time; `critical` gives
        # each line's share of the run, `insights` a finding's cost: three measures of one
        # run that a review saw rank its lines three ways, nothing saying why)
        lines.append("  by the line that waited (idle processor time, not the run's wall "
                     "clock: `critical` gives each line's share of that):")
        for r in lines_:
            top = max(WAITS, key=lambda w: r["by_wait"][w])
            lines.append(f"    {format_ns(r['idle_ns']):>12}  {r['provenance']}  "
                         f"(mostly {top})")
    return lines
