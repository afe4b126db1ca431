"""The run's critical path drawn over the timeline: its summary track at the top of the lanes
(``path_track``: where the path was at each moment, by kind, at any zoom) and, where the
view is sparse enough to read them, each step's piece outlined with a link from the step
before it in time — dashed where that link is inferred past an event no profile records,
with an arrowhead where the step is wide enough — and "unknown" where the chain stops at an
event no loaded profile records.  A step whose lane is not shown is drawn on its group's
utilization row (or its rank's header), so the path stays connected whatever is
collapsed."""

from __future__ import annotations

import math

import numpy as np
from PySide6 import QtCore, QtGui
from pyqtgraph.Qt import internals

from .path_track import TrackPainter

PATH_COLOR = QtGui.QColor(200, 0, 150)  # not a name colour: magenta, with a white halo
HALO_COLOR = QtGui.QColor(255, 255, 255, 230)
MAX_STEPS_DRAWN = 20_000  # without a summary track: the steps in the view drawn at most
ARROW_PX = 7.0
MIN_PIECE_PX = 3.0
SMOOTH_LINES = 1500  # antialiased, with halo and heads, up to this many links in the view
PX_PER_STEP = 12.0  # fewer pixels than this per step in the view: too dense to draw one by
#                     one (lines across every lane): the summary track shows it instead
WIDE_PX = 24.0  # ... and only the steps at least this wide are outlined in the lanes
ARROW_STEP_PX = 2 * ARROW_PX  # an arrowhead only on a step (and a link) this wide


class PathOverlay:
    """A ``critical_path.RunPath`` and where its steps sit in a lane layout."""

    def __init__(self, path):
        self.path = path
        self._rows = None  # each step's stacking row, asked of the source once, when drawn
        self._lines = internals.PrimitiveArray(QtCore.QLineF, 4)
        self._rects = internals.PrimitiveArray(QtCore.QRectF, 4)
        self.track = None if path.track is None else TrackPainter(path.track)
        self.last = {}  # what the last frame drew: a test counts it, the header says it

    def rows(self, source):
        if self._rows is None:
            self._rows = np.asarray(source.items_columns(self.path.item)["row"], np.float64)
        return self._rows

    def places(self, source, layout):
        """Per step, its y centre and half height in lane-tree units (NaN where its rank is
        not shown): its lane's row, else its group's utilization row, else its header."""
        path, lanes = self.path, source.outline().lanes
        uniq, inv = np.unique(path.lane, return_inverse=True)
        top, row_h, rows, half = (np.full(len(uniq), np.nan) for _ in range(4))
        in_lane = np.zeros(len(uniq), bool)
        for u, lane in enumerate(uniq.tolist()):
            e = layout.lane_entry(lane)
            if e is not None:
                top[u], row_h[u], rows[u], in_lane[u] = e.y, e.row_h, e.rows, True
                continue
            info = lanes[lane]
            e = layout.summary_entry(info.rank, info.group) or layout.header_entry(info.rank)
            if e is not None:
                top[u], row_h[u], rows[u] = e.y, e.height, 1
        row = np.where(in_lane[inv], np.minimum(self.rows(source) if in_lane.any() else 0,
                                                rows[inv] - 1), 0)
        y = top[inv] + (row + 0.5) * row_h[inv]
        return y, np.where(in_lane[inv], row_h[inv] / 2, row_h[inv] / 4)

    def in_view(self, x0, x1):
        """The steps (indices, last first) whose piece or link touches [x0, x1]."""
        path = self.path
        starts = path.link_starts()
        return np.flatnonzero((path.end >= x0) & (np.minimum(path.begin, starts) <= x1))

    def paint(self, p, source, layout, x0, x1, sx, dx, sy, dy):
        """Draw the steps and links that touch [x0, x1] (view coordinates): with a summary
        track, the track always, and the steps one by one only where they are sparse enough
        to read (else only the wide ones, outlined, no links); without one, every step in
        the view up to ``MAX_STEPS_DRAWN`` (the last ones: ``last["capped"]`` says so)."""
        path = self.path
        self.last = {"mode": "none", "steps": 0, "lines": 0, "track_rects": 0, "capped": 0}
        if len(path) == 0:
            return
        if self.track is not None:
            self.track.paint(p, layout.path_entries(), x0, x1, sx, dx, sy, dy)
            self.last["track_rects"] = self.track.drawn
        ks = self.in_view(x0, x1)
        links = True
        if self.track is not None:
            width = abs(sx * (x1 - x0))
            if len(ks) > width / PX_PER_STEP:  # too dense: the wide steps only, no links
                wide = sx * (path.end[ks] - path.begin[ks]).astype(np.float64) >= WIDE_PX
                ks, links = ks[wide], False
                self.last["mode"] = "track"
            else:
                self.last["mode"] = "steps"
        elif len(ks) > MAX_STEPS_DRAWN:
            self.last["capped"] = len(ks)
            ks = ks[:MAX_STEPS_DRAWN]
            self.last["mode"] = "capped"
        else:
            self.last["mode"] = "steps"
        if len(ks):
            self._paint_steps(p, source, layout, ks, links, sx, dx, sy, dy)

    def _paint_steps(self, p, source, layout, ks, links, sx, dx, sy, dy):
        """The steps ``ks`` outlined in their lanes and (``links``) each linked to the step
        before it in time: dashed where that link is inferred (an event no profile records),
        an arrowhead where the step is wide enough to show one."""
        path = self.path
        n = len(path)
        yv, hv = self.places(source, layout)
        y, half = sy * yv + dy, np.maximum(np.abs(sy * hv), 2.0)
        a = sx * path.begin.astype(np.float64) + dx
        b = sx * path.end.astype(np.float64) + dx
        shown = ks[~np.isnan(y[ks])]
        guessed = path.inferred
        # links: from the end of the step before in time (k + 1) to the begin of step k
        lk = shown[shown + 1 < n] if links else shown[:0]
        lk = lk[~np.isnan(y[lk + 1])]
        lx0, ly0 = sx * path.link_starts()[lk].astype(np.float64) + dx, y[lk + 1]
        lx1, ly1 = a[lk], y[lk]
        keep = (np.abs(ly0 - ly1) > 1) | (np.abs(lx0 - lx1) > 4)
        line = np.stack([lx0, ly0, lx1, ly1], 1)[keep]
        dashed_line = guessed[lk][keep]
        rect = np.stack([a[shown] - 1, y[shown] - half[shown],
                         np.maximum(b[shown] - a[shown], MIN_PIECE_PX) + 2, 2 * half[shown]], 1)
        # a step reached through an inferred link: the link from the step after it in time
        reached = np.zeros(len(shown), bool)
        after = shown - 1
        ok = after >= 0
        reached[ok] = guessed[after[ok]]
        many = len(line) > SMOOTH_LINES  # a thicket: thin aliased lines, no halo, no heads
        self.last.update(steps=len(shown), lines=len(line), inferred=int(dashed_line.sum()))
        p.save()
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, not many)
        p.setBrush(QtCore.Qt.BrushStyle.NoBrush)
        for color, width in ((HALO_COLOR, 4.5), (PATH_COLOR, 2.0)):
            for dashed in (False, True):
                pen = QtGui.QPen(color)
                pen.setWidthF(width if not many else 1.0 if color == PATH_COLOR else width)
                if dashed and color == PATH_COLOR:
                    pen.setStyle(QtCore.Qt.PenStyle.DashLine)
                p.setPen(pen)
                _draw(p, self._rects, rect[reached == dashed], "drawRects")
                if not many or color == PATH_COLOR:
                    _draw(p, self._lines, line[dashed_line == dashed], "drawLines")
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        p.setBrush(PATH_COLOR)
        if not many:
            wide = (b[lk] - a[lk])[keep] >= ARROW_STEP_PX
            for (x_0, y_0, x_1, y_1), w in zip(line.tolist(), wide.tolist()):
                if w and math.hypot(x_1 - x_0, y_1 - y_0) >= ARROW_STEP_PX:
                    p.drawPolygon(_arrow_head(x_0, y_0, x_1, y_1))
        last = n - 1
        if path.stops_unknown and last in set(shown[-1:].tolist()):
            _paint_unknown(p, a[last], y[last])
        p.restore()


def _draw(p, prim, cols, how):
    """Rectangles or lines from numpy columns in one call (pyqtgraph's primitive arrays)."""
    if not len(cols):
        return
    prim.resize(len(cols))
    prim.ndarray()[:] = cols
    getattr(p, how)(*prim.drawargs())


def _arrow_head(x0, y0, x1, y1):
    """A filled triangle at (x1, y1), pointing from (x0, y0)."""
    ang = math.atan2(y1 - y0, x1 - x0)
    pts = [QtCore.QPointF(x1, y1)]
    for side in (-1, 1):
        a = ang + math.pi - side * 0.45
        pts.append(QtCore.QPointF(x1 + ARROW_PX * math.cos(a), y1 + ARROW_PX * math.sin(a)))
    return QtGui.QPolygonF(pts)


def _paint_unknown(p, x, y):
    """Where the chain stops: "unknown", left of the earliest step."""
    text = "unknown ▸"
    f = QtGui.QFont(p.font())
    f.setBold(True)
    p.setFont(f)
    fm = QtGui.QFontMetrics(f)
    w, h = fm.horizontalAdvance(text) + 8, fm.height() + 2
    box = QtCore.QRectF(x - w - 3, y - h / 2, w, h)
    p.setPen(QtCore.Qt.PenStyle.NoPen)
    p.setBrush(PATH_COLOR)
    p.drawRect(box)
    p.setPen(QtGui.QColor(255, 255, 255))
    p.drawText(box, int(QtCore.Qt.AlignmentFlag.AlignCenter), text)
