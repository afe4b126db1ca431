"""The timeline widget: a pyqtgraph plot holding the painted item, axes, cursor, view
history and keys.  Painting lives in item.py, axes in axes.py, text in ../item_text.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from legate_prof.present.limits import MAX_LANES_EXPANDED
from legate_prof.query import as_source

from .axes import LaneAxis, TimeAxis
from .critical_path import path_notes, step_back, step_forward, step_on_path
from .path_overlay import PathOverlay
from ..item_text import details_rows, marker_words, summary_text, tooltip_html
from ..plain_text import tooltip
from .layout import LaneLayout
from .sticky_header import StickyHeader
from ..background import Background
from ..time_text import format_time
from .item import TimelineItem
from .viewbox import TimelineViewBox

@dataclass
class PreparedView:
    """What a window needs to show a profile (``prepare_view``)."""

    model: object
    source: object
    layout: LaneLayout


def prepare_view(model, progress=None, ranks=None):
    """What a window needs to show ``model``, made off its thread (the loader's): the query
    source, its lane tree described (``outline()``: the notices, the messages' latency over
    every item, are worked out after the first frame) and laid out — as for ``ranks`` ranks
    where it holds a few of those (the ranks built so far: the groups expanded or not as the
    whole's will be)."""
    if progress is not None:
        progress(1, 1, "laying out the lanes")
    source = as_source(model)
    info = source.outline()
    shown = max(len(info.ranks), 1)
    scale = shown / ranks if ranks and ranks > shown else 1.0
    return PreparedView(model, source,
                        LaneLayout.default(source, max_lanes=int(MAX_LANES_EXPANDED * scale)))


ROW_PX = 18  # pixels per row unit at the default vertical scale
COMPACT_ROW_PX = 7  # ... in compact mode (many ranks on one screen)
TOOLTIP_MS = 60_000  # a hover tooltip stays this long while the mouse is still


class TimelineWidget(pg.PlotWidget):
    """The timeline view: axes, lane labels, the painted item, cursor, history, keys."""

    # ('item', idx) | ('band', (...)) | ('marker', {its title and fields}) | None
    itemClicked = QtCore.Signal(object)
    viewChanged = QtCore.Signal(float, float)
    layoutChanged = QtCore.Signal()  # groups expanded or collapsed
    escapePressed = QtCore.Signal()  # clear highlights (the window clears its search too)
    walked = QtCore.Signal(object, str)  # a step along the critical path: item (or None), why
    itemRestored = QtCore.Signal(object)  # undo/redo of a walk selected this item again
    pathToggled = QtCore.Signal(bool)  # the run's critical path drawn or not

    def __init__(self, model=None, layout: LaneLayout | None = None, parent=None):
        """The plot, its axes and view box; ``model``'s timeline in it (``set_source``), or
        none yet: a window makes this once and shows each profile it opens in it."""
        self.vb = TimelineViewBox()
        self.time_axis = TimeAxis("bottom")
        self.lane_axis = LaneAxis("left")
        super().__init__(parent=parent, viewBox=self.vb,
                         axisItems={"bottom": self.time_axis, "left": self.lane_axis,
                                    "top": TimeAxis("top")})
        self.setBackground("w")
        self.row_px = ROW_PX
        self.source = self.lane_layout = self.item = None
        self.path_unready = None  # why the path cannot be walked yet, where not "computing"
        pi = self.getPlotItem()
        pi.showAxis("top")
        pi.hideButtons()
        pi.setMenuEnabled(False)
        for ax in ("bottom", "top", "left"):
            a = pi.getAxis(ax)
            a.setPen(pg.mkPen(90, 90, 90))
            a.setTextPen(pg.mkPen(30, 30, 30))
            a.enableAutoSIPrefix(False)
        self.cursor = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(0, 0, 0, 120))
        # the cursor's time, hung from the top of the view (anchored below it: in sight)
        self.cursor_label = pg.TextItem(color=(0, 0, 0), anchor=(0, 0), fill=(255, 255, 255, 200))
        self.addItem(self.cursor, ignoreBounds=True)
        self.addItem(self.cursor_label, ignoreBounds=True)
        self.lane_axis.toggled.connect(self.toggle_group)
        self.lane_axis.rankToggled.connect(self.toggle_rank)
        self.sticky = StickyHeader(self)
        self.sticky.clicked.connect(self.toggle_rank)
        self.vb.sigYRangeChanged.connect(self.sticky.follow)
        self.vb.sigXRangeChanged.connect(self._follow_cursor)
        self.vb.sigYRangeChanged.connect(self._rescale_labels)
        self.vb.intervalSelected.connect(lambda a, b: self.set_time_range(a, b))
        self.vb.interactionFinished.connect(self._remember)
        self.scene().sigMouseMoved.connect(self._mouse_moved)
        self.scene().sigMouseClicked.connect(self._mouse_clicked)
        self.setFocusPolicy(QtCore.Qt.FocusPolicy.StrongFocus)
        self._hover = self._tooltip = None  # what the mouse rests on, and its tooltip
        self._tips = Background("legate_prof-tooltip", self)
        self._tips.done.connect(self._tooltip_ready)
        self.vb.sigRangeChanged.connect(self._drop_tooltip)
        if model is not None:
            self.set_source(model, layout)

    def set_source(self, model, layout: LaneLayout | None = None):
        """Show ``model``'s timeline (its lanes laid out as ``layout``), in place of the one
        shown: a new painted item, lane tree, view range and history; the plot, axes and view
        box stay (making them is most of a frame of the window's thread)."""
        if self.item is not None:
            self.item.let_go()
            self.removeItem(self.item)
        self.source = as_source(model)
        self.lane_layout = layout or LaneLayout.default(self.source)
        self.lane_layout.path_scale = ROW_PX / self.row_px
        self._path_step = None  # the drawn path's step last walked to (an item holds several)
        self._hover = self._tooltip = None
        self._tips.cancel()
        self.critical_error = None
        self._extent = None
        empty = self.source.outline().n_items == 0
        for ax in ("bottom", "top"):  # no time to count: no "0.00 ns ... 1.00 ns" of nothing
            self.getPlotItem().getAxis(ax).setTicks([[], []] if empty else None)
        self.item = TimelineItem(self.source, self.lane_layout)
        self.addItem(self.item)
        self.lane_axis.set_layout(self.lane_layout)
        self._walks, self._walks_future = [], []  # per history entry: (from, to) of a walk
        self.history, self.future = [], []
        self._apply_limits()
        t0, t1 = self.source.outline().time_range
        self.set_time_range(t0, t1, remember=False)
        self.history = [(t0, t1)]
        self._walks = [None]
        self.sticky.follow()

    def paint_ahead(self):
        """Make the item's picture of the view now, laid out (``TimelineItem.paint_ahead``):
        a profile just shown asks its strips and tiles ~10-20 ms before the window's frame
        reaches the item."""
        if self.item is None or not self.isVisible():
            return
        self.scene().prepareForPaint()  # (the view box's transform, as a frame begins)
        self.item.paint_ahead(self.item.deviceTransform(self.viewportTransform()),
                              self.viewport().font())

    # ---- view range ---------------------------------------------------------------------
    def set_extent(self, t0, t1):
        """Allow panning over [t0, t1] even beyond this run (runs compared on one scale)."""
        self._extent = (t0, t1)
        self._apply_limits()

    def _apply_limits(self):
        t0, t1 = self._extent or self.source.outline().time_range
        pad = (t1 - t0) * 0.05
        low = t0 - pad if t0 < 0 else max(t0 - pad, 0.0)  # (a run's time starts at 0: no view
        #                                                   pans into negative time)
        # zoom in to 50 ns, or to 2**12 steps of a float64 where times are that large
        narrowest = max(50.0, 4096 * float(np.spacing(float(max(abs(t0), abs(t1))))))
        self.vb.setLimits(xMin=low, xMax=t1 + pad, minXRange=narrowest, yMin=0)
        self._fit_y()

    def _fit_y(self):
        """Rows keep their height (``row_px``): a lane tree shorter than the view sits at its
        top with room below, never stretched to fill it (collapsed ranks were 330 px tall)."""
        h_px = max(self.vb.height(), 100)
        rows_visible = h_px / self.row_px
        y0 = self.vb.viewRange()[1][0] if self.vb.viewRange()[1][1] > 0 else 0
        total = self.lane_layout.height
        self.vb.setLimits(yMax=max(total, rows_visible, 1))
        if total <= rows_visible:
            self.vb.setYRange(0, rows_visible, padding=0)
        else:
            y0 = min(max(y0, 0), total - rows_visible)
            self.vb.setYRange(y0, y0 + rows_visible, padding=0)

    def _rescale_labels(self, *args):
        (y0, y1) = self.vb.viewRange()[1]
        if y1 > y0 and self.vb.height() > 0:
            self.lane_axis.rescale(round(self.vb.height() / (y1 - y0), 2))

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        if getattr(self, "lane_layout", None) is not None and not getattr(self, "_closing",
                                                                           False):
            self._fit_y()
            if hasattr(self, "sticky"):
                self.sticky.follow()

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

    def _remember(self, walk=None):
        """A view to come back to (Ctrl+Z); ``walk`` (from, to): a step along the critical
        path, remembered even where the view did not move, so that undo selects ``from``
        again."""
        cur = self.time_range()
        if not self.history or self.history[-1] != cur or walk is not None:
            self.history.append(cur)
            self._walks.append(walk)
            self.future.clear()
            self._walks_future.clear()
        self.viewChanged.emit(*cur)

    def undo(self):
        if len(self.history) > 1:
            self.future.append(self.history.pop())
            walk = self._walks.pop() if len(self._walks) > len(self.history) else None
            self._walks_future.append(walk)
            self.vb.setXRange(*self.history[-1], padding=0)
            self.viewChanged.emit(*self.time_range())  # the status bar follows undo
            if walk is not None:
                self._reselect(walk[0])

    def redo(self):
        if self.future:
            r = self.future.pop()
            walk = self._walks_future.pop() if self._walks_future else None
            self.history.append(r)
            self._walks.append(walk)
            self.vb.setXRange(*r, padding=0)
            self.viewChanged.emit(*self.time_range())
            if walk is not None:
                self._reselect(walk[1])

    def _reselect(self, item):
        self.select(item)
        if item is not None:
            self.reveal_item(item)
        self.itemRestored.emit(item)

    def zoom(self, factor, center=None):
        a, b = self.time_range()
        c = (a + b) / 2 if center is None else center
        self.set_time_range(c - (c - a) * factor, c + (b - c) * factor)

    def pan(self, frac):
        a, b = self.time_range()
        d = (b - a) * frac
        self.set_time_range(a + d, b + d)

    def reset(self):
        self.set_time_range(*self.source.outline().time_range)

    # ---- lane tree ----------------------------------------------------------------------
    def toggle_group(self, rank, group):
        self.lane_layout.toggle(rank, group)
        self._relayout()

    def toggle_rank(self, rank):
        """Collapse a rank to its header and first summary row, or open it (None: the
        all-ranks block), keeping that header where it was on screen."""
        head = next((e for e in self.lane_layout.entries
                     if e.kind == "header" and e.rank == rank), None)
        before = head.y if head is not None else None
        self.lane_layout.toggle_rank(rank)
        self._relayout()
        after = next((e.y for e in self.lane_layout.entries
                      if e.kind == "header" and e.rank == rank), None)
        if before is not None and after is not None:
            (y0, _y1) = self.vb.viewRange()[1]
            if before < y0:  # the sticky header was clicked: show the rank's header on top
                self.scroll_to(after)

    def expand(self, kinds=None, all_groups=False, expanded=True):
        """Open (or close) the lanes of some kinds (or all) on every rank."""
        for k in (None,) if all_groups else tuple(kinds or ()):
            self.lane_layout.set_kind_expanded(k, expanded)
        self._relayout()

    def collapse_ranks(self, collapsed=True):
        self.lane_layout.set_ranks_collapsed(collapsed)
        self._relayout()

    def set_filter(self, hidden_ranks=None, hidden_groups=None):
        """The rank filter and the kind toggles: what is left out of the lane tree.  Other
        ranks shown start at the top of the tree (the view kept its place in the old one:
        part-way down the ranks now shown, the path's track and the summaries above it)."""
        ranks = (hidden_ranks is not None
                 and set(hidden_ranks) != self.lane_layout.hidden_ranks)
        if hidden_ranks is not None:
            self.lane_layout.hidden_ranks = set(hidden_ranks)
        if hidden_groups is not None:
            self.lane_layout.hidden_groups = set(hidden_groups)
        self.lane_layout.rebuild()
        self._relayout()
        if ranks:
            self.scroll_to(0.0)

    def set_compact(self, compact):
        """Compact mode: rows a few pixels tall, so many ranks fit on a screen."""
        self.row_px = COMPACT_ROW_PX if compact else ROW_PX
        if self.lane_layout is None:
            return
        self.lane_layout.path_scale = ROW_PX / self.row_px  # (the path's track as tall)
        if self.lane_layout.path_track:
            self.lane_layout.rebuild()
            self._relayout()
        self._fit_y()
        self._rescale_labels()
        self.sticky.follow()

    @property
    def compact(self):
        return self.row_px <= COMPACT_ROW_PX

    def scroll_to(self, y):
        """Put lane-tree position ``y`` at the top (within the tree)."""
        (y0, y1) = self.vb.viewRange()[1]
        span = y1 - y0
        top = min(max(y, 0.0), max(self.lane_layout.height - span, 0.0))
        self.vb.setYRange(top, top + span, padding=0)

    def page(self, pages):
        """Scroll the lanes by whole screens (less one row, so a lane stays in sight)."""
        (y0, y1) = self.vb.viewRange()[1]
        self.scroll_to(y0 + pages * max(y1 - y0 - 1.0, 1.0))

    def _relayout(self):
        self._drop_tooltip()  # (lanes moved under a mouse at rest: P at the top of the view)
        self.item.set_layout(self.lane_layout)
        self.lane_axis.set_layout(self.lane_layout)
        self._apply_limits()
        self._rescale_labels()
        self.sticky.follow()
        self.layoutChanged.emit()

    # ---- search -------------------------------------------------------------------------
    def set_matches(self, matches):
        """Highlight these item ids (None, or none: nothing — an empty highlight dimmed every
        item, a search with no match, a GUI walk); a search's come sorted, others are."""
        if matches is not None and not len(matches):
            matches = None
        if matches is not None:
            matches = np.asarray(matches)
            if len(matches) > 1 and not bool(np.all(matches[1:] >= matches[:-1])):
                matches = np.sort(matches)
        self.item.matches = matches
        self.item.update()

    def select(self, index):
        self.item.selected = index
        self.item.update()

    def reveal_lane(self, lane):
        """Make a lane visible in the tree: its rank shown and open, its kind shown, its group
        expanded; returns its entry."""
        info = self.source.outline().lanes[lane]
        ly = self.lane_layout
        key = (info.rank, info.group)
        if key not in ly.expanded or info.rank in ly.hidden_ranks | ly.collapsed_ranks or \
                info.group in ly.hidden_groups:
            ly.expanded.add(key)
            ly.hidden_ranks.discard(info.rank)
            ly.collapsed_ranks.discard(info.rank)
            ly.hidden_groups.discard(info.group)
            ly.rebuild()
            self._relayout()
        return ly.find_lane(lane)

    def show_lane(self, lane):
        """Scroll a lane into sight (a details link)."""
        e = self.reveal_lane(lane)
        if e is not None:
            self.scroll_to(e.y - 3)

    def show_item(self, index, zoom=True):
        """Pan (and zoom) to an item, expanding its group so it is visible."""
        a, b = self.source.item_extent(index)
        d = max(b - a, 1000)
        if zoom:
            self.set_time_range(a - 2 * d, b + 2 * d)
        self.reveal_item(index)
        self.select(index)

    def reveal_item(self, index):
        """Open the item's lane and scroll it into sight (the time range stays)."""
        lane, _ = self.source.item_lane(index)
        e = self.reveal_lane(lane)
        if e is not None:
            (y0, y1) = self.vb.viewRange()[1]
            # (below the rank's sticky header, which covered the lane's label and its 100 %
            # mark: a GUI walk)
            head = (self.sticky.fontMetrics().height() + 7) * (y1 - y0) / max(self.vb.height(), 1)
            if not (y0 + head <= e.y and e.y + e.height <= y1):
                self.scroll_to(e.y - head)

    def follow_item(self, index):
        """The view follows a walk to ``index``: it stays where the item is in it, pans to
        centre it where it fits (the zoom kept), else zooms out to it."""
        a, b = (float(t) for t in self.source.item_extent(index))
        v0, v1 = self.time_range()
        span = v1 - v0
        if a >= v0 and b <= v1:
            return
        if b - a <= 0.6 * span:
            c = (a + b) / 2
            self.vb.setXRange(c - span / 2, c + span / 2, padding=0)
        else:
            d = max(b - a, 1000)
            self.vb.setXRange(a - 0.25 * d, b + 0.25 * d, padding=0)

    # ---- the critical path ----------------------------------------------------------------
    critical_error = None  # why this profile's critical path could not be computed

    def set_critical_path(self, path):
        """The run's critical path (``critical_path.RunPath``), computed off this thread."""
        self.item.path = None if path is None else PathOverlay(path)
        self._show_track()
        self.item.update()

    @property
    def critical_path(self):
        return None if self.item.path is None else self.item.path.path

    def show_critical_path(self, on=True):
        """Draw the run's critical path over the lanes (once computed) or not."""
        self.item.path_shown = bool(on)
        self._show_track()
        self.item.update()
        self.pathToggled.emit(bool(on))

    def _show_track(self):
        """The path's summary track at the top of the lanes while it is drawn; the lanes in
        sight stay in sight (the view moves down by the track's height)."""
        path = self.critical_path
        track = path.track if path is not None and self.item.path_shown else None
        layout = self.lane_layout
        rows = layout.path_track_rows(track) if track is not None else None
        if rows == layout.path_track:
            return
        before = layout.height
        layout.set_path_track(rows)
        (y0, y1) = self.vb.viewRange()[1]
        self._relayout()
        if y0 > 0:
            self.scroll_to(y0 + layout.height - before)

    def toggle_critical_path(self):
        self.show_critical_path(not self.item.path_shown)

    def walk(self, forward=False):
        """``[`` / ``]``: select what the selected item waited for (or was created by), or
        the first item it held up — while the run's path is drawn and the item is on it, the
        step before or after on that path (the path also goes through waits, calls and
        queues, which an item's own link does not); the view follows, undo comes back.  Says
        why not where nothing is selected, the critical path is not computed yet, or the
        chain stops."""
        i = self.item.selected
        if i is None:
            self.walked.emit(None, "select an item first: [ walks back to what it waited for, "
                                   "] forward to what it held up")
            return None
        if not self.source.critical_path_ready:
            self.walked.emit(None, self.path_unready or "the critical path is still being "
                                                        "computed: try again in a moment")
            return None
        j, why = None, ""
        path = self.critical_path if self.item.path_shown else None
        if path is not None:  # (drawn: along it, from the step last walked to where it is i's)
            j, at, why = step_on_path(self.source, path, i, self._path_step, forward)
            self._path_step = at
        if not why:  # (not drawn, or i is not on it: i's own link)
            j, why = (step_forward if forward else step_back)(self.source, i)
        if j is not None:
            self.reveal_item(j)
            self.follow_item(j)
            self.select(j)
            self._remember(walk=(i, j))
        self.walked.emit(j, why)
        return j

    # ---- mouse and keys -----------------------------------------------------------------
    def _ns_per_px(self):
        a, b = self.time_range()
        return (b - a) / max(self.vb.width(), 1)

    def _mouse_moved(self, pos):
        if self.item is None:
            return
        if not self.vb.sceneBoundingRect().contains(pos):
            self._hover = self._tooltip = None  # (the lane labels say their own)
            self._tips.cancel()
            self.hide_cursor()
            return
        p = self.vb.mapSceneToView(pos)
        self.cursor.setPos(p.x())
        self.cursor.show()
        self.cursor_label.show()
        self._follow_cursor()
        ns_px = self._ns_per_px()
        hit, entry = self.item.hit(p.x(), p.y(), ns_px)
        src, x = self.source, p.x()
        path = self.item.path.path if self.item.path is not None and self.item.path_shown \
            else None
        marker = self.item.marker_at(x, p.y())
        if marker is not None:  # (a failure's label: what the report said)
            what = ("marker", marker.get("time"), marker.get("rank"))
            text = lambda: tooltip(marker_words(marker))  # noqa: E731
        elif hit is not None:
            notes = (lambda: path_notes(path, hit[1])) if path is not None and \
                hit[0] == "item" else list
            what, text = ("hit", hit), lambda: tooltip_html(src, hit, notes())
        elif entry is not None and entry.kind == "path" and path is not None and \
                path.track is not None:
            what = ("path", entry.track_row, int(x // max(ns_px, 1e-9)))
            text = lambda: tooltip(path.track.hover_text(  # noqa: E731
                entry.track_row, entry.label, x, ns_px, self.lane_layout.group_title,
                src.item_title))
        elif entry is not None and entry.kind == "summary":
            what = ("summary", entry.rank, entry.group, int(x // max(ns_px, 1e-9)))
            text = lambda: summary_text(src, entry, x, ns_px)  # noqa: E731
        else:
            self._forget_hover()
            return
        if what == self._hover:  # the same: the tooltip (once there) follows the mouse
            if self._tooltip:
                self._show_tooltip(QtGui.QCursor.pos())
            return
        self._hover = what
        self._tips.run(text, (src, what))  # (an item's details take a frame or more)

    def work_threads(self):
        """The threads this timeline started that may still run: its tiles, its tooltips."""
        tiles = [] if self.item is None or self.item.tiles is None else [self.item.tiles.thread]
        return tiles + list(self._tips.threads)

    def _drop_tooltip(self, *args):
        """The view moved (keys, the wheel, a drag, lanes pushed down): the tooltip named
        what was under the mouse before, and stayed there over another lane.  Gone; the next
        mouse move says what is under it now."""
        if self._hover is not None or self._tooltip:
            self._forget_hover()

    def _forget_hover(self):
        """Nothing hovered: no tooltip asked, none shown."""
        self._hover = self._tooltip = None
        self._tips.cancel()
        QtWidgets.QToolTip.hideText()

    def _tooltip_ready(self, token, text):
        """A hover's text, made in a thread: shown if the mouse still rests on that thing."""
        src, what = token
        if src is not self.source or what != self._hover or isinstance(text, Exception):
            return
        self._tooltip = text
        self._show_tooltip(QtGui.QCursor.pos())

    def _show_tooltip(self, at):
        QtWidgets.QToolTip.showText(at, self._tooltip, self.viewport(), QtCore.QRect(),
                                    TOOLTIP_MS)

    def hide_cursor(self):
        """The mouse's time line and label gone: the pointer left the plot (a GUI walk found
        both left where it last was, and in the exported picture)."""
        self.cursor.hide()
        self.cursor_label.hide()

    def leaveEvent(self, ev):  # noqa: N802 - Qt's name
        self.hide_cursor()
        super().leaveEvent(ev)

    def _follow_cursor(self, *args):
        """The cursor's time label: at the top of the view, with the digits the zoom shows;
        hidden when a pan or zoom by keys takes the cursor out of the view."""
        x = self.cursor.value()
        (a, b), (y0, _y1) = self.vb.viewRange()
        if not (a <= x <= b):
            self.cursor.hide()
            self.cursor_label.hide()
            return
        self.cursor_label.setText(format_time(x, self._ns_per_px()))
        self.cursor_label.setPos(x, y0)

    def viewportEvent(self, ev):
        """Qt's own tooltip event (sent once the mouse rests ~0.7 s) finds no graphics item
        with a tooltip and would hide ours: it is answered with ours instead."""
        if ev.type() == QtCore.QEvent.Type.ToolTip:
            if getattr(self, "_tooltip", None):
                self._show_tooltip(ev.globalPos())
            ev.accept()
            return True
        item = self.__dict__.get("item")  # (None while pyqtgraph makes the view)
        tiles = item.tiles if item is not None else None
        if tiles is not None and ev.type() == QtCore.QEvent.Type.Paint:
            with tiles.holding():  # (the whole frame, axes too: ``TileWorker.holding``)
                return super().viewportEvent(ev)
        return super().viewportEvent(ev)

    def _mouse_clicked(self, ev):
        if ev.button() != QtCore.Qt.MouseButton.LeftButton or self.item is None or \
                not self.vb.sceneBoundingRect().contains(ev.scenePos()):
            return
        p = self.vb.mapSceneToView(ev.scenePos())
        hit, entry = self.item.hit(p.x(), p.y(), self._ns_per_px())
        step = None
        if hit is None and entry is not None and entry.kind == "path":
            step = self._path_step_at(entry.track_row, p.x(), self._ns_per_px() / 2)
            if step is not None:  # (the track's piece: the item of the path's step there)
                self._path_step = step
                hit = ("item", int(self.critical_path.item[step]))
        if hit is None and step is None:  # (a failure's label: its report pinned in the
            marker = self.item.marker_at(p.x(), p.y())  # details, where its tooltip goes)
            hit = ("marker", marker) if marker is not None else None
        self.select(hit[1] if hit is not None and hit[0] == "item" else None)
        if ev.double() and hit is not None and hit[0] == "band":
            a, b = hit[1][0], hit[1][1]
            self.set_time_range(a, b)
        self.itemClicked.emit(hit)
        if step is not None:
            self._show_step(step)

    def _show_step(self, k):
        """A step picked on the path's track: which step it is and where its item is said, as
        a walk says it (a GUI walk: the details changed to an item on a lane far below the
        view, nothing said where).  The track stays in sight; Zoom to in the details goes."""
        j, n = int(self.critical_path.item[k]), len(self.critical_path)
        lane = self.source.outline().lanes[self.source.item_lane(j)[0]]
        self.walked.emit(j, f"step {n - k:,} of {n:,} of the critical path: "
                            f"{self.source.item_title(j)}, on rank {lane.rank}'s lane "
                            f"{lane.short} (Zoom to in its details goes there; [ and ] walk "
                            "on from it)")

    def _path_step_at(self, track_row, t, half=0.0):
        """The step of the drawn path that held it around time ``t`` (within ``half`` ns
        either side: the pixel clicked, 160 ms of the guide's run in full view) on a row of
        its summary track (a (rank, lane group) row: a step on those lanes; the whole run's
        row: any) — the one holding most of that window, the shortest among equals; None
        elsewhere (the legend, no path, nothing there)."""
        path = self.critical_path if self.item.path_shown else None
        if path is None or path.track is None or track_row == "legend":
            return None
        a, b = t - half, t + half
        near = np.flatnonzero((path.begin <= b) & (path.end >= a))
        if track_row != "all" and len(near):
            rank, group = path.track.rows[track_row]
            lanes = self.source.outline().lanes
            near = near[[lanes[int(L)].rank == rank and lanes[int(L)].group == group
                         for L in path.lane[near].tolist()]]
        if not len(near):
            return None
        held = np.minimum(path.end[near], b) - np.maximum(path.begin[near], a)
        return int(near[np.lexsort((path.end[near] - path.begin[near], -held))[0]])

    def keyPressEvent(self, ev):
        if not self.handle_key(ev):
            super().keyPressEvent(ev)

    def handle_key(self, ev):
        """The view keys, wherever the focus is (the window forwards them here); True if
        ``ev`` was one."""
        if self.source is None:
            return False
        k = ev.key()
        mods = ev.modifiers()
        ctrl = bool(mods & QtCore.Qt.KeyboardModifier.ControlModifier)
        shift = bool(mods & QtCore.Qt.KeyboardModifier.ShiftModifier)
        K = QtCore.Qt.Key
        plain = {K.Key_Left: lambda: self.pan(-0.01 if shift else -0.05),
                 K.Key_Right: lambda: self.pan(0.01 if shift else 0.05),
                 K.Key_Plus: lambda: self.zoom(0.5), K.Key_Equal: lambda: self.zoom(0.5),
                 K.Key_Minus: lambda: self.zoom(2.0), K.Key_0: self.reset,
                 K.Key_Up: lambda: self.page(-0.1), K.Key_Down: lambda: self.page(0.1),
                 K.Key_PageUp: lambda: self.page(-1), K.Key_PageDown: lambda: self.page(1),
                 K.Key_Home: lambda: self.scroll_to(0),
                 K.Key_End: lambda: self.scroll_to(self.lane_layout.height),
                 K.Key_Escape: self.clear_highlights,
                 K.Key_C: self.toggle_rank_in_view,
                 K.Key_BracketLeft: lambda: self.walk(forward=False),
                 K.Key_BracketRight: lambda: self.walk(forward=True),
                 K.Key_P: self.toggle_critical_path}
        with_ctrl = {K.Key_Z: self.redo if shift else self.undo, K.Key_Y: self.redo,
                     K.Key_Left: self.undo, K.Key_Right: self.redo}
        action = (with_ctrl if ctrl else plain).get(k)
        if action is None or (mods & QtCore.Qt.KeyboardModifier.AltModifier):
            return False
        action()
        return True

    def clear_highlights(self):
        """Escape: no search highlight, no selection."""
        self.set_matches(None)
        self.select(None)
        self.escapePressed.emit()

    def toggle_rank_in_view(self):
        """C: collapse (or open) the rank at the top of the view."""
        head = self.lane_layout.header_at(self.vb.viewRange()[1][0] + 1e-6)
        if head is not None:
            self.toggle_rank(head.rank)


__all__ = ["TimelineWidget", "TimelineItem", "details_rows", "tooltip_html"]
