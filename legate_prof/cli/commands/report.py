"""``legate_prof report``: the offline HTML report folder (index.html opens from file://)."""

from __future__ import annotations

import os
from pathlib import Path

from legate_prof.cli.arguments import add_cache, add_files, add_ranks, add_window
from legate_prof.cli.common import (check_window, input_files, load_with_progress,
                                    run_beyond_window, say, shown, status, trimmed)
from legate_prof.errors import ProfileError
from legate_prof.output_file import refuse_leaving_link, refuse_profile_name_in_run


def register(sub):
    rp = sub.add_parser("report", help="write the offline HTML report folder (index.html)")
    add_files(rp)
    rp.add_argument("-o", "--output", default="legate_prof", help="folder (default legate_prof)")
    rp.add_argument("--log", help="legate's console output, to mark an out-of-memory failure")
    rp.add_argument("--no-pictures", dest="pictures", action="store_false",
                    help="skip the per-group PNG pictures")
    add_ranks(rp)
    add_window(rp)
    add_cache(rp)
    rp.set_defaults(func=run)


def picture_renderer():
    """(the viewer's screenshot function, "", whether a forked copy of this process may draw
    with it: Qt not started here) — or (None, why, False) where Qt cannot be loaded: the
    report is still useful without its pictures."""
    try:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        from legate_prof.viewer.screenshot import qt_started, render_screenshot
    except Exception as e:  # noqa: BLE001 - no Qt here, whatever the reason
        return None, f"pictures skipped: {e}", False
    return render_screenshot, "", not qt_started()


def run(args):
    """Write the offline HTML report folder (index.html opens from file://)."""
    check_window(args)
    files = input_files(args)
    out = os.path.abspath(args.output)
    refuse_leaving_link(out, "report")  # (`-o legate_prof`, the default, in a received folder)
    refuse_profile_name_in_run(out, files, "report")
    for f in files:
        if os.path.realpath(f).startswith(os.path.realpath(out) + os.sep):
            raise ProfileError(out, "holds an input; write the report to another folder")
    if os.path.exists(out) and not os.path.isdir(out):
        raise ProfileError(out, "exists and is not a folder; choose another -o")
    if not os.path.isdir(os.path.dirname(out)):  # (as every output: a typo makes no folders)
        raise ProfileError(out, f"directory {os.path.dirname(out)!r} does not exist")
    from legate_prof.report.folder import earlier_report
    if os.path.isdir(out) and os.listdir(out):  # (before anything is read: one line, at once)
        ours = earlier_report(Path(out))
        if ours is not True:
            raise ProfileError(out, "exists and is not a legate_prof report; choose another -o"
                               if ours is False else f"holds what a legate_prof report does not "
                               f"({ours}); nothing was changed: choose another -o, or move them")
    from legate_prof.cli.answers import folder_answered
    from legate_prof.report.folder import report_folder, write_again
    # (the pictures' time, ``SOURCE_DATE_EPOCH`` where set, is part of the question: a folder
    # kept from a run without it said when it was drawn, not the date asked for)
    made_by = f"{_made_by()} {os.environ.get('SOURCE_DATE_EPOCH', '')}"
    code = folder_answered(args, "report", made_by, lambda a: _write(a, files, out),
                           lambda: report_folder(out), lambda kept: write_again(kept, out))
    say(f"wrote {shown(os.path.join(out, 'index.html'))}")
    return code


def _write(args, files, out):
    """Read the run and write its report folder: (exit status, whether the folder is the
    question's whole answer — not where Qt could not draw its pictures)."""
    from legate_prof.report import write_report
    from legate_prof.causality.rank_links import PREPARE as LINKED_BY_WORKERS
    # ranks read one by one, never merged; each linked by its worker (the run's path)
    whole = load_with_progress(files, args, ranked=True, prepare=LINKED_BY_WORKERS)
    model = trimmed(whole, args)
    in_window = run_beyond_window(whole, args)
    del whole
    if getattr(args, "pictures", True):
        render, why, aside = picture_renderer()
        if render is not None:  # (titled as `screenshot` titles them: a folder by its name)
            import functools
            render = functools.partial(render, title_files=args.files)
    else:
        render, why, aside = None, "pictures skipped (--no-pictures)", False
    window = (getattr(args, "start", None), getattr(args, "stop", None))  # (record: none)
    write_report(model, out, pictures=render, pictures_note=why, pictures_aside=aside,
                 run_path=in_window, window=window if window != (None, None) else None)
    return status(model), render is not None or not getattr(args, "pictures", True)


def _made_by():
    """What besides this package's sources makes a report (``answers.folder_answered``):
    the page's scripts and styles, and the viewer's sources, which draw its pictures."""
    import hashlib
    import importlib.util
    from legate_prof.report.folder import STATIC
    from legate_prof.store.cache import source_digest
    h = hashlib.sha256()
    for f in sorted(STATIC.iterdir()):
        if f.is_file():
            h.update(f.name.encode() + b"\0" + f.read_bytes())
    try:
        spec = importlib.util.find_spec("legate_prof.viewer")
        for root in (spec.submodule_search_locations or []) if spec else []:
            h.update(source_digest(root, ("",)))
    except (ImportError, ValueError):
        h.update(b"no viewer")
    return h.hexdigest()[:16]
