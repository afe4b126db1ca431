"""Terminal progress for loading a profile: one line per phase on stderr, only on a terminal.

The loader reports ``progress(i, n, message)``: ``i`` files of ``n`` are done and ``message``
says what comes next ("reading legate_3.prof", then "building timeline").  This turns those
calls into rich progress lines on stderr:

* one line per file read, with its bytes done / total (a file counts as done when the loader
  moves on to the next one: the loader does not report within a file);
  more than ``MAX_FILE_LINES`` files share one line, with the bytes of all of them;
* one line for building the timeline, with a spinner and the time spent.

Nothing is shown when stderr is not a terminal, with ``quiet``, or when loading ends within
``DELAY_S`` (a cached or small profile): stdout is never written to.
"""

from __future__ import annotations

import os
import sys
import threading

DELAY_S = 0.5  # loads shorter than this show nothing
MAX_FILE_LINES = 8  # more files than this share one "reading" line


def wants_progress(stream=None, quiet=False) -> bool:
    """Whether to draw progress on ``stream`` (stderr): a terminal, and not asked to be quiet."""
    stream = _stderr() if stream is None else stream
    if quiet or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class _Phases:
    """What the loader's calls mean, kept apart from drawing so it is checked without a TTY.

    ``steps`` lists ``(key, label, total_bytes_or_None)`` in the order they begin; ``done``
    holds the keys finished.  Reading file ``k`` is key ``("read", k)`` (or ``("read", "all")``
    when the files share a line); building is ``("build",)``.
    """

    def __init__(self, sizes=None):
        self.sizes = dict(sizes or {})
        self.current = None
        self.bytes_read = 0

    def call(self, i, n, message):
        """-> list of events: ("finish", key, bytes_done) and ("begin", key, label, total)."""
        events = []
        if message.startswith("reading "):
            name = message[len("reading "):]
            shared = n > MAX_FILE_LINES
            key = ("read", "all") if shared else ("read", i)
            if self.current is not None and self.current != key:
                events.append(("finish", self.current))
            if shared:
                size = self.sizes.get(name)
                if self.current != key:
                    total = sum(self.sizes.values()) if len(self.sizes) >= n else None
                    events.append(("begin", key, f"reading {n} files", total))
                events.append(("advance", key, self.bytes_read, f"reading {name} ({i + 1}/{n})"))
                self.bytes_read += size or 0
            else:
                events.append(("begin", key, message, self.sizes.get(name)))
            self.current = key
        elif message.startswith("built ") or message == "building ranks":
            # rank files built in worker processes (load.rank_workers): one line for all of them,
            # saying the last one done; the workers' ticks repeat the last message
            key = ("ranks",)
            if self.current != key:
                if self.current is not None:
                    events.append(("finish", self.current))
                events.append(("begin", key, f"building {n} rank files", None))
                self.current = key
            events.append(("advance", key, i, message))
        elif self.current == ("build", message):
            pass  # the same step said again
        else:  # "building timeline" and whatever the loader says next
            if self.current is not None:
                events.append(("finish", self.current))
            key = ("build", message)
            events.append(("begin", key, message, None))
            self.current = key
        return events


class TerminalProgress:
    """``progress(i, n, message)`` drawn with rich on stderr; ``close()`` when loading ends.

    Use as a context manager.  ``paths`` gives the files' sizes (bytes done / total).
    """

    def __init__(self, paths=(), stream=None, enabled=None, delay_s=None):
        self.stream = _stderr() if stream is None else stream
        self.enabled = wants_progress(self.stream) if enabled is None else enabled
        sizes = {}
        for p in paths:
            try:
                sizes[os.path.basename(os.fspath(p))] = os.path.getsize(p)
            except OSError:
                pass
        self._phases = _Phases(sizes)
        self._lock = threading.Lock()
        self._progress = None
        self._tasks = {}
        self._pending = []  # events before the display started
        self._started = False
        self._closed = False
        self._timer = None
        if delay_s is None:  # LEGATE_PROF_PROGRESS_DELAY_S: e.g. 0 to see it on any load
            try:
                delay_s = float(os.environ.get("LEGATE_PROF_PROGRESS_DELAY_S", DELAY_S))
            except ValueError:
                delay_s = DELAY_S
        if self.enabled:
            self._timer = threading.Timer(delay_s, self._start)
            self._timer.daemon = True
            self._timer.start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _start(self):
        with self._lock:
            if self._closed or self._started:
                return
            from rich.console import Console
            from rich.progress import (BarColumn, DownloadColumn, Progress, ProgressColumn,
                                       SpinnerColumn, TextColumn, TimeElapsedColumn)

            class Bytes(ProgressColumn):  # bytes done / total where known, else nothing
                bytes_column = DownloadColumn(binary_units=True)

                def render(self, task):
                    return self.bytes_column.render(task) if task.fields.get("bytes") else ""
            console = Console(file=self.stream, stderr=self.stream is _stderr())
            self._progress = Progress(
                SpinnerColumn(finished_text="✓"), TextColumn("{task.description}"),
                BarColumn(), Bytes(), TimeElapsedColumn(),
                console=console, transient=True, redirect_stdout=False,
                # notes printed to stderr meanwhile go above the bars, not through them
                redirect_stderr=self.stream is _stderr())
            self._progress.start()
            self._started = True
            import atexit
            atexit.register(self.close)  # a window closed mid-load: give the cursor back
            for ev in self._pending:
                self._apply(ev)
            self._pending = []

    def _apply(self, ev):
        p = self._progress
        if ev[0] == "begin":
            _, key, label, total = ev
            self._tasks[key] = (p.add_task(label, total=total, bytes=total is not None),
                               total)
        elif ev[0] == "advance":
            _, key, done, label = ev
            p.update(self._tasks[key][0], completed=done, description=label)
        elif ev[0] == "finish":
            if ev[1] in self._tasks:
                t, total = self._tasks[ev[1]]
                p.update(t, completed=total) if total else p.update(t, total=1, completed=1)
                p.stop_task(t)

    def __call__(self, i, n, message):
        if not self.enabled:
            return
        events = self._phases.call(i, n, message)
        with self._lock:
            if self._closed:
                return
            if self._started:
                for ev in events:
                    self._apply(ev)
            else:
                self._pending.extend(events)

    def close(self):
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
            if self._started:
                self._progress.stop()  # transient: the lines go, the terminal is as before


def _stderr():
    """The terminal's stderr, past a copy a command keeps of what it says (``answers``):
    progress is not part of an answer."""
    return getattr(sys.stderr, "real", sys.stderr)
