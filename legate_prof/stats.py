"""Statistics over a TraceModel: the machine, per-group load and per-task-name timings.

The JSON form is documented in docs/stats_json.md; keep the two in step.
"""

from __future__ import annotations

import numpy as np

from .kinds import (MEMORY_GROUPS, ItemKind, mem_kind_name,
                    proc_kind_name)

SCHEMA_VERSION = 2  # 2: running_ns excludes nested calls, as the reference


def _waited_ns(model):
    """Wait time per item (float64, so damaged input cannot overflow), computed once."""
    w = model.waits
    if len(w["item"]) == 0:
        return None
    span = w["end"].astype(np.float64) - w["start"].astype(np.float64)
    waited = np.bincount(w["item"], weights=span, minlength=model.n_items)
    return np.clip(np.nan_to_num(waited), -2.0**62, 2.0**62)  # damaged input stays finite


def _running_ns(model, idx, waited=None):
    """Execution time minus waits for the given item indices."""
    dur = model.items["stop"][idx] - model.items["start"][idx]
    if waited is None:
        waited = _waited_ns(model)
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
    return np.unique(ids, return_inverse=True)


def _timings(inv, n, dur, run):
    """Per group (``inv`` in 0..n-1): count, total, running, min, max, sample std dev."""
    count = np.bincount(inv, minlength=n)
    d = dur.astype(np.float64)
    total = np.bincount(inv, weights=d, minlength=n)
    running = np.bincount(inv, weights=run.astype(np.float64), minlength=n)
    mean = total / np.maximum(count, 1)
    sq = np.bincount(inv, weights=(d - mean[inv]) ** 2, minlength=n)
    std = np.sqrt(sq / np.maximum(count - 1, 1))  # the reference's (n-1) std dev
    mn = np.full(n, np.iinfo(np.int64).max)
    mx = np.zeros(n, np.int64)
    np.minimum.at(mn, inv, dur)  # ufunc.at is a tight loop since numpy 1.25
    np.maximum.at(mx, inv, dur)
    return count, total, running, mean, std, mn, mx


def _timing_row(j, t):
    count, total, running, mean, std, mn, mx = t
    return {"count": int(count[j]), "total_ns": int(total[j]), "running_ns": int(running[j]),
            "mean_ns": int(total[j] // count[j]), "stddev_ns": float(round(std[j], 3)),
            "min_ns": int(mn[j]), "max_ns": int(mx[j])}


def per_name_table(model, kinds, by=None, waited=None):
    """Rows {name, count, total_ns, running_ns, mean_ns, stddev_ns, min_ns, max_ns}, by total.

    ``by`` ("variant" for tasks, "mapper" for mapper calls) adds ``by_<by>``: the same timings
    per task variant or per mapper, as the reference's statistics break them down.
    ``waited`` is ``_waited_ns(model)`` when the caller already has it.
    """
    it = model.items
    sel = np.flatnonzero(np.isin(it["kind"], [int(k) for k in kinds]))
    if len(sel) == 0:
        return []
    names = it["name"][sel].astype(np.int64)
    dur = it["stop"][sel] - it["start"][sel]
    run = _running_ns(model, sel, waited if waited is not None else _waited_ns(model))
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
    # provenances seen per name (the user's lines that launched it): one pass over pairs
    prov = model.op_provenance(it["op_id"][sel]).astype(np.int64)
    np_ = len(model.provenances) + 1
    name_prov, _ = _dense_ids(inv * np_ + prov, len(uniq) * np_)
    pn, pp = name_prov // np_, name_prov % np_
    rows = []
    for j, nid in enumerate(uniq.tolist()):
        a, b = np.searchsorted(pn, [j, j + 1])
        row = {"name": model.names[nid], **_timing_row(j, t),
               "provenances": [model.provenances[k] for k in pp[a:b].tolist() if k][:50]}
        if by:
            row["by_" + by] = [{by: model.names[int(p_detail[k])], **_timing_row(k, pt)}
                               for k in range(p_start[j], p_stop[j])]
        rows.append(row)
    rows.sort(key=lambda r: (-r["total_ns"], r["name"]))
    return rows


def compute_stats(model) -> dict:
    ranks = sorted(r["rank"] for r in model.ranks)
    machine = []
    for r in ranks:
        pk = model.procs["kind"][model.procs["rank"] == r]
        mk = model.mems["rank"] == r
        procs = {}
        for k in pk.tolist():
            procs[proc_kind_name(k)] = procs.get(proc_kind_name(k), 0) + 1
        mems = {}
        for k, c in zip(model.mems["kind"][mk].tolist(), model.mems["capacity"][mk].tolist()):
            e = mems.setdefault(mem_kind_name(k), {"count": 0, "capacity_bytes": 0})
            e["count"] += 1
            e["capacity_bytes"] += int(c)
        machine.append({"rank": r, "processors": procs, "memories": mems})

    groups = []
    busy = model.busy_ns
    lanes = model.lanes
    items_per_lane = np.bincount(model.items["lane"], minlength=model.n_lanes)
    for r in ranks:
        for key, title in model.groups_present(r):
            ls = model.lanes_of(key, r)
            g = {"rank": r, "kind": key, "title": title, "lanes": int(len(ls)),
                 "items": int(items_per_lane[ls].sum()), "busy_ns": int(busy.get((r, key), 0))}
            if key in MEMORY_GROUPS:
                g["capacity_bytes"] = int(lanes["capacity"][ls].sum())
                step = model.utilization_steps.get((r, key))
                g["peak_bytes"] = int(round(step.peak_level())) if step else 0
            groups.append(g)

    t0, t1 = model.time_range()
    waited = _waited_ns(model)
    out = {
        "schema": SCHEMA_VERSION,
        "files": list(model.sources),
        "ranks": len(ranks),
        "legion_version": next((r["legion_version"] for r in model.ranks if r["legion_version"]), ""),
        "time_range_ns": [int(t0), int(t1)],
        "span_ns": _span(model),
        "items": int(model.n_items),
        "machine": machine,
        "groups": groups,
        "tasks": per_name_table(model, [ItemKind.TASK], by="variant", waited=waited),
        "operations": per_name_table(model, [ItemKind.RUNTIME_OP], waited=waited),
        "gpu_kernels": per_name_table(model, [ItemKind.GPU_KERNEL], by="variant",
                                      waited=waited),
        "meta_tasks": per_name_table(model, [ItemKind.META, ItemKind.MESSAGE,
                                             ItemKind.PROF_TASK], waited=waited),
        "mapper_calls": per_name_table(model, [ItemKind.MAPPER_CALL], by="mapper",
                                       waited=waited),
        "runtime_calls": per_name_table(model, [ItemKind.RUNTIME_CALL], waited=waited),
        "application_calls": per_name_table(model, [ItemKind.APP_CALL], waited=waited),
        "copies": _transfer_summary(model, ItemKind.COPY),
        "fills": _transfer_summary(model, ItemKind.FILL),
        "instances": _transfer_summary(model, ItemKind.INSTANCE),
        "warnings": [str(w) for w in model.warnings],
        "errors": list(model.errors),
    }
    if model.markers:
        out["markers"] = model.markers
    return out


def _span(model):
    """[first start, last stop] of the items: what ran, without the view's margins."""
    it = model.items
    if not model.n_items:
        return [0, 0]
    return [int(it["start"].min()), int(it["stop"].max())]


def _transfer_summary(model, kind):
    sel = np.flatnonzero(model.items["kind"] == int(kind))
    if len(sel) == 0:
        return {"count": 0, "bytes": 0, "total_ns": 0}
    t = model.transfers
    pos = np.searchsorted(t["item"], sel)
    size = t["size"][np.clip(pos, 0, max(len(t["item"]) - 1, 0))] if len(t["item"]) else 0
    dur = model.items["stop"][sel] - model.items["start"][sel]
    return {"count": int(len(sel)), "bytes": int(np.sum(size)), "total_ns": int(dur.sum())}


def format_ns(ns, micro="µs"):
    """ns -> '1.250 ms': the largest unit the value reaches, three decimals."""
    ns = float(ns)
    for unit, div in (("s", 1e9), ("ms", 1e6), (micro, 1e3)):
        if abs(ns) >= div:
            return f"{ns / div:.3f} {unit}"
    return f"{ns:.0f} ns"


def _fmt_ns(ns):
    return format_ns(ns, micro="us")  # plain ASCII in terminal tables


def _capacity(b):
    return _fmt_bytes(b) if b else "capacity unknown"


def format_bytes(n, digits=1, exact=False):
    """'1.5 MiB' (the largest unit reached); ``exact`` adds the byte count: stats, API, report."""
    n = int(n)
    for unit, div in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= div:
            return f"{n / div:.{digits}f} {unit}" + (f" ({n:,} bytes)" if exact else "")
    return f"{n:,} bytes" if exact else f"{n} B"


def _fmt_bytes(b):
    return format_bytes(b)


def format_stats(s: dict) -> str:
    lines = []
    a, b = s.get("span_ns", s["time_range_ns"])
    lines.append(f"{s['ranks']} rank(s), {s['items']} timeline items, "
                 f"span {_fmt_ns(b - a)} ({_fmt_ns(a)} to {_fmt_ns(b)})"
                 + (f", {s['legion_version']}" if s["legion_version"] else ""))
    lines.append("")
    lines.append("Machine")
    for m in s["machine"]:
        procs = ", ".join(f"{v} {k}" for k, v in sorted(m["processors"].items()))
        mems = ", ".join(f"{v['count']} {k} ({_capacity(v['capacity_bytes'])})"
                         for k, v in sorted(m["memories"].items()))
        lines.append(f"  rank {m['rank']}: processors: {procs or '-'}; memories: {mems or '-'}")
    lines.append("")
    lines.append(f"{'rank':>4}  {'group':<14}{'lanes':>6}{'items':>10}{'busy':>14}")
    for g in s["groups"]:
        extra = ""
        if "peak_bytes" in g:
            extra = (f"  peak {_fmt_bytes(g['peak_bytes'])} of {_fmt_bytes(g['capacity_bytes'])}"
                     if g["capacity_bytes"] else
                     f"  peak {_fmt_bytes(g['peak_bytes'])} (capacity unknown)")
        lines.append(f"{g['rank']:>4}  {g['title']:<14}{g['lanes']:>6}{g['items']:>10}"
                     f"{_fmt_ns(g['busy_ns']):>14}{extra}")
    for section, title in (("tasks", "Tasks"), ("operations", "Operations (runtime event stream)"),
                           ("gpu_kernels", "GPU kernels"),
                           ("meta_tasks", "Runtime meta-tasks (top 15)")):
        rows = s[section]
        if not rows:
            continue
        if section == "meta_tasks":
            rows = rows[:15]
        lines.append("")
        lines.append(title)
        lines.append(f"  {'name':<40}{'count':>8}{'total':>13}{'running':>13}{'mean':>12}"
                     f"{'min':>12}{'max':>12}")
        for r in rows:
            lines.append(f"  {r['name'][:39]:<40}{r['count']:>8}{_fmt_ns(r['total_ns']):>13}"
                         f"{_fmt_ns(r['running_ns']):>13}{_fmt_ns(r['mean_ns']):>12}"
                         f"{_fmt_ns(r['min_ns']):>12}{_fmt_ns(r['max_ns']):>12}")
            if r["provenances"]:
                shown = ", ".join(r["provenances"][:4])
                more = len(r["provenances"]) - 4
                lines.append(f"    at {shown}" + (f" (+{more} more)" if more > 0 else ""))
    for key in ("copies", "fills"):
        v = s[key]
        if v["count"]:
            lines.append(f"{key}: {v['count']} moving {_fmt_bytes(v['bytes'])}, busy "
                         f"{_fmt_ns(v['total_ns'])} in all")
    v = s["instances"]
    if v["count"]:  # lifetimes overlap: their sum is no time anyone spent
        lines.append(f"instances: {v['count']} created, {_fmt_bytes(v['bytes'])} in all")
    for m in s.get("markers", []):
        lines.append("")
        lines.append(f"!! {m['title']}")
        for k, v in m.get("fields", {}).items():
            lines.append(f"   {k}: {v}")
    return "\n".join(lines)
