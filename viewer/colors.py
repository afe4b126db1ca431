"""Stable colours per item name and the state shades of the reference viewer."""

from __future__ import annotations

import colorsys
import zlib

from PySide6 import QtGui

from legate_prof.query.source import GROUP_COLORS as GROUP_COLOR

GRAY = QtGui.QColor(128, 128, 128)
ALPHA_RUNNING, ALPHA_READY, ALPHA_WAITING = 1.0, 0.45, 0.15

_cache = {}


def name_color(name: str) -> QtGui.QColor:
    """A colour that depends only on the name, so it is the same in every run and rank."""
    c = _cache.get(name)
    if c is None:
        h = zlib.crc32(name.encode())
        hue = (h % 360) / 360.0
        sat = 0.55 + ((h >> 9) % 30) / 100.0
        val = 0.70 + ((h >> 17) % 20) / 100.0
        r, g, b = colorsys.hsv_to_rgb(hue, sat, val)
        c = _cache[name] = QtGui.QColor(int(r * 255), int(g * 255), int(b * 255))
    return c


def blend_with_white(color: QtGui.QColor, alpha: float) -> QtGui.QColor:
    """white·(1-α) + colour·α: the running/ready/waiting shades."""
    return QtGui.QColor(int(255 * (1 - alpha) + color.red() * alpha),
                        int(255 * (1 - alpha) + color.green() * alpha),
                        int(255 * (1 - alpha) + color.blue() * alpha))


def group_color(group: str) -> QtGui.QColor:
    return QtGui.QColor(GROUP_COLOR.get(group, "gray"))
