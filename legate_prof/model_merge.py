"""Merge the models of single ranks (built in parallel, or per-rank bundles) into one.

Each rank's model already has its lanes, rows, waits and utilization; merging renumbers string
ids (names, provenances), offsets lane and item indices, and concatenates.  Lanes must come out
in the order one build of all files would give them — (rank, group, ref, ref2) — and no lane may
appear in two ranks' models (a channel whose copies were recorded on two nodes would need its
rows stacked together): ``merge_models`` raises ``CannotMerge`` then, and the caller builds all
files at once instead.
"""

from __future__ import annotations

import numpy as np

from .lane_layout import lane_table
from .record_items import dedup
from .rank_files import cross_file_problems
from .trace_model import TraceModel


class CannotMerge(Exception):
    """These models cannot be concatenated into what one build would give."""


def _union_strings(tables):
    """One string table for several; per table, the array mapping its ids to the union's."""
    index, strings, remaps = {}, [], []
    for table in tables:
        remap = np.empty(len(table), np.int64)
        for i, s in enumerate(table):
            j = index.get(s)
            if j is None:
                j = index[s] = len(strings)
                strings.append(s)
            remap[i] = j
        remaps.append(remap)
    return strings, remaps


def _concat(dicts, key, shift=None):
    parts = [d[key] if shift is None else d[key].astype(np.int64) + s
             for d, s in zip(dicts, shift if shift is not None else [0] * len(dicts))]
    return np.concatenate(parts)


def merge_models(models) -> TraceModel:
    """One model of all ranks from models of one or more ranks each (ranks disjoint)."""
    if len(models) == 1:
        return models[0]
    if len({m.stacked for m in models}) != 1:
        raise CannotMerge("stacked and unstacked models")
    ranks_seen = [{int(r) for r in np.unique(m.lanes["rank"]).tolist()} for m in models]
    if sum(len(r) for r in ranks_seen) != len(set().union(*ranks_seen)):
        raise CannotMerge("a rank's lanes are in two models")
    order = sorted(range(len(models)), key=lambda k: min(ranks_seen[k], default=1 << 30))
    models = [models[k] for k in order]
    # lanes of one model must all precede the next's in (rank, ...) order
    bounds = [(min(r, default=0), max(r, default=-1)) for r in (ranks_seen[k] for k in order)]
    for (a0, a1), (b0, b1) in zip(bounds, bounds[1:]):
        if a1 >= 0 and b1 >= 0 and a1 >= b0:
            raise CannotMerge("ranks of two models interleave")

    names, name_maps = _union_strings([m.names for m in models])
    provs, prov_maps = _union_strings([m.provenances for m in models])
    item_off = np.cumsum([0] + [m.n_items for m in models])
    lane_off = np.cumsum([0] + [m.n_lanes for m in models])

    items = {}
    for c in models[0].items:
        if c in ("name", "detail"):
            items[c] = np.concatenate([nm[m.items[c]].astype(m.items[c].dtype)
                                       for m, nm in zip(models, name_maps)])
        elif c == "lane":
            items[c] = np.concatenate([m.items[c].astype(np.int64) + o for m, o in
                                       zip(models, lane_off[:-1])]).astype(np.int32)
        else:
            items[c] = np.concatenate([m.items[c] for m in models])

    waits = {k: (_concat([m.waits for m in models], k, item_off[:-1]) if k == "item"
                 else _concat([m.waits for m in models], k)) for k in models[0].waits}
    transfers = {k: (_concat([m.transfers for m in models], k, item_off[:-1]) if k == "item"
                     else _concat([m.transfers for m in models], k))
                 for k in models[0].transfers}

    ops_all = {k: np.concatenate([m.ops[k] if k != "provenance" else pm[m.ops[k]]
                                  for m, pm in zip(models, prov_maps)])
               for k in models[0].ops}
    first = np.unique(ops_all["op_id"], return_index=True)[1]  # the first rank's copy wins
    ops = {k: v[first] for k, v in ops_all.items()}
    ops["provenance"] = ops["provenance"].astype(np.int32)

    procs = dedup({k: np.concatenate([m.procs[k] for m in models])
                   for k in ("proc_id", "kind", "rank")}, "proc_id")
    mems = dedup({k: np.concatenate([m.mems[k] for m in models])
                  for k in ("mem_id", "kind", "capacity", "rank")}, "mem_id")

    key_dtype = np.dtype([("rank", "<i4"), ("group", "<i2"), ("ref", "<u8"), ("ref2", "<u8")])
    lane_tab = np.empty(int(lane_off[-1]), key_dtype)
    for k in ("rank", "group", "ref", "ref2"):
        lane_tab[k] = np.concatenate([m.lanes[k] for m in models])
    lanes = lane_table(lane_tab, np.concatenate([m.lanes["rows"] for m in models]), procs, mems)
    lanes["capacity"] = np.concatenate([m.lanes["capacity"] for m in models])

    ranks = [r for m in models for r in m.ranks]
    # warnings about the set of files are made again over all ranks (a rank's bundle has its own)
    warnings = [w for m in models for w in m.warnings
                if w not in set(cross_file_problems(m.ranks))] + cross_file_problems(ranks)
    variants = {(int(nm[n]), g): v for m, nm in zip(models, name_maps)
                for (n, g), v in m.variant_by_name_group.items()}
    ends = [m.runtime_end_ns for m in models if m.runtime_end_ns is not None]
    return TraceModel(
        items=items, lanes=lanes, names=names, ops=ops, provenances=provs, waits=waits,
        transfers=transfers, ranks=ranks, procs=procs, mems=mems,
        utilization_steps={k: v for m in models for k, v in m.utilization_steps.items()},
        busy_ns={k: v for m in models for k, v in m.busy_ns.items()},
        variant_by_name_group=variants, runtime_end_ns=max(ends) if ends else None,
        warnings=warnings, markers=[mk for m in models for mk in m.markers],
        sources=[s for m in models for s in m.sources], stacked=models[0].stacked)
