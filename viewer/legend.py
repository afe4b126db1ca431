"""The legend of the timeline's visual language, drawn the same in the window and in pictures.

Shades of one task colour for running / ready / waiting (the reference's 100 / 45 / 15 %), the
gray of merged items too small to draw, and the fill of memory in use.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from .colors import ALPHA_READY, ALPHA_RUNNING, ALPHA_WAITING, GRAY, blend_with_white, group_color

SAMPLE = QtGui.QColor(70, 130, 180)  # steelblue: any task colour would do


def legend_entries():
    mem = QtGui.QColor(group_color("framebuffer"))
    mem.setAlpha(90)
    return [("running", blend_with_white(SAMPLE, ALPHA_RUNNING)),
            ("ready (45 %)", blend_with_white(SAMPLE, ALPHA_READY)),
            ("waiting, or in a call it made (15 %)", blend_with_white(SAMPLE, ALPHA_WAITING)),
            ("merged: too small to draw (count)", GRAY),
            ("utilization / memory in use", mem)]


def paint_legend(p: QtGui.QPainter, x: float, y: float, text_color=QtGui.QColor(30, 30, 30),
                 height: float = 14.0) -> float:
    """Swatches and words left to right from (x, y); returns the x where it ended."""
    f = QtGui.QFont(p.font())
    f.setPointSizeF(8.5)
    p.setFont(f)
    fm = QtGui.QFontMetricsF(f)
    for label, color in legend_entries():
        p.fillRect(QtCore.QRectF(x, y + 2, 18, height - 4), color)
        p.setPen(QtGui.QColor(110, 110, 110))
        p.drawRect(QtCore.QRectF(x, y + 2, 18, height - 4))
        p.setPen(text_color)
        p.drawText(QtCore.QPointF(x + 23, y + height - 3), label)
        x += 23 + fm.horizontalAdvance(label) + 16
    return x


class LegendWidget(QtWidgets.QWidget):
    """The legend as a toolbar widget."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setMinimumHeight(20)
        self.setMinimumWidth(760)

    def paintEvent(self, ev):  # noqa: N802 - Qt's name
        p = QtGui.QPainter(self)
        try:
            paint_legend(p, 6, 3)
        finally:
            p.end()
