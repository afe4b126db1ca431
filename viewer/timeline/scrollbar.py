"""A vertical scrollbar beside the timeline, kept in step with its lane (y) range, and the
profile's notices above it."""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from ..notices import NoticeBanner

STEPS_PER_ROW = 100  # scrollbar units per row unit


class ScrolledTimeline(QtWidgets.QWidget):
    """The timeline with a vertical scrollbar: dragging it scrolls the lanes; zoom, expand
    and wheel scrolling move it."""

    def __init__(self, timeline, notices=(), parent=None):
        super().__init__(parent)
        self.timeline = timeline
        self.bar = QtWidgets.QScrollBar(QtCore.Qt.Orientation.Vertical)
        self.banner = NoticeBanner(list(notices))  # clock skew, a slow network (if any)
        outer = QtWidgets.QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        outer.addWidget(self.banner)
        lay = QtWidgets.QHBoxLayout()
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        outer.addLayout(lay, 1)
        lay.addWidget(timeline, 1)
        lay.addWidget(self.bar)
        self._syncing = False
        timeline.vb.sigYRangeChanged.connect(self._from_view)
        timeline.layoutChanged.connect(self._from_view)
        self.bar.valueChanged.connect(self._to_view)
        self._from_view()

    def set_notices(self, lines, problems=()):
        """Another profile's notices and what was wrong with its files (none: the banner
        hides)."""
        self.banner.set_lines(list(lines), problems)

    def _from_view(self, *args):
        if self.timeline.lane_layout is None:
            return
        (y0, y1) = self.timeline.vb.viewRange()[1]
        total = self.timeline.lane_layout.height
        self._syncing = True
        try:
            span = max(y1 - y0, 1e-9)
            self.bar.setRange(0, max(int((total - span) * STEPS_PER_ROW), 0))
            self.bar.setPageStep(int(span * STEPS_PER_ROW))
            self.bar.setSingleStep(STEPS_PER_ROW)
            self.bar.setValue(int(max(y0, 0) * STEPS_PER_ROW))
            self.bar.setVisible(total > span + 1e-6)
        finally:
            self._syncing = False

    def _to_view(self, value):
        if self._syncing:
            return
        (y0, y1) = self.timeline.vb.viewRange()[1]
        top = value / STEPS_PER_ROW
        self.timeline.vb.setYRange(top, top + (y1 - y0), padding=0)
