"""The timeline widget: a pyqtgraph plot holding the painted item, axes, cursor, view
history and keys.  Painting lives in timeline_item.py, axes in axes.py, text in item_text.py.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from legate_prof.present.units import format_ns
from legate_prof.query import as_source

from .axes import LaneAxis, TimeAxis
from .item_text import details_rows, tooltip_html
from .layout import LaneLayout
from .timeline_item import TimelineItem
from .viewbox import TimelineViewBox

ROW_PX = 18  # pixels per row unit at the default vertical scale


class TimelineWidget(pg.PlotWidget):
    """The timeline view: axes, lane labels, the painted item, cursor, history, keys."""

    itemClicked = QtCore.Signal(object)  # ('item', idx) | ('band', (...)) | None
    viewChanged = QtCore.Signal(float, float)
    layoutChanged = QtCore.Signal()  # groups expanded or collapsed

    def __init__(self, model, layout: LaneLayout | None = None, parent=None):
        self.vb = TimelineViewBox()
        self.time_axis = TimeAxis("bottom")
        self.lane_axis = LaneAxis("left")
        super().__init__(parent=parent, viewBox=self.vb,
                         axisItems={"bottom": self.time_axis, "left": self.lane_axis,
                                    "top": TimeAxis("top")})
        self.setBackground("w")
        self.row_px = ROW_PX
        self.source = as_source(model)
        self.lane_layout = layout or LaneLayout.default(self.source)
        pi = self.getPlotItem()
        pi.showAxis("top")
        pi.hideButtons()
        pi.setMenuEnabled(False)
        for ax in ("bottom", "top", "left"):
            a = pi.getAxis(ax)
            a.setPen(pg.mkPen(90, 90, 90))
            a.setTextPen(pg.mkPen(30, 30, 30))
        self.item = TimelineItem(self.source, self.lane_layout)
        self.addItem(self.item)
        self.cursor = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(0, 0, 0, 120))
        self.cursor_label = pg.TextItem(color=(0, 0, 0), anchor=(0, 1), fill=(255, 255, 255, 200))
        self.addItem(self.cursor, ignoreBounds=True)
        self.addItem(self.cursor_label, ignoreBounds=True)
        self.lane_axis.set_layout(self.lane_layout)
        self.lane_axis.toggled.connect(self.toggle_group)
        self.vb.sigYRangeChanged.connect(self._rescale_labels)
        self.vb.intervalSelected.connect(lambda a, b: self.set_time_range(a, b))
        self.vb.interactionFinished.connect(self._remember)
        self.scene().sigMouseMoved.connect(self._mouse_moved)
        self.scene().sigMouseClicked.connect(self._mouse_clicked)
        self.history = []
        self.future = []
        self._apply_limits()
        t0, t1 = self.source.info().time_range
        self.set_time_range(t0, t1, remember=False)
        self.history = [(t0, t1)]
        self.setFocusPolicy(QtCore.Qt.FocusPolicy.StrongFocus)

    # ---- view range ---------------------------------------------------------------------
    def set_extent(self, t0, t1):
        """Allow panning over [t0, t1] even beyond this run (runs compared on one scale)."""
        self._extent = (t0, t1)
        self._apply_limits()

    def _apply_limits(self):
        t0, t1 = getattr(self, "_extent", None) or self.source.info().time_range
        pad = (t1 - t0) * 0.05
        # zoom in to 50 ns, or to 2**12 steps of a float64 where times are that large
        narrowest = max(50.0, 4096 * float(np.spacing(float(max(abs(t0), abs(t1))))))
        self.vb.setLimits(xMin=t0 - pad, xMax=t1 + pad, minXRange=narrowest, yMin=0,
                          yMax=max(self.lane_layout.height, 1))
        self._fit_y()

    def _fit_y(self):
        h_px = max(self.vb.height(), 100)
        rows_visible = h_px / self.row_px
        y0 = self.vb.viewRange()[1][0] if self.vb.viewRange()[1][1] > 0 else 0
        total = self.lane_layout.height
        if total <= rows_visible:
            self.vb.setYRange(0, total, padding=0)
        else:
            y0 = min(max(y0, 0), total - rows_visible)
            self.vb.setYRange(y0, y0 + rows_visible, padding=0)

    def _rescale_labels(self, *args):
        (y0, y1) = self.vb.viewRange()[1]
        if y1 > y0 and self.vb.height() > 0:
            self.lane_axis.rescale(round(self.vb.height() / (y1 - y0), 2))

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        if hasattr(self, "lane_layout") and not getattr(self, "_closing", False):
            self._fit_y()

    def close(self):
        # pyqtgraph closes the axes, then resizes the view: no range changes after that
        self._closing = True
        return super().close()

    def set_time_range(self, a, b, remember=True):
        self.vb.setXRange(a, b, padding=0)
        if remember:
            self._remember()

    def time_range(self):
        return tuple(self.vb.viewRange()[0])

    def _remember(self):
        cur = self.time_range()
        if not self.history or self.history[-1] != cur:
            self.history.append(cur)
            self.future.clear()
        self.viewChanged.emit(*cur)

    def undo(self):
        if len(self.history) > 1:
            self.future.append(self.history.pop())
            self.vb.setXRange(*self.history[-1], padding=0)
            self.viewChanged.emit(*self.time_range())  # the status bar follows undo

    def redo(self):
        if self.future:
            r = self.future.pop()
            self.history.append(r)
            self.vb.setXRange(*r, padding=0)
            self.viewChanged.emit(*self.time_range())

    def zoom(self, factor, center=None):
        a, b = self.time_range()
        c = (a + b) / 2 if center is None else center
        self.set_time_range(c - (c - a) * factor, c + (b - c) * factor)

    def pan(self, frac):
        a, b = self.time_range()
        d = (b - a) * frac
        self.set_time_range(a + d, b + d)

    def reset(self):
        self.set_time_range(*self.source.info().time_range)

    def export_png(self, path):
        """The timeline as a PNG without the cursor line; written to a temporary file beside
        the target and renamed."""
        import os
        import tempfile
        shown = self.cursor.isVisible(), self.cursor_label.isVisible()
        self.cursor.hide()
        self.cursor_label.hide()
        try:
            pix = self.grab()
        finally:
            self.cursor.setVisible(shown[0])
            self.cursor_label.setVisible(shown[1])
        d = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(suffix=".png", dir=d)
        os.close(fd)
        if not pix.save(tmp, "PNG"):
            os.unlink(tmp)
            return False
        os.replace(tmp, path)
        return True

    # ---- lane tree ----------------------------------------------------------------------
    def toggle_group(self, rank, group):
        self.lane_layout.toggle(rank, group)
        self._relayout()

    def expand(self, kinds=None, all_groups=False):
        for e in list(self.lane_layout.entries):
            if e.kind == "summary" and e.rank is not None and \
                    (all_groups or e.group in (kinds or ())):
                self.lane_layout.expanded.add((e.rank, e.group))
        self.lane_layout.rebuild()
        self._relayout()

    def _relayout(self):
        self.item.set_layout(self.lane_layout)
        self.lane_axis.set_layout(self.lane_layout)
        self._apply_limits()
        self._rescale_labels()
        self.layoutChanged.emit()

    # ---- search -------------------------------------------------------------------------
    def set_matches(self, matches):
        self.item.matches = None if matches is None else np.sort(np.asarray(matches))
        self.item.update()

    def select(self, index):
        self.item.selected = index
        self.item.update()

    def show_item(self, index, zoom=True):
        """Pan (and zoom) to an item, expanding its group so it is visible."""
        lane, _ = self.source.item_lane(index)
        info = self.source.info().lanes[lane]
        key = (info.rank, info.group)
        if key not in self.lane_layout.expanded:
            self.lane_layout.expanded.add(key)
            self.lane_layout.rebuild()
            self._relayout()
        a, b = self.source.item_extent(index)
        d = max(b - a, 1000)
        if zoom:
            self.set_time_range(a - 2 * d, b + 2 * d)
        e = self.lane_layout.find_lane(lane)
        if e is not None:
            (y0, y1) = self.vb.viewRange()[1]
            if not (y0 <= e.y and e.y + e.height <= y1):
                self.vb.setYRange(max(e.y - 3, 0), max(e.y - 3, 0) + (y1 - y0), padding=0)
        self.select(index)

    # ---- mouse and keys -----------------------------------------------------------------
    def _ns_per_px(self):
        a, b = self.time_range()
        return (b - a) / max(self.vb.width(), 1)

    def _mouse_moved(self, pos):
        if not self.vb.sceneBoundingRect().contains(pos):
            return
        p = self.vb.mapSceneToView(pos)
        self.cursor.setPos(p.x())
        self.cursor_label.setText(format_ns(p.x()))
        self.cursor_label.setPos(p.x(), self.vb.viewRange()[1][1])
        hit, entry = self.item.hit(p.x(), p.y(), self._ns_per_px())
        if hit is None:
            if entry is not None and entry.kind == "summary":
                a, b = self.time_range()
                u = self.source.summary_tile(entry.group, entry.rank,
                                             p.x() - self._ns_per_px(),
                                             p.x() + self._ns_per_px(), 1)[0]
                QtWidgets.QToolTip.showText(QtGui.QCursor.pos(),
                                            f"{entry.label}: {u * 100:.0f}% utilization")
            else:
                QtWidgets.QToolTip.hideText()
            return
        QtWidgets.QToolTip.showText(QtGui.QCursor.pos(), tooltip_html(self.source, hit))

    def _mouse_clicked(self, ev):
        if ev.button() != QtCore.Qt.MouseButton.LeftButton or \
                not self.vb.sceneBoundingRect().contains(ev.scenePos()):
            return
        p = self.vb.mapSceneToView(ev.scenePos())
        hit, _ = self.item.hit(p.x(), p.y(), self._ns_per_px())
        self.select(hit[1] if hit is not None and hit[0] == "item" else None)
        if ev.double() and hit is not None and hit[0] == "band":
            a, b = hit[1][0], hit[1][1]
            self.set_time_range(a, b)
        self.itemClicked.emit(hit)

    def keyPressEvent(self, ev):
        k = ev.key()
        mods = ev.modifiers()
        ctrl = bool(mods & QtCore.Qt.KeyboardModifier.ControlModifier)
        shift = bool(mods & QtCore.Qt.KeyboardModifier.ShiftModifier)
        K = QtCore.Qt.Key
        if ctrl and k == K.Key_Z:
            self.redo() if shift else self.undo()
        elif ctrl and k == K.Key_Y:
            self.redo()
        elif ctrl and k == K.Key_Left:
            self.undo()
        elif ctrl and k == K.Key_Right:
            self.redo()
        elif k == K.Key_Left:
            self.pan(-0.01 if shift else -0.05)
        elif k == K.Key_Right:
            self.pan(0.01 if shift else 0.05)
        elif k in (K.Key_Plus, K.Key_Equal):
            self.zoom(0.5)
        elif k == K.Key_Minus:
            self.zoom(2.0)
        elif k == K.Key_0:
            self.reset()
        elif k in (K.Key_Up, K.Key_Down):
            (y0, y1) = self.vb.viewRange()[1]
            self.vb.translateBy(y=(y1 - y0) * (0.1 if k == K.Key_Down else -0.1))
        else:
            super().keyPressEvent(ev)


__all__ = ["TimelineWidget", "TimelineItem", "details_rows", "tooltip_html"]
