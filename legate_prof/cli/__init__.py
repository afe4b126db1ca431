"""The ``legate_prof`` command line: a parser, and one thin module per command.

User mistakes (missing file, not a profile, bad option) print one line and exit 2; anything
that could be read is still shown.  Damaged-but-readable input prints warnings and exits 0.

May import every layer of the core; the viewer only inside the commands that draw.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from legate_prof.cli.common import EXIT_USER_ERROR, bundled_example, note
from legate_prof.errors import ProfileError
from legate_prof.output_file import disk_full, sweep_stale_outputs

__all__ = ["main", "bundled_example", "EXIT_USER_ERROR"]


def main(argv=None):
    """The command line: ``argv`` (a list: the caller goes on with the exit status returned),
    or the program's own arguments (None: the process ends here, ``_end_now``)."""
    try:
        rc = _run(argv)
    finally:
        if argv is not None:  # (a caller's process: its environment as it was)
            from legate_prof.load.rank_workers import huge_pages_as_before
            huge_pages_as_before()
    if argv is None:
        _end_now(rc)
    return rc


class _Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: the command ends as after Ctrl-C, with the signal's own status."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _stop_as_interrupted_on_terminate():
    """SIGTERM or SIGHUP (``timeout``, a batch scheduler, a terminal closed) ends the command
    as Ctrl-C does: what it was writing removed, its rank workers stopped and their
    hand-over folder removed — by default the process just ended, and the ranks' bundles
    stayed in memory (/dev/shm) until a later build swept them (a review).  Exit 128 + the
    signal's number, as the shell says of it.  A signal the caller set aside stays so."""
    import signal

    def stop(signum, frame):
        raise _Terminated(signum)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, stop)


def _end_now(rc):
    """End the process with ``rc`` once the answer is out, without the interpreter's
    teardown: freeing every object of a loaded profile one by one took 50-90 ms of ``stats``
    of the 10 M example (the system takes the memory back at once).  The exit handlers run
    first; only where nothing else runs (no other thread, Qt never started: its own teardown)
    and the standard streams flushed; else the interpreter's own exit, as before."""
    import atexit
    import threading
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if (not isinstance(rc, int) or run_exit_handlers is None or threading.active_count() > 1
            or "PySide6.QtCore" in sys.modules):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        run_exit_handlers()
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # (what the interpreter's exit says of a stream that fails, it says as before)
    os._exit(rc)


def _interrupted():
    """Ctrl-C: one line, so a user knows the command stopped short (an output file it was
    writing is removed, never left half-written: ``output_file``); exit 130, as a shell's."""
    with contextlib.suppress(OSError, ValueError):
        note("legate_prof: interrupted")
    return 130


def _run(argv):
    from legate_prof.cli.commands import record
    from legate_prof.cli.parser import build_parser
    _closed_streams_to_nowhere()
    own_process = argv is None  # (the signals are the process's: not a caller's, as a test's)
    argv = sys.argv[1:] if own_process else list(argv)
    if argv[:1] != ["record"]:  # (legate's program keeps the user's setting)
        _one_blas_thread()
    _no_huge_pages(before_numpy=argv[:1] != ["record"])
    # (a window lives on after its load; `view` and `record` end on signals as they end)
    if argv[:1] not in (["record"], ["view"]):
        from legate_prof.load.rank_workers import reuse_freed_memory
        reuse_freed_memory()
        if own_process:
            _stop_as_interrupted_on_terminate()
    if argv[:1] == ["record"]:  # everything after it belongs to legate, options included
        try:
            return record.run(argparse.Namespace(legate_args=argv[1:]))
        except KeyboardInterrupt:  # (outside legate's run: before it, or in the report)
            return _interrupted()
        except BrokenPipeError:  # (`record --help | head`: a review's traceback)
            _stdout_to_nowhere()
            return 0
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USER_ERROR
    try:
        sweep_stale_outputs()  # what an earlier command stopped by a signal was writing
        from legate_prof.load.rank_workers import sweep_handovers
        sweep_handovers()  # (and the ranks' bundles it was handed, in memory: /dev/shm)
        rc = args.func(args)
        sys.stdout.flush()  # (a full disk under stdout shows here, where it can be said)
        if getattr(args, "cache", None) == "after" and \
                "legate_prof.load.loader" in sys.modules:  # (the answer is out: the run
            # kept; nothing loaded, an answer kept before: nothing to keep, numpy not imported)
            from legate_prof.cli.answers import answer_ahead
            from legate_prof.load.loader import store_after_answer
            store_after_answer(then=lambda: answer_ahead(args, parser.parse_args))
        return rc
    except ProfileError as e:
        note(f"legate_prof: error: {e}")
        return EXIT_USER_ERROR
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt as e:
        return 128 + e.signum if isinstance(e, _Terminated) else _interrupted()
    except RuntimeError as e:  # Ctrl-C inside a DuckDB query, as its Python module words it
        if str(e) != "Query interrupted":
            raise
        return _interrupted()
    except OSError as e:
        if not disk_full(e):
            raise
        _stdout_to_nowhere()
        note(f"legate_prof: error: {e.filename or 'standard output'}: could not write "
             f"({e.strerror or e})")
        return EXIT_USER_ERROR


def _closed_streams_to_nowhere():
    """A standard stream closed before the command began (``legate_prof stats RUN >&-``):
    Python gives it no object and the first write or flush was a traceback. What would go
    there goes nowhere, as to a pipe nobody reads (its descriptor then names the null
    device, for the processes the command starts too)."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w"))  # noqa: SIM115 - the process's own


def _one_blas_thread():
    """numpy's OpenBLAS starts a thread per core as numpy is first imported, and each spins
    ~0.1 s of a core before it sleeps: in this command's process and in each rank worker
    (`python -c "import numpy"`: 0.21 s of CPU, 0.11 s with one thread), though no command
    multiplies matrices.  One thread, unless the user set a number; the rank workers inherit
    it."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _no_huge_pages(before_numpy=True):
    """numpy asks the kernel for huge pages for each array of 4 MiB or more (madvise); where
    the kernel then compacts memory to find one (``transparent_hugepage/defrag`` "madvise",
    as on this project's machines) an array's first touch waited there, ~40 us a fault: a
    third of ``stats`` of the 10 M example went to the kernel (docs/performance.md).  This
    process asks for none (the rank workers reuse their memory instead: ``WORKER_MALLOC``);
    ``NUMPY_MADVISE_HUGEPAGE`` set by the user is kept.  ``before_numpy``: said in the
    environment numpy reads as it is imported, not by importing it now (an answer asked
    again imports none: ``rank_workers.no_huge_pages``; taken back once a command run in a
    caller's process ends, whose later commands would take it for the user's);
    ``record``'s legate inherits its environment, so there numpy is told in this process
    alone."""
    if "NUMPY_MADVISE_HUGEPAGE" in os.environ:
        return
    if before_numpy and "numpy" not in sys.modules:
        from legate_prof.load.rank_workers import no_huge_pages
        no_huge_pages()
        return
    import numpy
    for name in ("_core", "core"):  # (numpy 2; numpy 1)
        multiarray = getattr(getattr(numpy, name, None), "multiarray", None)
        if hasattr(multiarray, "_set_madvise_hugepage"):
            multiarray._set_madvise_hugepage(False)
            return


def _stdout_to_nowhere():
    """What stdout still holds goes nowhere: the interpreter's last flush would fail again
    on the full disk, with a traceback of its own and exit status 120."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


if __name__ == "__main__":
    raise SystemExit(main())
