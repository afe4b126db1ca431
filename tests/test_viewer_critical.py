"""The critical path in the desktop viewer (real window, offscreen Qt, pytest-qt): computed in
a thread after the first frame and never waited for; ``[`` / ``]`` walk an item's chain with
the view following and undo coming back; ``P`` draws the run's path over the lanes, in the
window, in File → Export PNG and in ``screenshot --critical-path``; a damaged graph stops at
"unknown".  Also what the window says around it: the notices banner (clock skew, a slow
network, in the screenshot header's words), merged-band counts, ``view`` with no files.
No timed assertions: waits are for states (``waitUntil``), never for durations.
"""

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from tests_viewer_helpers import shown_window

pytest.importorskip("pytestqt")

from PySide6 import QtCore, QtGui  # noqa: E402

from legate_prof.load.loader import load_profile  # noqa: E402
from legate_prof.query import ProfileSource, as_source  # noqa: E402
from legate_prof.viewer import plain_text  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "fixtures" / "real"
WAIT_MS = 120_000
MAGENTA = (200, 0, 150)  # viewer.path_overlay.PATH_COLOR


def _files(run):
    return sorted(str(p) for p in (REAL / run).glob("legate_*.prof*"))


_window = shown_window  # (tests_viewer_helpers)


def _ready(qtbot, win):
    qtbot.waitUntil(lambda: win.critical_path is not None or win.critical_error is not None,
                    timeout=WAIT_MS)


def _key(qtbot, win, key, mods=QtCore.Qt.KeyboardModifier.NoModifier):
    qtbot.keyClick(win.timeline, key, mods)


def _details(win):
    t = win.details.table
    return {t.item(r, 0).text(): t.item(r, 1).text() for r in range(t.rowCount())}


def _magenta(img, rect=None):
    """How many pixels of ``img`` (within ``rect``: x0, y0, x1, y1) are the path's colour."""
    img = img.convertToFormat(QtGui.QImage.Format.Format_RGB32)
    w, h = img.width(), img.height()
    ptr = img.constBits()
    a = np.frombuffer(ptr, np.uint8, count=h * img.bytesPerLine()).reshape(h, -1)[:, :w * 4]
    px = a.reshape(h, w, 4)[:, :, 2::-1].astype(int)  # BGRA -> RGB
    if rect is not None:
        x0, y0, x1, y1 = (int(v) for v in rect)
        px = px[max(y0, 0):y1, max(x0, 0):x1]
    return int((np.abs(px - MAGENTA).sum(axis=2) < 40).sum())


class Gated(ProfileSource):
    """A source whose critical path waits for the test (``gate``) and says in which thread
    it was asked, and whether the window had drawn a frame by then."""

    def __init__(self, model):
        super().__init__(model)
        self.gate = threading.Event()
        self.asked = []
        self.window = None

    def prepare_critical_path(self):
        # (a frame drawn: its view range is known; its picture may be redrawing right now)
        drawn = self.window is not None and self.window.timeline.item._drawn_range is not None
        self.asked.append((threading.get_ident(), drawn))
        self.gate.wait()
        super().prepare_critical_path()


def test_computed_in_a_thread_after_the_first_frame_and_never_waited_for(qtbot):
    src = Gated(load_profile(_files("inefficient_1rank")))
    from legate_prof.viewer.app import MainWindow
    win = MainWindow(src, ["inefficient"])
    src.window = win
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitUntil(lambda: bool(src.asked), timeout=WAIT_MS)
    (thread, drawn), = src.asked
    assert thread != threading.get_ident() and drawn
    # meanwhile everything answers at once: details, hover text, the walk keys, the toggle
    i = int(src.search("BinaryOp")[0])
    win.go_to_item(i)
    qtbot.waitUntil(lambda: not win.busy())  # (worked out in a thread)
    assert _details(win)["Critical path"].startswith("being computed")
    assert "Waited for" not in _details(win) and "Created by" not in _details(win)
    _key(qtbot, win, QtCore.Qt.Key.Key_BracketLeft)
    assert "still being computed" in win.statusBar().currentMessage()
    assert win.timeline.item.selected == i
    _key(qtbot, win, QtCore.Qt.Key.Key_P)
    assert win.path_action.isChecked() and "being computed" in win.statusBar().currentMessage()
    src.gate.set()
    _ready(qtbot, win)
    assert win.critical_path is not None and len(win.critical_path) > 10
    assert "Critical path" not in _details(win)  # the same item, now with its link rows
    assert {"Waited for", "Created by"} & set(_details(win))
    assert win.statusBar().currentMessage().startswith("critical path: ")


def test_a_path_that_arrives_while_another_profile_loads_is_kept(qtbot):
    """The path of the profile shown arrives while File → Open reads another one, which then
    fails: the first profile comes back with its path."""
    src = Gated(load_profile(_files("inefficient_1rank")))
    from legate_prof.viewer.app import MainWindow
    release = threading.Event()

    def failing(paths, progress):
        release.wait()
        raise OSError("no such run")
    win = MainWindow(src, ["inefficient"], opener=failing)
    src.window = win
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: bool(src.asked), timeout=WAIT_MS)
    kept = win.timeline
    assert win.open_files(["elsewhere.prof"]) and win.timeline is None
    src.gate.set()
    qtbot.waitUntil(lambda: kept.critical_path is not None, timeout=WAIT_MS)
    release.set()
    qtbot.waitUntil(lambda: win.timeline is kept, timeout=WAIT_MS)
    assert win.critical_path is kept.critical_path and len(win.critical_path) > 10
    assert "could not open: no such run" in win.statusBar().currentMessage()
    i = next(int(k) for k in win.critical_path.item
             if (link := src.critical_predecessor(k)) is not None and link.predecessor is not None)
    win.go_to_item(i)
    qtbot.waitUntil(lambda: not win.busy())  # (worked out in a thread)
    _key(qtbot, win, QtCore.Qt.Key.Key_BracketLeft)  # the walk keys work on it again
    assert win.timeline.item.selected == src.critical_predecessor(i).predecessor


def test_walk_back_and_forward_with_the_view_following_and_undo(qtbot):
    src = as_source(load_profile(_files("inefficient_1rank"), ranked=True))
    win = _window(qtbot, src)
    _ready(qtbot, win)
    tl = win.timeline
    steps = src.run_critical_path()
    i = next(s.item for s in steps if s.via == "event"
             and src.critical_predecessor(s.item).predecessor is not None)
    j = src.critical_predecessor(i).predecessor
    win.go_to_item(i)
    qtbot.waitUntil(lambda: not win.busy())  # (worked out in a thread)
    before = tl.time_range()
    _key(qtbot, win, QtCore.Qt.Key.Key_BracketLeft)
    assert tl.item.selected == j
    a, b = tl.time_range()
    s, e = src.item_extent(j)
    assert a <= s and e <= b  # the view followed
    assert _details(win)["Title"] == src.item_title(j)
    waited = next(f.text for f in src.item_details(i) if f.label == "Waited for")
    assert win.statusBar().currentMessage() == f"← Waited for: {waited}"
    _key(qtbot, win, QtCore.Qt.Key.Key_BracketRight)
    after = src.critical_successors(j)
    first = int(after[np.argmin(src.items_columns(after)["start"])])
    assert tl.item.selected == first and i in after.tolist()
    ctrl = QtCore.Qt.KeyboardModifier.ControlModifier
    _key(qtbot, win, QtCore.Qt.Key.Key_Z, ctrl)
    assert tl.item.selected == j and _details(win)["Title"] == src.item_title(j)
    _key(qtbot, win, QtCore.Qt.Key.Key_Z, ctrl)
    assert tl.item.selected == i and tl.time_range() == pytest.approx(before)
    _key(qtbot, win, QtCore.Qt.Key.Key_Z, ctrl | QtCore.Qt.KeyboardModifier.ShiftModifier)
    assert tl.item.selected == j
    # the keys act wherever the focus is (the search results list, say)
    win.results.setFocus()
    qtbot.keyClick(win.results, QtCore.Qt.Key.Key_BracketLeft)
    assert tl.item.selected == src.critical_predecessor(j).predecessor


def test_while_the_path_is_drawn_the_walk_keys_follow_it_step_by_step(qtbot):
    """mpi2: the item that ended last (the program's External Thread) has no link of its own,
    but the drawn path goes on through its waits, calls and queues for 263 more steps: with
    the path drawn, ``[`` selects each step before in turn (an item holding several steps is
    walked through each) — a run of steps that hold no time on the path passed over in one
    press that says how many (issue 38: 3,086 of 3,254 steps were one press each) —, ``]``
    comes back the same way, and the path's first step says where it stops; with the path
    hidden, ``[`` is the item's own link again."""
    src = as_source(load_profile(_files("mpi2"), ranked=True))
    win = _window(qtbot, src)
    _ready(qtbot, win)
    tl = win.timeline
    path = win.critical_path
    n = len(path)
    last = int(path.item[0])
    none = path.end <= path.begin  # (mpi2: 26 steps of no time after the first)
    assert n > 100 and src.critical_predecessor(last) is None and none[1:].sum() > 10
    _key(qtbot, win, QtCore.Qt.Key.Key_P)
    win.go_to_item(last)
    qtbot.waitUntil(lambda: not win.busy())  # (worked out in a thread)
    k, presses, folded, same = 0, 0, 0, 0
    while k < n - 1:
        _key(qtbot, win, QtCore.Qt.Key.Key_BracketLeft)
        presses += 1
        nxt = k + 1
        while nxt < n - 1 and none[nxt]:  # (a run of steps of no time: passed over)
            nxt += 1
        run = nxt - k - 1
        assert tl.item.selected == int(path.item[nxt]), (k, nxt)
        msg = win.statusBar().currentMessage()
        assert msg.startswith(f"← step {n - nxt} of {n} of the critical path: "), msg
        # (whole, where the legend cuts the bar; a file's names in it shown as plain text)
        assert win.statusBar().toolTip() == plain_text.tooltip(msg)
        assert (f"passing {run:,} step{'' if run == 1 else 's'} of no time" in msg) == \
            bool(run), msg
        assert ("it holds no time on the path" in msg) == bool(none[nxt]), msg
        if not run and int(path.item[nxt]) == int(path.item[k]):  # (a wait between its pieces)
            same += 1
            assert "(the same item, before the wait it went on from)" in msg, msg
        folded += run
        k = nxt
        if presses == 12:  # ``]`` comes back the same way, then on again
            back = k - 1
            while back > 0 and none[back]:
                back -= 1
            _key(qtbot, win, QtCore.Qt.Key.Key_BracketRight)
            assert tl.item.selected == int(path.item[back])
            assert win.statusBar().currentMessage().startswith(f"→ step {n - back} of {n} ")
            k = back
    assert folded and same and presses < n - 1  # (a run of steps of no time took one press)
    _key(qtbot, win, QtCore.Qt.Key.Key_BracketLeft)
    assert tl.item.selected == int(path.item[-1])
    assert f"step 1 of {n} of the critical path, its first" in win.statusBar().currentMessage()
    _key(qtbot, win, QtCore.Qt.Key.Key_P)  # hidden: the item's own link
    win.go_to_item(last)
    qtbot.waitUntil(lambda: not win.busy())  # (worked out in a thread)
    _key(qtbot, win, QtCore.Qt.Key.Key_BracketLeft)
    assert tl.item.selected == last
    assert "no critical predecessor" in win.statusBar().currentMessage()


def test_the_runs_path_is_drawn_in_the_window_and_its_export(qtbot, tmp_path):
    src = as_source(load_profile(_files("inefficient_1rank"), ranked=True))
    win = _window(qtbot, src)
    _ready(qtbot, win)
    tl = win.timeline
    tl.set_time_range(*src.info().time_range)
    assert _magenta(tl.grab().toImage()) == 0
    _key(qtbot, win, QtCore.Qt.Key.Key_P)
    assert win.path_action.isChecked() and tl.item.path_shown
    img = tl.grab().toImage()
    assert _magenta(img) > 200
    assert tl.item.highlighted() is not None  # its items in full colour, the rest dimmed
    out = win.export_png(str(tmp_path / "export.png"))
    win.wait_for_exports()
    assert _magenta(QtGui.QImage(out)) > 200
    win.path_action.setChecked(False)  # the View menu toggles it too
    assert not tl.item.path_shown and _magenta(tl.grab().toImage()) == 0
    out = win.export_png(str(tmp_path / "plain.png"))
    win.wait_for_exports()
    assert _magenta(QtGui.QImage(out)) == 0


def test_each_step_is_outlined_where_its_item_is_in_the_screenshot(tmp_path):
    """``screenshot --critical-path``: every step wide enough to see, in an expanded lane,
    has the path's colour around its piece; the header and legend say the path is drawn."""
    from legate_prof.cli import main
    from legate_prof.viewer.screenshot import render_screenshot
    files = _files("efficient_1rank")
    src = as_source(load_profile(files, ranked=True))
    out, geo = render_screenshot(src, tmp_path / "cp.png", return_geometry=True,
                                 critical_path=True, width=1600, height=1000)
    img = QtGui.QImage(out)
    ns_px = (geo["t1"] - geo["t0"]) / (geo["x_right"] - geo["x_left"])
    seen = 0
    for s in src.run_critical_path():
        lane, row = src.item_lane(s.item)
        if lane not in geo["lanes"] or (s.end_ns - s.begin_ns) / ns_px < 8:
            continue
        ya, yb, rows = geo["lanes"][lane]
        x = geo["x_left"] + (s.begin_ns - geo["t0"]) / ns_px
        h = (yb - ya) / rows
        assert _magenta(img, (x - 4, ya + row * h - 3, x + 3, ya + (row + 1) * h + 3)), s
        seen += 1
    assert seen >= 3
    assert _magenta(img, (0, 40, 160, 100)) > 10  # the legend's swatch (below the header's rows)
    assert main(["screenshot", *files, "-o", str(tmp_path / "flag.png"),
                 "--critical-path"]) == 0
    assert main(["screenshot", *files, "-o", str(tmp_path / "none.png")]) == 0
    assert _magenta(QtGui.QImage(str(tmp_path / "flag.png"))) > 200
    assert _magenta(QtGui.QImage(str(tmp_path / "none.png"))) == 0


def test_a_damaged_graph_stops_at_unknown_without_a_traceback(qtbot, tmp_path):
    """Rank 1 of a two-rank run alone: what it waited for on rank 0 is in no loaded file.
    The run's path stops there, drawn with "unknown"; walking back from such an item says
    so and stays; a path that cannot be computed at all is said in the status bar."""
    src = as_source(load_profile([str(REAL / "mpi2b" / "legate_1.prof.gz")], ranked=True))
    win = _window(qtbot, src)
    _ready(qtbot, win)
    assert win.critical_path.stops_unknown
    _key(qtbot, win, QtCore.Qt.Key.Key_P)
    assert "(unknown)" in win.statusBar().toolTip()
    assert "stops at an unknown event" in win.statusBar().currentMessage()
    i = next(k for k in range(src.info().n_items)
             if (link := src.critical_predecessor(k)) is not None
             and link.via == "unknown_event")
    win.go_to_item(i)
    qtbot.waitUntil(lambda: not win.busy())  # (worked out in a thread)
    _key(qtbot, win, QtCore.Qt.Key.Key_BracketLeft)
    assert win.timeline.item.selected == i
    said = win.statusBar().currentMessage()
    assert said.startswith("Waited for: an event no loaded profile records") and \
        said.endswith("(unknown)")
    assert not win.timeline.item.paint_errors

    class Broken(type(src)):
        def prepare_critical_path(self):
            raise IndexError("event 0x8000 out of range")
    broken = Broken(load_profile([str(REAL / "mpi2b" / "legate_1.prof.gz")], ranked=True))
    win2 = _window(qtbot, broken)
    _ready(qtbot, win2)
    assert win2.critical_path is None
    assert "critical path unavailable: IndexError" in win2.statusBar().currentMessage()
    win2.go_to_item(0)
    qtbot.waitUntil(lambda: not win2.busy())  # (worked out in a thread)
    assert _details(win2)["Critical path"].startswith("unavailable (IndexError")


def test_a_profile_without_event_records_says_there_is_no_path(qtbot, tmp_path):
    """A crashed run's runtime stream alone holds no Realm events: the toggle and the walk
    keys say so (no empty path drawn, no "calls have none")."""
    from legate_prof.cli import main
    f = str(REAL / "inefficient_1rank" / "legate_0.runtime.prof")
    win = _window(qtbot, as_source(load_profile([f], ranked=True)))
    _ready(qtbot, win)
    _key(qtbot, win, QtCore.Qt.Key.Key_P)
    assert win.statusBar().currentMessage().startswith("no critical path: this profile records "
                                                       "no Realm events")
    win.go_to_item(0)
    qtbot.waitUntil(lambda: not win.busy())  # (worked out in a thread)
    _key(qtbot, win, QtCore.Qt.Key.Key_BracketLeft)
    assert win.statusBar().currentMessage().startswith("no critical path")
    assert main(["screenshot", f, "-o", str(tmp_path / "cp.png"), "--critical-path"]) == 0


# ---- what the window says around it --------------------------------------------------------

def test_notices_show_as_a_banner_in_the_screenshot_headers_words(qtbot):
    from legate_prof.viewer.notices import notice_lines
    from legate_prof.viewer.screenshot import _header_lines
    src = as_source(load_profile(_files("mpi2"), ranked=True))
    info = src.info()
    assert len(info.notices) == 2  # clock skew, a slow network
    win = _window(qtbot, src)
    banner = win.centralWidget().banner
    qtbot.waitUntil(banner.isVisible)  # (Qt shows a new central widget at its next turn)
    assert banner.lines() == notice_lines(info)
    assert banner.lines()[0].startswith("Note: Clock skew")
    header = [t for t, _ in _header_lines(info) if t.startswith("Note: ")]
    assert header and header[0].startswith(banner.lines()[0])
    one = _window(qtbot, as_source(load_profile(_files("efficient_1rank"), ranked=True)))
    assert not one.centralWidget().banner.isVisibleTo(one)


class LatencyGated(ProfileSource):
    """A source whose messages' latency (the notices) waits for the test (``gate``) and
    says in which thread it was asked."""

    def __init__(self, model):
        super().__init__(model)
        self.gate = threading.Event()
        self.asked = []

    def message_latency(self):
        self.asked.append(threading.current_thread() is threading.main_thread())
        self.gate.wait(WAIT_MS / 1000)
        return super().message_latency()


def test_the_first_frame_waits_for_no_notice_they_come_after_it(qtbot):
    """The notices (the messages' latency over every item: 0.7 s of a 1 s first frame of
    10 M cached items) are worked out after the first frame, off the window's thread: the
    lanes are drawn meanwhile, and the banner shows the notices once they are in."""
    from legate_prof.viewer.notices import notice_lines
    src = LatencyGated(load_profile(_files("mpi2")))
    try:
        win = _window(qtbot, src)
        qtbot.waitUntil(lambda: win.timeline.item.settled() and bool(src.asked),
                        timeout=WAIT_MS)
        assert not any(src.asked)  # (never on the window's thread)
        banner = win.centralWidget().banner
        assert not [line for line in banner.lines() if line.startswith("Note: ")]
    finally:
        src.gate.set()
    qtbot.waitUntil(lambda: banner.lines() == notice_lines(src.info()), timeout=WAIT_MS)
    assert banner.lines()[0].startswith("Note: Clock skew") and banner.isVisible()


def test_merged_bands_are_labelled_as_counts(qtbot, tmp_path):
    """Gray bands wide enough for a label say how many items merged there as a count
    ("×33"), as the report does, never a bare number that reads like a time."""
    from fixtures.synthetic import generate
    from legate_prof.viewer.screenshot import make_timeline
    files = generate(tmp_path, ranks=1, items=20_000, seed=3)
    w = make_timeline(as_source(load_profile([str(f) for f in files], ranked=True)), 1600, 1200)
    w.grab()
    labels = w.item.last_stats.get("band_labels")
    assert labels and all(t.startswith("×") and t[1:].split()[0].replace(",", "").isdigit()
                          for t in labels), labels
    # each on a light chip as wide as its text (dark digits): white on a band filled to its
    # middle was half on light gray, and items drawn over a band (a search's matches, the
    # path's) ran through the digits (GUI walks)
    chips = w.item.last_stats.get("band_label_chips")
    assert len(chips) == len(labels)
    for chip, text in zip(chips, labels):
        assert chip.height() >= 8 and chip.width() >= len(text) * 3, (chip, text)
    w.close()


def _view(cwd, *args):
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["PYTHONPATH"] = str(ROOT)
    p = subprocess.run([sys.executable, "-m", "legate_prof", "view", "--no-cache", *args],
                       cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    return p.returncode, [ln for ln in p.stderr.splitlines() if ln.strip()]


def test_view_without_files_opens_the_run_in_the_folder_or_says_how(tmp_path, qtbot):
    import shutil
    run = tmp_path / "run"
    run.mkdir()
    for f in _files("mpi2"):
        shutil.copy(f, run)
    rc, err = _view(run)
    assert rc == 0 and err[0] == ("legate_prof: no files given: opening the run in this "
                                  f"folder ({run}, 4 file(s))"), err
    assert (run / "legate_prof_view.png").is_file()
    empty = tmp_path / "empty"
    empty.mkdir()
    rc, err = _view(empty)
    assert rc == 0 and err[0].startswith("legate_prof: no files given and no profiles (.prof, "
                                         ".lpbundle) here: showing the bundled example; open "
                                         "a run with `legate_prof view FOLDER`"), err
    # a run recorded under another name (record --profile-name NAME: NAME_0.prof) is a run too
    named = tmp_path / "named"
    named.mkdir()
    for f in _files("mpi2"):
        shutil.copy(f, named / Path(f).name.replace("legate_", "runA_"))
    from legate_prof.cli.commands.view import HOW_TO_OPEN_HERE, default_inputs
    assert default_inputs(named)[0] == [str(named)]
    # the window: its title, status bar and banner say so, and how to open a run
    from legate_prof.cli.common import bundled_example
    from legate_prof.viewer.app import MainWindow
    files, said, example = default_inputs(empty)
    assert example and files == [bundled_example()] and "File → Open" in said
    assert default_inputs(run)[0] == [str(run)]
    win = MainWindow(load_profile(files, ranked=True), files, example_note=HOW_TO_OPEN_HERE)
    qtbot.addWidget(win)
    assert win.windowTitle().endswith("example_legate_0.prof (the bundled example)")
    assert HOW_TO_OPEN_HERE in win.statusBar().currentMessage()
    assert HOW_TO_OPEN_HERE in win.centralWidget().banner.lines()[0]


def test_a_pictures_header_says_how_much_of_the_runs_path_its_window_shows():
    """``screenshot --start/--stop --critical-path`` draws the run's path cut to the window:
    the header says the run's steps and how many of them are in view (none before the path
    begins), not the run's count alone as if the window were the run."""
    from legate_prof.viewer.timeline.critical_path import RunPath
    from legate_prof.viewer.screenshot import path_words
    src = as_source(load_profile(_files("mpi2"), ranked=True))
    path = RunPath.from_steps(src, src.run_critical_path())
    n = len(path)
    assert path_words(path, 0, 10**13) == f"run's critical path: {n} steps"
    inside = int(((path.end >= 4_400_000_000) & (path.begin <= 4_700_000_000)).sum())
    assert 0 < inside < n
    assert path_words(path, 4_400_000_000, 4_700_000_000) == \
        f"run's critical path: {n} steps, {inside} in view"
    assert path_words(path, 300_000_000, 1_500_000_000).endswith(", 0 in view")


def test_the_toolbar_holds_the_paths_toggle_with_its_state(qtbot):
    """The path was reachable by P and the View menu alone (a review): the toolbar holds a
    button for it, checked while the path is shown, and a click on it shows and hides it as
    P does."""
    src = as_source(load_profile(_files("inefficient_1rank"), ranked=True))
    win = _window(qtbot, src)
    _ready(qtbot, win)
    button = win._toolbar.widgetForAction(win.path_action)
    assert button is not None and button.isVisible() and button.isCheckable()
    assert button.text() == "Critical path (P)" and not button.isChecked()
    qtbot.mouseClick(button, QtCore.Qt.MouseButton.LeftButton)
    assert win.path_action.isChecked() and win.timeline.item.path_shown
    _key(qtbot, win, QtCore.Qt.Key.Key_P)  # (the key and the button are one toggle)
    assert not button.isChecked() and not win.timeline.item.path_shown


def test_a_step_clicked_on_the_paths_track_is_named_with_its_lane(qtbot):
    """A GUI walk: a click on the path's track selected an item on a lane far below the
    view (its details changed) and nothing said where.  The status bar says which step it
    is and on which lane, as a walk does; the track stays in sight (Zoom to goes)."""
    from legate_prof.analyze.path_track import path_track
    from legate_prof.viewer.app import MainWindow
    src = as_source(load_profile(_files("mpi4"), ranked=True))
    win = MainWindow(src, ["x.prof"], path_track=path_track)  # (as `view` makes it)
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitExposed(win)
    _ready(qtbot, win)
    tl = win.timeline
    tl.set_time_range(*src.info().time_range)
    _key(qtbot, win, QtCore.Qt.Key.Key_P)
    qtbot.waitUntil(lambda: bool(tl.lane_layout.path_entries()), timeout=WAIT_MS)
    path = tl.critical_path
    lanes = src.outline().lanes
    rows = {k: e for k, e in tl.lane_layout.path_entries() if k not in ("legend", "all")}
    # the longest step on a row of rank 1 (its lanes far below the track)
    best = None
    for key, e in rows.items():
        rank, group = path.track.rows[key]
        for k in range(len(path)):
            L = lanes[int(path.lane[k])]
            if L.rank == rank == 1 and L.group == group and \
                    (best is None or path.end[k] - path.begin[k] > best[0]):
                best = (path.end[k] - path.begin[k], k, e)
    assert best is not None
    _, k, entry = best
    t = (path.begin[k] + path.end[k]) / 2
    before = tl.time_range()
    y0, y1 = tl.vb.viewRange()[1]
    scene = tl.vb.mapViewToScene(QtCore.QPointF(t, entry.y + entry.height / 2))
    qtbot.mouseClick(tl.viewport(), QtCore.Qt.MouseButton.LeftButton,
                     pos=tl.mapFromScene(scene))
    item = int(path.item[k])
    assert tl.item.selected == item
    lane = lanes[src.item_lane(item)[0]]
    assert tl.vb.viewRange()[1] == [y0, y1] and tl.time_range() == before
    said = win.statusBar().currentMessage()
    assert said.startswith(f"step {len(path) - k:,} of {len(path):,} of the critical path: "
                           f"{src.item_title(item)}, on rank 1's lane {lane.short} "), said
