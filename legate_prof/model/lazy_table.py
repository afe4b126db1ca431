"""Tables made on first use, and lookups by a sorted key column."""

from __future__ import annotations

import threading
from collections.abc import Mapping

import numpy as np

from legate_prof.model.item_parts import positions_by_part
from legate_prof.model.sort_order import equal_runs, search_sorted


def sorted_lookup(ids, values, keys, default):
    """``values`` of the row of each of ``keys`` in ``ids`` (sorted), ``default`` where none."""
    keys = np.asarray(keys)
    if len(ids) == 0:
        return np.full(len(keys), default, values.dtype)
    if keys.ndim == 1 and len(keys) > 1 << 12:
        head, runs = equal_runs(keys)
        if 2 * len(head) < len(keys):  # (runs of one key: a task's calls name its op)
            return np.repeat(sorted_lookup(ids, values, keys[head], default), runs)
    pos = np.minimum(search_sorted(ids, keys), len(ids) - 1)
    return np.where(ids[pos] == keys, values[pos], default)


class LazyTable(Mapping):
    """A table (column name -> array) made on first use, once, by ``make()``.

    What a first frame never reads need not delay it: the ops of merged ranks, sorted by op
    id (half a second at 10 M items), are made when details, search or the findings first
    ask.  Until then ``lookup`` answers a few keys from ``runs``: the unmerged columns, whose
    slices between ``offsets`` are each sorted by ``key`` (each rank's table), the first run
    that has a key winning — as in the merged table.  Thread-safe: the findings run in a
    thread beside the viewer."""

    MAX_RUNS = 64  # beyond, a lookup makes the table (one search per run and key)

    def __init__(self, make, key, runs=None, offsets=None, stripes=None):
        self._make, self._columns, self._lock = make, None, threading.Lock()
        self._key = key
        self._runs = (runs, offsets) if runs is not None else None
        self._stripes = stripes  # () -> ``Stripes`` of the runs, or None (made once)

    def striped(self):
        """The table's runs as ``Stripes`` where they are (then any number of keys is looked
        up without making the table), else None."""
        if self._columns is not None or self._stripes is None:
            return None
        with self._lock:
            if callable(self._stripes):
                self._stripes = self._stripes()
        return self._stripes

    def _table(self):
        if self._columns is None:
            with self._lock:
                if self._columns is None:
                    self._columns = self._make()
                    self._make = self._runs = None  # and what they held
        return self._columns

    def lookup(self, keys, column, default):
        """``column`` of the row of each of ``keys`` (``default`` where none)."""
        keys = np.asarray(keys)
        runs = self._runs
        if self._columns is None and runs is not None and len(runs[1]) - 1 <= self.MAX_RUNS:
            cols, offsets = runs
            key = self._key
            out = np.full(len(keys), default, cols[column].dtype)
            todo = np.ones(len(keys), bool)
            for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
                if b == a or not todo.any():
                    continue
                ids = cols[key][a:b]
                pos = np.minimum(np.searchsorted(ids, keys), b - a - 1)
                hit = todo & (ids[pos] == keys)
                out[hit] = cols[column][a:b][pos[hit]]
                todo &= ~hit
            return out
        stripes = self.striped()
        if stripes is not None:
            return stripes.lookup(keys, column, default)
        table = self._table()
        return sorted_lookup(table[self._key], table[column], keys, default)

    def __getitem__(self, key):
        return self._table()[key]

    def __iter__(self):
        return iter(self._table())

    def __len__(self):
        return len(self._table())


class LazyColumns(dict):
    """A table (column name -> array) whose ``later`` columns (name -> ``make()``) are made
    when first read, once.  A dict in every other way: whatever reads it whole (its items,
    a copy, ``**``, a pickle — as a plain dict —, a bundle) makes them first; their names
    are there from the start, in their places.  The lanes' row counts of a model built
    unstacked (0.13 s of the guide's 10 M example) are read only by what draws or keeps
    it, never by ``stats``, ``critical`` or ``insights``."""

    def __init__(self, columns, later):
        super().__init__(columns)  # (a later column's place kept where ``columns`` has it)
        for name in later:
            dict.__setitem__(self, name, None)
        self._later, self._lock = dict(later), threading.Lock()

    def _made(self, name):
        if name in self._later:
            with self._lock:
                make = self._later.get(name)
                if make is not None:
                    dict.__setitem__(self, name, make())
                    del self._later[name]

    def _all_made(self):
        for name in list(self._later):
            self._made(name)
        return self

    def __getitem__(self, name):
        self._made(name)
        return dict.__getitem__(self, name)

    def get(self, name, default=None):
        return self[name] if name in self else default

    def __setitem__(self, name, value):
        with self._lock:
            self._later.pop(name, None)
            dict.__setitem__(self, name, value)

    def __delitem__(self, name):
        with self._lock:
            self._later.pop(name, None)
            dict.__delitem__(self, name)

    def update(self, *a, **k):
        for name, value in dict(*a, **k).items():
            self[name] = value

    def __iter__(self):  # (not dict's own: ``dict(t)`` and ``**t`` then read through [])
        return dict.__iter__(self)

    def values(self):
        return dict.values(self._all_made())

    def items(self):
        return dict.items(self._all_made())

    def copy(self):
        return dict(self.items())

    def __eq__(self, other):
        return dict.__eq__(self._all_made(), other)

    def __ne__(self, other):
        return dict.__ne__(self._all_made(), other)

    __hash__ = None

    def __repr__(self):
        return dict.__repr__(self._all_made())

    def __reduce__(self):
        return dict, (dict(self.items()),)

    def pop(self, *a):
        self._all_made()
        return dict.pop(self, *a)

    def setdefault(self, name, default=None):
        self._made(name)
        return dict.setdefault(self, name, default)

    def popitem(self):
        return dict.popitem(self._all_made())

    def __or__(self, other):
        return dict(self.items()) | other


class Stripes:
    """Runs of a table (column name -> array, each sorted by ``key``) whose keys fall in
    distinct classes modulo a common stride — Legion numbers a node's operations
    ``node + k * nodes`` —: a key can only be in the run of its class, so it is looked up
    there alone, as the table of all runs (the first run's row of a key) would answer it,
    without making that table (at 10 ranks x 1 M items: 0.2 s and 150 MB)."""

    def __init__(self, runs, key, stride, run_of_class):
        self.runs, self.key, self.stride, self.run_of_class = runs, key, stride, run_of_class
        self.holds_zero = any(int(r[key][0]) == 0 for r in runs)  # (sorted, not negative)

    @classmethod
    def of(cls, runs, key):
        """``Stripes`` of ``runs``, or None where their keys do not fall so (or a run is not
        sorted)."""
        runs = [r for r in runs if len(r[key])]
        stride = 0
        for r in runs:
            ids = np.asarray(r[key])
            if ids.dtype.kind not in "iu" or int(ids[-1]) >= 1 << 62 or int(ids[0]) < 0:
                return None
            d = np.diff(ids.astype(np.int64))
            if len(d) and int(d.min()) < 0:
                return None  # (not sorted)
            stride = int(np.gcd.reduce(np.append(d, stride)))
        classes = [int(r[key][0]) % stride if stride else -1 for r in runs]
        if stride < 2 or stride > 1 << 20 or len(set(classes)) != len(classes):
            return None
        run_of_class = np.full(stride, -1, np.int64)
        run_of_class[classes] = np.arange(len(runs))
        return cls(runs, key, stride, run_of_class)

    def lookup(self, keys, column, default):
        """``column`` of the row of each of ``keys`` (``default`` where none)."""
        keys = np.asarray(keys)
        out = np.full(len(keys), default, self.runs[0][column].dtype)
        if len(keys) == 0:
            return out
        run = self.run_of_class[(keys.astype(np.uint64) % np.uint64(self.stride))
                                .astype(np.int64)]
        if not self.holds_zero:
            run[keys == 0] = -1  # (no operation: a third of the items)
        for j, sel in positions_by_part(run, len(self.runs)):  # (the runs asked of only)
            r = self.runs[j]
            out[sel] = sorted_lookup(r[self.key], r[column], keys[sel], default)
        return out

