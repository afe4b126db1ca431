"""Where a wheel step's frame goes (not a test): the window's thread, phase by phase.

    python benchmarks/frame_split.py RUN_FOLDER [--expand] [--repeat 10] [--cache DIR]

Opens the run's window from its cache as `view` does (1920 x 1080, Qt offscreen; the cache is
filled first where it is empty), then, ``--repeat`` times: the view at a tenth of the run, at
rest, and 12 wheel steps of 0.85x, each drawn by ``grab`` (as ``frame_times.py`` times them)
and then by the window's own paint as the event loop runs.  Prints the median CPU time of the
window's thread per step (``grab``, the event loop after it) and each phase's CPU per step,
both paints together: the timeline's paint, its view's picture, the utilization rows, the
lanes gathered and drawn, the axes and their layout.  ``--expand`` opens the cpu, gpu_dev and
utility groups first (as ``bench_vs_reference.py``'s "expanded").  CPU time: a loaded
machine disturbs it less than the wall.  docs/performance.md holds the figures.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

PHASES = [  # (phase, module under legate_prof.viewer, Class.method)
    ("timeline paint", "timeline.item", "TimelineItem.paint"),
    ("  view's picture", "timeline.item", "TimelineItem._paint_view"),
    ("    utilization rows", "timeline.item", "TimelineItem._paint_summary"),
    ("      their values found", "timeline.item", "TimelineItem._summary_strip"),
    ("      their pictures found", "timeline.item", "TimelineItem._strip_picture"),
    ("      their scale marks", "timeline.item", "TimelineItem._paint_scale"),
    ("    lanes gathered", "timeline.item", "TimelineItem._collect_lane"),
    ("    lanes drawn", "timeline.item", "TimelineItem._flush"),
    ("time axes", "timeline.axes", "TimeAxis.paint"),
    ("  their layout", "timeline.axes", "TimeAxis.generateDrawSpecs"),
    ("whole paint event", "timeline.widget", "TimelineWidget.viewportEvent"),
]


def _timed(spent, phase, fn):
    def timed(*a, **k):
        c = time.thread_time()
        try:
            return fn(*a, **k)
        finally:
            spent[phase] = spent.get(phase, 0.0) + time.thread_time() - c
    return timed


def _window(run, expand):
    import importlib
    from frame_times import show_until_drawn
    from legate_prof.load.loader import load_profile
    from legate_prof.viewer.screenshot import app_instance
    app_instance()
    from legate_prof.viewer.app import MainWindow
    files = sorted(str(p) for p in Path(run).glob("legate_[0-9]*.prof"))
    model = load_profile(files, use_cache=True, ranked=True)
    spent = {}
    for phase, module, attr in PHASES:
        cls_name, meth = attr.split(".")
        cls = getattr(importlib.import_module(f"legate_prof.viewer.{module}"), cls_name)
        setattr(cls, meth, _timed(spent, phase, getattr(cls, meth)))
    win = MainWindow(files=files, load=lambda progress: model)
    show_until_drawn(win)
    if expand:
        win.timeline.expand(["cpu", "gpu_dev", "utility"])
    return win, spent


def measure(run, expand=False, repeat=10):
    """{"grab", "events": median CPU ms a step; phase: mean CPU ms a step}."""
    from PySide6 import QtWidgets
    from frame_times import _settle
    from legate_prof.viewer.background import favour_the_window
    win, spent = _window(run, expand)
    favour_the_window()
    w = win.timeline
    w.item.compute_in_background()
    t0, t1 = w.source.info().time_range
    mid = (t0 + t1) / 2
    grabs, events, totals, steps = [], [], {}, 0
    for rep in range(repeat):
        span = (t1 - t0) / 10
        w.set_time_range(mid - span / 2, mid + span / 2, remember=False)
        _settle(w)
        spent.clear()
        for _ in range(12):
            span *= 0.85
            w.set_time_range(mid - span / 2, mid + span / 2, remember=False)
            c = time.thread_time()
            w.grab()
            c2 = time.thread_time()
            QtWidgets.QApplication.processEvents()  # (the window's own paint)
            grabs.append(c2 - c)
            events.append(time.thread_time() - c2)
        if rep > 0:  # (the first: caches warm)
            steps += 12
            for k, v in spent.items():
                totals[k] = totals.get(k, 0.0) + v
    w.item.stop_background()
    out = {"grab": 1000 * sorted(grabs)[len(grabs) // 2],
           "events": 1000 * sorted(events)[len(events) // 2]}
    out.update({phase: 1000 * totals.get(phase, 0.0) / max(steps, 1) for phase, _, _ in PHASES})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="a run's folder (its legate_*.prof logs)")
    ap.add_argument("--expand", action="store_true")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--cache", help="the cache folder (default: a new temporary one)")
    a = ap.parse_args(argv)
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    cache = a.cache or tempfile.mkdtemp(prefix="lp_frames_")
    os.environ["LEGATE_PROF_CACHE_DIR"] = cache
    try:
        out = measure(a.run, a.expand, a.repeat)
    finally:  # (a cache made here holds the run's timeline: 1.6 GB at 10 x 1 M, one a run —
        if not a.cache:  # forty runs filled the disk)
            import shutil
            shutil.rmtree(cache, ignore_errors=True)
    print(f"{a.run} ({'expanded' if a.expand else 'as opened'}), CPU ms of the window's thread "
          f"per wheel step: grab {out['grab']:.2f} (median), the event loop after it "
          f"{out['events']:.2f} (median)")
    for phase, _, _ in PHASES:
        print(f"  {phase:24s} {out[phase]:6.2f}  (mean a step, both paints)")
    sys.stdout.flush()
    os._exit(0)  # (as `view` ends: no teardown of the window's threads)


if __name__ == "__main__":
    main()
