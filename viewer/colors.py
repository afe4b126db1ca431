"""Stable colours per item name and the state shades of the reference viewer."""

from __future__ import annotations

from PySide6 import QtGui

from legate_prof.present.colors import ALPHA_READY, ALPHA_RUNNING, ALPHA_WAITING, name_rgb
from legate_prof.query import GROUP_COLORS as GROUP_COLOR

GRAY = QtGui.QColor(128, 128, 128)
__all__ = ["GRAY", "ALPHA_RUNNING", "ALPHA_READY", "ALPHA_WAITING", "name_color",
           "blend_with_white", "group_color"]

_cache = {}


def name_color(name: str) -> QtGui.QColor:
    """A colour that depends only on the name, so it is the same in every run and rank."""
    c = _cache.get(name)
    if c is None:
        c = _cache[name] = QtGui.QColor(*name_rgb(name))
    return c


def blend_with_white(color: QtGui.QColor, alpha: float) -> QtGui.QColor:
    """white·(1-α) + colour·α: the running/ready/waiting shades."""
    return QtGui.QColor(int(255 * (1 - alpha) + color.red() * alpha),
                        int(255 * (1 - alpha) + color.green() * alpha),
                        int(255 * (1 - alpha) + color.blue() * alpha))


def group_color(group: str) -> QtGui.QColor:
    return QtGui.QColor(GROUP_COLOR.get(group, "gray"))
