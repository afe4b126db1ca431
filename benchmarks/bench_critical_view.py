"""The critical path in the viewer (not a test): what it costs a user who opens a big profile.

    .venv/bin/python benchmarks/bench_critical_view.py --items 1000000 --ranks 2 [--dir D]

Opens the real window offscreen over a generated profile (``fixtures/generate.py`` unless
``--dir`` holds ``legate_*.prof``), as ``view`` does (ranks unmerged), and prints one JSON line:
the first frame (from ``show``), the time from it until the run's path is drawn-ready (computed
in the window's worker thread), the longest stall of the window's event loop meanwhile (a 5 ms
timer's longest gap: the worker shares the GIL), and the frame times with the path hidden and
shown (``frame_times.measure_frames``).  docs/performance.md holds the figures.
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def stress_path(src, n):
    """A made-up path of ``n`` steps over items spread through the run (the most the
    window draws in one view: ``path_overlay.MAX_STEPS_DRAWN``), each its item's extent."""
    import numpy as np

    from legate_prof.viewer.timeline.critical_path import RunPath, lanes_of
    ids = np.linspace(0, src.info().n_items - 1, n).astype(np.int64)
    cols = src.items_columns(ids)
    order = np.argsort(-cols["stop"], kind="stable")
    ids = ids[order]
    return RunPath(item=ids, begin=cols["start"][order], end=cols["stop"][order],
                   lane=lanes_of(src, ids), via=["event"] * n, stops_unknown=False)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=1_000_000)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--dir")
    ap.add_argument("--expand", action="store_true", help="open every lane group first")
    a = ap.parse_args(argv)
    d = a.dir or tempfile.mkdtemp(prefix="bench-cv-")
    files = sorted(glob.glob(os.path.join(d, "legate_*.prof")))
    if not files:
        subprocess.check_call([sys.executable, os.path.join(ROOT, "fixtures", "generate.py"),
                               "--items", str(a.items), "--ranks", str(a.ranks), "-o", d],
                              stdout=subprocess.DEVNULL)
        files = sorted(glob.glob(os.path.join(d, "legate_*.prof")))
    from PySide6 import QtCore, QtWidgets

    from frame_times import measure_frames
    from legate_prof.load.loader import load_profile
    from legate_prof.viewer.app import MainWindow
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(["bench"])
    model = load_profile(files, ranked=True)
    out = {"items": sum(p.model.n_items for p in model.item_parts()), "ranks": a.ranks}
    gaps, last = [], [time.perf_counter()]

    def tick():
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now
    timer = QtCore.QTimer()
    timer.timeout.connect(tick)
    t = time.perf_counter()
    win = MainWindow(model, files)
    win.resize(1600, 1000)
    win.show()
    while win.timeline.item._cache_key is None:
        app.processEvents()
    first = time.perf_counter()
    out["first_frame_s"] = round(first - t, 3)
    last[0] = first
    timer.start(5)
    while win.critical_path is None and win.critical_error is None:
        app.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 5)
    out["path_ready_after_first_frame_s"] = round(time.perf_counter() - first, 3)
    timer.stop()
    out["event_loop_longest_gap_ms"] = round(1000 * max(gaps or [0]), 1)
    out["path_steps"] = len(win.critical_path) if win.critical_path is not None else None
    tl = win.timeline
    if out["path_steps"] is not None and out["path_steps"] < 10:
        # generated profiles end with a top-level task nothing held up: draw instead the
        # chain of the task that ended last among those that waited for another
        import numpy as np

        from legate_prof.viewer.timeline.critical_path import RunPath
        src = win.source
        links = src.critical_links()
        ids = np.flatnonzero(links.items.via == 0)
        last = int(ids[np.argmax(links.values("stop", ids))])
        t = time.perf_counter()
        steps = src.run_critical_path(last)
        path = RunPath.from_steps(src, steps)
        out["path_walk_from_last_waiter_s"] = round(time.perf_counter() - t, 3)
        tl.set_critical_path(path)
        out["path_steps"] = len(path)
    t0, t1 = model.summary_model().extent() if hasattr(model, "summary_model") else (0, 1)
    if a.expand:
        tl.expand(all_groups=True)
    hidden = measure_frames(tl, t0, t1)
    tl.show_critical_path(True)
    shown = measure_frames(tl, t0, t1)
    tl.set_critical_path(stress_path(win.source, 20_000))
    stress = measure_frames(tl, t0, t1)
    for k in ("frame_1x_ms", "frame_10x_ms", "frame_1000x_ms", "zoom_step_median_ms",
              "zoom_step_max_ms"):
        out[k] = [round(hidden[k], 1), round(shown[k], 1), round(stress[k], 1)]
    out["frames"] = "[path hidden, path shown, a made-up path of 20,000 steps shown]"
    print(json.dumps(out))


if __name__ == "__main__":
    main()
