"""Where outputs go: never onto an input, never half-written.

Every command that writes a file (PNG, bundle, report, export) decides the format from the
extension first, refuses a path that is one of its inputs, checks the directory, and writes to a
temporary file in the target directory that is renamed over the target only when complete, so
a crash, a full disk or two writers at once never leave a mixed or truncated file.  A symbolic
link is followed (its target is replaced, the link stays); a device, pipe or socket is written
straight to, since a rename would put a file in its place (``-o /dev/null``, ``-o /dev/stdout``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from pathlib import Path

from legate_prof.errors import ProfileError


def _same_file(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_output(path, inputs=(), extensions=None, what="output", folder=False):
    """Validate an output path before anything is read; returns it as a Path.

    ``extensions``: allowed suffixes (lower case, with the dot); None allows any.  ``folder``:
    the output is a folder (``atomic_folder`` decides whether an existing one may go).
    """
    p = Path(os.fspath(path))
    for i in inputs:
        if i and (os.path.exists(p) and _same_file(p, i)
                  or os.path.realpath(p) == os.path.realpath(i)):
            raise ProfileError(p, f"is one of the inputs; the {what} must go to another path "
                                  "(inputs are never overwritten)")
    if p.is_dir() and not folder:
        raise ProfileError(p, f"is a directory; give a file name for the {what}")
    if p.exists() and folder and not p.is_dir():
        raise ProfileError(p, f"exists and is not a folder; choose another path for the {what}")
    _written_straight(p)  # (a block device: refused now, before anything is read)
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


def _written_straight(path):
    """True for an existing device, pipe or socket, which is written to where it is; a block
    device (a disk) is refused."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    if stat.S_ISBLK(mode):
        raise ProfileError(path, "is a block device; outputs go to files")
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _cannot_write(path, e):
    return ProfileError(path, f"could not write ({e.strerror or e})")


@contextlib.contextmanager
def atomic_output(path, mode=0o666, stream=True):
    """Yield a temporary path beside ``path`` (beside a link's target); rename it to the
    target if the block succeeds.  A device or pipe is yielded as it is (see above), or
    refused when not ``stream`` (a database file, which is written in place)."""
    path = Path(os.fspath(path))
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    if _written_straight(target):
        if not stream:
            raise ProfileError(path, "is not a regular file (a device or pipe); this output "
                                     "goes to a file")
        yield str(target)
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                   dir=str(target.parent) if str(target.parent) else ".")
        os.close(fd)
    except OSError as e:
        raise _cannot_write(path, e) from None
    try:
        yield tmp
        os.chmod(tmp, mode & ~_umask())  # mkstemp makes 0600; outputs are ordinary files
        os.replace(tmp, target)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError) and getattr(e, "filename", None) in (None, tmp, str(target)):
            raise _cannot_write(path, e) from None  # (not an input's error: those name it)
        raise


@contextlib.contextmanager
def atomic_folder(path, replaceable, what):
    """Yield a temporary folder beside ``path``; when the block succeeds, it takes the place
    of ``path``.  An existing non-empty folder is replaced only when ``replaceable(folder)``
    says it is an earlier output of ours (never a user's folder that was named by mistake)."""
    out = Path(os.path.abspath(os.fspath(path)))
    if out.exists() and not out.is_dir():
        raise ProfileError(str(out), "exists and is not a folder; choose another -o")
    if out.is_dir() and any(out.iterdir()) and not replaceable(out):
        raise ProfileError(str(out), f"exists and is not a {what}; choose another -o")
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    except OSError as e:
        raise _cannot_write(str(out), e) from None
    try:
        yield tmp
        umask = _umask()  # mkdtemp/mkstemp make 0700/0600: the umask's usual modes
        for p in [tmp, *tmp.rglob("*")]:
            os.chmod(p, (0o777 if p.is_dir() else 0o666) & ~umask)
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
            os.replace(out, old / "r")
            os.replace(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
    except BaseException as e:
        shutil.rmtree(tmp, ignore_errors=True)
        name = getattr(e, "filename", None)
        if isinstance(e, OSError) and (name is None or str(name).startswith(str(tmp))):
            raise _cannot_write(str(out), e) from None
        raise
