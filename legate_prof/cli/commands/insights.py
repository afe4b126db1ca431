"""``legate_prof insights``: the guide's inefficiency patterns, by source line."""

from __future__ import annotations

import json
import sys

from legate_prof.cli.arguments import add_cache, add_files, add_ranks, add_window
from legate_prof.cli.common import check_window, say, status


def register(sub):
    i = sub.add_parser("insights", help="the guide's inefficiency patterns found in the "
                       "profile, with their source lines and remedies")
    add_files(i)
    i.add_argument("--json", action="store_true", help="machine-readable (docs/insights.md)")
    i.add_argument("--log", help="legate's console output, to explain an out-of-memory failure")
    add_ranks(i)
    add_window(i)
    add_cache(i)
    i.set_defaults(func=run)


def run(args):
    from legate_prof.cli.answers import answered
    return answered(args, "insights", _run)


def _run(args):
    from legate_prof.analyze.insights import holds_items, insights_of_run
    from legate_prof.analyze.insights_text import explained_words, format_insights
    from legate_prof.cli.answers import source_with_path
    check_window(args)
    model, source, path = source_with_path(args, ranked=True)
    from legate_prof.analyze.idle_ranks import shared_idle_gaps
    from legate_prof.cli.answers import keep_idle, kept_idle
    idle = kept_idle(args)
    if idle is not None:  # (the same idle time as `stats` explained it on this run)
        source.computed_once("idle_gaps", lambda: idle)
    windowed = args.start is not None or args.stop is not None
    found = insights_of_run(source, windowed)
    path.keep()
    if idle is None and source.computed("idle_gaps") is not None:
        keep_idle(args, shared_idle_gaps(source))
    if args.json:
        sys.stdout.write(json.dumps(found, indent=1))
        sys.stdout.write("\n")
    else:
        text = format_insights(found["findings"], windowed=windowed,
                               empty=not holds_items(model), run_ns=found["run_ns"])
        if found["findings"]:
            text = explained_words(found, windowed) + "\n\n" + text
        if found.get("unjudged"):
            text += ("\n\nNot judged in this window (a wider one may judge it):\n"
                     + "\n".join(f"  {u}" for u in found["unjudged"]))
        say(text)
    return status(model)
