"""What every command shares: the exit status of a user's mistake, loading with terminal
progress, the inputs a command reads, and messages on stderr."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from legate_prof.errors import ProfileError
from legate_prof.present.terminal import terminal_safe

EXIT_USER_ERROR = 2
PICTURE_FORMATS = {".png", ".jpg", ".jpeg", ".bmp"}


def note(message):
    """A message for the user on stderr (never stdout: that is the command's output), with
    whatever a file put in it that a terminal would act on escaped (``present.terminal``)."""
    print(terminal_safe(message), file=sys.stderr)


def say(text):
    """Text for stdout (tables, "wrote ..."), line by line with what a terminal would act on
    escaped: names and lines from a profile are a stranger's text."""
    for line in str(text).split("\n"):
        print(terminal_safe(line))


def shown(path):
    """A path for ``say``'s text: a newline in a folder's name escaped like the rest (``say``
    splits its text into lines; a name with one printed a line of its own, "B = fake")."""
    return terminal_safe(os.fspath(path))


def bundled_example():
    return str(Path(__file__).resolve().parent.parent / "data" / "example_legate_0.prof")


def load_with_progress(files, args=None, also=None, stack=True, check_files=True,
                       ranked=False, cache=None, prepare=None, early=None, partial=None):
    """Load with terminal progress on stderr (a TTY, not --quiet), and ``also`` told the same
    (e.g. the viewer's window); then print what could not be read and the warnings.
    ``stack=False`` for commands that never draw lanes; ``ranked`` for those that ask only the
    query API (see ``load_profile``); ``cache``: the cache use (default: ``args.cache``);
    ``prepare``, ``early``: what rank workers, or a copy of this process, also compute for an
    analysis; ``partial``: the ranks built so far, for a window (see ``load_profile``)."""
    from legate_prof.cli.progress import TerminalProgress, wants_progress
    from legate_prof.load.loader import load_profile
    bar = TerminalProgress(files, enabled=wants_progress(quiet=getattr(args, "quiet", False)))

    def progress(done, total, what):
        bar(done, total, what)
        if also is not None:
            also(done, total, what)
    with bar:
        model = load_profile(files, progress=progress,
                             use_cache=getattr(args, "cache", False) if cache is None else cache,
                             stack=stack, check_files=check_files, ranked=ranked,
                             ranks=getattr(args, "ranks", None), prepare=prepare,
                             early=early, partial=partial)
    for e in model.errors:  # what could not be read first, then what it means for the rest
        note(f"legate_prof: error: {e}")
    print_warnings(model.warnings)
    return model


def print_warnings(warnings):
    for w in warnings:
        note(w if str(w).startswith("warning") else f"warning: {w}")


def input_files(args):
    """The files a command reads: its arguments, and legate's console log (``--log``)."""
    files = list(args.files)
    if getattr(args, "log", None):
        from legate_prof.load.inputs import sniff
        if sniff(args.log) != "text":
            raise ProfileError(args.log, "--log takes legate's console output (a text file); "
                                         "this is not one")
        files.append(args.log)
    return files


def status(profile):
    """The exit status of a command that read ``profile``: 2 if an input could not be read."""
    return EXIT_USER_ERROR if profile.errors else 0


def check_window(args):
    """``--start`` before ``--stop``, or one line and exit 2 before anything is read."""
    start, stop = getattr(args, "start", None), getattr(args, "stop", None)
    if start is not None and stop is not None and start >= stop:
        raise ProfileError("--start/--stop", window_order_words(start, stop))


def window_order_words(start, stop) -> str:
    """What is wrong with a window that ends before it starts, in the units a user reads."""
    from legate_prof.present.units import format_ns
    return (f"--start ({format_ns(start)}) must come before --stop "
            f"({format_ns(stop)})")


def run_beyond_window(whole, args):
    """What the window ``--start/--stop`` cuts ``whole`` to needs of the run beyond it
    (``analyze.critical_path.beyond_window``: its path cut to the window, its items numbered
    as in ``trimmed(whole, args)``; when the program made each operation), for that
    profile's source to take (``given_window``); None without a window."""
    start, stop = getattr(args, "start", None), getattr(args, "stop", None)
    if start is None and stop is None:
        return None
    from legate_prof.analyze.critical_path import beyond_window
    from legate_prof.assemble.restrict import window_ids
    from legate_prof.query import as_source
    return beyond_window(as_source(whole), window_ids(whole, start, stop), start, stop)


def trimmed(profile, args):
    """``profile`` cut to ``--start/--stop`` (``assemble.restrict``), with a warning where the
    window misses the run."""
    start, stop = getattr(args, "start", None), getattr(args, "stop", None)
    if start is None and stop is None:
        return profile
    from legate_prof.assemble.restrict import restrict
    from legate_prof.present.units import format_ns
    first, last = profile.summary_model().extent()
    if (start is not None and start > last) or (stop is not None and stop < first):
        note(f"warning: --start/--stop ({format_ns(start or 0)} – "
             f"{format_ns(stop) if stop is not None else 'the end'}) misses the run "
             f"({format_ns(first)} – {format_ns(last)}); nothing is left")
    return restrict(profile, start=start, stop=stop)
