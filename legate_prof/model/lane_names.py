"""The one naming of lanes, as the reference viewer names them: short names for labels
(``c0``, ``g0d``, ``u1``, ``s0``, ``n0s0-n0f1``, ``fill n0s0``, ``dp0``) and long names for
tooltips and exports (``Node 0 CPU 1 Processor(0x1d00000000000003)``).  Every output — the
viewer, screenshots, the report, exports, ``stats`` and ``insights`` — names a lane with this.

Processors are numbered per node and kind from 0 in id order (a GPU's device and host lanes
share its number); memories per node and kind from 0 in id order, over all the profile's
memories (so a channel names a memory as its memory lane does).
"""

from __future__ import annotations

import numpy as np

from legate_prof.model.kinds import (GROUP_KEYS, GROUPS, MEM_GROUP, MEMORY_GROUPS,
                                     PROCESSOR_GROUPS, MemKind, index_of_mem, node_of_id)

# long kind names as the reference viewer writes them ("Node 0 CPU 1 Processor(0x…)")
PROC_LONG = {"cpu": "CPU", "gpu_dev": "GPU", "gpu_host": "GPU", "utility": "Utility",
             "io": "I/O", "python": "Python", "openmp": "OpenMP", "proc_group": "ProcGroup",
             "proc_set": "ProcSet", "proc_other": "Extern"}
MEM_SHORT = {"system": "s", "framebuffer": "f", "zerocopy": "z", "registered": "r",
             "socket": "k", "mem_other": "m"}
MEM_LONG = {"system": "System", "framebuffer": "Framebuffer", "zerocopy": "Zero-Copy",
            "registered": "Registered", "socket": "Socket", "mem_other": "Other"}


def memory_group(kind) -> str:
    """The lane group of a memory kind (``mem_other`` for kinds without a group)."""
    try:
        return MEM_GROUP.get(MemKind(int(kind)), "mem_other")
    except ValueError:
        return "mem_other"


class _Memories:
    """Each memory's (node, group, number within them) over all the profile's memories."""

    def __init__(self, mems):
        self.kind = dict(zip(mems["mem_id"].tolist(), mems["kind"].tolist()))
        self.number, seen = {}, {}
        for mid in sorted(self.kind):
            key = (int(node_of_id(np.uint64(mid))), memory_group(self.kind[mid]))
            self.number[mid] = seen.get(key, 0)
            seen[key] = seen.get(key, 0) + 1

    def _of(self, mid):
        g = memory_group(self.kind.get(mid, 0))
        k = self.number.get(mid, int(index_of_mem(np.uint64(mid))))
        return int(node_of_id(np.uint64(mid))), g, k

    def short(self, mid):
        node, g, k = self._of(mid)
        return f"n{node}{MEM_SHORT.get(g, 'm')}{k}"

    def long(self, mid):
        node, g, k = self._of(mid)
        return f"Node {node} {MEM_LONG.get(g, 'Other')} Memory {k}"


def memory_name(mems, mem_id) -> str:
    """A memory as its lane's long name says it: 'Node 0 System Memory 0(0x1e00000000000000)'."""
    return f"{_Memories(mems).long(int(mem_id))}(0x{int(mem_id):x})"


def lane_names(group, rank, ref, ref2, mems):
    """(short names, long names) of lanes given by their columns (group index, rank, ref,
    ref2) and the profile's memories table."""
    group = [GROUP_KEYS[int(g)] for g in np.asarray(group).tolist()]
    rank = [int(r) for r in np.asarray(rank).tolist()]
    ref = [int(x) for x in np.asarray(ref).tolist()]
    ref2 = [int(x) for x in np.asarray(ref2).tolist()]
    memories = _Memories(mems)
    proc_refs = {}  # (rank, kind) -> processor ids; numbered per kind from 0 by id
    for g, r, x in zip(group, rank, ref):
        if g in PROCESSOR_GROUPS:
            proc_refs.setdefault((r, _proc_kind(g)), set()).add(x)
    proc_number = {key: {p: k for k, p in enumerate(sorted(v))}
                   for key, v in proc_refs.items()}
    shorts, longs = [], []
    for g, r, x, x2 in zip(group, rank, ref, ref2):
        if g in PROCESSOR_GROUPS:
            short, long = _processor_names(g, r, x, proc_number[(r, _proc_kind(g))][x])
        elif g in MEMORY_GROUPS and g != "arrays":
            k = memories.number.get(x, int(index_of_mem(np.uint64(x))))
            short = f"{MEM_SHORT.get(g, 'm')}{k}"
            long = f"Node {r} {MEM_LONG.get(g, 'Other')} Memory {k}(0x{x:x})"
        elif g == "channel":
            if x == 0:
                short = f"fill {memories.short(x2)}"
                long = f"Fill channel into {memories.long(x2)}"
            else:
                short = f"{memories.short(x)}-{memories.short(x2)}"
                long = f"Channel {memories.long(x)} to {memories.long(x2)}"
        elif g == "arrays":
            short, long = f"arrays{r}", f"Rank {r} Arrays (runtime)"
        elif g == "ops":
            short, long = f"ops{r}", f"Rank {r} Operations (runtime)"
        else:
            short, long = f"dp{r}", f"Node {r} Dependent Partitioning"
        shorts.append(short)
        longs.append(long)
    return shorts, longs


def _proc_kind(group):
    return "gpu" if group in ("gpu_dev", "gpu_host") else group


def _processor_names(group, rank, proc_id, k):
    prefix = "e" if group == "proc_other" else GROUPS[GROUP_KEYS.index(group)][2]
    short = {"gpu_dev": f"g{k}d", "gpu_host": f"g{k}h"}.get(group, f"{prefix}{k}")
    long = f"Node {rank} {PROC_LONG[group]} {k} Processor(0x{proc_id:x})"
    if group == "proc_other":
        long += " — the top-level task's lane (the guide's I/O lane)"
    elif group == "gpu_dev":
        long += " device"
    elif group == "gpu_host":
        long += " host"
    return short, long
