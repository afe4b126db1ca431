"""What a user waits for: `legate_prof view FILES` from the process start to the window, and
to the timeline shown, and to its first whole frame (every lane in view drawn from its
tiles: ``TimelineItem.settled``), in a child process (Qt offscreen).

    python benchmarks/bench_view_start.py DIR_OR_FILES... [--repeat 3] [--cache] [--cold]
                                          [--no-partial]

Prints one line per run and the best and median.  Without --cache the cache is off
(`--no-cache`): every run reads and builds the rank files.  Before each run the files are read
once, so they are in the page cache, as right after legate wrote them.  --cold instead drops
the whole page cache before each run (root only), as after the system evicted everything:
the files, Python's and Qt's libraries all come from disk (this VM drops its page cache
after a few idle minutes).
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
import json, sys, time
T0 = float(sys.argv[1])
from legate_prof import cli  # no Qt yet: `view` imports it where it always does
if sys.argv[2] == "--no-partial":  # (the ranks built so far not shown: the run as before)
    from legate_prof.load import rank_workers
    rank_workers.PARTIAL_MIN_S = float("inf")
    del sys.argv[2]
from legate_prof.cli.commands import view as cli_view
out = {}
real_problem = cli_view._window_problem


def hooked_problem():  # `view` imports Qt and the viewer here: hook the window then
    problem = real_problem()
    from PySide6 import QtCore
    from legate_prof.viewer import app as viewer_app
    win = viewer_app.MainWindow
    start_loading, show_source = win.start_loading, win._show_source

    def started(self):  # the window is up and painted once
        out.setdefault("window_s", time.time() - T0)
        start_loading(self)

    def shown(self, src, files, layout=None, partial=False):  # the timeline replaces the
        show_source(self, src, files, layout, partial)       # progress panel
        if partial:  # the ranks built so far, while the rest builds
            out["so_far_s"] = time.time() - T0
            out["so_far_ranks"] = len(src.outline().ranks)

            def so_far_frame():
                if self.source is not src:
                    return
                if not self.timeline.item.settled():
                    QtCore.QTimer.singleShot(5, so_far_frame)
                    return
                out["so_far_frame_s"] = time.time() - T0
            QtCore.QTimer.singleShot(0, so_far_frame)
            return
        out.setdefault("timeline_s", time.time() - T0)  # (its first paint may lack tiles)

        def first_frame():  # the first paint that drew every lane in view (its tiles in)
            if not self.timeline.item.settled():
                QtCore.QTimer.singleShot(5, first_frame)
                return
            out["first_frame_s"] = time.time() - T0
            print(json.dumps(out), flush=True)  # view may end with os._exit when closed
            self.close()
        QtCore.QTimer.singleShot(0, first_frame)
    win.start_loading, win._show_source = started, shown
    return problem


cli_view._window_problem = hooked_problem
cli.main(["view", "--quiet", *sys.argv[2:]])
"""


def page_cache(files, cold):
    """Put the files in the page cache, or (``cold``) empty the page cache."""
    if cold:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return
    for f in files:
        for path in ([os.path.join(f, n) for n in sorted(os.listdir(f))
                      if os.path.isfile(os.path.join(f, n))] if os.path.isdir(f) else [f]):
            with open(path, "rb") as fh:
                while fh.read(1 << 24):
                    pass


def run_once(files, cached, cache_dir, partial=True):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "LEGATE_PROF_CACHE_DIR": cache_dir,
           "LEGATE_PROF_HIDDEN_WINDOW": "1"}  # (the window, though nobody sees it)
    args = (files if cached else ["--no-cache", *files]) if partial else \
        ["--no-partial", *(files if cached else ["--no-cache", *files])]
    import time
    r = subprocess.run([sys.executable, "-c", CHILD, repr(time.time()), *args],
                       capture_output=True, text=True, env=env, timeout=300,
                       cwd=ROOT)  # (the child imports this tree, whatever the caller's folder)
    lines = r.stdout.strip().splitlines()
    if not lines:
        raise SystemExit(f"the viewer failed: {r.stderr[-2000:]}")
    return json.loads(lines[-1])


def fill_cache(files, cache_dir):
    """Write the files' cache entry, as a first `view` does after its first frame (a `view`
    closed at its first frame, as ``run_once`` closes it, stops that write: the entry never
    was there and each "cached" run read the logs)."""
    env = {**os.environ, "LEGATE_PROF_CACHE_DIR": cache_dir}
    subprocess.run([sys.executable, "-c", "import sys\n"
                    "from legate_prof.load.loader import load_profile\n"
                    "load_profile(sys.argv[1:], use_cache=True, ranked=True)", *files],
                   check=True, capture_output=True, env=env, timeout=600, cwd=ROOT)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cache", action="store_true", help="fill the cache, then time reopening")
    ap.add_argument("--no-partial", action="store_true",
                    help="show no ranks before all are built (the window as before they were)")
    ap.add_argument("--cold", action="store_true",
                    help="drop the page cache before each run (root only)")
    a = ap.parse_args(argv)
    a.files = [os.path.abspath(f) for f in a.files]  # (the children run in this tree's folder)
    with tempfile.TemporaryDirectory(prefix="lp_cache_") as cache_dir:
        if a.cache:
            fill_cache(a.files, cache_dir)
        got = []
        for _ in range(a.repeat):
            page_cache(a.files, a.cold)
            r = run_once(a.files, a.cache, cache_dir, not a.no_partial)
            got.append(r)
            so_far = (f"{r['so_far_ranks']} ranks so far shown {r['so_far_s']:.2f} s, their "
                      f"first whole frame {r.get('so_far_frame_s', float('nan')):.2f} s; "
                      if "so_far_s" in r else "")
            print(f"window {r['window_s']:.2f} s, {so_far}timeline {r['timeline_s']:.2f} s, "
                  f"first whole frame {r['first_frame_s']:.2f} s", flush=True)
    ff = [r["first_frame_s"] for r in got]
    print(f"first frame: best {min(ff):.2f} s, median {statistics.median(ff):.2f} s")
    early = [r.get("so_far_frame_s", r["first_frame_s"]) for r in got]
    if any("so_far_s" in r for r in got):
        print(f"first frame of the ranks so far (else the whole): best {min(early):.2f} s, "
              f"median {statistics.median(early):.2f} s")


if __name__ == "__main__":
    main()
