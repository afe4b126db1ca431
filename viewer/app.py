"""The desktop viewer window: timeline, search, results, findings and a pinned detail panel.

Every profile, the first one from the command line and each later one from File → Open or a
drop, is loaded the same way (``loading.Loader`` in a worker thread, the progress panel, the
findings after the timeline); a new profile replaces everything of the previous one, and a
failed open keeps it and says why.
"""

from __future__ import annotations

import contextlib
import os

from PySide6 import QtCore, QtGui, QtWidgets

from legate_prof import __version__
from legate_prof.present.file_list import files_in_words
from legate_prof.query import as_source, inputs_notes, open_profile

from . import plain_text
from .background import Background, emit, favour_the_window, start_thread
from .timeline.critical_path import CriticalPathWorker, lane_of_item
from .panels.details import DetailPanel
from .panels.findings import add_findings_dock
from .panels.lane_controls import LaneControls
from .timeline.layout import LaneLayout
from .panels.legend import LegendWidget
from .loading import Loader, LoadingPanel
from .notices import notice_lines, problem_lines
from .timeline.scrollbar import ScrolledTimeline
from .panels.search import ITEM_ROLE, SearchResults, group_by_rank, kinds_in_words, opened_lines
from .time_text import format_range
from .timeline.widget import TimelineWidget, prepare_view
from .view_keys import ViewKeys

MIN_TIMELINE_PX = 480  # the timeline keeps this width however wide the docks are
DOCK_SHARE = 0.3  # docks take at most this share of the window when it is laid out again
ROOMY_PX = 1000  # a window this wide gives its docks back the share they had (squeezed)
DEFAULT_SIZE = (1500, 900)  # the window's first size, where the screen has room for it
FRAME_PX = (16, 48)  # what a window manager's frame and title bar may add to it


def first_size(screen):
    """The window's first size: ``DEFAULT_SIZE`` where it fits the screen's available
    geometry (taskbars aside, in logical pixels: ``QT_SCALE_FACTOR=2`` halves them), else as
    much of it as fits with its frame (a review: 1500×900 on a 1280×720 screen, and 3000×1800
    physical pixels on a 1600×1000 one at scale 2, its controls off the screen)."""
    w, h = DEFAULT_SIZE
    if screen is None:
        return w, h
    room = screen.availableGeometry()
    return (max(min(w, room.width() - FRAME_PX[0]), 1),
            max(min(h, room.height() - FRAME_PX[1]), 1))


class FirstFrame(QtCore.QObject):
    """Calls ``then()`` once the timeline's first frame is whole: after ``widget``'s first
    paint, when its tiles have all arrived (``settled``), or ``WAIT_S`` after that paint at
    the latest.  The critical path and the findings start then: begun at the first paint,
    they competed with the tiles of that frame for the interpreter."""

    WAIT_S = 3.0
    POLL_MS = 30

    def __init__(self, widget, then, settled=None):
        super().__init__(widget)
        self._then = then
        self._settled = settled
        self._painted = None
        widget.installEventFilter(self)

    def eventFilter(self, obj, ev):
        if ev.type() == QtCore.QEvent.Type.Paint and self._painted is None:
            import time
            self._painted = time.monotonic()
            obj.removeEventFilter(self)
            QtCore.QTimer.singleShot(0, self._poll)
        return False

    def _poll(self):
        import time
        if self._then is None:
            return
        if self._settled is None or self._settled() or \
                time.monotonic() - self._painted > self.WAIT_S:
            then, self._then = self._then, None
            then()
        else:
            QtCore.QTimer.singleShot(self.POLL_MS, self._poll)


def default_open(paths, progress):
    """File → Open without the command line's opener: ranks unmerged, no cache; the ranks
    built so far shown while the rest builds (``LoadProgress.partial``)."""
    return open_profile(paths, progress=progress, ranked=True,
                        partial=getattr(progress, "partial", None))


class MainWindow(QtWidgets.QMainWindow):
    """The viewer.  With a model, it shows its timeline at once; with ``load`` (a function
    ``load(progress) -> model``), it shows a progress panel and runs ``load`` in a worker
    thread (call ``start_loading``), then shows the timeline, then the findings dock when
    ``findings(model)`` (run in the worker too) is done.  ``opener(paths, progress)`` loads
    a profile for File → Open and drops (the command line's: the cache, its workers)."""

    # an Export PNG picture written in its thread: (its path, the error or None)
    _exported = QtCore.Signal(str, object)

    def __init__(self, model=None, files=(), load=None, findings=None, opener=None,
                 example_note=None, view_range=None, path_track=None):
        super().__init__()
        favour_the_window()  # (its threads' work never holds this thread for long)
        # the command line opened the bundled example (no run here): title, status and
        # banner say so, and how to open a run, while it is shown
        self._example = (list(files), example_note) if example_note else None
        self.source = None
        self.timeline = None
        self.loading = None
        self.load_error = None
        self.findings = None
        self._beside = None  # (the files, what lies beside them left out: ``inputs_notes``)
        self.model = model
        self._find = findings
        self._path_track = path_track  # the command line's ``path_track``: the path's track
        self._opener = opener or default_open
        self._loads = 0  # number of the latest load; older loads' signals are dropped
        self._loaders = []  # kept alive while their threads run
        # the shown profile while another one loads: (widget, source, files, findings, its
        # ranks so far and why the rest failed, where they are what it shows)
        self._kept = None
        self._critical = []  # CriticalPathWorkers, kept alive while their threads run
        self._frame = None  # the timeline and its frame, made once (``_timeline_frame``)
        # the ranks built so far, shown while the rest builds: (their prepared view, its
        # lanes' state as first laid out, the rank files of the whole), until the whole
        # replaces them (``_partial_loaded``)
        self._so_far = None
        self._rest_failed = None  # (why the rest of a run whose ranks so far are shown failed)
        self._rebuilding = False  # (the rest being built again in one process: the banner says)
        self._whole_of_so_far = None  # (the whole shown in place of its ranks so far)
        self._fitted = None  # (a status line, as shown: cut to fit) (``_say_fitted``)
        self._widths = ((), ())  # the docks' widths while another profile loads
        # the first profile's view as the command line asked (--start/--stop), then none
        self._view_range = view_range if view_range and any(
            t is not None for t in view_range) else None
        self._files = list(files)
        self.setAcceptDrops(True)  # drop profile files on the window to open them
        self._build_work()
        self._build_docks()
        self.lanes = LaneControls(self)
        self._build_toolbar()
        self._build_menus()
        self.keys = ViewKeys(self)
        self.legend = LegendWidget()
        self.statusBar().addPermanentWidget(self.legend)
        self.resize(*first_size(self.screen()))
        if model is not None:
            self._show_source(as_source(model), files)
        else:
            self._load = load
            self._timeline_frame()  # (made now, before the window shows, not while it loads)
            self._show_loading(files)
            self.statusBar().showMessage("reading the profile…")

    # ---- building the window ---------------------------------------------------------------

    def _build_work(self):
        """Threads for what a click or the search box asks, one request of each at a time."""
        self._searches = Background("legate_prof-search", self)
        self._notices = Background("legate_prof-notices", self)
        self._notices.done.connect(self._noticed)
        self._searches.done.connect(self._searched)
        self._jumps = Background("legate_prof-item", self)
        self._jumps.done.connect(self._jumped)
        self.finding_work = Background("legate_prof-finding", self)
        self._operations = Background("legate_prof-operation", self)
        self._operations.done.connect(self._operation_found)
        self._exports = []  # the threads writing Export PNG's pictures
        self._unsaid = 0  # pictures begun whose writing the window has not said yet
        self._exported.connect(self._export_written)

    def _build_docks(self):
        self.details = DetailPanel()
        self.details.zoomTo.connect(lambda a, b: self.timeline and
                                    self.timeline.set_time_range(a, b))
        self.details.followItem.connect(self.go_to_item)
        self.details.followItems.connect(self._highlight)
        self.details.followLane.connect(self._go_to_lane)
        self.details.followText.connect(self._search_for)
        self.details.followOperation.connect(self._highlight_operation)
        self.results = SearchResults()
        self.results.itemActivated.connect(self._jump)
        self.results.itemClicked.connect(self._jump)
        self._docks = []
        for title, widget in (("Details", self.details), ("Search results", self.results)):
            dock = QtWidgets.QDockWidget(title, self)
            dock.setObjectName(title.lower().replace(" ", "_"))
            dock.setWidget(widget)
            self.addDockWidget(QtCore.Qt.DockWidgetArea.RightDockWidgetArea, dock)
            self._docks.append(dock)

    def _build_toolbar(self):
        tb = self._toolbar = self.addToolBar("Search")
        tb.setObjectName("toolbar")
        tb.setMovable(False)
        self.search = QtWidgets.QLineEdit()
        self.search.setPlaceholderText("Search task names and provenance (e.g. BinaryOp, "
                                       "prog.py:16)")
        self.search.setClearButtonEnabled(True)
        self.search.returnPressed.connect(self.run_search)
        self.search.textChanged.connect(lambda t: t or self.run_search())
        tb.addWidget(plain_text.label(" Search: "))
        tb.addWidget(self.search)
        self.lanes.add_to(tb)

    def _build_menus(self):
        f = self.menuBar().addMenu("&File")
        f.addAction("Open…", self._open_dialog, QtGui.QKeySequence.StandardKey.Open)
        f.addAction("Open folder…", self._open_folder_dialog, QtGui.QKeySequence("Ctrl+Shift+O"))
        f.addAction("Export PNG…", self.export_png, QtGui.QKeySequence("Ctrl+E"))
        f.addAction("Quit", self.close, QtGui.QKeySequence.StandardKey.Quit)
        v = self._view_menu = self.menuBar().addMenu("&View")
        # the timeline is looked up when used: it is replaced when another profile opens
        v.addAction("Reset zoom", lambda: self.timeline.reset(), QtGui.QKeySequence("Ctrl+0"))
        v.addAction("Undo view change", lambda: self.timeline.undo(),
                    QtGui.QKeySequence.StandardKey.Undo)
        v.addAction("Redo view change", lambda: self.timeline.redo(),
                    QtGui.QKeySequence.StandardKey.Redo)
        v.addAction("Clear highlights (Esc)", lambda: self.timeline.clear_highlights())
        find = v.addAction("Find…", self._focus_search, QtGui.QKeySequence.StandardKey.Find)
        v.addSeparator()
        self.path_action = v.addAction("Show the run's critical path (P)")
        self.path_action.setCheckable(True)
        self.path_action.toggled.connect(self._show_path)
        # (on the toolbar too, its state in sight: only P and the menu showed it, a review)
        self.path_action.setIconText("Critical path (P)")
        self._toolbar.addSeparator()
        self._toolbar.addAction(self.path_action)
        walks = [v.addAction("Walk back: what the selected item waited for ([)",
                             lambda: self.timeline.walk(forward=False)),
                 v.addAction("Walk forward: the first item it held up (])",
                             lambda: self.timeline.walk(forward=True))]
        # what needs the whole run, off over the ranks so far (``_set_ready``: the tips
        # that say why, none of their own besides)
        self._whole_only = [find, self.path_action, *walks]
        v.setToolTipsVisible(True)  # (only actions given a tooltip show one)
        v.addSeparator()
        self.lanes.add_menu(v)
        v.addSeparator()
        for dock in self._docks:  # (and the findings' when it comes: ``addDockWidget``)
            self._list_dock(dock)
        h = self.menuBar().addMenu("&Help")
        h.addAction("Keys", self._help)

    def addDockWidget(self, area, dock, *args):
        """Qt's, and the dock's toggle listed in the View menu (once it is made)."""
        super().addDockWidget(area, dock, *args)
        if getattr(self, "_view_menu", None) is not None:
            self._list_dock(dock)

    def _list_dock(self, dock):
        """A dock's show/hide toggle in the View menu (a review: a dock closed came back
        only by right-clicking another dock's title)."""
        toggle = dock.toggleViewAction()
        if toggle not in self._view_menu.actions():
            self._view_menu.addAction(toggle)

    def _help(self):
        plain_text.message(self, "Keys", (
            "Wheel: zoom at cursor · Shift+wheel: scroll lanes\n"
            "Drag: pan · Shift+drag or right-drag: zoom to interval\n"
            "←/→ pan (Shift: fine) · ↑/↓ scroll · +/− zoom · 0 reset\n"
            "PgUp/PgDn: a screen of lanes · Home/End: first/last lanes\n"
            "C: collapse or open the rank at the top · Esc: clear highlights\n"
            "[ / ]: walk the critical path back (what the selected item waited for) and "
            "forward (the first item it held up) · P: draw the run's critical path\n"
            "Ctrl+Z / Ctrl+Shift+Z (or Ctrl+←/→): undo/redo view\n"
            "Click: details (links: click to follow) · double-click a gray band: zoom in\n"
            "Click a group name (▸/▾) to show its lanes, a rank header to collapse it\n"
            "The view keys work wherever the focus is, except while typing in a text box"),
            QtWidgets.QMessageBox.Icon.Information)

    def _focus_search(self):
        self.search.setFocus()
        self.search.selectAll()

    def _showing_example(self, files):
        return self._example is not None and list(files) == self._example[0]

    def _set_title(self, files):
        names = files_in_words(files)
        example = " (the bundled example)" if self._showing_example(files) else ""
        self.setWindowTitle(f"legate_prof {__version__} — {names}{example}")

    def _set_ready(self, ready, so_far=None):
        """Search, the view menu and the lane controls act on a timeline: off while loading.
        Over the ranks built so far (``so_far``: of that many rank files) the view's and the
        lanes' are on (what they choose carries over to the whole: ``_as_left``), what needs
        the whole run (search, the critical path, its walks) off, its tooltip and status
        tip saying why (they were all off over the ranks so far, without a word)."""
        shown = ready or so_far is not None
        self.search.setEnabled(ready)
        docks = [d.toggleViewAction() for d in self.findChildren(QtWidgets.QDockWidget)]
        for a in self._view_menu.actions():  # (the docks' toggles: there while loading)
            a.setEnabled(ready or a in docks or (shown and a not in self._whole_only))
        why = "" if ready or so_far is None else (
            f"not available: the other ranks could not be built ({self._rest_failed})"
            if self._rest_failed else f"available once all {so_far} ranks are read")
        for a in self._whole_only:
            a.setToolTip(f"{a.text()} — {why}" if why else "")
            a.setStatusTip(why)
        self.search.setToolTip(plain_text.tooltip(f"Search: {why}") if why else "")
        self.lanes.setEnabled(shown)

    # ---- the profile shown ------------------------------------------------------------------

    def _timeline_frame(self):
        """The timeline with its scrollbar and notices, made once: each profile opened is
        shown in it (``TimelineWidget.set_source``), since making a plot with its axes costs
        the window's thread most of a frame."""
        if self._frame is None:
            timeline = TimelineWidget()
            timeline.itemClicked.connect(self._clicked)
            timeline.viewChanged.connect(self._status_range)
            timeline.escapePressed.connect(self._escape)
            timeline.walked.connect(self._walked)
            timeline.itemRestored.connect(self._restored)
            timeline.pathToggled.connect(self._path_toggled)
            timeline.setMinimumWidth(MIN_TIMELINE_PX)
            self._frame = ScrolledTimeline(timeline)
        return self._frame

    def _show_source(self, src, files, layout=None, partial=False):
        """Show ``src``'s timeline in the centre (its lanes laid out as ``layout``, made by
        the loader's thread), replacing everything of the profile before: the timeline and
        its view history, search, details, highlights.  ``partial``: the ranks built so far
        (``_partial_loaded``): no critical path, findings or exports yet."""
        self.source = src
        self._files = list(files)
        frame = self._timeline_frame()
        self.timeline = frame.timeline
        if src is not self._whole_of_so_far:
            self._whole_of_so_far = None
        frame.keep_bar_room(partial or self._whole_of_so_far is not None)
        self.timeline.set_source(src, layout)
        if self._view_range is not None:  # (the history starts there: 0 resets to the run)
            (a, b), (t0, t1) = self._view_range, src.outline().time_range
            self.timeline.set_time_range(t0 if a is None else a, t1 if b is None else b,
                                         remember=False)
            self.timeline.history = [self.timeline.time_range()]
            if not partial:  # (the whole is shown the same way)
                self._view_range = None
        self.timeline.item.compute_in_background()  # no frame waits for a tile
        frame.follow_view()  # (its scrollbar: the lanes' height is another)
        self.timeline.show_critical_path(self.path_action.isChecked() and not partial)
        self._set_notices(src, src.outline())  # (its notices once worked out: ``_noticed``)
        if self.centralWidget() is not frame:
            self.setCentralWidget(frame)  # (the loading panel goes)
        self._kept = None
        replacing = self._so_far is not None  # (the ranks so far: a search typed stays)
        self.loading = None
        if not replacing:
            self.search.clear()
        self.results.clear_results()
        self.details.clear()
        self.lanes.set_source(src, self.timeline, self._so_far[2] if partial else None,
                              carried=replacing and not partial)
        self._set_title(files)
        self._set_ready(not partial, self._so_far[2] if partial else None)
        self.details.critical_note = ("computed once the whole run is in" if partial else
                                      "being computed (shown here when ready)")
        self.timeline.path_unready = SO_FAR_NO_PATH if partial else None
        self.statusBar().clearMessage()
        for w in src.outline().warnings[:3]:
            self.statusBar().showMessage(str(w))
        if self._showing_example(files):
            self.statusBar().showMessage(f"the bundled example: {self._example[1]}")
        QtCore.QTimer.singleShot(0, self.keep_timeline_wide)
        if not partial:
            FirstFrame(self.timeline.viewport(), lambda: self._after_first_frame(src),
                       self.timeline.item.settled)
        if self.isVisible():  # its tiles asked now, while the rest of the window is drawn
            self._lay_out_now()
            self.timeline.paint_ahead()

    def _lay_out_now(self):
        """The window's layout now, not at the next event: the timeline's size and view."""
        self.centralWidget().show()  # (Qt shows a new central widget at the next event)
        self.layout().activate()
        for _ in range(3):  # the window's, the timeline frame's, the plot's
            QtWidgets.QApplication.sendPostedEvents(None, QtCore.QEvent.Type.LayoutRequest)

    def _set_notices(self, src, info):
        """The banner: what went wrong reading ``src``'s files, and its notices as far as
        ``info`` has them (the status bar is overwritten; the banner stays); of the ranks
        built so far, which they are."""
        lines = notice_lines(info)
        if self._so_far is not None and src is self._so_far[0].source:
            lines.insert(0, so_far_words(info, self._so_far[2], self._rest_failed,
                                         self._rebuilding))
        whole = src is self._whole_of_so_far  # (its banner as tall: the lanes stay in place)
        if whole:
            lines.append(WHOLE_IN.format(n=len(info.ranks)))
        if self._showing_example(self._files):
            lines.insert(0, f"This is the bundled example profile: {self._example[1]}.")
        if self._beside is None or self._beside[0] != self._files:  # (once per files)
            self._beside = (self._files, inputs_notes(self._files or ()))
        self._timeline_frame().set_notices(lines, problem_lines(info) + self._beside[1],
                                           keep_height=whole)

    def _after_first_frame(self, src):
        """The notices (the messages' latency over every item) and the critical path are
        worked out once the first frame is whole, each in a thread of its own."""
        if src is not self.source:
            return  # another profile replaced it before its first frame
        self._notices.run(src.info, token=src)
        self._start_critical(src)

    def _noticed(self, src, info):
        if src is self.source and not isinstance(info, Exception):
            self._set_notices(src, info)

    # ---- the critical path, computed in a thread after the first frame ------------------

    def _start_critical(self, src):
        if src is not self.source:
            return  # another profile replaced it before its first frame
        worker = CriticalPathWorker(src, self._path_track)
        worker.done.connect(self._critical_done)
        self._critical = [w for w in self._critical if w.thread.is_alive()] + [worker]
        worker.start()

    @property
    def critical_path(self):
        """The shown profile's ``RunPath``, once computed (its timeline holds it)."""
        return None if self.timeline is None else self.timeline.critical_path

    @property
    def critical_error(self):
        """Why the shown profile's critical path could not be computed, or None."""
        return None if self.timeline is None else self.timeline.critical_error

    def _critical_done(self, src, result):
        """The run's path arrived (or why not): its timeline keeps it (also one kept aside
        while another profile loads); the shown one draws it if asked, and its details and
        walks use it."""
        kept = self._kept[0].timeline if self._kept and self._kept[1] is src else None
        timeline = self.timeline if src is self.source and self.timeline is not None else kept
        if timeline is None:
            return
        if isinstance(result, Exception):
            timeline.critical_error = f"{type(result).__name__}: {result}"
        else:
            timeline.set_critical_path(result)
        if timeline is self.timeline:
            if timeline.item.path_shown and self._no_path_to_draw():
                timeline.show_critical_path(False)  # (asked before it came: none to draw)
            self._critical_said()

    def _critical_said(self):
        """The details and the status bar say what became of the shown critical path."""
        if self.critical_error is not None:
            self.details.critical_note = f"unavailable ({self.critical_error})"
            self.statusBar().showMessage(f"critical path unavailable: {self.critical_error}")
        elif self.critical_path is not None:
            self.details.critical_note = None
            if self.path_action.isChecked():
                self._say_path()
        else:
            self.details.critical_note = "being computed (shown here when ready)"
        self.details.refresh()

    def _say_path(self):
        """The drawn path in a status line that fits the status bar beside its legend, the
        whole of it in the status bar's tooltip while that line is shown (the guide's run:
        the line was cut where the legend starts, and went after 8 s, unread)."""
        bar = self.statusBar()
        short = _path_summary(self.critical_path, short=True)
        bar.showMessage(short)
        bar.setToolTip(_path_summary(self.critical_path))

        def forget(now):  # (another message: the tooltip would speak of the path)
            if now != short:
                bar.setToolTip("")
                bar.messageChanged.disconnect(forget)
        bar.messageChanged.connect(forget)

    def _show_path(self, on):
        if self.timeline is not None and self.timeline.item.path_shown != on:
            self.timeline.show_critical_path(on)

    def _no_path_to_draw(self):
        """Whether the shown profile's critical path is known not to be drawable: computed
        empty (no Realm events recorded) or failed."""
        path = self.critical_path
        return self.critical_error is not None or (path is not None and not len(path))

    def _path_toggled(self, on):
        """P or the View menu: the menu's check follows, the status says what is drawn.  A
        path that cannot be drawn is not turned on (a review: on oom2, the toggle stayed
        pressed, every item was dimmed and the legend named the path's colours)."""
        if on and self._no_path_to_draw():
            self.timeline.show_critical_path(False)  # (this again, off: it says why)
            return
        if on and self._so_far is not None:  # (P turned it on over the ranks so far, "being
            self.timeline.show_critical_path(False)  # computed" said of none: a GUI review)
            self.statusBar().showMessage(SO_FAR_NO_PATH)
            return
        if self.path_action.isChecked() != on:
            self.path_action.setChecked(on)
        self.legend.set_critical(on)
        if not on and self.critical_error is not None:
            self.statusBar().showMessage(f"critical path unavailable: {self.critical_error}")
        elif not on and self._no_path_to_draw():
            self.statusBar().showMessage(_path_summary(self.critical_path))  # (none: why)
        elif not on:
            self.statusBar().showMessage("critical path hidden", 3000)
        elif self.critical_path is not None:
            self._say_path()
        else:
            self.statusBar().showMessage("the critical path is being computed; it is drawn "
                                         "when ready")

    def _walked(self, item, why):
        if item is not None:
            self.details.show_hit(self.source, ("item", item))
        self.statusBar().showMessage(why)
        # the whole sentence where the legend cuts it; its names are a file's: plain text
        self.statusBar().setToolTip(plain_text.tooltip(why))

    def _restored(self, item):
        self.details.show_hit(self.source, ("item", item) if item is not None else None)

    def background_threads(self):
        """The threads still working for this window: loads, findings, critical paths."""
        return [x.thread for x in (*self._loaders, *self._critical)
                if x.thread.ident is not None]

    def work_threads(self):
        """Every thread this window started that may still run: ``background_threads``,
        the timeline's tiles and tooltips, searches, jumps, findings' and operations' items,
        the notices."""
        works = [self._searches, self._jumps, self.finding_work, self._operations,
                 self._notices]
        out = list(self.background_threads()) + [t for t in self._exports if t.is_alive()]
        if self._frame is not None:
            out += self._frame.timeline.work_threads()
        return out + [t for w in works for t in w.threads]

    def keep_timeline_wide(self):
        """Docks widened by hand keep their width only while the timeline keeps most of the
        window: else they are narrowed to ``DOCK_SHARE`` of it.  Docks a small window
        squeezed get their share of a roomy window back when it is roomy again (they stayed
        80 px wide in a 1,600 px window)."""
        central = self.centralWidget()
        if central is None or self.width() <= 0:
            return
        docks = self._side_docks()
        if not docks:
            return
        roomy = self.width() >= ROOMY_PX
        share = getattr(self, "_dock_share", None)  # (of a roomy window, as last seen)
        if central.width() < self.width() * (1 - DOCK_SHARE) - 40:
            self.resizeDocks(docks, [int(self.width() * DOCK_SHARE)] * len(docks),
                             QtCore.Qt.Orientation.Horizontal)
        elif roomy and share and docks[0].width() < share * self.width() / 2:
            self.resizeDocks(docks, [int(share * self.width())] * len(docks),
                             QtCore.Qt.Orientation.Horizontal)
        elif roomy:
            self._dock_share = min(docks[0].width() / self.width(), DOCK_SHARE)

    def _side_docks(self):
        """The docks shown beside the centre (not floating)."""
        return [d for d in self.findChildren(QtWidgets.QDockWidget)
                if d.isVisible() and not d.isFloating()]

    def _dock_widths(self):
        """The docks beside the centre and their widths, as they are now."""
        docks = self._side_docks()
        return docks, [d.width() for d in docks]

    def _put_docks_back(self):
        """The docks at the widths they had before the centre was swapped (``_widths``):
        a central widget taken out, the docks filled the window and kept ~65 % of it when
        the loading panel came, and after a failed open too (a review)."""
        docks, widths = self._widths
        self.layout().activate()
        if docks:
            self.resizeDocks(list(docks), list(widths), QtCore.Qt.Orientation.Horizontal)

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        QtCore.QTimer.singleShot(0, self.keep_timeline_wide)
        QtCore.QTimer.singleShot(0, self._refit_message)  # (once the legend has moved)

    def closeEvent(self, ev):
        for loader in self._loaders:  # no findings to compute for a closed window
            loader.cancel()
        if self._frame is not None and self._frame.timeline.item is not None:
            self._frame.timeline.item.stop_background()
        super().closeEvent(ev)

    # ---- loading (the command line's, File → Open's and a drop's) ----------------------

    def _show_loading(self, files):
        """The progress panel in the centre; the profile shown so far is kept aside."""
        if self.loading is None:
            widths = self._dock_widths()  # (the centre taken, the docks filled the window)
            if self.timeline is not None:
                old = self.findings.given if self.findings is not None else None
                self._kept = (self.takeCentralWidget(), self.source, self._files, old,
                              (self._so_far, self._rest_failed))
                self.timeline = None
            self.results.clear_results()
            self.details.clear()
            if self.findings is not None:
                self.findings.set_findings((), note="opening another profile…")
            self.loading = LoadingPanel(files)
            self.setCentralWidget(self.loading)
            self._widths = widths
            self._put_docks_back()
        else:
            self.loading.start(files)
        self._set_title(files)
        self._set_ready(False)

    def start_loading(self, load=None, files=None):
        """Run ``load(progress)`` (by default the one given to the constructor) in a worker
        thread; the findings follow in the same thread."""
        self._loads += 1
        for old in self._loaders:
            old.cancel()
        loader = Loader(self._loads, load or self._load, self._find, prepare=prepare_view)
        self._so_far = self._rest_failed = None
        self._rebuilding = False
        loader.progressed.connect(self._progressed)
        loader.partial_loaded.connect(self._partial_loaded)
        loader.building_again.connect(self._building_again)
        loader.loaded.connect(self._loaded)
        loader.failed.connect(self._failed)
        loader.found.connect(self._found_by)
        self._loader = loader
        self._loaders = [x for x in self._loaders if x.thread.is_alive()] + [loader]
        if files is not None:
            self._files = list(files)
        loader.start()

    def _current(self, number):
        return number == self._loads

    def _progressed(self, number, done, total, what):
        if not self._current(number):
            return
        if self.loading is not None:
            self.loading.set_progress(done, total, f"{what} (again, in this process)" if
                                      self._rebuilding else what)
        elif self._so_far is not None:  # (the ranks so far shown: the rest's progress below)
            again = " again, in this process" if self._rebuilding else ""
            self.statusBar().showMessage(f"building the other ranks{again}: {what}")

    def _building_again(self, number):
        """The loader's step: the workers' builds given up (a worker died, a bundle cut),
        it reads and builds the ranks again in its own process, slower.  The banner over
        the ranks so far says so, or the progress panel's step where none are shown."""
        if not self._current(number) or self._rebuilding:
            return
        self._rebuilding = True
        if self._so_far is not None and self.loading is None:
            self._set_notices(self.source, self.source.outline())
            self.statusBar().showMessage("building the other ranks again, in this process…")
        elif self.loading is not None:
            self.loading.set_progress(0, 0, AGAIN_STEP)

    def _partial_loaded(self, number, got):
        """The ranks built so far, while the rest builds (10 ranks of 1 M items on 2 cores:
        2 shown after ~1 s, the 10 after ~4 s): shown as the whole will be, a line above
        saying which; no findings, critical path or exports until the whole replaces them
        (``_loaded``), keeping the view and lanes as left meanwhile."""
        if not self._current(number) or self.loading is None or self._kept is not None:
            return  # (a File → Open: the profile shown before stays until the whole is in)
        ready, files = got
        self._so_far = (ready, ready.layout.state(), files)
        self._show_source(ready.source, self._files, ready.layout, partial=True)
        self.statusBar().showMessage("building the other ranks…")

    def _loaded(self, number, ready):
        if not self._current(number):
            return
        self.model = ready.model
        self.load_error = None  # (a run whose rest failed, then another opened: its status)
        layout, left = ready.layout, None
        if self._so_far is not None:
            layout, left = self._as_left(ready), self._where_left()
            self._whole_of_so_far = ready.source
            if self.isVisible():  # (their picture stays until the whole's is whole)
                self._frame.hold_picture()
        self._show_source(ready.source, self._files, layout)
        self._so_far = None
        if left is not None:
            self._back_where_left(*left)
            self._frame.release_when(self.timeline.item.settled)
        self._loader.source = self.source  # the findings share its critical path
        FirstFrame(self.timeline.viewport(), self._loader.shown.set,
                   self.timeline.item.settled)
        if self._find is not None:
            if self.findings is not None:  # the previous profile's findings go at once
                self.findings.set_findings((), note="looking for the guide's patterns…")
            self.statusBar().showMessage("looking for the guide's patterns (findings)…")

    @property
    def showing_ranks_so_far(self):
        """Whether the timeline shows the ranks built so far, the rest still building (the
        whole profile not yet in: ``_partial_loaded``)."""
        return self._so_far is not None

    def _as_left(self, ready):
        """The whole profile's layout after its ranks so far were shown: the time range the
        user moved to meanwhile (the whole's range where they did not, or went back to the
        whole of the ranks so far: 0 cut the whole at their end, a review); the groups and
        ranks they opened or closed, on top of the whole's default (the ranks built since
        came in all closed, a review), and what they asked of every rank (View → Collapse
        all groups, Expand a kind …: ``LaneLayout.ask_again``) done on the ranks built since
        too; the kinds they hid, and the ranks the Ranks box names, of the whole (the box
        and the kinds' menu say the same: ``LaneControls.set_source``'s ``carried``)."""
        from .timeline.layout import LaneLayout
        so_far, first, _ = self._so_far
        tl = self.timeline
        if tl is None:
            return ready.layout
        a, b = tl.time_range()
        t0, t1 = so_far.source.outline().time_range
        if len(tl.history) > 1 and abs(a - t0) + abs(b - t1) > 1e-6 * max(t1 - t0, 1):
            self._view_range = (a, b)
        now = tl.lane_layout.state()
        moved = {k: (now[k] - first[k], first[k] - now[k])
                 for k in ("expanded", "collapsed_ranks")}
        hidden_ranks = self.lanes.ranks_hidden_of(ready.source)
        asked = tl.lane_layout.asked
        if not any(x for pair in moved.values() for x in pair) and not asked and \
                not hidden_ranks and not now["hidden_groups"]:
            return ready.layout
        state = ready.layout.state()
        for k, (added, removed) in moved.items():
            state[k] = (state[k] - removed) | added
        state["hidden_ranks"], state["hidden_groups"] = hidden_ranks, now["hidden_groups"]
        if asked:  # ("Collapse ranks", "Expand all groups" …: the ranks built since too)
            since = set(ready.source.outline().ranks) - set(so_far.source.outline().ranks)
            state = ready.layout.ask_again(state, asked, since)
        return LaneLayout.with_state(ready.source, state)

    def _where_left(self):
        """What the user did in the ranks so far that the whole keeps (``_back_where_left``):
        their source, the view's history, the lane at the top of the view and how far into
        it, the item selected."""
        tl = self.timeline
        top = tl.vb.viewRange()[1][0]
        e = tl.lane_layout.entry_at(top + 1e-6)
        at = None if e is None else ((e.kind, e.rank, e.group, e.label), top - e.y)
        return (self.source, list(tl.history), list(tl.future), at, tl.item.selected)

    def _back_where_left(self, old, history, future, at, selected):
        """The whole shown as the user left its ranks so far: the lane that was at the top
        stays there (the ranks built since came in above it, the lanes out of sight), Ctrl+Z
        goes back through their views, their selected item stays selected."""
        tl = self.timeline
        if len(history) > 1:
            tl.history, tl.future = history, future
        if at is not None:
            key, into = at
            e = next((x for x in tl.lane_layout.entries
                      if (x.kind, x.rank, x.group, x.label) == key), None)
            if e is not None:
                tl.scroll_to(e.y + into)
        item = item_in(old, self.source, selected)
        if item is not None:
            tl.select(item)
            self.details.show_hit(self.source, ("item", item))

    def _found_by(self, number, findings):
        if self._current(number) and self.source is not None:
            self._found(findings)

    def _found(self, findings):
        """The findings of the profile shown (its load's, never an earlier one's)."""
        if isinstance(findings, Exception):
            add_findings_dock(self, (), note=f"findings unavailable: {findings}")
            self.statusBar().showMessage(f"findings unavailable: {findings}")
            return
        n = len(add_findings_dock(self, findings).findings)
        self.statusBar().showMessage(f"{n} finding{'' if n == 1 else 's'}", 5000)

    def _failed(self, number, error):
        """The first load failed: the window closes and ``run_viewer`` raises the error
        again.  A later one: the profile shown before stays, and a dialog says why."""
        if not self._current(number):
            return
        if self._so_far is not None:  # the ranks so far stay, said to be all there is (the
            # window closed: a worker killed for memory, then the build here failed too)
            self._rest_failed = str(error) if str(error) else type(error).__name__
            self.load_error = error  # (the command's exit status says it, once closed)
            self._set_ready(False, self._so_far[2])  # (the tips: why not, now for good)
            self._set_notices(self.source, self.source.outline())
            self.statusBar().showMessage(f"the other ranks could not be built: "
                                         f"{self._rest_failed}")
            plain_text.message(self, "legate_prof: could not build the other ranks",
                               self._rest_failed, modal=False)
            return
        if self._kept is None:
            self.load_error = error
            self.close()
            QtWidgets.QApplication.instance().exit(1)
            return
        widget, src, files, findings, (self._so_far, self._rest_failed) = self._kept
        self._kept = None
        if findings is not None:
            self.findings.set_findings(findings)
        self.loading = None
        self.setCentralWidget(widget)  # the loading panel goes
        widget.show()  # (a central widget taken out is hidden)
        self._put_docks_back()  # as they were before the open, the timeline as wide
        self.source, self._files = src, files
        self.timeline = widget.timeline
        self.path_action.setChecked(self.timeline.item.path_shown)
        self._critical_said()
        self._set_title(files)
        # (a run's ranks so far, the rest failed: as it was)
        self._set_ready(self._so_far is None, self._so_far[2] if self._so_far else None)
        why = str(error) if str(error) else type(error).__name__
        self.statusBar().showMessage(f"could not open: {why}")
        self.open_error = why
        plain_text.message(self, "legate_prof: could not open", why, modal=False)

    def open_files(self, paths):
        """Open another profile (File → Open, drag-and-drop) as the command line does: in a
        worker thread, with the progress panel, then its findings."""
        paths = [str(p) for p in paths]
        if not paths:
            return False
        if self._so_far is not None and not self._rest_failed:  # (a failed open brought the
            # ranks so far back, the run's load given up, for good: a GUI review)
            self.statusBar().showMessage("the other ranks of this run are still being built: "
                                         "open another once it is shown")
            return False
        opener = self._opener
        self._show_loading(paths)
        self.statusBar().showMessage("reading the profile…")
        self.start_loading(lambda progress: opener(paths, progress), files=paths)
        return True

    def _open_dialog(self):
        paths, _ = QtWidgets.QFileDialog.getOpenFileNames(
            self, "Open profiles", "", "Profiles (*.prof *.gz *.lpbundle);;All files (*)")
        if paths:
            self.open_files(paths)

    def _open_folder_dialog(self):
        """A run's folder (its .prof, .prof.gz and runtime streams), as ``view FOLDER``."""
        folder = QtWidgets.QFileDialog.getExistingDirectory(self, "Open a run's folder")
        if folder:
            self.open_files([folder])

    def dragEnterEvent(self, ev):
        if ev.mimeData().hasUrls():
            ev.acceptProposedAction()

    def dropEvent(self, ev):
        paths = [u.toLocalFile() for u in ev.mimeData().urls() if u.isLocalFile()]
        if paths:
            ev.acceptProposedAction()
            # after the drop returns: the drag source is not kept waiting on the load's start
            QtCore.QTimer.singleShot(0, lambda: self.open_files(paths))

    # ---- search, details, highlights ----------------------------------------------------

    def run_search(self):
        """Search every rank, in a thread (millions of items take longer than a frame); then
        the results grouped by rank with a count each, all highlighted."""
        text = self.search.text().strip()
        self.results.clear_results()
        if self.timeline is None:
            return
        if not text:
            self._searches.cancel()
            self.timeline.set_matches(None)
            self.statusBar().clearMessage()
            return
        src = self.source

        def search():
            hits = src.search(text, limit=src.outline().n_items + 1)
            groups = group_by_rank(src, hits)
            return hits, groups, opened_lines(src, groups), kinds_in_words(src, hits)
        self._say_fitted(f"searching for '{text}'…")
        self._searches.run(search, (src, text))

    def _searched(self, token, result):
        src, text = token
        if src is not self.source or self.timeline is None:
            return
        if isinstance(result, Exception):
            self.statusBar().showMessage(f"search failed: {result}")
            return
        hits, groups, lines, kinds = result
        self.timeline.set_matches(hits)
        counts = self.results.show_groups(src, groups, lines)
        per = ", ".join(f"rank {r}: {n:,}" for r, n in list(counts.items())[:8])
        more = f", … ({len(counts)} ranks)" if len(counts) > 8 else ""
        # (what they are: a task's name is its application call's too, twice stats' count)
        said = "; ".join(x for x in (kinds if "," in kinds else "",
                                     f"{per}{more}" if len(src.outline().ranks) > 1 else "")
                         if x)
        self._say_fitted(f"{len(hits):,} matches for '{text}'" + (f" ({said})" if said else ""))

    def _say_fitted(self, text):
        """A status line cut with "…" where it would run under the legend (the status bar
        draws its message only up to its permanent widgets: a long search's summary was cut
        off there by the legend, a GUI walk), the whole of it in the status bar's tooltip
        while it is shown; cut again to the room a resized window leaves
        (``_refit_message``)."""
        bar = self.statusBar()
        shown = bar.fontMetrics().elidedText(text, QtCore.Qt.TextElideMode.ElideRight,
                                             self._message_room())
        self._fitted = (text, shown)
        bar.showMessage(shown)
        if shown == text:
            return
        bar.setToolTip(plain_text.tooltip(text))

        def forget(now):  # (another message: the tooltip would speak of this one)
            if now != shown:
                bar.setToolTip("")
                bar.messageChanged.disconnect(forget)
        bar.messageChanged.connect(forget)

    def _message_room(self):
        """The width the status bar draws its message in: from 6 px to 2 px before the
        legend, its first permanent widget (as ``QStatusBar`` lays its message out)."""
        bar = self.statusBar()
        right = bar.width() - 12
        if self.legend.isVisible():
            right = min(right, self.legend.x() - 2)
        return max(right - 6, 0)

    def _refit_message(self):
        """The window's width changed: a status line ``_say_fitted`` still shows is cut
        again to the room there is now (the whole of it where it fits)."""
        if self._fitted is None or self.statusBar().currentMessage() != self._fitted[1]:
            return
        text, shown = self._fitted
        if self.statusBar().fontMetrics().elidedText(
                text, QtCore.Qt.TextElideMode.ElideRight, self._message_room()) != shown:
            self._say_fitted(text)

    def busy(self):
        """Whether a search, a finding's items or a jump to an item is still being worked out
        (tests wait for it; the window goes on meanwhile)."""
        return any(b.busy for b in (self._searches, self._jumps, self.finding_work,
                                    self._operations))

    def _search_for(self, text):
        self.search.setText(text)
        self.run_search()

    def _escape(self):
        """Escape: highlights and the selection go, and with them what showed them (the
        details of the item no longer selected, the finding chosen: a GUI walk found the
        details kept while ``[`` said "select an item first"); the search box keeps its text
        (Enter searches it again) but lists nothing."""
        self.results.clear_results()
        self.details.clear()
        if self.findings is not None:
            self.findings.clearSelection()
            self.findings.setCurrentItem(None)
        self.statusBar().showMessage("highlights cleared", 3000)

    def _highlight(self, ids):
        if self.timeline is not None:
            self.timeline.set_matches(ids)

    def _highlight_operation(self, op_id):
        """The Operation row's link: its items highlighted, found in a thread."""
        src = self.source
        self._operations.run(lambda: src.items_of_op(op_id), (src, op_id))

    def _operation_found(self, token, items):
        src, op_id = token
        if src is not self.source or self.timeline is None or isinstance(items, Exception):
            return
        self.timeline.set_matches(items)
        self.statusBar().showMessage(f"{len(items):,} item{'' if len(items) == 1 else 's'} "
                                     f"of operation {op_id} highlighted (Esc clears)")

    def _clicked(self, hit):
        self.details.show_hit(self.source, hit)

    def _jump(self, item, _col=0):
        i = item.data(0, ITEM_ROLE)
        if i is not None:
            self.go_to_item(int(i))

    def go_to_item(self, i):
        """Select an item, zoom to it and show its details (a result, a link), once its lane
        is ready to draw: stacked in a thread where it was not yet."""
        if self.timeline is None:
            return
        src = self.source
        self._jumps.run(lambda: src.prepare_lanes([lane_of_item(src, i)]), (src, int(i)))

    def _jumped(self, token, result):
        src, i = token
        if src is not self.source or self.timeline is None:
            return
        if isinstance(result, Exception):
            self.statusBar().showMessage(f"could not show item {i}: {result}")
            return
        self.timeline.show_item(i)
        self.details.show_hit(self.source, ("item", i))

    def _go_to_lane(self, lane):
        if self.timeline is not None:
            self.timeline.show_lane(lane)

    def _status_range(self, a, b):
        self.statusBar().showMessage(f"view {format_range(a, b)}")

    def export_png(self, path=None):
        """The command line's screenshot of the view shown (legend, title, time range,
        lanes as laid out here), written as every output is (a temporary file renamed, the
        user's umask); at the window's device pixel ratio, as a screenshot of the window
        would be (a HiDPI screen's export was written at half its pixels: a GUI walk).
        The picture is drawn here; it is encoded and written in a thread (1,000 ranks: the
        PNG's encoding held the window for 0.5 s), the status bar says when it is written
        (``wait_for_exports``: until then).  Returns the path, or None where none is drawn
        (none of the ranks built so far: the whole is not in yet)."""
        if self._so_far is not None:  # (a picture of some ranks, titled as the run: no)
            self.statusBar().showMessage(
                f"the other ranks could not be built ({self._rest_failed}): no picture of "
                "some of the run's ranks" if self._rest_failed else
                "the other ranks are still being built: export once the whole run is shown")
            return None
        if path is None:
            path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Export PNG", "timeline.png",
                                                            "PNG (*.png)")
        if not path or self.timeline is None:
            return None
        from legate_prof.errors import ProfileError
        from legate_prof.present.picture_size import MAX_SIDE

        from .screenshot import render_screenshot
        a, b = self.timeline.time_range()
        width = max(self.timeline.width(), 800)
        ratio = max(1.0, min(self.devicePixelRatioF(), MAX_SIDE / width))
        try:
            shown = self.timeline.item.path_shown and self.critical_path is not None
            render_screenshot(self.source, path, start=a, stop=b, width=width, height=700,
                              pixel_ratio=ratio, fit_at_most=int(MAX_SIDE / ratio),
                              title_files=self._files, state=self.timeline.lane_layout.state(),
                              critical_path=self.critical_path if shown else None,
                              # (what the view highlights too: a GUI walk's export lost a
                              # finding's items, drawn dimmed)
                              matches=self.timeline.item.matches,
                              save=lambda job: self._write_export(job, path))
        except (ProfileError, OSError) as e:
            plain_text.message(self, "legate_prof: could not export", str(e), modal=False)
            return None
        self.statusBar().showMessage(f"writing {path}…")
        return path

    def _write_export(self, job, path):
        """``job()``, Export PNG's encoding and writing, in a thread; ``_export_written``
        says how it went, in the window's thread."""
        def write():
            try:
                job()
                error = None
            except Exception as e:  # noqa: BLE001 - said in a box, never a traceback
                error = e
            emit(self._exported, path, error)
        self._unsaid += 1
        self._exports = [t for t in self._exports if t.is_alive()] + [
            start_thread(write, "legate_prof-export")]

    def _export_written(self, path, error):
        self._unsaid -= 1
        if error is not None:
            self.statusBar().showMessage(f"could not write {path}", 5000)
            plain_text.message(self, "legate_prof: could not export", str(error), modal=False)
            return
        self.statusBar().showMessage(f"wrote {path}", 5000)

    def exports_pending(self):
        """Whether a picture of Export PNG is still being written (or its writing not yet
        said)."""
        return self._unsaid > 0

    def wait_for_exports(self):
        """Until every picture Export PNG began is written and the window has said so (a
        script's export, a test's; a window closed meanwhile: its picture is not lost)."""
        for thread in list(self._exports):
            thread.join()
        QtCore.QCoreApplication.sendPostedEvents(self, 0)  # (its ``_exported``, queued)


SO_FAR_NO_PATH = ("the critical path is computed once the whole run is in (the other ranks "
                  "are still being built)")
# the banner's last line over the whole run once it replaced its ranks so far (the banner as
# tall as it was: ``NoticeBanner.set_lines``' ``keep_height``)
WHOLE_IN = "All {n} ranks are shown: the whole run replaced the ranks built so far."
# the progress panel's words once the loader said it builds the ranks again in its process
# (``Loader.building_again``), no ranks so far shown
AGAIN_STEP = "the workers could not build the ranks: building them again in this process"


def so_far_words(info, files, failed=None, rebuilding=False):
    """The banner's line over the ranks built so far (of ``files`` rank files; ``failed``:
    why the others could not be built; ``rebuilding``: the workers could not, they are
    built again in this process, which takes longer)."""
    from legate_prof.present.ranks import format_ranks
    ranks = list(info.ranks)
    shown = f"Showing rank{'s' if len(ranks) > 1 else ''} {format_ranks(ranks)} of {files}"
    if failed:
        return (f"{shown}: the others could not be built ({failed}); this is not the whole "
                "run (no findings, critical path or export of it).")
    if rebuilding:
        return (f"{shown}: the workers could not build the others, so they are being built "
                "again in this one process (slower); the whole run replaces this view then.")
    return (f"{shown} while the others are built: the whole run replaces this view when they "
            "are (the findings and the critical path come with it).")


def item_in(old, new, item):
    """Item ``item`` of the source ``old`` as ``new`` numbers it, where ``new`` holds the same
    rank's items (ranks built so far, then the whole: each rank's items the same mapped
    columns, at another offset), or None."""
    if item is None or old is None:
        return None
    for part in old.item_parts():
        local = int(item) - part.item_off
        if 0 <= local < part.model.n_items:
            column = part.model.items["start"]
            return next((p.item_off + local for p in new.item_parts()
                         if p.model.items["start"] is column), None)
    return None


def _path_summary(path, short=False):
    """The status line of a drawn critical path: its steps, its span, where it stops, how
    much of the run it explains and how much of that rests on inferred links (``short``:
    in few words, the shares only)."""
    from legate_prof.present.units import format_ns

    from .timeline.critical_path import NO_EVENTS
    if not len(path):
        return NO_EVENTS
    if short:
        return _path_in_short(path)
    end = ("; it stops at an event no loaded profile records (unknown)" if path.stops_unknown
           else "")
    track = ""
    if path.track is not None:
        track = f"; it {path.track.words}"
        if path.track.inferred_from_ns is not None:
            track += " (hatched on its track at the top; an inferred link dashed)"
    elif path.track_error:
        track = f"; no summary track ({path.track_error})"
    return (f"critical path: {len(path):,} step{'' if len(path) == 1 else 's'} over "
            f"{format_ns(path.span_ns())}{end}{track} · [ / ] walk it from the selected item")


def _path_in_short(path):
    """'critical path: 40,848 steps; explains 100.0 % of the run, 81.2 % on 280 inferred links
    (hatched) · [ / ] walk it'."""
    n = len(path)
    out = f"critical path: {n:,} step{'' if n == 1 else 's'}"
    info = path.track.info if path.track is not None else {}
    run = info.get("run_ns") or 0
    if run:
        out += f"; explains {100.0 * info.get('explained_ns', 0) / run:.1f} % of the run"
        links = info.get("inferred_links") or 0
        if links and path.track.inferred_from_ns is not None:
            out += (f", {100.0 * info.get('resting_ns', 0) / run:.1f} % on {links:,} inferred "
                    f"link{'' if links == 1 else 's'} (hatched)")
    if path.stops_unknown:
        out += "; stops at an unknown event"
    return out + " · [ / ] walk it"


def window_problem():
    """Why Qt could not open a window here, or None.

    On Linux, Qt's xcb platform plugin needs X libraries that minimal systems lack; when they
    are missing Qt aborts the process.  Loading the plugin first turns that into a sentence.
    """
    import ctypes
    import os
    import sys
    platform = os.environ.get("QT_QPA_PLATFORM", "")
    if not sys.platform.startswith("linux") or not os.environ.get("DISPLAY") or \
            (platform and not platform.startswith("xcb")) or os.environ.get("WAYLAND_DISPLAY"):
        return None
    import PySide6
    plugin = os.path.join(os.path.dirname(PySide6.__file__), "Qt", "plugins", "platforms",
                          "libqxcb.so")
    if not os.path.exists(plugin):
        return None
    try:
        ctypes.CDLL(plugin)
    except OSError as e:
        missing = str(e).split(":")[0] if ":" in str(e) else str(e)
        return (f"Qt cannot open a window on this X display ({missing} is missing; e.g. "
                "apt install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxkbcommon-x11-0)")
    return None


def run_viewer(model=None, files=(), findings=None, load=None, process_exit=None,
               opener=None, example_note=None, view_range=None, path_track=None):
    """Open the window and run Qt's event loop until it closes; returns its exit code.

    With ``load`` instead of a model, the window shows at once with a progress panel while
    ``load(progress) -> model`` runs in a worker thread, then ``findings(model)`` if it is a
    function; if ``load`` raises, the window closes and the error is raised here (the CLI
    prints it as one line).  ``findings`` may also be the list itself.

    ``process_exit`` (the CLI's: event loop status -> exit status) says this process may end
    here: when the window closes while the worker is still reading or building, the process
    ends at once (``os._exit`` after the atexit handlers), because a daemon thread stopped at
    interpreter exit inside C++ (numpy's sorts, Qt's signals) aborts the process.  Without it
    the worker is waited for.  ``opener(paths, progress) -> profile``: how File → Open and
    drops load (the CLI's: its cache and workers, as the first load).  ``example_note``:
    ``files`` is the bundled example, shown because no run was found; how to open one.
    ``view_range`` (start, stop; either None): the first profile's view (``view --start``).
    ``findings(model)`` may give ``insights``' findings as a list, or as the run's costs
    (``{"findings", "run_ns", "explained_ns", "explained_words"}``: the dock shows each one's
    cost and share of the run).  ``path_track(source)``: the critical path's summary track
    (``analyze.path_track.path_track``), computed with the path in its thread.
    """
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(["legate_prof"])
    win = MainWindow(model, files, load=load, findings=findings if callable(findings) else None,
                     opener=opener, example_note=example_note, view_range=view_range,
                     path_track=path_track)
    if model is not None and findings is not None and not callable(findings):
        add_findings_dock(win, findings)
    win.show()
    if load is not None:
        QtCore.QTimer.singleShot(0, win.start_loading)  # after the first paint
    with _ctrl_c_closes(app, win):
        rc = app.exec()
    win.wait_for_exports()  # (a picture asked for before the window closed is written)
    if win.load_error is not None:
        raise win.load_error
    code = process_exit(rc) if process_exit is not None else rc
    if process_exit is None:  # (the caller goes on: its threads end on their own)
        for worker in win.background_threads():
            worker.join()
        return code
    import threading
    import time
    deadline = time.monotonic() + CLOSE_WAIT_S
    mine = win.work_threads()
    for worker in mine:  # one that just sent its last signal, or a stopped tiles', ends now
        worker.join(max(deadline - time.monotonic(), 0.0))
    # a load, findings, a path or a tile still computing (or a cache entry being written):
    # the process ends here, whatever they do (an interpreter that stops a thread inside
    # numpy or Qt aborts; one that waits for a non-daemon thread does not end)
    mine = set(mine)
    if any(t.is_alive() and (t in mine or not t.daemon) for t in threading.enumerate()
           if t is not threading.main_thread()):
        _exit_now(code)
    return code


EXIT_INTERRUPTED = 130  # (as a shell reports a command Ctrl-C ended)


@contextlib.contextmanager
def _ctrl_c_closes(app, win):
    """Ctrl-C in the terminal closes the window and ends the event loop with 130, loading or
    not.  Qt's loop runs in C++, where Python's handler never ran: Ctrl-C was ignored (the
    window stayed, 10 minutes), and the KeyboardInterrupt it left pending came out later as a
    traceback from whichever Python callback ran next.  The signal's byte written to a socket
    (``signal.set_wakeup_fd``) wakes the loop, which hands control to Python, where the
    handler runs; a press the command recorded while the window was made (``pressed`` on the
    handler it replaces: ``cli.commands.view.HeldCtrlC``) closes it as soon as the loop
    runs.  Only in the main thread (where signals are handled), and not where Ctrl-C was
    ignored when the process started (a job run in the background); the handler and the
    wake-up are put back after."""
    import signal
    import socket
    import threading
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # (started ignoring it)
        yield
        return
    wake_read, wake_write = socket.socketpair()
    for sock in (wake_read, wake_write):
        sock.setblocking(False)
    notifier = QtCore.QSocketNotifier(wake_read.fileno(), QtCore.QSocketNotifier.Type.Read)

    def woken():
        with contextlib.suppress(OSError):
            wake_read.recv(512)  # (the handler runs as this returns to Python)

    def interrupted(signum, frame):
        # (the last window closed quits with 0 by a posted event, which could come after
        # this exit and be the status: 1 run in ~10)
        app.setQuitOnLastWindowClosed(False)
        win.close()
        app.exit(EXIT_INTERRUPTED)
    notifier.activated.connect(woken)
    old_fd = signal.set_wakeup_fd(wake_write.fileno(), warn_on_full_buffer=False)
    old_handler = signal.signal(signal.SIGINT, interrupted)
    if getattr(old_handler, "pressed", False):  # (pressed while the window was made:
        QtCore.QTimer.singleShot(0, lambda: interrupted(signal.SIGINT, None))  # (HeldCtrlC)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old_handler)
        signal.set_wakeup_fd(old_fd)
        notifier.setEnabled(False)
        wake_read.close()
        wake_write.close()


CLOSE_WAIT_S = 0.3  # a closed window's threads that are about to end get this long


def _exit_now(code):
    """End the process now, whatever its threads are doing (``output_file.end_now``)."""
    from legate_prof.output_file import end_now
    end_now(code)
