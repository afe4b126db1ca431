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


# the critical path's kinds (``legate_prof critical``'s split), as its summary track draws
# them in the viewer, the pictures and the report: what held the path at each moment
PATH_KIND_RGB = {
    "compute": (45, 110, 200), "waiting": (160, 190, 230), "launch": (30, 150, 80),
    "blocked": (160, 215, 175), "runtime": (215, 50, 80),
    "copy": (240, 140, 20), "fill": (235, 200, 40), "dependent_partitioning": (140, 80, 200),
    "startup": (165, 165, 165), "shutdown": (110, 95, 80), "gap": (215, 215, 215),
    "unknown": (25, 25, 25)}
PATH_KIND_WORDS = {"dependent_partitioning": "dependent partitioning"}  # (else its name)
# what the kinds that hold no work of their own mean, in a tooltip ("gap" alone said nothing
# of a quarter of a run, a review); the report's own words are its KIND_WORDS
PATH_KIND_MEANING = {
    "gap": "no item on the path was running: a message in flight, a task waiting for its "
           "processor, or the clocks of two ranks apart",
    "unknown": "waiting for an event no loaded profile records",
    "waiting": "a task on the path not running: blocked in a wait, or ready for its processor",
    "blocked": "the program's own thread waiting: for a value, for the other ranks, or for "
               "the runtime to take more work"}
