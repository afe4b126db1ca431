"""``legate_prof view``: the desktop viewer (a picture instead where there is no display)."""

from __future__ import annotations

import os
import threading

from legate_prof.cli.commands import screenshot
from legate_prof.cli.arguments import FILES_HELP, add_files, add_ranks, time_arg
from legate_prof.cli.common import (EXIT_USER_ERROR, PICTURE_FORMATS, bundled_example,
                                    check_window, input_files, load_with_progress, note)
from legate_prof.output_file import check_output


def register(sub):
    v = sub.add_parser("view", help="open the timeline viewer (bundled example if no files)")
    add_files(v, nargs="*", what=FILES_HELP + "; none: the run in this folder, else the bundled "
              "example")
    v.add_argument("--log", help="legate's console output, to mark an out-of-memory failure")
    v.add_argument("--no-cache", dest="cache", action="store_false",
                   help="build the timeline from the logs, and do not keep it in the cache "
                        "of built timelines (LEGATE_PROF_CACHE_DIR)")
    add_ranks(v)
    v.add_argument("--start", type=time_arg, help="open the view at this time (e.g. 12ms, "
                   "300us, ns; as screenshot's): the whole run stays loaded")
    v.add_argument("--stop", type=time_arg, help="open the view until this time")
    v.set_defaults(func=run, cache=True)


# Qt platforms that draw no window anyone sees: a window there would wait for ever
HIDDEN_PLATFORMS = ("offscreen", "minimal")  # (vnc shows its windows to a VNC client)
# set to 1: open the window on them all the same (tests and automation that drive it)
HIDDEN_WINDOW_ENV = "LEGATE_PROF_HIDDEN_WINDOW"


def _has_display():
    platform = os.environ.get("QT_QPA_PLATFORM", "").split(":")[0]
    if platform in HIDDEN_PLATFORMS and os.environ.get(HIDDEN_WINDOW_ENV) != "1":
        return False
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or platform)


def _no_display_words():
    platform = os.environ.get("QT_QPA_PLATFORM", "").split(":")[0]
    if platform in HIDDEN_PLATFORMS:
        return f"QT_QPA_PLATFORM={platform} shows no window"
    return "no display found (DISPLAY/WAYLAND_DISPLAY unset)"


def _window_problem():
    from legate_prof.viewer.app import window_problem
    return window_problem()


class HandOver:
    """``load_profile``'s ``partial`` for a window: called with the ranks built so far
    (``so_far(profile, files)``), and ``building_again()``, the loader's own step (not a
    progress text) where the workers' builds are given up and the ranks built again in
    this process (``again()``)."""

    def __init__(self, so_far, again):
        self._so_far, self._again = so_far, again

    def __call__(self, profile, files):
        self._so_far(profile, files)

    def building_again(self):
        self._again()


def window_hand_over(progress):
    """The hand-over for a load whose progress goes to a window's ``progress`` (its
    ``partial``, and its ``building_again()`` called as the loader's step comes), or None
    where it takes neither (the window then shows the whole alone)."""
    so_far = getattr(progress, "partial", None)
    if so_far is None:
        return None
    again = getattr(progress, "building_again", None)
    return HandOver(so_far, again if again is not None else lambda: None)


class EarlyLoad:
    """A load started before the viewer's Qt is imported: the rank files are read and built
    while Qt starts and the window opens (half a second to a second), instead of after.
    ``wait(progress)`` hands on the progress from then on (the last step at once; the ranks
    built so far to ``progress.partial``, where it has one: the window shows them; the
    loader's step of building them again in this process, where the workers' builds were
    given up, to ``progress.building_again()``, at once where it came before) and returns
    the model, or raises what the load raised."""

    def __init__(self, files, args):
        self._lock = threading.Lock()
        self._sink, self._last, self._outcome = None, None, None
        self._so_far = None  # (the ranks built so far, until a window takes them)
        self._again = False  # (the loader said it builds the ranks again, in this process)
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

    def _partial(self, profile, files):
        with self._lock:
            self._so_far, sink = (profile, files), self._sink
        if sink is not None and hasattr(sink, "partial"):
            sink.partial(profile, files)

    def _building_again(self):
        with self._lock:
            self._again, sink = True, self._sink
        if sink is not None and hasattr(sink, "building_again"):
            sink.building_again()

    def _run(self, files, args):
        from legate_prof.load.rank_workers import lower_this_thread
        lower_this_thread()  # (the window's thread, starting meanwhile, comes first)
        try:
            # the timeline first; the cache entry is written meanwhile
            cache = "later" if getattr(args, "cache", False) else False
            self._outcome = (load_with_progress(files, args, self._progress, ranked=True,
                                                cache=cache,
                                                partial=HandOver(self._partial,
                                                                 self._building_again)), None)
        except BaseException as e:  # raised again by wait(), in the thread that waits
            self._outcome = (None, e)
        self._done.set()

    def wait(self, progress=None):
        with self._lock:
            self._sink, last, so_far, again = progress, self._last, self._so_far, self._again
        if progress is not None and last is not None:
            progress(*last)
        if so_far is not None and not self._done.is_set() and hasattr(progress, "partial"):
            progress.partial(*so_far)
        if again and not self._done.is_set() and hasattr(progress, "building_again"):
            progress.building_again()
        self._done.wait()
        model, error = self._outcome
        if error is not None:
            raise error
        return model


class HeldCtrlC:
    """Ctrl-C recorded, not raised, while the viewer starts: a KeyboardInterrupt inside Qt's
    imports aborted the process (shiboken's module half made: SIGABRT), and one raised in
    Python code that Qt calls was swallowed there (Ctrl-C 0.5 s in: the window opened, and
    stayed).  The window's own handler takes over (``viewer.app._ctrl_c_closes``), closing
    at once for a press recorded here (``pressed``).  ``release()`` puts the handler back,
    and raises KeyboardInterrupt for a press nothing took (``said``: the window did).  Not
    where Ctrl-C was ignored when the process started, nor outside the main thread."""

    def __init__(self):
        import signal
        self.pressed, self._old = False, None
        if threading.current_thread() is threading.main_thread() \
                and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            self._old = signal.signal(signal.SIGINT, self)

    def __call__(self, signum, frame):
        self.pressed = True

    def release(self, said=True):
        import signal
        if self._old is None:
            return
        signal.signal(signal.SIGINT, self._old)
        self._old = None
        if self.pressed and said:
            raise KeyboardInterrupt


RUN_PATTERNS = ("*.prof", "*.prof.gz", "*.lpbundle")  # (record --profile-name NAME: NAME_0.prof)
HOW_TO_OPEN = "open a run with `legate_prof view FOLDER` (or its .prof files)"
HOW_TO_OPEN_HERE = HOW_TO_OPEN + ", File → Open, or by dropping its files on the window"


def default_inputs(folder=".", window=True):
    """What ``view`` with no files opens: the run in ``folder`` (its .prof, .prof.gz or
    .lpbundle files, whatever the run was named), else the bundled example; and the one line that says
    which (the window says it too): ``(files, line, is_example)``."""
    import glob
    folder = os.path.abspath(folder)
    found = sorted({f for p in RUN_PATTERNS for f in glob.glob(os.path.join(folder, p))})
    if found:
        return [folder], (f"legate_prof: no files given: opening the run in this folder "
                          f"({folder}, {len(found)} file(s))"), False
    return [bundled_example()], (f"legate_prof: no files given and no profiles (.prof, .lpbundle) here: "
                                 "showing the bundled example; "
                                 f"{HOW_TO_OPEN_HERE if window else HOW_TO_OPEN}"), True


def run(args):
    example = False
    check_window(args)  # (--start before --stop, or one line before anything is read)
    display = _has_display()
    if not args.files:
        args.files, said, example = default_inputs(window=display)
        note(said)
    files = input_files(args)
    held = HeldCtrlC() if display else None  # (before Qt is imported, the load begun)
    early = EarlyLoad(files, args) if display else None
    problem = _window_problem() if display else None
    if held is not None and problem:
        held.release()  # (a picture instead: Ctrl-C as in any command)
    if not display or problem:
        out = os.path.abspath("legate_prof_view.png")
        if not os.access(os.path.dirname(out), os.W_OK | os.X_OK):  # (a read-only run folder:
            import tempfile                                          # a folder of its own)
            out = os.path.join(tempfile.mkdtemp(prefix="legate_prof_view_"),
                               "legate_prof_view.png")
        check_output(out, files, PICTURE_FORMATS, "picture")
        args.files, args.log, args.output = files, None, out
        args.width, args.height, args.expand = 1600, 1000, []
        args.cache = False  # (the early load, if any, is already under way with the cache)
        # loaded first: input that cannot be read is its one line, not this note and then it
        model = early.wait() if early is not None else load_with_progress(files, args,
                                                                          ranked=True)
        why = problem or _no_display_words()
        # (an earlier view's picture replaced without a word: a review)
        again = " (replacing the one there)" if os.path.exists(out) else ""
        note(f"legate_prof: {'error: ' if problem else ''}{why}; rendering the view to "
             f"{out} instead{again}")
        rc = screenshot.run(args, model=model)
        return EXIT_USER_ERROR if problem else rc
    from legate_prof.analyze.costed_findings import costed_findings
    from legate_prof.analyze.path_track import path_track
    from legate_prof.viewer.app import run_viewer
    loaded = []

    def load(progress):  # in the window's worker thread: the window shows meanwhile
        model = early.wait(progress)
        loaded.append(model)
        return model

    def open_more(paths, progress):  # File → Open and drops: as the first load, in a worker
        cache = "later" if getattr(args, "cache", False) else False
        return load_with_progress(paths, args, progress, ranked=True, cache=cache,
                                  partial=window_hand_over(progress))

    def exit_status(rc):  # the window closed: the process ends within a second
        from legate_prof.load.loader import stop_cache_writers
        stop_cache_writers()  # (an entry half-written is dropped: a later `view` writes it)
        return rc or (EXIT_USER_ERROR if loaded and loaded[0].errors else 0)
    try:  # (the window takes Ctrl-C over from ``held``: viewer.app._ctrl_c_closes)
        return run_viewer(files=files, load=load, findings=costed_findings,
                          path_track=path_track, process_exit=exit_status, opener=open_more,
                          example_note=HOW_TO_OPEN_HERE if example else None,
                          view_range=(args.start, args.stop))
    finally:
        held.release(said=False)
