"""What a command worked out about a run, kept beside the run's cache entry: a second command
on the same run answers from it instead of reading and linking the logs again (``stats``,
``critical``, ``insights`` answers; the run's critical path, which all of them and the report
share).

A result is keyed by the run's inputs exactly as a cache entry is (``cache.cache_key``: each
file's path, size, times, inode and sampled blocks), by what was asked (the command's options
that change its answer), and by the code that worked it out (a hash of legate_prof's own
sources): a changed input, another question or another version of the code never gets an old
answer.  Only runs read whole are kept (no ``--ranks``, ``--start``, ``--stop``).  A result
is a msgpack file (numpy arrays as typed bytes) read within fixed bounds; anything unreadable
is dropped and worked out again.  They live in the cache folder (only one of this user's alone,
as for cache entries: ``cache.folder_problem``), written through a temporary file readable by
the owner only, and the oldest go once there are more than ``MAX_RESULTS``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from pathlib import Path

from legate_prof.errors import ProfileError

RESULT_SUFFIX = ".result"
RESULTS_FORMAT = 1
MAX_RESULT_BYTES = 256 << 20  # a result larger than this is not kept
MAX_RESULTS = 400  # result files kept in the cache folder (the least recently used go)
# and their bytes in all (a report's folder is kept whole: up to 30 MB; the answers and paths
# of 10 M items are a few MB)
MAX_RESULTS_TOTAL = 512 << 20
_CODE = None


def code_stamp():
    """A hash of legate_prof's own sources (every module: what works a result out reaches
    across the layers): a result worked out by other code is not read."""
    global _CODE
    if _CODE is None:
        from legate_prof.store.cache import source_digest
        _CODE = source_digest(str(Path(__file__).resolve().parent.parent), ("",)).hex()[:16]
    return _CODE


def _encode(value):
    """(numpy imported only where a value is numpy's: an answer asked again reads text and
    imports none, ~0.1 s of its ~0.2 s)"""
    np = sys.modules.get("numpy")
    if np is None:
        raise TypeError(f"cannot keep a {type(value).__name__}")
    if isinstance(value, np.ndarray):
        a = np.ascontiguousarray(value)
        return {"__array__": a.dtype.str, "shape": list(a.shape), "data": a.tobytes()}
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    raise TypeError(f"cannot keep a {type(value).__name__}")


def _decode(obj):
    if "__array__" in obj:
        import numpy as np
        dtype = np.dtype(obj["__array__"])
        if dtype.hasobject:
            raise ValueError("object arrays are not kept")
        return np.frombuffer(obj["data"], dtype).reshape(obj["shape"]).copy()
    return obj


class RunResults:
    """The results kept for one run (its input files ``paths``)."""

    def __init__(self, paths, directory=None):
        from legate_prof.store.cache import cache_dir, cache_key, folder_problem
        self.directory = Path(directory) if directory is not None else cache_dir()
        if self.directory is not None and folder_problem(self.directory):
            self.directory = None  # (not a folder of ours alone: nothing read from it or kept)
        self.run = cache_key(paths) if self.directory is not None else None

    def path(self, name, options=None):
        if self.directory is None:
            return None
        what = json.dumps([self.run, name, options, code_stamp(), RESULTS_FORMAT],
                          sort_keys=True, default=str)
        key = hashlib.sha256(what.encode()).hexdigest()[:32]
        return self.directory / f"{key}.{name}{RESULT_SUFFIX}"

    def get(self, name, options=None):
        """The result kept for ``name`` and ``options``, or None."""
        import msgpack
        from legate_prof.store.cache import open_regular
        p = self.path(name, options)
        if p is None or not os.path.lexists(p):
            return None
        try:
            f, st = open_regular(p, follow=False)
            with f:
                if st.st_size > MAX_RESULT_BYTES:
                    raise ValueError("too large")
                doc = msgpack.unpackb(f.read(), object_hook=_decode, raw=False,
                                      unicode_errors="surrogateescape",
                                      strict_map_key=False)
            if not isinstance(doc, dict) or doc.get("format") != RESULTS_FORMAT \
                    or doc.get("name") != name:
                raise ValueError("not a result of this question")
        except Exception:  # noqa: BLE001 - an unreadable result is worked out again
            with contextlib.suppress(OSError):
                p.unlink()
            return None
        with contextlib.suppress(OSError):
            os.utime(p)  # recently used: dropped last
        return doc["value"]

    def put(self, name, value, options=None):
        """Keep ``value`` (plain data and numpy arrays) for ``name`` and ``options``; a
        result that cannot be written is simply not kept."""
        import msgpack
        from legate_prof.output_file import atomic_output
        p = self.path(name, options)
        if p is None:
            return
        try:
            data = msgpack.packb({"format": RESULTS_FORMAT, "name": name, "value": value},
                                 default=_encode, use_bin_type=True,
                                 unicode_errors="surrogateescape")
            if len(data) > MAX_RESULT_BYTES:
                return
            p.parent.mkdir(parents=True, exist_ok=True)
            with atomic_output(p, 0o600) as tmp:
                Path(tmp).write_bytes(data)
            _drop_oldest(p.parent)
        except (OSError, TypeError, ValueError, ProfileError):
            return  # (a full or read-only cache: `atomic_output` says so as a ProfileError;
            # the answer is shown all the same, not kept)


def _drop_oldest(directory):
    """Keep at most ``MAX_RESULTS`` result files, and ``MAX_RESULTS_TOTAL`` bytes of them,
    the least recently used going first: only files ``put`` makes (named by a key, regular,
    this user's), never another file there."""
    import re
    import stat
    own = re.compile(r"[0-9a-f]{32}\.[a-z-]+" + re.escape(RESULT_SUFFIX) + "$")
    found = []
    for p in Path(directory).glob(f"*{RESULT_SUFFIX}"):
        with contextlib.suppress(OSError):
            st = os.lstat(p)
            if own.match(p.name) and stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid():
                found.append((st.st_mtime, st.st_size, p))
    total = sum(size for _, size, _ in found)
    for k, (_, size, p) in enumerate(sorted(found)):
        if len(found) - k <= MAX_RESULTS and total <= MAX_RESULTS_TOTAL:
            break
        with contextlib.suppress(OSError):
            p.unlink()
            total -= size
