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
    from legate_prof.analyze.stats import format_stats
    from legate_prof.analyze.stats_ranks import WholeRanksNeeded, compute_stats
    check_window(args)
    from legate_prof.cli.answers import keep_idle, kept_idle
    idle = None if args.no_idle else kept_idle(args)
    explain = not args.no_idle and idle is None
    try:
        s = compute_stats(_loaded(args, explain, shortcut=True), idle=explain)
    except WholeRanksNeeded:  # (the workers' shortcut falls short: the ranks whole, again,
        import contextlib   # without saying the same notes and warnings twice)
        import io
        with contextlib.redirect_stderr(io.StringIO()):
            profile = _loaded(args, explain, shortcut=False)
        s = compute_stats(profile, idle=explain)
    if idle is not None:
        s["idle"] = idle  # (in its place: as worked out before on the same run)
    elif not args.no_idle:
        keep_idle(args, s["idle"])
    if args.json:
        sys.stdout.write(json.dumps(s, indent=1))  # (one string: 0.75 -> 0.58 s at 10 MB)
        sys.stdout.write("\n")
    else:
        say(format_stats(s))
    return EXIT_USER_ERROR if s["errors"] else 0


def _loaded(args, explain, shortcut):
    """The profile as ``stats`` reads it.  Ranks (per-rank bundles, or big logs built by
    workers) are read rank by rank, without a model of all ranks; operations are looked up
    over all ranks (``RankSet``).  The workers make their ranks' statistics and, with
    ``explain``, explain their idle time (``stats_ranks.PREPARE``: with ``shortcut``, handing over
    only what is left to read, where nothing is kept for the next command; else
    ``idle_ranks.PREPARE``, the ranks whole: the timeline kept in the cache once the answer is
    out is theirs); a copy of this process explains that of a run built here (begun while
    the run's waits are still worked out: ``load.early_analysis``)."""
    from legate_prof.analyze import idle_ranks, stats_ranks
    from legate_prof.store.cache import cache_dir
    whole = args.start is None and args.stop is None  # (else the model explained is a cut)
    kept = bool(getattr(args, "cache", False)) and cache_dir() is not None
    if shortcut and whole and not kept and not getattr(args, "log", None):
        prepare = stats_ranks.PREPARE if explain else stats_ranks.PREPARE_NO_IDLE
    else:
        prepare = idle_ranks.PREPARE if explain else None
    return trimmed(load_with_progress(input_files(args), args, stack=False, ranked=True,
                                      prepare=prepare,
                                      early=idle_ranks.EARLY if explain and whole else None),
                   args)
