"""The export tables (items, lanes, waits, copies, instances, arrays, provenance, ranks, utilization,
utilization_steps; the critical path's two, made in ``critical``), in chunks.

Every exporter reads the model through these generators, so each format holds no more than
the model plus one chunk of rows.  A chunk is a dict of column name -> numpy array (strings
as object arrays picked from the model's string tables, never built per record).
"""

from __future__ import annotations

import numpy as np

from legate_prof.analyze.run_counts import operations_per_line
from legate_prof.assemble.stream_items import stream_arrays
from legate_prof.model.kinds import GROUP_KEYS, MEMORY_GROUPS, PROCESSOR_GROUPS, ItemKind

CHUNK_ROWS = 1 << 20
STEP_CHUNK_ROWS = 1 << 18
NO_OP = np.uint64(0xFFFFFFFFFFFFFFFF)
KIND_NAMES = np.array([k.name.lower() for k in ItemKind], dtype=object)
# every export's item categories: the kinds, and "array" (``item_categories``) after them
CATEGORY_NAMES = np.array(list(KIND_NAMES) + ["array"], dtype=object)
GROUP_NAMES = np.array(GROUP_KEYS, dtype=object)

# table -> [(column, arrow-ish type, description)]; docs/export.md shows the same.
SCHEMAS = {
    "items": [
        ("item", "int64", "row index of the item in the model"),
        ("rank", "int32", "node / rank"),
        ("lane", "int32", "lanes.lane"),
        ("row", "int16", "row within the lane (nesting level or layout row)"),
        ("group", "string", "lane group: cpu, gpu_dev, utility, system, channel, ..."),
        ("kind", "string", "task, meta, mapper_call, runtime_call, copy, fill, instance, "
                           "array (the runtime stream's), ..."),
        ("name", "string", "task / call / copy name"),
        ("op_id", "uint64", "operation id (null when none)"),
        ("provenance", "string", "user's file:line that launched the operation ('' if none)"),
        ("create_ns", "int64", "created"),
        ("ready_ns", "int64", "ready to run"),
        ("start_ns", "int64", "started"),
        ("stop_ns", "int64", "stopped"),
        ("duration_ns", "int64", "stop - start"),
        ("waiting_ns", "int64", "sum of its waits (end - start)"),
    ],
    "lanes": [
        ("lane", "int32", "lane index"),
        ("rank", "int32", "node / rank"),
        ("group", "string", "lane group"),
        ("name", "string", "short name (c2, u0, ...)"),
        ("title", "string", "display title"),
        ("ref", "uint64", "processor / memory id (channel: source memory)"),
        ("ref2", "uint64", "channel: destination memory"),
        ("capacity_bytes", "int64", "memory capacity (memory lanes)"),
        ("rows", "int32", "rows drawn for the lane"),
        ("is_memory", "bool", "a memory lane"),
    ],
    "waits": [
        ("item", "int64", "items.item of the waiting task"),
        ("start_ns", "int64", "wait began"),
        ("ready_ns", "int64", "what it waited on was ready"),
        ("end_ns", "int64", "task resumed"),
    ],
    "copies": [
        ("item", "int64", "items.item"),
        ("rank", "int32", "node / rank"),
        ("kind", "string", "copy or fill"),
        ("name", "string", "copy name"),
        ("op_id", "uint64", "operation id"),
        ("provenance", "string", "user's file:line"),
        ("src_mem", "uint64", "source memory id (null for fills)"),
        ("dst_mem", "uint64", "destination memory id"),
        ("size_bytes", "int64", "bytes moved"),
        ("start_ns", "int64", "started"),
        ("stop_ns", "int64", "stopped"),
        ("duration_ns", "int64", "stop - start"),
    ],
    "instances": [
        ("item", "int64", "items.item"),
        ("rank", "int32", "node / rank"),
        ("mem", "uint64", "memory id"),
        ("inst", "uint64", "instance id"),
        ("op_id", "uint64", "operation that created it"),
        ("provenance", "string", "user's file:line"),
        ("size_bytes", "int64", "bytes"),
        ("create_ns", "int64", "requested"),
        ("ready_ns", "int64", "allocated"),
        ("start_ns", "int64", "lifetime start"),
        ("stop_ns", "int64", "destroyed"),
    ],
    "arrays": [
        ("item", "int64", "items.item"),
        ("rank", "int32", "node / rank"),
        ("array_id", "int64", "the array's number in the program: the same on every rank (count "
                           "distinct ones: each rank's stream repeats the program's arrays)"),
        ("provenance", "string", "user's file:line that allocated it"),
        ("size_bytes", "int64", "the rank's piece (every rank's add up to the array)"),
        ("array_bytes", "int64", "the whole array's bytes"),
        ("start_ns", "int64", "made"),
        ("stop_ns", "int64", "released"),
    ],
    "provenance": [
        ("provenance_id", "int32", "index (0 = none)"),
        ("provenance", "string", "file:line text"),
        ("ops", "int64", "operations launched from it: the program's, once per run (one "
                         "rank's runtime stream); Legion's without a stream"),
    ],
    "ranks": [
        ("rank", "int32", "node / rank"),
        ("file", "string", "input file"),
        ("hostname", "string", "host"),
        ("legion_version", "string", "Legion version string"),
        ("zero_time", "int64", "the rank's time origin (ns since epoch)"),
        ("processors", "int64", "processors on the rank"),
        ("memories", "int64", "memories on the rank"),
    ],
    "utilization": [
        ("rank", "int32", "node / rank"),
        ("group", "string", "lane group"),
        ("measure", "string", "processors: busy processors / processors; any_active: 1 while "
                              "any lane of the group is active (channels); bytes: bytes in use "
                              "/ capacity (memories)"),
        ("lanes", "int32", "lanes of the group on the rank"),
        ("denominator", "float64", "processors, 1, or capacity in bytes (a memory of unknown "
                                   "capacity counts its peak)"),
        ("busy_ns", "int64", "time busy, waits cut out, summed over the processors (processors)"
                             " or while any is active; as `stats --json` groups[].busy_ns"),
        ("span_start_ns", "int64", "the run: first item start (all ranks)"),
        ("span_stop_ns", "int64", "the run: last item stop (all ranks)"),
        ("utilization", "float64", "mean of the step function over the run / denominator: the "
                                   "mean of the reference's utilization line"),
    ],
    "utilization_steps": [
        ("rank", "int32", "node / rank"),
        ("group", "string", "lane group"),
        ("start_ns", "int64", "the level holds from here"),
        ("stop_ns", "int64", "to here"),
        ("level", "float64", "busy processors, 1 / 0 (any active) or bytes in use"),
        ("utilization", "float64", "level / utilization.denominator: the reference's line"),
    ],
    # the critical path (export/critical.py: the query API's links, over all ranks)
    "critical_path": [
        ("item", "int64", "items.item of an item with a critical predecessor"),
        ("predecessor", "int64", "items.item it waited for or was created by (null: none "
                                 "known)"),
        ("via", "string", "event, creator, unknown_event, unknown_creator, deallocation"),
        ("event_kind", "string", "the critical event's kind: TaskEvent, MergeEvent, "
                                 "ArriveBarrier, ... (null: none)"),
        ("trigger_ns", "int64", "when that event triggered (null: not known)"),
        ("ready_ns", "int64", "when the item became ready"),
        ("creation_ns", "int64", "when it was created (a message: by its sender's clock)"),
        ("lag_ns", "int64", "ready - trigger (negative across nodes whose clocks differ)"),
        ("note", "string", "the reference's note ('' if none): deferred allocation, unknown "
                           "creator on node 1, ..."),
    ],
    "run_critical_path": [
        ("step", "int32", "0: the item that ended last; each next step back in time"),
        ("item", "int64", "items.item (an item may hold several steps)"),
        ("predecessor", "int64", "items.item the path goes on to: the next step (null: it "
                                 "stops)"),
        ("via", "string", "event, creator, wait, queued, caller, deallocation, unknown, ''"),
        ("begin_ns", "int64", "the piece of the timeline the step holds on the path: from"),
        ("end_ns", "int64", "to (pieces never overlap)"),
        ("wait_from_ns", "int64", "the wait the item resumed from began, where the step "
                                  "resumed from one (via wait, or inferred / unknown past it; "
                                  "else null)"),
        ("wait_to_ns", "int64", "and ended"),
    ],
}
TABLES = list(SCHEMAS)
# tables of items (one row per item, or per wait / transfer of an item): a rank's rows are its
# items'; the others describe the whole profile
ITEM_TABLES = ("items", "waits", "copies", "instances", "arrays")
# made from the profile's critical links (all ranks at once), not from a model's columns
CRITICAL_TABLES = ("critical_path", "run_critical_path")


def _strings(table):
    """A table of words as an export's column, with "?" for bytes that are not UTF-8 —
    Arrow and DuckDB refused them, a traceback (the fuzz).  Only a path can hold such bytes
    now (a rank's ``file``: as the file system names it); a bundle's names come read as
    text (``store.bundle_file.unpack_header``)."""
    return np.asarray([t.encode("utf-8", "replace").decode() if isinstance(t, str) else t
                       for t in table], dtype=object)


def _waiting_per_item(model, lo, hi):
    """Sum of wait time for items [lo, hi) (waits are sorted by item)."""
    w = model.waits
    a, b = np.searchsorted(w["item"], [lo, hi])
    out = np.zeros(hi - lo, np.int64)
    if b > a:
        np.add.at(out, (w["item"][a:b] - lo).astype(np.int64), w["end"][a:b] - w["start"][a:b])
    return out


def _op_ids(op):
    """uint64 op ids with 'none' (0 / all ones) as a masked value for nullable columns."""
    op = np.asarray(op, dtype=np.uint64)
    return np.ma.masked_array(op, mask=(op == NO_OP) | (op == 0))


def iter_table(model, table, chunk_rows=CHUNK_ROWS, items=None):
    """Chunks (dict of columns) of one export table; ``items``: (lo, hi), only the rows of
    items [lo, hi) (tables of ``ITEM_TABLES``: one rank's items, say)."""
    if table in ITEM_TABLES:
        lo, hi = items if items is not None else (0, model.n_items)
        return _GENERATORS[table](model, chunk_rows, int(lo), int(hi))
    return _GENERATORS[table](model, chunk_rows)


def _items(model, chunk_rows, first, end):
    it, lanes = model.items, model.lanes
    names, provs = _strings(model.names), _strings(model.provenances)
    for lo in range(first, end, chunk_rows):
        hi = min(lo + chunk_rows, end)
        lane = it["lane"][lo:hi]
        start, stop = it["start"][lo:hi], it["stop"][lo:hi]
        yield {
            "item": np.arange(lo, hi, dtype=np.int64),
            "rank": lanes["rank"][lane].astype(np.int32),
            "lane": lane.astype(np.int32),
            "row": it["row"][lo:hi],
            "group": GROUP_NAMES[lanes["group"][lane]],
            "kind": _kind_names(it["kind"][lo:hi], it["op_id"][lo:hi]),
            "name": names[it["name"][lo:hi]],
            "op_id": _op_ids(it["op_id"][lo:hi]),
            "provenance": provs[model.op_provenance(it["op_id"][lo:hi])],
            "create_ns": it["create"][lo:hi], "ready_ns": it["ready"][lo:hi],
            "start_ns": start, "stop_ns": stop, "duration_ns": stop - start,
            "waiting_ns": _waiting_per_item(model, lo, hi),
        }


def item_categories(kind, op_id):
    """Each item's category, an index into ``CATEGORY_NAMES``: its kind, or "array" for the
    runtime stream's arrays, apart from Legion's instances (they were "instance": `kind =
    'instance'` counted 35 on mpi2, where `stats` and the instances table count 21; Chrome
    and Perfetto said it too)."""
    code = np.asarray(kind).astype(np.int64)
    code[stream_arrays(kind, op_id)] = len(KIND_NAMES)
    return code


def _kind_names(kind, op_id):
    """Each item's kind by name (``item_categories``)."""
    return CATEGORY_NAMES[item_categories(kind, op_id)]


def _lanes(model, chunk_rows):
    la = model.lanes
    groups = la["group"]
    yield {
        "lane": np.arange(model.n_lanes, dtype=np.int32),
        "rank": la["rank"].astype(np.int32),
        "group": GROUP_NAMES[groups],
        "name": _strings(la["name"]), "title": _strings(la["title"]),
        "ref": la["ref"].astype(np.uint64), "ref2": la["ref2"].astype(np.uint64),
        "capacity_bytes": la["capacity"].astype(np.int64),
        "rows": la["rows"].astype(np.int32),
        "is_memory": np.isin(GROUP_NAMES[groups], sorted(MEMORY_GROUPS)),
    }


def _waits(model, chunk_rows, first, end):
    w = model.waits
    first, end = np.searchsorted(w["item"], [first, end]).tolist()
    for lo in range(first, end, chunk_rows):
        hi = min(lo + chunk_rows, end)
        yield {"item": w["item"][lo:hi].astype(np.int64), "start_ns": w["start"][lo:hi],
               "ready_ns": w["ready"][lo:hi], "end_ns": w["end"][lo:hi]}


def _transfer_rows(model, kinds, chunk_rows, first, end, arrays=None):
    """Chunks of (transfer positions, item indices) of items [first, end) whose item kind is
    in ``kinds``; ``arrays``: True only the runtime stream's arrays, False none of them."""
    t = model.transfers
    first, end = np.searchsorted(t["item"], [first, end]).tolist()
    for lo in range(first, end, chunk_rows):
        hi = min(lo + chunk_rows, end)
        item = t["item"][lo:hi].astype(np.int64)
        kind = model.items["kind"][item]
        keep = np.isin(kind, [int(k) for k in kinds])
        if arrays is not None:
            keep &= stream_arrays(kind, model.items["op_id"][item]) == arrays
        yield np.arange(lo, hi)[keep], item[keep]


def _copies(model, chunk_rows, first, end):
    it, t = model.items, model.transfers
    names, provs = _strings(model.names), _strings(model.provenances)
    for pos, item in _transfer_rows(model, (ItemKind.COPY, ItemKind.FILL), chunk_rows, first,
                                    end):
        src = t["src"][pos].astype(np.uint64)
        start, stop = it["start"][item], it["stop"][item]
        yield {
            "item": item, "rank": model.lanes["rank"][it["lane"][item]].astype(np.int32),
            "kind": KIND_NAMES[it["kind"][item]], "name": names[it["name"][item]],
            "op_id": _op_ids(it["op_id"][item]),
            "provenance": provs[model.op_provenance(it["op_id"][item])],
            "src_mem": np.ma.masked_array(src, mask=src == 0),
            "dst_mem": t["dst"][pos].astype(np.uint64),
            "size_bytes": t["size"][pos].astype(np.int64),
            "start_ns": start, "stop_ns": stop, "duration_ns": stop - start,
        }


def _instances(model, chunk_rows, first, end):
    """Legion's instances (each rank's own; the runtime stream's arrays are ``_arrays``)."""
    it, t = model.items, model.transfers
    provs = _strings(model.provenances)
    for pos, item in _transfer_rows(model, (ItemKind.INSTANCE,), chunk_rows, first, end,
                                    arrays=False):
        yield {
            "item": item, "rank": model.lanes["rank"][it["lane"][item]].astype(np.int32),
            "mem": t["dst"][pos].astype(np.uint64), "inst": t["inst"][pos].astype(np.uint64),
            "op_id": _op_ids(it["op_id"][item]),
            "provenance": provs[model.op_provenance(it["op_id"][item])],
            "size_bytes": t["size"][pos].astype(np.int64),
            "create_ns": it["create"][item], "ready_ns": it["ready"][item],
            "start_ns": it["start"][item], "stop_ns": it["stop"][item],
        }


def _arrays(model, chunk_rows, first, end):
    """The runtime stream's arrays: each rank's piece of each array of the program."""
    it, t = model.items, model.transfers
    provs = _strings(model.provenances)
    for pos, item in _transfer_rows(model, (ItemKind.INSTANCE,), chunk_rows, first, end,
                                    arrays=True):
        yield {
            "item": item, "rank": model.lanes["rank"][it["lane"][item]].astype(np.int32),
            "array_id": t["inst"][pos].astype(np.int64),
            "provenance": provs[model.op_provenance(it["op_id"][item])],
            "size_bytes": t["size"][pos].astype(np.int64),
            "array_bytes": t["src"][pos].astype(np.int64),
            "start_ns": it["start"][item], "stop_ns": it["stop"][item],
        }


def provenance_table(model, ops):
    """The provenance table of ``model``'s strings with ``ops`` operations per string (a
    profile held per rank counts its ranks' operations itself)."""
    return _provenance(model, 0, ops)


def _provenance(model, chunk_rows, ops=None):
    n = len(model.provenances)
    if ops is None:  # the program's operations, once per run, where a runtime stream says
        ops = operations_per_line(model, n)
    if ops is None:
        ops = np.bincount(np.asarray(model.ops["provenance"], dtype=np.int64), minlength=n)[:n] \
            if len(model.ops["provenance"]) else np.zeros(n, np.int64)
    yield {"provenance_id": np.arange(n, dtype=np.int32),
           "provenance": _strings(model.provenances), "ops": ops.astype(np.int64)}


def _ranks(model, chunk_rows):
    r = model.ranks
    rank = np.array([int(x["rank"]) for x in r], dtype=np.int32)
    yield {
        "rank": rank,
        "file": _strings(str(x.get("file", "")) for x in r),
        "hostname": _strings(str(x.get("hostname", "") or "") for x in r),
        "legion_version": _strings(str(x.get("legion_version", "") or "") for x in r),
        "zero_time": np.array([int(x.get("zero_time", 0) or 0) for x in r], dtype=np.int64),
        "processors": np.array([(model.procs["rank"] == k).sum() for k in rank], np.int64),
        "memories": np.array([(model.mems["rank"] == k).sum() for k in rank], np.int64),
    }


def measure_of(group):
    """How a group's utilization is measured (the ``with_utilization`` rules)."""
    return "bytes" if group in MEMORY_GROUPS else \
        "processors" if group in PROCESSOR_GROUPS else "any_active"


def _steps(model):
    """((rank, group), step function) of every rank's lane groups, by rank and group order."""
    order = {g: i for i, g in enumerate(GROUP_KEYS)}
    return sorted(((k, s) for k, s in model.utilization_steps.items() if k[0] is not None),
                  key=lambda kv: (kv[0][0], order.get(kv[0][1], len(order))))


def step_levels(step):
    """(starts, stops, levels) of the constant pieces of a step function, times in whole ns;
    counts (busy processors, any active) come out whole, bytes as the integral gives them."""
    t = np.asarray(step.t, np.float64)
    if len(t) < 2:
        z = np.zeros(0, np.int64)
        return z, z, np.zeros(0)
    dt = np.diff(t)
    level = np.divide(np.diff(step.integral), dt, out=np.zeros(len(dt)), where=dt > 0)
    t = np.rint(np.clip(t, -INT64_FLOAT_MAX, INT64_FLOAT_MAX)).astype(np.int64)
    return t[:-1], t[1:], level


INT64_FLOAT_MAX = float(2**63 - 1024)  # (the largest float64 an int64 holds: times at 2^63 - 1)


def _utilization(model, chunk_rows):
    steps = _steps(model)
    t0, t1 = model.extent()
    span = max(t1 - t0, 1)
    lane_count = {}
    for r, g in zip(model.lanes["rank"].tolist(), model.lanes["group"].tolist()):
        lane_count[(r, GROUP_KEYS[g])] = lane_count.get((r, GROUP_KEYS[g]), 0) + 1
    rows = [(r, g, measure_of(g), lane_count.get((r, g), 0), s.denominator,
             int(model.busy_ns.get((r, g), 0)),
             float(np.diff(s.integral_at(np.array([t0, t1], np.float64)))[0])
             / (span * s.denominator) if s.denominator else 0.0)
            for (r, g), s in steps]
    cols = list(zip(*rows)) if rows else [()] * 7
    yield {"rank": np.array(cols[0], np.int32), "group": _strings(cols[1]),
           "measure": _strings(cols[2]), "lanes": np.array(cols[3], np.int32),
           "denominator": np.array(cols[4], np.float64), "busy_ns": np.array(cols[5], np.int64),
           "span_start_ns": np.full(len(rows), t0, np.int64),
           "span_stop_ns": np.full(len(rows), t1, np.int64),
           "utilization": np.array(cols[6], np.float64)}


def _utilization_steps(model, chunk_rows):
    """The pieces of every (rank, group)'s step function, in chunks of about ``chunk_rows``
    (a profile of many ranks has many short step functions: one chunk each would make as many
    Parquet row groups); at most ``STEP_CHUNK_ROWS`` rows a chunk (its strings are made per
    row)."""
    chunk_rows = min(chunk_rows, STEP_CHUNK_ROWS)
    parts, n = [], 0
    for (r, g), s in _steps(model):
        start, stop, level = step_levels(s)
        if g not in MEMORY_GROUPS:
            level = np.rint(level)  # a count: the integral's rounding taken out
        util = level / s.denominator if s.denominator else np.zeros(len(level))
        for lo in range(0, len(start), chunk_rows):
            hi = min(lo + chunk_rows, len(start))
            parts.append((r, g, start[lo:hi], stop[lo:hi], level[lo:hi], util[lo:hi]))
            n += hi - lo
            if n >= chunk_rows:
                yield _steps_chunk(parts)
                parts, n = [], 0
    if parts:
        yield _steps_chunk(parts)


def _steps_chunk(parts):
    sizes = [len(p[2]) for p in parts]
    return {"rank": np.repeat(np.array([p[0] for p in parts], np.int32), sizes),
            "group": np.repeat(np.array([p[1] for p in parts], dtype=object), sizes),
            **{c: np.concatenate([p[k] for p in parts])
               for k, c in enumerate(("start_ns", "stop_ns", "level", "utilization"), 2)}}


_GENERATORS = {"items": _items, "lanes": _lanes, "waits": _waits, "copies": _copies,
               "instances": _instances, "arrays": _arrays, "provenance": _provenance,
               "ranks": _ranks,
               "utilization": _utilization, "utilization_steps": _utilization_steps}
