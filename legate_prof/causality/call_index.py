"""What a task or meta-task was doing at a moment: itself, or the innermost mapper, runtime or
application call it had made that was running then (the reference's
``Proc::find_executing_entry``).  A link "created by X" lands there, as in the reference.

Calls are grouped by the event of the entry they run inside and sorted by (start, longest
first, item order: of two calls with the same interval the later one is inside); properly
nested, the innermost call running at t is the last one in that order with start <= t that
stops after t.  Both that and each call's "previous call that stops later" are one question,
the last position of a range whose stop exceeds a time, answered for all queries at once by
a descent over maxima of power-of-two blocks (``LastGreater``): log2(calls) passes over the
queries, whatever the calls' shape.  Jumping back along "previous call that stops later"
links instead takes a round per call of a chain of calls that do not nest — a top-level task
making a million runtime calls one after another made it quadratic (189 s for ``stats``)."""

from __future__ import annotations

import numpy as np

from legate_prof.causality.event_graph import first_of_runs
from legate_prof.model.range_queries import LastGreater
from legate_prof.model.sort_order import lex_order, search_sorted, stable_order

WALK_ROUNDS = 16  # steps back along the links before the descent answers the rest


class CallIndex:
    """Calls (item ids ``calls``) of entries, by the entry's event ``caller``."""

    ARRAYS = ("items", "caller", "start", "stop", "group_start", "keys", "prev_greater")

    def __init__(self, calls, caller, start, stop):
        o = _call_order(calls, caller, start, stop)
        self.items, self.caller = calls[o], caller[o]
        self.start, self.stop = start[o], stop[o]
        self.group_start = np.flatnonzero(first_of_runs(self.caller))
        self.keys = self.caller[self.group_start]
        self.prev_greater = self._prev_greater()

    def arrays(self):
        """The index as named arrays (``from_arrays`` takes them back)."""
        return {name: getattr(self, name) for name in self.ARRAYS}

    @classmethod
    def from_arrays(cls, arrays):
        index = cls.__new__(cls)
        for name in cls.ARRAYS:
            setattr(index, name, arrays[name])
        return index

    def _prev_greater(self):
        """Per call, the last call before it in its group that stops later (-1: none).  Most
        calls are answered by a look at the call before them (it stops later: that one) or
        at their group's latest stop so far (no later one: none; a call after calls that
        do not nest); the descent answers the rest."""
        n = len(self.items)
        if n == 0:
            return np.zeros(0, np.int64)
        sizes = np.diff(np.append(self.group_start, n))
        lo = np.repeat(self.group_start, sizes)
        table = LastGreater(self.stop, int(sizes.max()))
        rank = table.rank.astype(np.int64)  # (dense: a stop's place among the stops)
        # each group's running maximum, all groups at once (a group's ranks lifted above the
        # groups' before it)
        lift = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes) * (int(rank.max()) + 1)
        latest = np.maximum.accumulate(rank + lift) - lift
        first = np.arange(n) == lo
        out = np.full(n, -1, np.int64)
        before = np.flatnonzero(~first)
        later = before[latest[before - 1] > rank[before]]  # (a call before it stops later)
        next_to = later[rank[later - 1] > rank[later]]
        out[next_to] = next_to - 1
        rest = np.setdiff1d(later, next_to, assume_unique=True)
        out[rest] = table.find(lo[rest], rest, bound=table.rank[rest] + 1)  # (rank <= its own:
        return out  # <= it)

    def _last_started_by(self, g, lo, hi, t):
        """Per query, the last call of group ``g`` (positions [lo, hi)) started by ``t``
        (lo - 1 where none): one search of (group, start) packed in an int64 where they
        fit, else a search of each range."""
        packed = getattr(self, "_packed", False)
        if packed is False:
            packed = self._packed = _packed_starts(self.group_start, len(self.items),
                                                   self.start)
        if packed is None:
            return _last_at_or_before(self.start, lo, hi, t)
        keys, first, span = packed
        shifted = np.clip(np.asarray(t, np.int64) - first + 1, 0, span - 1)
        pos = search_sorted(keys, g.astype(np.int64) * span + shifted, side="right") - 1
        return np.where(pos >= lo, pos, lo - 1)

    def running(self, caller, t):
        """The innermost call of ``caller`` running at ``t`` (start <= t < stop), as an
        item id, or -1."""
        q = len(t)
        out = np.full(q, -1, np.int64)
        if len(self.items) == 0 or q == 0:
            return out
        g = np.minimum(search_sorted(self.keys, caller), len(self.keys) - 1)
        has = self.keys[g] == caller
        lo = self.group_start[g]
        hi = np.append(self.group_start[1:], len(self.items))[g]
        k = self._last_started_by(g, lo, hi, t)
        cur = np.where(has & (k >= lo), k, -1)
        act = cur >= 0
        for _ in range(WALK_ROUNDS):  # (nesting is shallow: a few steps back, mostly)
            if not act.any():
                return out
            ok = np.zeros(q, bool)
            ok[act] = self.stop[cur[act]] > t[act]
            out[act & ok] = self.items[cur[act & ok]]
            act &= ~ok
            cur[act] = self.prev_greater[cur[act]]
            act &= cur >= 0
        left = np.flatnonzero(act)  # (deeper: the last call of [lo, cur] stopping after t)
        if len(left):
            longest = int(np.diff(np.append(self.group_start, len(self.items))).max())
            found = LastGreater(self.stop, longest).find(lo[left], cur[left] + 1, t[left])
            hit = found >= 0
            out[left[hit]] = self.items[found[hit]]
        return out


def _packed_starts(group_start, n, start):
    """(each call's (group, start) packed in one sorted int64, the first start, the span)
    where they fit, else None."""
    if n == 0:
        return None
    first, last = int(start.min()), int(start.max())
    span = last - first + 2
    if len(group_start) * span >= 2**62:
        return None
    group = np.repeat(np.arange(len(group_start), dtype=np.int64),
                      np.diff(np.append(group_start, n)))
    return group * span + (start.astype(np.int64) - first + 1), first, span


def _in_order(o, shared, calls, start, stop):
    """Whether ``o`` (the calls by caller) already has each caller's calls by (start, longest
    first, item order): a task's calls lie on its processor in the order they started,
    mostly, and the sort that would put them so is then not needed."""
    s, e, i = start[o], stop[o], calls[o]
    same = shared[1:]
    later = s[1:] > s[:-1]
    tie = s[1:] == s[:-1]
    shorter = e[1:] < e[:-1]
    after = (e[1:] == e[:-1]) & (i[1:] > i[:-1])
    return bool(np.all(~same | later | (tie & (shorter | after))))


def _call_order(calls, caller, start, stop):
    """``np.lexsort((calls, -stop, start, caller))`` (``calls``: distinct ids), by a sort of
    the callers and a lexsort of only the calls that share one (most entries make one call
    or none: a lexsort of all, four sorts, is most of the index's time)."""
    o = stable_order(caller)
    c = caller[o]
    shared = np.zeros(len(c), bool)
    shared[1:] = c[1:] == c[:-1]  # (a call after another of its caller)
    if not shared.any() or _in_order(o, shared, calls, start, stop):
        return o
    if 2 * int(shared.sum()) > len(c):
        return lex_order((calls, -stop, start, caller))
    runs = shared.copy()
    runs[:-1] |= shared[1:]
    at = np.flatnonzero(runs)
    sub = o[at]
    caller_rank = np.cumsum(~shared)[at]  # (orders the callers' runs as they lie)
    o[at] = sub[lex_order((calls[sub], -stop[sub], start[sub], caller_rank))]
    return o


def _last_at_or_before(keys, lo, hi, t):
    """Per query, the last position in [lo, hi) with keys <= t (lo - 1 where none): a binary
    search of all queries at once, each within its own range."""
    a, b = lo.copy(), hi.copy()
    while True:
        act = a < b
        if not act.any():
            return a - 1
        mid = (a + b) // 2
        le = np.zeros(len(a), bool)
        le[act] = keys[mid[act]] <= t[act]
        a = np.where(act & le, mid + 1, a)
        b = np.where(act & ~le, mid, b)

