"""Frame times of a timeline widget (not a test): pans and wheel zoom steps, as a user makes them.

``measure_frames(w, t0, t1)`` for a ``make_timeline`` widget over [t0, t1]: the median of 5
frames each panned by 1 % at 1x, 10x and 1000x zoom; 12 wheel steps of 0.85x from the 10x view
(median and worst); the further frames until every row is at the new resolution.  Between
frames the Qt event loop runs, as between input events; tiles are computed in their own
thread, as the window computes them (``compute_in_background``): a frame draws what is ready.
Each figure is wall time, and (``*_cpu_ms``) the CPU time of the window's thread for the same
frames, which a loaded machine disturbs less.
"""

import time


def show_until_drawn(win):
    """A ``MainWindow`` shown on a full-HD screen (1920 x 1080) and its load begun, as `view`
    opens it; returns once its timeline's lanes in view are all drawn from their tiles."""
    from PySide6 import QtWidgets
    win.resize(1920, 1080)
    win.show()
    win.start_loading()
    while win.timeline is None or win.timeline.source is None or \
            not win.timeline.item.settled():
        QtWidgets.QApplication.processEvents()
        time.sleep(0.002)


def _settle(w, limit_s=120.0):
    """Frames until the view is drawn whole (every tile in: ``settled``)."""
    from PySide6 import QtWidgets
    w.grab()
    end = time.perf_counter() + limit_s
    while not w.item.settled() and time.perf_counter() < end:
        QtWidgets.QApplication.processEvents()
        time.sleep(0.002)
        w.grab()


def _timed_grab(w, times, cpu=None):
    from PySide6 import QtWidgets
    t, c = time.perf_counter(), time.thread_time()
    w.grab()
    times.append(time.perf_counter() - t)
    if cpu is not None:
        cpu.append(time.thread_time() - c)
    QtWidgets.QApplication.processEvents()  # the event loop between input events


def measure_frames(w, t0, t1):
    from legate_prof.viewer.background import favour_the_window
    favour_the_window()  # as the window's thread: the interpreter's lock comes back fast
    w.item.compute_in_background()  # as the window runs: no frame waits for a tile
    out = {}
    mid = (t0 + t1) / 2
    for zoom in (1, 10, 1000):
        span = (t1 - t0) / zoom
        w.set_time_range(mid - span / 2, mid + span / 2, remember=False)
        _settle(w)  # warm: the view at rest
        times, cpu = [], []
        for i in range(5):  # pan a little each frame, as a drag does
            a = mid - span / 2 + span * 0.01 * i
            w.set_time_range(a, a + span, remember=False)
            _timed_grab(w, times, cpu)
        times.sort()
        cpu.sort()
        out[f"frame_{zoom}x_ms"] = 1000 * times[len(times) // 2]
        out[f"frame_{zoom}x_cpu_ms"] = 1000 * cpu[len(cpu) // 2]
        out[f"rects_{zoom}x"] = w.item.last_stats.get("rects", 0)
    span = (t1 - t0) / 10
    w.set_time_range(mid - span / 2, mid + span / 2, remember=False)
    _settle(w)
    times, cpu = [], []
    for _ in range(12):
        span *= 0.85
        w.set_time_range(mid - span / 2, mid + span / 2, remember=False)
        _timed_grab(w, times, cpu)
    steps = sorted(times)
    cpu.sort()
    out["zoom_step_median_ms"] = 1000 * steps[len(steps) // 2]
    out["zoom_step_max_ms"] = 1000 * steps[-1]
    out["zoom_step_median_cpu_ms"] = 1000 * cpu[len(cpu) // 2]
    out["zoom_step_max_cpu_ms"] = 1000 * cpu[-1]
    n_settle = 0
    while not w.item.settled() and n_settle < 500:
        time.sleep(0.002)
        _timed_grab(w, times, cpu)
        n_settle += 1
    out["zoom_settle_frames"] = n_settle
    out["zoom_worst_incl_settle_ms"] = 1000 * max(times)
    out["zoom_worst_incl_settle_cpu_ms"] = 1000 * max(cpu)
    return out
