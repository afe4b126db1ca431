"""File → Export PNG of a window showing a profile (not a test): how long the window's thread
is held, and how long until the file is written.

    python benchmarks/bench_export_png.py /tmp/g1000 [--repeat 3] [--size 1400x900]

The profile is opened as ``view`` opens it (ranks unmerged, through the cache: a first run
builds the entry), in a window on the offscreen platform; once it has settled, Export PNG of
the view shown, ``--repeat`` times.  Per export: the seconds ``export_png`` held the window's
thread (its call), the longest gap of a 5 ms heartbeat ``QTimer`` from the call until the file
is written (the window's thread frozen: the call itself, and whatever the writing holds
after it), the seconds until the file is in place, how many times the lane tree was laid out
(``LaneLayout.rebuild``) and the picture painted (``TimelineItem._paint_view``), and
``QImage.save``'s seconds (the PNG's encoding) and thread.  Medians over the repeats last.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def counted(cls, name, counts, timed=None):
    """``cls.name`` counting its calls in ``counts[name]`` (and their seconds and threads in
    ``timed``)."""
    f = getattr(cls, name)

    def wrapper(*a, **k):
        counts[name] = counts.get(name, 0) + 1
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            if timed is not None:
                timed.append((time.perf_counter() - t,
                              threading.current_thread() is threading.main_thread()))
    setattr(cls, name, wrapper)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--size", default="1400x900")
    args = ap.parse_args(argv)
    from PySide6 import QtCore, QtGui, QtWidgets
    app = QtWidgets.QApplication(["legate_prof"])
    from legate_prof.load.loader import load_profile
    from legate_prof.query import as_source
    from legate_prof.viewer.app import MainWindow
    from legate_prof.viewer.timeline.item import TimelineItem
    from legate_prof.viewer.timeline.layout import LaneLayout

    t = time.perf_counter()
    src = as_source(load_profile(args.files, ranked=True))
    print(f"loaded {len(src.outline().lanes):,} lanes of {src.info().ranks_read} rank(s) in "
          f"{time.perf_counter() - t:.1f} s", flush=True)
    win = MainWindow(src, list(args.files))
    win.resize(*(int(x) for x in args.size.split("x")))
    win.show()
    end = time.monotonic() + 2.0
    while time.monotonic() < end:  # settled: its first frames and strips drawn
        app.processEvents()
        time.sleep(0.01)
    counts, saves = {}, []
    counted(LaneLayout, "rebuild", counts)
    counted(TimelineItem, "_paint_view", counts)
    counted(QtGui.QImage, "save", counts, saves)
    beat = {"last": time.perf_counter(), "gaps": []}

    def tick():
        now = time.perf_counter()
        beat["gaps"].append(now - beat["last"])
        beat["last"] = now
    heart = QtCore.QTimer()
    heart.setTimerType(QtCore.Qt.TimerType.PreciseTimer)
    heart.timeout.connect(tick)
    heart.start(5)
    pending = getattr(win, "exports_pending", lambda: False)
    rows = []
    out_dir = Path(os.environ.get("TMPDIR", "/tmp"))
    for k in range(args.repeat):
        out = out_dir / f"bench_export_png_{os.getpid()}_{k}.png"
        counts.clear()
        saves.clear()
        app.processEvents()
        beat["last"], beat["gaps"] = time.perf_counter(), []
        t0 = time.perf_counter()
        win.export_png(str(out))
        held = time.perf_counter() - t0
        beat["gaps"].append(time.perf_counter() - beat["last"])
        beat["last"] = time.perf_counter()
        while pending() or not out.exists():
            app.processEvents()
            time.sleep(0.001)
        written = time.perf_counter() - t0
        app.processEvents()
        size = out.stat().st_size
        out.unlink()
        enc = sum(s for s, _ in saves)
        where = "window's thread" if any(m for _, m in saves) else "a thread"
        rows.append((held, max(beat["gaps"]), written, enc))
        print(f"export {k + 1}: call {held:.3f} s, longest heartbeat gap "
              f"{1000 * max(beat['gaps']):.0f} ms, written after {written:.3f} s "
              f"({size / 1e6:.1f} MB); laid out {counts.get('rebuild', 0)}x, painted "
              f"{counts.get('_paint_view', 0)}x; PNG encoded in {enc:.3f} s in {where}",
              flush=True)
    med = [statistics.median(c) for c in zip(*rows)]
    print(f"median of {len(rows)}: call {med[0]:.3f} s, longest gap {1000 * med[1]:.0f} ms, "
          f"written {med[2]:.3f} s, encoding {med[3]:.3f} s")
    heart.stop()
    win.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
