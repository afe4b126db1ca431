"""Idle time explained (``idle_gaps``) rank by rank: each rank's worker explains what it can
of its own stretches, and the parent only what rests on other ranks.

A rank's worker (``rank_idle``, right after it built the rank's model) finds its processors'
idle stretches, links the rank alone (``causality.rank_links.RankPass``) and sums, by lane
group and by source line, the stretches whose explanation is its own.  It leaves for the
parent (``idle_of_ranks``) the stretches that are not: an item whose link rests on another
rank (residual), an item whose operation another rank describes (its source line is there)
— and the tables the join needs (``RankTables``: items by event, closed vertices, what it
left open; its operations).

Exact, as ``idle_gaps`` over all ranks, where Realm's and Legion's ids say where a thing is:
an event on the node that made it (``rank_links`` checks what it relies on), an operation
described by one rank only (the parent checks the ranks' operation ids).  A worker's job of
several ranks (many small ranks: runs of consecutive ranks, ``rank_workers.rank_jobs``) is
explained as one rank is: its ranks' events and operations are its own.
Where a rank's worker finds otherwise — or the ranks cannot be joined, or a GPU kernel's
task is on another node — ``idle_of_ranks`` says None and the caller explains the idle time
over all ranks at once (``idle_gaps``).
"""

from __future__ import annotations

import numpy as np

from legate_prof.analyze.idle_gaps import WAITS, classes, lane_gaps
from legate_prof.model.item_parts import ItemPart
from legate_prof.model.kinds import GROUP_KEYS, ItemKind
from legate_prof.causality.event_graph import sorted_unique
from legate_prof.causality.link_rules import NO_ROW
from legate_prof.causality.rank_links import (Join, OwnNodes, RankPass, RankTables, nodes_of,
                                          residual_of)
from legate_prof.model.sort_order import unique_with

PREPARE = "legate_prof.analyze.idle_ranks:rank_idle"  # what a rank's worker runs (``load``)
# what a copy of the process begins on a model built in it (``load.early_analysis``)
EARLY = "legate_prof.analyze.idle_ranks:idle_of_model"
N = len(WAITS)
_GROUPS = 64  # (a group key: rank * 64 + lane group)


def rank_idle(model) -> dict:
    """What a rank's worker leaves for the parent, as named arrays (see above)."""
    nodes = nodes_of(model)
    rp = RankPass(ItemPart(model, 0, 0, None, None), nodes)
    it, lanes = model.items, model.lanes
    sel, start, before, first, lane = lane_gaps(model)
    idle = start - before  # (a lane's first: from its rank's first start)
    keep = np.flatnonzero(idle > 0)  # (taken at once: fewer passes than a mask)
    sel, idle, lane = sel[keep], idle[keep], lane[keep]
    key = lanes["rank"][lane].astype(np.int64) * _GROUPS + lanes["group"][lane]
    rows, kernel_outside = _row_items(rp, sel, it, OwnNodes(nodes))
    rp.link(sorted_unique(rows))
    residual = np.zeros(model.n_items, bool)
    residual[rp.residual.items] = True
    residual = residual[rows]
    cls = _local_classes(rp, rows, it, lanes)
    prov = _provenances(model, sel)
    done = ~residual & (prov >= 0)
    out = rp.tables.arrays()
    cls_done, idle_done = cls[done], idle[done].astype(np.float64)
    out["by_key_keys"], out["by_key_sums"] = _sum_rows(key[done], cls_done, idle_done)
    out["by_prov_keys"], out["by_prov_sums"] = _sum_rows(prov[done], cls_done, idle_done)
    rest = np.flatnonzero(~done)
    out.update(rest_row=rows[rest], rest_value=idle[rest], rest_key=key[rest],
               rest_prov=prov[rest],
               rest_op=it["op_id"][sel[rest]], rest_cls=np.where(residual, -1, cls)[rest])
    res = residual_of(sorted_unique(rows[rest][residual[rest]]), model)
    out.update(res_items=res.items, res_pre=res.pre, res_creator=res.creator,
               res_fevent=res.fevent)
    lane_keys, lane_counts = unique_with(lanes["rank"].astype(np.int64) * _GROUPS
                                         + lanes["group"], counts=True)
    out.update(lane_keys=lane_keys, lane_counts=lane_counts,
               extent=np.array(model.extent(), np.int64),
               state=np.array([kernel_outside], np.int64))
    return out


def _row_items(rp, sel, it, own):
    """The item whose row explains each stretch: itself, a GPU kernel's task (whether some
    kernel's task is on another node, where this rank cannot read its row)."""
    rows = sel.copy()
    kernel = np.flatnonzero(it["kind"][sel] == ItemKind.GPU_KERNEL)
    creator = it["creator"][sel[kernel]]
    task = rp.tables.items.find(creator, "entry")
    rows[kernel[task >= 0]] = task[task >= 0]
    return rows, bool(own.foreign(creator).any())


def _local_classes(rp, rows, it, lanes):
    """``idle_gaps.classes`` of the rows this rank linked."""
    via, target = rp.rows.via[rows], rp.rows.target[rows]
    t = np.maximum(target, 0).astype(np.intp)  # (an index: converted once)
    return classes(via, target, it["kind"][t], lanes["group"][it["lane"][t]])


def _provenances(model, sel):
    """Each stretch's source line: the provenance id of its operation here (0: none), -1
    where this rank does not describe the operation (another may)."""
    op = np.asarray(model.items["op_id"][sel], np.uint64)
    ids = np.asarray(model.ops["op_id"], np.uint64)
    out = np.zeros(len(op), np.int64)
    k = np.flatnonzero(op)  # (0: no operation)
    if len(ids) and len(k):
        pos = np.minimum(np.searchsorted(ids, op[k]), len(ids) - 1)
        found = ids[pos] == op[k]
        out[k] = np.where(found, np.asarray(model.ops["provenance"])[pos], -1)
    return out


def _described_once(models):
    """Whether no operation is described by two of ``models`` (each a rank's, or a job's of
    several ranks: their ids, not how Legion numbers a node's, tell)."""
    ids = np.sort(np.concatenate([np.asarray(m.ops["op_id"], np.uint64) for m in models]
                                 or [np.zeros(0, np.uint64)]))
    return not np.any(ids[1:] == ids[:-1])


def _sum_rows(key, cls, idle):
    """(the keys present, sorted; idle ns by (key, wait): a row of ``len(WAITS)`` each) —
    the keys present only: a row for every key up to rank * 64 made rank 999's table 64,000
    rows, and 1,000 ranks' tables 3 GB."""
    keys, at = unique_with(np.asarray(key, np.int64), inverse=True)
    sums = np.bincount(at * N + cls, weights=np.asarray(idle, np.float64),
                       minlength=len(keys) * N)
    return keys, sums.reshape(len(keys), N)


# -- the parent ------------------------------------------------------------------------------

def explain_idle(profile, whole=True) -> dict:
    """``idle_gaps.idle_gaps`` of ``profile``, from what its ranks' workers prepared where
    they did (``load_profile(..., prepare=PREPARE)``: a ``RankSet``) and that tells;
    ``whole=False``: the ranks hold too little for ``idle_gaps`` (``stats.PREPARE``), None
    where what the workers prepared does not tell."""
    from legate_prof.assemble.rank_set import RankSet
    from legate_prof.load.rank_workers import prepared_of
    from legate_prof.query import as_source
    if isinstance(profile, RankSet):
        models = profile.rank_models()  # (each with its own operations)
        prepared = [prepared_of(m) for m in models]
        parts = profile.item_parts()
        if (len(parts) > 1 or not whole) and all(p is not None for p in prepared):
            offsets = [p.item_off for p in parts] + [parts[-1].item_off
                                                     + parts[-1].model.n_items]
            got = idle_of_ranks(prepared, models, offsets, profile.summary_model().extent())
            if got is not None:
                return got
    return shared_idle_gaps(as_source(profile)) if whole else None


def shared_idle_gaps(source):
    """``idle_gaps(source)``, once per source: the report's statistics and its findings
    (``insights``) explain the same idle time — as a copy of this process worked it out
    while the model was built (``load_profile(..., early=EARLY)``), where one did."""
    from legate_prof.analyze.idle_gaps import idle_gaps
    from legate_prof.load.early_analysis import early_answer_of
    return source.computed_once("idle_gaps",
                                lambda: early_answer_of(source, EARLY) or idle_gaps(source))


def idle_of_model(model) -> dict:
    """``idle_gaps`` of one model (``EARLY``: it reads no waits, utilization or warnings)."""
    from legate_prof.analyze.idle_gaps import idle_gaps
    from legate_prof.query import as_source
    return idle_gaps(as_source(model))


def idle_of_ranks(prepared, models, offsets, extent):
    """``idle_gaps``' JSON from the ranks' ``rank_idle`` (``models``: the ranks' own, with
    their operations; ``offsets``: their first items in the profile's numbering; ``extent``:
    the run's first start and last stop), or None where only all ranks at once can tell."""
    tables = [RankTables.from_arrays(p, m) for p, m in zip(prepared, models)]
    if any(int(p["state"][0]) for p in prepared) or not _described_once(models):
        return None  # (a kernel's task on another node; an operation two ranks describe)
    join = Join(tables, offsets)
    if not join.ok:
        return None
    run_start, run_stop = (int(x) for x in extent)
    by_key = [(p["by_key_keys"], p["by_key_sums"]) for p in prepared]
    by_prov = [(k, p["by_prov_keys"], p["by_prov_sums"])  # (by each rank's string ids)
               for k, p in enumerate(prepared)]
    linked = _residual_classes(join, prepared) if join.has_data else None
    for k, p in enumerate(prepared):
        key, cls, idle, table, prov = _rest(k, p, models, linked)
        by_key.append(_sum_rows(key, cls, idle))
        for t in sorted_unique(table).tolist():
            by_prov.append((t, *_sum_rows(prov[table == t], cls[table == t],
                                          idle[table == t])))
    lanes = {}
    for p in prepared:
        for k, n in zip(np.asarray(p["lane_keys"]).tolist(),
                        np.asarray(p["lane_counts"]).tolist()):
            lanes[k] = lanes.get(k, 0) + n
    lines = {}
    for t, ids, sums in by_prov:
        strings = models[t].provenances
        for j in np.flatnonzero((np.asarray(ids) > 0) & np.asarray(sums).any(axis=1)):
            name = str(strings[int(ids[j])])
            lines[name] = lines.get(name, 0) + sums[j]
    keys = {}
    for ids, sums in by_key:
        for j in np.flatnonzero(np.asarray(sums).any(axis=1)):
            keys[int(ids[j])] = keys.get(int(ids[j]), 0) + sums[j]
    if not join.has_data:  # (no event graph anywhere: nothing is explained)
        for table in (keys, lines):
            for name, row in table.items():
                table[name] = np.eye(N)[WAITS.index("unknown")] * row.sum()
    return {"span_ns": [run_start, run_stop], "waits": list(WAITS),
            "groups": _groups(keys, lanes), "by_provenance": _lines(lines)}


def _rest(k, p, models, linked):
    """(group key, wait, idle ns, the rank whose source lines, source line) of rank ``k``'s
    stretches left to the parent: the residual ones linked over all ranks (``linked``:
    ``_residual_classes``; None: no event graph, nothing known), the source lines another
    rank describes."""
    idle = np.asarray(p["rest_value"], np.int64)
    cls = np.array(p["rest_cls"], np.int64)  # (a copy: filled in below)
    todo = np.flatnonzero(cls < 0)
    if len(todo):
        if linked is None:
            cls[todo] = WAITS.index("unknown")
        else:
            items, linked_cls = linked[k]
            cls[todo] = linked_cls[np.searchsorted(items, np.asarray(p["rest_row"])[todo])]
    table, prov = _lines_of(np.asarray(p["rest_prov"], np.int64),
                            np.asarray(p["rest_op"], np.uint64), k, models)
    return np.asarray(p["rest_key"], np.int64), cls, idle, table, prov


def _residual_classes(join, prepared):
    """``classes`` of every rank's residual items, linked over all ranks in one pass (a
    pass per rank of 1,000 was most of the parent's time): per rank, (its residual items,
    sorted; their classes)."""
    offsets = join.lookups.offsets
    items = [np.asarray(p["res_items"], np.int64) for p in prepared]

    def joined(f):
        return np.concatenate([np.asarray(p[f], np.uint64) for p in prepared])
    ids = np.concatenate([it + offsets[k] for k, it in enumerate(items)])
    linked, _ = join.link_ids(ids, joined("res_pre"), joined("res_creator"),
                              joined("res_fevent"))
    via, target = linked.via, linked.target
    t = np.maximum(target, 0)
    kind = np.where(target >= 0, join.lookups.column("kind", t), 0)
    group = np.where(target >= 0, join.lookups.column("group", t), 0)
    cls = classes(via, np.where(via == NO_ROW, -1, target), kind, group)
    bounds = np.cumsum([0] + [len(it) for it in items])
    return [(items[k], cls[bounds[k]:bounds[k + 1]]) for k in range(len(items))]


def _lines_of(prov, op, k, models):
    """(the rank whose string table, its provenance id) of each stretch's source line: rank
    ``k``'s own, or that of the rank that describes its operation (at most one:
    ``_described_once``; none: no line)."""
    table = np.full(len(prov), k, np.int64)
    prov = prov.copy()
    todo = np.flatnonzero(prov < 0)
    prov[todo] = 0
    for j, m in enumerate(models):
        ids = np.asarray(m.ops["op_id"], np.uint64)
        if len(todo) == 0 or len(ids) == 0:
            continue
        pos = np.minimum(np.searchsorted(ids, op[todo]), len(ids) - 1)
        hit = ids[pos] == op[todo]
        table[todo[hit]] = j
        prov[todo[hit]] = np.asarray(m.ops["provenance"])[pos[hit]]
        todo = todo[~hit]
    return table, prov


def _groups(by_key, lanes):
    out = []
    for k in sorted(by_key):
        row = np.clip(np.nan_to_num(by_key[k]), 0, 2.0**62).astype(np.int64)
        out.append({"rank": int(k // _GROUPS), "kind": GROUP_KEYS[int(k % _GROUPS)],
                    "lanes": int(lanes.get(k, 0)),
                    "idle_ns": int(row.sum()), "by_wait": dict(zip(WAITS, row.tolist()))})
    return out


def _lines(by_line, top=20):
    rows = []
    for name, sums in by_line.items():
        if not name:
            continue
        row = np.clip(np.nan_to_num(sums), 0, 2.0**62).astype(np.int64)
        rows.append({"provenance": name, "idle_ns": int(row.sum()),
                     "by_wait": dict(zip(WAITS, row.tolist()))})
    rows.sort(key=lambda r: (-r["idle_ns"], r["provenance"]))
    return rows[:top]
