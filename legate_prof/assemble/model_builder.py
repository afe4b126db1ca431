"""Turns the record tables of one or more Legion Prof logs (one per rank) into a TraceModel."""

from __future__ import annotations

import numpy as np

from legate_prof.assemble.nested_calls import CALL_KINDS, nest_calls
from legate_prof.assemble.operation_spans import operation_spans
from legate_prof.model.kinds import (DEP_PART_NAMES, GROUP_INDEX, GROUP_KEYS, MEM_GROUP,
                    PROC_GROUP, ItemKind, node_of_id)
from legate_prof.model.trace_model import TraceModel
from legate_prof.assemble.lane_layout import lay_out
from legate_prof.assemble.rank_checks import cross_file_problems
from legate_prof.assemble.event_records import event_tables, instance_criticals, prof_task_events
from legate_prof.assemble.record_items import (ItemParts, StringTable, add_copies, add_fills, dedup,
                           event_columns, first_by_key, group_of, log_last_time, log_span, pairs,
                           unique_inverse)
from legate_prof.assemble.stream_items import add_stream_items
from legate_prof.assemble.utilization import with_utilization
from legate_prof.assemble.wait_matching import META_RECORDS, match_waits

NO_OP = np.uint64(0xFFFFFFFFFFFFFFFF)


def build_model(logs, warnings=None, streams=(), stack=True, check_files=True) -> TraceModel:
    """Merge the ranks' logs (and runtime streams) into one model.

    ``stack=False`` leaves the items on row 0 in (lane, start) order, each lane's row count
    found without stacking: statistics and diagnosis need no rows, and the timeline stacks a
    lane when it first draws it (``TraceModel.stacked`` says which).  ``check_files=False``
    leaves out the warnings about the set of files (a rank built alone, merged later).
    """
    warnings = list(warnings or [])
    names = StringTable()
    provs = StringTable()
    items = ItemParts()

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
            "records": log.record_count, "span_ns": list(log_span(log)),
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
    if check_files:
        warnings.extend(cross_file_problems(ranks))

    procs = dedup({"proc_id": np.array([p[0] for p in proc_rows], np.uint64),
                    "kind": np.array([p[1] for p in proc_rows], np.int32)}, "proc_id")
    procs["rank"] = node_of_id(procs["proc_id"]).astype(np.int32)
    mems = dedup({"mem_id": np.array([m[0] for m in mem_rows], np.uint64),
                   "kind": np.array([m[1] for m in mem_rows], np.int32),
                   "capacity": np.array([min(m[2], 2**63 - 1) for m in mem_rows], np.int64)},
                  "mem_id")
    mems["rank"] = node_of_id(mems["mem_id"]).astype(np.int32)

    def proc_group_of(proc_ids):
        return group_of(procs["proc_id"], procs["kind"], proc_ids, PROC_GROUP, "proc_other")

    def mem_group_of(mem_ids):
        return group_of(mems["mem_id"], mems["kind"], mem_ids, MEM_GROUP, "mem_other")

    # ---- timeline items ------------------------------------------------------------------
    variant_pairs = {}
    meta_rows = {}  # (log index, MetaInfo / MessageInfo) -> first row among the items' parts
    for log in logs:
        for rec in ("TaskInfo", "ImplicitTaskInfo", "GPUTaskInfo"):
            t = log.table(rec)
            if len(t) == 0:
                continue
            # names and variants from the distinct (task, variant) pairs, one code per task
            task_variant = pairs(t, "task_id", "variant_id")
            tv_u, tv_c = unique_inverse(task_variant.code)
            tv = [task_variant.decode(c) for c in tv_u.tolist()]
            name = np.array([names.intern(task_names.get(tid, f"Task {tid}"))
                             for tid, _ in tv], np.int32)[tv_c]
            detail = np.array([names.intern(variant_names.get((tid, vid), f"Variant {vid}"))
                               for tid, vid in tv], np.int32)[tv_c]
            group = proc_group_of(t["proc_id"])
            items.add(start=t["start"], stop=t["stop"], create=t["create"], ready=t["ready"],
                      group=group, ref=t["proc_id"], name=name, kind=ItemKind.TASK,
                      op_id=t["op_id"], detail=detail, **event_columns(t))
            # (task, variant, group) triples: distinct codes, not a Python set over all tasks
            codes = unique_inverse(tv_c * len(GROUP_KEYS) + group)[0]
            for code, g in zip((codes // len(GROUP_KEYS)).tolist(),
                               (codes % len(GROUP_KEYS)).tolist()):
                tid, vid = tv[code]
                v = variant_names.get((tid, vid))
                if v:
                    variant_pairs[(names.intern(task_names.get(tid, f"Task {tid}")), g)] = v
            if rec == "GPUTaskInfo":
                gs = np.minimum(t["gpu_start"], t["gpu_stop"])
                ok = t["gpu_stop"] > 0
                items.add(start=gs[ok], stop=t["gpu_stop"][ok], create=t["create"][ok],
                          ready=t["ready"][ok], group=GROUP_INDEX["gpu_dev"],
                          ref=t["proc_id"][ok], name=name[ok], kind=ItemKind.GPU_KERNEL,
                          op_id=t["op_id"][ok], detail=detail[ok],
                          creator=t["fevent"][ok])  # a kernel runs inside its task
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
            if rec in META_RECORDS:  # where its rows start among all items' rows
                meta_rows[(logs.index(log), rec)] = items.count()
            items.add(start=t["start"], stop=t["stop"],
                      create=t["create"] if "create" in f else None,
                      ready=t["ready"] if "ready" in f else None,
                      group=proc_group_of(t["proc_id"]), ref=t["proc_id"],
                      name=names.map_keys(t[key], table,
                                          lambda k, p=fallback: p if kind == ItemKind.APP_CALL
                                          else f"{p} {k}"),
                      kind=kind, op_id=t["op_id"] if "op_id" in f else None,
                      # a call names the task it runs inside by that task's fevent
                      **(event_columns(t) if rec in META_RECORDS else
                         event_columns(t, fevent=None, creator="fevent", critical=None)),
                      detail=(names.map_keys(pairs(t, "mapper_id", "mapper_proc"), mapper_names,
                                             lambda k: f"Mapper {k[0]}")
                              if kind == ItemKind.MAPPER_CALL else 0))
        t = log.table("ProfTaskInfo")
        if len(t):
            items.add(start=t["start"], stop=t["stop"], group=proc_group_of(t["proc_id"]),
                      ref=t["proc_id"], name=names.intern("Profiler Response"), kind=ItemKind.PROF_TASK,
                      op_id=t["op_id"], **prof_task_events(t))
        add_copies(log, items, names, mem_group_of)
        add_fills(log, items, names)
        t = log.table("PartitionInfo")
        if len(t):
            rank = ranks[logs.index(log)]["rank"]
            items.add(start=t["start"], stop=t["stop"], create=t["create"], ready=t["ready"],
                      group=GROUP_INDEX["dp"], ref=np.uint64(rank), rank=rank,
                      name=names.map_keys(t["part_op"], dict(enumerate(DEP_PART_NAMES)),
                                          lambda k: f"Partition op {k}"),
                      kind=ItemKind.DEP_PART, op_id=t["op_id"], **event_columns(t))
        t = log.table("InstTimelineInfo")
        if len(t):
            destroy = t["destroy"].copy()
            end = max(int(np.max(destroy)) if len(destroy) else 0, log_last_time(log))
            destroy[destroy <= 0] = end  # never destroyed: live to the end
            ready = np.maximum(t["ready"], t["create"])
            items.add(start=ready, stop=np.maximum(destroy, ready), create=t["create"],
                      ready=ready, group=mem_group_of(t["mem_id"]), ref=t["mem_id"],
                      name=names.intern("Instance"), kind=ItemKind.INSTANCE,
                      op_id=t["op_id"],
                      extra={"size": t["size"], "src": np.zeros(len(t), np.uint64),
                             "dst": t["mem_id"], "inst": t["inst_id"]},
                      **event_columns(t, fevent="inst_uid", critical=None),
                      critical=instance_criticals(log))

    runtime_ops, lane_capacity, mems = add_stream_items(streams, ranks, items, names, mems)
    op_waits = operation_spans(items.parts, logs, prov_strings, runtime_ops)
    model_items, lanes, transfers, final_order = lay_out(
        items, procs, mems, ranks, names, warnings, lane_capacity, stack=stack)
    ops = _ops_table(logs, runtime_ops, prov_strings, provs)

    # ---- waits ------------------------------------------------------------------------------
    item_of_row = np.empty(len(final_order), np.int64)  # items' parts' row -> model item
    item_of_row[final_order] = np.arange(len(final_order))
    meta_items = [{rec: item_of_row[meta_rows[(k, rec)]:meta_rows[(k, rec)] + log.count(rec)]
                   for rec in META_RECORDS if (k, rec) in meta_rows}
                  for k, log in enumerate(logs)]
    waits = match_waits(model_items, logs, meta_items)
    if len(op_waits["row"]):  # (kept sorted by item, then start)
        n_op = len(op_waits["row"])  # (columns of their own type: event ids need 64 bits)
        waits = {c: np.concatenate([waits[c], (item_of_row[op_waits["row"]] if c == "item" else
                                               op_waits.get(c, np.zeros(n_op)))
                                    .astype(waits[c].dtype)]) for c in waits}
        o = np.lexsort((waits["start"], waits["item"]))
        waits = {c: a[o] for c, a in waits.items()}
    waits, orphans = nest_calls(model_items["kind"], model_items["start"],
                                model_items["stop"], _caller_events(model_items), waits)
    if orphans:
        warnings.append(f"warning: {orphans} mapper/runtime/application calls name a task "
                        "that is not in the profile; their time is not subtracted from a caller")
    ends = [r["runtime_end_ns"] for r in ranks if r.get("runtime_end_ns")]
    model = TraceModel(
        items=model_items, lanes=lanes, names=names.strings, ops=ops,
        provenances=provs.strings, waits=waits, transfers=transfers, ranks=ranks, procs=procs,
        mems=mems, warnings=warnings, stacked=stack,
        variant_by_name_group={(n, GROUP_KEYS[g]): v for (n, g), v in variant_pairs.items()},
        runtime_end_ns=max(ends) if ends else None, events=event_tables(logs),
        line_text={site: code for st in streams for _, _, site, code in st.ops if code})
    return with_utilization(model)


def _caller_events(items):
    """The event ``nest_calls`` groups calls by: a task's or meta-task's own fevent, the
    fevent of the task a call runs inside (its ``creator``)."""
    is_call = np.isin(items["kind"], [int(k) for k in CALL_KINDS])
    return np.where(is_call, items["creator"], items["fevent"])


def _ops_table(logs, runtime_ops, prov_strings, provs):
    """Operations of all ranks (and of the runtime's stream) by op id, with provenance."""
    op_rows = [log.table("OperationInstance") for log in logs]
    op_rows = [o for o in op_rows if len(o)]
    op_ids, op_kind, op_prov, op_parent = [], [], [], []
    if op_rows:
        rows = np.concatenate(op_rows) if len(op_rows) > 1 else op_rows[0]
        ops = first_by_key({f: rows[f] for f in ("op_id", "kind", "provenance", "parent_id")},
                           "op_id")
        pu, pinv = unique_inverse(ops["provenance"])
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
    if len(op_ids) == 1 and not runtime_ops:  # the logs' operations alone: sorted above
        return {"op_id": op_ids[0], "kind": op_kind[0], "provenance": op_prov[0],
                "parent": op_parent[0]}
    ids = np.concatenate(op_ids)
    o = np.argsort(ids, kind="stable")
    return {"op_id": ids[o], "kind": np.concatenate(op_kind)[o],
            "provenance": np.concatenate(op_prov)[o], "parent": np.concatenate(op_parent)[o]}


