"""The one place the report asks about the profile: ``legate_prof.query.source.ProfileSource``,
the query API the desktop viewer draws from (lane tree, lane tiles, utilization), turned
into compact plain data for the report's tiles.
"""

from __future__ import annotations

import numpy as np

from legate_prof.model.item_parts import by_part
from legate_prof.model.kinds import GROUP_COLOR, GROUP_TITLE, ItemKind
from legate_prof.model.sort_order import unique_values, unique_with
from legate_prof.present.file_list import files_in_words
from legate_prof.present.colors import ALPHA_BAND, ALPHA_READY, ALPHA_WAITING, name_hex
from legate_prof.present.group_words import group_words
from legate_prof.present.limits import (LABEL_MIN_PX, MAX_LABELS, MAX_LANE_H,
                                        MAX_LANES_EXPANDED, MAX_ROWS_EXPANDED)
from legate_prof.query import GROUP_ORDER, READY, WAITING, as_source, kind_word

BAND = 4  # numbers per merged band in a tile row's "g": x0, x1, items, thousandths busy
# from this many lanes on, every item's provenance is looked up once (``_provenance``)
MANY_LANES = 256
NAME_LINES_CHUNK = 1 << 21  # items a search's counts are made of at a time



def _waited_by_box(row_of, waits):
    """[row, box, ns] of each shaded box (``waits``: box, state, from, to, one a piece; in
    rows ``row_of``, sorted by row): the time its pieces say it was not running."""
    if len(waits) == 0:
        return np.zeros((0, 3), np.int64)
    key = row_of.astype(np.int64) * (int(waits[:, 0].max()) + 1) + waits[:, 0]
    keys, at = unique_with(key, inverse=True)
    ns = np.bincount(at, weights=(waits[:, 3] - waits[:, 2]).astype(np.float64))
    per = int(waits[:, 0].max()) + 1
    return np.stack([keys // per, keys % per, np.round(ns).astype(np.int64)], axis=1)


class ReportQueries:
    """Lane tree, per-lane tiles and per-group utilization of one profile, as plain data."""

    def __init__(self, profile):
        self.source = as_source(profile)  # a RankSet is read rank by rank, unmerged
        self.t0, self.t1 = self.source.info().time_range
        self._every_provenance = None  # (``_provenance``)
        self._wait_sums = None  # (``_waited``)

    def info(self):
        """The lane tree in the desktop viewer's order, names and default expansion."""
        info = self.source.info()
        src = self.source
        expand_all = len(info.lanes) <= MAX_LANES_EXPANDED
        tree = []
        of_rank = {}  # (the groups by rank, in order: not a search of all per rank)
        for g in info.groups:
            of_rank.setdefault(g.rank, []).append(g)
        for r in info.ranks:
            groups = []
            for g in of_rank.get(r, []):
                max_rows = max(info.lanes[L].rows for L in g.lanes)
                groups.append({
                    "group": g.group, "title": g.panel,
                    "tooltip": f"{g.panel}: {group_words(g.group, g.title)}",
                    "expanded": expand_all and max_rows <= MAX_ROWS_EXPANDED,
                    "lanes": [{"lane": int(L), "name": info.lanes[L].short,
                               "long": info.lanes[L].long, "rows": max(info.lanes[L].rows, 1)}
                              for L in g.lanes],
                })
            tree.append({"rank": int(r), "groups": groups})
        return {
            "t0": int(self.t0), "t1": int(self.t1),
            "n_items": int(info.n_items), "n_ranks": len(info.ranks),
            "ranks_read": int(info.ranks_read),
            "files": [str(s) for s in info.sources], "legion_version": info.legion_version,
            "files_label": files_in_words(info.sources),  # (1,000 ranks: not 1,000 names)
            "notices": [f"Note: {n}" for n in info.notices],  # the screenshot header's words
            "names": list(src.names), "colors": [name_hex(n) for n in src.names],
            "provenances": list(src.provenances),
            "group_colors": {g: GROUP_COLOR.get(g, "gray") for g in GROUP_COLOR},
            "group_titles": dict(GROUP_TITLE),  # stats' words for a group key ("io (extern)")
            "tree": tree, "all_ranks": self.all_ranks(),
            "bytes_rows": self.bytes_rows(),
            "markers": [{"time": int(k["time"]), "title": str(k.get("title", ""))}
                        for k in info.markers],
            "title_prov": self._title_with_provenance(),
            "alpha_ready": ALPHA_READY, "alpha_waiting": ALPHA_WAITING, "alpha_band": ALPHA_BAND,
            "max_lane_h": MAX_LANE_H, "label_min_px": LABEL_MIN_PX, "max_labels": MAX_LABELS,
            "name_lines": self.name_lines(),
            "kind_words": {str(k): [kind_word(k, 1), kind_word(k, 2)] for k in ItemKind},
        }

    def name_lines(self):
        """[name id, provenance id, kind, items] of each (name, line, kind) the items have:
        what a search on the page counts, by kind, as it highlights (by name or by line) —
        it summed ``stats``' tasks and operations, each operation once for the run: "9
        items" where 18 were highlighted (a user's review)."""
        n = int(self.source.info().n_items)
        provs = len(self.source.provenances) + 1
        keys, counts = [], []
        for lo in range(0, n, NAME_LINES_CHUNK):  # (a chunk at a time: 10 M items' columns)
            ids = np.arange(lo, min(lo + NAME_LINES_CHUNK, n), dtype=np.int64)
            cols = self.source.items_columns(ids, ["name", "kind"])
            prov = self._provenance(ids).astype(np.int64)
            k, c = unique_with((cols["name"] * provs + prov) * 256 + cols["kind"], counts=True)
            keys.append(k)
            counts.append(c)
        if not keys:
            return []
        keys, at = unique_with(np.concatenate(keys), inverse=True)
        counts = np.bincount(at, weights=np.concatenate(counts)).astype(np.int64)
        return [[int(k // 256 // provs), int(k // 256 % provs), int(k % 256), int(c)]
                for k, c in zip(keys.tolist(), counts.tolist())]

    def _title_with_provenance(self):
        """Per name id, 1 when its items' titles carry the launching line (tasks, kernels,
        runtime operations: trace_model.item_title)."""
        kinds = [int(ItemKind.TASK), int(ItemKind.GPU_KERNEL), int(ItemKind.RUNTIME_OP),
                 int(ItemKind.PROGRAM_WAIT)]
        flag = np.zeros(len(self.source.names), np.int64)
        for part in self.source.item_parts():
            sel = np.flatnonzero(np.isin(part.model.items["kind"], kinds))
            flag[unique_values(part.names(sel))] = 1
        return flag.tolist()

    def all_ranks(self):
        """The all-ranks summary rows (only with several ranks, as the desktop viewer)."""
        info = self.source.info()
        if len(info.ranks) < 2:
            return []
        seen = {}
        for g in info.groups:
            seen.setdefault(g.group, g.panel)
        return [{"group": k, "title": seen[k]}
                for k in sorted(seen, key=GROUP_ORDER.index)]

    def lane_tile(self, lane, t0, t1, width_px):
        """Per row: boxes [start-t0, duration, name, provenance, item] (flat, ns), their
        ready and waiting pieces [box, state, a-t0, b-t0] and gray bands [x0, x1, count,
        busy ‰] in tile px (busy: the thousandths of the band's time its items ran, as the
        desktop draws it: ``TileRow.band_busy``)."""
        return self.lane_tiles([lane], t0, t1, width_px)[0]

    def lane_tiles(self, lanes, t0, t1, width_px):
        """``lane_tile`` of each of ``lanes``: every row of every lane at once (a memory's
        thousands of rows of one instance each, 1,000 ranks' 19,000 lanes), cut per row."""
        tiles = self.source.lane_tiles(lanes, t0, t1, width_px)
        rows = [tr for t in tiles for tr in t.rows]
        if not rows:
            return [[] for _ in lanes]
        ns_px = tiles[0].ns_per_px
        n_box = np.array([len(tr.box_item) for tr in rows], np.int64)
        items = np.concatenate([np.asarray(tr.box_item, np.int64) for tr in rows])
        cols = self.source.items_columns(items, ("start", "stop"))
        prov = self._provenance(items)
        names = np.concatenate([tr.box_name for tr in rows]).astype(np.int64)
        boxes = np.stack([cols["start"] - int(t0), cols["stop"] - cols["start"], names,
                          prov.astype(np.int64), items], axis=1)
        n_band = np.array([len(tr.band_count) for tr in rows], np.int64)
        busy = np.concatenate([np.ones(len(tr.band_count)) if tr.band_busy is None
                               else np.asarray(tr.band_busy, np.float64) for tr in rows])
        bands = np.stack([np.floor(np.concatenate([tr.band_x0 for tr in rows])),
                          np.ceil(np.concatenate([tr.band_x1 for tr in rows])),
                          np.concatenate([tr.band_count for tr in rows]).astype(np.float64),
                          np.round(busy * 1000)], axis=1).astype(np.int64)
        # the ready and waiting pieces, each with the box it shades
        n_piece = np.array([len(tr.piece_state) for tr in rows], np.int64)
        state = np.concatenate([tr.piece_state for tr in rows]).astype(np.int64)
        shade = np.flatnonzero((state == READY) | (state == WAITING))
        waits = np.stack([np.concatenate([tr.piece_box for tr in rows])[shade], state[shade],
                          _whole_ns(np.concatenate([tr.piece_x0 for tr in rows])[shade] * ns_px),
                          _whole_ns(np.concatenate([tr.piece_x1 for tr in rows])[shade] * ns_px)],
                         axis=1).astype(np.int64)
        row_of = np.repeat(np.arange(len(rows)), n_piece)[shade]
        # each shaded box's time not running, summed over all its pieces (its tooltip's
        # "Waiting"), then only the pieces in the tile: a task of 31,000 waits spanning the
        # run put all of them in every tile (3.7 of a 13 ms tile's 4 MB, the 4-rank run)
        waited = _waited_by_box(row_of, waits)
        waited = np.concatenate([waited, np.zeros((len(waited), 1), np.int64)], axis=1)
        if len(waited):  # (exactly, as the item's details say it: its waits, not the pixels;
            first_box = np.concatenate([[0], np.cumsum(n_box)[:-1]])  # and its calls)
            waited[:, 2:] = self._waited(items[first_box[waited[:, 0]] + waited[:, 1]])
        inside = (waits[:, 3] > 0) & (waits[:, 2] < int(t1) - int(t0))
        waits, row_of = waits[inside], row_of[inside]
        n_wait = np.bincount(row_of, minlength=len(rows))
        n_waited = np.bincount(waited[:, 0], minlength=len(rows)) if len(waited) else \
            np.zeros(len(rows), np.int64)
        at_box = [0] + np.cumsum(n_box).tolist()
        at_band = [0] + np.cumsum(n_band).tolist()
        at_wait = [0] + np.cumsum(n_wait).tolist()
        at_waited = [0] + np.cumsum(n_waited).tolist()
        out, k = [], 0
        for t in tiles:
            lane_rows = []
            for tr in t.rows:
                lane_rows.append({
                    "row": int(tr.row), "b": boxes[at_box[k]:at_box[k + 1]].ravel().tolist(),
                    "w": waits[at_wait[k]:at_wait[k + 1]].ravel().tolist(),
                    "t": waited[at_waited[k]:at_waited[k + 1], 1:].ravel().tolist(),
                    "g": bands[at_band[k]:at_band[k + 1]].ravel().tolist()})
                k += 1
            out.append(lane_rows)
        return out

    def _waited(self, items):
        """Each of ``items``' time waiting and time in the calls it made (its waits' ends less
        their starts, summed, apart: the details' "Waiting" and "In its calls"; its running,
        the rest, is ``stats``' "running"), from running sums of each part's waits made
        once."""
        parts = self.source.item_parts()
        if self._wait_sums is None:
            self._wait_sums = {}
        out = np.zeros((len(items), 2), np.int64)
        offsets = np.array([p.item_off for p in parts] + [parts[-1].item_off
                                                         + parts[-1].model.n_items], np.int64)
        for k, sel, local in by_part(offsets, np.asarray(items, np.int64)):
            if k not in self._wait_sums:  # (a part's waits by item, summed as they run;
                m = parts[k].model  # the calls it made are not waiting: ``folded_calls``)
                w = m.waits
                span = np.asarray(w["end"], np.int64) - np.asarray(w["start"], np.int64)
                call = m.folded_calls(np.arange(len(span)))
                self._wait_sums[k] = (np.asarray(w["item"], np.int64),
                                      np.concatenate([[0], np.cumsum(np.where(call, 0, span))]),
                                      np.concatenate([[0], np.cumsum(np.where(call, span, 0))]))
            item, waited, in_calls = self._wait_sums[k]
            lo, hi = np.searchsorted(item, local), np.searchsorted(item, local, side="right")
            out[sel, 0] = waited[hi] - waited[lo]
            out[sel, 1] = in_calls[hi] - in_calls[lo]
        return out

    def _provenance(self, items):
        """``items_provenance``, from one lookup of every item's where the lanes are many (a
        lookup a lane cost 1.8 s of 1,000 ranks' 19,000 lanes)."""
        info = self.source.info()
        if len(info.lanes) < MANY_LANES:
            return self.source.items_provenance(items)
        if self._every_provenance is None:
            self._every_provenance = self.source.items_provenance(
                np.arange(info.n_items, dtype=np.int64)).astype(np.int32)
        return self._every_provenance[items].astype(np.int64)

    def bytes_rows(self):
        """Summary rows drawn on a bytes scale (memories of unknown capacity), by the key the
        page uses ("RANK:group", "all:group"): their peak in bytes.  Their tiles hold bytes
        in use as a share of that peak (0..255), never a share of a capacity."""
        info = self.source.info()
        keys = {(g.rank, g.group) for g in info.groups if g.kind == "memory"}
        if len(info.ranks) > 1:
            keys |= {(None, g) for _r, g in keys}
        out = {}
        for r, g in sorted(keys, key=lambda k: (k[0] is None, k[0] or 0, k[1])):
            scale = self.source.summary_bytes(g, r)
            if scale is not None:
                out[f"{'all' if r is None else r}:{g}"] = int(round(scale[1]))
        return out

    def summary_tile(self, group, rank, t0, t1, bins):
        """Average utilization in ``bins`` bins, as integers 0..255 (compact in a tile); a
        memory of unknown capacity: bytes in use as a share of its peak (``bytes_rows``)."""
        u = np.asarray(self.source.summary_tile(group, rank, t0, t1, bins))
        scale = self.source.summary_bytes(group, rank)
        if scale is not None:
            den, peak = scale
            u = u * (den / peak) if peak > 0 else np.zeros_like(u)
        return np.clip(np.round(u * 255), 0, 255).astype(np.int64).tolist()

    def group_lanes(self):
        """(rank, group, lanes) of every lane group, in display order."""
        return [(g.rank, g.group, list(g.lanes)) for g in self.source.info().groups]


def _whole_ns(t):
    """Float times as int64 ns, held to what an int64 holds (a span near 2^63 - 1 rounds past
    it: numpy's "invalid value encountered in cast")."""
    return np.round(np.clip(t, -9.2233720368547748e18, 9.2233720368547748e18)).astype(np.int64)
