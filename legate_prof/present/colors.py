"""Colours shared by the viewer and the report (no Qt): a name's colour and the shades of a
task's states, so a box looks the same in the window, a screenshot and the HTML report."""

from __future__ import annotations

import colorsys
import zlib

# white·(1-α) + colour·α, as the reference viewer shades a task's states
ALPHA_RUNNING, ALPHA_READY, ALPHA_WAITING = 1.0, 0.45, 0.15
# a merged band's ground: its gray this strong on white; it is filled in full gray from the
# bottom as high as the share of its time its items ran (viewer, report, pictures)
ALPHA_BAND = 0.3


def name_rgb(name: str) -> tuple:
    """(r, g, b) 0..255 that depends only on the name: the same in every run and rank."""
    h = zlib.crc32(name.encode())
    hue = (h % 360) / 360.0
    sat = 0.55 + ((h >> 9) % 30) / 100.0
    val = 0.70 + ((h >> 17) % 20) / 100.0
    r, g, b = colorsys.hsv_to_rgb(hue, sat, val)
    return int(r * 255), int(g * 255), int(b * 255)


def name_hex(name: str) -> str:
    """``name_rgb`` as '#rrggbb'."""
    return "#%02x%02x%02x" % name_rgb(name)
