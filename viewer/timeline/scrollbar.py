"""A vertical scrollbar beside the timeline, kept in step with its lane (y) range, and the
profile's notices above it; the frame as it was, held over them while another profile's
first picture is computed (``hold_picture``)."""

from __future__ import annotations

import time

from PySide6 import QtCore, QtWidgets

from ..notices import NoticeBanner

STEPS_PER_ROW = 100  # scrollbar units per row unit
HOLD_POLL_MS = 30  # how often a held picture asks whether the new one is whole
HOLD_AT_MOST_S = 3.0  # ... and how long it is held at most (as ``app.FirstFrame`` waits)


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
        timeline.vb.sigYRangeChanged.connect(self.follow_view)
        timeline.layoutChanged.connect(self.follow_view)
        self.bar.valueChanged.connect(self._to_view)
        self.follow_view()
        self.held = None  # the frame's picture painted over it (``hold_picture``), or None
        self._hold_until = None  # (whether the new picture is whole, the latest release)
        timeline.vb.sigRangeChanged.connect(self._moved)
        timeline.layoutChanged.connect(self._moved)

    def set_notices(self, lines, problems=(), keep_height=False):
        """Another profile's notices and what was wrong with its files (none: the banner
        hides); ``keep_height``: the banner's height kept (``NoticeBanner.set_lines``)."""
        self.banner.set_lines(list(lines), problems, keep_height)

    def keep_bar_room(self, keep):
        """The scrollbar's room kept where it hides (``keep``): a profile with more lanes
        replacing one whose lanes fitted draws its times at the same places (the whole run
        replacing its ranks so far: the scrollbar came, the time axis 15 px narrower)."""
        policy = self.bar.sizePolicy()
        if policy.retainSizeWhenHidden() != keep:
            policy.setRetainSizeWhenHidden(keep)
            self.bar.setSizePolicy(policy)

    def hold_picture(self):
        """The frame as it is now, painted over it (mouse and keys go through to what is
        beneath) until ``release_when`` lets it go: the profile shown beneath meanwhile
        draws its first picture, its tiles computed, out of sight (the whole run replacing
        its ranks so far drew their lanes blank for 0.2-2 s: none of its tiles were in)."""
        self.release_picture()
        held = QtWidgets.QLabel(self)
        held.setPixmap(self.grab())
        held.setGeometry(self.rect())
        held.setAttribute(QtCore.Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        held.show()
        held.raise_()
        self.held = held

    def release_when(self, whole, at_most_s=None):
        """The held picture goes once ``whole()`` (the picture beneath has its tiles), the
        view moves (the user's: they see it move) or ``at_most_s`` (``HOLD_AT_MOST_S``) have
        passed."""
        if self.held is None:
            return
        wait = HOLD_AT_MOST_S if at_most_s is None else at_most_s
        self._hold_until = (whole, time.monotonic() + wait)
        QtCore.QTimer.singleShot(HOLD_POLL_MS, self._poll_held)

    def release_picture(self):
        """The held picture goes now (nothing where none is held)."""
        if self.held is not None:
            self.held.hide()
            self.held.deleteLater()
        self.held = self._hold_until = None

    def _poll_held(self):
        if self._hold_until is None:
            return
        whole, until = self._hold_until
        if whole() or time.monotonic() > until:
            self.release_picture()
        else:
            QtCore.QTimer.singleShot(HOLD_POLL_MS, self._poll_held)

    def _moved(self, *args):
        if self._hold_until is not None:  # (not while the profile beneath is being shown)
            self.release_picture()

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        self.release_picture()  # (a picture of another size, out of place)

    def follow_view(self, *args):
        """The bar as the lanes are: their height and the view's (shown where they are
        taller than the view; another profile shown at the same view range changes no range:
        the whole run, 3x taller than its ranks so far, came without a bar)."""
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
