"""Four small defects a GUI walk under Xvfb found: a memory used past its capacity drawn flat
at 100 %, a "100%" label crossed out by its row's line, a long search summary cut off by the
status bar's legend, and Export PNG written at 1x on a HiDPI screen.  Real Qt drawing
(offscreen), pixels read back; waits are for states, never durations.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtGui
from tests_viewer_helpers import shown_window

pytest.importorskip("pytestqt")

ROOT = Path(__file__).resolve().parents[1]


def _synthetic(out, over=False):
    """One synthetic rank (CPUs, utility, I/O, system and zero-copy memory); ``over``: its
    system memory's recorded capacity a third of what the run allocates in it (its use goes
    to ~180 % of it, as a profile whose capacity was recorded too small)."""
    import fixtures.synthetic as syn

    class Writer(syn.LegionProfWriter):
        def write(self, record, **fields):
            if over and record == "MemDesc" and fields.get("kind") == 2:  # (system memory)
                fields["capacity"] //= 3
            return super().write(record, **fields)

    real = syn.LegionProfWriter
    syn.LegionProfWriter = Writer
    try:
        files = syn.generate(out, ranks=1, items=3000, seed=3, shape=syn.Shape(gpus=0))
    finally:
        syn.LegionProfWriter = real
    from legate_prof.query import open_profile
    return open_profile(files)


def _picture(src, start=None, stop=None):
    """The timeline drawn as a screenshot draws it, 1200 x 700: its image and geometry."""
    from legate_prof.viewer.screenshot import geometry, make_timeline
    w = make_timeline(src, 1200, 700, start=start, stop=stop)
    img = w.grab().toImage().convertToFormat(QtGui.QImage.Format.Format_RGB32)
    geo = geometry(w)
    return w, img, geo


def _rgb(img):
    """The image's pixels as (rows, columns, RGB)."""
    h, w = img.height(), img.width()
    a = np.frombuffer(img.constBits(), np.uint8, count=h * img.bytesPerLine()).reshape(h, -1)
    return a[:, :w * 4].reshape(h, w, 4)[:, :, 2::-1].astype(int)


def _strip(px, geo, key):
    """The pixels of the utilization strip of (rank, group) ``key``, within the run."""
    ya, yb = geo["summaries"][key]
    return px[int(round(ya)):int(round(yb)), int(geo["x_left"]) + 1:int(geo["x_right"]) - 1]


# ---- 1. a memory used past its capacity ---------------------------------------------------------

def test_a_memory_used_past_its_capacity_is_marked_over_it(qtbot, tmp_path):
    """A system memory whose recorded capacity is a third of what the run allocated: its
    strip was drawn flat at 100 %, as a memory exactly full, only its tooltip said the peak.
    Its stretches at 100 % (the share is cut there) are marked red above the line, its top
    label says how far the peak went, its tooltip says it is over; a memory within its
    capacity, drawn beside it, is drawn as it always was, pixel for pixel."""
    from legate_prof.viewer.item_text import summary_value
    from legate_prof.viewer.timeline.summary_strip import OVER_COLOR
    red = np.array(OVER_COLOR.getRgb()[:3])
    over, fine = _synthetic(tmp_path / "over", over=True), _synthetic(tmp_path / "fine")
    den, peak = over.memory_use("system", 0)
    assert peak > 1.5 * den  # (the run's use went well past the capacity recorded)
    t0, t1 = over.outline().time_range
    assert over.summary_tile("system", 0, t0, t1, 200).max() == 1.0  # (cut at 100 %)
    w, img, geo = _picture(over)
    w2, img2, geo2 = _picture(fine)
    px, px2 = _rgb(img), _rgb(img2)
    strip = _strip(px, geo, (0, "system"))
    marked = np.all(strip[:5] == red, axis=2).any(axis=0)  # columns with the mark at the top
    assert marked.sum() > 0.3 * strip.shape[1], marked.sum()
    # ... where the use is at 100 %: not where it is below (the run's first 10 %)
    x_of = lambda t: int((t - geo["t0"]) / (geo["t1"] - geo["t0"])  # noqa: E731
                         * (geo["x_right"] - geo["x_left"]))
    assert over.summary_tile("system", 0, t0, t0 + (t1 - t0) / 10, 1)[0] < 0.5
    assert not marked[:x_of(t0 + (t1 - t0) / 10)].any()
    labels = [label for _, label in w.item.last_stats["scale_labels"]]
    assert f"100% (peak {peak / den * 100:,.0f}%)" in labels
    text = summary_value(over, "system", 0, t1 - (t1 - t0) / 4, t1 - (t1 - t0) / 5)
    assert text.startswith("at or over its capacity") and "% of its capacity" in text, text
    # nothing else is red; a memory within its capacity (the same run's zero-copy memory,
    # and the other run's system memory) is drawn as ever
    assert not np.all(_strip(px, geo, (0, "zerocopy")) == red, axis=2).any()
    assert not np.all(px2 == red, axis=2).any()
    assert geo["summaries"][(0, "zerocopy")] == geo2["summaries"][(0, "zerocopy")]
    assert np.array_equal(_strip(px, geo, (0, "zerocopy")), _strip(px2, geo2, (0, "zerocopy")))
    assert "100%" in [label for _, label in w2.item.last_stats["scale_labels"]]
    w.close()
    w2.close()


# ---- 2. a scale label its row's line runs through --------------------------------------------

def test_a_scale_label_its_line_runs_through_stays_readable(qtbot, tmp_path):
    """The I/O processor runs the top-level task all along: its line lies at 100 %, right
    through its row's "100%" label.  The label gets a background there (the line does not
    cross its text), its text still drawn; a label its line keeps clear of gets none."""
    from legate_prof.viewer.colors import group_color
    from legate_prof.viewer.timeline.item import LABEL_BACK
    src = _synthetic(tmp_path / "fine")
    t0, t1 = src.outline().time_range
    a, b = t0 + (t1 - t0) / 5, t1 - (t1 - t0) / 5
    assert src.summary_tile("io", 0, a, b, 50).min() == 1.0
    w, img, geo = _picture(src, a, b)
    px = _rgb(img)
    line = np.array(group_color("io").getRgb()[:3])
    strip = _strip(px, geo, (0, "io"))
    # the line at the top all along (every third pixel or so the dotted 100 % mark's)
    assert np.all(strip[:6, 60:] == line, axis=2).any(axis=0).mean() > 0.6
    ya, yb = geo["summaries"][(0, "io")]
    box = next(box for box, label in w.item.last_stats["scale_labels"]
               if label == "100%" and ya <= box.top() < yb)
    small = QtGui.QFont(w.font())
    small.setPointSizeF(6.5)  # (the scale labels' size)
    right = box.left() + QtGui.QFontMetricsF(small).horizontalAdvance("100%")
    area = px[int(box.top()) + 1:int(box.bottom()) - 1,
              int(box.left()) + 1:int(right) - 1]  # (the view's pixels: the widget's)
    assert not np.all(area == line, axis=2).any()  # no pixel of the line across the text
    assert (area.sum(axis=2) < 3 * 160).sum() >= 8  # ... and the text drawn (dark pixels)
    backs = {(back.top(), label): back
             for back, label in w.item.last_stats.get("scale_backs", [])}
    assert (box.top(), "100%") in backs
    under = np.array(QtGui.QColor(LABEL_BACK).getRgb()[:3])
    assert (np.abs(area - under).sum(axis=2) <= 40).sum() > area.shape[0] * area.shape[1] // 3
    # the zero-copy memory's line runs at ~22 % where the view begins: clear of its labels,
    # which are drawn as they were, without a background
    assert src.summary_tile("zerocopy", 0, a, a + (b - a) / 30, 1)[0] < 0.3
    za, zb = geo["summaries"][(0, "zerocopy")]
    assert not [back for back in backs.values() if za <= back.top() < zb]
    assert [x for x, _ in w.item.last_stats["scale_labels"] if za <= x.top() < zb]
    w.close()


# ---- 3. a long search summary and the legend ---------------------------------------------------

def test_a_long_search_summary_is_cut_to_fit_beside_the_legend_and_whole_in_its_tooltip(
        qtbot, sample_profile):
    """The status bar draws its message only up to its legend: a long search summary was
    cut off there, unreadable.  It is cut with "…" where it must be, the whole of it in the
    status bar's tooltip; a window made wide enough shows it whole."""
    from legate_prof.query import open_profile
    win = shown_window(qtbot, open_profile([sample_profile]))
    win.resize(900, 700)
    qtbot.waitUntil(lambda: win.width() == 900)
    bar = win.statusBar()
    text = "no_such_task_" + "abcdefghij" * 8
    win.search.setText(text)
    win.run_search()
    whole = f"0 matches for '{text}'"
    qtbot.waitUntil(lambda: not win.busy() and bar.currentMessage().startswith("0 matches"))
    shown = bar.currentMessage()
    room = win.legend.x() - 2 - 6  # (QStatusBar's message: from 6 px to 2 px before it)
    assert bar.fontMetrics().horizontalAdvance(whole) > room  # (it could not fit)
    assert bar.fontMetrics().horizontalAdvance(shown) <= room, (shown, room)
    assert shown.endswith("…") and whole.startswith(shown[:-1])
    assert QtGui.QTextDocumentFragment.fromHtml(bar.toolTip()).toPlainText() == whole
    win.resize(1800, 700)  # room for all of it now
    qtbot.waitUntil(lambda: bar.currentMessage() == whole)
    assert bar.fontMetrics().horizontalAdvance(whole) <= win.legend.x() - 8
    assert bar.toolTip() == ""
    win.search.clear()
    win.close()


# ---- 4. Export PNG on a HiDPI screen -----------------------------------------------------------

EXPORT_PROGRAM = """
import sys
from PySide6 import QtGui, QtWidgets
app = QtWidgets.QApplication(["legate_prof"])
from legate_prof.query import open_profile
from legate_prof.viewer.app import MainWindow
win = MainWindow(open_profile([{sample!r}]), ["x.prof"])
win.resize(1000, 700)
win.show()
app.processEvents()
shot = win.grab()
out = win.export_png({out!r})
win.wait_for_exports()
img = QtGui.QImage(out)
print(win.devicePixelRatioF(), shot.width(), win.width(), max(win.timeline.width(), 800),
      img.width(), img.height())
"""


def _export(sample, out, scale):
    config = ROOT / "tests" / "data" / "offscreen_screen.json"
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={config}",
               QT_SCALE_FACTOR=scale, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-c", EXPORT_PROGRAM.format(sample=str(sample),
                                                                    out=str(out))],
                       env=env, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    ratio, shot, win_w, width, w, h = r.stdout.split()[-6:]
    return float(ratio), int(shot), int(win_w), int(width), int(w), int(h)


def test_export_png_on_a_hidpi_screen_writes_its_device_pixels(sample_profile, tmp_path):
    """With QT_SCALE_FACTOR=2 a screenshot of the window has twice its logical pixels, but
    Export PNG wrote the picture at 1x.  It writes it at the device pixel ratio now: twice
    the width and height it writes at 1x."""
    ratio, shot, win_w, width, w, h = _export(sample_profile, tmp_path / "2x.png", "2")
    assert ratio == 2.0 and shot == 2 * win_w  # (a screenshot of the window: 2x)
    r1, _, _, width1, w1, h1 = _export(sample_profile, tmp_path / "1x.png", "1")
    assert r1 == 1.0 and w1 == width1
    assert w == 2 * width and h == 2 * h1 and width == width1, (w, h, width, w1, h1)
