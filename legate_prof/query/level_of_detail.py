"""What one lane shows at a pixel width: boxes for items wide enough to see, merged gray
bands (with their item counts and the share of their time those items were running) for the
rest — the rule prof-viewer's server applies to its tiles, computed with a cost bounded by
pixels rather than items."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from legate_prof.model.sort_order import stable_order, unique_values
from legate_prof.present.limits import MIN_PX


@dataclass
class DrawRow:
    """What to paint on one row of one lane for a view: boxes and merged gray bands.

    ``box_x0/x1`` are pixel columns (float), ``box_item`` indexes the model's items.
    ``band_x0/x1`` are pixel columns of merged bands and ``band_count`` the items in each;
    ``band_busy`` the share (0..1) of each band's time that its items were running: a band
    of a thousand 1 µs tasks over 100 ms is 1 % busy, not the solid gray it would look.
    """

    lane: int
    row: int
    box_x0: np.ndarray
    box_x1: np.ndarray
    box_item: np.ndarray
    band_x0: np.ndarray
    band_x1: np.ndarray
    band_count: np.ndarray
    band_first: np.ndarray  # first item index of each band
    band_busy: np.ndarray = None  # share of each band's time its items ran (float32, 0..1)


def items_in(model, lane, t0, t1):
    """Indices of the items of ``lane`` that overlap [t0, t1]."""
    start_all, stop_all, bounds, _, _, ids = model.row_space(lane, with_order=False)
    out = []
    for row in range(len(bounds) - 1):
        lo, hi = int(bounds[row]), int(bounds[row + 1])
        i0 = lo + int(np.searchsorted(stop_all[lo:hi], t0, side="left"))
        i1 = lo + int(np.searchsorted(start_all[lo:hi], t1, side="right"))
        if i1 > i0:
            out.append(np.arange(i0, i1) if ids is None else ids[i0:i1])
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)

def draw_rows(model, lane, t0, t1, width_px, min_px=MIN_PX):
    """Per row of ``lane``, the boxes and gray bands to draw for a view of ``width_px``.

    Cost is bounded by pixels, not by items: items narrower than ``min_px`` are counted per
    pixel column and runs of such columns become one gray band carrying the count; wide items
    are found through the row's duration order, whose prefix of wide-enough items is short."""
    start_all, stop_all, bounds, lane_lo, lane_perm, ids = model.row_space(lane)
    if _many_small_rows(bounds):  # (all rows in one pass)
        return _small_rows(lane, start_all, stop_all, bounds, ids, t0, t1, width_px, min_px)
    rows = []
    ns_px = (t1 - t0) / float(width_px)
    min_dur = min_px * ns_px
    sums, first = model.busy_prefix(lane)
    for row in range(len(bounds) - 1):
        lo, hi = int(bounds[row]), int(bounds[row + 1])
        if hi == lo:
            continue
        start, stop = start_all[lo:hi], stop_all[lo:hi]
        i0 = int(np.searchsorted(stop, t0, side="left"))
        i1 = int(np.searchsorted(start, t1, side="right"))
        if i1 <= i0:
            continue
        n_view = i1 - i0
        if lane_perm is None:  # no duration order yet: scan the items in view
            k = n_view
            model.note_scanned(lane, n_view)
        else:
            perm = lane_perm[lo - lane_lo:hi - lane_lo]
            # wide items: prefix of the duration order with dur >= min_dur
            k = bisect.bisect_left(range(hi - lo), -min_dur,
                                   key=lambda j: -(stop[perm[j] - lo] - start[perm[j] - lo]))
        if k < n_view:
            wide, narrow_px, first_of_px, busy_px = _by_duration_order(
                start, stop, perm[:k], lo, i0, i1, t0, ns_px, width_px, sums[lo - first:])
        else:
            wide, narrow_px, first_of_px, busy_px = _by_scan(start, stop, i0, i1, t0, ns_px,
                                                             width_px, min_dur)
        bx0, bx1 = (start[wide] - t0) / ns_px, (stop[wide] - t0) / ns_px
        b0, b1, bc, bbusy = merged_bands(narrow_px, min_px, busy_px)
        bfirst = first_of_px[b0.astype(np.int64)] if len(b0) else np.zeros(0, np.int64)
        # a band of one item is that item, widened to be visible
        single = bc == 1
        s_items = first_narrow(start, stop, bfirst[single], min_dur)
        s_x0 = b0[single].astype(np.float64)
        box_item = np.concatenate([wide, s_items]).astype(np.int64) + lo
        band_first = bfirst[~single].astype(np.int64) + lo
        if ids is not None:  # positions in a lane stacked on demand: item ids
            box_item, band_first = ids[box_item], ids[band_first]
        rows.append(DrawRow(
            lane=lane, row=row,
            box_x0=np.concatenate([bx0, s_x0]),
            box_x1=np.concatenate([np.maximum(bx1, bx0 + 1.0), s_x0 + min_px]),
            box_item=box_item,
            band_x0=b0[~single].astype(np.float64),
            band_x1=(b1[~single] + 1).astype(np.float64),
            band_count=bc[~single],
            band_first=band_first,
            band_busy=busy_share(bbusy[~single], (b1 - b0 + 1)[~single] * ns_px)))
    return rows


# A lane of many rows holding few items each (a memory whose instances all live to the end:
# a row each) is drawn in one pass over its items, not a pass per row
MANY_ROWS = 16
SMALL_ROW_ITEMS = 64  # items per row, on average, at most


def _many_small_rows(bounds):
    """Whether a lane's rows (their ``bounds``) are many and hold few items each."""
    n_rows = len(bounds) - 1
    return n_rows >= MANY_ROWS and int(bounds[-1] - bounds[0]) <= SMALL_ROW_ITEMS * n_rows


# Lanes of at most this many items are drawn together (``draw_lanes``)
SMALL_LANE_ITEMS = 4096


def draw_lanes(model, lanes, t0, t1, width_px, min_px=MIN_PX):
    """``draw_rows`` of each of ``lanes`` (a list of row lists, in their order): the lanes of
    few items in one pass over all of their rows (``_small_rows``: rows of several lanes
    are rows all the same), the others lane by lane.  A report's tile of 1,000 ranks is
    19,000 lanes of a few hundred items: ~40 numpy calls a row of each was 15 s of 41."""
    out = [[] for _ in lanes]
    starts, stops, ids, bounds, row_lane, row_local = [], [], [], [], [], []
    at = 0
    extent = [model.lane_range(lane) for lane in lanes]
    model.stack_together([L for L, (lo, hi) in zip(lanes, extent)
                          if 0 < hi - lo <= SMALL_LANE_ITEMS])
    for k, (lane, (lo, hi)) in enumerate(zip(lanes, extent)):
        if hi - lo > SMALL_LANE_ITEMS:
            out[k] = draw_rows(model, lane, t0, t1, width_px, min_px)
            continue
        if hi == lo:
            continue
        start_all, stop_all, b, _, _, lane_ids = model.row_space(lane, with_order=False)
        a, z = int(b[0]), int(b[-1])
        starts.append(start_all[a:z])
        stops.append(stop_all[a:z])
        ids.append(np.arange(a, z) if lane_ids is None else lane_ids[a:z])
        bounds.append(b[:-1] - a + at)
        row_lane.append(np.full(len(b) - 1, k, np.int64))
        row_local.append(np.arange(len(b) - 1))
        at += z - a
    if not starts:
        return out
    bounds.append(np.array([at]))
    rows = _small_rows(None, np.concatenate(starts), np.concatenate(stops),
                       np.concatenate(bounds).astype(np.int64), np.concatenate(ids), t0, t1,
                       width_px, min_px)
    row_lane, row_local = np.concatenate(row_lane).tolist(), np.concatenate(row_local).tolist()
    for r in rows:
        k = row_lane[r.row]
        r.lane, r.row = lanes[k], row_local[r.row]
        out[k].append(r)
    return out


def _small_rows(lane, start_all, stop_all, bounds, ids, t0, t1, width_px, min_px):
    """``draw_rows`` of a lane of many small rows, all rows at once: its items in view
    scanned as ``_by_scan`` scans one row's (a row's items neither overlap nor go out of
    order, so "in view" is a mask), their pixel columns keyed by (row, column)."""
    ns_px = (t1 - t0) / float(width_px)
    lo = int(bounds[0])
    start, stop = start_all[lo:int(bounds[-1])], stop_all[lo:int(bounds[-1])]
    pos = np.flatnonzero((stop >= t0) & (start <= t1))
    if len(pos) == 0:
        return []
    row_of = np.searchsorted(bounds, pos + lo, side="right") - 1
    s, e = start[pos], stop[pos]
    is_wide = e - s >= min_px * ns_px
    wide, nar = np.flatnonzero(is_wide), np.flatnonzero(~is_wide)
    npx = np.clip(((s[nar] - t0) / ns_px).astype(np.int64), 0, width_px - 1)
    b_row, b0, b1, b_count, b_busy, b_first = _bands_by_row(
        row_of[nar], npx, (e - s)[nar].astype(np.float64), min_px)
    b_first = nar[b_first]  # (an index into pos)
    single = b_count == 1
    # boxes: the wide items, then the single-item bands' items widened (as ``draw_rows``)
    box_pos = np.concatenate([wide, b_first[single]])
    box_row = np.concatenate([row_of[wide], b_row[single]])
    sx0 = b0[single].astype(np.float64)
    bx0 = (s[wide] - t0) / ns_px
    box_x0 = np.concatenate([bx0, sx0])
    box_x1 = np.concatenate([np.maximum((e[wide] - t0) / ns_px, bx0 + 1.0), sx0 + min_px])
    o = stable_order(box_row)
    box_row, box_x0, box_x1 = box_row[o], box_x0[o], box_x1[o]
    box_item = pos[box_pos[o]] + lo
    many = ~single
    band_row, band_first = b_row[many], pos[b_first[many]] + lo
    if ids is not None:
        box_item, band_first = ids[box_item], ids[band_first]
    band_x0, band_x1 = b0[many].astype(np.float64), (b1[many] + 1).astype(np.float64)
    band_count = b_count[many]
    band_busy = busy_share(b_busy[many], (b1 - b0 + 1)[many] * ns_px)
    drawn = unique_values(row_of)
    at_box = np.searchsorted(box_row, np.r_[drawn, drawn[-1] + 1]).tolist()
    at_band = np.searchsorted(band_row, np.r_[drawn, drawn[-1] + 1]).tolist()
    rows = []
    for k, row in enumerate(drawn.tolist()):
        a, b, c, d = at_box[k], at_box[k + 1], at_band[k], at_band[k + 1]
        rows.append(DrawRow(
            lane=lane, row=row, box_x0=box_x0[a:b], box_x1=box_x1[a:b],
            box_item=box_item[a:b], band_x0=band_x0[c:d], band_x1=band_x1[c:d],
            band_count=band_count[c:d], band_first=band_first[c:d], band_busy=band_busy[c:d]))
    return rows


def _bands_by_row(row, px, dur, min_px):
    """``merged_bands`` of many rows at once, from their narrow items (in row, then start
    order: their ``row``, pixel column ``px`` and duration): per band its row, first and
    last column, items, running time, and its first item (an index into those given)."""
    key = row * (int(px.max()) + 1 if len(px) else 1) + px
    col = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else px[:0]
    col_count = np.diff(np.r_[col, len(key)])
    col_busy = np.add.reduceat(dur, col) if len(col) else np.zeros(0)
    col_row = row[col]
    first, b0, b1, count, busy = _runs_of_columns(px[col], col_count, col_busy, min_px,
                                                  np.diff(col_row) != 0)
    return col_row[first], b0, b1, count, busy, col[first]


_ZERO = np.zeros(1, np.int64)


def _runs_of_columns(px, counts, busy, min_px, cut=None):
    """The bands of pixel columns ``px`` (in order, each with narrow items: ``counts`` of
    them running ``busy`` ns): runs of columns whose gaps are at most ``min_px`` (and not
    ``cut`` between them: another row), at least ``min_px`` wide.  (first column's index,
    first column, last column, items, running time) per band."""
    brk = np.diff(px) > min_px
    if cut is not None:
        brk |= cut
    brk = np.flatnonzero(brk) + 1
    # (np.concatenate, not np.r_: ~10 us of Python each, four a row of each lane of a tile;
    # each sum after a 0 of the type np.r_[0, ...] and np.r_[0.0, ...] give)
    starts = np.concatenate((_ZERO, brk)) if len(px) else np.zeros(0, np.int64)
    ends = np.append(brk, len(px)) - 1 if len(px) else starts
    csum, bsum = np.cumsum(counts), np.cumsum(busy)
    csum = np.concatenate((np.zeros(1, csum.dtype), csum))
    bsum = np.concatenate((np.zeros(1, bsum.dtype if bsum.dtype.kind == "f" else np.float64),
                           bsum))
    x0 = px[starts]
    x1 = np.maximum(px[ends], x0 + int(np.ceil(min_px)) - 1)
    return starts, x0, x1, csum[ends + 1] - csum[starts], bsum[ends + 1] - bsum[starts]


def busy_share(busy_ns, span_ns):
    """What share (0..1, float32) of a band's span its items ran."""
    return np.clip(busy_ns / span_ns, 0.0, 1.0).astype(np.float32)


def _by_duration_order(start, stop, wide_perm, lo, i0, i1, t0, ns_px, width_px, sums):
    """(wide items, narrow items per pixel column, first item of each column, the narrow
    items' running time (ns) per column) of a row whose wide items are the prefix
    ``wide_perm`` of its duration order; ``sums``: the running sums of its durations from
    its first position (``TraceModel.busy_prefix``), so no item in view is read."""
    wide = np.asarray(wide_perm, dtype=np.int64) - lo
    wide = np.sort(wide[(wide >= i0) & (wide < i1)])
    edges = t0 + ns_px * np.arange(width_px + 1)
    pos = np.searchsorted(start[i0:i1], edges[1:-1], side="left") + i0
    cuts = np.concatenate([[i0], pos, [i1]])
    counts = np.diff(cuts)
    # narrow items per pixel column = all starts there minus the wide ones (and their time)
    wpx = np.clip(((start[wide] - t0) / ns_px).astype(np.int64), 0, width_px - 1)
    wide_ns = (stop[wide] - start[wide]).astype(np.float64)
    busy = np.diff(sums[cuts]) - np.bincount(wpx, weights=wide_ns, minlength=width_px)
    return wide, counts - np.bincount(wpx, minlength=width_px), cuts[:-1], busy


def _by_scan(start, stop, i0, i1, t0, ns_px, width_px, min_dur):
    """The same as ``_by_duration_order``, scanning the items in view (slices, no index
    arrays over all of them)."""
    dur = stop[i0:i1] - start[i0:i1]
    is_wide = dur >= min_dur
    wide = np.flatnonzero(is_wide) + i0
    nar = np.flatnonzero(~is_wide) + i0
    npx = np.clip(((start[nar] - t0) / ns_px).astype(np.int64), 0, width_px - 1)
    # starts are in order, so each pixel's narrow items are one run of npx
    cuts = np.searchsorted(npx, np.arange(width_px + 1))
    narrow_px = np.diff(cuts)
    first_of_px = np.where(narrow_px > 0, nar[np.minimum(cuts[:-1], len(nar) - 1)]
                           if len(nar) else -1, -1)
    busy = np.bincount(npx, weights=dur[~is_wide].astype(np.float64), minlength=width_px)
    return wide, narrow_px, first_of_px, busy


def merged_bands(counts, min_px, busy=None):
    """Runs of pixel columns with narrow items; gaps shorter than ``min_px`` are bridged.
    (first column, last column, items, their running time: ``busy`` summed per band)."""
    px = np.flatnonzero(counts > 0)
    if len(px) == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z, np.zeros(0)
    _, x0, x1, count, ran = _runs_of_columns(
        px, counts[px], np.zeros(len(px)) if busy is None else busy[px], min_px)
    return x0, x1, count, ran


def first_narrow(start, stop, first, min_dur):
    """The narrow item at or after each index (a single-item band's item).

    At most one wide item can start in a pixel column, so one step past it is enough.
    """
    out = np.asarray(first, dtype=np.int64).copy()
    if len(out) == 0:
        return out
    wide = (stop[out] - start[out]) >= min_dur
    out[wide] = np.minimum(out[wide] + 1, len(start) - 1)
    return out
