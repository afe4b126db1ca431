"""Many rectangles in one QPainter.drawRects call, from numpy columns."""

from __future__ import annotations

from PySide6 import QtCore
from pyqtgraph.Qt import internals


class RectBatch:
    """Numpy-backed QRectF array drawn with one drawRects call (pyqtgraph's own fast path)."""

    def __init__(self):
        self.prim = internals.PrimitiveArray(QtCore.QRectF, 4)

    def draw(self, painter, x, y, w, h):
        n = len(x)
        if n == 0:
            return
        self.prim.resize(n)
        arr = self.prim.ndarray()
        arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3] = x, y, w, h
        painter.drawRects(*self.prim.drawargs())
