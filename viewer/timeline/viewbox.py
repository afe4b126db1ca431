"""The view box: wheel zooms time at the cursor, drag pans, Shift/right-drag selects."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtCore, QtGui


class TimelineViewBox(pg.ViewBox):
    """Wheel zooms time at the cursor; drag pans; Shift-drag or right-drag selects an interval."""

    intervalSelected = QtCore.Signal(float, float)
    interactionFinished = QtCore.Signal()

    def __init__(self):
        super().__init__(invertY=True, enableMenu=False)
        self.setMouseEnabled(x=True, y=True)
        self._band_start = None

    def updateViewRange(self, forceX=False, forceY=False):
        """pyqtgraph's, but a move it does not draw is not made.  It takes a move under a
        billionth of the range for float noise and keeps the view's transform, yet it kept
        the new range: the timeline was then drawn for one range at another's pixels, a few
        pixels off a timeline opened at that range (a pan stopped at the run's start)."""
        before = [list(r) for r in self.state["viewRange"]]
        super().updateViewRange(forceX, forceY)
        after = self.state["viewRange"]
        if after != before and not any(_moved(a, b) for a, b in zip(before, after)):
            self.state["viewRange"] = before

    def wheelEvent(self, ev, axis=None):
        delta = ev.delta() if hasattr(ev, "delta") else ev.angleDelta().y()
        if ev.modifiers() & QtCore.Qt.KeyboardModifier.ShiftModifier:
            (y0, y1) = self.viewRange()[1]
            step = (y1 - y0) * 0.15 * (-1 if delta > 0 else 1)
            self.translateBy(y=step)
        else:
            factor = 0.85 ** (delta / 120.0)
            center = self.mapSceneToView(ev.scenePos())
            self.scaleBy(x=factor, center=center)
        ev.accept()
        self.interactionFinished.emit()

    def mouseDragEvent(self, ev, axis=None):
        rubber = (ev.button() == QtCore.Qt.MouseButton.RightButton or
                  (ev.button() == QtCore.Qt.MouseButton.LeftButton and
                   ev.modifiers() & QtCore.Qt.KeyboardModifier.ShiftModifier))
        if rubber:
            ev.accept()
            a = self.mapSceneToView(ev.buttonDownScenePos())
            b = self.mapSceneToView(ev.scenePos())
            (y0, y1) = self.viewRange()[1]
            if ev.isFinish():
                self.rbScaleBox.hide()
                lo, hi = sorted((a.x(), b.x()))
                if hi > lo:
                    self.intervalSelected.emit(lo, hi)
            else:
                r = QtCore.QRectF(QtCore.QPointF(a.x(), y0), QtCore.QPointF(b.x(), y1))
                self.rbScaleBox.setPos(r.topLeft())
                tr = QtGui.QTransform.fromScale(r.width(), r.height())
                self.rbScaleBox.setTransform(tr)
                self.rbScaleBox.show()
            return
        if ev.button() == QtCore.Qt.MouseButton.LeftButton:
            ev.accept()
            last = self.mapSceneToView(ev.lastScenePos())
            cur = self.mapSceneToView(ev.scenePos())
            d = last - cur
            self.translateBy(x=d.x(), y=d.y())
            if ev.isFinish():
                self.interactionFinished.emit()
            return
        super().mouseDragEvent(ev, axis)


def _moved(before, after):
    """Whether pyqtgraph redraws a change of an axis' range (its own test)."""
    threshold = (after[1] - after[0]) * 1.0e-9
    return abs(after[0] - before[0]) > threshold or abs(after[1] - before[1]) > threshold
