"""Our commands against the reference on REAL profiles: the guide's own examples, recorded at
full size when missing (too big to commit), where the generator's logs never go.

    python benchmarks/bench_real.py                      # what is recorded, or records it
    python benchmarks/bench_real.py --runs big4 --repeat 3
    python benchmarks/bench_real.py --record-only

Runs (``--dir``, default ``~/.cache/legate_prof_bench``):

* ``n10m``: ``examples/inefficient.py`` as shipped (N = 10 M) on one rank:
  ``legate_prof record --no-report --cpus 2 --gpus 0 --sysmem 1024`` (113 MB, 1.4 M items,
  ~1 M runtime calls inside the top-level task: the shape that made a pass quadratic);
* ``ineff4`` / ``eff4``: the guide's Example 1 (N = 1 M) on 4 real ranks through the
  multi-rank kit (``../shared/multirank/run_multirank.sh``, Open MPI; skipped without it);
* ``g1000`` (not by default): not a recording but the generator's 1,000 ranks of 2,000 items
  (``fixtures/generate.py --ranks 1000 --items 2000000 --seed 2``): where a step that grows
  with the ranks, or with ranks x ranks, shows.

For each run, whole processes, alternated, the least of ``--repeat``: our ``stats``,
``critical``, ``insights`` and ``report --no-pictures`` with nothing kept (each its first time:
``LEGATE_PROF_CACHE_DIR=''``), the same command asked again with its answer kept (the second
time), and the reference's ``statistics`` and ``critical`` (``$LEGION_PROF``, or the binary
beside the repository; without it ours are printed alone) — wall time and peak memory of the
process tree (``tree_rss.py``), and the ratio.  Results go in docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from tree_rss import measure  # noqa: E402

REFERENCE = Path(os.environ.get(
    "LEGION_PROF", ROOT.parent / "shared" / "reference" / "legion_prof" / "bin" / "legion_prof"))
KIT = ROOT.parent / "shared" / "multirank" / "run_multirank.sh"
OURS = ("stats", "critical", "insights")
THEIRS = {"stats": "statistics", "critical": "critical"}


def _at_n(src, n, out):
    """``src`` with its N set to ``n`` (the guide's programs say N = 10_000_000)."""
    text = src.read_text().replace("N = 10_000_000", f"N = {n:_}")
    out.write_text(text)
    return out


def record(name, folder):
    """Record run ``name`` into ``folder`` (True), or say why it cannot be (False)."""
    folder.mkdir(parents=True, exist_ok=True)
    if name == "n10m":
        cmd = [sys.executable, "-m", "legate_prof", "record", "--no-report", "--cpus", "2",
               "--gpus", "0", "--sysmem", "1024", str(ROOT / "examples" / "inefficient.py")]
        r = subprocess.run(cmd, cwd=folder, capture_output=True, text=True)
        return r.returncode == 0
    if name == "g1000":
        r = subprocess.run([sys.executable, str(ROOT / "fixtures" / "generate.py"), "--ranks",
                            "1000", "--items", "2000000", "--seed", "2", "-o", str(folder)],
                           capture_output=True, text=True)
        return r.returncode == 0
    if not KIT.exists() or shutil.which("mpirun") is None:
        print(f"{name}: needs the multi-rank kit ({KIT}) and mpirun: skipped")
        return False
    prog = _at_n(ROOT / "examples" / ("inefficient.py" if name == "ineff4" else "efficient.py"),
                 1_000_000, folder.parent / f"{name}.py")
    env = {**os.environ, "VENV": str(Path(sys.executable).parent.parent)}
    r = subprocess.run(["bash", str(KIT), "4", str(folder), str(prog)], env=env,
                       capture_output=True, text=True)
    return r.returncode == 0


def logs_of(folder):
    return sorted(str(p) for p in folder.iterdir() if p.name.endswith(".prof")
                  and ".runtime." not in p.name)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default=str(Path.home() / ".cache" / "legate_prof_bench"))
    ap.add_argument("--runs", nargs="+", default=["n10m", "ineff4", "eff4"])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--record-only", action="store_true")
    a = ap.parse_args(argv)
    ref = REFERENCE if REFERENCE.exists() else None
    for name in a.runs:
        folder = Path(a.dir) / name
        if not (folder.exists() and logs_of(folder)):
            print(f"{name}: recording into {folder} ...", flush=True)
            if not record(name, folder):
                continue
        if a.record_only:
            continue
        size = sum(os.path.getsize(f) for f in logs_of(folder)) / 2**20
        print(f"\n{name}: {len(logs_of(folder))} log(s), {size:.0f} MiB "
              "| first time (nothing kept): wall, peak | asked again | reference | ratio")
        with tempfile.TemporaryDirectory(prefix="lp_bench_keep_") as keep:
            for cmd in OURS + ("report",):
                first, again, theirs, failed = [], [], [], None
                args = [cmd, str(folder)] + (["--no-pictures", "-o", keep + "/rep"]
                                             if cmd == "report" else [])
                for _ in range(a.repeat):
                    first.append(measure([sys.executable, "-m", "legate_prof", *args],
                                         env={**os.environ, "LEGATE_PROF_CACHE_DIR": ""})[:2])
                    if cmd in OURS or cmd == "report":  # (report: the folder it kept)
                        env = {**os.environ, "LEGATE_PROF_CACHE_DIR": keep}
                        measure([sys.executable, "-m", "legate_prof", *args], env=env)
                        again.append(measure([sys.executable, "-m", "legate_prof", *args],
                                             env=env)[:2])
                    if ref and cmd in THEIRS:
                        got = measure([str(ref), THEIRS[cmd], *logs_of(folder)])
                        if got[2] == 0:  # (it panics on about half of multi-rank runs)
                            theirs.append(got[:2])
                        else:
                            failed = got[2]
                t, m = min(x for x, _ in first), max(y for _, y in first)
                row = f"  {cmd:<9} | {t:7.2f} s, {m / 1024:5.2f} GiB | "
                row += (f"{min(x for x, _ in again):5.2f} s | " if again else "- | ")
                if theirs:
                    rt, rm = min(x for x, _ in theirs), max(y for _, y in theirs)
                    row += f"{rt:7.2f} s, {rm / 1024:5.2f} GiB | {t / rt:.2f}x, {m / rm:.2f}x"
                else:
                    row += (f"exit {failed} (the reference failed) | -" if failed is not None
                            else "- | -")
                print(row, flush=True)


if __name__ == "__main__":
    main()
