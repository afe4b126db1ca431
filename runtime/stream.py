"""The runtime's crash-safe event stream: ``legate_<rank>.runtime.prof`` beside Legion's logs.

Legion writes its timeline at shutdown, so a run that dies of out-of-memory leaves none.  This
stream is appended and flushed as events happen: operation launches, array creation and
release.  Format (read by ``legate_prof.runtime_stream``): the 8 magic bytes, then msgpack
objects -- a header map, then one array per event, ``[kind, t_ns, ...]`` with ``t_ns`` from
CLOCK_REALTIME (an operation's: ``["op", t, name, site, code, operands]``, each operand
``[array id, elements, role]``: ``array.operand``; a wait for an array's values, ``["waiting",
start, array id, site]`` as it begins and ``["wait", start, end, array id, site]`` as it ends;
the header's ``records_waits``: this stream records them, so none recorded means the program
waited for none) (Legion's ZeroTime record is on the same clock).  Only written under
``--profile``.
"""

from __future__ import annotations

import atexit
import os
import sys
import shlex
import time

import msgpack

from . import events

MAGIC = b"LPRTSTR1"


def _legate_config():
    """Options the ``legate`` launcher passed down (it sets LEGATE_CONFIG)."""
    args = shlex.split(os.environ.get("LEGATE_CONFIG", ""))
    opts = {"profile": "--profile" in args}
    for i, a in enumerate(args):
        if a.startswith("--") and i + 1 < len(args) and not args[i + 1].startswith("--"):
            opts[a[2:].replace("-", "_")] = args[i + 1]
        elif a.startswith("--") and "=" in a:
            k, v = a[2:].split("=", 1)
            opts[k.replace("-", "_")] = v
    return opts


class EventStream:
    def __init__(self, path, header):
        self.f = open(path, "wb", buffering=0)
        self.f.write(MAGIC)
        self.pack = msgpack.Packer(use_bin_type=True).pack
        self.f.write(self.pack(header))
        self.next_id = 1

    def _emit(self, obj):
        # unbuffered file: every event reaches the OS before the next line of user code runs
        self.f.write(self.pack(obj))

    def operation(self, name, site, code="", operands=()):
        self._emit(["op", time.time_ns(), name, site, code, list(operands)])

    def value_waiting(self, start_ns, array_id, site):
        self._emit(["waiting", start_ns, array_id, site])

    def value_wait(self, start_ns, end_ns, array_id, site):
        self._emit(["wait", start_ns, end_ns, array_id, site])

    def array_created(self, shape, dtype, site):
        i = self.next_id
        self.next_id += 1
        nbytes = int(dtype.itemsize)
        for s in shape:
            nbytes *= int(s)
        self._emit(["new", time.time_ns(), i, list(shape), str(dtype), nbytes, site, "system"])
        return i

    def array_released(self, array_id):
        self._emit(["del", time.time_ns(), array_id])

    def close(self):
        try:
            self._emit(["end", time.time_ns()])
            self.f.close()
        except (OSError, ValueError):
            pass


def maybe_start():
    """Open the stream when running under ``legate --profile``; no-op otherwise."""
    opts = _legate_config()
    if not opts.get("profile") or events.has_sink():
        return None
    from legate.core import get_legate_runtime
    rt = get_legate_runtime()
    rank = int(rt.node_id)
    logdir = opts.get("logdir", os.getcwd())
    name = opts.get("profile_name", "legate")
    path = os.path.join(logdir, f"{name}_{rank}.runtime.prof")
    header = {
        "format": 1, "rank": rank, "ranks": int(rt.node_count), "pid": os.getpid(),
        "start_ns": time.time_ns(),
        "config": {k: opts.get(k) for k in ("cpus", "gpus", "omps", "sysmem", "fbmem", "zcmem",
                                              "numamem")},
        # (the script legate runs; nothing set the variable read before: every stream
        # named the folder it was run from, a review found)
        "program": os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else None,
        # (a stream written before waits were recorded has none and says nothing: `compare`
        # then cannot call a wait of the other run's "fixed" or "new")
        "records_waits": True,
    }
    try:
        stream = EventStream(path, header)
    except OSError:
        return None
    events.set_sink(stream)
    atexit.register(stream.close)
    return stream
