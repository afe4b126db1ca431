"""legate_prof: read, merge and view Legion Prof profiles of Legate programs.

The core (this package) never imports Qt; the viewer lives in ``legate_prof.viewer``.
"""

__version__ = "0.1.0"

from legate_prof.errors import ProfileError  # noqa: E402
from legate_prof.load.loader import load_profile  # noqa: E402

__all__ = ["ProfileError", "load_profile", "__version__"]
