"""The painted item: headers, utilization rows, lane tiles (boxes, state pieces, gray bands,
labels), selection and markers, from the query API.

Per frame the work is bounded by visible lanes × pixels; an exception while painting is
caught, reported once and the rest still drawn.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from legate_prof.present.colors import ALPHA_BAND as BAND_ALPHA
from legate_prof.present.limits import LABEL_MIN_PX, MAX_LABELS
from legate_prof.present.units import format_bytes
from legate_prof.query import READY, WAITING, as_source

from ..colors import (ALPHA_READY, ALPHA_WAITING, GRAY, blend_with_white, group_color,
                     name_color)
from .layout import LaneLayout
from .rect_batch import RectBatch
from .summary_strip import BoxText, DottedLines, ScaleText, draw_strip, strip_picture
from .tile_cache import GridCache, cells_for, is_exact
from .tile_worker import Ask, TileWorker



SCALE_TEXT = QtGui.QColor(90, 90, 90)  # the scale marks' labels
OVER_TEXT = QtGui.QColor(170, 0, 0)  # the top label of a memory row used past its capacity
# behind a scale label the row's line runs through (near full, a "100%" crossed out by its
# line was hard to read: a GUI walk); a label the line keeps clear of is drawn as it was
LABEL_BACK = QtGui.QColor(250, 250, 250, 225)
COUNT_CHIP = QtGui.QColor(242, 242, 242, 235)  # behind a merged band's count
COUNT_TEXT = QtGui.QColor(40, 40, 40)  # a merged band's count
ITEM_TEXT = QtGui.QColor(20, 20, 20)  # a box's label
# tiles arriving while others are computed are drawn together this often (each such frame
# of the whole view is ~10 ms of the window's thread, its interpreter's lock held for most of
# it: at 16 ms they were a third of a cached first frame's work while its strips came in)
ARRIVALS_MS = 50
REST_MS = 100  # a view unchanged this long is at rest: drawn from its own tiles (``_at_rest``)
# A frame draws the strips of rows appearing whose values are at hand for up to this long
# (``_summary_strip``); the rest come from the tiles' thread.
STRIPS_IN_FRAME_S = 0.05
LANE_RULE = QtGui.QColor(222, 226, 234)  # between two lanes of one group


class ViewRow:
    """One tile row mapped to view pixels (boxes, bands and the ready/waiting pieces)."""

    __slots__ = ("row", "box_x0", "box_x1", "box_item", "box_name", "band_x0", "band_x1",
                 "band_count", "band_busy", "piece_x0", "piece_x1", "piece_state",
                 "piece_name")

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)


class FlatRows:
    """A lane tile's rows end to end, column by column: a frame maps all of them to view
    pixels in a few numpy steps (row by row it was ~34 small ones a row, a fifth of a
    wheel step's frame with the cpu and utility lanes open), then cuts them back into its
    rows (``ViewRow``s of views).  The same operations on the same values as row by row."""

    BOX = ("box_x0", "box_x1", "box_item", "box_name")
    BAND = ("band_x0", "band_x1", "band_count", "band_busy")
    PIECE = ("piece_x0", "piece_x1", "piece_state", "piece_name")

    def __init__(self, rows, columns, starts):
        self.rows = rows  # each row's number
        self.columns = columns  # name -> the rows' arrays end to end
        self.starts = starts  # "box" | "band" | "piece" -> where each row's begin (and end)

    @classmethod
    def of(cls, tile):
        """The tile's rows end to end, or None where a column's type differs from row to
        row (joined, some would change type: drawn row by row, as they are)."""
        rows = tile.rows
        columns, starts = {}, {}
        for part, names in (("box", cls.BOX), ("band", cls.BAND), ("piece", cls.PIECE)):
            lengths = [len(getattr(r, names[0])) for r in rows]
            starts[part] = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
            for name in names:
                arrays = [getattr(r, name) for r in rows]
                if name == "band_busy":  # (a row without shares: its bands ran all along)
                    arrays = [np.ones(n, np.float32) if a is None else a
                              for a, n in zip(arrays, lengths)]
                if len({a.dtype for a in arrays}) > 1:
                    return None
                columns[name] = (np.concatenate(arrays) if arrays else np.zeros(0))
        return cls([r.row for r in rows], columns, starts)

    def in_view(self, off, k, width):
        """The rows' ``ViewRow``s for a view where the tile's column c is at view pixel
        off + c * k (of ``width``): what is within 2 px of the view, as row by row."""
        c = self.columns
        parts = {}
        for part, (x0, x1, *rest) in (("box", self.BOX), ("band", self.BAND),
                                      ("piece", self.PIECE)):
            a, b = off + c[x0] * k, off + c[x1] * k
            keep = (b >= -2) & (a <= width + 2)
            if part == "piece":
                keep &= c["piece_state"] != 0
            kept = np.concatenate([[0], np.cumsum(keep, dtype=np.int64)])[self.starts[part]]
            parts[part] = (kept.tolist(), [a[keep], b[keep]] + [c[n][keep] for n in rest])
        out = []
        (bs, box), (gs, band), (ps, piece) = parts["box"], parts["band"], parts["piece"]
        for i, row in enumerate(self.rows):
            b0, b1, g0, g1, p0, p1 = bs[i], bs[i + 1], gs[i], gs[i + 1], ps[i], ps[i + 1]
            out.append(ViewRow(row=row, box_x0=box[0][b0:b1], box_x1=box[1][b0:b1],
                               box_item=box[2][b0:b1], box_name=box[3][b0:b1],
                               band_x0=band[0][g0:g1], band_x1=band[1][g0:g1],
                               band_count=band[2][g0:g1], band_busy=band[3][g0:g1],
                               piece_x0=piece[0][p0:p1], piece_x1=piece[1][p0:p1],
                               piece_state=piece[2][p0:p1], piece_name=piece[3][p0:p1]))
        return out


class TimelineItem(pg.GraphicsObject):
    """Paints headers, utilization lines, boxes, state shades and gray bands for the view."""

    def __init__(self, model, layout: LaneLayout):
        super().__init__()
        self.source = as_source(model)
        self.layout = layout
        self.paint_errors = []  # messages of exceptions caught while painting (each once)
        self.batch = RectBatch()
        self.selected = None  # item index
        self.matches = None  # sorted item indices of the current search
        self.path = None  # path_overlay.PathOverlay of the run's critical path, once computed
        self.path_shown = False  # drawn over the lanes (its items in full colour, others dim)
        self._hl = None  # what this frame shows in full colour: the matches, else the path
        self.t_range = self.source.outline().time_range
        self.last_stats = {}
        self._cache_key = None
        self._cache_img = None
        self._gone = False  # (``let_go``: the timeline is going)
        self._summary_cache = GridCache(self.t_range)  # (rank, group) -> utilization bins
        self._summary_img = {}  # (rank, group) -> StripPicture of its strip, as last drawn
        self.renders_asked = 0  # strip pictures asked of the tiles' thread (counted, for tests)
        self.renders_made = 0  # ... and drawn in this thread
        self._lane_cache = GridCache(self.t_range)  # lane -> LaneTile (the tile drawn: hit
        #                                             tests use it)
        self._flat_rows = {}  # id(tile) -> (tile, its FlatRows): a lane's rows end to end
        self._match_cache = GridCache(self.t_range)  # lane -> its highlighted items per row
        self._match_for = None  # the highlighted ids the match cache holds
        self._bytes_scales = {}  # (rank, group) -> summary_bytes
        self._over = {}  # (rank, group) -> its use's peak over its capacity (``over_capacity``)
        self._vals_top = {}  # a strip's values -> (them, their largest): ``over_of``
        self._scale_styles = {}  # the scale marks' pen and font (``_scale_style``)
        self._scale_made = {}  # a row's scale marks, by its place and size (``_scale_marks``)
        self._shift = None  # the frame painter's (dx, dy) where it only moves (``_translation``)
        self._box_texts = None  # (painter state, the labels' ``BoxText``): ``_box_text``
        # Recomputing caches is time-sliced: each frame spends at most ``budget_s`` on it,
        # shows the previous resolution's data elsewhere and asks for another frame.
        # None = compute everything now (screenshots, tests).
        self.budget_s = None
        # a window's timeline computes its tiles in a thread (``compute_in_background``): a
        # frame draws what is there and asks for the rest, which arrives as it is done
        self.tiles = None
        self._asked = set()  # (cache, key) this frame asked for
        self._drawn_range = None  # the view range the last frame drew
        self._drawn_entries = None  # ... and the lane tree's rows it drew (a tree rebuilt at
        #                             the same range, ranks collapsed say, is not settled)
        self._generation = 0
        self._deadline = 0.0
        self._strips_until = 0.0  # rows' strips drawn in the frame until (``_summary_strip``)
        self._computed = 0
        self._pending = False
        self._repaint_due = False  # a frame for tiles that arrived is on its way
        # While the view moves, tiles and strips kept from an earlier view that cover this
        # one are drawn as they are (``_exact`` False); a view at rest is drawn from the
        # entries a fresh frame makes, so that settled, it is what a timeline opened there
        # (and a screenshot) shows, pixel for pixel.
        self._exact = True
        self._inexact = False  # this frame drew an entry made for another view
        self._view = None  # (x0, x1, width) of the last frame
        self._rest_view = None  # the view found at rest
        self._rest = QtCore.QTimer(self)
        self._rest.setSingleShot(True)
        self._rest.timeout.connect(self._at_rest)

    def compute_in_background(self):
        """Compute tiles and utilization strips in a thread of their own from now on
        (``tile_worker``): no frame waits for one."""
        if self.tiles is None:
            self.tiles = TileWorker(self.source.prepare_lanes)
            self.tiles.done.connect(self._tile_done)

    def stop_background(self):
        """The thread computing tiles ends (the timeline is going)."""
        if self.tiles is not None:
            self.tiles.stop()

    def let_go(self):
        """Its pictures and tiles released now (the timeline is going): Python objects
        that Qt's outlive, or a cycle the collector has not yet reached, kept them (a
        report's eleven pictures held ~30 MB each: ``screenshot.ended``)."""
        self.stop_background()
        self._gone = True  # (a tile the thread sent before it stopped is not kept)
        self._cache_key = self._cache_img = None
        for cache in (self._summary_cache, self._lane_cache, self._match_cache):
            cache.clear()
        self._flat_rows, self._summary_img = {}, {}

    def settled(self):
        """True when the last frame drew the view as it is now, everything at its resolution,
        and nothing is being computed for it (a picture of the window now is final)."""
        vb = self.getViewBox()
        now = None if vb is None else tuple(map(tuple, vb.viewRange()))
        return not self._pending and self._drawn_range == now and \
            self._drawn_entries is self.layout.entries and \
            (self.tiles is None or self.tiles.pending() == 0)

    def _tile_done(self, cache, key, result):
        """A tile or strip computed in the background arrives: kept, and the view repainted
        (a utilization strip's values come with its picture at the scale they were asked
        for: ``_summary_strip``)."""
        if self._gone:
            return  # (the timeline is going: ``let_go``)
        if isinstance(result, Exception):
            self._report(result, f"computing {'a lane' if cache == 'lane' else 'a summary'}")
            return
        if cache == "match" and self._match_for is not result.data.get("for"):
            return  # (for highlights no longer shown)
        if cache == "summary":
            result, picture = result
            self._keep_picture(key, picture)
        if cache == "strip":
            self._keep_picture(key, result)
        else:
            {"lane": self._lane_cache, "summary": self._summary_cache,
             "match": self._match_cache}[cache].put(key, result)
        self._cache_key = None
        if self.tiles is None or self.tiles.pending() == 0:
            self.update()  # (the last one asked: drawn now)
        elif not self._repaint_due:  # more to come: drawn with those that arrive meanwhile
            self._repaint_due = True
            QtCore.QTimer.singleShot(ARRIVALS_MS, self._arrivals)

    def _arrivals(self):
        """Tiles arrived since the last frame: one frame draws them all (each one's own
        frame was most of a first frame's work on the window's thread)."""
        self._repaint_due = False
        if not self._gone:
            self.update()

    def _keep_picture(self, where, picture):
        if len(self._summary_img) > 256:
            self._summary_img.clear()
        self._summary_img[where] = picture

    def _ask(self, cache, lane=None, then=None):
        """The ``ask`` a frame gives the grid cache: None computes in this thread.
        ``then(entry)``: what else the tiles' thread makes of the entry, handed back with it
        as (entry, then(entry))."""
        if self.tiles is None:
            return None

        def ask(key, spec, make):
            self._asked.add((cache, key))
            self._pending = True
            job = make if then is None else lambda: _with(make(), then)
            self.tiles.ask(Ask(cache, key, spec, job, lane))
        return ask

    def set_layout(self, layout):
        self.prepareGeometryChange()
        self.layout = layout
        self.update()

    def boundingRect(self):
        """The view's time range (all a frame draws: ``_picture``), the run's where the item
        is in no view.  Not the run's: zoomed in to a few hundred ns of a run of seconds,
        that is over 2**31 pixels wide, past the ints Qt maps an ``update()`` to, and every
        ``update()`` repainted nothing (a view zoomed out from 50 ns kept the narrower
        view's pictures, its sides blank, until the next move)."""
        vb = self.getViewBox()
        t0, t1 = self.t_range if vb is None else vb.viewRange()[0]
        return QtCore.QRectF(t0, 0, t1 - t0, max(self.layout.height, 1))

    def viewRangeChanged(self):
        """The bounds follow the view (``boundingRect``): Qt is told before it reads them."""
        self.prepareGeometryChange()
        super().viewRangeChanged()

    # ---- painting -----------------------------------------------------------------------
    def paint(self, p, *args):
        """Paint the view; an unchanged view (cursor moves, hover, expose) reuses the last
        picture, so only a new time range or lane layout pays for the queries.  An exception
        is reported once and never escapes into Qt (which would abort the process)."""
        try:
            self._paint(p)
        except Exception as e:  # noqa: BLE001
            self._report(e, "painting")

    def _paint(self, p):
        at = self._picture(p.transform(), p.font())
        if at is None:
            return
        p.save()
        p.resetTransform()
        p.drawImage(at, self._cache_img)
        p.restore()

    def paint_ahead(self, transform, font):
        """Make now the picture a frame painted with ``transform`` and ``font`` draws (a
        profile just shown: its strips and tiles are asked before the rest of the window is
        laid out and painted, not after); that frame draws it as it is, or makes its own
        where its transform or font is another."""
        try:
            self._picture(transform, font)
        except Exception as e:  # noqa: BLE001
            self._report(e, "painting")

    def _picture(self, tr, font):
        """The view's picture for the painter transform ``tr`` and ``font``, made unless the
        last one is of the same view; where the painter draws it (None: nothing to draw)."""
        vb = self.getViewBox()
        if vb is None:
            return None
        (x0, x1), (y0, y1) = vb.viewRange()
        sx, dx = tr.m11(), tr.dx()
        sy, dy = tr.m22(), tr.dy()
        if sx == 0 or sy == 0:
            return None
        px_left, px_right = sx * x0 + dx, sx * x1 + dx
        top, bottom = sy * y0 + dy, sy * y1 + dy
        width = max(int(round(px_right - px_left)), 1)
        height = max(int(round(bottom - top)), 1)
        key = (x0, x1, y0, y1, width, height, sx, sy, id(self.layout.entries), self.selected,
               id(self.matches), len(self.source.outline().markers), self.path_shown,
               id(self.path), font.key())
        if key != self._cache_key:
            img = QtGui.QImage(width, height, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
            img.fill(QtCore.Qt.GlobalColor.transparent)
            q = QtGui.QPainter(img)
            q.setFont(font)
            q.translate(-px_left, -top)
            self._shift = _translation(q.transform())  # (the scale marks' lines: exact)
            try:
                self._paint_view(q, x0, x1, y0, y1, sx, dx, sy, dy, px_left, width)
            except Exception as e:  # noqa: BLE001 - a bug in painting must not kill the app
                self._report(e, "painting the view")
            finally:
                q.end()  # a painter left active on the image would crash the blit below
            self._cache_key, self._cache_img = key, img
        return QtCore.QPointF(px_left, top)

    def _paint_view(self, p, x0, x1, y0, y1, sx, dx, sy, dy, px_left, width):
        self._drawn_range, self._drawn_entries = ((x0, x1), (y0, y1)), self.layout.entries
        view = self._view = (x0, x1, width)
        self._exact = self.tiles is None or self._rest_view == view
        self._inexact = False
        self._deadline = time.perf_counter() + (self.budget_s or 0.0)
        self._strips_until = time.perf_counter() + STRIPS_IN_FRAME_S
        self.last_stats = {}
        self._hl = self.highlighted()
        self._computed, self._pending = 0, False
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)
        font = QtGui.QFont(p.font())
        font.setPointSizeF(8)
        p.setFont(font)
        self._scale_style(p)  # (once a frame: a font's key is 10 us)
        batches = {}  # shade -> list of (x, width, y, height, colour key) per row
        labels = []
        n_rects = 0
        visible = list(self.layout.visible(y0, y1))
        self._asked = set()
        try:  # else each lane is stacked alone as it is drawn, and a bad one fails alone
            if self.tiles is None:  # (in the background: the tiles' thread stacks them)
                self.source.prepare_lanes([e.lane for e in visible if e.kind == "lane"])
        except Exception as exc:  # noqa: BLE001
            self._report(exc, "stacking the lanes shown")
        above = None  # the row drawn above this one
        for e in visible:
            try:
                n_rects += self._paint_row(p, e, above, x0, x1, px_left, width, sy, dy,
                                           batches, labels)
            except Exception as exc:  # noqa: BLE001 - one bad row must not blank the rest
                self._report(exc, f"row {e.label!r}")
            above = e
        for step in (lambda: self._flush(p, batches),  # (labels over the path's boxes)
                     lambda: self._paint_path(p, x0, x1, sx, dx, sy, dy),
                     lambda: self._paint_labels(p, labels),
                     lambda: self._paint_selection(p, x0, x1, px_left, width, sx, dx, sy, dy),
                     lambda: self._paint_markers(p, px_left, width, sx, dx, sy, dy, y0, y1)):
            try:
                step()
            except Exception as exc:  # noqa: BLE001
                self._report(exc, "painting")
        if self.paint_errors:
            self._paint_error_note(p, px_left, sy * y0 + dy)
        if self._inexact and not self._exact:  # (moving: the view's own once it rests)
            self._pending = True
            self._rest.start(REST_MS)
        self.last_stats.update(rects=n_rects, width=width, pending=self._pending)
        if self.tiles is not None:  # what the view no longer shows is not computed
            self.tiles.keep_only(self._asked)
        elif self._pending:  # some rows still show the previous resolution: another frame
            QtCore.QTimer.singleShot(0, self._continue)

    def _paint_row(self, p, e, above, x0, x1, px_left, width, sy, dy, batches, labels):
        """One row of the lane tree (``above``: the row above it): a header's band, a
        group's strip, or a lane's boxes collected into ``batches``; how many boxes."""
        top = sy * e.y + dy
        h = sy * e.height
        if e.kind == "lane" and above is not None and above.kind == "lane" and \
                (above.rank, above.group) == (e.rank, e.group):
            # (a rule between two lanes of a group: their rows ran together and which lane
            # a row is in was a guess, a GUI walk)
            p.fillRect(QtCore.QRectF(px_left, top, width, 1), LANE_RULE)
        if e.kind == "header":
            p.fillRect(QtCore.QRectF(px_left, top, width, h), QtGui.QColor(235, 238, 245))
        elif e.kind == "summary":
            self._paint_summary(p, e, x0, x1, px_left, width, top, h)
        elif e.kind != "path":  # (the path's track: drawn with the path, over the lanes)
            return self._collect_lane(e, x0, x1, px_left, width, top, sy, batches, labels)
        return 0

    def _paint_error_note(self, p, px_left, top):
        """The first painting error, said on the picture (the rest is drawn)."""
        fm = QtGui.QFontMetrics(p.font())
        text = f"rendering error (the rest is shown): {self.paint_errors[0]}"
        box = QtCore.QRectF(px_left + 4, top + 2, fm.horizontalAdvance(text) + 8,
                            fm.height() + 4)
        p.fillRect(box, QtGui.QColor(255, 235, 235))
        p.setPen(QtGui.QColor(180, 0, 0))
        p.drawText(box, int(QtCore.Qt.AlignmentFlag.AlignCenter), text)

    def _report(self, exc, where):
        """Record a painting error once (and say it once on stderr)."""
        import sys
        what = f"{type(exc).__name__}: {exc}"
        if not any(m.endswith(what) for m in self.paint_errors):
            msg = f"{where}: {what}"
            self.paint_errors.append(msg)
            print(f"legate_prof: error while painting {msg} (the rest is still drawn)",
                  file=sys.stderr)

    def _at_rest(self):
        """The view has not moved for ``REST_MS``: a frame draws it from its own entries
        (asked of the tiles' thread, the kept ones shown until they arrive)."""
        self._rest_view = self._view
        self._cache_key = None
        self.update()

    def _from_another_view(self, c, cell_ns, x0, x1, variant=None):
        """Note an entry drawn that a fresh frame of this view would not draw (True)."""
        if c is not None and not is_exact(c, cell_ns, x0, x1, self._generation, variant,
                                          self.t_range):
            self._inexact = True
            return True
        return False

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
        1.5-3 px anchored to absolute time.  The strip around the view is drawn once into a
        picture; a pan only moves it, a zoom step stretches it until the crisp one for the
        new scale is drawn (in the tiles' thread where there is one: ``_strip_picture``)."""
        strip = self._summary_strip(e, x0, x1, width, h)
        if strip is None:
            p.fillRect(QtCore.QRectF(px_left, top, width, h), QtGui.QColor(250, 250, 250))
            return
        bin_ns, a, vals, in_bytes, own, now = strip
        scale = width / (x1 - x0)
        picture = self._strip_picture(e, (bin_ns, a, len(vals), round(h, 3)), vals, in_bytes,
                                      scale, h, crisp=own or not self._exact, now=now)
        p.save()
        p.setClipRect(QtCore.QRectF(px_left, top, width, h + 1))
        if picture is None:  # (the first of this row: until it is drawn)
            p.fillRect(QtCore.QRectF(px_left, top, width, h), QtGui.QColor(250, 250, 250))
        else:
            draw_strip(p, picture, scale, x0, px_left, top)
        line = _line_at(vals, in_bytes, a, bin_ns, x0 - px_left / scale, scale)
        self._paint_scale(p, px_left, width, top, h, in_bytes, self.over_of(e, vals, in_bytes),
                          line)
        p.restore()

    def _strip_picture(self, e, key, vals, in_bytes, scale, h, crisp=True, now=False):
        """The picture of the row's strip to draw: the one kept if it is of these bins at
        this scale; else a crisp one is drawn now (no tiles' thread) or asked of the tiles'
        thread, the one kept shown meanwhile (None if there is none).  ``crisp`` False: the
        kept one, whatever it is (the view's own bins, asked, come with their picture).
        ``now``: drawn in this thread whatever (values computed here: ``_summary_strip``)."""
        where = (e.rank, e.group)
        kept = self._summary_img.get(where)
        if kept is not None and kept.key == key and abs(kept.scale / scale - 1) <= 1e-9 or \
                not crisp and self.tiles is not None:
            return kept
        def make():
            return strip_picture(e.group, key, _shown(vals, in_bytes), scale, h,
                                 self.over_of(e, vals, in_bytes) is not None)
        if self.tiles is not None and not now:
            self._asked.add(("strip", where))
            self._pending = True
            self.renders_asked += 1
            self.tiles.ask(Ask("strip", where, (key, scale), make))
            return kept
        if kept is not None and kept.key == key and not self._may_compute():
            return kept  # (time-sliced: stretched until a later frame)
        if len(self._summary_img) > 256:
            self._summary_img.clear()
        self._summary_img[where] = kept = make()
        self.renders_made += 1
        return kept

    def bytes_scale(self, rank, group):
        """(bytes per unit of the summary, peak bytes) of a memory row without a capacity,
        else None (asked once per row; in the tiles' thread with the row's strip)."""
        key = (rank, group)
        if key not in self._bytes_scales:
            self._bytes_scales[key] = self.source.summary_bytes(group, rank)
        return self._bytes_scales[key]

    def over_capacity(self, rank, group):
        """How far past its capacity a memory row's use went at its peak (peak / capacity,
        over 1), or None: within it, its capacity unknown (a bytes scale), not a memory.
        Asked once per row, of a row whose strip reaches 100 % (``over_of``)."""
        key = (rank, group)
        if key not in self._over:
            use = self.source.memory_use(group, rank)
            self._over[key] = use[1] / use[0] if use is not None and use[0] > 0 and \
                use[1] > use[0] * (1 + 1e-6) else None
        return self._over[key]

    def over_of(self, e, vals, in_bytes):
        """The row's ``over_capacity`` where its strip's ``vals`` reach 100 % (a share over
        it is cut there by the summary), else None: a row that stays below is drawn as
        ever."""
        if in_bytes is not None or not len(vals):
            return None
        key = (e.rank, e.group, id(vals), len(vals))  # (a strip's values: one array a frame
        top = self._vals_top.get(key)  # after another, its largest found once)
        if top is None or top[0] is not vals:
            if len(self._vals_top) > 4096:
                self._vals_top.clear()
            top = self._vals_top[key] = (vals, float(np.max(vals)))
        return None if top[1] < 1.0 else self.over_capacity(e.rank, e.group)

    def _summary_values(self, e, a, b, n):
        """A utilization strip: its values, and its bytes scale (``bytes_scale``)."""
        return self.source.summary_tile(e.group, e.rank, a, b, n), self.bytes_scale(e.rank,
                                                                                    e.group)

    def _paint_scale(self, p, px_left, width, top, h, in_bytes=None, over=None, line=None):
        """0 / 50 / 100 % marks on a utilization row, so "~74 %" can be read off; a memory
        without a capacity is on a bytes scale: 0 / half / peak, the peak labelled.  ``over``:
        a memory row used past its capacity (``over_capacity``), its top label says its
        peak, in red.  ``line``: the row's line (``_line_at``); a label above 0 it runs
        through (``_crossed``) gets a
        background (a label it keeps clear of is drawn as it was)."""
        if h < 12:
            return
        _, font, fh, text, dotted = self._scale_styles["style"]
        lines, labels = self._scale_marks(px_left, width, top, h, in_bytes, fh, over)
        for a, b in lines:
            dotted.draw(p, a, b, self._shift)
        p.setFont(font)
        p.setPen(SCALE_TEXT)
        drawn = self.last_stats.setdefault("scale_labels", [])
        crossed = _crossed(line, labels, top, h) if line is not None else ()
        for n, (box, label, placed, back, ink, u) in enumerate(labels):
            if n in crossed:
                p.fillRect(back, LABEL_BACK)
                self.last_stats.setdefault("scale_backs", []).append((back, label))
            if over is not None and u == 1.0:
                p.setPen(OVER_TEXT)
            text.draw(p, box, label, placed)
            if over is not None and u == 1.0:
                p.setPen(SCALE_TEXT)
            drawn.append((box, label))

    def _scale_marks(self, px_left, width, top, h, in_bytes, fh, over=None):
        """A row's marks: its two dotted lines and its labels' (box, text, how it is drawn:
        ``ScaleText.place``, the rectangle its text covers, the rows its digits' ink spans,
        its share).  Made once for a row's place and size: a pan or a wheel step draws every
        row's marks again.  (A ``QStaticText`` laid out once draws 3x faster but puts some
        glyphs a pixel apart; ``ScaleText`` lays a label out as drawText does.)"""
        key = (px_left, width, top, h, in_bytes, over, self._scale_styles.get("for"))
        made = self._scale_made.get(key)
        if made is not None:
            return made
        if in_bytes is None:
            peak = "100%" if over is None else f"100% (peak {over * 100:,.0f}%)"
            marks = ((1.0, peak), (0.5, "50%"), (0.0, "0"))
        else:
            peak = in_bytes[1]
            marks = ((1.0, f"peak {format_bytes(peak)}"), (0.5, format_bytes(peak / 2)),
                     (0.0, "0 B"))
        right = px_left + width
        lines = []
        for u in (0.5, 1.0):
            y = top + h - 2 - u * (h - 5)
            lines.append((QtCore.QPointF(px_left, y), QtCore.QPointF(right, y)))
        labels = []
        last = None
        text, metrics = self._scale_styles["style"][3], QtGui.QFontMetricsF(
            self._scale_styles["style"][1])
        for u, label in marks:  # (top first, each inside its row; a mark too close to the
            y = top + h - 2 - u * (h - 5)  # one above is left out: compact rows keep 100 %, 0)
            box = QtCore.QRectF(px_left + 2, min(max(y - fh / 2, top), top + h - fh), 120, fh)
            if last is not None and box.top() < last.bottom():
                continue
            back = QtCore.QRectF(box.x() - 1, box.y(), min(metrics.horizontalAdvance(label),
                                                           box.width()) + 2, box.height())
            base = box.y() + (box.height() - metrics.height()) / 2 + metrics.ascent()
            ink = (base - metrics.capHeight(), base)  # (from the digits' top to the baseline)
            labels.append((box, label, text.place(box, label), back, ink, u))
            last = box
        if len(self._scale_made) > 512:
            self._scale_made.clear()
        made = self._scale_made[key] = (lines, labels)
        return made

    def _scale_style(self, p):
        """The scale marks' dotted pen, their small font, its line height and their labels'
        layouts (``ScaleText``), made once for the frame's font, device and direction (a
        strip's marks were a fifth of a pan's frame)."""
        font, dev = p.font(), p.device()
        key = (font.key(), dev.logicalDpiX(), dev.logicalDpiY(), p.layoutDirection().value)
        if self._scale_styles.get("for") != key:
            pen = QtGui.QPen(QtGui.QColor(170, 170, 170))
            pen.setStyle(QtCore.Qt.PenStyle.DotLine)
            small = QtGui.QFont(font)
            small.setPointSizeF(6.5)
            self._scale_styles = {"for": key,
                                  "style": (pen, small, QtGui.QFontMetricsF(small).height(),
                                            ScaleText(p, small), DottedLines(pen))}
        return self._scale_styles["style"]

    def refresh(self):
        """Treat every cached row as stale: they are recomputed (time-sliced if a budget is
        set) and shown meanwhile."""
        self._generation += 1
        self._summary_img.clear()
        self._cache_key = None
        self._drawn_range = None  # (not settled until a frame has drawn them again)
        self.update()

    def _summary_strip(self, e, x0, x1, width, h):
        """(bin width in ns, first bin index, values, bytes scale, whether they are the
        view's own: ``tile_cache.is_exact``, whether computed now) covering [x0, x1] and
        around it; bins are a power of two between 1.5 and 3 pixels (see tile_cache).  The
        tiles' thread draws the strip's picture for this view as soon as it has the values;
        a row never drawn whose values are at hand (``summary_at_hand``) is drawn in this
        frame (for up to ``STRIPS_IN_FRAME_S``): a first frame then shows every row at once,
        where the window otherwise drew two more frames as the strips came
        (docs/performance.md)."""
        bin_ns = 2.0 ** np.floor(np.log2(max(3.0 * (x1 - x0) / width, 1e-9)))
        scale = width / (x1 - x0)

        def picture(c):
            vals, in_bytes = c.data
            return strip_picture(e.group, (c.cell_ns, c.first, len(vals), round(h, 3)),
                                 _shown(vals, in_bytes), scale, h,
                                 self.over_of(e, vals, in_bytes) is not None)
        where = (e.rank, e.group)
        now = self.tiles is not None and where not in self._summary_img and \
            self._summary_cache.peek(where) is None and \
            time.perf_counter() < self._strips_until and self._at_hand(e, bin_ns, x0, x1)
        c = self._summary_cache.get(
            where, bin_ns, x0, x1,
            lambda a, b, n: self._summary_values(e, a, b, n),
            self._may_compute, self._generation,
            None if now else self._ask("summary", then=picture), exact=self._exact)
        own = not self._from_another_view(c, bin_ns, x0, x1)
        return None if c is None else (c.cell_ns, c.first, *c.data, own, now)

    def _at_hand(self, e, bin_ns, x0, x1):
        """Whether the row's strip of [x0, x1] is computed at once (``summary_at_hand``)."""
        first, end = cells_for(bin_ns, x0, x1, self.t_range)
        return self.source.summary_at_hand(e.group, e.rank, bin_ns, end - first)

    def _lane_rows(self, lane, x0, x1, width):
        """The lane's tile for this view, in view pixels: computed on cells of 0.5-1 view
        pixel (see tile_cache), so pans and small zooms reuse it."""
        ns_per_px = max((x1 - x0) / width, 1e-9)
        cell = 2.0 ** np.floor(np.log2(ns_per_px))
        px_scale = ns_per_px / cell  # (bound now: the tiles' thread computes it later)
        c = self._lane_cache.get(lane, cell, x0, x1,
                                 lambda a, b, n: self.source.lane_tile(
                                     lane, a, b, n, px_scale=px_scale),
                                 self._may_compute, self._generation, self._ask("lane", lane),
                                 variant=px_scale, exact=self._exact)
        self._from_another_view(c, cell, x0, x1, px_scale)
        if c is None:
            return None  # nothing to show yet; a later frame (or the tiles' thread) makes it
        res, a, tile = c.cell_ns, c.first, c.data  # (a stale one: its own cells)
        k = res * width / (x1 - x0)  # view pixels per grid cell
        off = (a * res - x0) * width / (x1 - x0)
        flat = self._flat_rows.get(id(tile))
        if flat is None or flat[0] is not tile:
            if len(self._flat_rows) > 256:
                self._flat_rows.clear()
            flat = self._flat_rows[id(tile)] = (tile, FlatRows.of(tile))
        if flat[1] is not None:
            return flat[1].in_view(off, k, width)
        out = []
        for dr in tile.rows:
            bx0, bx1 = off + dr.box_x0 * k, off + dr.box_x1 * k
            keep = (bx1 >= -2) & (bx0 <= width + 2)
            gx0, gx1 = off + dr.band_x0 * k, off + dr.band_x1 * k
            gkeep = (gx1 >= -2) & (gx0 <= width + 2)
            px0, px1 = off + dr.piece_x0 * k, off + dr.piece_x1 * k
            pkeep = (px1 >= -2) & (px0 <= width + 2) & (dr.piece_state != 0)
            out.append(ViewRow(row=dr.row, box_x0=bx0[keep], box_x1=bx1[keep],
                               box_item=dr.box_item[keep], box_name=dr.box_name[keep],
                               band_x0=gx0[gkeep], band_x1=gx1[gkeep],
                               band_count=dr.band_count[gkeep],
                               band_busy=(np.ones(int(gkeep.sum()), np.float32)
                                          if dr.band_busy is None else dr.band_busy[gkeep]),
                               piece_x0=px0[pkeep], piece_x1=px1[pkeep],
                               piece_state=dr.piece_state[pkeep],
                               piece_name=dr.piece_name[pkeep]))
        return out

    def _collect_lane(self, e, x0, x1, px_left, width, top, sy, batches, labels):
        row_px = sy * e.row_h
        gap = 1.0 if row_px > 4 else 0.0
        n = 0
        dim = self._hl is not None
        rows = self._lane_rows(e.lane, x0, x1, width)
        matched = self._lane_matches(e.lane, x0, x1, width) if dim and rows else {}
        for dr in rows or ():
            y = top + dr.row * row_px + gap
            hh = max(row_px - 2 * gap, 1.0)
            if len(dr.box_item):
                bx = px_left + np.clip(dr.box_x0, -2, width + 2)
                bw = np.maximum(px_left + np.clip(dr.box_x1, -2, width + 2) - bx, 1.0)
                nid = dr.box_name
                if dim:
                    hit = _member(dr.box_item, self._hl)
                    key = np.where(hit, nid, -2 - nid)  # negative keys: dimmed colours
                else:
                    key = nid
                batches.setdefault("name", []).append((bx, bw, y, hh, key))
                n += len(dr.box_item)
                self._collect_waits(dr, y, hh, px_left, width, batches)
                if hh >= 9:
                    wide = np.flatnonzero(bw >= LABEL_MIN_PX)
                    for j in wide[: MAX_LABELS - len(labels)].tolist():
                        labels.append((bx[j], y, bw[j], hh, int(dr.box_item[j])))
            if dim:
                self._collect_matches(matched.get(dr.row), x0, x1, px_left, width, y, hh,
                                      batches)
            if len(dr.band_count):
                n += self._collect_bands(dr, y, hh, px_left, width, batches, labels)
        return n

    def _collect_bands(self, dr, y, hh, px_left, width, batches, labels):
        """Merged bands: light gray over the row's height, filled from the bottom in gray as
        high as the share of their time their items ran (``band_busy``): a band of tasks that
        ran 1 % of it reads idle, not as a solid block; labelled with their count."""
        bx = px_left + np.clip(dr.band_x0, -2, width + 2)
        bw = np.maximum(px_left + np.clip(dr.band_x1, -2, width + 2) - bx, 1.0)
        zero = np.zeros(len(bx), int)
        batches.setdefault("band", []).append((bx, bw, y, hh, zero))
        fill = np.maximum(np.asarray(dr.band_busy, np.float64) * hh, 1.0)
        batches.setdefault("gray", []).append((bx, bw, y + hh - fill, fill, zero))
        if hh >= 9:
            wide = np.flatnonzero(bw >= 30)
            for j in wide[: MAX_LABELS - len(labels)].tolist():
                labels.append((bx[j], y, bw[j], hh, -int(dr.band_count[j]),
                               float(dr.band_busy[j])))
        return len(bx)

    def _lane_matches(self, lane, x0, x1, width):
        """{row: (start, stop, name id)} of the highlighted items of ``lane`` around the
        view, computed as its tile is (in the tiles' thread), or {} until it arrives."""
        if self._match_for is not self._hl:  # another search (or the path): new entries
            self._match_cache.clear()
            self._match_for = self._hl
        res = 2.0 ** np.floor(np.log2(max((x1 - x0) / width, 1e-9)))
        hl = self._hl
        c = self._match_cache.get(lane, res, x0, x1,
                                  lambda a, b, n: highlighted_rows(self.source, lane, hl, a, b),
                                  self._may_compute, self._generation, self._ask("match"),
                                  exact=self._exact)
        self._from_another_view(c, res, x0, x1)
        return {} if c is None else c.data

    def _collect_matches(self, matched, x0, x1, px_left, width, y, hh, batches):
        """Search matches drawn in full colour over what is dimmed, also inside gray bands, so
        they stay visible; a match's own waiting and ready shades go over it (``_flush``)."""
        if matched is None:
            return
        start, stop, name = matched
        sel = (stop >= x0) & (start <= x1)
        if not sel.any():
            return
        scale = width / (x1 - x0)
        xa = px_left + np.clip((start[sel] - x0) * scale, -2, width + 2)
        xb = px_left + np.clip((stop[sel] - x0) * scale, -2, width + 2)
        batches.setdefault("match", []).append((xa, np.maximum(xb - xa, 2.0), y, hh,
                                                name[sel]))

    def _collect_waits(self, dr, y, hh, px_left, width, batches):
        """Waiting and ready shades over boxes of tasks that waited (the tile's pieces)."""
        if len(dr.piece_state) == 0:
            return
        for state, shade in ((WAITING, "waiting"), (READY, "ready")):
            sel = dr.piece_state == state
            xa = px_left + np.clip(dr.piece_x0[sel], -2, width + 2)
            xb = px_left + np.clip(dr.piece_x1[sel], -2, width + 2)
            ok = xb - xa >= 0.5
            batches.setdefault(shade, []).append((xa[ok], xb[ok] - xa[ok], y, hh,
                                                  dr.piece_name[sel][ok]))

    def _color_for(self, key):
        kind, k = key
        if kind == "gray":
            return GRAY if self._hl is None else blend_with_white(GRAY, 0.35)
        if kind == "band":
            return blend_with_white(GRAY, BAND_ALPHA if self._hl is None else BAND_ALPHA / 2)
        if k < 0 and kind == "name":
            base = name_color(self.source.name_of(-2 - k))
            return blend_with_white(base, 0.2)
        base = name_color(self.source.name_of(k))
        if kind == "waiting":
            return blend_with_white(base, ALPHA_WAITING)
        if kind == "ready":
            return blend_with_white(base, ALPHA_READY)
        if kind == "match":
            return base
        return base

    def _flush(self, p, batches):
        """One drawRects per colour for the whole frame: rows are gathered per shade, then
        sorted by colour key once."""
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        # (a match under the waiting and ready shades: a found task that mostly waited was
        # drawn solid over its waits, as if it ran)
        for shade in ("band", "gray", "name", "match", "waiting", "ready"):
            parts = batches.get(shade)
            if not parts:
                continue
            x = np.concatenate([a[0] for a in parts])
            w = np.concatenate([a[1] for a in parts])
            # (a row's y and height, or one per rectangle: a band's busy fill)
            counts = [len(a[0]) for a in parts]
            y = _per_rect([a[2] for a in parts], counts)
            h = _per_rect([a[3] for a in parts], counts)
            key = np.concatenate([a[4] for a in parts])
            if len(key) == 0:
                continue
            order = np.argsort(key, kind="stable")
            ks = key[order]
            x, y, w, h = x[order], y[order], w[order], h[order]  # (each colour's: a slice)
            cuts = np.concatenate([[0], np.flatnonzero(np.diff(ks)) + 1, [len(ks)]])
            for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
                p.setBrush(self._color_for((shade, int(ks[a]))))
                self.batch.draw(p, x[a:b], y[a:b], w[a:b], h[a:b])

    def _paint_labels(self, p, labels):
        if not labels:
            return
        t = self._box_text(p)
        fh = t.metrics.height()
        p.setPen(ITEM_TEXT)
        counts = self.last_stats.setdefault("band_labels", [])
        for x, y, w, h, item, *busy in labels:
            if item < 0:  # a count, not a time: "×72 merged", or "×72" where that is too wide
                text = band_label(-item)
                if t.advance(text) > w - 4:
                    text = band_label(-item, short=True)
                if t.advance(text) > w - 4:
                    continue  # a count is never cut short ("×2…" would read as 2)
                # on a light chip, dark: white on a band filled to its middle was half on
                # light gray, and items drawn over the band (a search's, the path's) ran
                # through the digits ("×46" read "×4")
                chip = QtCore.QRectF(x + 1, y + (h - fh) / 2, t.advance(text) + 2, fh)
                p.fillRect(chip, COUNT_CHIP)
                counts.append(text)
                self.last_stats.setdefault("band_label_chips", []).append(chip)
                p.setPen(COUNT_TEXT)
            else:
                text = self.source.item_title(item)
                p.setPen(ITEM_TEXT)
            text = t.elided(text, int(w) - 4)
            if text and text != "…":
                t.draw(p, QtCore.QRectF(x + 2, y, w - 4, h), text)

    def _box_text(self, p):
        """The labels' widths, cut forms and layouts (``BoxText``), kept while the frames'
        font, device and direction stay."""
        font, dev = p.font(), p.device()
        key = (font.key(), dev.logicalDpiX(), dev.logicalDpiY(), p.layoutDirection().value)
        if self._box_texts is None or self._box_texts[0] != key:
            self._box_texts = (key, BoxText(p))
        return self._box_texts[1]

    def highlighted(self):
        """Item ids shown in full colour, the rest dimmed: the search's matches, else the
        critical path's items while it is drawn; None: nothing dimmed."""
        if self.matches is not None:
            return self.matches
        if self.path_shown and self.path is not None:
            return self.path.path.sorted_items
        return None

    def _paint_path(self, p, x0, x1, sx, dx, sy, dy):
        if self.path_shown and self.path is not None:
            self.path.paint(p, self.source, self.layout, x0, x1, sx, dx, sy, dy)

    def _paint_selection(self, p, x0, x1, px_left, width, sx, dx, sy, dy):
        i = self.selected
        if i is None:
            return
        lane, row = self.source.item_lane(i)
        e = self.layout.find_lane(lane)
        if e is None:
            return
        s, t = self.source.item_extent(i)
        a = sx * float(s) + dx
        b = sx * float(t) + dx
        top = sy * (e.y + row * e.row_h) + dy
        pen = QtGui.QPen(QtGui.QColor(220, 0, 0))
        pen.setWidthF(2)
        p.setPen(pen)
        p.setBrush(QtCore.Qt.BrushStyle.NoBrush)
        p.drawRect(QtCore.QRectF(a - 1, top, max(b - a, 3) + 2, max(sy * e.row_h, 2)))

    def _paint_markers(self, p, px_left, width, sx, dx, sy, dy, y0, y1):
        """Out-of-memory (and other) markers: a red line through all lanes, and a label; the
        labels of several (each rank that ran out) one below the other where they would
        overlap (two ranks' failures a few ms apart were drawn over each other), each naming
        its rank."""
        red = QtGui.QColor(210, 20, 20)
        markers = self.source.outline().markers
        placed = []
        self._marker_boxes = []  # (its label's box in the picture's pixels, the marker)
        self._marker_map = (sx, dx, sy, dy)
        for m in markers:
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
            rank = f" on rank {m['rank']}" if len(markers) > 1 and "rank" in m else ""
            if m.get("kind") == "oom":
                text = (f"OOM{rank}: {rep.get('requested_bytes', 0):,} B in "
                        f"{rep.get('memory_kind', '?')}")
                site = rep.get("provenance") or ""
                if site:
                    text += f" at {site.rsplit('/', 1)[-1]}"
            else:  # (a crash, or a log cut short: it read "OOM: 0 B in ?")
                cut = (m.get("fields") or {}).get("log") == "cut short"
                text = (f"rank {m.get('rank', '?')}: "
                        + ("its log is cut short here" if cut else "stopped here (crashed?)"))
            fm = QtGui.QFontMetrics(p.font())
            tw = fm.horizontalAdvance(text) + 8
            bx = min(max(x - tw, px_left), px_left + width - tw)
            box = QtCore.QRectF(bx, top + 2, tw, fm.height() + 4)
            while any(box.intersects(b) for b in placed):
                box.translate(0, box.height() + 2)
            placed.append(QtCore.QRectF(box))
            self._marker_boxes.append((QtCore.QRectF(box), m))
            p.fillRect(box, red)
            p.setPen(QtGui.QColor(255, 255, 255))
            p.drawText(box, int(QtCore.Qt.AlignmentFlag.AlignCenter), text)

    def marker_at(self, t, y):
        """The marker whose label is under view point (``t``, ``y``), or None (its label was
        a red box nothing answered on: a review found no way to its report)."""
        boxes = getattr(self, "_marker_boxes", ())
        if not boxes:
            return None
        sx, dx, sy, dy = self._marker_map
        at = QtCore.QPointF(sx * t + dx, sy * y + dy)
        return next((m for box, m in boxes if box.contains(at)), None)

    # ---- hit testing -------------------------------------------------------------------
    def hit(self, t, y, ns_per_px=None):
        """(kind, payload) under the point: ('item', index) or ('band', (t0, t1, count, lane,
        row, busy share)), answered from the tile this item last drew for the lane, so a click means what
        the picture shows."""
        e = self.layout.entry_at(y)
        if e is None or e.kind != "lane":
            return None, e
        row = int((y - e.y) / e.row_h)
        cached = self._lane_cache.peek(e.lane)
        if cached is None:
            return None, e
        tile = cached.data
        h = self.source.hit_tile(tile, row, (t - tile.t0) / tile.ns_per_px)
        if h is None:
            return None, e
        if h.item is not None:
            return ("item", h.item), e
        return ("band", (h.t0, h.t1, h.count, e.lane, row, h.busy)), e


def highlighted_rows(source, lane, highlighted, t0, t1):
    """{row: (start, stop, name id)} of the items of ``lane`` among ``highlighted`` (sorted
    item ids) that overlap [t0, t1]; under "for", the ids it was made for."""
    lo, hi = source.lane_item_range(lane)
    a, b = np.searchsorted(highlighted, [lo, hi])
    out = {"for": highlighted}
    if b <= a:
        return out
    c = source.items_columns(highlighted[a:b])
    sel = (c["stop"] >= t0) & (c["start"] <= t1)
    rows = c["row"][sel]
    for r in np.unique(rows).tolist():
        k = rows == r
        out[r] = (c["start"][sel][k], c["stop"][sel][k], c["name"][sel][k])
    return out


def band_label(count, short=False):
    """A gray band's label: how many items merged there, written as a count (the report's
    words), never a bare number that reads like a time."""
    return f"×{count:,}" if short else f"×{count:,} merged"


def _shown(vals, in_bytes):
    """A strip's values as drawn: a share of the row's capacity, or (``in_bytes``: bytes
    per unit and the peak) up to the peak, for a memory of unknown capacity."""
    if in_bytes is None:
        return vals
    den, peak = in_bytes
    return np.asarray(vals) * (den / peak if peak > 0 else 0.0)


def _line_at(vals, in_bytes, first, bin_ns, t_at_0, scale):
    """What ``_crossed`` needs of a strip's line: its values as drawn (on a bytes scale, cut
    at 1, by ``k``), the first bin's index and the bins' ns, the time at view pixel 0
    (``t_at_0``) and the view pixels per ns (``scale``)."""
    k = 1.0 if in_bytes is None else (in_bytes[0] / in_bytes[1] if in_bytes[1] > 0 else 0.0)
    return vals, k, first, bin_ns, t_at_0, scale


def _crossed(line, labels, top, h):
    """Which of ``labels`` (their places in it) above 0 the row's line runs through: within
    the rows from the label's digits' top to its baseline (``ink``), between its text's left
    and right (the bins' centres there and the one beyond each side: the line runs to them).
    A line in the room below, as an idle line under "0", leaves a label readable.  Plain
    Python over the few bins under a label: a wheel step asks it of every row."""
    vals, k, first, bin_ns, t0, scale = line
    out = set()
    for n, (_, _, _, back, ink, u) in enumerate(labels):
        if u <= 0:
            continue
        lo = max(math.floor((t0 + back.left() / scale) / bin_ns - first - 0.5), 0)
        hi = min(math.ceil((t0 + back.right() / scale) / bin_ns - first - 0.5) + 1, len(vals))
        if lo >= hi:
            continue
        seg = vals[lo:hi].tolist()
        y_hi = top + h - 2 - min(max(seg) * k, 1.0) * (h - 5)  # (y grows down)
        y_lo = top + h - 2 - min(min(seg) * k, 1.0) * (h - 5)
        if y_hi <= ink[1] and y_lo >= ink[0]:
            out.add(n)
    return out


def _translation(transform):
    """(dx, dy) of a transform that only moves what is drawn, else None."""
    if transform.type().value > QtGui.QTransform.TransformationType.TxTranslate.value:
        return None
    return transform.dx(), transform.dy()


def _with(entry, then):
    return entry, then(entry)


def _per_rect(values, counts):
    """One float per rectangle from each part's value: one for the part's rectangles (a
    row's y), or an array of one each (a band's busy fill)."""
    if not any(isinstance(v, np.ndarray) for v in values):
        return np.repeat(np.asarray(values, np.float64), counts)
    return np.concatenate([np.asarray(v, np.float64) if isinstance(v, np.ndarray) else
                           np.full(n, v, np.float64) for v, n in zip(values, counts)])


def _member(items, sorted_set):
    pos = np.searchsorted(sorted_set, items)
    pos = np.clip(pos, 0, len(sorted_set) - 1)
    return sorted_set[pos] == items if len(sorted_set) else np.zeros(len(items), bool)
