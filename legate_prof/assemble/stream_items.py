"""Items from the runtime's crash-safe event stream (operations, arrays), for runs that died
before Legion wrote its logs."""

from __future__ import annotations

import numpy as np

from legate_prof.model.kinds import GROUP_INDEX, ItemKind, MemKind, node_of_id

RUNTIME_OP_BASE = 1 << 62
RANK_SHIFT = 40  # a rank's stream numbers its operations and arrays from BASE + rank << 40


def _first_op(rank):
    """The first op id of a rank's stream: ids depend on the rank alone, so a rank's bundle
    and a build of all ranks give its items the same ids."""
    return RUNTIME_OP_BASE + ((int(rank) & 0xFFFF) << RANK_SHIFT)


def add_stream_items(streams, ranks, items, names, mems):
    """Operations and arrays from the runtime's event streams, as timeline items."""
    from legate_prof.read.runtime_stream import pool_bytes, stream_items
    runtime_ops, lane_capacity = [], {}
    inst_ranks = set()
    for p in items.parts:
        if int(p["kind"][0]) == ItemKind.INSTANCE:
            inst_ranks.update(node_of_id(np.asarray(p["ref"])).tolist())
    for st in streams:
        rank = int(st.header.get("rank", 0))
        info = next(r for r in ranks if r["rank"] == rank)
        # (a damaged header's start is 0: then the first event is the start, not 1970)
        zero = info["zero_time"] or int(st.header.get("start_ns", 0)) or st.first_ns()
        cols = stream_items(st, zero)
        next_op = _first_op(rank)
        n = len(cols["op_start"])
        if n:
            op_ids = np.arange(next_op, next_op + n, dtype=np.uint64)
            next_op += n
            runtime_ops.extend(zip(op_ids.tolist(), cols["op_site"]))
            nid = np.array([names.intern(x) for x in cols["op_name"]], np.int32)
            items.add(start=cols["op_start"], stop=cols["op_stop"], group=GROUP_INDEX["ops"],
                      ref=np.uint64(rank), rank=rank, name=nid, kind=ItemKind.RUNTIME_OP,
                      op_id=op_ids)
        m = len(cols["arr_start"])
        cap = pool_bytes(st, "system")
        if m:
            op_ids = np.arange(next_op, next_op + m, dtype=np.uint64)
            next_op += m
            runtime_ops.extend(zip(op_ids.tolist(), cols["arr_site"]))
            if rank in inst_ranks:  # Legion instances present: arrays get their own lane
                group, ref = GROUP_INDEX["arrays"], np.uint64(rank)
                lane_capacity[(rank, GROUP_INDEX["arrays"], int(ref))] = cap
            else:  # crashed run: arrays are all there is to show the memory filling up
                group = GROUP_INDEX["system"]
                sel = (mems["kind"] == MemKind.SYSTEM) & (mems["rank"] == rank)
                sysm = mems["mem_id"][sel][np.argsort(-mems["capacity"][sel], kind="stable")]
                ref = np.uint64(sysm[0]) if len(sysm) else np.uint64((0x1E << 56) | (rank << 40))
                if len(sysm) == 0:
                    # no MemDesc survived the crash: declare the pool the launcher was given
                    row = {"mem_id": ref, "kind": int(MemKind.SYSTEM), "capacity": cap,
                           "rank": rank}
                    mems = {k: np.append(v, np.array(row[k], v.dtype)) for k, v in mems.items()}
                if cap:
                    lane_capacity[(rank, int(group), int(ref))] = cap
            nid = np.array([names.intern(f"Array {d}") for d in cols["arr_desc"]], np.int32)
            items.add(start=cols["arr_start"], stop=cols["arr_stop"], group=group, ref=ref,
                      rank=rank, name=nid, kind=ItemKind.INSTANCE, op_id=op_ids,
                      extra={"size": cols["arr_bytes"], "src": np.zeros(m, np.uint64),
                             "dst": np.full(m, ref, np.uint64),
                             "inst": np.arange(m, dtype=np.uint64)})
        info["runtime_end_ns"] = int(cols["end"])
        info["runtime_crashed"] = not st.ended
    return runtime_ops, lane_capacity, mems
