"""``legate_prof critical``: the run's critical path — from the item that ended last back to
where the chain stops — and its time split by kind, lane group and source line."""

from __future__ import annotations

import json
import sys

from legate_prof.cli.arguments import add_files
from legate_prof.cli.common import input_files, load_with_progress, say, status


def register(sub):
    c = sub.add_parser("critical", help="the run's critical path and where its time went "
                       "(by kind, lane group and source line)")
    add_files(c)
    c.add_argument("--json", action="store_true",
                   help="machine-readable: the path, the splits and every item's critical "
                        "predecessor (docs/query_api.md)")
    c.add_argument("--limit", type=int, default=40, metavar="N",
                   help="items of the path to print (0: all; default 40)")
    c.set_defaults(func=run)


def run(args):
    from legate_prof.analyze.critical_path import critical_path_report, format_critical_path
    from legate_prof.query import as_source
    profile = load_with_progress(input_files(args), args, stack=False, ranked=True)
    source = as_source(profile)
    report = critical_path_report(source, with_items=args.json)
    if args.json:
        json.dump(report, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        if not source.critical_links().has_data:
            print("No critical path: the profile holds no event graph records (Legion writes "
                  "them from format 1011 on); what is shown follows creators only.")
        say(format_critical_path(report, limit=max(args.limit, 0)))
    return status(profile)
