"""The profile as flat tables (items, lanes, waits, copies, instances, provenance, ranks).

One schema for every export (Parquet, DuckDB, ``sql``) and documented in docs/export.md.
Items come in chunks, so an export of 10M items holds the model plus one chunk.
"""

from __future__ import annotations

import numpy as np

from ..kinds import GROUP_KEYS, ItemKind

CHUNK = 1 << 20
KIND_NAMES = [k.name.lower() for k in ItemKind]


def _running(model, lo, hi):
    """Running time (total minus waits, calls included) of items lo..hi."""
    it, w = model.items, model.waits
    dur = it["stop"][lo:hi] - it["start"][lo:hi]
    if len(w["item"]) == 0:
        return dur
    a, b = np.searchsorted(w["item"], [lo, hi])
    waited = np.bincount(w["item"][a:b] - lo, weights=(w["end"][a:b] - w["start"][a:b]),
                         minlength=hi - lo)
    return dur - waited.astype(np.int64)


def item_chunks(model, chunk=CHUNK):
    """Dicts of columns for items [lo, hi), ``chunk`` at a time."""
    it = model.items
    rank = model.lanes["rank"]
    for lo in range(0, model.n_items, chunk):
        hi = min(lo + chunk, model.n_items)
        yield {
            "item": np.arange(lo, hi, dtype=np.int64),
            "rank": rank[it["lane"][lo:hi]].astype(np.int32),
            "lane": it["lane"][lo:hi].astype(np.int32),
            "row": it["row"][lo:hi].astype(np.int32),
            "kind": it["kind"][lo:hi].astype(np.int32),
            "name": it["name"][lo:hi].astype(np.int32),
            "start_ns": it["start"][lo:hi], "stop_ns": it["stop"][lo:hi],
            "create_ns": it["create"][lo:hi], "ready_ns": it["ready"][lo:hi],
            "duration_ns": it["stop"][lo:hi] - it["start"][lo:hi],
            "running_ns": _running(model, lo, hi),
            "op_id": it["op_id"][lo:hi],
            "provenance": model.op_provenance(it["op_id"][lo:hi]).astype(np.int32),
        }


def small_tables(model):
    """Every table but items, as dicts of columns (they are small next to items)."""
    lanes = model.lanes
    t, it = model.transfers, model.items
    kind_of = it["kind"][t["item"]] if len(t["item"]) else np.zeros(0, np.uint8)
    copies = np.isin(kind_of, [int(ItemKind.COPY), int(ItemKind.FILL)])
    inst = kind_of == int(ItemKind.INSTANCE)
    ci, ii = t["item"][copies], t["item"][inst]
    dur = np.maximum(it["stop"][ci] - it["start"][ci], 1)
    return {
        "lanes": {
            "lane": np.arange(model.n_lanes, dtype=np.int32),
            "rank": lanes["rank"].astype(np.int32),
            "group": [GROUP_KEYS[g] for g in lanes["group"].tolist()],
            "short_name": list(lanes["name"]), "long_name": list(lanes["title"]),
            "capacity_bytes": lanes["capacity"].astype(np.int64),
            "rows": lanes["rows"].astype(np.int32),
        },
        "names": {"name": np.arange(len(model.names), dtype=np.int32),
                  "text": list(model.names)},
        "kinds": {"kind": np.arange(len(KIND_NAMES), dtype=np.int32), "text": KIND_NAMES},
        "waits": {"item": model.waits["item"].astype(np.int64),
                  "start_ns": model.waits["start"], "ready_ns": model.waits["ready"],
                  "end_ns": model.waits["end"]},
        "copies": {"item": ci.astype(np.int64),
                   "kind": [KIND_NAMES[k] for k in kind_of[copies].tolist()],
                   "bytes": t["size"][copies].astype(np.int64),
                   "src_memory": t["src"][copies], "dst_memory": t["dst"][copies],
                   "start_ns": it["start"][ci], "stop_ns": it["stop"][ci],
                   "bandwidth_gbs": t["size"][copies].astype(np.float64) / dur},
        "instances": {"item": ii.astype(np.int64), "bytes": t["size"][inst].astype(np.int64),
                      "memory": t["dst"][inst], "instance": t["inst"][inst],
                      "ready_ns": it["start"][ii], "destroy_ns": it["stop"][ii],
                      "create_ns": it["create"][ii]},
        "provenance": {"provenance": np.arange(len(model.provenances), dtype=np.int32),
                       "text": list(model.provenances)},
        "ranks": {"rank": np.array([r["rank"] for r in model.ranks], np.int32),
                  "file": [str(r.get("file", "")) for r in model.ranks],
                  "hostname": [str(r.get("hostname", "")) for r in model.ranks],
                  "legion_version": [str(r.get("legion_version", "")) for r in model.ranks],
                  "zero_time_ns": np.array([int(r.get("zero_time", 0)) for r in model.ranks],
                                           np.int64)},
        "groups": {
            "rank": np.array([r for (r, _g) in model.extra.get("busy_ns", {})], np.int32),
            "group": [g for (_r, g) in model.extra.get("busy_ns", {})],
            "busy_ns": np.array(list(model.extra.get("busy_ns", {}).values()), np.int64),
        },
    }


TABLE_NAMES = ("items", "lanes", "names", "kinds", "waits", "copies", "instances",
               "provenance", "ranks", "groups")
