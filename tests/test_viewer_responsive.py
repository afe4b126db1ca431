"""A window that never waits on work, and that is gone when closed (issue 36).

The window's thread only draws: the profile is read, described and laid out by the loader's
thread, tiles and utilization strips are computed by the timeline's tiles thread; a cache
entry being written when the window closes is stopped and leaves nothing; a window closed
mid-load ends its process, its workers and their files.  How long the window goes without
answering is measured, not tested (``benchmarks/freeze_probe.py``, docs/performance.md).
No timed assertions: waits are for states, never for durations.
"""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from legate_prof.load.loader import load_profile
from legate_prof.query import ProfileSource, as_source
from tests_viewer_helpers import item_point

pytest.importorskip("pytestqt")

ROOT = Path(__file__).resolve().parents[1]
LOAD_MS = 120_000


@pytest.fixture(scope="module")
def ranks4(tmp_path_factory):
    from fixtures.synthetic import generate
    return generate(tmp_path_factory.mktemp("r4"), ranks=4, items=16_000, seed=3)


class RecordingSource(ProfileSource):
    """The query API over a model, noting on which thread each question that costs more
    than a lookup is asked."""

    def __init__(self, model):
        super().__init__(model)
        self.asked = []

    def _note(self, what):
        self.asked.append((what, threading.current_thread() is threading.main_thread()))

    def info(self):
        if self._info is None:  # (described once: the lane tree and the notices)
            self._note("info")
        return super().info()

    def outline(self):
        if self._outline is None:  # (the lane tree described once)
            self._note("outline")
        return super().outline()

    def lane_tile(self, *a, **k):
        self._note("lane_tile")
        return super().lane_tile(*a, **k)

    def summary_tile(self, group, rank, t0, t1, bins):
        at_hand = self.summary_at_hand(group, rank, (t1 - t0) / bins, bins)
        self._note("summary_tile at hand" if at_hand else "summary_tile")
        return super().summary_tile(group, rank, t0, t1, bins)

    def prepare_lanes(self, lanes):
        self._note("prepare_lanes")
        return super().prepare_lanes(lanes)

    def search(self, *a, **k):
        self._note("search")
        return super().search(*a, **k)

    def item_details(self, *a, **k):
        self._note("item_details")
        return super().item_details(*a, **k)


def _open(qtbot, src, files):
    from legate_prof.viewer.app import MainWindow
    win = MainWindow(files=[str(files[0])], load=lambda progress: src)
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitExposed(win)
    win.start_loading()
    qtbot.waitUntil(lambda: win.timeline is not None, timeout=LOAD_MS)
    return win


def test_the_windows_thread_computes_no_tile_no_lane_tree_no_stacking(qtbot, ranks4):
    """A profile opened in the window (as `view` and File → Open open one): its lane tree is
    described and laid out by the loader's thread, its lanes stacked and its tiles and
    utilization strips computed by the timeline's tiles thread — the window's thread only
    draws what arrives, and the strips of rows appearing whose values are at hand
    (``summary_at_hand``) — and the picture is whole once they arrived."""
    from legate_prof.viewer.app import MainWindow
    src = RecordingSource(load_profile([str(p) for p in ranks4], ranked=True))
    win = MainWindow(files=[str(ranks4[0])], load=lambda progress: src)
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    win.start_loading()
    qtbot.waitUntil(lambda: win.timeline is not None, timeout=LOAD_MS)
    win.timeline.expand(all_groups=True)
    qtbot.waitUntil(lambda: win.timeline.item.settled() and
                    win.timeline.item.last_stats.get("rects", 0) > 0, timeout=LOAD_MS)
    kinds = {what for what, _ in src.asked}
    assert {"outline", "lane_tile", "prepare_lanes"} <= kinds
    assert {"summary_tile", "summary_tile at hand"} & kinds
    on_main = sorted({what for what, main in src.asked if main} - {"summary_tile at hand"})
    assert not on_main, f"asked on the window's thread: {on_main}"
    img = win.timeline.grab().toImage()
    colours = {img.pixel(x, y) for x in range(200, img.width() - 20, 7)
               for y in range(40, img.height() - 40, 7)}
    assert len(colours) > 8  # boxes and utilization drawn, not a blank plot


def test_a_search_a_jump_and_a_hover_are_worked_out_off_the_windows_thread(qtbot, ranks4):
    """The search box's search and its grouping by rank, a jump to a result in a lane not
    yet drawn (its stacking), and a hover's tooltip (the item's details) all run in threads;
    the window's thread shows what they found."""
    from PySide6 import QtCore
    src = RecordingSource(load_profile([str(p) for p in ranks4], ranked=True))
    win = _open(qtbot, src, ranks4)
    win.search.setText("BinaryOp")
    win.run_search()
    qtbot.waitUntil(lambda: not win.busy(), timeout=LOAD_MS)
    assert sum(win.results.counts.values()) == len(src.search("BinaryOp", 10**9)) > 0
    assert win.timeline.item.matches is not None
    i = win.results.result_items()[-1]
    win.go_to_item(i)
    qtbot.waitUntil(lambda: not win.busy(), timeout=LOAD_MS)
    assert win.timeline.item.selected == i and win.details.table.rowCount() > 0
    tl = win.timeline
    qtbot.waitUntil(tl.item.settled, timeout=LOAD_MS)
    tl.grab()
    # (the details panel asks for its rows on this thread, again with the path's links once
    # the path is computed: not a hover; under load that came after the hover)
    qtbot.waitUntil(lambda: win.critical_path is not None or win.critical_error is not None,
                    timeout=LOAD_MS)
    qtbot.waitUntil(lambda: not win.busy(), timeout=LOAD_MS)
    QtCore.QCoreApplication.processEvents()
    del src.asked[:]
    # the mouse comes to rest on the item (what the scene says of a mouse move: the mouse
    # itself is where earlier tests left it, and Qt sends no move to where it already is)
    tl.scene().sigMouseMoved.emit(QtCore.QPointF(tl.mapToScene(item_point(tl, i))))
    qtbot.waitUntil(lambda: tl._tooltip is not None, timeout=LOAD_MS)  # (made in a thread)
    assert "BinaryOp" in tl._tooltip
    assert ("item_details", False) in src.asked and ("item_details", True) not in src.asked
    searched = [main for what, main in src.asked if what == "search"]
    assert True not in searched


def test_a_lane_label_shows_its_own_tooltip_never_the_plots_last(qtbot, ranks4):
    """Hovering a utilization row, then resting on a lane label: Qt's tooltip event shows the
    label's tooltip ("Rank 0 …"), not the plot's last ("All ranks · … utilization")."""
    from PySide6 import QtCore, QtGui, QtWidgets
    src = RecordingSource(load_profile([str(p) for p in ranks4], ranked=True))
    src.info()  # (its notices known: their banner does not come later and move the rows)
    win = _open(qtbot, src, ranks4)
    tl = win.timeline
    qtbot.waitUntil(tl.item.settled, timeout=LOAD_MS)
    tl.grab()
    summary = next(e for e in tl.lane_layout.entries if e.kind == "summary" and e.rank is None)
    t0, t1 = tl.time_range()
    at = tl.mapFromScene(tl.vb.mapViewToScene(QtCore.QPointF((t0 + t1) / 2, summary.y + 1)))
    qtbot.mouseMove(tl.viewport(), at)
    qtbot.waitUntil(lambda: "utilization" in QtWidgets.QToolTip.text(), timeout=LOAD_MS)
    head = next(e for e in tl.lane_layout.entries if e.kind == "header" and e.rank == 0)
    label = tl.mapFromScene(tl.lane_axis.mapToScene(QtCore.QPointF(
        tl.lane_axis.boundingRect().center().x(), 0)))
    label.setY(tl.mapFromScene(tl.vb.mapViewToScene(QtCore.QPointF(t0, head.y + 0.5))).y())
    qtbot.mouseMove(tl.viewport(), label)
    rest = QtGui.QHelpEvent(QtCore.QEvent.Type.ToolTip, label, tl.viewport().mapToGlobal(label))
    QtCore.QCoreApplication.sendEvent(tl.viewport(), rest)
    QtCore.QCoreApplication.processEvents()
    assert "utilization" not in QtWidgets.QToolTip.text()
    assert QtWidgets.QToolTip.text() == "" or "Rank 0" in QtWidgets.QToolTip.text()


def test_a_second_profile_shows_in_the_same_window_with_its_own_lanes(qtbot, ranks4,
                                                                      sample_profile):
    """The timeline widget is made once and each profile opened is shown in it: the second
    one's lanes, range and history, nothing of the first (its tiles thread ends)."""
    from legate_prof.viewer.app import MainWindow
    first = load_profile([str(sample_profile)], ranked=True)
    win = MainWindow(first, [sample_profile])
    qtbot.addWidget(win)
    win.show()
    old_item = win.timeline.item
    old_item.compute_in_background()
    win.timeline.zoom(0.25)
    src = as_ranked(ranks4)
    win.open_files([str(p) for p in ranks4])
    qtbot.waitUntil(lambda: win.source is not None and win.source.info().n_items ==
                    src.info().n_items and win.loading is None, timeout=LOAD_MS)
    assert win.timeline.item is not old_item and win.timeline.item.source is win.source
    assert not old_item.tiles.thread.is_alive() or old_item.tiles.pending() == 0
    qtbot.waitUntil(lambda: not old_item.tiles.thread.is_alive(), timeout=LOAD_MS)
    assert win.timeline.time_range() == tuple(map(float, src.info().time_range))
    assert win.timeline.history == [win.timeline.time_range()]
    assert [e.label for e in win.timeline.lane_layout.entries][:1] == ["All ranks (4)"]


def as_ranked(paths):
    from legate_prof.query import as_source
    return as_source(load_profile([str(p) for p in paths], ranked=True))


# ---- close means gone -----------------------------------------------------------------------

def _cache_files(folder):
    return sorted(p.name for p in Path(folder).iterdir()) if Path(folder).exists() else []


def test_a_cache_entry_stopped_midway_leaves_nothing(ranks4, tmp_path, monkeypatch):
    """``store_cached`` asked to stop partway through (the window closed while it wrote):
    it ends with ``WriteStopped``, and the cache holds no entry, no stamp and no temporary;
    asked never to stop, the same write makes a whole entry that opens."""
    from legate_prof.store.bundle_file import WriteStopped, read_bundle
    from legate_prof.store.cache import entry_path, store_cached
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(tmp_path / "cache"))
    paths = [str(p) for p in ranks4]
    model = load_profile(paths, ranked=True)
    asked = []

    def stop_at_the_fifth():
        asked.append(1)
        return len(asked) >= 5
    with pytest.raises(WriteStopped):
        store_cached(model, paths, note=lambda m: None, stop=stop_at_the_fifth)
    assert len(asked) == 5  # (stopped between the columns' pieces, not before the write)
    assert _cache_files(tmp_path / "cache") == []
    entry = store_cached(model, paths, note=lambda m: None, stop=lambda: False)
    assert entry == entry_path(paths) and read_bundle(entry).n_items == model.n_items


def test_stopping_the_later_writer_drops_its_entry_and_its_temporary(ranks4, tmp_path,
                                                                     monkeypatch):
    """The viewer's cache entry is written "later", in a thread; ``stop_cache_writers`` (the
    window closed) ends it: afterwards no writer runs and the cache holds either nothing or
    a whole entry (it may have finished first), never a temporary."""
    from legate_prof.load.loader import stop_cache_writers
    from legate_prof.store.bundle_file import read_bundle
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(tmp_path / "cache"))
    paths = [str(p) for p in ranks4]
    model = load_profile(paths, ranked=True, use_cache="later")
    assert stop_cache_writers(wait_s=LOAD_MS / 1000)
    left = _cache_files(tmp_path / "cache")
    assert not [n for n in left if n.endswith(".tmp")], left
    for name in left:
        if name.endswith(".lpbundle"):
            assert read_bundle(tmp_path / "cache" / name).n_items == model.n_items


def test_a_process_removes_only_its_own_temporaries_when_it_ends_at_once(tmp_path):
    """``remove_own_temporaries`` (the viewer ending with ``os._exit``) removes the files this
    process is writing, and leaves another live process's."""
    from legate_prof.output_file import atomic_output, remove_own_temporaries
    other = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\n"
        "from legate_prof.output_file import atomic_output\n"
        f"with atomic_output({str(tmp_path / 'theirs.bin')!r}) as tmp:\n"
        "    print(tmp, flush=True)\n"
        "    time.sleep(600)\n")], stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        theirs = other.stdout.readline().strip()
        with pytest.raises(KeyboardInterrupt):
            with atomic_output(tmp_path / "mine.bin") as mine:
                Path(mine).write_bytes(b"half")
                assert remove_own_temporaries() == [mine]
                assert not Path(mine).exists() and Path(theirs).exists()
                raise KeyboardInterrupt  # (what os._exit would do next: nothing renamed)
        assert not (tmp_path / "mine.bin").exists()
    finally:
        other.kill()
        other.wait()
        # the killed process's temporary and its record are left, as a stopped run leaves
        # them: swept here, so no later command of this session notes them
        from legate_prof.output_file import sweep_stale_outputs
        sweep_stale_outputs(tmp_path, note=lambda msg: None)
        assert not [p for p in tmp_path.iterdir() if ".lp-" in p.name]


CLOSE_MID_LOAD = """
import os, sys
from PySide6 import QtCore, QtWidgets
app = QtWidgets.QApplication(["legate_prof"])
from legate_prof.viewer.app import MainWindow

def close_mid_load():
    win = next((w for w in app.topLevelWidgets() if isinstance(w, MainWindow)), None)
    if win is None or not win.isVisible():
        return
    timer.stop()
    print("mid-load" if win.loading is not None else "loaded", flush=True)
    win.close()

timer = QtCore.QTimer()
timer.timeout.connect(close_mid_load)
timer.start(5)
from legate_prof.cli import main
rc = main(["view", *sys.argv[1:]])
print("returned", rc, flush=True)
"""


def test_closing_the_window_mid_load_ends_the_process_its_workers_and_their_files(tmp_path):
    """`view` of four ranks built by worker processes, its window closed as soon as it shows
    (the ranks still being built): the process ends (status 0), and no worker, hand-over
    folder, cache entry or temporary is left."""
    from fixtures.synthetic import generate
    run = generate(tmp_path / "run", ranks=4, items=400_000, seed=5)
    scratch, cache = tmp_path / "tmp", tmp_path / "cache"
    scratch.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(scratch),
           "LEGATE_PROF_CACHE_DIR": str(cache), "LEGATE_PROF_WORKERS": "2",
           "LEGATE_PROF_HIDDEN_WINDOW": "1", "QT_QPA_PLATFORM": "offscreen"}
    r = subprocess.run([sys.executable, "-c", CLOSE_MID_LOAD, *map(str, run)], env=env,
                       capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split()[:1] == ["mid-load"], r.stdout
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    left = [p.name for p in scratch.iterdir()]
    assert not [n for n in left if n.startswith("legate_prof_handover_")], left
    assert not [n for n in _cache_files(cache) if n.endswith(".tmp")]
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(scratch) not in ps  # no worker still building into the hand-over folder


SHOWN_THEN_WAIT = """
import sys
from PySide6 import QtCore, QtWidgets
app = QtWidgets.QApplication(["legate_prof"])
from legate_prof.viewer.app import MainWindow

def shown():
    win = next((w for w in app.topLevelWidgets() if isinstance(w, MainWindow)), None)
    if win is None or win.loading is not None or win.timeline is None:
        return
    timer.stop()
    print("shown", flush=True)  # (the test sends Ctrl-C: the window's thread is in Qt's loop)

timer = QtCore.QTimer()
timer.timeout.connect(shown)
timer.start(20)
from legate_prof.cli import main
sys.exit(main(["view", *sys.argv[1:]]))
"""

CTRL_C_WHILE_MADE = """
import os, signal, sys
import legate_prof.cli.commands.view as view
real = view._window_problem

def then_ctrl_c():  # (Qt being imported, the window not made yet)
    os.kill(os.getpid(), signal.SIGINT)
    return real()

view._window_problem = then_ctrl_c
from legate_prof.cli import main
sys.exit(main(["view", *sys.argv[1:]]))
"""


@pytest.mark.parametrize("when", ["shown", "while the window is made"])
def test_ctrl_c_closes_the_viewer_with_130(tmp_path, when):
    """Ctrl-C in the terminal was ignored by `view` (the window stayed: Qt's loop runs in
    C++, where Python's handler never ran), and a Ctrl-C while the window was being made
    was swallowed by Qt's callbacks or, inside Qt's imports, aborted the process; the
    KeyboardInterrupt left pending came out as a traceback later.  Now it closes the window
    and the command ends with 130, no traceback, whenever it comes."""
    import signal
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LEGATE_PROF_CACHE_DIR": "",
           "LEGATE_PROF_HIDDEN_WINDOW": "1", "QT_QPA_PLATFORM": "offscreen"}
    script = SHOWN_THEN_WAIT if when == "shown" else CTRL_C_WHILE_MADE
    p = subprocess.Popen([sys.executable, "-c", script, str(ROOT / "fixtures" / "real" / "mpi4")], env=env, cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    if when == "shown":
        assert p.stdout.readline() == "shown\n", p.communicate()
        p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130 and "Traceback" not in err, (p.returncode, err[-2000:])


def test_a_wheel_step_redraws_only_the_strips_in_view_and_off_the_windows_thread(
        qtbot, ranks4, monkeypatch):
    """A wheel step in the window draws no utilization strip on the window's thread: the
    frame stretches the pictures it has, and the tiles' thread draws each strip in view
    crisp at the new scale — those in view only, never the groups scrolled out of it (at 10 M
    items each strip drawn in the frame was ~1.4 ms of a 90-155 ms step).  Settled, the
    picture is the one drawn in the frame itself (as a screenshot draws it)."""
    from legate_prof.viewer.timeline import summary_strip
    from legate_prof.viewer.timeline.tile_worker import TileWorker
    drawn, asked = [], []
    render, ask = summary_strip.render_strip, TileWorker.ask

    def recording_render(group, *a):
        drawn.append((group, threading.current_thread() is threading.main_thread()))
        return render(group, *a)

    def recording_ask(self, item):
        if item.cache == "strip":
            asked.append(item.key)
        return ask(self, item)
    monkeypatch.setattr(summary_strip, "render_strip", recording_render)
    monkeypatch.setattr(TileWorker, "ask", recording_ask)
    src = as_source(load_profile([str(p) for p in ranks4], ranked=True))
    src.info()  # (its notices known: the banner is there from the start, the view's height kept)
    win = _open(qtbot, src, ranks4)
    tl = win.timeline
    qtbot.waitUntil(tl.item.settled, timeout=LOAD_MS)
    strips = [(e.rank, e.group) for e in tl.lane_layout.entries if e.kind == "summary"]
    t0, t1 = tl.time_range()
    for step in range(3):  # wheel steps in, each drawn as one frame
        drawn.clear()
        del asked[:]
        span = (t1 - t0) * 0.85 ** (step + 1)
        mid = (t0 + t1) / 2
        tl.set_time_range(mid - span / 2, mid + span / 2, remember=False)
        tl.grab()
        qtbot.waitUntil(tl.item.settled, timeout=LOAD_MS)
        in_view = [(e.rank, e.group) for e in tl.lane_layout.visible(*tl.vb.viewRange()[1])
                   if e.kind == "summary"]  # (the notices' banner may have come meanwhile)
        assert 0 < len(in_view) < len(strips)  # (some groups are below the window's edge)
        assert drawn and not any(main for _, main in drawn)
        assert set(asked) == set(in_view), step
    qtbot.waitUntil(tl.item.settled, timeout=LOAD_MS)
    settled = tl.grab().toImage()
    tl.item.stop_background()
    tl.item.tiles = None  # everything drawn in the frame, as a screenshot draws it
    tl.item.refresh()
    assert tl.grab().toImage() == settled


def test_a_refreshed_timeline_is_not_settled_until_it_is_drawn_again(qtbot, ranks4):
    """``refresh`` throws every strip away: until a frame has drawn them again the picture
    is not final (it said settled at once, and a grab then showed empty strips)."""
    win = _open(qtbot, load_profile([str(p) for p in ranks4], ranked=True), ranks4)
    tl = win.timeline
    qtbot.waitUntil(tl.item.settled, timeout=LOAD_MS)
    tl.item.refresh()
    assert not tl.item.settled()
    qtbot.waitUntil(tl.item.settled, timeout=LOAD_MS)
    assert not tl.item.last_stats["pending"]


def test_a_tile_made_while_a_coarser_one_is_shown_is_made_for_the_view(qtbot, ranks4):
    """Zoomed in 10x from the whole run, the lanes show their coarser tiles while the tiles'
    thread makes the new ones: those are made for the view's pixels, as a frame drawn at
    once makes them (they were made for the coarser tile's cells: 8x finer than a pixel,
    ten times the rectangles, 25,737 instead of 2,591 in a frame of 10 M items)."""
    src = as_source(load_profile([str(p) for p in ranks4], ranked=True))
    src.info()  # (its notices known: the view's height stays)
    win = _open(qtbot, src, ranks4)
    tl = win.timeline
    tl.expand(["cpu", "utility"])
    tl.scroll_to(next(e.y for e in tl.lane_layout.entries if e.kind == "lane") - 1)
    qtbot.waitUntil(tl.item.settled, timeout=LOAD_MS)
    t0, t1 = tl.time_range()
    mid, span = (t0 + t1) / 2, (t1 - t0) / 10
    tl.set_time_range(mid - span / 2, mid + span / 2, remember=False)
    tl.grab()
    qtbot.waitUntil(tl.item.settled, timeout=LOAD_MS)
    settled = tl.grab().toImage()
    rects = tl.item.last_stats["rects"]
    tl.item.stop_background()
    tl.item.tiles = None  # everything made in the frame, as a screenshot makes it
    tl.item.refresh()
    fresh = tl.grab().toImage()
    assert rects == tl.item.last_stats["rects"] > 0
    assert fresh == settled


def test_tiles_arriving_while_others_are_computed_are_drawn_in_one_frame(qtbot, ranks4):
    """Each tile that arrived asked for a frame of the whole view of its own (21 frames in
    the first frame of 10 M cached items, most of its work on the window's thread); those
    arriving while the tiles' thread still computes others are drawn in one frame."""
    from legate_prof.viewer.timeline.item import TimelineItem
    from legate_prof.viewer.timeline.layout import LaneLayout
    from legate_prof.viewer.timeline.tile_worker import Ask
    frames = []

    class FramesCounted(TimelineItem):  # (not an attribute set on the Qt object and put
        def update(self, *a):           # back after the test: that crashed the suite once)
            frames.append(1)
    src = as_source(load_profile([str(p) for p in ranks4], ranked=True))
    item = FramesCounted(src, LaneLayout.default(src))
    item.compute_in_background()
    gate = threading.Event()
    item.tiles.ask(Ask("lane", 0, (), lambda: gate.wait(LOAD_MS / 1000)))
    item.tiles.ask(Ask("lane", 1, (), lambda: None))
    try:
        qtbot.waitUntil(lambda: item.tiles.pending() == 2, timeout=LOAD_MS)
        for lane in (7, 8):  # two arrive while the thread still has two to compute
            item._tile_done("lane", lane, object())
        assert frames == []
        qtbot.waitUntil(lambda: frames == [1], timeout=LOAD_MS)  # one frame draws both
    finally:
        gate.set()
    qtbot.waitUntil(lambda: item.tiles.pending() == 0, timeout=LOAD_MS)
    item.stop_background()


class GatedSource(ProfileSource):
    """A profile whose utilization strips wait for ``gate`` (a test decides when they
    arrive): never at hand, so the window asks them of its tiles' thread."""

    def __init__(self, model):
        super().__init__(model)
        self.gate = threading.Event()

    def summary_at_hand(self, *a):
        return False

    def summary_tile(self, *a, **k):
        self.gate.wait(LOAD_MS / 1000)
        return super().summary_tile(*a, **k)


def test_a_profile_shown_asks_its_strips_before_the_window_paints(qtbot, ranks4, monkeypatch):
    """A profile shown in an open window lays the window out at once and makes its view's
    picture, asking the view's strips of the tiles' thread, before the window is painted
    (they were asked 20-30 ms into the cached first frame of 10 M items, once the rest of
    the window had been laid out and painted); the window's first frame draws that picture
    as it is, and the settled view is a timeline opened there."""
    from PySide6 import QtCore
    from legate_prof.viewer.app import MainWindow
    from legate_prof.viewer.timeline.item import TimelineItem
    src = GatedSource(load_profile([str(p) for p in ranks4], ranked=True))
    src.info()  # (its notices known: the view's height stays)
    win = MainWindow(files=[str(ranks4[0])], load=lambda progress: src)
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitExposed(win)
    pictures = []
    real = TimelineItem._paint_view
    monkeypatch.setattr(TimelineItem, "_paint_view",
                        lambda self, *a: (pictures.append(1), real(self, *a)))
    try:
        win._show_source(src, [str(ranks4[0])])  # (as a load's end shows it)
        item = win.timeline.item
        assert pictures == [1] and ("summary" in {c for c, _ in item._asked})
        assert item.tiles.pending() > 0
        painted = []

        class Painted(QtCore.QObject):
            def eventFilter(self, obj, ev):
                if ev.type() == QtCore.QEvent.Type.Paint:
                    painted.append(1)
                return False
        spy = Painted()
        win.timeline.viewport().installEventFilter(spy)
        qtbot.waitUntil(lambda: bool(painted), timeout=LOAD_MS)
        assert pictures == [1]  # (the window's frame drew the picture made ahead)
    finally:
        src.gate.set()
    qtbot.waitUntil(item.settled, timeout=LOAD_MS)
    settled = win.timeline.grab().toImage()
    item.stop_background()
    item.tiles = None  # everything made in the frame, as a screenshot makes it
    item.refresh()
    assert win.timeline.grab().toImage() == settled


def test_a_first_frame_draws_the_strips_at_hand_itself(qtbot, ranks4, tmp_path, monkeypatch):
    """A profile whose strips are at hand (``summary_at_hand``: a cache entry's step
    functions with their sampled integrals) is shown with every strip in view drawn in its
    first picture, on the window's thread, none asked of the tiles' thread (the window drew
    two more frames as they came: a cached first frame of 10 M items 40 ms later); that
    picture is the settled view, as a timeline opened there draws it.  A wheel step then
    asks the tiles' thread for the strips at the new scale, as before."""
    from legate_prof.model.intervals import StepIntegral
    from legate_prof.store.bundle import write_bundle
    from legate_prof.store.bundle_file import read_bundle
    from legate_prof.viewer.app import MainWindow
    from legate_prof.viewer.timeline.tile_worker import TileWorker
    monkeypatch.setattr(StepIntegral, "SAMPLED_MIN", 64)  # (this profile's steps are small)
    monkeypatch.setattr(StepIntegral, "COARSE_MIN", 64)
    write_bundle(load_profile([str(p) for p in ranks4]), tmp_path / "run.lpbundle")
    model = read_bundle(tmp_path / "run.lpbundle")
    assert any(s._sampled is not None for s in model.utilization_steps.values())
    src = ProfileSource(model)
    src.info()  # (its notices known: the view's height stays)
    asked, drawn = [], []
    ask = TileWorker.ask
    monkeypatch.setattr(TileWorker, "ask", lambda self, item: (asked.append(item.cache),
                                                               ask(self, item)))
    win = MainWindow(files=[str(ranks4[0])], load=lambda progress: src)
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitExposed(win)
    from legate_prof.viewer.timeline import item as item_module
    real = item_module.strip_picture
    monkeypatch.setattr(item_module, "strip_picture", lambda *a: (
        drawn.append(threading.current_thread() is threading.main_thread()), real(*a))[1])
    win._show_source(src, [str(ranks4[0])])  # (as a load's end shows it)
    item = win.timeline.item
    rows = [(e.rank, e.group) for e in win.timeline.lane_layout.visible(
        *win.timeline.vb.viewRange()[1]) if e.kind == "summary"]
    assert len(rows) > 4 and set(rows) <= set(item._summary_img)
    assert drawn and all(drawn) and not {"summary", "strip"} & set(asked)
    assert item.settled()
    first = win.timeline.grab().toImage()
    item.stop_background()
    item.tiles = None  # everything made in the frame, as a screenshot makes it
    item.refresh()
    assert win.timeline.grab().toImage() == first
    item.compute_in_background()
    del drawn[:], asked[:]
    t0, t1 = win.timeline.time_range()
    win.timeline.set_time_range(t0 + (t1 - t0) / 8, t1 - (t1 - t0) / 8, remember=False)
    win.timeline.grab()
    qtbot.waitUntil(item.settled, timeout=LOAD_MS)
    assert "strip" in asked and drawn and not any(drawn)
    item.stop_background()


def test_a_tile_asked_again_before_its_result_arrives_is_not_computed_twice(qtbot):
    """A frame painted between a tile's computing and its arrival in the window's thread
    asks for it again: the result on its way answers (the first frame of a 4-rank run
    computed 9 of its 27 strips twice)."""
    from legate_prof.viewer.timeline.tile_worker import Ask, TileWorker
    worker, computed, got = TileWorker(), [], []
    worker.done.connect(lambda cache, key, result: got.append((key, result)))

    def ask(spec):
        worker.ask(Ask("summary", "cpu", spec, lambda: computed.append(spec) or spec))

    ask(1)
    for _ in range(500):  # (no Qt events run: its result stays on its way)
        if computed and worker.pending() == 0:
            break
        time.sleep(0.01)
    ask(1)  # (computed, not yet received)
    time.sleep(0.3)  # (time to compute it again, were it asked)
    assert computed == [1] and worker.pending() == 0
    qtbot.waitUntil(lambda: len(got) == 1, timeout=5000)
    ask(1)  # (received and gone from the worker: the item's cache has it from now on)
    ask(2)  # (another view's)
    qtbot.waitUntil(lambda: len(got) == 2, timeout=5000)
    assert computed == [1, 2] and got == [("cpu", 1), ("cpu", 2)]
    _ended(worker)


def test_no_tile_is_begun_while_a_frame_is_painted(qtbot):
    """The window's thread and the tiles' shared the interpreter's lock a switch interval at
    a time, and a wheel step's frame took a third longer than its own work: while a frame is
    painted (``holding``) an ask waits, and begins when the frame is done.  Nor is the
    tiles' thread woken by each ask meanwhile (to find the frame still painted): a wheel
    step's frame asks for every strip in view, and each wake took the lock back from the
    window's thread."""
    from legate_prof.viewer.timeline.tile_worker import Ask, TileWorker
    worker, begun, woken = TileWorker(), [], []
    notify = worker._cond.notify
    worker._cond.notify = lambda *a: (woken.append(worker._held), notify(*a))
    with worker.holding():
        worker.ask(Ask("lane", 1, (), lambda: begun.append(1)))
        worker.ask(Ask("strip", 2, (), lambda: begun.append(2)))
        with worker.holding():  # (a paint event inside another: holds nest)
            time.sleep(0.2)
        time.sleep(0.2)
        assert begun == [] and worker.pending() == 2
    for _ in range(500):
        if len(begun) == 2:
            break
        time.sleep(0.01)
    assert begun == [1, 2]
    assert woken == [1, 0]  # (as the inner frame ends, and the outer)
    worker.ask(Ask("lane", 3, (), lambda: begun.append(3)))  # (no frame: woken at once)
    for _ in range(500):
        if len(begun) == 3:
            break
        time.sleep(0.01)
    assert begun == [1, 2, 3] and woken == [1, 0, 0]
    _ended(worker)


def test_a_qt_object_a_thread_ran_is_let_go_in_the_windows_thread(qtbot):
    """A thread's end drops what it ran (``threading.Thread.run``): where the window had let
    go of the Qt object whose method it ran, the object was destroyed in that thread while
    the window's thread disconnected its signals (the suite's occasional segfault: a
    timeline's tiles' worker).  What a thread runs is held until the window's thread sees
    it has ended, and let go there."""
    import threading
    from PySide6 import QtCore
    from legate_prof.viewer.background import start_thread
    freed_in, go = [], threading.Event()

    class Job(QtCore.QObject):
        def run(self):
            go.wait(5)

        def __del__(self):
            freed_in.append(threading.current_thread() is threading.main_thread())

    job = Job()
    thread = start_thread(job.run, "legate_prof-test-job")
    del job  # (the window lets go while the thread runs)
    go.set()
    thread.join(5)
    assert not thread.is_alive() and freed_in == []  # (held: not freed in the thread)
    start_thread(lambda: None, "legate_prof-test-next").join(5)  # (ended ones let go of)
    assert freed_in == [True]


def _ended(worker):
    """A test's own tiles' worker stopped, its thread ended and what it sent delivered while
    it lives (a result queued for a worker already collected crashed the process)."""
    from PySide6 import QtWidgets
    worker.stop()
    worker.thread.join(5)
    QtWidgets.QApplication.processEvents()
