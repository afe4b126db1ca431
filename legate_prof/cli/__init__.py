"""The ``legate_prof`` command line.

User mistakes (missing file, not a profile, bad option) print one line and exit 2; anything
that could be read is still shown.  Damaged-but-readable input prints warnings and exits 0.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys

from legate_prof import __version__
from legate_prof.errors import ProfileError
from legate_prof.output_file import check_output, sweep_stale_outputs
from legate_prof.present.picture_size import MAX_SIDE, MIN_SIDE, check_size

EXIT_USER_ERROR = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(EXIT_USER_ERROR, f"legate_prof: error: {message}\n")


def bundled_example():
    from pathlib import Path
    return str(Path(__file__).parent.parent / "data" / "example_legate_0.prof")


def _load(files, args=None, also=None, stack=True, check_files=True, ranked=False):
    """Load with terminal progress on stderr (a TTY, not --quiet), and ``also`` told the same
    (e.g. the viewer's window).  ``stack=False`` for commands that never draw lanes;
    ``ranked`` for those that ask only the query API (see ``load_profile``)."""
    from legate_prof.load.loader import load_profile
    from legate_prof.cli.progress import TerminalProgress, wants_progress
    bar = TerminalProgress(files, enabled=wants_progress(quiet=getattr(args, "quiet", False)))

    def progress(done, total, what):
        bar(done, total, what)
        if also is not None:
            also(done, total, what)
    cache = getattr(args, "cache", False)
    if cache and getattr(args, "func", None) is cmd_view:
        cache = "later"  # the timeline first; the cache entry is written meanwhile
    with bar:
        model = load_profile(files, progress=progress, use_cache=cache, stack=stack,
                             check_files=check_files, ranked=ranked)
    for e in model.errors:  # what could not be read first, then what it means for the rest
        print(f"legate_prof: error: {e}", file=sys.stderr)
    for w in model.warnings:
        print(w if str(w).startswith("warning") else f"warning: {w}", file=sys.stderr)
    return model


def _inputs(args):
    files = list(args.files)
    if getattr(args, "log", None):
        from legate_prof.load.loader import sniff
        if sniff(args.log) != "text":
            raise ProfileError(args.log, "--log takes legate's console output (a text file); "
                                         "this is not one")
        files.append(args.log)
    return files


def _stats_by_parts(files, quiet=False):
    """Statistics of ``files`` (directories expanded) added up from each rank's parts,
    without a model of all ranks: big multi-rank logs in worker processes, or several bundles
    (``convert --per-rank``) one mapped at a time.  None where that does not apply or a part
    could not be made (the caller then loads everything together, which reports any problem
    as it always does)."""
    from legate_prof.errors import ProfileError
    from legate_prof.load.loader import plan_inputs, rank_files_for_workers
    from legate_prof.cli.progress import TerminalProgress
    from legate_prof.build.rank_checks import cross_file_problems
    from legate_prof.analyze.stats import finish_stats, stats_parts
    paths, kinds, errors, warnings = plan_inputs(files)
    if errors:
        return None
    if len(paths) > 1 and all(kinds[p] == "bundle" for p in paths):
        from legate_prof.store.bundle import read_bundle
        try:
            parts = [stats_parts(read_bundle(p)) for p in paths]
        except ProfileError:
            return None
    else:
        legion, n = rank_files_for_workers(paths, kinds, errors)
        if n < 2:
            return None
        from legate_prof.load.rank_workers import stats_in_parallel
        from legate_prof.cli.progress import wants_progress
        prog = TerminalProgress(legion, enabled=wants_progress(quiet=quiet))
        try:
            parts = stats_in_parallel(legion, n, prog)
        finally:
            prog.close()
        if parts is None:
            return None
    seen = [set(p["lane_ranks"]) for p in parts]
    if sum(map(len, seen)) != len(set().union(*seen)):
        return None  # a rank's lanes in two inputs: only loading them together is right
    ranks = [r for p in parts for r in p["ranks"]]
    own = [set(cross_file_problems(p["ranks"])) for p in parts]  # a bundle's, over its ranks
    warnings = (warnings + [w for p, o in zip(parts, own) for w in p["warnings"] if w not in o]
                + cross_file_problems(ranks))
    for w in warnings:
        print(w if str(w).startswith("warning") else f"warning: {w}", file=sys.stderr)
    return finish_stats(parts, paths, [], warnings)


def cmd_stats(args):
    from legate_prof.load.loader import _note, expand_inputs
    from legate_prof.analyze.stats import compute_stats, format_stats
    files = expand_inputs([os.fspath(f) for f in _inputs(args)], note=_note)
    s = (_stats_by_parts(files, getattr(args, "quiet", False))
         if not getattr(args, "log", None) else None)
    if s is None:
        model = _load(files, args, stack=False)
        s = compute_stats(model)
    if args.json:
        json.dump(s, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(format_stats(s))
    return EXIT_USER_ERROR if s["errors"] else 0


def cmd_dump(args):
    from legate_prof.read.dump import dump
    from legate_prof.load.loader import expand_inputs, sniff
    rc = 0
    paths = expand_inputs(args.files, logs_only=True)  # a folder: its logs
    kinds = {}
    for p in paths:
        try:
            kinds[p] = sniff(p)
        except ProfileError:
            kinds[p] = None  # said below, in its turn
    has_legion = "legion" in kinds.values()
    for path in paths:
        try:
            if kinds[path] is None:
                sniff(path)
            if kinds[path] == "runtime" and has_legion:  # legate_*.prof matches it too
                print(f"legate_prof: note: {path}: the runtime's event stream, not a Legion "
                      "Prof log: skipped", file=sys.stderr)
                continue
            if kinds[path] != "legion":
                raise ProfileError(path, "not a Legion Prof binary log")
            for w in dump(path, sys.stdout):
                print(w, file=sys.stderr)
        except ProfileError as e:
            print(f"legate_prof: error: {e}", file=sys.stderr)
            rc = EXIT_USER_ERROR
    return rc


def _time_arg(s):
    """'12.5ms', '300us', '2s', '1000' (ns) -> ns."""
    text = s.strip().lower()
    mul = 1
    for unit, m in (("ns", 1), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9)):
        if text.endswith(unit):
            text, mul = text[: -len(unit)], m
            break
    try:
        v = float(text) * mul
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not a time (e.g. 12ms, 300us, 2s)") from None
    if not math.isfinite(v) or v < 0 or v >= 2**62:
        raise argparse.ArgumentTypeError(f"{s!r} is not a time within the run")
    return int(v)


def _size_arg(s):
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not a whole number of pixels") from None
    if not MIN_SIDE <= v <= MAX_SIDE:
        raise argparse.ArgumentTypeError(f"{v} pixels: use {MIN_SIDE} to {MAX_SIDE}")
    return v


def _expand_arg(s):
    """A lane group by its key or its title (``gpu dev``, ``chan``, ``io (extern)``)."""
    from legate_prof.model.kinds import GROUP_KEYS, GROUP_TITLE
    by_title = {t: k for k, t in GROUP_TITLE.items()}
    s = by_title.get(s, s)
    if s not in GROUP_KEYS:
        hint = (" (a file? --expand takes every word after it: put the files first)"
                if os.path.exists(s) or s.endswith((".prof", ".gz", ".lpbundle")) else "")
        raise argparse.ArgumentTypeError(f"no lane group {s!r}{hint}; one of "
                                         f"{', '.join(GROUP_KEYS)}")
    return s


PICTURE_FORMATS = {".png", ".jpg", ".jpeg", ".bmp"}

# the guide's I/O lane is, under legate 26.06, the external thread the top-level task runs on
_EXPAND_ALSO = {"io": ("proc_other",)}


def _expanded(words):
    return list(dict.fromkeys(k for w in words for k in (w, *_EXPAND_ALSO.get(w, ()))))


def _check_view_range(args):
    if args.start is not None and args.stop is not None and args.start >= args.stop:
        raise ProfileError(args.output, f"--start ({args.start} ns) must come before --stop "
                                        f"({args.stop} ns)")


def cmd_screenshot(args, model=None):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    check_output(args.output, _inputs(args), PICTURE_FORMATS, "picture")
    check_size(args.output, args.width, args.height)
    _check_view_range(args)
    if model is None:
        model = _load(_inputs(args), args, ranked=True)
    _warn_outside_run(args, model)
    from legate_prof.viewer.screenshot import render_screenshot
    out = render_screenshot(model, args.output, start=args.start, stop=args.stop,
                            width=args.width, height=args.height,
                            expand=_expanded(args.expand),
                            title_files=args.files)
    print(f"wrote {out}")
    return EXIT_USER_ERROR if model.errors else 0


def _warn_outside_run(args, profile):
    """--start past the run's end, or --stop before its start, cannot be shown as asked: the
    picture keeps to the run, and the terminal says so."""
    from legate_prof.query.source import as_source, format_time
    t0, t1 = as_source(profile).info().time_range
    for opt, t, outside in (("--start", args.start, lambda t: t >= t1),
                            ("--stop", args.stop, lambda t: t <= t0)):
        if t is not None and outside(t):
            print(f"warning: {opt} {format_time(t)} is outside the run ({format_time(t0)} – "
                  f"{format_time(t1)}); the picture keeps to the run", file=sys.stderr)


def _has_display():
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
                or os.environ.get("QT_QPA_PLATFORM"))


def _window_problem():
    from legate_prof.viewer.app import window_problem
    return window_problem()


class _EarlyLoad:
    """A load started before the viewer's Qt is imported: the rank files are read and built
    while Qt starts and the window opens (half a second to a second), instead of after.
    ``wait(progress)`` hands on the progress from then on (the last step at once) and
    returns the model, or raises what the load raised."""

    def __init__(self, files, args):
        import threading
        self._lock = threading.Lock()
        self._sink, self._last, self._outcome = None, None, None
        self._done = threading.Event()
        # not a daemon: a path that ends before the window's (an error, the picture instead
        # of a window) waits for it rather than the interpreter stopping it inside numpy; a
        # window closed mid-load ends the process with os._exit (viewer/app.py)
        threading.Thread(target=self._run, args=(files, args), name="legate_prof-early-load",
                         daemon=False).start()

    def _progress(self, done, total, what):
        with self._lock:
            self._last, sink = (done, total, what), self._sink
        if sink is not None:
            sink(done, total, what)

    def _run(self, files, args):
        try:
            self._outcome = (_load(files, args, self._progress, ranked=True), None)
        except BaseException as e:  # raised again by wait(), in the thread that waits
            self._outcome = (None, e)
        self._done.set()

    def wait(self, progress=None):
        with self._lock:
            self._sink, last = progress, self._last
        if progress is not None and last is not None:
            progress(*last)
        self._done.wait()
        model, error = self._outcome
        if error is not None:
            raise error
        return model


def cmd_view(args):
    files = _inputs(args) or [bundled_example()]
    display = _has_display()
    early = _EarlyLoad(files, args) if display else None
    problem = _window_problem() if display else None
    if not display or problem:
        out = os.path.abspath("legate_prof_view.png")
        check_output(out, files, PICTURE_FORMATS, "picture")
        args.files, args.log, args.output = files, None, out
        args.start = args.stop = None
        args.width, args.height, args.expand = 1600, 1000, []
        args.cache = False  # (the early load, if any, is already under way with the cache)
        # loaded first: input that cannot be read is its one line, not this note and then it
        model = early.wait() if early is not None else _load(files, args, ranked=True)
        why = problem or "no display found (DISPLAY/WAYLAND_DISPLAY unset)"
        print(f"legate_prof: {'error: ' if problem else ''}{why}; rendering the view to {out} "
              "instead", file=sys.stderr)
        rc = cmd_screenshot(args, model=model)
        return EXIT_USER_ERROR if problem else rc
    from legate_prof.viewer.app import run_viewer
    from legate_prof.analyze.insights import find_insights
    loaded = []

    def load(progress):  # in the window's worker thread: the window shows meanwhile
        model = early.wait(progress)
        loaded.append(model)
        return model

    def exit_status(rc):
        return rc or (EXIT_USER_ERROR if loaded and loaded[0].errors else 0)
    return run_viewer(files=files, load=load, findings=find_insights,
                      process_exit=exit_status)


def _bundle_beside(path):
    name = os.path.basename(path)
    for ext in (".prof.gz", ".prof", ".gz"):
        if name.endswith(ext):
            name = name[: -len(ext)]
            break
    return os.path.join(os.path.dirname(path), name + ".lpbundle")


def cmd_convert(args):
    from legate_prof.store.bundle import write_bundle
    from legate_prof.load.loader import expand_inputs
    inputs = _inputs(args)
    if args.per_rank:  # a directory's logs, each converted beside itself
        inputs = expand_inputs(inputs, logs_only=True)
    if args.per_rank or (args.output is None and len(inputs) == 1):
        if args.output is not None and len(inputs) > 1:
            raise ProfileError(args.output, "--per-rank writes one bundle beside each input; "
                                            "leave out -o")
        jobs = [(f, args.output or _bundle_beside(f)) for f in inputs]
    elif args.output is None:
        raise ProfileError(inputs[0], "several inputs: give -o for one merged bundle, or "
                                      "--per-rank for one beside each")
    else:
        jobs = [(inputs, args.output)]
    for _, out in jobs:
        check_output(out, inputs, {".lpbundle"}, "bundle")
    rc = 0
    for files, out in jobs:
        model = _load(files if isinstance(files, list) else [files], args,
                      check_files=isinstance(files, list))
        write_bundle(model, out)
        print(f"wrote {out} ({model.n_items} items)")
        rc = rc or (EXIT_USER_ERROR if model.errors else 0)
    return rc


def cmd_report(args):
    """Write the offline HTML report folder (index.html opens from file://)."""
    files = _inputs(args)
    out = os.path.abspath(args.output)
    for f in files:
        if os.path.realpath(f).startswith(os.path.realpath(out) + os.sep):
            raise ProfileError(out, "holds an input; write the report to another folder")
    if os.path.exists(out) and not os.path.isdir(out):
        raise ProfileError(out, "exists and is not a folder; choose another -o")
    from legate_prof.report import write_report
    from legate_prof.report.writer import MARKER
    if os.path.isdir(out) and os.listdir(out) and not os.path.exists(os.path.join(out, MARKER)):
        raise ProfileError(out, "exists and is not a legate_prof report; choose another -o")
    model = _load(files, args, ranked=True)  # ranks are read one by one, never merged
    done = write_report(model, out, pictures=getattr(args, "pictures", True))
    print(f"wrote {done['path']}")
    return EXIT_USER_ERROR if model.errors else 0


RECORD_USAGE = """usage: legate_prof record [--no-report] [legate options] prog.py [args]

Runs `legate --profile prog.py` (the legate_*.prof logs go to --logdir, default here), adds
`--gpus 0` where no NVIDIA driver exists (a stand-in answers "no device"), and writes
legate_prof/index.html, the HTML report, beside the logs (--no-report: not). A failed run or
no profiles written is one line and a non-zero exit status."""


def cmd_record(args):
    """Run ``legate --profile`` with the CUDA stand-in where no driver exists, then the report.

    Without a driver legate's auto-configuration fails looking for GPUs, so ``--gpus 0`` is
    added unless the user chose.  Legate claims "Profiles have been generated" even when the
    program failed; that line is held back and a failed run is summed up in one line.  After a
    good run ``legate_prof/index.html`` is written beside the logs (``--no-report``: not).
    """
    from legate_prof.cuda_stub import legate_env, legate_executable, real_driver_present
    extra = list(args.legate_args)
    asks_help = extra[:1] in (["-h"], ["--help"])
    if asks_help:
        print(RECORD_USAGE)
        print("legate's own options follow.\n", flush=True)
    prog_at = next((i for i, a in enumerate(extra) if a.endswith(".py")), len(extra))
    no_report = "--no-report" in extra[:prog_at]
    if no_report:
        extra.remove("--no-report")
        prog_at -= 1
    if not any(a == "--gpus" or a.startswith("--gpus=") for a in extra[:prog_at]) \
            and not real_driver_present():
        extra = ["--gpus", "0"] + extra
        prog_at += 2
        print("legate_prof: no NVIDIA driver here: running with --gpus 0", file=sys.stderr)
    try:
        cmd = [legate_executable()] + ["--profile"] + extra
    except RuntimeError as e:
        print(f"legate_prof: error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    logdir = "."
    for i, a in enumerate(extra[:prog_at]):
        if a == "--logdir" and i + 1 < prog_at:
            logdir = extra[i + 1]
        elif a.startswith("--logdir="):
            logdir = a.split("=", 1)[1]
    before = {p: os.path.getmtime(p) for p in _profiles_in(logdir)}
    held = []
    p = subprocess.Popen(cmd, env=legate_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, errors="replace")
    for line in p.stdout:
        if line.startswith("Profiles have been generated"):
            held.append(line)
        else:
            sys.stdout.write(line)
            sys.stdout.flush()
    rc = p.wait()
    if asks_help:
        return rc
    written = [f for f in _profiles_in(logdir) if before.get(f) != os.path.getmtime(f)]
    if rc != 0:
        what = (f"partial profiles: {' '.join(written)}" if written
                else "no profiles were written")
        print(f"legate_prof: error: legate exited with status {rc}; {what}", file=sys.stderr)
        return rc if 0 < rc < 128 else EXIT_USER_ERROR
    if not written:  # (legate still says "Profiles have been generated")
        print(f"legate_prof: error: legate wrote no profiles in {os.path.abspath(logdir)}; "
              f"{RECORD_USAGE.splitlines()[0]}", file=sys.stderr)
        return EXIT_USER_ERROR
    sys.stdout.writelines(held)
    if not no_report:  # the guide: legate_prof/index.html beside the logs
        try:
            return cmd_report(argparse.Namespace(files=written, log=None, cache=False,
                                                 pictures=True,
                                                 output=os.path.join(logdir, "legate_prof")))
        except ProfileError as e:
            print(f"legate_prof: error: report: {e}", file=sys.stderr)
            return EXIT_USER_ERROR
    return 0


def _profiles_in(d):
    import glob
    return sorted(glob.glob(os.path.join(d, "legate_*.prof")))


def _run_files(arg):
    """A run given as a directory (its legate_*.prof files) or one file."""
    if os.path.isdir(arg):
        import glob
        files = sorted(glob.glob(os.path.join(arg, "legate_*.prof*")))
        if not files:
            raise ProfileError(arg, "no legate_*.prof files in this directory")
        return files
    return [arg]


def cmd_compare(args):
    from legate_prof.analyze.compare import compare, format_compare
    a_files, b_files = _run_files(args.a), _run_files(args.b)
    if args.output:
        check_output(args.output, a_files + b_files, PICTURE_FORMATS, "picture")
    a, b = _load(a_files, args, stack=False), _load(b_files, args, stack=False)
    c = compare(a, b)
    if args.output:  # first: a reader of the table that stops early (| head) stops nothing
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        from legate_prof.viewer.screenshot import render_comparison
        render_comparison([a, b], args.output, (args.a, args.b),
                          expand=_expanded(args.expand))
        print(f"wrote {args.output}", file=sys.stderr)
    if args.json:
        json.dump(c, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(format_compare(c, (args.a, args.b)))
    return EXIT_USER_ERROR if a.errors or b.errors else 0


def cmd_insights(args):
    from legate_prof.analyze.insights import find_insights, format_insights
    model = _load(_inputs(args), args, stack=False)
    findings = find_insights(model)
    if args.json:
        json.dump({"findings": findings}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(format_insights(findings))
    return EXIT_USER_ERROR if model.errors else 0


def cmd_export(args):
    """Write the merged profile as Perfetto / Chrome trace / Parquet / DuckDB (docs/export.md)."""
    from legate_prof.export import MissingExtra, export
    check_output(args.output, _inputs(args), None, "export", folder=args.format == "parquet")
    try:
        model = _load(_inputs(args), args)
        export(model, args.format, args.output)
    except MissingExtra as e:
        print(f"legate_prof: error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    print(f"wrote {args.output} ({args.format}, {model.n_items} items)")
    return EXIT_USER_ERROR if model.errors else 0


def cmd_sql(args):
    """Run one SQL query (DuckDB) over the export tables and print the result."""
    from legate_prof.export import MissingExtra
    from legate_prof.export.sql import format_result
    try:
        from legate_prof.export.duckdb_db import query
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
    return EXIT_USER_ERROR if model.errors else 0


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
    sc.add_argument("--width", type=_size_arg, default=1600,
                    help=f"pixels ({MIN_SIDE} to {MAX_SIDE})")
    sc.add_argument("--height", type=_size_arg, default=1000,
                    help=f"pixels ({MIN_SIDE} to {MAX_SIDE}); taller where the lanes shown "
                         "need it")
    sc.add_argument("--expand", nargs="*", action="extend", default=[], metavar="KIND",
                    type=_expand_arg,
                    help="lane groups to expand, by key or title (cpu, utility, io, gpu_dev or "
                         "'gpu dev', system, channel or chan, ...); io includes 'io (extern)'")
    sc.add_argument("--log", help="legate's console output, to mark an out-of-memory failure")
    sc.set_defaults(func=cmd_screenshot)

    i = sub.add_parser("insights", help="the guide's inefficiency patterns found in the "
                       "profile, with their source lines and remedies")
    i.add_argument("files", nargs="+")
    i.add_argument("--json", action="store_true", help="machine-readable (docs/insights.md)")
    i.add_argument("--log", help="legate's console output, to explain an out-of-memory failure")
    i.set_defaults(func=cmd_insights)


    cm = sub.add_parser("compare", help="what changed between two runs, by source line and "
                        "lane group (and one picture of both on one time scale)")
    cm.add_argument("a", help="run A: a directory of legate_*.prof files, or one file")
    cm.add_argument("b", help="run B")
    cm.add_argument("--json", action="store_true")
    cm.add_argument("-o", "--output", help="PNG of both timelines on one time scale")
    cm.add_argument("--expand", nargs="*", action="extend", default=[], metavar="KIND",
                    type=_expand_arg)
    cm.set_defaults(func=cmd_compare, cache=False)

    c = sub.add_parser("convert", help="write the merged model as one .lpbundle file, or with "
                                       "--per-rank one bundle beside each rank's file")
    c.add_argument("files", nargs="+")
    c.add_argument("-o", "--output", help="the bundle (default: beside a single input, "
                                          "named after it)")
    c.add_argument("--per-rank", action="store_true",
                   help="one bundle per rank file, beside it (on a cluster: run where each "
                        "file lies); `view DIR` opens them together")
    c.set_defaults(func=cmd_convert)

    rp = sub.add_parser("report", help="write the offline HTML report folder (index.html)")
    rp.add_argument("files", nargs="+")
    rp.add_argument("-o", "--output", default="legate_prof", help="folder (default legate_prof)")
    rp.add_argument("--log", help="legate's console output, to mark an out-of-memory failure")
    rp.add_argument("--no-pictures", dest="pictures", action="store_false",
                    help="skip the per-group PNG pictures")
    rp.set_defaults(func=cmd_report)

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

    for name in ("stats", "view", "screenshot", "insights", "compare", "convert", "report",
                 "export", "sql"):  # the commands that load a profile
        sub.choices[name].add_argument("-q", "--quiet", action="store_true",
                                       help="no progress bar on stderr while loading")

    r = sub.add_parser("record", help="run 'legate --profile ARGS' (adds the CUDA stand-in "
                       "on machines without an NVIDIA driver), then write legate_prof/index.html "
                       "(legate_prof record --no-report ... to skip it)")
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
        sweep_stale_outputs()  # what an earlier command stopped by a signal was writing
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
