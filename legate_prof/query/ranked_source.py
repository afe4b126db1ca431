"""``RankedSource``: the query API over several ranks' models (a ``RankSet``) without merging
them.  A lane's tile is its rank's tile with its ids shifted into the profile's numbering;
names come from the union of the ranks' string tables; the all-ranks summaries from the ranks'
own step functions.  Nothing is copied per item."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from legate_prof.model.item_parts import by_part
from legate_prof.model.stacking import stack_in_threads
from legate_prof.query.details import item_facts, item_title, memory_title_of
from legate_prof.query.lane_tree import ProfileInfo
from legate_prof.query.search import items_of_lines, search_items
from legate_prof.query.summary import items_in, name_times
from legate_prof.query.source import ITEM_COLUMNS, ProfileSource
from legate_prof.query.tiles import LaneTile, lane_tiles


class RankedSource(ProfileSource):
    """The query API over a ``RankSet``: models of disjoint ranks as one profile."""

    def __init__(self, rank_set):
        self._set = rank_set
        super().__init__(rank_set.summary_model())  # lanes, strings, steps; no items

    @property
    def rank_set(self):
        return self._set

    @property
    def n_items(self):
        return self._set.n_items

    def item_parts(self):
        return self._set.item_parts()

    @property
    def parts(self):
        """The ranks' models, in rank order."""
        return list(self._set.parts)

    def evolve(self, **changes) -> "RankedSource":
        """A source over the rank set with ``changes`` to its description."""
        return RankedSource(self._set.evolve(**changes))

    def merged_model(self):
        return self._set.merged_model()

    # -- description ---------------------------------------------------------------------------
    def _describe(self) -> ProfileInfo:
        return replace(super()._describe(), n_items=self.n_items)

    # -- tiles --------------------------------------------------------------------------------
    def prepare_lanes(self, lanes):
        jobs = []
        for lane in lanes:
            k, local = self._set.rank_of_lane(lane)
            jobs.append((self._set.parts[k], int(local)))
        stack_in_threads(jobs)

    def lane_tile(self, lane, t0, t1, width_px, px_scale=1.0) -> LaneTile:
        return self.lane_tiles([lane], t0, t1, width_px, px_scale)[0]

    def lane_tiles(self, lanes, t0, t1, width_px, px_scale=1.0) -> list:
        """Each rank's lanes drawn together, its ids shifted into the profile's numbering."""
        out = [None] * len(lanes)
        of_rank = {}
        for j, lane in enumerate(lanes):
            k, local = self._set.rank_of_lane(lane)
            of_rank.setdefault(k, []).append((j, int(local)))
        for k, jobs in of_rank.items():
            tiles = lane_tiles(self._set.parts[k], [L for _, L in jobs], t0, t1, width_px,
                               px_scale, item_off=int(self._set.item_off[k]),
                               name_map=self._set.name_maps[k])
            for (j, _), tile in zip(jobs, tiles):
                out[j] = tile
                tile.lane = int(lanes[j])
                self.last_tiles[int(lanes[j])] = tile
        return out

    # -- items --------------------------------------------------------------------------------
    def _part(self, i):
        k, j = self._set.rank_of_item(i)
        return k, self._set.parts[k], j

    def item_extent(self, i):
        _, m, j = self._part(i)
        return int(m.items["start"][j]), int(m.items["stop"][j])

    def item_lane(self, i):
        k, m, j = self._part(i)
        return int(m.items["lane"][j]) + int(self._set.lane_off[k]), int(m.rows_of([j])[0])

    def lane_item_range(self, lane):
        k, local = self._set.rank_of_lane(lane)
        lo, hi = self._set.parts[k].lane_range(int(local))
        off = int(self._set.item_off[k])
        return lo + off, hi + off

    def items_columns(self, ids, columns=ITEM_COLUMNS) -> dict:
        ids = np.asarray(ids, dtype=np.int64)
        out = {c: np.empty(len(ids), np.int64) for c in columns}
        for k, sel, local in by_part(self._set.item_off, ids):
            m = self._set.parts[k]
            for c in columns:
                out[c][sel] = (m.rows_of(local) if c == "row" else
                               self._set.name_maps[k][m.items["name"][local]] if c == "name"
                               else m.items["lane"][local] + int(self._set.lane_off[k])
                               if c == "lane" else m.items[c][local])
        return out

    def items_provenance(self, ids) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        out = np.zeros(len(ids), np.int64)
        for k, sel, local in by_part(self._set.item_off, ids):
            m = self._set.parts[k]
            out[sel] = self._set.prov_maps[k][m.op_provenance(m.items["op_id"][local])]
        return out

    def item_title(self, i) -> str:
        _, m, j = self._part(i)
        return item_title(m, j)

    def instances_of_op(self, op_id) -> np.ndarray:
        found = [ProfileSource(m).instances_of_op(op_id) + off
                 for m, off in zip(self._set.parts, self._set.item_off[:-1].tolist())]
        return np.concatenate(found) if found else np.zeros(0, np.int64)

    def items_of_op(self, op_id, kinds=None) -> np.ndarray:
        found = [ProfileSource(m).items_of_op(op_id, kinds) + off
                 for m, off in zip(self._set.parts, self._set.item_off[:-1].tolist())]
        return np.concatenate(found) if found else np.zeros(0, np.int64)

    def item_name_id(self, i) -> int:
        k, m, j = self._part(i)
        return int(self._set.name_maps[k][int(m.items["name"][j])])

    def item_facts(self, i) -> dict:
        # memories are named from all ranks' (a rank knows its own only)
        k, m, j = self._part(i)
        d = item_facts(m, j, memory_title=lambda mem: memory_title_of(self.summary_model(), mem))
        if "inside" in d:  # (the rank's numbering: the profile's)
            d["inside"] += int(self._set.item_off[k])
        return d

    def item_transfer(self, i):
        _, m, j = self._part(i)
        return m.transfer_of(j)

    def name_times(self, t0, t1) -> np.ndarray:
        n = len(self.names)
        return sum((name_times(m, t0, t1, name_map=self._set.name_maps[k], n_names=n)
                    for k, m in enumerate(self._set.parts)), np.zeros(n))

    def items_in(self, t0, t1) -> int:
        return sum(items_in(m, t0, t1) for m in self._set.parts)

    def search(self, text, limit=100_000) -> np.ndarray:
        if not text:
            return np.zeros(0, np.int64)
        found, n = [], 0
        for m, off in zip(self._set.parts, self._set.item_off[:-1].tolist()):
            hit = np.asarray(search_items(m, text, limit - n), np.int64) + off
            found.append(hit)
            n += len(hit)
            if n >= limit:
                break
        return np.concatenate(found) if found else np.zeros(0, np.int64)

    def items_of_lines(self, lines) -> np.ndarray:
        found = [np.asarray(items_of_lines(m, lines), np.int64) + off
                 for m, off in zip(self._set.parts, self._set.item_off[:-1].tolist())]
        return np.concatenate(found) if found else np.zeros(0, np.int64)


__all__ = ["RankedSource"]
