"""The ``legate_prof`` argument parser: each command adds its own sub-parser."""

from __future__ import annotations

import argparse

from legate_prof import __version__
from legate_prof.cli.commands import (compare, convert, critical, dump, export, insights,
                                      record, report, screenshot, sql, stats, view)
from legate_prof.cli.common import EXIT_USER_ERROR

COMMANDS = (stats, dump, view, screenshot, insights, critical, compare, convert, report, export,
            sql, record)
LOADING = ("stats", "view", "screenshot", "insights", "critical", "compare", "convert",
           "report", "export", "sql")  # the commands that load a profile


class _Parser(argparse.ArgumentParser):
    """An argument parser whose mistakes are one line, exit 2, with a suggestion; it keeps the
    options it was given and (the top one) its commands, to suggest from."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.commands = {}  # name -> sub-parser (the top parser)
        self.argv = []  # the words parsed (the top parser): which command an error is of

    def parse_known_args(self, args=None, namespace=None):
        if self.commands:
            import sys
            self.argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def add_argument(self, *args, **kwargs):
        action = super().add_argument(*args, **kwargs)
        self.option_words = getattr(self, "option_words", []) + list(action.option_strings)
        return action

    def error(self, message):
        self.exit(EXIT_USER_ERROR, f"legate_prof: error: {message}{did_you_mean(self, message)}\n")


def did_you_mean(parser, message):
    """'; did you mean stats?' for a mistyped command or option (an option of the command
    typed: never the word typed itself), "; `critical` has no option --json" for another
    command's option, else ''."""
    import difflib
    import re
    m = re.match(r"argument (--start|--stop): expected one argument", message)
    if m:  # (`--start -1s`: argparse takes a word starting with '-' for an option)
        return (f"; give it a time of the run, 0 or more (e.g. {m.group(1)} 1.5s; a value "
                "starting with '-' reads as an option)")
    if message == "the following arguments are required: B":  # (compare given one run)
        return "; compare needs two runs: legate_prof compare RUN_A RUN_B"
    m = re.match(r"argument (cmd|COMMAND): invalid choice: '([^']*)'", message)
    if m and parser.commands:
        words, typed = list(parser.commands), [m.group(2)]
        other, cmd = set(), None
    else:
        m = re.match(r"unrecognized arguments: (.*)", message)
        if not m:
            return ""
        cmd = next((w for w in parser.argv if w in parser.commands), None)
        own = [parser] + ([parser.commands[cmd]] if cmd else list(parser.commands.values()))
        words = sorted({w for sp in own for w in getattr(sp, "option_words", [])})
        other = {w for sp in parser.commands.values() for w in getattr(sp, "option_words", [])}
        typed = [w.split("=", 1)[0] for w in m.group(1).split() if w.startswith("-")]
    for word in typed:
        if word in other and cmd:
            return f"; `{cmd}` has no option {word}"
        close = [w for w in difflib.get_close_matches(word, words, n=3, cutoff=0.6)
                 if w != word]
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
    p.commands = dict(sub.choices)
    for name in LOADING:
        p.commands[name].add_argument("-q", "--quiet", action="store_true",
                                       help="no progress bar on stderr while loading")
    return p
