"""The sticky rank header: while a rank's lanes fill the view and its "Rank N" row has
scrolled away, a band across the top of the lanes says which rank (and kind) they are; a
click on it collapses that rank."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from ..plain_text import PLAIN


class StickyHeader(QtWidgets.QLabel):
    """A plain-text band over the top of a ``TimelineWidget``'s lanes."""

    clicked = QtCore.Signal(object)  # the rank shown (None: all ranks)

    def __init__(self, timeline):
        super().__init__(timeline)
        self.timeline = timeline
        self.rank = None
        self.setTextFormat(PLAIN)
        self.setAutoFillBackground(True)
        pal = self.palette()
        pal.setColor(QtGui.QPalette.ColorRole.Window, QtGui.QColor(215, 222, 238))
        pal.setColor(QtGui.QPalette.ColorRole.WindowText, QtGui.QColor(20, 30, 60))
        self.setPalette(pal)
        f = self.font()
        f.setBold(True)
        self.setFont(f)
        self.setCursor(QtCore.Qt.CursorShape.PointingHandCursor)
        self.setToolTip("the rank these lanes belong to: click to collapse it (key C)")
        self.hide()

    def follow(self, *args):
        """Show the header of the rank block at the top of the view, if its own header row
        is out of sight; place it over the lane labels and the top of the lanes."""
        tl = self.timeline
        layout = getattr(tl, "lane_layout", None)
        if layout is None or getattr(tl, "_closing", False):
            return
        (y0, _y1) = tl.vb.viewRange()[1]
        head = layout.header_at(y0 + 1e-6)
        if head is None or head.y + head.height * 0.5 >= y0:
            self.hide()
            return
        self.rank = head.rank
        top = layout.entry_at(y0 + 1e-6)
        kind = f"  ·  {top.label}" if top is not None and top.kind != "header" and \
            top.group is not None else ""
        if top is not None and top.kind == "lane":
            kind = f"  ·  {layout.group_title(top.group)} · {top.label}"
        self.setText(f"▾ {head.label} (continued){kind}")
        rect = tl.mapFromScene(tl.vb.sceneBoundingRect()).boundingRect()
        left = tl.mapFromScene(tl.lane_axis.sceneBoundingRect()).boundingRect().left()
        h = self.fontMetrics().height() + 4
        self.setGeometry(max(left, 0), rect.top(), rect.right() - max(left, 0), h)
        self.show()
        self.raise_()

    def mousePressEvent(self, ev):
        if ev.button() == QtCore.Qt.MouseButton.LeftButton:
            self.clicked.emit(self.rank)
            ev.accept()
        else:
            super().mousePressEvent(ev)
