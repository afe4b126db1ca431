"""Where a cached first frame goes (not a test): the steps of `view`'s first frame of a run
from its cache, timed in the window as `benchmarks/bench_vs_reference.py`'s first-frame
child opens it (the load begun in a thread of lowered priority before the window is made,
the window at 1920 x 1080, Qt offscreen).

    python benchmarks/first_frame_split.py RUN_FOLDER [--repeat 5] [--cache DIR]

Per run, milliseconds after Qt is up: the window made, the model loaded, the profile shown
(its view's picture made and its utilization strips asked: ``paint_ahead``), the window's
first frame, the last strip in and the view settled (every lane in view drawn from its
tiles); and the CPU time of each thread (the window's, the load's, the
tiles'), which the other work of a shared machine disturbs less than the wall.  The median
over the runs is printed last.  A first run fills the cache (not counted).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, os, sys, threading, time
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6 import QtWidgets
from legate_prof.load.loader import load_profile
from legate_prof.viewer.screenshot import app_instance
app_instance()
from legate_prof.viewer.app import MainWindow
from legate_prof.viewer.timeline import item as item_module, tile_worker
from legate_prof.load.rank_workers import lower_this_thread
files = json.loads(sys.argv[1])
sys.path.insert(0, sys.argv[2])
from frame_times import show_until_drawn
marks, cpu = {}, {}
t0 = time.perf_counter()


def mark(what, first=True):
    if not first or what not in marks:
        marks[what] = 1000 * (time.perf_counter() - t0)


def timed(cls, name, what, first=True):
    real = getattr(cls, name, None)
    if real is None:  # (a tree before it)
        return

    def call(*a, **k):
        try:
            return real(*a, **k)
        finally:
            mark(what, first)
    setattr(cls, name, call)


timed(item_module.TimelineItem, "paint_ahead", "profile shown: strips asked")
timed(item_module.TimelineItem, "paint", "window's first frame")
asked = tile_worker.TileWorker.ask


def ask(self, item):
    compute = item.compute

    def computed():
        try:
            return compute()
        finally:
            mark("last strip or tile in", first=False)
            cpu["tiles"] = 1000 * time.thread_time()
    item.compute = computed
    return asked(self, item)


tile_worker.TileWorker.ask = ask
loaded = {}


def early_load():  # as `view` loads (cli.view.EarlyLoad)
    lower_this_thread()
    loaded["model"] = load_profile(files, use_cache=True, ranked=True)
    mark("model loaded")
    cpu["load"] = 1000 * time.thread_time()


c0 = time.thread_time()
loading = threading.Thread(target=early_load)
loading.start()
win = MainWindow(files=files, load=lambda progress: (loading.join(), loaded["model"])[1])
mark("window made")
show_until_drawn(win)
mark("settled")
cpu["window"] = 1000 * (time.thread_time() - c0)
print(json.dumps({"marks": marks, "cpu_ms": cpu}), flush=True)
win.timeline.item.stop_background()
os._exit(0)
"""


def run_once(files, cache):
    env = {**os.environ, "LEGATE_PROF_CACHE_DIR": cache}
    r = subprocess.run([sys.executable, "-c", CHILD, json.dumps(files), str(ROOT / "benchmarks")],
                       capture_output=True, text=True, env=env, timeout=600,
                       cwd=ROOT)  # (the child imports this tree, whatever the caller's folder)
    lines = r.stdout.strip().splitlines()
    if not lines:
        raise SystemExit(f"the child failed: {r.stderr[-3000:]}")
    return json.loads(lines[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="a run's folder (its legate_*.prof logs)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cache", help="the cache folder (default: a new temporary one)")
    a = ap.parse_args(argv)
    files = sorted(str(p) for p in Path(a.run).resolve().glob("legate_*.prof*")
                   if ".runtime." not in p.name)
    with tempfile.TemporaryDirectory(prefix="lp_split_") as tmp:
        cache = a.cache or tmp
        run_once(files, cache)  # fills the cache
        runs = [run_once(files, cache) for _ in range(a.repeat)]
    steps = sorted(runs[0]["marks"], key=lambda k: runs[0]["marks"][k])
    for r in runs:
        print("  ".join(f"{k} {r['marks'].get(k, float('nan')):.0f}" for k in steps),
              "| CPU ms:", "  ".join(f"{k} {v:.0f}" for k, v in sorted(r["cpu_ms"].items())))
    print("median of", len(runs), "(ms after Qt is up):")
    for k in steps:
        print(f"  {k:40s} {statistics.median(r['marks'].get(k, float('nan')) for r in runs):6.1f}")
    for k in sorted(runs[0]["cpu_ms"]):
        cpu = statistics.median(r["cpu_ms"][k] for r in runs)
        print(f"  CPU of the {k + ' thread':33s} {cpu:6.1f}")


if __name__ == "__main__":
    main()
