"""Named numpy arrays in one file, mapped back as read-only views: what a rank's worker
leaves beside its model for an analysis (``rank_workers``' ``prepare``).

One file, one mapping (a mapping keeps a file descriptor: a folder of ``.npy`` files would
hold one per array): a JSON header of names, dtypes, shapes and offsets, then each array's
bytes, 64-byte aligned.  Only plain dtypes (numbers, bools, fixed-width strings)."""

from __future__ import annotations

import json
import mmap
import struct

import numpy as np

MAGIC = b"LPARRAYS"
ALIGN = 64


def write_arrays(path, arrays):
    """Write ``arrays`` (name -> array) to ``path`` (a file of the caller's: a hand-over)."""
    arrays = {k: np.ascontiguousarray(v) for k, v in arrays.items()}
    index, at = {}, 0
    for name, a in arrays.items():
        if a.dtype.hasobject:
            raise TypeError(f"{name}: object arrays cannot be written")
        index[name] = [a.dtype.str, list(a.shape), at]
        at += -(-a.nbytes // ALIGN) * ALIGN
    head = json.dumps(index).encode()
    start = -(-(len(MAGIC) + 8 + len(head)) // ALIGN) * ALIGN
    with open(path, "wb") as f:
        f.write(MAGIC + struct.pack("<Q", len(head)) + head)
        f.write(b"\0" * (start - f.tell()))
        for name, a in arrays.items():
            f.seek(start + index[name][2])
            if a.nbytes:
                f.write(memoryview(a.reshape(-1)).cast("B"))
        f.truncate(start + at)


def read_arrays(path):
    """The arrays of a file ``write_arrays`` wrote, as read-only views of one mapping."""
    with open(path, "rb") as f:
        if f.read(len(MAGIC)) != MAGIC:
            raise ValueError(f"{path}: not an array file")
        (n,) = struct.unpack("<Q", f.read(8))
        index = json.loads(f.read(n))
        start = -(-(len(MAGIC) + 8 + n) // ALIGN) * ALIGN
        size = f.seek(0, 2)
        mapped = mmap.mmap(f.fileno(), size, access=mmap.ACCESS_READ) if size else b""
    out = {}
    for name, (dtype, shape, at) in index.items():
        dt = np.dtype(dtype)
        count = int(np.prod(shape)) if shape else 1
        out[name] = np.frombuffer(mapped, dt, count, start + at).reshape(shape)
    return out
