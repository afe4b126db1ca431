"""``legate_prof sql``: one SQL query (DuckDB) over the profile's export tables."""

from __future__ import annotations

import argparse
import os
import sys

from legate_prof.cli.arguments import FILES_HELP, add_files
from legate_prof.cli.common import EXIT_USER_ERROR, input_files, load_with_progress, note, status
from legate_prof.present.terminal import terminal_safe


def register(sub):
    q = sub.add_parser("sql", help="run a SQL query (DuckDB) over the profile's tables",
                       epilog=_TABLES, formatter_class=_TablesHelpFormatter)
    q.add_argument("query", help="e.g. \"SELECT name, sum(duration_ns) FROM items GROUP BY 1\"")
    add_files(q, what=FILES_HELP + "; or one folder written by export --format parquet (queried "
                                   "where it lies)")
    qf = q.add_mutually_exclusive_group()
    qf.add_argument("--csv", action="store_true", help="print CSV")
    qf.add_argument("--json", action="store_true", help="print a JSON list of objects")
    q.set_defaults(func=run)


_TABLES = "(the tables: tables_help)"  # the epilog, written out when help is printed


class _TablesHelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Lists the tables only when help is printed: they come from the export modules, whose
    imports (DuckDB's, Arrow's) would otherwise cost every command a tenth of a second."""

    def add_text(self, text):
        super().add_text(tables_help() if text == _TABLES else text)


def tables_help():
    """The tables and views a query can read, with their columns (docs/export.md)."""
    from legate_prof.export.duckdb_db import VIEWS
    from legate_prof.export.tables import SCHEMAS
    out = ["tables (docs/export.md):"]
    for table, cols in SCHEMAS.items():
        out.append(f"  {table}: " + ", ".join(c for c, _, _ in cols))
    out.append("views: " + ", ".join(VIEWS))
    return "\n".join(out)


def _swapped(args):
    """The query given after the files (``sql run/ "SELECT ..."``): it read the query as a
    file ("show tables: No such file or directory", a review)."""
    return (os.path.exists(args.query) and len(args.files) == 1
            and not os.path.exists(args.files[0]))


def run(args):
    """Run one SQL query (DuckDB) over the export tables and print the result."""
    from legate_prof.export import MissingExtra
    from legate_prof.export.sql import format_result
    if _swapped(args):
        note(f"legate_prof: error: the query comes first: legate_prof sql "
             f"{terminal_safe(repr(args.files[0]))} {terminal_safe(args.query)}")
        return EXIT_USER_ERROR
    try:
        from legate_prof.export.duckdb_db import query, query_parquet
        from legate_prof.export.parquet import table_files
        if len(args.files) == 1 and table_files(args.files[0]) is not None:
            cols, rows = query_parquet(args.files[0], args.query)  # an export, where it lies
            model = None
        else:
            model = load_with_progress(input_files(args), args, ranked=True)
            cols, rows = query(model, args.query)
    except MissingExtra as e:
        note(f"legate_prof: error: {e}")
        return EXIT_USER_ERROR
    except Exception as e:  # a DuckDB error in the user's query: one line, no traceback
        if type(e).__module__.split(".")[0] not in ("duckdb", "_duckdb"):
            raise
        if isinstance(e.__cause__, KeyboardInterrupt) or "KeyboardInterrupt" in str(e):
            # Ctrl-C while DuckDB read a table from Python: it words it as its own error
            raise KeyboardInterrupt from None
        said = str(e).splitlines()[0]
        if "file system operations are disabled" in said:  # (a review tried read_parquet
            said += ("; `sql` reads no file a query names (nothing but its inputs): query the "
                     "tables by name (SELECT ... FROM items), or the export's files with "
                     "DuckDB itself")
        note(f"legate_prof: error: query: {said}")
        return EXIT_USER_ERROR
    from legate_prof.export.duckdb_db import statement_count
    n = statement_count(args.query)
    if n > 1:  # (DuckDB answers with the last one's rows: said, not left to be guessed)
        note(f"legate_prof: the query holds {n} statements; the result below is the last "
             "one's (run each alone for its own)")
    fmt = "csv" if args.csv else "json" if args.json else "table"
    text = format_result(cols, rows, fmt)  # (a table or CSV on a terminal: a stranger's text)
    if fmt != "json":  # (JSON escapes control characters itself)
        text = "\n".join(terminal_safe(line) for line in text.split("\n"))
    sys.stdout.write(text)
    return status(model) if model is not None else 0
