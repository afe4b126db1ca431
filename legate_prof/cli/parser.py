"""The ``legate_prof`` argument parser: each command adds its own sub-parser."""

from __future__ import annotations

import argparse

from legate_prof import __version__
from legate_prof.cli import (compare, convert, critical, dump, export, insights, record,
                             report, screenshot, sql, stats, view)
from legate_prof.cli.common import EXIT_USER_ERROR

COMMANDS = (stats, dump, view, screenshot, insights, critical, compare, convert, report, export,
            sql, record)
LOADING = ("stats", "view", "screenshot", "insights", "critical", "compare", "convert",
           "report", "export", "sql")  # the commands that load a profile


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(EXIT_USER_ERROR, f"legate_prof: error: {message}\n")


def build_parser():
    p = _Parser(prog="legate_prof", description="Profile viewer for Legate programs "
                "(reads legate_N.prof Legion Prof logs).")
    p.add_argument("--version", action="version", version=f"legate_prof {__version__}")
    sub = p.add_subparsers(dest="cmd", parser_class=_Parser)
    for command in COMMANDS:
        command.register(sub)
    for name in LOADING:
        sub.choices[name].add_argument("-q", "--quiet", action="store_true",
                                       help="no progress bar on stderr while loading")
    return p
