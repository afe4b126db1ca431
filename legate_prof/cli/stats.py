"""``legate_prof stats``: the machine, each lane group's load and per-task timings."""

from __future__ import annotations

import json
import sys

from legate_prof.cli.common import (EXIT_USER_ERROR, expanded_inputs, load_with_progress,
                                    print_warnings)


def register(sub):
    s = sub.add_parser("stats", help="machine, per-lane-group load and per-task statistics")
    s.add_argument("files", nargs="+")
    s.add_argument("--json", action="store_true", help="machine-readable (docs/stats_json.md)")
    s.add_argument("--log", help="legate's console output, to mark an out-of-memory failure")
    s.add_argument("--no-idle", action="store_true",
                   help="leave out idle time explained (it needs every item's critical "
                        "predecessor: about 2 s per million items)")
    s.set_defaults(func=run)


def run(args):
    from legate_prof.analyze.stats import compute_stats, format_stats, stats_by_ranks
    from legate_prof.cli.progress import TerminalProgress, wants_progress
    files = expanded_inputs(args)
    s = None
    if not getattr(args, "log", None):  # rank by rank, without a model of all ranks
        bar = TerminalProgress(files, enabled=wants_progress(quiet=getattr(args, "quiet", False)))
        try:
            s = stats_by_ranks(files, bar, idle=not args.no_idle)
        finally:
            bar.close()
        if s is not None:
            print_warnings(s["warnings"])
    if s is None:
        model = load_with_progress(files, args, stack=False)
        s = compute_stats(model, idle=not args.no_idle)
    if args.json:
        json.dump(s, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(format_stats(s))
    return EXIT_USER_ERROR if s["errors"] else 0
