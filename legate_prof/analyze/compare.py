"""``legate_prof compare A B``: what changed between two runs, by source line and lane group.

Source lines are matched by file name and line number (``prog.py:21``), so two copies of a
program in different directories compare line for line.
"""

from __future__ import annotations

import os

import numpy as np

from legate_prof.model.kinds import GROUP_TITLE, MEMORY_GROUPS, ItemKind
from legate_prof.present.units import format_bytes, format_ns

APP_KINDS = (int(ItemKind.TASK), int(ItemKind.GPU_KERNEL))
MOVE_KINDS = (int(ItemKind.COPY), int(ItemKind.FILL))


def _line_key(prov):
    """'dir/prog.py:21' -> 'prog.py:21' (the same line of another copy of the program)."""
    if not prov:
        return ""
    path, _, line = prov.rpartition(":")
    return f"{os.path.basename(path)}:{line}" if line.isdigit() else prov


def per_line(model):
    """line -> {tasks, task_ns, copies, copy_bytes}."""
    it = model.items
    prov = model.op_provenance(it["op_id"])
    keys = np.array([_line_key(p) for p in model.provenances], dtype=object)
    out = {}
    dur = it["stop"] - it["start"]
    t = model.transfers
    size = np.zeros(model.n_items, np.float64)
    size[t["item"]] = t["size"]
    for kinds, n_key, v_key, values in ((APP_KINDS, "tasks", "task_ns", dur),
                                         (MOVE_KINDS, "copies", "copy_bytes", size)):
        sel = np.isin(it["kind"], kinds) & (prov > 0)
        if not sel.any():
            continue
        p = prov[sel]
        count = np.bincount(p, minlength=len(keys))
        total = np.bincount(p, weights=values[sel].astype(np.float64), minlength=len(keys))
        for k in np.flatnonzero(count).tolist():
            row = out.setdefault(keys[k], {"tasks": 0, "task_ns": 0, "copies": 0,
                                           "copy_bytes": 0})
            row[n_key] += int(count[k])
            row[v_key] += int(total[k])
    return out


def per_group(model):
    """group -> {items, busy_ns, peak_bytes} over all ranks."""
    it = model.items
    out = {}
    busy = model.busy_ns
    items = np.bincount(it["lane"], minlength=model.n_lanes)
    for (rank, group), v in busy.items():
        row = out.setdefault(group, {"items": 0, "busy_ns": 0, "peak_bytes": 0})
        row["busy_ns"] += int(v)
        row["items"] += int(items[model.lanes_of(group, rank)].sum())
        if group in MEMORY_GROUPS:
            step = model.utilization_steps.get((rank, group))
            if step is not None:
                row["peak_bytes"] = max(row["peak_bytes"], int(step.peak_level()))
    return out


def compare(a, b):
    """{"lines": [...], "groups": [...]} with A, B and the change for each."""
    la, lb = per_line(a), per_line(b)
    lines = []
    for key in sorted(set(la) | set(lb)):
        ra, rb = la.get(key, {}), lb.get(key, {})
        row = {"line": key}
        for f in ("tasks", "task_ns", "copies", "copy_bytes"):
            row[f] = [ra.get(f, 0), rb.get(f, 0)]
        lines.append(row)
    lines.sort(key=lambda r: -max(r["task_ns"]))
    ga, gb = per_group(a), per_group(b)
    groups = []
    for key in sorted(set(ga) | set(gb)):
        row = {"group": key}
        for f in ("items", "busy_ns", "peak_bytes"):
            row[f] = [ga.get(key, {}).get(f, 0), gb.get(key, {}).get(f, 0)]
        groups.append(row)
    ends = [int(m.items["stop"].max()) if m.n_items else 0 for m in (a, b)]
    return {"lines": lines, "groups": groups, "span_ns": ends}


def _change(x, y, fmt=str):
    if x == y:
        return f"{fmt(x)}"
    return f"{fmt(x)} -> {fmt(y)}"


def format_compare(c, names=("A", "B")):
    out = [f"A = {names[0]}", f"B = {names[1]}",
           f"run length: {_change(*c['span_ns'], fmt=format_ns)}", "",
           f"{'source line':<28}{'tasks':>22}{'task time':>28}{'copies':>16}{'bytes':>24}"]
    for r in c["lines"]:
        out.append(f"{r['line'][:27]:<28}{_change(*r['tasks']):>22}"
                   f"{_change(*r['task_ns'], fmt=format_ns):>28}"
                   f"{_change(*r['copies']):>16}{_change(*r['copy_bytes'], fmt=format_bytes):>24}")
    out += ["", f"{'lane group':<28}{'items':>22}{'busy':>28}{'peak memory':>24}"]
    for r in c["groups"]:
        peak = _change(*r["peak_bytes"], fmt=format_bytes) if any(r["peak_bytes"]) else ""
        out.append(f"{GROUP_TITLE.get(r['group'], r['group']):<28}{_change(*r['items']):>22}"
                   f"{_change(*r['busy_ns'], fmt=format_ns):>28}{peak:>24}")
    return "\n".join(out)
