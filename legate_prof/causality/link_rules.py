"""The reference's rules for one item's critical predecessor (``legion_prof``'s "Critical
Path" field; its ``critical`` command prints the same): the item whose completion, trigger,
merge or barrier arrival made this one's precondition trigger last, or the item that was
running when this one was created if every precondition had triggered by then.

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

Waits with an event get the event's link too.  Over arrays: the critical events come from
the event graph (``event_graph``), items are looked up through ``link_lookups``.
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
# notes of a link that stops at something no loaded profile records (an event, a creator, a
# node's item): where a run's path ends for want of a rank, or of a record
NOT_LOADED_NOTES = frozenset((
    N_UNKNOWN_EVENT, N_UNKNOWN_BARRIER, N_UNKNOWN_CREATOR, N_TASK_MISSING, N_CHANNEL_MISSING,
    N_INST_MISSING, N_REDISTRICT_MISSING, N_DELETION_MISSING, N_FEVENT_MISSING,
    N_MAKER_MISSING))



@dataclass
class CriticalEntry:
    """The critical event behind each queried precondition: its kind (-1: no vertex or
    lookups cleared), creator event and trigger time; the precondition's own vertex (-1:
    none), where the graph was asked; the item the creator event names where the graph
    knew it (an item's completion; -1: to be looked up, and None: all)."""

    kind: np.ndarray
    creator: np.ndarray
    trigger: np.ndarray
    vertex: np.ndarray | None = None
    item: np.ndarray | None = None

    @classmethod
    def none(cls, n):
        return cls(np.full(n, -1, np.int8), np.zeros(n, np.uint64), np.full(n, NO_TIME, np.int64))

    @property
    def known(self):
        return (self.kind >= 0) & (self.kind != UNKNOWN_EVENT)

    def take(self, k):
        return CriticalEntry(self.kind[k], self.creator[k], self.trigger[k],
                             None if self.vertex is None else self.vertex[k],
                             None if self.item is None else self.item[k])


def critical_entry(graph, completions, pre):
    """``find_critical_entry`` for the preconditions ``pre``: their vertex's critical vertex,
    or, for an item's completion the graph does not hold, that completion itself."""
    out = CriticalEntry.none(len(pre))
    out.vertex = v = graph.vertex(pre)
    if graph.cycle:
        return out
    crit = graph.critical  # (empty in a rank whose log has no event records nor vertices)
    c = np.where(v >= 0, crit[np.maximum(v, 0)], -1) if len(crit) else np.full(len(pre), -1)
    inside = np.flatnonzero(c >= 0)
    ci = c[inside]
    out.kind[inside] = graph.kind[ci]
    out.creator[inside], out.trigger[inside] = graph.creator[ci], graph.trigger[ci]
    out.item = np.full(len(pre), -1, np.int64)
    out.item[inside] = graph.item[ci]
    rest = np.flatnonzero((v < 0) & (pre != 0))
    kind, _, trigger, item = completions(pre[rest])
    hit = kind >= 0
    done = rest[hit]
    out.kind[done], out.creator[done] = kind[hit], pre[done]
    out.trigger[done], out.item[done] = trigger[hit], item[hit]
    return out


class Resolver:
    """Where links land: the reference's ``generate_critical_creator_link`` and
    ``generate_critical_link``, over arrays, asking ``items`` (``link_lookups``).  Each
    returns (target item or -1, note code, the node the note names)."""

    def __init__(self, items):
        self.items = items

    def executing(self, keys, entry, t):
        """What ``entry`` (named by ``keys``) was running at ``t``: its innermost call then,
        else itself."""
        call = self.items.running(keys, t)
        return np.where(call >= 0, call, entry)

    def creator_link(self, creator, t):
        it = self.items
        j = it.find(creator)
        entry = np.flatnonzero(it.has("entry", j))
        target = np.where(it.has(("channel", "instance"), j), j, -1)
        target[entry] = self.executing(creator[entry], j[entry], t[entry])
        note = np.where(target < 0, N_UNKNOWN_CREATOR, N_NONE)
        return target, note, _nodes_where(note, creator)

    def critical_link(self, entry, pre):
        """Links for ``CriticalEntry`` ``entry`` of the preconditions ``pre``."""
        it = self.items
        n = len(pre)
        target = np.full(n, -1, np.int64)
        note = np.full(n, N_NONE, np.int64)
        kind, creator = entry.kind, entry.creator
        j = _creator_items(it, entry)
        for sel, kinds, missing, found in (
                (kind == TASK_EVENT, "entry", N_TASK_MISSING, N_NONE),
                ((kind == FILL_EVENT) | (kind == DEP_PART_EVENT), "channel", N_CHANNEL_MISSING,
                 N_NONE),
                (kind == COPY_EVENT, "copy", N_CHANNEL_MISSING, N_NONE),
                (kind == INSTANCE_DELETION, "instance", N_DELETION_MISSING, N_DELETION),
                (kind == EXTERNAL_EVENT, "entry", N_FEVENT_MISSING, N_NONE)):
            hit = sel & it.has(kinds, j)
            target[hit] = j[hit]
            note[hit] = found
            note[sel & ~hit] = missing
        note[kind == EXTERNAL_HANDSHAKE] = N_HANDSHAKE
        self._instance_links(kind, creator, target, note)
        made = kinds_made_by_entries(kind)
        is_entry = it.has("entry", j)
        ok = np.flatnonzero(made & is_entry)
        target[ok] = self.executing(creator[ok], j[ok], entry.trigger[ok])
        node = _nodes_where(note, pre)
        miss = np.flatnonzero(made & ~is_entry)
        maker_node = event_node(creator[miss])
        note[miss] = np.where(maker_node == event_node(pre[miss]), N_FEVENT_MISSING,
                              N_MAKER_MISSING)
        node[miss] = maker_node
        return target, note, node

    def _instance_links(self, kind, creator, target, note):
        """InstanceReady: the instance's creator (allocated at once) or the instance (its
        allocation waited: "deferred allocation"); InstanceRedistrict: the previous
        instance's creator."""
        it = self.items
        for k, missing in ((INSTANCE_READY, N_INST_MISSING),
                           (INSTANCE_REDISTRICT, N_REDISTRICT_MISSING)):
            sel = np.flatnonzero(kind == k)
            j = it.find(creator[sel], "instance")
            note[sel[j < 0]] = missing
            keys, sel, j = creator[sel][j >= 0], sel[j >= 0], j[j >= 0]
            deferred = ~self.allocated_at_once(keys, j) if k == INSTANCE_READY else \
                np.zeros(len(j), bool)
            target[sel[deferred]] = j[deferred]
            note[sel[deferred]] = N_DEFERRED
            sel, j = sel[~deferred], j[~deferred]
            q = it.find(it.column("creator", j), "entry")
            target[sel[q >= 0]] = q[q >= 0]
            note[sel[q < 0]] = N_TASK_MISSING

    def allocated_at_once(self, keys, inst):
        """Instances (``inst``, named by ``keys``) allocated when asked (no later
        allocation, or ready by then)."""
        alloc = self.items.allocated(keys)
        return (alloc == NO_TIME) | (self.items.column("ready", inst) <= alloc)


def _creator_items(items, entry):
    """The item each critical event's creator names: as the graph knew it, else looked up."""
    if entry.item is None:
        return items.find(entry.creator)
    j = entry.item.astype(np.int64)  # (a copy)
    todo = np.flatnonzero(j < 0)
    j[todo] = items.find(entry.creator[todo])
    return j


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

    FIELDS = ("via", "target", "kind", "trigger", "note", "node")

    @classmethod
    def empty(cls, n, ids=None):
        ids = ids or (np.int32 if n < 2**31 else np.int64)
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

    def set_rows(self, rows, other):
        """Rows ``rows`` taken from ``other`` (a ``LinkRows`` of as many rows)."""
        for f in self.FIELDS:
            getattr(self, f)[rows] = getattr(other, f)


def entry_rows(out, res, rows, creator, pre, ct, entry):
    """The branches of ``data_source.rs`` for tasks, meta-tasks, messages, profiler
    responses, copies, fills and dependent-partitioning operations (``rows`` of ``out``)."""
    known = entry.known
    has_c, has_p = creator != 0, pre != 0
    a = has_c & has_p & known
    late = a & (ct < entry.trigger)
    for sel, by_event in ((late, True), (~has_c & has_p & known, True),
                          (a & ~late, False), (has_c & ~has_p, False)):
        k = np.flatnonzero(sel)
        if by_event:
            t, note, node = res.critical_link(entry.take(k), pre[k])
            out.put(rows[k], VIA_EVENT, t, entry, k, note, node)
        else:
            t, note, node = res.creator_link(creator[k], ct[k])
            out.put(rows[k], VIA_CREATOR, t, entry, k, note, node)
    _unknown_rows(out, rows, pre, has_p & ~known)


def _unknown_rows(out, rows, pre, sel):
    k = np.flatnonzero(sel)
    barrier = (pre[k] >> np.uint64(60)) == np.uint64(2)
    out.put(rows[k], VIA_UNKNOWN, -1, note=np.where(barrier, N_UNKNOWN_BARRIER,
                                                    N_UNKNOWN_EVENT), node=event_node(pre[k]))


def instance_rows(out, res, rows, inst, creator, pre, ct, entry):
    """Instances (``inst``: ids, and their uids ``inst.keys``): a late precondition, else
    the creator; with none, the creator if it was allocated at once, else "deallocation"
    (it waited for others to be freed)."""
    ids, keys = inst
    known, has_p = entry.known, pre != 0
    late = has_p & known & (ct < entry.trigger)
    k = np.flatnonzero(late)
    t, note, node = res.critical_link(entry.take(k), pre[k])
    out.put(rows[k], VIA_EVENT, t, entry, k, note, node)
    now = res.allocated_at_once(keys, ids)
    for sel in (has_p & known & ~late, ~has_p & now):
        k = np.flatnonzero(sel)
        t, note, node = res.creator_link(creator[k], ct[k])
        out.put(rows[k], VIA_CREATOR, t, entry, k, note, node)
    _unknown_rows(out, rows, pre, has_p & ~known)
    k = np.flatnonzero(~has_p & ~now)
    out.put(rows[k], VIA_DEALLOCATION, -1, note=N_DEALLOCATION, node=0)
    out.trigger[rows[k]] = res.items.column("ready", ids[k])


def wait_rows(out, res, rows, ev, entry):
    """Waits on an event: its link, with no time to compare."""
    k = np.flatnonzero(entry.known)
    t, note, node = res.critical_link(entry.take(k), ev[k])
    out.put(rows[k], VIA_EVENT, t, entry, k, note, node)
    _unknown_rows(out, rows, ev, ~entry.known)


@dataclass
class Basis:
    """What rows were computed from: the items linked (``ids``: entries, then instances),
    their precondition, creator (as the rules read it) and critical entry; the waits'."""

    ids: np.ndarray
    pre: np.ndarray
    creator: np.ndarray
    entry: CriticalEntry
    wait_entry: CriticalEntry


def link_rows(pe, graph, items, timing, linked=None, select=None):
    """Rows of every item and wait of ``pe`` (none where the graph has no edge, unless
    ``linked``), and their ``Basis``; ``select`` (sorted item ids): those items' rows only,
    and no wait's."""
    if linked is None:
        linked = graph.has_data
    out = LinkRows.empty(pe.n)
    waits = LinkRows.empty(len(pe.waits["event"]) if select is None else 0)
    if not linked:
        return out, waits, None
    res = Resolver(items)
    it = pe.item
    flags = items.arrays["flags"]
    if select is None:
        entries = np.flatnonzero((flags & 7) != 0)  # entries, channels, copies
        insts = np.flatnonzero((it["kind"] == ItemKind.INSTANCE) & (it["fevent"] != 0))
    else:
        entries = select[(flags[select] & 7) != 0]
        insts = select[(it["kind"][select] == ItemKind.INSTANCE) & (it["fevent"][select] != 0)]
    ids = np.concatenate([entries, insts])
    pre = it["critical"][ids]
    ent = critical_entry(graph, items.completions, pre)
    creator, ct = timing.creator[ids], timing.creation[ids]
    e, i = slice(0, len(entries)), slice(len(entries), None)
    entry_rows(out, res, entries, creator[e], pre[e], ct[e], ent.take(e))
    instance_rows(out, res, insts, (insts, it["fevent"][insts]), creator[i], pre[i], ct[i],
                  ent.take(i))
    ev = pe.waits["event"] if select is None else np.zeros(0, np.uint64)
    went = critical_entry(graph, items.completions, ev)
    wait_rows(waits, res, np.arange(len(ev)), ev, went)
    return out, waits, Basis(ids, pre, creator, ent, went)


def note_text(rows, k):
    """The reference's note of row ``k`` of ``rows`` ("" for none)."""
    code = int(rows.note[k])
    if code == N_MAKER_MISSING:
        kind = int(rows.kind[k])
        name = EVENT_KIND_NAMES[kind] if 0 <= kind < len(EVENT_KIND_NAMES) else "event"
        return NOTES[code].format(int(rows.node[k]), kind=name)
    return NOTES[code].format(int(rows.node[k]))
