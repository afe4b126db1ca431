"""Chrome trace JSON (the Trace Event Format), like the reference's ``legion_prof trace``.

A JSON list of complete events (``ph: "X"``, microseconds): pid = rank, tid = lane (plus the
row for channel and memory lanes, whose rows overlap in time).  Tasks with waits are split as
the reference does: running pieces named ``Name (Variant)``, then ``... (waiting)`` from the
wait's start to its ready time and ``... (ready)`` up to its end; the pieces of a task add up
to its stop - start.  Lines are %-formatted from whole columns (``map`` over column tuples).
"""

from __future__ import annotations

import json

import numpy as np

from legate_prof.model.kinds import GROUP_KEYS, MEMORY_GROUPS, ItemKind
from legate_prof.output_file import atomic_output

CHUNK_ROWS = 1 << 18
NO_OP = np.uint64(0xFFFFFFFFFFFFFFFF)
RUNNING, WAITING, READY = 0, 1, 2
SUFFIX = ("", " (waiting)", " (ready)")
STATE = ("running", "waiting", "ready")
PROC_GROUP = np.array([g not in MEMORY_GROUPS and g not in ("channel", "dp", "arrays", "ops")
                       for g in GROUP_KEYS])


# one event per line; %-formatting runs in C for each tuple of column values
LINE = (',\n{"name":%s,"cat":%s,"ph":"X","ts":%d.%03d,"dur":%d.%03d,"pid":%d,"tid":%d,'
        '"args":{"state":%s%s}}')
LINE_OP = LINE[:-2] + ',"op_id":%d}}'


def pieces(model, lo, hi):
    """(item, t0, t1, state) of items [lo, hi): one running piece for an item without waits;
    for each wait a running piece up to it, a waiting and a ready piece; a last running piece."""
    it, w = model.items, model.waits
    a, b = np.searchsorted(w["item"], [lo, hi])
    wi = w["item"][a:b].astype(np.int64)
    ws, wr, we = w["start"][a:b], w["ready"][a:b], w["end"][a:b]
    first = np.ones(len(wi), bool)
    first[1:] = wi[1:] != wi[:-1]
    prev_end = np.where(first, it["start"][wi] if len(wi) else ws, np.roll(we, 1))
    last_start = it["start"][lo:hi].copy()
    if len(wi):
        last = np.ones(len(wi), bool)
        last[:-1] = wi[1:] != wi[:-1]
        last_start[wi[last] - lo] = we[last]
    items = np.arange(lo, hi, dtype=np.int64)
    item = np.concatenate([wi, wi, wi, items])
    t0 = np.concatenate([prev_end, ws, wr, last_start])
    # (a wait may begin before its item: the running piece before it is then empty)
    t1 = np.maximum(np.concatenate([ws, wr, we, it["stop"][lo:hi]]), t0)
    state = np.concatenate([np.full(len(wi), RUNNING), np.full(len(wi), WAITING),
                            np.full(len(wi), READY), np.full(hi - lo, RUNNING)]).astype(np.int8)
    order = np.lexsort((t0, item))
    return item[order], t0[order], t1[order], state[order]


def _labels(model):
    """JSON-quoted event name per (name id, group, state): 'Name (Variant)' + state suffix."""
    variant = model.variant_by_name_group
    n_groups = len(GROUP_KEYS)
    table = {}
    # chunk by chunk: no item-sized temporaries
    pairs = np.unique(np.concatenate([np.zeros(0, np.int64)] + [
        np.unique(_label_key(model, np.arange(lo, min(lo + CHUNK_ROWS, model.n_items)), 0) // 3)
        for lo in range(0, model.n_items, CHUNK_ROWS)]))
    for k in pairs.tolist():
        (nid, gid), is_task = divmod(k // 2, n_groups), k % 2
        base = model.names[nid] or "(unnamed)"
        v = variant.get((nid, GROUP_KEYS[gid])) if is_task else None
        if v:
            base = f"{base} ({v})"
        for s in range(3):
            table[k * 3 + s] = json.dumps(base + SUFFIX[s])
    return table


def _label_key(model, item, state):
    """(name, lane group, is a task, state) as one integer; variants name tasks only."""
    it = model.items
    group = model.lanes["group"][it["lane"][item]].astype(np.int64)
    is_task = (it["kind"][item] == int(ItemKind.TASK)).astype(np.int64)
    return ((it["name"][item].astype(np.int64) * len(GROUP_KEYS) + group) * 2 + is_task) * 3 \
        + state


def _metadata(model):
    out = []
    for r in sorted({int(x) for x in model.lanes["rank"]}):
        out.append({"name": "process_name", "ph": "M", "pid": r, "args": {"name": f"Rank {r}"}})
    for lane in range(model.n_lanes):
        proc = PROC_GROUP[int(model.lanes["group"][lane])]
        rows = 1 if proc else max(int(model.lanes["rows"][lane]), 1)
        for row in range(rows):
            title = model.lanes["title"][lane] + ("" if row == 0 else f" [{row}]")
            out.append({"name": "thread_name", "ph": "M", "pid": int(model.lanes["rank"][lane]),
                        "tid": int(_tid(lane, row, proc)), "args": {"name": title}})
    return [json.dumps(e, separators=(",", ":")) for e in out]


def _tid(lane, row, proc):
    return np.where(proc, lane, (np.asarray(lane, np.int64) << 16) + 0x8000 + row)


def write(model, out, chunk_rows=CHUNK_ROWS):
    it, lanes = model.items, model.lanes
    labels = _labels(model)
    keys = np.array(sorted(labels), np.int64)
    label_arr = np.array([labels[k] for k in keys.tolist()], dtype=object)
    cats = np.array([json.dumps(k.name.lower()) for k in ItemKind], dtype=object)
    states = np.array([json.dumps(s) for s in STATE], dtype=object)
    prov_args = np.array([""] + [',"provenance":' + json.dumps(p) for p in model.provenances[1:]],
                         dtype=object)
    with atomic_output(out) as tmp, open(tmp, "w", encoding="utf-8") as f:
        f.write("[\n")
        f.write(",\n".join(_metadata(model)))
        for lo in range(0, model.n_items, chunk_rows):
            hi = min(lo + chunk_rows, model.n_items)
            item, t0, t1, state = pieces(model, lo, hi)
            lane = it["lane"][item].astype(np.int64)
            group = lanes["group"][lane].astype(np.int64)
            key = _label_key(model, item, state)
            name = label_arr[np.searchsorted(keys, key)]
            proc = PROC_GROUP[group]
            tid = _tid(lane, it["row"][item].astype(np.int64), proc)
            op = it["op_id"][item]
            has_op = (op != NO_OP) & (op != 0)
            t0, dur = t0.astype(np.int64), (t1 - t0).astype(np.int64)
            cols = (name, cats[it["kind"][item]], t0 // 1000, t0 % 1000, dur // 1000, dur % 1000,
                    lanes["rank"][lane], tid, states[state], prov_args[model.op_provenance(op)],
                    op)
            for template, sel in ((LINE_OP, has_op), (LINE, ~has_op)):
                rows = [c[sel].tolist() for c in cols[:-1 if template is LINE else None]]
                f.write("".join(map(template.__mod__, zip(*rows))))


        f.write("\n]\n")
    return {}
