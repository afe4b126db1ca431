"""Axes: time ticks with units, and the lane-tree labels (click a group to toggle)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from .layout import LaneLayout


class TimeAxis(pg.AxisItem):
    def tickStrings(self, values, scale, spacing):
        """Unit from the largest value, decimals from the tick spacing: '40.200 ms'."""
        if not values:
            return []
        ref = max(abs(v) for v in values) or spacing
        for unit, div in (("s", 1e9), ("ms", 1e6), ("µs", 1e3), ("ns", 1.0)):
            if ref >= div or div == 1.0:
                digits = min(6, max(0, int(np.ceil(-np.log10(spacing / div))))) if spacing < div else 0
                return [f"{v / div:.{digits}f} {unit}" for v in values]


MIN_LABEL_GAP_PX = 11.0  # about one line of the axis font


class LaneAxis(pg.AxisItem):
    """Left axis: lane-tree labels at each entry; a click on a group toggles its lanes."""

    toggled = QtCore.Signal(object, str)

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.layout = None
        self.setStyle(tickLength=0, autoExpandTextSpace=False, hideOverlappingLabels=False)
        self.setWidth(170)

    def set_layout(self, layout: LaneLayout, px_per_unit=None):
        """Labels for the entries; lane labels closer than ``MIN_LABEL_GAP_PX`` to a kept
        label are left out (their long names stay in the tooltip), so labels never overlap.
        Group and rank labels are always kept."""
        self.layout = layout
        self._px_per_unit = px_per_unit
        ticks = []
        last_y = None
        for e in layout.entries:
            y = e.y + e.height / 2
            if e.kind == "header":
                ticks.append((y, e.label))
            elif e.kind == "summary":
                mark = "" if e.rank is None else ("▾ " if e.expanded else "▸ ")
                ticks.append((y, f"{mark}{e.label}"))
            else:
                if px_per_unit and last_y is not None and \
                        (y - last_y) * px_per_unit < MIN_LABEL_GAP_PX:
                    continue
                ticks.append((y, f"      {e.label}"))
            last_y = y
        self.setTicks([ticks, []])

    def rescale(self, px_per_unit):
        """Re-thin the lane labels for a new vertical scale."""
        if self.layout is not None and px_per_unit != getattr(self, "_px_per_unit", None):
            self.set_layout(self.layout, px_per_unit)

    def entry_tooltip(self, y):
        """The long name for a label (the reference viewer's, e.g. "Node 0 CPU 1
        Processor(0x…)"); groups say their title."""
        e = self.layout.entry_at(y) if self.layout is not None else None
        return e.tooltip if e is not None else ""

    def hoverEvent(self, ev):
        if ev.isExit() or self.layout is None:
            QtWidgets.QToolTip.hideText()
            return
        y = self.linkedView().mapSceneToView(ev.scenePos()).y()
        text = self.entry_tooltip(y)
        if text:
            QtWidgets.QToolTip.showText(QtGui.QCursor.pos(), text)

    def mouseClickEvent(self, ev):
        if self.layout is None or ev.button() != QtCore.Qt.MouseButton.LeftButton:
            return
        vb = self.linkedView()
        y = vb.mapSceneToView(ev.scenePos()).y()
        e = self.layout.entry_at(y)
        if e is not None and e.kind == "summary" and e.rank is not None:
            self.toggled.emit(e.rank, e.group)
            ev.accept()
