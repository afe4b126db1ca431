"""Run a command; print its wall time and the peak of the summed resident memory of its whole
process tree (worker processes included), sampled every 20 ms.  Linux only.

    python benchmarks/tree_rss.py legate_prof stats --json legate_*.prof
    python benchmarks/tree_rss.py --pss legate_prof report RUN

``--pss``: the proportional set size summed instead (``/proc/PID/smaps_rollup``): a page two
processes share counts half in each.  The resident sizes count it whole in both, so a forked
copy (the report's pictures: ``report/pictures.py``) would seem to double the profile it
shares; slower to sample.
"""

import subprocess
import sys
import time


def _tree(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = f.read().split()
    except OSError:
        return [pid]
    return [pid] + [p for k in kids for p in _tree(int(k))]


def _rss_kib(pid, pss=False):
    try:
        with open(f"/proc/{pid}/smaps_rollup" if pss else f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Pss:" if pss else "VmRSS"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def measure(cmd, env=None, pss=False):
    """(wall seconds, peak tree RSS (or ``pss``) in MiB, exit status); ``env``: the command's
    environment."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    peak = 0
    while p.poll() is None:
        peak = max(peak, sum(_rss_kib(q, pss) for q in _tree(p.pid)))
        time.sleep(0.02)
    return time.perf_counter() - t, peak / 1024, p.returncode


if __name__ == "__main__":
    pss = sys.argv[1:2] == ["--pss"]
    wall, mib, rc = measure(sys.argv[1 + pss:], pss=pss)
    print(f"wall {wall:.2f} s, peak tree {'PSS' if pss else 'RSS'} {mib:.0f} MiB, exit {rc}")
