"""Axes: time ticks with units, and the lane-tree labels (click a group to toggle)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore

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


class LaneAxis(pg.AxisItem):
    """Left axis: lane-tree labels at each entry; a click on a group toggles its lanes."""

    toggled = QtCore.Signal(object, str)

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.layout = None
        self.setStyle(tickLength=0, autoExpandTextSpace=False, hideOverlappingLabels=False)
        self.setWidth(170)

    def set_layout(self, layout: LaneLayout):
        self.layout = layout
        ticks = []
        for e in layout.entries:
            if e.kind == "header":
                ticks.append((e.y + e.height / 2, e.label))
            elif e.kind == "summary":
                mark = "" if e.rank is None else ("▾ " if e.expanded else "▸ ")
                ticks.append((e.y + e.height / 2, f"{mark}{e.label}"))
            else:
                ticks.append((e.y + e.height / 2, f"      {e.label}"))
        self.setTicks([ticks, []])

    def mouseClickEvent(self, ev):
        if self.layout is None or ev.button() != QtCore.Qt.MouseButton.LeftButton:
            return
        vb = self.linkedView()
        y = vb.mapSceneToView(ev.scenePos()).y()
        e = self.layout.entry_at(y)
        if e is not None and e.kind == "summary" and e.rank is not None:
            self.toggled.emit(e.rank, e.group)
            ev.accept()
