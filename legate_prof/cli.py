"""The ``legate_prof`` command line.

User mistakes (missing file, not a profile, bad option) print one line and exit 2; anything
that could be read is still shown.  Damaged-but-readable input prints warnings and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from . import __version__
from .errors import ProfileError

EXIT_USER_ERROR = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(EXIT_USER_ERROR, f"legate_prof: error: {message}\n")


def bundled_example():
    from pathlib import Path
    return str(Path(__file__).with_name("data") / "example_legate_0.prof")


class _Progress:
    """Terminal progress for loads that take more than a second."""

    def __init__(self, stream=sys.stderr):
        self.t0 = time.monotonic()
        self.stream = stream
        self.shown = False

    def __call__(self, done, total, what):
        if time.monotonic() - self.t0 < 1.0 and not self.shown:
            return
        self.shown = True
        self.stream.write(f"\r[{done}/{total}] {what}\x1b[K")
        self.stream.flush()

    def close(self):
        if self.shown:
            self.stream.write("\n")


def _load(files, args=None, also=None):
    """Load with terminal progress (and ``also``, e.g. a progress window, told the same)."""
    from .loader import load_profile
    prog = _Progress()

    def progress(done, total, what):
        prog(done, total, what)
        if also is not None:
            also(done, total, what)
    try:
        model = load_profile(files, progress=progress, use_cache=getattr(args, "cache", False))
    finally:
        prog.close()
    for w in model.warnings:
        print(w if str(w).startswith("warning") else f"warning: {w}", file=sys.stderr)
    for e in getattr(model, "errors", []):
        print(f"legate_prof: error: {e}", file=sys.stderr)
    return model


def _inputs(args):
    files = list(args.files)
    if getattr(args, "log", None):
        files.append(args.log)
    return files


def cmd_stats(args):
    from .stats import compute_stats, format_stats
    model = _load(_inputs(args), args)
    s = compute_stats(model)
    if args.json:
        json.dump(s, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(format_stats(s))
    return EXIT_USER_ERROR if getattr(model, "errors", []) else 0


def cmd_dump(args):
    from .dump import dump
    from .loader import sniff
    rc = 0
    for path in args.files:
        try:
            if sniff(path) != "legion":
                raise ProfileError(path, "not a Legion Prof binary log")
            for w in dump(path, sys.stdout):
                print(w, file=sys.stderr)
        except ProfileError as e:
            print(f"legate_prof: error: {e}", file=sys.stderr)
            rc = EXIT_USER_ERROR
    return rc


def _time_arg(s):
    """'12.5ms', '300us', '2s', '1000' (ns) -> ns."""
    s = s.strip().lower()
    for unit, mul in (("ns", 1), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9)):
        if s.endswith(unit):
            return int(float(s[: -len(unit)]) * mul)
    return int(float(s))


def cmd_screenshot(args):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    model = _load(_inputs(args), args)
    from .viewer.screenshot import render_screenshot
    out = render_screenshot(model, args.output, start=args.start, stop=args.stop,
                            width=args.width, height=args.height, expand=args.expand,
                            title_files=args.files)
    print(f"wrote {out}")
    return EXIT_USER_ERROR if getattr(model, "errors", []) else 0


def _has_display():
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
                or os.environ.get("QT_QPA_PLATFORM"))


def _window_problem():
    from .viewer.app import window_problem
    return window_problem()


def cmd_view(args):
    files = _inputs(args) or [bundled_example()]
    display = _has_display()
    problem = _window_problem() if display else None
    if not display or problem:
        out = os.path.abspath("legate_prof_view.png")
        why = problem or "no display found (DISPLAY/WAYLAND_DISPLAY unset)"
        print(f"legate_prof: {'error: ' if problem else ''}{why}; rendering the view to {out} "
              "instead", file=sys.stderr)
        args.files, args.log, args.output = files, None, out
        args.start = args.stop = None
        args.width, args.height, args.expand = 1600, 1000, []
        args.cache = False
        rc = cmd_screenshot(args)
        return EXIT_USER_ERROR if problem else rc
    from .viewer.app import load_with_progress, run_viewer
    model = load_with_progress(lambda progress: _load(files, args, progress), files)
    return run_viewer(model, files) or (EXIT_USER_ERROR if getattr(model, "errors", []) else 0)


def cmd_convert(args):
    from .bundle import write_bundle
    model = _load(_inputs(args), args)
    write_bundle(model, args.output)
    print(f"wrote {args.output} ({model.n_items} items)")
    return EXIT_USER_ERROR if getattr(model, "errors", []) else 0


def cmd_record(args):
    """Run ``legate --profile`` with the CUDA stand-in where no driver exists."""
    from .cuda_stub import legate_env, legate_executable
    try:
        cmd = [legate_executable()] + ["--profile"] + list(args.legate_args)
    except RuntimeError as e:
        print(f"legate_prof: error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    return subprocess.call(cmd, env=legate_env())


def cmd_export(args):
    """Write the merged profile as Perfetto / Chrome trace / Parquet / DuckDB (docs/export.md)."""
    from .export import MissingExtra, export
    from .export.atomic import refuse_input
    try:
        refuse_input(args.output, _inputs(args))
        model = _load(_inputs(args), args)
        export(model, args.format, args.output)
    except (MissingExtra, ValueError, OSError) as e:
        print(f"legate_prof: error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    print(f"wrote {args.output} ({args.format}, {model.n_items} items)")
    return EXIT_USER_ERROR if getattr(model, "errors", []) else 0


def cmd_sql(args):
    """Run one SQL query (DuckDB) over the export tables and print the result."""
    from .export import MissingExtra
    from .export.sql import format_result
    try:
        from .export.duckdb_db import query
        model = _load(_inputs(args), args)
        cols, rows = query(model, args.query)
    except MissingExtra as e:
        print(f"legate_prof: error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    except Exception as e:  # a DuckDB error in the user's query: one line, no traceback
        if type(e).__module__.split(".")[0] not in ("duckdb", "_duckdb"):
            raise
        print(f"legate_prof: error: query: {str(e).splitlines()[0]}", file=sys.stderr)
        return EXIT_USER_ERROR
    fmt = "csv" if args.csv else "json" if args.json else "table"
    sys.stdout.write(format_result(cols, rows, fmt))
    return EXIT_USER_ERROR if getattr(model, "errors", []) else 0


def build_parser():
    p = _Parser(prog="legate_prof", description="Profile viewer for Legate programs "
                "(reads legate_N.prof Legion Prof logs).")
    p.add_argument("--version", action="version", version=f"legate_prof {__version__}")
    sub = p.add_subparsers(dest="cmd", parser_class=_Parser)

    s = sub.add_parser("stats", help="machine, per-lane-group load and per-task statistics")
    s.add_argument("files", nargs="+")
    s.add_argument("--json", action="store_true", help="machine-readable (docs/stats_json.md)")
    s.add_argument("--log", help="legate's console output, to mark an out-of-memory failure")
    s.set_defaults(func=cmd_stats)

    d = sub.add_parser("dump", help="every record as one JSON line")
    d.add_argument("files", nargs="+")
    d.set_defaults(func=cmd_dump)

    v = sub.add_parser("view", help="open the timeline viewer (bundled example if no files)")
    v.add_argument("files", nargs="*")
    v.add_argument("--log", help="legate's console output, to mark an out-of-memory failure")
    v.add_argument("--no-cache", dest="cache", action="store_false",
                   help="do not read or write the .lpbundle cache of raw logs")
    v.set_defaults(func=cmd_view, cache=True)

    sc = sub.add_parser("screenshot", help="render the timeline to a PNG without a display")
    sc.add_argument("files", nargs="+")
    sc.add_argument("-o", "--output", required=True)
    sc.add_argument("--start", type=_time_arg, help="view start (e.g. 12ms, 300us, ns)")
    sc.add_argument("--stop", type=_time_arg, help="view stop")
    sc.add_argument("--width", type=int, default=1600)
    sc.add_argument("--height", type=int, default=1000)
    sc.add_argument("--expand", nargs="*", default=[], metavar="KIND",
                    help="lane groups to expand (cpu, utility, gpu_dev, system, channel, ...)")
    sc.add_argument("--log", help="legate's console output, to mark an out-of-memory failure")
    sc.set_defaults(func=cmd_screenshot)

    c = sub.add_parser("convert", help="write the merged model as one .lpbundle file")
    c.add_argument("files", nargs="+")
    c.add_argument("-o", "--output", required=True)
    c.set_defaults(func=cmd_convert)

    ex = sub.add_parser("export", help="write Perfetto / Chrome trace / Parquet / DuckDB")
    ex.add_argument("files", nargs="+")
    ex.add_argument("--format", required=True, choices=["perfetto", "chrome", "parquet", "duckdb"])
    ex.add_argument("-o", "--output", required=True,
                    help="output file (a directory of .parquet files for parquet)")
    ex.set_defaults(func=cmd_export)

    q = sub.add_parser("sql", help="run a SQL query (DuckDB) over the profile's tables")
    q.add_argument("query", help="e.g. \"SELECT name, sum(duration_ns) FROM items GROUP BY 1\"")
    q.add_argument("files", nargs="+")
    qf = q.add_mutually_exclusive_group()
    qf.add_argument("--csv", action="store_true", help="print CSV")
    qf.add_argument("--json", action="store_true", help="print a JSON list of objects")
    q.set_defaults(func=cmd_sql)

    r = sub.add_parser("record", help="run 'legate --profile ARGS' (adds the CUDA stand-in "
                       "on machines without an NVIDIA driver)")
    r.add_argument("legate_args", nargs=argparse.REMAINDER)
    r.set_defaults(func=cmd_record)
    return p


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["record"]:  # everything after it belongs to legate, options included
        return cmd_record(argparse.Namespace(legate_args=argv[1:]))
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USER_ERROR
    try:
        return args.func(args)
    except ProfileError as e:
        print(f"legate_prof: error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
