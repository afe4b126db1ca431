"""The ``legate_prof`` argument parser: each command adds its own sub-parser."""

from __future__ import annotations

import argparse

from legate_prof import __version__
from legate_prof.cli import (compare, convert, dump, export, insights, record, report,
                             screenshot, sql, stats, view)
from legate_prof.cli.common import EXIT_USER_ERROR

COMMANDS = (stats, dump, view, screenshot, insights, compare, convert, report, export, sql,
            record)
LOADING = ("stats", "view", "screenshot", "insights", "compare", "convert", "report",
           "export", "sql")  # the commands that load a profile


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(EXIT_USER_ERROR, f"legate_prof: error: {message}{did_you_mean(self, message)}\n")


def did_you_mean(parser, message):
    """'; did you mean stats?' for a mistyped command or option, else ''."""
    import difflib
    import re
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    m = re.match(r"argument (cmd|COMMAND): invalid choice: '([^']*)'", message)
    if m and subs:
        words, typed = list(subs[0].choices), [m.group(2)]
    else:
        m = re.match(r"unrecognized arguments: (.*)", message)
        if not m:
            return ""
        parsers = [parser] + [sp for a in subs for sp in a.choices.values()]
        words = sorted({o for sp in parsers for a in sp._actions for o in a.option_strings})
        typed = [w for w in m.group(1).split() if w.startswith("-")]
    for word in typed:
        close = difflib.get_close_matches(word, words, n=1, cutoff=0.6)
        if close:
            return f"; did you mean {close[0]}?"
    return ""


def build_parser():
    p = _Parser(prog="legate_prof", description="Profile viewer for Legate programs "
                "(reads legate_N.prof Legion Prof logs).")
    p.add_argument("--version", action="version", version=f"legate_prof {__version__}")
    sub = p.add_subparsers(dest="cmd", parser_class=_Parser, metavar="COMMAND",
                           help="legate_prof COMMAND --help says more")
    for command in COMMANDS:
        command.register(sub)
    for name in LOADING:
        sub.choices[name].add_argument("-q", "--quiet", action="store_true",
                                       help="no progress bar on stderr while loading")
    return p
