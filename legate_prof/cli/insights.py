"""``legate_prof insights``: the guide's inefficiency patterns, by source line."""

from __future__ import annotations

import json
import sys

from legate_prof.cli.arguments import add_files
from legate_prof.cli.common import input_files, load_with_progress, status


def register(sub):
    i = sub.add_parser("insights", help="the guide's inefficiency patterns found in the "
                       "profile, with their source lines and remedies")
    add_files(i)
    i.add_argument("--json", action="store_true", help="machine-readable (docs/insights.md)")
    i.add_argument("--log", help="legate's console output, to explain an out-of-memory failure")
    i.set_defaults(func=run)


def run(args):
    from legate_prof.analyze.insights import find_insights, format_insights
    model = load_with_progress(input_files(args), args, stack=False)
    findings = find_insights(model)
    if args.json:
        json.dump({"findings": findings}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(format_insights(findings))
    return status(model)
