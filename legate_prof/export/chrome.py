"""Chrome trace JSON (chrome://tracing, Perfetto's UI), shaped like the reference's ``trace``.

pid = rank, tid = lane; processor items split into running / "(waiting)" / "(ready)" pieces as
the reference does, so per name the pieces add up to the same total task time as its
statistics.  Copies, fills, partitions and instances are complete events on their lanes.
Written in chunks of events (one chunk of items in memory at a time).
"""

from __future__ import annotations

import json

import numpy as np

from ..kinds import ItemKind

PROC_KINDS = (ItemKind.TASK, ItemKind.GPU_KERNEL, ItemKind.META, ItemKind.MESSAGE,
              ItemKind.MAPPER_CALL, ItemKind.RUNTIME_CALL, ItemKind.APP_CALL, ItemKind.PROF_TASK)
CHUNK = 1 << 18


def _pieces(model, idx):
    """(item, start, stop, state) of every piece of items ``idx``; state 0 run, 1 wait, 2 ready."""
    it, w = model.items, model.waits
    s, e = it["start"][idx], it["stop"][idx]
    if len(w["item"]) == 0 or len(idx) == 0:
        return idx, s, e, np.zeros(len(idx), np.int8)
    lo = np.searchsorted(w["item"], idx, side="left")
    hi = np.searchsorted(w["item"], idx, side="right")
    has = hi > lo
    plain = ~has
    out = [(idx[plain], s[plain], e[plain], np.zeros(int(plain.sum()), np.int8))]
    wi = np.concatenate([np.arange(a, b) for a, b in zip(lo[has].tolist(), hi[has].tolist())]) \
        if has.any() else np.zeros(0, np.int64)
    if len(wi):
        item = w["item"][wi]
        ws, wr, we = w["start"][wi], w["ready"][wi], w["end"][wi]
        first = np.r_[True, item[1:] != item[:-1]]
        last = np.r_[item[1:] != item[:-1], True]
        prev_end = np.where(first, it["start"][item], np.r_[0, we[:-1]])
        out.append((item, prev_end, np.maximum(ws, prev_end), np.zeros(len(wi), np.int8)))
        out.append((item, ws, wr, np.ones(len(wi), np.int8)))
        out.append((item, wr, we, np.full(len(wi), 2, np.int8)))
        li = item[last]
        out.append((li, we[last], np.maximum(it["stop"][li], we[last]),
                    np.zeros(int(last.sum()), np.int8)))
    return tuple(np.concatenate([o[k] for o in out]) for k in range(4))


def _variant_label(model, name, detail, labels):
    """Index into ``labels`` (extended here) of "name (variant)" for each (name, detail)."""
    pair = name.astype(np.int64) * (len(model.names) + 1) + detail
    uniq, inv = np.unique(pair, return_inverse=True)
    cache = _variant_label.cache
    out = np.empty(len(uniq), np.int64)
    for k, p in enumerate(uniq.tolist()):
        n, d = divmod(p, len(model.names) + 1)
        key = (id(labels), n, d)
        if key not in cache:
            labels.append(json.dumps(f"{model.names[n]} ({model.names[d]})"))
            cache[key] = len(labels) - 1
        out[k] = cache[key]
    return out[inv]


_variant_label.cache = {}


def write_chrome_trace(model, f):
    """Write the trace to the text file ``f``; returns the number of events."""
    it = model.items
    names = [json.dumps(n) for n in model.names]
    variants = []  # labels "name (variant)", index -1 - k in the label column
    suffix = ("", " (waiting)", " (ready)")
    rank_of_lane = model.lanes["rank"]
    f.write('{"displayTimeUnit": "ns", "traceEvents": [\n')
    sep = ""
    count = 0
    for r in sorted({int(x) for x in rank_of_lane.tolist()}):
        f.write(f'{sep}{{"name": "process_name", "ph": "M", "pid": {r}, '
                f'"args": {{"name": "Rank {r}"}}}}')
        sep = ",\n"
    for lane in range(model.n_lanes):
        f.write(f'{sep}{{"name": "thread_name", "ph": "M", "pid": {int(rank_of_lane[lane])}, '
                f'"tid": {lane}, "args": {{"name": {json.dumps(model.lanes["title"][lane])}}}}}')
        f.write(f',\n{{"name": "thread_sort_index", "ph": "M", '
                f'"pid": {int(rank_of_lane[lane])}, "tid": {lane}, '
                f'"args": {{"sort_index": {lane}}}}}')
    is_proc = np.isin(it["kind"], [int(k) for k in PROC_KINDS])
    for lo in range(0, model.n_items, CHUNK):
        hi = min(lo + CHUNK, model.n_items)
        idx = np.arange(lo, hi)
        proc = idx[is_proc[lo:hi]]
        other = idx[~is_proc[lo:hi]]
        item, s, e, state = _pieces(model, proc)
        item = np.concatenate([item, other])
        s = np.concatenate([s, it["start"][other]])
        e = np.concatenate([e, it["stop"][other]])
        state = np.concatenate([state, np.zeros(len(other), np.int8)])
        prov = model.op_provenance(it["op_id"][item])
        lane = it["lane"][item]
        # tasks are "name (variant)", as the reference's trace names them
        is_task = np.isin(it["kind"][item], [int(ItemKind.TASK), int(ItemKind.GPU_KERNEL)])
        label = it["name"][item].astype(np.int64)
        if is_task.any():
            t = np.flatnonzero(is_task & (it["detail"][item] > 0))
            label[t] = -1 - _variant_label(model, it["name"][item][t], it["detail"][item][t],
                                           variants)
        rows = zip(label.tolist(), state.tolist(), (s / 1e3).tolist(),
                   ((e - s) / 1e3).tolist(), rank_of_lane[lane].tolist(), lane.tolist(),
                   it["op_id"][item].tolist(), prov.tolist())
        parts = []
        for name, st, ts, dur, pid, tid, op, pv in rows:
            n = names[name] if name >= 0 else variants[-1 - name]
            if st:
                n = n[:-1] + suffix[st] + '"'
            args = f', "args": {{"op_id": {op}, "provenance": {json.dumps(model.provenances[pv])}}}' \
                if pv else ""
            parts.append(f'{{"name": {n}, "cat": "task", "ph": "X", "ts": {ts:.3f}, '
                         f'"dur": {dur:.3f}, "pid": {pid}, "tid": {tid}{args}}}')
        if parts:
            f.write(sep + ",\n".join(parts))
            sep = ",\n"
        count += len(parts)
    f.write("\n]}\n")
    return count
