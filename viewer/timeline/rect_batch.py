"""Many rectangles in one QPainter.drawRects call, from numpy columns."""

from __future__ import annotations

import numpy as np
import shiboken6
from PySide6 import QtCore


class RectBatch:
    """Rectangles laid out as an array of QRectF (x, y, width, height doubles each) in a
    numpy buffer, drawn with one drawRects call on a pointer to its first (pyqtgraph's fast
    path, ``PrimitiveArray``, less its ~40 us of Python a call: the pointer is wrapped once
    a buffer, not at every call; a frame draws a batch per colour)."""

    def __init__(self):
        self._rects = np.empty((0, 4), np.float64)
        self._first = None  # the buffer's first QRectF, wrapped once

    def draw(self, painter, x, y, w, h):
        n = len(x)
        if n == 0:
            return
        if n > len(self._rects):
            self._rects = np.empty((n, 4), np.float64)
            self._first = shiboken6.wrapInstance(self._rects.ctypes.data, QtCore.QRectF)
        r = self._rects
        r[:n, 0], r[:n, 1], r[:n, 2], r[:n, 3] = x, y, w, h
        painter.drawRects(self._first, n)
