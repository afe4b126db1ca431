"""Argument types shared by several commands (times, picture sizes, lane groups)."""

from __future__ import annotations

import argparse
import math
import os

from legate_prof.present.picture_size import MAX_SIDE, MIN_SIDE
from legate_prof.present.limits import MAX_LANES_EXPANDED, MAX_ROWS_EXPANDED


def time_arg(s):
    """'12.5ms', '300us', '2s', '1000' (ns) -> ns.  A bare number is nanoseconds only where
    it can be: whole, and 1000 or more (or 0) — '--start 4.5' meant 4.5 s, not 4 ns."""
    text = s.strip().lower()
    mul = None
    for unit, m in (("ns", 1), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9)):
        if text.endswith(unit):
            text, mul = text[: -len(unit)], m
            break
    try:
        v = float(text) * (mul or 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not a time (e.g. 12ms, 300us, 2s)") from None
    if not math.isfinite(v) or v < 0 or v >= 2**62:
        raise argparse.ArgumentTypeError(f"{s!r} is not a time within the run")
    if mul is None and v != 0 and (v != int(v) or v < 1000):
        raise argparse.ArgumentTypeError(
            f"{s!r} needs a unit (e.g. {text}s, {text}ms, {text}us); a bare number is read "
            "as nanoseconds only when whole and 1000 or more")
    return int(v)


def count_arg(s):
    """A whole number, 0 or more ('--limit -1' printed every step but the last)."""
    try:
        n = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not a whole number") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{s!r} is below 0 (0: all)")
    return n


def size_arg(s):
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not a whole number of pixels") from None
    if not MIN_SIDE <= v <= MAX_SIDE:
        raise argparse.ArgumentTypeError(f"{v} pixels: use {MIN_SIDE} to {MAX_SIDE}")
    return v


def expand_arg(s):
    """A lane group by its key or its title (``gpu dev``, ``chan``, ``io (extern)``)."""
    from legate_prof.model.kinds import GROUP_KEYS, GROUP_TITLE
    by_title = {t: k for k, t in GROUP_TITLE.items()}
    s = by_title.get(s, s)
    if s == "all":  # (every group: a user tried it)
        return s
    if s not in GROUP_KEYS:
        hint = (" (a file? --expand takes every word after it: put the files first)"
                if os.path.exists(s) or s.endswith((".prof", ".gz", ".lpbundle")) else "")
        raise argparse.ArgumentTypeError(f"no lane group {s!r}{hint}; one of "
                                         f"{', '.join(GROUP_KEYS)}")
    return s


# the guide's I/O lane is, under legate 26.06, the external thread the top-level task runs on
_EXPAND_ALSO = {"io": ("proc_other",)}


def expanded(words):
    """The lane groups to expand for ``--expand`` words (``io`` brings ``io (extern)``;
    ``all``: every group)."""
    from legate_prof.model.kinds import GROUP_KEYS
    if "all" in words:
        return list(GROUP_KEYS)
    return list(dict.fromkeys(k for w in words for k in (w, *_EXPAND_ALSO.get(w, ()))))


FILES_HELP = ("profiles: legate_N.prof Legion Prof logs (any Legion version, gzipped or not), "
              "legate_N.runtime.prof event streams of the array runtime, .lpbundle bundles "
              "(convert), or folders holding them (a run's folder)")


def add_files(parser, nargs="+", what=FILES_HELP):
    """The files a command reads, with what they may be."""
    parser.add_argument("files", nargs=nargs, metavar="FILE", help=what)


def add_expand(parser):
    parser.add_argument("--expand", nargs="+", action="extend", default=[], metavar="KIND",
                        type=expand_arg,
                        help="lane groups to expand, by key or title (cpu, utility, io, gpu_dev "
                             "or 'gpu dev', system, channel or chan, ...; all: every one); io "
                             "includes 'io (extern)'.  Named groups are expanded and the others "
                             "not; without --expand every group is, where the profile has at "
                             f"most {MAX_LANES_EXPANDED} lanes (else none), but one whose lanes "
                             f"stack more than {MAX_ROWS_EXPANDED} rows (a memory of many "
                             "live instances, busy utility lanes)")


def ranks_arg(s):
    """'0-3,7' -> (0, 1, 2, 3, 7) (``present.ranks.parse_ranks``)."""
    from legate_prof.present.ranks import parse_ranks
    try:
        return parse_ranks(s)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_cache(parser):
    """``--no-cache``.  By default a command reopens the run's timeline from the cache where an
    earlier command or ``view`` kept it, and keeps it itself once its answer is out
    (``load.loader.store_after_answer``)."""
    parser.add_argument("--no-cache", dest="cache", action="store_false",
                        help="build the timeline from the logs, and do not keep it in the cache "
                             "of built timelines (LEGATE_PROF_CACHE_DIR)")
    parser.set_defaults(cache="after")


class _MoreRanks(argparse.Action):
    """``--ranks`` given again adds its ranks (``--ranks 0 --ranks 1`` kept rank 1 alone,
    without a word: a review)."""

    def __call__(self, parser, namespace, values, option_string=None):
        before = getattr(namespace, self.dest, None) or ()
        setattr(namespace, self.dest, tuple(sorted(set(before) | set(values))))


def add_ranks(parser):
    parser.add_argument("--ranks", type=ranks_arg, metavar="LIST", action=_MoreRanks,
                        help="only these ranks, e.g. 0-3,7 (where each file is one rank's, "
                             "only theirs are read; given again, its ranks are added)")


def add_window(parser):
    """``--start/--stop``: the profile cut to a window (the reference's trims), times on the
    timeline as ``screenshot`` takes them."""
    parser.add_argument("--start", type=time_arg,
                        help="only what runs from this time on (e.g. 12ms, 300us, ns), cut to it")
    parser.add_argument("--stop", type=time_arg, help="only what runs until this time, cut to it")
