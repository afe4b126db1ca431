"""Tables made on first use, and lookups by a sorted key column."""

from __future__ import annotations

import threading
from collections.abc import Mapping

import numpy as np


def sorted_lookup(ids, values, keys, default):
    """``values`` of the row of each of ``keys`` in ``ids`` (sorted), ``default`` where none."""
    keys = np.asarray(keys)
    if len(ids) == 0:
        return np.full(len(keys), default, values.dtype)
    pos = np.minimum(np.searchsorted(ids, keys), len(ids) - 1)
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

    def __init__(self, make, key, runs=None, offsets=None):
        self._make, self._columns, self._lock = make, None, threading.Lock()
        self._key = key
        self._runs = (runs, offsets) if runs is not None else None

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
        table = self._table()
        return sorted_lookup(table[self._key], table[column], keys, default)

    def __getitem__(self, key):
        return self._table()[key]

    def __iter__(self):
        return iter(self._table())

    def __len__(self):
        return len(self._table())
