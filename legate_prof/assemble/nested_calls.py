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

from legate_prof.model.intervals import group_start_order
from legate_prof.model.kinds import ItemKind

CALLER_KINDS = (ItemKind.TASK, ItemKind.META, ItemKind.MESSAGE, ItemKind.PROF_TASK)
CALL_KINDS = (ItemKind.MAPPER_CALL, ItemKind.RUNTIME_CALL, ItemKind.APP_CALL)


def _of_kinds(kind, kinds):
    """``np.isin(kind, kinds)`` for the small (uint8) item kinds, through a table."""
    table = np.zeros(256, bool)
    table[[int(k) for k in kinds]] = True
    return table[kind] if kind.dtype == np.uint8 else np.isin(kind, [int(k) for k in kinds])


def _find(sorted_keys, query):
    """Index into ``sorted_keys`` of each query, or -1 where absent."""
    if len(sorted_keys) == 0:
        return np.full(len(query), -1, np.int64)
    pos = np.clip(np.searchsorted(sorted_keys, query), 0, len(sorted_keys) - 1)
    return np.where(sorted_keys[pos] == query, pos, -1)


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
    ranked = np.unique(np.concatenate(times))

    def by_rank(grp, t):
        return grp.astype(np.int64) * (len(ranked) + 1) + np.searchsorted(ranked, t)
    return by_rank, len(ranked) + 1


def nest_calls(kind, start, stop, fevent, waits):
    """Waits with calls folded in, as the reference does.

    ``kind``, ``start``, ``stop``, ``fevent`` are item columns; ``waits`` is a dict of arrays
    ``item, start, ready, end``.  Returns the new waits dict (same keys, sorted by item, start)
    and the number of calls whose caller is not in the profile.
    """
    callers = np.flatnonzero(_of_kinds(kind, CALLER_KINDS) & (fevent != 0))
    calls = np.flatnonzero(_of_kinds(kind, CALL_KINDS))
    if len(calls) == 0:
        return waits, 0
    fo = np.argsort(fevent[callers], kind="stable")
    hit = _find(fevent[callers][fo], fevent[calls])
    orphans = int(np.count_nonzero(hit < 0))
    calls = calls[hit >= 0]
    caller_of_call = callers[fo][hit[hit >= 0]]
    if len(calls) == 0:
        return waits, orphans

    # calls ordered by (caller, start, longest first): parents precede their children
    s, e = start[calls], stop[calls]
    order = group_start_order(caller_of_call, s, e)
    calls, g_item, s, e = calls[order], caller_of_call[order], s[order], e[order]
    g = np.concatenate([[0], np.cumsum(g_item[1:] != g_item[:-1])])  # dense group id
    first = np.searchsorted(g, g)  # first position of each call's group

    w_item, w_s, w_r, w_e = (np.asarray(waits[k]) for k in ("item", "start", "ready", "end"))
    key, span = _group_time_key(g, [s, e, w_s, w_e])

    depth, parent = _call_tree(g, first, s, e, key, span)
    w_item = _waits_into_calls(calls, g, g_item, s, e, depth, parent, key, w_item, w_s, w_e)

    # each call waits its parent (or the caller) from its start to its stop (on no event)
    target = np.where(parent >= 0, calls[np.maximum(parent, 0)], g_item)
    item = np.concatenate([w_item, target]).astype(np.int64)
    ws = np.concatenate([w_s, s])
    wr = np.concatenate([w_r, e])
    we = np.concatenate([w_e, e])
    w_ev = np.asarray(waits.get("event", np.zeros(len(w_s), np.uint64)), np.uint64)
    ev = np.concatenate([w_ev, np.zeros(len(s), np.uint64)])
    o = np.lexsort((ws, item))
    return {"item": item[o], "start": ws[o], "ready": wr[o], "end": we[o],
            "event": ev[o]}, orphans


def _call_tree(g, first, s, e, key, span):
    """(depth, parent position) of each call within its caller's group: calls are ordered by
    (caller, start, longest first), so a call's parent is the nearest shallower one before it
    that contains it."""
    n = len(g)
    # depth = calls of the group started before this one and not yet stopped
    stop_keys = np.sort(key(g, e), kind="stable")  # (nearly in order: timsort)
    closed = (np.searchsorted(stop_keys, key(g, s), side="right")
              - np.searchsorted(stop_keys, g.astype(np.int64) * span, side="left"))
    depth = np.maximum(np.arange(n) - first - closed, 0)
    parent = np.full(n, -1, np.int64)
    # each call's candidate: the last call before it one level up, for all levels in one
    # search over (depth, position) keys (a level at a time was quadratic: 100,000 identical
    # calls nest 100,000 deep, 79 s)
    level_key = np.sort(depth.astype(np.int64) * (n + 1) + np.arange(n))
    kids = np.flatnonzero(depth >= 1)
    up = (depth[kids].astype(np.int64) - 1) * (n + 1)
    j = np.searchsorted(level_key, up + kids) - 1
    ok = j >= 0
    found = level_key[np.maximum(j, 0)]
    ok &= found >= up  # (one level up, not further)
    p = found % (n + 1)
    ok &= (g[p] == g[kids]) & (s[p] <= s[kids]) & (e[kids] <= e[p])
    parent[kids[ok]] = p[ok]
    return depth, parent


def _waits_into_calls(calls, g, g_item, s, e, depth, parent, key, w_item, w_s, w_e):
    """The item of each wait once the caller's waits move into the smallest call containing
    them (a wait that straddles a call's edge: the smallest call it overlaps)."""
    group_starts = np.r_[0, np.flatnonzero(np.diff(g)) + 1]
    gpos = _find(g_item[group_starts], w_item)  # group of each wait's item, or -1
    w_item = w_item.copy()
    has = np.flatnonzero(gpos >= 0)
    if len(has) == 0:
        return w_item
    start_keys = key(g, s)
    cand = np.searchsorted(start_keys, key(gpos[has], w_s[has]), side="right") - 1
    cand = np.where((cand >= 0) & (g[np.maximum(cand, 0)] == gpos[has]), cand, -1)
    cand = _first_containing(cand, parent, depth, s, e, w_s[has], w_e[has])
    # A wait that straddles a call's edge (Legion writes overlapping waits for the scheduler
    # meta-task) goes, as in the reference, to the smallest call it overlaps.
    loose = np.flatnonzero(cand < 0)
    for grp in np.unique(gpos[has[loose]]).tolist():
        mine = loose[gpos[has[loose]] == grp]
        lo, hi = np.searchsorted(g, [grp, grp + 1])
        got = _smallest_overlapping(s[lo:hi], e[lo:hi], w_s[has[mine]], w_e[has[mine]])
        cand[mine] = np.where(got >= 0, got + lo, -1)
    moved = cand >= 0
    w_item[has[moved]] = calls[cand[moved]]
    return w_item


def _first_containing(cand, parent, depth, s, e, ws, we):
    """The first of each ``cand`` and its ancestors (``parent`` links) that contains its wait
    [ws, we], or -1.  An ancestor contains its descendants, so those that contain a wait are
    the chain above some point: found by jumps of 2^k ancestors, log2(depth) passes (a step
    a pass took depth passes: 40,000 identical calls and as many waits, 43 s)."""
    def contains(c):
        cc = np.maximum(c, 0)
        return (c >= 0) & (s[cc] <= ws) & (we <= e[cc])
    jumps = [parent]
    while len(jumps) < max(int(depth.max()) if len(depth) else 0, 1).bit_length() + 1:
        up = jumps[-1]
        jumps.append(np.where(up >= 0, up[np.maximum(up, 0)], -1))
    done = contains(cand)
    c = cand.copy()
    for up in reversed(jumps):  # highest ancestor that does not contain the wait
        nxt = np.where(c >= 0, up[np.maximum(c, 0)], -1)
        go = ~done & (nxt >= 0) & ~contains(nxt)
        c = np.where(go, nxt, c)
    above = np.where(c >= 0, parent[np.maximum(c, 0)], -1)
    return np.where(done, cand, np.where(contains(above), above, -1))


def _smallest_overlapping(s, e, ws, we):
    """For each wait [ws, we], the position (into one caller's calls ``s``, ``e``, ordered by
    start) of the smallest call it overlaps (s < we and e > ws): the shortest, the first of
    equals; -1 where none.  Waits by their end, calls entering by their start: a Fenwick tree
    over the calls' stops keeps the least (duration, position) of those stopping after a
    point — (calls + waits) x log(calls) steps, where a scan of the calls per wait was
    quadratic (40,000 of each: 94 s)."""
    n = len(s)
    out = np.full(len(ws), -1, np.int64)
    if n == 0 or len(ws) == 0:
        return out
    by_size = np.lexsort((np.arange(n), e - s))  # (duration, position): rank -> call
    size_rank = np.empty(n, np.int64)
    size_rank[by_size] = np.arange(n)
    stop_order = np.argsort(e, kind="stable")
    slot = np.empty(n, np.int64)  # a call's place among the stops, latest first
    slot[stop_order] = n - 1 - np.arange(n)
    stops = e[stop_order]
    last_slot = (n - 1 - np.searchsorted(stops, ws, side="right")).tolist()  # e > ws: 0..this
    tree = [n] * (n + 1)  # prefix minimum of size ranks over slots (n: none)
    starts, slots, ranks = s.tolist(), slot.tolist(), size_rank.tolist()
    we_list, at, best = we.tolist(), 0, []
    for k in np.argsort(we, kind="stable").tolist():
        while at < n and starts[at] < we_list[k]:  # (calls are ordered by start)
            i, v = slots[at] + 1, ranks[at]
            while i <= n:
                if v < tree[i]:
                    tree[i] = v
                i += i & -i
            at += 1
        i, m = last_slot[k] + 1, n
        while i > 0:
            if tree[i] < m:
                m = tree[i]
            i -= i & -i
        best.append((k, m))
    for k, m in best:
        if m < n:
            out[k] = by_size[m]
    return out
