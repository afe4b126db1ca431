"""Query API cost per call: lane_tile (boxes + state pieces + bands + labels) against the
model's bare draw_list, and summary_tile, over every lane of a profile at several zooms.

    .venv/bin/python benchmarks/bench_source.py [PROFILE ...]   (default: the bundled example)
"""

import sys
import time
from pathlib import Path

from legate_prof.query import MIN_PX, open_profile
from legate_prof.query.level_of_detail import draw_rows

ROOT = Path(__file__).resolve().parents[1]


def main(paths):
    src = open_profile(paths or [str(ROOT / "legate_prof" / "data" / "example_legate_0.prof")])
    info = src.info()
    model = src._m  # the bare query, for comparison only
    T0, T1 = info.time_range
    width = 1600
    for zoom in (1, 20, 200):
        span = (T1 - T0) / zoom
        t0 = T0 + (T1 - T0) * 0.6 - span / 2
        t1 = t0 + span
        for name, fn in (("draw_list", lambda ln: draw_rows(model, ln, t0, t1, width, MIN_PX)),
                         ("lane_tile", lambda ln: src.lane_tile(ln, t0, t1, width))):
            fn(0)
            t = time.perf_counter()
            for ln in range(len(info.lanes)):
                fn(ln)
            dt = (time.perf_counter() - t) / len(info.lanes)
            print(f"zoom {zoom:>4}x  {name:<10} {dt * 1e3:8.3f} ms per lane ({len(info.lanes)} lanes)")
        t = time.perf_counter()
        for g in info.groups:
            src.summary_tile(g.group, g.rank, t0, t1, width // 2)
        print(f"zoom {zoom:>4}x  summary    {(time.perf_counter() - t) / len(info.groups) * 1e3:8.3f}"
              f" ms per group ({len(info.groups)} groups)")


if __name__ == "__main__":
    main(sys.argv[1:])
