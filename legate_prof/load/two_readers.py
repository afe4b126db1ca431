"""A run's files read by two processes at once: a forked copy of this process reads some of
them while this one reads the rest, and hands what it read back through a pipe.

A run read in one process is a log per rank and a runtime stream beside each, read one
after the other though none needs another; the second core sat idle.  Threads could not
use it (the reads are short numpy steps and Python per event, holding the interpreter's
lock: docs/performance.md).  A copy forked before the reads starts at once (it holds no more
than the imports) and works apart; what it read comes back pickled, which for a log costs
about half its read (a log's tables are its size again), for a stream a tenth: the copy
takes the streams first, then logs while its share stays the smaller.

Only where a fork is safe: in the main thread, Qt not imported, no thread but daemon ones
(the progress display's), on a system with ``fork`` (``output_file.fork_is_safe``).  The copy
(``output_file.written_in_a_copy``) writes nothing but the pipe (its standard streams go
nowhere: a lock a display thread held at the fork stays held in the copy); whatever goes
wrong there, this process reads those files itself.
"""

from __future__ import annotations

import os
import pickle

from legate_prof.errors import ProfileError
from legate_prof.output_file import (copy_ended, fork_is_safe, streams_to_nowhere,
                                     written_in_a_copy)

# What a file costs to read here, per byte of a log (medians on this project's machine: a
# log 4 ms/MB, a runtime stream 37 ms/MB — msgpack decoded event by event — a gzipped log
# about 8x its compressed size), and what handing a log's tables back adds (pickled, piped,
# unpickled: ~2 ms/MB; a stream's events are a tenth of its size again).
COST_PER_BYTE = {"legion": 1.0, "runtime": 9.0}
GZIP_COST = 8.0
HANDOVER_COST = {"legion": 0.5, "runtime": 0.9}
# Below this much work (in log bytes: ~60 ms), the fork and the hand-over cost more than
# the second core gives.
MIN_WORK = 16 << 20


def read_each(paths, kinds, read_one, progress=None, workers=None):
    """``{path: what read_one(path, kind) returned, or the ProfileError it raised}`` for the
    ``paths`` of a kind ``read_one`` reads (``kinds``: path -> "legion" / "runtime"), read in
    this process and a forked copy where that is safe and worth it (``workers`` of 1: never).
    ``progress(i, n, message)`` hears of each file as it is read or arrives."""
    todo = [p for p in paths if kinds.get(p) in COST_PER_BYTE]
    cost = {p: _cost(p, kinds[p]) for p in todo}
    theirs = _their_share(todo, kinds, cost) if workers != 1 and fork_is_safe() else []
    if theirs and sum(cost.values()) >= MIN_WORK:
        read = _read_in_two(todo, set(theirs), kinds, read_one, progress)
        if read is not None:
            return read
    return {p: _attempt(read_one, p, kinds[p], progress, (i, len(todo)))
            for i, p in enumerate(todo)}


def _cost(path, kind):
    try:
        size = os.path.getsize(path)
    except OSError:
        return 0
    return size * COST_PER_BYTE[kind] * (GZIP_COST if str(path).endswith(".gz") else 1)


def _their_share(todo, kinds, cost):
    """The files the copy reads: streams first (cheap to hand back), then logs, the smallest
    first, each where it makes the longer of the two shares (the copy's with its hand-over)
    shorter."""
    theirs, load, left = [], 0.0, float(sum(cost.values()))
    for p in sorted(todo, key=lambda p: (kinds[p] != "runtime", cost[p])):
        extra = cost[p] * (1 + HANDOVER_COST[kinds[p]])
        if max(load + extra, left - cost[p]) < max(load, left):
            theirs.append(p)
            load += extra
            left -= cost[p]
    return theirs if len(theirs) < len(todo) else []


def _attempt(read_one, path, kind, progress=None, place=(0, 0)):
    """``read_one(path, kind)``, or the ProfileError it raised; ``progress`` told first
    (``place``: the file's number among the files, and their count)."""
    if progress:
        progress(*place, f"reading {os.path.basename(path)}")
    try:
        return read_one(path, kind)
    except ProfileError as e:
        return e


def _read_in_two(todo, theirs, kinds, read_one, progress):
    """``read_each``'s answer, ``theirs`` read by a forked copy; None where no copy could be
    made."""
    r, w = os.pipe()
    pid = written_in_a_copy(lambda: _hand_over(r, w, [p for p in todo if p in theirs], kinds,
                                               read_one))
    os.close(w)
    if pid is None:
        os.close(r)
        return None
    got = None
    try:
        out = {p: _attempt(read_one, p, kinds[p], progress, (i, len(todo)))
               for i, p in enumerate(todo) if p not in theirs}
        with os.fdopen(r, "rb") as pipe:
            r = None
            try:
                got = pickle.load(pipe)
            except Exception:  # noqa: BLE001 - the copy failed or died: read them here
                got = None
    finally:
        if r is not None:
            os.close(r)
        copy_ended(pid, kill=got is None)
    for i, p in enumerate(todo):
        if p in theirs:
            if isinstance(got, dict) and p in got:
                if progress:
                    progress(i, len(todo), f"reading {os.path.basename(p)}")
                out[p] = got[p]
            else:
                out[p] = _attempt(read_one, p, kinds[p], progress, (i, len(todo)))
    return {p: out[p] for p in todo}


def _hand_over(r, w, paths, kinds, read_one):
    """In the forked copy (``written_in_a_copy``, which then exits): ``paths`` read and
    pickled into the pipe ``w``, nothing written anywhere else."""
    os.close(r)
    streams_to_nowhere()
    got = {p: _attempt(read_one, p, kinds[p]) for p in paths}
    with os.fdopen(w, "wb") as pipe:
        pickle.dump(got, pipe, protocol=pickle.HIGHEST_PROTOCOL)
