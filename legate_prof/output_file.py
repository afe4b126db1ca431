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


def _proc_umask():
    """The umask as Linux tells it (``/proc/self/status``), without setting it; None elsewhere."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return None


def _import_umask():
    """Where the system does not tell it: set and put back, once, while this module is
    imported (before any thread of ours writes files: the umask is process-wide)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


_UMASK_AT_IMPORT = _proc_umask()
if _UMASK_AT_IMPORT is None:
    _UMASK_AT_IMPORT = _import_umask()


def _umask():
    found = _proc_umask()
    return _UMASK_AT_IMPORT if found is None else found


@contextlib.contextmanager
def atomic_output(path, mode=0o666):
    """Yield a temporary path beside ``path``; rename it to ``path`` if the block succeeds."""
    path = Path(os.fspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp",
                               dir=str(path.parent) if str(path.parent) else ".")
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, mode & ~_umask())  # mkstemp makes 0600; outputs are ordinary files
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
