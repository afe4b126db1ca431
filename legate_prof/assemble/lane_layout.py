"""Items into lanes and rows: one lane per (rank, kind, processor / memory / channel), items
ordered by (lane, row, start), rows stacked so that boxes on a row never overlap; the lanes
named by ``model.lane_names``."""

from __future__ import annotations

import numpy as np

from legate_prof.assemble.record_items import unique_inverse
from legate_prof.model.intervals import group_start_order, rows_needed, stack_lanes
from legate_prof.model.kinds import (GROUP_INDEX, MEMORY_GROUPS, node_of_id,
                                     processor_lanes)
from legate_prof.model.lane_names import lane_names
from legate_prof.model.lazy_table import LazyColumns
from legate_prof.model.sort_order import lex_order, stable_order, unique_values
from legate_prof.model.trace_model import EVENT_COLUMNS, ITEM_COLUMNS

LANE_KEY = np.dtype([("rank", "<i4"), ("group", "<i2"), ("ref", "<u8"), ("ref2", "<u8")])


def _lane_keys(parts, extra):
    """The distinct (rank, group, ref, ref2) keys of the items' parts and of ``extra`` (a
    ``LANE_KEY`` table), sorted, and the index of each part item's key, parts concatenated.

    Found part by part: within one record table of one rank the columns are constant
    (broadcast) or take few values in a small range, which ``unique_inverse`` codes without a
    sort; the few keys of each part are then merged.  (All items at once, processor and
    memory ids together span most of 64 bits: that took a sort of every column.)"""
    tables, codes = [extra], []
    for p in parts:
        columns = {"ref": _few_values(p["ref"]), "group": _few_values(p["group"]),
                   "ref2": _few_values(np.zeros(1, np.uint64) if p["ref2"] is None
                                       else p["ref2"])}
        if p["rank"] is not None:
            columns["rank"] = _few_values(p["rank"])
        local = None  # one small code per item: its columns' codes as digits of one number
        for u, c in columns.values():
            if c is not None:
                local = c if local is None else local * len(u) + c
        local_u, local_c = (np.zeros(1, np.int64), None) if local is None else \
            unique_inverse(local)
        tab = np.empty(len(local_u), LANE_KEY)
        rest = local_u.astype(np.int64)
        for name, (u, c) in reversed(columns.items()):
            tab[name] = u[rest % len(u)] if c is not None else u[0]
            if c is not None:
                rest = rest // len(u)
        if p["rank"] is None:  # the node of the processor or memory
            tab["rank"] = node_of_id(tab["ref"])
        tables.append(tab)
        codes.append((local_c, len(p["start"])))
    every = np.concatenate(tables)
    o = lex_order((every["ref2"], every["ref"], every["group"], every["rank"]))
    distinct = np.concatenate([[True], (every[o][1:] != every[o][:-1])]) if len(o) else o
    lane_tab = every[o][distinct]
    global_of = np.empty(len(every), np.int64)
    global_of[o] = np.cumsum(distinct) - 1
    lane, at = [], len(extra)
    for (local_c, n), tab in zip(codes, tables[1:]):
        g = global_of[at:at + len(tab)]
        lane.append(np.full(n, g[0], np.int32) if local_c is None else g[local_c].astype(np.int32))
        at += len(tab)
    return lane_tab, (np.concatenate(lane) if lane else np.zeros(0, np.int32))


def _few_values(col):
    """(distinct values, code of each value): code None for a constant (broadcast) column."""
    col = np.asarray(col)
    if col.ndim == 0 or col.strides == (0,) or len(col) <= 1:
        return col.reshape(-1)[:1].copy(), None
    return unique_inverse(col)


def lay_out(items, procs, mems, ranks, names, warnings, lane_capacity=None, stack=True):
    """Lanes for the items (every processor gets one, idle or not), items ordered by (lane,
    row, start) when ``stack``; else by (lane, start) on row 0, each lane's row count still
    found (``TraceModel`` stacks a lane when it is first drawn).  Returns (item columns,
    lane table, the copies' / fills' / instances' side table, the model item of each row of
    the concatenated item parts)."""
    parts = items.parts
    cols = _concatenated(parts)
    # Make sure every processor has a lane (idle processors count in utilization).
    lane_keys = [(r, int(GROUP_INDEX[g]), p, 0) for r, g, p in processor_lanes(procs)]
    extra = np.array(lane_keys, dtype=LANE_KEY)
    lane_tab, lane = _lane_keys(parts, extra)
    # Hide groups of a rank that have no items at all (as the reference viewer does).
    has_items = np.zeros(len(lane_tab), bool)
    has_items[lane] = True
    grp_key = lane_tab["rank"].astype(np.int64) * 64 + lane_tab["group"]
    live_groups = unique_values(grp_key[has_items])
    keep = np.isin(grp_key, live_groups)
    remap = np.cumsum(keep) - 1
    lane_tab = lane_tab[keep]
    lane = remap[lane].astype(np.int32)

    order = group_start_order(lane, cols["start"], cols["stop"])  # (longer first: nesting)
    lane_s = lane[order]
    bounds = np.searchsorted(lane_s, np.arange(len(lane_tab) + 1))
    start_s, stop_s = cols["start"][order], cols["stop"][order]
    del cols["start"], cols["stop"]
    order, start_s, stop_s, rows, n_rows = _rows(order, start_s, stop_s, bounds, stack)
    inv = np.empty(len(order), dtype=np.int64)
    inv[order] = np.arange(len(order))

    def placed(c):  # (each column let go once placed: one column's copy at a time)
        return cols.pop(c)[order]
    model_items = {
        "start": start_s, "stop": stop_s,
        "create": placed("create"), "ready": placed("ready"),
        "lane": lane_s, "row": rows,
        "name": placed("name").astype(np.int32, copy=False),
        "kind": placed("kind"), "op_id": placed("op_id"),
        "detail": placed("detail").astype(np.int32, copy=False),
        **{c: placed(c) for c in EVENT_COLUMNS},
    }
    transfers = _transfers_table(parts, inv)

    lanes = lane_table(lane_tab, n_rows, procs, mems)
    if not stack:  # (counted when first read: a command that draws nothing never does)
        lanes = LazyColumns(lanes, {"rows": lambda: rows_needed(start_s, stop_s, bounds)})
    for (r, g, ref), cap in (lane_capacity or {}).items():
        hit = (lanes["rank"] == r) & (lanes["group"] == g) & (lanes["ref"] == np.uint64(ref))
        lanes["capacity"][hit] = cap
    return model_items, lanes, transfers, inv


def _concatenated(parts):
    """The parts' item columns, concatenated, each part's let go once taken (``_let_go``)."""
    cols = {}
    for c in ("start", "stop", "create", "ready", "name", "kind", "op_id", "detail",
              *EVENT_COLUMNS):
        cols[c] = (np.concatenate([p[c] for p in parts]) if parts
                   else np.zeros(0, ITEM_COLUMNS.get(c, np.uint64)))
        _let_go(parts, c)
    return cols


def _let_go(parts, column):
    """Each part's ``column`` let go once the parts' are concatenated: nothing reads the
    parts' item columns after (but the length of each part: a stride-0 ``start`` keeps it).
    A rank of 1 M items held its parts (~80 MB) to the build's end, beside the model."""
    for p in parts:
        if column == "start":
            p["start"] = np.broadcast_to(np.int64(0), (len(p["start"]),))
        elif column in p:
            p[column] = None


def _rows(order, start, stop, bounds, stack):
    """(order, start, stop, row of each item, rows of each lane): stacked (``stack``), or
    each lane's rows left for when it is drawn (``TraceModel.stacked_lane``) and their count
    for when it is first read (None: ``lay_out``)."""
    if stack:
        perm, rows, n_rows = stack_lanes(start, stop, bounds)
        return order[perm], start[perm], stop[perm], rows, n_rows
    rows = np.zeros(len(order), dtype=np.int16)
    return order, start, stop, rows, None


def _transfers_table(parts, inv):
    """The side table of copies, fills and instances (size, source and destination memory,
    instance) by item, for the items of ``parts`` placed at ``inv``."""
    t_item, t_size, t_src, t_dst, t_inst = [], [], [], [], []
    off = 0
    for p in parts:
        n = len(p["start"])
        if p["extra"] is not None:
            t_item.append(inv[off:off + n])
            e = p["extra"]
            t_size.append(np.asarray(e["size"], np.uint64))
            t_src.append(np.asarray(e["src"], np.uint64))
            t_dst.append(np.asarray(e["dst"], np.uint64))
            t_inst.append(np.asarray(e["inst"], np.uint64))
        off += n
    if t_item:
        ti = np.concatenate(t_item)
        o = stable_order(ti)  # distinct; runs in order (timsort merges them)
        transfers = {"item": ti[o], "size": np.concatenate(t_size)[o],
                     "src": np.concatenate(t_src)[o], "dst": np.concatenate(t_dst)[o],
                     "inst": np.concatenate(t_inst)[o]}
    else:
        transfers = {k: np.zeros(0, np.uint64) for k in ("size", "src", "dst", "inst")}
        transfers["item"] = np.zeros(0, np.int64)
    return transfers


def lane_table(lane_tab, n_rows, procs, mems):
    """The lane table: keys, rows, capacity (memories'), and the lanes' short and long names
    (``model.lane_names``: the one naming)."""
    cap = np.zeros(len(lane_tab), np.int64)
    mem_cap = dict(zip(mems["mem_id"].tolist(), mems["capacity"].tolist()))
    is_mem = np.isin(lane_tab["group"], [GROUP_INDEX[g] for g in MEMORY_GROUPS if g != "arrays"])
    for i in np.flatnonzero(is_mem).tolist():
        cap[i] = mem_cap.get(int(lane_tab["ref"][i]), 0)
    names, titles = lane_names(lane_tab["group"], lane_tab["rank"], lane_tab["ref"],
                               lane_tab["ref2"], mems)
    return {
        "group": lane_tab["group"].astype(np.int16), "rank": lane_tab["rank"].astype(np.int32),
        "ref": lane_tab["ref"].astype(np.uint64), "ref2": lane_tab["ref2"].astype(np.uint64),
        "capacity": cap, "rows": n_rows, "name": names, "title": titles,
    }
