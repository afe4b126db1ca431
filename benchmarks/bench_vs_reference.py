"""Our `stats` and `view` against the reference `legion_prof`, side by side, in one run.

    python benchmarks/bench_vs_reference.py                     # 1M (1 rank), 4M (4 ranks)
    python benchmarks/bench_vs_reference.py --sizes 1x1 4x4 10x10 --repeat 2

A size RxM is R rank files with M million items in all (`fixtures/generate.py`, files the
reference accepts).  For each: `legate_prof stats --json` and `legion_prof statistics`, run
alternately, wall time and peak memory of the whole process tree (`tree_rss.py`), and the
ratios; then `view`'s time to the first frame from raw logs and from its cache (a child process
that, once Python and Qt are imported, loads and opens the window as `view` does, on a
full-HD screen (1920 x 1080, Qt offscreen), until every lane in view is drawn from its
tiles), and the frame times of that window's timeline from the cache (`frame_times.py`: pans,
wheel zoom steps), with its lanes as `view` opens them and with the cpu, gpu_dev and utility
groups expanded (as the benchmark's picture used to show them, fitted into 1080 px at 4 px a
row, which no window does).  Without the
reference binary (next to the repository in ../shared/reference, or $LEGION_PROF) ours are
printed alone.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from tree_rss import measure  # noqa: E402

REFERENCE = Path(os.environ.get(
    "LEGION_PROF", ROOT.parent / "shared" / "reference" / "legion_prof" / "bin" / "legion_prof"))

FIRST_FRAME = r"""
import json, os, sys, threading, time
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6 import QtWidgets
from legate_prof.load.loader import load_profile
from legate_prof.viewer.screenshot import app_instance
app_instance()
from legate_prof.viewer.app import MainWindow
files, cache = json.loads(sys.argv[1])
sys.path.insert(0, sys.argv[2])
from frame_times import show_until_drawn
from legate_prof.load.rank_workers import lower_this_thread
t0, c0 = time.perf_counter(), time.process_time()  # after the interpreter and Qt have started
loaded = {}


def early_load():  # as `view` loads: begun before the window is made (cli.view.EarlyLoad)
    lower_this_thread()
    loaded["model"] = load_profile(files, use_cache=cache, ranked=True)


loading = threading.Thread(target=early_load)
loading.start()
win = MainWindow(files=files, load=lambda progress: (loading.join(), loaded["model"])[1])
show_until_drawn(win)  # (a full-HD screen; every lane in view drawn from its tiles)
out = {"first_frame_s": time.perf_counter() - t0, "first_frame_cpu_s": time.process_time() - c0}
if cache:  # the frames a user then waits for (pans, wheel zoom steps), in that window
    from frame_times import measure_frames
    w = win.timeline
    t_range = w.source.info().time_range
    out["opened"] = measure_frames(w, *t_range)  # its lanes as `view` opens them
    w.expand(["cpu", "gpu_dev", "utility"])  # as the benchmark's picture used to show them
    out["expanded"] = measure_frames(w, *t_range)
print(json.dumps(out), flush=True)
win.timeline.item.stop_background()
os._exit(0)  # (as `view` ends)
"""


def first_frame(files, cache_dir, cached):
    env = {**os.environ, "LEGATE_PROF_CACHE_DIR": cache_dir}
    r = subprocess.run([sys.executable, "-c", FIRST_FRAME, json.dumps([files, cached]),
                        str(ROOT / "benchmarks")],
                       capture_output=True, text=True, env=env, timeout=1800)
    lines = r.stdout.strip().splitlines()
    if not lines:
        raise SystemExit(f"the first-frame child failed: {r.stderr[-3000:]}")
    return json.loads(lines[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=["1x1", "4x4"],
                    help="RANKSxMILLIONS, e.g. 4x4 = 4 rank files, 4M items in all")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--no-view", action="store_true")
    a = ap.parse_args(argv)
    ref = REFERENCE.resolve() if REFERENCE.exists() else None
    os.chdir(ROOT)  # (every child, `-m` or `-c`, imports this tree, whatever the caller's folder)
    print("size | ours stats: wall, peak | reference: wall, peak | ratio time, memory | "
          "view first frame: raw logs (each run), cached (best, median of 3) | frames of "
          "the window, cached, as opened | expanded: pans (median), wheel zoom steps "
          "(median/worst incl. settling)")
    for size in a.sizes:
        ranks, millions = (float(x) for x in size.split("x"))
        with tempfile.TemporaryDirectory(prefix="lp_bench_") as tmp:
            subprocess.run([sys.executable, str(ROOT / "fixtures" / "generate.py"), "--ranks",
                            str(int(ranks)), "--items", str(int(millions * 1e6)), "--seed", "1",
                            "-o", tmp], check=True, capture_output=True)
            files = sorted(str(p) for p in Path(tmp).glob("*.prof"))
            ours, theirs = [], []
            for _ in range(a.repeat):  # alternating, so both see the same machine
                # (--no-cache: from the logs each time, and no copy left keeping the timeline
                # and answering ahead beside the reference's run that follows)
                ours.append(measure([sys.executable, "-m", "legate_prof", "stats", "--json",
                                     "--no-cache", *files])[:2])
                if ref:
                    theirs.append(measure([str(ref), "statistics", *files])[:2])
            o_t, o_m = min(t for t, _ in ours), max(m for _, m in ours)
            row = f"{int(ranks)} x {millions:g}M | {o_t:.2f} s, {o_m / 1024:.2f} GiB | "
            if theirs:
                r_t, r_m = min(t for t, _ in theirs), max(m for _, m in theirs)
                row += (f"{r_t:.2f} s, {r_m / 1024:.2f} GiB | {o_t / r_t:.2f}x, "
                        f"{o_m / r_m:.2f}x | ")
            else:
                row += "(no reference) | - | "
            if not a.no_view:
                with tempfile.TemporaryDirectory(prefix="lp_cache_") as cache:
                    raw = [first_frame(files, cache, False)["first_frame_s"]
                           for _ in range(a.repeat)]
                    first_frame(files, cache, True)  # fills the cache
                    os.sync()  # not timing the write-back of the entry just written
                    hot = sorted((first_frame(files, cache, True) for _ in range(3)),
                                 key=lambda r: r["first_frame_s"])
                f = hot[1]  # the median run's frames
                row += (f"{min(raw):.2f}-{max(raw):.2f} s, {hot[0]['first_frame_s']:.2f} s "
                        f"(median {f['first_frame_s']:.2f} s; CPU "
                        f"{hot[0]['first_frame_cpu_s']:.2f} s)")
                for shown in ("opened", "expanded"):
                    g = f[shown]
                    row += (f" | {shown}: pans 1x/10x/1000x {g['frame_1x_ms']:.0f}/"
                            f"{g['frame_10x_ms']:.0f}/{g['frame_1000x_ms']:.0f} ms (CPU "
                            f"{g['frame_1x_cpu_ms']:.0f}/{g['frame_10x_cpu_ms']:.0f}/"
                            f"{g['frame_1000x_cpu_ms']:.0f}), zoom steps "
                            f"{g['zoom_step_median_ms']:.0f}/{g['zoom_worst_incl_settle_ms']:.0f}"
                            f" ms (CPU {g['zoom_step_median_cpu_ms']:.0f}/"
                            f"{g['zoom_worst_incl_settle_cpu_ms']:.0f}; "
                            f"{g['zoom_settle_frames']} frames to settle)")
            print(row, flush=True)


if __name__ == "__main__":
    main()
