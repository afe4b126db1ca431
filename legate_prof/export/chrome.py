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
%-formatted from whole columns (``map`` over column tuples).  The run's critical path is a
flow per step (``ph`` "s" in the predecessor's piece, "f" in the item's: ``flow_lines``).
"""

from __future__ import annotations

import json

import numpy as np

from legate_prof.model.kinds import GROUP_KEYS, ItemKind
from legate_prof.export.critical import path_flows
from legate_prof.export.tables import CATEGORY_NAMES, item_categories
from legate_prof.export.threads import row_offsets, thread_name
from legate_prof.model.sort_order import lex_order, unique_values
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
FLOW = ',\n{"name":"critical path","cat":"critical_path","ph":"%s",%s"id":%d,"ts":%d.%03d,' \
    '"pid":%d,"tid":%d%s}'


def pieces(model, lo, hi):
    """(item, t0, t1, state) of items [lo, hi), by item: one running piece for an item without
    waits; for each wait a running piece up to it, a waiting and a ready piece; a last running
    piece.  The bounds (start, each wait's start, ready and end, stop) are clamped into
    [start, stop] and kept in order, so an item's pieces never overlap and tile it."""
    it, w = model.items, model.waits
    a, b = np.searchsorted(w["item"], [lo, hi])
    item, t0, t1, state = _tile(it["start"][lo:hi], it["stop"][lo:hi],
                                (w["item"][a:b] - lo).astype(np.int64),
                                w["start"][a:b], w["ready"][a:b], w["end"][a:b])
    return item + lo, t0, t1, state


def pieces_of(model, ids):
    """``pieces`` of the items ``ids`` (sorted, distinct)."""
    it, w = model.items, model.waits
    ids = np.asarray(ids, np.int64)
    a, b = np.searchsorted(w["item"], ids), np.searchsorted(w["item"], ids + 1)
    rows = np.repeat(a - np.cumsum(np.concatenate([[0], (b - a)[:-1]])), b - a) \
        + np.arange(int((b - a).sum()))
    local = np.repeat(np.arange(len(ids)), b - a)
    item, t0, t1, state = _tile(it["start"][ids], it["stop"][ids], local, w["start"][rows],
                                w["ready"][rows], w["end"][rows])
    return ids[item], t0, t1, state


def _tile(start, stop, wi, ws, wr, we):
    """``pieces`` of n items (``start``, ``stop``) whose waits (start, ready, end), in order
    within an item, belong to items ``wi`` (0..n-1): (item 0..n-1, t0, t1, state)."""
    n, k = len(start), len(wi)
    start = start.astype(np.int64)
    stop = np.maximum(stop.astype(np.int64), start)
    # bounds: each item's start (key -1), its waits' (start, ready, end) (keys 3p, 3p+1, 3p+2
    # for the p-th wait of the slice: waits are in order within an item), its stop (last)
    item = np.concatenate([np.arange(n), np.repeat(wi, 3), np.arange(n)])
    key = np.concatenate([np.full(n, -1), np.arange(3 * k), np.full(n, 3 * k)])
    t = np.concatenate([start, np.stack([ws, wr, we], axis=1).ravel().astype(np.int64), stop])
    order = lex_order((key, item))
    item, key = item[order], key[order]
    t = np.clip(t[order], start[item], stop[item])
    _keep_in_order(item, t)
    same = item[1:] == item[:-1]  # a piece from each bound to the next one of the same item
    state = np.where(key < 0, RUNNING, np.array([WAITING, READY, RUNNING])[key % 3])
    return (item[:-1][same], t[:-1][same], t[1:][same], state[:-1][same].astype(np.int8))


def flow_lines(model, base):
    """The run's critical path as flow events, a line each: one in the predecessor's piece
    that runs up to its end on the path, one in the item's piece where it begins on the path.

    A reader (Perfetto, chrome://tracing) takes events in time order and binds a flow event
    ("s" starts a flow, "f" with ``bp`` "e" ends it) to the slice open on its thread at its
    time; an "f" before its "s" is dropped.  So each event sits strictly inside its piece
    (the predecessor's: before its end on the path), and the earlier of the two is the "s":
    the predecessor's, since the path's pieces never overlap — the item's only where two
    nodes' clocks put the whole predecessor after the item went on."""
    f = path_flows(model)
    if not len(f):
        return ""
    ids = unique_values(np.concatenate([f.pred, f.item]))
    p_item, t0, t1, _ = pieces_of(model, ids)
    a, b = _piece_at(p_item, t0, t1, f.pred, f.pred_end - 1)
    upto = np.clip(f.pred_end, a, b)
    pred_t = np.where(upto - a >= 2, a + (upto - a) // 2, a + (b - a) // 2)
    c, d = _piece_at(p_item, t0, t1, f.item, f.item_begin)
    item_t = np.maximum(c + (d - c) // 2, pred_t + 1)
    item_t = np.where(item_t < d, item_t, c + (d - c) // 2)
    pred_first = pred_t < item_t
    it, lanes = model.items, model.lanes
    k = np.arange(1, len(f) + 1)
    via = np.array([',"args":{"via":%s}' % json.dumps(v) for v in f.via], dtype=object)
    lines = []
    for ph, bind, first in (("s", "", True), ("f", '"bp":"e",', False)):
        items = np.where(pred_first == first, f.pred, f.item)
        t = np.where(pred_first == first, pred_t, item_t)
        lane = it["lane"][items].astype(np.int64)
        args = via if first else np.full(len(f), "", dtype=object)
        lines.append(zip([ph] * len(f), [bind] * len(f), k.tolist(), (t // 1000).tolist(),
                         (t % 1000).tolist(), lanes["rank"][lane].tolist(),
                         (base[lane] + it["row"][items].astype(np.int64)).tolist(), args))
    return "".join(FLOW % row for rows in lines for row in rows)


def _piece_at(p_item, t0, t1, items, times):
    """(t0, t1) of the piece of each of ``items`` (in ``pieces`` sorted by item) that holds
    ``times``: the last to begin by then; the item's first piece if none has."""
    n_p, n_q = len(p_item), len(items)
    key_item = np.concatenate([p_item, items])
    key_t = np.concatenate([t0, times])
    tag = np.concatenate([np.zeros(n_p, np.int8), np.ones(n_q, np.int8)])  # pieces first
    order = lex_order((tag, key_t, key_item))
    last = np.maximum.accumulate(np.where(order < n_p, order, -1))
    at = np.empty(n_q, np.int64)
    is_q = order >= n_p
    at[order[is_q] - n_p] = last[is_q]
    first = np.searchsorted(p_item, items)
    bad = (at < 0) | (p_item[np.maximum(at, 0)] != items)
    at = np.where(bad, first, at)
    return t0[at], t1[at]


def _keep_in_order(item, t):
    """Make each item's bounds non-decreasing, in place (only damaged waits need it: the items
    where a bound goes back are few, and fixed one by one)."""
    back = np.flatnonzero((t[1:] < t[:-1]) & (item[1:] == item[:-1]))
    for i in unique_values(item[back + 1]).tolist():
        lo, hi = np.searchsorted(item, [i, i + 1])
        t[lo:hi] = np.maximum.accumulate(t[lo:hi])


def _labels(model):
    """JSON-quoted event name per (name id, group, state): 'Name (Variant)' + state suffix."""
    variant = model.variant_by_name_group
    n_groups = len(GROUP_KEYS)
    table = {}
    # chunk by chunk: no item-sized temporaries
    pairs = unique_values(np.concatenate([np.zeros(0, np.int64)] + [
        unique_values(_label_key(model, np.arange(lo, min(lo + CHUNK_ROWS, model.n_items)), 0) // 3)
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
    cats = np.array([json.dumps(k) for k in CATEGORY_NAMES], dtype=object)
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
            cols = (name, cats[item_categories(it["kind"][item], op)], t0 // 1000, t0 % 1000, dur // 1000, dur % 1000,
                    lanes["rank"][lane], tid, states[state], prov_args[model.op_provenance(op)],
                    op)
            for template, sel in ((LINE_OP, has_op), (LINE, ~has_op)):
                rows = [c[sel].tolist() for c in cols[:-1 if template is LINE else None]]
                f.write("".join(map(template.__mod__, zip(*rows))))


        f.write(flow_lines(model, base))
        f.write("\n]\n")
    return {}
