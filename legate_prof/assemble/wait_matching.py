"""Wait intervals (TaskWaitInfo, MetaWaitInfo) attached to the items they belong to."""

from __future__ import annotations

import numpy as np

from legate_prof.model.kinds import ItemKind

def match_waits(it, logs, meta_name_ids=None):
    """Attach wait intervals to their items.

    TaskWaitInfo names the task's op.  MetaWaitInfo names (op, meta kind) and belongs to the
    last meta task of that pair that started before the wait (Legion's own rule).
    ``it`` is the model's item table.
    """
    parts = []
    tw = [log.table("TaskWaitInfo") for log in logs]
    tw = [t for t in tw if len(t)]
    is_task = np.flatnonzero(it["kind"] == ItemKind.TASK)
    if tw and len(is_task):
        tw = np.concatenate(tw)
        ops = it["op_id"][is_task]
        order = np.argsort(ops, kind="stable")
        ops_s = ops[order]
        pos = np.clip(np.searchsorted(ops_s, tw["op_id"]), 0, len(ops_s) - 1)
        ok = ops_s[pos] == tw["op_id"]
        parts.append((is_task[order[pos]][ok], tw["wait_start"][ok], tw["wait_ready"][ok],
                      tw["wait_end"][ok]))
    mw = [log.table("MetaWaitInfo") for log in logs]
    mw = [t for t in mw if len(t)]
    is_meta = np.flatnonzero(it["kind"] == ItemKind.META)
    if mw and len(is_meta) and meta_name_ids is not None:
        mw = np.concatenate(mw)
        parts.append(_match_meta_waits(it, is_meta, mw, meta_name_ids(mw["lg_id"])))
    if not parts:
        return {k: np.zeros(0, np.int64) for k in ("item", "start", "ready", "end")}
    item = np.concatenate([p[0] for p in parts])
    ws, wr, we = (np.concatenate([p[i] for p in parts]) for i in (1, 2, 3))
    # clamp into the item's execution
    s, e = it["start"][item], it["stop"][item]
    ws = np.clip(ws, s, e)
    we = np.clip(we, ws, e)
    wr = np.clip(wr, ws, we)
    o = np.lexsort((ws, item))
    return {"item": item[o].astype(np.int64), "start": ws[o], "ready": wr[o], "end": we[o]}


def _match_meta_waits(it, is_meta, mw, wait_names):
    """Vectorized 'last meta task of the same (op, kind) starting before the wait'."""
    n_i, n_w = len(is_meta), len(mw)
    op = np.concatenate([it["op_id"][is_meta], mw["op_id"].astype(np.uint64)])
    name = np.concatenate([it["name"][is_meta], wait_names]).astype(np.int64)
    t = np.concatenate([it["start"][is_meta], mw["wait_start"]])
    is_wait = np.concatenate([np.zeros(n_i, bool), np.ones(n_w, bool)])
    order = np.lexsort((is_wait, t, name, op))  # by (op, kind, time), items before waits
    op_o, name_o, w_o = op[order], name[order], is_wait[order]
    new_group = np.ones(len(order), bool)
    new_group[1:] = (op_o[1:] != op_o[:-1]) | (name_o[1:] != name_o[:-1])
    group = np.cumsum(new_group)
    # position of the last item at or before each row, then whether it is in the same group
    last_item = np.maximum.accumulate(np.where(~w_o, np.arange(len(order)), -1))
    rows = np.flatnonzero(w_o)
    li = last_item[rows]
    ok = (li >= 0) & (group[np.maximum(li, 0)] == group[rows])
    wait_idx = order[rows[ok]] - n_i
    item = is_meta[order[li[ok]]]
    return item, mw["wait_start"][wait_idx], mw["wait_ready"][wait_idx], mw["wait_end"][wait_idx]
