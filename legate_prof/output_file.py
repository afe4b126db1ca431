"""Where outputs go: never onto an input, never half-written.

Every command that writes a file (PNG, bundle, report, export) decides the format from the
extension first, refuses a path that is one of its inputs, checks the directory, and writes to a
temporary file in the target directory that is renamed over the target only when complete, so
a crash, a full disk or two writers at once never leave a mixed or truncated file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from .errors import ProfileError


def _same_file(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_output(path, inputs=(), extensions=None, what="output"):
    """Validate an output path before anything is read; returns it as a Path.

    ``extensions``: allowed suffixes (lower case, with the dot); None allows any.
    """
    p = Path(os.fspath(path))
    for i in inputs:
        if i and (os.path.exists(p) and _same_file(p, i)
                  or os.path.realpath(p) == os.path.realpath(i)):
            raise ProfileError(p, f"is one of the inputs; the {what} must go to another path "
                                  "(inputs are never overwritten)")
    if p.is_dir():
        raise ProfileError(p, f"is a directory; give a file name for the {what}")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise ProfileError(p, f"directory {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ProfileError(p, f"directory {str(parent)!r} is not writable")
    if extensions is not None and p.suffix.lower() not in extensions:
        raise ProfileError(p, f"unknown {what} format {p.suffix or '(no extension)'!r}; use "
                              + " or ".join(sorted(extensions)))
    return p


@contextlib.contextmanager
def atomic_output(path, mode=0o666):
    """Yield a temporary path beside ``path``; rename it to ``path`` if the block succeeds."""
    path = Path(os.fspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp",
                               dir=str(path.parent) if str(path.parent) else ".")
    os.close(fd)
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, mode & ~umask)  # mkstemp makes 0600; outputs are ordinary files
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
