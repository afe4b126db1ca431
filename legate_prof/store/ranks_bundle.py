"""Several ranks' models written as the one bundle their merged model would write, column by
column and rank by rank: the cache entry of `view` over ranks the workers built, with no
merged copy in memory (at 10 M items that copy is most of a gigabyte).

Each rank is laid out stacked on its own (``bundle.stacked_layout``: its order, rows and index,
14 bytes per item); the columns are then written as ``Deferred`` pieces, one rank's slice at a
time, with lane, item, name and provenance ids shifted or mapped as ``assemble.rank_merge`` does.
"""

from __future__ import annotations

import numpy as np

from legate_prof.assemble.rank_merge import release_pages, sorted_ops
from legate_prof.model.event_tables import concat_event_tables
from legate_prof.model.stacking import stacked_layout
from legate_prof.store.bundle_file import Deferred, check_stop, write_tables


def _released(part, make):
    """``make``, then let go of the pages of the rank's mapped bundle that it read: written
    out, they need not stay this process's memory (``assemble.rank_merge.release_pages``)."""
    def made():
        a = make()
        release_pages(part.model)
        return a
    return made


def write_ranks_bundle(src, path, stop=None, mode=0o666):
    """Write the ranks of ``src`` (a source whose ``item_parts`` are several models of
    disjoint ranks, in its numbering) as one stacked bundle at ``path``; ``stop``: as
    ``write_tables``' (asked after each rank's layout too)."""
    parts = src.item_parts()
    small = src.summary_model()  # lanes, strings, steps… of all ranks; no items
    n = parts[-1].item_off + parts[-1].model.n_items
    layouts = []
    for p in parts:
        check_stop(stop)
        layouts.append(_released(p, lambda p=p: stacked_layout(p.model))())
    first = parts[0].model

    def column(c):
        def piece(p, layout):
            order, rows = layout[0], layout[1]
            if c == "row":
                return rows
            a = p.model.items[c] if order is None else p.model.items[c][order]
            if c in ("name", "detail"):
                return p.name_map[a]
            return a + p.lane_off if c == "lane" else a
        return Deferred(first.items[c].dtype,
                        [(p.model.n_items, _released(p, lambda p=p, lay=lay: piece(p, lay)))
                         for p, lay in zip(parts, layouts)])

    def by_item(k):  # waits (k=2) or transfers (k=3), item ids shifted
        table = layouts[0][k]
        return {c: Deferred(table[c].dtype,
                            [(len(lay[k][c]), lambda p=p, lay=lay, c=c:
                              lay[k][c] + p.item_off if c == "item" else lay[k][c])
                             for p, lay in zip(parts, layouts)]) for c in table}

    items = {c: column(c) for c in first.items}
    waits, transfers = by_item(2), by_item(3)
    small_int = np.int32 if n < 2**31 else np.int64
    dur_perm = Deferred(small_int, [(p.model.n_items, lambda p=p, lay=lay:
                                     lay[4]["dur_perm"].astype(np.int64) + p.item_off)
                                    for p, lay in zip(parts, layouts)])
    sub_bounds = np.concatenate([lay[4]["sub_bounds"][:-1] + p.item_off
                                 for p, lay in zip(parts, layouts)] + [[n]]).astype(np.int64)
    sub_offset = np.concatenate([[0], np.cumsum(small.lanes["rows"].astype(np.int64))])
    index = {"sub_offset": sub_offset, "sub_bounds": sub_bounds, "dur_perm": dur_perm}
    if all(p.model.ops is first.ops for p in parts):  # one table of all ranks' (RankSet)
        ops = {c: np.asarray(first.ops[c]) for c in first.ops}
    else:
        ops = sorted_ops({c: np.concatenate([
            p.prov_map[p.model.ops[c]].astype(p.model.ops[c].dtype) if c == "provenance"
            else np.asarray(p.model.ops[c]) for p in parts]) for c in first.ops})
    events = concat_event_tables([p.model.events for p in parts])
    return write_tables(small, path, items, waits, transfers, ops, index, events=events,
                        stop=stop, mode=mode)
