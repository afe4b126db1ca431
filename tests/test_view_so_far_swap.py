"""The ranks built so far replaced by the whole run (``MainWindow._loaded``): what the screen
shows at the swap.  Real Qt (offscreen), real workers building ``synthetic_8``'s logs; each
test hooks the window's ``_loaded`` to look at it right before and right after the swap,
before any event is handled (what the next frame on screen shows)."""

import pytest
from PySide6 import QtCore

from tests_viewer_helpers import LOAD_MS, loading_window

# what a timeline's picture holds where nothing is drawn: the background, a group's
# utilization row not yet drawn, the scale's dotted lines, the rule between lanes, a header
BLANK = {0xffffff, 0xfafafa, 0xaaaaaa, 0xdee2ea, 0xebeef5}


def _swapping_window(qtbot, files, monkeypatch, on_partial=None, size=(1400, 900)):
    """A window loading ``files`` with 2 workers, the ranks so far shown (``on_partial(win,
    src)`` then acts on them), and {"before": …, "after": …} what ``_look`` saw right before
    and right after the whole replaced them."""
    from legate_prof.load import rank_workers
    from legate_prof.viewer.app import default_open
    monkeypatch.setenv("LEGATE_PROF_WORKERS", "2")
    monkeypatch.setattr(rank_workers, "PARTIAL_MIN_S", 0.0)  # (small ranks build fast)
    win = loading_window(qtbot, files, lambda progress: default_open(files, progress),
                         size=size, opener=default_open)
    seen, show, loaded = {}, win._show_source, win._loaded

    def showing(src, files, layout=None, partial=False):
        show(src, files, layout, partial)
        if partial and on_partial is not None:
            on_partial(win, src)

    def swapping(number, ready):
        so_far = win.showing_ranks_so_far
        if so_far:
            seen["ranks"] = set(win.source.outline().ranks)
            seen["before"] = _look(win)
        loaded(number, ready)
        if so_far:
            seen["after"] = _look(win)
    win._show_source, win._loaded = showing, swapping
    win.start_loading()
    qtbot.waitUntil(lambda: "after" in seen or win.load_error is not None, timeout=LOAD_MS)
    assert "after" in seen, "the ranks so far were never shown"
    return win, seen


def _look(win):
    """The timeline's frame as the screen shows it (its banner, lanes, scrollbar and what is
    painted over them), and where each row in view is in the window: the view's left and
    right edge (x) and the row's top (y), by (kind, rank, group, label)."""
    tl = win.timeline
    (y0, y1), (t0, t1) = tl.vb.viewRange()[1], tl.time_range()

    def at(t, y):
        return tl.mapTo(win, tl.mapFromScene(tl.vb.mapViewToScene(QtCore.QPointF(t, y))))
    rows = {(e.kind, e.rank, e.group, e.label): (at(t0, e.y).x(), at(t1, e.y).x(), at(t0, e.y).y())
            for e in tl.lane_layout.visible(y0, y1)}
    return {"image": win._timeline_frame().grab().toImage(), "rows": rows}


def _inked_lanes(win, ranks):
    """The lanes of ``ranks`` in view whose first row has something drawn across the view
    (past its scale's labels), as (rank, group, label)."""
    tl = win.timeline
    frame = win._timeline_frame()
    img = frame.grab().toImage()
    (y0, y1), (t0, t1) = tl.vb.viewRange()[1], tl.time_range()
    out = set()
    for e in tl.lane_layout.visible(y0, y1):
        if e.kind != "lane" or e.rank not in ranks:
            continue
        p = tl.mapTo(frame, tl.mapFromScene(tl.vb.mapViewToScene(
            QtCore.QPointF(t0, e.y + 0.5 * e.row_h))))
        right = tl.mapTo(frame, tl.mapFromScene(tl.vb.mapViewToScene(
            QtCore.QPointF(t1, e.y)))).x()
        y = round(p.y())
        if 0 <= y < img.height() and any(
                img.pixel(x, y) & 0xFFFFFF not in BLANK
                for x in range(round(p.x()) + 2, min(round(right), img.width()) - 2, 2)):
            out.add((e.rank, e.group, e.label))
    return out


def _open_a_lane_at_the_top(win, src):
    """The user opens the CPU lanes of the first rank so far and scrolls them to the top of
    the view (the whole keeps that lane at the top: ``_back_where_left``)."""
    tl = win.timeline
    rank = min(src.outline().ranks)
    tl.toggle_group(rank, "cpu")
    lane = next(e for e in tl.lane_layout.entries if e.kind == "lane" and e.rank == rank)
    tl.scroll_to(lane.y)


def test_the_swap_never_shows_blank_lanes_where_the_ranks_so_far_were_drawn(
        qtbot, synthetic_8, monkeypatch):
    """The whole run replacing its ranks so far drew their lanes blank for 0.2-0.7 s (none of
    its tiles computed yet: 10 x 1 M raw, 215 of 471 pixel lines inked right after the swap
    where 471 were before).  The frame as it was stays on screen until the whole's picture
    has its tiles (``ScrolledTimeline.hold_picture``), then the whole is shown whole."""
    from legate_prof.viewer.timeline import scrollbar
    monkeypatch.setattr(scrollbar, "HOLD_AT_MOST_S", LOAD_MS / 1000)  # (however slow its tiles)
    files = [str(f) for f in synthetic_8]
    released = []

    def watch_release(win_, src):
        frame = win_._timeline_frame()
        let_go = frame.release_picture

        def release():
            if frame.held is not None:
                released.append(win_.timeline.item.settled())
            let_go()
        frame.release_picture = release
        _open_a_lane_at_the_top(win_, src)
    win, seen = _swapping_window(qtbot, files, monkeypatch, watch_release, size=(1400, 500))
    before, after = seen["before"], seen["after"]
    assert not win.showing_ranks_so_far
    # right after the swap, before the whole's tiles are in: the screen as it was
    assert after["image"] == before["image"]
    frame = win._timeline_frame()
    qtbot.waitUntil(lambda: frame.held is None, timeout=LOAD_MS)
    assert released == [True]  # (let go once the whole's picture was whole)
    top = min((y, (r, g, label)) for (kind, r, g, label), (_, _, y) in after["rows"].items()
              if kind == "lane")[1]
    assert top[0] in seen["ranks"] and top[1] == "cpu"  # (the lane the user left on top)
    assert top in _inked_lanes(win, seen["ranks"])  # (the whole's picture, drawn)


def test_a_view_moved_while_the_ranks_so_far_are_held_shows_the_whole_at_once(
        qtbot, synthetic_8, monkeypatch):
    """The picture held over the swap goes as soon as the view moves: the user sees their
    move, on the whole run."""
    from legate_prof.viewer.app import MainWindow
    files = [str(f) for f in synthetic_8]
    moved = {}
    loaded = MainWindow._loaded

    def swap_then_pan(self, number, ready):
        so_far = self.showing_ranks_so_far
        loaded(self, number, ready)
        if so_far:
            moved["held"] = getattr(self._timeline_frame(), "held", None) is not None
            self.timeline.pan(0.1)  # (→)
            moved["held then"] = getattr(self._timeline_frame(), "held", None) is not None
    monkeypatch.setattr(MainWindow, "_loaded", swap_then_pan)
    _swapping_window(qtbot, files, monkeypatch)
    assert moved == {"held": True, "held then": False}


def test_the_lanes_stay_in_place_on_screen_at_the_swap(qtbot, synthetic_8, monkeypatch):
    """The banner's line over the ranks so far went with them, and the lanes moved up by its
    height (40 px); the whole run, taller than the view where its ranks so far were not,
    came without a scrollbar.  The banner keeps its height, its last line saying the whole
    is in; the scrollbar's room is kept: every row in view at the swap stays where it was."""
    from legate_prof.viewer import app
    files = [str(f) for f in synthetic_8]
    win, seen = _swapping_window(qtbot, files, monkeypatch)
    before, after = seen["before"]["rows"], seen["after"]["rows"]
    kept = [k for k in before if k in after and k[1] is None]  # (the all-ranks rows: on top)
    assert kept and all(after[k] == before[k] for k in kept), \
        {k: (before[k], after[k]) for k in kept}
    frame = win._timeline_frame()
    assert frame.bar.isVisible() == (win.timeline.lane_layout.height >
                                     win.timeline.vb.viewRange()[1][1] + 1e-6)
    assert frame.bar.isVisible()  # (the whole's lanes: taller than the view)
    assert not any(line.startswith("Showing") for line in frame.banner.lines())
    assert frame.banner.lines()[-1] == app.WHOLE_IN.format(n=8)


def test_collapse_ranks_while_the_ranks_so_far_are_shown_collapses_the_whole(
        qtbot, synthetic_8, monkeypatch):
    """"Collapse ranks" on the toolbar stayed enabled over the ranks so far, and the whole
    came with those ranks collapsed and the ranks built since open.  The choice is the
    user's for every rank: the whole's are all collapsed, but for a rank opened again
    after it (C, a click on its header)."""
    from legate_prof.viewer.timeline.layout import ALL_RANKS
    files = [str(f) for f in synthetic_8]
    opened = {}

    def collapse_all_then_open_one(win, src):
        win.lanes.collapse_ranks(True)
        opened["rank"] = min(src.outline().ranks)
        win.timeline.toggle_rank(opened["rank"])
    win, seen = _swapping_window(qtbot, files, monkeypatch, collapse_all_then_open_one)
    ranks = set(win.source.outline().ranks)
    assert ranks - seen["ranks"]  # (ranks built since)
    assert win.timeline.lane_layout.collapsed_ranks == \
        ({ALL_RANKS} | ranks) - {opened["rank"]}


def test_expand_ranks_while_the_ranks_so_far_are_shown_leaves_every_rank_open(
        qtbot, synthetic_8, monkeypatch):
    """"Expand ranks" after "Collapse ranks": the whole has every rank open."""
    files = [str(f) for f in synthetic_8]

    def collapse_then_expand(win, src):
        win.lanes.collapse_ranks(True)
        win.lanes.collapse_ranks(False)
    win, _ = _swapping_window(qtbot, files, monkeypatch, collapse_then_expand)
    assert win.timeline.lane_layout.collapsed_ranks == set()


# the View menu's actions that act on the lanes and the view, usable over the ranks so far
LANE_ACTIONS = ("Reset zoom", "Undo view change", "Redo view change", "Clear highlights (Esc)",
                "Expand all groups", "Collapse all groups", "Collapse all ranks",
                "Expand all ranks", "Collapse/expand the rank at the top (C)",
                "Expand a kind on every rank", "Collapse a kind on every rank", "Kinds shown",
                "Compact", "Filter ranks…")
# what needs the whole run: off over the ranks so far, saying why
WHOLE_ONLY = ("Find…", "Show the run's critical path (P)",
              "Walk back: what the selected item waited for ([)",
              "Walk forward: the first item it held up (])")


def test_the_view_menus_lane_actions_work_over_the_ranks_so_far_and_the_whole_keeps_them(
        qtbot, synthetic_8, monkeypatch):
    """The View menu's lane actions (groups, ranks, kinds, Compact, the rank filter) were
    all off over the ranks so far, and the kinds hidden and the ranks filtered there went
    at the swap.  They are on; what the user chose there is the whole's, the ranks built
    since included; what needs the whole run stays off, its tooltip saying why."""
    files = [str(f) for f in synthetic_8]
    seen = {}

    def use_the_view_menu(win, src):
        actions = {a.text(): a for a in win._view_menu.actions()}
        seen["on"] = {t: actions[t].isEnabled() for t in LANE_ACTIONS + WHOLE_ONLY}
        seen["tips"] = {t: (actions[t].toolTip(), actions[t].statusTip()) for t in WHOLE_ONLY}
        seen["search"] = (win.search.isEnabled(), win.search.toolTip())
        seen["compact"] = win.lanes.compact.isChecked()
        actions["Expand all groups"].trigger()
        next(a for a in win.lanes.collapse_kind.actions() if a.text() == "utility").trigger()
        win.lanes.kind_actions["zerocopy"].trigger()  # (Kinds shown: zerocopy off)
        actions["Compact"].trigger()
        win.lanes.ranks.setText("0-5")
        win.lanes.apply_ranks()
    win, _ = _swapping_window(qtbot, files, monkeypatch, use_the_view_menu)
    why = "available once all 8 ranks are read"
    assert seen["on"] == {**{t: True for t in LANE_ACTIONS}, **{t: False for t in WHOLE_ONLY}}
    assert all(tip.endswith(f" — {why}") and status == why
               for tip, status in seen["tips"].values()), seen["tips"]
    assert seen["search"][0] is False and why in seen["search"][1]
    # the whole: every rank's groups open but utility's, zerocopy hidden, Compact as left,
    # ranks 6 and 7 out as the box says
    layout, info = win.timeline.lane_layout, win.source.outline()
    assert layout.expanded == {(g.rank, g.group) for g in info.groups if g.group != "utility"}
    assert layout.hidden_groups == {"zerocopy"}
    assert not win.lanes.kind_actions["zerocopy"].isChecked()
    assert all(a.isChecked() for k, a in win.lanes.kind_actions.items() if k != "zerocopy")
    assert seen["compact"] and not win.lanes.compact.isChecked() and not win.timeline.compact
    assert layout.hidden_ranks == {6, 7} and win.lanes.ranks.text() == "0-5"
    actions = {a.text(): a for a in win._view_menu.actions()}
    assert all(actions[t].isEnabled() for t in LANE_ACTIONS + WHOLE_ONLY)
    assert not any(why in actions[t].toolTip() or actions[t].statusTip() for t in WHOLE_ONLY)
    assert win.search.isEnabled() and not win.search.toolTip()


def test_the_banner_says_the_other_ranks_are_built_again_in_one_process(
        qtbot, synthetic_8, monkeypatch):
    """The workers' build failing once the ranks so far were shown (a worker killed, a
    bundle cut), the loader builds the run again in this process, slower: the status bar
    alone said "reading …".  The banner's line says it while that runs; the whole then
    replaces the ranks so far as ever."""
    from legate_prof.load import rank_workers
    from legate_prof.viewer import app
    files = [str(f) for f in synthetic_8]
    built = rank_workers._run_workers
    # (every job built, then a worker's exit said it failed: the builds are not used)
    monkeypatch.setattr(rank_workers, "_run_workers", lambda *a, **k: built(*a, **k) and False)
    said, status = [], []

    def listen(win, src):
        frame = win._timeline_frame()
        set_notices = frame.set_notices

        def noting(*args, **kw):
            set_notices(*args, **kw)
            said.append((frame.banner.lines(), win.showing_ranks_so_far))
        frame.set_notices = noting
        win.statusBar().messageChanged.connect(status.append)
    win, seen = _swapping_window(qtbot, files, monkeypatch, listen)
    again = [lines for lines, so_far in said
             if so_far and any("built again in this one process" in x for x in lines)]
    assert again, said
    assert again[0][0].startswith("Showing ranks ") and \
        "the workers could not build the others" in again[0][0]
    assert any(m.startswith("building the other ranks again, in this process: reading ")
               for m in status), status
    lines = win._timeline_frame().banner.lines()
    assert lines[-1] == app.WHOLE_IN.format(n=8) and not any("again" in x for x in lines)


STEP_MS = 20_000  # a step of a load the test makes up (no rank is built meanwhile)


def test_building_again_is_the_loaders_step_not_a_progress_texts_words(qtbot, synthetic_8):
    """The window took any progress text beginning "reading " over the ranks so far for
    the workers' build given up (``READ_AGAIN``): a file read said so is not that.  The
    banner says it when the loader says it (``progress.partial.building_again()``, the
    hand-over ``load_profile`` is given), and the rest's steps then say "again"."""
    import threading
    from legate_prof.load.loader import load_profile
    from legate_prof.viewer.app import default_open
    files = [str(f) for f in synthetic_8]
    told, whole = threading.Event(), threading.Event()

    def load(progress):
        progress.partial(load_profile(files[:2], ranked=True, workers=1), 8)
        progress(2, 8, "reading legate_2.prof")  # (a file read: no rebuild said)
        told.wait(LOAD_MS / 1000)
        progress.partial.building_again()
        progress(3, 8, "reading legate_3.prof")
        whole.wait(LOAD_MS / 1000)
        return load_profile(files, ranked=True, workers=1)
    win = loading_window(qtbot, files, load, opener=default_open)
    win.start_loading()
    qtbot.waitUntil(lambda: "legate_2.prof" in win.statusBar().currentMessage(),
                    timeout=STEP_MS)
    first = win._timeline_frame().banner.lines()[0]
    said = win.statusBar().currentMessage()
    told.set()
    qtbot.waitUntil(lambda: "legate_3.prof" in win.statusBar().currentMessage(),
                    timeout=STEP_MS)
    again = win._timeline_frame().banner.lines()[0]
    status = win.statusBar().currentMessage()
    whole.set()
    qtbot.waitUntil(lambda: not win.showing_ranks_so_far, timeout=LOAD_MS)
    assert win.showing_ranks_so_far is False and win.load_error is None
    assert first.startswith("Showing ranks 0,1 of 8 while the others are built"), first
    assert said == "building the other ranks: reading legate_2.prof"
    assert again.startswith("Showing ranks 0,1 of 8: the workers could not build the "
                            "others, so they are being built again in this one process"), again
    assert status == "building the other ranks again, in this process: reading legate_3.prof"


def test_the_progress_panel_says_the_ranks_are_built_again_where_none_are_shown_yet(
        qtbot, synthetic_8):
    """The workers' builds given up before any ranks so far were shown: the progress panel's
    step said "reading legate_0.prof" after "built … (2 of 8 ranks)", the bar going back,
    without a word of why.  It says the ranks are built again, in this process."""
    import threading
    from legate_prof.load.loader import load_profile
    from legate_prof.viewer import app
    files = [str(f) for f in synthetic_8]
    go = threading.Event()

    def load(progress):
        progress(2, 8, "built legate_0.prof (2 of 8 ranks)")
        progress.partial.building_again()
        progress(0, 8, "reading legate_0.prof")
        go.wait(STEP_MS / 1000)
        return load_profile(files, ranked=True, workers=1)
    win = loading_window(qtbot, files, load)
    win.start_loading()
    qtbot.waitUntil(lambda: "legate_0.prof (" in win.loading.step.text(), timeout=STEP_MS)
    step = win.loading.step.text()
    go.set()  # (a first load that fails ends the application: the tests after it too)
    qtbot.waitUntil(lambda: win.loading is None, timeout=LOAD_MS)
    assert step == "reading legate_0.prof (again, in this process)"
    assert app.AGAIN_STEP.startswith("the workers could not build the ranks")


def test_view_tells_the_window_the_ranks_are_built_again_where_a_rank_file_is_damaged(
        qtbot, synthetic_8, tmp_path, monkeypatch):
    """``legate_prof view``'s load (``EarlyLoad``, begun before the window): a rank file cut
    before its machine description fails its worker once the ranks so far are in; the
    loader builds the ranks again in one process and says so, the command hands it to the
    window, whose banner says it; then the whole replaces the ranks so far."""
    import argparse
    import shutil
    import threading
    from pathlib import Path
    from legate_prof.cli.commands.view import EarlyLoad
    from legate_prof.load import rank_workers
    from legate_prof.viewer import app
    from legate_prof.viewer.app import default_open
    files = [shutil.copy(f, tmp_path) for f in synthetic_8]
    Path(files[7]).write_bytes(Path(files[7]).read_bytes()[:2000])  # (built last: smallest)
    monkeypatch.setenv("LEGATE_PROF_WORKERS", "2")
    monkeypatch.setattr(rank_workers, "PARTIAL_MIN_S", 0.0)
    shown = threading.Event()  # (the workers' failure said once the window shows the rest)
    run = rank_workers._run_workers
    monkeypatch.setattr(rank_workers, "_run_workers",
                        lambda *a, **k: (run(*a, **k), shown.wait(LOAD_MS / 1000))[0])
    early = EarlyLoad(files, argparse.Namespace(cache=False, ranks=None, quiet=True))
    said = []
    win = loading_window(qtbot, files, early.wait, opener=default_open)
    show = win._show_source

    def showing(src, files_, layout=None, partial=False):
        show(src, files_, layout, partial)
        if partial:
            frame = win._timeline_frame()
            set_notices = frame.set_notices

            def noting(*args, **kw):
                set_notices(*args, **kw)
                said.append(frame.banner.lines()[0])
            frame.set_notices = noting
            shown.set()
    win._show_source = showing
    win.start_loading()
    qtbot.waitUntil(lambda: win.source is not None and not win.showing_ranks_so_far
                    and shown.is_set(), timeout=LOAD_MS)
    assert any("being built again in this one process" in x for x in said), said
    # (rank 7's file cannot be read: the whole is the other 7, its banner says why)
    assert win._timeline_frame().banner.lines()[-1] == app.WHOLE_IN.format(n=7)


def test_the_banner_says_nothing_of_building_again_where_the_workers_built_the_run(
        qtbot, synthetic_8, monkeypatch):
    """The line that says the ranks are built again in one process is not said where the
    workers built them."""
    files = [str(f) for f in synthetic_8]
    said = []

    def listen(win, src):
        said.append(win._timeline_frame().banner.lines())
    win, seen = _swapping_window(qtbot, files, monkeypatch, listen)
    assert said and said[0][0].startswith("Showing ranks ") and \
        "while the others are built" in said[0][0]
    assert "again" not in win.statusBar().currentMessage()


@pytest.mark.parametrize("closed", [False, True])
def test_the_banner_keeps_its_height_when_its_lines_change(qtbot, closed):
    """``NoticeBanner.set_lines(keep_height=True)``: as tall as it was (fewer lines leave
    room, more scroll), closed by its × it stays closed; lines set without it fit again."""
    from PySide6 import QtWidgets
    from legate_prof.viewer.notices import NoticeBanner
    win = QtWidgets.QWidget()
    qtbot.addWidget(win)
    lay = QtWidgets.QVBoxLayout(win)
    banner = NoticeBanner(["one line", "and another"])
    lay.addWidget(banner)
    lay.addStretch(1)
    win.resize(600, 400)
    win.show()
    qtbot.waitExposed(win)
    if closed:
        banner.hide()
    tall = banner.sizeHint().height()
    banner.set_lines(["one"], keep_height=True)
    win.layout().activate()
    assert banner.isHidden() == closed
    if not closed:
        assert banner.sizeHint().height() == tall
        banner.set_lines([f"line {k}" for k in range(30)], keep_height=True)
        assert banner.sizeHint().height() == tall
    banner.set_lines(["one"])
    assert banner.isVisible() and banner.sizeHint().height() < tall
