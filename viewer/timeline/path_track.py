"""The critical path's summary track: at any zoom, which rank and lane group held the path
at each moment, coloured by kind (compute, launch, runtime, copy, … — ``legate_prof
critical``'s split), hatched where it rests on inferred links.  It sits at the top of the
lane tree while the path is drawn (``LaneLayout.set_path_track``): a row saying what the
colours mean, a row of the whole run, then a thin row per (rank, lane group) the path
visits.

The pieces come from the command line's ``path_track`` (``analyze``: the viewer reads no
analysis itself), grouped here once, in the thread that computes the path; a frame asks
each row's colour per pixel column (a ``searchsorted`` per row and kind: the view's width,
never the path's length).
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtGui
from pyqtgraph.Qt import internals

from legate_prof.present.colors import PATH_KIND_MEANING, PATH_KIND_RGB, PATH_KIND_WORDS
from legate_prof.present.units import format_ns

from ..time_text import format_range

LEGEND_ROW, ALL_ROW = "legend", "all"  # the track's first two rows; then a row's index
HATCH = QtGui.QColor(60, 60, 60, 110)
TRACK_BG = QtGui.QColor(250, 247, 251)


def kind_color(name):
    return QtGui.QColor(*PATH_KIND_RGB.get(name, (128, 128, 128)))


class PathTrack:
    """The track's pieces, grouped per row and kind (sorted by time, with running sums), so
    a row's colour per pixel column is a few ``searchsorted`` calls."""

    def __init__(self, track):
        self.kinds = list(track["kinds"])
        self.rows = [tuple(rg) for rg in track["rows"]]  # (rank, lane group) per row
        self.run = tuple(track["run"])
        self.words = track.get("words", "")
        self.inferred_from_ns = track.get("inferred_from_ns")
        # (where it starts: after the unknown time the path begins with, if any)
        self.resting_from_ns = track.get("resting_from_ns", self.run[0])
        self.info = {k: track[k] for k in ("run_ns", "explained_ns", "resting_ns",
                                           "inferred_links", "steps") if k in track}
        begin = np.asarray(track["begin"], np.int64)
        end = np.asarray(track["end"], np.int64)
        kind = np.asarray(track["kind"], np.int64)
        row = np.asarray(track["row"], np.int64)
        keep = end > begin  # (a piece of no time colours nothing)
        self.begin, self.end, self.kind, self.row = begin[keep], end[keep], kind[keep], row[keep]
        item = track.get("item")
        self.item = np.asarray(item, np.int64)[keep] if item is not None else \
            np.full(int(keep.sum()), -1, np.int64)
        self.present = sorted(set(kind[keep].tolist()))  # kinds the track shows
        self._parts = {ALL_ROW: _grouped(begin[keep], end[keep], kind[keep],
                                         np.zeros(keep.sum(), np.int64))}
        held = keep & (row >= 0)
        by_row = _grouped(begin[held], end[held], kind[held], row[held], by_row=True)
        for k in range(len(self.rows)):
            self._parts[k] = by_row.get(k, [])

    def keys(self):
        """The track's rows, top to bottom: the legend, the whole run, each (rank, group)."""
        return [LEGEND_ROW, ALL_ROW] + list(range(len(self.rows)))

    def columns(self, key, edges):
        """The kind (index) that held row ``key`` longest in each column between the times
        ``edges`` (ascending), -1 where nothing did."""
        parts = self._parts.get(key, [])
        n = max(len(edges) - 1, 0)
        if not parts or not n:
            return np.full(n, -1, np.int64)
        cover = np.empty((len(parts), n))
        for j, (_k, b, length, cum) in enumerate(parts):
            cover[j] = np.diff(_covered(b, length, cum, edges))
        best = cover.argmax(0)
        out = np.array([k for k, *_ in parts], np.int64)[best]
        out[cover.max(0) <= 0] = -1
        return out

    def piece_at(self, t, key=ALL_ROW):
        """(begin, end, kind name, (rank, group) or None) of the piece holding the path at
        ``t`` (on row ``key``), or None."""
        k = int(np.searchsorted(self.begin, t, side="right")) - 1
        if k < 0 or t >= self.end[k]:
            return None
        row = int(self.row[k])
        if key not in (ALL_ROW, LEGEND_ROW) and row != key:
            return None
        return (int(self.begin[k]), int(self.end[k]), self.kinds[int(self.kind[k])],
                self.rows[row] if row >= 0 else None)

    def item_at(self, t):
        """The item holding the path at ``t`` (-1: none, or between pieces)."""
        k = int(np.searchsorted(self.begin, t, side="right")) - 1
        return int(self.item[k]) if 0 <= k and t < self.end[k] else -1

    def hover_text(self, key, label, t, ns_px, group_title=str, item_title=None):
        """What a track row's tooltip says at time ``t`` (a pixel is ``ns_px`` wide): which
        kind of work held the path there, on which rank and lane group, and whether that part
        of the run is reached only through an inferred link (plain text: ``label``, the
        row's, and ``group_title`` (a lane group's title) come from the profile)."""
        if key == LEGEND_ROW:
            return ("the run's critical path at each moment, coloured by kind (legate_prof "
                    "critical's split); a row per rank and lane group it visits"
                    + (f"; hatched before {format_ns(self.inferred_from_ns)}: that part of the "
                       "path is reached only through a link inferred past an event no profile "
                       "records" if self.inferred_from_ns is not None else ""))
        lines = [f"critical path · {label.strip()} at {format_ns(int(t))}"]
        piece = self.piece_at(t, key)
        if piece is not None and piece[1] - piece[0] >= ns_px:
            a, b, kind, where = piece
            on = "" if where is None else f" on rank {where[0]}'s {group_title(where[1])} lanes"
            lines.append(f"{PATH_KIND_WORDS.get(kind, kind)}{on}, {format_range(a, b)}")
            i = self.item_at(t)
            if i >= 0 and item_title is not None:  # (it named no item: a review clicked to
                lines.append(f"held by {item_title(i)}")  # find out what ran)
            if kind in PATH_KIND_MEANING:
                lines.append(f"({kind}: {PATH_KIND_MEANING[kind]})")
        else:
            kind = int(self.columns(key, np.array([t - ns_px / 2, t + ns_px / 2]))[0])
            lines.append(f"mostly {PATH_KIND_WORDS.get(self.kinds[kind], self.kinds[kind])} in "
                         f"this pixel ({format_ns(int(ns_px))})" if kind >= 0 else
                         "the path is elsewhere at this moment")
        if self.resting_at(t):
            before = ("everything" if self.resting_from_ns <= self.run[0]
                      else f"the path from {format_ns(self.resting_from_ns)}")
            lines.append("inferred: this part of the run is reached only through a link "
                         f"inferred past an event no profile records ({before} before "
                         f"{format_ns(self.inferred_from_ns)}; dashed in the lanes)")
        return "\n".join(lines)

    def resting_at(self, t):
        """Whether the path's cause at ``t`` is reached only through an inferred link."""
        return (self.inferred_from_ns is not None
                and self.resting_from_ns <= t < self.inferred_from_ns)


def _grouped(begin, end, kind, row, by_row=False):
    """[(kind, begins, lengths, running sums)] per kind (``by_row``: {row: that})."""
    order = np.lexsort((begin, kind, row))
    begin, end, kind, row = begin[order], end[order], kind[order], row[order]
    key = row * 64 + kind
    cuts = np.flatnonzero(np.diff(key)) + 1
    out = {}
    for lo, hi in zip(np.r_[0, cuts].tolist(), np.r_[cuts, len(key)].tolist()):
        if hi <= lo:
            continue
        length = end[lo:hi] - begin[lo:hi]
        cum = np.concatenate([[0], np.cumsum(length)])
        out.setdefault(int(row[lo]), []).append((int(kind[lo]), begin[lo:hi], length, cum))
    return out if by_row else out.get(0, [])


def _covered(begin, length, cum, t):
    """How much of the pieces (sorted, never overlapping) lies before each time ``t``."""
    j = np.searchsorted(begin, t, side="right") - 1
    jj = np.maximum(j, 0)
    inside = np.clip(t - begin[jj], 0, length[jj])
    return np.where(j >= 0, cum[jj] + inside, 0.0)


class TrackPainter:
    """Paints a ``PathTrack`` into the track rows of a lane layout (pyqtgraph's primitive
    arrays: one call per kind for all its rectangles)."""

    def __init__(self, track: PathTrack):
        self.track = track
        self._rects = internals.PrimitiveArray(QtCore.QRectF, 4)
        self.drawn = 0  # rectangles the last frame drew (a test counts them)

    def paint(self, p, entries, x0, x1, sx, dx, sy, dy):
        """Draw the rows ``entries`` ([(key, layout entry)]) over view times [x0, x1]."""
        track = self.track
        left, right = sx * x0 + dx, sx * x1 + dx
        c0, c1 = int(np.floor(left)), int(np.ceil(right))
        edges = (np.arange(c0, c1 + 1, dtype=np.float64) - dx) / sx
        per_kind = {}
        self.drawn = 0
        for _key, e in entries:
            p.fillRect(QtCore.QRectF(left, sy * e.y + dy, right - left, sy * e.height),
                       TRACK_BG)
        rows = [e for key, e in entries if key != LEGEND_ROW]
        if rows:  # (under the colours: what rests on an inferred link, hatched)
            self._paint_inferred(p, left, right, sy * rows[0].y + dy,
                                 sy * (rows[-1].y + rows[-1].height) + dy, sx, dx)
        for key, e in entries:
            top, h = sy * e.y + dy, sy * e.height
            if key == LEGEND_ROW:
                continue
            pad = 1.0 if h > 4 else 0.0
            kinds = track.columns(key, edges)
            cut = np.flatnonzero(np.diff(kinds)) + 1
            starts = np.r_[0, cut]
            stops = np.r_[cut, len(kinds)]
            k = kinds[starts] if len(kinds) else kinds
            for kind in np.unique(k[k >= 0]).tolist():
                m = k == kind
                x = c0 + starts[m].astype(np.float64)
                w = (stops[m] - starts[m]).astype(np.float64)
                per_kind.setdefault(kind, []).append(np.stack(
                    [x, np.full(len(x), top + pad), w, np.full(len(x), max(h - 2 * pad, 1))], 1))
        for kind, parts in per_kind.items():
            rects = np.concatenate(parts)
            self.drawn += len(rects)
            p.setPen(QtCore.Qt.PenStyle.NoPen)
            p.setBrush(kind_color(track.kinds[kind]))
            self._rects.resize(len(rects))
            self._rects.ndarray()[:] = rects
            p.drawRects(*self._rects.drawargs())
        legend = next((e for key, e in entries if key == LEGEND_ROW), None)
        if legend is not None:
            self._paint_legend(p, left, right, sy * legend.y + dy, sy * legend.height)

    def _paint_inferred(self, p, left, right, top, bottom, sx, dx):
        """Hatched before the latest inferred link: that part of the run is reached only
        through a link ``inference`` inferred; a dashed line where it starts."""
        at = self.track.inferred_from_ns
        if at is None:
            return
        a = max(sx * self.track.resting_from_ns + dx, left)
        b = min(sx * at + dx, right)
        if b > a:
            p.setPen(QtCore.Qt.PenStyle.NoPen)
            p.setBrush(QtGui.QBrush(HATCH, QtCore.Qt.BrushStyle.BDiagPattern))
            p.drawRect(QtCore.QRectF(a, top, b - a, bottom - top))
        x = sx * at + dx
        if left <= x <= right:
            pen = QtGui.QPen(QtGui.QColor(20, 20, 20))
            pen.setStyle(QtCore.Qt.PenStyle.DashLine)
            p.setPen(pen)
            p.drawLine(QtCore.QPointF(x, top), QtCore.QPointF(x, bottom))

    def _paint_legend(self, p, left, right, top, h):
        """What the colours mean (the kinds the track shows), and the hatching."""
        if h < 8:
            return
        f = QtGui.QFont(p.font())
        f.setPointSizeF(max(min(h * 0.55, 8.5), 6.0))
        p.setFont(f)
        fm = QtGui.QFontMetricsF(f)
        x, sw = left + 4, min(h - 4, 10)
        entries = [(kind_color(self.track.kinds[k]),
                    PATH_KIND_WORDS.get(self.track.kinds[k], self.track.kinds[k]))
                   for k in self.track.present]
        at = self.track.inferred_from_ns
        if at is not None:
            entries.append((QtGui.QBrush(HATCH, QtCore.Qt.BrushStyle.BDiagPattern),
                            f"rests on inferred links (before {format_ns(at)})"))
        p.setPen(QtGui.QColor(40, 40, 40))
        p.drawText(QtCore.QRectF(x, top, 120, h), int(QtCore.Qt.AlignmentFlag.AlignVCenter),
                   "path by kind:")
        x += fm.horizontalAdvance("path by kind:") + 8
        # where all do not fit, each text is cut to an equal share, never a swatch dropped
        # (a GUI walk at 1000 px: "shutdown" and "gap" went, the gap among the longest bars)
        room = (right - x) / max(len(entries), 1) - sw - 14
        fits = sum(sw + 14 + fm.horizontalAdvance(t) for _, t in entries) <= right - x
        for swatch, text in entries:
            if not fits:
                text = fm.elidedText(text, QtCore.Qt.TextElideMode.ElideRight, max(room, 0))
            need = sw + 4 + fm.horizontalAdvance(text) + 10
            if x + sw > right:
                break
            box = QtCore.QRectF(x, top + (h - sw) / 2, sw, sw)
            p.fillRect(box, swatch)
            p.setPen(QtGui.QColor(120, 120, 120))
            p.setBrush(QtCore.Qt.BrushStyle.NoBrush)
            p.drawRect(box)
            p.setPen(QtGui.QColor(40, 40, 40))
            p.drawText(QtCore.QRectF(x + sw + 3, top, need, h),
                       int(QtCore.Qt.AlignmentFlag.AlignVCenter), text)
            x += need
