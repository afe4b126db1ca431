"""Cost of the runtime's crash-safe event stream per event (not a test).

    python benchmarks/bench_stream.py
"""

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import numpy as np  # noqa: E402

from runtime.stream import EventStream  # noqa: E402


def main(n=200_000):
    with tempfile.TemporaryDirectory() as d:
        s = EventStream(os.path.join(d, "legate_0.runtime.prof"), {"format": 1, "rank": 0})
        t = time.perf_counter()
        for i in range(n):
            s.operation("BinaryOp", "/home/user/prog.py:16")
        op = (time.perf_counter() - t) / n
        dt = np.dtype(np.float32)
        t = time.perf_counter()
        for i in range(n):
            a = s.array_created((4096,), dt, "/home/user/prog.py:21")
            s.array_released(a)
        arr = (time.perf_counter() - t) / n
        s.close()
    print(f"operation event: {op * 1e6:.2f} us; array create+release: {arr * 1e6:.2f} us")


if __name__ == "__main__":
    main()
