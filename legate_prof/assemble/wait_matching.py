"""Wait intervals (TaskWaitInfo, MetaWaitInfo) attached to the items they belong to."""

from __future__ import annotations

import numpy as np

from legate_prof.model.kinds import ItemKind
from legate_prof.model.sort_order import lex_order, stable_order

def match_waits(it, logs, meta_items=None):
    """Attach wait intervals to their items.

    TaskWaitInfo names the task's op.  A MetaWaitInfo names (op, lg_id) and belongs, as in
    the reference (``State::find_last_meta_mut``), to the last MetaInfo or MessageInfo of that
    (op, lg_id) read before it, files in the order given and records in file order: Legion
    writes each meta-task's or message's waits right after it, so that is the record just
    before the wait.  ``meta_items[k][rec]`` is the model item of each row of
    ``logs[k].table(rec)`` for ``rec`` in ``META_RECORDS``.  ``it`` is the model's item table.
    """
    parts = []
    tw = [log.table("TaskWaitInfo") for log in logs]
    tw = [t for t in tw if len(t)]
    is_task = np.flatnonzero(it["kind"] == ItemKind.TASK)
    if tw and len(is_task):
        tw = np.concatenate(tw)
        ops = it["op_id"][is_task]
        order = stable_order(ops)
        ops_s = ops[order]
        pos = np.clip(np.searchsorted(ops_s, tw["op_id"]), 0, len(ops_s) - 1)
        ok = ops_s[pos] == tw["op_id"]
        parts.append((is_task[order[pos]][ok], tw["wait_start"][ok], tw["wait_ready"][ok],
                      tw["wait_end"][ok], _wait_events(tw)[ok]))
    if meta_items is not None and any(log.count("MetaWaitInfo") for log in logs):
        parts.append(_match_meta_waits(logs, meta_items))
    if not parts:
        return {**{k: np.zeros(0, np.int64) for k in ("item", "start", "ready", "end")},
                "event": np.zeros(0, np.uint64)}
    item = np.concatenate([p[0] for p in parts])
    ws, wr, we, ev = (np.concatenate([p[i] for p in parts]) for i in (1, 2, 3, 4))
    # clamp into the item's execution -- but a wait may begin before its item starts: Legion
    # writes that for the external thread's implicit task on multi-rank runs, and the
    # reference keeps it whole (statistics subtract all of it; utilization counts it)
    e = it["stop"][item]
    ws = np.minimum(ws, e)
    we = np.clip(we, ws, e)
    wr = np.clip(wr, ws, we)
    o = lex_order((ws, item))
    return {"item": item[o].astype(np.int64), "start": ws[o], "ready": wr[o], "end": we[o],
            "event": ev[o].astype(np.uint64)}


def _wait_events(table):
    """The event each wait waited on (0 where a log of an older format does not say)."""
    if "wait_event" in (table.dtype.names or ()):
        return table["wait_event"].astype(np.uint64)
    return np.zeros(len(table), np.uint64)


META_RECORDS = ("MetaInfo", "MessageInfo")
_FILE_SHIFT = 40  # reading order = (file index << 40) + record index in the file


def _reading_order(log, k, rec, table, time_field):
    """Where each row of ``table`` comes in the reference's reading order: the file's index,
    then the record's place in the file (``LegionLog.positions``; a log without them, made
    by hand, falls back on time order)."""
    pos = log.positions(rec) if hasattr(log, "positions") else None
    if pos is None:
        pos = np.asarray(table[time_field], np.int64)
        pos = pos - (pos.min() if len(pos) else 0)
    return (np.int64(k) << _FILE_SHIFT) + pos.astype(np.int64)


def _match_meta_waits(logs, meta_items):
    """Vectorized 'last MetaInfo / MessageInfo of the same (op, lg_id) read before the wait'."""
    c_op, c_lg, c_at, c_item, w_op, w_lg, w_at, w_rows = [], [], [], [], [], [], [], []
    for k, log in enumerate(logs):
        for rec in META_RECORDS:
            t = log.table(rec)
            if len(t) == 0:
                continue
            c_op.append(t["op_id"].astype(np.uint64))
            c_lg.append(t["lg_id"].astype(np.int64))
            c_at.append(_reading_order(log, k, rec, t, "start"))
            c_item.append(np.asarray(meta_items[k][rec], np.int64))
        t = log.table("MetaWaitInfo")
        if len(t):
            w_op.append(t["op_id"].astype(np.uint64))
            w_lg.append(t["lg_id"].astype(np.int64))
            w_at.append(_reading_order(log, k, "MetaWaitInfo", t, "wait_start"))
            w_rows.append(t)
    empty = np.zeros(0, np.int64)
    if not c_op or not w_op:
        return empty, empty, empty, empty, empty.astype(np.uint64)
    mw = np.concatenate(w_rows)
    n_i = sum(len(x) for x in c_op)
    op = np.concatenate(c_op + w_op)
    lg = np.concatenate(c_lg + w_lg)
    at = np.concatenate(c_at + w_at)
    item_of = np.concatenate(c_item)
    is_wait = np.zeros(len(op), bool)
    is_wait[n_i:] = True
    order = lex_order((is_wait, at, lg, op))  # by (op, lg_id, reading order)
    op_o, lg_o, w_o = op[order], lg[order], is_wait[order]
    new_group = np.ones(len(order), bool)
    new_group[1:] = (op_o[1:] != op_o[:-1]) | (lg_o[1:] != lg_o[:-1])
    group = np.cumsum(new_group)
    # position of the last meta-task at or before each row, then whether it is in the group
    last_item = np.maximum.accumulate(np.where(~w_o, np.arange(len(order)), -1))
    rows = np.flatnonzero(w_o)
    li = last_item[rows]
    ok = (li >= 0) & (group[np.maximum(li, 0)] == group[rows])
    wait_idx = order[rows[ok]] - n_i
    item = item_of[order[li[ok]]]
    return (item, mw["wait_start"][wait_idx], mw["wait_ready"][wait_idx],
            mw["wait_end"][wait_idx], _wait_events(mw)[wait_idx])
