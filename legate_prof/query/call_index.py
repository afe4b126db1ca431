"""What a task or meta-task was doing at a moment: itself, or the innermost mapper, runtime or
application call it had made that was running then (the reference's
``Proc::find_executing_entry``).  A link "created by X" lands there, as in the reference.

Calls are grouped by the event of the entry they run inside and sorted by (start, longest
first, item order: of two calls with the same interval the later one is inside); properly
nested, the innermost call running at t is the last one in that order with start <= t <
stop, found by jumping back along "previous call that ends later" links (rounds = nesting
depth).  Over whole columns."""

from __future__ import annotations

import numpy as np

from legate_prof.query.event_graph import first_of_runs


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
        """Per call, the last call before it in its group that stops later (-1: none)."""
        n = len(self.items)
        pg = np.full(n, -2, np.int64)  # -2: not known yet
        first = np.zeros(n, bool)
        first[self.group_start] = True
        cand = np.arange(n) - 1
        cand[first] = -1
        todo = np.arange(n)
        while len(todo):
            c = cand[todo]
            none = c < 0
            pg[todo[none]] = -1
            todo, c = todo[~none], c[~none]
            greater = self.stop[c] > self.stop[todo]
            pg[todo[greater]] = c[greater]
            todo, c = todo[~greater], c[~greater]
            known = pg[c] != -2  # jump over what ends before: its own previous greater
            cand[todo[known]] = pg[c[known]]
        return pg

    def running(self, caller, t):
        """The innermost call of ``caller`` running at ``t`` (start <= t < stop), as an
        item id, or -1."""
        q = len(t)
        out = np.full(q, -1, np.int64)
        if len(self.items) == 0 or q == 0:
            return out
        g = np.minimum(np.searchsorted(self.keys, caller), len(self.keys) - 1)
        has = self.keys[g] == caller
        lo = self.group_start[g]
        hi = np.append(self.group_start[1:], len(self.items))[g]
        k = _last_at_or_before(self.start, lo, hi, t)
        cur = np.where(has & (k >= lo), k, -1)
        act = cur >= 0
        while act.any():
            ok = np.zeros(q, bool)
            ok[act] = self.stop[cur[act]] > t[act]
            out[act & ok] = self.items[cur[act & ok]]
            act &= ~ok
            cur[act] = self.prev_greater[cur[act]]
            act &= cur >= 0
        return out


def _call_order(calls, caller, start, stop):
    """``np.lexsort((calls, -stop, start, caller))`` (``calls``: distinct ids), by a sort of
    the callers and a lexsort of only the calls that share one (most entries make one call
    or none: a lexsort of all, four sorts, is most of the index's time)."""
    o = np.argsort(caller, kind="stable")
    c = caller[o]
    shared = np.zeros(len(c), bool)
    shared[1:] = c[1:] == c[:-1]  # (a call after another of its caller)
    if not shared.any():
        return o
    if 2 * int(shared.sum()) > len(c):
        return np.lexsort((calls, -stop, start, caller))
    runs = shared.copy()
    runs[:-1] |= shared[1:]
    at = np.flatnonzero(runs)
    sub = o[at]
    caller_rank = np.cumsum(~shared)[at]  # (orders the callers' runs as they lie)
    o[at] = sub[np.lexsort((calls[sub], -stop[sub], start[sub], caller_rank))]
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
