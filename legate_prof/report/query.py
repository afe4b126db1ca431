"""The one place the report asks the model questions (lane draw lists, utilization, lane tree).

Today it calls ``TraceModel``'s queries (``draw_list``, ``utilization``); when
``legate_prof.source.ProfileSource`` (branch ``api``) lands, only this module switches to its
``lane_tile`` / ``summary_tile`` / ``info``, so the report shows what the desktop viewer shows.
"""

from __future__ import annotations

import colorsys
import zlib

import numpy as np

from ..kinds import GROUP_COLOR

GRID_MIN_PX = 4  # the desktop viewer's merge threshold (viewer/timeline.py GRID_MIN_PX)
ALPHA_READY, ALPHA_WAITING = 0.45, 0.15  # viewer/colors.py state shades


def name_color_hex(name: str) -> str:
    """The desktop viewer's colour of a name (viewer/colors.py name_color), without Qt."""
    h = zlib.crc32(name.encode())
    hue = (h % 360) / 360.0
    sat = 0.55 + ((h >> 9) % 30) / 100.0
    val = 0.70 + ((h >> 17) % 20) / 100.0
    r, g, b = colorsys.hsv_to_rgb(hue, sat, val)
    return "#%02x%02x%02x" % (int(r * 255), int(g * 255), int(b * 255))


class ReportQueries:
    """Lane tree, per-lane tiles and per-group utilization of one model, as plain data."""

    def __init__(self, model):
        self.model = model
        self.t0, self.t1 = model.time_range()

    def info(self, max_lanes=48):
        """The lane tree in the desktop viewer's order and default expansion."""
        m = self.model
        ranks = sorted(set(m.lanes["rank"].tolist()))
        tree = []
        for r in ranks:
            groups = []
            for g, title in m.groups_present(r):
                lanes = m.lanes_of(g, r).tolist()
                max_rows = int(m.lanes["rows"][lanes].max()) if lanes else 0
                groups.append({
                    "group": g, "title": title,
                    "expanded": m.n_lanes <= max_lanes and max_rows <= 12,
                    "lanes": [{"lane": int(L), "name": str(m.lanes["name"][L]),
                               "rows": max(int(m.lanes["rows"][L]), 1)} for L in lanes],
                })
            tree.append({"rank": r, "groups": groups})
        all_groups = self.all_ranks()
        legion = next((r.get("legion_version") for r in m.ranks if r.get("legion_version")), "")
        return {
            "t0": int(self.t0), "t1": int(self.t1),
            "n_items": int(m.n_items), "n_ranks": len(ranks),
            "files": [str(s) for s in m.sources], "legion_version": legion or "",
            "names": list(m.names), "colors": [name_color_hex(n) for n in m.names],
            "provenances": list(m.provenances),
            "group_colors": {g: GROUP_COLOR.get(g, "gray") for g in GROUP_COLOR},
            "tree": tree, "all_ranks": all_groups,
            "markers": [{"time": int(k["time"]), "title": str(k.get("title", ""))}
                        for k in m.markers],
            "alpha_ready": ALPHA_READY, "alpha_waiting": ALPHA_WAITING,
        }

    def all_ranks(self):
        """The all-ranks summary rows (only with several ranks, as the desktop viewer)."""
        m = self.model
        if len(set(m.lanes["rank"].tolist())) < 2:
            return []
        return [{"group": g, "title": t} for g, t in m.groups_present()]

    def lane_tile(self, lane, t0, t1, width_px):
        """Per row: boxes [start-t0, duration, name, provenance] (flat, ns) with their waits
        [box, start-t0, ready-t0, end-t0], and gray bands [x0, x1, count] in tile pixels."""
        m = self.model
        it = m.items
        w = m.waits
        out = []
        for dr in m.draw_list(lane, t0, t1, width_px, min_px=GRID_MIN_PX):
            items = dr.box_item
            start = it["start"][items] - int(t0)
            dur = it["stop"][items] - it["start"][items]
            prov = m.op_provenance(it["op_id"][items]) if len(items) else np.zeros(0, np.int32)
            boxes = np.stack([start, dur, it["name"][items].astype(np.int64),
                              prov.astype(np.int64)], axis=1).ravel()
            waits = []
            if len(w["item"]) and len(items):
                lo = np.searchsorted(w["item"], items, side="left")
                hi = np.searchsorted(w["item"], items, side="right")
                has = np.flatnonzero(hi > lo)
                if len(has):
                    idx = np.concatenate([np.arange(lo[j], hi[j]) for j in has.tolist()])
                    owner = np.repeat(has, (hi - lo)[has])
                    waits = np.stack([owner, w["start"][idx] - int(t0), w["ready"][idx] - int(t0),
                                      w["end"][idx] - int(t0)], axis=1).ravel().tolist()
            bands = np.stack([np.floor(dr.band_x0), np.ceil(dr.band_x1),
                              dr.band_count.astype(np.float64)], axis=1).astype(np.int64)
            out.append({"row": int(dr.row), "b": boxes.tolist(), "w": waits,
                        "g": bands.ravel().tolist()})
        return out

    def summary_tile(self, group, rank, t0, t1, bins):
        """Average utilization in ``bins`` bins, as integers 0..255 (compact in a tile)."""
        u = self.model.utilization(group, rank, t0, t1, bins)
        return np.clip(np.round(np.asarray(u) * 255), 0, 255).astype(np.int64).tolist()

    def group_lanes(self):
        """(rank, group, lanes) of every group, the all-ranks summaries with rank None."""
        m = self.model
        return [(r, g, m.lanes_of(g, r).tolist())
                for r in sorted(set(m.lanes["rank"].tolist())) for g, _ in m.groups_present(r)]
