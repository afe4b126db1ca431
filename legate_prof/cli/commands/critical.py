"""``legate_prof critical``: the run's critical path — from the item that ended last back to
where the chain stops — and its time split by kind, lane group and source line."""

from __future__ import annotations

import json
import sys

from legate_prof.cli.arguments import add_cache, add_files, add_ranks, add_window, count_arg
from legate_prof.cli.common import check_window, say, status


def register(sub):
    c = sub.add_parser("critical", help="the run's critical path and where its time went "
                       "(by kind, lane group and source line)")
    add_files(c)
    c.add_argument("--json", action="store_true",
                   help="machine-readable: the path, the splits and every item's critical "
                        "predecessor (docs/query_api.md)")
    c.add_argument("--log", help="legate's console output, to say why a crashed run has no "
                   "path (its out-of-memory report)")
    c.add_argument("--limit", type=count_arg, default=40, metavar="N",
                   help="steps of the path to print (0: all; default 40; steps of no time "
                        "are folded into one line and not counted)")
    add_ranks(c)
    add_window(c)
    add_cache(c)
    c.set_defaults(func=run)


def write_long_json(doc, long_keys, out):
    """``doc`` as JSON, indented, but each of its ``long_keys`` lists with one element a line
    (json's C encoder: with ``indent`` it falls back to Python, 50 s for 480,000 items)."""
    head = {k: v for k, v in doc.items() if k not in long_keys}
    text = json.dumps(head, indent=1)
    out.write(text[:-2] if head else "{")
    for n, key in enumerate(k for k in long_keys if k in doc):
        out.write(("," if head or n else "") + f"\n {json.dumps(key)}: [")
        for i, x in enumerate(doc[key]):
            out.write(("," if i else "") + "\n  " + json.dumps(x, separators=(", ", ": ")))
        out.write("\n ]" if doc[key] else "]")
    out.write("\n}\n")


def run(args):
    from legate_prof.cli.answers import answered
    return answered(args, "critical", _run)


def _run(args):
    from legate_prof.analyze.critical_path import critical_path_report
    from legate_prof.analyze.critical_text import (WINDOW_LINE, format_critical_path,
                                                   no_event_graph_words, skew_note)
    from legate_prof.cli.answers import source_with_path
    check_window(args)
    profile, source, path = source_with_path(args, ranked=True)
    report = critical_path_report(source, with_items=args.json, rows_as_read=not args.json)
    path.keep()
    if args.json:
        write_long_json(report, ("path", "items"), sys.stdout)
        return status(profile)
    missing = source.info().timeline_missing
    if missing:
        say(f"No critical path: {missing}. The critical path needs Legion Prof's logs "
            "(legate_N.prof), whose event graph the runtime's stream does not have.")
        return status(profile)
    if not source.has_event_graph():  # (kept with the run's path: no links to compute)
        why = no_event_graph_words(profile.summary_model().ranks)
        print(f"No critical path: {why}; what is shown follows creators only.")
    window = args.start is not None or args.stop is not None
    if window:
        say(WINDOW_LINE)
    # (the clocks: what a gap between nodes holds — said before the shares it changes: a
    # review read "96.1% 99.914 s gap" with the note forty rows below)
    note_ = skew_note(source.message_latency())
    if note_:
        say(note_ + "\n")
    say(format_critical_path(report, limit=max(args.limit, 0), window=window))
    return status(profile)
