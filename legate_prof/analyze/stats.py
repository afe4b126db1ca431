"""Statistics over a TraceModel: the machine, per-group load and per-task-name timings.

The JSON form is documented in docs/stats_json.md; keep the two in step.
"""

from __future__ import annotations

import os
import re

import numpy as np

from legate_prof.model.sort_order import stable_order, unique_with
from legate_prof.present.units import format_bytes, format_capacity, format_ns
from legate_prof.analyze.run_counts import (counting_rank, rank_of_items, run_arrays,
                                            stream_counts, transfer_sizes)
from legate_prof.assemble.stream_items import stream_arrays
from legate_prof.model.kinds import (GROUP_KEYS, MEMORY_GROUPS, PROCESSOR_GROUPS, ItemKind,
                                     mem_kind_name, proc_kind_name)

# 4: operations and arrays once per run (one rank's stream), instances Legion's alone;
# 3: idle (explained) and messages; 2: running_ns excludes nested calls
SCHEMA_VERSION = 4


def waited_ns(model):
    """Wait time per item (float64, so damaged input cannot overflow), computed once."""
    w = model.waits
    if len(w["item"]) == 0:
        return None
    span = w["end"].astype(np.float64) - w["start"].astype(np.float64)
    waited = np.bincount(w["item"], weights=span, minlength=model.n_items)
    return np.clip(np.nan_to_num(waited), -2.0**62, 2.0**62)  # damaged input stays finite


def _running_ns(dur, idx, waited):
    """Execution time (``dur`` of the items ``idx``) minus their waits (``waited_ns``)."""
    if waited is None or len(idx) == 0:
        return dur
    return dur - waited[idx].astype(np.int64)


def _dense_ids(ids, bound):
    """(sorted distinct ids, index of each id among them) for non-negative ids < ``bound``:
    a count per possible id when that table is small, a sort otherwise."""
    ids = np.asarray(ids, np.int64)
    if 0 < bound <= max(4 * len(ids), 1 << 22) and (len(ids) == 0 or int(ids.max()) < bound):
        present = np.bincount(ids, minlength=bound) > 0
        uniq = np.flatnonzero(present)
        return uniq, (np.cumsum(present) - 1)[ids]
    return unique_with(ids, inverse=True)


def _timings(inv, n, dur, run):
    """Per group (``inv`` in 0..n-1): count, total, running, mean, sum of squared deviations
    from the mean, min, max."""
    count = np.bincount(inv, minlength=n)
    d = dur.astype(np.float64)
    total = np.bincount(inv, weights=d, minlength=n)
    running = np.bincount(inv, weights=run.astype(np.float64), minlength=n)
    mean = total / np.maximum(count, 1)
    m2 = np.bincount(inv, weights=(d - mean[inv]) ** 2, minlength=n)
    mn = np.full(n, np.iinfo(np.int64).max)
    mx = np.zeros(n, np.int64)
    np.minimum.at(mn, inv, dur)  # ufunc.at is a tight loop since numpy 1.25
    np.maximum.at(mx, inv, dur)
    return count, total, running, mean, m2, mn, mx


def _part(j, t):
    """Group ``j`` of ``_timings`` as sums and extremes that add up over ranks."""
    count, total, running, mean, m2, mn, mx = t
    return {"count": int(count[j]), "total": int(total[j]), "running": int(running[j]),
            "mean": float(mean[j]), "m2": float(m2[j]), "min": int(mn[j]), "max": int(mx[j])}


def _combine(a, b):
    """Two parts of one group's timings as one (Chan et al.'s pairwise variance)."""
    if a is None:
        return dict(b)
    n = a["count"] + b["count"]
    total = a["total"] + b["total"]
    mean = total / n if n else 0.0
    out = {"count": n, "total": total, "running": a["running"] + b["running"], "mean": mean,
           "m2": a["m2"] + b["m2"] + a["count"] * (a["mean"] - mean) ** 2
           + b["count"] * (b["mean"] - mean) ** 2,
           "min": min(a["min"], b["min"]), "max": max(a["max"], b["max"])}
    if "provenances" in a:
        out["provenances"] = sorted(set(a["provenances"]) | set(b["provenances"]))
    if "elsewhere" in a or "elsewhere" in b:
        out["elsewhere"] = sorted(set(a.get("elsewhere", ())) | set(b.get("elsewhere", ())))
    if "by" in a:
        by = dict(a["by"])
        for k, v in b["by"].items():
            by[k] = _combine(by.get(k), v)
        out["by"] = by
    return out


def _timing_row(p):
    n = p["count"]
    return {"count": n, "total_ns": p["total"], "running_ns": p["running"],
            # (to the nearest ns, as the reference prints its average: floored, 47 rows of a
            # review's 2-rank run read 1 ns under it)
            "mean_ns": (2 * p["total"] + n) // (2 * n) if n else 0,
            "stddev_ns": float(round(np.sqrt(p["m2"] / max(n - 1, 1)), 3)),  # (n-1), as the reference
            "min_ns": p["min"], "max_ns": p["max"]}


def _natural(s):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def items_of_kinds(kind, kind_sets):
    """The items (ascending) whose kind is in each of ``kind_sets``, which do not overlap:
    one pass over the kinds and one stable sort of a byte per item where kinds are bytes
    (as models hold them), not a pass per set."""
    kind = np.asarray(kind)
    if kind.dtype != np.uint8:
        return [np.flatnonzero(np.isin(kind, [int(k) for k in ks])) for ks in kind_sets]
    table = np.full(256, len(kind_sets), np.uint8)
    for j, ks in enumerate(kind_sets):
        table[[int(k) for k in ks]] = j
    code = table[kind]
    order = np.argsort(code, kind="stable")  # (a radix sort of bytes)
    bounds = np.cumsum(np.r_[0, np.bincount(code, minlength=len(kind_sets) + 1)])
    return [order[bounds[j]:bounds[j + 1]] for j in range(len(kind_sets))]


def name_parts(model, sel, by=None, waited=None, rank=None, elsewhere=False):
    """Per name of the items ``sel`` (of ``rank`` only, if given): timings as parts
    (``_part``), the provenances seen (the user's lines that launched it) and, with ``by``,
    the same per variant / mapper.  ``elsewhere``: ``model`` is a rank's alone, and the
    operations it does not describe are said by id (``"elsewhere"``), for the run's
    operations to name their lines (``stats_ranks.with_lines_of``)."""
    it = model.items
    if rank is not None:
        sel = sel[rank_of_items(model, sel) == rank]
    if len(sel) == 0:
        return {}
    names = it["name"][sel].astype(np.int64)
    dur = it["stop"][sel] - it["start"][sel]
    run = _running_ns(dur, sel, waited if waited is not None else waited_ns(model))
    uniq, inv = _dense_ids(names, len(model.names))
    t = _timings(inv, len(uniq), dur, run)
    if by:
        d_uniq, d_inv = _dense_ids(it["detail"][sel].astype(np.int64), len(model.names))
        k = max(len(d_uniq), 1)
        puniq, pinv = _dense_ids(inv * k + d_inv, len(uniq) * k)
        pt = _timings(pinv, len(puniq), dur, run)
        p_name, p_detail = uniq[puniq // k], d_uniq[puniq % k]
        p_start = np.searchsorted(p_name, uniq, side="left")
        p_stop = np.searchsorted(p_name, uniq, side="right")
    op = it["op_id"][sel]
    prov = model.op_provenance(op).astype(np.int64)
    np_ = len(model.provenances) + 1
    name_prov, _ = _dense_ids(inv * np_ + prov, len(uniq) * np_)
    pn, pp = name_prov // np_, name_prov % np_
    if elsewhere:
        en, eo = _ops_elsewhere(model, inv, op)
    out = {}
    for j, nid in enumerate(uniq.tolist()):
        a, b = np.searchsorted(pn, [j, j + 1])
        part = _part(j, t)
        part["provenances"] = sorted(model.provenances[q] for q in pp[a:b].tolist() if q)
        if elsewhere:
            a, b = np.searchsorted(en, [j, j + 1])
            if b > a:
                part["elsewhere"] = eo[a:b].tolist()
        if by:
            part["by"] = {model.names[int(p_detail[q])]: _part(q, pt)
                          for q in range(p_start[j], p_stop[j])}
        name = model.names[nid]
        out[name] = _combine(out.get(name), part)  # two ids may carry one name
    return out


def _ops_elsewhere(model, inv, op):
    """(name index, operation id) of each distinct pair whose operation ``model`` does not
    describe (another rank does: Legion records an operation on the node that launched it)."""
    ids = np.asarray(model.ops["op_id"], np.uint64)
    pos = np.minimum(np.searchsorted(ids, op), max(len(ids) - 1, 0))
    away = np.flatnonzero((op != 0) & ((ids[pos] != op) if len(ids) else True))
    if len(away) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.uint64)
    pairs = np.unique(np.stack([inv[away].astype(np.uint64), op[away]], axis=1), axis=0)
    return pairs[:, 0].astype(np.int64), pairs[:, 1]


def per_name_rows(parts, by=None):
    """Rows {name, count, total_ns, running_ns, mean_ns, stddev_ns, min_ns, max_ns,
    provenances[, by_<by>]} from ``name_parts`` of one or more ranks, by total time."""
    merged = {}
    for p in parts:
        for name, part in p.items():
            merged[name] = _combine(merged.get(name), part)
    rows = []
    for name, p in merged.items():
        row = {"name": name, **_timing_row(p),
               "provenances": sorted(p["provenances"], key=_natural)[:50]}
        if by:
            row["by_" + by] = [{by: d, **_timing_row(x)}
                               for d, x in sorted(p["by"].items(), key=lambda kv: _natural(kv[0]))]
        rows.append(row)
    rows.sort(key=lambda r: (-r["total_ns"], r["name"]))
    return rows


# (key in the output, item kinds, breakdown)
TABLES = (("tasks", (ItemKind.TASK,), "variant"),
          ("operations", (ItemKind.RUNTIME_OP,), None),
          ("gpu_kernels", (ItemKind.GPU_KERNEL,), "variant"),
          ("meta_tasks", (ItemKind.META, ItemKind.MESSAGE, ItemKind.PROF_TASK), None),
          ("mapper_calls", (ItemKind.MAPPER_CALL,), "mapper"),
          ("runtime_calls", (ItemKind.RUNTIME_CALL,), None),
          ("application_calls", (ItemKind.APP_CALL,), None))
TRANSFERS = (("copies", ItemKind.COPY), ("fills", ItemKind.FILL),
             ("instances", ItemKind.INSTANCE))


def _groups_of(model, ranks):
    """Each rank's lane groups: lanes, items, busy time; a memory's capacity and peak."""
    groups = []
    busy = model.busy_ns
    lanes = model.lanes
    items_per_lane = np.bincount(model.items["lane"], minlength=model.n_lanes)
    # (a crashed run's arrays drawn in the system memory they filled, where Legion recorded
    # no instance: ``stream_items._array_lane``; said, as the lane's items are no instances)
    arrays_per_lane = np.bincount(
        model.items["lane"][stream_arrays(model.items["kind"], model.items["op_id"])],
        minlength=model.n_lanes)
    for r in ranks:
        for key, title in model.groups_present(r):
            ls = model.lanes_of(key, r)
            g = {"rank": r, "kind": key, "title": title, "lanes": int(len(ls)),
                 "items": int(items_per_lane[ls].sum()), "busy_ns": int(busy.get((r, key), 0))}
            if key in MEMORY_GROUPS:
                g["capacity_bytes"] = int(lanes["capacity"][ls].sum())
                step = model.utilization_steps.get((r, key))
                g["peak_bytes"] = int(round(step.peak_level())) if step else 0
                if key != "arrays" and arrays_per_lane[ls].sum():
                    g["arrays"] = int(arrays_per_lane[ls].sum())
            groups.append(g)
    return groups


def _processors_that_ran(model):
    """The ids of the processors with an item on a lane of theirs (a processor that ran
    nothing has an empty lane, or none where its whole group on its rank ran nothing)."""
    lanes = model.lanes
    n = np.bincount(model.items["lane"], minlength=model.n_lanes)
    proc = np.isin(lanes["group"], [GROUP_KEYS.index(g) for g in PROCESSOR_GROUPS])
    return set(np.asarray(lanes["ref"])[proc & (n[:model.n_lanes] > 0)].tolist())


def stats_parts(model, elsewhere=False) -> dict:
    """What the statistics need of one model (one rank, or several), as parts that add up:
    a rank's worker computes this and ``finish_stats`` combines any number of them
    (``elsewhere``: the model is a rank's alone, see ``name_parts``)."""
    ranks = sorted(r["rank"] for r in model.ranks)
    machine = []
    ran = _processors_that_ran(model) if model.n_items else None  # (none read: unknown)
    for r in ranks:
        own = model.procs["rank"] == r
        pk = model.procs["kind"][own]
        mk = model.mems["rank"] == r
        procs, idle = {}, {}
        for k, p in zip(pk.tolist(), model.procs["proc_id"][own].tolist()):
            procs[proc_kind_name(k)] = procs.get(proc_kind_name(k), 0) + 1
            if ran is not None and p not in ran:
                idle[proc_kind_name(k)] = idle.get(proc_kind_name(k), 0) + 1
        if sum(idle.values()) == sum(procs.values()):  # (none ran anything: its log holds no
            idle = {}  # timeline, a crashed run's, not a rank of idle processors: a review)
        mems = {}
        kinds, caps = model.mems["kind"][mk], model.mems["capacity"][mk]
        o = stable_order(kinds)  # (by kind: the same whichever way ranks merged)
        for k, c in zip(kinds[o].tolist(), caps[o].tolist()):
            e = mems.setdefault(mem_kind_name(k), {"count": 0, "capacity_bytes": 0})
            e["count"] += 1
            e["capacity_bytes"] += int(c)
        machine.append({"rank": r, "processors": procs, "processors_idle": idle,
                        "memories": mems})
    groups = _groups_of(model, ranks)
    waited = waited_ns(model)
    it = model.items
    stream = stream_counts(model)
    # the program's operations once: the stream of one rank (``run_counts``), not every rank's
    counted = counting_rank(stream)
    of_table = items_of_kinds(it["kind"], [kinds for _, kinds, _ in TABLES])
    tables = {key: name_parts(model, sel, by, waited,
                              rank=counted if key == "operations" else None,
                              elsewhere=elsewhere)
              for (key, _, by), sel in zip(TABLES, of_table)}
    return {
        "ranks": [dict(r) for r in model.ranks], "machine": machine, "groups": groups,
        # ranks with a lane here (a copy recorded by one rank may sit on another's channel)
        "lane_ranks": sorted(set(model.lanes["rank"].tolist()) | set(ranks)),
        "items": int(model.n_items),
        "first": int(it["start"].min()) if model.n_items else None,
        "last": int(it["stop"].max()) if model.n_items else None,
        "markers": list(model.markers),
        "tables": tables, "stream": stream,
        "transfers": {key: _transfer_summary(model, kind) for key, kind in TRANSFERS},
        "warnings": [str(w) for w in model.warnings],
    }


def finish_stats(parts, files, errors=(), warnings=None) -> dict:
    """The statistics (docs/stats_json.md) from the parts of one or more models; ``warnings``
    default to the parts' own."""
    from legate_prof.model.trace_model import time_range_of
    ranks = [r for p in parts for r in p["ranks"]]
    firsts = [p["first"] for p in parts if p["first"] is not None]
    lasts = [p["last"] for p in parts if p["last"] is not None]
    first, last = (min(firsts), max(lasts)) if firsts else (0, 0)
    markers = [m for p in parts for m in p["markers"]]
    t0, t1 = time_range_of(first, last, markers)
    by_of = {key: by for key, _, by in TABLES}
    stream = {}
    for p in parts:
        for r, c in p["stream"].items():
            e = stream.setdefault(r, [0, 0, 0])
            stream[r] = [max(x, y) for x, y in zip(e, c)]  # (a rank is in one part)
    counted = counting_rank(stream)
    # the part holding the counting rank's stream: the operations table is its
    counting = [p for p in parts if counted in p["stream"]][:1]
    out = {
        "schema": SCHEMA_VERSION,
        "files": list(files),
        "ranks": len(ranks),
        "legion_version": next((r["legion_version"] for r in sorted(ranks, key=lambda r: r["rank"])
                                if r.get("legion_version")), ""),
        "time_range_ns": [int(t0), int(t1)],
        "span_ns": [first, last],
        "items": sum(p["items"] for p in parts),
        "machine": sorted((m for p in parts for m in p["machine"]), key=lambda m: m["rank"]),
        "groups": sorted((g for p in parts for g in p["groups"]), key=lambda g: g["rank"]),
        **{key: per_name_rows([p["tables"][key] for p in (counting if key == "operations"
                                                          else parts)], by_of[key])
           for key, _, _ in TABLES},
        **{key: {f: sum(p["transfers"][key][f] for p in parts)
                 for f in ("count", "bytes", "total_ns")} for key, _ in TRANSFERS},
        "arrays": run_arrays(stream),
        "warnings": (list(warnings) if warnings is not None
                     else [w for p in parts for w in p["warnings"]]),
        "errors": list(errors),
    }
    if markers:
        out["markers"] = markers
    return out


def explained(profile, idle=True, whole=True) -> dict:
    """What the statistics say about the whole profile at once: idle time by what the next
    item waited for (``analyze.idle_gaps``; ``idle=False``: None) and the messages' skew and
    latency (``causality.message_latency``).  ``whole=False``: ranks their workers handed
    over in part (``stats_ranks``): the idle time from what the workers prepared alone (None
    where that cannot tell), the messages on a thread beside it (numpy's sorts and searches
    let each other run: the parent's share at 10 x 1 M 1.5 -> 1.1 s)."""
    from legate_prof.analyze.idle_ranks import explain_idle
    from legate_prof.query import as_source
    source = as_source(profile)  # (a source: its skew, worked out once for its notices)
    if whole or not idle:  # (the messages first: a copy of this process may still be
        messages = source.message_latency().as_json()  # explaining the idle time,
        return {"idle": explain_idle(profile) if idle else None,  # ``load.early_analysis``)
                "messages": messages}
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(1, thread_name_prefix="legate_prof messages") as pool:
        later = pool.submit(lambda: source.message_latency().as_json())
        got = explain_idle(profile, whole=False)
        return {"idle": got, "messages": later.result()}


def compute_stats(profile, idle=True) -> dict:
    """The statistics of a profile (a model, a ``RankSet`` or a source): the ranks' parts added
    up, no merged copy; ``idle=False`` leaves out idle time explained.  (Ranks handed over
    for ``stats_ranks.PREPARE``: ``stats_ranks.compute_stats``.)"""
    parts = _each_part(stats_parts, [p.model for p in profile.item_parts()])
    return {**finish_stats(parts, profile.sources, profile.errors,
                           [str(w) for w in profile.warnings]), **explained(profile, idle)}


def _each_part(function, models):
    """``function`` of each model, the ranks' models on threads, one per core: most of the
    work is numpy's, which lets other threads run (10 ranks' statistics: 1.0 -> 0.5 s on 2
    cores)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if len(models) < 2 or (cores or 1) < 2:
        return [function(m) for m in models]
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(min(cores, len(models)),
                            thread_name_prefix="legate_prof stats") as pool:
        return list(pool.map(function, models))


def _transfer_summary(model, kind):
    """Count, bytes and time of the copies, fills or instances (Legion's: the runtime stream's
    arrays are counted apart, ``run_counts``)."""
    it = model.items
    sel = it["kind"] == int(kind)
    if kind == ItemKind.INSTANCE:
        sel &= ~stream_arrays(it["kind"], it["op_id"])
    sel = np.flatnonzero(sel)
    if len(sel) == 0:
        return {"count": 0, "bytes": 0, "total_ns": 0}
    size = transfer_sizes(model, sel)
    dur = model.items["stop"][sel] - model.items["start"][sel]
    return {"count": int(len(sel)), "bytes": int(np.sum(size)), "total_ns": int(dur.sum())}


def _ran_nothing(idle, of):
    return "it ran nothing" if of == 1 else "none ran anything" if idle == of else \
        f"{idle} ran nothing"


def _machine_and_groups(s) -> list:
    """The machine (processors and memories of each rank) and the lane groups' table."""
    lines = ["Machine"]
    for m in s["machine"]:
        idle = m.get("processors_idle", {})
        procs = ", ".join(f"{v} {k}" + (f" ({_ran_nothing(idle[k], v)})" if idle.get(k) else "")
                          for k, v in sorted(m["processors"].items()))
        # ("2 system (20.0 MiB)" read as each or in all: a review)
        mems = ", ".join(f"{v['count']} {k} ({format_capacity(v['capacity_bytes'])}"
                         f"{' in all' if v['count'] > 1 and v['capacity_bytes'] else ''})"
                         for k, v in sorted(m["memories"].items()))
        lines.append(f"  rank {m['rank']}: processors: {procs or '-'}; memories: {mems or '-'}")
    lines.append("")
    lines.append(f"{'rank':>4}  {'group':<14}{'lanes':>6}{'items':>10}{'busy':>14}")
    for g in s["groups"]:
        extra = ""
        if "peak_bytes" in g:
            extra = (f"  peak {format_bytes(g['peak_bytes'])} of {format_bytes(g['capacity_bytes'])}"
                     if g["capacity_bytes"] else
                     f"  peak {format_bytes(g['peak_bytes'])} (capacity unknown)")
            if g.get("arrays"):
                extra += (f" (the program's {g['arrays']} arrays: Legion's log holds no "
                          "instance)")
        lines.append(f"{g['rank']:>4}  {g['title']:<14}{g['lanes']:>6}{g['items']:>10}"
                     f"{format_ns(g['busy_ns']):>14}{extra}")
    if s["groups"]:
        lines.append("  busy: processors, summed over their lanes (waits left out); memories, "
                     "while any instance lived; channels, while anything was under way; ops, "
                     "while an operation's tasks ran")
    return lines


def format_stats(s: dict) -> str:
    lines = []
    a, b = s.get("span_ns", s["time_range_ns"])
    # (the pictures' and the report's header give the timeline's range, 0 - 1.511 s, beside
    # this span of 1.215 s: said here, a review read two lengths of one run)
    t0, t1 = s["time_range_ns"]
    shown = (f"; the timeline shows {format_ns(t0)} to {format_ns(t1)}"
             if (t0, t1) != (a, b) else "")
    # (a log cut before its timeline read "span 0 ns (0 ns to 0 ns)", as if it ran so: a review)
    span = (f"span {format_ns(b - a)} ({format_ns(a)} to {format_ns(b)}{shown})" if s["items"]
            else "no span: no timeline item was read (the warnings say why)")
    lines.append(f"{s['ranks']} rank(s), {s['items']} timeline items, {span}"
                 + (f", {s['legion_version']}" if s["legion_version"] else ""))
    lines.append("")
    lines += _machine_and_groups(s)
    arrays = s.get("arrays")
    ops_title = ("Operations (runtime event stream; each once: every rank's stream repeats "
                 f"them, counted in rank {arrays['rank']}'s): total from submission to "
                 "completion, tasks ran while any of its tasks ran (the tasks' total "
                 "above, where they did not overlap)" if arrays else "Operations")
    for section, title in (("tasks", "Tasks"), ("operations", ops_title),
                           ("gpu_kernels", "GPU kernels"),
                           ("meta_tasks", "Runtime meta-tasks (top 15)")):
        if s[section]:
            lines += ["", title] + _table_lines(s, section)
    for key in ("copies", "fills"):
        v = s[key]
        if v["count"]:
            lines.append(f"{key}: {v['count']} moving {format_bytes(v['bytes'])}, busy "
                         f"{format_ns(v['total_ns'])} in all")
    v = s["instances"]
    if v["count"]:  # lifetimes overlap: their sum is no time anyone spent
        lines.append(f"instances: {v['count']} created, {format_bytes(v['bytes'])} in all "
                     "(Legion's, each rank's own)")
    if arrays and arrays["count"]:
        lines.append(f"arrays: {arrays['count']} made by the program, "
                     f"{format_bytes(arrays['bytes'])} in all (runtime event stream: each "
                     "once, however many ranks hold a piece)")
    lines.extend(_explanation_lines(s))
    for m in s.get("markers", []):
        lines.append("")
        lines.append(f"!! {m['title']}")
        for k, v in m.get("fields", {}).items():
            lines.append(f"   {k}: {v}")
    return "\n".join(lines)


def _table_lines(s, section):
    """A section's table (tasks, operations, GPU kernels, meta-tasks: the first 15): a row
    per name with its lines, as wide as the longest name."""
    lines = []
    rows = s[section][:15] if section == "meta_tasks" else s[section]
    # (as wide as the longest name, up to 64: "Distributed Collectable Downgrade Request"
    # and "... Response" were both cut to 39 characters, with nothing saying so)
    w = min(max([39] + [len(r["name"]) for r in rows]), NAME_WIDTH) + 1
    # (an operation's "running" is its tasks' time: a review read the tasks' total as
    # the operation's "running" in the table below the tasks' own)
    ran = "tasks ran" if section == "operations" else "running"
    lines.append(f"  {'name':<{w}}{'count':>8}{'total':>13}{ran:>13}{'mean':>12}"
                 f"{'min':>12}{'max':>12}")
    for r in rows:
        name = r["name"] if len(r["name"]) < w else r["name"][:w - 4] + "..."
        lines.append(f"  {name:<{w}}{r['count']:>8}{format_ns(r['total_ns']):>13}"
                     f"{format_ns(r['running_ns']):>13}{format_ns(r['mean_ns']):>12}"
                     f"{format_ns(r['min_ns']):>12}{format_ns(r['max_ns']):>12}")
        if r["provenances"]:
            shown = ", ".join(r["provenances"][:4])
            more = len(r["provenances"]) - 4
            lines.append(f"    at {shown}" + (f" (+{more} more)" if more > 0 else ""))
    if section == "tasks":
        lines += _bodies_line(s.get("application_calls") or [])
    return lines


def _bodies_line(calls):
    """What a task's "running" leaves out, said under the tasks: a review read BinaryOp's
    5.9 ms running of 171.7 ms as tasks blocked, where legate ran their bodies as
    application calls (165.8 ms), which the reference counts apart as we do."""
    if not calls:
        return []
    top = sorted(calls, key=lambda c: (-c["total_ns"], c["name"]))
    named = ", ".join(f"{c['name']} {format_ns(c['total_ns'])}" for c in top[:3])
    return [f"  running: waits and the calls a task made left out, as the reference counts "
            f"it; legate runs a task's body as an application call of its name "
            f"({format_ns(sum(c['total_ns'] for c in calls))} of application calls: "
            f"{named}{', ...' if len(top) > 3 else ''})"]


def _explanation_lines(s):
    """Idle time explained and the messages' skew and latency, in words."""
    lines = []
    if s.get("idle"):
        from legate_prof.analyze.idle_gaps import format_idle
        more = format_idle(s["idle"])
        if more:
            lines += [""] + more
    return lines + _message_lines(s.get("messages"))


NAME_WIDTH = 63  # characters of a task's or meta-task's name the text shows at most

SKEW_PAIR_LINES = 10  # pairs of nodes the text names, the clocks furthest apart first


def _message_lines(m):
    """The messages' skew and latency in words (``causality.message_latency``)."""
    if not m or not m["messages"]:
        return []
    measured = m.get("measured", m["messages"])
    if not measured:  # (a rank read alone: "0 took 1 ms or more, the slowest 0 ns" said what
        # no one measured, where the reference says nothing; a review)
        out = ["", f"Messages: {m['messages']}; their latency unknown: the ranks that sent "
                   "them were not read"]
    else:
        out = ["", f"Messages: {m['messages']}"
                   + (f" ({measured} of them of a known sender, measured)"
                      if measured < m["messages"] else "")
                   + f"; {m['slow']} took {m['threshold_ns'] / 1e6:g} ms or more "
                   f"({m['percent_slow']:.2f} %), the slowest {format_ns(m['longest_ns'])}"]
    host = m.get("one_host")
    if m["skewed"]:
        out.append(f"!! clock skew: {m['skewed']} messages arrived before they were sent, by "
                   f"{format_ns(m['mean_skew_ns'])} on average; boxes on different "
                   "ranks may be shifted against each other"
                   + (f" (every rank ran on one machine, {host}: their clocks started apart)"
                      if host else ""))
        from legate_prof.causality.message_latency import worst_first
        pairs = worst_first(m["skew_pairs"])
        for p in pairs[:SKEW_PAIR_LINES]:
            out.append(f"   rank {p['receiver']} reads {format_ns(p['mean_ns'])} "
                       f"behind rank {p['sender']} (spread {format_ns(p['spread_ns'])}"
                       f", {p['messages']} messages)")
        if len(pairs) > SKEW_PAIR_LINES:
            out.append(f"   ... and {len(pairs) - SKEW_PAIR_LINES:,} more pairs of ranks, their "
                       "clocks closer (stats --json lists each)")
    if m["congested"] and m.get("latencies_are_clocks"):
        apart = max(abs(p["mean_ns"]) for p in m["skew_pairs"])
        out.append(f"!! slow messages measure the clocks: {m['percent_slow']:.2f} % of messages "
                   f"took {m['threshold_ns'] / 1e6:g} ms or more while two ranks' clocks read "
                   f"{format_ns(int(apart))} apart: times across ranks are off by that, "
                   "not the messages slow")
    elif m["congested"] and host:
        out.append(f"!! slow messages: {m['percent_slow']:.2f} % of messages took "
                   f"{m['threshold_ns'] / 1e6:g} ms or more, every rank on one machine ({host}): "
                   "no network is slow; a message waited for its rank's threads to get a core")
    elif m["congested"]:
        out.append(f"!! slow network: {m['percent_slow']:.2f} % of messages took "
                   f"{m['threshold_ns'] / 1e6:g} ms or more: the network was likely congested")
    return out
