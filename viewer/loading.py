"""Loading a profile off the window's thread: the progress panel and the worker.

The command line, File → Open and drag-and-drop all load this way: the window stays live, the
panel says what is being read, and the findings come after the timeline.  Each load has a
number; what an earlier load sends after a later one started is dropped.
"""

from __future__ import annotations

import threading

from PySide6 import QtCore, QtWidgets

from legate_prof.present.file_list import files_in_words

from . import plain_text
from .background import emit, hold_until_ended, lower_this_thread


class LoadingPanel(QtWidgets.QWidget):
    """What the window shows while a profile is read and built: a title, the step, a bar."""

    def __init__(self, files=()):
        super().__init__()
        lay = QtWidgets.QVBoxLayout(self)
        lay.addStretch(1)
        self.title = plain_text.label()
        self.step = plain_text.label("starting…")
        self.bar = QtWidgets.QProgressBar()
        self.bar.setTextVisible(False)
        self.bar.setMinimumWidth(360)
        self.bar.setMaximumWidth(640)
        for w in (self.title, self.step, self.bar):
            lay.addWidget(w, 0, QtCore.Qt.AlignmentFlag.AlignHCenter)
        lay.addStretch(2)
        self.start(files)

    def start(self, files):
        """A new load: its files in the title, the bar busy until the first step is known."""
        self.title.setText(f"Opening {files_in_words(files)}" if len(files)
                           else "Opening the profile")
        self.step.setText("starting…")
        self.bar.setRange(0, 0)

    def set_progress(self, done, total, what):
        """The loader's ``progress(done, total, what)``: files read of all, the next step."""
        self.step.setText(str(what))
        if done >= total:  # reading is over: building has no steps to count
            self.bar.setRange(0, 0)
        else:
            self.bar.setRange(0, max(total, 1))
            self.bar.setValue(done)


class RanksSoFar:
    """``LoadProgress.partial``, what a load hands to ``load_profile`` as its ``partial``:
    called with the ranks built so far (``(profile, files)``), and ``building_again()``
    where the loader gives the workers' builds up and builds the ranks again in its own
    process (the loader's step, not a progress text)."""

    def __init__(self, loader):
        self._loader = loader

    def __call__(self, profile, files):
        self._loader._partial(profile, files)

    def building_again(self):
        self._loader._building_again()


class LoadProgress:
    """What a load is handed: ``progress(done, total, what)`` as ever;
    ``progress.partial(profile, files)``: the ranks built so far, while the rest of the
    ``files`` builds (``load_profile``'s ``partial``), which the window shows meanwhile;
    ``progress.building_again()``: the workers' builds were given up, the rest is built
    again in one process (slower), which the window says (``partial.building_again`` too,
    for a load that hands ``partial`` to ``load_profile`` as it is)."""

    def __init__(self, loader):
        self._loader = loader
        self.partial = RanksSoFar(loader)

    def __call__(self, done, total, what):
        self._loader._progress(done, total, what)

    def building_again(self):
        self._loader._building_again()


class Loader(QtCore.QObject):
    """Runs ``load(progress)`` in a worker thread, then ``prepare(model, progress)`` (what
    showing it needs, made here rather than in the window's thread), then ``findings(model)``
    if given; tells the window through queued signals, each with this load's ``number``
    (``loaded`` carries what ``prepare`` made; ``partial_loaded`` the same of the ranks
    built so far, where the load hands them over: ``LoadProgress``).  The findings come after
    the model so the timeline does not wait for them (they only read its tables)."""

    progressed = QtCore.Signal(int, int, int, str)
    partial_loaded = QtCore.Signal(int, object)
    building_again = QtCore.Signal(int)  # the rest built again in one process (the loader's)
    loaded = QtCore.Signal(int, object)
    failed = QtCore.Signal(int, object)
    found = QtCore.Signal(int, object)

    FIRST_FRAME_WAIT_S = 5.0  # the findings wait at most this long for the timeline's frame

    def __init__(self, number, load, findings=None, prepare=None):
        super().__init__()
        self.number = number
        self._load = load
        self._findings = findings
        self._prepare = prepare
        # set by the window once the timeline has painted: the findings (numpy in this
        # thread, holding the GIL between calls) then do not slow the first frames
        self.shown = threading.Event()
        # the window's query source over the model, set before ``shown``: the findings read
        # it, so the critical path they need is the one the window computes, done once
        self.source = None
        self._cancelled = False
        self.thread = threading.Thread(target=self._run, name="legate_prof-load", daemon=True)

    def start(self):
        hold_until_ended(self.thread, self)
        self.thread.start()

    def cancel(self):
        """The window closed or another load began: no findings for this one (the build
        cannot be stopped midway; it ends on its own)."""
        self._cancelled = True
        self.shown.set()

    def _progress(self, done, total, what):
        if not self._cancelled:  # (a closed window's Qt may be torn down meanwhile: the
            # process ending at once runs PySide's exit handler, and a signal sent then crashed
            # it, 1 close mid-load in 40)
            emit(self.progressed, self.number, int(done), int(total), str(what))

    def _building_again(self):
        """The loader gave the workers' builds up: it builds the ranks again, here."""
        if not self._cancelled:
            emit(self.building_again, self.number)

    def _partial(self, profile, files):
        """The ranks built so far of ``files`` rank files (in the thread that builds the
        rest): prepared as the whole will be (laid out as for that many ranks), for the
        window; nothing where that fails (the whole comes all the same)."""
        if self._cancelled or self._prepare is None:
            return
        try:
            ready = self._prepare(profile, None, ranks=files)
        except Exception:  # noqa: BLE001 - a preview only
            return
        if not self._cancelled:
            emit(self.partial_loaded, self.number, (ready, files))

    def _run(self):
        lower_this_thread()  # (it gives way to the window's thread)
        try:
            model = self._load(LoadProgress(self))
            ready = model if self._prepare is None else self._prepare(model, self._progress)
        except BaseException as e:  # handed to the window
            if not self._cancelled:
                emit(self.failed, self.number, e)
            return
        if self._cancelled:
            return  # (the window closed, or another load began: nothing to show)
        emit(self.loaded, self.number, ready)
        if self._findings is not None:
            self.shown.wait(self.FIRST_FRAME_WAIT_S)
            if self._cancelled:
                return
            try:
                source = self.source
                emit(self.found, self.number, self._findings(model if source is None
                                                             else source))
            except Exception as e:  # the timeline stays; the status bar says why
                emit(self.found, self.number, e)
