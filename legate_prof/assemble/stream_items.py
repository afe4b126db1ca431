"""Items from the runtime's crash-safe event stream (operations, arrays), for runs that died
before Legion wrote its logs."""

from __future__ import annotations

import numpy as np

from legate_prof.model.kinds import GROUP_INDEX, ItemKind, MemKind, node_of_id
from legate_prof.model.sort_order import stable_order
from legate_prof.read.runtime_stream import RESULT, TEMPORARY, UNKNOWN

RUNTIME_OP_BASE = 1 << 62
RANK_SHIFT = 40  # a rank's stream numbers its operations and arrays from BASE + rank << 40
# the instances of legate's out-of-memory report (``out_of_memory``): above every rank's
REPORT_OP_BASE = RUNTIME_OP_BASE + (1 << 57)


def stream_arrays(kind, op_id):
    """Which items are the runtime stream's arrays (not Legion's instances, not those of an
    out-of-memory report): each rank's stream repeats the program's arrays.  Their transfer
    row holds the rank's piece as ``size``, the array's number in the stream as ``inst`` and
    the whole array's bytes as ``src`` (an array has no source memory)."""
    op_id = np.asarray(op_id, np.uint64)
    return ((np.asarray(kind) == int(ItemKind.INSTANCE)) & (op_id >= np.uint64(RUNTIME_OP_BASE))
            & (op_id < np.uint64(REPORT_OP_BASE)))


def rank_pieces(rows, nbytes, rank, ranks):
    """(first row, rows, bytes) of each array a rank holds: its block of the first dimension,
    ``ceil(rows / ranks)`` rows each, as Legate tiles an array over the ranks (its
    out-of-memory report lists them so: 1,048,574 rows on 2 ranks, ``<0>..<524286>`` and
    ``<524287>..<1048573>``).  One rank's run holds every array whole."""
    rows = np.asarray(rows, np.uint64)
    ranks = max(int(ranks), 1)
    block = (rows + np.uint64(ranks - 1)) // np.uint64(ranks)
    lo = np.minimum(block * np.uint64(rank), rows)
    held = np.minimum(lo + block, rows) - lo
    row_bytes = np.asarray(nbytes, np.uint64) // np.maximum(rows, np.uint64(1))
    return lo, held, np.where(held == rows, nbytes, held * row_bytes).astype(np.uint64)


def _array_names(cols, lo, held, rank, ranks):
    """An array's box: where it was allocated (the user's line, as Legate's report says it)
    and, on a rank holding a piece of it, which rows."""
    out = []
    for desc, whole, a, n in zip(cols["arr_desc"], cols["arr_rows"].tolist(), lo.tolist(),
                                 held.tolist()):
        if ranks > 1 and n < whole:
            desc += (f" (rows {a}..{a + n - 1} on rank {rank})" if n
                     else f" (none of it on rank {rank})")
        out.append(f"Array {desc}")
    return out


def _add_waits(items, names, cols, first_op, rank):
    """A rank's waits for values as items on its operations' lane: their op ids."""
    op_ids = np.arange(first_op, first_op + len(cols["wait_start"]), dtype=np.uint64)
    items.add(start=cols["wait_start"], stop=cols["wait_stop"], group=GROUP_INDEX["ops"],
              ref=np.uint64(rank), rank=rank, name=names.intern_each(wait_names(cols)),
              kind=ItemKind.PROGRAM_WAIT, op_id=op_ids,
              detail=names.intern_each(cols["wait_for"]))
    return op_ids


def wait_names(cols):
    """A wait's box: what the program waited for (the operation that last made or wrote the
    array whose values it read), and that operation's line where it is not the wait's."""
    out = []
    for op, op_site, site in zip(cols["wait_for"], cols["wait_for_site"], cols["wait_site"]):
        line = op_site.rsplit("/", 1)[-1]
        out.append(f"Waiting for {op}'s result" + (f" ({line})" if op_site != site else "")
                   if op else "Waiting for a value")
    return out


def _first_op(rank):
    """The first op id of a rank's stream: ids depend on the rank alone, so a rank's bundle
    and a build of all ranks give its items the same ids."""
    return RUNTIME_OP_BASE + ((int(rank) & 0xFFFF) << RANK_SHIFT)


def records_waits(stream, cols):
    """Whether ``stream`` records the program's waits for values: its header says so, or it
    holds some (one written before they were recorded holds none and says nothing)."""
    return bool(stream.header.get("records_waits")) or bool(len(cols["wait_start"]))


def add_stream_items(streams, ranks, items, names, mems):
    """Operations and arrays from the runtime's event streams (``StreamColumns``), as timeline
    items: (the op ids of the streams' operations and arrays and their source lines, the
    capacity of a lane of arrays, the memories)."""
    from legate_prof.read.runtime_stream import pool_bytes, stream_items
    op_ids_made, sites, lane_capacity = [], [], {}
    inst_ranks = set()
    for p in items.parts:
        if int(p["kind"][0]) == ItemKind.INSTANCE:
            inst_ranks.update(node_of_id(np.asarray(p["ref"])).tolist())
    for st in streams:
        rank = int(st.header.get("rank", 0))
        info = next(r for r in ranks if r["rank"] == rank)
        # (a damaged header's start is 0: then the first event is the start, not 1970)
        zero = info["zero_time"] or int(st.header.get("start_ns", 0)) or st.first_ns()
        cols = stream_items(st, zero)
        next_op = _first_op(rank)
        n = len(cols["op_start"])
        if n:
            op_ids = np.arange(next_op, next_op + n, dtype=np.uint64)
            next_op += n
            op_ids_made.append(op_ids)
            sites.extend(cols["op_site"])
            nid = names.intern_each(cols["op_name"])
            # (what the operation did to its arrays: a slice, out=, whole arrays; "" is 0)
            shape = names.intern_each(cols["op_shape"]) if len(cols["op_shape"]) == n \
                else np.zeros(n, np.int32)
            items.add(start=cols["op_start"], stop=cols["op_stop"], group=GROUP_INDEX["ops"],
                      ref=np.uint64(rank), rank=rank, name=nid, kind=ItemKind.RUNTIME_OP,
                      op_id=op_ids, detail=shape)
        m = len(cols["arr_start"])
        cap = pool_bytes(st, "system")
        run_ranks = int(st.header.get("ranks", 1))
        if m:
            op_ids = np.arange(next_op, next_op + m, dtype=np.uint64)
            next_op += m
            op_ids_made.append(op_ids)
            sites.extend(cols["arr_site"])
            group, ref, mems = _array_lane(rank, rank in inst_ranks, cap, mems, lane_capacity)
            _add_arrays(items, names, cols, op_ids, rank, run_ranks, group, ref)
        if len(cols["wait_start"]):  # (numbered after the arrays: the ids of a stream
            op_ids_made.append(_add_waits(items, names, cols, next_op, rank))  # without
            sites.extend(cols["wait_site"])  # waits are as before)
        info["runtime_end_ns"] = int(cols["end"])
        info["records_waits"] = records_waits(st, cols)
        # (its stream cut short; or Legion, which writes at shutdown, wrote no timeline: an
        # abort under MPI can still end the stream)
        span = info.get("span_ns") or (0, 0)
        info["runtime_crashed"] = not st.ended or bool(info.get("format_version")
                                                       and int(span[1]) == 0)
        # (a stream that ended beside a Legion log cut inside a record: the run finished, its
        # log file did not — a copy not finished, a disk that filled — not a crash)
        info["log_cut_short"] = bool(st.ended and info.get("format_version")
                                     and info.get("span_ns") is None)
        if n:
            info["runtime_last_op"] = [cols["op_name"][-1], cols["op_site"][-1]]
        if st.died_waiting is not None:  # (the wait it stopped in: [line, what for])
            info["runtime_waiting"] = list(st.died_waiting)
    ids = np.concatenate(op_ids_made) if op_ids_made else np.zeros(0, np.uint64)
    return (ids, sites), lane_capacity, mems


def _array_lane(rank, legion_instances, cap, mems, lane_capacity):
    """(group, ref, memories) of the lane a rank's arrays go on: their own where Legion's
    instances are there (not a memory: Legion's instances are what the pool held, so no
    capacity); else, a crashed run, the system memory's, all there is to show the memory
    filling up (declared with the launcher's pool where no MemDesc survived the crash)."""
    if legion_instances:
        return GROUP_INDEX["arrays"], np.uint64(rank), mems
    group = GROUP_INDEX["system"]
    sel = (mems["kind"] == MemKind.SYSTEM) & (mems["rank"] == rank)
    sysm = mems["mem_id"][sel][stable_order(-mems["capacity"][sel])]
    ref = np.uint64(sysm[0]) if len(sysm) else np.uint64((0x1E << 56) | (rank << 40))
    if len(sysm) == 0:
        row = {"mem_id": ref, "kind": int(MemKind.SYSTEM), "capacity": cap, "rank": rank}
        mems = {k: np.append(v, np.array(row[k], v.dtype)) for k, v in mems.items()}
    if cap:
        lane_capacity[(rank, int(group), int(ref))] = cap
    return group, ref, mems


# an array's ``detail``: what it was to the line that made it (the stream's operands)
ARRAY_ROLE_WORDS = {RESULT: "its line's result",
                    TEMPORARY: "a temporary: its line's next operation read it"}


def _add_arrays(items, names, cols, op_ids, rank, run_ranks, group, ref):
    """A rank's arrays as items: what it holds of each, its piece (the stream gives whole
    arrays; ``src``, a copy's source memory, holds an array's whole bytes)."""
    m = len(op_ids)
    lo, held, piece = rank_pieces(cols["arr_rows"], cols["arr_bytes"], rank, run_ranks)
    nid = names.intern_each(_array_names(cols, lo, held, rank, run_ranks))
    role = np.asarray(cols.get("arr_role", np.full(m, UNKNOWN, np.int8)))
    words = np.array(["", ARRAY_ROLE_WORDS[RESULT], ARRAY_ROLE_WORDS[TEMPORARY]], object)
    items.add(start=cols["arr_start"], stop=cols["arr_stop"], group=group, ref=ref,
              rank=rank, name=nid, kind=ItemKind.INSTANCE, op_id=op_ids,
              detail=names.intern_each(words[role.astype(np.int64) + 1].tolist()),
              extra={"size": piece, "src": cols["arr_bytes"], "dst": np.full(m, ref, np.uint64),
                     "inst": np.arange(m, dtype=np.uint64)})


def move_streams_back(parts, ranks, leads):
    """Move each rank's arrays and waits (and the end its stream saw) back by its stream's
    lead on its Legion log's clock (``operation_spans.stream_leads``; the operations are
    moved there) and say so: [the warnings]."""
    out = []
    for r, lead in sorted(leads.items()):
        ns = np.int64(lead["ns"])
        for p in parts:
            if not len(p["start"]) or not (stream_arrays(p["kind"][:1], p["op_id"][:1])[0]
                                           or p["kind"][0] == ItemKind.PROGRAM_WAIT):
                continue
            if (int(p["op_id"][0]) - RUNTIME_OP_BASE) >> RANK_SHIFT != r:
                continue
            p["start"] = p["create"] = p["ready"] = p["start"] - ns
            p["stop"] = p["stop"] - ns
        for info in ranks:
            if info["rank"] == r and info.get("runtime_end_ns"):
                info["runtime_end_ns"] = int(info["runtime_end_ns"]) - int(ns)
        out.append(f"warning: rank {r}'s runtime stream reads {lead['ns'] / 1e6:.3f} ms or more "
                   f"ahead of its Legion log's clock ({lead['late']:,} of {lead['ops']:,} "
                   "operations stamped as submitted after Legion created their tasks): its "
                   f"operations and arrays are drawn {lead['ns'] / 1e6:.3f} ms earlier")
    return out


def with_program_waits(parts, op_waits):
    """The operations' waits (``operation_spans``: rows among all parts' rows, start, ready,
    end) and a wait of each of the program's waits for values over its whole span: drawn in
    the waiting shade, and none of it running."""
    offsets = np.cumsum([0] + [len(p["start"]) for p in parts])
    mine = [k for k, p in enumerate(parts) if len(p["start"]) and p["kind"][0]
            == ItemKind.PROGRAM_WAIT]
    if not mine:
        return op_waits
    stop = np.concatenate([np.asarray(parts[k]["stop"], np.int64) for k in mine])
    add = {"row": np.concatenate([offsets[k] + np.arange(len(parts[k]["start"]))
                                  for k in mine]),
           "start": np.concatenate([np.asarray(parts[k]["start"], np.int64) for k in mine]),
           "ready": stop, "end": stop}
    return {c: np.concatenate([np.asarray(op_waits[c], np.int64), add[c]]) for c in add}


# how a crash's title ends until legate's console output says why (``out_of_memory``)
CRASH_ASKS_FOR_LOG = ": crashed or killed (out of memory? give legate's console output with --log)"


def crash_markers(ranks):
    """A marker at the end of each rank that stopped before the run's end (its runtime stream
    has no ``end`` event, or its Legion log no timeline: it crashed or was killed), naming
    the rank and the last operation it launched; legate's console output (``--log``)
    replaces it with the rank's report."""
    out = []
    for info in ranks:
        if not info.get("runtime_crashed"):
            continue
        rank = int(info["rank"])
        name, site = info.get("runtime_last_op") or ("", "")
        last = f"{name} at {site}" if site else name
        if info.get("log_cut_short"):
            out.append({
                "time": int(info.get("runtime_end_ns") or 0), "rank": rank, "kind": "crash",
                "title": f"Rank {rank}'s Legion log is cut short (it ends inside a record), "
                         "though its runtime stream says the run ended: a copy of the file "
                         "not finished? What the log held after the cut is missing",
                "fields": {"rank": str(rank), "log": "cut short",
                           "last operation": last or "none recorded"}})
            continue
        site, what = info.get("runtime_waiting") or ("", "")
        waiting = f"{what}'s result" if what else "a value"
        out.append({
            "time": int(info.get("runtime_end_ns") or 0), "rank": rank, "kind": "crash",
            "title": f"Rank {rank} stopped before the run's end"
                     + (f", while the program waited for {waiting} at {site}" if site else "")
                     + (f", after launching {last}" if last else "")
                     + CRASH_ASKS_FOR_LOG,
            "fields": {"rank": str(rank), "last operation": last or "none recorded",
                       **({"waiting for": f"{waiting} at {site}"} if site else {})}})
    return out
