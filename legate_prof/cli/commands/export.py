"""``legate_prof export``: Perfetto, Chrome trace, Parquet or DuckDB (docs/export.md)."""

from __future__ import annotations

from legate_prof.cli.arguments import add_files, add_ranks, add_window
from legate_prof.cli.common import (EXIT_USER_ERROR, check_window, input_files, load_with_progress,
                                    note, say, status, trimmed)
from legate_prof.output_file import check_output, is_standard_output, standard_output_named


def register(sub):
    ex = sub.add_parser("export", help="write Perfetto / Chrome trace / Parquet / DuckDB")
    add_files(ex)
    ex.add_argument("--format", required=True, choices=["perfetto", "chrome", "parquet", "duckdb"],
                    help="perfetto (.pftrace, ui.perfetto.dev), chrome (trace JSON), parquet (a "
                         "folder of tables), duckdb (one database file); docs/export.md")
    ex.add_argument("-o", "--output", required=True, type=standard_output_named,
                    help="output file (a directory of .parquet files for parquet; - or "
                         "/dev/stdout: standard output, for perfetto and chrome)")
    add_ranks(ex)
    add_window(ex)
    ex.set_defaults(func=run)


def run(args):
    """Write the merged profile as Perfetto / Chrome trace / Parquet / DuckDB."""
    from legate_prof.errors import ProfileError
    from legate_prof.export import MissingExtra, export
    if args.format in ("parquet", "duckdb") and is_standard_output(args.output):
        raise ProfileError(args.output, f"is standard output, and a {args.format} export is "
                           + ("a folder of files" if args.format == "parquet" else
                              "a database file") + ": give -o a path (perfetto and chrome go "
                           "to standard output)")
    check_output(args.output, input_files(args), None, "export", folder=args.format == "parquet")
    check_window(args)
    try:
        # (Parquet and DuckDB read a profile of several ranks rank by rank, unmerged)
        model = trimmed(load_with_progress(input_files(args), args,
                                           ranked=args.format in ("parquet", "duckdb")), args)
        export(model, args.format, args.output)
    except MissingExtra as e:
        note(f"legate_prof: error: {e}")
        return EXIT_USER_ERROR
    # (said on stderr where stdout is the output: the line would land inside it)
    (note if is_standard_output(args.output) else say)(
        f"wrote {args.output} ({args.format}, {model.n_items} items)")
    return status(model)
