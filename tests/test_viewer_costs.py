"""Costs where the findings are (issue 38, deliver 4) in the window, on a real 3-rank run:
the findings dock shows each finding's wall-clock cost and share of the run, the dearest
first, under the sentence of how much of the run the path explains (the report's words:
``analyze.costed_findings``); the status bar says how much of the run the drawn path
explains and how much rests on inferred links; the path's track appears at the top of the
lanes while it is drawn and goes with it."""

from html import escape
from pathlib import Path

import numpy as np

import pytest
from tests_viewer_helpers import shown_window

pytest.importorskip("pytestqt")

from PySide6 import QtCore, QtGui  # noqa: E402

from legate_prof.analyze.costed_findings import costed_findings  # noqa: E402
from legate_prof.analyze.path_track import path_track  # noqa: E402
from legate_prof.load.loader import load_profile  # noqa: E402
from legate_prof.present.units import format_ns  # noqa: E402
from legate_prof.query import as_source  # noqa: E402
from legate_prof.viewer.time_text import format_range  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "fixtures" / "real"
WAIT_MS = 120_000


def _files(run):
    return sorted(str(p) for p in (REAL / run).glob("legate_*.prof*"))


_window = shown_window  # (tests_viewer_helpers)


def test_the_findings_dock_shows_and_sorts_by_each_findings_cost(qtbot):
    from legate_prof.viewer.panels.findings import add_findings_dock
    src = as_source(load_profile(_files("mpi3"), ranked=True))
    costs = costed_findings(src)
    found, run = costs["findings"], costs["run_ns"]
    assert len(found) >= 2 and any(f["wall_ns"] for f in found)
    win = _window(qtbot, src)
    panel = add_findings_dock(win, dict(costs, findings=list(reversed(found))))
    head = panel.item(0)
    assert head.text() == costs["explained_words"] and not head.flags()  # (not a finding)
    # its text dark enough to read, not the disabled palette's light gray (a review)
    shot = panel.viewport().grab(panel.visualItemRect(head)).toImage()
    darkest = min(QtGui.QColor(shot.pixel(x, y)).lightness()
                  for x in range(0, shot.width(), 2) for y in range(shot.height()))
    assert darkest < 110, darkest
    # the findings apart: two rows one after the other on grounds of their own
    grounds = []
    for k in (1, 2):
        r = panel.visualItemRect(panel.item(k))
        img = panel.viewport().grab(r).toImage()
        grounds.append(QtGui.QColor(img.pixel(img.width() - 2, img.height() // 2)).rgb())
    assert grounds[0] != grounds[1], grounds
    walls = [f["wall_ns"] for f in panel.findings]
    assert walls == sorted(walls, reverse=True)  # (the dearest first, however given)
    for k, f in enumerate(panel.findings):
        text = panel.item(panel.row_of(k)).text()
        # (where an earlier finding counts most of its pieces, its label says what its work
        # holds of the path: "0.1 %" read beside "the path waits on messages for 75 s")
        held = (f"its work holds {format_ns(f['path_ns'])} of the path, "
                if f.get("path_ns", 0) > f["wall_ns"] else None)
        if f["wall_ns"]:
            assert text.startswith(f"{format_ns(f['wall_ns'])} · "
                                   f"{100.0 * f['wall_ns'] / run:.1f} % of the run"), text
        else:
            assert text.startswith("no time"), text
        assert (held in text.split(" — ")[0]) if held else ("holds" not in text.split(" — ")[0])
        assert escape(f["cost_words"]) in panel.item(panel.row_of(k)).toolTip()  # (whole)
    panel.itemClicked.emit(panel.item(1))  # (the first finding, not the sentence above it)
    qtbot.waitUntil(lambda: not win.busy())
    a, b = win.timeline.time_range()
    t0, t1 = panel.findings[0]["window_ns"]
    assert a <= t0 and t1 <= b


def test_the_findings_of_no_time_of_their_own_come_under_insights_heading(qtbot):
    """`insights` and the report head the findings that add none of the run's wall-clock
    time ("No time of their own: ..."; read_loop_2ranks: before its 4th, blocking); the dock
    ran them on as peers of the dearest, the words only in each one's tooltip.  Its rows now:
    the sentence of what the path explains, three findings, the heading (the same words, not
    a finding: not selectable, a click on it shows nothing), the fourth finding."""
    from legate_prof.viewer.panels.findings import add_findings_dock
    src = as_source(load_profile(_files("read_loop_2ranks"), ranked=True))
    costs = costed_findings(src)
    words = costs["below"]["words"]
    assert words.startswith("No time of their own: ") and costs["below"]["at"] == 3
    win = _window(qtbot, src)
    panel = add_findings_dock(win, dict(costs, findings=list(reversed(costs["findings"]))))
    texts = [panel.item(r).text() for r in range(panel.count())]
    assert texts.count(words) == 1 and texts.index(words) == 4, texts
    heading = panel.item(4)
    assert not heading.flags() and heading.font().bold()
    assert panel.finding_row(heading) is None
    assert [panel.row_of(k) for k in range(4)] == [1, 2, 3, 5]
    assert panel.findings[3]["pattern"] == "blocking" and panel.findings[3]["wall_ns"] == 0
    assert panel.findings[3] is costs["findings"][3]
    # drawn: the heading's row is on screen, wrapped whole (not one cut line), in dark text
    panel.parentWidget().show()
    panel.resize(420, 1600)
    qtbot.waitUntil(lambda: panel.visualItemRect(heading).height() > 0)
    rect = panel.visualItemRect(heading)
    line = panel.fontMetrics().height()
    assert rect.height() >= 3 * line, (rect, line)
    shot = panel.viewport().grab(rect).toImage()
    assert min(QtGui.QColor(shot.pixel(x, y)).lightness()
               for x in range(0, shot.width(), 2) for y in range(shot.height())) < 110
    # a click on the heading shows nothing; one on the finding below it shows that finding
    before = win.timeline.time_range()
    panel.itemClicked.emit(heading)
    assert win.timeline.time_range() == before
    panel.itemClicked.emit(panel.item(5))
    qtbot.waitUntil(lambda: not win.busy())
    a, b = win.timeline.time_range()
    t0, t1 = panel.findings[3]["window_ns"]
    assert a <= t0 and t1 <= b and (a, b) != before
    # a list of findings (no costs: `insights`' own list) has no heading
    panel.set_findings(costs["findings"])
    assert words not in [panel.item(r).text() for r in range(panel.count())]


def test_the_status_bar_says_how_much_the_path_explains_and_its_track_comes_and_goes(qtbot):
    src = as_source(load_profile(_files("mpi3"), ranked=True))
    win = _window(qtbot, src, path_track=path_track)
    qtbot.waitUntil(lambda: win.critical_path is not None or win.critical_error is not None,
                    timeout=WAIT_MS)
    layout = win.timeline.lane_layout
    plain = layout.height
    assert win.critical_path.track is not None and not layout.path_entries()
    qtbot.keyClick(win.timeline, QtCore.Qt.Key.Key_P)
    said = win.statusBar().toolTip()  # (the whole line; the status bar's, in short)
    assert "explains 100.0 % of the run, 52.4 % on 2 inferred links" in \
        win.statusBar().currentMessage()
    assert "explains 2.880 s of the run's 2.880 s (100.0 %)" in said, said
    assert "1.508 s of it (52.4 %), everything before 2.473 s, rests on 2 inferred links" \
        in said, said
    keys = [k for k, _ in layout.path_entries()]
    assert keys[:2] == ["legend", "all"] and len(keys) == 2 + len(win.critical_path.track.rows)
    assert layout.height > plain
    qtbot.keyClick(win.timeline, QtCore.Qt.Key.Key_P)
    assert not layout.path_entries() and layout.height == plain


def _point(tl, t, y):
    scene = tl.vb.mapViewToScene(QtCore.QPointF(t, y))
    return QtCore.QPointF(scene)


def _hover(qtbot, tl, t, y):
    """The mouse comes to rest at (t, y) (what the scene says of a move); its tooltip, made
    in a thread."""
    tl._tooltip = None
    tl.scene().sigMouseMoved.emit(_point(tl, t, y))
    qtbot.waitUntil(lambda: tl._tooltip is not None, timeout=WAIT_MS)
    return tl._tooltip


def _path_drawn(qtbot, run):
    """(source, window, timeline) of ``run``, its critical path computed and drawn (P)."""
    src = as_source(load_profile(_files(run), ranked=True))
    win = _window(qtbot, src, path_track=path_track)
    qtbot.waitUntil(lambda: win.critical_path is not None or win.critical_error is not None,
                    timeout=WAIT_MS)
    qtbot.keyClick(win.timeline, QtCore.Qt.Key.Key_P)
    return src, win, win.timeline


def test_the_tooltips_say_where_the_path_rests_on_an_inferred_link(qtbot):
    """mpi3, the path drawn: a track row's tooltip names the kind, rank and lane group that
    held the path under the mouse and, before the latest inferred link (2.473 s) only, says
    that part is inferred; the item whose link was inferred says so in its own tooltip, an
    item on the path whose links are known does not (issue 35, point 2)."""
    src, win, tl = _path_drawn(qtbot, "mpi3")
    path, track = win.critical_path, win.critical_path.track
    at = track.inferred_from_ns
    assert at == 2_472_510_881
    tl.set_time_range(at - 8_000_000, at + 2_000_000)
    qtbot.waitUntil(tl.item.settled, timeout=WAIT_MS)
    entries = dict(tl.lane_layout.path_entries())
    whole = entries["all"]
    y = whole.y + whole.height / 2
    before = _hover(qtbot, tl, at - 4_300_000, y)
    after = _hover(qtbot, tl, at + 1_000_000, y)
    assert "inferred: this part of the run is reached only through a link" in before, before
    assert "inferred" not in after, after
    piece = track.piece_at(at - 4_300_000)
    kind, (rank, group) = piece[2], piece[3]
    assert escape(f"{kind} on rank {rank}'s {tl.lane_layout.group_title(group)} lanes, "
                  f"{format_range(*piece[:2])}") in before, before
    # and which item held it there (the tooltip named none: a review clicked to find out)
    held = track.item_at(at - 4_300_000)
    assert held >= 0 and escape(f"held by {src.item_title(held)}") in before, before
    legend = entries["legend"]
    assert "hatched before 2.473 s" in _hover(qtbot, tl, at, legend.y + legend.height / 2)
    # an item whose link was inferred, and one whose links are known
    k = int(np.flatnonzero(path.inferred)[-1])
    known = next(j for j in range(len(path)) if not path.inferred[j]
                 and not (j and path.inferred[j - 1]) and path.end[j] > path.begin[j]
                 and int(path.item[j]) not in set(path.item[path.inferred].tolist()))
    for step, guessed in ((k, True), (known, False)):
        i = int(path.item[step])
        tl.set_time_range(*(lambda s: (s[0] - (s[1] - s[0]), s[1] + (s[1] - s[0])))(
            src.item_extent(i)))
        tl.reveal_item(i)
        qtbot.waitUntil(tl.item.settled, timeout=WAIT_MS)
        tl.grab()
        lane, row = src.item_lane(i)
        e = tl.lane_layout.find_lane(lane)
        s0, s1 = src.item_extent(i)
        tip = _hover(qtbot, tl, (s0 + s1) / 2, e.y + (row + 0.5) * e.row_h)
        assert "on the critical path: step" in tip, tip
        assert ("inferred:" in tip) == guessed, (step, tip)


def test_a_click_on_the_paths_track_selects_the_item_that_held_it_there(qtbot):
    """The path's summary track answered a hover only: a click on a row's piece selects the
    item of the path's step there (on that row's rank and lane group) and shows its details
    (the track stays in sight; the details' Zoom to goes to it); a click on the whole run's
    row, the step at that time."""
    src, win, tl = _path_drawn(qtbot, "mpi3")
    path, track = win.critical_path, win.critical_path.track
    qtbot.waitUntil(lambda: bool(tl.lane_layout.path_entries()), timeout=WAIT_MS)
    entries = dict(tl.lane_layout.path_entries())
    on_rows = np.flatnonzero(track.row >= 0)
    p = on_rows[np.argmax((track.end - track.begin)[on_rows])]  # (the track's longest piece)
    t = (int(track.begin[p]) + int(track.end[p])) // 2
    row = int(track.row[p])
    rank, group = track.rows[row]
    tl.set_time_range(int(track.begin[p]), int(track.end[p]))
    qtbot.wait(50)
    for key in (row, "all"):
        tl.select(None)
        e = entries[key]
        pos = tl.mapFromScene(tl.vb.mapViewToScene(QtCore.QPointF(t, e.y + e.height / 2)))
        qtbot.mouseClick(tl.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=pos)
        i = tl.item.selected
        assert i is not None and int(i) in set(path.item.tolist())
        lane = src.outline().lanes[src.item_lane(i)[0]]
        s0, s1 = src.item_extent(i)
        assert (lane.rank, lane.group) == (rank, group) and s0 <= t <= s1
        assert tl.vb.viewRange()[1][0] <= e.y  # (the track stays in sight: Zoom to goes)
        rows = {win.details.table.item(r, 0).text(): win.details.table.item(r, 1).text()
                for r in range(win.details.table.rowCount())}
        assert rows["Title"] == src.item_title(i)
        qtbot.wait(600)  # (the next click is not a double click)
    # the whole run in view (a pixel: many ms): a click beside a short piece, within its
    # pixel, selects it (the exact time under the mouse held none of that row's steps)
    tl.reset()
    qtbot.wait(50)
    px = tl._ns_per_px()
    begin, end = track.begin[on_rows], track.end[on_rows]
    alone = [q for q in range(len(on_rows)) if end[q] - begin[q] < px / 4
             and not ((track.row[on_rows] == track.row[on_rows[q]])
                      & (track.end[on_rows] > begin[q] - px)
                      & (track.begin[on_rows] < begin[q])).any()]
    q = on_rows[alone[0]]
    t = int(track.begin[q]) - px / 3
    e = entries[int(track.row[q])]
    tl.select(None)
    pos = tl.mapFromScene(tl.vb.mapViewToScene(QtCore.QPointF(t, e.y + e.height / 2)))
    qtbot.mouseClick(tl.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=pos)
    i = tl.item.selected
    assert i is not None
    lane = src.outline().lanes[src.item_lane(i)[0]]
    assert (lane.rank, lane.group) == track.rows[int(track.row[q])]


def test_the_paths_status_line_fits_beside_the_legend_and_says_the_rest_in_its_tooltip(qtbot):
    """The drawn path's status line (the guide's run: its steps, span, what it explains, the
    part resting on 280 inferred links, how to walk it) was cut where the legend starts at
    1,600 px, and went after 8 s.  A short line stays, fitting a 1,600 px window beside the
    legend; the status bar's tooltip says it whole while it is shown."""
    from PySide6 import QtGui
    from legate_prof.viewer.panels.legend import LegendWidget
    src, win, tl = _path_drawn(qtbot, "mpi3")
    bar = win.statusBar()
    qtbot.waitUntil(lambda: bar.currentMessage().startswith("critical path: "), timeout=WAIT_MS)
    line, whole = bar.currentMessage(), bar.toolTip()
    assert "inferred link" in line and "walk it" in line
    assert "rests on" in whole and "inferred link" in whole and len(whole) > len(line)
    legend = win.findChildren(LegendWidget)[0].sizeHint().width()
    assert QtGui.QFontMetrics(bar.font()).horizontalAdvance(line) + legend < 1600 - 40
    qtbot.wait(9000)  # (it stays)
    assert bar.currentMessage() == line
    tl.zoom(0.5)  # (the status bar says the view's range now)
    qtbot.waitUntil(lambda: bar.currentMessage() != line, timeout=WAIT_MS)
    assert bar.toolTip() == ""


def test_the_slow_messages_finding_highlights_the_messages_the_path_waited_on():
    """A click on the slow-messages finding zoomed a little and showed nothing (it names no
    line of the program's): its items are the messages on the run's critical path, what its
    cost is made of."""
    from legate_prof.analyze.insights import find_insights
    from legate_prof.viewer.panels.findings import finding_items
    src = as_source(load_profile(_files("mpi4"), ranked=True))
    found = find_insights(src)
    slow = next(f for f in (found if isinstance(found, list) else found["findings"])
                if f["pattern"] == "message_latency")
    items = finding_items(src, slow)
    on_path = {int(s.item) for s in src.run_critical_path()}
    assert len(items) and set(items.tolist()) <= on_path
    assert {src.item_facts(int(i))["kind"] for i in items} == {"message"}
    assert len(items) == sum(src.item_facts(i)["kind"] == "message" for i in on_path)


def test_an_out_of_memory_label_tells_the_report_when_hovered(qtbot):
    """The red label of a rank that ran out of memory answered nothing (a review): hovering
    it gives what legate's report said, a field a line."""
    oom2 = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "oom2"
    model = load_profile([str(oom2), str(oom2 / "console.log")])
    src = as_source(model)
    win = _window(qtbot, src)
    tl = win.timeline
    mk = next(m for m in src.outline().markers if m.get("kind") == "oom")
    t = int(mk["time"])
    tl.set_time_range(t - 50_000_000, t + 5_000_000)
    qtbot.waitUntil(tl.item.settled, timeout=WAIT_MS)
    tl.grab()  # (the labels placed where this frame draws them)
    boxes = tl.item._marker_boxes
    assert boxes
    box, first = boxes[0]
    sx, dx, sy, dy = tl.item._marker_map
    centre = box.center()
    said = _hover(qtbot, tl, (centre.x() - dx) / sx, (centre.y() - dy) / sy)
    assert escape(first["title"]) in said and "requested: 4,194,304 bytes" in said, said
    assert "store 4, allocated at" in said or "held by store 4" in said, said
    # a click pins the report in the details (a GUI walk: the click did nothing, and the
    # tooltip goes when the mouse does); Zoom to goes to the failure
    pos = tl.mapFromScene(tl.vb.mapViewToScene(QtCore.QPointF((centre.x() - dx) / sx,
                                                              (centre.y() - dy) / sy)))
    qtbot.mouseClick(tl.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=pos)
    t = win.details.table
    rows = {t.item(r, 0).text(): t.item(r, 1).text() for r in range(t.rowCount())}
    assert rows["Marker"] == first["title"]
    assert rows["requested"] == "4,194,304 bytes" or "4,194,304" in rows.get("requested", "")
    assert set(first["fields"]) <= set(rows)
    assert win.details.zoom_btn.isEnabled()


def test_a_finding_clicked_brings_its_work_into_sight_and_says_what_is_lit(qtbot):
    """A GUI walk: the slow messages' finding highlighted slivers on lanes out of sight, said
    nothing of them, and the details kept the last item.  A finding clicked zooms to its
    window (the path's longest wait on one message), scrolls the first of its items there
    into sight, clears the details and says what it highlighted."""
    from legate_prof.viewer.panels.findings import add_findings_dock, finding_items
    src = as_source(load_profile(_files("mpi4"), ranked=True))
    costs = costed_findings(src)
    win = _window(qtbot, src)
    panel = add_findings_dock(win, costs)
    row = next(k for k, f in enumerate(panel.findings) if f["pattern"] == "message_latency")
    f = panel.findings[row]
    win.timeline.show_item(int(finding_items(src, f)[0]))  # (an item's details shown)
    win.details.show_hit(src, ("item", int(finding_items(src, f)[0])))
    win.timeline.scroll_to(win.timeline.lane_layout.height)  # (the lanes at the bottom)
    panel.itemClicked.emit(panel.item(panel.row_of(row)))
    qtbot.waitUntil(lambda: not win.busy())
    qtbot.waitUntil(lambda: "of the finding highlighted" in win.statusBar().currentMessage())
    items = finding_items(src, f)
    said = win.statusBar().currentMessage()
    assert said == f"{len(items):,} messages of the finding highlighted (Esc clears)", said
    a, b = win.timeline.time_range()
    t0, t1 = f["window_ns"]
    assert a <= t0 and t1 <= b and (b - a) < 0.5 * costs["run_ns"]
    assert win.details.table.rowCount() == 0 and win.timeline.item.selected is None
    cols = src.items_columns(items, ["start", "stop"])
    inside = items[(cols["stop"] >= t0) & (cols["start"] <= t1)]
    v0, v1 = win.timeline.vb.viewRange()[1]
    lanes = {src.item_lane(int(i))[0] for i in inside}
    shown = [e for e in win.timeline.lane_layout.entries if e.kind == "lane" and e.lane in lanes
             and v0 <= e.y and e.y + e.height <= v1]
    assert shown


def test_a_finding_chosen_with_the_keys_is_shown_as_a_click_shows_it(qtbot):
    """A GUI walk: with the findings list focused, Down and PgDn selected another finding
    while the view kept the last one's window."""
    from legate_prof.viewer.panels.findings import add_findings_dock
    src = as_source(load_profile(_files("mpi3"), ranked=True))
    costs = costed_findings(src)
    win = _window(qtbot, src)
    panel = add_findings_dock(win, costs)
    assert len(panel.findings) >= 2
    panel.setFocus()
    qtbot.waitUntil(panel.hasFocus)
    panel.setCurrentRow(1)  # (the first finding: row 0 is the sentence above them)
    qtbot.waitUntil(lambda: not win.busy())
    for k in (1, 0):
        if k:
            qtbot.keyClick(panel, QtCore.Qt.Key.Key_Down)
        else:
            qtbot.keyClick(panel, QtCore.Qt.Key.Key_Up)
        qtbot.waitUntil(lambda: not win.busy())
        a, b = win.timeline.time_range()
        t0, t1 = panel.findings[k]["window_ns"]
        assert a <= t0 and t1 <= b and (b - a) <= 1.2 * (t1 - t0) + 2e6, (k, a, b, t0, t1)


def test_a_finding_clicked_brings_its_tasks_into_sight_not_its_lines_other_work(qtbot):
    """A GUI walk: the warm-up finding scrolled to its line's mapping on a utility lane, its
    Random tasks on the cpu lanes out of sight; the out-of-memory finding of rank 1 brought
    an operation into sight.  The first shown is of the finding's tasks, else of what holds
    memory, on the finding's rank where it names one."""
    from legate_prof.query import ItemKind
    from legate_prof.viewer.panels.findings import shown_items
    src = as_source(load_profile(_files("inefficient_1rank"), ranked=True))
    costs = costed_findings(src)
    warm = next(f for f in costs["findings"] if f["pattern"] == "warm_up")
    _, first, _ = shown_items(src, warm)
    assert src.items_columns([first], ["kind"])["kind"][0] == int(ItemKind.TASK)
    oom = REAL / "oom2"
    crash = as_source(load_profile([*_files("oom2"), str(oom / "console.log")], ranked=True))
    for f in costed_findings(crash)["findings"]:
        if f["pattern"] != "out_of_memory":
            continue
        _, first, _ = shown_items(crash, f)
        lane = crash.outline().lanes[crash.item_lane(first)[0]]
        assert lane.rank == int(f["evidence"]["rank"]) and lane.group in ("system", "arrays"), \
            (f["title"], lane)


def test_escape_clears_what_the_selection_showed(qtbot):
    """A GUI walk: after Esc the details kept the item while ``]`` said "select an item
    first", and the finding clicked stayed selected under "highlights cleared"."""
    from legate_prof.viewer.panels.findings import add_findings_dock
    src = as_source(load_profile(_files("inefficient_1rank"), ranked=True))
    win = _window(qtbot, src)
    panel = add_findings_dock(win, costed_findings(src))
    panel.setCurrentRow(1)
    win.timeline.select(0)
    win.details.show_hit(src, ("item", 0))
    assert win.details.table.rowCount() > 0
    win.timeline.clear_highlights()
    assert win.details.table.rowCount() == 0 and not panel.selectedItems()
    assert win.timeline.item.selected is None


def test_the_mouses_time_line_goes_when_the_pointer_leaves(qtbot):
    """A GUI walk: the hover line and its time label stayed where the pointer left the plot,
    and in the exported picture."""
    src = as_source(load_profile(_files("mpi2"), ranked=True))
    win = _window(qtbot, src)
    tl = win.timeline
    inside = tl.vb.sceneBoundingRect().center()
    tl._mouse_moved(inside)
    assert tl.cursor.isVisible() and tl.cursor_label.isVisible()
    tl._mouse_moved(QtCore.QPointF(-5, -5))
    assert not tl.cursor.isVisible() and not tl.cursor_label.isVisible()
    tl._mouse_moved(inside)
    QtCore.QCoreApplication.sendEvent(tl, QtCore.QEvent(QtCore.QEvent.Type.Leave))
    assert not tl.cursor.isVisible()


def test_a_log_opened_without_its_stream_says_so_in_the_window(qtbot):
    """A GUI walk: File → Open of efficient_1rank's log alone dropped its operations and
    arrays, and said why on the terminal only; the window's banner says it too."""
    log = str(REAL / "efficient_1rank" / "legate_0.prof.gz")
    from legate_prof.viewer.app import MainWindow
    win = MainWindow(as_source(load_profile([log], ranked=True)), [log])
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    qtbot.waitUntil(lambda: any("legate_0.runtime.prof) was not given" in p for p in
                                win._timeline_frame().banner.problem_lines()), timeout=WAIT_MS)


def test_the_paths_legend_keeps_every_colour_in_a_narrow_window(qtbot):
    """A GUI walk at 1,000 px: the "path by kind" legend stopped at "startup", "shutdown"
    and "gap" dropped while the gap was among the longest bars.  Texts are cut to fit,
    never a colour's swatch left out."""
    from PySide6 import QtGui
    from legate_prof.viewer.timeline.path_track import TrackPainter
    src, win, tl = _path_drawn(qtbot, "inefficient_1rank")
    painter = TrackPainter(win.critical_path.track)
    texts, swatches = [], []

    class Recording(QtGui.QPainter):
        def drawText(self, *a):  # noqa: N802 - Qt's name
            texts.append(a[-1])
            super().drawText(*a)

        def fillRect(self, *a):  # noqa: N802 - Qt's name
            swatches.append(a[0])
            super().fillRect(*a)
    for width in (1400, 420):
        texts.clear()
        swatches.clear()
        img = QtGui.QImage(width, 20, QtGui.QImage.Format.Format_ARGB32)
        p = Recording(img)
        painter._paint_legend(p, 0, width, 0, 16)
        p.end()
        assert texts[0] == "path by kind:" and len(swatches) == len(texts) - 1
        assert len(swatches) == len(painter.track.present) + (
            painter.track.inferred_from_ns is not None), (width, texts)
        if width == 1400:
            full = list(texts)
    assert any(t.endswith("…") for t in texts) and texts != full, texts


def test_compact_rows_leave_the_paths_track_as_tall_as_it_was(qtbot):
    """A GUI walk: in compact mode the path's track rows went a few pixels tall, "critical
    path" written over "the whole run" and the cpu, io and chan rows left unnamed.  The
    track keeps its height in pixels, so each row keeps its name."""
    src, win, tl = _path_drawn(qtbot, "inefficient_1rank")
    qtbot.waitUntil(lambda: tl.lane_layout.path_track is not None, timeout=WAIT_MS)

    def pixels():
        return [(key, round(e.height * tl.row_px, 3)) for key, e in tl.lane_layout.path_entries()]
    before = pixels()
    tl.set_compact(True)
    assert tl.compact and pixels() == before and len(before) >= 5
    tl.set_compact(False)
    assert pixels() == before


def test_the_findings_of_a_run_without_a_path_say_their_cost_is_unknown_in_the_dock(qtbot):
    """oom2 (no Legion timeline): the dock read "no time on the critical path" of its memory
    pressure, where there is no path to be off."""
    from legate_prof.viewer.panels.findings import add_findings_dock
    oom = REAL / "oom2"
    src = as_source(load_profile([*_files("oom2"), str(oom / "console.log")], ranked=True))
    win = _window(qtbot, src)
    panel = add_findings_dock(win, costed_findings(src))
    texts = [panel.item(k).text() for k in range(panel.count())]
    pressure = [t for t in texts if "[memory_pressure]" in t]
    assert pressure and all(t.startswith("cost unknown: no critical path — ") for t in pressure)
    assert not any("no time on the critical path" in t for t in texts), texts
