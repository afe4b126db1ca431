"""Stable sort orders, the same as numpy's, made faster where the data allow.

numpy's stable ``argsort`` of 64-bit integers is a merge sort (timsort): ~120 ms for a
million keys in no order, where its plain sort (vectorized) takes ~10 ms; and ``lexsort``
sorts once per key (~180 ms for two). A profile's columns are mostly event ids and times in
no order, sorted a few hundred times a command. ``stable_order`` and ``lex_order`` give
exactly the orders ``np.argsort(key, kind="stable")`` and ``np.lexsort(keys)`` give, by the
cheapest way the keys allow: each key and its position as one 64-bit number, plainly sorted
(no ties left) where the key's range leaves room; few values as 16-bit ints (numpy radix
sorts those); nearly sorted keys by numpy's stable sort (timsort's best case); else the
vectorized argsort with the ties put back in the order they came. A lexsort's keys are
folded into one where their ranges fit in 63 bits.
"""

from __future__ import annotations

import numpy as np

# below this many keys numpy's stable sort is as fast
SMALL = 4096
# a key column with fewer descents than 1 in this many is nearly sorted: timsort's runs
NEARLY_SORTED = 16


def stable_order(key):
    """``np.argsort(key, kind="stable")`` of a one-dimensional column."""
    return _order(key, stable=True)


def sorting_order(key):
    """An order that sorts ``key``, equal keys in no particular order: where only the sorted
    values count (distinct values numbered, a search's queries put back where they came
    from). ``stable_order`` but for wide keys in no order: numpy's plain argsort (36 ms a
    million 64-bit keys here, 136 ms stable) without their ties put back in order, which
    cost as much again where keys repeat (the guide's 4 ranks: 1 M event ids, 351 k
    distinct, 162 ms stable)."""
    return _order(key, stable=False)


def _order(key, stable):
    key = np.asarray(key)
    n = len(key)
    if n < SMALL or key.ndim != 1 or key.dtype.kind not in "iu" or key.dtype.itemsize <= 2:
        return np.argsort(key, kind="stable")  # (small ints: numpy's radix sort)
    lo, hi = int(key.min()), int(key.max())
    if hi - lo < 1 << 16:  # (few values: as small ints, which numpy radix sorts)
        return np.argsort((key - key.dtype.type(lo)).astype(np.uint16), kind="stable")
    index_bits = (n - 1).bit_length()
    if (hi - lo).bit_length() + index_bits <= 63:  # (value, position) as one number: no ties
        both = _from_zero(key, lo) << index_bits
        both |= np.arange(n, dtype=np.int64)
        both.sort()
        return both & ((1 << index_bits) - 1)
    if np.count_nonzero(key[1:] < key[:-1]) * NEARLY_SORTED < n:
        return np.argsort(key, kind="stable")  # (timsort's runs)
    order = np.argsort(key)
    if stable:
        _ties_in_order(key[order], order)
    return order


def _from_zero(key, lo):
    """``key - lo`` as int64 (a uint64 column too, where its range fits)."""
    if key.dtype.kind == "u" and key.dtype.itemsize == 8:
        return (key - np.uint64(lo)).astype(np.int64)
    return key.astype(np.int64) - lo


def _ties_in_order(sorted_keys, order):
    """Within each run of equal ``sorted_keys``, ``order``'s positions made ascending (as a
    stable sort leaves them), in place."""
    n = len(order)
    same = sorted_keys[1:] == sorted_keys[:-1]
    tie = np.flatnonzero(same)
    if len(tie) == 0:
        return
    in_run = np.zeros(n, bool)
    in_run[tie] = True
    in_run[tie + 1] = True
    pos = np.flatnonzero(in_run)
    first = np.ones(len(pos), bool)
    first[1:] = ~same[pos[1:] - 1]
    run = np.cumsum(first, dtype=np.int64) - 1
    both = np.sort(run * n + order[pos])  # (run, position) as one number: n < 2**31
    order[pos] = both % n


def lex_order(keys):
    """``np.lexsort(keys)`` (the last key sorts first) of one-dimensional columns."""
    keys = [np.asarray(k) for k in keys]
    n = len(keys[0]) if keys else 0
    if n < SMALL or any(k.ndim != 1 or k.dtype.kind not in "iub" for k in keys):
        return np.lexsort(keys)
    folded = _folded(keys)
    return np.lexsort(keys) if folded is None else stable_order(folded)


def _folded(keys):
    """The keys as one int64 column ordered as they are together (the last the most
    significant), or None where their ranges need more than 63 bits."""
    spans, bits = [], 0
    for k in keys:
        lo, hi = int(k.min()), int(k.max())
        width = (hi - lo).bit_length()
        spans.append((lo, width))
        bits += width
    if bits > 63:
        return None
    out = np.zeros(len(keys[0]), np.int64)
    shift = 0
    for k, (lo, width) in zip(keys, spans):
        if width:
            out |= _from_zero(k, lo) << shift
        shift += width
    return out


def unique_values(values):
    """``np.unique(values)``: the sorted distinct values. numpy 2.4 finds an integer column's
    by hashing, 1.9 s for two million distinct ids where sorting them takes 25 ms, and its
    first call imports ``numpy.ma`` (14-28 ms of a command); a column of ints or bools is
    sorted here, however short, anything else left to numpy."""
    values = np.asarray(values)
    if values.dtype.kind not in "iub":
        return np.unique(values)
    s = np.sort(values, axis=None)
    if len(s) == 0:
        return s
    keep = np.empty(len(s), bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def unique_with(values, index=False, inverse=False, counts=False):
    """``np.unique(values, return_index=index, return_inverse=inverse,
    return_counts=counts)`` of a one-dimensional column: (the distinct values, then what
    was asked, in numpy's order), from one stable sort (numpy's takes 160-330 ms for two
    million ids, this ~40 ms)."""
    values = np.asarray(values)
    if not (index or inverse or counts):
        return unique_values(values)  # (numpy's: the values alone, not a tuple)
    if values.size < SMALL or values.ndim != 1 or values.dtype.kind not in "iub":
        return np.unique(values, return_index=index, return_inverse=inverse,
                         return_counts=counts)
    order = stable_order(values)
    s = values[order]
    first = np.empty(len(s), bool)
    first[0] = True
    np.not_equal(s[1:], s[:-1], out=first[1:])
    out = [s[first]]
    if index:
        out.append(order[first])  # (a stable sort: each value's first place)
    if inverse:
        inv = np.empty(len(s), np.intp)
        inv[order] = np.cumsum(first) - 1
        out.append(inv)
    if counts:
        starts = np.flatnonzero(first)
        out.append(np.diff(np.append(starts, len(s))))
    return tuple(out)


__all__ = ["stable_order", "sorting_order", "lex_order", "unique_values", "unique_with",
           "equal_runs", "search_sorted", "SORTED_SEARCH_ABOVE", "SORTED_SEARCH_KEYS"]


def equal_runs(values):
    """(where each run of equal consecutive ``values`` starts, its length): what is worked
    out once a run and repeated (a task's calls name it one after another)."""
    values = np.asarray(values)
    if len(values) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    head = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    return head, np.diff(np.r_[head, len(values)])


# A search of sorted keys sorts its queries first above this many queries among more keys
# than fit in the processor's cache: numpy's binary search starts a query where the last
# one ended when they come in order, and misses the cache at every step when they do not
# (147 k callers among 463 k events: 33 -> 11 ms; 10 M among 10 M: 14 -> 2 s).  Among fewer
# keys the misses are few and the sort costs more (671 k op ids, a twelfth distinct, among
# 83 k operations: 20 ms searched as they come, 49-101 ms sorted first).
SORTED_SEARCH_ABOVE = 1 << 12
SORTED_SEARCH_KEYS = 1 << 17


def search_sorted(keys, query, side="left"):
    """``np.searchsorted(keys, query, side)``, its queries sorted first when they are many
    and the keys too many for the cache."""
    query = np.asarray(query)
    if query.ndim != 1 or len(query) <= SORTED_SEARCH_ABOVE or \
            len(keys) <= SORTED_SEARCH_KEYS or bool(np.all(query[1:] >= query[:-1])):
        return np.searchsorted(keys, query, side=side)
    order = sorting_order(query)
    pos = np.empty(len(query), np.int64)
    pos[order] = np.searchsorted(keys, query[order], side=side)
    return pos
