"""One command of two source trees, alternated in one run: wall and CPU time of each.

    git archive main | tar -x -C /tmp/main_tree        # the tree to compare with
    python benchmarks/bench_two_trees.py /tmp/main_tree . --repeat 3 -- critical RUN
    python benchmarks/bench_two_trees.py /tmp/main_tree . -- report -q RUN -o OUT

Each run is ``python -m legate_prof ARGS`` started in a scratch folder with the tree first on
``PYTHONPATH`` (the interpreter of this virtualenv: the same numpy, Qt and legate), rank
workers on, nothing kept (``LEGATE_PROF_CACHE_DIR=''``): as a user runs it.  ``OUT`` in the
arguments becomes a folder of each tree's own.  CPU time is the process tree's (user + system
of the children), printed beside wall time: on a loaded machine (the project's is shared) the
second is inflated, the first less so.  The least of ``--repeat`` each.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_once(tree, args, scratch):
    """(wall s, CPU s) of ``legate_prof ARGS`` from ``tree``."""
    env = dict(os.environ, LEGATE_PROF_CACHE_DIR="", QT_QPA_PLATFORM="offscreen",
               PYTHONPATH=str(Path(tree).resolve()))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "legate_prof", *args], env=env, cwd=scratch,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", help="a source tree (a folder holding legate_prof/)")
    ap.add_argument("after", help="another")
    ap.add_argument("--repeat", type=int, default=3)
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    a, args = ap.parse_args(argv[:cut]), argv[cut + 1:]  # (after "--": legate_prof's)
    for tree in (a.before, a.after):  # (the viewer: installed from this repository's)
        root = Path(tree).resolve()
        if root != ROOT and not (root / "legate_prof" / "viewer").exists():
            sys.exit(f"{tree}: link its viewer/ as legate_prof/viewer (ln -s ../viewer "
                     f"{tree}/legate_prof/viewer) so that its own viewer is imported")
    runs = {a.before: [], a.after: []}
    with tempfile.TemporaryDirectory(prefix="lp-two-trees-") as scratch:
        for _ in range(a.repeat):
            for k, tree in enumerate((a.before, a.after)):
                mine = [x.replace("OUT", os.path.join(scratch, f"out{k}")) for x in args]
                runs[tree].append(run_once(tree, mine, scratch))
    print(f"legate_prof {' '.join(args)}  (load average {os.getloadavg()[0]:.2f})")
    for tree, got in runs.items():
        walls, cpus = [w for w, _ in got], [c for _, c in got]
        print(f"  {tree}: wall {min(walls):.2f} s (of {' '.join(f'{w:.2f}' for w in walls)}), "
              f"CPU {min(cpus):.2f} s (of {' '.join(f'{c:.2f}' for c in cpus)})")


if __name__ == "__main__":
    main()
