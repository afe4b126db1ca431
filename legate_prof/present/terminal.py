"""Text from a file, made safe to print on a terminal.

Task names, provenance, file names and console-log lines come from files a stranger may have
written.  Printed as they are, ``ESC ] 0 ;`` sets the window title, ``ESC [ 2 K`` clears the
line (hiding what came before), ``ESC ] 52 ;`` writes the clipboard, C1 ``CSI`` (U+009B) does
what ``ESC [`` does on some terminals, a right-to-left override reverses what follows, a
newline fakes a line of our own, and a lone surrogate stops ``print`` with an encoding error.
"""

from __future__ import annotations

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(c):
    if c in _NAMED:
        return _NAMED[c]
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def terminal_safe(text) -> str:
    """``text`` with every character a terminal would act on, or not show, written as a
    visible escape (``\\x1b``, ``\\n``, ``\\u202e``, ``\\udcff``): what ``str.isprintable``
    refuses (controls C0, C1 and DEL, format characters such as bidi overrides, separators
    but the space, surrogates, private and unassigned code points).  Letters of every script,
    symbols and the space are unchanged.  Not reversible: for showing, not for parsing."""
    s = text if isinstance(text, str) else (
        text.decode("utf-8", "replace") if isinstance(text, (bytes, bytearray)) else str(text))
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else _escape(c) for c in s)
