"""Idle time explained: per lane group, the time its processors sat idle inside the run,
split by what the item each processor ran next was waiting for — its critical predecessor
(``query.critical_links``).

A processor's idle time is the time between its items (from the run's first start to its
last item's stop: after that it had nothing more to do).  Each stretch counts for the item
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

from legate_prof.model.kinds import GROUP_KEYS, PROCESSOR_GROUPS, ItemKind
from legate_prof.query.critical_inputs import kinds_mask
from legate_prof.query.critical_links import NO_ROW, VIA_DEALLOCATION

WAITS = ("copy_fill", "mapping", "task", "message", "memory", "unknown")
_RUNNERS = (ItemKind.TASK, ItemKind.META, ItemKind.MESSAGE, ItemKind.PROF_TASK,
            ItemKind.GPU_KERNEL)
_PROC_GROUPS = np.array([g in PROCESSOR_GROUPS for g in GROUP_KEYS])


def _gaps_of_part(p, run_start):
    """(global item ids, idle ns before each) of one part's processor lanes: per lane, its
    items by start, the idle stretch before each (from the run's start for the first)."""
    it = p.model.items
    lanes = p.model.lanes
    sel = np.flatnonzero(kinds_mask(it["kind"], _RUNNERS)
                         & _PROC_GROUPS[lanes["group"][it["lane"]]])
    if len(sel) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    lane, start, stop = it["lane"][sel], it["start"][sel], it["stop"][sel]
    o = np.lexsort((start, lane))
    sel, lane, start, stop = sel[o], lane[o], start[o], stop[o]
    first = np.ones(len(sel), bool)
    first[1:] = lane[1:] != lane[:-1]
    # the latest stop before each item on its lane: a running maximum restarted per lane
    seg = np.cumsum(first) - 1
    shift = (stop - run_start).astype(np.int64) + 1
    key = seg.astype(np.int64) * (int(shift.max()) + 1) + shift
    before = np.empty(len(sel), np.int64)
    before[1:] = np.maximum.accumulate(key)[:-1] - seg[1:] * (int(shift.max()) + 1) - 1
    before[first] = 0
    idle = np.maximum(start - run_start - before, 0)
    return sel + p.item_off, idle


def classify(links, columns, ids):
    """What held each item of ``ids`` up, as an index into ``WAITS``."""
    col = links.columns
    ids = np.asarray(ids, np.int64)
    kernel = col["kind"][ids] == ItemKind.GPU_KERNEL  # a kernel: as its task
    if kernel.any():
        ids = ids.copy()
        task = links.index.find(col["creator"][ids[kernel]], links.index.entry)
        ids[np.flatnonzero(kernel)[task >= 0]] = task[task >= 0]
    via, target = links.items.via[ids], links.items.target[ids]
    out = np.full(len(ids), WAITS.index("unknown"), np.int64)
    out[via == VIA_DEALLOCATION] = WAITS.index("memory")
    has = np.flatnonzero((via != NO_ROW) & (target >= 0))
    t = target[has]
    kind = col["kind"][t]
    group = columns(t)
    cls = np.full(len(t), WAITS.index("task"), np.int64)
    cls[group == GROUP_KEYS.index("utility")] = WAITS.index("mapping")
    cls[kind == ItemKind.MESSAGE] = WAITS.index("message")
    cls[kinds_mask(kind, (ItemKind.COPY, ItemKind.FILL, ItemKind.DEP_PART))] = \
        WAITS.index("copy_fill")
    cls[kind == ItemKind.INSTANCE] = WAITS.index("memory")
    out[has] = cls
    return out


def idle_gaps(source) -> dict:
    """The idle time of ``source``'s processor lane groups, explained (see above); JSON as
    ``stats --json``'s ``idle`` (docs/stats_json.md)."""
    parts = source.item_parts()
    run_start, run_stop = source.summary_model().extent()
    got = [_gaps_of_part(p, run_start) for p in parts]
    ids = np.concatenate([g[0] for g in got]) if got else np.zeros(0, np.int64)
    idle = np.concatenate([g[1] for g in got]) if got else np.zeros(0, np.int64)
    keep = idle > 0
    ids, idle = ids[keep], idle[keep]
    links = source.critical_links()
    from legate_prof.analyze.critical_path import item_table
    tab = item_table(source, ids)

    def group_of(items):
        lanes = item_table(source, items)["lane"]
        return source.summary_model().lanes["group"][lanes].astype(np.int64)
    cls = classify(links, group_of, ids)
    summary = source.summary_model()
    lane_rank = summary.lanes["rank"][tab["lane"]].astype(np.int64)
    lane_group = summary.lanes["group"][tab["lane"]].astype(np.int64)
    return {"span_ns": [int(run_start), int(run_stop)], "waits": list(WAITS),
            "groups": _by_group(summary, lane_rank, lane_group, cls, idle),
            "by_provenance": _by_line(source.provenances, tab["prov"], cls, idle)}


def _split(cls, idle):
    sums = np.bincount(cls, weights=idle.astype(np.float64), minlength=len(WAITS))
    sums = np.clip(np.nan_to_num(sums), 0, 2.0**62)  # (damaged input stays finite)
    return {w: int(v) for w, v in zip(WAITS, sums.tolist())}


def _by_group(summary, rank, group, cls, idle):
    out = []
    keys = rank * 64 + group
    for k in np.unique(keys).tolist():
        sel = keys == k
        r, g = k // 64, k % 64
        out.append({"rank": int(r), "kind": GROUP_KEYS[g],
                    "lanes": int(len(summary.lanes_of(GROUP_KEYS[g], r))),
                    "idle_ns": int(idle[sel].sum()), "by_wait": _split(cls[sel], idle[sel])})
    return out


def _by_line(provenances, prov, cls, idle, top=20):
    out = []
    for p in np.unique(prov[prov > 0]).tolist():
        sel = prov == p
        out.append({"provenance": provenances[p], "idle_ns": int(idle[sel].sum()),
                    "by_wait": _split(cls[sel], idle[sel])})
    out.sort(key=lambda r: (-r["idle_ns"], r["provenance"]))
    return out[:top]


def format_idle(idle) -> list:
    """Text lines for ``stats``."""
    from legate_prof.present.units import format_ns_ascii
    rows = [g for g in idle["groups"] if g["idle_ns"]]
    if not rows:
        return []
    lines = ["Idle time inside the run, by what the next item waited for",
             f"  {'rank':>4}  {'group':<12}{'idle':>12}" + "".join(f"{w:>12}" for w in WAITS)]
    for g in rows:
        lines.append(f"  {g['rank']:>4}  {g['kind']:<12}{format_ns_ascii(g['idle_ns']):>12}"
                     + "".join(f"{format_ns_ascii(g['by_wait'][w]):>12}" for w in WAITS))
    lines_ = idle["by_provenance"][:5]
    if lines_:
        lines.append("  by the line that waited:")
        for r in lines_:
            top = max(WAITS, key=lambda w: r["by_wait"][w])
            lines.append(f"    {format_ns_ascii(r['idle_ns']):>12}  {r['provenance']}  "
                         f"(mostly {top})")
    return lines
