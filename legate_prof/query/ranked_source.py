"""One profile of several ranks' models, answered without merging them.

A directory of per-rank bundles (``convert`` run where each rank's file lies) or the ranks
that worker processes built are each a complete model of their ranks.  ``RankedSource`` answers
the query API over them as one profile: lanes and items are numbered across ranks by offsets
(rank order, as one merged model numbers them), names by the union of the ranks' string tables,
and the all-ranks summaries come from the ranks' own step functions.  Nothing is copied per
item: a lane's tile is its rank's tile with its ids shifted.  Analyses over all items read the
ranks one after the other through ``item_parts()`` (findings, statistics, the report, the
cache entry: ``merged_bundle``); ``merged_model()`` merges, once, only for what needs one model
(exports, an OOM report attached from a console log).
"""

from __future__ import annotations

import copy
import threading
from dataclasses import replace

import numpy as np

from legate_prof.assemble.rank_merge import MergePlan, _Small, merge_opened
from legate_prof.query.source import ItemPart, ProfileSource, by_part, stack_in_threads


class RankedSource(ProfileSource):
    """The query API over models of disjoint ranks (``MergePlan`` raises ``CannotMerge``
    when they are not)."""

    def __init__(self, parts):
        plan = MergePlan([_Small(m, keep=True) for m in parts])
        self._parts = [parts[k] for k in plan.order]
        self._ranks = [ProfileSource(m) for m in self._parts]
        self._item_off = plan.item_off
        self._lane_off = plan.lane_off
        self._name_maps = [np.asarray(x, np.int64) for x in plan.name_maps]
        self._prov_maps = [np.asarray(x, np.int64) for x in plan.prov_maps]
        self._merged = [None]  # shared with evolved copies: one merge
        self._merge_lock = threading.Lock()
        # lanes, strings, steps and extent of all ranks; no items
        super().__init__(plan.model(*plan.empty_columns(sizes=False)))

    @property
    def n_items(self):
        return int(self._item_off[-1])

    def item_parts(self):
        return [ItemPart(m, int(self._item_off[k]), int(self._lane_off[k]), self._name_maps[k],
                         self._prov_maps[k]) for k, m in enumerate(self._parts)]

    @property
    def parts(self):
        """The ranks' models, in rank order."""
        return list(self._parts)

    def evolve(self, **changes) -> "RankedSource":
        """A copy whose description (``sources``, ``errors``, ``warnings``) has ``changes``."""
        new = copy.copy(self)
        new._m = self._m.evolve(**changes)
        new._info, new._last_tiles = None, {}
        return new

    def merged_model(self):
        with self._merge_lock:
            if self._merged[0] is None:
                m = merge_opened(len(self._parts), lambda k: self._parts[k])
                self._merged[0] = m
            out = self._merged[0]
        o = self._m
        return out.evolve(sources=o.sources, errors=o.errors, warnings=o.warnings)

    # -- numbering ------------------------------------------------------------------------------
    def _lane_rank(self, lane):
        return self._locate(self._lane_off, lane, "lane")

    def _item_rank(self, i):
        return self._locate(self._item_off, i, "item")

    def _locate(self, offsets, i, what):
        """(the rank's part holding number ``i``, its number there) by the parts' offsets."""
        k = int(np.searchsorted(offsets, int(i), side="right")) - 1
        if not 0 <= k < len(self._parts) or i >= offsets[-1]:
            raise IndexError(f"{what} {i} out of range")
        return k, int(i) - int(offsets[k])

    # -- description ---------------------------------------------------------------------------
    def _build_info(self):
        return replace(super()._build_info(), n_items=self.n_items)

    # -- tiles --------------------------------------------------------------------------------
    def prepare_lanes(self, lanes):
        jobs = []
        for lane in lanes:
            k, local = self._lane_rank(lane)
            jobs.append((self._parts[k], int(local)))
        stack_in_threads(jobs)

    def lane_tile(self, lane, t0, t1, width_px, px_scale=1.0):
        k, local = self._lane_rank(lane)
        src = self._ranks[k]
        tile = src.lane_tile(local, t0, t1, width_px, px_scale)
        src._last_tiles.pop(local, None)  # kept here, under its number in the whole profile
        off, names = self._item_off[k], self._name_maps[k]
        rows = [replace(r, box_item=r.box_item + off, band_first=r.band_first + off,
                        piece_item=r.piece_item + off, box_name=names[r.box_name],
                        piece_name=names[r.piece_name]) for r in tile.rows]
        tile = replace(tile, lane=int(lane), rows=rows)
        self._last_tiles[int(lane)] = tile
        return tile

    # -- items --------------------------------------------------------------------------------
    def item_extent(self, i):
        k, j = self._item_rank(i)
        return self._ranks[k].item_extent(j)

    def item_lane(self, i):
        k, j = self._item_rank(i)
        lane, row = self._ranks[k].item_lane(j)
        return lane + int(self._lane_off[k]), row

    def lane_item_range(self, lane):
        k, local = self._lane_rank(lane)
        lo, hi = self._ranks[k].lane_item_range(local)
        off = int(self._item_off[k])
        return lo + off, hi + off

    def items_columns(self, ids) -> dict:
        ids = np.asarray(ids, dtype=np.int64)
        out = {c: np.empty(len(ids), np.int64) for c in ("start", "stop", "row", "name")}
        for k, sel, local in by_part(self._item_off, ids):
            cols = self._ranks[k].items_columns(local)
            cols["name"] = self._name_maps[k][cols["name"]]
            for c, a in out.items():
                a[sel] = cols[c]
        return out

    def items_provenance(self, ids) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        out = np.zeros(len(ids), np.int64)
        for k, sel, local in by_part(self._item_off, ids):
            out[sel] = self._prov_maps[k][self._ranks[k].items_provenance(local)]
        return out

    def item_title(self, i) -> str:
        k, j = self._item_rank(i)
        return self._ranks[k].item_title(j)

    def instances_of_op(self, op_id) -> np.ndarray:
        found = [src.instances_of_op(op_id) + off
                 for src, off in zip(self._ranks, self._item_off[:-1].tolist())]
        return np.concatenate(found) if found else np.zeros(0, np.int64)

    def item_name_id(self, i) -> int:
        k, j = self._item_rank(i)
        return int(self._name_maps[k][self._ranks[k].item_name_id(j)])

    def _model_details(self, i) -> dict:
        k, j = self._item_rank(i)
        d = self._parts[k].item_details(j)
        t = self._parts[k].transfer_of(j)
        if t is not None:  # memories are named from all ranks' (a rank knows its own only)
            _, src, dst, _ = t
            title = self._m.memory_title
            for key, mem in (("source", src), ("destination", dst), ("memory", dst)):
                if key in d:
                    d[key] = title(mem)
        return d

    def _transfer_of(self, i):
        k, j = self._item_rank(i)
        return self._parts[k].transfer_of(j)

    def search(self, text, limit=100_000) -> np.ndarray:
        if not text:
            return np.zeros(0, np.int64)
        found, n = [], 0
        for src, off in zip(self._ranks, self._item_off[:-1].tolist()):
            hit = src.search(text, limit - n) + off
            found.append(hit)
            n += len(hit)
            if n >= limit:
                break
        return np.concatenate(found) if found else np.zeros(0, np.int64)


__all__ = ["RankedSource"]
