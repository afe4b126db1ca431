"""Frame times of a timeline widget (not a test): pans and wheel zoom steps, as a user makes them.

``measure_frames(w, t0, t1)`` for a ``make_timeline`` widget over [t0, t1]: the median of 5
frames each panned by 1 % at 1x, 10x and 1000x zoom; 12 wheel steps of 0.85x from the 10x view
(median and worst); the further frames until every row is at the new resolution.  Between
frames the Qt event loop runs, as between input events; the viewer's recompute budget is on.
"""

import time


def _settle(w):
    w.grab()
    while w.item.last_stats.get("pending"):
        w.item._continue()
        w.grab()


def _timed_grab(w, times):
    from PySide6 import QtWidgets
    t = time.perf_counter()
    w.grab()
    times.append(time.perf_counter() - t)
    QtWidgets.QApplication.processEvents()  # the event loop between input events


def measure_frames(w, t0, t1):
    from legate_prof.viewer.app import FRAME_BUDGET_S
    w.item.budget_s = FRAME_BUDGET_S  # as the interactive viewer runs
    out = {}
    mid = (t0 + t1) / 2
    for zoom in (1, 10, 1000):
        span = (t1 - t0) / zoom
        w.set_time_range(mid - span / 2, mid + span / 2, remember=False)
        _settle(w)  # warm: the view at rest
        times = []
        for i in range(5):  # pan a little each frame, as a drag does
            a = mid - span / 2 + span * 0.01 * i
            w.set_time_range(a, a + span, remember=False)
            _timed_grab(w, times)
        times.sort()
        out[f"frame_{zoom}x_ms"] = 1000 * times[len(times) // 2]
        out[f"rects_{zoom}x"] = w.item.last_stats.get("rects", 0)
    span = (t1 - t0) / 10
    w.set_time_range(mid - span / 2, mid + span / 2, remember=False)
    _settle(w)
    times = []
    for _ in range(12):
        span *= 0.85
        w.set_time_range(mid - span / 2, mid + span / 2, remember=False)
        _timed_grab(w, times)
    steps = sorted(times)
    out["zoom_step_median_ms"] = 1000 * steps[len(steps) // 2]
    out["zoom_step_max_ms"] = 1000 * steps[-1]
    n_settle = 0
    while w.item.last_stats.get("pending") and n_settle < 50:
        w.item._continue()
        _timed_grab(w, times)
        n_settle += 1
    out["zoom_settle_frames"] = n_settle
    out["zoom_worst_incl_settle_ms"] = 1000 * max(times)
    return out
