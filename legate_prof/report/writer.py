"""Write the offline report folder: index.html, the viewer's JS/CSS, data as script files.

Everything loads through <script> tags (``LP_meta(...)``, ``LP_tile(...)``, the critical
path's ``LP_path`` and ``LP_links``: ``report/critical.py``), never fetch/XHR,
so the folder opens from file:// with no network and can be zipped into a bug report.
Tiles: level L cuts the time range into 2**L tiles, each a desktop-viewer draw list of
TILE_PX pixels; levels stop when nothing merges any more or the size budget is spent.
"""

from __future__ import annotations

import json
import os

import numpy as np
import shutil
from pathlib import Path

from legate_prof.analyze.costed_findings import costed_findings
from legate_prof.analyze.critical_path import given_window
from legate_prof.analyze.stats import compute_stats
from legate_prof.model.sort_order import unique_values
from legate_prof.output_file import atomic_folder
from legate_prof.report.folder import MARKER, STATIC, earlier_report, manifest
from legate_prof.report.critical import critical_summary, write_critical
from legate_prof.report.pictures import Pictures
from legate_prof.report.query import BAND, ReportQueries

TILE_PX = 1024
# lanes whose rows are made at once (a tile's text is made from them as they come): a tile of
# 1,000 ranks' 19,000 lanes held all its rows as Python lists before its text, ~0.3 GB
LANES_AT_ONCE = 512
UTIL_BINS = 512
MAX_LEVEL = 14
SIZE_BUDGET = 24 * 1024 * 1024  # tiles; the whole folder must stay under 30 MB
DETAIL_SPOTS = 2  # findings whose windows the tiles go down into, past the budget's levels
DETAIL_STEP = 2  # levels between the tiles written there, from the deepest up
# of the budget, what whole levels may take where there are spots: every level a tile of a
# dense run costs ~0.12 s to make (the guide's 4-rank run's report: 27 tiles, 8.1-8.7 s)
WHOLE_LEVELS_SHARE = 0.5
BYTES_PER_ITEM = 40  # small profiles get small reports: budget = items x this, 1..24 MB


def _js(call, *args):
    return f"{call}({','.join(_json(a) for a in args)});\n"


def _json(value):
    return json.dumps(value, separators=(",", ":"))


def _write_tiles(q, out, progress=None, spots=()):
    """Write tiles level by level; a tile gets children only where it merged items into
    gray bands (elsewhere its boxes are exact at any zoom).  Where the budget stops the levels,
    what is left of it goes down at ``spots`` (times: the findings'), a tile every other level
    from the deepest up (``_down_at``).  Returns ({level: [tile index]}, bytes, the item ids drawn as boxes, the
    tiles ("level_i") that merge items and lack a child: the page says its detail ends there)."""
    tiler = _Tiler(q, out)
    budget = min(SIZE_BUDGET, max(1 << 20, BYTES_PER_ITEM * q.source.info().n_items))
    whole = budget * (WHOLE_LEVELS_SHARE if spots else 1)  # (the rest for the spots)
    frontier = [0]
    level = 0
    lacking = set()
    while frontier and level <= MAX_LEVEL:
        level_bytes, children = 0, []
        for i in frontier:
            size, halves = tiler.write(level, i)
            level_bytes += size
            children += [2 * i + h for h in halves]
        if progress:
            progress(level, tiler.total)
        if tiler.total + 2 * level_bytes > whole or level == MAX_LEVEL:  # (the next level
            lacking = {(level, c // 2) for c in children}               # is about twice)
            break
        frontier = children
        level += 1
    share = (budget - tiler.total) // max(len(spots), 1)
    for t in spots:  # (depth first at each: a finding's items drawn as boxes somewhere)
        _down_at(tiler, lacking, t, tiler.total + share)
    ids = unique_values(np.concatenate([np.asarray(b, np.int64) for b in tiler.shown] or
                                       [np.zeros(0, np.int64)]))
    return tiler.written, tiler.total, ids, sorted(f"{lv}_{i}" for lv, i in lacking)


def _down_at(tiler, lacking, t, until):
    """The tiles at time ``t`` below the deepest written one there that merges items: the
    deepest level's first, then every other level up, while ``until`` bytes in all allow (a
    dense run's tiles stay ~4 MB for levels: the guide's 4-rank run's tiny tasks show as boxes
    ten levels below its budget's last whole level; the levels between stretch what is above)."""
    span = tiler.q.t1 - tiler.q.t0
    if not span or not tiler.q.t0 <= t < tiler.q.t1:
        return
    top = next((lv for lv, i in sorted(lacking, reverse=True)
                if int((t - tiler.q.t0) * 2 ** lv // span) == i), None)
    if top is None:
        return  # (no band there: its boxes are exact at any zoom)
    for level in range(MAX_LEVEL, top, -DETAIL_STEP):
        if tiler.total >= until:
            return
        i = int((t - tiler.q.t0) * 2 ** level // span)
        if i in tiler.written.get(level, ()):
            continue
        _, halves = tiler.write(level, i)
        if halves:  # (it merges items still: no finer detail here)
            lacking.add((level, i))


class _Tiler:
    """Writes tiles (``write``): what each holds, their bytes in all, the items drawn."""

    def __init__(self, q, out):
        self.q, self.out = q, out
        groups = q.group_lanes()
        self.lanes = [L for _, _, ls in groups for L in ls]
        self.summaries = [(r, g) for r, g, _ in groups] + [(None, g["group"])
                                                            for g in q.all_ranks()]
        self.written, self.shown, self.total = {}, [], 0

    def write(self, level, i):
        """Write tile ``i`` of ``level``: (its bytes, the halves of it where it merged items)."""
        q, n = self.q, 2 ** level
        span = q.t1 - q.t0
        # (whole ns, exact: a float bound near 2^63 - 1 rounded past what an int64 holds)
        a = int(q.t0) + int(span) * i // n
        b = int(q.t0) + int(span) * (i + 1) // n
        halves = set()
        lanes = []  # each lane's part of the tile's text, as _js writes the tile
        for at in range(0, len(self.lanes), LANES_AT_ONCE):
            some = self.lanes[at:at + LANES_AT_ONCE]
            for L, rows in zip(some, q.lane_tiles(some, a, b, TILE_PX)):
                if rows:
                    lanes.append(f"{_json(str(L))}:{_json(rows)}")
                    self.shown += [np.asarray(r["b"][4::5], np.int64) for r in rows]
                    for r in rows:
                        g = r["g"]
                        for j in range(0, len(g), BAND):  # the halves this band touches
                            halves.add(0 if g[j] < TILE_PX // 2 else 1)
                            halves.add(0 if g[j + 1] < TILE_PX // 2 else 1)
        util = {}
        for r, g in self.summaries:
            vals = q.summary_tile(g, r, a, b, UTIL_BINS)
            if any(vals):
                util[f"{'all' if r is None else r}:{g}"] = vals
        text = (f"LP_tile({level},{i},{{\"lanes\":{{{','.join(lanes)}}},"
                f"\"util\":{_json(util)}}});\n")
        (self.out / "tiles" / f"L{level}_{i}.js").write_text(text)
        self.written.setdefault(level, []).append(i)
        self.total += len(text)
        return len(text), sorted(halves)


def write_report(model, out_dir, pictures=None, progress=None, pictures_note="",
                 pictures_aside=False, run_path=None, window=None):
    """Write the report folder at ``out_dir`` (built aside, then renamed into place) of a
    profile (a ``RankSet``: every part read from the ranks, none merged).  ``pictures``: the
    function that renders a group's picture (``legate_prof.viewer.screenshot``'s), or None
    for none, ``pictures_note`` saying why; ``pictures_aside``: Qt has not started in this
    process, so the pictures may be drawn in a forked copy of it meanwhile
    (``report.pictures``); ``run_path``: for a window, what it needs of the run beyond it
    (``analyze.critical_path.beyond_window``: the run's path cut to it, taken instead of
    walking the window's own, and its lines as the run's); ``window``: the
    (start, stop) in ns (either None) that --start/--stop cut the profile to, said in the
    report's title, and its words about the path and the findings say "the window"."""
    out_dir = Path(os.path.abspath(out_dir))  # (not resolved: a link there is judged, not followed)
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        from legate_prof.errors import ProfileError
        raise ProfileError(str(out_dir), f"could not write ({e.strerror or e})") from None
    with atomic_folder(out_dir, earlier_report, "legate_prof report") as tmp:
        (tmp / "tiles").mkdir()
        (tmp / "pictures").mkdir()
        q = ReportQueries(model)
        given_window(q.source, run_path)
        drawn = Pictures(model, q.source, tmp, pictures, pictures_aside) if pictures else None
        try:
            meta = q.info()
            meta["window"] = list(window) if window else None
            if window and q.source.info().n_items == 0:  # (on the page, not the terminal only)
                meta["notices"] = ["Note: the window (--start/--stop) misses the run: it "
                                   "holds no item"] + list(meta.get("notices", []))
            tiles, tile_bytes = _findings_and_tiles(q, tmp, meta, bool(window), progress)
            meta["pictures"] = []  # (drawn meanwhile: filled in below, in this place)
            meta["pictures_note"] = "" if pictures else pictures_note
            # the query source, not the model: its critical path (written above) is not
            # computed again
            meta["stats"] = json.loads(json.dumps(compute_stats(q.source), default=str))
            if drawn:
                meta["pictures"] = drawn.finished()
        except BaseException:
            if drawn:
                drawn.stop()
            raise
        (tmp / "meta.js").write_text(_js("LP_meta", meta))
        for f in STATIC.iterdir():
            if f.is_file():
                shutil.copyfile(f, tmp / f.name)
        (tmp / MARKER).write_text(manifest(tmp))
    return {"path": str(out_dir / "index.html"), "levels": max(tiles) + 1,
            "tiles": sum(len(v) for v in tiles.values()), "tile_bytes": tile_bytes}


def _findings_and_tiles(q, out, meta, windowed, progress):
    """The findings, then the tiles (deeper where the findings are), the critical path's
    files (of the items the tiles draw) and split, into ``meta``; (tiles, their bytes)."""
    meta["findings"] = json.loads(json.dumps(_findings(q.source, windowed), default=str))
    spots = _spots(meta["findings"])
    tiles, tile_bytes, shown, unrefined = _write_tiles(q, out, progress, [t for t, _ in spots])
    meta["detail_spots"] = [{"time": t, "finding": why} for t, why in spots]
    meta["critical"] = write_critical(q, out, shown)
    meta["critical_split"] = critical_summary(q.source, window=windowed)
    meta.update(tile_px=TILE_PX, util_bins=UTIL_BINS, max_level=max(tiles),
                tiles={str(k): sorted(v) for k, v in tiles.items()},
                # (tiles that merge items without a child: no finer detail there)
                unrefined=unrefined)
    return tiles, tile_bytes


def _spots(found, most=DETAIL_SPOTS):
    """[(time, pattern)] where the tiles go down past the budget: the middle of each of the
    first findings' windows (the guide's 4-rank run: its loop's tiny tasks as boxes)."""
    out = []
    for x in found.get("findings", []):
        w = x.get("window_ns")
        if w and len(out) < most and w[1] >= w[0]:
            out.append(((int(w[0]) + int(w[1])) // 2, x["pattern"]))
    return out


def _findings(source, windowed=False):
    """``insights``' findings with their costs and idle time in words, and the sentence of
    how much of the run (or window) they explain (``analyze.costed_findings``: the viewer's
    dock too)."""
    return costed_findings(source, windowed)
