"""The program stopped for a value: its waits for an array's values, as the runtime's stream
records them (``ItemKind.PROGRAM_WAIT``), where Legion records only part of such a wait.

The guide's efficient example (N = 400 k, one rank, ``fixtures/real/value_wait_1rank``):
``z[gt1] += 2.0`` sizes its selection by counting the mask, and the program waited 475 ms
for the count; Legion's wait record of the top-level task holds 280 ms of it, the path none,
and 200 ms of the path read as the program's thread running ("launch").  With the stream, the whole wait is the program blocked ("blocked" on
the critical path, ``critical_path.waiting_apart``), counted for the line that waited.
"""

from __future__ import annotations

import numpy as np

from legate_prof.analyze.path_lines import run_operations_made
from legate_prof.model.item_parts import by_part
from legate_prof.model.kinds import ItemKind


def waits_recorded(source):
    """Whether every rank's runtime stream records the program's waits for values: one
    written before they were recorded holds none, and a rank given without its stream
    cannot say (its run cannot say a wait is gone).  A rank built before streams said so
    (a bundle converted then: no ``records_waits``) records them where it holds one."""
    ranks = source.summary_model().ranks
    read = [r for r in ranks if r.get("runtime_end_ns") is not None]
    if not read or len(read) < len(ranks):
        return False
    if all("records_waits" in r for r in read):
        return all(bool(r["records_waits"]) for r in read)
    held = wait_items(source)
    return all(bool(r.get("records_waits", int(r.get("rank", -1)) in held)) for r in read)


def program_waits(source):
    """{rank: (start, end)} of the program's recorded waits, each rank's in time order with
    overlapping ones merged (a window's source: those within it)."""
    out = {}
    for r, (start, stop, _, _) in wait_items(source).items():
        _, s, e = merged(np.zeros(len(start), np.int64), start, stop)
        out[r] = (s, e)
    return out


def item_ranks(source, items):
    """The rank of each of the items ``items`` (profile ids; -1 for a path's row of no item:
    the time before it, or one a damaged stream's run left unknown)."""
    items = np.asarray(items, np.int64)
    parts = source.item_parts()
    offsets = np.array([p.item_off for p in parts] + [parts[-1].item_off
                                                      + parts[-1].model.n_items], np.int64)
    out = np.full(len(items), -1, np.int64)
    ok = np.flatnonzero((items >= 0) & (items < offsets[-1]))
    for k, sel, local in by_part(offsets, items[ok]):
        m = parts[k].model
        out[ok[sel]] = m.lanes["rank"][m.items["lane"][local]]
    return out


def clipped(rows, first, end, start, stop, lo, hi):
    """(row, start, end) of each interval ``k`` in ``[first[i], end[i])`` of each of
    ``rows[i]`` (``start[k]``, ``stop[k]``), clipped to its row's ``[lo, hi)``: every row's
    ranges at once."""
    n = np.maximum(end - first, 0)
    j = np.repeat(first, n) + (np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n))
    row = np.repeat(rows, n)
    return row, np.maximum(start[j], lo[row]), np.minimum(stop[j], hi[row])


def joined(found):
    """The (row, start, end) triples ``found`` as one (empty: none)."""
    if not found:
        z = np.zeros(0, np.int64)
        return z, z, z
    return tuple(np.concatenate(x) for x in zip(*found))


def waits_of_rows(waits, rank, lo, hi):
    """(row, start, end) of the waits of ``waits`` (``program_waits``) overlapping each row
    ``[lo, hi)`` of a program's piece on rank ``rank[row]``, clipped to it, by row."""
    found = []
    for r, (s, e) in waits.items():
        at = np.flatnonzero(rank == r)
        if len(at):  # (merged: their ends in order too)
            found.append(clipped(at, np.searchsorted(e, lo[at], "right"),
                                 np.searchsorted(s, hi[at], "left"), s, e, lo, hi))
    return joined(found)


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


def _stream_items(source, kind):
    """(part, its items of ``kind``, their ranks) of each part holding some, read where a
    runtime stream's lane is (none: nothing to look for; the kind column is read, not a
    lane's range: that index costs a fresh build 0.5 s at 10 M items)."""
    for p in source.item_parts():
        m = p.model
        if not len(m.lanes_of("ops")):
            continue
        sel = np.flatnonzero(np.asarray(m.items["kind"]) == kind)
        if len(sel):
            yield p, sel, np.asarray(m.lanes["rank"], np.int64)[np.asarray(m.items["lane"][sel])]


def wait_items(source):
    """{rank: (start, stop, line, what)} of the program's recorded waits, each rank's in
    time order (a program's thread waits for one value at a time): ``line`` the provenance
    id of the line that waited, ``what`` the name id of the operation that last made or wrote
    the array it read (0: unknown)."""
    cols = {}
    for p, sel, rank in _stream_items(source, ItemKind.PROGRAM_WAIT):
        m = p.model
        what = np.asarray(m.items["detail"][sel], np.int64)
        what = what if p.name_map is None else np.asarray(p.name_map[what], np.int64)
        start, stop = (np.asarray(m.items[c][sel], np.int64) for c in ("start", "stop"))
        line = np.asarray(p.provenances(sel), np.int64)
        for r in np.unique(rank).tolist():
            mine = rank == r
            cols.setdefault(r, []).append((start[mine], stop[mine], line[mine], what[mine]))
    out = {}
    for r, parts in cols.items():
        start, stop, line, what = (np.concatenate(c) for c in zip(*parts))
        o = np.argsort(start, kind="stable")
        out[r] = (start[o], stop[o], line[o], what[o])
    return out


def waits_by_line(source):
    """{provenance id: {"waits", "waited_ns", "longest_ns", "ranks", "window": [first
    start, last end], "for": {operation waited for: waits}}} of the program's recorded
    waits, by the line that waited, counted once a run: every rank runs the program and
    its stream repeats the waits, so a line's count and time are its rank's that waited the
    most (``ranks``: how many ranks waited there; the operations' names "" unknown)."""
    out = {}
    for start, stop, line, what in wait_items(source).values():
        for p in np.unique(line).tolist():
            mine = line == p
            took = stop[mine] - start[mine]
            x = out.setdefault(p, {"waits": 0, "waited_ns": 0, "longest_ns": 0, "ranks": 0,
                                   "window": [int(start[mine][0]), int(stop[mine].max())],
                                   "for": {}})
            x["waits"] = max(x["waits"], int(mine.sum()))
            x["waited_ns"] = max(x["waited_ns"], int(took.sum()))
            x["longest_ns"] = max(x["longest_ns"], int(took.max()))
            x["ranks"] += 1
            x["window"] = [min(x["window"][0], int(start[mine][0])),
                           max(x["window"][1], int(stop[mine].max()))]
            names, n = np.unique(what[mine], return_counts=True)
            for w, k in zip(names.tolist(), n.tolist()):
                name = source.names[w] if w else ""
                x["for"][name] = max(x["for"].get(name, 0), k)
    return out


# what the program's waiting exposes: the runtime's latency, not work that had to be done
LATENCY = ("runtime", "gap", "blocked", "waiting")


def held_by_waits(source, rows):
    """({provenance id: mask of the path's pieces ``rows`` (``PathPieces.rows``: ns,
    category, line, item, begin)}, {provenance id: (the latency its waits exposed, of the
    rank that exposed most; whether they are the program's last: a final read, begun after
    its rank's last submission in the run)}): what each line's waits cost the run (what
    the mask holds), a wait at a time — a lower bound.  A wait
    the path went through (the program's thread on the path as it ended: the path back to
    its start is what it waited for) exposed the runtime's latency within it (``LATENCY``
    pieces, any rank, clipped to the wait); a program that had not waited would have
    launched on meanwhile, so at most the program's own launching on the path after it, until
    its next wait, is saved (launching that led to an operation: not the program's exit):
    the wait holds the smaller of the two (the guide's efficient example at N = 400 k waited
    475 ms for its mask's count, mostly for the runtime's start-up, and launched 0.8 ms
    before its next wait)."""
    ns, cat, line_of, item, begin = rows
    waits = wait_items(source)
    out, counted = {}, {}
    if not waits or not len(ns):
        return out, counted
    rank = item_ranks(source, item)
    submits = last_submits(source)
    for r, (start, stop, line, _) in waits.items():
        submit = submits.get(r, np.iinfo(np.int64).max)
        launched = (cat == "launch") & (rank == r) & (line_of != 0) & (begin < submit)
        hold, lat_w = _held_on_rank(ns, cat, begin, rank == r, launched, start, stop)
        final = start >= submit
        for p in np.unique(line).tolist():
            held = np.zeros(len(ns), bool)
            held[hold >= 0] = line[hold[hold >= 0]] == p
            out[p] = out[p] | held if p in out else held
            was = counted.get(p, (0, True))
            mine = line == p
            counted[p] = (max(was[0], int(lat_w[mine].sum())), was[1] and bool(final[mine].all()))
    return out, counted


def blocked_in_waits(source, rows):
    """{provenance id: the path's time the program was blocked within the line's own waits}:
    the "blocked" pieces of ``rows`` (``PathPieces.rows``) clipped to the waits of their
    rank — what ``critical`` counts as the program blocked there, summed over the ranks (the
    path's pieces never overlap), so a finding can say it where it counts less."""
    ns, cat, _, item, begin = rows
    out = {}
    blocked = np.flatnonzero(cat == "blocked")
    waits = wait_items(source) if len(blocked) else {}
    if not waits:
        return out
    rank = item_ranks(source, item[blocked])
    lo, hi = begin[blocked], begin[blocked] + ns[blocked]
    for r, (start, stop, line, _) in waits.items():
        at = np.flatnonzero(rank == r)
        for p in np.unique(line).tolist():
            s, e = start[line == p], stop[line == p]  # (one thread's: apart, in order)
            _, a, b = clipped(at, np.searchsorted(e, lo[at], "right"),
                              np.searchsorted(s, hi[at], "left"), s, e, lo, hi)
            out[p] = out.get(p, 0) + int(np.maximum(b - a, 0).sum())
    return out


def waits_going_on(source, at):
    """{provenance id: how many of the line's waits still went on at ``at`` (a window's end:
    the program resumed beyond it), counted once a run (the rank with most)}."""
    out = {}
    for _, stop, line, _ in wait_items(source).values():
        late = line[stop >= at]
        for p, n in zip(*np.unique(late, return_counts=True)):
            out[int(p)] = max(out.get(int(p), 0), int(n))
    return out


def last_submits(source):
    """{rank: when the program submitted its last operation} (the runtime stream's, of the
    run: a window's source is given the run's, ``path_lines.Made``): the program's thread
    after it launches nothing, it ends (a final print's wait hides none)."""
    return run_operations_made(source).submitted


def _held_on_rank(ns, cat, begin, on_rank, launched, start, stop):
    """(each piece's wait it counts for, -1 none; each wait's latency, 0 for a wait the path
    did not go through) of one rank's waits (``held_by_waits``); ``launched``: the program's
    pieces that launched an operation."""
    n = len(start)
    end = begin + ns
    program = np.flatnonzero(np.isin(cat, ("launch", "blocked")) & on_rank)
    program = program[np.argsort(begin[program], kind="stable")]
    k = np.searchsorted(begin[program], stop, "right") - 1  # (the program's piece at the end)
    resumed = (k >= 0) & (end[program[np.maximum(k, 0)]] >= stop) if len(program) else \
        np.zeros(n, bool)
    lat = np.isin(cat, LATENCY)
    lat_w = _covered(begin[lat], ns[lat], stop) - _covered(begin[lat], ns[lat], start)
    within = np.searchsorted(start, end, "left") - 1  # (the last wait begun before its end)
    lat &= within >= 0
    lat[lat] &= begin[lat] < stop[within[lat]]
    since = np.searchsorted(stop, begin, "right") - 1  # (the last wait ended by its begin)
    nxt = np.append(start, np.iinfo(np.int64).max)[since + 1]
    after = launched & (since >= 0) & (begin < nxt)
    after_w = np.bincount(since[after], weights=ns[after], minlength=n)
    by_latency = resumed & (lat_w <= after_w)
    hold = np.full(len(ns), -1, np.int64)
    pick = lat.copy()
    pick[lat] = by_latency[within[lat]]
    hold[pick] = within[pick]
    pick = after.copy()
    pick[after] = (resumed & ~by_latency)[since[after]]
    hold[pick] = since[pick]
    return hold, np.where(resumed, lat_w, 0)


def _covered(begin, ns, at):
    """How much of the pieces (``begin``, ``ns``: disjoint) lies before each time ``at``."""
    o = np.argsort(begin, kind="stable")
    begin, ns = begin[o], ns[o]
    before = np.concatenate([[0], np.cumsum(ns)])
    k = np.searchsorted(begin, at, "right")  # (pieces begun by then; the last maybe in part)
    if not len(begin):
        return np.zeros(len(at), np.int64)
    last = np.maximum(k - 1, 0)
    part = np.where(k > 0, np.minimum(at - begin[last], ns[last]), 0)
    return before[last] + np.maximum(part, 0)
