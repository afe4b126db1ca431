"""Where a command's time goes, phase by phase, so that the next regression shows where.

    python benchmarks/bench_split.py stats /tmp/real10m
    python benchmarks/bench_split.py critical /work/runs/ineff4 --repeat 3

Runs ``legate_prof COMMAND ARGS`` in this process (one process: ``LEGATE_PROF_WORKERS=1``,
nothing kept between runs: ``LEGATE_PROF_CACHE_DIR=''``) with a timer around each phase's
entry point and prints each phase's own time (a phase inside another is taken out of it):
reading logs and streams, building the model (its lanes, waits and utilization apart), the
event graph and links, the inference past unknown events, the path's walk, idle time
explained, the path's pieces, statistics, insights, bundle writes, tiles; the rest is
"other" (imports, printing, what no phase covers).  CPU time (``time.process_time``) as well as wall time: a loaded machine inflates
the second.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PHASES = [  # (phase, module, attribute: a function, or Class.method)
    ("read log", "legate_prof.read.legion_log", "LegionProfReader.read"),
    ("read stream", "legate_prof.read.runtime_stream", "read_runtime_stream"),
    ("build model", "legate_prof.assemble.model_builder", "build_model"),
    ("build: lanes", "legate_prof.assemble.model_builder", "lay_out"),
    ("build: waits", "legate_prof.assemble.model_builder", "_waits"),
    ("build: utilization", "legate_prof.assemble.model_builder", "with_utilization"),
    ("read bundle", "legate_prof.store.bundle_file", "read_bundle"),
    ("links", "legate_prof.causality.critical_links", "compute_links"),
    ("inference", "legate_prof.causality.inference", "Inference.unknown_rows"),
    ("walk", "legate_prof.causality.run_path", "walk_back"),
    ("idle explained", "legate_prof.analyze.idle_gaps", "idle_gaps"),
    ("path pieces", "legate_prof.analyze.critical_path", "path_pieces"),
    ("critical report", "legate_prof.analyze.critical_path", "critical_path_report"),
    ("statistics", "legate_prof.analyze.stats", "compute_stats"),
    ("insights", "legate_prof.analyze.insights", "insights_of_run"),
    ("bundle write", "legate_prof.store.bundle", "write_bundle"),
    ("tiles", "legate_prof.query.source", "ProfileSource.lane_tiles"),
]


def _faults():
    """This process's page faults so far: each costs the kernel a few microseconds (here,
    in a virtual machine, ~3.5 us), and a pass over fresh memory takes one per 4 KB page."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


class Split:
    """Own time per phase: a phase entered inside another is not counted twice."""

    def __init__(self):
        self.own = {}
        self.stack = []

    def wrap(self, phase, fn):
        def timed(*a, **k):
            t0, c0, f0 = time.perf_counter(), time.process_time(), _faults()
            self.stack.append([0.0, 0.0, 0])
            try:
                return fn(*a, **k)
            finally:
                inner_w, inner_c, inner_f = self.stack.pop()
                w, c = time.perf_counter() - t0, time.process_time() - c0
                f = _faults() - f0
                mine = self.own.setdefault(phase, [0.0, 0.0, 0, 0])
                mine[0] += w - inner_w
                mine[1] += c - inner_c
                mine[2] += 1
                mine[3] += f - inner_f
                if self.stack:
                    self.stack[-1][0] += w
                    self.stack[-1][1] += c
                    self.stack[-1][2] += f
        timed.__wrapped__ = fn
        return timed


def install(split):
    for phase, module, attr in PHASES:
        m = importlib.import_module(module)
        owner, name = (m, attr) if "." not in attr else (getattr(m, attr.split(".")[0]),
                                                       attr.split(".")[1])
        setattr(owner, name, split.wrap(phase, getattr(owner, name)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command")
    ap.add_argument("args", nargs="+")
    ap.add_argument("--repeat", type=int, default=1)
    a, extra = ap.parse_known_args()
    a.args += extra
    os.environ["LEGATE_PROF_WORKERS"] = "1"
    os.environ["LEGATE_PROF_CACHE_DIR"] = ""
    from legate_prof.cli import main as cli
    split = Split()
    install(split)
    runs = []
    for _ in range(a.repeat):
        split.own.clear()
        t0, c0, f0 = time.perf_counter(), time.process_time(), _faults()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            cli([a.command, *a.args])
        runs.append((time.perf_counter() - t0, time.process_time() - c0, _faults() - f0,
                     {k: list(v) for k, v in split.own.items()}))
    wall, cpu, faults, own = min(runs, key=lambda r: r[1])  # (the run the machine disturbed least)
    print(f"legate_prof {a.command} {' '.join(a.args)}: {wall:.2f} s wall, {cpu:.2f} s CPU "
          f"(the least CPU of {a.repeat})")
    print(f"  {'phase':<18}{'wall s':>9}{'CPU s':>9}{'calls':>7}{'faults':>10}")
    for phase, _, _ in PHASES:
        if phase in own:
            w, c, n, f = own[phase]
            print(f"  {phase:<18}{w:>9.2f}{c:>9.2f}{n:>7}{f:>10}")
    rest_w = wall - sum(v[0] for v in own.values())
    rest_c = cpu - sum(v[1] for v in own.values())
    rest_f = faults - sum(v[3] for v in own.values())
    print(f"  {'other':<18}{rest_w:>9.2f}{rest_c:>9.2f}{'':>7}{rest_f:>10}")


if __name__ == "__main__":
    main()
