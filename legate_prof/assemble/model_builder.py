"""Turns the record tables of one or more Legion Prof logs (one per rank) into a TraceModel."""

from __future__ import annotations

import numpy as np

from legate_prof.assemble.nested_calls import CALL_KINDS, nest_calls
from legate_prof.assemble.operation_spans import operation_spans
from legate_prof.model.kinds import (DEP_PART_NAMES, GROUP_INDEX, GROUP_KEYS, MEM_GROUP,
                    PROC_GROUP, ItemKind, node_of_id)
from legate_prof.model.sort_order import lex_order, stable_order
from legate_prof.model.trace_model import TraceModel
from legate_prof.assemble.lane_layout import lay_out
from legate_prof.assemble.rank_checks import cross_file_problems
from legate_prof.assemble.event_records import event_tables, instance_criticals, prof_task_events
from legate_prof.assemble.record_items import (ItemParts, StringTable, add_copies, add_fills, dedup,
                           event_columns, first_by_key, IdGroups, log_last_time, log_span, pairs,
                           processor_nodes, record_columns, unique_inverse)
from legate_prof.assemble.stream_items import (add_stream_items, crash_markers,
                                               move_streams_back, with_program_waits)
from legate_prof.assemble.utilization import with_utilization
from legate_prof.assemble.wait_matching import META_RECORDS, match_waits

NO_OP = np.uint64(0xFFFFFFFFFFFFFFFF)


class _Descriptors:
    """The names the logs give their ids, merged over ranks: tasks, variants, meta-tasks,
    mapper and runtime calls, mappers, provenances."""

    def __init__(self, logs):
        self.task, self.variant, self.meta, self.mapper_call = {}, {}, {}, {}
        self.runtime_call, self.mapper, self.provenance = {}, {}, {}
        for log in logs:
            for r in log.table("TaskKind"):
                if r["task_id"] not in self.task or r.get("overwrite"):
                    self.task[r["task_id"]] = r["name"]
            for r in log.table("TaskVariant"):
                self.variant[(r["task_id"], r["variant_id"])] = r["name"]
            for r in log.table("MetaDesc"):
                self.meta[r["kind"]] = r["name"]
            for r in log.table("MapperCallDesc"):
                self.mapper_call[r["kind"]] = r["name"]
            for r in log.table("MapperName"):
                self.mapper[(r["mapper_id"], r["mapper_proc"])] = r["name"]
            for r in log.table("RuntimeCallDesc"):
                self.runtime_call[r["kind"]] = r["name"]
            for r in log.table("Provenance"):
                self.provenance[r["provenance"]] = r["prov"]


def no_timeline_words(path, cut=False):
    """Why a Legion log holds no timeline: Legion writes it at shutdown, which a run still
    going (its log still open for writing) has not reached, and a crashed one never will;
    a file that stops early (``cut``: inside a record, or damaged) was cut short or damaged
    after it was written, most likely (a review read "did the run crash?" of a copy cut at
    150 kB)."""
    from legate_prof.read.runtime_stream import being_written
    if being_written(path):
        return ("no timeline records yet: the run is still being written (Legion writes "
                "its timeline at shutdown)")
    return NO_TIMELINE_CUT if cut else NO_TIMELINE_CRASHED


NO_TIMELINE_CUT = ("no timeline records, and the file stops early, cut short or damaged (a copy "
                   "not finished, a disk that filled?): Legion writes its timeline last, at "
                   "shutdown")
NO_TIMELINE_CRASHED = ("no timeline records (Legion writes them at shutdown; did the run crash "
                       "or get killed?)")


class _Machine:
    """The ranks (one per log, and per runtime stream without its log), their processors and
    memories, and which lane group a processor or memory id is in."""

    TIMELINE_RECORDS = ("TaskInfo", "GPUTaskInfo", "MetaInfo", "ImplicitTaskInfo", "CopyInfo",
                        "FillInfo", "InstTimelineInfo", "PartitionInfo", "MessageInfo")

    def __init__(self, logs, streams, warnings, check_files):
        self.ranks = []
        proc_rows, mem_rows = [], []
        for log in logs:
            if not any(log.count(r) for r in self.TIMELINE_RECORDS):
                warnings.append(f"warning: {log.path}: "
                                f"{no_timeline_words(log.path, getattr(log, 'cut', False))}")
            self.ranks.append(_rank_entry(log))
            for r in log.table("ProcDesc"):
                proc_rows.append((r["proc_id"], r["kind"]))
            md_tab = log.table("MemDesc")
            if len(md_tab):
                mem_rows.extend(zip(md_tab["mem_id"].tolist(), md_tab["kind"].tolist(),
                                    md_tab["capacity"].tolist()))
        for st in streams:
            r = int(st.header.get("rank", 0))
            if not any(x["rank"] == r for x in self.ranks):
                self.ranks.append({"rank": r, "file": st.path, "hostname": "",
                                   "num_nodes": st.header.get("ranks", 1), "legion_version": "",
                                   "format_version": "", "zero_time": 0, "records": 0})
        _number_unknown_ranks(self.ranks)
        if check_files:
            warnings.extend(cross_file_problems(self.ranks))
        self.procs = dedup({"proc_id": np.array([p[0] for p in proc_rows], np.uint64),
                            "kind": np.array([p[1] for p in proc_rows], np.int32)}, "proc_id")
        self.procs["rank"] = node_of_id(self.procs["proc_id"]).astype(np.int32)
        self.mems = dedup({"mem_id": np.array([m[0] for m in mem_rows], np.uint64),
                           "kind": np.array([m[1] for m in mem_rows], np.int32),
                           "capacity": np.array([min(m[2], 2**63 - 1) for m in mem_rows],
                                                np.int64)}, "mem_id")
        self.mems["rank"] = node_of_id(self.mems["mem_id"]).astype(np.int32)
        self._proc_groups = IdGroups(self.procs["proc_id"], self.procs["kind"], PROC_GROUP,
                                     "proc_other")
        self._mem_groups = IdGroups(self.mems["mem_id"], self.mems["kind"], MEM_GROUP,
                                    "mem_other")

    def proc_group_of(self, proc_ids):
        return self._proc_groups.of(proc_ids)

    def mem_group_of(self, mem_ids):
        return self._mem_groups.of(mem_ids)


def _rank_entry(log):
    md = log.table("MachineDesc")
    zt = log.table("ZeroTime")
    return {"rank": md[0]["node_id"] if len(md) else None, "file": log.path,
            "hostname": md[0].get("hostname", "") if len(md) else "",
            "num_nodes": md[0].get("num_nodes", 1) if len(md) else 1,
            "legion_version": log.legion_version, "format_version": log.version,
            "zero_time": int(zt["zero_time"][0]) if len(zt) else 0,
            "records": log.record_count, "proc_nodes": processor_nodes(log),
            # (a file cut short ends before its run did: when that was is not known)
            "span_ns": None if log.cut else list(log_span(log))}


def _number_unknown_ranks(ranks):
    """Files without a MachineDesc (crashed before writing it): numbered after the others."""
    known = {r["rank"] for r in ranks if r["rank"] is not None}
    nxt = 0
    for r in ranks:
        if r["rank"] is None:
            while nxt in known:
                nxt += 1
            r["rank"] = nxt
            known.add(nxt)


def build_model(logs, warnings=None, streams=(), stack=True, check_files=True,
                early=None) -> TraceModel:
    """Merge the ranks' logs (and runtime streams) into one model.

    ``stack=False`` leaves the items on row 0 in (lane, start) order, each lane's row count
    found without stacking: statistics and diagnosis need no rows, and the timeline stacks a
    lane when it first draws it (``TraceModel.stacked`` says which).  ``check_files=False``
    leaves out the warnings about the set of files (a rank built alone, merged later).
    ``early(model)`` is called as soon as the items, lanes, operations and events are known:
    its model's waits, utilization and warnings are None (not worked out yet), so that an
    analysis that needs none of them can begin there (the loader's ``early_analysis``).
    """
    warnings = list(warnings or [])
    names, provs, items = StringTable(), StringTable(), ItemParts()
    desc = _Descriptors(logs)
    machine = _Machine(logs, streams, warnings, check_files)
    variant_pairs = {}
    meta_rows = {}  # (log index, MetaInfo / MessageInfo) -> first row among the items' parts
    for k, log in enumerate(logs):
        _add_tasks(log, items, names, desc, machine, variant_pairs)
        _add_processor_records(log, k, items, names, desc, machine, meta_rows)
        _add_channel_and_memory_items(log, machine.ranks[k]["rank"], items, names, machine)
    runtime_ops, lane_capacity, mems = add_stream_items(streams, machine.ranks, items, names,
                                                        machine.mems)
    op_waits, leads = operation_spans(items.parts, logs, desc.provenance, runtime_ops)
    warnings.extend(move_streams_back(items.parts, machine.ranks, leads))
    op_waits = with_program_waits(items.parts, op_waits)
    model_items, lanes, transfers, item_of_row = lay_out(
        items, machine.procs, mems, machine.ranks, names, warnings, lane_capacity, stack=stack)
    ends = [r["runtime_end_ns"] for r in machine.ranks if r.get("runtime_end_ns")]
    known = dict(
        items=model_items, lanes=lanes, names=names.strings,
        ops=_ops_table(logs, runtime_ops, desc.provenance, provs),
        provenances=provs.strings, transfers=transfers, ranks=machine.ranks,
        procs=machine.procs, mems=mems, stacked=stack,
        variant_by_name_group={(n, GROUP_KEYS[g]): v for (n, g), v in variant_pairs.items()},
        runtime_end_ns=max(ends) if ends else None, events=event_tables(logs),
        markers=crash_markers(machine.ranks),
        line_text={site: code for st in streams for site, code in zip(st.op_site, st.op_code)
                   if code})
    if early is not None:
        early(TraceModel(**known, waits=None, warnings=None, utilization_steps=None,
                         busy_ns=None))
    waits, folded = _waits(logs, model_items, item_of_row, meta_rows, op_waits, warnings)
    return with_utilization(TraceModel(**known, waits=waits, warnings=warnings), folded)


def _add_tasks(log, items, names, desc, machine, variant_pairs):
    """Tasks (and GPU tasks' kernels, on their device lanes), named by task and variant."""
    for rec in ("TaskInfo", "ImplicitTaskInfo", "GPUTaskInfo"):
        t = log.table(rec)
        if len(t) == 0:
            continue
        cols = record_columns(t)  # (each column read from the packed records once)
        # names and variants from the distinct (task, variant) pairs, one code per task
        task_variant = pairs(cols, "task_id", "variant_id")
        tv_u, tv_c = unique_inverse(task_variant.code)
        tv = [task_variant.decode(c) for c in tv_u.tolist()]
        name = np.array([names.intern(desc.task.get(tid, f"Task {tid}"))
                         for tid, _ in tv], np.int32)[tv_c]
        detail = np.array([names.intern(desc.variant.get((tid, vid), f"Variant {vid}"))
                           for tid, vid in tv], np.int32)[tv_c]
        group = machine.proc_group_of(cols["proc_id"])
        items.add(start=cols["start"], stop=cols["stop"], create=cols["create"],
                  ready=cols["ready"], group=group, ref=cols["proc_id"], name=name,
                  kind=ItemKind.TASK, op_id=cols["op_id"], detail=detail, **event_columns(cols))
        # (task, variant, group) triples: distinct codes, not a Python set over all tasks
        codes = unique_inverse(tv_c * len(GROUP_KEYS) + group)[0]
        for code, g in zip((codes // len(GROUP_KEYS)).tolist(),
                           (codes % len(GROUP_KEYS)).tolist()):
            tid, vid = tv[code]
            v = desc.variant.get((tid, vid))
            if v:
                variant_pairs[(names.intern(desc.task.get(tid, f"Task {tid}")), g)] = v
        if rec == "GPUTaskInfo":
            gs = np.minimum(cols["gpu_start"], cols["gpu_stop"])
            ok = cols["gpu_stop"] > 0
            items.add(start=gs[ok], stop=cols["gpu_stop"][ok], create=cols["create"][ok],
                      ready=cols["ready"][ok], group=GROUP_INDEX["gpu_dev"],
                      ref=cols["proc_id"][ok], name=name[ok], kind=ItemKind.GPU_KERNEL,
                      op_id=cols["op_id"][ok], detail=detail[ok],
                      creator=cols["fevent"][ok])  # a kernel runs inside its task


def _add_processor_records(log, k, items, names, desc, machine, meta_rows):
    """Meta-tasks, messages, mapper / runtime / application calls and the profiler's own
    tasks: the records drawn on processor lanes besides tasks."""
    for rec, key, table, fallback, kind in (
            ("MetaInfo", "lg_id", desc.meta, "Meta", ItemKind.META),
            ("MessageInfo", "lg_id", desc.meta, "Message", ItemKind.MESSAGE),
            ("MapperCallInfo", "kind", desc.mapper_call, "Mapper Call", ItemKind.MAPPER_CALL),
            ("RuntimeCallInfo", "kind", desc.runtime_call, "Runtime Call",
             ItemKind.RUNTIME_CALL),
            ("ApplicationCallInfo", "provenance", desc.provenance, "Application Call",
             ItemKind.APP_CALL)):
        t = log.table(rec)
        if len(t) == 0:
            continue
        cols = record_columns(t)  # (each column read from the packed records once)
        f = t.dtype.names
        if rec in META_RECORDS:  # where its rows start among all items' rows
            meta_rows[(k, rec)] = items.count()
        items.add(start=cols["start"], stop=cols["stop"],
                  create=cols["create"] if "create" in f else None,
                  ready=cols["ready"] if "ready" in f else None,
                  group=machine.proc_group_of(cols["proc_id"]), ref=cols["proc_id"],
                  name=names.map_keys(cols[key], table,
                                      lambda x, p=fallback: p if kind == ItemKind.APP_CALL
                                      else f"{p} {x}"),
                  kind=kind, op_id=cols["op_id"] if "op_id" in f else None,
                  # a call names the task it runs inside by that task's fevent
                  **(event_columns(cols) if rec in META_RECORDS else
                     event_columns(cols, fevent=None, creator="fevent", critical=None)),
                  detail=(names.map_keys(pairs(cols, "mapper_id", "mapper_proc"), desc.mapper,
                                         lambda x: f"Mapper {x[0]}")
                          if kind == ItemKind.MAPPER_CALL else 0))
    t = log.table("ProfTaskInfo")
    if len(t):
        items.add(start=t["start"], stop=t["stop"], group=machine.proc_group_of(t["proc_id"]),
                  ref=t["proc_id"], name=names.intern("Profiler Response"),
                  kind=ItemKind.PROF_TASK, op_id=t["op_id"], **prof_task_events(t))


def _add_channel_and_memory_items(log, rank, items, names, machine):
    """Copies and fills (channel lanes), dependent partitioning (the rank's dp lane) and
    instances (memory lanes; never destroyed: live to the log's end)."""
    add_copies(log, items, names, machine.mem_group_of)
    add_fills(log, items, names)
    t = log.table("PartitionInfo")
    if len(t):
        items.add(start=t["start"], stop=t["stop"], create=t["create"], ready=t["ready"],
                  group=GROUP_INDEX["dp"], ref=np.uint64(rank), rank=rank,
                  name=names.map_keys(t["part_op"], dict(enumerate(DEP_PART_NAMES)),
                                      lambda x: f"Partition op {x}"),
                  kind=ItemKind.DEP_PART, op_id=t["op_id"], **event_columns(t))
    t = log.table("InstTimelineInfo")
    if len(t):
        destroy = t["destroy"].copy()
        end = max(int(np.max(destroy)) if len(destroy) else 0, log_last_time(log))
        destroy[destroy <= 0] = end
        ready = np.maximum(t["ready"], t["create"])
        items.add(start=ready, stop=np.maximum(destroy, ready), create=t["create"],
                  ready=ready, group=machine.mem_group_of(t["mem_id"]), ref=t["mem_id"],
                  name=names.intern("Instance"), kind=ItemKind.INSTANCE, op_id=t["op_id"],
                  extra={"size": t["size"], "src": np.zeros(len(t), np.uint64),
                         "dst": t["mem_id"], "inst": t["inst_id"]},
                  **event_columns(t, fevent="inst_uid", critical=None),
                  critical=instance_criticals(log))


def _waits(logs, model_items, item_of_row, meta_rows, op_waits, warnings):
    """Every item's waits: Legion's wait records matched to their tasks (meta waits by reading
    order), the runtime operations' waits, and the nested calls folded in as the reference
    does — sorted by item, then start —, and which of them are calls (``nest_calls``).
    ``item_of_row``: the model item of each row of the items' parts."""
    meta_items = [{rec: item_of_row[meta_rows[(k, rec)]:meta_rows[(k, rec)] + log.count(rec)]
                   for rec in META_RECORDS if (k, rec) in meta_rows}
                  for k, log in enumerate(logs)]
    waits = match_waits(model_items, logs, meta_items)
    if len(op_waits["row"]):  # (kept sorted by item, then start)
        n_op = len(op_waits["row"])  # (columns of their own type: event ids need 64 bits)
        waits = {c: np.concatenate([waits[c], (item_of_row[op_waits["row"]] if c == "item" else
                                               op_waits.get(c, np.zeros(n_op)))
                                    .astype(waits[c].dtype)]) for c in waits}
        o = lex_order((waits["start"], waits["item"]))
        waits = {c: a[o] for c, a in waits.items()}
    waits, orphans, folded = nest_calls(model_items["kind"], model_items["start"],
                                        model_items["stop"], _caller_events(model_items), waits)
    if orphans:
        warnings.append(f"warning: {orphans} mapper/runtime/application calls name a task "
                        "that is not in the profile; their time is not subtracted from a caller")
    return waits, folded


def _caller_events(items):
    """The event ``nest_calls`` groups calls by: a task's or meta-task's own fevent, the
    fevent of the task a call runs inside (its ``creator``)."""
    call_kinds = [int(k) for k in CALL_KINDS]
    kind = items["kind"]
    if kind.dtype == np.uint8:  # a table of the 256 kinds: a quarter of np.isin's time
        is_call = np.zeros(256, bool)
        is_call[call_kinds] = True
        is_call = is_call[kind]
    else:
        is_call = np.isin(kind, call_kinds)
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
    ids, sites = runtime_ops
    if len(ids):
        op_ids.append(ids)
        op_kind.append(np.full(len(ids), -1, np.int32))
        op_prov.append(provs.intern_each(sites))
        op_parent.append(np.full(len(ids), NO_OP, np.uint64))
    if not op_ids:
        return {"op_id": np.zeros(0, np.uint64), "kind": np.zeros(0, np.int32),
                "provenance": np.zeros(0, np.int32), "parent": np.zeros(0, np.uint64)}
    if len(op_ids) == 1 and not len(ids):  # the logs' operations alone: sorted above
        return {"op_id": op_ids[0], "kind": op_kind[0], "provenance": op_prov[0],
                "parent": op_parent[0]}
    ids = np.concatenate(op_ids)
    o = stable_order(ids)
    return {"op_id": ids[o], "kind": np.concatenate(op_kind)[o],
            "provenance": np.concatenate(op_prov)[o], "parent": np.concatenate(op_parent)[o]}


