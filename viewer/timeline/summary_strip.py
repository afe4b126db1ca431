"""A group's utilization strip drawn into an image, in whichever thread asks.

The painted item keeps one picture per group (``StripPicture``) and moves or stretches it from
frame to frame; a crisp one for a new scale is drawn here, in the tiles' thread while a window
zooms (so a wheel step only stretches pictures), or in the frame itself for a screenshot.
Nothing here touches the item or Qt's widgets: only a QImage, its QPainter and numpy.  A
strip's scale labels are drawn from text laid out once (``ScaleText``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from ..colors import blend_with_white, group_color
from .rect_batch import RectBatch

# A memory used past its capacity: its bins at (or, cut there by the summary, over) 100 %
# marked in this red across the strip's headroom above the 100 % line (``render_strip``)
OVER_COLOR = QtGui.QColor(205, 20, 20)
OVER_PX = 4  # the mark's height: the 3 px headroom and the 100 % line's own row


@dataclass(frozen=True)
class StripPicture:
    """A strip drawn for ``key`` (its bins: width in ns, first index, count; its height) at
    ``scale`` view pixels per ns; its left edge is at time ``origin_ns``."""

    key: tuple
    scale: float
    origin_ns: float
    image: QtGui.QImage


def strip_picture(group, key, vals, scale, h, over=False):
    """The strip of ``vals`` (bins of ``key[0]`` ns from bin ``key[1]``) drawn at ``scale``
    (``over``: a memory whose use went past its capacity, ``render_strip``)."""
    bin_ns, first = key[0], key[1]
    return StripPicture(key, scale, first * bin_ns,
                        render_strip(group, vals, bin_ns * scale, h, over))


def render_strip(group, vals, bw, h, over=False):
    """The area under the line, then the line through the bins' centres (``bw`` pixels
    each), and the strip's bottom rule, on the strip's background.  ``over``: the row is a
    memory whose use went past its capacity; its bins at 100 % (the summary cuts a share
    there) are marked in ``OVER_COLOR`` above the line (a row within its capacity is drawn
    as it always was)."""
    bins = len(vals)
    img = QtGui.QImage(max(int(np.ceil(bins * bw)) + 1, 1), max(int(np.ceil(h)) + 1, 1),
                       QtGui.QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(QtGui.QColor(250, 250, 250))
    p = QtGui.QPainter(img)
    try:
        u = np.clip(vals, 0, 1)
        xs = (np.arange(bins) + 0.5) * bw
        base = h - 2
        ys = base - u * (h - 5)
        color = group_color(group)
        # the area under the line: one bar per run of equal heights
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        p.setBrush(blend_with_white(color, 0.3))
        runs = np.flatnonzero(np.concatenate([[True], ys[1:] != ys[:-1]]))
        widths = np.diff(np.concatenate([runs, [bins]])) * bw
        RectBatch().draw(p, xs[runs] - bw / 2, ys[runs], widths, base - ys[runs])
        pen = QtGui.QPen(color)
        pen.setCosmetic(True)
        p.setPen(pen)
        p.setBrush(QtCore.Qt.BrushStyle.NoBrush)
        # numpy-backed polyline (pyqtgraph's arrayToQPolygonF): no Python object per point
        p.drawPolyline(pg.functions.arrayToQPolygonF(xs, ys))
        if over:
            _mark_over(p, vals, bw)
        p.setPen(QtGui.QPen(QtGui.QColor(210, 210, 210)))
        p.drawLine(QtCore.QPointF(0, h), QtCore.QPointF(img.width(), h))
    finally:
        p.end()
    return img


def _mark_over(p, vals, bw):
    """The runs of bins at 100 % (over capacity: cut there) as red bars ``OVER_PX`` high at
    the strip's top: over the headroom and the line at 100 %, where a line within capacity
    never reaches."""
    full = np.concatenate([[0], (np.asarray(vals) >= 1.0).astype(np.int8), [0]])
    edges = np.flatnonzero(np.diff(full))
    starts, ends = edges[0::2], edges[1::2]
    if not len(starts):
        return
    p.setPen(QtCore.Qt.PenStyle.NoPen)
    p.setBrush(OVER_COLOR)
    RectBatch().draw(p, starts * bw, np.zeros(len(starts)), (ends - starts) * bw,
                     np.full(len(starts), float(OVER_PX)))


def draw_strip(p, picture, scale, x0, px_left, top):
    """``picture`` where the view (``scale`` pixels per ns from time ``x0`` at ``px_left``)
    puts it: at its own scale as it is, else stretched (its bins stay at their times)."""
    img = picture.image
    x_img = px_left + (picture.origin_ns - x0) * scale
    if abs(picture.scale / scale - 1) < 1e-9:
        p.drawImage(QtCore.QPointF(x_img, top), img)
    else:
        target = QtCore.QRectF(x_img, top, img.width() * scale / picture.scale, img.height())
        p.drawImage(target, img, QtCore.QRectF(img.rect()))


LABEL_FLAGS = int(QtCore.Qt.AlignmentFlag.AlignVCenter)  # (a label's place in its box)


class ScaleText:
    """A strip's scale labels drawn as ``QPainter.drawText(box, LABEL_FLAGS, text)`` draws
    them, from a layout made once per text: Qt lays the text out in one line 2^24 px wide
    in the painter's font (``qt_format_text``), centres it in the box, clips it to the box
    where it does not fit and draws the line; shaping it (HarfBuzz) was most of a label's
    cost, every label of every frame.  Made for one painter state (font,
    device, direction); a text drawText treats otherwise is drawn by drawText."""

    def __init__(self, p, font, keep=256):
        p.save()
        p.setFont(font)
        self._font = p.font()  # (the painter's: resolved for its device, as drawText's)
        p.restore()
        self._direction = p.layoutDirection()  # (drawText's: the painter's, by default Auto)
        self._plain = self._direction != QtCore.Qt.LayoutDirection.RightToLeft
        self._laid = {}  # text -> (layout, its line, width, height), or None: drawText
        self._keep = keep  # (layouts kept at most: then made again)

    def place(self, box, text):
        """How ``text`` is drawn in ``box``: (its layout, its line, where, the box to clip
        it to or None), or None (drawn by drawText).  (The layout is kept with its line:
        a line drawn once its layout is gone would read freed memory.)"""
        laid = self._layout(text)
        if laid is None:
            return None
        layout, line, width, height = laid
        yoff = (box.height() - height) / 2
        at = QtCore.QPointF(box.x(), box.y() + yoff)
        inside = box.contains(QtCore.QRectF(at.x(), at.y(), width, height))
        return layout, line, at, None if inside else QtCore.QRectF(box)

    @staticmethod
    def draw(p, box, text, placed):
        """Draw ``text`` in ``box`` as ``place`` found (the painter's pen, and font)."""
        if placed is None:
            p.drawText(box, LABEL_FLAGS, text)
            return
        _, line, at, clip = placed
        if clip is None:
            line.draw(p, at)
            return
        p.save()
        p.setClipRect(clip, QtCore.Qt.ClipOperation.IntersectClip)
        line.draw(p, at)
        p.restore()

    def _layout(self, text):
        if text in self._laid:
            return self._laid[text]
        laid = None
        if self._plain and text and not any(c in text for c in "\r\n\t&\x9c\u2028\u2029"):
            layout = QtGui.QTextLayout(text, self._font)
            layout.setCacheEnabled(True)
            option = QtGui.QTextOption()
            option.setTextDirection(self._direction)
            option.setAlignment(QtCore.Qt.AlignmentFlag.AlignLeft)
            layout.setTextOption(option)
            leading = QtGui.QFontMetricsF(self._font).leading()
            layout.beginLayout()
            line = layout.createLine()
            line.setLineWidth(0x01000000)
            height = float(math.ceil(-leading + leading))  # (as drawText: a whole pixel)
            line.setPosition(QtCore.QPointF(0.0, height))
            height += line.ascent() + line.descent()  # (its height unrounded, as drawText's)
            width = max(0.0, line.naturalTextWidth())
            layout.endLayout()
            laid = (layout, line, width, height)
        if len(self._laid) > self._keep:
            self._laid.clear()
        self._laid[text] = laid
        return laid


class BoxText:
    """The timeline's box and band labels: measured with ``QFontMetrics.horizontalAdvance``,
    cut with ``elidedText(text, ElideRight, width)`` and drawn as ``drawText(box,
    AlignVCenter | AlignLeft, text)`` (the same as ``LABEL_FLAGS`` for either direction:
    Qt puts the text left, or right where the painter draws right to left, both ways), from
    what was worked out once per text in the painter's font: its width, its cut forms, its
    layout (``ScaleText``).  A wheel step's frame of one rank's lanes labelled ~150 boxes and
    bands, shaping each label two to four times.  Made for one painter state (font,
    device, direction)."""

    KEEP = 4096  # widths and cut forms kept at most (then worked out again)
    LAYOUTS = 1024  # layouts kept at most (~7 KB each; a frame draws up to MAX_LABELS, 400)

    def __init__(self, p):
        self.metrics = QtGui.QFontMetrics(p.font())
        self._text = ScaleText(p, p.font(), keep=self.LAYOUTS)
        self._advance = {}  # text -> its width
        self._elided = {}  # (text, width) -> the text cut to it

    def advance(self, text):
        width = self._advance.get(text)
        if width is None:
            if len(self._advance) > self.KEEP:
                self._advance.clear()
            width = self._advance[text] = self.metrics.horizontalAdvance(text)
        return width

    def elided(self, text, width):
        """``text`` cut to ``width`` (an int) pixels, as ``elidedText`` cuts it."""
        key = (text, width)
        cut = self._elided.get(key)
        if cut is None:
            if len(self._elided) > self.KEEP:
                self._elided.clear()
            cut = self._elided[key] = self.metrics.elidedText(
                text, QtCore.Qt.TextElideMode.ElideRight, width)
        return cut

    def draw(self, p, box, text):
        """``text`` in ``box`` as ``drawText(box, AlignVCenter | AlignLeft, text)``."""
        self._text.draw(p, box, text, self._text.place(box, text))


class DottedLines:
    """A strip's dotted scale lines drawn as ``QPainter.drawLine`` draws them with ``pen``,
    each from a picture of it made once: an aliased dotted line across the view is ~19 us
    of rasterizing, two a row, every row of every frame; its picture laid where the line
    lands, ~2 us.  The raster engine draws such a line the same a whole pixel up or down, so
    one picture serves every line of the same length and fraction of a pixel in height.
    Only for a painter that moves its drawing and nothing else (the view's picture,
    ``TimelineItem._picture``) and a line that begins at its left edge; any other is drawn
    by drawLine."""

    def __init__(self, pen):
        self._pen = pen
        self._made = {}  # (device end x, fraction of a pixel) -> its picture

    def draw(self, p, a, b, shift):
        """The horizontal line from ``a`` to ``b`` on a painter translated by ``shift``
        (its dx, dy; None: transformed otherwise)."""
        if shift is not None:
            dx, dy = shift
            y = a.y() + dy  # (where the painter maps it: x + dx, y + dy)
            row = math.floor(y)
            if a.x() + dx == 0.0 and a.x() <= b.x() and a.y() == b.y() and 2 <= row < 1 << 20:
                end, frac = b.x() + dx, y - row  # (exact, and so is frac + 1 from row 1)
                made = self._made.get((end, frac))
                if made is None:
                    made = self._picture(end, frac)
                p.drawImage(QtCore.QPointF(a.x(), row - 1 - dy), made)  # (rounded to row - 1)
                return
        p.setPen(self._pen)
        p.drawLine(a, b)

    def _picture(self, end, frac):
        img = QtGui.QImage(max(int(math.ceil(end)) + 2, 1), 3,
                           QtGui.QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(0)
        q = QtGui.QPainter(img)
        try:
            q.setPen(self._pen)
            q.drawLine(QtCore.QPointF(0.0, frac + 1), QtCore.QPointF(end, frac + 1))
        finally:
            q.end()
        if len(self._made) > 256:
            self._made.clear()
        self._made[(end, frac)] = img
        return img
