"""Questions about ranges of a column, asked for many ranges at once in log2(range) passes
over the questions: the last position whose value exceeds x (``LastGreater``), the first
position of a range's smallest value (``RangeArgmin``), the lowest ancestor in a tree that
passes a test monotone along the way up (``lowest_ancestor``).

They replace walks of a step per round (back along "previous call that stops later" links,
up a call tree), which take as many rounds as the longest walk: a million runtime calls in a
row, or calls nested a hundred thousand deep, made those quadratic.  Each structure keeps a
level per power of two up to the longest range asked (``longest``): small for real runs."""

from __future__ import annotations

import numpy as np

from legate_prof.model.sort_order import unique_values, unique_with


def _levels(base, longest, combine):
    levels = [base]
    while 2 * (1 << (len(levels) - 1)) <= longest:
        m, w = levels[-1], 1 << (len(levels) - 1)
        levels.append(combine(m[:-w], m[w:]))
    return levels


class LastGreater:
    """The last position p of [lo, hi) with ``values[p] > x``, for many (lo, hi, x) at once.

    Level k holds the maximum of each block of 2**k values (the dense ranks of ``values``,
    4 bytes each); a query steps left from hi over every block whose maximum is <= x, the
    largest first, so it takes one step a level."""

    def __init__(self, values, longest=None):
        values = np.asarray(values)
        self._distinct, rank = unique_with(values, inverse=True)
        longest = len(values) if longest is None else min(longest, len(values))
        self.rank = rank.astype(np.int32 if len(values) < 2**31 else np.int64)
        self.levels = _levels(self.rank, longest, np.maximum)

    def find(self, lo, hi, x=None, bound=None):
        """Per query, the last p in [lo, hi) with values[p] > x (-1: none); ``bound``, where
        given for x, is the number of distinct values <= x (the values of rank < bound)."""
        lo = np.asarray(lo, np.int64)
        pos = np.asarray(hi, np.int64).copy()
        if bound is None:
            bound = np.searchsorted(self._distinct, np.asarray(x), side="right")
        for k in range(len(self.levels) - 1, -1, -1):
            cand = pos - (1 << k)
            ok = np.flatnonzero(cand >= lo)
            ok = ok[self.levels[k][cand[ok]] < bound[ok]]  # (a block all <= x: step over it)
            pos[ok] = cand[ok]
        return np.where(pos - 1 >= lo, pos - 1, -1)


class RangeArgmin:
    """The first position of the smallest value of ``values[lo:hi]``, for many ranges at
    once (level k: the best of each block of 2**k, as a value's rank and its position packed
    in one int64; two overlapping blocks answer a range)."""

    def __init__(self, values, longest=None):
        values = np.asarray(values)
        n = len(values)
        _, rank = unique_with(values, inverse=True)
        longest = n if longest is None else min(longest, n)
        self.levels = _levels((rank.astype(np.int64) << 32) | np.arange(n, dtype=np.int64),
                              longest, np.minimum)

    def find(self, lo, hi):
        """Per range (hi > lo), the first position of its smallest value."""
        lo, hi = np.asarray(lo, np.int64), np.asarray(hi, np.int64)
        size = hi - lo
        k = np.zeros(len(lo), np.int64)
        big = size > 1
        k[big] = np.floor(np.log2(size[big])).astype(np.int64)
        k = np.minimum(k, len(self.levels) - 1)
        best = np.zeros(len(lo), np.int64)
        for level in unique_values(k).tolist():
            at = np.flatnonzero(k == level)
            m = self.levels[level]
            w = 1 << level
            best[at] = np.minimum(m[lo[at]], m[hi[at] - w])
        return best & 0xFFFFFFFF


def lowest_ancestor(parent, start, passes):
    """Per query, the first of ``start`` and its ancestors (``parent``: -1 at a root) for
    which ``passes(nodes, query_ids)`` is true, where a node passes only if its parent
    does (a call containing an interval: so does the call around it); -1 where none does.
    Binary lifting: log2(depth) tables of 2**k-th ancestors."""
    parent = np.asarray(parent, np.int64)
    cur = np.asarray(start, np.int64).copy()
    q = np.arange(len(cur))
    alive = cur >= 0
    fine = np.zeros(len(cur), bool)
    fine[alive] = passes(cur[alive], q[alive])
    out = np.where(fine, cur, -1)
    todo = np.flatnonzero(alive & ~fine)  # (cur fails: climb while the next one fails)
    if len(todo) == 0:
        return out
    ups = [parent]
    while True:  # 2**k-th ancestors while any node has one
        a = ups[-1]
        nxt = np.where(a >= 0, a[np.maximum(a, 0)], -1)
        if not (nxt >= 0).any():
            break
        ups.append(nxt)
    c = cur[todo]
    for k in range(len(ups) - 1, -1, -1):
        a = ups[k][c]
        ok = np.flatnonzero(a >= 0)
        ok = ok[~passes(a[ok], todo[ok])]
        c[ok] = a[ok]
    out[todo] = parent[c]  # (c fails and its parent is the first that passes, or none)
    return out
