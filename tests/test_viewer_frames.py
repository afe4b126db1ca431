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
