"""Run a command; print its wall time and the peak of the memory its whole process tree holds
(worker processes included), sampled every 20 ms.  Linux only.

What a tree holds: its processes' private and file-backed resident pages, and the files its
rank workers hand over in memory (``/dev/shm/legate_prof_handover_*``: a tmpfs file is memory
that nothing reclaims, whether mapped or not).  Their mapped pages are counted once, as the
larger of what the processes map and what the hand-over folders hold: the processes' resident
sizes alone left out the bundles not (yet) mapped, 1.4 of 2.4 GiB at 10 ranks x 1 M items.

    python benchmarks/tree_rss.py legate_prof stats --json legate_*.prof
    python benchmarks/tree_rss.py --pss legate_prof report RUN

``--pss``: the proportional set size summed instead (``/proc/PID/smaps_rollup``): a page two
processes share counts half in each.  The resident sizes count it whole in both, so a forked
copy (the report's pictures: ``report/pictures.py``) would seem to double the profile it
shares; slower to sample.
"""

import glob
import os
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
    """(KiB resident but for shared memory, KiB of shared memory mapped) of one process."""
    fields = ("Pss:", "Pss_Shmem:") if pss else ("VmRSS:", "RssShmem:")
    got = dict.fromkeys(fields, 0)
    try:
        with open(f"/proc/{pid}/smaps_rollup" if pss else f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(fields):
                    got[line.split()[0]] = int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return got[fields[0]] - got[fields[1]], got[fields[1]]


def handed_over_kib(pids, base="/dev/shm"):
    """KiB the hand-over folders of ``pids`` hold in memory (``load.rank_workers.Handover``:
    named with the pid of the process that made them)."""
    total = 0
    for pid in pids:
        for d in glob.glob(f"{base}/legate_prof_handover_*_{pid}_*"):
            try:
                total += sum(e.stat().st_blocks for e in os.scandir(d) if e.is_file()) // 2
            except OSError:
                continue
    return total


def held_kib(pids, pss=False):
    """What a process tree holds now, in KiB (see above)."""
    own = shared = 0
    for q in pids:
        a, b = _rss_kib(q, pss)
        own, shared = own + a, shared + b
    return own + max(shared, handed_over_kib(pids))


def fresh_bytecode(_done=[]):
    """This tree's sources compiled, as ``./dev`` and pip do, once per benchmark: where
    PYTHONDONTWRITEBYTECODE is set (this machine), a source edited since set-up was compiled
    again in every command timed (a report asked again: 0.38-0.43 s, then 0.27-0.31 s)."""
    if not _done:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        subprocess.run([sys.executable, "-m", "compileall", "-q", "legate_prof", "viewer",
                        "runtime"], cwd=root, stdout=subprocess.DEVNULL, check=False)
        _done.append(True)


def measure(cmd, env=None, pss=False):
    """(wall seconds, peak the tree held in MiB (``held_kib``; ``pss``: proportional
    sizes), exit status); ``env``: the command's environment."""
    fresh_bytecode()
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    peak = 0
    while p.poll() is None:
        peak = max(peak, held_kib(_tree(p.pid), pss))
        time.sleep(0.02)
    return time.perf_counter() - t, peak / 1024, p.returncode


if __name__ == "__main__":
    pss = sys.argv[1:2] == ["--pss"]
    wall, mib, rc = measure(sys.argv[1 + pss:], pss=pss)
    print(f"wall {wall:.2f} s, peak held by the tree ({'PSS' if pss else 'RSS'} and hand-over "
          f"files) {mib:.0f} MiB, exit {rc}")
