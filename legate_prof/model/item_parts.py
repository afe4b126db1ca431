"""A profile's items held by several models (one per rank, unmerged): which model holds an
item, and how its ids map into the profile's numbering.  Analyses over all items (statistics,
findings, the report, a cache entry) read them part by part instead of a merged copy."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from legate_prof.model.sort_order import stable_order, unique_values


@dataclass(frozen=True)
class ItemPart:
    """One model holding some of a profile's items: its item ``i`` is the profile's item
    ``item_off + i`` on lane ``lane_off + lane``; ``name_map`` / ``prov_map`` turn its name
    and provenance ids into the profile's (None: the same)."""

    model: object
    item_off: int
    lane_off: int
    name_map: object
    prov_map: object

    def names(self, ids=None):
        n = self.model.items["name"] if ids is None else self.model.items["name"][ids]
        return n if self.name_map is None else self.name_map[n]

    def provenances(self, ids=None):
        op = self.model.items["op_id"] if ids is None else self.model.items["op_id"][ids]
        p = self.model.op_provenance(op)
        return p if self.prov_map is None else self.prov_map[p].astype(np.int32)


def by_part(offsets, ids):
    """(part index, which of ``ids`` — a mask or a slice: what indexes them —, their ids in
    that part) for each part holding some of ``ids``, the parts' first ids being ``offsets``
    (sorted, one more at the end)."""
    ids = np.asarray(ids)
    n = len(ids)
    if n and offsets[0] <= ids[0] and ids[-1] < offsets[-1] and (
            n == 1 or not np.any(ids[1:] < ids[:-1])):  # (sorted, as most asks: each part's
        bounds = np.searchsorted(ids, offsets).tolist()  # a run, not a mask of all a part)
        for k in range(len(offsets) - 1):
            lo, hi = bounds[k], bounds[k + 1]
            if hi > lo:
                yield k, slice(lo, hi), ids[lo:hi] - offsets[k]
        return
    ks = np.searchsorted(offsets, ids, side="right") - 1
    if len(ks) and ks[0] == ks[-1] and int(ks.min()) == int(ks.max()):  # (one part: most asks)
        k = int(ks[0])
        yield k, np.ones(len(ks), bool), ids - offsets[k]
        return
    for k in unique_values(ks).tolist():
        sel = ks == k
        yield k, sel, ids[sel] - offsets[k]


def positions_by_part(part, n_parts):
    """(k, the positions where ``part`` is k, increasing) for each part k present (-1: none),
    by k: one stable sort of the part numbers (numpy's is a radix sort for small ints), not a
    pass per part — 1,000 ranks made each lookup 1,000 passes."""
    part = np.asarray(part, np.int64)
    asked = part[part >= 0]
    if len(asked) == 0:
        return []
    first = int(asked.min())
    if first == int(asked.max()):  # (one part: a lane's items, one rank's — most asks)
        at = np.arange(len(part)) if len(asked) == len(part) else np.flatnonzero(part == first)
        return [(first, at)]
    shifted = (part + 1).astype(np.uint16 if n_parts < 0xFFFF else np.int64)  # (-1: 0)
    counts = np.bincount(shifted, minlength=n_parts + 1)
    ends = np.cumsum(counts)
    o = stable_order(shifted)
    return [(k, o[ends[k]:ends[k + 1]]) for k in np.flatnonzero(counts[1:]).tolist()]

