"""``legate_prof dump``: every record of Legion Prof logs as one JSON line."""

from __future__ import annotations

import os
import sys

from legate_prof.cli.arguments import add_files
from legate_prof.cli.common import EXIT_USER_ERROR, note
from legate_prof.errors import ProfileError


def register(sub):
    d = sub.add_parser("dump", help="every record as one JSON line")
    add_files(d, what="Legion Prof logs (legate_N.prof, gzipped or not), or folders holding "
                      "them")
    d.set_defaults(func=run)


def run(args):
    from legate_prof.load.inputs import distinct_inputs, expand_inputs, sniff
    from legate_prof.read.dump import dump
    rc = 0
    # a folder: its logs; each log once, as every command reads it (a review: a folder and a
    # file in it dumped that file twice)
    paths, repeats = distinct_inputs(expand_inputs(args.files, logs_only=True))
    for w in repeats:
        note(w)
    kinds = {}
    for p in paths:
        try:
            kinds[p] = sniff(p)
        except ProfileError:
            kinds[p] = None  # said below, in its turn
    has_legion = "legion" in kinds.values()
    named = {os.path.normpath(str(f)) for f in args.files}  # (not found in a folder)
    for path in paths:
        try:
            if kinds[path] is None:
                sniff(path)
            if kinds[path] == "runtime" and has_legion:  # legate_*.prof matches it too
                if os.path.normpath(path) in named:  # (a folder's: skipped without a word)
                    note(f"legate_prof: note: {path}: the runtime's event stream, not a "
                         "Legion Prof log: skipped")
                continue
            if kinds[path] == "runtime":
                raise ProfileError(path, "the array runtime's event stream: dump reads Legion "
                                         "Prof logs (legate_N.prof)")
            if kinds[path] != "legion":
                raise ProfileError(path, "not a Legion Prof binary log")
            for w in dump(path, sys.stdout):
                note(w)
        except ProfileError as e:
            note(f"legate_prof: error: {e}")
            rc = EXIT_USER_ERROR
    return rc
