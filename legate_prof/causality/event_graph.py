"""The Realm event graph and the reference's pass over it (``state.rs``
``compute_critical_paths``): for each event, the *critical* event behind it — the root whose
trigger made it trigger — and when it triggered.

Vertices are the events the event records name (results, preconditions, every earlier phase
of a named barrier) plus the items' completions that some edge starts from; the rest of the
items' completions are roots the pass never needs to visit (an item's completion has no
incoming edge: its trigger is the item's stop).  Over whole columns: vertices by a sort of
the named events, attributes by the first recording, edges newest first, and Kahn's order one
level at a time (the rounds are the longest chain of events, barrier phases mostly).

A damaged graph never raises: an event nothing records is an unknown root (what depends on
it is "unknown"), and a cycle clears every lookup, as the reference does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from legate_prof.model.event_tables import (
    ARRIVE_BARRIER, COMPLETION_QUEUE_EVENT, EXTERNAL_HANDSHAKE, NO_TIME, UNKNOWN_EVENT)
from legate_prof.model.intervals import ranges_end_to_end
from legate_prof.model.sort_order import (SORTED_SEARCH_ABOVE, SORTED_SEARCH_KEYS, equal_runs,
                                          lex_order, sorting_order, stable_order)

# kinds whose trigger time the pass computes (the others carry their record's)
PROPAGATED = np.zeros(16, bool)
PROPAGATED[[5, 6, 7, 8, 9, 10, 11, 12, 14]] = True
BARRIER_TAG = np.uint64(2)
GENERATION_MASK = np.uint64(0xFFFFF)
# The earlier phases of the barriers named made vertices of, at most this many per event
# named (or PHASES_ALWAYS): a run names every generation it uses (phases: 0.02-0.06 of the
# events named in every run recorded here); a damaged id at generation 983,050 in a bundle
# of 34 KB made a million (196 MiB), 48 such ids fifty million.  Past it, only the phases
# named, as for any damaged id.
PHASES_PER_EVENT = 4
PHASES_ALWAYS = 1 << 16


def is_barrier(events):
    return (np.asarray(events, np.uint64) >> np.uint64(60)) == BARRIER_TAG


def sorted_unique(a):
    """Distinct values, sorted (by a sort: numpy's hash-based unique is slow on u64 ids)."""
    a = np.sort(np.asarray(a), kind="stable")  # (event ids come in runs: merged, not sorted)
    if len(a) < 2:
        return a
    return a[np.concatenate([[True], a[1:] != a[:-1]])]


def first_of_runs(sorted_keys):
    """Mask of the first element of each run of equal keys."""
    keep = np.ones(len(sorted_keys), bool)
    keep[1:] = sorted_keys[1:] != sorted_keys[:-1]
    return keep


# Above this many queries among more than ``SORTED_SEARCH_KEYS`` keys a search sorts them
# first (``sort_order.search_sorted``).
SORT_QUERIES_ABOVE = SORTED_SEARCH_ABOVE
# Above this many queries, runs of equal ones are looked up once each where they make half
# of them or less (the guide's 10 M example: 903 k calls name their callers in 147 k runs).
RUNS_OF_QUERIES_ABOVE = 1 << 12


def find_sorted(keys, query):
    """Position of each ``query`` in the sorted ``keys``, -1 where absent (and for 0)."""
    pos, found = positions_in_sorted(keys, query)
    return np.where(found, pos, -1)


def positions_in_sorted(keys, query):
    """(a position in the non-empty sorted ``keys`` of each ``query``, whether the key there
    is the query — and not 0): ``find_sorted`` for a caller that gathers at the positions
    anyway."""
    query = np.asarray(query, keys.dtype)
    if len(keys) == 0 or len(query) == 0:
        return np.zeros(len(query), np.int64), np.zeros(len(query), bool)
    if len(query) > RUNS_OF_QUERIES_ABOVE:
        head, runs = equal_runs(query)
        if 2 * len(head) <= len(query):  # (a task's calls name it one after another)
            pos, found = positions_in_sorted(keys, query[head])
            return np.repeat(pos, runs), np.repeat(found, runs)
    if len(query) > SORT_QUERIES_ABOVE and len(keys) > SORTED_SEARCH_KEYS:
        search = _merged_left if len(query) * 3 >= len(keys) else _searched_in_pieces
        if bool(np.all(query[1:] >= query[:-1])):
            pos = search(keys, query)
        else:
            order = sorting_order(query)  # (runs of ids in order: cheap)
            pos = np.empty(len(query), np.int64)
            pos[order] = search(keys, query[order])
    else:
        pos = _searched_in_pieces(keys, query)
    np.minimum(pos, len(keys) - 1, out=pos)
    return pos, (keys[pos] == query) & (query != 0)


def _searched_in_pieces(keys, query):
    """``np.searchsorted(keys, query)``, ``SEARCH_PIECE`` queries at a time: numpy's search
    holds the interpreter's lock throughout, and a search of a million queries made in a
    thread held a window's thread 85 ms; between pieces the window gets the lock."""
    if len(query) <= SEARCH_PIECE:
        return np.searchsorted(keys, query)
    return np.concatenate([np.searchsorted(keys, query[a:a + SEARCH_PIECE])
                           for a in range(0, len(query), SEARCH_PIECE)])


SEARCH_PIECE = 1 << 16


def _merged_left(keys, query):
    """``np.searchsorted(keys, query)`` of sorted ``query``s nearly as many as the keys, by
    one stable sort of both (two runs: a merge) rather than a binary search of each (on
    event ids, a third of the time).  Each query, placed before keys equal to it, has as
    many queries before it as its index: the rest are the keys below it."""
    order = stable_order(np.concatenate([query, keys]))
    return np.flatnonzero(order < len(query)) - np.arange(len(query))


@dataclass
class EventGraph:
    """Vertices (sorted event ids) with their kind, creator event, creation and trigger time
    and, after ``run_pass``, their critical vertex (-1: none).

    A graph of one rank's records among others (``rank_links``) also says which vertices are
    *open*: their value may depend on what other ranks record.  A graph of what the ranks
    left open has *pinned* vertices: computed by their rank, each with a critical vertex of
    its own past the sorted ones (``pin``)."""

    events: np.ndarray
    kind: np.ndarray
    creator: np.ndarray
    creation: np.ndarray
    trigger: np.ndarray
    src: np.ndarray  # edges as vertex indices, each (src, dst) once, newest copy's rank
    dst: np.ndarray
    rank: np.ndarray  # insertion order (the pass reads a vertex's edges newest first)
    n_edges: int  # edges the reference's graph holds (parallel copies counted)
    critical: np.ndarray | None = None
    cycle: bool = False
    rounds: int = 0
    open: np.ndarray | None = None  # bool per vertex (a rank's graph among others)
    pinned: np.ndarray | None = None  # bool per vertex: ``critical`` given (``pin``)
    pin_target: np.ndarray | None = None  # the pinned vertices' critical vertex
    inserted_dst: np.ndarray | None = None  # the destination of each of the ``n_edges``
    by_item: np.ndarray | None = None  # bool per vertex: an item's completion
    # per vertex (pinned ones' critical vertices too): the item whose completion it is, -1
    # where none (read as "unknown": its creator event is looked up again)
    item: np.ndarray | None = None
    # the vertex of each record's result and each edge's source and destination (-1: none)
    record_vertex: np.ndarray | None = None
    edge_vertices: tuple | None = None

    @property
    def has_data(self):
        """The reference computes critical paths only for a graph with an edge."""
        return self.n_edges > 0

    def vertex(self, events):
        return find_sorted(self.events, events)


def _barrier_phases(named):
    """Every generation 1..g of each barrier named at generation g (the reference adds them
    when a barrier is first named, with an edge from each phase to the next)."""
    bar = sorted_unique(named[is_barrier(named)])
    if len(bar) == 0:
        return bar
    gen = (bar & GENERATION_MASK).astype(np.int64)
    base_all = bar - gen.astype(np.uint64)
    base = sorted_unique(base_all)
    maxgen = np.zeros(len(base), np.int64)
    np.maximum.at(maxgen, np.searchsorted(base, base_all), gen)
    if int(maxgen.sum()) > max(PHASES_ALWAYS, PHASES_PER_EVENT * len(named)):
        return bar  # (damaged ids: only the phases named)
    rep = np.repeat(np.arange(len(base)), maxgen)
    off = np.arange(int(maxgen.sum())) - np.repeat(np.cumsum(maxgen) - maxgen, maxgen)
    return base[rep] + (off + 1).astype(np.uint64)


def build_graph(events, completions, also=()):
    """The graph of the event tables ``events`` (``model.event_tables``, all ranks in reading
    order).  ``completions(ev)`` gives, for event ids, the items' completion vertices they
    are: (kind, creation, trigger, item) arrays, kind -1 where no item completes that event.
    ``also``: more events that are vertices (the implicit tasks' events: placeholders)."""
    rec, edges = events["records"], events["edges"]
    named = np.concatenate([rec["result"], edges["src"], edges["dst"],
                            np.asarray(also, np.uint64)]).astype(np.uint64)
    ids, at = _vertices(named, _barrier_phases(named[named != 0]))
    n_rec, n_edges = len(rec["result"]), len(edges["src"])
    g = _record_items(ids, completions)
    g.record_vertex = at[:n_rec]
    _record_events(g, rec)
    g.edge_vertices = (at[n_rec:n_rec + n_edges], at[n_rec + n_edges:n_rec + 2 * n_edges])
    _add_edges(g, edges)
    return g


def _vertices(named, phases):
    """(the vertices: the distinct events of ``named`` and ``phases`` but 0, sorted; the
    vertex of each of ``named``, -1 for 0) by one sort, which the ids' runs make cheap —
    rather than a search of each record's and edge's events among the vertices."""
    both = np.concatenate([named, phases])
    order = sorting_order(both)  # (equal ids: one vertex, whichever comes first)
    s = both[order]
    first = first_of_runs(s)
    vertex = np.cumsum(first) - 1
    if len(s) and s[0] == 0:
        vertex -= 1  # (0 is no event: its run, first in order, is no vertex)
        first[0] = False
    at = np.empty(len(both), np.int64)
    at[order] = vertex
    return s[first], at[:len(named)]


def _record_items(ids, completions):
    """The graph of the vertices ``ids``, those that are items' completions made (their
    item's record makes them), the rest unknown until a record makes them: ``completions``'
    columns kept, cleared where no item completes the vertex."""
    kind, creation, trigger, item = completions(ids)
    by_item = kind >= 0
    other = ~by_item
    kind = kind.astype(np.int8)
    for column, none in ((kind, UNKNOWN_EVENT), (creation, NO_TIME), (trigger, NO_TIME),
                         (item, -1)):
        np.copyto(column, none, where=other)
    creator = np.where(by_item, ids, np.uint64(0))  # (named by its own event)
    return EventGraph(events=ids, kind=kind, creator=creator, creation=creation,
                      trigger=trigger, src=None, dst=None, rank=None, n_edges=0,
                      by_item=by_item, item=item)


def _record_events(g, rec):
    """Vertices the event records make: the first record of an event wins (an item's
    completion before any); a barrier's phase takes the creator and time of its latest
    arrival (the first recorded among equals); a handshake its first record's time."""
    v = g.record_vertex
    if len(v) == 0:
        return
    kind = rec["kind"]  # (u8: compared and stored as is)
    arrival = (kind == ARRIVE_BARRIER) | (kind == EXTERNAL_HANDSHAKE)
    free = g.kind == UNKNOWN_EVENT  # not made by an item
    plain = np.flatnonzero(~arrival & (v >= 0))
    plain = plain[free[v[plain]]]
    o = plain[stable_order(v[plain])]
    o = o[first_of_runs(v[o])]
    vv = v[o]
    g.kind[vv], g.creator[vv] = kind[o], rec["creator"][o]
    g.creation[vv], g.trigger[vv] = rec["time"][o], rec["trigger"][o]
    for k in (ARRIVE_BARRIER, EXTERNAL_HANDSHAKE) if arrival.any() else ():
        sel = np.flatnonzero((kind == k) & (v >= 0))
        sel = sel[free[v[sel]]]
        if len(sel) == 0:
            continue
        if k == ARRIVE_BARRIER:  # latest performed first, then record order
            o = sel[lex_order((sel, -rec["time"][sel], v[sel]))]
        else:
            o = sel[stable_order(v[sel])]
        o = o[first_of_runs(v[o])]
        vv = v[o]
        g.kind[vv], g.creation[vv] = k, rec["time"][o]
        g.creator[vv] = rec["creator"][o] if k == ARRIVE_BARRIER else 0


def _add_edges(g, edges):
    """Edges in insertion order: each barrier phase's edge from the phase before first, then
    the records' (``update`` edges only where the pair is new; of parallel copies the newest
    is the one the pass can see)."""
    ids = g.events
    bv = np.flatnonzero(is_barrier(ids))
    bv = bv[(ids[bv] & GENERATION_MASK) > 1]
    ps = g.vertex(ids[bv] - np.uint64(1))
    s = np.concatenate([ps, g.edge_vertices[0]])
    d = np.concatenate([bv, g.edge_vertices[1]])
    upd = np.concatenate([np.ones(len(ps), bool), edges["update"].astype(bool)])
    keep = (s >= 0) & (d >= 0)
    s, d, upd = s[keep], d[keep], upd[keep]
    pair = s.astype(np.int64) * max(len(ids), 1) + d
    o = stable_order(pair)
    by_pair = pair[o]
    first = np.zeros(len(pair), bool)
    first[o[first_of_runs(by_pair)]] = True
    inserted = first | ~upd
    g.n_edges = int(inserted.sum())
    g.inserted_dst = d[inserted]
    # the inserted edges by pair, oldest first: each pair's newest copy ends its run (its
    # rank: its place among the edges)
    ins = inserted[o]
    o, by_pair = o[ins], by_pair[ins]
    newest = o[np.append(by_pair[1:] != by_pair[:-1], True)] if len(o) else o
    small = np.int32 if max(len(ids), g.n_edges) < 2**31 else np.int64
    g.src, g.dst, g.rank = s[newest].astype(small), d[newest].astype(small), \
        newest.astype(small)


def pin(g, v, own_trigger, kind, creator, trigger):
    """Vertices ``v`` computed elsewhere (roots here): their own trigger time, and the kind,
    creator and trigger time of their critical vertex, which is added past the sorted ones."""
    nv, n, k = len(g.events), len(g.kind), len(v)
    g.kind = np.concatenate([g.kind, np.asarray(kind, g.kind.dtype)])
    g.creator = np.concatenate([g.creator, np.asarray(creator, np.uint64)])
    g.creation = np.concatenate([g.creation, np.full(k, NO_TIME, np.int64)])
    g.trigger = np.concatenate([g.trigger, np.asarray(trigger, np.int64)])
    g.item = np.concatenate([g.item, np.full(k, -1, g.item.dtype)])
    g.trigger[v] = own_trigger
    if g.pinned is None:
        g.pinned = np.zeros(nv, bool)
        g.pin_target = np.full(nv, -1, np.int64)
    g.pinned[v] = True
    g.pin_target[v] = n + np.arange(k)


def run_pass(g, local=False):
    """``compute_critical_paths``: in topological order, each vertex's critical vertex and,
    for the kinds it computes, its trigger time.  A cycle leaves ``g.cycle`` set.  ``local``:
    one rank's graph among others, computed whether or not it has an edge (another rank's
    may), its open vertices (``g.open``, seeded) passing that on to what depends on them."""
    nv = len(g.events)
    total = len(g.kind)
    g.critical = np.full(total, -1, np.int32 if total < 2**31 else np.int64)
    if not g.has_data and not local:
        return g
    o = lex_order((-g.rank, g.dst))  # incoming edges by destination, newest first
    in_src, in_rank = g.src[o].astype(np.intp), g.rank[o]  # (indices: as numpy's own)
    remaining = np.bincount(g.dst, minlength=nv)
    in_ptr = np.concatenate([[0], np.cumsum(remaining)])
    several = remaining > 1  # (vertices with several sources)
    o2 = stable_order(g.src)
    out_dst = g.dst[o2].astype(np.intp)
    out_src = g.src[o2].astype(np.intp)
    out_ptr = np.concatenate([[0], np.cumsum(np.bincount(g.src, minlength=nv))])
    frontier = np.flatnonzero(remaining == 0)
    # vertices without sources (most: items' completions, first phases …) are their own
    # critical vertex; the kinds the pass times trigger when made
    free = frontier if g.pinned is None else frontier[~g.pinned[frontier]]
    g.critical[free] = free
    if g.pinned is not None:
        pv = np.flatnonzero(g.pinned)
        g.critical[pv] = g.pin_target[pv]
    kind = g.kind[free]
    prop = free[PROPAGATED[kind] & (kind != UNKNOWN_EVENT)]
    g.trigger[prop] = g.creation[prop]
    done = len(frontier)
    g.rounds = 1
    out = (out_dst, out_ptr, out_src)
    frontier = _next_level(out, frontier, remaining, nv)
    while len(frontier):
        g.rounds += 1
        done += len(frontier)
        # a deep graph's levels hold one or two vertices, mostly (real runs: 93 % of them):
        # those one by one, where numpy's cost per call was the pass's (5,500 levels a rank)
        few = len(frontier) <= FEW and not several[frontier].any()
        if few:
            _visit_one_by_one(g, frontier, in_src, in_ptr)
        else:
            _visit(g, frontier, in_src, in_rank, in_ptr, several)
        if few and int((out_ptr[frontier + 1] - out_ptr[frontier]).sum()) <= FEW_EDGES:
            frontier = _next_level_one_by_one(out, frontier, remaining)
        else:
            frontier = _next_level(out, frontier, remaining, nv)
    g.cycle = done < nv
    return g


FEW, FEW_EDGES = 3, 12  # (a level this small is visited vertex by vertex)


def _visit_one_by_one(g, f, in_src, in_ptr):
    """``_visit`` of a few vertices of one source each, one at a time: the same values."""
    trigger, critical, creation, kinds, open_ = g.trigger, g.critical, g.creation, g.kind, g.open
    for v in f.tolist():
        s = int(in_src[in_ptr[v]])
        st, cs = int(trigger[s]), int(critical[s])
        if open_ is not None and open_[s]:
            open_[v] = True
        kind = int(kinds[v])
        if kind == UNKNOWN_EVENT:  # (its own critical vertex, no trigger time)
            critical[v] = v
        elif st == NO_TIME and cs >= 0:  # (a source without a trigger time taints it)
            critical[v] = cs
        else:
            cr = int(creation[v])
            late = st != NO_TIME and cs >= 0 and (cr == NO_TIME or cr < st)
            critical[v] = cs if late else v
            if PROPAGATED[kind]:
                trigger[v] = st if late else cr


def _next_level_one_by_one(out, frontier, remaining):
    """``_next_level`` of a level of few vertices and edges, edge by edge."""
    out_dst, out_ptr, _ = out
    ready = []
    for v in frontier.tolist():
        for k in range(int(out_ptr[v]), int(out_ptr[v + 1])):
            d = int(out_dst[k])
            remaining[d] -= 1
            if remaining[d] == 0:
                ready.append(d)
    return np.array(sorted(ready), dtype=np.intp)


def _next_level(out, frontier, remaining, nv):
    """Kahn's next level: the vertices whose last source was in ``frontier`` (``out``: the
    edges by source, as destinations, CSR pointers and sources)."""
    out_dst, out_ptr, out_src = out
    if len(frontier) * 4 > len(out_dst):  # (a level of many: the edges its mask marks)
        mark = np.zeros(nv, bool)
        mark[frontier] = True
        d = out_dst[mark[out_src]]  # (as ``_gather``'s: by source, ``frontier`` sorted)
    else:
        d = _gather(out_dst, out_ptr, frontier)[1]
    if len(d) == 0:
        return d
    if len(d) * 8 > nv:  # (a level of many: whole-array counts, no sort)
        fed = np.bincount(d, minlength=nv)
        remaining -= fed
        return np.flatnonzero((remaining == 0) & (fed > 0))
    np.subtract.at(remaining, d, 1)
    return sorted_unique(d[remaining[d] == 0])


def _gather(values, ptr, rows):
    """(row of each, value, its index) of the CSR ranges ``ptr[rows]..ptr[rows + 1]``."""
    lo = ptr[rows]
    cnt = ptr[rows + 1] - lo
    if len(cnt) and int(cnt.max()) <= 1:  # (most levels: one edge a vertex, or none)
        grp = np.flatnonzero(cnt)
        at = lo[grp]
        return grp, values[at], at
    grp = np.repeat(np.arange(len(rows)), cnt)
    at = ranges_end_to_end(lo, cnt)
    return grp, values[at], at


def _visit(g, f, in_src, in_rank, in_ptr, several):
    """One level of the pass: the vertices ``f``, whose sources are all done (each has
    one at least)."""
    first = in_ptr[f]
    # per vertex: the critical vertex and trigger time of its latest and earliest source
    # with a trigger time, and of its newest source without (which taints it) — for most
    # vertices, of their one source
    s = in_src[first]
    st = g.trigger[s]
    known = st != NO_TIME
    cs = g.critical[s]
    late_v, late_t = np.where(known, cs, -1), st  # (unknown: NO_TIME already)
    early_v, early_t = late_v, late_t
    taint = np.where(known, -1, cs)
    src_open = None if g.open is None else g.open[s]  # open: a source is
    many = np.flatnonzero(several[f])
    if len(many):
        early_v, early_t = late_v.copy(), late_t.copy()
        for a, none in ((late_v, -1), (late_t, NO_TIME), (early_v, -1), (early_t, NO_TIME),
                        (taint, -1)):
            a[many] = none
        grp, s, at = _gather(in_src, in_ptr, f[many])
        grp = many[grp]
        _many_sources(g, grp, s, in_rank[at], len(f),
                      (late_v, late_t, early_v, early_t, taint))
        if src_open is not None:
            src_open[many] = False
            src_open[grp[g.open[s]]] = True
    if src_open is not None:
        g.open[f] |= src_open
    kind = g.kind[f]
    unknown = kind == UNKNOWN_EVENT
    tainted = (taint >= 0) & ~unknown
    pick_v, pick_t = late_v, late_t
    if len(many):
        cq = kind == COMPLETION_QUEUE_EVENT
        pick_v, pick_t = np.where(cq, early_v, late_v), np.where(cq, early_t, late_t)
    ok = ~tainted & ~unknown
    cr = g.creation[f]
    late = ok & (pick_v >= 0) & ((cr == NO_TIME) | (cr < pick_t))
    crit = np.where(late, pick_v, f)
    crit[tainted] = taint[tainted]
    g.critical[f] = crit
    prop = ok & PROPAGATED[kind]
    g.trigger[f[prop]] = np.where(late, pick_t, cr)[prop]


def _many_sources(g, grp, s, rank, n, out):
    """``_visit`` for vertices with several sources (``grp``: the vertex of each source):
    ties in time go to the newest edge, the newest untriggered source taints."""
    late_v, late_t, early_v, early_t, taint = out
    st = g.trigger[s]
    known = st != NO_TIME
    um = np.flatnonzero(~known)
    if len(um):
        ou = um[lex_order((-rank[um], grp[um]))]
        ou = ou[first_of_runs(grp[ou])]
        taint[grp[ou]] = g.critical[s[ou]]
    km = np.flatnonzero(known)
    for latest, v, t in ((True, late_v, late_t), (False, early_v, early_t)):
        if len(km) == 0:
            break
        key_t = st[km] if latest else -st[km]
        o = km[lex_order((rank[km], key_t, grp[km]))]
        last = np.ones(len(o), bool)
        last[:-1] = grp[o][1:] != grp[o][:-1]
        o = o[last]
        v[grp[o]] = g.critical[s[o]]
        t[grp[o]] = st[o]
