"""A report folder on disk: what marks it as ours (its marker lists every file and folder
written), reading it back and writing it again where a report is asked again
(``cli.answers.folder_answered``).  Apart from the writer: a report asked again of the same
run imports nothing that makes one (the analyses, the queries, the pictures), ~35 ms of its
~0.3 s."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from legate_prof.output_file import atomic_folder

STATIC = Path(__file__).with_name("static")  # the page's scripts and styles, copied in
MARKER = ".legate_prof_report"  # what we wrote: only a folder holding just that is replaced


def manifest(folder):
    """The marker's text: every file and folder written, with the size of each file."""
    lines = ["written by legate_prof report; it replaces this folder only while it holds "
             "just these:"]
    for rel, entry in entries(folder):
        lines.append(f"dir {rel}" if entry.is_dir(follow_symlinks=False)
                     else f"{entry.stat(follow_symlinks=False).st_size} {rel}")
    return "\n".join(lines) + "\n"


def entries(folder):
    """(path relative to ``folder``, ``os.DirEntry``) of everything under it, sorted by
    path, links not followed: a loop, not recursion (``Path.rglob`` ended in a
    RecursionError on a stranger's folder 3,000 deep, a review found)."""
    out, todo = [], [("", os.fspath(folder))]
    while todo:
        rel, path = todo.pop()
        try:
            with os.scandir(path) as it:
                entries = list(it)
        except OSError:
            continue
        for e in entries:
            r = f"{rel}{e.name}"
            out.append((r, e))
            if e.is_dir(follow_symlinks=False):
                todo.append((r + "/", e.path))
    out.sort(key=lambda x: x[0].split("/"))  # (as ``sorted(rglob)``: a path's parts)
    return out


# A report's marker lists its files: a report of 10^5 tiles is a few MB.  A bigger one is no
# marker of ours (a review: a stranger's 100 GB sparse file there, read whole, was a
# MemoryError).
MAX_MARKER_BYTES = 64 << 20


def earlier_report(folder):
    """True when ``folder`` holds a report we wrote and nothing else (a file or folder the
    user added or changed there: a string naming the first few)."""
    marker = folder / MARKER
    try:
        st = os.lstat(marker)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_MARKER_BYTES:  # (a FIFO blocks)
            return False
        with open(marker, "rb") as f:
            text = f.read(MAX_MARKER_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return False
    listed = dict(reversed(ln.split(" ", 1)) for ln in text.splitlines()[1:] if " " in ln)
    old = not listed
    static = {f.name for f in STATIC.iterdir()}
    foreign = []
    for rel, e in entries(folder):
        if rel == MARKER:
            continue
        link = e.is_symlink()
        if old:
            ok = (rel in static or rel in ("meta.js", "tiles", "pictures")
                  or rel.startswith(("tiles/L", "pictures/group_"))) and not link
        else:
            want = listed.get(rel)
            ok = not link and (want == "dir" if e.is_dir(follow_symlinks=False) else
                               e.is_file(follow_symlinks=False)
                               and want == str(e.stat(follow_symlinks=False).st_size))
        if not ok:
            foreign.append(rel)
    if foreign:
        return ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3
                                         else "")
    return True


MAX_KEPT_BYTES = 64 << 20  # a report folder larger than this is not kept to write again


def report_folder(out_dir):
    """The report folder at ``out_dir`` as ``write_again`` takes it ({"files": {path: bytes},
    "dirs": [path]}, paths relative to it), or None: larger than ``MAX_KEPT_BYTES``, or not
    ours alone (``earlier_report``)."""
    out_dir = Path(os.path.abspath(out_dir))
    if earlier_report(out_dir) is not True:
        return None
    files, dirs, total = {}, [], 0
    for rel, e in entries(out_dir):
        if e.is_dir(follow_symlinks=False):
            dirs.append(rel)
            continue
        if not e.is_file(follow_symlinks=False):
            return None
        total += e.stat(follow_symlinks=False).st_size
        if total > MAX_KEPT_BYTES:
            return None
        with open(e.path, "rb") as f:
            files[rel] = f.read(MAX_KEPT_BYTES + 1)
    return {"files": files, "dirs": dirs}


class _NotKept(Exception):
    """What was kept of a report folder is not one: nothing is put in place."""


def write_again(folder, out_dir):
    """Write a report folder kept (``report_folder``) at ``out_dir`` as ``write_report``
    writes one (built aside, then renamed into place).  False where what was kept is not a
    report folder (a path leaving it, paths that collide, its marker not listing its files):
    nothing written, the report is then made from the run."""
    try:
        files, dirs = folder["files"], folder["dirs"]
        if not (isinstance(files, dict) and isinstance(dirs, list) and MARKER in files
                and all(isinstance(d, str) and _inside(d) for d in dirs)
                and all(isinstance(f, str) and _inside(f) and isinstance(b, bytes)
                        for f, b in files.items())):
            return False
    except (TypeError, KeyError, AttributeError):
        return False
    out_dir = Path(os.path.abspath(out_dir))
    try:
        with atomic_folder(out_dir, earlier_report, "legate_prof report") as tmp:
            try:
                for rel in sorted(dirs, key=lambda r: r.count("/")):
                    (tmp / rel).mkdir(parents=True, exist_ok=True)
                for rel, data in files.items():
                    (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                    (tmp / rel).write_bytes(data)
            except OSError as e:  # (two paths that collide: a file where a folder goes)
                raise _NotKept from e
            if earlier_report(tmp) is not True:
                raise _NotKept
    except _NotKept:
        return False
    return True


def _inside(rel):
    """Whether ``rel`` (a kept folder's path) names a place inside the folder."""
    parts = rel.split("/") if isinstance(rel, str) else [""]
    return all(p not in ("", ".", "..") and "\\" not in p and "\0" not in p for p in parts)
