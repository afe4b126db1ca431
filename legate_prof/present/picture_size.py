"""The sizes a picture may have: checked by the command line before anything is read, and by
the renderer (Qt-free, so the CLI need not import Qt to check its arguments)."""

from __future__ import annotations

from legate_prof.errors import ProfileError

MAX_SIDE = 16384  # pixels; Qt's raster engine and PNG viewers cope up to here
MAX_PIXELS = 120_000_000
MIN_SIDE = 200  # below this the lane names, axes and legend do not fit


def check_size(out, width, height):
    """Refuse sizes that cannot be rendered, with one line (before anything is drawn)."""
    if width < MIN_SIDE or height < MIN_SIDE or width > MAX_SIDE or height > MAX_SIDE \
            or width * height > MAX_PIXELS:
        raise ProfileError(str(out), f"image size {width}x{height} not possible: each side "
                           f"{MIN_SIDE}..{MAX_SIDE} px and at most {MAX_PIXELS:,} pixels")
