"""The viewer through a working day: the real window (offscreen Qt), driven with pytest-qt.

Open twice, drag-and-drop, wide docks, findings after a reopen, tooltips that stay, keys
wherever the focus is, which rank a screenful belongs to, the rank filter, search over every
rank, details as links, plain text for every string from a file, memory without a capacity.
No timed assertions: waits are for states (``waitUntil``), never for durations.
"""

import os
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from legate_prof.load.loader import load_profile
from tests_viewer_helpers import (LOAD_MS, item_point, loading_window, opened_window,
                                  wait_loaded)

pytest.importorskip("pytestqt")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "legate_prof" / "data" / "example_legate_0.prof"


_window, _wait_loaded = opened_window, wait_loaded  # (tests_viewer_helpers)


def _reopen(qtbot, win, files, findings=True):
    before = win._loads
    assert win.open_files([str(f) for f in files])
    qtbot.waitUntil(lambda: win._loads == before + 1)
    _wait_loaded(qtbot, win, findings)


@pytest.fixture(scope="module")
def ranks4(tmp_path_factory):
    from fixtures.synthetic import generate
    return generate(tmp_path_factory.mktemp("r4"), ranks=4, items=16_000, seed=3)


# ---- one loading path -------------------------------------------------------------------------

def test_a_second_open_replaces_everything_and_its_findings_work(qtbot, sample_profile):
    """Open the sample, search, click, zoom; then open the example: its own findings, no
    search, no details, no undo history of the first; clicking a finding zooms (no
    'Signal source has been deleted': pytest-qt fails on an exception in the event loop)."""
    from legate_prof.analyze.insights import find_insights
    win = _window(qtbot, [sample_profile])
    first = list(win.findings.findings)
    win.search.setText("fill_task")
    win.run_search()
    qtbot.waitUntil(lambda: not win.busy())  # (worked out in a thread)
    win.go_to_item(win.results.result_items()[0])
    qtbot.waitUntil(lambda: not win.busy())  # (worked out in a thread)
    assert win.details.table.rowCount() > 0
    win.timeline.zoom(0.5)
    _reopen(qtbot, win, [EXAMPLE])
    assert win.source.info().sources[0].endswith("example_legate_0.prof")
    want = find_insights(load_profile([EXAMPLE]))
    assert win.findings.findings == want and want != first
    assert win.findings.count() == len(want)
    assert win.search.text() == "" and win.results.topLevelItemCount() == 0
    assert win.details.table.rowCount() == 0
    assert win.timeline.history == [win.timeline.time_range()]  # a fresh undo history
    assert win.timeline.item.matches is None
    row = next(k for k, f in enumerate(want) if f["provenance"])
    win.findings.itemClicked.emit(win.findings.item(row))
    qtbot.waitUntil(lambda: not win.busy())  # (its items are found in a thread)
    a, b = win.timeline.time_range()
    t0, t1 = want[row]["window_ns"]
    assert a <= t0 and t1 <= b
    assert win.timeline.item.matches is not None


def test_a_searchs_count_says_what_its_matches_are(qtbot):
    """"BinaryOp" found 116 matches in the example where `stats` counts 58 BinaryOp tasks
    (a GUI walk): each task's application call has its name too.  The status bar says what
    the matches are, and the task count is stats'."""
    from legate_prof.analyze.stats import compute_stats
    win = _window(qtbot, [EXAMPLE], findings=False)
    win.search.setText("BinaryOp")
    win.run_search()
    qtbot.waitUntil(lambda: not win.busy())
    said = win.statusBar().currentMessage()
    tasks = next(t["count"] for t in compute_stats(load_profile([EXAMPLE]), idle=False)["tasks"]
                 if t["name"] == "BinaryOp")
    assert said == (f"{2 * tasks:,} matches for 'BinaryOp' ({tasks:,} tasks, {tasks:,} "
                    "application calls)"), said


def test_open_shows_the_progress_panel_and_loads_off_the_windows_thread(qtbot, sample_profile):
    """File → Open runs the same worker load as the command line: the progress panel shows
    each step while the window's thread goes on."""
    steps, go = [], threading.Semaphore(0)

    def opener(paths, progress):
        def step(i, n, what):
            steps.append((what, threading.current_thread() is threading.main_thread()))
            progress(i, n, what)
            go.acquire(timeout=60)
        return load_profile(paths, progress=step, ranked=True)
    win = _window(qtbot, [sample_profile], opener=lambda p, pr: load_profile(p, pr, ranked=True),
                  findings=False)
    win._opener = opener
    assert win.open_files([str(EXAMPLE)])
    assert win.loading is not None and win.centralWidget() is win.loading
    assert "example_legate_0.prof" in win.loading.title.text()
    qtbot.waitUntil(lambda: bool(steps))
    assert not any(on_main for _, on_main in steps)  # the load runs in a worker thread
    qtbot.waitUntil(lambda: win.loading.step.text() == steps[-1][0])
    assert not win.search.isEnabled()
    for _ in range(20):
        go.release()
    _wait_loaded(qtbot, win, findings=False)
    assert win.loading is None and win.search.isEnabled()


def test_a_failed_open_keeps_the_profile_and_says_why_in_plain_text(qtbot, sample_profile,
                                                                    tmp_path):
    win = _window(qtbot, [sample_profile], findings=False)
    src, tl = win.source, win.timeline
    bad = tmp_path / "<b>bad<font color=red>_0.prof"
    bad.write_bytes(b"not a profile <img src=\"/dev/zero\">\n")
    assert win.open_files([str(bad)])
    qtbot.waitUntil(lambda: getattr(win, "open_error", None) is not None, timeout=LOAD_MS)
    assert win.source is src and win.timeline is tl and win.centralWidget().timeline is tl
    assert win.search.isEnabled()
    assert str(bad) in win.open_error
    boxes = [w for w in QtWidgets.QApplication.topLevelWidgets()
             if isinstance(w, QtWidgets.QMessageBox) and w.isVisible()]
    assert boxes and boxes[-1].textFormat() == QtCore.Qt.TextFormat.PlainText
    assert str(bad) in boxes[-1].text()
    boxes[-1].close()


def test_drag_and_drop_opens_like_file_open(qtbot, sample_profile):
    win = _window(qtbot, [sample_profile], findings=False)
    data = QtCore.QMimeData()
    data.setUrls([QtCore.QUrl.fromLocalFile(str(EXAMPLE))])
    pos = QtCore.QPointF(win.width() / 3, win.height() / 2)
    enter = QtGui.QDragEnterEvent(pos.toPoint(), QtCore.Qt.DropAction.CopyAction, data,
                                  QtCore.Qt.MouseButton.LeftButton,
                                  QtCore.Qt.KeyboardModifier.NoModifier)
    QtCore.QCoreApplication.sendEvent(win, enter)
    assert enter.isAccepted()
    drop = QtGui.QDropEvent(pos, QtCore.Qt.DropAction.CopyAction, data,
                            QtCore.Qt.MouseButton.LeftButton,
                            QtCore.Qt.KeyboardModifier.NoModifier)
    QtCore.QCoreApplication.sendEvent(win, drop)
    qtbot.waitUntil(lambda: win.source is not None and
                    win.source.info().sources[0].endswith("example_legate_0.prof"),
                    timeout=LOAD_MS)
    assert win.timeline is not None and win.loading is None


def test_the_timeline_keeps_its_width_when_the_docks_are_wide(qtbot, sample_profile):
    from legate_prof.viewer.app import MIN_TIMELINE_PX
    win = _window(qtbot, [sample_profile], findings=True, size=(1000, 700))
    docks = win.findChildren(QtWidgets.QDockWidget)
    win.resizeDocks(docks, [900] * len(docks), QtCore.Qt.Orientation.Horizontal)
    qtbot.waitUntil(lambda: win.timeline.width() >= MIN_TIMELINE_PX)
    _reopen(qtbot, win, [EXAMPLE], findings=False)
    qtbot.waitUntil(lambda: win.centralWidget().width() >= win.width() * 0.6)
    assert win.timeline.width() >= MIN_TIMELINE_PX
    assert win.timeline.vb.width() > 300


# ---- text that stays and reads --------------------------------------------------------------

def test_the_hover_tooltip_stays_while_the_mouse_is_still(qtbot, sample_profile):
    """Qt's own tooltip event (sent once the mouse rests) used to hide ours after ~0.8 s:
    it must leave it shown, with the same text."""
    win = _window(qtbot, [sample_profile], findings=False)
    tl, src = win.timeline, win.source
    i = next(int(j) for j in src.search("fill_task") if src.item_title(j).startswith("fill"))
    tl.show_item(i)
    tl.grab()
    qtbot.waitUntil(tl.item.settled)  # (its tiles come from the tiles' thread)
    tl.grab()
    pos = item_point(tl, i)
    qtbot.mouseMove(tl.viewport(), pos)
    qtbot.waitUntil(QtWidgets.QToolTip.isVisible)
    text = QtWidgets.QToolTip.text()
    assert "fill_task" in text
    rest = QtGui.QHelpEvent(QtCore.QEvent.Type.ToolTip, pos, tl.viewport().mapToGlobal(pos))
    QtCore.QCoreApplication.sendEvent(tl.viewport(), rest)
    QtCore.QCoreApplication.processEvents()
    assert QtWidgets.QToolTip.isVisible() and QtWidgets.QToolTip.text() == text


def test_the_hover_tooltip_goes_when_the_lanes_move_under_a_still_mouse(qtbot, ranks4):
    """A tooltip stayed on screen after the lanes moved under a still mouse (PgDn, P pushing
    the lanes down), naming a lane the mouse was no longer over (a new user's walk).  The
    view moved: what was hovered is forgotten and its tooltip goes; the next mouse move says
    what is under it."""
    win = _window(qtbot, ranks4, findings=False, size=(1400, 500))
    tl = win.timeline
    tl.expand(["cpu", "utility"])
    tl.grab()
    qtbot.waitUntil(tl.item.settled, timeout=LOAD_MS)
    tl.grab()
    src = win.source
    i = int(src.search("BinaryOp")[0])
    tl.show_item(i)
    tl.grab()
    qtbot.waitUntil(tl.item.settled, timeout=LOAD_MS)
    nudge = [0]

    def hovered():  # (the mouse moved onto the item again: a late settling of the view, a
        # move itself, drops what was hovered)
        nudge[0] ^= 1
        qtbot.mouseMove(tl.viewport(), item_point(tl, i) + QtCore.QPoint(nudge[0], 0))
        return tl._hover is not None and QtWidgets.QToolTip.isVisible()
    qtbot.waitUntil(hovered, timeout=LOAD_MS)
    _, (y0, y1) = tl.vb.viewRange()
    tl.vb.setYRange(y0 + (y1 - y0) / 2, y1 + (y1 - y0) / 2, padding=0)  # (as PgDn does)
    QtCore.QCoreApplication.processEvents()
    assert tl._hover is None
    qtbot.waitUntil(lambda: not QtWidgets.QToolTip.isVisible())  # (Qt hides it in 0.3 s)
    # lanes pushed down with the view at the top of the tree (P there, a group opened): the
    # view's range stays, and the tooltip stayed over another lane (a GUI walk)
    tl.show_item(i)
    tl.grab()
    qtbot.waitUntil(tl.item.settled, timeout=LOAD_MS)
    qtbot.waitUntil(hovered, timeout=LOAD_MS)
    before = tl.vb.viewRange()[1]
    tl.expand(["utility"], expanded=False)
    assert tl.vb.viewRange()[1] == before and tl._hover is None
    qtbot.waitUntil(lambda: not QtWidgets.QToolTip.isVisible())


def test_a_search_match_keeps_the_shade_of_its_waits(qtbot, sample_profile):
    """A task found by a search was drawn solid in its colour over its waits (the match on
    top of its shades): one that mostly waited read as running (a GUI walk: mpi4's BinaryOp,
    38 ms of which 35 waiting).  It is drawn as without the search: its waits in the light
    shade, its running stretches in full colour."""
    from legate_prof.viewer.colors import blend_with_white, name_color
    win = _window(qtbot, [sample_profile], findings=False)
    tl, src = win.timeline, win.source
    i = next(int(j) for j in src.search("Toplevel Task")
             if src.item_title(j).startswith("Toplevel"))
    s0, s1 = src.item_extent(i)
    tl.set_time_range(s0, s1)

    def row_colors():
        tl.item.refresh()
        tl.grab()
        qtbot.waitUntil(tl.item.settled, timeout=LOAD_MS)
        img = tl.grab().toImage()
        y = item_point(tl, i).y()
        rect = tl.mapFromScene(tl.vb.sceneBoundingRect()).boundingRect()
        return {QtGui.QColor(img.pixel(x, y)).rgb()
                for x in range(int(rect.left()) + 2, int(rect.right()) - 2)}
    base = name_color("Toplevel Task")
    waiting = blend_with_white(base, 0.15).rgb()
    plain = row_colors()
    assert waiting in plain and base.rgb() in plain
    win.search.setText("Toplevel Task")
    win.run_search()
    qtbot.waitUntil(lambda: tl.item.matches is not None, timeout=LOAD_MS)
    found = row_colors()
    assert waiting in found and base.rgb() in found


def test_docks_a_small_window_squeezed_widen_again_in_a_large_one(qtbot, sample_profile):
    """Shrunk and enlarged again under a window manager, the Details and Search docks stayed
    about 80 px wide in a 1,600 px window: a roomy window gives them back their share."""
    win = _window(qtbot, [sample_profile], findings=False, size=(1600, 1000))
    docks = [d for d in win.findChildren(QtWidgets.QDockWidget) if d.isVisible()]
    qtbot.waitUntil(lambda: docks[0].width() > 200, timeout=LOAD_MS)
    wide = docks[0].width()
    win.resize(600, 500)
    QtCore.QCoreApplication.processEvents()
    win.resizeDocks(docks, [60] * len(docks), QtCore.Qt.Orientation.Horizontal)  # (as a WM)
    qtbot.waitUntil(lambda: docks[0].width() < 100, timeout=LOAD_MS)
    win.resize(1600, 1000)
    qtbot.waitUntil(lambda: docks[0].width() >= wide * 0.8, timeout=LOAD_MS)


def test_the_notes_take_at_most_a_quarter_of_a_small_window(qtbot):
    """The clock-skew and slow-message notes took half of an 800 x 500 window, the lanes
    squeezed under them: the banner stops at a quarter of the window's height and scrolls;
    in a large window it shows every line."""
    win = _window(qtbot, [ROOT / "fixtures" / "real" / "mpi4"], findings=False, size=(700, 400))
    banner = win.centralWidget().banner
    qtbot.waitUntil(lambda: banner.isVisible() and bool(banner.lines()), timeout=LOAD_MS)
    assert any("Clock skew" in line for line in banner.lines())
    qtbot.waitUntil(lambda: banner.height() <= win.height() // 4 + 12, timeout=LOAD_MS)
    bar = banner.findChild(QtWidgets.QScrollArea).verticalScrollBar()
    assert bar.maximum() > 0  # (the rest is a scroll away)
    win.resize(1600, 1000)
    qtbot.waitUntil(lambda: bar.maximum() == 0, timeout=LOAD_MS)


def test_what_was_wrong_with_the_files_stays_in_sight_above_the_timeline(qtbot, tmp_path):
    """Issue 36: a log cut short opened with no word of it in the window (the terminal said
    "truncated at byte 99944"; the status bar was overwritten at once): the banner above the
    timeline says it, and still does after the status bar moved on."""
    cut = tmp_path / "legate_0.prof"
    cut.write_bytes((ROOT / "fixtures" / "real" / "efficient_0.prof").read_bytes()[:99944])
    win = _window(qtbot, [cut], findings=False)
    win.timeline.zoom(0.5)  # (the status bar says the view's range now)
    banner = win.centralWidget().banner
    qtbot.waitUntil(banner.isVisible)  # (Qt shows a new central widget at its next turn)
    lines = banner.problem_lines()
    assert any("legate_0.prof" in x and "truncated at byte 99924" in x for x in lines), lines
    assert "truncated at byte" not in win.statusBar().currentMessage()
    _reopen(qtbot, win, [EXAMPLE], findings=False)  # a sound profile: no problem shown
    assert banner.problem_lines() == []


def test_a_merged_bands_text_tells_its_ends_apart_and_says_its_busy_share(sample_profile):
    """Issue 36: a band of 0.5 ms at 107.85 s (a 10 ms view) read "107.851 s – 107.851 s"
    and gave a count and a range, not how busy it is: its tooltip and details now give both
    ends with the digits its span needs and the share of it its items ran."""
    from legate_prof.query import as_source
    from legate_prof.viewer.item_text import detail_fields, tooltip_html
    src = as_source(load_profile([sample_profile]))
    band = ("band", (107_851_200_000, 107_851_700_000, 1234, 0, 0, 0.0123))
    doc = QtGui.QTextDocument()
    doc.setHtml(tooltip_html(src, band))
    text = doc.toPlainText()
    assert "107.8512000 s – 107.8517000 s (500.000 µs)" in text
    assert "1,234 merged items" in text and "its items ran 1.2 % of it (6.150 µs of 500.000 µs)" \
        in text
    rows = {f.label: f.text for f in detail_fields(src, band)}
    assert rows["Busy"].startswith("its items ran 1.2 % of it") and rows["Merged items"] == "1,234"


def test_times_have_the_digits_the_zoom_needs_and_ticks_one_unit():
    from legate_prof.viewer.timeline.axes import TimeAxis
    from legate_prof.viewer.time_text import format_range
    text = format_range(1.0060e9, 1.0066e9)
    a, b = text.split(" (")[0].split(" – ")
    assert a != b and a.endswith(" s") and b.endswith(" s")
    ax = TimeAxis("bottom")
    ax.setRange(0, 1.2e9)
    ticks = ax.tickStrings([1e8, 2e8, 3e8], 1, 1e8) + ax.tickStrings([5e7, 1.5e8], 1, 5e7)
    assert {t.split()[-1] for t in ticks} == {"s"}  # never "100 ms, 0.2 s"
    assert len(set(ticks)) == len(ticks)


def test_view_keys_work_wherever_the_focus_is_but_typing(qtbot, sample_profile):
    win = _window(qtbot, [sample_profile], findings=False)
    tl = win.timeline
    win.search.setText("add_task")
    win.run_search()
    qtbot.waitUntil(lambda: not win.busy())  # (worked out in a thread)
    win.results.setFocus()
    qtbot.waitUntil(win.results.hasFocus)
    a0, b0 = tl.time_range()
    qtbot.keyClick(win.results, QtCore.Qt.Key.Key_Plus)  # from the results list
    assert tl.time_range()[1] - tl.time_range()[0] == pytest.approx((b0 - a0) / 2, rel=1e-6)
    qtbot.keyClick(win.details.table, QtCore.Qt.Key.Key_0)  # from the details table
    assert tl.time_range() == pytest.approx((a0, b0))
    tl.zoom(0.25)
    zoomed = tl.time_range()
    win.search.setFocus()
    qtbot.keyClick(win.search, QtCore.Qt.Key.Key_0)  # typing: the text gets it
    assert win.search.text() == "add_task0" and tl.time_range() == pytest.approx(zoomed)
    qtbot.keyClick(win.search, QtCore.Qt.Key.Key_Z, QtCore.Qt.KeyboardModifier.ControlModifier)
    assert tl.time_range() == pytest.approx((a0, b0))  # Ctrl+Z undoes the view (README)
    assert tl.item.matches is not None
    qtbot.keyClick(win.search, QtCore.Qt.Key.Key_Escape)  # Escape clears the highlights
    assert tl.item.matches is None and tl.item.selected is None
    assert win.results.topLevelItemCount() == 0


def test_search_results_say_what_is_not_a_task():
    """A search for "BinaryOp" listed the task and the application call it made alike
    (2,988 lines, half of them calls): a result that is not a task says what it is."""
    from legate_prof.query import as_source
    from legate_prof.viewer.panels.search import result_lines
    src = as_source(load_profile([str(ROOT / "fixtures" / "real" / "mpi4")]))
    lines = [text for text, _ in result_lines(src, src.search("BinaryOp"))]
    calls = [t for t in lines if " · application call  @ " in t]
    tasks = [t for t in lines if t.startswith("BinaryOp[") and " · " not in t.split("  @ ")[0]]
    assert calls and tasks and len(calls) + len(tasks) <= len(lines)


def test_search_covers_every_rank_grouped_with_counts(qtbot, ranks4):
    win = _window(qtbot, ranks4, findings=False)
    src = win.source
    name = "BinaryOp"
    per_file = [len(load_profile([f]).names) and len(
        __import__("legate_prof.query", fromlist=["as_source"]).as_source(
            load_profile([f])).search(name)) for f in ranks4]
    assert all(per_file)  # every rank has some: none may be hidden behind a cap
    win.search.setText(name)
    win.run_search()
    qtbot.waitUntil(lambda: not win.busy())  # (worked out in a thread)
    hits = src.search(name, limit=src.info().n_items + 1)
    assert [win.results.counts[r] for r in range(4)] == per_file
    assert sum(win.results.counts.values()) == len(hits)
    assert f"{len(hits):,} matches" in win.statusBar().currentMessage()
    win.search.clear()  # undoing the text clears the count
    assert "matches" not in win.statusBar().currentMessage()


def test_findings_are_titled_with_their_source_lines():
    from legate_prof.viewer.panels.findings import finding_title
    f = {"pattern": "temporaries", "title": "4 full-size arrays made by one line (61.0 MiB)",
         "provenance": ["/home/u/heat.py:13"], "remedy": "", "window_ns": [0, 1]}
    g = dict(f, provenance=["/home/u/heat.py:28"])
    assert finding_title(f) != finding_title(g) and "heat.py:13" in finding_title(f)


# ---- always know where you are -------------------------------------------------------------

def test_every_screenful_says_its_rank_and_one_key_collapses_it(qtbot, ranks4):
    win = _window(qtbot, ranks4, findings=False)
    tl = win.timeline
    tl.expand(all_groups=True)
    tl.set_compact(False)
    tl.setFocus()
    layout = tl.lane_layout
    seen = set()
    qtbot.keyClick(tl, QtCore.Qt.Key.Key_Home)
    while True:
        (y0, y1) = tl.vb.viewRange()[1]
        head = layout.header_at(y0 + 1e-6)
        on_screen = [e for e in layout.visible(y0, y1) if e.kind == "header"]
        sticky = tl.sticky.isVisibleTo(tl)  # (shown on the timeline, whatever the window's state)
        assert on_screen or (sticky and f"Rank {head.rank}" in tl.sticky.text()), (y0, y1)
        if sticky:
            seen.add(tl.sticky.rank)
        if y1 >= layout.height - 1e-6:
            break
        qtbot.keyClick(tl, QtCore.Qt.Key.Key_PageDown)
        assert tl.vb.viewRange()[1][0] > y0  # PageDown moves a screen
    assert seen >= {1, 2, 3}
    qtbot.keyClick(tl, QtCore.Qt.Key.Key_End)
    assert tl.vb.viewRange()[1][1] == pytest.approx(layout.height, abs=0.05)
    rank = tl.sticky.rank
    n = len(layout.entries)
    qtbot.keyClick(tl, QtCore.Qt.Key.Key_C)  # one key collapses the rank in view
    assert rank in layout.collapsed_ranks and len(layout.entries) < n
    head = next(e for e in layout.entries if e.kind == "header" and e.rank == rank)
    assert [e.kind for e in layout.entries if e.rank == rank] == ["header", "summary"]
    tl.toggle_rank(rank)  # a click on its header opens it again
    assert len(layout.entries) == n and head.label == f"Rank {rank}"


def test_collapsed_ranks_keep_their_rows_height_and_show_a_summary_each(qtbot, ranks4):
    """Issue 36: "Collapse ranks" made every rank a 330 px empty band: the view stretched the
    few rows left to its height.  Rows keep their height (the tree sits at the top, room
    below), and each collapsed rank still shows its busiest processors' utilization, drawn."""
    win = _window(qtbot, ranks4, findings=False, size=(1400, 900))
    tl = win.timeline
    qtbot.waitUntil(tl.item.settled, timeout=LOAD_MS)
    tl.collapse_ranks(True)
    # (the view's range unchanged, the frame before drew the tree before: not settled until
    # a frame has drawn the collapsed one — a grab at once showed three ranks' rows empty)
    assert not tl.item.settled()
    layout = tl.lane_layout
    y0, y1 = tl.vb.viewRange()[1]
    assert y0 == 0 and (y1 - y0) == pytest.approx(tl.vb.height() / tl.row_px, rel=1e-6)
    assert layout.height < y1  # (room below the tree, not rows stretched into it)
    for e in layout.entries:
        top = tl.mapFromScene(tl.vb.mapViewToScene(QtCore.QPointF(0, e.y))).y()
        bottom = tl.mapFromScene(tl.vb.mapViewToScene(QtCore.QPointF(0, e.y + e.height))).y()
        assert bottom - top == pytest.approx(e.height * tl.row_px, abs=1.5)
    summaries = [e for e in layout.entries if e.kind == "summary"]
    assert {e.rank for e in summaries} == {None, 0, 1, 2, 3} and len(summaries) == 5
    qtbot.waitUntil(tl.item.settled, timeout=LOAD_MS)
    img = tl.grab().toImage()
    empty = {QtGui.QColor(*c).rgb() for c in ((250, 250, 250), (255, 255, 255))}
    for e in summaries:  # each drawn: its fill's colour somewhere, not only the empty row's
        y = tl.mapFromScene(tl.vb.mapViewToScene(QtCore.QPointF(0, e.y + e.height - 0.3))).y()
        row = {img.pixel(x, int(y)) for x in range(200, img.width() - 30, 3)}
        assert row - empty, e.label


def test_a_collapsed_rank_shows_the_processors_that_ran_longest(qtbot):
    """A collapsed rank showed its first processor group in display order, its CPUs, which
    sat idle in the guide's runs while the utility processors did the work: it shows the
    group that ran longest over all ranks, the same group on every rank."""
    win = _window(qtbot, [ROOT / "fixtures" / "real" / "mpi4"], findings=False)
    tl = win.timeline
    busy = {}
    for g in win.source.outline().groups:
        if g.kind == "processor":
            busy[g.group] = busy.get(g.group, 0) + g.busy_ns
    longest = max(busy, key=busy.get)
    assert longest != "cpu" and busy[longest] > 10 * busy["cpu"]  # (the fixture's shape)
    tl.collapse_ranks(True)
    summaries = [e for e in tl.lane_layout.entries if e.kind == "summary"]
    assert {e.rank for e in summaries} == {None, 0, 1, 2, 3}
    assert {e.group for e in summaries} == {longest}


def test_lane_tooltips_and_details_say_rank_and_group(qtbot, ranks4):
    win = _window(qtbot, ranks4, findings=False)
    tl, src = win.timeline, win.source
    tl.expand(all_groups=True)
    lane = next(x for x in src.info().lanes if x.rank == 2 and x.group == "cpu")
    e = tl.lane_layout.find_lane(lane.lane)
    assert tl.lane_axis.entry_tooltip(e.y + 0.1).startswith(f"Rank 2 · cpu · {lane.short}")
    lo, _hi = src.lane_item_range(lane.lane)
    win.go_to_item(lo)
    qtbot.waitUntil(lambda: not win.busy())  # (worked out in a thread)
    rows = {win.details.table.item(r, 0).text(): win.details.table.item(r, 1).text()
            for r in range(win.details.table.rowCount())}
    assert rows["Rank"] == "2" and rows["Group"] == "cpu"


def test_rank_filter_kind_toggles_collapse_all_and_compact(qtbot, ranks4):
    from legate_prof.present.ranks import parse_ranks
    win = _window(qtbot, ranks4, findings=False)
    tl = win.timeline
    ranks_box = win.lanes.ranks
    ranks_box.setText("1-2")
    ranks_box.returnPressed.emit()
    shown = {e.rank for e in tl.lane_layout.entries if e.kind == "header" and e.rank is not None}
    assert shown == set(parse_ranks("1-2")) == {1, 2}
    ranks_box.setText("7-9")
    ranks_box.returnPressed.emit()
    assert "names none of this profile's ranks (0-3)" in win.statusBar().currentMessage()
    assert tl.lane_layout.hidden_ranks == {0, 3}  # kept as it was
    assert set(parse_ranks(ranks_box.text())) == {1, 2}  # (the box says so: "7-9" stayed)
    win.lanes.kind_actions["cpu"].setChecked(False)
    assert not [e for e in tl.lane_layout.entries if e.group == "cpu"]
    win.lanes.kind_actions["cpu"].setChecked(True)
    tl.collapse_ranks(True)  # each rank: its header and its busiest processors' utilization
    kinds = [(e.rank, e.kind) for e in tl.lane_layout.entries]
    assert kinds == [(r, k) for r in (None, 1, 2) for k in ("header", "summary")]  # (1-2)
    tl.collapse_ranks(False)
    tl.expand(["cpu"])
    assert all((e.rank, "cpu") in tl.lane_layout.expanded
               for e in tl.lane_layout.entries if e.group == "cpu" and e.rank is not None)
    tl.expand(["cpu"], expanded=False)
    assert not [e for e in tl.lane_layout.entries if e.kind == "lane" and e.group == "cpu"]
    rows_before = tl.vb.viewRange()[1]
    win.lanes.compact.setChecked(True)
    rows_after = tl.vb.viewRange()[1]
    assert tl.compact and (rows_after[1] - rows_after[0]) > (rows_before[1] - rows_before[0])


def test_a_rank_filter_starts_the_lanes_at_the_top(qtbot, ranks4):
    """Filtered from part-way down the lanes, the view kept its place in the old tree: it
    opened at "Rank 1 (continued)", the path's track and the summaries above it out of sight
    (a user's review).  Other ranks shown start at the top; a kind toggled keeps the place."""
    win = _window(qtbot, ranks4, findings=False)
    tl = win.timeline
    tl.expand(all_groups=True)
    tl.scroll_to(tl.lane_layout.height / 2)
    assert tl.vb.viewRange()[1][0] > 1
    win.lanes.ranks.setText("1")
    win.lanes.ranks.returnPressed.emit()
    assert tl.lane_layout.hidden_ranks == {0, 2, 3}
    assert tl.vb.viewRange()[1][0] == 0.0
    tl.scroll_to(3.0)
    win.lanes.kind_actions["utility"].setChecked(False)
    assert tl.vb.viewRange()[1][0] > 0


def test_parse_ranks_is_the_one_rank_syntax():
    """The window's rank box reads ranks with the command line's parser (``--ranks``): the
    same lists, the same errors; an empty box is every rank, and only the profile's ranks
    are kept."""
    from legate_prof.present.ranks import format_ranks, parse_ranks
    from legate_prof.viewer.panels.lane_controls import shown_ranks
    assert parse_ranks("0-3,7") == (0, 1, 2, 3, 7)
    assert parse_ranks(" 3 , 1-1 ") == (1, 3)
    assert format_ranks(parse_ranks("0-3,7,9-11")) == "0-3,7,9-11"
    assert shown_ranks("", (0, 1)) is None
    assert shown_ranks("0-100", known=(2, 5, 200)) == (2, 5)
    for bad in ("a", "3-1", "-2", "1-x", "1,,2", "0-99999999999"):
        with pytest.raises(ValueError) as cli:
            parse_ranks(bad)
        with pytest.raises(ValueError) as box:
            shown_ranks(bad, (0, 1, 2))
        assert str(box.value) == str(cli.value)
    with pytest.raises(ValueError, match="names none of this profile's ranks"):
        shown_ranks("7", (0, 1))


# ---- details as links --------------------------------------------------------------------

def test_details_links_select_and_zoom_to_an_item(qtbot, sample_profile):
    """The critical path's "Waited for" row (the API's ``Field`` with an ("item", j) link)
    is drawn as a link once the path is computed; a click selects that item and zooms to
    it; ("items", ids) highlights them."""
    win = _window(qtbot, [sample_profile], findings=False)
    qtbot.waitUntil(lambda: win.critical_path is not None, timeout=LOAD_MS)
    src = win.source
    t0, t1 = src.info().time_range

    def short(j):
        a, b = src.item_extent(j)
        return b - a < (t1 - t0) / 20
    i = next(k for k in range(src.info().n_items)
             if (link := src.critical_predecessor(k)) is not None and link.via == "event"
             and link.predecessor is not None and short(link.predecessor))
    j = src.critical_predecessor(i).predecessor
    win.go_to_item(i)
    qtbot.waitUntil(lambda: not win.busy())  # (worked out in a thread)
    table = win.details.table
    row = next(r for r in range(table.rowCount()) if table.item(r, 0).text() == "Waited for")
    assert table.item(row, 1).font().underline()
    table.cellClicked.emit(row, 1)
    qtbot.waitUntil(lambda: not win.busy())  # (followed in a thread)
    assert win.timeline.item.selected == j
    a, b = win.timeline.time_range()
    s, e = src.item_extent(j)
    assert a <= s and e <= b and (b - a) < (src.info().time_range[1] - src.info().time_range[0])
    held = next(r for r in range(table.rowCount()) if table.item(r, 0).text() == "Held up")
    table.cellClicked.emit(held, 1)
    qtbot.waitUntil(lambda: not win.busy())  # (followed in a thread)
    assert i in win.timeline.item.matches.tolist()


# ---- plain text ----------------------------------------------------------------------------

HOSTILE = ('<img src="/dev/zero">', "<b>evil", "<font color=red>", "<img src=x>")


def _shown_strings(win):
    """Every (string, shown as rich text?) the window's widgets hold: window title, labels,
    tooltips, list/tree/table items and their tooltips, message boxes."""
    rich = QtCore.Qt.TextFormat.RichText
    auto = QtCore.Qt.TextFormat.AutoText

    def guessed(s, fmt=auto):
        return fmt == rich or (fmt == auto and QtGui.Qt.mightBeRichText(s))
    out = [(win.windowTitle(), False)]
    widgets = win.findChildren(QtWidgets.QWidget) + [
        w for w in QtWidgets.QApplication.topLevelWidgets() if isinstance(w, QtWidgets.QMessageBox)]
    for w in widgets:
        if w.toolTip():
            out.append((w.toolTip(), guessed(w.toolTip())))
        if isinstance(w, QtWidgets.QLabel):
            out.append((w.text(), guessed(w.text(), w.textFormat())))
        if isinstance(w, QtWidgets.QAbstractItemView) and w.model() is not None:
            out += _model_strings(w.model(), QtCore.QModelIndex(), guessed)
    return out


def _model_strings(model, parent, guessed):
    out = []
    for r in range(model.rowCount(parent)):
        try:
            cols = model.columnCount(parent)
        except TypeError:  # a list model (its column count is not public)
            cols = 1
        for c in range(max(cols, 1)):
            ix = model.index(r, c, parent)
            text = model.data(ix, QtCore.Qt.ItemDataRole.DisplayRole)
            tip = model.data(ix, QtCore.Qt.ItemDataRole.ToolTipRole)
            if text:
                out.append((str(text), False))  # item views draw their text plain
            if tip:
                out.append((str(tip), guessed(str(tip))))
            if c == 0:
                out += _model_strings(model, ix, guessed)
    return out


def test_strings_from_a_file_are_never_rich_text(qtbot, sample_profile, tmp_path):
    """A profile whose names and lines are HTML, in a file whose name is HTML: loading panel,
    window title, findings, search results, details, hover and lane tooltips, a failed open's
    dialog — none renders it as rich text (Qt would read /dev/zero for the <img>)."""
    from legate_prof.viewer.item_text import summary_text, tooltip_html
    model = load_profile([sample_profile])
    evil = HOSTILE[0] + HOSTILE[1] + HOSTILE[2]  # names may hold "/"; file names may not
    model = model.evolve(names=[evil + n for n in model.names],
                         provenances=[p and f"{evil}{p}" for p in model.provenances])
    named = tmp_path / f"{HOSTILE[3]}{HOSTILE[1]}{HOSTILE[2]}_0.prof"
    shutil.copy(sample_profile, named)
    go = threading.Semaphore(0)

    def opener(paths, progress):
        progress(0, 1, f"reading {Path(paths[0]).name}")
        go.acquire(timeout=60)
        return model
    from legate_prof.analyze.insights import find_insights
    from legate_prof.viewer.app import MainWindow
    win = MainWindow(files=[str(named)], load=lambda p: opener([str(named)], p),
                     findings=lambda m: [dict(f, provenance=[evil + x for x in f["provenance"]])
                                         for f in find_insights(m)] or
                     [{"pattern": evil, "title": evil, "provenance": [evil], "remedy": evil,
                       "window_ns": [0, 1]}], opener=opener)
    qtbot.addWidget(win)
    win.show()
    win.start_loading()
    qtbot.waitUntil(lambda: "reading" in win.loading.step.text())
    checked = _shown_strings(win)  # while loading: the file's name in the panel and title
    go.release()
    _wait_loaded(qtbot, win)
    win.search.setText("<b>evil")
    win.run_search()
    qtbot.waitUntil(lambda: not win.busy())  # (worked out in a thread)
    src = win.source
    i = win.results.result_items()[0]
    win.go_to_item(i)
    qtbot.waitUntil(lambda: not win.busy())  # (worked out in a thread)
    win.timeline.expand(all_groups=True)
    checked += _shown_strings(win)
    checked += [(tooltip_html(src, ("item", int(j))), True) for j in win.results.result_items()[:50]]
    e = next(e for e in win.timeline.lane_layout.entries if e.kind == "summary")
    checked.append((summary_text(src, e, 1e6, 1e3), True))
    checked += [(win.timeline.lane_axis.entry_tooltip(x.y + 0.01), True)
                for x in win.timeline.lane_layout.entries]
    bad = tmp_path / f"{HOSTILE[3]}{HOSTILE[1]}_0.prof"
    bad.write_bytes(HOSTILE[0].encode() + b"\n")
    win._opener = lambda paths, progress: load_profile(paths)
    win.open_files([str(bad)])
    qtbot.waitUntil(lambda: getattr(win, "open_error", None) is not None, timeout=LOAD_MS)
    checked += _shown_strings(win)
    assert sum("/dev/zero" in s for s, _ in checked) > 20  # the hostile names were shown
    rich_hostile = [s for s, rich in checked if rich and any(h in s for h in HOSTILE)]
    assert not rich_hostile, rich_hostile[:3]
    for s, rich in checked:  # and what rich text there is shows the names literally
        if rich and "/dev/zero" in s:
            doc = QtGui.QTextDocument()
            doc.setHtml(s)
            assert HOSTILE[0] in doc.toPlainText()


def _rich_hostile(checked):
    """The strings shown as rich text that hold a hostile name unescaped, and those whose
    rendering does not show the name literally."""
    bad = [s for s, rich in checked if rich and any(h in s for h in HOSTILE)]
    for s, rich in checked:
        if rich and "/dev/zero" in s:
            doc = QtGui.QTextDocument()
            doc.setHtml(s)
            if HOSTILE[0] not in doc.toPlainText():
                bad.append(s)
    return bad


def test_every_place_a_profile_string_is_shown_is_plain_text(qtbot, tmp_path):
    """Issue 37: a real two-rank run whose every task name and source line is
    ``<img src="/dev/zero">…`` (Qt would read /dev/zero for it and abort), in files named so:
    the window is walked through every place such a string can appear — title, loading panel,
    findings and their tooltips, search results, details and their tooltips, the hover
    tooltips of items, utilization rows and lane labels, the sticky header, a walk along the
    critical path ([ and ], whose sentence is the status bar's tooltip too), a failed open's
    dialog — and none of it is rich text holding the name unescaped."""
    from legate_prof.viewer.app import MainWindow
    real = sorted((ROOT / "fixtures" / "real" / "mpi2").glob("legate_*"))
    evil = HOSTILE[0] + HOSTILE[1] + HOSTILE[2]
    model = load_profile([str(p) for p in real])
    model = model.evolve(names=[evil + n for n in model.names],
                         provenances=[p and f"{evil}{p}" for p in model.provenances])
    named = tmp_path / f"{HOSTILE[3]}{HOSTILE[1]}_0.prof"
    shutil.copy(real[0], named)
    finding = {"pattern": evil, "title": evil, "provenance": [evil + "prog.py:3"],
               "remedy": evil, "window_ns": list(model.time_range())}
    win = MainWindow(files=[str(named)], load=lambda progress: model,
                     findings=lambda m: [finding])
    qtbot.addWidget(win)
    win.resize(1500, 900)
    win.show()
    qtbot.waitExposed(win)
    checked = _shown_strings(win)
    win.start_loading()
    _wait_loaded(qtbot, win)
    tl, src = win.timeline, win.source
    tl.expand(all_groups=True)
    qtbot.waitUntil(tl.item.settled, timeout=LOAD_MS)
    win.findings.itemClicked.emit(win.findings.item(0))
    qtbot.waitUntil(lambda: not win.busy())
    win.search.setText("<img")
    win.run_search()
    qtbot.waitUntil(lambda: not win.busy())
    qtbot.waitUntil(lambda: src.critical_path_ready, timeout=LOAD_MS)
    i = next(j for j in win.results.result_items()
             if src.critical_predecessor(j) is not None
             and src.critical_predecessor(j).predecessor is not None)
    win.go_to_item(i)
    qtbot.waitUntil(lambda: not win.busy())
    checked += _shown_strings(win)
    shown = []  # the tooltips Qt showed, as it shows them

    def hover(point):
        QtWidgets.QToolTip.hideText()
        qtbot.mouseMove(tl.viewport(), point)
        qtbot.waitUntil(lambda: not tl._tips.busy)
        QtCore.QCoreApplication.processEvents()
        if QtWidgets.QToolTip.isVisible():
            shown.append((QtWidgets.QToolTip.text(), True))
    tl.grab()
    qtbot.waitUntil(tl.item.settled, timeout=LOAD_MS)
    tl.grab()
    hover(item_point(tl, i))
    t0, t1 = tl.time_range()
    for e in tl.lane_layout.entries[:40]:
        y = tl.mapFromScene(tl.vb.mapViewToScene(QtCore.QPointF(t0, e.y + e.height / 2))).y()
        hover(QtCore.QPoint(tl.viewport().width() // 2, y))  # an item, a band or a row
        hover(QtCore.QPoint(60, y))  # its label
    assert sum("/dev/zero" in s for s, _ in shown) >= 2  # (escaped: not the raw name)
    for key in (QtCore.Qt.Key.Key_BracketLeft, QtCore.Qt.Key.Key_BracketRight):
        qtbot.keyClick(tl, key)
        qtbot.waitUntil(lambda: not win.busy())
        checked += _shown_strings(win)
    assert "/dev/zero" in win.statusBar().toolTip()  # the walk's sentence names the items
    tl.scroll_to(tl.lane_layout.height)  # the sticky header names the rank and lane
    checked += _shown_strings(win)
    win._opener = lambda paths, progress: load_profile(paths)
    bad = tmp_path / f"{HOSTILE[3]}{HOSTILE[1]}_1.prof"
    bad.write_bytes(HOSTILE[0].encode() + b"\n")
    win.open_files([str(bad)])
    qtbot.waitUntil(lambda: getattr(win, "open_error", None) is not None, timeout=LOAD_MS)
    checked += _shown_strings(win) + shown
    assert sum("/dev/zero" in s for s, _ in checked) > 20  # the hostile names were shown
    bad_ones = _rich_hostile(checked)
    assert not bad_ones, bad_ones[:3]


# ---- smaller things a day finds (issue 36, point 9) ---------------------------------------------

def test_a_folder_given_with_a_trailing_slash_names_the_window(qtbot, sample_profile, tmp_path):
    run = tmp_path / "my_run"
    run.mkdir()
    shutil.copy(sample_profile, run / "legate_0.prof")
    win = _window(qtbot, [str(run) + os.sep], findings=False)
    assert win.windowTitle().endswith("— my_run")  # (was "legate_prof 0.1.0 — ")


def test_a_window_of_eight_rank_files_names_the_first_and_last_and_counts_them(qtbot,
                                                                               synthetic_8):
    """The window named the first four of eight files given, the other four unsaid; its
    loading page the first four and "…" (``present.file_list``: the report's words)."""
    win = _window(qtbot, [str(f) for f in synthetic_8], findings=False)
    assert win.windowTitle().endswith("— legate_0.prof … legate_7.prof (8 files)"), \
        win.windowTitle()


def test_operation_is_a_link_and_what_an_operation_made_names_its_initiator(qtbot,
                                                                           sample_profile):
    """The Operation row is a link (it highlights the operation's task and all it made); an
    instance, copy or fill says which task's operation made it (Initiator, a link)."""
    from legate_prof.model.kinds import ItemKind
    win = _window(qtbot, [sample_profile], findings=False)
    src = win.source
    inst = next(int(j) for j in range(src.info().n_items)
                if src.item_facts(j)["kind"] == "instance")
    win.go_to_item(inst)
    qtbot.waitUntil(lambda: not win.busy())
    table = win.details.table
    rows = {table.item(r, 0).text(): r for r in range(table.rowCount())}
    task = int(src.items_of_op(src.item_facts(inst)["op_id"], [ItemKind.TASK])[0])
    assert table.item(rows["Initiator"], 1).text().startswith(src.item_title(task))
    assert win.details.link_at(rows["Initiator"]) == ("item", task)
    op = win.details.link_at(rows["Operation"])
    assert op[0] == "op" and table.item(rows["Operation"], 1).font().underline()
    table.cellClicked.emit(rows["Operation"], 1)
    qtbot.waitUntil(lambda: not win.busy())
    assert win.timeline.item.matches.tolist() == src.items_of_op(op[1]).tolist()
    assert inst in win.timeline.item.matches.tolist() and task in win.timeline.item.matches


def test_what_an_item_waited_for_is_in_sight_in_its_details(qtbot):
    """At 1500×900 "Waited for" was below the fold of the details, after the item's times and
    its waits (one row each); it comes right after where the item is.  (mpi2: the sample's
    items that wait on an event wait only in the calls they make, which are not listed.)"""
    run = sorted((ROOT / "fixtures" / "real" / "mpi2").glob("legate_*"))
    win = _window(qtbot, run, findings=False, size=(1500, 900))
    src = win.source
    qtbot.waitUntil(lambda: src.critical_path_ready, timeout=LOAD_MS)
    qtbot.waitUntil(lambda: win.details.critical_note is None, timeout=LOAD_MS)
    i = max((j for j in range(src.info().n_items) if src.critical_predecessor(j) is not None
             and src.critical_predecessor(j).via == "event"
             and src.critical_predecessor(j).predecessor is not None),
            key=lambda j: len(src.item_facts(j).get("waits", ())))
    assert len(src.item_facts(i)["waits"]) >= 1  # (its waits, the calls it made left out)
    win.go_to_item(i)
    qtbot.waitUntil(lambda: not win.busy())
    table = win.details.table
    row = next(r for r in range(table.rowCount()) if table.item(r, 0).text() == "Waited for")
    rect = table.visualItemRect(table.item(row, 1))
    assert rect.bottom() <= table.viewport().height(), (rect, table.viewport().height())
    labels = [table.item(r, 0).text() for r in range(table.rowCount())]
    assert labels.index("Waited for") < labels.index("Start") < labels.index("Wait 1")


def test_the_cursor_says_its_time_inside_the_view(qtbot, sample_profile):
    """The cursor's time label hung above the view's top, out of sight: it is drawn inside."""
    win = _window(qtbot, [sample_profile], findings=False)
    tl = win.timeline
    tl.grab()
    at = tl.vb.sceneBoundingRect().center()
    tl.scene().sigMouseMoved.emit(at)
    assert tl.cursor_label.isVisible() and tl.cursor_label.toPlainText().strip()
    label = tl.cursor_label.sceneBoundingRect()
    assert tl.vb.sceneBoundingRect().contains(label), (label, tl.vb.sceneBoundingRect())


def _drawn_lane_labels(axis, rects=False):
    """The lane labels pyqtgraph draws (those that fit the axis), or (rect, text) of each."""
    image = QtGui.QImage(8, 8, QtGui.QImage.Format.Format_ARGB32)
    painter = QtGui.QPainter(image)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [(rect, text) if rects else text for rect, _flags, text in specs[2]] if specs else []


def test_compact_never_draws_a_lane_label_over_a_rank_header(qtbot):
    """In Compact, a rank's last lane label ("ops0") was drawn over the next rank's header
    ("Rank 1"): a lane label too close to a header or group label below it is left out (its
    tooltip still names it)."""
    win = _window(qtbot, [ROOT / "fixtures" / "real" / "mpi4"], findings=False)
    win.lanes.compact.setChecked(True)
    tl = win.timeline
    drawn = _drawn_lane_labels(tl.lane_axis, rects=True)
    assert any(t.strip().startswith("▾ Rank 1") for _, t in drawn)
    drawn.sort(key=lambda d: d[0].top())
    for (a, ta), (b, tb) in zip(drawn, drawn[1:]):
        assert a.intersected(b).height() < 1.0, (ta, tb)


def test_a_label_wider_than_the_lane_axis_is_cut_not_left_out(qtbot, sample_profile):
    """A lane label too wide for the axis is drawn cut short with an ellipsis (its tooltip
    says it whole), where pyqtgraph left it out."""
    win = _window(qtbot, [sample_profile], findings=False)
    axis = win.timeline.lane_axis
    ly = win.timeline.lane_layout
    header = next(e for e in ly.entries if e.kind == "header")
    header.label = "Rank 0 of a run whose header says far more than the axis can hold"
    axis.set_layout(ly)
    drawn = _drawn_lane_labels(axis)
    cut = [t for t in drawn if t.startswith("▾ Rank 0 of a run")]
    assert len(cut) == 1 and cut[0].endswith("…"), drawn
    # fitted again for a wider axis (the labels fitted once are kept for a width and font)
    axis.setWidth(axis.width() + 400)
    qtbot.waitUntil(lambda: axis.width() > 500)
    axis.set_layout(ly)
    assert f"▾ {header.label}" in _drawn_lane_labels(axis)


def test_a_rank_filter_is_said_above_the_all_ranks_summary(qtbot, ranks4):
    """With ranks 1,3 shown, the all-ranks block said "All ranks (4)" as if all were below."""
    win = _window(qtbot, ranks4, findings=False)
    win.lanes.ranks.setText("1,3")
    win.lanes.ranks.returnPressed.emit()
    head = win.timeline.lane_layout.entries[0]
    assert head.kind == "header" and head.label == "All 4 ranks (2 below)"
    # drawn: pyqtgraph leaves out a label wider than the axis ("... (2 shown below)" was)
    assert "▾ All 4 ranks (2 below)" in _drawn_lane_labels(win.timeline.lane_axis)
    win.lanes.ranks.setText("")
    win.lanes.ranks.returnPressed.emit()
    assert win.timeline.lane_layout.entries[0].label == "All ranks (4)"


def test_compact_rows_never_draw_one_scale_label_over_another(qtbot, ranks4):
    """Compact mode's utilization rows are 21 px tall: "100%" and "50%" were drawn over each
    other; a mark too close to the one above is left out."""
    win = _window(qtbot, ranks4, findings=False)
    win.lanes.compact.setChecked(True)
    tl = win.timeline
    qtbot.waitUntil(tl.item.settled, timeout=LOAD_MS)
    tl.item.refresh()
    tl.grab()
    labels = tl.item.last_stats.get("scale_labels", [])
    assert labels
    for k, (a, ta) in enumerate(labels):
        for b, tb in labels[k + 1:]:
            assert a.intersected(b).height() < 0.01, (ta, tb)  # (rows touch, never overlap)


def test_a_text_file_opened_alone_says_how_it_is_read(qtbot, sample_profile, tmp_path):
    """The window's error for legate's console output opened alone told the user to pass
    --log, which a window has not: it says to open it with the run's files."""
    win = _window(qtbot, [sample_profile], findings=False)
    text = tmp_path / "run.log"
    text.write_text("[0 - 7f] legate: out of memory\n" * 3)
    win._opener = lambda paths, progress: load_profile(paths)
    win.open_files([str(text)])
    qtbot.waitUntil(lambda: getattr(win, "open_error", None) is not None, timeout=LOAD_MS)
    assert "open them together" in win.open_error and "run.log" in win.open_error


def test_file_open_can_open_a_runs_folder(qtbot, sample_profile, tmp_path):
    win = _window(qtbot, [sample_profile], findings=False)
    menu = win.menuBar().actions()[0].menu()
    assert "Open folder…" in [a.text() for a in menu.actions()]
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(EXAMPLE, run / "legate_0.prof")
    win._opener = lambda paths, progress: load_profile(paths, ranked=True)
    _reopen(qtbot, win, [run], findings=False)
    assert win.source.info().n_items > 0 and win.windowTitle().endswith("— run")


def test_the_view_never_pans_into_negative_time(qtbot, sample_profile):
    win = _window(qtbot, [sample_profile], findings=False)
    tl = win.timeline
    for _ in range(30):
        tl.pan(-0.5)
    assert tl.time_range()[0] >= 0


def test_one_finding_is_one_finding(qtbot, sample_profile):
    win = _window(qtbot, [sample_profile], findings=False)
    win._found([{"pattern": "x", "title": "t", "provenance": [], "remedy": "r",
                 "window_ns": [0, 1]}])
    assert win.statusBar().currentMessage() == "1 finding"


def test_view_opens_at_start_and_stop(qtbot, sample_profile):
    """`view --start/--stop` opens the view there (as `screenshot` draws it); 0 resets to
    the run; a stop before the start is one line, exit 2."""
    from legate_prof.viewer.app import MainWindow
    model = load_profile([sample_profile], ranked=True)
    win = MainWindow(model, [sample_profile], view_range=(1_000_000, 3_000_000))
    qtbot.addWidget(win)
    assert win.timeline.time_range() == pytest.approx((1_000_000, 3_000_000))
    win.timeline.reset()
    assert win.timeline.time_range() == pytest.approx(model.time_range())
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "legate_prof", "view", "--start", "3ms",
                        "--stop", "1ms", str(sample_profile)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--start" in r.stderr


# ---- memory without a capacity ----------------------------------------------------------------

def test_memory_without_a_capacity_is_drawn_in_bytes_with_its_peak(legate_run, tmp_path):
    """The array runtime's memory lanes have no capacity: the row is a bytes scale up to the
    peak (window, screenshot, report), never a percentage of a guess."""
    from legate_prof.query import as_source
    from legate_prof.report.query import ReportQueries
    from legate_prof.viewer.item_text import summary_value
    from legate_prof.viewer.screenshot import make_timeline
    run = legate_run("runtime_vs_numpy.py")
    assert run.returncode == 0, run.output[-2000:]
    files = sorted(str(p) for p in run.workdir.glob("legate_*.prof"))
    src = as_source(load_profile(files, ranked=True))
    rows = [g for g in src.info().groups if src.summary_bytes(g.group, g.rank) is not None]
    assert rows and all(g.kind == "memory" for g in rows)
    g = rows[0]
    den, peak = src.summary_bytes(g.group, g.rank)
    assert peak > 0
    t0, t1 = src.info().time_range
    text = summary_value(src, g.group, g.rank, t0, t1)
    assert "in use (peak" in text and "%" not in text
    assert summary_value(src, "cpu", 0, t0, t1).endswith("% utilization")
    u = src.summary_tile(g.group, g.rank, t0, t1, 4000)
    assert 0.5 * peak < max(u) * den <= peak * 1.0001  # the row's top is the peak, not 100 %
    w = make_timeline(src, 1000, 600, expand=[g.group])
    assert w.item.bytes_scale(g.rank, g.group) == (den, peak)
    assert w.item.bytes_scale(0, "cpu") is None
    w.close()
    q = ReportQueries(src)
    key = f"{g.rank}:{g.group}"
    assert q.info()["bytes_rows"][key] == int(round(peak))
    top = max(q.summary_tile(g.group, g.rank, t0, t1, 4000)) / 255  # shares of the peak
    assert top == pytest.approx(max(u) * den / peak, abs=1 / 255)


def test_a_file_of_another_run_is_said_left_out_not_unreadable():
    """Two runs opened at once: the window's banner said "could not read
    example_legate_0.prof" of a file it read and left out as another run's (a user's
    review); a file that could not be read is still said so."""
    from types import SimpleNamespace
    from legate_prof.viewer.notices import problem_lines
    info = SimpleNamespace(errors=[
        "/r/legate_0.prof: rank 0 again (also in /s/legate_0.prof, which is shown): a file of "
        "another run? Left out; open one run at a time", "/r/legate_1.prof: is empty"],
        warnings=[])
    assert problem_lines(info) == [
        "⚠ legate_0.prof: rank 0 again (also in /s/legate_0.prof, which is shown): a file of "
        "another run? Left out; open one run at a time",
        "⚠ could not read legate_1.prof: is empty"]


def test_the_findings_get_the_larger_share_of_the_side_when_they_come(qtbot):
    """The Findings dock came last under Details and Search results, ~110 px of a 900 px
    window: three findings cut mid-line (a GUI walk).  What a profile opens with gets half
    the side's height; the details (empty until a click) and the results (until a search)
    share the rest, the details the larger part."""
    win = _window(qtbot, [EXAMPLE], size=(1400, 900))
    QtCore.QCoreApplication.processEvents()
    h = {d.objectName(): d.height() for d in win.findChildren(QtWidgets.QDockWidget)}
    assert h["findings"] >= 0.4 * win.height() and h["findings"] > h["details"], h
    assert h["details"] > h["search_results"] > 0, h


def test_expand_ranks_on_open_ranks_says_what_else_opens(qtbot, ranks4):
    """"Expand ranks" on ranks already open changed nothing and said nothing (a GUI walk:
    the groups stayed closed): the status bar says every rank is open, and where the groups
    open; a change says nothing more."""
    win = _window(qtbot, ranks4, findings=False)
    win.statusBar().clearMessage()
    win.lanes.collapse_ranks(False)
    assert win.statusBar().currentMessage() == (
        "every rank is open already; View → Expand all groups opens their groups")
    win.statusBar().clearMessage()
    win.lanes.collapse_ranks(True)
    assert win.timeline.lane_layout.collapsed_ranks and win.statusBar().currentMessage() == ""
    win.lanes.collapse_ranks(True)
    assert win.statusBar().currentMessage() == "every rank is collapsed already"


def test_a_groups_row_says_what_the_group_shows(qtbot):
    """The summary rows' tooltips said their name again ("All ranks · dp: dp", "ops: ops", a
    review): each says what its group shows, in the viewer and in the report alike."""
    from legate_prof.present.group_words import GROUP_WORDS
    from legate_prof.query import as_source
    from legate_prof.report.query import ReportQueries
    from legate_prof.viewer.timeline.layout import LaneLayout
    run = sorted((ROOT / "fixtures" / "real" / "mpi2").glob("legate_*"))
    model = load_profile([str(p) for p in run])
    layout = LaneLayout.default(model)
    tips = {e.group: e.tooltip for e in layout.entries if e.kind == "summary"}
    assert {"ops", "utility", "channel"} <= set(tips), tips
    for group, tip in tips.items():
        assert tip.endswith(": " + GROUP_WORDS[group]), tip
    report = ReportQueries(model).info()
    groups = [g for r in report["tree"] for g in r["groups"]]
    assert groups
    for g in groups:
        assert g["tooltip"].endswith(GROUP_WORDS[g["group"]]), g


def test_another_items_details_start_at_its_title(qtbot, sample_profile):
    """The details kept the last item's scroll and its selected row: the next item's Title
    and Name were off the top and a stray row stayed blue (a review).  Another item's
    details start at the top, nothing selected; the same item shown again keeps its place."""
    win = _window(qtbot, [sample_profile], findings=False, size=(1500, 600))
    src = win.source
    table = win.details.table
    busiest = max(range(src.info().n_items), key=lambda j: len(src.item_facts(j).get("waits", ())))
    win.go_to_item(busiest)
    qtbot.waitUntil(lambda: not win.busy())
    bar = table.verticalScrollBar()
    assert bar.maximum() > 0  # (more rows than the panel shows)
    bar.setValue(bar.maximum())
    table.selectRow(table.rowCount() - 1)
    win.details.refresh()
    assert bar.value() == bar.maximum()  # (the same item: its place kept)
    win.go_to_item(0 if busiest else 1)
    qtbot.waitUntil(lambda: not win.busy())
    assert bar.value() == 0 and not table.selectedItems()


def test_a_lines_search_lists_its_tasks_first_then_their_bodies():
    """A GUI walk: the guide's line 11 listed two "Profiler Response" items above its task.
    Results are listed tasks first, then application calls (the tasks' bodies, found by the
    task they ran in), then the rest, each kind in the order found."""
    from legate_prof.query import ItemKind, as_source
    from legate_prof.viewer.panels.search import result_lines
    src = as_source(load_profile([str(ROOT / "fixtures" / "real" / "inefficient_1rank")]))
    hits = src.search("inefficient.py:11")
    kinds = src.items_columns(hits, ["kind"])["kind"].tolist()
    listed = [i for _, i in result_lines(src, hits)]
    rank = {int(ItemKind.TASK): 0, int(ItemKind.GPU_KERNEL): 0, int(ItemKind.APP_CALL): 1}
    by_kind = dict(zip(hits.tolist(), kinds))
    assert sorted(listed) == sorted(hits.tolist())
    assert [rank.get(by_kind[i], 2) for i in listed] == sorted(rank.get(k, 2) for k in kinds)
    assert by_kind[listed[0]] == int(ItemKind.TASK)
    assert int(ItemKind.APP_CALL) in kinds and int(ItemKind.PROF_TASK) in kinds


def test_an_item_brought_into_sight_is_below_the_ranks_sticky_header(qtbot, ranks4):
    """A GUI walk: following a link scrolled the item's lane to the top of the view, under
    the rank's sticky header, which hid the lane's label and its 100 % mark.  The lane now
    starts below the header."""
    win = _window(qtbot, ranks4, findings=False)
    tl = win.timeline
    src = win.source
    lanes = src.outline().lanes
    # an item on a lane of rank 1, below its rank's header, above the others' lanes
    lane = max(k for k, L in enumerate(lanes) if L.rank == 1 and L.group in ("utility", "cpu"))
    lo, hi = src.lane_item_range(lane)
    i = (lo + hi) // 2
    tl.reveal_item(i)
    e = next(x for x in tl.lane_layout.entries if x.kind == "lane" and x.lane == lane)
    (y0, y1) = tl.vb.viewRange()[1]
    tl.scroll_to(e.y - 0.01 * (y1 - y0))  # (its top just in sight: under the header)
    tl.reveal_item(i)
    qtbot.waitUntil(lambda: tl.sticky.isVisibleTo(tl))
    tl.sticky.follow()
    scene_top = tl.vb.mapViewToScene(QtCore.QPointF(0, e.y))
    lane_top_px = tl.mapFromScene(scene_top).y()
    assert tl.sticky.geometry().bottom() < lane_top_px, (tl.sticky.geometry(), lane_top_px)


def test_lanes_of_one_group_are_ruled_apart(qtbot):
    """A GUI walk: u0's rows and u1's ran together with nothing between them, so which lane
    a row is in was a guess.  A rule of its own colour runs along the top of each lane that
    follows another lane of its group (none above a group's first lane)."""
    from legate_prof.viewer.timeline.item import LANE_RULE
    run = ROOT / "fixtures" / "real" / "inefficient_1rank"
    win = _window(qtbot, [run], findings=False)
    qtbot.waitUntil(lambda: win.timeline is not None and win.timeline.item is not None)
    tl = win.timeline
    tl.expand(["utility", "cpu"])
    qtbot.waitUntil(tl.item.settled, timeout=60_000)
    img = tl.grab().toImage()
    lanes = [e for e in tl.lane_layout.entries if e.kind == "lane" and e.group == "utility"]
    assert len(lanes) == 2
    x0 = tl.mapFromScene(tl.vb.mapViewToScene(QtCore.QPointF(tl.time_range()[0], 0))).x()

    def row_colours(e):
        y = tl.mapFromScene(tl.vb.mapViewToScene(QtCore.QPointF(0, e.y))).y()
        return {QtGui.QColor(img.pixel(x, round(y))).rgb()
                for x in range(round(x0) + 2, img.width() - 2, 3)}
    # (the second lane's top: mostly the rule, boxes crossing it aside)
    second = row_colours(lanes[1])
    assert LANE_RULE.rgb() in second
    assert LANE_RULE.rgb() not in row_colours(lanes[0])


def test_the_ranks_built_so_far_are_shown_while_the_rest_builds_then_the_whole(
        qtbot, synthetic_8, monkeypatch):
    """10 ranks of 1 M items from their logs took ~4 s to the first frame on 2 cores, the
    progress bar alone meanwhile (issue 34).  The ranks built so far are shown once the
    first round is in (``rank_workers.partial_due``), a line above saying which: no
    critical path or findings for them, no export; then the whole replaces them, at the
    range the user zoomed to meanwhile and with the lanes as they left them, its critical
    path and findings computed once, for the whole."""
    from legate_prof.load import rank_workers
    from legate_prof.viewer.app import default_open
    monkeypatch.setenv("LEGATE_PROF_WORKERS", "2")
    monkeypatch.setattr(rank_workers, "PARTIAL_MIN_S", 0.0)  # (small ranks build fast)
    files = [str(f) for f in synthetic_8]
    found = []
    win = loading_window(qtbot, files, lambda progress: default_open(files, progress),
                         findings=lambda src: found.append(src) or [], opener=default_open)
    shown, show = [], win._show_source

    def showing(src, files, layout=None, partial=False):
        show(src, files, layout, partial)
        banner = win._timeline_frame().banner.label.text()
        if partial:  # (the user zooms in and expands a group while the rest builds)
            win.timeline.set_time_range(*(t / 2 for t in src.outline().time_range))
            g = next(g for g in src.outline().groups
                     if (g.rank, g.group) not in win.timeline.lane_layout.expanded)
            win.timeline.toggle_group(g.rank, g.group)
        shown.append((src, partial, banner, win.timeline.time_range(),
                      set(win.timeline.lane_layout.expanded), win.export_png("/nonexistent")))
    win._show_source = showing
    win.start_loading()
    qtbot.waitUntil(lambda: len(shown) == 2 and bool(found), timeout=LOAD_MS)
    (part, p1, said, zoomed, expanded, exported), (whole, p2, banner, kept, kept_lanes, _) = shown
    assert p1 and not p2 and not win.showing_ranks_so_far
    from legate_prof.present.ranks import format_ranks
    ranks = list(part.outline().ranks)  # (the biggest jobs first: any two or more ranks)
    assert 2 <= len(ranks) < 8 and list(whole.outline().ranks) == list(range(8))
    assert said.startswith(f"Showing ranks {format_ranks(ranks)} of 8 while the others are "
                           "built"), said
    assert "Showing" not in banner and exported is None
    assert kept == pytest.approx(zoomed) and expanded <= kept_lanes
    assert found == [win.source] and win.source is whole  # (the whole's, once)


def test_the_whole_keeps_the_lane_at_the_top_the_selection_and_the_views_of_the_ranks_so_far(
        qtbot, synthetic_8, monkeypatch):
    """A GUI review: the whole came in with the ranks built since inserted above, the lanes
    the user looked at out of sight, their selected item and details gone, Ctrl+Z unable to
    go back; P turned on a path "being computed" that nothing computed; File → Open then,
    failing, left the ranks so far for good.  Now the lane at the top stays at the top,
    the selection and the views' history carry over; P and [ say why not; an open is
    refused until the whole is in."""
    from legate_prof.load import rank_workers
    from legate_prof.viewer.app import SO_FAR_NO_PATH, default_open
    monkeypatch.setenv("LEGATE_PROF_WORKERS", "2")
    monkeypatch.setattr(rank_workers, "PARTIAL_MIN_S", 0.0)
    files = [str(f) for f in synthetic_8]
    win = loading_window(qtbot, files, lambda progress: default_open(files, progress),
                         size=(1400, 500),  # (the lanes of 2 ranks taller than the view)
                         opener=default_open)
    seen, show = {}, win._show_source

    def showing(src, files, layout=None, partial=False):
        show(src, files, layout, partial)
        if not partial:
            return
        tl = win.timeline
        rank = max(src.outline().ranks)  # (the last rank so far: ranks come in above it)
        g = next(g for g in src.outline().groups if g.rank == rank and g.group == "cpu")
        tl.toggle_group(g.rank, g.group)
        lane = next(e for e in tl.lane_layout.entries if e.kind == "lane" and e.rank == rank
                    and e.group == "cpu")
        tl.scroll_to(lane.y)
        top = tl.lane_layout.entry_at(tl.vb.viewRange()[1][0] + 1e-6)
        t0, t1 = src.outline().time_range
        tl.set_time_range(t0, (t0 + t1) / 2)
        item = int(np.flatnonzero(np.asarray(src.item_parts()[-1].model.items["kind"]) >= 0)[0]
                   + src.item_parts()[-1].item_off)
        tl.select(item)
        win.path_action.setChecked(True)  # (P)
        seen.update(lane=(top.kind, top.rank, top.group, top.label), item=item,
                    extent=src.item_extent(item), history=list(tl.history),
                    path_on=tl.item.path_shown, said=win.statusBar().currentMessage(),
                    opened=win.open_files([files[0]]))
        tl.walk(forward=False)
        seen["walked"] = win.statusBar().currentMessage()
    win._show_source = showing
    win.start_loading()
    qtbot.waitUntil(lambda: "lane" in seen and not win.showing_ranks_so_far, timeout=LOAD_MS)
    tl = win.timeline
    assert not seen["path_on"] and seen["said"] == SO_FAR_NO_PATH == seen["walked"]
    assert seen["opened"] is False
    top = tl.lane_layout.entry_at(tl.vb.viewRange()[1][0] + 1e-6)
    assert seen["lane"][1] is not None  # (a rank's lane at the top, not the all-ranks block)
    assert (top.kind, top.rank, top.group, top.label) == seen["lane"]
    assert tl.item.selected is not None and win.source.item_extent(tl.item.selected) == \
        seen["extent"] and tl.item.selected != seen["item"]  # (another number, the same item)
    assert tl.history == seen["history"] and len(tl.history) > 1


def test_the_ranks_so_far_stay_when_the_rest_fails_and_say_so(qtbot, synthetic_8):
    """The rest of a run failing once its ranks so far were shown (a worker killed for
    memory, then the build in one process failing too) closed the window the user was
    working in (a GUI review).  The ranks so far stay, the banner says the others could not
    be built and why, no export of them; the command's status is the error's once the window
    closes (``load_error``); another profile can still be opened."""
    from legate_prof.errors import ProfileError
    from legate_prof.viewer.app import default_open
    files = [str(f) for f in synthetic_8]

    def load(progress):
        progress.partial(load_profile(files[:2], ranked=True, workers=1), 8)
        raise ProfileError(files[5], "cannot allocate memory")
    win = loading_window(qtbot, files, load, opener=default_open)
    win.start_loading()
    qtbot.waitUntil(lambda: win.load_error is not None, timeout=LOAD_MS)
    qtbot.wait(50)
    assert win.isVisible() and win.showing_ranks_so_far
    assert list(win.source.outline().ranks) == [0, 1]
    banner = win._timeline_frame().banner.label.text()
    assert banner.startswith("Showing ranks 0,1 of 8: the others could not be built (") and \
        "cannot allocate memory" in banner and "this is not the whole run" in banner, banner
    assert win.export_png("/nonexistent.png") is None
    assert "could not be built" in win.statusBar().currentMessage()
    assert win.open_files([files[0]]) is True  # (another profile: no partial run holds it)
    qtbot.waitUntil(lambda: win.source is not None and not win.showing_ranks_so_far
                    and list(win.source.outline().ranks) == [0], timeout=LOAD_MS)
    assert win.load_error is None  # (the command's status no longer the rest's error)


def test_the_ranks_built_since_open_as_the_wholes_default_and_a_reset_view_is_the_wholes(
        qtbot, tmp_path, monkeypatch):
    """An adversarial review: a group closed in the ranks so far left every rank built since
    all closed (the layout of the ranks so far given to the whole), and 0 pressed there cut
    the whole at their end.  The user's changes go on top of the whole's default; a view
    reset to the ranks so far's whole is the whole run's."""
    import shutil
    from legate_prof.load import rank_workers
    from legate_prof.viewer.app import default_open
    from legate_prof.viewer.timeline.layout import LaneLayout
    monkeypatch.setenv("LEGATE_PROF_WORKERS", "2")
    monkeypatch.setattr(rank_workers, "PARTIAL_MIN_S", 0.0)
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "mpi4"
    for f in real.glob("legate_*.prof.gz"):  # (the logs alone: workers build them)
        shutil.copy(f, tmp_path / f.name)
    files = [str(f) for f in sorted(tmp_path.iterdir())]
    win = loading_window(qtbot, files, lambda progress: default_open(files, progress),
                         opener=default_open)
    seen, show = {}, win._show_source

    def showing(src, files, layout=None, partial=False):
        show(src, files, layout, partial)
        if partial:
            tl = win.timeline
            seen["ranks"] = set(src.outline().ranks)
            g = next(g for g in src.outline().groups if (g.rank, g.group) in
                     tl.lane_layout.expanded)
            tl.toggle_group(g.rank, g.group)  # (closed by the user)
            seen["closed"] = (g.rank, g.group)
            t0, t1 = src.outline().time_range
            tl.set_time_range(t0, (t0 + t1) / 2)
            tl.reset()  # (0: the whole view again)
    win._show_source = showing
    win.start_loading()
    qtbot.waitUntil(lambda: "closed" in seen and not win.showing_ranks_so_far,
                    timeout=LOAD_MS)
    tl = win.timeline
    default = LaneLayout.default(win.source).expanded
    assert seen["closed"] not in tl.lane_layout.expanded
    since = {(r, g) for r, g in default if r not in seen["ranks"]}
    assert since and since <= tl.lane_layout.expanded  # (the ranks built since: as default)
    assert tl.time_range() == pytest.approx(win.source.outline().time_range)
