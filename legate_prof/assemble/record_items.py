"""Record tables of a Legion Prof log into timeline items (columns per record kind, names
interned), before they are laid out in lanes."""

from __future__ import annotations

import numpy as np

from legate_prof.model.kinds import GROUP_INDEX, ItemKind, node_of_id
from legate_prof.model.sort_order import stable_order, unique_values, unique_with
from legate_prof.read.legion_log import MAX_NAME_CHARS

class StringTable:
    """Interned strings; index 0 is the empty string."""

    def __init__(self):
        self.strings = [""]
        self.index = {"": 0}

    def intern(self, s):
        if len(s) > MAX_NAME_CHARS:  # (what the readers cut already; names made of several)
            s = s[:MAX_NAME_CHARS - 1] + "…"
        i = self.index.get(s)
        if i is None:
            i = self.index[s] = len(self.strings)
            self.strings.append(s)
        return i

    def intern_each(self, strings) -> np.ndarray:
        """``intern`` of each of ``strings`` (int32): each distinct one once (a run's
        operations repeat a few dozen names and lines 27,000 times)."""
        codes = {}
        at = [codes.setdefault(s, len(codes)) for s in strings]
        if not at:
            return np.zeros(0, np.int32)
        return np.array([self.intern(s) for s in codes], np.int32)[np.array(at, np.int64)]

    def map_keys(self, keys, lookup, default):
        """Vectorized: name id for each key, via ``lookup`` (dict key -> str)."""
        if isinstance(keys, _PairKeys):
            uniq, inv = unique_inverse(keys.code)
            ids = np.array([self.intern(lookup.get(k, default(k)))
                            for k in map(keys.decode, uniq.tolist())], dtype=np.int32)
            return ids[inv] if len(keys) else np.zeros(0, dtype=np.int32)
        keys = np.asarray(keys)
        if len(keys) == 0:
            return np.zeros(0, dtype=np.int32)
        uniq, inv = unique_inverse(keys)
        ids = np.array([self.intern(lookup.get(k.item() if hasattr(k, "item") else k,
                                               default(k))) for k in uniq], dtype=np.int32)
        return ids[inv]


class ItemParts:
    """Accumulates item columns from each record type before lanes are known."""

    def __init__(self):
        self.parts = []
        self.rows = 0

    def count(self):
        """Rows added so far (the next part's first row among all parts' rows): kept, not
        summed over the parts (1,000 ranks' parts summed twice a rank: 11 M additions)."""
        return self.rows

    def add(self, *, start, stop, create=None, ready=None, group, ref, ref2=None, rank=None,
            name, kind, op_id=None, extra=None, fevent=None, creator=None, critical=None,
            detail=0):
        """One record table's items.  ``fevent``: the event that names each item (its
        completion; an instance's uid), ``creator``: the event of what made it (a call's or
        kernel's: its caller's), ``critical``: the precondition the runtime says gated it."""
        n = len(start)
        if n == 0:
            return
        start = np.asarray(start, dtype=np.int64)
        self.rows += n
        self.parts.append({
            "start": start,
            "stop": np.asarray(stop, dtype=np.int64),
            "create": start if create is None else np.asarray(create, dtype=np.int64),
            "ready": start if ready is None else np.asarray(ready, dtype=np.int64),
            "group": np.broadcast_to(np.asarray(group, dtype=np.int16), (n,)),
            "ref": np.broadcast_to(np.asarray(ref, dtype=np.uint64), (n,)),
            "ref2": np.broadcast_to(np.asarray(0 if ref2 is None else ref2, dtype=np.uint64), (n,)),
            "rank": None if rank is None else np.broadcast_to(np.asarray(rank, np.int32), (n,)),
            "name": np.broadcast_to(np.asarray(name, dtype=np.int32), (n,)),
            "kind": np.full(n, int(kind), dtype=np.uint8),
            "detail": np.broadcast_to(np.asarray(detail, dtype=np.int32), (n,)),
            "op_id": np.zeros(n, np.uint64) if op_id is None else np.asarray(op_id, np.uint64),
            "extra": extra,
            "fevent": _events(fevent, n),
            "creator": _events(creator, n),
            "critical": _events(critical, n),
        })


def _events(col, n):
    """An event column of ``n`` items (0: none), broadcast when absent or constant."""
    if col is None:
        return np.broadcast_to(np.uint64(0), (n,))
    return np.broadcast_to(np.asarray(col, np.uint64), (n,))


def unique_inverse(keys):
    """``np.unique(keys, return_inverse=True)`` for columns of few distinct values (task ids,
    processors, provenances, lanes) without sorting the column (1 M keys: 5-15 ms instead of
    70 ms): integers within a small range through a lookup table; else numpy's hash-based
    unique, then the code of each key by equality passes (few values) or a search."""
    keys = np.asarray(keys)
    if len(keys) == 0:
        return unique_values(keys), np.zeros(0, np.intp)
    if keys.dtype.kind in "iu":
        if keys.ndim == 1 and keys.strides[0] not in (0, keys.itemsize):
            keys = keys.copy()  # a record table's column: one pass over the table, not three
        lo, hi = keys.min(), keys.max()
        if int(hi) - int(lo) < LOOKUP_RANGE:
            # key - lo is in [0, LOOKUP_RANGE): exact in the keys' own type from 32 bits up
            wide = keys if keys.dtype.itemsize >= 4 else keys.astype(np.int64)
            offset = wide - wide.dtype.type(lo)
            offset = (offset.view(np.intp) if offset.dtype.itemsize == np.dtype(np.intp).itemsize
                      else offset.astype(np.intp))
            present = np.zeros(int(hi) - int(lo) + 1, bool)
            present[offset] = True
            code = np.cumsum(present, dtype=np.intp) - 1
            uniq = np.flatnonzero(present).astype(wide.dtype) + wide.dtype.type(lo)
            return uniq.astype(keys.dtype), code[offset]
    uniq = unique_values(keys)
    if len(uniq) <= EQUALITY_PASSES and keys.dtype.kind in "iub":  # (NaN != NaN: not floats)
        inv = np.zeros(len(keys), np.intp)
        for k in range(1, len(uniq)):
            inv[keys == uniq[k]] = k
        return uniq, inv
    return uniq, np.searchsorted(uniq, keys)


LOOKUP_RANGE = 1 << 20  # a lookup table of at most this many entries (9 MiB)
EQUALITY_PASSES = 8  # up to this many distinct values, one comparison pass each


def pairs(table, a, b):
    """Two columns as one key column whose values look up as (a, b) tuples (see map_keys)."""
    return _PairKeys(table[a], table[b])


class _PairKeys:
    """Pairs of integer columns, made unique through two 1-D ``np.unique`` (no structured sort)."""

    def __init__(self, a, b):
        ua, ia = unique_inverse(a)
        ub, ib = unique_inverse(b)
        self.ua, self.ub = ua, ub
        self.code = ia.astype(np.int64) * len(ub) + ib

    def __len__(self):
        return len(self.code)

    def decode(self, code):
        return (self.ua[code // len(self.ub)].item(), self.ub[code % len(self.ub)].item())


def record_columns(table):
    """Every column of a record table as its own contiguous array (a dict).  Legion's record
    tables are packed rows (84 bytes for a task, its 8-byte fields unaligned): read column by
    column, every row is read once per column; a run of adjacent 8-byte integer fields is
    read in one pass instead (a transposed copy), any other field by itself."""
    fields = table.dtype.fields
    out, run = {}, []

    def take_run():
        if len(run) > 1:
            rows = np.lib.stride_tricks.as_strided(
                table[run[0]], shape=(len(table), len(run)), strides=(table.strides[0], 8),
                writeable=False)
            block = np.empty((len(run), len(table)), rows.dtype)
            for a in range(0, len(table), _ROWS_AT_ONCE):  # (rows still in cache)
                block[:, a:a + _ROWS_AT_ONCE] = rows[a:a + _ROWS_AT_ONCE].T
            out.update((name, block[i].view(fields[name][0])) for i, name in enumerate(run))
        elif run:
            out[run[0]] = np.ascontiguousarray(table[run[0]])
        run.clear()

    for name in sorted(table.dtype.names, key=lambda n: fields[n][1]):
        dt, offset = fields[name][:2]
        wide = dt.kind in "iu" and dt.itemsize == 8 and dt.isnative
        if not (wide and run and fields[run[-1]][1] + 8 == offset):
            take_run()
        if wide:
            run.append(name)
        else:
            out[name] = np.ascontiguousarray(table[name])
    take_run()
    return {name: out[name] for name in table.dtype.names}


_ROWS_AT_ONCE = 16384  # records transposed at a time by ``record_columns``


def event_columns(table, fevent="fevent", creator="creator", critical="critical"):
    """The event columns of a record table (or its ``record_columns``) that has them
    (``ItemParts.add`` keywords): a log of an older format may lack any."""
    names = tuple(table) if isinstance(table, dict) else (table.dtype.names or ())
    return {key: table[f] for key, f in (("fevent", fevent), ("creator", creator),
                                         ("critical", critical)) if f and f in names}


def log_last_time(log):
    last = 0
    for rec in ("TaskInfo", "MetaInfo", "ImplicitTaskInfo", "GPUTaskInfo"):
        t = log.table(rec)
        if len(t):
            last = max(last, int(t["stop"].max()))
    return last


def recording_rank(log, memories):
    """The rank whose lanes a log's copies and fills go on: the node that recorded them (its
    ``MachineDesc``), so that every lane of a rank's log is that rank's and a rank's log (or
    bundle) holds no lane another rank's holds too.  (A copy between two nodes is recorded by
    one of them; the utilization lines count it on both: ``utilization.channel_lanes``.)  A log
    without a machine description: the node of each copy's memory, as before."""
    md = log.table("MachineDesc")
    if len(md):
        return np.int32(md[0]["node_id"])
    return node_of_id(memories).astype(np.int32)


# timeline records and their (start, stop) fields: what a rank's clock spans
_SPAN_RECORDS = (("TaskInfo", "start", "stop"), ("ImplicitTaskInfo", "start", "stop"),
                 ("GPUTaskInfo", "start", "stop"), ("MetaInfo", "start", "stop"),
                 ("MessageInfo", "start", "stop"), ("ProfTaskInfo", "start", "stop"),
                 ("CopyInfo", "start", "stop"), ("FillInfo", "start", "stop"),
                 ("PartitionInfo", "start", "stop"))


# records of what ran on a processor: a log holds them for its own node's processors only
# (it describes other nodes' processors, never runs anything on them)
_PROC_RECORDS = ("TaskInfo", "ImplicitTaskInfo", "GPUTaskInfo", "MetaInfo", "MessageInfo",
                 "MapperCallInfo", "RuntimeCallInfo", "ApplicationCallInfo", "ProfTaskInfo")


def processor_nodes(log):
    """The nodes (ranks) of the processors a log's records ran on: its own rank, unless its
    processors' ids say another (two files whose ids collide share that rank's lanes)."""
    nodes = set()
    for rec in _PROC_RECORDS:
        t = log.table(rec)
        if len(t):
            nodes.update(unique_values(node_of_id(np.asarray(t["proc_id"], np.uint64))).tolist())
    return sorted(nodes)


def log_span(log):
    """(first start, last stop) of a log's timeline records on its node's clock; (0, 0)
    without any.  Ranks of one run overlap in time unless their clocks are far apart
    (``rank_checks``)."""
    first, last = None, 0
    for rec, a, b in _SPAN_RECORDS:
        t = log.table(rec)
        if len(t):
            lo = int(t[a].min())
            first = lo if first is None else min(first, lo)
            last = max(last, int(t[b].max()))
    return (first or 0, last)


def first_requirement(reqs, fevent):
    """(found, row of ``reqs``) of each copy's or fill's first requirement, joined on its
    completion event ``fevent`` (requirements of one copy are written in order)."""
    order = stable_order(reqs["fevent"])
    fe = reqs["fevent"][order]
    pos = np.clip(np.searchsorted(fe, fevent), 0, len(fe) - 1)
    return fe[pos] == fevent, order[pos]


def add_copies(log, items, names, mem_group_of):
    ci = log.table("CopyInfo")
    if len(ci) == 0:
        return
    cii = log.table("CopyInstInfo")
    src = np.zeros(len(ci), np.uint64)
    dst = np.zeros(len(ci), np.uint64)
    indirect = np.zeros(len(ci), bool)
    inst = np.zeros(len(ci), np.uint64)
    cols = record_columns(ci)  # (each column read from the packed records once)
    if len(cii):
        ok, sel = first_requirement(cii, cols["fevent"])
        src = np.where(ok, cii["src"][sel], 0).astype(np.uint64)
        dst = np.where(ok, cii["dst"][sel], 0).astype(np.uint64)
        inst = np.where(ok, cii["dst_inst"][sel], 0).astype(np.uint64)
        if "indirect" in cii.dtype.names:
            indirect = np.where(ok, cii["indirect"][sel] != 0, False)
    name = np.where(indirect, names.intern("Gather/Scatter"), names.intern("Copy"))
    items.add(start=cols["start"], stop=cols["stop"], create=cols["create"], ready=cols["ready"],
              group=GROUP_INDEX["channel"], ref=src, ref2=dst,
              rank=recording_rank(log, np.where(src != 0, src, dst)),
              name=name, kind=ItemKind.COPY, op_id=cols["op_id"],
              extra={"size": cols["size"], "src": src, "dst": dst, "inst": inst},
              **event_columns(cols))


def add_fills(log, items, names):
    fi = log.table("FillInfo")
    if len(fi) == 0:
        return
    fii = log.table("FillInstInfo")
    dst = np.zeros(len(fi), np.uint64)
    inst = np.zeros(len(fi), np.uint64)
    cols = record_columns(fi)
    if len(fii):
        ok, sel = first_requirement(fii, cols["fevent"])
        dst = np.where(ok, fii["dst"][sel], 0).astype(np.uint64)
        inst = np.where(ok, fii["dst_inst"][sel], 0).astype(np.uint64)
    items.add(start=cols["start"], stop=cols["stop"], create=cols["create"], ready=cols["ready"],
              group=GROUP_INDEX["channel"], ref=np.uint64(0), ref2=dst,
              rank=recording_rank(log, dst), name=names.intern("Fill"),
              kind=ItemKind.FILL, op_id=cols["op_id"],
              extra={"size": cols["size"], "src": np.zeros(len(fi), np.uint64), "dst": dst,
                     "inst": inst}, **event_columns(cols))


def first_by_key(cols, key, pool=None):
    """The table ``cols`` (column -> array) ordered by ``key``, one row per key: the first.

    Tables here are concatenations of runs already ordered by key (each rank's ops, as
    Legion writes them), so a stable sort only merges runs (timsort), faster than
    ``np.unique``'s full sort, and a table in order already is returned as it is.  Repeats
    (an op in two ranks' tables: rare, Legion stripes op ids by node) are dropped after the
    gather, only when there are some.  ``pool``: gather the columns on its threads."""
    ids = cols[key]
    if np.all(ids[1:] > ids[:-1]):
        return dict(cols)
    order = stable_order(ids)
    if pool is None:
        out = {c: v[order] for c, v in cols.items()}
    else:
        futures = {c: pool.submit(np.take, v, order) for c, v in cols.items()}
        out = {c: f.result() for c, f in futures.items()}
    del order
    repeat = out[key][1:] == out[key][:-1]
    if repeat.any():
        first = np.concatenate([[True], ~repeat])
        out = {c: v[first] for c, v in out.items()}
    return out


def dedup(cols, key):
    if len(cols[key]) == 0:
        return cols
    _, first = unique_with(cols[key], index=True)
    first.sort()
    return {k: v[first] for k, v in cols.items()}


class IdGroups:
    """The lane group of processor or memory ids, from their declared kinds (``ids`` without
    repeats): sorted once — each rank's record tables ask, and a sort of every rank's ids
    each time was 7 % of ``stats`` at 1,000 ranks."""

    def __init__(self, ids, kinds, kind_to_group, other):
        o = np.argsort(ids)
        self.ids, self.other = ids[o], GROUP_INDEX[other]
        self.groups = np.full(len(ids), self.other, dtype=np.int16)
        for kind, key in kind_to_group.items():
            self.groups[kinds[o] == int(kind)] = GROUP_INDEX[key]

    def of(self, query):
        """Lane-group index of each queried id (found for its few distinct ids, then
        spread); an id not declared: ``other``."""
        distinct, code = unique_inverse(query)
        if len(self.ids) == 0:
            return np.full(len(code), self.other, dtype=np.int16)
        pos = np.clip(np.searchsorted(self.ids, distinct), 0, len(self.ids) - 1)
        g = np.where(self.ids[pos] == distinct, self.groups[pos], self.other)
        return g.astype(np.int16)[code]
