"""Write outputs to a temporary name beside the target, then rename: a reader never sees a
half-written file and an interrupted export leaves the old one.  (A local stand-in until the
shared ``legate_prof/output_file.py`` lands.)"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile


def refuse_input(out, inputs):
    """Raise ValueError when ``out`` is one of the input paths (user files are sacred)."""
    real = os.path.realpath(out)
    for p in inputs or ():
        if os.path.realpath(p) == real:
            raise ValueError(f"{out}: is an input file; choose another output path")


@contextlib.contextmanager
def atomic_path(out, directory=False):
    """Yield a temporary path in ``out``'s directory; renamed to ``out`` on success."""
    parent = os.path.dirname(os.path.abspath(out)) or "."
    base = os.path.basename(out)
    if directory:
        tmp = tempfile.mkdtemp(prefix=f".{base}.", suffix=".tmp", dir=parent)
    else:
        fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp", dir=parent)
        os.close(fd)
    try:
        yield tmp
    except BaseException:
        (shutil.rmtree if directory else os.unlink)(tmp)
        raise
    if directory:
        if os.path.isdir(out):
            shutil.rmtree(out)
        os.rename(tmp, out)
    else:
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
