"""The program stopped for a value: its waits for an array's values, as the runtime's stream
records them (``ItemKind.PROGRAM_WAIT``), where Legion records only part of such a wait.

The guide's efficient example (N = 400 k, one rank): ``z[gt1] += 2.0`` sizes its selection
by counting the mask, and the program waited 545 ms for the count; Legion's wait record of
the top-level task ends after 374 ms of it, and the rest read as the program's thread
running ("launch").  With the stream, the whole wait is the program blocked ("blocked" on
the critical path, ``critical_path.waiting_apart``), counted for the line that waited.
"""

from __future__ import annotations

import numpy as np

from legate_prof.model.item_parts import by_part
from legate_prof.model.kinds import ItemKind


def program_waits(source):
    """{rank: (start, end)} of the program's recorded waits, each rank's in time order with
    overlapping ones merged (a window's source: those within it)."""
    starts, ends = {}, {}
    for p in source.item_parts():
        m = p.model
        kind, start, stop = m.items["kind"], m.items["start"], m.items["stop"]
        for lane in m.lanes_of("ops").tolist():
            lo, hi = m.lane_range(lane)
            sel = lo + np.flatnonzero(np.asarray(kind[lo:hi]) == ItemKind.PROGRAM_WAIT)
            if len(sel):
                r = int(m.lanes["rank"][lane])
                starts.setdefault(r, []).append(np.asarray(start[sel], np.int64))
                ends.setdefault(r, []).append(np.asarray(stop[sel], np.int64))
    out = {}
    for r in starts:
        row = np.zeros(sum(len(s) for s in starts[r]), np.int64)
        _, s, e = merged(row, np.concatenate(starts[r]), np.concatenate(ends[r]))
        out[r] = (s, e)
    return out


def item_ranks(source, items):
    """The rank of each of the items ``items`` (profile ids)."""
    items = np.asarray(items, np.int64)
    parts = source.item_parts()
    offsets = np.array([p.item_off for p in parts] + [parts[-1].item_off
                                                      + parts[-1].model.n_items], np.int64)
    out = np.zeros(len(items), np.int64)
    for k, sel, local in by_part(offsets, items):
        m = parts[k].model
        out[sel] = m.lanes["rank"][m.items["lane"][local]]
    return out


def waits_of_rows(waits, rank, lo, hi):
    """(row, start, end) of the waits of ``waits`` (``program_waits``) overlapping each row
    ``[lo, hi)`` of a program's piece on rank ``rank[row]``, clipped to it, by row."""
    rows, w0, w1 = [], [], []
    for r, (s, e) in waits.items():
        at = np.flatnonzero(rank == r)
        if not len(at):
            continue
        a = np.searchsorted(e, lo[at], "right")  # (merged: ends in order too)
        b = np.searchsorted(s, hi[at], "left")
        n = np.maximum(b - a, 0)
        j = np.repeat(a, n) + (np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n))
        row = np.repeat(at, n)
        rows.append(row)
        w0.append(np.maximum(s[j], lo[row]))
        w1.append(np.minimum(e[j], hi[row]))
    if not rows:
        z = np.zeros(0, np.int64)
        return z, z, z
    return tuple(np.concatenate(x) for x in (rows, w0, w1))


def merged(row, start, end):
    """(row, start, end) of the intervals of each row, those that overlap or touch merged,
    by row and then time: the union of each row's.  (Rows apart at once: each row's times
    are moved above the rows' before it, so that one running maximum serves them all.)"""
    if len(row) == 0:
        return row, start, end
    end = np.maximum(end, start)
    o = np.lexsort((start, row))
    row, start, end = row[o], start[o], end[o]
    first = np.r_[True, row[1:] != row[:-1]]
    base = np.minimum.reduceat(start, np.flatnonzero(first))
    span = np.maximum.reduceat(end, np.flatnonzero(first)) - base + 1
    lift = np.repeat(np.cumsum(span) - span - base, np.diff(np.r_[np.flatnonzero(first),
                                                                  len(row)]))
    s, e = start + lift, end + lift
    reach = np.maximum.accumulate(e)
    new = np.r_[True, s[1:] > reach[:-1]]
    at = np.flatnonzero(new)
    return row[at], start[at], np.maximum.reduceat(e, at) - lift[at]


def waits_by_line(source):
    """{provenance id: {"waits", "waited_ns", "longest_ns", "window": [first start, last
    end], "for": {operation waited for: waits}}} of the program's recorded waits, by the
    line that waited (a wait's ``detail`` names the operation that last made or wrote the
    array it read, "" unknown)."""
    out = {}
    for p in source.item_parts():
        m = p.model
        for lane in m.lanes_of("ops").tolist():
            lo, hi = m.lane_range(lane)
            sel = lo + np.flatnonzero(np.asarray(m.items["kind"][lo:hi]) == ItemKind.PROGRAM_WAIT)
            if not len(sel):
                continue
            start = np.asarray(m.items["start"][sel], np.int64)
            stop = np.asarray(m.items["stop"][sel], np.int64)
            what = np.asarray(m.items["detail"][sel], np.int64)
            if p.name_map is not None:
                what = p.name_map[what]
            for line, s, e, w in zip(p.provenances(sel).tolist(), start.tolist(),
                                     stop.tolist(), what.tolist()):
                x = out.setdefault(line, {"waits": 0, "waited_ns": 0, "longest_ns": 0,
                                          "window": [s, e], "for": {}})
                x["waits"] += 1
                x["waited_ns"] += e - s
                x["longest_ns"] = max(x["longest_ns"], e - s)
                x["window"] = [min(x["window"][0], s), max(x["window"][1], e)]
                name = source.names[w] if w else ""
                x["for"][name] = x["for"].get(name, 0) + 1
    return out


def blocked_for_values(source, rows):
    """Which of the path's pieces ``rows`` (``PathPieces.rows``: ns, category, line, item,
    begin) are the program blocked within a wait its stream recorded (on the item's rank)."""
    ns, cat, _, item, begin = rows
    out = np.zeros(len(ns), bool)
    waits = program_waits(source)
    at = np.flatnonzero(cat == "blocked")
    if not waits or not len(at):
        return out
    row, w0, w1 = waits_of_rows(waits, item_ranks(source, item[at]), begin[at],
                                begin[at] + ns[at])
    out[at[row[w1 > w0]]] = True
    return out
