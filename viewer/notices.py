"""What a user must see about what is shown: what could not be read or was wrong in the
files (``info().errors`` and ``warnings``: a log cut short, a file of another run), and what
a user comparing boxes across nodes must know (``info().notices``: clock skew between nodes,
a congested network) — one wording for the screenshot's header, the window's banner and the
report's banner ("Note: …")."""

from __future__ import annotations

import os

from PySide6 import QtCore, QtWidgets

from . import plain_text

BANNER_STYLE = ("QFrame#notices { background: #e8f1ff; border-bottom: 1px solid #9cbbe8; }"
                "QLabel { color: #0b3a7a; }"
                "QLabel#problems { color: #6b3d00; background: #fff1d6; padding: 2px; }")
MAX_PROBLEM_LINES = 4  # the banner's problems shown at most; the rest in its tooltip


LEFT_OUT = "Left out"  # what the loader says of a file it read and did not show (loader.py)


def notice_lines(info):
    """The notices as shown: ``Note: <sentence>`` each."""
    return [f"Note: {n}" for n in getattr(info, "notices", ())]


def problem_lines(info):
    """Inputs not read (or read and left out: another run's), then warnings, as one line
    each (file names without their folder)."""
    out = []
    for e in info.errors:
        path, sep, why = str(e).partition(": ")
        verb = "" if LEFT_OUT in why else "could not read "  # (it was read: "Left out")
        out.append(f"⚠ {verb}{os.path.basename(path)}: {why}" if sep else f"⚠ {e}")
    out += [str(w).removeprefix("warning: ") for w in info.warnings]
    return out


class NoticeBanner(QtWidgets.QFrame):
    """Above the timeline, word-wrapped: what was wrong with the files (amber, as in the
    picture's header; the first few, all of them in the tooltip), then the notices (blue);
    the × hides them for this profile."""

    def __init__(self, lines, parent=None, problems=()):
        super().__init__(parent)
        self.setObjectName("notices")
        self.setStyleSheet(BANNER_STYLE)
        lay = QtWidgets.QHBoxLayout(self)
        lay.setContentsMargins(8, 4, 4, 4)
        texts = QtWidgets.QVBoxLayout()
        texts.setSpacing(2)
        self.problems = plain_text.label()
        self.problems.setObjectName("problems")
        self.label = plain_text.label()
        for w in (self.problems, self.label):
            w.setWordWrap(True)
            w.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
            texts.addWidget(w)
        close = QtWidgets.QToolButton()
        close.setText("×")
        close.setAutoRaise(True)
        close.setToolTip(plain_text.tooltip("hide these notes"))
        close.clicked.connect(self.hide)
        # (scrolled past a quarter of the window: in a small window the notes took half of
        # it, the lanes squeezed under them)
        self._texts = QtWidgets.QWidget()
        self._texts.setLayout(texts)
        self._texts.setAutoFillBackground(False)
        self._scroll = QtWidgets.QScrollArea()
        self._scroll.setWidget(self._texts)
        self._scroll.setWidgetResizable(True)
        self._scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self._scroll.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._scroll.setStyleSheet("QScrollArea, QScrollArea > QWidget > QWidget "
                                   "{ background: transparent; }")
        lay.addWidget(self._scroll, 1)
        lay.addWidget(close, 0, QtCore.Qt.AlignmentFlag.AlignTop)
        self._window = None
        self._held = None  # the height its notes keep (``set_lines``' ``keep_height``)
        self.set_lines(lines, problems)

    def _fit(self):
        """As tall as the notes at this width, up to a quarter of the window (three lines at
        least); the rest scrolls.  Where its height is held, as tall as it was."""
        if self._held is not None:
            self._scroll.setFixedHeight(self._held)
            return
        win = self.window()
        lines = self.fontMetrics().lineSpacing()
        cap = max(3 * lines, win.height() // 4) if win is not None and win is not self \
            else 8 * lines
        width = max(self._scroll.viewport().width(), 50)
        need = self._texts.layout().totalHeightForWidth(width)
        if need <= 0:
            need = self._texts.sizeHint().height()
        self._scroll.setFixedHeight(max(min(need, cap), 1))

    def showEvent(self, ev):
        win = self.window()
        if win is not self._window and win is not self:
            win.installEventFilter(self)
            self._window = win
        self._fit()
        super().showEvent(ev)

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        self._fit()

    def eventFilter(self, obj, ev):
        if obj is self._window and ev.type() == QtCore.QEvent.Type.Resize:
            self._fit()
        return False

    def set_lines(self, lines, problems=(), keep_height=False):
        """Show these notices and problems (another profile's), or hide where there are
        none.  ``keep_height``: as tall as it is now (hidden if closed), the notes scrolled
        or leaving room below, while the lines set keep it so: the lanes below stay where
        they are on screen (the whole run replacing its ranks so far moved them up by the
        height of the line that said which ranks were shown)."""
        if not keep_height:
            self._held = None
        elif self._held is None:  # (closed by its ×: it stays closed)
            self._held = 0 if self.isHidden() else self._scroll.height()
        problems = list(problems)
        shown = problems[:MAX_PROBLEM_LINES]
        if len(problems) > MAX_PROBLEM_LINES:
            shown.append(f"(+{len(problems) - MAX_PROBLEM_LINES} more: hover here to read "
                         "them all)")
        self.problems.setText("\n".join(shown))
        self.problems.setToolTip(plain_text.tooltip("\n".join(problems)) if problems else "")
        self.problems.setVisible(bool(problems))
        self.label.setText("\n".join(lines))
        self.label.setVisible(bool(lines))
        if self._held is None:
            self.setVisible(bool(lines) or bool(problems))
        self._fit()

    def lines(self):
        text = self.label.text()
        return text.split("\n") if text else []

    def problem_lines(self):
        """The problems shown (the first few, and how many more)."""
        text = self.problems.text()
        return text.split("\n") if text else []
