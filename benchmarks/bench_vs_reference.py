"""Side by side with the reference (not a test): ``legate_prof stats --json`` against
``legion_prof statistics`` on the same generated files, in one run alternating the two tools,
and ``legate_prof view``'s time to its window and to the first frame of the timeline.

    python benchmarks/bench_vs_reference.py                       # 1M, 4M (4 ranks), 10M (4 ranks)
    python benchmarks/bench_vs_reference.py --sizes 1M 4M:4 --repeat 3
    python benchmarks/bench_vs_reference.py --reference /path/to/legion_prof --no-view

Sizes are ``ITEMS[:RANKS]`` (``4M:4``: 4 million items in all, over 4 ranks).  Each child's wall
time is timed here and its peak RSS comes from ``os.wait4`` (the child alone).  The files are
read once before timing so both tools read them from the page cache.  The reference is
``/work/shared/reference/legion_prof/bin/legion_prof`` or ``$LEGION_PROF`` or ``--reference``;
when it is absent ours are printed alone.  ``view`` runs offscreen (``QT_QPA_PLATFORM``), through
the real command line, with a fresh cache directory: ``--no-cache`` (raw logs), the first open
(raw logs, writing the cache) and the second open (from the cache).  The reference's ``view``
does not run here (its egui viewer is not built), so ``view`` has no reference column.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_REFERENCE = "/work/shared/reference/legion_prof/bin/legion_prof"

# `legate_prof view` in a child: the real CLI, a timer that notes when the window is up and,
# once the timeline is there, renders one frame of it (as bench_scale.py's first frame: a grab)
# and closes the window.  Times are wall-clock (time.time) so the parent can subtract its start.
VIEW_CHILD = r"""
import json, os, sys, time
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6 import QtCore, QtWidgets
app = QtWidgets.QApplication(["legate_prof"])
from legate_prof import cli
from legate_prof.viewer.app import MainWindow
out = {}
def poll():
    for w in QtWidgets.QApplication.topLevelWidgets():
        if isinstance(w, MainWindow) and w.isVisible():
            out.setdefault("window_at", time.time())
            if w.timeline is not None and "frame_at" not in out:
                w.timeline.grab()
                out["frame_at"] = time.time()
                print("BENCH " + json.dumps(out), flush=True)  # the process may end at close
                w.close()
timer = QtCore.QTimer()
timer.timeout.connect(poll)
timer.start(5)
sys.exit(cli.main(["view", "--quiet", *sys.argv[1:]]))
"""


def parse_size(text):
    """'4M:4' -> (4_000_000, 4); '1M' -> (1_000_000, 1); '250k:2' -> (250_000, 2)."""
    items, _, ranks = text.partition(":")
    mul = {"k": 10**3, "m": 10**6}.get(items[-1:].lower(), 1)
    n = int(float(items[:-1] if mul > 1 else items) * mul)
    r = int(ranks) if ranks else 1
    if n <= 0 or r <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: use ITEMS[:RANKS], e.g. 1M or 4M:4")
    return n, r


def label(n, r):
    count = f"{n / 1e6:g}M" if n >= 10**6 else f"{n / 1e3:g}k"
    return f"{count} items, {r} rank{'s' if r > 1 else ''}"


def timed(cmd, env=None, cwd=None):
    """Run ``cmd``; (wall s, peak RSS MiB, rc, stdout text). stdout is kept, stderr dropped."""
    with tempfile.TemporaryFile() as out:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    return wall, ru.ru_maxrss / 1024, p.returncode, text


def generate(n, r, workdir):
    d = os.path.join(workdir, f"r{r}_n{n}")
    if not os.path.isdir(d):
        subprocess.run([sys.executable, os.path.join(ROOT, "fixtures", "generate.py"),
                        "--ranks", str(r), "--items", str(n), "--seed", "1", "-o", d + ".tmp"],
                       check=True, stdout=subprocess.DEVNULL)
        os.replace(d + ".tmp", d)
    files = sorted(os.path.join(d, f) for f in os.listdir(d) if f.startswith("legate_"))
    for f in files:  # into the page cache, for both tools alike
        with open(f, "rb") as fh:
            while fh.read(1 << 24):
                pass
    return files


def stats_side_by_side(files, reference, repeat):
    ours_cmd = [sys.executable, "-m", "legate_prof", "stats", "--json", *files]
    ref_cmd = [reference, "statistics", *files] if reference else None
    ours, ref = [], []
    for _ in range(repeat):  # alternating, so both see the same machine load
        wall, rss, rc, out = timed(ours_cmd, cwd=ROOT)
        if rc:
            raise SystemExit(f"legate_prof stats failed (exit {rc}) on {files[0]}")
        json.loads(out)  # the JSON must be clean
        ours.append((wall, rss))
        if ref_cmd:
            wall, rss, rc, _ = timed(ref_cmd, cwd=os.path.dirname(files[0]))
            ref.append((wall, rss) if rc == 0 else None)
    return ours, ref


def view_first_frame(files, cache_dir):
    """{mode: (s to window, s to first frame, peak RSS MiB)} for raw / first open / cached."""
    env = dict(os.environ, LEGATE_PROF_CACHE_DIR=cache_dir, PYTHONPATH=ROOT)
    shutil.rmtree(cache_dir, ignore_errors=True)
    res = {}
    for mode, extra in (("raw (--no-cache)", ["--no-cache"]), ("first open (writes cache)", []),
                        ("from cache", [])):
        t0 = time.time()
        wall, rss, rc, out = timed([sys.executable, "-c", VIEW_CHILD, *extra, *files], env=env)
        line = next((ln for ln in out.splitlines() if ln.startswith("BENCH ")), None)
        if rc or line is None:
            raise SystemExit(f"legate_prof view failed (exit {rc}) on {files[0]}")
        r = json.loads(line[6:])
        res[mode] = (r["window_at"] - t0, r["frame_at"] - t0, rss)
    return res


def fmt_ratio(a, b):
    return f"{a / b:.2f}×" if b else "—"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", type=parse_size,
                    default=[parse_size(s) for s in ("1M", "4M:4", "10M:4")],
                    help="ITEMS[:RANKS] each (default 1M 4M:4 10M:4)")
    ap.add_argument("--repeat", type=int, default=1, help="alternating runs of each tool")
    ap.add_argument("--reference", default=os.environ.get("LEGION_PROF", DEFAULT_REFERENCE))
    ap.add_argument("--no-view", dest="view", action="store_false", help="stats only")
    ap.add_argument("--workdir", help="keep the generated files here (default: a temp dir)")
    a = ap.parse_args(argv)
    reference = a.reference if a.reference and os.access(a.reference, os.X_OK) else None
    if not reference:
        print(f"reference not found ({a.reference}): printing ours alone", file=sys.stderr)
    work = a.workdir or tempfile.mkdtemp(prefix="bench_vs_ref_")
    print(f"# {os.cpu_count()} cores; python {sys.version.split()[0]}; "
          f"reference: {reference or 'absent'}; repeat {a.repeat}, best of each shown")
    print("| stats | ours s | ours MiB | reference s | reference MiB | time ours/ref "
          "| memory ours/ref |")
    print("|---|---|---|---|---|---|---|")
    views = []
    try:
        for n, r in a.sizes:
            files = generate(n, r, work)
            ours, ref = stats_side_by_side(files, reference, a.repeat)
            ow, orss = min(w for w, _ in ours), min(m for _, m in ours)
            ok = [x for x in ref if x]
            if ok:
                rw, rrss = min(w for w, _ in ok), min(m for _, m in ok)
                print(f"| {label(n, r)} | {ow:.2f} | {orss:.0f} | {rw:.2f} | {rrss:.0f} | "
                      f"{fmt_ratio(ow, rw)} | {fmt_ratio(orss, rrss)} |", flush=True)
            else:
                why = "failed" if ref else "absent"
                print(f"| {label(n, r)} | {ow:.2f} | {orss:.0f} | {why} | | | |", flush=True)
            if a.view:
                views.append((n, r, view_first_frame(files, os.path.join(work, "cache"))))
        if views:
            print("\n| view | mode | window s | first frame s | peak MiB |")
            print("|---|---|---|---|---|")
            for n, r, res in views:
                for mode, (win, frame, rss) in res.items():
                    print(f"| {label(n, r)} | {mode} | {win:.2f} | {frame:.2f} | {rss:.0f} |")
    finally:
        if not a.workdir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
