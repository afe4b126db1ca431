"""The code of a program's source lines, read from its file where the run did not record it.

The runtime's stream (``legate_N.runtime.prof``) records each line's code as the program ran;
runs recorded without it, or by another recorder, name lines only by file and number, and
``compare`` then cannot pair a renamed copy of a script, or the guide's inefficient and
efficient programs, line for line.  The program's file is looked for beside the run's files
(a run folder shipped with its script; legate writes its logs where the program ran), never
where the run says it was: a stranger's log names any path, and ``compare`` printed a line of
the user's own file that a forged log named (a review: "password = ..."; docs/threat_model.md:
no file read but the inputs named).  Only a regular file of at most ``MAX_SOURCE_BYTES``,
not a link (a stranger's folder may link to the user's files), is read; never written.
"""

from __future__ import annotations

import os
import stat

MAX_SOURCE_BYTES = 4 << 20  # a program's source file read for its lines' code, at most
MAX_CODE_CHARS = 400  # of one line's code kept (a stranger's file may hold one huge line)


def code_of_lines(provenances, folders=()):
    """{provenance: its line's code, stripped} of the ``provenances`` ("path/prog.py:12")
    whose file can be read: of that name in one of ``folders`` (the run's)."""
    files, out = {}, {}
    for prov in provenances:
        path, _, number = str(prov).rpartition(":")
        if not path or not number.isdigit() or int(number) < 1:
            continue
        if path not in files:
            files[path] = _lines_of(path, folders)
        lines = files[path]
        if lines is not None and int(number) <= len(lines):
            code = lines[int(number) - 1].strip()
            if code:
                out[prov] = code if len(code) <= MAX_CODE_CHARS else \
                    code[:MAX_CODE_CHARS - 1] + "…"
    return out


def _lines_of(path, folders):
    """The lines of the program named ``path``, or None where no readable copy is found."""
    name = os.path.basename(path)
    for candidate in [os.path.join(f, name) for f in folders if name]:
        lines = _read_small_text(candidate)
        if lines is not None:
            return lines
    return None


def _read_small_text(path):
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                     | getattr(os, "O_NOFOLLOW", 0))  # (a link: not the run's own file)
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SOURCE_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_SOURCE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > MAX_SOURCE_BYTES or b"\0" in data:
        return None  # (not a program's text)
    return data.decode("utf-8", "replace").splitlines()
