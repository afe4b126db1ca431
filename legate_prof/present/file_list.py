"""A run's input files as a title says them: a few names, the others counted.

A run of 1,000 ranks is 1,000 files: the report's title listed every name (its whole first
screen), the window's title the first four with no word of the rest.  One wording for the
report, the window, its loading page and the pictures' stamp.  Pure (no Qt).
"""

from __future__ import annotations

import os
import re

_NUMBERED = re.compile(r"^(.*?)(\d+)((?:\.[A-Za-z]+)*)$")  # legate_12.prof.gz: "legate_", 12


def file_name(path) -> str:
    """A file's or folder's name ("run/" is "run", not "")."""
    return os.path.basename(os.path.normpath(str(path))) or str(path)


def files_in_words(paths, most=4) -> str:
    """``paths`` named: all of them up to ``most``; past that, a numbered run (the ranks'
    ``legate_0.prof`` .. ``legate_999.prof``) as its first and last by number, and other
    names as the first ``most`` and how many more."""
    names = [file_name(p) for p in paths]
    if len(names) <= most:
        return ", ".join(names)
    found = [_NUMBERED.match(n) for n in names]
    if all(found) and len({(m.group(1), m.group(3)) for m in found}) == 1:
        ordered = sorted(names, key=lambda n: int(_NUMBERED.match(n).group(2)))
        return f"{ordered[0]} … {ordered[-1]} ({len(names):,} files)"
    return ", ".join(names[:most]) + f" (+{len(names) - most:,} more)"
