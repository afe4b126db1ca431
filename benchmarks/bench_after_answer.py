"""A command's answer, then what its process leaves running: the copy that keeps the run's
timeline in the cache and answers the next questions ahead (``load.loader.store_after_answer``).

Runs ``legate_prof ARGS`` with a fresh cache folder, ``--repeat`` times, and prints for each
run the time to its answer (the command's exit), the time until its copy is done, and the
copy's peak resident memory (its own processes', sampled every 100 ms; Linux only).
``--root``: the tree to run (``PYTHONPATH``; another checkout, to compare), default this one.

    python benchmarks/bench_after_answer.py stats /tmp/g10 --repeat 2
    python benchmarks/bench_after_answer.py stats /tmp/g10 --root /tmp/old
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _descendants_rss_kib(pids):
    total = 0
    for q in pids:
        try:
            with open(f"/proc/{q}/status") as f:
                total += next((int(line.split()[1]) for line in f
                               if line.startswith("VmRSS:")), 0)
        except OSError:
            continue
    return total


def _still_running(tag):
    """The processes whose environment holds ``tag`` (the copies a run left)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if tag.encode() in f.read():
                    out.append(int(name))
        except OSError:
            continue
    return out


def run_once(args, root):
    cache = tempfile.mkdtemp(prefix="legate_prof_after_")
    tag = f"LEGATE_PROF_BENCH_TAG={os.path.basename(cache)}"
    env = {**os.environ, "PYTHONPATH": root, "LEGATE_PROF_CACHE_DIR": cache,
           tag.split("=")[0]: tag.split("=")[1]}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "legate_prof", *args], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    answer = time.perf_counter() - t0
    peak = 0
    while True:
        left = [p for p in _still_running(tag) if p != os.getpid()]
        if not left:
            break
        peak = max(peak, _descendants_rss_kib(left))
        time.sleep(0.1)
    done = time.perf_counter() - t0
    shutil.rmtree(cache, ignore_errors=True)
    return answer, done, peak / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--root", default=ROOT)
    known, args = ap.parse_known_args()
    for _ in range(known.repeat):
        answer, done, peak = run_once(args, known.root)
        print(f"answer {answer:.2f} s; its copy done at {done:.2f} s, peak {peak:.0f} MiB",
              flush=True)


if __name__ == "__main__":
    main()
