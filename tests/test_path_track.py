"""The critical path readable at any size (issue 38, deliver 3; review 33, point 2; issue 35,
point 2), on real multi-rank runs rendered offscreen: at full view a summary track — which
rank and lane group held the path at each moment, coloured by kind — instead of a line per
step across every lane, the whole run represented; zoomed in, the steps one by one, an
inferred link dashed; what rests on inferred links hatched, and said in the header and
the status bar; steps of no time passed over by ``[`` / ``]``.  Counts, never timings.
"""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtGui  # noqa: E402

from legate_prof.analyze.path_track import path_track  # noqa: E402
from legate_prof.load.loader import load_profile  # noqa: E402
from legate_prof.present.colors import PATH_KIND_RGB  # noqa: E402
from legate_prof.query import as_source  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "fixtures" / "real"
MAGENTA = (200, 0, 150)  # viewer.timeline.path_overlay.PATH_COLOR


def _source(run):
    return as_source(load_profile(sorted(str(p) for p in (REAL / run).glob("legate_*.prof*")),
                                  ranked=True))


def _pixels(img):
    img = img.convertToFormat(QtGui.QImage.Format.Format_RGB32)
    w, h = img.width(), img.height()
    a = np.frombuffer(img.constBits(), np.uint8, count=h * img.bytesPerLine()).reshape(h, -1)
    return a[:, :w * 4].reshape(h, w, 4)[:, :, 2::-1].astype(int)  # BGRA -> RGB


def _near(px, rgb, tol=40):
    return np.abs(px - np.array(rgb)).sum(axis=-1) < tol


def _render(tmp_path, src, name, **kw):
    from legate_prof.viewer.screenshot import render_screenshot
    out, geo = render_screenshot(src, tmp_path / f"{name}.png", return_geometry=True,
                                 critical_path=True, width=1600, height=1000, **kw)
    return _pixels(QtGui.QImage(out)), geo


@pytest.mark.parametrize("run", ["mpi3", "mpi4"])
def test_the_full_view_draws_a_summary_track_not_a_line_per_step(qtbot, tmp_path, run):
    """At 1600 px the whole run's path (313 / 221 steps over 3 / 4 ranks) is too dense to
    draw step by step: the picture draws no link at all, only the few steps wide enough to
    outline, and a track at the top with a row per (rank, lane group) the path visits; its
    "whole run" row is coloured by kind over (nearly) every pixel of the run — the whole
    path, not its last steps.  Without the track (no ``path_track`` given) every step is
    linked across the lanes, as before: many times the path's colour in the lanes."""
    src = _source(run)
    track = path_track(src)
    px, geo = _render(tmp_path, src, "track", path_track=path_track)
    drawn = geo["path_drawn"]
    assert drawn["mode"] == "track" and drawn["lines"] == 0
    assert drawn["steps"] <= 10 < len(src.run_critical_path())  # (the wide ones, outlined)
    assert drawn["track_rects"] > 20
    ranks = {r for r, _ in track["rows"]}
    assert ranks == set(src.info().ranks) and len(track["rows"]) >= len(ranks)
    rows = geo["track"]
    assert set(rows) == {"legend", "all", *range(len(track["rows"]))}
    # the whole run's row: a kind's colour at (nearly) every pixel of the run
    x0 = int(geo["x_left"] + (track["run"][0] - geo["t0"]) / (geo["t1"] - geo["t0"])
             * (geo["x_right"] - geo["x_left"])) + 2
    x1 = int(geo["x_right"]) - 2
    ya, yb = rows["all"]
    line = px[int((ya + yb) / 2), x0:x1]
    coloured = np.zeros(len(line), bool)
    kinds_seen = set()
    for kind, rgb in PATH_KIND_RGB.items():
        hit = _near(line, rgb)
        coloured |= hit
        kinds_seen |= {kind} if hit.sum() > 3 else set()
    assert coloured.mean() > 0.9, coloured.mean()
    assert {"launch", "runtime"} <= kinds_seen
    # the lanes below the track: the path's colour only around the few wide steps
    below = int(max(b for _, b in rows.values())) + 2
    with_track = int(_near(px[below:], MAGENTA).sum())
    px_old, geo_old = _render(tmp_path, src, "steps")  # (no track: every step, linked)
    assert geo_old["path_drawn"]["mode"] == "steps" and geo_old["path_drawn"]["lines"] > 100
    top_old = int(geo_old["top"]) + 2
    old = int(_near(px_old[top_old:], MAGENTA).sum())
    assert with_track * 5 < old, (with_track, old)


def test_zoomed_in_the_steps_are_drawn_one_by_one_an_inferred_link_dashed(qtbot, tmp_path):
    """mpi3, 10 ms around the path's latest inferred link (2.4725 s): few steps, each
    outlined and linked — the inferred one drawn dashed —; the track hatched before that
    link (that part of the run is reached only through it) and not after; the header says
    how much of the run the path explains and how much rests on inferred links."""
    from legate_prof.viewer.screenshot import path_lines
    from legate_prof.viewer.timeline.critical_path import RunPath
    src = _source("mpi3")
    track = path_track(src)
    at = track["inferred_from_ns"]
    assert at == 2_472_510_881 and track["inferred_links"] == 2
    px, geo = _render(tmp_path, src, "zoom", path_track=path_track, start=at - 8_000_000,
                      stop=at + 2_000_000)
    drawn = geo["path_drawn"]
    assert drawn["mode"] == "steps" and drawn["lines"] >= 1 and drawn["inferred"] == 1
    x = geo["x_left"] + (at - geo["t0"]) / (geo["t1"] - geo["t0"]) * (geo["x_right"]
                                                                      - geo["x_left"])
    ya, yb = geo["track"][len(track["rows"]) - 1]  # (the last row: rank 2's)
    hatch = px[int(ya) + 2:int(yb) - 2]
    dark = np.abs(hatch - np.array([250, 247, 251])).sum(axis=-1) > 40  # (not the ground)
    left, right = dark[:, int(geo["x_left"]) + 4:int(x) - 6], dark[:, int(x) + 6:]
    assert left.mean() > 0.05 and right.mean() < left.mean() / 3, (left.mean(), right.mean())
    path = RunPath.from_steps(src, src.run_critical_path(), path_track)
    lines = path_lines(path, geo["t0"], geo["t1"], drawn)
    assert "steps one by one" in lines[0]
    assert lines[1].startswith("the critical path explains 2.880 s of the run's 2.880 s "
                               "(100.0 %); 1.508 s of it (52.4 %), everything before "
                               "2.473 s, rests on 2 inferred links")


def test_what_rests_on_inferred_links_begins_after_the_unknown_time_before_the_path():
    """mpi4's ranks 2-3: the path stops at what rank 0 (not given) did, and the run's first
    3 s are unknown; its one inferred link carries 3.8 ms.  The track hatched the whole run
    before the link and its words said "everything before 3.545 s" (a user's review): the
    hatching and the words begin after the unknown time."""
    from legate_prof.viewer.timeline.path_track import PathTrack
    src = as_source(load_profile([str(REAL / "mpi4")], ranked=True, ranks=(2, 3)))
    track = path_track(src)
    at, since, run = track["inferred_from_ns"], track["resting_from_ns"], track["run"]
    unknown = np.asarray(track["kind"]) == track["kinds"].index("unknown")
    assert at is not None and run[0] < since < at
    assert since == int(np.asarray(track["end"])[unknown].max())
    assert track["resting_ns"] <= at - since
    assert ", the path before 3.545 s, rests on 1 inferred link" in track["words"], track
    drawn = PathTrack(track)
    assert not drawn.resting_at(run[0]) and not drawn.resting_at(since - 1)
    assert drawn.resting_at(since) and not drawn.resting_at(at)
    assert "everything before" in path_track(_source("mpi3"))["words"]  # (nothing unknown)


def test_a_capped_drawing_says_so_in_the_header():
    """Without a summary track (no ``path_track``) the view draws at most the last
    ``MAX_STEPS_DRAWN`` of its steps: the header says how many were left out (as the HTML
    report's "its last 20,000 steps drawn")."""
    from legate_prof.viewer.screenshot import path_words
    from legate_prof.viewer.timeline.critical_path import RunPath
    from legate_prof.viewer.timeline.path_overlay import MAX_STEPS_DRAWN
    src = _source("mpi2")
    path = RunPath.from_steps(src, src.run_critical_path())
    said = path_words(path, 0, 10**13, {"mode": "capped", "capped": 40_848})
    assert said.endswith(f"only the last {MAX_STEPS_DRAWN:,} of the 40,848 in view drawn")
    assert path_words(path, 0, 10**13, {"mode": "steps"}) == \
        f"run's critical path: {len(path)} steps"


def test_a_walk_through_an_inferred_link_says_inferred():
    """``[`` from the step whose link was inferred names the guess in its sentence."""
    from legate_prof.viewer.timeline.critical_path import RunPath, step_on_path
    src = _source("mpi3")
    path = RunPath.from_steps(src, src.run_critical_path(), path_track)
    k = int(np.flatnonzero(path.inferred)[0])
    _j, at, said = step_on_path(src, path, int(path.item[k]), at=k)
    assert "inferred" in said and at > k, said


def test_the_tracks_tooltip_names_the_item_and_says_what_a_gap_is():
    """Hovering the path track gave the kind, lane and time only: a 228 ms "gap", a quarter
    of the guide's 1-rank run, said nothing of what it was, and a piece named no item (a
    review).  A piece held by an item names it; a gap says what a gap is."""
    from legate_prof.present.colors import PATH_KIND_MEANING
    from legate_prof.viewer.timeline.path_track import ALL_ROW, PathTrack
    src = _source("inefficient_1rank")
    track = PathTrack(path_track(src))
    gaps = np.flatnonzero(np.asarray(track.kinds, object)[track.kind] == "gap")
    held = np.flatnonzero(track.item >= 0)
    assert len(gaps) and len(held)
    g = int(gaps[np.argmax(track.end[gaps] - track.begin[gaps])])
    t = (int(track.begin[g]) + int(track.end[g])) // 2
    text = track.hover_text(ALL_ROW, "the whole run", t, 1, item_title=src.item_title)
    assert f"(gap: {PATH_KIND_MEANING['gap']})" in text and "held by" not in text
    h = int(held[np.argmax(track.end[held] - track.begin[held])])
    t = (int(track.begin[h]) + int(track.end[h])) // 2
    text = track.hover_text(ALL_ROW, "the whole run", t, 1, item_title=src.item_title)
    assert f"held by {src.item_title(int(track.item[h]))}" in text, text
