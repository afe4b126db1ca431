"""The run's critical path drawn over the timeline: each step's piece outlined, arrows from
each step to the next one in time, and "unknown" where the chain stops at an event no loaded
profile records.  A step whose lane is not shown is drawn on its group's utilization row (or
its rank's header), so the path stays connected whatever is collapsed."""

from __future__ import annotations

import math

import numpy as np
from PySide6 import QtCore, QtGui

PATH_COLOR = QtGui.QColor(200, 0, 150)  # not a name colour: magenta, with a white halo
HALO_COLOR = QtGui.QColor(255, 255, 255, 230)
MAX_STEPS_DRAWN = 20_000  # steps in the view drawn at most (a path of a million steps)
ARROW_PX = 7.0
MIN_PIECE_PX = 3.0


class PathOverlay:
    """A ``critical_path.RunPath`` and where its steps sit in a lane layout."""

    def __init__(self, path):
        self.path = path
        self._rows = {}  # item -> stacking row (asked of the source as steps come into view)

    def _rows_of(self, source, items):
        missing = [i for i in items if i not in self._rows]
        if missing:
            rows = source.items_columns(np.array(missing, np.int64))["row"]
            self._rows.update(zip(missing, np.asarray(rows).tolist()))
        return [self._rows[i] for i in items]

    def places(self, source, layout, ks):
        """(y centre, half height) in lane-tree units of steps ``ks``; None where the step's
        rank is not shown."""
        path, lanes = self.path, source.info().lanes
        out, in_lane = {}, []
        for k in ks:
            lane = int(path.lane[k])
            e = layout.lane_entry(lane)
            if e is not None:
                in_lane.append((k, e))
                continue
            info = lanes[lane]
            e = layout.summary_entry(info.rank, info.group) or layout.header_entry(info.rank)
            out[k] = None if e is None else (e.y + e.height / 2, e.height / 4)
        rows = self._rows_of(source, [int(path.item[k]) for k, _ in in_lane])
        for (k, e), row in zip(in_lane, rows):
            out[k] = (e.y + (min(row, e.rows - 1) + 0.5) * e.row_h, e.row_h / 2)
        return out

    def paint(self, p, source, layout, x0, x1, sx, dx, sy, dy):
        """Draw the steps and links that touch [x0, x1] (view coordinates)."""
        path = self.path
        n = len(path)
        if n == 0:
            return
        starts = path.link_starts()
        ks = np.flatnonzero((path.end >= x0) & (np.minimum(path.begin, starts) <= x1))
        ks = ks[:MAX_STEPS_DRAWN].tolist()
        if not ks:
            return
        where = self.places(source, layout, sorted(set(ks) | {min(k + 1, n - 1) for k in ks}))
        rects, lines = [], []
        for k in ks:
            here = where.get(k)
            if here is None:
                continue
            yc, half = sy * here[0] + dy, max(abs(sy * here[1]), 2.0)
            a, b = sx * float(path.begin[k]) + dx, sx * float(path.end[k]) + dx
            rects.append(QtCore.QRectF(a - 1, yc - half, max(b - a, MIN_PIECE_PX) + 2, 2 * half))
            before = where.get(k + 1) if k + 1 < n else None
            if before is not None:
                start = QtCore.QPointF(sx * float(starts[k]) + dx, sy * before[0] + dy)
                end = QtCore.QPointF(a, yc)
                if abs(start.y() - end.y()) > 1 or abs(start.x() - end.x()) > 4:
                    lines.append(QtCore.QLineF(start, end))
        p.save()
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, True)
        p.setBrush(QtCore.Qt.BrushStyle.NoBrush)
        for color, width in ((HALO_COLOR, 4.5), (PATH_COLOR, 2.0)):
            pen = QtGui.QPen(color)
            pen.setWidthF(width)
            p.setPen(pen)
            p.drawRects(rects)
            p.drawLines(lines)
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        p.setBrush(PATH_COLOR)
        for line in lines:
            if line.length() >= 2 * ARROW_PX:
                p.drawPolygon(_arrow_head(line))
        if path.stops_unknown and where.get(n - 1) is not None and (n - 1) in ks:
            _paint_unknown(p, sx * float(path.begin[n - 1]) + dx, sy * where[n - 1][0] + dy)
        p.restore()


def _arrow_head(line):
    """A filled triangle at the end of ``line``, pointing along it."""
    ang = math.atan2(line.dy(), line.dx())
    tip = line.p2()
    pts = [tip]
    for side in (-1, 1):
        a = ang + math.pi - side * 0.45
        pts.append(QtCore.QPointF(tip.x() + ARROW_PX * math.cos(a),
                                  tip.y() + ARROW_PX * math.sin(a)))
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
