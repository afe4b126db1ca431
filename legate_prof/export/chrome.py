"""Chrome trace JSON (the Trace Event Format), like the reference's ``legion_prof trace``.

A JSON list of complete events (``ph: "X"``, microseconds): pid = rank, one thread (tid) per
row of each lane, named ``Lane`` for row 0 and ``Lane · row N`` after.  The format requires the
slices of one thread to nest or be disjoint (Perfetto drops those that cross), and a lane's rows
are laid out so that no two items of one row overlap; a lane on one thread would break the rule
wherever items cross (kernels on concurrent streams) and wherever a task running during
another's wait straddles that wait's pieces.  Tasks with waits are split as the reference does:
running pieces named ``Name (Variant)``, then ``... (waiting)`` from the wait's start to its
ready time and ``... (ready)`` up to its end; piece bounds are kept in order inside the item
(a damaged wait is clamped), so the pieces of a task tile its [start, stop].  Lines are
%-formatted from whole columns (``map`` over column tuples).
"""

from __future__ import annotations

import json

import numpy as np

from legate_prof.model.kinds import GROUP_KEYS, ItemKind
from legate_prof.export.threads import row_offsets, thread_name
from legate_prof.output_file import atomic_output

CHUNK_ROWS = 1 << 18
NO_OP = np.uint64(0xFFFFFFFFFFFFFFFF)
RUNNING, WAITING, READY = 0, 1, 2
SUFFIX = ("", " (waiting)", " (ready)")
STATE = ("running", "waiting", "ready")


# one event per line; %-formatting runs in C for each tuple of column values
LINE = (',\n{"name":%s,"cat":%s,"ph":"X","ts":%d.%03d,"dur":%d.%03d,"pid":%d,"tid":%d,'
        '"args":{"state":%s%s}}')
LINE_OP = LINE[:-2] + ',"op_id":%d}}'


def pieces(model, lo, hi):
    """(item, t0, t1, state) of items [lo, hi), by item: one running piece for an item without
    waits; for each wait a running piece up to it, a waiting and a ready piece; a last running
    piece.  The bounds (start, each wait's start, ready and end, stop) are clamped into
    [start, stop] and kept in order, so an item's pieces never overlap and tile it."""
    it, w = model.items, model.waits
    a, b = np.searchsorted(w["item"], [lo, hi])
    n, k = hi - lo, int(b - a)
    start = it["start"][lo:hi].astype(np.int64)
    stop = np.maximum(it["stop"][lo:hi].astype(np.int64), start)
    wi = (w["item"][a:b] - lo).astype(np.int64)
    # bounds: each item's start (key -1), its waits' (start, ready, end) (keys 3p, 3p+1, 3p+2
    # for the p-th wait of the slice: waits are in order within an item), its stop (last)
    item = np.concatenate([np.arange(n), np.repeat(wi, 3), np.arange(n)])
    key = np.concatenate([np.full(n, -1), np.arange(3 * k), np.full(n, 3 * k)])
    t = np.concatenate([start, np.stack([w["start"][a:b], w["ready"][a:b], w["end"][a:b]],
                                        axis=1).ravel().astype(np.int64), stop])
    order = np.lexsort((key, item))
    item, key = item[order], key[order]
    t = np.clip(t[order], start[item], stop[item])
    _keep_in_order(item, t)
    same = item[1:] == item[:-1]  # a piece from each bound to the next one of the same item
    state = np.where(key < 0, RUNNING, np.array([WAITING, READY, RUNNING])[key % 3])
    return (item[:-1][same] + lo, t[:-1][same], t[1:][same],
            state[:-1][same].astype(np.int8))


def _keep_in_order(item, t):
    """Make each item's bounds non-decreasing, in place (only damaged waits need it: the items
    where a bound goes back are few, and fixed one by one)."""
    back = np.flatnonzero((t[1:] < t[:-1]) & (item[1:] == item[:-1]))
    for i in np.unique(item[back + 1]).tolist():
        lo, hi = np.searchsorted(item, [i, i + 1])
        t[lo:hi] = np.maximum.accumulate(t[lo:hi])


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


def _metadata(model, base):
    out = []
    for r in sorted({int(x) for x in model.lanes["rank"]}):
        out.append({"name": "process_name", "ph": "M", "pid": r, "args": {"name": f"Rank {r}"}})
        out.append({"name": "process_sort_index", "ph": "M", "pid": r,
                    "args": {"sort_index": r}})
    for lane in range(model.n_lanes):
        pid = int(model.lanes["rank"][lane])
        for row in range(int(base[lane + 1] - base[lane])):
            tid = int(base[lane]) + row
            out.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                        "args": {"name": thread_name(model.lanes["title"][lane], row)}})
            out.append({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid,
                        "args": {"sort_index": tid}})
    return [json.dumps(e, separators=(",", ":")) for e in out]


def write(model, out, chunk_rows=CHUNK_ROWS):
    model = model.as_stacked()  # rows are read from the items
    it, lanes = model.items, model.lanes
    base = row_offsets(model) + 1  # thread ids from 1
    labels = _labels(model)
    keys = np.array(sorted(labels), np.int64)
    label_arr = np.array([labels[k] for k in keys.tolist()], dtype=object)
    cats = np.array([json.dumps(k.name.lower()) for k in ItemKind], dtype=object)
    states = np.array([json.dumps(s) for s in STATE], dtype=object)
    prov_args = np.array([""] + [',"provenance":' + json.dumps(p) for p in model.provenances[1:]],
                         dtype=object)
    with atomic_output(out) as tmp, open(tmp, "w", encoding="utf-8") as f:
        f.write("[\n")
        f.write(",\n".join(_metadata(model, base)))
        for lo in range(0, model.n_items, chunk_rows):
            hi = min(lo + chunk_rows, model.n_items)
            item, t0, t1, state = pieces(model, lo, hi)
            lane = it["lane"][item].astype(np.int64)
            key = _label_key(model, item, state)
            name = label_arr[np.searchsorted(keys, key)]
            tid = base[lane] + it["row"][item].astype(np.int64)
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
