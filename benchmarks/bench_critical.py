"""Critical-path benchmark (not a test): what the event graph costs in the model, in bundles
and in time, and what ``stats`` pays for explaining idle time.

    python benchmarks/bench_critical.py --ranks 10 --items 10000000 [--dir /tmp/g10]
    python benchmarks/bench_critical.py --baseline SRC   # also time `stats` of the tree SRC

Generates the profile (``fixtures/generate.py``: each task waits for the one before it through
an ``EventTriggerInfo`` edge) unless --dir holds one; prints one JSON line.  Times are wall
and CPU seconds of a child process each (the machine's load shows in wall time, less in CPU
time).  docs/performance.md holds the figures.
"""

import argparse
import glob
import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
from legate_prof.load.loader import load_profile
from legate_prof.query import as_source
from legate_prof.model.event_tables import event_table_rows
paths = json.loads(sys.argv[1])
out = {{}}
m = load_profile(paths, stack=False, ranked=True)
parts = m.item_parts()
n = sum(p.model.n_items for p in parts)
out["items"] = n
out["event_columns_bytes_per_item"] = sum(
    p.model.items[c].nbytes for p in parts for c in ("fevent", "creator", "critical")) / n
out["event_table_rows_per_item"] = sum(event_table_rows(p.model.events) for p in parts) / n
out["event_tables_bytes_per_item"] = sum(
    a.nbytes for p in parts for t in p.model.events.values() for a in t.values()) / n
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t, c = time.perf_counter(), time.process_time()
links = as_source(m).critical_links()
out["links_s"] = round(time.perf_counter() - t, 2)
out["links_cpu_s"] = round(time.process_time() - c, 2)
out["links_peak_rss_added_mb"] = round(
    (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024)
out["vertices"], out["edges"] = links.n_vertices, links.n_edges
print(json.dumps(out))
"""


def timed(cmd, env=None):
    """(wall s, CPU s of it and its children) of a command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        raise SystemExit(p.stderr[-2000:])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return round(wall, 2), round(cpu, 2), p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=10)
    ap.add_argument("--items", type=int, default=10_000_000)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--baseline", default=None, help="a source tree (git archive of main)")
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    d = a.dir or f"/tmp/legate_prof_bench_critical_{a.ranks}_{a.items}"
    paths = sorted(glob.glob(os.path.join(d, "legate_*.prof")))
    if not paths:
        from fixtures.synthetic import generate
        paths = generate(d, ranks=a.ranks, items=a.items, seed=1)
    out = json.loads(timed([sys.executable, "-c", CHILD.format(root=ROOT),
                            json.dumps(paths)])[2].strip().splitlines()[-1])
    trees = [("stats", ROOT)] + ([("stats_baseline", a.baseline)] if a.baseline else [])
    for key, tree in trees:
        env = dict(os.environ, PYTHONPATH=tree, LEGATE_PROF_CACHE_DIR="")  # (from the logs)
        runs = [timed([sys.executable, "-m", "legate_prof", "stats", *paths], env)[:2]
                for _ in range(a.repeat)]
        out[key + "_s"] = [r[0] for r in runs]
        out[key + "_cpu_s"] = [r[1] for r in runs]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
