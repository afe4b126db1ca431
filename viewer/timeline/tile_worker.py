"""A timeline's tiles computed off the window's thread.

The painted item asks for what a frame needs (a lane's tile, a group's utilization strip) and
draws what it has meanwhile; a thread of its own computes the asks in the order they came,
dropping those the view has left, and hands each result to the window's thread as a queued
signal, which stores it and repaints.  The lanes a frame asks for are stacked together first,
on all cores (``prepare_lanes``), as the window's thread used to before painting.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
import weakref
from dataclasses import dataclass

from PySide6 import QtCore

from ..background import emit, start_thread


@dataclass
class Ask:
    """One thing to compute: ``compute()`` for the entry ``key`` of the cache ``cache``
    (``spec`` tells two asks of the same entry apart); ``lane``: the lane it draws, to be
    stacked first."""

    cache: str
    key: object
    spec: tuple
    compute: object
    lane: int | None = None


_WORKERS = weakref.WeakSet()  # the live ones: stopped and waited for as the interpreter ends
EXIT_WAIT_S = 2.0


@atexit.register
def _stop_all():
    """Stop every worker and wait for the ask in hand: a thread killed by the interpreter's
    end inside Qt's painting (a strip's picture) would abort the process."""
    workers = list(_WORKERS)
    for w in workers:
        w.stop()
    for w in workers:
        w.thread.join(EXIT_WAIT_S)


class TileWorker(QtCore.QObject):
    """A thread computing the asks of one timeline; ``done(cache, key, result)`` arrives in
    the window's thread (``result``: what ``compute`` returned, or the exception it
    raised)."""

    done = QtCore.Signal(object, object, object)

    def __init__(self, prepare_lanes=None):
        super().__init__()
        self._prepare_lanes = prepare_lanes
        self._cond = threading.Condition()
        self._queue = {}  # (cache, key) -> Ask, in the order asked
        self._busy = None  # the Ask being computed
        # (cache, key) -> spec of the results emitted and not yet received by the window's
        # thread: asked again meanwhile (a frame painted before they arrived), not recomputed
        self._in_flight = {}
        self._held = 0  # frames being painted: no ask is begun meanwhile (``holding``)
        self._stopped = False
        self.done.connect(self._received)  # (first: before the painted item's slot)
        self.thread = start_thread(self._run, "legate_prof-tiles")
        _WORKERS.add(self)

    def ask(self, item):
        """Compute ``item`` unless the same is queued or being computed; a newer ask of the
        same entry replaces a queued one."""
        with self._cond:
            busy = self._busy
            if busy is not None and (busy.cache, busy.key, busy.spec) == \
                    (item.cache, item.key, item.spec):
                return
            entry = (item.cache, item.key)
            if entry in self._in_flight and self._in_flight[entry] == item.spec:
                return
            old = self._queue.get((item.cache, item.key))
            if old is not None and old.spec == item.spec:
                return
            self._queue[(item.cache, item.key)] = item
            if not self._held:  # (a frame being painted: woken as it ends, ``holding``)
                self._cond.notify()

    def _received(self, cache, key, _result):
        with self._cond:
            self._in_flight.pop((cache, key), None)

    def keep_only(self, wanted):
        """Drop the queued asks whose (cache, key) is not in ``wanted`` (the view left them)."""
        with self._cond:
            for k in [k for k in self._queue if k not in wanted]:
                del self._queue[k]

    def pending(self) -> int:
        """Asks queued or being computed."""
        with self._cond:
            return len(self._queue) + (self._busy is not None)

    def stop(self):
        """No more asks: the thread ends after the one it computes."""
        with self._cond:
            self._stopped = True
            self._queue.clear()
            self._cond.notify()

    @contextlib.contextmanager
    def holding(self):
        """While the window's thread paints a frame, no ask is begun: the two threads shared
        the interpreter's lock a switch interval at a time, and a wheel step's frame took
        a third longer than its own work (an ask begun before goes on)."""
        with self._cond:
            self._held += 1
        try:
            yield
        finally:
            with self._cond:
                self._held -= 1
                self._cond.notify()

    def _next(self):
        """The first queued ask (and the lanes of all queued asks, to stack first), or None
        once stopped."""
        with self._cond:
            while (not self._queue or self._held) and not self._stopped:
                self._cond.wait()
            if self._stopped:
                return None, ()
            key = next(iter(self._queue))
            item = self._busy = self._queue.pop(key)
            lanes = [a.lane for a in (item, *self._queue.values()) if a.lane is not None]
            return item, lanes

    def _run(self):
        while True:
            item, lanes = self._next()
            if item is None:
                return
            try:
                if lanes and self._prepare_lanes is not None:
                    self._prepare_lanes(lanes)
                result = item.compute()
            except Exception as e:  # noqa: BLE001 - reported by the painted item, once
                result = e
            with self._cond:
                self._busy = None
                if self._stopped:
                    return
                self._in_flight[(item.cache, item.key)] = item.spec
            if not emit(self.done, item.cache, item.key, result):
                return  # (the timeline was deleted meanwhile)
