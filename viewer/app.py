"""The desktop viewer window: timeline, search, results and a pinned detail panel."""

from __future__ import annotations

import os

from PySide6 import QtCore, QtGui, QtWidgets

from legate_prof import __version__
from legate_prof.source import as_source, open_profile

from .layout import LaneLayout
from .legend import LegendWidget
from .scrollbar import ScrolledTimeline
from .timeline import TimelineWidget, details_rows, format_time

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


class MainWindow(QtWidgets.QMainWindow):
    def __init__(self, model, files=()):
        super().__init__()
        self.source = as_source(model)
        self.setAcceptDrops(True)  # drop profile files on the window to open them
        names = ", ".join(os.path.basename(str(f)) for f in list(files)[:4])
        self.setWindowTitle(f"legate_prof {__version__} — {names}")
        self.timeline = TimelineWidget(self.source, LaneLayout.default(self.source))
        self.timeline.item.budget_s = FRAME_BUDGET_S  # keep frames interactive while zooming
        self.setCentralWidget(ScrolledTimeline(self.timeline))
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
        self.timeline.itemClicked.connect(lambda hit: self.details.show_hit(self.source, hit))
        self.timeline.viewChanged.connect(self._status_range)
        self._build_toolbar()
        self._build_menus()
        self.statusBar().addPermanentWidget(LegendWidget())
        self.resize(1500, 900)
        for w in self.source.info().warnings[:3]:
            self.statusBar().showMessage(str(w))

    def open_files(self, paths):
        """Replace the shown profile (File → Open, drag-and-drop); errors go to a dialog."""
        from legate_prof.errors import ProfileError
        try:
            src = open_profile(paths)
        except (ProfileError, OSError) as e:
            QtWidgets.QMessageBox.warning(self, "legate_prof", str(e))
            return False
        self.source = src
        old = self.centralWidget()
        self.timeline = TimelineWidget(src, LaneLayout.default(src))
        self.timeline.item.budget_s = FRAME_BUDGET_S
        self.timeline.itemClicked.connect(lambda hit: self.details.show_hit(self.source, hit))
        self.timeline.viewChanged.connect(self._status_range)
        self.setCentralWidget(ScrolledTimeline(self.timeline))
        old.deleteLater()
        names = ", ".join(os.path.basename(str(f)) for f in list(paths)[:4])
        self.setWindowTitle(f"legate_prof {__version__} — {names}")
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
        v = self.menuBar().addMenu("&View")
        v.addAction("Reset zoom", self.timeline.reset, QtGui.QKeySequence("Ctrl+0"))
        v.addAction("Undo view change", self.timeline.undo, QtGui.QKeySequence.StandardKey.Undo)
        v.addAction("Redo view change", self.timeline.redo, QtGui.QKeySequence.StandardKey.Redo)
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
                f"{src.item_title(i)}  @ {format_time(src.item_extent(i)[0])}"
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
        self.statusBar().showMessage(f"view {format_time(a)} – {format_time(b)}")

    def export_png(self, path=None):
        if path is None:
            path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Export PNG", "timeline.png",
                                                            "PNG (*.png)")
        if path:
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


def load_with_progress(load, files):
    """Run ``load(progress)`` with a progress window that appears if it takes over half a
    second (per rank file read and built; it repaints while workers run)."""
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(["legate_prof"])
    dlg = QtWidgets.QProgressDialog("Reading profiles…", None, 0, max(len(files), 1) + 1)
    dlg.setWindowTitle("legate_prof")
    dlg.setMinimumDuration(500)  # Qt shows it only when loading lasts longer than this
    dlg.setWindowModality(QtCore.Qt.WindowModality.ApplicationModal)

    def progress(done, total, what):
        dlg.setMaximum(total + 1)
        dlg.setValue(done)
        dlg.setLabelText(what)
        app.processEvents()
    try:
        return load(progress)
    finally:
        dlg.reset()
        dlg.close()


def run_viewer(model, files=(), findings=None):
    """Show the window; ``findings`` (a list, or a function computing it) go into a dock,
    computed in a thread after the first frame so that diagnosis never delays the timeline."""
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(["legate_prof"])
    win = MainWindow(model, files)
    win.show()
    if findings is not None:
        add_findings_later(win, findings)
    return app.exec()


def add_findings_later(win, findings):
    """Add the findings dock once ``findings()`` has run in a worker thread (a list is
    added at once).  Returns the thread (None for a list)."""
    from .findings_panel import add_findings_dock
    if not callable(findings):
        add_findings_dock(win, findings)
        return None
    import threading
    result = {}

    def work():
        try:
            result["findings"] = findings()
        except Exception as e:  # noqa: BLE001 - a diagnosis bug must not take the viewer down
            result["error"] = e

    thread = threading.Thread(target=work, name="legate_prof insights", daemon=True)
    timer = QtCore.QTimer(win)

    def poll():
        if thread.is_alive():
            return
        timer.stop()
        if "findings" in result:
            add_findings_dock(win, result["findings"])
        else:
            win.statusBar().showMessage(f"diagnosis failed: {result.get('error')}", 10000)
    timer.timeout.connect(poll)
    thread.start()
    timer.start(100)
    return thread
