"""Long fuzz run (not a test): N mutated inputs of every format, batches in child processes.

    python benchmarks/fuzz.py --count 20000 --seed 1 [--outputs-every 1] [--jobs 2] [--out DIR]
    python benchmarks/fuzz.py --seed 1 --only 1234        # one input, in this process
    python benchmarks/fuzz.py --sweep                     # every fixed-size field of a real
                                                          # log at 2^31, 2^32-1, 2^63-1, 2^63,
                                                          # 2^64-1

Each input is read and its statistics made and lanes drawn (``run_input``); one that loads then
goes through every output (``write_outputs``: the report, each export, a screenshot).  Each
batch runs in its own process with a time limit, so a signal (segfault) or a hang is seen and
pinned to its input by re-running that batch one input per process.  The memory each input
adds (the resident high-water mark, reset before it) is held against MEMORY_FACTOR times what
the honest file of that format adds, scaled to the input's size (a gzipped one's inflated).  Problem inputs are written
to --out (then copy them into tests/fuzz_regressions/).  Prints the counts by outcome and by
format; docs/robustness.md records a run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

MEMORY_FACTOR = 4
MEMORY_FLOOR = 16 << 20  # resident memory moves this much with no cause we can pin (allocator
#                          arenas, Qt's caches): below it an input is not judged

WORKER = r"""
import json, os, sys, tempfile
sys.path.insert(0, {root!r})
os.environ["QT_QPA_PLATFORM"] = "offscreen"
os.environ["LEGATE_PROF_CACHE_DIR"] = ""
from fixtures.fuzzing import seed_files, fuzz_input, run_input, write_outputs, peak_rss
seed, lo, hi, outputs_every = map(int, sys.argv[1:5])
mode = sys.argv[5]
seeds = seed_files()
d = tempfile.mkdtemp()
p = os.path.join(d, "input")

def one(fmt, data, outputs):
    with open(p, "wb") as f:
        f.write(data)
    outcome, detail = run_input(p, fmt)
    if outputs and outcome in ("ok", "warning") and fmt != "garbage":
        o, det = write_outputs(p, fmt, d)
        if o == "crash":
            outcome, detail = o, det
    return outcome, detail

# the bytes a reader reads of an input: a gzipped one's inflated (its first member, at most
# 256 MiB): 17 KB of gzipped identical calls, 281 KB read, was held to the memory of 17 KB
def read_size(data):
    if data[:2] != b"\x1f\x8b":
        return len(data)
    import zlib
    try:
        return max(len(data), len(zlib.decompressobj(16 + zlib.MAX_WBITS)
                                  .decompress(data, 1 << 28)))
    except zlib.error:
        return len(data)

honest = {{}}
for fmt, data in seeds.items():  # twice: the first imports what the outputs need
    if fmt != "garbage":
        one(fmt, data, True)
        honest[fmt] = peak_rss(one, fmt, data, True)[1]
print(json.dumps(["honest", honest]), flush=True)
for i in range(lo, hi):
    fmt, how, data = fuzz_input(mode, seed, i, seeds)
    (outcome, detail), peak = peak_rss(one, fmt, data, outputs_every and i % outputs_every == 0)
    print(json.dumps([i, fmt, how, outcome, detail, peak, read_size(data)]), flush=True)
import shutil
shutil.rmtree(d, ignore_errors=True)  # (a batch's outputs: a few MB each, left by thousands)
"""


def run_batch(seed, lo, hi, outputs_every, timeout, mode="mutate"):
    """(rows, honest peaks, problem): rows printed by the worker; problem if it died or hung."""
    def parse(text):
        rows = []
        for x in text.splitlines():
            try:
                rows.append(json.loads(x))
            except ValueError:
                pass  # (a line someone else printed)
        rows = [r for r in rows if isinstance(r, list) and len(r) in (2, 7)]
        honest = next((r[1] for r in rows if r[0] == "honest"), {})
        return [r for r in rows if r[0] != "honest"], honest
    try:
        p = subprocess.run([sys.executable, "-c", WORKER.format(root=ROOT), str(seed), str(lo),
                            str(hi), str(outputs_every), mode],
                           capture_output=True, text=True, timeout=timeout)
        rows, honest = parse(p.stdout)
        if p.returncode < 0:
            return rows, honest, f"signal {-p.returncode}"
        if p.returncode != 0:
            return rows, honest, f"exit {p.returncode}: {p.stderr[-300:]}"
        return rows, honest, None
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        rows, honest = parse(out)
        return rows, honest, "hang"


def pinned(seed, lo, hi, outputs_every, timeout, mode="mutate"):
    """A batch's rows; where it died or hung, the inputs it did not report, one process each."""
    rows, honest, problem = run_batch(seed, lo, hi, outputs_every, timeout * (hi - lo) + 120,
                                      mode)
    if problem:
        done = {r[0] for r in rows}
        for i in range(lo, hi):
            if i in done:
                continue
            one, _, p1 = run_batch(seed, i, i + 1, outputs_every, timeout + 120, mode)
            rows += one or []
            if p1:
                rows.append([i, "?", "?", "signal" if p1.startswith("signal") else
                             "hang" if p1 == "hang" else "crash", p1, None, 0])
    return rows, honest


def over_memory(row, honest, seed_sizes):
    """Where an input took more memory than MEMORY_FACTOR x the honest file of its size."""
    i, fmt, how, outcome, detail, peak, size = row
    base = honest.get(fmt)
    if peak is None or not base or outcome in ("signal", "hang"):
        return None
    allowed = MEMORY_FACTOR * base * max(1.0, size / max(seed_sizes[fmt], 1))
    if peak > max(allowed, MEMORY_FLOOR):
        return f"peak {peak >> 20} MiB > {MEMORY_FACTOR} x {base >> 20} MiB (honest, scaled)"
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=int, default=250)
    ap.add_argument("--outputs-every", type=int, default=1,
                    help="put every Nth input that loads through every output (0: never)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per input, at most")
    ap.add_argument("--out", default=None, help="where to write problem inputs")
    ap.add_argument("--only", type=int, default=None, help="run one input here and show it")
    ap.add_argument("--sweep", action="store_true",
                    help="the field sweep of the real log instead of mutations (--count: all)")
    a = ap.parse_args(argv)
    from fixtures.fuzzing import fuzz_input, run_input, seed_files, sweep_inputs, write_outputs
    seeds = seed_files()
    mode = "sweep" if a.sweep else "mutate"
    if a.sweep:
        a.count = min(a.count, len(sweep_inputs(seeds["legion"])))
    if a.only is not None:
        fmt, how, data = fuzz_input(mode, a.seed, a.only, seeds)
        d = tempfile.mkdtemp()
        p = os.path.join(d, "input")
        with open(p, "wb") as f:
            f.write(data)
        print(fmt, how, run_input(p, fmt), write_outputs(p, fmt, d), p)
        return 0
    out_dir = a.out or tempfile.mkdtemp(prefix="legate_prof_fuzz_")
    os.makedirs(out_dir, exist_ok=True)
    seed_sizes = {k: len(v) for k, v in seeds.items()}
    t0 = time.time()
    outcomes, by_format, problems, peaks = Counter(), Counter(), [], {}
    batches = [(lo, min(lo + a.batch, a.count)) for lo in range(0, a.count, a.batch)]
    done = 0
    with ThreadPoolExecutor(max(a.jobs, 1)) as pool:
        futures = [pool.submit(pinned, a.seed, lo, hi, a.outputs_every, a.timeout, mode)
                   for lo, hi in batches]
        for fut in futures:
            rows, honest = fut.result()
            for row in rows:
                i, fmt, how, outcome, detail, peak, size = row
                memory = over_memory(row, honest, seed_sizes)
                if memory and outcome not in ("crash",):
                    outcome, detail = "memory", memory
                outcomes[outcome] += 1
                by_format[(fmt, outcome)] += 1
                if peak is not None and fmt in honest:
                    ratio = peak / max(honest[fmt], 1)
                    peaks[fmt] = max(peaks.get(fmt, (0, 0, 0)), (ratio, peak, i))
                if outcome in ("crash", "signal", "hang", "memory"):
                    problems.append((i, fmt, how, outcome, detail))
                    data = fuzz_input(mode, a.seed, i, seeds)[2]
                    with open(os.path.join(out_dir, f"seed{a.seed}_{i}_{fmt}"), "wb") as f:
                        f.write(data)
            done += len(rows)
            bad = sum(outcomes[k] for k in ("crash", "signal", "hang", "memory"))
            print(f"\r{done}/{a.count} inputs, {time.time() - t0:.0f} s, {bad} problems",
                  end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    total = sum(outcomes.values())
    print(f"inputs: {total}  {mode}  seed: {a.seed}  outputs every {a.outputs_every}  "
          f"time: {time.time() - t0:.0f} s")
    for k in ("ok", "warning", "error", "crash", "signal", "hang", "memory"):
        print(f"  {k:8} {outcomes[k]:7}")
    formats = sorted({f for f, _ in by_format})
    print("by format: " + "; ".join(
        f"{f}: " + ", ".join(f"{o} {by_format[(f, o)]}" for o in
                             ("ok", "warning", "error", "crash", "signal", "hang", "memory")
                             if by_format[(f, o)]) for f in formats))
    print("largest memory per format (x the honest file's, MiB, input): " + "; ".join(
        f"{f} {r:.1f}x {p >> 20} ({i})" for f, (r, p, i) in sorted(peaks.items())))
    for p in problems[:30]:
        print("  PROBLEM", p)
    if problems:
        print(f"problem inputs written to {out_dir}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
