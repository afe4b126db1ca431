"""The viewer's event loop while profiles open (not a test): the longest stall of the window's
thread, measured by a 5 ms timer, while it opens the bundled example as the command line
does, then File → Open of a run, then a drop of another.

    python benchmarks/bench_viewer_open.py [--open FILES...] [--drop FILES...] [--xvfb]

Per step: seconds to the timeline, to the findings, and the longest gap between two ticks
of the timer (a gap over 100 ms is a freeze a user feels).  Run under a real X server
(``xvfb-run``) or offscreen (QT_QPA_PLATFORM=offscreen, the default here).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


class StallMeter:
    """The longest interval between ticks of a 5 ms timer on the window's thread."""

    def __init__(self):
        from PySide6 import QtCore
        self.timer = QtCore.QTimer()
        self.timer.setTimerType(QtCore.Qt.TimerType.PreciseTimer)
        self.timer.timeout.connect(self._tick)
        self.reset()
        self.timer.start(5)

    def reset(self):
        self.last = time.perf_counter()
        self.worst = 0.0

    def _tick(self):
        now = time.perf_counter()
        self.worst = max(self.worst, now - self.last)
        self.last = now


def run_until(app, cond, limit=600):
    t0 = time.perf_counter()
    while not cond():
        app.processEvents()
        time.sleep(0.001)
        if time.perf_counter() - t0 > limit:
            raise TimeoutError("the window did not get there")
    return time.perf_counter() - t0


def step(app, win, meter, name, start):
    """Start a load (``start()``), then wait for the timeline and the findings of it."""
    meter.reset()
    before = win._loads
    t0 = time.perf_counter()
    start()
    run_until(app, lambda: win._loads > before and win.timeline is not None)
    t_timeline = time.perf_counter() - t0
    run_until(app, lambda: win.statusBar().currentMessage().endswith(("findings", "finding"))
              or win.statusBar().currentMessage().startswith("findings unavailable"))
    t_findings = time.perf_counter() - t0
    for _ in range(20):  # frames after: the first paints at the new profile
        win.timeline.repaint()
        app.processEvents()
    out = {"step": name, "timeline_s": round(t_timeline, 3), "findings_s": round(t_findings, 3),
           "worst_stall_ms": round(meter.worst * 1000, 1),
           "findings": len(win.findings.findings) if win.findings else 0,
           "central_px": win.centralWidget().width(), "window_px": win.width()}
    print(out, flush=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--open", nargs="*", default=[], help="profiles for File → Open")
    ap.add_argument("--drop", nargs="*", default=[], help="profiles dropped on the window")
    ap.add_argument("--cache", action="store_true", help="use the cache as `view` does")
    args = ap.parse_args(argv)
    from PySide6 import QtCore, QtGui, QtWidgets

    from legate_prof.analyze.insights import find_insights
    from legate_prof.cli.common import bundled_example, load_with_progress
    from legate_prof.viewer.app import MainWindow
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(["bench"])

    def opener(paths, progress):  # as `legate_prof view` opens more (cli/commands/view.py)
        ns = argparse.Namespace(cache=args.cache, quiet=True)
        return load_with_progress(paths, ns, progress, ranked=True,
                                  cache="later" if args.cache else False)
    example = [bundled_example()]
    win = MainWindow(files=example, load=lambda p: opener(example, p), findings=find_insights,
                     opener=opener)
    win.resize(1600, 1000)
    win.show()
    meter = StallMeter()
    results = [step(app, win, meter, "command line: bundled example", win.start_loading)]
    docks = win.findChildren(QtWidgets.QDockWidget)
    win.resizeDocks(docks, [1100] * len(docks), QtCore.Qt.Orientation.Horizontal)  # wide
    app.processEvents()
    if args.open:
        results.append(step(app, win, meter, f"File → Open {len(args.open)} files",
                            lambda: win.open_files(args.open)))
    if args.drop:
        def drop():
            data = QtCore.QMimeData()
            data.setUrls([QtCore.QUrl.fromLocalFile(os.path.abspath(f)) for f in args.drop])
            pos, copy = QtCore.QPointF(300, 300), QtCore.Qt.DropAction.CopyAction
            left, none = QtCore.Qt.MouseButton.LeftButton, QtCore.Qt.KeyboardModifier.NoModifier
            enter = QtGui.QDragEnterEvent(pos.toPoint(), copy, data, left, none)
            QtCore.QCoreApplication.sendEvent(win, enter)  # as a drag arriving does
            QtCore.QCoreApplication.sendEvent(win, QtGui.QDropEvent(pos, copy, data, left, none))
        results.append(step(app, win, meter, f"drop {len(args.drop)} files", drop))
    win.close()
    return results


if __name__ == "__main__":
    main()
