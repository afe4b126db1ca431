"""Long fuzz run (not a test): N mutated inputs of every format, batches in child processes.

    python benchmarks/fuzz.py --count 50000 --seed 1 [--render-every 50] [--out DIR]
    python benchmarks/fuzz.py --seed 1 --only 1234        # one input, in this process

Each batch runs in its own process with a time limit, so a signal (segfault) or a hang is seen
and pinned to its input by re-running that batch one input per process.  Crashing inputs are
written to --out (then copy them into tests/fuzz_regressions/).  Prints the counts by outcome
and by format; docs/robustness.md records a run.
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

WORKER = r"""
import json, os, sys, tempfile
sys.path.insert(0, {root!r})
os.environ["QT_QPA_PLATFORM"] = "offscreen"
os.environ["LEGATE_PROF_CACHE_DIR"] = ""
from fixtures.fuzzing import seed_files, mutated, run_input
seed, lo, hi, render_every = map(int, sys.argv[1:5])
seeds = seed_files()
d = tempfile.mkdtemp()
for i in range(lo, hi):
    fmt, how, data = mutated(seed, i, seeds)
    p = os.path.join(d, "input")
    with open(p, "wb") as f:
        f.write(data)
    outcome, detail = run_input(p, fmt)
    if render_every and i % render_every == 0 and outcome in ("ok", "warning") \
            and fmt not in ("garbage", "console"):
        try:
            from legate_prof.load.loader import load_profile
            from legate_prof.viewer.screenshot import render_screenshot
            render_screenshot(load_profile([p]), os.path.join(d, "s.png"), width=400,
                              height=260, expand=["cpu", "utility", "system"])
        except Exception as e:  # noqa: BLE001
            outcome, detail = "crash", f"render: {{type(e).__name__}}: {{e}}"
    print(json.dumps([i, fmt, how, outcome, detail]), flush=True)
"""


def run_batch(seed, lo, hi, render_every, timeout):
    """(rows, problem): rows printed by the worker; problem if it died or hung."""
    try:
        p = subprocess.run([sys.executable, "-c", WORKER.format(root=ROOT), str(seed), str(lo),
                            str(hi), str(render_every)],
                           capture_output=True, text=True, timeout=timeout)
        rows = [json.loads(x) for x in p.stdout.splitlines() if x.startswith("[")]
        if p.returncode < 0:
            return rows, f"signal {-p.returncode}"
        if p.returncode != 0:
            return rows, f"exit {p.returncode}: {p.stderr[-300:]}"
        return rows, None
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return [json.loads(x) for x in out.splitlines() if x.startswith("[")], "hang"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=50_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--render-every", type=int, default=50,
                    help="also render every Nth input that loads (0: never)")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per input, at most")
    ap.add_argument("--out", default=None, help="where to write crashing inputs")
    ap.add_argument("--only", type=int, default=None, help="run one input here and show it")
    a = ap.parse_args(argv)
    from fixtures.fuzzing import mutated, run_input, seed_files
    if a.only is not None:
        fmt, how, data = mutated(a.seed, a.only, seed_files())
        p = os.path.join(tempfile.mkdtemp(), "input")
        with open(p, "wb") as f:
            f.write(data)
        print(fmt, how, run_input(p, fmt), p)
        return 0
    out_dir = a.out or tempfile.mkdtemp(prefix="legate_prof_fuzz_")
    t0 = time.time()
    outcomes, by_format, problems = Counter(), Counter(), []
    for lo in range(0, a.count, a.batch):
        hi = min(lo + a.batch, a.count)
        rows, problem = run_batch(a.seed, lo, hi, a.render_every, a.timeout * (hi - lo))
        if problem:  # pin it: the inputs the batch did not report, one process each
            done = {r[0] for r in rows}
            for i in range(lo, hi):
                if i in done:
                    continue
                one, p1 = run_batch(a.seed, i, i + 1, a.render_every, a.timeout)
                rows += one or []
                if p1:
                    rows.append([i, "?", "?", "signal" if p1.startswith("signal") else
                                 "hang" if p1 == "hang" else "crash", p1])
        for i, fmt, how, outcome, detail in rows:
            outcomes[outcome] += 1
            by_format[(fmt, outcome)] += 1
            if outcome in ("crash", "signal", "hang"):
                problems.append((i, fmt, how, outcome, detail))
                data = mutated(a.seed, i, seed_files())[2]
                with open(os.path.join(out_dir, f"seed{a.seed}_{i}_{fmt}"), "wb") as f:
                    f.write(data)
        print(f"\r{hi}/{a.count} inputs, {time.time() - t0:.0f} s, "
              f"{sum(outcomes[k] for k in ('crash', 'signal', 'hang'))} problems",
              end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    total = sum(outcomes.values())
    print(f"inputs: {total}  seed: {a.seed}  time: {time.time() - t0:.0f} s")
    for k in ("ok", "warning", "error", "crash", "signal", "hang"):
        print(f"  {k:8} {outcomes[k]:7}")
    formats = sorted({f for f, _ in by_format})
    print("by format: " + "; ".join(
        f"{f}: " + ", ".join(f"{o} {by_format[(f, o)]}" for o in ("ok", "warning", "error",
                                                                  "crash", "signal", "hang")
                             if by_format[(f, o)]) for f in formats))
    for p in problems[:30]:
        print("  PROBLEM", p)
    if problems:
        print(f"crashing inputs written to {out_dir}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
