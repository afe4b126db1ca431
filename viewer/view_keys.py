"""The view keys wherever the focus is: after clicking a search result or a finding, "0",
"+", "←", Home, Esc … still act on the timeline.  Text boxes keep the keys that edit text,
except Ctrl+Z / Ctrl+Shift+Z, which undo and redo the view as the README says, and the
window's own shortcuts (Ctrl+E exports, Ctrl+O opens: a line edit took Ctrl+E as "end of
line", a review); lists keep the keys that walk them (↑ ↓, and Enter or Space to choose:
Home and End, which the results list took, move the view, as the README says)."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

K = QtCore.Qt.Key
LIST_KEYS = {K.Key_Up, K.Key_Down, K.Key_Return, K.Key_Enter, K.Key_Space}
M = QtCore.Qt.KeyboardModifier
CHORDS = M.ControlModifier | M.AltModifier | M.MetaModifier  # (never typed as text)
TEXT_WIDGETS = (QtWidgets.QLineEdit, QtWidgets.QAbstractSpinBox, QtWidgets.QTextEdit,
                QtWidgets.QPlainTextEdit, QtWidgets.QComboBox)


class ViewKeys(QtCore.QObject):
    """An application event filter that hands the window's key presses to its timeline."""

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        QtWidgets.QApplication.instance().installEventFilter(self)

    def eventFilter(self, obj, ev):
        kind = ev.type()
        if kind not in (QtCore.QEvent.Type.KeyPress, QtCore.QEvent.Type.ShortcutOverride) \
                or not isinstance(obj, QtWidgets.QWidget):
            return False
        try:
            if kind == QtCore.QEvent.Type.ShortcutOverride:
                return self._shortcut(obj, ev)
            return self._key(obj, ev)
        except RuntimeError:  # a widget of a closed window (its C++ side is gone)
            return False

    def _shortcut(self, obj, ev):
        """A text box of this window does not take over a chord that is one of the window's
        shortcuts (its menus' Ctrl+E, Ctrl+O, Ctrl+0 …): the event is left unaccepted, so
        the shortcut fires."""
        if not isinstance(obj, TEXT_WIDGETS) or obj.window() is not self.window or \
                not ev.modifiers() & CHORDS:
            return False
        chord = QtGui.QKeySequence(ev.keyCombination())
        for action in self.window.findChildren(QtGui.QAction):
            if action.isEnabled() and any(s.matches(chord) == QtGui.QKeySequence.
                                          SequenceMatch.ExactMatch for s in action.shortcuts()):
                ev.ignore()
                return True
        return False

    def _key(self, obj, ev):
        tl = self.window.timeline
        if tl is None or obj.window() is not self.window or _inside(obj, tl):
            return False  # the timeline's own keys reach it directly
        if isinstance(obj, QtWidgets.QMenu) or QtWidgets.QApplication.activePopupWidget():
            return False
        ctrl = bool(ev.modifiers() & QtCore.Qt.KeyboardModifier.ControlModifier)
        if isinstance(obj, TEXT_WIDGETS):
            if ctrl and ev.key() in (K.Key_Z, K.Key_Y):
                return tl.handle_key(ev)  # the view's undo, not the text's (README)
            if ev.key() == K.Key_Escape:
                return tl.handle_key(ev)
            return False
        if isinstance(obj, QtWidgets.QAbstractItemView) and ev.key() in LIST_KEYS and not ctrl:
            return False
        return tl.handle_key(ev)


def _inside(widget, ancestor):
    w = widget
    while w is not None:
        if w is ancestor:
            return True
        w = w.parentWidget()
    return False
