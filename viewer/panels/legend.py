"""The legend: what the shades, gray bands and fills mean (window status bar and PNGs)."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from ..timeline.path_overlay import PATH_COLOR
from ..colors import ALPHA_READY, ALPHA_WAITING, GRAY, blend_with_white, group_color, name_color

_BASE = QtGui.QColor(70, 130, 180)  # a task colour to show the three states on


def legend_entries(critical=False, short=False):
    """(swatch colour, text) in reading order; ``critical``: the run's critical path is
    drawn; ``short``: the words of the window's status bar (its tooltip says the rest: the
    long ones left the status bar's messages no room)."""
    long = [(PATH_COLOR, "critical path (→ what held up what)", "critical path"),
            (QtGui.QBrush(PATH_COLOR, QtCore.Qt.BrushStyle.BDiagPattern),
             "inferred (a dashed link; hatched: rests on one)", "inferred")] if critical else []
    long += [
        (_BASE, "running", "running"),
        (blend_with_white(_BASE, ALPHA_READY), "ready", "ready"),
        (blend_with_white(_BASE, ALPHA_WAITING), "waiting", "waiting"),
        (GRAY, "merged (too small to draw; ×count, filled as busy)", "merged"),
        (blend_with_white(group_color("system"), 0.3), "memory / utilization fill", "fill"),
    ]
    return [(swatch, brief if short else text) for swatch, text, brief in long]


def paint_legend(p: QtGui.QPainter, x: float, y: float, h: float = 14.0, color=None,
                 critical=False, short=False) -> float:
    """Paint the legend in one line from (x, y); returns its width."""
    x0 = x
    for swatch, text in legend_entries(critical, short):
        x += paint_legend_entry(p, x, y, swatch, text, h, color) + 10
    return x - x0


def paint_legend_entry(p, x, y, swatch, text, h=14.0, color=None) -> float:
    """One entry of the legend at (x, y): its swatch, then its text; returns its width."""
    fm = QtGui.QFontMetrics(p.font())
    p.fillRect(QtCore.QRectF(x, y + 2, h - 4, h - 4), swatch)
    p.setPen(QtGui.QColor(120, 120, 120))
    p.drawRect(QtCore.QRectF(x, y + 2, h - 4, h - 4))
    p.setPen(color or QtGui.QColor(30, 30, 30))
    p.drawText(QtCore.QRectF(x + h, y, fm.horizontalAdvance(text) + 4, h),
               int(QtCore.Qt.AlignmentFlag.AlignVCenter), text)
    return h + fm.horizontalAdvance(text) + 4


def paint_name_legend(p: QtGui.QPainter, x: float, y: float, right: float, names,
                      h: float = 14.0) -> int:
    """After the states: "tasks:" and the colours of ``names`` (most time in view first)
    while they fit before ``right`` (the heading only with one at least); returns how many
    were named."""
    fm = QtGui.QFontMetrics(p.font())
    head = "tasks (most time in view):"
    first = fm.elidedText(names[0], QtCore.Qt.TextElideMode.ElideRight, 160) if names else ""
    if not names or x + fm.horizontalAdvance(head) + 10 + h + fm.horizontalAdvance(first) \
            + 14 > right:
        return 0  # (the heading with no name after it: a narrow screenshot, a review)
    p.setPen(QtGui.QColor(30, 30, 30))
    p.drawText(QtCore.QRectF(x, y, fm.horizontalAdvance(head) + 4, h),
               int(QtCore.Qt.AlignmentFlag.AlignVCenter), head)
    x += fm.horizontalAdvance(head) + 10
    shown = 0
    for name in names:
        text = fm.elidedText(name, QtCore.Qt.TextElideMode.ElideRight, 160)
        need = h + fm.horizontalAdvance(text) + 14
        if x + need > right:
            break
        p.fillRect(QtCore.QRectF(x, y + 2, h - 4, h - 4), name_color(name))
        p.setPen(QtGui.QColor(120, 120, 120))
        p.drawRect(QtCore.QRectF(x, y + 2, h - 4, h - 4))
        p.setPen(QtGui.QColor(30, 30, 30))
        p.drawText(QtCore.QRectF(x + h, y, fm.horizontalAdvance(text) + 4, h),
                   int(QtCore.Qt.AlignmentFlag.AlignVCenter), text)
        x += need
        shown += 1
    return shown


class LegendWidget(QtWidgets.QWidget):
    """The legend as a status-bar widget (the critical path's colour while it is drawn)."""

    critical = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._say_whole()

    def set_critical(self, on):
        self.critical = bool(on)
        self._say_whole()
        self.updateGeometry()
        self.update()

    def _say_whole(self):
        """The tooltip: every entry in its long words."""
        self.setToolTip("\n".join(f"· {text}" for _, text in legend_entries(self.critical)))

    def sizeHint(self):
        img = QtGui.QImage(1, 1, QtGui.QImage.Format.Format_RGB32)
        p = QtGui.QPainter(img)
        p.setFont(self.font())
        w = paint_legend(p, 0, 0, critical=self.critical, short=True)
        p.end()
        return QtCore.QSize(int(w) + 8, 18)

    def paintEvent(self, ev):
        p = QtGui.QPainter(self)
        try:
            paint_legend(p, 4, 2, critical=self.critical, short=True)
        finally:
            p.end()
