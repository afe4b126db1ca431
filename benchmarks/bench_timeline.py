"""When each step of one command runs, from the process's start, as a user runs it: forked
copies and all (``bench_split`` adds up each phase's own time in one process instead).

    python benchmarks/bench_timeline.py stats --no-cache /tmp/real10m

Prints each step's start and length in seconds (sorted by start), then the end: what runs
on this process's path, and what a copy took off it (``EarlyAnalysis.answer`` waiting shows
the copy was late).  Nothing is kept between runs (``LEGATE_PROF_CACHE_DIR=''``).
"""

from __future__ import annotations

import time

T0 = time.perf_counter()

import contextlib  # noqa: E402 - the clock starts before any import
import importlib  # noqa: E402
import io  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

STEPS = [  # (module, function or Class.method)
    ("legate_prof.load.two_readers", "read_each"),
    ("legate_prof.read.legion_log", "LegionProfReader.read"),
    ("legate_prof.assemble.model_builder", "build_model"),
    ("legate_prof.assemble.model_builder", "lay_out"),
    ("legate_prof.assemble.model_builder", "_waits"),
    ("legate_prof.assemble.model_builder", "with_utilization"),
    ("legate_prof.load.early_analysis", "EarlyAnalysis.begin"),
    ("legate_prof.load.early_analysis", "EarlyAnalysis.answer"),
    ("legate_prof.analyze.stats", "stats_parts"),
    ("legate_prof.analyze.stats", "explained"),
    ("legate_prof.analyze.idle_gaps", "idle_gaps"),
    ("legate_prof.causality.critical_links", "compute_links"),
    ("legate_prof.causality.run_path", "walk_back"),
    ("legate_prof.causality.inference", "Inference.unknown_rows"),
    ("legate_prof.analyze.critical_path", "path_pieces"),
    ("legate_prof.query.source", "ProfileSource.message_latency"),
    ("legate_prof.analyze.insights", "insights_of_run"),
]


def timed(marks, name, fn):
    def step(*a, **k):
        t = time.perf_counter() - T0
        try:
            return fn(*a, **k)
        finally:
            marks.append((t, time.perf_counter() - T0 - t, name))
    return step


def install(marks):
    for module, attr in STEPS:
        m = importlib.import_module(module)
        owner = m
        *path, name = attr.split(".")
        for p in path:
            owner = getattr(owner, p)
        setattr(owner, name, timed(marks, attr, getattr(owner, name)))


def main():
    marks = []
    os.environ["LEGATE_PROF_CACHE_DIR"] = ""
    install(marks)
    for command in ("stats", "critical", "insights"):  # (their modules bind names at import)
        importlib.import_module(f"legate_prof.cli.commands.{command}")
    from legate_prof.cli import main as cli
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            cli(sys.argv[1:])
        except SystemExit:
            pass
    print(f"legate_prof {' '.join(sys.argv[1:])}, from the process's start:")
    print(f"  {'start s':>8}{'length s':>10}  step")
    for start, length, name in sorted(marks):
        print(f"  {start:>8.3f}{length:>10.3f}  {name}")
    print(f"  {time.perf_counter() - T0:>8.3f}{'':>10}  end")


if __name__ == "__main__":
    main()
