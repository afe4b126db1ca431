"""Lane tiles: what one lane shows over a time window at a pixel width — boxes with their
running / ready / waiting pieces, merged gray bands with counts — and what a point of a tile
shows (hit-testing answers from the tile drawn, so a click means what the picture shows)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from legate_prof.model.sort_order import stable_order
from legate_prof.present.limits import MIN_PX
from legate_prof.query.level_of_detail import draw_lanes

RUNNING, READY, WAITING = 0, 1, 2
STATE_NAMES = ("running", "ready", "waiting")


@dataclass
class TileRow:
    """One stacking row of a lane tile.  Pixel columns are floats relative to the tile's t0.

    ``box_*``: one entry per drawn item.  ``piece_*``: the state pieces that cover boxes
    (``piece_state`` 0 running, 1 ready, 2 waiting), each with its owning item.
    ``band_*``: merged gray bands, their item counts and ``band_busy``, the share (0..1) of
    each band's time that its items were running (drawn as the band's shade or height).
    """

    row: int
    box_x0: np.ndarray
    box_x1: np.ndarray
    box_item: np.ndarray
    box_name: np.ndarray  # colour key: the item's name id
    band_x0: np.ndarray
    band_x1: np.ndarray
    band_count: np.ndarray
    band_first: np.ndarray
    piece_x0: np.ndarray
    piece_x1: np.ndarray
    piece_state: np.ndarray
    piece_item: np.ndarray
    piece_name: np.ndarray = None  # colour key of each piece (its item's name id)
    band_busy: np.ndarray = None  # share of each band's time its items ran (0..1)
    piece_box: np.ndarray = None  # the box each piece covers (its index in ``box_*``)


@dataclass
class LaneTile:
    lane: int
    t0: float
    t1: float
    width_px: int
    rows: list  # TileRow
    px_scale: float = 1.0  # tile pixels per screen pixel (MIN_PX is in screen pixels)

    @property
    def ns_per_px(self):
        return (self.t1 - self.t0) / self.width_px


@dataclass(frozen=True)
class Hit:
    """What is under a point: an item (``item`` set) or a merged band (``count`` > 1, and
    ``busy``: the share of its time its items ran)."""

    lane: int
    row: int
    item: int | None
    t0: int
    t1: int
    count: int
    busy: float | None = None


def lane_tile(model, lane, t0, t1, width_px, px_scale=1.0) -> LaneTile:
    """Boxes (with state pieces) and merged gray bands with counts for one lane of ``model``
    over [t0, t1] at ``width_px``: all from the one rule ``MIN_PX``.

    ``px_scale``: tile pixels per pixel on screen, for callers that compute on a finer grid
    than they draw (the viewer's cache): the rule stays MIN_PX screen pixels."""
    return lane_tiles(model, [lane], t0, t1, width_px, px_scale)[0]


def lane_tiles(model, lanes, t0, t1, width_px, px_scale=1.0, item_off=0, name_map=None):
    """``lane_tile`` of each of ``lanes``, their rows drawn and their pieces found together
    (``level_of_detail.draw_lanes``).  ``item_off``, ``name_map``: the numbering of a profile
    that ``model`` is one rank of (its item ids shifted by ``item_off``, its name ids mapped
    through ``name_map``)."""
    width_px = max(int(width_px), 1)
    t0, t1 = float(t0), float(t1)
    if not t1 > t0:  # (a zero-width window, where even 1e-9 ns more is the same float)
        t1 = math.nextafter(t0, math.inf)
    scale = width_px / (t1 - t0)
    by_lane = draw_lanes(model, [int(L) for L in lanes], t0, t1, width_px,
                         min_px=MIN_PX * float(px_scale))
    drawn = [dr for rows in by_lane for dr in rows]
    rows = []
    if drawn:  # (the pieces and names of every row's boxes at once, then cut per row)
        names = model.items["name"]
        n_box = np.array([len(dr.box_item) for dr in drawn], np.int64)
        items = np.concatenate([dr.box_item for dr in drawn])
        p0, p1, ps, pi, owner = _pieces(items, np.concatenate([dr.box_x0 for dr in drawn]),
                                        np.concatenate([dr.box_x1 for dr in drawn]), t0,
                                        scale, model.waits)
        box_name = names[items].astype(np.int64)
        piece_row = np.repeat(np.arange(len(drawn)), n_box)[owner]
        o = stable_order(piece_row)  # (each row's running, waiting, ready)
        p0, p1, ps, pi = p0[o], p1[o], ps[o], pi[o]
        piece_name = names[pi].astype(np.int64)
        at_box = [0] + np.cumsum(n_box).tolist()
        piece_box = owner[o] - np.asarray(at_box, np.int64)[piece_row[o]]
        band_first = [dr.band_first for dr in drawn]
        if name_map is not None:
            box_name, piece_name = name_map[box_name], name_map[piece_name]
        if item_off:
            items, pi = items + item_off, pi + item_off
            at_band = [0] + np.cumsum([len(b) for b in band_first]).tolist()
            every = np.concatenate(band_first) + item_off
            band_first = [every[at_band[k]:at_band[k + 1]] for k in range(len(drawn))]
        at_piece = np.searchsorted(piece_row[o], np.arange(len(drawn) + 1)).tolist()
        for k, dr in enumerate(drawn):
            a, b, c, d = at_box[k], at_box[k + 1], at_piece[k], at_piece[k + 1]
            rows.append(TileRow(
                row=dr.row, box_x0=dr.box_x0, box_x1=dr.box_x1, box_item=items[a:b],
                box_name=box_name[a:b], band_x0=dr.band_x0, band_x1=dr.band_x1,
                band_count=dr.band_count, band_first=band_first[k], piece_x0=p0[c:d],
                piece_x1=p1[c:d], piece_state=ps[c:d], piece_item=pi[c:d],
                piece_name=piece_name[c:d], band_busy=dr.band_busy,
                piece_box=piece_box[c:d]))
    tiles, at = [], 0
    for L, drawn_rows in zip(lanes, by_lane):
        tiles.append(LaneTile(lane=int(L), t0=float(t0), t1=t1, width_px=width_px,
                              rows=rows[at:at + len(drawn_rows)], px_scale=float(px_scale)))
        at += len(drawn_rows)
    return tiles


def state_pieces(items, bx0, bx1, t0, scale, w):
    """Running / ready / waiting pieces over the boxes (waits from the model)."""
    return _pieces(items, bx0, bx1, t0, scale, w)[:4]


def _pieces(items, bx0, bx1, t0, scale, w):
    """``state_pieces`` and, per piece, the box it covers (its index in ``items``)."""
    n = len(items)
    z = np.zeros(0)
    if n == 0:
        return z, z, np.zeros(0, np.int8), np.zeros(0, np.int64), np.zeros(0, np.int64)
    if len(w["item"]):
        lo = np.searchsorted(w["item"], items, side="left")
        hi = np.searchsorted(w["item"], items, side="right")
        has = np.flatnonzero(hi > lo)
    else:
        has = np.zeros(0, np.int64)
    parts_x0 = [bx0]
    parts_x1 = [bx1]
    parts_s = [np.full(n, RUNNING, np.int8)]
    parts_i = [items]
    parts_box = [np.arange(n)]
    if len(has):
        counts = (hi - lo)[has]
        owner = np.repeat(has, counts)
        first = np.cumsum(counts) - counts  # where each box's waits start in idx
        idx = np.repeat(lo[has], counts) + np.arange(int(counts.sum())) - \
            np.repeat(first, counts)
        for a, b, state in (("start", "ready", WAITING), ("ready", "end", READY)):
            xa = np.maximum((w[a][idx] - t0) * scale, bx0[owner])
            xb = np.minimum((w[b][idx] - t0) * scale, bx1[owner])
            ok = xb > xa
            parts_x0.append(xa[ok])
            parts_x1.append(xb[ok])
            parts_s.append(np.full(int(ok.sum()), state, np.int8))
            parts_i.append(items[owner[ok]])
            parts_box.append(owner[ok])
    return (np.concatenate(parts_x0), np.concatenate(parts_x1),
            np.concatenate(parts_s), np.concatenate(parts_i), np.concatenate(parts_box))


def hit_in_tile(tile, row, x_px, item_extent) -> Hit | None:
    """What ``tile`` shows at pixel column ``x_px`` of ``row``: boxes win over bands; among
    boxes the one drawn last (topmost) wins; bands report their extent in time from the items
    they hold.  ``item_extent(i)`` gives an item's (start, stop)."""
    if tile is None:
        return None
    lane = tile.lane
    for tr in tile.rows:
        if tr.row != row:
            continue
        inside = np.flatnonzero((tr.box_x0 <= x_px) & (x_px < tr.box_x1))
        if len(inside):
            i = int(tr.box_item[inside[-1]])
            s, e = item_extent(i)
            return Hit(lane=int(lane), row=row, item=i, t0=s, t1=e, count=1)
        band = np.flatnonzero((tr.band_x0 <= x_px) & (x_px < tr.band_x1))
        if len(band):
            j = int(band[0])
            a = tile.t0 + tr.band_x0[j] * tile.ns_per_px
            b = tile.t0 + tr.band_x1[j] * tile.ns_per_px
            busy = None if tr.band_busy is None else float(tr.band_busy[j])
            return Hit(lane=int(lane), row=row, item=None, t0=int(a), t1=int(np.ceil(b)),
                       count=int(tr.band_count[j]), busy=busy)
    return None
