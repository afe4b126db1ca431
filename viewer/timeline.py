"""The timeline: a pyqtgraph plot whose one custom item paints what the model's queries return.

Per frame the work is bounded by visible lanes × pixels: each visible lane asks the model for
its draw list at the current resolution (boxes plus merged gray bands), each group summary for
its utilization in pixel bins, and everything is painted in device coordinates with one
``QPainter.drawRects`` call per colour.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets
from pyqtgraph.Qt import internals

from legate_prof.stats import format_ns
from legate_prof.trace_model import DrawRow

from .colors import (ALPHA_READY, ALPHA_WAITING, GRAY, blend_with_white, group_color,
                     name_color)
from .layout import ROW_H, LaneLayout

ROW_PX = 18  # pixels per row unit at the default vertical scale
GRID_MIN_PX = 4  # items narrower than 4 grid cells (2-4 view pixels) merge into gray bands
LABEL_MIN_PX = 48
MAX_LABELS = 400


format_time = format_ns  # the viewer shows times as the stats do, with µs


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


class TimelineItem(pg.GraphicsObject):
    """Paints headers, utilization lines, boxes, state shades and gray bands for the view."""

    def __init__(self, model, layout: LaneLayout):
        super().__init__()
        self.model = model
        self.layout = layout
        self.batch = RectBatch()
        self.selected = None  # item index
        self.matches = None  # sorted item indices of the current search
        self.t_range = model.time_range()
        self.last_stats = {}
        self._cache_key = None
        self._cache_img = None
        self._summary_cache = {}  # (rank, group) -> (bin_ns, first bin, values, generation)
        self._summary_img = {}  # (rank, group) -> (key, QImage of the strip, its scale)
        self._lane_cache = {}  # lane -> (grid ns, first cell, end cell, [DrawRow], generation)
        # Recomputing caches is time-sliced: each frame spends at most ``budget_s`` on it,
        # shows the previous resolution's data elsewhere and asks for another frame.
        # None = compute everything now (screenshots, tests).
        self.budget_s = None
        self._generation = 0
        self._deadline = 0.0
        self._computed = 0
        self._pending = False

    def set_layout(self, layout):
        self.prepareGeometryChange()
        self.layout = layout
        self.update()

    def boundingRect(self):
        t0, t1 = self.t_range
        return QtCore.QRectF(t0, 0, t1 - t0, max(self.layout.height, 1))

    # ---- painting -----------------------------------------------------------------------
    def paint(self, p, *args):
        """Paint the view; an unchanged view (cursor moves, hover, expose) reuses the last
        picture, so only a new time range or lane layout pays for the queries."""
        vb = self.getViewBox()
        if vb is None:
            return
        (x0, x1), (y0, y1) = vb.viewRange()
        tr = p.transform()
        sx, dx = tr.m11(), tr.dx()
        sy, dy = tr.m22(), tr.dy()
        if sx == 0 or sy == 0:
            return
        px_left, px_right = sx * x0 + dx, sx * x1 + dx
        top, bottom = sy * y0 + dy, sy * y1 + dy
        width = max(int(round(px_right - px_left)), 1)
        height = max(int(round(bottom - top)), 1)
        key = (x0, x1, y0, y1, width, height, sx, sy, id(self.layout.entries), self.selected,
               id(self.matches), len(self.model.markers))
        if key != self._cache_key:
            img = QtGui.QImage(width, height, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
            img.fill(QtCore.Qt.GlobalColor.transparent)
            q = QtGui.QPainter(img)
            q.setFont(p.font())
            q.translate(-px_left, -top)
            try:
                self._paint_view(q, x0, x1, y0, y1, sx, dx, sy, dy, px_left, width)
            except Exception as e:  # noqa: BLE001 - an exception leaving paint() kills Qt
                self._paint_failed(q, e, px_left, top, width)
            finally:
                q.end()  # a painter left active on the image would crash the blit below
            self._cache_key, self._cache_img = key, img
        p.save()
        p.resetTransform()
        p.drawImage(QtCore.QPointF(px_left, top), self._cache_img)
        p.restore()

    def _paint_failed(self, p, e, px_left, top, width):
        """Say once on stderr what failed, and in the picture, instead of dying in paint."""
        msg = f"could not draw this view ({type(e).__name__}: {e})"
        if msg != getattr(self, "_paint_error", None):
            self._paint_error = msg
            print(f"legate_prof: error: {msg}", file=sys.stderr)
        p.setPen(QtGui.QColor(200, 30, 30))
        p.drawText(QtCore.QRectF(px_left + 10, top + 10, max(width - 20, 10), 40),
                   int(QtCore.Qt.AlignmentFlag.AlignLeft), msg)

    def _paint_view(self, p, x0, x1, y0, y1, sx, dx, sy, dy, px_left, width):
        self._deadline = time.perf_counter() + (self.budget_s or 0.0)
        self._computed = 0
        self._pending = False
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)
        font = QtGui.QFont(p.font())
        font.setPointSizeF(8)
        p.setFont(font)
        batches = {}  # shade -> list of (x, width, y, height, colour key) per row
        labels = []
        n_rects = 0
        for e in self.layout.visible(y0, y1):
            top = sy * e.y + dy
            h = sy * e.height
            if e.kind == "header":
                p.fillRect(QtCore.QRectF(px_left, top, width, h), QtGui.QColor(235, 238, 245))
                continue
            if e.kind == "summary":
                self._paint_summary(p, e, x0, x1, px_left, width, top, h)
                continue
            n_rects += self._collect_lane(e, x0, x1, px_left, width, top, sy, batches, labels)
        self._flush(p, batches)
        self._paint_labels(p, labels)
        self._paint_selection(p, x0, x1, px_left, width, sx, dx, sy, dy)
        self._paint_markers(p, px_left, width, sx, dx, sy, dy, y0, y1)
        self.last_stats = {"rects": n_rects, "width": width, "pending": self._pending}
        if self._pending:  # some rows still show the previous resolution: another frame
            QtCore.QTimer.singleShot(0, self._continue)

    def _continue(self):
        self._cache_key = None
        self.update()

    def _may_compute(self):
        """Whether this frame may still recompute a cache entry (always at least one)."""
        if self.budget_s is None or self._computed == 0 or time.perf_counter() < self._deadline:
            self._computed += 1
            return True
        self._pending = True
        return False

    def _paint_summary(self, p, e, x0, x1, px_left, width, top, h):
        """The group's average-utilization line, filled below: the exact mean over bins of
        1.5-3 px anchored to absolute time.  The strip around the view is drawn once into an
        image; a pan only moves the image."""
        strip = self._summary_strip(e, x0, x1, width)
        if strip is None:
            p.fillRect(QtCore.QRectF(px_left, top, width, h), QtGui.QColor(250, 250, 250))
            return
        bin_ns, a, vals = strip
        scale = width / (x1 - x0)
        key = (bin_ns, a, len(vals), round(h, 3))
        cached = self._summary_img.get((e.rank, e.group))
        stale = cached is not None and (cached[0] != key or abs(cached[2] / scale - 1) > 1e-9)
        if cached is None or (stale and (cached[0] != key or self._may_compute())):
            if len(self._summary_img) > 256:
                self._summary_img.clear()
            cached = (key, self._render_summary(e.group, vals, bin_ns * scale, h), scale)
            self._summary_img[(e.rank, e.group)] = cached
        _, img, drawn_scale = cached
        x_img = px_left + (a * bin_ns - x0) * scale
        p.save()
        p.setClipRect(QtCore.QRectF(px_left, top, width, h + 1))
        if abs(drawn_scale / scale - 1) < 1e-9:
            p.drawImage(QtCore.QPointF(x_img, top), img)
        else:
            # zooming within the same bins: stretch the strip (bins stay at their exact
            # times) until a later frame has time to redraw it crisp
            target = QtCore.QRectF(x_img, top, img.width() * scale / drawn_scale, img.height())
            p.drawImage(target, img, QtCore.QRectF(img.rect()))
        p.restore()

    def refresh(self):
        """Treat every cached row as stale: they are recomputed (time-sliced if a budget is
        set) and shown meanwhile."""
        self._generation += 1
        self._summary_img.clear()
        self._cache_key = None
        self.update()

    def _render_summary(self, group, vals, bw, h):
        bins = len(vals)
        img = QtGui.QImage(max(int(np.ceil(bins * bw)) + 1, 1), max(int(np.ceil(h)) + 1, 1),
                           QtGui.QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(QtGui.QColor(250, 250, 250))
        p = QtGui.QPainter(img)
        try:
            u = np.clip(vals, 0, 1)
            xs = (np.arange(bins) + 0.5) * bw
            base = h - 2
            ys = base - u * (h - 5)
            color = group_color(group)
            # the area under the line: one bar per run of equal heights
            p.setPen(QtCore.Qt.PenStyle.NoPen)
            p.setBrush(blend_with_white(color, 0.3))
            runs = np.flatnonzero(np.concatenate([[True], ys[1:] != ys[:-1]]))
            widths = np.diff(np.concatenate([runs, [bins]])) * bw
            self.batch.draw(p, xs[runs] - bw / 2, ys[runs], widths, base - ys[runs])
            pen = QtGui.QPen(color)
            pen.setCosmetic(True)
            p.setPen(pen)
            p.setBrush(QtCore.Qt.BrushStyle.NoBrush)
            # numpy-backed polyline (pyqtgraph's arrayToQPolygonF): no Python object per point
            p.drawPolyline(pg.functions.arrayToQPolygonF(xs, ys))
            p.setPen(QtGui.QPen(QtGui.QColor(210, 210, 210)))
            p.drawLine(QtCore.QPointF(0, h), QtCore.QPointF(img.width(), h))
        finally:
            p.end()
        return img

    def _summary_strip(self, e, x0, x1, width):
        """(bin width in ns, first bin index, values) covering [x0, x1] and around it.

        Bins are ``bin_ns`` wide with ``bin_ns`` a power of two between 1.5 and 3 pixels, and
        start at multiples of it; values are computed for the view plus half a view on each
        side (Perfetto's buffered bounds) and kept until the view leaves them or the bin width
        changes.
        """
        bin_ns = 2.0 ** np.floor(np.log2(max(3.0 * (x1 - x0) / width, 1e-9)))
        lo, hi = int(np.floor(x0 / bin_ns)), int(np.ceil(x1 / bin_ns))
        key = (e.rank, e.group)
        hit = self._summary_cache.get(key)
        if hit is not None and hit[0] == bin_ns and hit[3] == self._generation and \
                hit[1] <= lo and hi <= hit[1] + len(hit[2]):
            return hit[:3]
        usable = hit is not None and hit[1] * hit[0] <= x0 and \
            x1 <= (hit[1] + len(hit[2])) * hit[0] and 0.125 <= hit[0] / bin_ns <= 8
        if not self._may_compute():
            # the previous bins until a later frame recomputes them; none yet: blank for now
            return hit[:3] if usable else None
        n = hi - lo
        a, b = lo - n // 2, hi + n // 2
        vals = self.model.utilization(e.group, e.rank, a * bin_ns, b * bin_ns, b - a)
        self._summary_cache[key] = (bin_ns, a, vals, self._generation)
        return bin_ns, a, vals

    def _lane_rows(self, lane, x0, x1, width):
        """The lane's draw list for this view, in view pixels.

        Computed on a grid of ``res`` ns per cell (a power of two, 0.5-1 view pixel) anchored
        to absolute time, for the view plus half a view on each side, and kept until the view
        leaves it or the zoom crosses a power of two: pans and small zooms reuse it.
        """
        res = 2.0 ** np.floor(np.log2(max((x1 - x0) / width, 1e-9)))
        lo, hi = int(np.floor(x0 / res)), int(np.ceil(x1 / res))
        hit = self._lane_cache.get(lane)
        fresh = hit is not None and hit[0] == res and hit[4] == self._generation and \
            hit[1] <= lo and hi <= hit[2]
        if not fresh:
            usable = hit is not None and hit[1] * hit[0] <= x0 and x1 <= hit[2] * hit[0] and \
                0.125 <= hit[0] / res <= 8
            if not self._may_compute():
                if not usable:
                    return []  # nothing to show yet; a later frame computes it
            else:
                n = hi - lo
                a, b = lo - n // 2, hi + n // 2
                rows = self.model.draw_list(lane, a * res, b * res, b - a, min_px=GRID_MIN_PX)
                hit = self._lane_cache[lane] = (res, a, b, rows, self._generation)
        res, a, _, rows, _ = hit
        k = res * width / (x1 - x0)  # view pixels per grid cell
        off = (a * res - x0) * width / (x1 - x0)
        out = []
        for dr in rows:
            bx0, bx1 = off + dr.box_x0 * k, off + dr.box_x1 * k
            keep = (bx1 >= -2) & (bx0 <= width + 2)
            gx0, gx1 = off + dr.band_x0 * k, off + dr.band_x1 * k
            gkeep = (gx1 >= -2) & (gx0 <= width + 2)
            out.append(DrawRow(dr.lane, dr.row, bx0[keep], bx1[keep], dr.box_item[keep],
                               gx0[gkeep], gx1[gkeep], dr.band_count[gkeep],
                               dr.band_first[gkeep]))
        return out

    def _collect_lane(self, e, x0, x1, px_left, width, top, sy, batches, labels):
        m = self.model
        row_px = sy * ROW_H
        gap = 1.0 if row_px > 4 else 0.0
        n = 0
        names = m.items["name"]
        dim = self.matches is not None
        for dr in self._lane_rows(e.lane, x0, x1, width):
            y = top + dr.row * row_px + gap
            hh = max(row_px - 2 * gap, 1.0)
            if len(dr.box_item):
                bx = px_left + np.clip(dr.box_x0, -2, width + 2)
                bw = np.maximum(px_left + np.clip(dr.box_x1, -2, width + 2) - bx, 1.0)
                nid = names[dr.box_item]
                if dim:
                    hit = _member(dr.box_item, self.matches)
                    key = np.where(hit, nid, -2 - nid)  # negative keys: dimmed colours
                else:
                    key = nid
                batches.setdefault("name", []).append((bx, bw, y, hh, key))
                n += len(dr.box_item)
                self._collect_waits(dr, bx, bw, y, hh, px_left, width, x0, x1, batches)
                if hh >= 9:
                    wide = np.flatnonzero(bw >= LABEL_MIN_PX)
                    for j in wide[: MAX_LABELS - len(labels)].tolist():
                        labels.append((bx[j], y, bw[j], hh, int(dr.box_item[j])))
            if len(dr.band_count):
                bx = px_left + np.clip(dr.band_x0, -2, width + 2)
                bw = np.maximum(px_left + np.clip(dr.band_x1, -2, width + 2) - bx, 1.0)
                batches.setdefault("gray", []).append((bx, bw, y, hh, np.zeros(len(bx), int)))
                n += len(bx)
                if hh >= 9:
                    wide = np.flatnonzero(bw >= 30)
                    for j in wide[: MAX_LABELS - len(labels)].tolist():
                        labels.append((bx[j], y, bw[j], hh, -int(dr.band_count[j])))
        return n

    def _collect_waits(self, dr, bx, bw, y, hh, px_left, width, x0, x1, batches):
        """Waiting (15%) and ready (45%) shades over boxes of tasks that waited."""
        w = self.model.waits
        if len(w["item"]) == 0:
            return
        items = dr.box_item
        lo = np.searchsorted(w["item"], items, side="left")
        hi = np.searchsorted(w["item"], items, side="right")
        has = np.flatnonzero(hi > lo)
        if len(has) == 0:
            return
        idx = np.concatenate([np.arange(lo[j], hi[j]) for j in has.tolist()])
        owner = np.repeat(has, (hi - lo)[has])
        scale = width / (x1 - x0)
        names = self.model.items["name"][items[owner]]
        for a, b, shade in (("start", "ready", "waiting"), ("ready", "end", "ready")):
            xa = px_left + np.clip((w[a][idx] - x0) * scale, -2, width + 2)
            xb = px_left + np.clip((w[b][idx] - x0) * scale, -2, width + 2)
            ok = xb - xa >= 0.5
            batches.setdefault(shade, []).append((xa[ok], xb[ok] - xa[ok], y, hh, names[ok]))

    def _color_for(self, key):
        kind, k = key
        if kind == "gray":
            return GRAY if self.matches is None else blend_with_white(GRAY, 0.35)
        if k < 0 and kind == "name":
            base = name_color(self.model.names[-2 - k])
            return blend_with_white(base, 0.2)
        base = name_color(self.model.names[k])
        if kind == "waiting":
            return blend_with_white(base, ALPHA_WAITING)
        if kind == "ready":
            return blend_with_white(base, ALPHA_READY)
        return base

    def _flush(self, p, batches):
        """One drawRects per colour for the whole frame: rows are gathered per shade, then
        sorted by colour key once."""
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        for shade in ("gray", "name", "waiting", "ready"):
            parts = batches.get(shade)
            if not parts:
                continue
            x = np.concatenate([a[0] for a in parts])
            w = np.concatenate([a[1] for a in parts])
            counts = [len(a[0]) for a in parts]
            y = np.repeat([a[2] for a in parts], counts)
            h = np.repeat([a[3] for a in parts], counts)
            key = np.concatenate([a[4] for a in parts])
            if len(key) == 0:
                continue
            order = np.argsort(key, kind="stable")
            ks = key[order]
            cuts = np.concatenate([[0], np.flatnonzero(np.diff(ks)) + 1, [len(ks)]])
            for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
                sel = order[a:b]
                p.setBrush(self._color_for((shade, int(ks[a]))))
                self.batch.draw(p, x[sel], y[sel], w[sel], h[sel])

    def _paint_labels(self, p, labels):
        if not labels:
            return
        fm = QtGui.QFontMetrics(p.font())
        p.setPen(QtGui.QColor(20, 20, 20))
        for x, y, w, h, item in labels:
            if item < 0:
                text = f"{-item} merged"
                if fm.horizontalAdvance(text) > w - 4:
                    text = str(-item)
                p.setPen(QtGui.QColor(255, 255, 255))
            else:
                text = self.model.item_title(item)
                p.setPen(QtGui.QColor(20, 20, 20))
            text = fm.elidedText(text, QtCore.Qt.TextElideMode.ElideRight, int(w) - 4)
            if text and text != "…":
                p.drawText(QtCore.QRectF(x + 2, y, w - 4, h),
                           int(QtCore.Qt.AlignmentFlag.AlignVCenter
                               | QtCore.Qt.AlignmentFlag.AlignLeft), text)

    def _paint_selection(self, p, x0, x1, px_left, width, sx, dx, sy, dy):
        i = self.selected
        if i is None:
            return
        m = self.model
        e = self.layout.find_lane(int(m.items["lane"][i]))
        if e is None:
            return
        a = sx * float(m.items["start"][i]) + dx
        b = sx * float(m.items["stop"][i]) + dx
        top = sy * (e.y + int(m.items["row"][i]) * ROW_H) + dy
        pen = QtGui.QPen(QtGui.QColor(220, 0, 0))
        pen.setWidthF(2)
        p.setPen(pen)
        p.setBrush(QtCore.Qt.BrushStyle.NoBrush)
        p.drawRect(QtCore.QRectF(a - 1, top, max(b - a, 3) + 2, sy * ROW_H))

    def _paint_markers(self, p, px_left, width, sx, dx, sy, dy, y0, y1):
        """Out-of-memory (and other) markers: a red line through all lanes, and a label."""
        red = QtGui.QColor(210, 20, 20)
        for m in self.model.markers:
            x = sx * float(m["time"]) + dx
            if not (px_left - 1 <= x <= px_left + width + 1):
                continue
            pen = QtGui.QPen(red)
            pen.setWidthF(2)
            pen.setStyle(QtCore.Qt.PenStyle.DashLine)
            p.setPen(pen)
            top, bottom = sy * y0 + dy, sy * y1 + dy
            p.drawLine(QtCore.QPointF(x, top), QtCore.QPointF(x, bottom))
            rep = m.get("report", {})
            text = f"OOM: {rep.get('requested_bytes', 0):,} B in {rep.get('memory_kind', '?')}"
            site = rep.get("provenance") or ""
            if site:
                text += f" at {site.rsplit('/', 1)[-1]}"
            fm = QtGui.QFontMetrics(p.font())
            tw = fm.horizontalAdvance(text) + 8
            bx = min(max(x - tw, px_left), px_left + width - tw)
            box = QtCore.QRectF(bx, top + 2, tw, fm.height() + 4)
            p.fillRect(box, red)
            p.setPen(QtGui.QColor(255, 255, 255))
            p.drawText(box, int(QtCore.Qt.AlignmentFlag.AlignCenter), text)

    # ---- hit testing -------------------------------------------------------------------
    def hit(self, t, y, ns_per_px):
        """(kind, payload) under the point: ('item', index) or ('band', (t0, t1, count))."""
        e = self.layout.entry_at(y)
        if e is None or e.kind != "lane":
            return None, e
        m = self.model
        row = int((y - e.y) / ROW_H)
        pad = 3 * ns_per_px
        cand = m.items_in(e.lane, t - pad, t + pad)
        cand = cand[m.items["row"][cand] == row]
        if len(cand) == 0:
            return None, e
        dur = m.items["stop"][cand] - m.items["start"][cand]
        wide = cand[dur >= 3 * ns_per_px]
        if len(wide):
            inside = wide[(m.items["start"][wide] <= t) & (m.items["stop"][wide] >= t)]
            if len(inside):
                return ("item", int(inside[0])), e
        if len(cand) == 1:
            return ("item", int(cand[0])), e
        # a merged band: report its extent around the point
        a = int(m.items["start"][cand].min())
        b = int(m.items["stop"][cand].max())
        return ("band", (a, b, len(cand), e.lane, row)), e


def _member(items, sorted_set):
    pos = np.searchsorted(sorted_set, items)
    pos = np.clip(pos, 0, len(sorted_set) - 1)
    return sorted_set[pos] == items if len(sorted_set) else np.zeros(len(items), bool)


class TimelineViewBox(pg.ViewBox):
    """Wheel zooms time at the cursor; drag pans; Shift-drag or right-drag selects an interval."""

    intervalSelected = QtCore.Signal(float, float)
    interactionFinished = QtCore.Signal()

    def __init__(self):
        super().__init__(invertY=True, enableMenu=False)
        self.setMouseEnabled(x=True, y=True)
        self._band_start = None

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


class TimelineWidget(pg.PlotWidget):
    """The timeline view: axes, lane labels, the painted item, cursor, history, keys."""

    itemClicked = QtCore.Signal(object)  # ('item', idx) | ('band', (...)) | None
    viewChanged = QtCore.Signal(float, float)

    def __init__(self, model, layout: LaneLayout | None = None, parent=None):
        self.vb = TimelineViewBox()
        self.time_axis = TimeAxis("bottom")
        self.lane_axis = LaneAxis("left")
        super().__init__(parent=parent, viewBox=self.vb,
                         axisItems={"bottom": self.time_axis, "left": self.lane_axis,
                                    "top": TimeAxis("top")})
        self.setBackground("w")
        self.row_px = ROW_PX
        self.model = model
        self.lane_layout = layout or LaneLayout.default(model)
        pi = self.getPlotItem()
        pi.showAxis("top")
        pi.hideButtons()
        pi.setMenuEnabled(False)
        for ax in ("bottom", "top", "left"):
            a = pi.getAxis(ax)
            a.setPen(pg.mkPen(90, 90, 90))
            a.setTextPen(pg.mkPen(30, 30, 30))
        self.item = TimelineItem(model, self.lane_layout)
        self.addItem(self.item)
        self.cursor = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(0, 0, 0, 120))
        self.cursor_label = pg.TextItem(color=(0, 0, 0), anchor=(0, 1), fill=(255, 255, 255, 200))
        self.addItem(self.cursor, ignoreBounds=True)
        self.addItem(self.cursor_label, ignoreBounds=True)
        self.lane_axis.set_layout(self.lane_layout)
        self.lane_axis.toggled.connect(self.toggle_group)
        self.vb.intervalSelected.connect(lambda a, b: self.set_time_range(a, b))
        self.vb.interactionFinished.connect(self._remember)
        self.scene().sigMouseMoved.connect(self._mouse_moved)
        self.scene().sigMouseClicked.connect(self._mouse_clicked)
        self.history = []
        self.future = []
        self._apply_limits()
        t0, t1 = model.time_range()
        self.set_time_range(t0, t1, remember=False)
        self.history = [(t0, t1)]
        self.setFocusPolicy(QtCore.Qt.FocusPolicy.StrongFocus)

    # ---- view range ---------------------------------------------------------------------
    def set_extent(self, t0, t1):
        """Allow panning over [t0, t1] even beyond this run (runs compared on one scale)."""
        self._extent = (t0, t1)
        self._apply_limits()

    def _apply_limits(self):
        t0, t1 = getattr(self, "_extent", None) or self.model.time_range()
        pad = (t1 - t0) * 0.05
        self.vb.setLimits(xMin=t0 - pad, xMax=t1 + pad, minXRange=50, yMin=0,
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

    def redo(self):
        if self.future:
            r = self.future.pop()
            self.history.append(r)
            self.vb.setXRange(*r, padding=0)

    def zoom(self, factor, center=None):
        a, b = self.time_range()
        c = (a + b) / 2 if center is None else center
        self.set_time_range(c - (c - a) * factor, c + (b - c) * factor)

    def pan(self, frac):
        a, b = self.time_range()
        d = (b - a) * frac
        self.set_time_range(a + d, b + d)

    def reset(self):
        self.set_time_range(*self.model.time_range())

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

    # ---- search -------------------------------------------------------------------------
    def set_matches(self, matches):
        self.item.matches = None if matches is None else np.sort(np.asarray(matches))
        self.item.update()

    def select(self, index):
        self.item.selected = index
        self.item.update()

    def show_item(self, index, zoom=True):
        """Pan (and zoom) to an item, expanding its group so it is visible."""
        m = self.model
        lane = int(m.items["lane"][index])
        key = (int(m.lanes["rank"][lane]), m.lane_group(lane))
        if key not in self.lane_layout.expanded:
            self.lane_layout.expanded.add(key)
            self.lane_layout.rebuild()
            self._relayout()
        a, b = int(m.items["start"][index]), int(m.items["stop"][index])
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
        self.cursor_label.setText(format_time(p.x()))
        self.cursor_label.setPos(p.x(), self.vb.viewRange()[1][1])
        hit, entry = self.item.hit(p.x(), p.y(), self._ns_per_px())
        if hit is None:
            if entry is not None and entry.kind == "summary":
                a, b = self.time_range()
                u = self.model.utilization(entry.group, entry.rank, p.x() - self._ns_per_px(),
                                           p.x() + self._ns_per_px(), 1)[0]
                QtWidgets.QToolTip.showText(QtGui.QCursor.pos(),
                                            f"{entry.label}: {u * 100:.0f}% utilization")
            else:
                QtWidgets.QToolTip.hideText()
            return
        QtWidgets.QToolTip.showText(QtGui.QCursor.pos(), tooltip_html(self.model, hit))

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


def tooltip_html(model, hit):
    kind, payload = hit
    if kind == "band":
        a, b, n, _lane, _row = payload
        return (f"<b>{n} merged items</b><br>{format_time(a)} – {format_time(b)}"
                "<br><i>zoom in (double-click) to split</i>")
    d = model.item_details(payload)
    rows = [f"<b>{_esc(d['title'])}</b>"]
    for k in ("provenance", "lane", "duration_ns", "waiting_ns", "deferred_ns", "delayed_ns",
              "size_bytes", "bandwidth_GBps", "source", "destination", "memory"):
        if k in d:
            rows.append(f"{_label(k)}: {_esc(_value(k, d[k]))}")
    rows.append("<i>(click to show details)</i>")
    return "<br>".join(rows)


def _label(k):
    return {"duration_ns": "Duration", "waiting_ns": "Waiting", "deferred_ns": "Deferred",
            "delayed_ns": "Delayed", "size_bytes": "Size", "bandwidth_GBps": "Bandwidth",
            "running_ns": "Running", "create_ns": "Create", "ready_ns": "Ready",
            "start_ns": "Start", "stop_ns": "Stop", "lifetime_ns": "Lifetime",
            "op_id": "Operation"}.get(k, k.replace("_", " ").capitalize())


def _value(k, v):
    if k.endswith("_ns") and isinstance(v, int):
        return format_time(v)
    if k == "size_bytes":
        return f"{v:,} bytes"
    if k == "bandwidth_GBps":
        return f"{v:.2f} GB/s"
    return str(v)


def _esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def details_rows(model, hit):
    """(label, value) rows for the pinned detail panel."""
    kind, payload = hit
    if kind == "band":
        a, b, n, lane, row = payload
        return [("Merged items", str(n)), ("Lane", model.lanes["title"][lane]),
                ("From", format_time(a)), ("To", format_time(b))]
    d = model.item_details(payload)
    order = ["title", "name", "variant", "kind", "op_id", "rank", "lane", "provenance",
             "create_ns", "ready_ns", "start_ns", "stop_ns", "duration_ns", "running_ns",
             "deferred_ns", "delayed_ns", "waiting_ns", "size_bytes", "source", "destination",
             "bandwidth_GBps", "memory", "instance", "lifetime_ns"]
    rows = []
    for k in order:
        if k in d:
            rows.append((_label(k) if k != "title" else "Title", _value(k, d[k])))
    for i, w in enumerate(d.get("waits", [])[:20]):
        rows.append((f"Wait {i + 1}", f"{format_time(w['start_ns'])} – {format_time(w['end_ns'])}"
                     f" (ready at {format_time(w['ready_ns'])})"))
    return rows


__all__ = ["TimelineWidget", "TimelineItem", "format_time", "details_rows", "tooltip_html"]
