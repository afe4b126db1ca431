"""The window around the timeline (a review under Xvfb): its layout after a failed open, its
size on a small screen, the critical path's toggle where there is no path, a search with no
match, the docks' toggles in the View menu, the view's shortcuts after typing in a box.
The real window (offscreen Qt), driven with pytest-qt; waits are for states, never durations.
"""

import os
from pathlib import Path

import pytest
from PySide6 import QtCore, QtGui, QtWidgets
from tests_viewer_helpers import LOAD_MS, opened_window, shown_window

pytest.importorskip("pytestqt")

ROOT = Path(__file__).resolve().parents[1]


def open_window(qtbot, files, findings=True):
    """The window as ``legate_prof view FILES`` opens it, 1500 x 900 (its first size)."""
    return opened_window(qtbot, files, findings=findings, size=(1500, 900))


def _settle():
    for _ in range(5):
        QtCore.QCoreApplication.processEvents()
        QtWidgets.QApplication.sendPostedEvents(None, QtCore.QEvent.Type.LayoutRequest)


def _close_messages():
    for w in QtWidgets.QApplication.topLevelWidgets():
        if isinstance(w, QtWidgets.QMessageBox) and w.isVisible():
            w.close()


# ---- 1. a failed open leaves the layout as it was ---------------------------------------------

def test_a_failed_open_leaves_the_docks_and_the_timeline_as_wide_as_they_were(
        qtbot, sample_profile, tmp_path):
    """Ctrl+O on random bytes: the centre taken out for the loading panel, the docks filled
    the window (three docks of 1,000 px in 1,500) and kept it after the error: the timeline
    stayed ~270 px wide for good."""
    win = open_window(qtbot, [sample_profile])
    _settle()
    docks = [d for d in win.findChildren(QtWidgets.QDockWidget) if d.isVisible()]
    before = ([d.width() for d in docks], win.centralWidget().width())
    bad = tmp_path / "legate_5.prof"
    bad.write_bytes(os.urandom(4096))
    assert win.open_files([str(bad)])
    qtbot.waitUntil(lambda: getattr(win, "open_error", None) is not None, timeout=LOAD_MS)
    _close_messages()
    _settle()
    assert win.centralWidget().timeline is win.timeline and win.centralWidget().isVisible()
    after = ([d.width() for d in docks], win.centralWidget().width())
    assert all(abs(a - b) <= 4 for a, b in zip(after[0], before[0])), (before, after)
    assert abs(after[1] - before[1]) <= 4, (before, after)


# ---- 2. the window fits its screen ------------------------------------------------------------

SIZE_PROGRAM = """
from PySide6 import QtWidgets
app = QtWidgets.QApplication(["legate_prof"])
from legate_prof.load.loader import load_profile
from legate_prof.viewer.app import MainWindow
win = MainWindow(load_profile([{sample!r}]), ["x.prof"])
room = win.screen().availableGeometry()
print(win.width(), win.height(), room.width(), room.height(), win.devicePixelRatio())
"""


@pytest.mark.parametrize("screen, scale, shown", [
    ((1280, 720), "1", None), ((1600, 1000), "2", None), ((1920, 1200), "1", (1500, 900))])
def test_the_window_opens_within_its_screen(sample_profile, tmp_path, screen, scale, shown):
    """On a 1280×720 screen the window opened at 1500×900, its controls off the screen; with
    QT_SCALE_FACTOR=2 on 1600×1000, at 3000×1800 pixels.  It fits the screen's available
    geometry now, and keeps its default size where that fits."""
    import json
    import subprocess
    import sys
    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"screens": [{
        "name": "s", "x": 0, "y": 0, "width": screen[0], "height": screen[1],
        "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={config}",
               QT_SCALE_FACTOR=scale, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", SIZE_PROGRAM.format(sample=str(sample_profile))],
                         env=env, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    w, h, room_w, room_h, ratio = out.stdout.split()[-5:]
    w, h, room_w, room_h = int(w), int(h), int(room_w), int(room_h)
    assert (room_w * float(ratio), room_h * float(ratio)) == screen  # (logical pixels)
    assert w <= room_w and h <= room_h, (w, h, room_w, room_h)
    if shown is not None:
        assert (w, h) == shown
    else:  # as much as fits, not a small window
        assert w >= room_w * 0.9 and h >= room_h * 0.8, (w, h, room_w, room_h)


# ---- 3. P where the run has no critical path ---------------------------------------------------

_shown = shown_window  # (tests_viewer_helpers)


def _nothing_dimmed_nor_drawn(win):
    assert not win.path_action.isChecked()
    assert not win.timeline.item.path_shown
    assert win.timeline.item.highlighted() is None  # (nothing dimmed)
    assert not win.legend.critical  # (no "critical path / inferred" entries)
    assert win.statusBar().currentMessage().startswith("no critical path")


@pytest.mark.parametrize("before_it_came", [False, True])
def test_p_without_a_critical_path_leaves_the_toggle_off_and_nothing_dimmed(qtbot,
                                                                            before_it_came):
    """oom2 (no Realm events): P said "no critical path…", but the toggle stayed pressed,
    every item was dimmed and the legend gained the path's entries.  P (or the menu) now
    leaves it off, also when pressed before the empty path came."""
    from legate_prof.load.loader import load_profile
    from legate_prof.query import as_source
    oom = ROOT / "fixtures" / "real" / "oom2"
    files = sorted(str(p) for p in oom.glob("legate_*.prof*")) + [str(oom / "console.log")]
    win = _shown(qtbot, as_source(load_profile(files, ranked=True)))
    ready = lambda: win.critical_path is not None or win.critical_error is not None  # noqa
    if before_it_came:
        win.timeline.show_critical_path(True)  # (as P would before the path came)
    qtbot.waitUntil(ready, timeout=LOAD_MS)
    assert win.critical_error is None and len(win.critical_path) == 0
    if before_it_came:
        _nothing_dimmed_nor_drawn(win)
    qtbot.keyClick(win.timeline, QtCore.Qt.Key.Key_P)
    _nothing_dimmed_nor_drawn(win)
    win.path_action.trigger()  # (the View menu and the toolbar's button)
    _nothing_dimmed_nor_drawn(win)


# ---- 4. a search with no match ---------------------------------------------------------------

def test_a_search_with_no_match_dims_nothing(qtbot, sample_profile):
    """"zzz_nothing": the status said 0 matches and every item was dimmed (an empty
    highlight).  Nothing matched: nothing is dimmed, and earlier highlights go."""
    from legate_prof.load.loader import load_profile
    win = _shown(qtbot, load_profile([str(sample_profile)]))
    win.search.setText("fill_task")
    win.run_search()
    qtbot.waitUntil(lambda: not win.busy() and win.timeline.item.matches is not None,
                    timeout=LOAD_MS)
    win.search.setText("zzz_nothing")
    win.run_search()
    qtbot.waitUntil(lambda: not win.busy() and "matches for" in
                    win.statusBar().currentMessage(), timeout=LOAD_MS)
    assert win.statusBar().currentMessage().startswith("0 matches for 'zzz_nothing'")
    assert win.timeline.item.highlighted() is None


# ---- 5. the docks' toggles in the View menu -------------------------------------------------

def test_a_closed_dock_comes_back_from_the_view_menu(qtbot, sample_profile):
    """Details, Search results and Findings: a dock closed came back only by right-clicking
    another dock's title.  The View menu lists each one's toggle, there while a profile
    loads too."""
    win = open_window(qtbot, [sample_profile])
    docks = {d.windowTitle(): d for d in win.findChildren(QtWidgets.QDockWidget)}
    assert set(docks) == {"Details", "Search results", "Findings"}
    menu = win._view_menu
    for title, dock in docks.items():
        toggle = next(a for a in menu.actions() if a.text() == title)
        assert toggle.isCheckable()
        qtbot.waitUntil(toggle.isChecked)  # (the findings' dock shows once they are found)
        dock.close()
        qtbot.waitUntil(lambda: not dock.isVisible())
        assert not toggle.isChecked()
        assert toggle.isEnabled()
        toggle.trigger()
        qtbot.waitUntil(dock.isVisible)
    win._set_ready(False)  # (as while another profile loads)
    assert all(next(a for a in menu.actions() if a.text() == t).isEnabled() for t in docks)


# ---- 6. the view's shortcuts wherever the focus is, but typing ------------------------------

def test_the_windows_shortcuts_work_after_enter_in_the_search_and_ranks_boxes(
        qtbot, sample_profile, monkeypatch):
    """After typing in the Search or Ranks box and Enter, the focus stays there, and Ctrl+E
    (Export PNG) was taken by the line edit as "end of line": the window's shortcuts win over
    a text box's chords (its typing keys stay with it)."""
    from legate_prof.load.loader import load_profile
    win = _shown(qtbot, load_profile([str(sample_profile)]))
    asked = []
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a, **k: asked.append(a) or ("", "")))
    # (Ctrl+E is "end of line" where Qt's keys are X11's, not offscreen's: a shortcut on a
    # chord a line edit takes everywhere, Ctrl+A, shows the same)
    chord = []
    win.menuBar().actions()[0].menu().addAction("(a test's)", lambda: chord.append(1),
                                                QtGui.QKeySequence("Ctrl+A"))
    tl = win.timeline
    for box, text in ((win.search, "fill_task"), (win.lanes.ranks, "0")):
        box.setFocus()
        qtbot.waitUntil(box.hasFocus)
        box.clear()
        qtbot.keyClicks(box, text)
        qtbot.keyClick(box, QtCore.Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: not win.busy(), timeout=LOAD_MS)
        assert box.hasFocus()
        box.setCursorPosition(0)
        n = len(asked)
        qtbot.keyClick(box, QtCore.Qt.Key.Key_E, QtCore.Qt.KeyboardModifier.ControlModifier)
        assert len(asked) == n + 1  # Export PNG asked where to write
        assert box.cursorPosition() == 0 and box.text() == text  # (not "end of line")
        qtbot.keyClick(box, QtCore.Qt.Key.Key_A, QtCore.Qt.KeyboardModifier.ControlModifier)
        assert len(chord) == (1 if box is win.search else 2) and not box.hasSelectedText()
        tl.zoom(0.25)
        qtbot.keyClick(box, QtCore.Qt.Key.Key_0, QtCore.Qt.KeyboardModifier.ControlModifier)
        assert tl.time_range() == pytest.approx(tl.history[0])  # Ctrl+0 resets the zoom
        qtbot.keyClick(box, QtCore.Qt.Key.Key_End)  # typing keys stay with the box
        assert box.cursorPosition() == len(text)


def test_home_and_end_in_the_results_list_move_the_view_and_arrows_walk_it(
        qtbot, sample_profile, monkeypatch):
    """The README: lists keep ↑/↓; Home and End (first/last lanes) were the results list's."""
    from legate_prof.load.loader import load_profile
    win = _shown(qtbot, load_profile([str(sample_profile)]))
    tl = win.timeline
    scrolled = []
    monkeypatch.setattr(tl, "scroll_to", lambda y: scrolled.append(y))
    win.search.setText("fill_task")
    win.run_search()
    qtbot.waitUntil(lambda: not win.busy() and win.results.topLevelItemCount() > 0,
                    timeout=LOAD_MS)
    win.results.setFocus()
    qtbot.waitUntil(win.results.hasFocus)
    win.results.setCurrentItem(win.results.topLevelItem(0))
    qtbot.keyClick(win.results, QtCore.Qt.Key.Key_End)
    qtbot.keyClick(win.results, QtCore.Qt.Key.Key_Home)
    assert scrolled == [tl.lane_layout.height, 0]
    first = win.results.currentItem()
    qtbot.keyClick(win.results, QtCore.Qt.Key.Key_Down)  # the list's own
    assert win.results.currentItem() is not first and len(scrolled) == 2


# ---- the ranks filter and what is asked to be brought into sight -----------------------------

def test_a_rank_shown_again_to_bring_an_item_into_sight_is_said_in_the_ranks_box(qtbot):
    """oom2 with Ranks "0": a search result on rank 1 brought rank 1's lanes back, the header
    read "All ranks (2)", the box still "0" (a GUI walk). The box says the ranks shown, the
    status bar why; a finding naming a rank's memory and no item brings that memory into
    sight, whatever the filter."""
    from legate_prof.viewer.panels.findings import _reveal_named_memory
    win = open_window(qtbot, [ROOT / "fixtures" / "real" / "oom2"], findings=False)
    controls = win.lanes
    controls.ranks.setText("0")
    controls.apply_ranks()
    tl, lanes = win.timeline, win.source.outline().lanes
    assert tl.lane_layout.hidden_ranks == {1}
    on_rank_1 = [k for k, L in enumerate(lanes) if L.rank == 1 and L.group == "ops"][0]
    tl.reveal_lane(on_rank_1)
    assert tl.lane_layout.hidden_ranks == set() and controls.ranks.text() == ""
    assert "rank 1 shown again" in win.statusBar().currentMessage()
    controls.ranks.setText("0")
    controls.apply_ranks()
    memory = [k for k, L in enumerate(lanes) if L.rank == 1 and L.group == "system"][0]
    assert tl.lane_layout.find_lane(memory) is None
    _reveal_named_memory(win.source, tl, {"evidence": {"rank": 1, "memory": "system"}})
    assert tl.lane_layout.find_lane(memory) is not None and controls.ranks.text() == ""


def test_a_tile_that_arrives_after_the_timeline_is_replaced_is_not_kept(qtbot, sample_profile):
    """A tile the tiles' thread sent just before the window replaced its profile arrives at
    the item let go (``TimelineItem.let_go``): it is not kept and asks for no frame (it
    filled the caches just emptied, a review found)."""
    from legate_prof.load.loader import load_profile
    from legate_prof.viewer.timeline.tile_cache import CachedGrid
    from legate_prof.viewer.timeline.widget import TimelineWidget
    model = load_profile([sample_profile])
    w = TimelineWidget(model)
    qtbot.addWidget(w)
    old = w.item
    old.compute_in_background()
    w.set_source(model)
    assert w.item is not old and old._cache_img is None
    late = CachedGrid(cell_ns=1.0, first=0, end=4, data=object(), generation=0)
    old._tile_done("lane", 0, late)
    old._arrivals()
    assert not len(old._lane_cache) and not old._repaint_due
    w.item._tile_done("lane", 0, late)  # (the new item keeps what it is sent)
    assert len(w.item._lane_cache) == 1
