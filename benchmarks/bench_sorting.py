"""numpy's stable sorts and ``np.unique`` against ``model.sort_order``'s, on columns shaped
like a profile's (not a test: the tests hold the results equal).

    python benchmarks/bench_sorting.py [--n 1000000] [--repeat 5]

Prints the least time of each, in ms.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from legate_prof.model.sort_order import (lex_order, stable_order, unique_values,  # noqa: E402
                                          unique_with)


def least_ms(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def columns(n, rng):
    nearly = np.sort(rng.integers(0, 1 << 40, n))
    nearly[::100] = rng.integers(0, 1 << 40, len(nearly[::100]))
    return {
        "ids in no order (uint64)": rng.integers(0, 1 << 62, n).astype(np.uint64),
        "times, 4 of each value": rng.integers(0, n // 4, n) * 1000,
        "nearly sorted": nearly,
        "1,000 values": rng.integers(0, 1000, n),
        "runs of 50 equal ids": np.repeat(rng.integers(0, 1 << 40, n // 50), 50),
    }


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"{'':36s} {'numpy':>9s} {'now':>9s}")
    for name, key in columns(a.n, rng).items():
        print(f"stable argsort, {name:20s} {least_ms(lambda: np.argsort(key, kind='stable'), a.repeat):8.1f}"
              f" {least_ms(lambda: stable_order(key), a.repeat):8.1f}")
    node, t, i = rng.integers(0, 4, a.n), rng.integers(0, 1 << 38, a.n), np.arange(a.n)
    for name, keys in (("lexsort (time, node)", (t, node)),
                       ("lexsort (item, time, node)", (i, t, node))):
        print(f"{name:36s} {least_ms(lambda: np.lexsort(keys), a.repeat):8.1f}"
              f" {least_ms(lambda: lex_order(keys), a.repeat):8.1f}")
    ids = rng.integers(0, 1 << 40, 2 * a.n)
    print(f"{'unique, 2n distinct ids':36s} {least_ms(lambda: np.unique(ids), a.repeat):8.1f}"
          f" {least_ms(lambda: unique_values(ids), a.repeat):8.1f}")
    print(f"{'unique with inverse, 2n ids':36s} "
          f"{least_ms(lambda: np.unique(ids, return_inverse=True), a.repeat):8.1f}"
          f" {least_ms(lambda: unique_with(ids, inverse=True), a.repeat):8.1f}")


if __name__ == "__main__":
    main()
