"""``legate_prof compare A B``: what changed between two runs, by source line and lane group."""

from __future__ import annotations

import json
import os
import sys

from legate_prof.cli.arguments import add_cache, add_expand, expanded
from legate_prof.cli.common import (EXIT_USER_ERROR, PICTURE_FORMATS, load_with_progress, note,
                                    say, shown)
from legate_prof.errors import ProfileError
from legate_prof.output_file import check_output


def register(sub):
    cm = sub.add_parser("compare", help="what changed between two runs, by source line and "
                        "lane group (and one picture of both on one time scale)")
    cm.add_argument("a", metavar="A", help="run A: a run's folder (its .prof logs or "
                    ".lpbundle bundles), or one file")
    cm.add_argument("b", metavar="B", help="run B, compared with A")
    cm.add_argument("--json", action="store_true",
                    help="machine-readable: lines (with how they were paired), groups, "
                         "findings, notes (docs/stats_json.md, compare --json)")
    cm.add_argument("-o", "--output", help="PNG of both timelines on one time scale")
    add_expand(cm)
    add_cache(cm)
    cm.set_defaults(func=run)


def _run_files(arg):
    """A run given as a directory (its profiles, whatever the run was named: as every
    command reads a folder) or one file."""
    from legate_prof.load.inputs import expand_inputs
    return expand_inputs([arg], note=note)


def _same_files(a_files, b_files):
    """Whether runs A and B are the same files (a run compared with itself)."""
    def files(paths):
        found = set()
        for p in paths:
            try:
                st = os.stat(p)
            except OSError:
                return None
            found.add((st.st_dev, st.st_ino))
        return found
    a = files(a_files)
    return a is not None and a == files(b_files)


def _code(model, files):
    """The code of the run's lines it did not record, from the program's file (where the
    run says it was, or beside the run's files)."""
    from legate_prof.load.source_code import code_of_lines
    missing = [p for p in model.provenances if p and p not in model.line_text]
    return code_of_lines(missing, sorted({os.path.dirname(os.path.abspath(f)) for f in files}))


def run(args):
    from legate_prof.analyze.compare import compare, format_compare
    a_files, b_files = _run_files(args.a), _run_files(args.b)
    if args.output:
        check_output(args.output, a_files + b_files, PICTURE_FORMATS, "picture")
    # (the runs as given: the loader expands a folder once, as every command's; the files
    # found, expanded again, read a folder named legate_1.prof inside a run: a review)
    a, b = (load_with_progress([args.a], args, stack=False),
            load_with_progress([args.b], args, stack=False))
    c = compare(a, b, same_files=_same_files(a_files, b_files),
                code=(_code(a, a_files), _code(b, b_files)))
    if args.output:  # first: a reader of the table that stops early (| head) stops nothing
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        from legate_prof.viewer.screenshot import render_comparison
        render_comparison([a, b], args.output, (args.a, args.b),
                          expand=expanded(args.expand))
        note(f"wrote {args.output}")
    if args.json:
        sys.stdout.write(json.dumps(c, indent=1))  # (one string: 0.75 -> 0.58 s at 10 MB)
        sys.stdout.write("\n")
    else:
        say(format_compare(c, (shown(args.a), shown(args.b))))
    return EXIT_USER_ERROR if a.errors or b.errors else 0
