"""Costs where the findings are (issue 38, deliver 4) in the window, on a real 3-rank run:
the findings dock shows each finding's wall-clock cost and share of the run, the dearest
first, under the sentence of how much of the run the path explains (the report's words:
``analyze.costed_findings``); the status bar says how much of the run the drawn path
explains and how much rests on inferred links; the path's track appears at the top of the
lanes while it is drawn and goes with it."""

from html import escape
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtCore  # noqa: E402

from legate_prof.analyze.costed_findings import costed_findings  # noqa: E402
from legate_prof.analyze.path_track import path_track  # noqa: E402
from legate_prof.load.loader import load_profile  # noqa: E402
from legate_prof.present.units import format_ns  # noqa: E402
from legate_prof.query import as_source  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "fixtures" / "real"
WAIT_MS = 120_000


def _files(run):
    return sorted(str(p) for p in (REAL / run).glob("legate_*.prof*"))


def _window(qtbot, src, **kw):
    from legate_prof.viewer.app import MainWindow
    win = MainWindow(src, ["x.prof"], **kw)
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitExposed(win)
    return win


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
    walls = [f["wall_ns"] for f in panel.findings]
    assert walls == sorted(walls, reverse=True)  # (the dearest first, however given)
    for k, f in enumerate(panel.findings):
        text = panel.item(k + 1).text()
        if f["wall_ns"]:
            assert text.startswith(f"{format_ns(f['wall_ns'])} · "
                                   f"{100.0 * f['wall_ns'] / run:.1f} % of the run — "), text
        else:
            assert text.startswith("none of the run — "), text
        assert escape(f["cost_words"]) in panel.item(k + 1).toolTip()  # (its words, whole)
    panel.itemClicked.emit(panel.item(1))  # (the first finding, not the sentence above it)
    qtbot.waitUntil(lambda: not win.busy())
    a, b = win.timeline.time_range()
    t0, t1 = panel.findings[0]["window_ns"]
    assert a <= t0 and t1 <= b


def test_the_status_bar_says_how_much_the_path_explains_and_its_track_comes_and_goes(qtbot):
    src = as_source(load_profile(_files("mpi3"), ranked=True))
    win = _window(qtbot, src, path_track=path_track)
    qtbot.waitUntil(lambda: win.critical_path is not None or win.critical_error is not None,
                    timeout=WAIT_MS)
    layout = win.timeline.lane_layout
    plain = layout.height
    assert win.critical_path.track is not None and not layout.path_entries()
    qtbot.keyClick(win.timeline, QtCore.Qt.Key.Key_P)
    said = win.statusBar().currentMessage()
    assert "explains 2.880 s of the run's 2.880 s (100.0 %)" in said, said
    assert "1.508 s of it (52.4 %), everything before 2.473 s, rests on 2 inferred links" \
        in said, said
    keys = [k for k, _ in layout.path_entries()]
    assert keys[:2] == ["legend", "all"] and len(keys) == 2 + len(win.critical_path.track.rows)
    assert layout.height > plain
    qtbot.keyClick(win.timeline, QtCore.Qt.Key.Key_P)
    assert not layout.path_entries() and layout.height == plain
