"""``legate_prof stats``: the machine, each lane group's load and per-task timings."""

from __future__ import annotations

import json
import sys

from legate_prof.cli.arguments import add_cache, add_files, add_ranks, add_window
from legate_prof.cli.common import (EXIT_USER_ERROR, check_window, input_files,
                                    load_with_progress, say, trimmed)


def register(sub):
    s = sub.add_parser("stats", help="machine, per-lane-group load and per-task statistics")
    add_files(s)
    s.add_argument("--json", action="store_true", help="machine-readable (docs/stats_json.md)")
    s.add_argument("--log", help="legate's console output, to mark an out-of-memory failure")
    add_ranks(s)
    add_window(s)
    s.add_argument("--no-idle", action="store_true",
                   help="leave out idle time explained (it needs every item's critical "
                        "predecessor: about 2 s per million items)")
    add_cache(s)
    s.set_defaults(func=run)


def run(args):
    from legate_prof.cli.answers import answered
    return answered(args, "stats", _run)


def _run(args):
    from legate_prof.analyze.idle_ranks import EARLY, PREPARE
    from legate_prof.analyze.stats import compute_stats, format_stats
    check_window(args)
    # ranks (per-rank bundles, or big logs built by workers) are read rank by rank, without a
    # model of all ranks; operations are looked up over all ranks (``RankSet``); the workers
    # explain their ranks' idle time, a copy of this process that of a run built here
    # (begun while the run's waits are still worked out: ``load.early_analysis``)
    from legate_prof.cli.answers import keep_idle, kept_idle
    idle = None if args.no_idle else kept_idle(args)
    explain = not args.no_idle and idle is None
    whole = args.start is None and args.stop is None  # (else the model explained is a cut)
    model = trimmed(load_with_progress(input_files(args), args, stack=False, ranked=True,
                                       prepare=PREPARE if explain else None,
                                       early=EARLY if explain and whole else None), args)
    s = compute_stats(model, idle=explain)
    if idle is not None:
        s["idle"] = idle  # (in its place: as worked out before on the same run)
    elif not args.no_idle:
        keep_idle(args, s["idle"])
    if args.json:
        json.dump(s, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        say(format_stats(s))
    return EXIT_USER_ERROR if s["errors"] else 0
