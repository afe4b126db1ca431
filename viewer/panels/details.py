"""The pinned details of the clicked item: values that wrap to fit, links to follow (the
operation's instances, the critical-path predecessor, a lane, a launching line), Zoom-to and
Ctrl+C."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from legate_prof.query import as_source

from ..item_text import detail_fields
from ..plain_text import tooltip

LINK_KINDS = ("item", "items", "lane", "provenance", "op")
LINK_COLOR = QtGui.QColor(20, 80, 200)


class DetailPanel(QtWidgets.QWidget):
    """Label/value rows; a value with a link is drawn as one and followed on click."""

    zoomTo = QtCore.Signal(float, float)
    followItem = QtCore.Signal(int)  # select and zoom to an item
    followItems = QtCore.Signal(object)  # highlight items (an operation's instances)
    followLane = QtCore.Signal(int)
    followText = QtCore.Signal(str)  # search for a launching line
    followOperation = QtCore.Signal(object)  # highlight an operation's items (an op id)

    def __init__(self):
        super().__init__()
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        self.table = QtWidgets.QTableWidget(0, 2)
        self.table.horizontalHeader().setVisible(False)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setWordWrap(True)
        self.table.setTextElideMode(QtCore.Qt.TextElideMode.ElideNone)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        # values are selectable and Ctrl+C copies them (full-precision µs times)
        self.table.setSelectionMode(
            QtWidgets.QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.cellClicked.connect(self._clicked)
        copy = QtGui.QShortcut(QtGui.QKeySequence.StandardKey.Copy, self.table)
        copy.activated.connect(self.copy_selection)
        self.zoom_btn = QtWidgets.QPushButton("Zoom to")
        self.zoom_btn.setEnabled(False)
        self.zoom_btn.clicked.connect(self._zoom)
        lay.addWidget(self.table)
        lay.addWidget(self.zoom_btn)
        self._range = None
        self._links = {}  # row -> (kind, target)
        self._shown = (None, None)  # (source, hit) shown, for refresh()
        self.critical_note = None  # while the critical path is computed: what to say

    def sizeHint(self):
        return QtCore.QSize(380, 420)

    def clear(self):
        self.show_hit(None, None)

    def refresh(self):
        """Show the same item again (the critical path's rows arrived)."""
        self.show_hit(*self._shown)

    def show_hit(self, source, hit):
        same = _same_hit(self._shown[1], hit)  # (a refresh of one item keeps its place)
        self._shown = (source, hit)
        fields = detail_fields(as_source(source), hit, self.critical_note) if hit else []
        self.table.setRowCount(len(fields))
        if not same:  # another item: from its title, no row of the last one selected (the
            self.table.clearSelection()  # old scroll and a stray row stayed: a review)
            self.table.scrollToTop()
        self._links = {}
        for i, f in enumerate(fields):
            key = QtWidgets.QTableWidgetItem(str(f.label))
            val = QtWidgets.QTableWidgetItem(str(f.text))
            val.setToolTip(tooltip(f.text))
            link = getattr(f, "link", None)
            if link is not None and link[0] in LINK_KINDS:
                self._links[i] = link
                font = val.font()
                font.setUnderline(True)
                val.setFont(font)
                val.setForeground(LINK_COLOR)
                val.setToolTip(tooltip(f"{f.text}\n(click: {_link_hint(link[0])})"))
            self.table.setItem(i, 0, key)
            self.table.setItem(i, 1, val)
        self.table.resizeColumnToContents(0)
        self.table.resizeRowsToContents()
        self._range = _zoom_range(as_source(source), hit) if hit else None
        self.zoom_btn.setEnabled(self._range is not None)

    def link_at(self, row):
        return self._links.get(row)

    def follow(self, row):
        """Follow the link of a row (what a click on it does)."""
        link = self._links.get(row)
        if link is None:
            return False
        kind, target = link
        if kind == "item":
            self.followItem.emit(int(target))
        elif kind == "items":
            self.followItems.emit(list(target))
        elif kind == "lane":
            self.followLane.emit(int(target))
        elif kind == "provenance":
            self.followText.emit(str(target))
        elif kind == "op":
            self.followOperation.emit(int(target))
        return True

    def _clicked(self, row, col):
        if col == 1:
            self.follow(row)

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        self.table.resizeRowsToContents()  # wrapped values fit the new width

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


def _link_hint(kind):
    return {"item": "select it and zoom to it", "items": "highlight them",
            "lane": "show the lane", "provenance": "search for this line",
            "op": "highlight its task, copies, fills and instances"}[kind]


def _zoom_range(source, hit):
    if hit[0] == "band":
        return hit[1][0], hit[1][1]
    if hit[0] == "marker":  # (the run's last 5 % before the failure, and a little after)
        t = int(hit[1].get("time", 0))
        a, b = source.info().time_range
        d = max((b - a) // 20, 1000)
        return t - d, t + d // 4
    a, b = source.item_extent(hit[1])
    d = max(b - a, 1000)
    return a - d, b + d


def _same_hit(a, b):
    """Whether two hits name the same thing (a hit may hold arrays: compared as values)."""
    try:
        return a is not None and bool(a == b)
    except (TypeError, ValueError):
        return False
