"""The viewer, rendered for real (offscreen Qt), checked from pixels and driven with pytest-qt."""

import os
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtCore, QtGui

from legate_prof.model.kinds import ItemKind
from legate_prof.load.loader import load_profile
from tests_viewer_helpers import pixel, row_colors

ROOT = Path(__file__).resolve().parents[1]
from legate_prof.query.level_of_detail import draw_rows

pytest.importorskip("pytestqt")


@pytest.fixture(scope="module")
def tiny(legate_run):
    run = legate_run("tiny_tasks.py")
    assert run.returncode == 0, run.output[-2000:]
    return load_profile(run.profiles)


def _shot(model, tmp_path, name, **kw):
    from legate_prof.viewer.screenshot import render_screenshot
    out, geo = render_screenshot(model, tmp_path / name, return_geometry=True, **kw)
    img = QtGui.QImage(str(out))
    assert not img.isNull()
    return img, geo


def _tiny_window(model):
    """The interval where the tiny tasks ran on the busiest CPU lane."""
    tiny_id = model.names.index("tiny_add")
    sel = np.flatnonzero((model.items["name"] == tiny_id) & (model.items["kind"] == ItemKind.TASK))
    lanes, counts = np.unique(model.items["lane"][sel], return_counts=True)
    lane = int(lanes[np.argmax(counts)])
    on = sel[model.items["lane"][sel] == lane]
    return lane, int(model.items["start"][on].min()), int(model.items["stop"][on].max()), on


def test_zoomed_out_cpu_lane_shows_a_gray_merged_band(tiny, tmp_path):
    from legate_prof.present.colors import ALPHA_BAND
    from legate_prof.viewer.colors import GRAY, blend_with_white
    lane, a, b, on = _tiny_window(tiny)
    # their window in a picture narrow enough that they lie under a pixel apart: in the whole
    # run's view they were 2-3 px apart, and on a loaded machine each ran long enough to be
    # 3 px wide, drawn as a box of its own (a failure while a test suite ran beside it)
    width = 300 + len(on) // 2
    img, geo = _shot(tiny, tmp_path, "out.png", expand=["cpu"], start=a, stop=b, width=width)
    assert (geo["x_right"] - geo["x_left"]) < len(on)
    colors = row_colors(img, geo, lane, row=0, t0=a, t1=b)
    ground = blend_with_white(GRAY, ALPHA_BAND)
    band = {(128, 128, 128), (ground.red(), ground.green(), ground.blue())}
    is_gray = np.array([c in band for c in colors])  # (the band's ground, or its busy fill)
    assert is_gray.mean() > 0.1, "the barcode of tiny tasks should merge into gray"
    runs = np.diff(np.flatnonzero(np.diff(np.concatenate([[0], is_gray, [0]]).astype(int))))[::2]
    assert runs.max() >= 8  # bands wider than any single expanded item (3 px)
    # and those bands stand for many tasks each
    rows = draw_rows(tiny, lane, geo["t0"], geo["t1"], int(geo["x_right"] - geo["x_left"]))
    assert max(int(r.band_count.max()) for r in rows if len(r.band_count)) >= 5


def test_a_merged_band_is_filled_as_high_as_its_items_ran(tiny, qtbot):
    """Issue 36: a gray band is drawn light, filled in full gray from the bottom as high as
    the share of its time its items ran (its tile's ``band_busy``): a lane of tiny tasks
    that ran a few percent of the time no longer reads as solid gray."""
    from legate_prof.viewer.screenshot import make_timeline
    lane, _a, _b, _ = _tiny_window(tiny)
    w = make_timeline(tiny, 1600, 900, expand=["cpu"])
    qtbot.addWidget(w)
    # (every lane in view drawn from its own tiles, not one a tile of another zoom stood in
    # for while the tiles' thread worked: under load the grab came first, a run in six)
    qtbot.waitUntil(w.item.settled, timeout=30000)
    img = w.grab().toImage()
    (x0, x1), _ = w.vb.viewRange()
    width = int(round(w.vb.width()))
    e = w.lane_layout.find_lane(lane)
    left = w.mapFromScene(w.vb.sceneBoundingRect().topLeft()).x()
    checked, shares = 0, []
    chips = w.item.last_stats.get("band_label_chips", [])
    for dr in w.item._lane_rows(lane, x0, x1, width):
        top = w.mapFromScene(w.vb.mapViewToScene(QtCore.QPointF(x0, e.y + dr.row * e.row_h)))
        bottom = w.mapFromScene(w.vb.mapViewToScene(
            QtCore.QPointF(x0, e.y + (dr.row + 1) * e.row_h)))
        gap = 1 if bottom.y() - top.y() > 4 else 0
        hh = bottom.y() - top.y() - 2 * gap
        for bx0, bx1, busy in zip(dr.band_x0, dr.band_x1, dr.band_busy):
            if bx1 - bx0 < 6 or bx0 < 2 or bx1 > width - 2:
                continue
            # a column of the band no count's label covers (a band 30 px wide or more
            # carries one at its left: the recording decides how wide the bands come out)
            x = next((x for x in (int(left + (bx0 + bx1) / 2), int(left + bx1) - 2)
                      if not any(c.left() - 1 <= x <= c.right() + 1 for c in chips)), None)
            if x is None:
                continue
            column = [QtGui.QColor(img.pixel(x, y)).getRgb()[:3]
                      for y in range(top.y(), bottom.y() + 1)]
            filled = sum(c == (128, 128, 128) for c in column)
            assert abs(filled - max(busy * hh, 1)) <= 1.5, (busy, hh, filled)
            checked += 1
            shares.append(float(busy))
    assert checked >= 3 and min(shares) < 0.5  # idle bands are drawn mostly light


def test_zoomed_in_cpu_lane_shows_individual_coloured_boxes(tiny, tmp_path):
    from legate_prof.viewer.colors import name_color
    lane, a, b, on = _tiny_window(tiny)
    # zoom to about six tiny tasks
    mid = on[len(on) // 2]
    s, e = int(tiny.items["start"][mid]), int(tiny.items["stop"][mid])
    span = (e - s) * 12
    img, geo = _shot(tiny, tmp_path, "in.png", start=s - span // 2, stop=s + span // 2,
                     expand=["cpu"])
    c = name_color("tiny_add")
    colors = row_colors(img, geo, lane, row=int(tiny.items["row"][mid]), t0=s, t1=e)
    assert (c.red(), c.green(), c.blue()) in colors
    assert (128, 128, 128) not in colors


def test_a_task_that_waited_is_drawn_in_its_three_shades(sample_profile, tmp_path):
    """Waits and the calls the task made (waits with ready = end) are drawn in the 15 % shade."""
    from legate_prof.viewer.colors import blend_with_white, name_color
    model = load_profile([sample_profile])
    top = model.names.index("Toplevel Task")
    i = int(np.flatnonzero(model.items["name"] == top)[0])
    waits = sorted(model.waits_of(i))
    assert waits
    start, stop = int(model.items["start"][i]), int(model.items["stop"][i])
    # the longest stretch of the task outside every wait is drawn running
    edges = [start] + [x for w in waits for x in (w[0], w[2])] + [stop]
    gaps = [(edges[k], edges[k + 1]) for k in range(0, len(edges), 2)]
    run0, run1 = max(gaps, key=lambda g: g[1] - g[0])
    ws, wr, we = max(waits, key=lambda w: w[1] - w[0])
    img, geo = _shot(model, tmp_path, "waits.png")
    base = name_color("Toplevel Task")
    row = int(model.items["row"][i])
    lane = int(model.items["lane"][i])
    assert pixel(img, geo, lane, row, (ws + wr) / 2) == _rgb(blend_with_white(base, 0.15))
    assert pixel(img, geo, lane, row, (run0 + run1) / 2) == _rgb(base)


def _rgb(c):
    return (c.red(), c.green(), c.blue())


def test_screenshot_cli_stamps_files_and_range(sample_profile, tmp_path):
    import subprocess
    import sys
    out = tmp_path / "bug.png"
    p = subprocess.run([sys.executable, "-m", "legate_prof", "screenshot", str(sample_profile),
                        "-o", str(out), "--start", "100ms", "--stop", "900ms",
                        "--width", "1200", "--height", "700"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    img = QtGui.QImage(str(out))
    assert (img.width(), img.height()) == (1200, 700)
    # the stamp band is dark, the timeline below it white-ish
    assert QtGui.QColor(img.pixel(5, 5)).lightness() < 80
    assert QtGui.QColor(img.pixel(5, 300)).lightness() > 200


def test_screenshot_date_is_reproducible(sample_profile, tmp_path, monkeypatch):
    """The header's clock reads SOURCE_DATE_EPOCH where it is set: two pictures of a profile
    are the same file, and another date changes the header's pixels only."""
    import numpy as np

    from legate_prof.viewer.screenshot import STAMP_H, render_screenshot
    kw = dict(width=900, height=500, fit=False)
    model = load_profile([str(sample_profile)])
    a = render_screenshot(model, tmp_path / "a.png", **kw)
    b = render_screenshot(model, tmp_path / "b.png", **kw)
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(os.environ["SOURCE_DATE_EPOCH"]) + 86400))
    c = render_screenshot(model, tmp_path / "c.png", **kw)

    def pixels(path):
        img = QtGui.QImage(path).convertToFormat(QtGui.QImage.Format.Format_RGB32)
        return np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), -1).copy()
    rows = np.flatnonzero((pixels(a) != pixels(c)).any(axis=1))
    assert len(rows) and rows.max() < STAMP_H


def test_screenshot_legend_names_the_colours_of_the_tasks_most_in_view(tmp_path):
    """The legend row says which task each colour is, the names with the most time in view
    first: the guide's inefficient run shows Random's colour there, and a window without
    Random's tasks does not."""
    from legate_prof.query import as_source
    from legate_prof.viewer.colors import name_color
    from legate_prof.viewer.screenshot import LEGEND_H, STAMP_H, render_screenshot
    run = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "inefficient_1rank"
    model = load_profile([str(run)], ranked=True)
    src = as_source(model)

    def legend_colors(start=None, stop=None):
        out = render_screenshot(model, tmp_path / "l.png", start=start, stop=stop,
                                width=1600, height=400, fit=False)
        img = QtGui.QImage(out)
        return {QtGui.QColor(img.pixel(x, y)).rgb() for y in range(STAMP_H, STAMP_H + LEGEND_H)
                for x in range(0, img.width())}
    assert name_color("Random").rgb() in legend_colors()
    it = src.merged_model().items
    rnd = it["name"] == src.names.index("Random")
    before = int(it["start"][rnd].min()) - 1  # a window before any Random task
    assert name_color("Random").rgb() not in legend_colors(int(it["start"].min()), before)


def test_view_on_a_hidden_platform_writes_a_picture(tmp_path, sample_profile):
    """QT_QPA_PLATFORM=offscreen (set by a user for headless work) shows no window: `view`
    renders the picture instead of waiting for ever on a window nobody sees, and says why."""
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != "LEGATE_PROF_HIDDEN_WINDOW"}
    env["QT_QPA_PLATFORM"] = "offscreen"
    p = subprocess.run([sys.executable, "-m", "legate_prof", "view", str(sample_profile)],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "QT_QPA_PLATFORM=offscreen shows no window" in p.stderr
    assert (tmp_path / "legate_prof_view.png").read_bytes()[:4] == b"\x89PNG"


def test_view_without_display_writes_a_picture(tmp_path, monkeypatch):
    import subprocess
    import sys
    env = {k: v for k, v in __import__("os").environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    p = subprocess.run([sys.executable, "-m", "legate_prof", "view"], cwd=tmp_path, env=env,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "no display" in p.stderr
    assert (tmp_path / "legate_prof_view.png").exists()


# ---- interactive, driven with pytest-qt ------------------------------------------------

@pytest.fixture
def window(qtbot, sample_profile):
    from legate_prof.viewer.app import MainWindow
    model = load_profile([sample_profile])
    win = MainWindow(model, [sample_profile])
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitExposed(win)
    return win


def test_wheel_zooms_at_cursor_and_keys_pan_reset_undo(window, qtbot):
    tl = window.timeline
    a0, b0 = tl.time_range()
    tl.setFocus()
    qtbot.keyClick(tl, QtCore.Qt.Key.Key_Plus)
    a1, b1 = tl.time_range()
    assert (b1 - a1) == pytest.approx((b0 - a0) / 2, rel=1e-6)
    qtbot.keyClick(tl, QtCore.Qt.Key.Key_Right)
    a2, b2 = tl.time_range()
    assert a2 > a1 and (b2 - a2) == pytest.approx(b1 - a1, rel=1e-6)
    qtbot.keyClick(tl, QtCore.Qt.Key.Key_Z, QtCore.Qt.KeyboardModifier.ControlModifier)
    assert tl.time_range() == pytest.approx((a1, b1))
    qtbot.keyClick(tl, QtCore.Qt.Key.Key_Z, QtCore.Qt.KeyboardModifier.ControlModifier
                   | QtCore.Qt.KeyboardModifier.ShiftModifier)
    assert tl.time_range() == pytest.approx((a2, b2))
    qtbot.keyClick(tl, QtCore.Qt.Key.Key_0)
    assert tl.time_range() == pytest.approx((a0, b0))
    # the wheel zooms in around the cursor: the time under it stays put
    vp = tl.viewport()
    pos = QtCore.QPointF(vp.width() * 0.7, vp.height() / 2)
    t_before = tl.vb.mapSceneToView(tl.mapToScene(pos.toPoint())).x()
    ev = QtGui.QWheelEvent(pos, tl.mapToGlobal(pos.toPoint()).toPointF(), QtCore.QPoint(0, 0),
                           QtCore.QPoint(0, 240), QtCore.Qt.MouseButton.NoButton,
                           QtCore.Qt.KeyboardModifier.NoModifier,
                           QtCore.Qt.ScrollPhase.NoScrollPhase, False)
    QtCore.QCoreApplication.sendEvent(vp, ev)
    a3, b3 = tl.time_range()
    assert (b3 - a3) < (b0 - a0) * 0.8
    t_after = tl.vb.mapSceneToView(tl.mapToScene(pos.toPoint())).x()
    assert t_after == pytest.approx(t_before, rel=1e-3)


def test_drag_pans(window, qtbot):
    tl = window.timeline
    tl.set_time_range(200e6, 400e6)
    a0, b0 = tl.time_range()
    vp = tl.viewport()
    y = int(vp.height() * 0.5)
    qtbot.mousePress(vp, QtCore.Qt.MouseButton.LeftButton, pos=QtCore.QPoint(800, y))
    for x in range(790, 590, -20):
        qtbot.mouseMove(vp, QtCore.QPoint(x, y))
    qtbot.mouseRelease(vp, QtCore.Qt.MouseButton.LeftButton, pos=QtCore.QPoint(600, y))
    a1, b1 = tl.time_range()
    assert a1 > a0 and (b1 - a1) == pytest.approx(b0 - a0, rel=1e-6)


def test_search_highlights_lists_and_jumps(window, qtbot):
    window.search.setText("add_task")
    qtbot.keyClick(window.search, QtCore.Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not window.busy())  # (searched in a thread)
    assert window.results.result_items() and len(window.results.result_items()) == 6
    # 3 tasks + 3 application ranges, under the one rank's row with its count
    assert window.results.counts == {0: 6}
    assert window.timeline.item.matches is not None
    item = window.results.topLevelItem(0).child(0)
    window._jump(item)
    qtbot.waitUntil(lambda: not window.busy())  # (worked out in a thread)
    i = window.results.result_items()[0]
    a, b = window.timeline.time_range()
    s, e = window.source.item_extent(i)
    assert a <= s and e <= b
    assert window.timeline.item.selected == i
    assert window.details.table.item(0, 1).text().startswith("add_task")
    window.search.clear()
    assert window.timeline.item.matches is None


def test_click_pins_details(window, qtbot):
    tl = window.timeline
    src = window.source
    i = next(int(j) for j in src.search("fill_task")
             if src.item_title(j).startswith("fill_task")
             and {f.label: f.text for f in src.item_details(j)}["Kind"] == "task")
    tl.show_item(i)
    qtbot.wait(50)
    lane, row = src.item_lane(i)
    e = tl.lane_layout.find_lane(lane)
    s0, s1 = src.item_extent(i)
    t = (s0 + s1) / 2
    y = e.y + (row + 0.5) * e.row_h
    scene = tl.vb.mapViewToScene(QtCore.QPointF(t, y))
    pos = tl.mapFromScene(scene)
    qtbot.mouseClick(tl.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=pos)
    rows = {window.details.table.item(r, 0).text(): window.details.table.item(r, 1).text()
            for r in range(window.details.table.rowCount())}
    assert rows["Name"] == "fill_task"
    for k in ("Create", "Ready", "Start", "Stop", "Deferred", "Delayed", "Lane", "Rank"):
        assert k in rows, k
    assert tl.item.selected == i


def test_clicking_a_group_label_toggles_its_lanes(window, qtbot):
    tl = window.timeline
    n0 = len([e for e in tl.lane_layout.entries if e.kind == "lane"])
    tl.toggle_group(0, "utility")
    n1 = len([e for e in tl.lane_layout.entries if e.kind == "lane"])
    assert n1 == n0 - 2
    tl.toggle_group(0, "utility")
    assert len([e for e in tl.lane_layout.entries if e.kind == "lane"]) == n0


def test_export_png_is_the_screenshot_of_the_view_with_the_users_umask(window, tmp_path):
    """File → Export PNG writes what `screenshot` writes for the view shown: the dark stamp
    band (files, time range), the legend, then the timeline; mode from the umask, not 0600."""
    import os
    from legate_prof.viewer.screenshot import LEGEND_H, STAMP_H
    window.timeline.set_time_range(200e6, 300e6)
    old = os.umask(0o022)
    try:
        out = window.export_png(str(tmp_path / "x.png"))
        window.wait_for_exports()  # (written in a thread: with the umask of then)
    finally:
        os.umask(old)
    img = QtGui.QImage(out)
    assert img.width() >= 800
    assert QtGui.QColor(img.pixel(5, 5)).lightness() < 80  # the stamp band
    assert QtGui.QColor(img.pixel(5, STAMP_H + LEGEND_H // 2)).lightness() > 200  # legend
    assert os.stat(out).st_mode & 0o777 == 0o644


def test_export_png_lays_its_picture_out_once_and_writes_it_in_a_thread(window, qtbot,
                                                                        tmp_path, monkeypatch):
    """Export PNG at 1,000 ranks held the window 2.3 s: its picture laid out four times and
    its PNG encoded (0.5-0.7 s) and written in the window's thread.  Now its lanes are laid
    out once, and the picture is encoded and written in a thread, still to a temporary file
    renamed: the window runs its events meanwhile, says "writing" then "wrote"."""
    import threading
    from PySide6 import QtWidgets
    from legate_prof.viewer import screenshot
    from legate_prof.viewer.timeline.layout import LaneLayout
    layouts = []
    rebuild = LaneLayout.rebuild
    monkeypatch.setattr(LaneLayout, "rebuild", lambda self: (layouts.append(self),
                                                             rebuild(self))[1])
    go, writers = threading.Event(), []
    save = screenshot._save_png

    def held_save(img, out):  # (the writing waits until the test lets it go)
        writers.append(threading.current_thread())
        if writers[-1] is not threading.main_thread():  # (the window's: never held)
            assert go.wait(60)
        return save(img, out)
    monkeypatch.setattr(screenshot, "_save_png", held_save)
    out = tmp_path / "x.png"
    assert window.export_png(str(out)) == str(out)
    assert len(layouts) == 1  # (laid out once: for the picture's height and its lanes)
    assert window.exports_pending() and not out.exists()
    assert window.statusBar().currentMessage() == f"writing {out}…"
    ran = []
    QtCore.QTimer.singleShot(0, lambda: ran.append(True))  # the window's events run meanwhile
    qtbot.waitUntil(lambda: bool(ran))
    go.set()
    qtbot.waitUntil(lambda: window.statusBar().currentMessage() == f"wrote {out}")
    assert writers and writers[0] is not threading.main_thread()
    assert not window.exports_pending()
    assert [p.name for p in tmp_path.iterdir()] == ["x.png"]  # (no temporary left)
    assert QtGui.QImage(str(out)).width() >= 800
    # never through a link out of the output's folder: refused, said in a box, when written
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "pics").mkdir()
    link = tmp_path / "pics" / "link.png"
    link.symlink_to(elsewhere / "target.png")
    window.export_png(str(link))
    window.wait_for_exports()
    assert not (elsewhere / "target.png").exists() and link.is_symlink()
    assert window.statusBar().currentMessage() == f"could not write {link}"
    said = [b.text() for b in window.findChildren(QtWidgets.QMessageBox)]
    assert any("symbolic link out of its folder" in t for t in said), said
    assert sorted(p.name for p in (tmp_path / "pics").iterdir()) == ["link.png"]


def test_export_png_keeps_what_the_view_highlights(window, tmp_path):
    """A GUI walk: a finding's items highlighted in the view were drawn dimmed in the
    exported picture, which the README calls the screenshot of the view."""
    import numpy as np
    tl = window.timeline
    tl.set_time_range(*window.source.info().time_range)
    name = window.source.names[int(window.source.items_columns([0], ["name"])["name"][0])]
    hits = window.source.search(name, limit=1000)
    assert len(hits)
    plain = window.export_png(str(tmp_path / "plain.png"))
    tl.set_matches(hits)
    lit = window.export_png(str(tmp_path / "lit.png"))
    window.wait_for_exports()
    plain, lit = QtGui.QImage(plain), QtGui.QImage(lit)
    tl.set_matches(None)

    def pixels(img):
        ptr = img.convertToFormat(QtGui.QImage.Format.Format_RGB32).constBits()
        return np.frombuffer(ptr, np.uint8).copy()
    assert (plain.width(), plain.height()) == (lit.width(), lit.height())
    assert (pixels(plain) != pixels(lit)).mean() > 0.01  # (the rest dimmed)


def test_eight_rank_gpu_profile_screenshot_has_all_lanes(synthetic_8, tmp_path):
    from legate_prof.viewer.colors import group_color
    model = load_profile(synthetic_8)
    img, geo = _shot(model, tmp_path, "syn8.png", width=1600, height=1400)
    for key in ("gpu_dev", "gpu_host", "cpu", "utility", "framebuffer", "zerocopy", "channel"):
        assert (None, key) in geo["summaries"], key  # the All-ranks summary
        assert (0, key) in geo["summaries"], key
    # the all-ranks GPU-device utilization line is drawn (its colour appears in its row)
    ya, yb = geo["summaries"][(None, "gpu_dev")]
    c = group_color("gpu_dev")
    xs = range(int(geo["x_left"]) + 5, int(geo["x_right"]) - 5, 7)
    found = any(pixel_rgb(img, x, y) == (c.red(), c.green(), c.blue())
                for x in xs for y in range(int(ya), int(yb)))
    assert found


def pixel_rgb(img, x, y):
    c = QtGui.QColor(img.pixel(x, y))
    return (c.red(), c.green(), c.blue())


def test_panned_view_from_caches_matches_a_fresh_render(qtbot, synthetic_8):
    """Pans reuse time-anchored caches; what they show must be what a fresh render shows."""
    from legate_prof.viewer.screenshot import make_timeline
    model = load_profile(synthetic_8)
    t0, t1 = model.time_range()
    span = (t1 - t0) / 7
    a = t0 + span
    w = make_timeline(model, 1200, 800, start=a, stop=a + span, expand=["cpu"])
    w.grab()
    w.set_time_range(a + span * 0.1, a + span * 1.1, remember=False)
    cached = w.grab().toImage()
    w.item.refresh()
    fresh = w.grab().toImage()
    same = sum(cached.pixel(x, y) == fresh.pixel(x, y)
               for x in range(0, cached.width(), 3) for y in range(0, cached.height(), 3))
    total = len(range(0, cached.width(), 3)) * len(range(0, cached.height(), 3))
    assert same / total > 0.99
    w.close()


def test_time_sliced_recompute_converges_to_the_exact_picture(qtbot, synthetic_8):
    """With a frame budget, a zoom first shows the previous resolution, then converges."""
    from legate_prof.viewer.screenshot import make_timeline
    model = load_profile(synthetic_8)
    t0, t1 = model.time_range()
    w = make_timeline(model, 1200, 800, start=t0, stop=t1, expand=["cpu", "utility"])
    w.item.budget_s = 0.0  # at most one row recomputed per frame
    mid, span = (t0 + t1) / 2, (t1 - t0) / 5
    w.set_time_range(mid - span / 2, mid + span / 2, remember=False)
    w.grab()
    assert w.item.last_stats["pending"]
    frames = 0
    while w.item.last_stats["pending"]:
        w.item._continue()
        w.grab()
        frames += 1
        assert frames < 500
    assert frames > 1
    settled = w.grab().toImage()
    w.item.budget_s = None
    w.item.refresh()
    fresh = w.grab().toImage()
    diff = sum(settled.pixel(x, y) != fresh.pixel(x, y)
               for x in range(0, fresh.width(), 3) for y in range(0, fresh.height(), 3))
    assert diff == 0
    w.close()


def test_missing_x_libraries_become_one_sentence(monkeypatch):
    import ctypes
    from legate_prof.viewer.app import window_problem
    monkeypatch.setenv("DISPLAY", ":42")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)

    def no_lib(path, *a, **k):
        raise OSError("libxcb-icccm.so.4: cannot open shared object file: No such file")
    monkeypatch.setattr(ctypes, "CDLL", no_lib)
    msg = window_problem()
    assert "libxcb-icccm.so.4 is missing" in msg and "apt install" in msg
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert window_problem() is None


def test_screenshots_and_the_window_carry_the_legend(sample_profile, tmp_path, qtbot):
    from PySide6 import QtGui

    from legate_prof.viewer.app import MainWindow
    from legate_prof.viewer.panels.legend import LegendWidget, legend_entries
    from legate_prof.viewer.screenshot import render_screenshot
    model = load_profile([sample_profile])
    out = render_screenshot(model, tmp_path / "legend.png", width=900, height=500)
    assert not QtGui.QImage(out).isNull()
    labels = [label for _, label in legend_entries()]
    assert any("waiting" in x for x in labels) and any("merged" in x for x in labels)
    w = MainWindow(model, [sample_profile])
    qtbot.addWidget(w)
    assert w.findChildren(LegendWidget)


def test_the_window_legend_leaves_the_status_bar_room_for_its_messages(sample_profile, qtbot):
    """The status bar's legend said every entry in full ("merged (too small to draw; ×count,
    filled as busy)"): at 1,600 px it cut the path's step and summary short.  Its short words
    take under a third of the window; its tooltip says them whole."""
    from legate_prof.viewer.app import MainWindow
    from legate_prof.viewer.panels.legend import LegendWidget
    w = MainWindow(load_profile([sample_profile]), [sample_profile])
    qtbot.addWidget(w)
    legend = w.findChildren(LegendWidget)[0]
    for critical in (False, True):
        legend.set_critical(critical)
        assert legend.sizeHint().width() <= 1600 // 3
        assert "too small to draw" in legend.toolTip()
        assert ("what held up what" in legend.toolTip()) == critical


# ---- the viewer reads only through the query API -----------------------------------------

def test_viewer_imports_nothing_of_the_model_but_the_api():
    """viewer/**/*.py import from legate_prof only: the query API (the package's face), the
    Qt-free presentation (units, colours, limits), errors, where outputs go, the version."""
    import ast
    from pathlib import Path
    allowed = {"legate_prof", "legate_prof.query", "legate_prof.errors",
               "legate_prof.output_file"}
    allowed_packages = ("legate_prof.present.",)
    bad = []
    for f in sorted((Path(__file__).resolve().parents[1] / "viewer").rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                    and node.module.startswith("legate_prof"):
                mod = node.module
            elif isinstance(node, ast.Import):
                mods = [a.name for a in node.names if a.name.startswith("legate_prof")]
                mod = mods[0] if mods else None
            else:
                continue
            if mod and mod not in allowed and not mod.startswith(allowed_packages):
                bad.append(f"{f.name}: {mod}")
            if mod == "legate_prof" and isinstance(node, ast.ImportFrom):
                names = {a.name for a in node.names}
                if names - {"__version__"}:
                    bad.append(f"{f.name}: legate_prof {names}")
    assert not bad, bad


@pytest.mark.parametrize("built", ["stacked", "stacked when drawn"])
def test_clicks_agree_with_the_drawn_tile_at_several_zooms(sample_profile, built):
    """Over every pixel column of every expanded lane at several zooms, the widget's hit
    test names the box or band the drawn tile has there — as `view` loads too (lanes
    stacked when drawn), where the row of the item clicked comes from its lane's stacking."""
    from legate_prof.query import as_source
    from legate_prof.viewer.screenshot import make_timeline
    src = as_source(load_profile([sample_profile], ranked=built != "stacked"))
    assert src.merged_model().stacked == (built == "stacked")
    w = make_timeline(src, 1200, 700)
    T0, T1 = src.info().time_range
    checked = agree = 0
    for zoom in (1, 4, 20, 80):
        c = T0 + (T1 - T0) * 0.7
        w.set_time_range(c - (T1 - T0) / zoom / 2, c + (T1 - T0) / zoom / 2)
        w.item.refresh()
        w.repaint()
        QtCore.QCoreApplication.processEvents()
        a, b = w.time_range()
        for e in [e for e in w.lane_layout.entries if e.kind == "lane"]:
            cached = w.item._lane_cache.peek(e.lane)
            if cached is None:
                continue
            tile = cached.data
            for r in tile.rows:
                for t in np.linspace(a, b, 400):
                    x = (t - tile.t0) / tile.ns_per_px
                    hit, _ = w.item.hit(t, e.y + (r.row + 0.5) * e.row_h)
                    box = np.flatnonzero((r.box_x0 <= x) & (x < r.box_x1))
                    band = np.flatnonzero((r.band_x0 <= x) & (x < r.band_x1))
                    if len(box):
                        i = int(r.box_item[box[-1]])
                        ok = hit == ("item", i) and src.item_lane(i) == (e.lane, r.row)
                    elif len(band):
                        ok = hit is not None and hit[0] == "band" and \
                            hit[1][2] == int(r.band_count[band[0]])
                    else:
                        ok = hit is None
                    checked += 1
                    agree += ok
    w.close()
    assert checked > 5000 and agree == checked


def test_an_exception_while_painting_is_reported_once_and_the_rest_renders(
        sample_profile, tmp_path, capsys):
    from legate_prof.query import ProfileSource
    from legate_prof.viewer.screenshot import render_screenshot

    class Broken(ProfileSource):
        def lane_tile(self, *a, **k):
            raise RuntimeError("boom")

    src = Broken(load_profile([sample_profile]))
    out, geo = render_screenshot(src, tmp_path / "b.png", return_geometry=True)
    err = capsys.readouterr().err
    assert err.count("RuntimeError: boom") == 1
    img = QtGui.QImage(out)
    # utilization rows still painted: some coloured pixel inside the cpu summary row
    ya, yb = geo["summaries"][(0, "cpu")]
    xs = range(int(geo["x_left"]) + 40, int(geo["x_right"]) - 5, 3)
    colours = {QtGui.QColor(img.pixel(x, y)).getRgb()[:3]
               for x in xs for y in range(int(ya) + 1, int(yb) - 1)}
    assert any(b > r + 20 for r, g, b in colours)  # the CPU group's blue fill is drawn


@pytest.mark.parametrize("size", [(100_000, 100_000), (0, 500), (500, -3)])
def test_impossible_image_sizes_are_refused_before_drawing(sample_profile, tmp_path, size):
    from legate_prof.errors import ProfileError
    from legate_prof.viewer.screenshot import render_screenshot
    model = load_profile([sample_profile])
    with pytest.raises(ProfileError, match="image size"):
        render_screenshot(model, tmp_path / "x.png", width=size[0], height=size[1])
    assert not (tmp_path / "x.png").exists()


def test_screenshot_grows_to_fit_and_labels_every_group(tmp_path):
    from pathlib import Path
    from legate_prof.query import as_source
    from legate_prof.viewer.screenshot import render_screenshot
    ex = Path(__file__).resolve().parents[1] / "legate_prof" / "data" / "example_legate_0.prof"
    src = as_source(load_profile([str(ex)]))
    groups = sorted({g.group for g in src.info().groups})
    out, geo = render_screenshot(src, tmp_path / "all.png", expand=groups, height=500,
                                 return_geometry=True)
    img = QtGui.QImage(out)
    assert img.height() >= 500
    for g in src.info().groups:  # every group's row lies inside the picture
        ya, yb = geo["summaries"][(g.rank, g.group)]
        assert 0 <= ya < yb <= img.height()
    for lane, (ya, yb, _rows) in geo["lanes"].items():
        assert yb <= img.height() and yb - ya <= 12 * 18  # packed memory lanes stay bounded


@pytest.fixture(scope="module")
def four_ranks_given_as_files(tmp_path_factory):
    """The real 4-rank run, each file under a long name, the last rank's log cut short (a
    warning) — its clock skew and slow network are notices: every kind of header text."""
    import shutil
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "mpi4"
    d = tmp_path_factory.mktemp("four")
    out = []
    for f in sorted(real.glob("legate_*")):
        dst = d / f"cluster_job_20261128_node_a_very_long_run_name_{f.name}"
        shutil.copy(f, dst)
        out.append(dst)
    cut = next(p for p in out if p.name.endswith("legate_3.prof.gz"))
    cut.write_bytes(cut.read_bytes()[:30000])
    return out


@pytest.mark.parametrize("width", [800, 1000, 1280, 1600, 2560])
def test_a_pictures_header_lays_out_its_texts_without_overlap(four_ranks_given_as_files, width,
                                                             tmp_path):
    """Issue 36: the file list and the clock-skew / network notes were drawn over each other
    (Export PNG and `screenshot`, 1600 px, 4 ranks given as files).  At every width from
    800 px, no two texts of the header (stamp and legend) share a pixel, each lies inside the
    picture, and the picture puts its timeline below the header however many rows it took."""
    from legate_prof.query import as_source
    from legate_prof.viewer.picture_header import header_layout
    from legate_prof.viewer.screenshot import (_header_lines, _stamp_texts, app_instance,
                                               render_screenshot)
    from legate_prof.viewer.timeline.critical_path import RunPath
    app_instance()
    src = as_source(load_profile([str(p) for p in four_ranks_given_as_files], ranked=True))
    info = src.info()
    assert info.notices and info.warnings  # (texts on the right: a warning, the notices)
    path = RunPath.from_steps(src, src.run_critical_path())
    files = [p.name for p in four_ranks_given_as_files]
    lay = header_layout(width, _stamp_texts(info, files, info.time_range, path),
                        _header_lines(info), QtGui.QFont(), critical=True)
    rects = [(pc.rect, pc.text) for pc in lay.stamp] + [(r, t) for r, _, t in lay.legend]
    for r, text in rects:
        assert 0 <= r.left() and r.right() <= width, (text, r)
    for k, (r, text) in enumerate(rects):
        for r2, text2 in rects[k + 1:]:
            assert not r.intersects(r2), (text, text2)
    for pc in lay.stamp:  # each rectangle holds its text whole (or its text was cut "…")
        assert QtGui.QFontMetricsF(pc.font).horizontalAdvance(pc.text) <= pc.rect.width() + 0.5
    assert len(lay.stamp) >= 4  # files, view, the warning and the notes all said
    out, geo = render_screenshot(src, tmp_path / "h.png", width=width, height=700,
                                 title_files=files, critical_path=path, return_geometry=True)
    assert geo["top"] == lay.height and QtGui.QImage(out).width() == width


def test_a_long_note_in_a_pictures_header_goes_on_below_cut_between_words():
    """A note wider than the picture was cut in its middle, losing words from both halves
    ("node …re pairs of nodes", a user's review): it goes on below, between words, and what
    the rows show is the note (cut short with "…" only past ``WRAPPED_ROWS`` rows)."""
    from legate_prof.viewer.picture_header import WRAPPED_ROWS, header_layout
    from legate_prof.viewer.screenshot import app_instance
    app_instance()
    note = ("Note: Clock skew: 88,737 of 191,730 messages arrived before they were sent, by "
            "the ranks' clocks (by 12.261 ms on average): rank 0's clock reads 19.031 ms "
            "behind rank 2's (±11.403 ms, 19,113 messages); 5 more pairs of ranks.")
    color = QtGui.QColor(1, 2, 3)
    for width in (800, 1200):
        lay = header_layout(width, ["title", "view"], [(note, color)], QtGui.QFont())
        pieces = [pc for pc in lay.stamp if pc.color == color]
        assert 1 < len(pieces) <= WRAPPED_ROWS
        assert " ".join(pc.text for pc in pieces) == note
        assert [pc.rect.top() for pc in pieces] == sorted({pc.rect.top() for pc in pieces})
    lay = header_layout(400, ["title"], [(note * 3, color)], QtGui.QFont())
    pieces = [pc for pc in lay.stamp if pc.color == color]
    assert len(pieces) == WRAPPED_ROWS and pieces[-1].text.endswith("…")
    assert all(pc.rect.right() <= 400 for pc in pieces)


def test_two_ranks_out_of_memory_labels_are_not_drawn_over_each_other(tmp_path):
    """oom2: both ranks ran out a few ms apart at the run's end; their labels were drawn at
    one place, one over the other (a user's review): each names its rank, one below the
    other."""
    from legate_prof.query import as_source
    from legate_prof.viewer.screenshot import render_screenshot
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "oom2"
    files = sorted(str(p) for p in real.glob("legate_*.prof*")) + [str(real / "console.log")]
    src = as_source(load_profile(files))
    assert len(src.outline().markers) == 2
    out, geo = render_screenshot(src, tmp_path / "oom.png", width=1600, height=900,
                                 return_geometry=True)
    img = QtGui.QImage(out)
    red = QtGui.QColor(210, 20, 20).rgb()
    # the labels' boxes: rows with a long run of their red (a marker's dashed line is 2 px)
    rows = [y for y in range(geo["top"], geo["top"] + 150)
            if sum(img.pixel(x, y) == red for x in range(800, 1600)) > 100]
    runs = sum(1 for k, y in enumerate(rows) if k == 0 or y != rows[k - 1] + 1)
    assert runs == 2, rows


def test_crashed_run_screenshot_says_the_timeline_is_missing_and_why(legate_run, tmp_path):
    """A run killed by out-of-memory leaves only the runtime's stream: the picture says so."""
    from legate_prof.query import as_source
    from legate_prof.viewer.screenshot import render_screenshot
    run = legate_run("oom.py", cpus=1, sysmem=40, env_extra_key="LEGATE_TEST")
    assert run.returncode != 0
    files = sorted(str(p) for p in run.workdir.glob("legate_*.prof"))
    src = as_source(load_profile(files))
    why = src.info().timeline_missing
    assert "Legion" in why and "crashed" in why
    out, geo = render_screenshot(src, tmp_path / "crash.png", width=1200, height=700,
                                 return_geometry=True)
    img = QtGui.QImage(out)
    # the note's pink box sits in a band of its own just above the lanes (below the stamp
    # and legend): over the lanes it hid their first rows and the failure's label
    from legate_prof.viewer.screenshot import missing_height
    column = [QtGui.QColor(img.pixel(int(1200 * 0.25), y)).getRgb()[:3]
              for y in range(geo["top"] - missing_height(1200, why), geo["top"])]
    assert (255, 240, 240) in column, sorted(set(column))
    below = [QtGui.QColor(img.pixel(int(1200 * 0.25), y)).getRgb()[:3]
             for y in range(geo["top"], img.height())]
    assert (255, 240, 240) not in below


def test_a_crashed_runs_note_is_shown_whole_in_a_band_that_fits_it(tmp_path):
    """A run stopped by Ctrl+C says why its timeline is missing in four lines at 1,600 px:
    the band's fixed 72 px cut its last line off ("with --log)", a review's screenshot).
    The band fits the note, up to ``MISSING_LINES`` lines; a longer one ends with "…"."""
    from legate_prof.query import as_source
    from legate_prof.viewer.screenshot import (MISSING_H, MISSING_LINES, _missing_font,
                                               _missing_text, app_instance, missing_height,
                                               render_screenshot)
    run = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "sigint_1rank"
    src = as_source(load_profile([str(run)]))
    why = src.info().timeline_missing
    app_instance()
    font = _missing_font()
    line = QtGui.QFontMetrics(font).lineSpacing()
    text, h = _missing_text(1600, why, font)
    assert text == f"Timeline missing: {why}" and h >= 3 * line
    assert missing_height(1600, why) >= h + 16 > MISSING_H
    long_text, long_h = _missing_text(1600, why * 20, font)
    assert long_text.endswith("…") and long_h <= MISSING_LINES * line
    out, geo = render_screenshot(src, tmp_path / "sigint.png", width=1600, height=1000,
                                 return_geometry=True)
    img = QtGui.QImage(out)
    band = [QtGui.QColor(img.pixel(800, y)).getRgb()[:3]
            for y in range(geo["top"] - missing_height(1600, why), geo["top"])]
    assert (255, 240, 240) in band


def test_a_profile_without_timeline_items_gets_no_time_ticks(tmp_path):
    """A log cut before its timeline has no time to count: the picture's time axes draw no
    ticks ("0.00 ns ... 1.00 ns" of nothing), a profile with items draws them."""
    from legate_prof.viewer.screenshot import render_screenshot
    example = ROOT / "legate_prof" / "data" / "example_legate_0.prof"
    cut = tmp_path / "cut_0.prof"
    cut.write_bytes(example.read_bytes()[:20000])

    def text_rows(path, width=1200, height=600):
        out = render_screenshot(load_profile([str(path)]), tmp_path / (path.stem + ".png"),
                                width=width, height=height, fit=False)
        img = QtGui.QImage(out)
        rows = 0
        for y in range(img.height() - 30, img.height()):  # the bottom time axis
            dark = sum(1 for x in range(200, width - 20, 2)
                       if sum(QtGui.QColor(img.pixel(x, y)).getRgb()[:3]) < 400)
            rows += 0 < dark < 0.9 * len(range(200, width - 20, 2))  # text, not the axis line
        return rows
    assert text_rows(cut) == 0
    assert text_rows(example) > 3


def test_vertical_scrollbar_follows_and_moves_the_lanes(window, qtbot):
    from legate_prof.viewer.timeline.scrollbar import ScrolledTimeline
    scrolled = window.centralWidget()
    assert isinstance(scrolled, ScrolledTimeline)
    tl = window.timeline
    tl.row_px = 60  # tall rows: the lane tree no longer fits
    tl.expand(all_groups=True)
    tl._fit_y()
    qtbot.wait(20)
    bar = scrolled.bar
    assert bar.isVisible() and bar.maximum() > 0
    (y0, y1) = tl.vb.viewRange()[1]
    bar.setValue(bar.maximum())
    (z0, z1) = tl.vb.viewRange()[1]
    assert z0 > y0 and z1 == pytest.approx(tl.lane_layout.height, abs=0.05)
    tl.vb.setYRange(0, z1 - z0, padding=0)
    assert bar.value() == 0


def test_undo_redo_keep_the_status_bar_right(window, qtbot):
    tl = window.timeline
    a0, b0 = tl.time_range()
    tl.zoom(0.5)
    tl.undo()
    assert window.statusBar().currentMessage().startswith("view ")
    from legate_prof.viewer.time_text import format_range
    assert window.statusBar().currentMessage() == f"view {format_range(*tl.time_range())}"
    tl.redo()
    assert window.statusBar().currentMessage() == f"view {format_range(*tl.time_range())}"


def test_open_replaces_the_profile_and_export_has_no_cursor(window, qtbot, tmp_path):
    from pathlib import Path
    ex = Path(__file__).resolve().parents[1] / "legate_prof" / "data" / "example_legate_0.prof"
    assert window.open_files([str(ex)])
    qtbot.waitUntil(lambda: window.timeline is not None, timeout=60_000)
    assert window.source.info().n_items > 10_000
    window.timeline.cursor.show()
    out = tmp_path / "e.png"
    assert window.export_png(str(out))
    window.wait_for_exports()
    assert window.timeline.cursor.isVisible()  # the window's own timeline is not grabbed
    img = QtGui.QImage(str(out))
    assert img.width() > 100


def test_lane_labels_are_reference_names_with_long_names_as_tooltips(window):
    tl = window.timeline
    lanes = [e for e in tl.lane_layout.entries if e.kind == "lane"]
    assert {"c0", "c1"} <= {e.label for e in lanes}
    c1 = next(e for e in lanes if e.label == "c1")
    tip = tl.lane_axis.entry_tooltip(c1.y + 0.5)
    where, long_name = tip.split("\n")
    assert where == "Rank 0 · cpu · c1"  # which rank and group, then the reference's name
    assert long_name.startswith("Node 0 CPU 1 Processor(0x")
    summaries = {e.label.split(" (")[0] for e in tl.lane_layout.entries if e.kind == "summary"}
    assert "cpu" in summaries and "utility" in summaries


def test_lane_labels_never_overlap(synthetic_8, qtbot):
    """At any vertical scale, kept labels are at least one text line apart."""
    from legate_prof.query import as_source
    from legate_prof.viewer.timeline.axes import MIN_LABEL_GAP_PX
    from legate_prof.viewer.timeline.layout import LaneLayout
    from legate_prof.viewer.timeline.widget import TimelineWidget
    src = as_source(load_profile(synthetic_8))
    w = TimelineWidget(src, LaneLayout.default(src, expand_kinds=["channel", "cpu"]))
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    qtbot.waitExposed(w)
    for row_px in (4, 8, 18):
        w.row_px = row_px
        w._fit_y()
        (y0, y1) = w.vb.viewRange()[1]
        scale = w.vb.height() / (y1 - y0)
        ys = [y for y, text in w.lane_axis._tickLevels[0] if text.startswith("      ")]
        gaps = np.diff(sorted(ys)) * scale
        assert len(gaps) == 0 or gaps.min() >= MIN_LABEL_GAP_PX - 0.5
    assert any(t.strip().startswith("n0") for _, t in w.lane_axis._tickLevels[0])  # channels


def test_a_picture_with_a_rank_unread_says_so_in_its_header(tmp_path):
    """A screenshot of per-rank bundles, one damaged, names the file it could not read in
    its header (in amber, right); the same picture without the damage has no such line."""
    from pathlib import Path

    from fixtures.synthetic import generate
    from legate_prof.cli import main
    files = generate(tmp_path / "run", ranks=3, items=6000, seed=5)
    assert main(["convert", "--per-rank", *map(str, files)]) == 0
    for f in files:
        Path(f).unlink()

    def amber_in_header(png):
        img = QtGui.QImage(str(png)).convertToFormat(QtGui.QImage.Format.Format_RGB32)
        a = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), -1, 4)
        top = a[:40, img.width() // 2:img.width(), :3].astype(int)  # BGR
        b, g, r = top[..., 0], top[..., 1], top[..., 2]
        return int(np.count_nonzero((r > 230) & (g > 160) & (g < 215) & (b < 130)))
    assert main(["screenshot", str(tmp_path / "run"), "-o", str(tmp_path / "ok.png")]) == 0
    bad = tmp_path / "run" / "legate_1.lpbundle"
    bad.write_bytes(bad.read_bytes()[: bad.stat().st_size // 2])
    assert main(["screenshot", str(tmp_path / "run"), "-o", str(tmp_path / "bad.png")]) == 2
    assert amber_in_header(tmp_path / "ok.png") == 0
    assert amber_in_header(tmp_path / "bad.png") > 50


def test_screenshot_says_what_it_could_not_do_as_asked(tmp_path, capsys):
    """A file after --expand gets a hint to put the files first; --start past the run's end
    is said on the terminal (the picture keeps to the run)."""
    from legate_prof.cli import bundled_example, main
    ex = bundled_example()
    with pytest.raises(SystemExit) as e:
        main(["screenshot", "--expand", "cpu", ex, "-o", str(tmp_path / "a.png")])
    assert e.value.code == 2
    assert "put the files first" in capsys.readouterr().err
    assert main(["screenshot", ex, "-o", str(tmp_path / "b.png"), "--start", "10s"]) == 0
    assert "--start 10.000 s is outside the run" in capsys.readouterr().err


def test_a_pictures_rank_count_is_the_ranks_read_as_stats_counts_them(tmp_path):
    """The picture's header counts the ranks whose records were read, as `stats` does: a log
    cut before its timeline is one rank with no lanes (it said "0 rank(s)"), and a real
    2-rank run is two."""
    from legate_prof.analyze.stats import compute_stats
    from legate_prof.query import as_source
    example = ROOT / "legate_prof" / "data" / "example_legate_0.prof"
    cut = tmp_path / "cut_0.prof"
    cut.write_bytes(example.read_bytes()[:20000])
    mpi2 = sorted(str(p) for p in (ROOT / "fixtures" / "real" / "mpi2").glob("legate_*"))
    for files, ranks in (([str(cut)], 1), (mpi2, 2)):
        profile = load_profile(files)
        info = as_source(profile).info()
        assert info.ranks_read == compute_stats(profile, idle=False)["ranks"] == ranks
    assert as_source(load_profile([str(cut)])).info().ranks == ()
    from legate_prof.report.query import ReportQueries  # the report's header says the same
    assert ReportQueries(load_profile([str(cut)])).info()["ranks_read"] == 1


def test_a_picture_too_short_for_every_rank_says_which_ranks_it_holds(synthetic_8, tmp_path):
    """A picture grows to fit its lanes up to a height (16,384 px for a screenshot, 4,096
    for a report's: at 1,000 ranks each of a report's pictures was 1,600 x 16,384 px and
    held the first hundred ranks without a word).  Where it cannot hold every rank, a band
    at its foot says which ranks it holds; where it can, there is none."""
    from legate_prof.viewer.screenshot import (cut_off_words, make_timeline, ranks_cut_off,
                                               render_screenshot)
    model = load_profile([str(p) for p in synthetic_8])
    kw = dict(width=1000, height=700, expand=["cpu", "gpu_dev", "utility", "chan"])
    short = render_screenshot(model, tmp_path / "short.png", fit_at_most=900, **kw)
    tall = render_screenshot(model, tmp_path / "tall.png", **kw)
    a, b = QtGui.QImage(short), QtGui.QImage(tall)
    assert a.height() == 900 and b.height() > 900
    band = QtGui.QColor(255, 241, 214).rgb()
    assert a.pixel(3, a.height() - 5) == band and b.pixel(3, b.height() - 5) != band
    w = make_timeline(model, 1000, 700, **{k: v for k, v in kw.items() if k == "expand"})
    inside, every = ranks_cut_off(w)
    assert every == list(range(8)) and inside == list(range(len(inside))) and inside
    assert len(inside) < 8
    assert cut_off_words(inside, every).startswith(f"ranks 0–{inside[-1]} of 8 in this picture")
    assert f"(`legate_prof screenshot --ranks {inside[-1] + 1}-7` or the window" in \
        cut_off_words(inside, every)
    assert cut_off_words([0], every).startswith("rank 0 of 8")
    w.close()


def test_a_memory_row_says_its_bytes_as_the_statistics_do():
    """The out-of-memory run's system memory row said "60% utilization" only, of what and
    how near the peak unsaid (``stats``: peak 16.0 MiB of 20.0 MiB): it says its capacity,
    the bytes in use and the peak — the peak and capacity those of the statistics."""
    from legate_prof.analyze.stats import compute_stats
    from legate_prof.present.units import format_bytes
    from legate_prof.query import as_source
    from legate_prof.viewer.item_text import summary_value
    model = load_profile([str(Path(__file__).resolve().parents[1] / "fixtures" / "real" / "oom2")])
    src = as_source(model)
    groups = {(g["rank"], g["kind"]): g for g in compute_stats(model)["groups"]}
    t0, t1 = src.outline().time_range
    for rank in (0, 1):
        g = groups[(rank, "system")]
        assert g["capacity_bytes"] > 0 and g["peak_bytes"] > 0
        text = summary_value(src, "system", rank, t1 - (t1 - t0) // 20, t1 - (t1 - t0) // 25)
        assert f"of {format_bytes(g['capacity_bytes'])}: " in text, text
        assert text.endswith(f"(peak {format_bytes(g['peak_bytes'])})"), text


def test_the_legends_task_heading_comes_only_with_a_name_after_it(qtbot):
    """A narrow screenshot's legend ended in "tasks (most time in view):" with nothing after
    it (a review): the heading is drawn only where a name fits after it."""
    from legate_prof.viewer.panels.legend import paint_name_legend

    def painted(right):
        img = QtGui.QImage(800, 20, QtGui.QImage.Format.Format_RGB32)
        img.fill(QtGui.QColor(255, 255, 255))
        p = QtGui.QPainter(img)
        try:
            n = paint_name_legend(p, 0, 0, right, ["Random", "BinaryOp"])
        finally:
            p.end()
        dark = sum(QtGui.QColor(img.pixel(x, y)).lightness() < 128
                   for x in range(0, 800, 2) for y in range(20))
        return n, dark
    fm = QtGui.QFontMetrics(QtGui.QFont())
    head = fm.horizontalAdvance("tasks (most time in view):")
    assert painted(head + 20) == (0, 0)  # (the heading fits; no name does after it)
    n, dark = painted(800)
    assert n == 2 and dark > 0


def test_files_in_words_names_a_few_and_counts_the_rest():
    """One wording of a run's files for the report, the window and the pictures' stamp: a
    numbered run past ``most`` as its first and last by number (a shell's glob gives
    legate_0, legate_1, legate_10, ...), other names as the first few and a count."""
    from legate_prof.present.file_list import files_in_words
    ranks = [f"/runs/a/legate_{k}.prof" for k in sorted(range(1000), key=str)]
    assert files_in_words(ranks) == "legate_0.prof … legate_999.prof (1,000 files)"
    assert files_in_words(ranks[:3]) == "legate_0.prof, legate_1.prof, legate_10.prof"
    assert files_in_words(["run/", "b.prof"]) == "run, b.prof"
    mixed = [f"x{k}.prof" for k in range(5)] + ["other.prof.gz"]
    assert files_in_words(mixed) == "x0.prof, x1.prof, x2.prof, x3.prof (+2 more)"
    gz = [f"legate_{k}.prof.gz" for k in range(6)]
    assert files_in_words(gz, most=6) == ", ".join(gz)
    assert files_in_words(gz, most=5) == "legate_0.prof.gz … legate_5.prof.gz (6 files)"


@pytest.mark.parametrize("workers", [1, 2])
def test_the_all_ranks_rows_say_they_count_the_processors_of_ranks_not_given(workers, qtbot):
    """Some ranks' logs given alone: the all-ranks rows count, idle, the processors those
    logs describe on the other ranks, as the reference does ("all (CPU)" 0.2 where the two
    ranks shown ran busier), and said nothing of it.  Their tooltips say how many; with
    every rank given, nothing."""
    from fixtures.make_critical_goldens import REAL, rank_files
    from legate_prof.query import as_source
    from legate_prof.viewer.timeline.layout import LaneLayout
    files = [str(f) for f in rank_files(REAL / "mpi4")]

    def all_ranks_tips(paths):
        src = as_source(load_profile(paths, ranked=workers > 1, workers=workers))
        lay = LaneLayout.default(src)
        return src.outline(), {e.group: e.tooltip for e in lay.entries
                               if e.kind == "summary" and e.rank is None}
    info, tips = all_ranks_tips([files[1], files[3]])
    extra = dict(info.processors_not_read)
    assert extra.get("cpu", 0) > 0 and "channel" not in extra
    assert f"it counts {extra['cpu']:,} more processor" in tips["cpu"]
    info, tips = all_ranks_tips(files)
    assert info.processors_not_read == () and not any("more processor" in t
                                                      for t in tips.values())
