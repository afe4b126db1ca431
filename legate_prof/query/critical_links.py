"""Each item's critical predecessor, as the reference computes it (``legion_prof``'s
"Critical Path" field; its ``critical`` command prints the same): the item whose completion,
trigger, merge or barrier arrival made this one's precondition trigger last, or the item that
was running when this one was created if every precondition had triggered by then.

The rules (``docs/reference_differences.md`` names where we differ, on purpose):

* an item with a critical precondition that triggered after the item was created waited for
  it (``via`` "event"): the link goes to what made the precondition's critical event — the
  item that completed it, or what was running (the innermost call) in the entry that
  triggered, merged or arrived at it, at that moment;
* otherwise the item was held by whoever created it (``via`` "creator"): the innermost call
  its creator was running at the item's creation (a message: the sender's ``spawn``);
* a precondition whose chain reaches an event nothing in the profile makes (a rank not given,
  a runtime-internal event, a cycle) is "unknown_event": the chain stops there;
* an instance with no precondition that was allocated late waited for others to be freed
  ("deallocation").

Waits with an event get the event's link too.  Everything is computed over the profile's
item parts (one model, or the ranks of a ``RankSet``) at once: the graph spans ranks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from legate_prof.assemble.event_records import event_node
from legate_prof.model.event_tables import (
    COPY_EVENT, DEP_PART_EVENT, EVENT_KIND_NAMES, EXTERNAL_EVENT, EXTERNAL_HANDSHAKE,
    FILL_EVENT, INSTANCE_DELETION, INSTANCE_READY, INSTANCE_REDISTRICT, NO_TIME, TASK_EVENT,
    UNKNOWN_EVENT)
from legate_prof.model.kinds import ItemKind
from legate_prof.query.call_index import CallIndex
from legate_prof.query.critical_inputs import (
    CALL_KINDS, ItemIndex, ProfileEvents, completions_of, item_timing, kinds_mask, last_item,
    mark_of)
from legate_prof.query.event_graph import build_graph, run_pass

VIA = ("event", "creator", "unknown_event", "unknown_creator", "deallocation")
VIA_EVENT, VIA_CREATOR, VIA_UNKNOWN, VIA_UNKNOWN_CREATOR, VIA_DEALLOCATION = range(5)
NO_ROW = -1

# notes, as the reference words them ({} = a node)
NOTES = ("", "unknown critical path event created on node {}",
         "unknown critical path barrier created on node {}", "unknown creator on node {}",
         "(meta-) task on node {} not loaded", "copy/fill/deppart on node {} not loaded",
         "deferred allocation", "deletion", "instance creation on node {} not loaded",
         "instance redistrict on node {} not loaded", "instance deletion on node {} not loaded",
         "external handshake on node {}", "could not find fevent on node {}",
         "{kind} on node {} not loaded", "waiting for deallocation of other instances")
(N_NONE, N_UNKNOWN_EVENT, N_UNKNOWN_BARRIER, N_UNKNOWN_CREATOR, N_TASK_MISSING,
 N_CHANNEL_MISSING, N_DEFERRED, N_DELETION, N_INST_MISSING, N_REDISTRICT_MISSING,
 N_DELETION_MISSING, N_HANDSHAKE, N_FEVENT_MISSING, N_MAKER_MISSING, N_DEALLOCATION) = range(15)



@dataclass
class CriticalEntry:
    """The critical event behind each queried precondition: its kind (-1: no vertex or
    lookups cleared), creator event and trigger time."""

    kind: np.ndarray
    creator: np.ndarray
    trigger: np.ndarray

    @property
    def known(self):
        return (self.kind >= 0) & (self.kind != UNKNOWN_EVENT)


def critical_entry(graph, pe, index, timing, pre):
    """``find_critical_entry`` for the preconditions ``pre``: their vertex's critical vertex,
    or, for an item's completion the graph does not hold, that completion itself."""
    n = len(pre)
    out = CriticalEntry(np.full(n, -1, np.int8), np.zeros(n, np.uint64),
                        np.full(n, NO_TIME, np.int64))
    if not graph.has_data or graph.cycle:
        return out
    v = graph.vertex(pre)
    c = np.where(v >= 0, graph.critical[np.maximum(v, 0)], -1)
    inside = np.flatnonzero(c >= 0)
    out.kind[inside] = graph.kind[c[inside]]
    out.creator[inside], out.trigger[inside] = graph.creator[c[inside]], graph.trigger[c[inside]]
    rest = np.flatnonzero((v < 0) & (pre != 0))
    kind, _, trigger = completions_of(pe, index, timing)(pre[rest])
    done = rest[kind >= 0]
    out.kind[done], out.creator[done] = kind[kind >= 0], pre[done]
    out.trigger[done] = trigger[kind >= 0]
    return out


class Resolver:
    """Where links land: the reference's ``generate_critical_creator_link`` and
    ``generate_critical_link``, over arrays.  Each returns (target item or -1, note code,
    the node the note names)."""

    def __init__(self, pe, index, timing):
        self.pe, self.index, self.timing = pe, index, timing
        it = pe.item
        calls = np.flatnonzero(kinds_mask(it["kind"], CALL_KINDS))
        self.calls = CallIndex(calls, it["creator"][calls], it["start"][calls],
                               it["stop"][calls])

    def executing(self, entry, t):
        """What ``entry`` was running at ``t``: its innermost call then, else itself."""
        call = self.calls.running(self.pe.item["fevent"][entry], t)
        return np.where(call >= 0, call, entry)

    def creator_link(self, creator, t):
        ix = self.index
        j = ix.find(creator)
        jj = np.maximum(j, 0)
        has = j >= 0
        entry = np.flatnonzero(has & ix.entry[jj])
        target = np.where(has & (ix.channel[jj] | ix.instance[jj]), j, -1)
        target[entry] = self.executing(j[entry], t[entry])
        note = np.where(target < 0, N_UNKNOWN_CREATOR, N_NONE)
        return target, note, _nodes_where(note, creator)

    def critical_link(self, entry, pre):
        """Links for ``CriticalEntry`` ``entry`` of the preconditions ``pre``."""
        ix = self.index
        n = len(pre)
        target = np.full(n, -1, np.int64)
        note = np.full(n, N_NONE, np.int64)
        kind, creator = entry.kind, entry.creator
        j = ix.find(creator)
        jj = np.maximum(j, 0)
        for sel, mask, missing, found in (
                (kind == TASK_EVENT, ix.entry, N_TASK_MISSING, N_NONE),
                ((kind == FILL_EVENT) | (kind == DEP_PART_EVENT), ix.channel, N_CHANNEL_MISSING,
                 N_NONE),
                (kind == COPY_EVENT, ix.copy, N_CHANNEL_MISSING, N_NONE),
                (kind == INSTANCE_DELETION, ix.instance, N_DELETION_MISSING, N_DELETION),
                (kind == EXTERNAL_EVENT, ix.entry, N_FEVENT_MISSING, N_NONE)):
            hit = sel & (j >= 0) & mask[jj]
            target[hit] = j[hit]
            note[hit] = found
            note[sel & ~hit] = missing
        note[kind == EXTERNAL_HANDSHAKE] = N_HANDSHAKE
        self._instance_links(kind, creator, target, note)
        made = kinds_made_by_entries(kind)
        ok = np.flatnonzero(made & (j >= 0) & ix.entry[jj])
        target[ok] = self.executing(j[ok], entry.trigger[ok])
        node = _nodes_where(note, pre)
        miss = np.flatnonzero(made & ~((j >= 0) & ix.entry[jj]))
        maker_node = event_node(creator[miss])
        note[miss] = np.where(maker_node == event_node(pre[miss]), N_FEVENT_MISSING,
                              N_MAKER_MISSING)
        node[miss] = maker_node
        return target, note, node

    def _instance_links(self, kind, creator, target, note):
        """InstanceReady: the instance's creator (allocated at once) or the instance (its
        allocation waited: "deferred allocation"); InstanceRedistrict: the previous
        instance's creator."""
        ix, it = self.index, self.pe.item
        for k, missing in ((INSTANCE_READY, N_INST_MISSING),
                           (INSTANCE_REDISTRICT, N_REDISTRICT_MISSING)):
            sel = np.flatnonzero(kind == k)
            j = ix.find(creator[sel], ix.instance)
            note[sel[j < 0]] = missing
            sel, j = sel[j >= 0], j[j >= 0]
            deferred = ~self.allocated_at_once(j) if k == INSTANCE_READY else \
                np.zeros(len(j), bool)
            target[sel[deferred]] = j[deferred]
            note[sel[deferred]] = N_DEFERRED
            sel, j = sel[~deferred], j[~deferred]
            q = ix.find(it["creator"][j], ix.entry)
            target[sel[q >= 0]] = q[q >= 0]
            note[sel[q < 0]] = N_TASK_MISSING

    def allocated_at_once(self, inst):
        """Instances allocated when asked (no later allocation, or ready by then)."""
        alloc = mark_of(self.timing.allocated, self.pe.item["fevent"][inst])
        return (alloc == NO_TIME) | (self.pe.at("ready", inst) <= alloc)


_MADE_BY_ENTRIES = np.zeros(17, bool)
_MADE_BY_ENTRIES[[5, 6, 7, 8, 10, 14]] = True  # merge, trigger, poison, arrival, acquire, queue


def _nodes_where(note, events):
    """The node of each event where a note names one (0 elsewhere: not worth the work)."""
    node = np.zeros(len(note), np.int64)
    k = np.flatnonzero(note != N_NONE)
    node[k] = event_node(events[k])
    return node


def kinds_made_by_entries(kind):
    return _MADE_BY_ENTRIES[np.where(kind >= 0, kind, 16)]


@dataclass
class LinkRows:
    """One row per item (or per wait): how it links (``VIA`` index, ``NO_ROW`` where the
    reference shows no critical path), the item it links to (-1: none), the critical event
    (kind -1: none; its trigger time) and the note (code, node)."""

    via: np.ndarray
    target: np.ndarray
    kind: np.ndarray
    trigger: np.ndarray
    note: np.ndarray
    node: np.ndarray

    @classmethod
    def empty(cls, n):
        ids = np.int32 if n < 2**31 else np.int64
        return cls(np.full(n, NO_ROW, np.int8), np.full(n, -1, ids), np.full(n, -1, np.int8),
                   np.full(n, NO_TIME, np.int64), np.zeros(n, np.uint8),
                   np.zeros(n, np.uint16))

    def put(self, rows, via, target, entry=None, at=None, note=None, node=None):
        """Fill ``rows`` (ids into this table); ``entry`` (a ``CriticalEntry``) at ``at``."""
        self.via[rows] = via
        self.target[rows] = target
        if entry is not None and len(rows):
            self.kind[rows] = entry.kind[at]
            self.trigger[rows] = entry.trigger[at]
        if note is not None:
            self.note[rows] = note
            self.node[rows] = node


def _entry_rows(out, res, items, creator, pre, ct, entry):
    """The branches of ``data_source.rs`` for tasks, meta-tasks, messages, profiler
    responses, copies, fills and dependent-partitioning operations."""
    known = entry.known
    has_c, has_p = creator != 0, pre != 0
    a = has_c & has_p & known
    late = a & (ct < entry.trigger)
    for sel, by_event in ((late, True), (~has_c & has_p & known, True),
                          (a & ~late, False), (has_c & ~has_p, False)):
        k = np.flatnonzero(sel)
        if by_event:
            t, note, node = res.critical_link(_take(entry, k), pre[k])
            out.put(items[k], VIA_EVENT, t, entry, k, note, node)
        else:
            t, note, node = res.creator_link(creator[k], ct[k])
            out.put(items[k], VIA_CREATOR, t, entry, k, note, node)
    _unknown_rows(out, items, pre, has_p & ~known)


def _unknown_rows(out, rows, pre, sel):
    k = np.flatnonzero(sel)
    barrier = (pre[k] >> np.uint64(60)) == np.uint64(2)
    out.put(rows[k], VIA_UNKNOWN, -1, note=np.where(barrier, N_UNKNOWN_BARRIER,
                                                    N_UNKNOWN_EVENT), node=event_node(pre[k]))


def _take(entry, k):
    return CriticalEntry(entry.kind[k], entry.creator[k], entry.trigger[k])


def _instance_rows(out, res, items, creator, pre, ct, entry):
    """Instances: a late precondition, else the creator; with none, the creator if it was
    allocated at once, else "deallocation" (it waited for others to be freed)."""
    known, has_p = entry.known, pre != 0
    late = has_p & known & (ct < entry.trigger)
    k = np.flatnonzero(late)
    t, note, node = res.critical_link(_take(entry, k), pre[k])
    out.put(items[k], VIA_EVENT, t, entry, k, note, node)
    now = res.allocated_at_once(items)
    for sel in (has_p & known & ~late, ~has_p & now):
        k = np.flatnonzero(sel)
        t, note, node = res.creator_link(creator[k], ct[k])
        out.put(items[k], VIA_CREATOR, t, entry, k, note, node)
    _unknown_rows(out, items, pre, has_p & ~known)
    k = np.flatnonzero(~has_p & ~now)
    out.put(items[k], VIA_DEALLOCATION, -1, note=N_DEALLOCATION, node=0)
    out.trigger[items[k]] = res.pe.at("ready", items[k])


def _wait_rows(graph, pe, index, timing, res):
    """Waits on an event: its link, with no time to compare."""
    w = pe.waits
    out = LinkRows.empty(len(w["event"]))
    if not graph.has_data:
        return out
    ev = w["event"]
    entry = critical_entry(graph, pe, index, timing, ev)
    rows = np.arange(len(ev))
    k = np.flatnonzero(entry.known)
    t, note, node = res.critical_link(_take(entry, k), ev[k])
    out.put(rows[k], VIA_EVENT, t, entry, k, note, node)
    _unknown_rows(out, rows, ev, ~entry.known)
    return out


class CriticalLinks:
    """Every item's critical predecessor (and every wait's), in the profile's item numbering.

    ``items``/``waits`` are ``LinkRows``; ``wait_item``, ``wait_start``, ``wait_ready``,
    ``wait_end`` say which wait each wait row is; ``creation`` is each item's creation time as
    the rules read it; ``has_data`` is False where the profile holds no event graph (no item
    has a row then, as in the reference) and ``cycle`` where the graph has one (every
    precondition is then unknown)."""

    def __init__(self, items, waits, wait_cols, creation, graph, inputs=None, index=None):
        self.items, self.waits = items, waits
        self.inputs, self.index = inputs, index  # (the profile's, for walking the chain)
        self.last = -1  # the item that ended last (``run_path.last_item``)
        self.parts = None  # the profile's item parts (``compute_links`` sets them)
        self.wait_item, self.wait_start = wait_cols["item"], wait_cols["start"]
        self.wait_ready, self.wait_end = wait_cols["ready"], wait_cols["end"]
        self.wait_event = wait_cols["event"]
        self.creation = creation
        self.has_data, self.cycle = graph.has_data, graph.cycle
        self.n_vertices, self.n_edges = len(graph.events), graph.n_edges
        self._by_target = None

    @property
    def n_items(self):
        return len(self.items.via)

    def ready(self, ids):
        """When the items ``ids`` became ready (Realm's own time)."""
        return self.inputs.at("ready", ids)

    def values(self, column, ids):
        """An item column at ``ids`` (``kind``, ``start``, ``stop``, ``creator`` …)."""
        return self.inputs.at(column, ids)

    def predecessor(self, i):
        """The item ``i`` waited for or was created by (-1: none, or unknown)."""
        return int(self.items.target[int(i)])

    def successors(self, i):
        """Items whose predecessor is ``i``, sorted."""
        if self._by_target is None:
            t = self.items.target
            o = np.argsort(t, kind="stable")
            self._by_target = (t[o], o)
        keys, order = self._by_target
        lo, hi = np.searchsorted(keys, [int(i), int(i) + 1])
        return np.sort(order[lo:hi])

    def waits_of(self, i):
        """Rows of ``waits`` that belong to item ``i``."""
        lo, hi = np.searchsorted(self.wait_item, [int(i), int(i) + 1])
        return np.arange(lo, hi)

    def chain_back(self, i, limit=1_000_000):
        """``i``, its predecessor, that one's … until an item has none (or a loop)."""
        out, seen = [], set()
        j = int(i)
        while j >= 0 and j not in seen and len(out) < limit:
            out.append(j)
            seen.add(j)
            j = self.predecessor(j)
        return out


def note_text(rows, k):
    """The reference's note of row ``k`` of ``rows`` ("" for none)."""
    code = int(rows.note[k])
    if code == N_MAKER_MISSING:
        kind = int(rows.kind[k])
        name = EVENT_KIND_NAMES[kind] if 0 <= kind < len(EVENT_KIND_NAMES) else "event"
        return NOTES[code].format(int(rows.node[k]), kind=name)
    return NOTES[code].format(int(rows.node[k]))


def compute_links(parts) -> CriticalLinks:
    """The critical predecessor of every item of ``parts`` (a profile's ``item_parts()``)."""
    pe = ProfileEvents(parts)
    index = ItemIndex(pe)
    timing = item_timing(pe, index)
    graph = build_graph(pe.events, completions_of(pe, index, timing), timing.implicit)
    run_pass(graph)
    res = Resolver(pe, index, timing)
    out = LinkRows.empty(pe.n)
    if graph.has_data:
        it = pe.item
        kind = it["kind"]
        entries = np.flatnonzero(index.entry | index.channel | index.copy)
        pre = it["critical"][entries]
        ent = critical_entry(graph, pe, index, timing, pre)
        _entry_rows(out, res, entries, timing.creator[entries], pre,
                    timing.creation[entries], ent)
        insts = np.flatnonzero((kind == ItemKind.INSTANCE) & (it["fevent"] != 0))
        pre = it["critical"][insts]
        ent = critical_entry(graph, pe, index, timing, pre)
        _instance_rows(out, res, insts, timing.creator[insts], pre, timing.creation[insts],
                       ent)
    waits = _wait_rows(graph, pe, index, timing, res)
    links = CriticalLinks(out, waits, pe.waits, timing.creation, graph, pe, index)
    links.parts = parts
    links.last = last_item(pe.item)
    pe.release()  # (the links keep ~40 B per item, not a copy of every rank's columns)
    return links
