"""Strings from a file, shown by Qt as the characters they are.

Qt guesses that a string starting with ``<`` is rich text (``Qt::mightBeRichText``) wherever it
shows one with ``Qt.AutoText``: tooltips, labels, message boxes.  A task named
``<img src="/dev/zero">`` would then be fetched (Qt reads /dev/zero until it runs out of
memory) and ``<b>``/``<font>`` would style the text.  Every string that comes from a profile,
a file name or an error goes through here: labels and dialogs are set to plain text, and
tooltips (which have no format setting) are given rich text whose every character from the
file is escaped.
"""

from __future__ import annotations

import html

from PySide6 import QtCore, QtWidgets

PLAIN = QtCore.Qt.TextFormat.PlainText


def escape(text) -> str:
    """``text`` as rich text that shows exactly these characters (newlines kept)."""
    return html.escape(str(text), quote=True).replace("\n", "<br>")


def tooltip(text) -> str:
    """A tooltip that shows ``text`` literally: escaped, and marked rich so that Qt never
    guesses (a plain string without ``<`` would also do, but one rule is simpler)."""
    return f"<qt>{escape(text)}</qt>" if text else ""


def tooltip_html(*lines) -> str:
    """A tooltip of lines, each a ``(markup, text)`` pair: ``markup`` is one of "", "b", "i"
    (ours), ``text`` is escaped."""
    out = []
    for markup, text in lines:
        t = escape(text)
        out.append(f"<{markup}>{t}</{markup}>" if markup else t)
    return "<qt>" + "<br>".join(out) + "</qt>"


def label(text="", parent=None) -> QtWidgets.QLabel:
    """A QLabel that shows ``text`` as plain text."""
    w = QtWidgets.QLabel(parent)
    w.setTextFormat(PLAIN)
    w.setText(str(text))
    return w


def message(parent, title, text, icon=QtWidgets.QMessageBox.Icon.Warning, modal=True):
    """A message box with plain text (``QMessageBox.warning`` would guess the format).
    ``modal=False`` opens it and returns at once (the window goes on)."""
    box = QtWidgets.QMessageBox(icon, str(title), "", QtWidgets.QMessageBox.StandardButton.Ok,
                                parent)
    box.setTextFormat(PLAIN)
    box.setText(str(text))
    if modal:
        box.exec()
    else:
        box.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
    return box


def show_tooltip(pos, text, widget=None, rect=QtCore.QRect(), msecs=-1):
    """``QToolTip.showText`` with ``text`` shown literally."""
    QtWidgets.QToolTip.showText(pos, tooltip(text), widget, rect, msecs)
