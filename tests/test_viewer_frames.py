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
