"""Axes: time ticks with units, and the lane-tree labels (click a group to toggle)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from .layout import LaneLayout
from ..plain_text import show_tooltip
from ..time_text import digits_for, unit_for


class TimeAxis(pg.AxisItem):
    def tickStrings(self, values, scale, spacing):
        """One unit for every tick of the view (from its larger end), decimals from the
        finest tick spacing shown: '1.0060 s, 1.0062 s', never '100 ms, 0.2 s'."""
        if not values:
            return []
        x0, x1 = self.range
        unit = unit_for(max(abs(x0), abs(x1)) or spacing)
        finest = spacing
        try:
            levels = self.tickSpacing(x0, x1, max(self.width() if self.orientation in (
                "left", "right") else self.geometry().width(), 1))
            finest = min([spacing] + [s for s, _ in levels if s > 0])
        except Exception:  # noqa: BLE001 - a spacing query must not stop the axis drawing
            pass
        digits = digits_for(finest, unit[1])
        return [f"{v / unit[1]:.{digits}f} {unit[0]}" for v in values]


MIN_LABEL_GAP_PX = 11.0  # about one line of the axis font


class LaneAxis(pg.AxisItem):
    """Left axis: lane-tree labels at each entry; a click on a group toggles its lanes."""

    toggled = QtCore.Signal(object, str)
    rankToggled = QtCore.Signal(object)  # a rank header clicked (None: all ranks)

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
                ticks.append((y, f"{'▾' if e.expanded else '▸'} {e.label}"))
            elif e.kind == "summary":
                mark = "" if e.rank is None else ("▾ " if e.expanded else "▸ ")
                ticks.append((y, f"   {mark}{e.label}"))
            elif e.kind == "path":  # the critical path's track: each row named, if it fits
                if e.track_row not in ("legend", "all") and px_per_unit and \
                        last_y is not None and (y - last_y) * px_per_unit < MIN_LABEL_GAP_PX:
                    continue
                ticks.append((y, e.label if e.track_row == "legend" else f"   {e.label}"))
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
        """Where a label is and what it names: "Rank 0 · cpu · c1" and the reference
        viewer's long name ("Node 0 CPU 1 Processor(0x…)"); groups and ranks say theirs."""
        e = self.layout.entry_at(y) if self.layout is not None else None
        return e.tooltip if e is not None else ""

    def hoverEvent(self, ev):
        if ev.isExit() or self.layout is None:
            QtWidgets.QToolTip.hideText()
            return
        y = self.linkedView().mapSceneToView(ev.scenePos()).y()
        text = self.entry_tooltip(y)
        if text:
            show_tooltip(QtGui.QCursor.pos(), text)

    def mouseClickEvent(self, ev):
        if self.layout is None or ev.button() != QtCore.Qt.MouseButton.LeftButton:
            return
        vb = self.linkedView()
        y = vb.mapSceneToView(ev.scenePos()).y()
        e = self.layout.entry_at(y)
        if e is not None and e.kind == "summary" and e.rank is not None:
            self.toggled.emit(e.rank, e.group)
            ev.accept()
        elif e is not None and e.kind == "header":
            self.rankToggled.emit(e.rank)
            ev.accept()
