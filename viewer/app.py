"""The desktop viewer window: timeline, search, results and a pinned detail panel."""

from __future__ import annotations

import os
import threading

from PySide6 import QtCore, QtGui, QtWidgets

from legate_prof import __version__
from legate_prof.query import as_source, open_profile

from .layout import LaneLayout
from .legend import LegendWidget
from .scrollbar import ScrolledTimeline
from legate_prof.present.units import format_ns

from .timeline import TimelineWidget, details_rows

MAX_RESULTS = 1000
FRAME_BUDGET_S = 0.010  # per frame, for recomputing rows at a new resolution


class DetailPanel(QtWidgets.QWidget):
    """Pinned details of the clicked item, with Zoom-to."""

    zoomTo = QtCore.Signal(float, float)

    def __init__(self):
        super().__init__()
        lay = QtWidgets.QVBoxLayout(self)
        self.table = QtWidgets.QTableWidget(0, 2)
        self.table.horizontalHeader().setVisible(False)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        # values are selectable and Ctrl+C copies them (full-precision µs times)
        self.table.setSelectionMode(
            QtWidgets.QAbstractItemView.SelectionMode.ExtendedSelection)
        copy = QtGui.QShortcut(QtGui.QKeySequence.StandardKey.Copy, self.table)
        copy.activated.connect(self.copy_selection)
        self.zoom_btn = QtWidgets.QPushButton("Zoom to")
        self.zoom_btn.setEnabled(False)
        self.zoom_btn.clicked.connect(self._zoom)
        lay.addWidget(self.table)
        lay.addWidget(self.zoom_btn)
        self._range = None

    def show_hit(self, source, hit):
        source = as_source(source)
        rows = details_rows(source, hit) if hit else []
        self.table.setRowCount(len(rows))
        for i, (k, v) in enumerate(rows):
            self.table.setItem(i, 0, QtWidgets.QTableWidgetItem(k))
            self.table.setItem(i, 1, QtWidgets.QTableWidgetItem(v))
        self.table.resizeColumnToContents(0)
        if hit is None:
            self._range = None
        elif hit[0] == "band":
            self._range = hit[1][0], hit[1][1]
        else:
            i = hit[1]
            a, b = source.item_extent(i)
            d = max(b - a, 1000)
            self._range = a - d, b + d
        self.zoom_btn.setEnabled(self._range is not None)

    def copy_selection(self):
        cells = sorted((c.row(), c.column(), c.text()) for c in self.table.selectedItems())
        lines = {}
        for r, _c, t in cells:
            lines.setdefault(r, []).append(t)
        QtWidgets.QApplication.clipboard().setText(
            "\n".join("\t".join(v) for _, v in sorted(lines.items())))

    def _zoom(self):
        if self._range:
            self.zoomTo.emit(*self._range)


class LoadingPanel(QtWidgets.QWidget):
    """What the window shows while the profile is read and built: a label and a bar."""

    def __init__(self, files=()):
        super().__init__()
        names = [os.path.basename(str(f)) for f in files]
        lay = QtWidgets.QVBoxLayout(self)
        lay.addStretch(1)
        self.title = QtWidgets.QLabel(
            f"Opening {', '.join(names[:4])}{' …' if len(names) > 4 else ''}" if names
            else "Opening the profile")
        self.step = QtWidgets.QLabel("starting…")
        self.bar = QtWidgets.QProgressBar()
        self.bar.setRange(0, 0)  # busy until the first step is known
        self.bar.setTextVisible(False)
        self.bar.setMaximumWidth(600)
        for w in (self.title, self.step, self.bar):
            lay.addWidget(w, 0, QtCore.Qt.AlignmentFlag.AlignHCenter)
        lay.addStretch(2)

    def set_progress(self, done, total, what):
        """The loader's ``progress(done, total, what)``: files read of all, the next step."""
        self.step.setText(what)
        if done >= total:  # reading is over: building has no steps to count
            self.bar.setRange(0, 0)
        else:
            self.bar.setRange(0, max(total, 1))
            self.bar.setValue(done)


class _Loader(QtCore.QObject):
    """Runs ``load(progress)`` in a worker thread, then ``findings(model)`` if given; tells
    the window through queued signals.  The findings come after the model so the timeline
    does not wait for them (they only read the model's tables)."""

    progressed = QtCore.Signal(int, int, str)
    loaded = QtCore.Signal(object)
    failed = QtCore.Signal(object)
    found = QtCore.Signal(object)

    def __init__(self, load, findings=None):
        super().__init__()
        self._load = load
        self._findings = findings
        self.thread = threading.Thread(target=self._run, name="legate_prof-load", daemon=True)

    def _run(self):
        try:
            model = self._load(self.progressed.emit)
        except BaseException as e:  # handed to the window, raised again by run_viewer
            self.failed.emit(e)
            return
        self.loaded.emit(model)
        if self._findings is not None:
            try:
                self.found.emit(self._findings(model))
            except Exception as e:  # the timeline stays; the status bar says why
                self.found.emit(e)


class MainWindow(QtWidgets.QMainWindow):
    """The viewer.  With a model, it shows its timeline at once; with ``load`` (a function
    ``load(progress) -> model``), it shows a progress panel and runs ``load`` in a worker
    thread (call ``start_loading``), then shows the timeline, then the findings dock when
    ``findings(model)`` (run in the worker too) is done."""

    def __init__(self, model=None, files=(), load=None, findings=None):
        super().__init__()
        self.source = None
        self.timeline = None
        self.loading = None
        self.load_error = None
        self.model = model
        self.setAcceptDrops(True)  # drop profile files on the window to open them
        self.details = DetailPanel()
        self.details.zoomTo.connect(lambda a, b: self.timeline.set_time_range(a, b))
        dock = QtWidgets.QDockWidget("Details", self)
        dock.setWidget(self.details)
        self.addDockWidget(QtCore.Qt.DockWidgetArea.RightDockWidgetArea, dock)
        self.results = QtWidgets.QListWidget()
        self.results.itemActivated.connect(self._jump)
        self.results.itemClicked.connect(self._jump)
        rdock = QtWidgets.QDockWidget("Search results", self)
        rdock.setWidget(self.results)
        self.addDockWidget(QtCore.Qt.DockWidgetArea.RightDockWidgetArea, rdock)
        self._build_toolbar()
        self._build_menus()
        self.statusBar().addPermanentWidget(LegendWidget())
        self.resize(1500, 900)
        self._load = load
        self._find = findings
        self.findings = None
        if model is not None:
            self._show_source(as_source(model), files)
        else:
            self.loading = LoadingPanel(files)
            self.setCentralWidget(self.loading)
            self._set_title(files)
            self._set_ready(False)
            self.statusBar().showMessage("reading the profile…")
        self._files = list(files)

    def _set_title(self, files):
        names = ", ".join(os.path.basename(str(f)) for f in list(files)[:4])
        self.setWindowTitle(f"legate_prof {__version__} — {names}")

    def _set_ready(self, ready):
        """Search and the view menu act on a timeline: off while loading."""
        self.search.setEnabled(ready)
        for a in self._view_menu.actions():
            a.setEnabled(ready)

    def _show_source(self, src, files):
        """Show ``src``'s timeline in the centre (replacing what was there)."""
        self.source = src
        old = self.centralWidget()
        self.timeline = TimelineWidget(src, LaneLayout.default(src))
        self.timeline.item.budget_s = FRAME_BUDGET_S  # keep frames interactive while zooming
        self.timeline.itemClicked.connect(lambda hit: self.details.show_hit(self.source, hit))
        self.timeline.viewChanged.connect(self._status_range)
        self.setCentralWidget(ScrolledTimeline(self.timeline))
        if old is not None:
            old.deleteLater()
        self.loading = None
        self._set_title(files)
        self._set_ready(True)
        self.statusBar().clearMessage()
        for w in src.info().warnings[:3]:
            self.statusBar().showMessage(str(w))

    # ---- loading in the background -----------------------------------------------------

    def start_loading(self):
        """Run the ``load`` given to the constructor in a worker thread."""
        self._loader = _Loader(self._load, self._find)
        self._loader.progressed.connect(self.loading.set_progress)
        self._loader.loaded.connect(self._loaded)
        self._loader.failed.connect(self._failed)
        self._loader.found.connect(self._found)
        self._loader.thread.start()

    def _loaded(self, model):
        self.model = model
        self._show_source(as_source(model), self._files)
        if self._find is not None:
            self.statusBar().showMessage("looking for the guide's patterns (findings)…")

    def _found(self, findings):
        if isinstance(findings, Exception):
            self.statusBar().showMessage(f"findings unavailable: {findings}")
            return
        from .findings_panel import add_findings_dock
        add_findings_dock(self, findings)
        self.statusBar().showMessage(f"{len(findings)} findings", 5000)

    def _failed(self, error):
        """The load failed: the window closes and ``run_viewer`` raises the error again."""
        self.load_error = error
        self.close()
        QtWidgets.QApplication.instance().exit(1)

    def open_files(self, paths):
        """Replace the shown profile (File → Open, drag-and-drop); errors go to a dialog."""
        from legate_prof.errors import ProfileError
        try:
            src = open_profile(paths)
        except (ProfileError, OSError) as e:
            QtWidgets.QMessageBox.warning(self, "legate_prof", str(e))
            return False
        self._show_source(src, paths)
        self.results.clear()
        return True

    def _open_dialog(self):
        paths, _ = QtWidgets.QFileDialog.getOpenFileNames(
            self, "Open profiles", "", "Profiles (*.prof *.gz *.lpbundle);;All files (*)")
        if paths:
            self.open_files(paths)

    def dragEnterEvent(self, ev):
        if ev.mimeData().hasUrls():
            ev.acceptProposedAction()

    def dropEvent(self, ev):
        paths = [u.toLocalFile() for u in ev.mimeData().urls() if u.isLocalFile()]
        if paths:
            self.open_files(paths)

    def _build_toolbar(self):
        tb = self.addToolBar("Search")
        tb.setMovable(False)
        self.search = QtWidgets.QLineEdit()
        self.search.setPlaceholderText("Search task names and provenance (e.g. BinaryOp, prog.py:16)")
        self.search.setClearButtonEnabled(True)
        self.search.returnPressed.connect(self.run_search)
        self.search.textChanged.connect(lambda t: t or self.run_search())
        tb.addWidget(QtWidgets.QLabel(" Search: "))
        tb.addWidget(self.search)

    def _build_menus(self):
        f = self.menuBar().addMenu("&File")
        f.addAction("Open…", self._open_dialog, QtGui.QKeySequence.StandardKey.Open)
        f.addAction("Export PNG…", self.export_png, QtGui.QKeySequence("Ctrl+E"))
        f.addAction("Quit", self.close, QtGui.QKeySequence.StandardKey.Quit)
        v = self._view_menu = self.menuBar().addMenu("&View")
        # the timeline is looked up when used: it is replaced when another profile opens
        v.addAction("Reset zoom", lambda: self.timeline.reset(), QtGui.QKeySequence("Ctrl+0"))
        v.addAction("Undo view change", lambda: self.timeline.undo(),
                    QtGui.QKeySequence.StandardKey.Undo)
        v.addAction("Redo view change", lambda: self.timeline.redo(),
                    QtGui.QKeySequence.StandardKey.Redo)
        v.addAction("Expand all groups", lambda: self.timeline.expand(all_groups=True))
        v.addAction("Find…", self.search.setFocus, QtGui.QKeySequence.StandardKey.Find)
        h = self.menuBar().addMenu("&Help")
        h.addAction("Keys", self._help)

    def _help(self):
        QtWidgets.QMessageBox.information(self, "Keys", (
            "Wheel: zoom at cursor · Shift+wheel: scroll lanes\n"
            "Drag: pan · Shift+drag or right-drag: zoom to interval\n"
            "←/→ pan (Shift: fine) · ↑/↓ scroll · +/− zoom · 0 reset\n"
            "Ctrl+Z / Ctrl+Shift+Z (or Ctrl+←/→): undo/redo view\n"
            "Click: details · double-click a gray band: zoom into it\n"
            "Click a group name (▸/▾) to expand or collapse its lanes"))

    def run_search(self):
        text = self.search.text().strip()
        self.results.clear()
        if self.timeline is None:
            return
        if not text:
            self.timeline.set_matches(None)
            return
        src = self.source
        hits = src.search(text)
        self.timeline.set_matches(hits)
        lanes = src.info().lanes
        for i in hits[:MAX_RESULTS].tolist():
            lane = lanes[src.item_lane(i)[0]]
            it = QtWidgets.QListWidgetItem(
                f"{src.item_title(i)}  @ {format_ns(src.item_extent(i)[0])}"
                f"  ({lane.short}: {lane.long})")
            it.setData(QtCore.Qt.ItemDataRole.UserRole, i)
            self.results.addItem(it)
        more = f" (showing {MAX_RESULTS})" if len(hits) > MAX_RESULTS else ""
        self.statusBar().showMessage(f"{len(hits)} matches for '{text}'{more}")

    def _jump(self, item):
        i = item.data(QtCore.Qt.ItemDataRole.UserRole)
        self.timeline.show_item(i)
        self.details.show_hit(self.source, ("item", i))

    def _status_range(self, a, b):
        self.statusBar().showMessage(f"view {format_ns(a)} – {format_ns(b)}")

    def export_png(self, path=None):
        if path is None:
            path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Export PNG", "timeline.png",
                                                            "PNG (*.png)")
        if path and self.timeline is not None:
            self.timeline.export_png(path)
        return path


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


def run_viewer(model=None, files=(), findings=None, load=None, process_exit=None):
    """Open the window and run Qt's event loop until it closes; returns its exit code.

    With ``load`` instead of a model, the window shows at once with a progress panel while
    ``load(progress) -> model`` runs in a worker thread, then ``findings(model)`` if it is a
    function; if ``load`` raises, the window closes and the error is raised here (the CLI
    prints it as one line).  ``findings`` may also be the list itself.

    ``process_exit`` (the CLI's: event loop status -> exit status) says this process may end
    here: when the window closes while the worker is still reading or building, the process
    ends at once (``os._exit`` after the atexit handlers), because a daemon thread stopped at
    interpreter exit inside C++ (numpy's sorts, Qt's signals) aborts the process.  Without it
    the worker is waited for.
    """
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(["legate_prof"])
    win = MainWindow(model, files, load=load, findings=findings if callable(findings) else None)
    if model is not None and findings is not None and not callable(findings):
        from .findings_panel import add_findings_dock
        add_findings_dock(win, findings)
    win.show()
    if load is not None:
        QtCore.QTimer.singleShot(0, win.start_loading)  # after the first paint
    rc = app.exec()
    if win.load_error is not None:
        raise win.load_error
    code = process_exit(rc) if process_exit is not None else rc
    worker = getattr(getattr(win, "_loader", None), "thread", None)
    if worker is not None:
        worker.join(timeout=1.0)  # it ends right after its last signal
        if worker.is_alive():
            if process_exit is None:
                worker.join()
            else:
                _exit_now(code)
    return code


def _exit_now(code):
    import atexit
    import sys
    atexit._run_exitfuncs()  # e.g. the terminal progress gives the cursor back
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
