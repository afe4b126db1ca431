"""What the program made, counted once per run: its operations and arrays from the runtime's
streams, and Legion's instances.

Every rank runs the whole program, so every rank's stream (``legate_N.runtime.prof``) repeats
the program's operations and arrays: counted over all ranks, 20 reductions were 60 and one
transpose 5 on 3 and 5 ranks.  They are counted from one rank's stream — the one that recorded
most (a rank that crashed early recorded fewer), the lowest of those — and an array's bytes
are the whole array's (a rank's lane holds its piece: ``assemble.stream_items``).  Legion's
instances are each rank's own: each is counted.  ``stats``,
``insights``, the report and the exports count through here.
"""

from __future__ import annotations

import numpy as np

from legate_prof.assemble.stream_items import stream_arrays
from legate_prof.model.kinds import ItemKind
from legate_prof.model.sort_order import unique_values, unique_with


def rank_of_items(model, ids):
    """The rank of each of ``ids`` (items of ``model``)."""
    return np.asarray(model.lanes["rank"])[np.asarray(model.items["lane"])[ids]]


def transfer_sizes(model, ids, column="size"):
    """The bytes of each of ``ids`` (instances, copies, fills; 0 where none is recorded);
    ``column="src"``: a runtime array's whole bytes (``stream_arrays``)."""
    t = model.transfers
    if len(t["item"]) == 0 or len(ids) == 0:
        return np.zeros(len(ids), np.uint64)
    j = np.clip(np.searchsorted(t["item"], ids), 0, len(t["item"]) - 1)
    return np.where(t["item"][j] == ids, t[column][j], 0).astype(np.uint64)


def stream_counts(model):
    """{rank: [operations, arrays, the arrays' bytes]} of each rank of ``model`` that has a
    runtime stream: what its stream recorded (whole arrays, not the rank's pieces)."""
    kind = np.asarray(model.items["kind"])
    ops = np.flatnonzero(kind == int(ItemKind.RUNTIME_OP))
    arrays = np.flatnonzero(stream_arrays(kind, model.items["op_id"]))
    out = {}
    for r, n in zip(*unique_with(rank_of_items(model, ops), counts=True)):
        out[int(r)] = [int(n), 0, 0]
    if len(arrays):
        rank = rank_of_items(model, arrays)
        size = transfer_sizes(model, arrays, "src").astype(np.float64)
        for r in unique_values(rank).tolist():
            mine = rank == r
            e = out.setdefault(int(r), [0, 0, 0])
            e[1], e[2] = int(np.count_nonzero(mine)), int(size[mine].sum())
    return out


def counting_rank(counts):
    """The rank whose stream counts the program (``stream_counts``, of one model or joined):
    the one with most operations, then arrays; the lowest of those; None without a stream."""
    if not counts:
        return None
    return min(counts, key=lambda r: (-counts[r][0], -counts[r][1], r))


def run_arrays(counts):
    """{"count", "bytes", "rank"}: the program's arrays once per run (``counting_rank``'s
    stream); None without a stream."""
    rank = counting_rank(counts)
    if rank is None:
        return None
    return {"count": counts[rank][1], "bytes": counts[rank][2], "rank": rank}


def joined_counts(profile):
    """``stream_counts`` of every part of a profile (a model, or a ``RankSet`` rank by rank)."""
    out = {}
    for part in profile.item_parts():
        for r, c in stream_counts(part.model).items():
            e = out.setdefault(r, [0, 0, 0])
            out[r] = [max(a, b) for a, b in zip(e, c)]  # (a rank is in one part)
    return out


def _counted_operations(profile):
    """[(part, its items that are ``counting_rank``'s stream's operations)] of a profile's
    parts holding some; None without a stream."""
    rank = counting_rank(joined_counts(profile))
    if rank is None:
        return None
    out = []
    for part in profile.item_parts():
        m = part.model
        ops = np.flatnonzero(np.asarray(m.items["kind"]) == int(ItemKind.RUNTIME_OP))
        ops = ops[rank_of_items(m, ops) == rank]
        if len(ops):
            out.append((part, ops))
    return out


def operations_per_line(profile, n_lines):
    """The program's operations launched from each line (provenance ids of the profile's
    numbering, ``n_lines`` of them), counted in ``counting_rank``'s stream; None without a
    stream."""
    counted = _counted_operations(profile)
    if counted is None:
        return None
    out = np.zeros(n_lines, np.int64)
    for part, ops in counted:
        out += np.bincount(part.provenances(ops).astype(np.int64), minlength=n_lines)[:n_lines]
    return out


def operations_by_line(profile):
    """{provenance id (the profile's numbering): {name id: count}}: the program's operations
    launched from each line, by name, as ``counting_rank``'s stream records them.  A line
    whose work Legion records under another line's provenance is here too: Legate realizes
    ``np.ones(N)`` lazily, its fill carrying the line that first reads it.  {} without a
    stream."""
    out = {}
    for part, ops in _counted_operations(profile) or ():
        for q, nm in zip(part.provenances(ops).tolist(), part.names(ops).tolist()):
            if q:
                names = out.setdefault(int(q), {})
                names[int(nm)] = names.get(int(nm), 0) + 1
    return out
