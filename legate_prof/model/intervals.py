"""Vectorized interval algebra: stacking rows, per-lane unions, step-function integrals."""

from __future__ import annotations

import heapq
import math

import numpy as np

from legate_prof.model.sort_order import lex_order, stable_order, unique_values


def stack_rows(start: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """Row of each interval so that intervals on one row never overlap.

    Intervals must be sorted by start (longer first on ties).  Nested intervals (tasks and the
    mapper/runtime calls inside them) get their nesting depth, computed without a Python loop;
    only lanes whose intervals cross without nesting fall back to greedy interval partitioning.
    """
    n = len(start)
    if n == 0:
        return np.zeros(0, dtype=np.int16)
    ends = np.sort(stop, kind="stable")  # nearly in order already: timsort is ~linear
    depth = np.arange(n) - np.searchsorted(ends, start, side="right")
    depth = np.minimum(np.maximum(depth, 0), 32767).astype(np.int16)
    if _rows_are_valid(depth, start, stop):
        return depth
    if n > GREEDY_MAX_ITEMS:
        return _matched_rows(start, stop)
    return _greedy_rows(start, stop)


# Above this many crossing intervals in one lane, rows come from the vectorized matching below
# instead of the lowest-free-row loop (about 2 us per interval in Python).
GREEDY_MAX_ITEMS = 20_000


def _rows_are_valid(rows, start, stop):
    """No two intervals of one row overlap.  ``start`` is sorted, so a stable sort of the
    (int16: radix) rows orders by (row, start)."""
    order = stable_order(rows)
    r, s, e = rows[order], start[order], stop[order]
    same = r[1:] == r[:-1]
    return not np.any(same & (s[1:] < e[:-1]))


def _greedy_rows(start, stop):
    rows = np.empty(len(start), dtype=np.int16)
    free = []  # free row numbers (min-heap)
    busy = []  # (stop, row)
    nrows = 0
    for i, (s, e) in enumerate(zip(start.tolist(), stop.tolist())):
        while busy and busy[0][0] <= s:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            r = heapq.heappop(free)
        else:
            r = nrows
            nrows += 1
        rows[i] = min(r, 32767)
        heapq.heappush(busy, (e, r))
    return rows


def _matched_rows(start, stop):
    """Rows for crossing intervals without a Python loop, using as few rows as the greedy.

    An interval takes the row freed most recently before it starts (a stack of free rows),
    or a new row when none is free.  Matching each start with "the latest unmatched end
    before it" is bracket matching: with f the number of free rows after each event (+1 per
    end, -1 per start while f > 0), a start that finds f = d is matched with the last end
    that left f = d; in time order per level d ends and matched starts alternate, so the match
    is the element just before it.  Rows then follow the chains of matches (pointer jumping).
    """
    n = len(start)
    start = start.astype(np.int64)
    stop = np.maximum(stop.astype(np.int64), start)
    # events by time, interleaved (start i, end i) so that a stable sort keeps index order on
    # ties; at equal times ends come first (touching intervals share a row), except the end of
    # an empty interval, which comes right after its own start (as in the greedy)
    t = np.empty(2 * n, np.int64)
    t[0::2], t[1::2] = start, stop
    sub = np.ones(2 * n, np.int64)
    sub[1::2] = np.where(stop > start, 0, 1)
    lo = int(t.min())
    if int(t.max()) - lo < 2**60:
        order = stable_order((t - lo) * 2 + sub)
    else:
        order = lex_order((sub, t))
    is_end = (order & 1).astype(bool)
    S = np.cumsum(np.where(is_end, 1, -1))
    free_after = S - np.minimum(np.minimum.accumulate(S), 0)
    free_before = np.concatenate([[0], free_after[:-1]])
    item = order >> 1
    new_row = ~is_end & (free_before == 0)
    matched = ~is_end & (free_before > 0)
    # per level: ends that left f = d and starts that found f = d, in time order
    cand = np.flatnonzero(is_end | matched)
    level = np.where(is_end[cand], free_after[cand], free_before[cand])
    o = stable_order(level * (2 * n + 1) + cand)
    cand, is_e = cand[o], is_end[cand[o]]
    starts_at = np.flatnonzero(~is_e)
    parent = np.arange(n)
    parent[item[cand[starts_at]]] = item[cand[starts_at - 1]]
    root_row = np.zeros(n, np.int64)
    roots = item[np.flatnonzero(new_row)]
    root_row[roots] = np.arange(len(roots))
    active = np.flatnonzero(parent[parent] != parent)
    while len(active):
        parent[active] = parent[parent[active]]
        active = active[parent[parent[active]] != parent[active]]
    return np.minimum(root_row[parent], 32767).astype(np.int16)


def lane_rows(start, stop):
    """One lane's rows (``stack_rows``, by item in start order) and the order that sorts its
    items by (row, start): what a lane stacked at build and one stacked when drawn share."""
    rows = stack_rows(start, stop)
    return rows, stable_order(rows)  # int16: a radix sort, keeps start order


def stack_lanes(start, stop, bounds):
    """``stack_rows`` for items sorted by (lane, start), lane ``L`` holding
    ``[bounds[L], bounds[L+1])``: (the order that sorts them by (lane, row, start), their
    rows in that order, rows per lane)."""
    n = len(start)
    perm = np.arange(n)
    rows = np.zeros(n, dtype=np.int16)
    n_rows = np.ones(len(bounds) - 1, dtype=np.int32)
    for L in np.flatnonzero(np.diff(bounds) > 1).tolist():
        lo, hi = int(bounds[L]), int(bounds[L + 1])
        r, o = lane_rows(start[lo:hi], stop[lo:hi])
        n_rows[L] = int(r.max()) + 1
        if n_rows[L] > 1:
            perm[lo:hi] = lo + o
            rows[lo:hi] = r[o]
    return perm, rows, n_rows


def rows_needed(start, stop, bounds):
    """How many rows ``stack_rows`` gives each lane, without stacking (what the lane tree
    needs before any lane is drawn; the rows themselves come when a lane is shown).

    Items are sorted by (lane, start), lane ``L`` holding ``[bounds[L], bounds[L+1])``.  Every
    stacking here is as tight as the lowest-free-row greedy, so a lane needs as many rows as
    intervals are open right after its busiest start: ends come before starts at equal times,
    except an empty interval's own end, which follows its start.  One merge of the nearly
    sorted (lane, end) keys with the sorted (lane, start) keys, for all lanes at once.
    """
    n_lanes = len(bounds) - 1
    out = np.ones(n_lanes, np.int32)
    n = int(bounds[-1]) if n_lanes else 0
    if n == 0:
        return out
    s = start.astype(np.int64, copy=False)
    e = np.maximum(stop.astype(np.int64, copy=False), s)
    empty = e == s
    lo = int(s.min())
    if int(e.max()) - lo >= 2**42 or n_lanes >= 2**20:  # keys would not pack: lane by lane
        for L in np.flatnonzero(np.diff(bounds) > 0).tolist():
            a, b = int(bounds[L]), int(bounds[L + 1])
            out[L] = _rows_needed_one(s[a:b], e[a:b], empty[a:b])
        return np.minimum(out, 32768).astype(np.int32)
    lane_key = np.repeat(np.arange(n_lanes, dtype=np.int64) << 42, np.diff(bounds))
    ended = _ends_at_or_before(lane_key | (e - lo), lane_key | (s - lo), ~empty)
    # open right after item j's start: the non-empty items before it and itself, less the
    # non-empty ends at or before its start (earlier lanes' items cancel: all their ends
    # have smaller keys); an empty interval is open at its own start only
    open_after = np.cumsum(~empty) - ended
    open_after += empty
    has = np.flatnonzero(np.diff(bounds) > 0)
    out[has] = np.maximum.reduceat(open_after, bounds[:-1][has])
    return np.minimum(out, 32768).astype(np.int32)


def _ends_at_or_before(end_keys, start_keys, counted):
    """For each of the sorted ``start_keys`` (below 2**62), how many of the ``counted``
    ``end_keys`` are at most it: ``np.searchsorted(sorted ends, start_keys, "right")``.  One
    merge of both, each key tagged with whether it is a start (an end sorts before a start of
    equal key): the j-th start has as many ends before it as its place less j."""
    keys = np.concatenate([end_keys[counted] << 1, (start_keys << 1) | 1])
    keys.sort(kind="stable")  # ends nearly in order, starts in order: runs merged
    is_start = (keys & 1).astype(bool)  # (nonzero of a bool array: the fast one)
    return np.flatnonzero(is_start) - np.arange(len(start_keys))


def _rows_needed_one(s, e, empty):
    """``rows_needed`` of one lane (int64 starts and ends, ends at least the starts)."""
    ended = np.searchsorted(np.sort(e[~empty]), s, side="right") + np.cumsum(empty) - empty
    return int(np.max(np.arange(1, len(s) + 1) - ended))


def blocked_searchsorted(arr, coarse, block, lo, hi, v, side="left"):
    """``np.searchsorted(arr[lo:hi], v, side)`` through ``coarse = arr[::block]``.

    A plain binary search touches one cold page per step in a big (often memory-mapped)
    array; this searches the small coarse array, then bisects one ``block``-wide run per
    query, all queries at once (log2(block) reads each, from the run's page).
    """
    v = np.asarray(v)
    c0, c1 = -(-lo // block), -(-hi // block)
    j = np.searchsorted(coarse[c0:c1], v, side=side)
    a = np.where(j > 0, (c0 + j - 1) * block, lo)  # the answer lies in [a, b]
    b = np.where(j < c1 - c0, (c0 + j) * block, hi)
    last = max(hi - 1, 0)
    while True:
        open_ = a < b
        if not open_.any():
            return a - lo
        mid = (a + b) >> 1
        val = arr[np.minimum(mid, last)]
        after = (val < v if side == "left" else val <= v) & open_
        a = np.where(after, mid + 1, a)
        b = np.where(open_ & ~after, mid, b)


def group_start_order(group, start, stop):
    """The order of intervals by (group, start), longer first on equal (group, start), then as
    given: ``np.lexsort((start - stop, start, group))`` for groups numbered from 0.

    One stable argsort of (group, start) packed in an int64 when they fit (timsort: the items
    come in runs already in order), a lexsort otherwise; ties on (group, start), rare, are
    then put longest first."""
    n = len(group)
    if n == 0:
        return np.zeros(0, np.int64)
    s = start.astype(np.int64, copy=False)
    lo = int(s.min())
    span = int(s.max()) - lo
    top = int(group.max())
    shift = 63 - max(top, 1).bit_length()  # bits left for the start
    if int(group.min()) >= 0 and span < 2**shift:
        key = (group.astype(np.int64) << shift) | (s - lo)
        order = stable_order(key)
        k = key[order]
        tie = np.flatnonzero(k[1:] == k[:-1])
        if len(tie):
            # runs of equal keys: reorder each by descending duration
            at = unique_values(np.concatenate([tie, tie + 1]))
            dur = (stop.astype(np.int64) - s)[order[at]]
            o = lex_order((-dur, k[at]))
            order[at] = order[at][o]
        return order
    return lex_order((-(stop.astype(np.int64) - s), s, group))


def union_sorted(start: np.ndarray, stop: np.ndarray):
    """Disjoint union of intervals sorted by start: returns (starts, stops)."""
    if len(start) == 0:
        return start[:0], stop[:0]
    reach = np.maximum.accumulate(stop)
    new = np.empty(len(start), dtype=bool)
    new[0] = True
    new[1:] = start[1:] > reach[:-1]
    first = np.flatnonzero(new)
    last = np.empty_like(first)
    last[:-1] = first[1:] - 1
    last[-1] = len(start) - 1
    return start[first], reach[last]


def subtract_waits(start, stop, item, wait_start, wait_end):
    """Running pieces of items once their wait intervals are cut out.

    ``item`` indexes into start/stop and must be sorted (waits of one item sorted by start).
    Returns (piece_item, piece_start, piece_stop) for the items that have waits.
    """
    if len(item) == 0:
        return item[:0], start[:0], stop[:0]
    first = np.ones(len(item), dtype=bool)
    first[1:] = item[1:] != item[:-1]
    last = np.ones(len(item), dtype=bool)
    last[:-1] = item[1:] != item[:-1]
    # piece before each wait: from (item start | previous wait end) to this wait's start
    prev_end = np.empty_like(wait_end)
    prev_end[1:] = wait_end[:-1]
    b_start = np.where(first, start[item], prev_end)
    b_stop = wait_start
    # final piece after the last wait of each item
    t_item = item[last]
    t_start = wait_end[last]
    t_stop = stop[t_item]
    p_item = np.concatenate([item, t_item])
    p_start = np.concatenate([b_start, t_start])
    p_stop = np.concatenate([b_stop, t_stop])
    keep = p_stop > p_start
    return p_item[keep], p_start[keep], p_stop[keep]


def sorted_steps(ups, downs):
    """The times of ``ups`` (+1 each) and ``downs`` (-1 each), sorted, +1 before -1 at equal
    times: (int64 times, int64 deltas).  One stable sort of (time, is -1) packed in a key
    (the times come in runs already in order: merged) where the span fits, a lexsort else."""
    t = np.concatenate([ups, downs]).astype(np.int64, copy=False)
    n_up = len(ups)
    lo = int(t.min()) if len(t) else 0
    if len(t) and int(t.max()) - lo < 2**62:
        key = (t - lo) << 1
        key[n_up:] |= 1
        key.sort(kind="stable")
        return (key >> 1) + lo, 1 - ((key & 1) << 1)
    delta = np.ones(len(t), np.int64)
    delta[n_up:] = -1
    o = lex_order((delta < 0, t))
    return t[o], delta[o]


def _count_integral(start, stop):
    """``StepIntegral.from_intervals`` of unweighted integer intervals: (breakpoints,
    integral), from ``sorted_steps`` instead of an argsort of the times; the count after the
    last change at each time is the same whatever the order of equal times (sums of whole
    numbers, exact), so the integral is too."""
    t, d = sorted_steps(start, stop)
    t = t.astype(np.float64)
    level = np.cumsum(d).astype(np.float64)
    keep = np.ones(len(t), dtype=bool)
    keep[:-1] = t[1:] != t[:-1]
    t, level = t[keep], level[keep]
    return t, np.concatenate([[0.0], np.cumsum(level[:-1] * np.diff(t))])


PAGE_BYTES = 4096  # (a page of a mapped bundle, read from disk where it is cold)


class StepIntegral:
    """Integral of a piecewise-constant level over time, for exact averages over any bin.

    Stored as breakpoints ``t`` and the integral ``I(t)``; between breakpoints the integral is
    linear, so ``np.interp`` evaluates it exactly.  16 bytes per breakpoint.
    """

    __slots__ = ("t", "integral", "denominator", "_coarse", "mapped", "_sampled")
    BLOCK = 32  # breakpoints per block of the coarse index
    COARSE_MIN = 64 * BLOCK  # smaller step functions are searched directly
    MOST_LOOKUPS = 4096  # more times than this at once: a binary search each (``integral_at``)
    SAMPLED_CELLS = 4096  # a sampled integral has more cells than this, up to twice as many
    SAMPLED_MIN = 4 * SAMPLED_CELLS  # ... made only for a step with this many breakpoints

    def __init__(self, t: np.ndarray, integral: np.ndarray, denominator: float, mapped=False):
        self.t = t
        self.integral = integral
        self.denominator = float(denominator)
        self._coarse = None
        self.mapped = mapped  # t and integral are views of a mapped bundle (pages may be cold)
        self._sampled = None  # (cell, first, values): ``sampled_integral``, kept in a bundle

    @classmethod
    def from_intervals(cls, start, stop, weight=None, denominator=1.0):
        if len(start) == 0:
            return cls(np.zeros(1), np.zeros(1), denominator)
        if weight is None and start.dtype.kind in "iu" and stop.dtype.kind in "iu":
            return cls(*_count_integral(start, stop), denominator)
        t = np.concatenate([start, stop]).astype(np.float64)
        if weight is None:
            d = np.concatenate([np.ones(len(start)), -np.ones(len(stop))])
        else:
            w = np.asarray(weight, dtype=np.float64)
            d = np.concatenate([w, -w])
        order = stable_order(t)
        t, d = t[order], d[order]
        level = np.cumsum(d)
        # collapse equal times: keep the level after the last change at that time
        keep = np.ones(len(t), dtype=bool)
        keep[:-1] = t[1:] != t[:-1]
        t, level = t[keep], level[keep]
        area = np.concatenate([[0.0], np.cumsum(level[:-1] * np.diff(t))])
        return cls(t, area, denominator)

    @classmethod
    def sum(cls, steps, distinct=True):
        """The sum of step functions (levels and denominators add), exact up to rounding:
        each one's level changes at its breakpoints, merged in time order.  ``distinct=False``
        keeps a time that several have once per step function (the same integral: its length
        is known before summing, ``sum_length``)."""
        ts, ds = [], []
        for s in steps:
            if len(s.t) < 2:
                continue
            lv = np.diff(s.integral) / np.maximum(np.diff(s.t), 1e-300)
            ts.append(s.t)
            ds.append(np.diff(np.concatenate([[0.0], lv, [0.0]])))
        den = sum(s.denominator for s in steps)
        if not ts:
            return cls(np.zeros(1), np.zeros(1), den)
        t = np.concatenate(ts)
        d = np.concatenate(ds)
        order = stable_order(t)
        t, level = t[order], np.cumsum(d[order])
        if distinct:
            keep = np.ones(len(t), dtype=bool)
            keep[:-1] = t[1:] != t[:-1]
            t, level = t[keep], level[keep]
        area = np.concatenate([[0.0], np.cumsum(level[:-1] * np.diff(t))])
        return cls(t, area, den)

    @staticmethod
    def sum_length(steps):
        """How many breakpoints ``sum(steps, distinct=False)`` has."""
        return sum(len(s.t) for s in steps if len(s.t) >= 2) or 1

    @classmethod
    def any_active(cls, steps):
        """The step function that is 1 while any of ``steps`` is above 0, else 0 (denominator
        1): the union of busy/idle lines (channels, dependent partitioning), where a sum
        would be a share."""
        total = cls.sum(steps)
        if len(total.t) < 2:
            return cls.from_intervals(np.zeros(0), np.zeros(0), None, 1)
        level = np.diff(total.integral) / np.maximum(np.diff(total.t), 1e-300)
        on = level > 0.5
        us, ue = union_sorted(total.t[:-1][on], total.t[1:][on])
        return cls.from_intervals(us, ue, None, 1)

    def coarse_index(self):
        """Every BLOCK-th breakpoint (a bundle stores it: making it reads every page of t)."""
        return np.ascontiguousarray(self.t[::self.BLOCK])

    def adopt_coarse_index(self, coarse):
        self._coarse = coarse

    def sampled_integral(self):
        """(cell, first, values): I at every multiple of ``cell`` ns (a power of two, at
        least 1) from ``first`` cells, at or before the first breakpoint, to at or after the
        last, ``SAMPLED_CELLS`` to twice as many; each value as ``integral_at`` gives it
        for a mapped step (the same float).  None for a step of fewer than ``SAMPLED_MIN``
        breakpoints, cheap to search.  A bundle keeps it: a view's utilization bins of a
        multiple of ``cell`` (a whole run's, on screens up to ~6,000 px wide) are then read
        from it, not searched for through the step's cold pages."""
        t = self.t
        if len(t) < self.SAMPLED_MIN:
            return None
        cell, first, count = self.sampled_cells(t[0], t[-1])
        times = np.arange(first, first + count, dtype=np.float64) * cell
        as_mapped = StepIntegral(t, self.integral, self.denominator, mapped=True)
        as_mapped.adopt_coarse_index(self._coarse)
        k = self.MOST_LOOKUPS
        values = np.concatenate([as_mapped.integral_at(times[i:i + k])
                                 for i in range(0, len(times), k)])
        return cell, first, values

    @classmethod
    def sampled_cells(cls, lo, hi):
        """(cell, first, count) of the sampled integral of a step from ``lo`` to ``hi``."""
        lo, hi = float(lo), float(hi)
        span = min(max(hi - lo, 1.0), 1e300)  # (finite: a damaged bundle's times are checked)
        cell = 2.0 ** max(math.floor(math.log2(span / cls.SAMPLED_CELLS)), 0)
        first = math.floor(lo / cell)
        return cell, first, math.ceil(hi / cell) - first + 1

    def quick_at(self, cell, bins):
        """Whether ``bins`` bins of ``cell`` ns are averaged without searching a large step
        function's cold pages: it is in memory or small, or its sampled integral holds
        their edges."""
        if not self.mapped or len(self.t) < self.SAMPLED_MIN:
            return True
        return self._sampled is not None and bins < self.MOST_LOOKUPS and \
            cell >= self._sampled[0] and float(cell / self._sampled[0]).is_integer()

    def adopt_sampled_integral(self, cell, first, values):
        self._sampled = (float(cell), int(first), values)

    def _from_sampled(self, times):
        """``integral_at(times)`` read from the sampled integral where every time is a
        multiple of its cell (else None): before its first sample the integral is 0, after
        its last the total."""
        cell, first, values = self._sampled
        if not isinstance(times, np.ndarray) or times.ndim != 1 or times.dtype != np.float64:
            return None
        q = times / cell
        if not np.array_equal(q, np.floor(q)) or not np.all(np.abs(q) < 2.0 ** 62):  # (a NaN
            return None  # too; a time an int64 of cells cannot hold)
        k = q.astype(np.int64) - first
        out = values[np.clip(k, 0, len(values) - 1)]
        out[k < 0] = 0.0
        out[k >= len(values)] = self.integral[-1]
        return out

    def integral_at(self, times):
        """Exact I(times).  Large step functions of a mapped bundle are searched through a
        coarse index (every 32nd breakpoint) and then one 32-wide block per query: a lookup
        touches a few pages instead of one per binary-search step, which matters because
        those pages are often cold; or read from the sampled integral the bundle keeps
        (``sampled_integral``), the same floats.  In memory, a binary search each is
        cheaper."""
        t, integral = self.t, self.integral
        n = len(t)
        B = self.BLOCK
        if self._sampled is not None and self.mapped and 0 < np.size(times) <= \
                self.MOST_LOOKUPS and n >= self.COARSE_MIN:
            out = self._from_sampled(times)
            if out is not None:
                return out
        if not self.mapped or n < self.COARSE_MIN or np.size(times) > self.MOST_LOOKUPS:
            # or many queries: a binary search each is best
            return np.interp(times, t, integral, left=0.0, right=integral[-1])
        if self._coarse is None:
            self._coarse = self.coarse_index()
        times = np.asarray(times, dtype=np.float64)
        k = np.clip(self._search(times) - 1, 0, n - 2)
        t0, t1 = t[k], t[k + 1]
        with np.errstate(over="ignore"):  # a time repeated (a sum of ranks' steps written
            # as is: ``sum(distinct=False)``) spans nothing: clipped, and equal integrals
            frac = np.clip((times - t0) / np.maximum(t1 - t0, 1e-300), 0.0, 1.0)
        out = integral[k] + (integral[k + 1] - integral[k]) * frac
        out[times <= t[0]] = 0.0
        out[times >= t[-1]] = integral[-1]
        return out

    def _search(self, times):
        """``np.searchsorted(t, times, "right")``, reading few pages of ``t``: where the
        queries are at least one per page of ``t`` between the first and the last (a frame's
        bins over a step function of up to ~500 breakpoints a bin), one binary search over
        that part, which reads no more pages than a block per query would and is one numpy
        call; else through the coarse index, then a block per query."""
        t, B = self.t, self.BLOCK
        if len(t) * t.itemsize <= len(times) * PAGE_BYTES:  # (no page read twice)
            return np.searchsorted(t, times, side="right")
        j = np.searchsorted(self._coarse, times, side="right")
        if not len(j):
            return j
        # every breakpoint before ``lo`` is <= the first query, every one from ``hi`` on is
        # above the last (the coarse index holds t[lo] and t[hi])
        lo, hi = max(int(j.min()) - 1, 0) * B, min(int(j.max()) * B, len(t))
        if (hi - lo) * t.itemsize <= len(times) * PAGE_BYTES:
            return lo + np.searchsorted(t[lo:hi], times, side="right")
        return blocked_searchsorted(t, self._coarse, B, 0, len(t), times, "right")

    def average(self, edges: np.ndarray) -> np.ndarray:
        """Time-weighted mean level / denominator over each bin between consecutive edges."""
        edges = np.asarray(edges, dtype=np.float64)
        acc = self.integral_at(edges)
        den = np.diff(edges) * self.denominator
        return np.divide(np.diff(acc), den, out=np.zeros(len(den)), where=den > 0)

    def total(self):
        return float(self.integral[-1])

    def peak_level(self):
        if len(self.t) < 2:
            return 0.0
        lv = np.diff(self.integral) / np.maximum(np.diff(self.t), 1e-300)
        return float(lv.max())

    @property
    def nbytes(self):
        return self.t.nbytes + self.integral.nbytes


def ranges_end_to_end(lo, size):
    """The positions of the ranges ``[lo[k], lo[k] + size[k])``, end to end, in one pass
    (no ``arange`` a range)."""
    lo, size = np.asarray(lo, np.int64), np.asarray(size, np.int64)
    return np.repeat(lo - np.cumsum(size) + size, size) + np.arange(int(size.sum()))
