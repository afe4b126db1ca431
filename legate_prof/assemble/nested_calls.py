"""Mapper, runtime and application calls as waits of the task that made them.

Legion records a call with the ``fevent`` of the task (or meta-task) it runs inside.  The
reference profiler (``legion_prof``, ``sort_calls_and_waits``) then:

* moves each wait of the caller that falls inside one of its calls into the smallest such call;
* makes each call a wait ``[start, stop, stop]`` of the smallest call that contains it, or of
  the caller when none does.

So a task's running time excludes the calls it made, a call's excludes the calls nested in it,
and the viewer draws a task in the waiting shade while a call it made runs.  Everything here is
done over whole columns; nesting depth is bounded by a handful of levels.
"""

from __future__ import annotations

import numpy as np

from legate_prof.model.intervals import group_start_order, ranges_end_to_end
from legate_prof.model.kinds import ItemKind
from legate_prof.model.range_queries import LastGreater, RangeArgmin, lowest_ancestor
from legate_prof.model.sort_order import (equal_runs, lex_order, search_sorted, stable_order,
                                          unique_values)

CALLER_KINDS = (ItemKind.TASK, ItemKind.META, ItemKind.MESSAGE, ItemKind.PROF_TASK)
CALL_KINDS = (ItemKind.MAPPER_CALL, ItemKind.RUNTIME_CALL, ItemKind.APP_CALL)


def _of_kinds(kind, kinds):
    """``np.isin(kind, kinds)`` for the small (uint8) item kinds, through a table."""
    table = np.zeros(256, bool)
    table[[int(k) for k in kinds]] = True
    return table[kind] if kind.dtype == np.uint8 else np.isin(kind, [int(k) for k in kinds])


def _find(sorted_keys, query):
    """Index into ``sorted_keys`` of each query, or -1 where absent.  A run of equal
    queries is looked up once: a task's calls come one after another (the guide's 10 M
    example: 903 k calls in 147 k runs; a search of each was 90 ms)."""
    if len(sorted_keys) == 0 or len(query) == 0:
        return np.full(len(query), -1, np.int64)
    head, runs = equal_runs(query)
    q = query[head]
    pos = np.clip(search_sorted(sorted_keys, q), 0, len(sorted_keys) - 1)
    return np.repeat(np.where(sorted_keys[pos] == q, pos, -1), runs)


# group * span + (t - first) must stay below this (int64, with room for the comparisons)
PACKED_KEY_LIMIT = 2**62


def _group_time_key(g, times):
    """(key(group, t): one int64 ordered like (group, t), span: key(group, t) >= group *
    span).  Packed as group * span + (t - first) when that fits in 63 bits (always, for
    real runs); else through the rank of t among all ``times`` (a sort of all of them)."""
    lo = min((int(t.min()) for t in times if len(t)), default=0)
    hi = max((int(t.max()) for t in times if len(t)), default=0)
    span = hi - lo + 2
    n_groups = int(g.max()) + 1 if len(g) else 1
    if n_groups * span < PACKED_KEY_LIMIT:
        def packed(grp, t):
            return grp.astype(np.int64) * span + (np.asarray(t, np.int64) - lo)
        return packed, span
    ranked = unique_values(np.concatenate(times))

    def by_rank(grp, t):
        return grp.astype(np.int64) * (len(ranked) + 1) + np.searchsorted(ranked, t)
    return by_rank, len(ranked) + 1


def nest_calls(kind, start, stop, fevent, waits):
    """Waits with calls folded in, as the reference does.

    ``kind``, ``start``, ``stop``, ``fevent`` are item columns; ``waits`` is a dict of arrays
    ``item, start, ready, end``.  Returns the new waits dict (same keys, sorted by item, start),
    the number of calls whose caller is not in the profile, and (rows, calls): the rows of
    the new waits that are calls folded in, and those calls (``utilization.lanes_busy``).
    """
    callers = np.flatnonzero(_of_kinds(kind, CALLER_KINDS) & (fevent != 0))
    calls = np.flatnonzero(_of_kinds(kind, CALL_KINDS))
    none = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    if len(calls) == 0:
        return waits, 0, none
    fo = stable_order(fevent[callers])
    hit = _find(fevent[callers][fo], fevent[calls])
    orphans = int(np.count_nonzero(hit < 0))
    calls = calls[hit >= 0]
    caller_of_call = callers[fo][hit[hit >= 0]]
    if len(calls) == 0:
        return waits, orphans, none

    # calls ordered by (caller, start, longest first): parents precede their children
    s, e = start[calls], stop[calls]
    order = group_start_order(caller_of_call, s, e)
    calls, g_item, s, e = calls[order], caller_of_call[order], s[order], e[order]
    g = np.concatenate([[0], np.cumsum(g_item[1:] != g_item[:-1])])  # dense group id

    w_item, w_s, w_r, w_e = (np.asarray(waits[k]) for k in ("item", "start", "ready", "end"))
    key, _ = _group_time_key(g, [s, e, w_s, w_e])

    depth, parent = _call_tree(g, s, e, key)
    w_item = _waits_into_calls(calls, g, g_item, s, e, parent, key, w_item, w_s, w_e)

    # each call waits its parent (or the caller) from its start to its stop (on no event)
    target = np.where(parent >= 0, calls[np.maximum(parent, 0)], g_item)
    item = np.concatenate([w_item, target]).astype(np.int64)
    ws = np.concatenate([w_s, s])
    wr = np.concatenate([w_r, e])
    we = np.concatenate([w_e, e])
    w_ev = np.asarray(waits.get("event", np.zeros(len(w_s), np.uint64)), np.uint64)
    ev = np.concatenate([w_ev, np.zeros(len(s), np.uint64)])
    o = lex_order((ws, item))
    folded = np.flatnonzero(o >= len(w_s))
    return ({"item": item[o], "start": ws[o], "ready": wr[o], "end": we[o], "event": ev[o]},
            orphans, (folded, calls[o[folded] - len(w_s)]))


def _call_tree(g, s, e, key):
    """(depth, parent position) of each call within its caller's group: calls are ordered by
    (caller, start, longest first), so a call's parent is the nearest shallower one before it
    that contains it."""
    n = len(g)
    # depth = calls of the group started before this one less those stopped by its start:
    # its place among the sorted stop keys counts those and every earlier group's calls (a
    # group's keys lie above the earlier groups'), as its own place counts the earlier
    # groups' calls and its group's started before it
    stop_keys = np.sort(key(g, e), kind="stable")  # (nearly in order: timsort)
    depth = np.maximum(np.arange(n) - np.searchsorted(stop_keys, key(g, s), side="right"), 0)
    parent = np.full(n, -1, np.int64)
    kids = np.flatnonzero(depth > 0)
    if len(kids):
        p = _last_one_level_up(depth, kids)
        ok = (p >= 0) & (depth[np.maximum(p, 0)] == depth[kids] - 1)
        p = np.maximum(p, 0)
        ok &= (g[p] == g[kids]) & (s[p] <= s[kids]) & (e[kids] <= e[p])
        parent[kids[ok]] = p[ok]
    return depth, parent


SHALLOW = 8  # (levels of nesting searched one pass a level)


def _last_one_level_up(depth, kids):
    """The position of the last call before each of ``kids`` one level up (-1: none): a
    running maximum a level where calls nest a few deep (the guide's 10 M example: one
    level, 9 against 26 ms), else one sort by (depth, position) — a pass a level over calls
    nested 100,000 deep was quadratic."""
    n = len(depth)
    top = int(depth.max())
    if top <= SHALLOW:
        out = np.empty(len(kids), np.int64)
        level = depth[kids]
        position = np.arange(n)
        for d in range(1, top + 1):
            last = np.maximum.accumulate(np.where(depth == d - 1, position, -1))
            at = np.flatnonzero(level == d)
            out[at] = last[kids[at]]
        return out
    by_level = np.sort(depth.astype(np.int64) * n + np.arange(n))
    j = np.searchsorted(by_level, (depth[kids] - 1) * n + kids) - 1
    return np.where(j >= 0, by_level[np.maximum(j, 0)] % n, -1)


def _waits_into_calls(calls, g, g_item, s, e, parent, key, w_item, w_s, w_e):
    """The item of each wait once the caller's waits move into the smallest call containing
    them (a wait that straddles a call's edge: the smallest call it overlaps)."""
    group_starts = np.r_[0, np.flatnonzero(np.diff(g)) + 1]
    gpos = _find(g_item[group_starts], w_item)  # group of each wait's item, or -1
    w_item = w_item.copy()
    has = np.flatnonzero(gpos >= 0)
    if len(has) == 0:
        return w_item
    start_keys = key(g, s)
    last = np.searchsorted(start_keys, key(gpos[has], w_s[has]), side="right") - 1
    last = np.where((last >= 0) & (g[np.maximum(last, 0)] == gpos[has]), last, -1)
    ws, we = w_s[has], w_e[has]
    # the smallest call containing the wait: the first of the last call started by then and
    # the calls around it that does (each call contains those nested in it)
    cand = lowest_ancestor(parent, last, lambda c, q: (s[c] <= ws[q]) & (we[q] <= e[c]))
    # A wait that straddles a call's edge (Legion writes overlapping waits for the scheduler
    # meta-task) goes, as in the reference, to the smallest call it overlaps.
    out = np.flatnonzero(cand < 0)
    if len(out):
        cand[out] = _smallest_overlapping(g, s, e, group_starts, gpos[has[out]], ws[out], we[out],
                                          last[out], key, start_keys)
    moved = cand >= 0
    w_item[has[moved]] = calls[cand[moved]]
    return w_item


def _smallest_overlapping(g, s, e, group_starts, grp, ws, we, last, key, start_keys):
    """Per wait (of group ``grp``, [ws, we], ``last`` the last call of its group started by
    ws, -1: none), the call of its group that overlaps it (s < we, e > ws) with the
    shortest duration, the first in call order among equals (-1: none).  The calls that
    overlap are those started inside the wait, a range of positions, and those open at ws:
    calls of a caller nest, so the innermost of those, the last started, is the shortest
    (of identical intervals, side by side in call order, the first)."""
    n = len(s)
    dur = e - s
    first_after = np.searchsorted(start_keys, key(grp, we), side="left")  # (s >= we)
    cut = np.minimum(last, first_after - 1)  # (a wait of no time: calls started before it)
    group_lo = group_starts[grp]
    inner = np.full(len(grp), -1, np.int64)
    # the searches below look inside the waits' groups only: their calls end to end (the
    # guide's 10 M example: 3,008 of 147 k groups, a quarter of the calls), ``sh`` taking a
    # wait's positions there
    kept, sh = _groups_end_to_end(group_starts, n, grp)
    some = np.flatnonzero(cut >= group_lo)
    if len(some):
        longest = int((cut[some] - group_lo[some]).max()) + 1
        hit = LastGreater(e[kept], longest).find(group_lo[some] + sh[some],
                                                 cut[some] + 1 + sh[some], ws[some])
        inner[some] = np.where(hit >= 0, hit - sh[some], -1)
    same = np.zeros(n, bool)  # identical intervals lie side by side in call order
    same[1:] = (g[1:] == g[:-1]) & (s[1:] == s[:-1]) & (e[1:] == e[:-1])
    run_first = np.maximum.accumulate(np.where(same, 0, np.arange(n)))
    best = np.where(inner >= 0, run_first[np.maximum(inner, 0)], -1)
    lo = np.maximum(last + 1, np.searchsorted(start_keys, key(grp, ws), side="right"))
    ranged = np.flatnonzero(first_after > lo)  # (calls started inside the wait)
    if len(ranged):
        longest = int((first_after[ranged] - lo[ranged]).max())
        a = RangeArgmin(dur[kept], longest).find(lo[ranged] + sh[ranged],
                                                 first_after[ranged] + sh[ranged]) - sh[ranged]
        b = best[ranged]
        take = (b < 0) | (dur[a] < dur[np.maximum(b, 0)])  # (open ones come first)
        best[ranged[take]] = a[take]
    return best


def _groups_end_to_end(group_starts, n, grp):
    """(the positions of the calls of the groups ``grp`` names, end to end, group by group;
    per entry of ``grp``, what takes a position of its group to its place among them)."""
    groups = unique_values(grp)
    lo = group_starts[groups]
    size = np.r_[group_starts[1:], n][groups] - lo
    at = np.cumsum(size) - size  # (where each group's calls begin among them)
    kept = ranges_end_to_end(lo, size)
    shift = np.zeros(len(group_starts), np.int64)
    shift[groups] = at - lo
    return kept, shift[grp]
