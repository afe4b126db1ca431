"""Reader of the array runtime's event stream (``legate_N.runtime.prof``) and its merge.

The stream survives crashes (see ``runtime/stream.py``); merged with Legion's logs it adds
array-level detail, and alone (Legion's timeline missing after an abort) it still gives the
operations up to the crash and per-memory live bytes against the pool capacity.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgpack
import numpy as np

from legate_prof.errors import ProfileError, ProfileWarning
from legate_prof.file_signatures import GZIP
from legate_prof.file_signatures import RUNTIME_STREAM as STREAM_MAGIC
from legate_prof.read.gzip_input import gunzip_bounded
from legate_prof.read.msgpack_budget import ObjectBudget


@dataclass
class RuntimeStream:
    path: str
    header: dict
    ops: list = field(default_factory=list)  # (t_ns, name, site, code)
    # per op, what it did to its arrays (``operation_shape``): "" where the runtime did not say
    op_shapes: list = field(default_factory=list)
    arrays: dict = field(default_factory=dict)  # id -> dict(t_new, t_del, shape, dtype, ...)
    # the program's waits for an array's values: (start, end, site, the operation that last
    # made or wrote the array: its index in ``ops``, -1 unknown)
    waits: list = field(default_factory=list)
    # (start, site, operation) of a wait begun and not ended: where the stream stops in one,
    # the program died waiting (the wait is in ``waits`` too, to the stream's last time)
    waiting: tuple | None = None
    ended: bool = False
    last_ns: int = 0
    warnings: list = field(default_factory=list)


READ_SIZE = 1 << 20  # bytes read at a time: a stream of any length is read in these
MAX_EVENT = 64 << 20  # one event (a name, a site, a shape) larger than this is damage
MAX_ITEMS = 4096  # fields of an event, dimensions of a shape, keys of the header: msgpack
#                   makes the list a length asks for before its items arrive (8 bytes each)
# values and maps or lists in one event (the header too): an honest one has a few dozen; lists
# of 4,096 lists of 4,096 empty maps are 16 MB of file and were 1.2 GB of dicts
EVENT_OBJECTS = 1 << 16
EVENT_CONTAINERS = 1 << 12


def read_runtime_stream(path) -> RuntimeStream:
    """Read the stream a megabyte at a time (a long run's stream is over 100 MiB: one buffer
    of it was msgpack's BufferFull); memory grows with the events kept, names and sites
    shared among the events that repeat them.  A gzipped stream (a run's folder gzipped
    whole) is inflated first, within ``gzip_input``'s bounds; damage in its gzip data reads
    the events before it, with a warning."""
    try:
        with open(path, "rb") as f:
            gz_problem = None
            if f.read(len(GZIP)) == GZIP:
                f.seek(0)
                data, gz_problem = gunzip_bounded(path, f)
                f = _Inflated(data)
            else:
                f.seek(0)
            if f.read(len(STREAM_MAGIC)) != STREAM_MAGIC:
                raise ProfileError(path, "not a legate_prof runtime event stream")
            budget = ObjectBudget(EVENT_OBJECTS, EVENT_CONTAINERS)
            un = msgpack.Unpacker(f, read_size=READ_SIZE, max_buffer_size=MAX_EVENT,
                                  raw=False, strict_map_key=False, **budget.hooks(),
                                  max_array_len=MAX_ITEMS, max_map_len=MAX_ITEMS)
            s = _read_events(path, _each_within(un, budget))
            if gz_problem:
                s.warnings.insert(0, ProfileWarning(path, gz_problem))
            return s
    except OSError as e:
        raise ProfileError(path, e.strerror or str(e)) from None


class _Inflated:
    """A gzipped stream's inflated bytes, read as a file is (``read(n)``), not copied whole."""

    def __init__(self, data):
        self._data, self._at = memoryview(data), 0

    def read(self, n=-1):
        end = len(self._data) if n is None or n < 0 else min(self._at + n, len(self._data))
        out = bytes(self._data[self._at:end])
        self._at = end
        return out


def _each_within(unpacker, budget):
    """The events, each decoded within ``budget`` (a new one each)."""
    while True:
        budget.reset()
        try:
            yield next(unpacker)
        except StopIteration:
            return


def _read_events(path, it):
    try:
        header = next(it)
    except (StopIteration, msgpack.ExtraData, ValueError, TypeError, msgpack.UnpackException):
        raise ProfileError(path, "runtime event stream has no header (cut short?)") from None
    if not isinstance(header, dict) or not isinstance(header.get("config", {}), dict):
        raise ProfileError(path, "runtime event stream header is damaged")
    s = RuntimeStream(str(path), header, warnings=_header_checked(path, header))
    shared = {}  # one str object per distinct name or site
    ops, op_shapes, arrays, last = s.ops, s.op_shapes, s.arrays, s.last_ns
    made_by = {}  # array id -> the last operation that made or wrote it (its index in ops)
    freed = [0]  # arrays deleted so far (``_note_roles``)
    try:
        for n, ev in enumerate(it):
            problem = _event_problem(ev)
            if problem:
                s.warnings.append(ProfileWarning(
                    path, f"event {n + 1} is damaged ({problem}); kept the {n} before it"))
                break
            kind, t = ev[0], ev[1]
            if t > last:
                last = t
            if kind == "op":  # (the line's code, when the runtime recorded it)
                code = ev[4] if len(ev) > 4 and isinstance(ev[4], str) else ""
                ops.append((t, shared.setdefault(ev[2], ev[2]), shared.setdefault(ev[3], ev[3]),
                            shared.setdefault(code[:MAX_CODE_CHARS], code[:MAX_CODE_CHARS])))
                shape = operation_shape(ev[5] if len(ev) > 5 else None, arrays)
                op_shapes.append(shared.setdefault(shape, shape))
                _note_made(ev[5] if len(ev) > 5 else None, len(ops) - 1, made_by)
                _note_roles(ev[5] if len(ev) > 5 else None, ops[-1][2], arrays, freed[0])
            elif kind in ("wait", "waiting"):
                last = max(last, _on_wait(s, ev, shared, made_by))
            elif kind == "new":
                arrays[ev[2]] = {"t_new": t, "t_del": None, "shape": ev[3],
                                 "dtype": shared.setdefault(ev[4], ev[4]), "nbytes": ev[5],
                                 "site": shared.setdefault(ev[6], ev[6]),
                                 "memory": shared.setdefault(ev[7], ev[7]),
                                 "elements": _elements(ev[3])}
            elif kind == "del":
                a = arrays.get(ev[2])
                if a is not None:
                    a["t_del"] = max(t, a["t_new"])
                freed[0] += 1
            elif kind == "end":
                s.ended = True
    except msgpack.BufferFull:
        s.warnings.append(ProfileWarning(path, f"an event is larger than {MAX_EVENT >> 20} MiB "
                                               "(damaged); kept what came before"))
    except (ValueError, TypeError, msgpack.UnpackException) as e:  # TypeError: unhashable key
        s.warnings.append(ProfileWarning(path, f"damaged event ({e}); kept what came before"))
    finally:
        s.last_ns = last
    _kept_are_results(arrays)
    if not s.ended and s.waiting is not None:  # (it stopped while the program waited)
        s.waits.append((s.waiting[0], max(s.last_ns, s.waiting[0]), *s.waiting[1:]))
    if not s.ended:
        start = header.get("start_ns", 0)
        s.warnings.append(ProfileWarning(path, unfinished_words(path, s.last_ns - start
                                                                if s.last_ns else None)))
    return s


def _header_checked(path, header):
    """The warnings of the header's damaged fields, each set to its default."""
    out = []
    for key, lo, hi, default in (("rank", 0, 1 << 16, 0), ("ranks", 1, 1 << 16, 1),
                                 ("start_ns", 0, MAX_NS, 0)):
        v = header.get(key, default)
        if not isinstance(v, int) or isinstance(v, bool) or not lo <= v < hi:
            out.append(ProfileWarning(path, f"header field {key!r} is damaged ({v!r})"))
            header[key] = default
    return out


LIVE_S = 120  # (no /proc) a file without its end written this recently is a live run's
# in every warning about a run still going: what is read of it is not kept (a cache entry, a
# command's answer) -- the same files, once the run is gone, say it crashed
STILL_WRITTEN = "still being written"


def of_a_live_run(warnings) -> bool:
    """Whether ``warnings`` (strings or objects) say a run was still being written."""
    return any(STILL_WRITTEN in str(w) for w in warnings)


def being_written(path) -> bool:
    """Whether a process has ``path`` open for writing: a log without its end is then a run
    still being written, not a crashed one.  Linux asks /proc (the processes this user may
    see); elsewhere, whether the file was written in the last ``LIVE_S`` seconds."""
    import os
    try:
        st = os.stat(path)
    except (OSError, TypeError, ValueError):
        return False
    if not os.path.isdir("/proc/self/fd"):
        import time
        return time.time() - st.st_mtime < LIVE_S
    for pid in (p for p in _listdir("/proc") if p.isdigit()):
        for fd in _listdir(f"/proc/{pid}/fd"):
            try:
                other = os.stat(f"/proc/{pid}/fd/{fd}")
                if (other.st_ino, other.st_dev) != (st.st_ino, st.st_dev):
                    continue
                with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                    flags = next((int(line.split()[1], 8) for line in f
                                  if line.startswith("flags:")), 0)
                if (flags & os.O_ACCMODE) in (os.O_WRONLY, os.O_RDWR):
                    return True
            except (OSError, ValueError):
                continue
    return False


def _listdir(path):
    import os
    try:
        return os.listdir(path)
    except OSError:
        return []


def unfinished_words(path, last_ns=None) -> str:
    """What a stream without its end event is: a run still being written, or one that
    crashed (or was killed), with how far it got."""
    from legate_prof.present.units import format_ns
    at = f"last event at {format_ns(last_ns)} into the run" if last_ns is not None else \
        "no event yet"
    if being_written(path):
        return (f"the run is still being written (no end event yet; {at}): showing what it "
                "holds so far")
    return f"the run did not finish (no end event; {at}): showing events up to the crash"


MAX_NS = 2**62  # times and sizes beyond this are damage, not data

# What an operation did to its arrays, from the operands the runtime recorded
# (``runtime/array.py``: ``[array id, elements, role]``): the shape of a loop of them.
SLICE = "slice of "  # + the sliced array's allocation site: it read or wrote at most half
#                       of it (a stencil's u[1:-1] is most of it: a whole-array operation)
OUT = "out= "  # + the site of the array it wrote into, given by the caller (out=, a[...] = )
WHOLE = "whole arrays"  # whole arrays only, its result a new array


def operation_shape(operands, arrays):
    """The shape word of one operation (``SLICE``, ``OUT``, ``WHOLE``; "" where the stream
    has no operands, or they are damaged): a slice wins over ``out=`` (``w[a:b] = ...`` is a
    slice loop), an array the caller gave over a new one.  (Only the first few operands,
    ``MAX_ITEMS``, are read.)"""
    if not isinstance(operands, list) or not operands:
        return ""
    given = None
    for x in operands[:MAX_ITEMS]:
        if not (isinstance(x, list) and len(x) >= 3 and isinstance(x[1], int)):
            return ""
        a = arrays.get(x[0]) if isinstance(x[0], (int, str)) else None
        if a is None:
            continue
        if 2 * x[1] <= a["elements"] and x[1] < a["elements"]:
            return SLICE + str(a["site"])
        if x[2] == "out" and given is None:
            given = str(a["site"])
    return OUT + given if given is not None else WHOLE


def _on_wait(s, ev, shared, made_by):
    """A wait's start (``waiting``: the program began to wait, kept until its end comes) or
    the whole wait (``wait``, written as it ended): its latest time."""
    site = ev[3] if ev[0] == "waiting" else ev[4]
    site = shared.setdefault(site, site)
    if ev[0] == "waiting":
        s.waiting = (ev[1], site, made_by.get(ev[2], -1))
        return ev[1]
    s.waiting = None
    s.waits.append((ev[1], max(ev[2], ev[1]), site, made_by.get(ev[3], -1)))
    return ev[2]


def _note_made(operands, op, made_by):
    """Record operation ``op`` as the last to make or write its "new" and "out" operands."""
    if not isinstance(operands, list):
        return
    for x in operands[:MAX_ITEMS]:
        if isinstance(x, list) and len(x) >= 3 and x[2] in ("new", "out") \
                and isinstance(x[0], (int, str)):
            made_by[x[0]] = op


# what an array was to the line that made it (``StreamColumns.arr_role``)
UNKNOWN, RESULT, TEMPORARY = -1, 0, 1


def _note_roles(operands, site, arrays, freed):
    """An array an operation made (``new``) is its line's result, until the line's next
    operation reads it with nothing deleted between: then a temporary of the expression
    (``u * 0.5 + v``'s ``u * 0.5``), if it is deleted at all (``_kept_are_results``).  A
    result read again by its line is the next execution's input (``x = x + 1.0`` in a
    loop): the statement's end, which rebound ``x``, deleted the array before."""
    if not isinstance(operands, list):
        return
    for x in operands[:MAX_ITEMS]:
        if not (isinstance(x, list) and len(x) >= 3 and isinstance(x[0], (int, str))):
            continue
        a = arrays.get(x[0])
        if a is None:
            continue
        if x[2] == "new":
            a["role"], a["made"] = RESULT, (site, freed)
        elif x[2] == "in" and a.get("made") == (site, freed) and a.get("role") == RESULT:
            a["role"] = TEMPORARY


def _kept_are_results(arrays):
    """A "temporary" never deleted was kept (``xs.append(x); x = x + 1.0``: the next
    statement read it with nothing deleted between): a result (a review)."""
    for a in arrays.values():
        if a.get("role") == TEMPORARY and a["t_del"] is None:
            a["role"] = RESULT


def _elements(shape):
    n = 1
    for s in shape:
        n = min(n * s, MAX_NS)  # (a damaged shape stays a small number)
    return n
MAX_CODE_CHARS = 200  # of a line's code, as the runtime records it

# event kind -> types of the fields after (kind, time)
_EVENT_FIELDS = {
    "op": (str, str),
    "new": ((int, str), list, str, int, str, str),
    "del": ((int, str),),
    "wait": (int, (int, str), str),
    "waiting": ((int, str), str),
    "end": (),
}


def _event_problem(ev):
    """Why ``ev`` is not a well-formed event, or None."""
    if type(ev) is list and len(ev) >= 3:  # the runtime's own events, each at once (exact
        kind, t = ev[0], ev[1]  # types: a subclass or a bool goes the whole way below)
        if type(t) is int and 0 <= t < MAX_NS:
            if kind == "op":
                if len(ev) >= 4 and type(ev[2]) is str and type(ev[3]) is str:
                    return None
            elif kind == "del":
                if type(ev[2]) is int or type(ev[2]) is str:
                    return None
            elif kind == "wait":
                if len(ev) >= 5 and type(ev[2]) is int and 0 <= ev[2] < MAX_NS \
                        and type(ev[4]) is str and (type(ev[3]) is int or type(ev[3]) is str):
                    return None
            elif kind == "waiting":
                if len(ev) >= 4 and type(ev[3]) is str and (type(ev[2]) is int
                                                            or type(ev[2]) is str):
                    return None
            elif kind == "new" and len(ev) >= 8 and (type(ev[2]) is int or type(ev[2]) is str) \
                    and type(ev[3]) is list and type(ev[4]) is str and type(ev[5]) is int \
                    and type(ev[6]) is str and type(ev[7]) is str and 0 <= ev[5] < MAX_NS \
                    and all(type(x) is int and 0 <= x < MAX_NS for x in ev[3]):
                return None
    return _problem_in_full(ev)


def _problem_in_full(ev):
    """``_event_problem`` field by field: what is wrong, where something is."""
    if not isinstance(ev, (list, tuple)) or len(ev) < 2:
        return "not a list of fields"
    kind, t = ev[0], ev[1]
    if not isinstance(kind, str):
        return "kind is not a name"
    if kind not in _EVENT_FIELDS:
        return None if isinstance(kind, str) and isinstance(t, int) and 0 <= t < MAX_NS \
            else "unknown kind"
    if not isinstance(t, int) or isinstance(t, bool) or not 0 <= t < MAX_NS:
        return "bad time"
    want = _EVENT_FIELDS[kind]
    if len(ev) < 2 + len(want):
        return f"'{kind}' event with {len(ev)} fields"
    for v, typ in zip(ev[2:], want):
        if not isinstance(v, typ) or isinstance(v, bool):
            return f"'{kind}' field of type {type(v).__name__}"
    if kind == "wait" and not 0 <= ev[2] < MAX_NS:
        return "bad time"
    if kind == "new":
        if not 0 <= ev[5] < MAX_NS:
            return "bad size"
        if not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < MAX_NS
                   for x in ev[3]):
            return "bad shape"
    return None


@dataclass
class StreamColumns:
    """A stream as the model's builder reads it: its operations and arrays as columns, times
    as recorded (ns since the epoch; ``stream_items`` puts them on a log's clock).  Made
    where the stream is read, so that a copy reading it beside this process hands back
    columns (its events, a dict an array, cost ~50 ms to unpickle for the guide's 10 M
    example) and the work of an event is done off this process's path."""

    path: str
    header: dict
    ended: bool
    last_ns: int
    warnings: list
    op_time: np.ndarray  # int64, when the program submitted each operation
    op_name: list
    op_site: list  # the user's line
    op_code: list  # that line's code ("" where the runtime did not record it)
    op_shape: list  # what it did to its arrays (``operation_shape``)
    arr_new: np.ndarray  # int64
    arr_del: np.ndarray  # int64: the stream's last time for an array never deleted
    arr_bytes: np.ndarray  # uint64
    arr_rows: np.ndarray  # uint64: of the first dimension (1: a scalar's)
    arr_site: list
    arr_desc: list  # its type and shape, and where it was allocated (as Legate's report)
    # what it was to the line that made it (``_note_roles``: RESULT, TEMPORARY; UNKNOWN where
    # no operation said it made it: a stream without operands)
    arr_role: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))
    # the program's waits for an array's values: when (int64), the user's line, and the
    # operation waited for (its index among the operations, -1: unknown)
    wait_start: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    wait_end: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    wait_site: list = field(default_factory=list)
    wait_op: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # (the line, the operation's name) of the wait the stream stopped in: the program died
    # waiting (None: it did not)
    died_waiting: tuple | None = None

    def first_ns(self):
        """The earliest event's time: the run's start where the header lost it."""
        times = [int(t.min()) for t in (self.op_time, self.arr_new, self.wait_start) if len(t)]
        return min(times, default=self.last_ns)


def stream_columns(stream: RuntimeStream) -> StreamColumns:
    """The columns of a stream read (``read_runtime_stream``)."""
    ops, arr = stream.ops, list(stream.arrays.values())
    return StreamColumns(
        path=stream.path, header=stream.header, ended=stream.ended, last_ns=stream.last_ns,
        warnings=stream.warnings,
        op_time=np.array([o[0] for o in ops], dtype=np.int64),
        op_name=[o[1] for o in ops], op_site=[o[2] for o in ops], op_code=[o[3] for o in ops],
        op_shape=list(stream.op_shapes),
        arr_new=np.array([a["t_new"] for a in arr], dtype=np.int64),
        arr_del=np.array([a["t_del"] if a["t_del"] is not None else stream.last_ns
                          for a in arr], dtype=np.int64),
        arr_bytes=np.array([a["nbytes"] for a in arr], dtype=np.uint64),
        arr_rows=np.array([a["shape"][0] if a["shape"] else 1 for a in arr], dtype=np.uint64),
        arr_site=[a["site"] for a in arr],
        arr_desc=[f"{a['dtype']}{tuple(a['shape'])}"
                  + (f" allocated at {str(a['site']).rsplit('/', 1)[-1]}" if a["site"] else "")
                  for a in arr],
        arr_role=np.array([a.get("role", UNKNOWN) for a in arr], dtype=np.int8),
        wait_start=np.array([w[0] for w in stream.waits], dtype=np.int64),
        wait_end=np.array([w[1] for w in stream.waits], dtype=np.int64),
        wait_site=[w[2] for w in stream.waits],
        wait_op=np.array([w[3] for w in stream.waits], dtype=np.int64),
        died_waiting=None if stream.ended or stream.waiting is None else (
            stream.waiting[1], stream.ops[stream.waiting[2]][1]
            if 0 <= stream.waiting[2] < len(stream.ops) else ""))


def stream_items(stream: StreamColumns, zero_ns):
    """Columns for the model builder: operations and arrays of one stream, times aligned."""
    ops_t = stream.op_time - zero_ns
    end = stream.last_ns - zero_ns
    op_stop = np.empty_like(ops_t)
    if len(ops_t):
        op_stop[:-1] = ops_t[1:]
        op_stop[-1] = max(end, ops_t[-1] + 1000)
        op_stop = np.maximum(op_stop, ops_t + 1)
    a_new = stream.arr_new - zero_ns
    a_del = stream.arr_del - zero_ns
    w_op = stream.wait_op
    known = (w_op >= 0) & (w_op < len(stream.op_name))
    return {
        "op_start": ops_t, "op_stop": op_stop,
        "op_name": stream.op_name, "op_site": stream.op_site, "op_shape": stream.op_shape,
        "arr_start": a_new, "arr_stop": np.maximum(a_del, a_new + 1),
        "arr_bytes": stream.arr_bytes, "arr_rows": stream.arr_rows,
        "arr_site": stream.arr_site, "arr_desc": stream.arr_desc,
        "arr_role": stream.arr_role if len(stream.arr_role) == len(a_new)
        else np.full(len(a_new), UNKNOWN, np.int8),
        "wait_start": stream.wait_start - zero_ns,
        "wait_stop": np.maximum(stream.wait_end, stream.wait_start + 1) - zero_ns,
        "wait_site": stream.wait_site,
        # (what the program waited for: the operation that last made or wrote the array)
        "wait_for": [stream.op_name[o] if k else "" for o, k in zip(w_op.tolist(),
                                                                   known.tolist())],
        "wait_for_site": [stream.op_site[o] if k else "" for o, k in zip(w_op.tolist(),
                                                                        known.tolist())],
        "end": end,
    }


def pool_bytes(stream, memory="system"):
    """Pool capacity (bytes) from the launcher options (MiB), if given."""
    key = {"system": "sysmem", "framebuffer": "fbmem", "zerocopy": "zcmem"}[memory]
    v = stream.header.get("config", {}).get(key)
    try:
        b = float(v) * 2**20 if v is not None else 0.0
    except (TypeError, ValueError):
        return 0
    return int(b) if 0 <= b < MAX_NS else 0
