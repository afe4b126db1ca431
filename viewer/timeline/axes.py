"""Axes: time ticks with units, and the lane-tree labels (click a group to toggle)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from .layout import LaneLayout
from ..plain_text import show_tooltip
from ..time_text import digits_for, unit_for


class TimeAxis(pg.AxisItem):
    """The time axes (top and bottom): pyqtgraph's ticks and labels, worked out faster.

    Every pan or wheel step lays the two axes out again; pyqtgraph's generic layout was a
    fifth of such a frame (a Python object per tick end, every label measured twice on a
    painter, the same ticks and labels made for each axis).  ``generateDrawSpecs`` here
    returns what pyqtgraph's returns for the way these axes are set up (no grid, automatic
    ticks; otherwise pyqtgraph's own is used): the ticks and labels are made once for both
    axes (``_SHARED``) and a label's size is measured once (``_TEXT_SIZE``)."""

    _SHARED = {}  # ("ticks" | "strings", what they were made from) -> the last made
    _TEXT_SIZE = {}  # (font key, label) -> its bounding rectangle on a painter

    def __init__(self, *a, **kw):
        self._explicit_ticks = False  # (``setTicks``: pyqtgraph's own layout then)
        self._tick_settings = (1.0, None)  # (density, spacing): what makes the ticks
        super().__init__(*a, **kw)

    def setTicks(self, ticks):
        self._explicit_ticks = ticks is not None
        super().setTicks(ticks)

    def setTickDensity(self, density=1.0):
        self._tick_settings = (density, self._tick_settings[1])
        super().setTickDensity(density)

    def setTickSpacing(self, major=None, minor=None, levels=None):
        self._tick_settings = (self._tick_settings[0], (major, minor, levels))
        super().setTickSpacing(major, minor, levels)

    def tickValues(self, minVal, maxVal, size):
        key = (minVal, maxVal, size, self.scale, self._tick_settings,
               self.style["maxTickLevel"], self.logMode)
        made = self._SHARED.get("ticks")
        if made is None or made[0] != key:
            made = self._SHARED["ticks"] = (key, super().tickValues(minVal, maxVal, size))
        return [(spacing, list(values)) for spacing, values in made[1]]

    def _shared_strings(self, values, scale, spacing):
        key = (tuple(values), scale, spacing, tuple(self.range), self.geometry().width())
        made = self._SHARED.get("strings")
        if made is None or made[0] != key:
            made = self._SHARED["strings"] = (key, self.tickStrings(values, scale, spacing))
        return list(made[1])

    def _text_rect(self, p, font_key, text):
        key = (font_key, text)
        r = self._TEXT_SIZE.get(key)
        if r is None:
            if len(self._TEXT_SIZE) > 4096:
                self._TEXT_SIZE.clear()
            r = self._TEXT_SIZE[key] = p.boundingRect(
                QtCore.QRectF(0, 0, 100, 100), QtCore.Qt.AlignmentFlag.AlignCenter, text)
        return QtCore.QRectF(r)

    def _generic_layout(self):
        """True where these axes are not set up as the fast layout assumes."""
        s = self.style
        return (self.orientation not in ("top", "bottom") or self.grid is not False or
                self._explicit_ticks or self.logMode or s["tickAlpha"] is not None
                or s["stopAxisAtTick"][0] or s["stopAxisAtTick"][1])

    def generateDrawSpecs(self, p):
        """(axis line, ticks, labels) as pyqtgraph's ``AxisItem.generateDrawSpecs`` makes
        them for a horizontal axis without a grid; its steps, in its order (a screen long,
        as that is)."""
        if self._generic_layout():
            return super().generateDrawSpecs(p)
        s = self.style
        if s["tickFont"] is not None:
            p.setFont(s["tickFont"])
        bounds = self.mapRectFromParent(self.geometry())
        if self.orientation == "top":
            span = (bounds.bottomLeft() + QtCore.QPointF(-1.0, -1.0),
                    bounds.bottomRight() + QtCore.QPointF(1.0, -1.0))
            tick_stop, tick_dir = bounds.bottom(), -1
        else:
            span = (bounds.topLeft() + QtCore.QPointF(-1.0, 1.0),
                    bounds.topRight() + QtCore.QPointF(1.0, 1.0))
            tick_stop, tick_dir = bounds.top(), 1
        points = [self.mapToDevice(q) for q in span]
        if None in points:
            return None
        length = pg.Point(points[1] - points[0]).length()
        if length == 0:
            return None
        r0, r1 = self.range
        levels = self.tickValues(r0, r1, length)
        dif = r1 - r0
        x_scale = 1 if dif == 0 else bounds.width() / dif
        offset = 0 if dif == 0 else r0 * x_scale
        x_range = [x * x_scale - offset for x in self.range]
        x_min, x_max = min(x_range), max(x_range)
        positions, tick_specs = [], []
        base_pen = self.tickPen()
        solid = base_pen.brush().style() == QtCore.Qt.BrushStyle.SolidPattern
        for i, (_spacing, ticks) in enumerate(levels):
            tick_pen = base_pen
            if solid:
                tick_pen = QtGui.QPen(base_pen)
                color = QtGui.QColor(tick_pen.color())
                color.setAlpha(int(255 / (i + 1)))
                tick_pen.setColor(color)
            end = tick_stop + s["tickLength"] / ((i * 0.5) + 1.0) * tick_dir
            at = []
            for v in ticks:
                x = (v * x_scale) - offset
                if x < x_min or x > x_max:
                    at.append(None)
                    continue
                at.append(x)
                tick_specs.append((tick_pen, QtCore.QPointF(x, tick_stop),
                                   QtCore.QPointF(x, end)))
            positions.append(at)
        axis_spec = (self.pen(), span[0], span[1])
        if not s["showValues"]:
            return axis_spec, tick_specs, []
        return axis_spec, tick_specs, self._label_specs(p, levels, positions, length, tick_stop)

    def _label_specs(self, p, levels, positions, length, tick_stop):
        """The labels' (rectangle, flags, text), level by level until they crowd (pyqtgraph's
        rule: ``textFillLimits``); also pyqtgraph's record of the text's size."""
        s = self.style
        font_key = p.font().key()
        text_rects, text_specs = [], []
        last_size2 = 0
        offset = max(0, s["tickLength"]) + s["tickTextOffset"][1]
        top = self.orientation == "top"
        flags = (QtCore.Qt.AlignmentFlag.AlignHCenter |
                 (QtCore.Qt.AlignmentFlag.AlignBottom if top else QtCore.Qt.AlignmentFlag.AlignTop)
                 | QtCore.Qt.TextFlag.TextDontClip)
        box = self.boundingRect()
        for i in range(min(len(levels), s["maxTextLevel"] + 1)):
            spacing, values = levels[i]
            strings = self._shared_strings(values, self.autoSIPrefixScale * self.scale, spacing)
            if len(strings) == 0:
                continue
            rects = []
            for j, text in enumerate(strings):
                if positions[i][j] is None:
                    strings[j] = None
                    rects.append(None)
                    continue
                br = self._text_rect(p, font_key, text)
                br.setHeight(br.height() * 0.8)
                rects.append(br)
                text_rects.append(br)
            if text_rects:
                size = np.sum([r.width() for r in text_rects])
                size2 = np.max([r.height() for r in text_rects])
            else:
                size = size2 = 0
            if i > 0 and any(len(text_specs) >= n and float(size) / length >= limit
                             for n, limit in s["textFillLimits"]):
                break
            last_size2 = size2
            for j, text in enumerate(strings):
                if text is None:
                    continue
                x, r = positions[i][j], rects[j]
                h, w = r.height(), r.width()
                rect = QtCore.QRectF(x - w / 2., tick_stop - offset - h if top else
                                     tick_stop + offset, w, h)
                if box & rect != rect:
                    continue
                text_specs.append((rect, flags, text))
        self._keep_text_height(last_size2)
        return text_specs

    def _keep_text_height(self, x):
        """pyqtgraph's record of its labels' height for a horizontal axis (its
        ``_updateMaxTextSize``), through its public names: the axis grows to fit them."""
        if self.style["autoReduceTextSpace"]:
            if x > self.textHeight or x < self.textHeight - 10:
                self.textHeight = x
        else:
            mx = max(self.textHeight, x)
            if mx > self.textHeight or mx < self.textHeight - 10:
                self.textHeight = mx
        if self.style["autoExpandTextSpace"]:
            self.setHeight(self.fixedHeight)

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
FITTED_KEPT = 65536  # labels fitted to the axis kept at once (``LaneAxis._fitter``)


class LaneAxis(pg.AxisItem):
    """Left axis: lane-tree labels at each entry; a click on a group toggles its lanes."""

    toggled = QtCore.Signal(object, str)
    rankToggled = QtCore.Signal(object)  # a rank header clicked (None: all ranks)

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.layout = None
        self._fits = None  # ((the width and font fitted to), {text: as fitted}): ``_fitter``
        self.setStyle(tickLength=0, autoExpandTextSpace=False, hideOverlappingLabels=False)
        self.setWidth(170)

    def set_layout(self, layout: LaneLayout, px_per_unit=None):
        """Labels for the entries; lane labels closer than ``MIN_LABEL_GAP_PX`` to a kept
        label are left out (their long names stay in the tooltip), so labels never overlap.
        Group and rank labels are always kept."""
        self.layout = layout
        self._px_per_unit = px_per_unit
        ticks = []  # (y, text, whether it may be left out: a lane's, a path row's)
        last_y = None
        for e in layout.entries:
            y = e.y + e.height / 2
            close = px_per_unit and last_y is not None and \
                (y - last_y) * px_per_unit < MIN_LABEL_GAP_PX
            if e.kind in ("header", "summary"):
                if close and ticks[-1][2]:
                    ticks.pop()  # (a lane's label just above a rank's: Compact drew both)
                mark = ("▾ " if e.expanded else "▸ ") if e.kind == "header" or \
                    e.rank is not None else ""
                ticks.append((y, f"{mark}{e.label}" if e.kind == "header"
                              else f"   {mark}{e.label}", False))
            elif e.kind == "path":  # the critical path's track: each row named, if it fits
                kept = e.track_row in ("legend", "all")
                if close and not kept:
                    continue
                ticks.append((y, e.label if e.track_row == "legend" else f"   {e.label}",
                              not kept))
            else:
                if close:
                    continue
                ticks.append((y, f"      {e.label}", True))
            last_y = y
        fitted = self._fitter()
        self.setTicks([[(y, fitted(text)) for y, text, _ in ticks], []])

    def _fitter(self):
        """A label's text cut with an ellipsis to the axis's width (pyqtgraph leaves out a
        label wider than its axis: "All 2 ranks (1 shown below)" was not drawn at all); each
        text fitted once for the axis's width and font (a layout fits every label again, and
        1,000 ranks' 12,000 labels, most of them the same few group names, measured four
        times took 0.3 s of the window's first frame)."""
        room = self.width() - self.style["tickTextOffset"][0] - 4
        font = self.style["tickFont"] or QtGui.QFont()
        fits = self._fits
        if fits is None or fits[0] != (room, font.key()) or len(fits[1]) > FITTED_KEPT:
            fits = self._fits = ((room, font.key()), {})
        known, metrics = fits[1], QtGui.QFontMetricsF(font)

        def fitted(text):
            got = known.get(text)
            if got is None:
                got = known[text] = text if metrics.horizontalAdvance(text) <= room else \
                    metrics.elidedText(text, QtCore.Qt.TextElideMode.ElideRight, room)
            return got
        return fitted

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
