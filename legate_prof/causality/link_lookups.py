"""The items the critical-path rules look up, as arrays: one part's (``ItemTables``) or several
parts' at once (``PartLookups``).

The rules ask four things of items, always by a Realm event: which item an event names (its
completion; an instance's uid) and what kind of owner it can be, what an entry was running at
a moment (its innermost call), when an instance was allocated, and what a completion vertex
is (``completions``).  ``ItemTables`` answers them from one part's named arrays — views of
its model's columns, or the same arrays saved by a rank's worker and mapped back
(``ARRAYS``).  ``PartLookups`` answers for several parts, asking each event of the part of
the node that made it (Realm makes an item's event on the node that runs it: an event no
part of its node holds is in none; ``rank_links`` checks that no part holds another node's).
Ids are the part's own (``ItemTables``) or the profile's (``PartLookups``)."""

from __future__ import annotations

import numpy as np

from legate_prof.assemble.event_records import event_node
from legate_prof.model.event_tables import NO_TIME
from legate_prof.model.item_parts import positions_by_part
from legate_prof.model.kinds import ItemKind
from legate_prof.causality.call_index import CallIndex
from legate_prof.causality.critical_inputs import (CALL_KINDS, VERTEX_KIND, flag_bits, kinds_mask,
                                               mark_of)
from legate_prof.causality.event_graph import find_sorted, positions_in_sorted

# ``ItemTables.of``: per item kind, owner flags, raw creator, create, start, stop, and the
# creation a lookup reads (``Timing.base``: ``create`` but where ``creation_ids`` (sorted)
# say ``creation_values``); by event: ``keys`` (sorted) -> ``key_items``; calls
# by caller (``call_*``: ``CallIndex.arrays``); instances' allocations (``alloc_keys``
# sorted, times); implicit tasks' events (sorted: their completion is no vertex).
# What ``saved`` keeps: the lookups (the model's own columns are read from the model)
SAVED = ("flags", "keys", "key_items", "alloc_keys", "alloc_times", "implicit",
         "creation_ids", "creation_values", *("call_" + n for n in CallIndex.ARRAYS))


class ItemTables:
    """One part's items as the rules look them up (the named arrays above; a column not
    among them is read with ``at(column, ids)``)."""

    def __init__(self, arrays, at=None):
        self.arrays = arrays
        self._at = at
        self.calls = CallIndex.from_arrays({n: arrays["call_" + n] for n in CallIndex.ARRAYS})

    @classmethod
    def of(cls, pe, index, timing, calls_kept=None):
        """The tables of ``pe`` (``critical_inputs.ProfileEvents``) and its index and timing:
        views of its columns but for the calls' index (ready times and lane groups are read
        from the parts when asked).  ``calls_kept(calls)``: which calls (item ids) the index
        holds (default: all); one left out is never found running."""
        it = pe.item
        calls = np.flatnonzero(kinds_mask(it["kind"], CALL_KINDS))
        if calls_kept is not None:
            calls = calls[calls_kept(calls)]
        if pe.n < 2**31:
            calls = calls.astype(np.int32)
        index_of_calls = CallIndex(calls, it["creator"][calls], it["start"][calls],
                                   it["stop"][calls])
        patched = np.flatnonzero(timing.base != it["create"])  # (messages: their spawn)
        arrays = {"kind": it["kind"], "flags": index.flags, "creator": it["creator"],
                  "creation": timing.base, "create": it["create"], "creation_ids": patched,
                  "creation_values": timing.base[patched], "start": it["start"],
                  "stop": it["stop"],
                  "keys": index.events, "key_items": index.items,
                  "alloc_keys": timing.allocated[0], "alloc_times": timing.allocated[1],
                  "implicit": timing.implicit,
                  **{"call_" + n: a for n, a in index_of_calls.arrays().items()}}
        base = int(pe.offsets[0])  # (``pe`` numbers items from its first part's offset)

        def at(column, ids):
            ids = np.asarray(ids, np.int64) + base
            return pe.lane_group(ids) if column == "group" else pe.at(column, ids)
        return cls(arrays, at)

    def saved(self):
        """What a rank's worker writes (``SAVED``): the lookups, not the model's columns."""
        return {k: v for k, v in self.arrays.items() if k in SAVED}

    def column(self, name, ids):
        a = self.arrays.get(name)
        if a is not None:
            return a[ids]
        if name == "creation":
            out = self.column("create", ids).copy()
            pos = find_sorted(self.arrays["creation_ids"].astype(np.int64),
                              np.asarray(ids, np.int64))
            hit = pos >= 0
            out[hit] = self.arrays["creation_values"][pos[hit]]
            return out
        return self._at(name, ids)

    def has(self, kinds, ids):
        """Whether each of ``ids`` (-1: none) can be an owner of ``kinds`` ("entry" …)."""
        ids = np.asarray(ids)
        flags = self.arrays["flags"]
        if len(flags) == 0:  # (a rank of no items: a log cut before its first)
            return np.zeros(ids.shape, bool)
        return (ids >= 0) & ((flags[np.maximum(ids, 0)] & flag_bits(kinds)) != 0)

    def find(self, events, kinds=None):
        """The item named by each event (-1: none, or not of ``kinds``)."""
        a = self.arrays
        pos, found = positions_in_sorted(a["keys"], events)
        if len(a["keys"]):
            out = a["key_items"][pos].astype(np.int64)
            out[~found] = -1
        else:
            out = np.full(len(pos), -1, np.int64)
        if kinds is not None:
            out = np.where(self.has(kinds, out), out, -1)
        return out

    def running(self, callers, t):
        """The innermost call each entry (by its event) was running at ``t`` (-1: none)."""
        return self.calls.running(np.asarray(callers, np.uint64), np.asarray(t, np.int64))

    def allocated(self, events):
        """When each instance (by its uid) was allocated, if later than asked (NO_TIME)."""
        return mark_of((self.arrays["alloc_keys"], self.arrays["alloc_times"]), events)

    def completions(self, events):
        """``build_graph``'s view of items' completions: (event kind, creation, trigger, item)
        of the item each event names (-1 kind: none; an implicit task's completion is no
        vertex; the item: read where the kind is not -1)."""
        n = len(events)
        j = self.find(events)
        if len(self.arrays["implicit"]):
            j[find_sorted(self.arrays["implicit"], events) >= 0] = -1
        hit = np.flatnonzero(j >= 0)
        jj = j[hit]
        k = self.column("kind", jj)
        kind = np.full(n, -1, np.int64)
        kind[hit] = VERTEX_KIND[k]
        creation = np.full(n, NO_TIME, np.int64)
        prof = k == ItemKind.PROF_TASK
        creation[hit] = self.column("creation", jj)
        creation[hit[prof]] = self.column("start", jj[prof])
        trigger = np.full(n, NO_TIME, np.int64)
        trigger[hit] = self.column("stop", jj)
        return kind, creation, trigger, j


class PartLookups:
    """``ItemTables`` of several parts answering as one, in the profile's item numbering:
    each event is asked of the part holding its node (``nodes[k]``: part k's)."""

    def __init__(self, tables, offsets, nodes):
        self.tables = tables
        self.offsets = np.asarray(offsets, np.int64)
        self.node_part = np.full(1 << 16, -1, np.int64)
        for k, ns in enumerate(nodes):
            self.node_part[np.asarray(ns, np.int64) & 0xFFFF] = k

    def owner(self, events):
        """The part holding each event's node (-1: none)."""
        events = np.asarray(events, np.uint64)
        return np.where(events != 0, self.node_part[event_node(events)], -1)

    def _by_owner(self, events):
        return positions_by_part(self.owner(events), len(self.tables))

    def find(self, events, kinds=None):
        events = np.asarray(events, np.uint64)
        out = np.full(len(events), -1, np.int64)
        for k, sel in self._by_owner(events):
            j = self.tables[k].find(events[sel], kinds)
            out[sel] = np.where(j >= 0, j + self.offsets[k], -1)
        return out

    def _per_part(self, ids, ask, dtype, default):
        ids = np.asarray(ids, np.int64)
        out = np.full(len(ids), default, dtype)
        ok = np.flatnonzero(ids >= 0)
        part = np.searchsorted(self.offsets, ids[ok], side="right") - 1
        for k, at in positions_by_part(part, len(self.tables)):
            sel = ok[at]
            out[sel] = ask(self.tables[k], ids[sel] - self.offsets[k])
        return out

    def has(self, kinds, ids):
        return self._per_part(ids, lambda t, local: t.has(kinds, local), bool, False)

    def column(self, name, ids):
        dtype = self.tables[0].column(name, np.zeros(0, np.int64)).dtype
        return self._per_part(ids, lambda t, local: t.column(name, local), dtype, 0)

    def running(self, callers, t):
        callers = np.asarray(callers, np.uint64)
        t = np.asarray(t, np.int64)
        out = np.full(len(callers), -1, np.int64)
        for k, sel in self._by_owner(callers):
            c = self.tables[k].running(callers[sel], t[sel])
            out[sel] = np.where(c >= 0, c + self.offsets[k], -1)
        return out

    def allocated(self, events):
        events = np.asarray(events, np.uint64)
        out = np.full(len(events), NO_TIME, np.int64)
        for k, sel in self._by_owner(events):
            out[sel] = self.tables[k].allocated(events[sel])
        return out

    def completions(self, events):
        events = np.asarray(events, np.uint64)
        n = len(events)
        kind, creation, trigger, item = (np.full(n, -1, np.int64), np.full(n, NO_TIME, np.int64),
                                         np.full(n, NO_TIME, np.int64), np.full(n, -1, np.int64))
        for k, sel in self._by_owner(events):
            kind[sel], creation[sel], trigger[sel], j = self.tables[k].completions(events[sel])
            item[sel] = np.where(j >= 0, j + self.offsets[k], -1)
        return kind, creation, trigger, item
