"""The lane tree: ranks, lane groups and lanes in display order, named as the reference
viewer names them (``c0``, ``g0d``, ``n0s0-n0f1``; long names for tooltips), with the time
range and what went wrong reading the profile.  Computed once per profile."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from legate_prof.model.kinds import (GROUP_KEYS, GROUPS, MEMORY_GROUPS, PROCESSOR_GROUPS, MemKind,
                                     index_of_mem, node_of_id)

# The reference viewer's panel names, per lane group.
PANEL = {
    "cpu": "cpu", "gpu_dev": "gpu dev", "gpu_host": "gpu host", "utility": "utility",
    "io": "io", "python": "python", "openmp": "omp", "proc_group": "proc group",
    "proc_set": "proc set", "proc_other": "io (extern)", "system": "system",
    "framebuffer": "framebuffer", "zerocopy": "zerocopy", "registered": "registered",
    "socket": "socket", "mem_other": "memory", "arrays": "arrays", "channel": "chan",
    "dp": "dp", "ops": "ops",
}
# Long kind names as the reference viewer writes them ("Node 0 CPU 1 Processor(0x…)").
_PROC_LONG = {"cpu": "CPU", "gpu_dev": "GPU", "gpu_host": "GPU", "utility": "Utility",
              "io": "I/O", "python": "Python", "openmp": "OpenMP", "proc_group": "ProcGroup",
              "proc_set": "ProcSet", "proc_other": "Extern"}
_MEM_SHORT = {"system": "s", "framebuffer": "f", "zerocopy": "z", "registered": "r",
              "socket": "k", "mem_other": "m"}
_MEM_LONG = {"system": "System", "framebuffer": "Framebuffer", "zerocopy": "Zero-Copy",
             "registered": "Registered", "socket": "Socket", "mem_other": "Other"}
_MEMKIND_GROUP = {MemKind.SYSTEM: "system", MemKind.FRAMEBUFFER: "framebuffer",
                  MemKind.ZERO_COPY: "zerocopy", MemKind.REGISTERED: "registered",
                  MemKind.SOCKET: "socket"}


@dataclass(frozen=True)
class LaneInfo:
    """One lane: ``short`` as the reference names it (``c0``, ``g0d``, ``n0s0-n0f1``),
    ``long`` for tooltips (``Node 0 CPU 1 Processor(0x…)``)."""

    lane: int
    rank: int
    group: str
    panel: str
    short: str
    long: str
    rows: int
    capacity: int  # bytes for memories, 0 when unknown or not a memory


@dataclass(frozen=True)
class GroupInfo:
    rank: int
    group: str
    panel: str
    title: str  # display title (e.g. "CPU")
    kind: str  # "processor" | "memory" | "channel" | "other"
    lanes: tuple  # lane ids, in display order
    capacity: int  # processors: lane count; memories: bytes (0 = unknown)


@dataclass(frozen=True)
class ProfileInfo:
    ranks: tuple  # rank numbers
    groups: tuple  # GroupInfo, rank by rank, in display order
    lanes: tuple  # LaneInfo indexed by lane id
    time_range: tuple  # (t0, t1) ns, the initial view
    warnings: tuple  # strings
    errors: tuple  # strings: inputs that could not be read
    sources: tuple  # input paths
    markers: tuple  # dicts: time, rank, kind, title, fields
    n_items: int
    legion_version: str = ""
    timeline_missing: str = ""  # why there is no Legion timeline (a crashed run), or ""


def describe(m) -> ProfileInfo:
    """The lane tree of a model: its ranks, lane groups and lanes in display order, named as
    the reference viewer names them, with the time range and what went wrong reading it."""
    L = m.lanes
    n = m.n_lanes
    group = [GROUP_KEYS[int(g)] for g in L["group"].tolist()]
    rank = L["rank"].tolist()
    ref = L["ref"].tolist()
    ref2 = L["ref2"].tolist()
    mem_kind = dict(zip(m.mems["mem_id"].tolist(), m.mems["kind"].tolist()))
    # per-kind numbering from 0 within a node, ordered by id
    mem_short, seen = {}, {}
    for mid in sorted(mem_kind):
        key = (int(node_of_id(np.uint64(mid))), _mem_group(mem_kind[mid]))
        mem_short[mid] = (key, seen.get(key, 0))
        seen[key] = seen.get(key, 0) + 1
    proc_refs = {}  # (rank, kind) -> processor ids; numbered per kind from 0 by id
    for i in range(n):
        if group[i] in PROCESSOR_GROUPS:
            kk = "gpu" if group[i] in ("gpu_dev", "gpu_host") else group[i]
            proc_refs.setdefault((int(rank[i]), kk), set()).add(ref[i])
    proc_index = {key: {p: k for k, p in enumerate(sorted(v))}
                  for key, v in proc_refs.items()}
    lanes = []
    for i in range(n):
        g, r = group[i], int(rank[i])
        if g in PROCESSOR_GROUPS:
            kind_key = "gpu" if g in ("gpu_dev", "gpu_host") else g
            k = proc_index[(r, kind_key)][ref[i]]
            prefix = "e" if g == "proc_other" else GROUPS[GROUP_KEYS.index(g)][2]
            short = {"gpu_dev": f"g{k}d", "gpu_host": f"g{k}h"}.get(g, f"{prefix}{k}")
            long = f"Node {r} {_PROC_LONG[g]} {k} Processor(0x{ref[i]:x})"
            if g == "proc_other":
                long += " — the top-level task's lane (the guide's I/O lane)"
            if g == "gpu_dev":
                long += " device"
            elif g == "gpu_host":
                long += " host"
        elif g in MEMORY_GROUPS and g != "arrays":
            _, k = mem_short.get(ref[i], ((r, g), int(index_of_mem(np.uint64(ref[i])))))
            short = f"{_MEM_SHORT.get(g, 'm')}{k}"
            long = f"Node {r} {_MEM_LONG.get(g, 'Other')} Memory {k}(0x{ref[i]:x})"
        elif g == "channel":
            dst = _mem_name(ref2[i], mem_kind, mem_short)
            if ref[i] == 0:
                short = f"fill {dst}"
                long = f"Fill channel into {_mem_long(ref2[i], mem_kind, mem_short)}"
            else:
                short = f"{_mem_name(ref[i], mem_kind, mem_short)}-{dst}"
                long = (f"Channel {_mem_long(ref[i], mem_kind, mem_short)} to "
                        f"{_mem_long(ref2[i], mem_kind, mem_short)}")
        elif g == "dp":
            short, long = f"dp{r}", f"Node {r} Dependent Partitioning"
        else:
            short, long = L["name"][i], L["title"][i]
        lanes.append(LaneInfo(lane=i, rank=r, group=g, panel=PANEL.get(g, g), short=short,
                              long=long, rows=int(L["rows"][i]),
                              capacity=int(L["capacity"][i])))
    # groups in display order: rank by rank, groups in GROUPS order, lanes by short name
    groups = []
    by_group = {}
    for x in lanes:
        by_group.setdefault((x.rank, x.group), []).append(x.lane)
    for r in sorted(set(rank)):
        for gi, gk in enumerate(GROUP_KEYS):
            ids = by_group.get((r, gk))
            if not ids:
                continue
            ids.sort(key=lambda j: _natural(lanes[j].short))
            if gk in PROCESSOR_GROUPS:
                kind, cap = "processor", len(ids)
            elif gk in MEMORY_GROUPS:
                kind, cap = "memory", sum(lanes[j].capacity for j in ids)
            elif gk == "channel":
                kind, cap = "channel", 0
            else:
                kind, cap = "other", 0
            groups.append(GroupInfo(rank=r, group=gk, panel=PANEL.get(gk, gk),
                                    title=GROUPS[gi][1], kind=kind, lanes=tuple(ids),
                                    capacity=cap))
    return ProfileInfo(
        ranks=tuple(sorted(set(rank))), groups=tuple(groups), lanes=tuple(lanes),
        time_range=tuple(m.time_range()), warnings=tuple(str(w) for w in m.warnings),
        errors=tuple(getattr(m, "errors", ()) or ()), sources=tuple(m.sources),
        markers=tuple(m.markers), n_items=m.n_items,
        timeline_missing=why_timeline_missing(m, group),
        legion_version=next((r["legion_version"] for r in m.ranks
                             if r.get("legion_version")), ""))

def why_timeline_missing(m, groups):
    """A run seen only through the runtime's event stream has no processor lanes:
    Legion writes its own log at shutdown, which a crashed run never reaches."""
    if any(g in PROCESSOR_GROUPS for g in groups):
        return ""
    errs = list(getattr(m, "errors", ()) or ())
    marks = [mk.get("title", "") for mk in m.markers if mk.get("title")]
    ranks = m.ranks
    stream = "; shown: the runtime's event stream" if any(
        "runtime_end_ns" in r for r in ranks) else ""
    if any(r.get("format_version") for r in ranks):  # a Legion log, cut before its timeline
        cut = [str(w).split(": ", 2)[-1] for w in m.warnings if "truncated" in str(w)]
        why = ("the Legion Prof log holds no timeline records (Legion writes them at "
               "shutdown, which a crashed run never reaches)" + (f"; {cut[0]}" if cut else "")
               + stream)
    else:
        why = ("no Legion Prof log was read (Legion writes it at shutdown, which a crashed "
               "run never reaches)" + stream)
    if marks:
        why += f"; the run ended with: {marks[0]}"
    elif errs:
        why += f"; {errs[0]}"
    return why

def _mem_group(kind):
    try:
        return _MEMKIND_GROUP.get(MemKind(int(kind)), "mem_other")
    except ValueError:
        return "mem_other"

def _mem_name(mid, mem_kind, mem_short):
    g = _mem_group(mem_kind.get(mid, 0))
    node = int(node_of_id(np.uint64(mid)))
    k = mem_short[mid][1] if mid in mem_short else int(index_of_mem(np.uint64(mid)))
    return f"n{node}{_MEM_SHORT.get(g, 'm')}{k}"

def _mem_long(mid, mem_kind, mem_short):
    g = _mem_group(mem_kind.get(mid, 0))
    node = int(node_of_id(np.uint64(mid)))
    k = mem_short[mid][1] if mid in mem_short else int(index_of_mem(np.uint64(mid)))
    return f"Node {node} {_MEM_LONG.get(g, 'Other')} Memory {k}"


def _natural(s):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]
