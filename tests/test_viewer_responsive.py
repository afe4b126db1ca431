"""A window that never waits on work (issue 36).

The window's thread only draws: the profile is read, described and laid out by the loader's
thread, tiles and utilization strips are computed by the timeline's tiles thread.  How long
the window goes without answering is measured, not tested (``benchmarks/freeze_probe.py``,
docs/performance.md).
No timed assertions: waits are for states, never for durations.
"""

import threading
from pathlib import Path

import pytest

from legate_prof.load.loader import load_profile
from legate_prof.query import ProfileSource

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

    def lane_tile(self, *a, **k):
        self._note("lane_tile")
        return super().lane_tile(*a, **k)

    def summary_tile(self, *a, **k):
        self._note("summary_tile")
        return super().summary_tile(*a, **k)

    def prepare_lanes(self, lanes):
        self._note("prepare_lanes")
        return super().prepare_lanes(lanes)


def test_the_windows_thread_computes_no_tile_no_lane_tree_no_stacking(qtbot, ranks4):
    """A profile opened in the window (as `view` and File → Open open one): its lane tree is
    described and laid out by the loader's thread, its lanes stacked and its tiles and
    utilization strips computed by the timeline's tiles thread — the window's thread only
    draws what arrives — and the picture is whole once they arrived."""
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
    assert {"info", "lane_tile", "summary_tile", "prepare_lanes"} <= kinds
    on_main = sorted({what for what, main in src.asked if main})
    assert not on_main, f"asked on the window's thread: {on_main}"
    img = win.timeline.grab().toImage()
    colours = {img.pixel(x, y) for x in range(200, img.width() - 20, 7)
               for y in range(40, img.height() - 40, 7)}
    assert len(colours) > 8  # boxes and utilization drawn, not a blank plot


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
