"""Critical links rank by rank: each rank's model linked alone, then what its rows rest on of
the other ranks' records linked together — the same rows as one pass over all ranks
(``critical_links.link_whole``), which this falls back to where it cannot tell.

Realm makes an event on one node, and a rank's log records what its node made: every item's
own event, and nearly every record and edge of the event graph.  So a rank alone can link
most of its items.  What it cannot know is what other ranks record, and that is only ever:

* an event of another node (an edge from it, a precondition, a creator) — *foreign*;
* a barrier (every node arrives at it);
* an event of its own node that nothing here makes (another node triggered it), or that a
  record of what ran on another node makes (a remote trigger: both nodes record it).

Those vertices are *open* (``EventGraph.open``), and so is everything their value flows into.
A rank's row is *residual* when its precondition is open (or made nowhere here), or when a
lookup it makes (the creator, the critical event's maker, an instance's creator) is of a
foreign event.  Everything else equals the whole pass's row, provided no other rank holds
data keyed by an event this rank treated as its own and closed — which ``Join`` checks.

``Join`` then builds the graph of what the ranks left open — their records and edges into
open vertices, in reading order — with each closed vertex it needs *pinned* to the value its
rank computed (``event_graph.pin``), runs the pass over it, and links the residual rows
with lookups across ranks (``link_lookups.PartLookups``).  It gives up (the caller links all
ranks at once) on a cycle anywhere, on items, calls or marks of another node's event, and on
another rank's record or edge into a vertex a rank closed: all three only in damaged logs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from legate_prof.model.event_tables import (INSTANCE_READY, INSTANCE_REDISTRICT, NO_TIME,
                                            UNKNOWN_EVENT, concat_event_tables)
from legate_prof.model.item_parts import ItemPart, positions_by_part
from legate_prof.model.kinds import ItemKind
from legate_prof.causality.critical_inputs import (ItemIndex, ProfileEvents, item_timing,
                                               last_item)
from legate_prof.causality.event_graph import (build_graph, find_sorted, is_barrier, pin,
                                              positions_in_sorted, run_pass)
from legate_prof.causality.link_lookups import ItemTables, PartLookups
from legate_prof.causality.link_rules import (CriticalEntry, LinkRows, Resolver, entry_rows,
                                          instance_rows, link_rows, wait_rows)
from legate_prof.model.sort_order import unique_values


def nodes_of(model):
    """The nodes (ranks) whose records ``model`` holds."""
    ranks = {int(r["rank"]) for r in model.ranks if "rank" in r}
    ranks |= set(unique_values(np.asarray(model.lanes["rank"])).tolist())
    return np.array(sorted(ranks), np.int64)


class OwnNodes:
    """Whether events are of the given nodes' (0 is no event: never foreign)."""

    def __init__(self, nodes):
        self.table = np.zeros(1 << 16, bool)
        self.table[np.asarray(nodes, np.int64) & 0xFFFF] = True
        self.other = ~self.table  # (read as is: no negation of every answer)

    def foreign(self, events):
        events = np.asarray(events, np.uint64)
        return (events != 0) & self.other[_node_bits(events, is_barrier(events))]

    def foreign_or_barrier(self, events):
        events = np.asarray(events, np.uint64)
        node = (events >> np.uint64(47)).astype(np.uint16)  # (a barrier's: its own anyway)
        return ((events != 0) & self.other[node]) | is_barrier(events)


def _node_bits(events, barrier):
    """``assemble.event_records.event_node`` of u64 ``events`` (``barrier``: which are), as
    u16 (the table's index), in half its passes: every id read as a plain event's, then the
    few barriers again."""
    node = (events >> np.uint64(47)).astype(np.uint16)
    bar = np.flatnonzero(barrier)
    if len(bar):
        node[bar] = (events[bar] >> np.uint64(44)).astype(np.uint16)
    return node


def _own_critical(graph):
    """Per vertex: an item's completion that is its own critical vertex (what a lookup of
    the item gives: ``ItemTables.completions``)."""
    crit = graph.critical[:len(graph.events)]
    return graph.by_item & (crit == np.arange(len(crit), dtype=crit.dtype))


@dataclass
class ClosedValues:
    """A rank's closed vertices and what it computed for them (sorted ``keys``; their own
    trigger time; their critical vertex's kind, creator and trigger time)."""

    keys: np.ndarray
    own_trigger: np.ndarray
    kind: np.ndarray
    creator: np.ndarray
    trigger: np.ndarray

    @classmethod
    def of(cls, graph):
        """The closed vertices of ``graph`` but items' completions that are their own
        critical vertex (what a lookup of the item gives: ``ItemTables.completions``)."""
        crit = graph.critical[:len(graph.events)]  # (c < 0: a cycle, refused)
        v = np.flatnonzero(~graph.open & (crit >= 0) & ~_own_critical(graph))
        c = crit[v]
        return cls(graph.events[v], graph.trigger[v], graph.kind[c], graph.creator[c],
                   graph.trigger[c])

    def find(self, events):
        return find_sorted(self.keys, events)


@dataclass
class RankTables:
    """What ``Join`` reads of one rank: its nodes, its items' lookups (``ItemTables``), its
    closed vertices' values, what it left open (sorted vertex ids; its records and edges
    into them, in reading order), and whether it could be joined at all."""

    nodes: np.ndarray
    items: ItemTables
    closed: ClosedValues
    open_keys: np.ndarray
    open_events: dict  # ``model.event_tables``' records and edges into open vertices
    outside: bool  # items, calls or marks keyed by another node's event
    cycle: bool
    has_edges: bool
    counts: tuple  # (closed vertices, edges into them)
    graph: object = None  # the rank's own graph, where it was linked in this process
    # where its worker linked it: which of its items' events (``items``' keys, bits packed)
    # are closed vertices of its graph that ``closed`` leaves out (``own_closed_bits``)
    own_closed: object = None

    CLOSED = ("keys", "own_trigger", "kind", "creator", "trigger")

    PREFIX = "tables_"  # (of their names among what else a rank's worker saves)

    def arrays(self):
        """The tables as named arrays, each name beginning ``PREFIX`` (``from_arrays`` takes
        them back: a rank's worker saves them beside its other arrays, the parent maps
        them)."""
        return {self.PREFIX + k: v for k, v in self._arrays().items()}

    def _arrays(self):
        out = {"item_" + k: v for k, v in self.items.saved().items()}
        out.update({"closed_" + k: getattr(self.closed, k) for k in self.CLOSED})
        out.update({"rec_" + k: v for k, v in self.open_events["records"].items()})
        out.update({"edge_" + k: v for k, v in self.open_events["edges"].items()})
        out["open_keys"], out["nodes"] = self.open_keys, self.nodes
        out["state"] = np.array([self.outside, self.cycle, self.has_edges, *self.counts],
                                np.int64)
        return out

    @classmethod
    def from_arrays(cls, saved, model):
        """``arrays()`` back, out of ``saved`` (what else is there left alone), the rank's
        item columns read from its ``model``."""
        a = {k[len(cls.PREFIX):]: v for k, v in saved.items() if k.startswith(cls.PREFIX)}
        items = ItemTables({k[5:]: v for k, v in a.items() if k.startswith("item_")},
                           model_columns(model))
        closed = ClosedValues(*[a["closed_" + k] for k in cls.CLOSED])
        events = {"records": {k[4:]: v for k, v in a.items() if k.startswith("rec_")},
                  "edges": {k[5:]: v for k, v in a.items() if k.startswith("edge_")}}
        st = [int(x) for x in a["state"]]
        return cls(a["nodes"], items, closed, a["open_keys"], events, bool(st[0]), bool(st[1]),
                   bool(st[2]), (st[3], st[4]))

    def closes_own(self, events):
        """Which ``events`` are closed vertices of this rank's graph, its items' own critical
        vertices (``own_closed``: a rank its worker linked)."""
        keys = self.items.arrays["keys"]
        pos, found = positions_in_sorted(keys, events)
        bits = np.unpackbits(self.own_closed, count=len(keys)).astype(bool)
        return found & bits[np.minimum(pos, max(len(keys) - 1, 0))] if len(keys) else found

    def treats_closed(self, events):
        """Which events this rank linked as its own and closed: a closed vertex, or an item's
        completion its graph does not hold."""
        closed = self.closed.find(events) >= 0
        plain = (find_sorted(self.open_keys, events) < 0) & (self.items.find(events) >= 0)
        return closed | plain


@dataclass
class Residual:
    """A rank's rows to link again with every rank's records: items (their ids in the rank,
    precondition, raw creator, own event) and waits (row, event)."""

    items: np.ndarray
    pre: np.ndarray
    creator: np.ndarray
    fevent: np.ndarray
    waits: np.ndarray
    wait_events: np.ndarray


def model_columns(model):
    """``ItemTables``' reader of a model's item columns (and lane groups) at a few ids."""
    def at(column, ids):
        ids = np.asarray(ids, np.int64)
        if column == "group":
            return model.lanes["group"][model.items["lane"][ids]]
        return model.items[column][ids]
    return at


def residual_of(ids, model):
    """A ``Residual`` of the items ``ids`` of ``model`` (no waits)."""
    it = model.items
    none = np.zeros(0, np.int64)
    return Residual(ids, it["critical"][ids], it["creator"][ids], it["fevent"][ids], none,
                    np.zeros(0, np.uint64))


class RankPass:
    """One rank linked alone among others (``nodes``: its own): its graph, the tables the
    join reads (``tables``), then its rows (``link``)."""

    def __init__(self, part, nodes):
        self.own = own = OwnNodes(nodes)
        self.pe = pe = ProfileEvents([part])
        index = ItemIndex(pe)
        self.timing = item_timing(pe, index)
        self.items = items = ItemTables.of(pe, index, self.timing)
        self.graph = graph = build_graph(pe.events, items.completions, self.timing.implicit)
        graph.open = _open_seeds(graph, pe.events["records"], own)
        run_pass(graph, local=True)
        ev = graph.events
        self.tables = RankTables(
            np.asarray(nodes, np.int64), items, ClosedValues.of(graph), ev[graph.open],
            _open_events(pe.events, graph), _outside(pe, index, items, own), graph.cycle,
            graph.has_data, (int((~graph.open).sum()), _closed_edges(graph)), graph)

    def link(self, select=None):
        """The rows of every item and wait (``select``, sorted item ids: of those items
        only, and no ``last``), and which rest on other ranks (``residual``)."""
        pe = self.pe
        rows, waits, basis = link_rows(pe, self.graph, self.items, self.timing, True, select)
        self.rows, self.waits, self.creation = rows, waits, self.timing.creation
        self.wait_cols = pe.waits
        self.last = last_item(pe.item) if select is None else -1
        self.residual = _residual(pe, self.graph, self.items, self.own, basis)
        self.items.arrays.pop("creation", None)  # (lookups read ``create`` and its patch)
        pe.release()
        return self


# what a rank's worker makes of its rank for ``link_ranks`` (``load_profile(...,
# prepare=PREPARE)``): its pass, linked there rather than here
PREPARE = "legate_prof.causality.rank_links:rank_pass_arrays"
RESIDUAL_FIELDS = ("items", "pre", "creator", "fevent", "waits", "wait_events")


def rank_pass_arrays(model):
    """A rank's ``RankPass``, linked, as named arrays (``PreparedPass`` takes them back): a
    rank's worker links its rank alone, and the parent only what rests on other ranks (10
    ranks x 1 M items: 5 s of the parent's time in ``critical``, on one core, after the
    workers)."""
    rp = RankPass(ItemPart(model, 0, 0, None, None), nodes_of(model)).link()
    out = rp.tables.arrays()
    out["own_closed"] = own_closed_bits(rp.graph, rp.items)
    for name, rows in (("rows_", rp.rows), ("waits_", rp.waits)):
        out.update({name + f: getattr(rows, f) for f in LinkRows.FIELDS})
    out.update({"wait_" + c: v for c, v in rp.wait_cols.items()})
    out.update({"res_" + f: getattr(rp.residual, f) for f in RESIDUAL_FIELDS})
    out["creation"], out["last"] = rp.creation, np.array([rp.last], np.int64)
    return out


def own_closed_bits(graph, items):
    """Which of ``items``' keys (events) are closed vertices of ``graph`` that are their
    item's own critical vertex (``ClosedValues`` leaves them out), as packed bits: what
    ``Join`` counts of a rank linked by its worker, whose graph it does not hold."""
    v = np.flatnonzero(_own_critical(graph) & ~graph.open)
    keys = items.arrays["keys"]
    pos, found = positions_in_sorted(keys, graph.events[v])
    bits = np.zeros(len(keys), bool)
    bits[pos[found]] = True
    return np.packbits(bits)


class PreparedPass:
    """A ``RankPass`` as a rank's worker linked it (``rank_pass_arrays``), for a part whose
    model is the one it built: what ``link_ranks`` reads of a pass."""

    def __init__(self, a, part):
        def named(prefix):
            return {k[len(prefix):]: v for k, v in a.items() if k.startswith(prefix)}
        self.tables = RankTables.from_arrays(a, part.model)
        self.tables.own_closed = a["own_closed"]
        rows, waits = named("rows_"), named("waits_")
        self.rows = LinkRows(*[rows[f] for f in LinkRows.FIELDS])
        self.waits = LinkRows(*[waits[f] for f in LinkRows.FIELDS])
        self.wait_cols = named("wait_")
        # (the worker's part begins at 0: here, the profile's numbering, as a pass's waits)
        self.wait_cols["item"] = self.wait_cols["item"] + np.int64(part.item_off)
        res = named("res_")
        self.residual = Residual(*[res[f] for f in RESIDUAL_FIELDS])
        self.creation = a["creation"]
        self.last = int(a["last"][0])

    @classmethod
    def of(cls, part):
        """The pass its worker linked of ``part``'s model, or None (none was prepared)."""
        from legate_prof.load.rank_workers import prepared_of
        got = prepared_of(part.model)
        if got is None or "rows_via" not in got or len(got["creation"]) != part.model.n_items:
            return None
        return cls(got, part)


def _open_seeds(graph, rec, own):
    """The vertices whose value other ranks' records may decide: another node's events,
    barriers, events nothing here makes, and those made by a record of what ran on another
    node (a remote trigger: both nodes record it, and the first in reading order counts)."""
    ev = graph.events
    seeds = own.foreign_or_barrier(ev) | (graph.kind == UNKNOWN_EVENT)
    v = graph.record_vertex[own.foreign(rec["creator"])]
    seeds[v[v >= 0]] = True
    return seeds


def _residual(pe, graph, items, own, basis):
    """The rows that may rest on other ranks' records (see the module's notes)."""
    ids, pre, creator, entry = basis.ids, basis.pre, basis.creator, basis.entry
    it = pe.item
    unsure = _unsure(graph, items, own, pre, entry.vertex)
    raw = it["creator"][ids]
    unsure |= own.foreign(raw)
    moved = np.flatnonzero(creator != raw)  # (profiler responses: their owner's creator)
    unsure[moved] |= own.foreign(creator[moved])
    unsure |= entry.known & own.foreign(entry.creator)
    unsure |= _instance_foreign(items, own, entry)
    went = basis.wait_entry
    ev = pe.waits["event"][:len(went.kind)]
    wait_unsure = _unsure(graph, items, own, ev, went.vertex)
    wait_unsure |= went.known & own.foreign(went.creator)
    wait_unsure |= _instance_foreign(items, own, went)
    k = ids[unsure]
    w = np.flatnonzero(wait_unsure)
    return Residual(k, it["critical"][k], it["creator"][k], it["fevent"][k], w, ev[w])


def _unsure(graph, items, own, pre, v):
    """Preconditions (their vertices ``v``) whose value another rank may decide: an open
    vertex, or one no vertex here and not an item's completion of this rank."""
    inside = v >= 0
    out = np.zeros(len(pre), bool)
    out[inside] = graph.open[v[inside]]
    rest = np.flatnonzero(~inside & (pre != 0))
    out[rest] = own.foreign(pre[rest]) | (items.find(pre[rest]) < 0)
    return out


def _instance_foreign(items, own, entry):
    """Critical events made by an instance whose link goes on to its creator, of another
    node."""
    sel = np.flatnonzero((entry.kind == INSTANCE_READY) | (entry.kind == INSTANCE_REDISTRICT))
    out = np.zeros(len(entry.kind), bool)
    j = items.find(entry.creator[sel], "instance")
    hit = j >= 0
    out[sel[hit]] = own.foreign(items.column("creator", j[hit]))
    return out


def _open_events(events, graph):
    """The records and edges of ``events`` into open vertices, in reading order."""
    rec, edges = events["records"], events["edges"]
    rv, dv = graph.record_vertex, graph.edge_vertices[1]
    r = np.flatnonzero(rv >= 0)
    r = r[graph.open[rv[r]]]
    e = np.flatnonzero(dv >= 0)
    e = e[graph.open[dv[e]]]
    return {"records": {c: a[r] for c, a in rec.items()},
            "edges": {c: a[e] for c, a in edges.items()}}


def _closed_edges(graph):
    """How many of the graph's edges (parallel copies counted) go into closed vertices."""
    d = graph.inserted_dst
    return 0 if d is None else int((~graph.open[d]).sum())


def _outside(pe, index, items, own):
    """Whether the rank holds items, calls or marks keyed by another node's event (then a
    lookup by event could find them in two ranks: only a whole pass knows the first)."""
    keys = (index.events, items.calls.keys, pe.events["marks"]["event"])
    return any(bool(own.foreign(k).any()) for k in keys)


class Join:
    """What the ranks left open, linked over all of them (``ok`` False: it cannot be)."""

    def __init__(self, tables, offsets):
        self.tables = tables
        self.lookups = PartLookups([t.items for t in tables], offsets, [t.nodes for t in tables])
        self.has_data = any(t.has_edges for t in tables)
        self.ok = not any(t.outside or t.cycle for t in tables)
        self.graph = None
        if self.ok:
            self.graph = self._open_graph()
            self.ok = self.graph is not None

    def _open_graph(self):
        events = concat_event_tables([t.open_events | {"marks": _no_marks()}
                                      for t in self.tables])
        made = np.concatenate([events["records"]["result"], events["edges"]["dst"]])
        owner = self.lookups.owner(made)
        for k, t in enumerate(self.tables):
            if t.treats_closed(made[owner == k]).any():
                return None  # another rank's record or edge into a vertex this one closed
        also = np.concatenate([t.open_keys for t in self.tables])
        graph = build_graph(events, self.lookups.completions, also)
        self._pin_closed(graph)
        run_pass(graph, local=True)
        return None if graph.cycle else graph

    def _pin_closed(self, graph):
        """Vertices here that their rank closed: the value it computed (an item's completion
        that is its own critical vertex: as the item says)."""
        ev = graph.events
        owner = self.lookups.owner(ev)
        self.closed_here = np.zeros(len(ev), bool)  # (counted by their rank, if known)
        for k, t in enumerate(self.tables):
            sel = np.flatnonzero(owner == k)
            if t.graph is not None:
                v = t.graph.vertex(ev[sel])
                self.closed_here[sel[v >= 0]] = ~t.graph.open[v[v >= 0]]
            elif t.own_closed is not None:  # (linked by its worker: as it said)
                self.closed_here[sel] = (t.closed.find(ev[sel]) >= 0) | t.closes_own(ev[sel])
            pos = t.closed.find(ev[sel])
            hit = pos >= 0
            v, p = sel[hit], pos[hit]
            c = t.closed
            pin(graph, v, c.own_trigger[p], c.kind[p], c.creator[p], c.trigger[p])

    def entry(self, pre):
        """The critical entry of each precondition over all ranks."""
        g = self.graph
        out = CriticalEntry.none(len(pre))
        v = g.vertex(pre)
        inside = np.flatnonzero(v >= 0)
        c = g.critical[v[inside]]
        out.kind[inside], out.creator[inside], out.trigger[inside] = (
            g.kind[c], g.creator[c], g.trigger[c])
        rest = np.flatnonzero((v < 0) & (pre != 0))
        # (the ranks these events are of, only: a pass per rank of 1,000 was most of a join)
        for k, at in positions_by_part(self.lookups.owner(pre[rest]), len(self.tables)):
            t, sel = self.tables[k], rest[at]
            pos = t.closed.find(pre[sel])
            hit = pos >= 0
            s, p = sel[hit], pos[hit]
            out.kind[s], out.creator[s], out.trigger[s] = (t.closed.kind[p], t.closed.creator[p],
                                                           t.closed.trigger[p])
        rest = rest[out.kind[rest] < 0]
        kind, _, trigger, _ = self.lookups.completions(pre[rest])
        done = kind >= 0
        out.kind[rest[done]], out.creator[rest[done]] = kind[done], pre[rest[done]]
        out.trigger[rest[done]] = trigger[done]
        return out

    def link_items(self, k, res):
        """Rows of rank ``k``'s residual items ``res`` (a ``Residual``), over all ranks:
        (rows, their creation time as the rules read it)."""
        return self.link_ids(res.items + self.lookups.offsets[k], res.pre, res.creator,
                             res.fevent)

    def link_ids(self, ids, pre, raw_creator, fevent):
        """``link_items`` of items of any ranks at once (``ids`` in the profile's numbering;
        their precondition, raw creator, own event): each row is the item's own, so every
        rank's residual goes in one call — a call per rank of 1,000 was most of the join."""
        lk = self.lookups
        n = len(ids)
        kind = lk.column("kind", ids)
        ct, creator = lk.column("creation", ids), np.array(raw_creator, copy=True)
        prof = np.flatnonzero(kind == ItemKind.PROF_TASK)
        owner = lk.find(raw_creator[prof], ("entry", "channel", "instance", "copy"))
        p, o = prof[owner >= 0], owner[owner >= 0]
        ct[p], creator[p] = lk.column("creation", o), lk.column("creator", o)
        entry = self.entry(pre)
        out = LinkRows.empty(n, np.int64)
        resolver = Resolver(lk)
        inst = kind == ItemKind.INSTANCE
        e, i = np.flatnonzero(~inst), np.flatnonzero(inst)
        entry_rows(out, resolver, e, creator[e], pre[e], ct[e], entry.take(e))
        instance_rows(out, resolver, i, (ids[i], fevent[i]), creator[i], pre[i], ct[i],
                      entry.take(i))
        return out, ct

    def size(self, tables):
        """(vertices, edges) of the whole graph: the ranks' closed ones and the join's (the
        ranks linked in this process)."""
        g = self.graph
        own = len(g.events) - int(self.closed_here.sum())
        return (sum(t.counts[0] for t in tables) + own,
                sum(t.counts[1] for t in tables) + g.n_edges)

    def link_waits(self, events):
        """Rows of waits on ``events`` (any ranks' at once), over all ranks."""
        out = LinkRows.empty(len(events), np.int64)
        wait_rows(out, Resolver(self.lookups), np.arange(len(events)), events,
                  self.entry(events))
        return out


def _no_marks():
    from legate_prof.model.event_tables import event_table
    return event_table("marks")


@dataclass
class RankedRows:
    """``link_ranks``' answer: what ``critical_links.CriticalLinks`` holds."""

    items: LinkRows
    waits: LinkRows
    wait_cols: dict
    creation: np.ndarray
    lookups: PartLookups
    graph_size: tuple  # (has_data, cycle, vertices, edges)
    last: int


def link_ranks(parts):
    """Every item's and wait's row of a profile's parts, rank by rank (``RankedRows``;
    None: only a pass over all ranks at once can tell)."""
    nodes = [nodes_of(p.model) for p in parts]
    if sum(len(n) for n in nodes) != len(set(np.concatenate(nodes).tolist())):
        return None  # (a node in two parts)
    passes = [PreparedPass.of(p) or RankPass(p, n).link() for p, n in zip(parts, nodes)]
    offsets = np.array([p.item_off for p in parts] + [parts[-1].item_off
                                                     + parts[-1].model.n_items], np.int64)
    join = Join([rp.tables for rp in passes], offsets)
    if not join.ok:
        return None
    items = _joined_rows([rp.rows for rp in passes], offsets)
    waits = _joined_rows([rp.waits for rp in passes], offsets)
    creation = np.concatenate([rp.creation for rp in passes])
    wait_cols = {c: np.concatenate([rp.wait_cols[c] for rp in passes])
                 for c in passes[0].wait_cols}
    wait_off = np.concatenate([[0], np.cumsum([len(rp.wait_cols["item"]) for rp in passes])])
    if join.has_data:  # (every rank's residual rows in one pass)
        res = [rp.residual for rp in passes]

        def joined(f):
            return np.concatenate([getattr(r, f) for r in res])
        ids = np.concatenate([r.items + offsets[k] for k, r in enumerate(res)])
        rows, ct = join.link_ids(ids, joined("pre"), joined("creator"), joined("fevent"))
        items.set_rows(ids, rows)
        creation[ids] = ct
        w = np.concatenate([r.waits + wait_off[k] for k, r in enumerate(res)])
        waits.set_rows(w, join.link_waits(joined("wait_events")))
    else:
        items, waits = LinkRows.empty(len(items.via)), LinkRows.empty(len(waits.via))
    lasts = [(-int(parts[k].model.items["stop"][rp.last]), int(rp.last + offsets[k]))
             for k, rp in enumerate(passes) if rp.last >= 0]
    last = min(lasts)[1] if lasts else -1  # (the first of those that ended last)
    return RankedRows(items, waits, wait_cols, creation, join.lookups,
                      (join.has_data, False, *join.size([rp.tables for rp in passes])), last)


def _joined_rows(rows, offsets):
    """Several ranks' ``LinkRows`` as one, their targets in the profile's numbering."""
    out = LinkRows(*[np.concatenate([getattr(r, f) for r in rows]) for f in LinkRows.FIELDS])
    n = np.cumsum([0] + [len(r.via) for r in rows])
    for k in range(len(rows)):
        t = out.target[n[k]:n[k + 1]]
        t[t >= 0] += offsets[k]
    return out
