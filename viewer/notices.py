"""What a user comparing boxes across nodes must see (``info().notices``: clock skew between
nodes, a congested network): one wording for the screenshot's header, the window's banner
and the report's banner ("Note: …")."""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from . import plain_text

BANNER_STYLE = ("QFrame#notices { background: #e8f1ff; border-bottom: 1px solid #9cbbe8; }"
                "QLabel { color: #0b3a7a; }")


def notice_lines(info):
    """The notices as shown: ``Note: <sentence>`` each."""
    return [f"Note: {n}" for n in getattr(info, "notices", ())]


class NoticeBanner(QtWidgets.QFrame):
    """The notices above the timeline, word-wrapped, blue as in the picture's header; the
    × hides them for this profile."""

    def __init__(self, lines, parent=None):
        super().__init__(parent)
        self.setObjectName("notices")
        self.setStyleSheet(BANNER_STYLE)
        lay = QtWidgets.QHBoxLayout(self)
        lay.setContentsMargins(8, 4, 4, 4)
        self.label = plain_text.label("\n".join(lines))
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QtWidgets.QToolButton()
        close.setText("×")
        close.setAutoRaise(True)
        close.setToolTip(plain_text.tooltip("hide these notes"))
        close.clicked.connect(self.hide)
        lay.addWidget(self.label, 1)
        lay.addWidget(close, 0, QtCore.Qt.AlignmentFlag.AlignTop)
        self.setVisible(bool(lines))

    def set_lines(self, lines):
        """Show these lines (another profile's), or hide where there are none."""
        self.label.setText("\n".join(lines))
        self.setVisible(bool(lines))

    def lines(self):
        text = self.label.text()
        return text.split("\n") if text else []
