"""Reader of the array runtime's event stream (``legate_N.runtime.prof``) and its merge.

The stream survives crashes (see ``runtime/stream.py``); merged with Legion's logs it adds
array-level detail, and alone (Legion's timeline missing after an abort) it still gives the
operations up to the crash and per-memory live bytes against the pool capacity.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgpack
import numpy as np

from .errors import ProfileError, ProfileWarning

STREAM_MAGIC = b"LPRTSTR1"


@dataclass
class RuntimeStream:
    path: str
    header: dict
    ops: list = field(default_factory=list)  # (t_ns, name, site)
    arrays: dict = field(default_factory=dict)  # id -> dict(t_new, t_del, shape, dtype, ...)
    ended: bool = False
    last_ns: int = 0
    warnings: list = field(default_factory=list)


def read_runtime_stream(path) -> RuntimeStream:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ProfileError(path, e.strerror or str(e)) from None
    if not data.startswith(STREAM_MAGIC):
        raise ProfileError(path, "not a legate_prof runtime event stream")
    un = msgpack.Unpacker(raw=False, strict_map_key=False)
    un.feed(data[len(STREAM_MAGIC):])
    it = iter(un)
    try:
        header = next(it)
    except (StopIteration, msgpack.ExtraData, ValueError):
        raise ProfileError(path, "runtime event stream has no header (cut short?)") from None
    s = RuntimeStream(str(path), header if isinstance(header, dict) else {})
    try:
        for ev in it:
            kind, t = ev[0], int(ev[1])
            s.last_ns = max(s.last_ns, t)
            if kind == "op":
                s.ops.append((t, ev[2], ev[3]))
            elif kind == "new":
                s.arrays[ev[2]] = {"t_new": t, "t_del": None, "shape": ev[3], "dtype": ev[4],
                                   "nbytes": int(ev[5]), "site": ev[6], "memory": ev[7]}
            elif kind == "del":
                a = s.arrays.get(ev[2])
                if a is not None:
                    a["t_del"] = t
            elif kind == "end":
                s.ended = True
    except (ValueError, msgpack.UnpackException) as e:
        s.warnings.append(ProfileWarning(path, f"damaged event ({e}); kept what came before"))
    if not s.ended:
        s.warnings.append(ProfileWarning(
            path, "the run did not finish (no end event): showing events up to the crash"))
    return s


def stream_items(stream, zero_ns):
    """Columns for the model builder: operations and arrays of one stream, times aligned."""
    ops_t = np.array([o[0] for o in stream.ops], dtype=np.int64) - zero_ns
    end = stream.last_ns - zero_ns
    op_stop = np.empty_like(ops_t)
    if len(ops_t):
        op_stop[:-1] = ops_t[1:]
        op_stop[-1] = max(end, ops_t[-1] + 1000)
        op_stop = np.maximum(op_stop, ops_t + 1)
    arr = list(stream.arrays.values())
    a_new = np.array([a["t_new"] for a in arr], dtype=np.int64) - zero_ns
    a_del = np.array([(a["t_del"] if a["t_del"] is not None else stream.last_ns) for a in arr],
                     dtype=np.int64) - zero_ns
    return {
        "op_start": ops_t, "op_stop": op_stop,
        "op_name": [o[1] for o in stream.ops], "op_site": [o[2] for o in stream.ops],
        "arr_start": a_new, "arr_stop": np.maximum(a_del, a_new + 1),
        "arr_bytes": np.array([a["nbytes"] for a in arr], dtype=np.uint64),
        "arr_site": [a["site"] for a in arr],
        "arr_desc": [f"{a['dtype']}{tuple(a['shape'])}" for a in arr],
        "end": end,
    }


def pool_bytes(stream, memory="system"):
    """Pool capacity (bytes) from the launcher options (MiB), if given."""
    key = {"system": "sysmem", "framebuffer": "fbmem", "zerocopy": "zcmem"}[memory]
    v = stream.header.get("config", {}).get(key)
    try:
        return int(float(v) * 2**20) if v is not None else 0
    except ValueError:
        return 0
