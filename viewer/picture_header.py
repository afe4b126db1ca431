"""A picture's header (``screenshot`` and the window's Export PNG), laid out for the picture's
width: nothing is drawn over anything else at any width.

The stamp's left texts (the files, ranks and items; the view, version and date) take a row
each; a right-hand line (what is missing or wrong, what the numbers mean across nodes) shares
a row with a left text where both fit beside each other, else takes a row of its own below;
a right-hand line wider than the picture goes on below, cut between words (at most
``WRAPPED_ROWS`` rows); a left text wider than the picture is cut short with "…".  The legend's entries wrap onto a second
row where one does not hold them, and the task names follow while they fit.  The header is as
tall as its rows: at least ``STAMP_H`` + ``LEGEND_H``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6 import QtCore, QtGui

from .panels.legend import legend_entries, paint_legend_entry, paint_name_legend

STAMP_H = 44  # the stamp's height with its two rows (more rows: taller)
LEGEND_H = 20  # the legend's height with one row
ROW_H = 19  # a stamp row
LEGEND_ROW_H = 18
ENTRY_H = 14  # a legend entry's height (its swatch: 4 px less)
PAD = 10  # from the picture's sides
GAP = 24  # between a left text and a right one on the same row
STAMP_BG, LEGEND_BG = QtGui.QColor(38, 50, 72), QtGui.QColor(246, 247, 250)
LEFT, RIGHT = QtCore.Qt.AlignmentFlag.AlignLeft, QtCore.Qt.AlignmentFlag.AlignRight


@dataclass
class Piece:
    """One text of the stamp: where (its rectangle holds exactly the text drawn), in which
    font and colour."""

    rect: QtCore.QRectF
    text: str
    font: QtGui.QFont
    color: QtGui.QColor


@dataclass
class HeaderLayout:
    width: int
    stamp: list = field(default_factory=list)  # Piece
    stamp_h: float = STAMP_H
    legend: list = field(default_factory=list)  # (QRectF, swatch colour, text)
    legend_h: float = LEGEND_H
    legend_font: QtGui.QFont = None
    names_at: tuple = (0.0, 0.0)  # where the task names' legend may start (x, y)

    @property
    def height(self):
        return int(self.stamp_h + self.legend_h)


def _font(base, size, bold=False):
    f = QtGui.QFont(base)
    f.setPointSizeF(size)
    f.setBold(bold)
    return f


def _fitted(text, font, room, mode=QtCore.Qt.TextElideMode.ElideRight):
    """(text cut short to ``room`` px if it is wider, its width)."""
    fm = QtGui.QFontMetricsF(font)
    if fm.horizontalAdvance(text) > room:
        text = fm.elidedText(text, mode, room)
    return text, fm.horizontalAdvance(text)


WRAPPED_ROWS = 3  # rows a right-hand line wider than the picture takes at most


def _wrapped(text, font, room, most=WRAPPED_ROWS):
    """``text`` in pieces of at most ``room`` px, cut between words ([(piece, width)]): at
    most ``most``, the last cut short with "…" where more is left (a note cut in its middle
    lost words from both halves: "node …re pairs of nodes")."""
    fm = QtGui.QFontMetricsF(font)
    words, out = text.split(" "), []
    while words:
        if len(out) == most - 1:
            out.append(_fitted(" ".join(words), font, room))
            break
        k = 1
        while k < len(words) and fm.horizontalAdvance(" ".join(words[:k + 1])) <= room:
            k += 1
        out.append(_fitted(" ".join(words[:k]), font, room))
        words = words[k:]
    return out


def header_layout(width, left, right, base_font, critical=False, rows=None) -> HeaderLayout:
    """Lay out the stamp's ``left`` texts (title, then the view's line) and its ``right``
    lines ((text, colour)), then the legend, for a picture ``width`` px wide; ``rows``: the
    stamp keeps that many rows (a layout made again for a picture already sized): a right
    line that finds no room on them is left out."""
    lay = HeaderLayout(width)
    fonts = [_font(base_font, 10, bold=True), _font(base_font, 9)]
    room = width - 2 * PAD
    fixed = rows
    rows = []  # (left text and its width, or None; right text and its colour, or None)
    for k, text in enumerate(left):
        rows.append([(*_fitted(text, fonts[min(k, 1)], room), fonts[min(k, 1)]), None])
    small = fonts[1]
    for text, color in right:
        after = -1  # (a line's next piece goes below the one before)
        for t, w in _wrapped(text, small, room):
            at = next((k for k, r in enumerate(rows) if k > after and r[1] is None and
                       (r[0] is None or r[0][1] + GAP + w <= room)), None)
            if at is None:
                if fixed is not None and len(rows) >= fixed:
                    break
                rows.append([None, None])
                at = len(rows) - 1
            rows[at][1] = (t, w, color)
            after = at
    for i, (lft, rgt) in enumerate(rows):
        y = 3 + ROW_H * i
        if lft is not None:
            text, w, font = lft
            lay.stamp.append(Piece(QtCore.QRectF(PAD, y, w, ROW_H), text, font,
                                   QtGui.QColor(255, 255, 255)))
        if rgt is not None:
            text, w, color = rgt
            lay.stamp.append(Piece(QtCore.QRectF(width - PAD - w, y, w, ROW_H), text, small,
                                   color))
    lay.stamp_h = max(STAMP_H, 3 + ROW_H * len(rows) + 3)
    _legend_layout(lay, _font(base_font, 8.5), critical)
    return lay


def _legend_layout(lay, font, critical):
    """The legend's entries left to right, onto a new row where the next one does not fit."""
    fm = QtGui.QFontMetricsF(font)
    lay.legend_font = font
    x, y = PAD, lay.stamp_h + 3
    for swatch, text in legend_entries(critical):
        text, _ = _fitted(text, font, lay.width - 2 * PAD - ENTRY_H - 4)
        w = ENTRY_H + fm.horizontalAdvance(text) + 4
        if x > PAD and x + w > lay.width - PAD:
            x, y = PAD, y + LEGEND_ROW_H
        lay.legend.append((QtCore.QRectF(x, y, w, ENTRY_H), swatch, text))
        x += w + 10
    lay.legend_h = max(LEGEND_H, y + LEGEND_ROW_H + 2 - lay.stamp_h)
    lay.names_at = (x + 6, y)


def paint_header(p, lay, names=()):
    """Paint the laid-out header: the stamp on its dark band, then the legend and, after it
    while they fit, the colours of the task ``names``."""
    p.fillRect(QtCore.QRectF(0, 0, lay.width, lay.stamp_h), STAMP_BG)
    for piece in lay.stamp:
        p.setFont(piece.font)
        p.setPen(piece.color)
        p.drawText(piece.rect, int(LEFT | QtCore.Qt.AlignmentFlag.AlignTop), piece.text)
    p.fillRect(QtCore.QRectF(0, lay.stamp_h, lay.width, lay.legend_h), LEGEND_BG)
    p.setFont(lay.legend_font)
    for rect, swatch, text in lay.legend:
        paint_legend_entry(p, rect.x(), rect.y(), swatch, text, ENTRY_H)
    x, y = lay.names_at
    paint_name_legend(p, x, y, lay.width - PAD, names, h=ENTRY_H)
