"""Turns the record tables of one or more Legion Prof logs (one per rank) into a TraceModel."""

from __future__ import annotations

import numpy as np

from .intervals import StepIntegral, stack_rows, subtract_waits, union_sorted
from .nested_calls import nest_calls
from .kinds import (DEP_PART_NAMES, GROUP_INDEX, GROUP_KEYS, GROUP_LONG, GROUP_TITLE, GROUPS,
                    MEM_GROUP,
                    MEM_SHORT, MEMORY_GROUPS, PROC_GROUP, PROCESSOR_GROUPS, ItemKind, MemKind,
                    ProcKind, index_of_mem, index_of_proc, node_of_id)
from .trace_model import ITEM_COLUMNS, TraceModel

NO_OP = np.uint64(0xFFFFFFFFFFFFFFFF)


class StringTable:
    """Interned strings; index 0 is the empty string."""

    def __init__(self):
        self.strings = [""]
        self.index = {"": 0}

    def intern(self, s):
        i = self.index.get(s)
        if i is None:
            i = self.index[s] = len(self.strings)
            self.strings.append(s)
        return i

    def map_keys(self, keys, lookup, default):
        """Vectorized: name id for each key, via ``lookup`` (dict key -> str)."""
        if isinstance(keys, _PairKeys):
            uniq, inv = np.unique(keys.code, return_inverse=True)
            ids = np.array([self.intern(lookup.get(k, default(k)))
                            for k in map(keys.decode, uniq.tolist())], dtype=np.int32)
            return ids[inv] if len(keys) else np.zeros(0, dtype=np.int32)
        keys = np.asarray(keys)
        if len(keys) == 0:
            return np.zeros(0, dtype=np.int32)
        uniq, inv = np.unique(keys, return_inverse=True)
        ids = np.array([self.intern(lookup.get(k.item() if hasattr(k, "item") else k,
                                               default(k))) for k in uniq], dtype=np.int32)
        return ids[inv]


class _Items:
    """Accumulates item columns from each record type before lanes are known."""

    def __init__(self):
        self.parts = []

    def add(self, *, start, stop, create=None, ready=None, group, ref, ref2=None, rank=None,
            name, kind, op_id=None, extra=None, fevent=None, detail=0):
        n = len(start)
        if n == 0:
            return
        start = np.asarray(start, dtype=np.int64)
        self.parts.append({
            "start": start,
            "stop": np.asarray(stop, dtype=np.int64),
            "create": start if create is None else np.asarray(create, dtype=np.int64),
            "ready": start if ready is None else np.asarray(ready, dtype=np.int64),
            "group": np.broadcast_to(np.asarray(group, dtype=np.int16), (n,)),
            "ref": np.broadcast_to(np.asarray(ref, dtype=np.uint64), (n,)),
            "ref2": np.broadcast_to(np.asarray(0 if ref2 is None else ref2, dtype=np.uint64), (n,)),
            "rank": None if rank is None else np.broadcast_to(np.asarray(rank, np.int32), (n,)),
            "name": np.broadcast_to(np.asarray(name, dtype=np.int32), (n,)),
            "kind": np.full(n, int(kind), dtype=np.uint8),
            "detail": np.broadcast_to(np.asarray(detail, dtype=np.int32), (n,)),
            "op_id": np.zeros(n, np.uint64) if op_id is None else np.asarray(op_id, np.uint64),
            "extra": extra,
            "fevent": None if fevent is None else np.asarray(fevent, np.uint64),
        })


def _pairs(table, a, b):
    """Two columns as one key column whose values look up as (a, b) tuples (see map_keys)."""
    return _PairKeys(table[a], table[b])


class _PairKeys:
    """Pairs of integer columns, made unique through two 1-D ``np.unique`` (no structured sort)."""

    def __init__(self, a, b):
        ua, ia = np.unique(a, return_inverse=True)
        ub, ib = np.unique(b, return_inverse=True)
        self.ua, self.ub = ua, ub
        self.code = ia.astype(np.int64) * len(ub) + ib

    def __len__(self):
        return len(self.code)

    def decode(self, code):
        return (self.ua[code // len(self.ub)].item(), self.ub[code % len(self.ub)].item())


def _rank_of(group, ref, explicit):
    if explicit is not None:
        return explicit
    return node_of_id(ref).astype(np.int32)


def build_model(logs, warnings=None, streams=(), stack=True) -> TraceModel:
    """Merge the ranks' logs (and runtime streams) into one model.

    ``stack=False`` leaves every lane on one row: what statistics, diagnosis and exports need,
    without the cost of stacking (``TraceModel.stacked`` says which).
    """
    warnings = list(warnings or [])
    names = StringTable()
    provs = StringTable()
    items = _Items()

    # ---- descriptor tables, merged over ranks ----------------------------------------------
    task_names, variant_names, meta_names, mapper_call_names, runtime_call_names = {}, {}, {}, {}, {}
    mapper_names = {}
    prov_strings = {}
    for log in logs:
        for r in log.table("TaskKind"):
            if r["task_id"] not in task_names or r.get("overwrite"):
                task_names[r["task_id"]] = r["name"]
        for r in log.table("TaskVariant"):
            variant_names[(r["task_id"], r["variant_id"])] = r["name"]
        for r in log.table("MetaDesc"):
            meta_names[r["kind"]] = r["name"]
        for r in log.table("MapperCallDesc"):
            mapper_call_names[r["kind"]] = r["name"]
        for r in log.table("MapperName"):
            mapper_names[(r["mapper_id"], r["mapper_proc"])] = r["name"]
        for r in log.table("RuntimeCallDesc"):
            runtime_call_names[r["kind"]] = r["name"]
        for r in log.table("Provenance"):
            prov_strings[r["provenance"]] = r["prov"]

    ranks = []
    proc_rows, mem_rows = [], []
    timeline_records = ("TaskInfo", "GPUTaskInfo", "MetaInfo", "ImplicitTaskInfo", "CopyInfo",
                        "FillInfo", "InstTimelineInfo", "PartitionInfo", "MessageInfo")
    for log in logs:
        if not any(log.count(r) for r in timeline_records):
            warnings.append(f"warning: {log.path}: no timeline records (Legion writes them at "
                            "shutdown; did the run crash or get killed?)")
        md = log.table("MachineDesc")
        node = md[0]["node_id"] if len(md) else None
        zt = log.table("ZeroTime")
        ranks.append({
            "rank": node, "file": log.path, "hostname": md[0].get("hostname", "") if len(md) else "",
            "num_nodes": md[0].get("num_nodes", 1) if len(md) else 1,
            "legion_version": log.legion_version, "format_version": log.version,
            "zero_time": int(zt["zero_time"][0]) if len(zt) else 0,
            "records": log.record_count,
        })
        for r in log.table("ProcDesc"):
            proc_rows.append((r["proc_id"], r["kind"]))
        md_tab = log.table("MemDesc")
        if len(md_tab):
            mem_rows.extend(zip(md_tab["mem_id"].tolist(), md_tab["kind"].tolist(),
                                md_tab["capacity"].tolist()))
    for st in streams:
        r = int(st.header.get("rank", 0))
        if not any(x["rank"] == r for x in ranks):
            ranks.append({"rank": r, "file": st.path, "hostname": "", "num_nodes":
                          st.header.get("ranks", 1), "legion_version": "", "format_version": "",
                          "zero_time": 0, "records": 0})
    # files without a MachineDesc (crashed before writing it): number them after the others
    known = {r["rank"] for r in ranks if r["rank"] is not None}
    nxt = 0
    for r in ranks:
        if r["rank"] is None:
            while nxt in known:
                nxt += 1
            r["rank"] = nxt
            known.add(nxt)
    warnings.extend(_cross_file_problems(ranks))

    procs = _dedup({"proc_id": np.array([p[0] for p in proc_rows], np.uint64),
                    "kind": np.array([p[1] for p in proc_rows], np.int32)}, "proc_id")
    procs["rank"] = node_of_id(procs["proc_id"]).astype(np.int32)
    mems = _dedup({"mem_id": np.array([m[0] for m in mem_rows], np.uint64),
                   "kind": np.array([m[1] for m in mem_rows], np.int32),
                   "capacity": np.array([min(m[2], 2**63 - 1) for m in mem_rows], np.int64)},
                  "mem_id")
    mems["rank"] = node_of_id(mems["mem_id"]).astype(np.int32)

    def proc_group_of(proc_ids):
        return _group_of(procs["proc_id"], procs["kind"], proc_ids, PROC_GROUP, "proc_other")

    def mem_group_of(mem_ids):
        return _group_of(mems["mem_id"], mems["kind"], mem_ids, MEM_GROUP, "mem_other")

    # ---- timeline items ------------------------------------------------------------------
    variant_pairs = {}
    for log in logs:
        for rec in ("TaskInfo", "ImplicitTaskInfo", "GPUTaskInfo"):
            t = log.table(rec)
            if len(t) == 0:
                continue
            name = names.map_keys(t["task_id"], task_names, lambda k: f"Task {k}")
            detail = names.map_keys(_pairs(t, "task_id", "variant_id"), variant_names,
                                    lambda k: f"Variant {k[1]}")
            group = proc_group_of(t["proc_id"])
            items.add(start=t["start"], stop=t["stop"], create=t["create"], ready=t["ready"],
                      group=group, ref=t["proc_id"], name=name, kind=ItemKind.TASK,
                      op_id=t["op_id"], fevent=t["fevent"], detail=detail)
            for tid, vid, g in set(zip(t["task_id"].tolist(), t["variant_id"].tolist(),
                                       group.tolist())):
                v = variant_names.get((tid, vid))
                if v:
                    variant_pairs[(names.intern(task_names.get(tid, f"Task {tid}")), g)] = v
            if rec == "GPUTaskInfo":
                gs = np.minimum(t["gpu_start"], t["gpu_stop"])
                ok = t["gpu_stop"] > 0
                items.add(start=gs[ok], stop=t["gpu_stop"][ok], create=t["create"][ok],
                          ready=t["ready"][ok], group=GROUP_INDEX["gpu_dev"],
                          ref=t["proc_id"][ok], name=name[ok], kind=ItemKind.GPU_KERNEL,
                          op_id=t["op_id"][ok], detail=detail[ok])
        # Records drawn on processor lanes: (record, name key, names, fallback, kind).
        for rec, key, table, fallback, kind in (
                ("MetaInfo", "lg_id", meta_names, "Meta", ItemKind.META),
                ("MessageInfo", "lg_id", meta_names, "Message", ItemKind.MESSAGE),
                ("MapperCallInfo", "kind", mapper_call_names, "Mapper Call", ItemKind.MAPPER_CALL),
                ("RuntimeCallInfo", "kind", runtime_call_names, "Runtime Call",
                 ItemKind.RUNTIME_CALL),
                ("ApplicationCallInfo", "provenance", prov_strings, "Application Call",
                 ItemKind.APP_CALL)):
            t = log.table(rec)
            if len(t) == 0:
                continue
            f = t.dtype.names
            items.add(start=t["start"], stop=t["stop"],
                      create=t["create"] if "create" in f else None,
                      ready=t["ready"] if "ready" in f else None,
                      group=proc_group_of(t["proc_id"]), ref=t["proc_id"],
                      name=names.map_keys(t[key], table,
                                          lambda k, p=fallback: p if kind == ItemKind.APP_CALL
                                          else f"{p} {k}"),
                      kind=kind, op_id=t["op_id"] if "op_id" in f else None,
                      fevent=t["fevent"] if "fevent" in f else None,
                      detail=(names.map_keys(_pairs(t, "mapper_id", "mapper_proc"), mapper_names,
                                             lambda k: f"Mapper {k[0]}")
                              if kind == ItemKind.MAPPER_CALL else 0))
        t = log.table("ProfTaskInfo")
        if len(t):
            items.add(start=t["start"], stop=t["stop"], group=proc_group_of(t["proc_id"]),
                      ref=t["proc_id"], name=names.intern("Profiler Response"), kind=ItemKind.PROF_TASK,
                      op_id=t["op_id"], fevent=t["fevent"] if "fevent" in t.dtype.names else None)
        _add_copies(log, items, names, mem_group_of)
        _add_fills(log, items, names)
        t = log.table("PartitionInfo")
        if len(t):
            rank = ranks[logs.index(log)]["rank"]
            items.add(start=t["start"], stop=t["stop"], create=t["create"], ready=t["ready"],
                      group=GROUP_INDEX["dp"], ref=np.uint64(rank), rank=rank,
                      name=names.map_keys(t["part_op"], dict(enumerate(DEP_PART_NAMES)),
                                          lambda k: f"Partition op {k}"),
                      kind=ItemKind.DEP_PART, op_id=t["op_id"])
        t = log.table("InstTimelineInfo")
        if len(t):
            destroy = t["destroy"].copy()
            end = max(int(np.max(destroy)) if len(destroy) else 0, _log_last_time(log))
            destroy[destroy <= 0] = end  # never destroyed: live to the end
            ready = np.maximum(t["ready"], t["create"])
            items.add(start=ready, stop=np.maximum(destroy, ready), create=t["create"],
                      ready=ready, group=mem_group_of(t["mem_id"]), ref=t["mem_id"],
                      name=names.intern("Instance"), kind=ItemKind.INSTANCE,
                      op_id=t["op_id"],
                      extra={"size": t["size"], "src": np.zeros(len(t), np.uint64),
                             "dst": t["mem_id"], "inst": t["inst_id"]})

    runtime_ops, lane_capacity, mems = _add_streams(streams, ranks, items, names, mems)
    model_items, lanes, transfers, final_order = _assemble(
        items, procs, mems, ranks, names, warnings, lane_capacity, stack=stack)
    ops = _ops_table(logs, runtime_ops, prov_strings, provs)

    # ---- waits ------------------------------------------------------------------------------
    waits = _match_waits(
        model_items, logs, lambda lg: names.map_keys(lg, meta_names, lambda k: f"Meta {k}"))
    fevent = np.concatenate([np.zeros(len(p["start"]), np.uint64) if p["fevent"] is None
                             else p["fevent"] for p in items.parts] or [np.zeros(0, np.uint64)])
    waits, orphans = nest_calls(model_items["kind"], model_items["start"],
                                model_items["stop"], fevent[final_order], waits)
    if orphans:
        warnings.append(f"warning: {orphans} mapper/runtime/application calls name a task "
                        "that is not in the profile; their time is not subtracted from a caller")
    ends = [r["runtime_end_ns"] for r in ranks if r.get("runtime_end_ns")]
    model = TraceModel(
        items=model_items, lanes=lanes, names=names.strings, ops=ops,
        provenances=provs.strings, waits=waits, transfers=transfers, ranks=ranks, procs=procs,
        mems=mems, warnings=warnings, stacked=stack,
        variant_by_name_group={(n, GROUP_KEYS[g]): v for (n, g), v in variant_pairs.items()},
        runtime_end_ns=max(ends) if ends else None)
    return with_utilization(model)


def _ops_table(logs, runtime_ops, prov_strings, provs):
    """Operations of all ranks (and of the runtime's stream) by op id, with provenance."""
    op_rows = [log.table("OperationInstance") for log in logs]
    op_rows = [o for o in op_rows if len(o)]
    op_ids, op_kind, op_prov, op_parent = [], [], [], []
    if op_rows:
        ops = np.concatenate(op_rows)
        ops = ops[np.unique(ops["op_id"], return_index=True)[1]]
        pu, pinv = np.unique(ops["provenance"], return_inverse=True)
        prov_idx = np.array([provs.intern(prov_strings.get(int(p), "")) if p else 0
                             for p in pu.tolist()], dtype=np.int32)[pinv]
        op_ids.append(ops["op_id"].astype(np.uint64))
        op_kind.append(ops["kind"].astype(np.int32))
        op_prov.append(prov_idx)
        op_parent.append(ops["parent_id"].astype(np.uint64))
    if runtime_ops:
        ids = np.array([o[0] for o in runtime_ops], np.uint64)
        op_ids.append(ids)
        op_kind.append(np.full(len(ids), -1, np.int32))
        op_prov.append(np.array([provs.intern(o[1]) for o in runtime_ops], np.int32))
        op_parent.append(np.full(len(ids), NO_OP, np.uint64))
    if not op_ids:
        return {"op_id": np.zeros(0, np.uint64), "kind": np.zeros(0, np.int32),
                "provenance": np.zeros(0, np.int32), "parent": np.zeros(0, np.uint64)}
    ids = np.concatenate(op_ids)
    o = np.argsort(ids, kind="stable")
    return {"op_id": ids[o], "kind": np.concatenate(op_kind)[o],
            "provenance": np.concatenate(op_prov)[o], "parent": np.concatenate(op_parent)[o]}


SAME_RUN_ZERO_TIME_NS = 60 * 10**9  # ranks of one run start within a minute of each other


def _cross_file_problems(ranks):
    """Warnings about the set of files: a rank twice, ranks missing, files of other runs."""
    out = []
    by_rank = {}
    for r in ranks:
        by_rank.setdefault(r["rank"], []).append(r["file"])
    for rank, files in sorted(by_rank.items()):
        if len(files) > 1:
            out.append(f"warning: rank {rank} is in {len(files)} files ({', '.join(files[:3])}); "
                       "files of different runs mixed?")
    legion = [r for r in ranks if r.get("format_version")]
    sizes = sorted({int(r["num_nodes"]) for r in legion})
    if len(sizes) > 1:
        out.append(f"warning: the files come from runs of {' and '.join(map(str, sizes))} "
                   "ranks; files of different runs mixed?")
    elif sizes and 1 < sizes[0] <= 1 << 16:
        missing = sorted(set(range(sizes[0])) - set(by_rank))
        if missing:
            shown = ", ".join(map(str, missing[:10])) + (" …" if len(missing) > 10 else "")
            out.append(f"warning: {len(missing)} of the run's {sizes[0]} ranks have no file "
                       f"(rank {shown}); the timeline shows the others only")
    zts = [r for r in legion if r["zero_time"]]
    if zts:
        lo = min(zts, key=lambda r: r["zero_time"])
        hi = max(zts, key=lambda r: r["zero_time"])
        if hi["zero_time"] - lo["zero_time"] > SAME_RUN_ZERO_TIME_NS:
            out.append(f"warning: {hi['file']} and {lo['file']} started "
                       f"{(hi['zero_time'] - lo['zero_time']) / 1e9:.0f} s apart: files of "
                       "different runs mixed?")
    return out


RUNTIME_OP_BASE = 1 << 62


def _add_streams(streams, ranks, items, names, mems):
    """Operations and arrays from the runtime's event streams, as timeline items."""
    from .runtime_stream import pool_bytes, stream_items
    runtime_ops, lane_capacity = [], {}
    next_op = RUNTIME_OP_BASE
    inst_ranks = set()
    for p in items.parts:
        if int(p["kind"][0]) == ItemKind.INSTANCE:
            inst_ranks.update(node_of_id(np.asarray(p["ref"])).tolist())
    for st in streams:
        rank = int(st.header.get("rank", 0))
        info = next(r for r in ranks if r["rank"] == rank)
        zero = info["zero_time"] or int(st.header.get("start_ns", 0))
        cols = stream_items(st, zero)
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


def _log_last_time(log):
    last = 0
    for rec in ("TaskInfo", "MetaInfo", "ImplicitTaskInfo", "GPUTaskInfo"):
        t = log.table(rec)
        if len(t):
            last = max(last, int(t["stop"].max()))
    return last


def _add_copies(log, items, names, mem_group_of):
    ci = log.table("CopyInfo")
    if len(ci) == 0:
        return
    cii = log.table("CopyInstInfo")
    src = np.zeros(len(ci), np.uint64)
    dst = np.zeros(len(ci), np.uint64)
    indirect = np.zeros(len(ci), bool)
    inst = np.zeros(len(ci), np.uint64)
    if len(cii):
        # first requirement of each copy (joined on the completion event)
        order = np.argsort(cii["fevent"], kind="stable")
        fe = cii["fevent"][order]
        pos = np.searchsorted(fe, ci["fevent"])
        pos_c = np.clip(pos, 0, len(fe) - 1)
        ok = fe[pos_c] == ci["fevent"]
        sel = order[pos_c]
        src = np.where(ok, cii["src"][sel], 0).astype(np.uint64)
        dst = np.where(ok, cii["dst"][sel], 0).astype(np.uint64)
        inst = np.where(ok, cii["dst_inst"][sel], 0).astype(np.uint64)
        if "indirect" in cii.dtype.names:
            indirect = np.where(ok, cii["indirect"][sel] != 0, False)
    name = np.where(indirect, names.intern("Gather/Scatter"), names.intern("Copy"))
    items.add(start=ci["start"], stop=ci["stop"], create=ci["create"], ready=ci["ready"],
              group=GROUP_INDEX["channel"], ref=src, ref2=dst,
              rank=node_of_id(np.where(src != 0, src, dst)).astype(np.int32),
              name=name, kind=ItemKind.COPY, op_id=ci["op_id"],
              extra={"size": ci["size"], "src": src, "dst": dst, "inst": inst})


def _add_fills(log, items, names):
    fi = log.table("FillInfo")
    if len(fi) == 0:
        return
    fii = log.table("FillInstInfo")
    dst = np.zeros(len(fi), np.uint64)
    inst = np.zeros(len(fi), np.uint64)
    if len(fii):
        order = np.argsort(fii["fevent"], kind="stable")
        fe = fii["fevent"][order]
        pos = np.clip(np.searchsorted(fe, fi["fevent"]), 0, len(fe) - 1)
        ok = fe[pos] == fi["fevent"]
        dst = np.where(ok, fii["dst"][order[pos]], 0).astype(np.uint64)
        inst = np.where(ok, fii["dst_inst"][order[pos]], 0).astype(np.uint64)
    items.add(start=fi["start"], stop=fi["stop"], create=fi["create"], ready=fi["ready"],
              group=GROUP_INDEX["channel"], ref=np.uint64(0), ref2=dst,
              rank=node_of_id(dst).astype(np.int32), name=names.intern("Fill"),
              kind=ItemKind.FILL, op_id=fi["op_id"],
              extra={"size": fi["size"], "src": np.zeros(len(fi), np.uint64), "dst": dst,
                     "inst": inst})


def _dedup(cols, key):
    if len(cols[key]) == 0:
        return cols
    _, first = np.unique(cols[key], return_index=True)
    first.sort()
    return {k: v[first] for k, v in cols.items()}


def _group_of(ids, kinds, query, kind_to_group, other):
    """Lane-group index of each queried processor/memory id, from its declared kind."""
    k = _lookup(ids, kinds, query, -1)
    g = np.full(len(query), GROUP_INDEX[other], dtype=np.int16)
    for kind, key in kind_to_group.items():
        g[k == int(kind)] = GROUP_INDEX[key]
    return g


def _lookup(keys, values, query, default):
    if len(keys) == 0:
        return np.full(len(query), default, dtype=np.int64)
    order = np.argsort(keys)
    k = keys[order]
    pos = np.clip(np.searchsorted(k, query), 0, len(k) - 1)
    return np.where(k[pos] == query, values[order][pos], default)


def _assemble(items, procs, mems, ranks, names, warnings, lane_capacity=None, stack=True):
    parts = items.parts
    cols = {}
    for c in ("start", "stop", "create", "ready", "group", "ref", "ref2", "name", "kind", "op_id",
              "detail"):
        cols[c] = (np.concatenate([p[c] for p in parts]) if parts
                   else np.zeros(0, ITEM_COLUMNS.get(c, np.uint64)))
    rank = (np.concatenate([_rank_of(p["group"], p["ref"], p["rank"]) for p in parts])
            if parts else np.zeros(0, np.int32))
    # Make sure every processor has a lane (idle processors count in utilization).
    lane_keys = [(int(r), int(GROUP_INDEX[PROC_GROUP.get(_pk(k), "proc_other")]), int(p), 0)
                 for p, k, r in zip(procs["proc_id"].tolist(), procs["kind"].tolist(),
                                    procs["rank"].tolist())]
    lane_keys += [(int(r), GROUP_INDEX["gpu_dev"], int(p), 0)
                  for p, k, r in zip(procs["proc_id"].tolist(), procs["kind"].tolist(),
                                     procs["rank"].tolist()) if k == ProcKind.GPU]
    key_dtype = np.dtype([("rank", "<i4"), ("group", "<i2"), ("ref", "<u8"), ("ref2", "<u8")])
    extra = np.array(lane_keys, dtype=key_dtype)
    k_rank = np.concatenate([rank, extra["rank"]]).astype(np.int64)
    k_group = np.concatenate([cols["group"], extra["group"]]).astype(np.int64)
    ref_all = np.concatenate([cols["ref"], extra["ref"]])
    ref2_all = np.concatenate([cols["ref2"], extra["ref2"]])
    ref_u = np.unique(ref_all)  # few distinct values: hashing, then a search, beats a sort
    ref_c = np.searchsorted(ref_u, ref_all)
    ref2_u = np.unique(ref2_all)
    ref2_c = np.searchsorted(ref2_u, ref2_all)
    # one int64 key per item, ordered like (rank, group, ref, ref2)
    key = ((k_rank * 64 + k_group) * len(ref_u) + ref_c) * len(ref2_u) + ref2_c
    uniq_key = np.unique(key)
    lane_of_key = np.searchsorted(uniq_key, key)
    r2 = uniq_key % len(ref2_u)
    r1 = (uniq_key // len(ref2_u)) % len(ref_u)
    rg = uniq_key // (len(ref2_u) * len(ref_u))
    lane_tab = np.empty(len(uniq_key), dtype=key_dtype)
    lane_tab["rank"], lane_tab["group"] = rg // 64, rg % 64
    lane_tab["ref"], lane_tab["ref2"] = ref_u[r1], ref2_u[r2]
    lane = lane_of_key[: len(rank)].astype(np.int32)
    # Hide groups of a rank that have no items at all (as the reference viewer does).
    has_items = np.zeros(len(lane_tab), bool)
    has_items[lane] = True
    grp_key = lane_tab["rank"].astype(np.int64) * 64 + lane_tab["group"]
    live_groups = np.unique(grp_key[has_items])
    keep = np.isin(grp_key, live_groups)
    remap = np.cumsum(keep) - 1
    lane_tab = lane_tab[keep]
    lane = remap[lane].astype(np.int32)

    order = _lane_start_order(lane, cols["start"], cols["stop"])
    lane_s = lane[order]
    bounds = np.searchsorted(lane_s, np.arange(len(lane_tab) + 1))
    n_rows = np.ones(len(lane_tab), dtype=np.int32)
    rows = np.zeros(len(order), dtype=np.int16)
    if stack:
        # Stack rows per lane, then order each stacked lane's items by (row, start).
        start_s, stop_s = cols["start"][order], cols["stop"][order]
        for L in np.flatnonzero(np.diff(bounds) > 1).tolist():
            lo, hi = bounds[L], bounds[L + 1]
            r = stack_rows(start_s[lo:hi], stop_s[lo:hi])
            n_rows[L] = int(r.max()) + 1
            if n_rows[L] > 1:
                o = np.argsort(r, kind="stable")  # int16: a radix sort, keeps start order
                order[lo:hi] = order[lo:hi][o]
                rows[lo:hi] = r[o]
    final = order
    inv = np.empty(len(final), dtype=np.int64)
    inv[final] = np.arange(len(final))
    model_items = {
        "start": cols["start"][final], "stop": cols["stop"][final],
        "create": cols["create"][final], "ready": cols["ready"][final],
        "lane": lane_s, "row": rows,
        "name": cols["name"][final].astype(np.int32), "kind": cols["kind"][final],
        "op_id": cols["op_id"][final], "detail": cols["detail"][final].astype(np.int32),
    }
    # side table for copies, fills and instances
    t_item, t_size, t_src, t_dst, t_inst = [], [], [], [], []
    off = 0
    for p in parts:
        n = len(p["start"])
        if p["extra"] is not None:
            t_item.append(inv[off:off + n])
            e = p["extra"]
            t_size.append(np.asarray(e["size"], np.uint64))
            t_src.append(np.asarray(e["src"], np.uint64))
            t_dst.append(np.asarray(e["dst"], np.uint64))
            t_inst.append(np.asarray(e["inst"], np.uint64))
        off += n
    if t_item:
        ti = np.concatenate(t_item)
        o = np.argsort(ti)
        transfers = {"item": ti[o], "size": np.concatenate(t_size)[o],
                     "src": np.concatenate(t_src)[o], "dst": np.concatenate(t_dst)[o],
                     "inst": np.concatenate(t_inst)[o]}
    else:
        transfers = {k: np.zeros(0, np.uint64) for k in ("size", "src", "dst", "inst")}
        transfers["item"] = np.zeros(0, np.int64)

    lanes = _lane_table(lane_tab, n_rows, procs, mems)
    for (r, g, ref), cap in (lane_capacity or {}).items():
        hit = (lanes["rank"] == r) & (lanes["group"] == g) & (lanes["ref"] == np.uint64(ref))
        lanes["capacity"][hit] = cap
    return model_items, lanes, transfers, final


def _lane_start_order(lane, start, stop):
    """Item order by (lane, start), longer first on equal starts (so nesting depth is right).

    One argsort of a packed (lane, start) key when starts fit in 42 bits (73 minutes of ns),
    a lexsort otherwise; ties on (lane, start), rare, are then put longest first.
    """
    n = len(lane)
    if n == 0:
        return np.zeros(0, np.int64)
    s = start.astype(np.int64)
    lo = int(s.min())
    span = int(s.max()) - lo
    if span < 2**42 and len(lane) and int(lane.max()) < 2**20:
        key = (lane.astype(np.int64) << 42) | (s - lo)
        order = np.argsort(key, kind="stable")
        k = key[order]
        tie = np.flatnonzero(k[1:] == k[:-1])
        if len(tie):
            # runs of equal keys: reorder each by descending duration
            at = np.unique(np.concatenate([tie, tie + 1]))
            dur = (stop.astype(np.int64) - s)[order[at]]
            o = np.lexsort((-dur, k[at]))
            order[at] = order[at][o]
        return order
    return np.lexsort((-(stop.astype(np.int64) - s), s, lane))


def _pk(k):
    try:
        return ProcKind(k)
    except ValueError:
        return None


def _lane_table(lane_tab, n_rows, procs, mems):
    n = len(lane_tab)
    cap = np.zeros(n, np.int64)
    names, titles = [], []
    mem_cap = dict(zip(mems["mem_id"].tolist(), mems["capacity"].tolist()))
    mem_kind = dict(zip(mems["mem_id"].tolist(), mems["kind"].tolist()))
    seq, prev = 0, None
    for i, (rank, g, ref, ref2) in enumerate(lane_tab.tolist()):
        key = GROUP_KEYS[g]
        title = GROUP_TITLE[key]
        seq = seq + 1 if prev == (rank, g) else 0  # numbered per kind from 0, as the reference
        prev = (rank, g)
        if key in PROCESSOR_GROUPS:
            short = {"gpu_dev": f"g{seq}d", "gpu_host": f"g{seq}h"}.get(
                key, f"{GROUPS[g][2]}{seq}")
            names.append(short)
            titles.append(f"Node {rank} {GROUP_LONG[key]} {seq} Processor(0x{ref:x})"
                          + (" device" if key == "gpu_dev" else ""))
        elif key in MEMORY_GROUPS and key != "arrays":
            cap[i] = mem_cap.get(ref, 0)
            names.append(f"{GROUPS[g][2]}{seq}")
            titles.append(f"Node {rank} {GROUP_LONG[key]} Memory {seq} (0x{ref:x})")
        elif key == "channel":
            d = _mem_short(ref2, mem_kind, rank)
            if ref == 0:
                names.append(f"fill {d}")
                titles.append(f"Fill into {_mem_long(ref2, mem_kind)}")
            else:
                names.append(f"{_mem_short(ref, mem_kind, rank)}-{d}")
                titles.append(f"{_mem_long(ref, mem_kind)} to {_mem_long(ref2, mem_kind)}")
        elif key == "arrays":
            names.append(f"arrays{rank}")
            titles.append(f"Rank {rank} Arrays (runtime)")
        elif key == "ops":
            names.append(f"ops{rank}")
            titles.append(f"Rank {rank} Operations (runtime)")
        else:
            names.append(f"dp{rank}")
            titles.append(f"Node {rank} Dependent Partitioning")
    return {
        "group": lane_tab["group"].astype(np.int16), "rank": lane_tab["rank"].astype(np.int32),
        "ref": lane_tab["ref"].astype(np.uint64), "ref2": lane_tab["ref2"].astype(np.uint64),
        "capacity": cap, "rows": n_rows, "name": names, "title": titles,
    }


def _mem_short(mem_id, mem_kind, rank):
    k = mem_kind.get(mem_id, 0)
    try:
        s = MEM_SHORT.get(MemKind(k), "m")
    except ValueError:
        s = "m"
    node = int(node_of_id(np.uint64(mem_id)))
    return f"n{node}{s}{int(index_of_mem(np.uint64(mem_id)))}"


def _mem_long(mem_id, mem_kind):
    k = mem_kind.get(mem_id, 0)
    try:
        kind = MemKind(k)
        t = GROUP_LONG.get(MEM_GROUP.get(kind, ""), kind.name.title())
    except ValueError:
        t = f"Memory kind {k}"
    node = int(node_of_id(np.uint64(mem_id)))
    return f"Node {node} {t} Memory 0x{int(mem_id):x}"


def _match_waits(it, logs, meta_name_ids=None):
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


def busy_intervals(model, lanes):
    """Per lane, disjoint busy intervals (waits cut out). Returns list of (lane, starts, stops)."""
    it = model.items
    w = model.waits
    out = []
    for L in lanes:
        lo, hi = model.lane_range(L)
        if hi == lo:
            out.append((L, np.zeros(0, np.int64), np.zeros(0, np.int64)))
            continue
        s, e = it["start"][lo:hi], it["stop"][lo:hi]
        wl = np.searchsorted(w["item"], lo) if len(w["item"]) else 0
        wh = np.searchsorted(w["item"], hi) if len(w["item"]) else 0
        if wh > wl:
            witem = w["item"][wl:wh] - lo
            has = np.zeros(hi - lo, bool)
            has[witem] = True
            pi, ps, pe = subtract_waits(s, e, witem, w["start"][wl:wh], w["end"][wl:wh])
            s = np.concatenate([s[~has], ps])
            e = np.concatenate([e[~has], pe])
        o = np.argsort(s, kind="stable")
        us, ue = union_sorted(s[o], e[o])
        out.append((L, us, ue))
    return out


def with_utilization(model):
    """The model with its step-function integrals per (rank, group) for the average-utilization
    lines, and busy time per (rank, group)."""
    steps = {}
    busy = {}
    for rank in sorted(set(model.lanes["rank"].tolist())):
        for key, _title in model.groups_present(rank):
            lanes = model.lanes_of(key, rank)
            if key in MEMORY_GROUPS:
                s_all, e_all, w_all = [], [], []
                cap = 0
                for L in lanes:
                    lo, hi = model.lane_range(L)
                    s_all.append(model.items["start"][lo:hi])
                    e_all.append(model.items["stop"][lo:hi])
                    sz = model.transfers["size"][np.searchsorted(model.transfers["item"],
                                                                 np.arange(lo, hi))]
                    w_all.append(sz.astype(np.float64))
                    c = int(model.lanes["capacity"][L])
                    if c <= 0:  # unknown capacity: use this memory's peak
                        c = int(StepIntegral.from_intervals(s_all[-1], e_all[-1],
                                                            w_all[-1]).peak_level())
                    cap += c
                s, e, w = np.concatenate(s_all), np.concatenate(e_all), np.concatenate(w_all)
                steps[(rank, key)] = StepIntegral.from_intervals(s, e, w, max(cap, 1))
                o = np.argsort(s)
                us, ue = union_sorted(s[o], e[o])
                busy[(rank, key)] = int((ue - us).sum())
            elif key in PROCESSOR_GROUPS:
                per_lane = busy_intervals(model, lanes)
                s = np.concatenate([p[1] for p in per_lane])
                e = np.concatenate([p[2] for p in per_lane])
                steps[(rank, key)] = StepIntegral.from_intervals(s, e, None, len(lanes))
                busy[(rank, key)] = int((e - s).sum())
            else:  # channels, dp: busy when anything in the group is active
                per_lane = busy_intervals(model, lanes)
                s = np.concatenate([p[1] for p in per_lane])
                e = np.concatenate([p[2] for p in per_lane])
                o = np.argsort(s, kind="stable")
                us, ue = union_sorted(s[o], e[o])
                steps[(rank, key)] = StepIntegral.from_intervals(us, ue, None, 1)
                busy[(rank, key)] = int((ue - us).sum())
    return model.evolve(utilization_steps=steps, busy_ns=busy)
