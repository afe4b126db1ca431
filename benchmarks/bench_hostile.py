"""Time each text pattern on its worst case (``fixtures/hostile.py``) at two sizes.

    python benchmarks/bench_hostile.py [--sizes 1 4]      # megabytes

Linear patterns take about 4x as long on 4x the input; a quadratic one takes 16x (the
``_HOLDER`` pattern before issue 27: 20k spaces 0.94 s, 40k 3.75 s, 80k 15.6 s).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def _time(f, *args):
    t = time.perf_counter()
    f(*args)
    return time.perf_counter() - t


def _read_preamble(data):
    from legate_prof.errors import ProfileError
    from legate_prof.read.legion_log import LegionProfReader
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "legate_0.prof")
        with open(p, "wb") as f:
            f.write(data)
        try:
            LegionProfReader(p).read()
        except ProfileError:
            pass


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs=2, default=[1, 4], help="megabytes")
    a = ap.parse_args(argv)
    from fixtures.hostile import oom_cases, preamble_cases
    from legate_prof.read.console_log import parse_oom_report
    small, big = (s << 20 for s in a.sizes)
    rows = []
    for (name, text, _), (_, text2, _) in zip(oom_cases(small), oom_cases(big)):
        rows.append((name, _time(parse_oom_report, text), _time(parse_oom_report, text2)))
    for (name, data), (_, data2) in zip(preamble_cases(small), preamble_cases(big)):
        rows.append((name, _time(_read_preamble, data), _time(_read_preamble, data2)))
    print(f"{'case':26} {a.sizes[0]:>5} MB {a.sizes[1]:>5} MB  ratio")
    for name, t1, t2 in rows:
        print(f"{name:26} {t1 * 1e3:6.1f} ms {t2 * 1e3:6.1f} ms  {t2 / max(t1, 1e-6):5.1f}")
    print(f"slowest at {a.sizes[1]} MB: {max(r[2] for r in rows) * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
