"""Many runtime calls in one task, and a real log repeated (not a test): issue 37's reproducers.

    python benchmarks/bench_calls.py [--commands stats,insights,report] [--keep DIR]

Inputs, made from the repository's real logs (``fixtures/fuzzing.py``): 20k, 40k and 100k
runtime calls added inside the sample log's longest task, all sharing one start and stop
(``identical_calls``: they nest as deep as they are many); the sample log's and
``efficient_0.prof``'s bodies repeated 15 times, and ``efficient_0.prof``'s 95 times (20 MB)
(``repeated_body``).  Each command runs as ``legate_prof`` does, in its own process: wall
time and peak RSS (``VmHWM``).  The goal (issue 37): ``stats`` of 40k identical calls
within 10 s on the project's 2-core machine; docs/performance.md records a run.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def inputs(folder):
    """{name: path} of the reproducers, written into ``folder``."""
    from fixtures.fuzzing import identical_calls, repeated_body
    sample = open(os.path.join(ROOT, "fixtures", "real", "legate26.06_cpu2_myprof_0.prof"),
                  "rb").read()
    efficient = open(os.path.join(ROOT, "fixtures", "real", "efficient_0.prof"), "rb").read()
    made = {f"{n // 1000}k identical calls": identical_calls(sample, n)
            for n in (20_000, 40_000, 100_000)}
    made["40k calls, 40k waits"] = identical_calls(sample, 40_000, waits=40_000)
    made["sample x15"] = repeated_body(sample, 15)
    made["efficient x15"] = repeated_body(efficient, 15)
    made["efficient x95"] = repeated_body(efficient, 95)
    out = {}
    for name, data in made.items():
        p = os.path.join(folder, name.replace(" ", "_") + ".prof")
        with open(p, "wb") as f:
            f.write(data)
        out[name] = p
    return out


def run(command, path, folder):
    """(seconds, peak MiB, exit status) of one command on ``path``, in its own process."""
    args = {"report": ["report", "--no-pictures", "-o", os.path.join(folder, "report")]}.get(
        command, [command])
    # (VmHWM restarted first: ru_maxrss keeps the forking parent's pages across exec)
    code = ("import sys; open('/proc/self/clear_refs', 'w').write('5'); "
            "from legate_prof.cli import main; rc = main(sys.argv[1:]); "
            "sys.stderr.write('MAXRSS %d\\n' % next(int(x.split()[1]) for x in "
            "open('/proc/self/status') if x.startswith('VmHWM:'))); sys.exit(rc)")
    env = dict(os.environ, LEGATE_PROF_CACHE_DIR="", QT_QPA_PLATFORM="offscreen")
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-P", "-c", code, *args, path], capture_output=True,
                       text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - t
    peak = [int(x.split()[1]) for x in p.stderr.splitlines() if x.startswith("MAXRSS")]
    return wall, (peak[0] >> 10) if peak else float("nan"), p.returncode


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commands", default="stats", help="comma-separated: stats,insights,report")
    ap.add_argument("--keep", default=None, help="write the inputs here (kept)")
    a = ap.parse_args(argv)
    folder = a.keep or tempfile.mkdtemp(prefix="legate_prof_calls_")
    os.makedirs(folder, exist_ok=True)
    print(f"{'input':24} {'MB':>6} {'command':>9} {'s':>7} {'MiB':>6}  status")
    for name, path in inputs(folder).items():
        size = os.path.getsize(path) / 1e6
        for command in a.commands.split(","):
            wall, peak, rc = run(command, path, folder)
            print(f"{name:24} {size:6.1f} {command:>9} {wall:7.2f} {peak:6}  {rc}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
