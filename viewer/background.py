"""The window's work that is not drawing, done in threads that give way to the window's.

Every thread the window starts (the load and its findings, the tiles, the critical path, a
search) runs at a lower priority than the window's own thread (``lower_this_thread``): on a
loaded machine the window's thread gets a core first when it wakes for an event, and so
answers within a frame while the others compute.  The interpreter also hands its lock over
more often than by default (``SWITCH_INTERVAL_S``), so a window's thread that let go of it for
a Qt call gets it back within a fraction of a millisecond rather than up to five.
``Background`` runs one function at a time off the window's thread and hands its result back
(a search, a finding's items), dropping a result that a newer request made stale.
"""

from __future__ import annotations

import os
import sys
import threading

from PySide6 import QtCore

NICENESS = 10  # (as the rank workers': load.rank_workers.WORKER_NICENESS)
SWITCH_INTERVAL_S = 0.0005  # the interpreter's default is 0.005


def lower_this_thread():
    """Lower the calling thread's scheduling priority (Linux schedules threads apart; a
    no-op elsewhere, or where it is not allowed)."""
    try:
        tid = threading.get_native_id()
        now = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, max(now, NICENESS))
    except (AttributeError, OSError):
        pass


def favour_the_window():
    """Called once by the window's thread: the interpreter's lock comes back to it fast."""
    sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))


def emit(signal, *args):
    """``signal.emit(*args)`` from a thread, unless the window it goes to is gone (closed
    while the thread worked: Qt raises "Signal source has been deleted"); True if sent."""
    try:
        signal.emit(*args)
        return True
    except RuntimeError:
        return False


def start_thread(target, name, *args):
    """A daemon thread running ``target(*args)`` at the lowered priority; returns it.  What
    it runs is held until it has ended (``hold_until_ended``)."""
    def run():
        lower_this_thread()
        target(*args)
    thread = threading.Thread(target=run, name=name, daemon=True)
    hold_until_ended(thread, target, args)
    thread.start()
    return thread


_HELD = {}  # a thread started by the window -> what it runs, until it has ended


def hold_until_ended(thread, *what):
    """Keep ``what`` a thread about to start runs (its target, a bound method of a Qt
    object; the arguments) until the window's thread sees it has ended, so that the last
    reference to a Qt object is never dropped in another thread.  A thread's end drops its
    target (``threading.Thread.run``), and with it, where the window had let go of the
    object, the object itself, destroyed there while the window's thread disconnected its
    signals (the suite's segfault: gdb showed a timeline's ``TileWorker`` freed in its
    thread as the test's window was destroyed).  Those of threads ended are let go here,
    in the window's thread only."""
    if threading.current_thread() is threading.main_thread():
        for ended in [t for t in list(_HELD) if t.ident is not None and not t.is_alive()]:
            _HELD.pop(ended, None)  # (list: another thread may start one meanwhile)
    _HELD[thread] = what


class Background(QtCore.QObject):
    """One function at a time in a thread; ``done(token, result)`` in the window's thread
    for the latest request only (``result``: what it returned, or the exception raised);
    ``busy`` until it arrived."""

    done = QtCore.Signal(object, object)
    _arrived = QtCore.Signal(int, object, object)  # (from the thread; handled in the window's)

    def __init__(self, name, parent=None):
        super().__init__(parent)
        self._name = name
        self._latest = 0
        self.busy = False
        self.threads = []
        self._arrived.connect(self._deliver)

    def run(self, function, token=None):
        """Compute ``function()`` off this thread; earlier requests' results are dropped."""
        self._latest += 1
        self.busy = True
        self.threads = [t for t in self.threads if t.is_alive()]
        self.threads.append(start_thread(self._work, self._name, self._latest, token,
                                         function))

    def cancel(self):
        """No result of the requests made so far will arrive."""
        self._latest += 1
        self.busy = False

    def _work(self, number, token, function):
        try:
            result = function()
        except Exception as e:  # noqa: BLE001 - the window says why, never a traceback
            result = e
        emit(self._arrived, number, token, result)

    def _deliver(self, number, token, result):
        if number == self._latest:
            self.busy = False
            self.done.emit(token, result)
