"""Terminal progress while a profile is read and built: a progress bar on stderr (``rich``)
when stderr is a terminal and the load lasts over half a second; nothing otherwise, so that
pipes, logs and ``--json`` output stay clean."""

from __future__ import annotations

import sys
import time


class TerminalProgress:
    """A ``progress(done, total, what)`` callback drawing one bar; ``close()`` removes it."""

    DELAY_S = 0.5

    def __init__(self, stream=None):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.monotonic()
        self._bar = None
        self._task = None

    def __call__(self, done, total, what):
        if not self.enabled or time.monotonic() - self.t0 < self.DELAY_S:
            return
        if self._bar is None:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeElapsedColumn)
            self._bar = Progress(TextColumn("legate_prof"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.description}"), TimeElapsedColumn(),
                                 console=Console(file=self.stream), transient=True)
            self._bar.start()
            self._task = self._bar.add_task(what, total=max(total, 1))
        self._bar.update(self._task, completed=done, total=max(total, 1), description=what)

    def close(self):
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
