"""What a pan or wheel step costs the window's thread, counted in work, never timed (issue 34:
frames <= 16 ms; the figures are in docs/performance.md, ``benchmarks/frame_times.py``).

Each cut draws the same pixels: the time axes are laid out as pyqtgraph lays them out, only
once for both; the utilization strips' scale marks are drawn as they were, from what a
frame made once."""

import random

import pytest

pytest.importorskip("pytestqt")

import pyqtgraph as pg  # noqa: E402
from PySide6 import QtGui  # noqa: E402


def _specs(specs):
    """(axis line, ticks, labels) as plain numbers and texts, to compare."""
    (pen, a, b), ticks, labels = specs
    return ((pen.color().rgba(), a.x(), a.y(), b.x(), b.y()),
            [(p.color().rgba(), p1.x(), p1.y(), p2.x(), p2.y()) for p, p1, p2 in ticks],
            [(r.x(), r.y(), r.width(), r.height(), int(f), t) for r, f, t in labels])


def test_the_time_axes_are_laid_out_as_pyqtgraph_lays_them_out_once_for_both(qtbot,
                                                                             monkeypatch):
    from legate_prof.viewer.timeline.axes import TimeAxis
    from legate_prof.viewer.timeline.widget import TimelineWidget
    w = TimelineWidget()
    qtbot.addWidget(w)
    w.resize(1500, 700)
    w.show()
    qtbot.waitExposed(w)
    axes = [w.getPlotItem().getAxis(side) for side in ("top", "bottom")]
    assert all(isinstance(ax, TimeAxis) for ax in axes)
    made = []
    generic = pg.AxisItem.tickValues
    monkeypatch.setattr(pg.AxisItem, "tickValues",
                        lambda self, *a: made.append(a) or generic(self, *a))
    rnd = random.Random(7)
    views = [(0.0, 5.1e9), (2.5e9, 2.5e9 + 1e4), (1e15, 1e15 + 5e6), (0.0, 100.0)]
    views += [(a, a + 10 ** rnd.uniform(1.7, 10)) for a in
              (rnd.uniform(0, 5e9) for _ in range(60))]
    for a, b in views:
        w.vb.setXRange(a, b, padding=0)
        made.clear()
        picture = QtGui.QPicture()
        p = QtGui.QPainter(picture)
        try:
            for ax in axes:
                ours = _specs(ax.generateDrawSpecs(p))
                assert len(made) == 1  # (the second axis: the first one's ticks)
                assert ours == _specs(pg.AxisItem.generateDrawSpecs(ax, p)), (a, b, ax)
                assert ours[2]  # (labelled)
        finally:
            p.end()


@pytest.fixture(scope="module")
def ranks4(tmp_path_factory):
    from fixtures.synthetic import generate
    return generate(tmp_path_factory.mktemp("r4"), ranks=4, items=16_000, seed=3)


def _marks(w):
    w.grab()
    return [((b.x(), b.y(), b.width(), b.height()), text)
            for b, text in w.item.last_stats.get("scale_labels", [])]


def test_the_scale_marks_kept_from_frame_to_frame_are_those_a_fresh_frame_draws(qtbot,
                                                                               ranks4):
    """A row's scale marks are made once for its place and size and drawn again by each
    pan and wheel step: after pans, wheel steps and a change of rows they are those a
    timeline opened at that view draws."""
    from legate_prof.load.loader import load_profile
    from legate_prof.viewer.timeline.widget import TimelineWidget
    src = load_profile(ranks4, ranked=True)

    def timeline():
        w = TimelineWidget(src)
        qtbot.addWidget(w)
        w.resize(1500, 900)
        w.show()
        qtbot.waitExposed(w)
        return w
    moved = timeline()
    t0, t1 = moved.source.outline().time_range
    span = (t1 - t0) / 7
    views = [(t0 + span * (1 + 0.01 * i), t0 + span * (2 + 0.01 * i)) for i in range(4)]
    views += [(t0 + span * (1.5 - 0.5 * 0.85 ** k), t0 + span * (1.5 + 0.5 * 0.85 ** k))
              for k in range(1, 5)]
    for a, b in views:
        moved.set_time_range(a, b, remember=False)
        before = _marks(moved)
    moved.expand(["cpu", "utility"])  # (rows move down: their marks with them)
    fresh = timeline()
    fresh.expand(["cpu", "utility"])
    fresh.set_time_range(*views[-1], remember=False)
    after = _marks(moved)
    assert before and after and after != before
    assert after == _marks(fresh)


def _pixels(w):
    import numpy as np
    w.cursor.hide()  # (the time under the mouse, where a synthetic move of it put it)
    w.cursor_label.hide()
    image = w.grab().toImage().convertToFormat(QtGui.QImage.Format.Format_ARGB32)
    return np.frombuffer(image.constBits(), np.uint32).reshape(image.height(), -1).copy()


def test_a_view_reached_by_pans_and_wheel_steps_settles_to_what_a_fresh_timeline_draws(
        qtbot, ranks4):
    """Settled (every tile in), a view reached by pans and wheel steps is drawn pixel for
    pixel as a timeline opened at that view draws it (as a screenshot draws it): tiles and
    utilization strips kept from earlier views (made for another range of cells, another
    pixel size within the cell, a strip's picture anchored at another bin) are shown while
    the view moves, and the view's own are made once it rests (they were kept for good:
    thousands of pixels of strips and lanes differed)."""
    from legate_prof.load.loader import load_profile
    from legate_prof.viewer.timeline.widget import TimelineWidget
    src = load_profile(ranks4, ranked=True)

    def timeline(view=None):
        w = TimelineWidget(src)
        qtbot.addWidget(w)
        w.resize(1500, 900)
        w.expand(["cpu", "utility"])
        if view is not None:
            w.set_time_range(*view, remember=False)
        w.show()
        qtbot.waitExposed(w)
        return w
    moved = timeline()
    moved.item.compute_in_background()
    qtbot.waitUntil(moved.item.settled, timeout=120_000)
    rnd = random.Random(3)
    for step in range(16):
        a, b = moved.time_range()
        if step % 2:
            moved.pan(rnd.uniform(-0.2, 0.2))
        else:
            moved.zoom(0.85 if rnd.random() < 0.7 else 1 / 0.85,
                       a + (b - a) * rnd.uniform(0.2, 0.8))
        moved.grab()
        if step % 3 == 0:  # (some steps come before the last one's tiles are in)
            qtbot.waitUntil(moved.item.settled, timeout=120_000)
    qtbot.waitUntil(moved.item.settled, timeout=120_000)
    after = _pixels(moved)
    fresh = timeline(moved.time_range())  # (everything made in the frame, as a screenshot)
    expected = _pixels(fresh)
    assert after.shape == expected.shape
    assert int((after != expected).sum()) == 0


def test_a_move_of_the_view_too_small_to_draw_leaves_the_range_it_draws(qtbot, ranks4):
    """pyqtgraph keeps the view's transform for a move under a billionth of the range (a
    pan stopped at the run's start made one) but kept the new range: the timeline was drawn
    for one range at the other's pixels (64 to 253 pixels off a timeline opened there)."""
    from legate_prof.load.loader import load_profile
    from legate_prof.viewer.timeline.widget import TimelineWidget
    src = load_profile(ranks4, ranked=True)

    def timeline(view):
        w = TimelineWidget(src)
        qtbot.addWidget(w)
        w.resize(1500, 900)
        w.expand(["cpu", "utility"])
        w.set_time_range(*view, remember=False)
        w.show()
        qtbot.waitExposed(w)
        return w
    t0, t1 = TimelineWidget(src).source.outline().time_range
    for view in ((t0, t1), (t0 + (t1 - t0) * 0.3, t0 + (t1 - t0) * 0.4)):
        moved = timeline(view)
        moved.grab()
        a, b = view
        moved.set_time_range(a + (b - a) * 2e-10, b, remember=False)
        after = _pixels(moved)
        assert int((after != _pixels(timeline(moved.time_range()))).sum()) == 0


def _canvas(width=640, height=480):
    """A picture of a strip's background and a painter on it (the pixel tests' page)."""
    img = QtGui.QImage(width, height, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(QtGui.QColor(250, 250, 250))
    return img, QtGui.QPainter(img)


def _painter_setups():
    """Painters as the text tests draw on them: as made, moved by a fraction of a pixel,
    scaled, left to right and right to left."""
    from PySide6 import QtCore
    return (lambda p: None, lambda p: p.translate(-0.37, 12.6), lambda p: p.scale(1.5, 1.25),
            lambda p: p.setLayoutDirection(QtCore.Qt.LayoutDirection.LeftToRight),
            lambda p: p.setLayoutDirection(QtCore.Qt.LayoutDirection.RightToLeft))


def test_scale_labels_drawn_from_their_layouts_are_the_pixels_drawtext_draws(qtbot):
    """A strip's scale labels are laid out once (``ScaleText``) and drawn as
    ``QPainter.drawText(box, AlignVCenter, text)`` draws them, pixel for pixel: boxes at
    fractional places, translated and scaled painters, boxes too short for the text (drawn
    clipped to them), the painter's default direction and left to right; a painter drawing
    right to left, and a text drawText reads marks in ('&'), are drawn by drawText."""
    import numpy as np
    from PySide6 import QtCore
    from legate_prof.viewer.timeline.summary_strip import LABEL_FLAGS, ScaleText
    font = QtGui.QFont()
    font.setPointSizeF(6.5)
    fh = QtGui.QFontMetricsF(font).height()
    rng = np.random.default_rng(8)
    texts = ["100%", "50%", "0", "peak 1.25 GiB", "617.3 MiB", "0 B", "a&b"]
    boxes = [QtCore.QRectF(x, y, w, h) for x, y, w, h in zip(
        rng.uniform(0, 400, 120), rng.uniform(0, 300, 120), rng.choice([120, 30, 6], 120),
        rng.choice([fh, fh - 3, fh + 2.5, 4.0], 120))]
    for setup in _painter_setups():
        pictures, placed = [], []
        for cached in (False, True):
            img, p = _canvas()
            setup(p)
            rtl = p.layoutDirection() == QtCore.Qt.LayoutDirection.RightToLeft
            p.setFont(font)
            p.setPen(QtGui.QColor(90, 90, 90))
            text = ScaleText(p, font)
            for k, box in enumerate(boxes):
                label = texts[k % len(texts)]
                if cached:
                    where = text.place(box, label)
                    placed.append(where is not None)
                    text.draw(p, box, label, where)
                else:
                    p.drawText(box, LABEL_FLAGS, label)
            p.end()
            pictures.append(img)
        assert pictures[0] == pictures[1]
        assert any(placed) != rtl and not all(placed)  # (the layouts drawn, and drawText)


def test_dotted_scale_lines_drawn_from_their_pictures_are_the_pixels_drawline_draws(qtbot):
    """A strip's two dotted scale lines are drawn from a picture of each made once
    (``DottedLines``), pixel for pixel as ``QPainter.drawLine`` draws them with the same pen:
    painters moved by fractional and whole pixels, lines at fractional and whole heights,
    of many lengths, from the view's left edge; a line elsewhere, in the top two rows, or
    on a scaled painter is drawn by drawLine."""
    import numpy as np
    from PySide6 import QtCore
    from legate_prof.viewer.timeline.item import _translation
    from legate_prof.viewer.timeline.summary_strip import DottedLines
    pen = QtGui.QPen(QtGui.QColor(170, 170, 170))
    pen.setStyle(QtCore.Qt.PenStyle.DotLine)
    rng = np.random.default_rng(3)
    setups = [(rng.uniform(-600, 600), rng.uniform(-300, 300), 1.0) for _ in range(6)]
    setups += [(0.0, 0.0, 1.0), (12.0, -7.0, 1.0), (0.37, 0.5, 1.0), (3.3, 1.7, 1.5)]
    for left, top, zoom in setups:
        lines = []
        for k in range(60):
            y = top + (rng.uniform(0, 470) if k % 3 else rng.integers(0, 470) + 0.5 * (k % 2))
            start = left if k % 17 else left + 5.25  # (one in 17 not at the left edge)
            lines.append((QtCore.QPointF(start, y),
                          QtCore.QPointF(left + rng.integers(1, 640) + rng.uniform(0, 1), y)))
        pictures = []
        dotted = DottedLines(pen)
        for from_pictures in (False, True):
            img, p = _canvas()
            p.scale(zoom, zoom)
            p.translate(-left, -top)  # (as the view's picture is drawn: moved, no more)
            for a, b in lines:
                if from_pictures:
                    dotted.draw(p, a, b, _translation(p.transform()))
                else:
                    p.setPen(pen)
                    p.drawLine(a, b)
            p.end()
            pictures.append(img)
        assert pictures[0] == pictures[1]
        assert (len(dotted._made) > 10) == (zoom == 1.0)  # (the pictures used where exact)


def test_box_labels_worked_out_once_are_the_pixels_and_cuts_qt_makes_each_time(qtbot):
    """The timeline's box and band labels (``BoxText``): each label's width, its cut form
    and its drawing as ``horizontalAdvance``, ``elidedText(text, ElideRight, width)`` and
    ``drawText(box, AlignVCenter | AlignLeft, text)`` make them each time, pixel for pixel:
    boxes at fractional places and of all widths (labels cut, and cut to nothing), moved,
    scaled painters, both directions (``_painter_setups``); asked twice (the second from what was kept)."""
    import numpy as np
    from PySide6 import QtCore
    from legate_prof.viewer.timeline.summary_strip import BoxText
    flags = int(QtCore.Qt.AlignmentFlag.AlignVCenter | QtCore.Qt.AlignmentFlag.AlignLeft)
    font = QtGui.QFont()
    font.setPointSizeF(8)
    rng = np.random.default_rng(11)
    texts = ["×72 merged", "×72", "legate.core.ops.add (12)", "copy 4.0 MiB", "&amp; <b>",
             "task_with_a_rather_long_name_that_is_cut", "Ω ünïcode"]
    boxes = [(x, y, w, h) for x, y, w, h in zip(
        rng.uniform(0, 500, 150), rng.uniform(0, 400, 150), rng.uniform(2, 260, 150),
        rng.choice([9.0, 12.5, 20.0, 31.0], 150))]
    for setup in _painter_setups():
        pictures, cuts = [], []
        for kept in (False, True):
            img, p = _canvas(800)
            setup(p)
            p.setFont(font)
            p.setPen(QtGui.QColor(20, 20, 20))
            fm, t = QtGui.QFontMetrics(p.font()), BoxText(p)
            made = []
            for k, (x, y, w, h) in enumerate(boxes * 2):  # (the second round: as kept)
                text = texts[k % len(texts)]
                box = QtCore.QRectF(x + 2, y, w - 4, h)
                if kept:
                    made.append((t.advance(text), t.elided(text, int(w) - 4)))
                    t.draw(p, box, made[-1][1])
                else:
                    made.append((fm.horizontalAdvance(text),
                                 fm.elidedText(text, QtCore.Qt.TextElideMode.ElideRight,
                                               int(w) - 4)))
                    p.drawText(box, flags, made[-1][1])
            p.end()
            pictures.append(img)
            cuts.append(made)
        assert cuts[0] == cuts[1]
        assert pictures[0] == pictures[1]
        assert any(c != texts[k % len(texts)] for k, (_, c) in enumerate(cuts[0]))  # (cut)


def test_scale_labels_drawn_again_in_a_font_shown_before_are_whole(qtbot, ranks4):
    """A row's scale marks are kept by its place and the painter's font: back in a font
    drawn before, the labels laid out then are drawn again, with their layouts (their
    lines alone read freed memory once the other font's labels replaced those layouts: a
    crash, or garbage)."""
    import gc
    from legate_prof.load.loader import load_profile
    from legate_prof.viewer.timeline.widget import TimelineWidget
    w = TimelineWidget(load_profile(ranks4, ranked=True))
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    qtbot.waitExposed(w)
    shown = QtGui.QFont(w.viewport().font())
    other = QtGui.QFont(shown)
    other.setFamily("Monospace")
    first = w.grab().toImage()
    for _ in range(10):
        w.viewport().setFont(other)
        w.item._cache_key = None
        w.grab()
        gc.collect()
        for _ in range(300):  # (other layouts, where the freed ones were)
            churn = QtGui.QTextLayout("y" * 80, QtGui.QFont())
            churn.beginLayout()
            churn.createLine()
            churn.endLayout()
        w.viewport().setFont(shown)
        w.item._cache_key = None
        assert w.grab().toImage() == first


def test_a_lanes_rows_mapped_end_to_end_are_those_mapped_row_by_row(qtbot, ranks4):
    """A frame maps a lane tile's rows to view pixels end to end (``FlatRows``): the same
    arrays, values and types as row by row, at the whole run and zoomed in (rows with no
    bands, bands without busy shares, waits); a tile whose rows' columns differ in type is
    mapped row by row."""
    import numpy as np
    from legate_prof.load.loader import load_profile
    from legate_prof.viewer.timeline.item import FlatRows
    from legate_prof.viewer.timeline.widget import TimelineWidget
    w = TimelineWidget(load_profile(ranks4, ranked=True))
    qtbot.addWidget(w)
    w.resize(1500, 900)
    w.show()
    qtbot.waitExposed(w)
    w.expand(all_groups=True)
    item = w.item
    lanes = [e.lane for e in item.layout.entries if e.kind == "lane"]
    t0, t1 = w.time_range()
    width = 1300
    checked = 0
    for a, b in ((t0, t1), (t0 + (t1 - t0) * 0.4, t0 + (t1 - t0) * 0.41)):
        w.set_time_range(a, b, remember=False)
        w.grab()
        (x0, x1), _ = w.vb.viewRange()
        ends = [item._lane_rows(L, x0, x1, width) for L in lanes]
        for k in list(item._flat_rows):  # (row by row, as before)
            item._flat_rows[k] = (item._flat_rows[k][0], None)
        rows = [item._lane_rows(L, x0, x1, width) for L in lanes]
        item._flat_rows.clear()
        for got, want in zip(ends, rows):
            assert (got is None) == (want is None)
            for g, r in zip(got or (), want or ()):
                assert g.row == r.row
                for name in g.__slots__[1:]:
                    x, y = getattr(g, name), getattr(r, name)
                    assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), name
                checked += len(g.box_x0) + len(g.band_x0) + len(g.piece_x0)
    assert checked > 1000
    tile = next(c.data for c in item._lane_cache._entries.values() if len(c.data.rows) > 1)
    tile.rows[0].box_x0 = tile.rows[0].box_x0.astype(np.float32)
    tile.rows[1].box_x0 = tile.rows[1].box_x0.astype(np.float64)
    assert FlatRows.of(tile) is None


def test_a_rectangle_batch_draws_what_pyqtgraphs_primitive_array_draws(qtbot):
    """``RectBatch`` wraps its buffer's first rectangle once, not at every call: batches
    growing and shrinking, fractional and empty rectangles, drawn as pyqtgraph's
    ``PrimitiveArray`` draws them."""
    import numpy as np
    from PySide6 import QtCore
    from pyqtgraph.Qt import internals
    from legate_prof.viewer.timeline.rect_batch import RectBatch
    rng = np.random.default_rng(3)
    batches = [[rng.uniform(-5, 400, n), rng.uniform(-5, 300, n), rng.uniform(0, 9, n),
                rng.uniform(0, 9, n)] for n in (7, 300, 20, 0, 1000, 3, 1)]
    pictures = []
    for ours in (False, True):
        img = QtGui.QImage(400, 300, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(0)
        p = QtGui.QPainter(img)
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        batch = RectBatch() if ours else internals.PrimitiveArray(QtCore.QRectF, 4)
        for k, (x, y, w, h) in enumerate(batches):
            p.setBrush(QtGui.QColor(40 * k, 200 - 20 * k, 90, 255 - 30 * k))
            if ours:
                batch.draw(p, x, y, w, h)
            elif len(x):
                batch.resize(len(x))
                arr = batch.ndarray()
                arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3] = x, y, w, h
                p.drawRects(*batch.drawargs())
        p.end()
        pictures.append(img)
    assert pictures[0] == pictures[1]


def test_the_whole_run_in_view_computes_no_cell_beyond_the_run(qtbot, ranks4, monkeypatch):
    """A view's tiles and strips are made for the view and half a view each side, within the
    run's time and a cell: at the whole run's view (as a window opens) half of the first
    frame's strips was empty time before and after the run (a view past the run's end now
    shows its strips end there)."""
    import math
    from legate_prof.load.loader import load_profile
    from legate_prof.viewer.timeline.tile_worker import TileWorker
    from legate_prof.viewer.timeline.widget import TimelineWidget
    from legate_prof.query import ProfileSource
    asked, ask = [], TileWorker.ask
    monkeypatch.setattr(TileWorker, "ask", lambda self, a: asked.append(a) or ask(self, a))
    # (every strip asked of the tiles' thread: none at hand, drawn in the frame for the same
    # cells, ``_summary_strip``)
    monkeypatch.setattr(ProfileSource, "summary_at_hand", lambda self, *a: False)
    src = load_profile(ranks4, ranked=True)
    w = TimelineWidget(src)
    qtbot.addWidget(w)
    w.resize(1500, 900)
    w.expand(["cpu", "utility"])
    w.show()
    qtbot.waitExposed(w)
    w.item.compute_in_background()
    w.grab()
    qtbot.waitUntil(w.item.settled, timeout=120_000)
    t0, t1 = w.item.t_range
    a, b = w.time_range()
    assert (a, b) == (t0, t1)  # (the view: the whole run)
    cells = [a.spec[:3] for a in asked if a.cache in ("summary", "lane")]
    assert len(cells) > 5 and {a.cache for a in asked} >= {"summary", "lane"}
    for cell, first, end in cells:
        assert math.floor(t0 / cell) - 1 == first and end == math.ceil(t1 / cell) + 1


def _on_screen(w):
    """What the window shows (its backing store, as the frames painted it), not a fresh
    render of it (``grab`` paints the whole widget again, whatever was left undrawn)."""
    import numpy as np
    image = w.screen().grabWindow(w.winId()).toImage().convertToFormat(
        QtGui.QImage.Format.Format_ARGB32)
    return np.frombuffer(image.constBits(), np.uint32).reshape(image.height(), -1).copy()


def test_zoomed_out_step_by_step_from_the_deepest_zoom_each_view_at_rest_is_drawn_whole(
        qtbot):
    """Keys zoom in to the deepest view of a real run (50 ns, 1.27 s into it), then out step
    by step: each view at rest is on screen as a timeline opened there draws it.  The item's
    bounds were the whole run's time: at a few hundred ns a view that is over 2**31 pixels,
    past the ints Qt maps an ``update()`` to, and no update repainted anything: the view at
    rest kept the narrower view's pictures (the middle drawn, both sides blank) for good."""
    from pathlib import Path
    from PySide6 import QtCore
    from legate_prof.load.loader import load_profile
    from legate_prof.viewer.timeline.widget import TimelineWidget
    run = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "mpi2_copies"
    src = load_profile([str(run)], ranked=True)

    def timeline(view):
        w = TimelineWidget(src)
        qtbot.addWidget(w)
        w.resize(1200, 700)
        w.set_time_range(*view, remember=False)
        w.show()
        qtbot.waitExposed(w)
        w.cursor.hide()  # (the time under the mouse: not this test's)
        w.cursor_label.hide()
        return w
    moved = timeline((1274819868.0, 1274819968.0))
    moved.item.compute_in_background()
    qtbot.waitUntil(moved.item.settled, timeout=60_000)
    for _ in range(10):
        qtbot.keyClick(moved, QtCore.Qt.Key.Key_Plus)
        qtbot.wait(20)
    a, b = moved.time_range()
    assert b - a == 50.0  # (the deepest zoom)
    for step in range(4):
        qtbot.keyClick(moved, QtCore.Qt.Key.Key_Minus)
        try:  # (the view at rest, its own tiles in; one never repainted is compared anyway)
            qtbot.waitUntil(moved.item.settled, timeout=30_000)
        except qtbot.TimeoutError:
            pass
        a, b = moved.time_range()
        assert b - a == 100.0 * 2 ** step
        shown = _on_screen(moved)
        fresh = timeline((a, b))
        expected = _pixels(fresh)
        assert shown.shape == expected.shape
        differ = (shown != expected).any(axis=0)  # (pixel columns)
        assert not differ.any(), (f"{b - a:g} ns: {int(differ.sum())} of {differ.size} "
                                  f"pixel columns differ, settled {moved.item.settled()}")
