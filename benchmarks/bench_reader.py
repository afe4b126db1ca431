"""Reader throughput: records/second on synthetic logs in the real format (not a test).

    python benchmarks/bench_reader.py [--items 2000000] [--ranks 1]
"""

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fixtures.synthetic import generate  # noqa: E402
from legate_prof.read.legion_log import read_legion_log  # noqa: E402
from legate_prof.load.loader import load_profile  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--items", type=int, default=2_000_000)
    p.add_argument("--ranks", type=int, default=1)
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        paths = generate(d, ranks=a.ranks, items=a.items, seed=1)
        size = sum(os.path.getsize(x) for x in paths)
        best = float("inf")
        for _ in range(a.repeat):
            t = time.perf_counter()
            logs = [read_legion_log(x) for x in paths]
            best = min(best, time.perf_counter() - t)
        recs = sum(log.record_count for log in logs)
        t = time.perf_counter()
        model = load_profile(paths)
        build = time.perf_counter() - t
        print(f"files={len(paths)} bytes={size / 2**20:.1f}MiB records={recs:,}")
        print(f"read: {best:.3f} s  -> {recs / best / 1e6:.2f} M records/s "
              f"({size / best / 2**20:.0f} MiB/s)")
        print(f"read+build model: {build:.3f} s for {model.n_items:,} items "
              f"-> {model.n_items / build / 1e6:.2f} M items/s")


if __name__ == "__main__":
    main()
