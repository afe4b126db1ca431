"""``legate_prof screenshot``: the timeline as a picture, without a display."""

from __future__ import annotations

import os

from legate_prof.cli.arguments import (add_cache, add_files, add_expand, add_ranks, expanded,
                                       size_arg, time_arg)
from legate_prof.cli.common import (PICTURE_FORMATS, input_files, load_with_progress, note, say,
                                    shown, status, window_order_words)
from legate_prof.errors import ProfileError
from legate_prof.output_file import check_output
from legate_prof.present.picture_size import MAX_SIDE, MIN_SIDE, check_size


def register(sub):
    sc = sub.add_parser("screenshot", help="render the timeline to a PNG without a display")
    add_files(sc)
    sc.add_argument("-o", "--output", required=True,
                    help="the picture to write (.png, .jpg, .bmp)")
    sc.add_argument("--start", type=time_arg, help="view start (e.g. 12ms, 300us, ns)")
    sc.add_argument("--stop", type=time_arg, help="view stop")
    sc.add_argument("--width", type=size_arg, default=1600,
                    help=f"pixels ({MIN_SIDE} to {MAX_SIDE})")
    sc.add_argument("--height", type=size_arg, default=1000,
                    help=f"pixels ({MIN_SIDE} to {MAX_SIDE}); taller where the lanes shown "
                         "need it")
    add_expand(sc)
    add_ranks(sc)
    sc.add_argument("--critical-path", action="store_true",
                    help="draw the run's critical path (as the viewer's P): a summary track "
                         "on top (which rank and lane group held it at each moment, by kind; "
                         "hatched where it rests on inferred links) and, where they are few "
                         "enough to read, each item on it outlined with an arrow from what "
                         "held it up (dashed: an inferred link)")
    sc.add_argument("--log", help="legate's console output, to mark an out-of-memory failure")
    add_cache(sc)
    sc.set_defaults(func=run)


def _check_view_range(args):
    if args.start is not None and args.stop is not None and args.start >= args.stop:
        raise ProfileError(args.output, window_order_words(args.start, args.stop))


def run(args, model=None):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    check_output(args.output, input_files(args), PICTURE_FORMATS, "picture")
    check_size(args.output, args.width, args.height)
    _check_view_range(args)
    if model is None:
        model = load_with_progress(input_files(args), args, ranked=True)
    from legate_prof.query import as_source
    source = as_source(model)  # (one: what it works out, the notices, once)
    _warn_outside_run(args, source)
    from legate_prof.analyze.path_track import path_track
    from legate_prof.viewer.screenshot import render_screenshot
    out = render_screenshot(source, args.output, start=args.start, stop=args.stop,
                            width=args.width, height=args.height,
                            expand=expanded(args.expand), title_files=args.files,
                            critical_path=getattr(args, "critical_path", False) or None,
                            path_track=path_track)
    say(f"wrote {shown(out)}")
    return status(model)


def _warn_outside_run(args, profile):
    """--start past the run's end, or --stop before its start, cannot be shown as asked: the
    picture keeps to the run, and the terminal says so."""
    from legate_prof.present.units import format_ns
    from legate_prof.query import as_source
    t0, t1 = as_source(profile).info().time_range
    for opt, t, outside in (("--start", args.start, lambda t: t >= t1),
                            ("--stop", args.stop, lambda t: t <= t0)):
        if t is not None and outside(t):
            note(f"warning: {opt} {format_ns(t)} is outside the run ({format_ns(t0)} – "
                 f"{format_ns(t1)}); the picture keeps to the run")
