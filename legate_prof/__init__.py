"""legate_prof: read, merge and view Legion Prof profiles of Legate programs.

The core never imports Qt; the viewer lives in ``legate_prof.viewer``.  The layers, bottom up
(each package's ``__init__`` says what it may import; ``docs/architecture.md`` the whole):
``errors`` and ``output_file`` · ``present`` · ``read`` | ``model`` · ``assemble`` · ``store`` ·
``load`` · ``query`` · ``analyze`` · ``report`` | ``export`` · ``cli``.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
