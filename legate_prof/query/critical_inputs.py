"""What the critical-path rules read of a profile: the columns of every item part in the
profile's numbering (one part: its own arrays, no copy), the items by the event that names
them, and when each item was created as the rules see it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from legate_prof.model.event_tables import (
    COPY_EVENT, DEP_PART_EVENT, FILL_EVENT, INSTANCE_DELETION, MARK_ALLOCATED, MARK_IMPLICIT,
    MARK_SPAWN, NO_TIME, TASK_EVENT, concat_event_tables)
from legate_prof.model.kinds import ItemKind
from legate_prof.query.event_graph import find_sorted, first_of_runs

ENTRY_KINDS = (ItemKind.TASK, ItemKind.META, ItemKind.MESSAGE, ItemKind.PROF_TASK)
CALL_KINDS = (ItemKind.MAPPER_CALL, ItemKind.RUNTIME_CALL, ItemKind.APP_CALL)
# item kind -> the kind of event its completion is (-1: none)
VERTEX_KIND = np.full(256, -1, np.int64)
for _k in ENTRY_KINDS:
    VERTEX_KIND[int(_k)] = TASK_EVENT
VERTEX_KIND[int(ItemKind.FILL)] = FILL_EVENT
VERTEX_KIND[int(ItemKind.COPY)] = COPY_EVENT
VERTEX_KIND[int(ItemKind.DEP_PART)] = DEP_PART_EVENT
VERTEX_KIND[int(ItemKind.INSTANCE)] = INSTANCE_DELETION


def kinds_mask(kind, kinds):
    table = np.zeros(256, bool)
    table[[int(k) for k in kinds]] = True
    return table[kind]


class ProfileEvents:
    """The columns the critical path reads, over all item parts in the profile's numbering
    (one part: its own arrays, no copy)."""

    COLUMNS = ("kind", "fevent", "creator", "critical", "create", "start", "stop")

    def __init__(self, parts):
        self.parts = parts
        one = len(parts) == 1
        cols = {c: [p.model.items[c] for p in parts] for c in self.COLUMNS}
        self.item = {c: (v[0] if one else np.concatenate(v)) for c, v in cols.items()}
        del cols
        self.n = len(self.item["kind"])
        self.offsets = np.array([p.item_off for p in parts] + [self.n], np.int64)
        self.has_instances = self._joined(_has_instances)
        self.events = concat_event_tables([p.model.events for p in parts])
        w = [_waits_with_events(p) for p in parts]
        self.waits = {c: np.concatenate([x[c] for x in w]) for c in w[0]}

    def release(self):
        """Let go of the joined columns (what the rules needed at once; afterwards ``at``
        answers for a few items)."""
        self.item = None

    def at(self, column, ids):
        """An item column at ``ids`` only, asked of the parts holding them (``ready``,
        ``lane`` …: not worth a copy of the whole column)."""
        from legate_prof.model.item_parts import by_part
        ids = np.asarray(ids, np.int64)
        out = np.zeros(len(ids), self.parts[0].model.items[column].dtype)
        for k, sel, local in by_part(self.offsets, ids):
            out[sel] = self.parts[k].model.items[column][local]
        return out

    def lane_group(self, ids):
        """The lane group (index into ``GROUP_KEYS``) of the items ``ids``."""
        from legate_prof.model.item_parts import by_part
        ids = np.asarray(ids, np.int64)
        out = np.zeros(len(ids), np.int64)
        for k, sel, local in by_part(self.offsets, ids):
            m = self.parts[k].model
            out[sel] = m.lanes["group"][m.items["lane"][local]]
        return out

    def _joined(self, column):
        cols = [column(p.model) for p in self.parts]
        return cols[0] if len(cols) == 1 else np.concatenate(cols)


def _has_instances(model):
    """Per item: a copy or fill the log gave its instances (the reference keeps no item for
    one without: it cannot be linked to)."""
    out = np.zeros(model.n_items, bool)
    t = model.transfers
    if len(t["item"]):
        out[t["item"]] = (t["src"] != 0) | (t["dst"] != 0)
    return out


def _waits_with_events(part):
    w = part.model.waits
    ev = np.asarray(w.get("event", np.zeros(len(w["item"]), np.uint64)), np.uint64)
    keep = np.flatnonzero(ev != 0)
    return {"item": np.asarray(w["item"], np.int64)[keep] + part.item_off,
            "start": np.asarray(w["start"])[keep], "ready": np.asarray(w["ready"])[keep],
            "end": np.asarray(w["end"])[keep], "event": ev[keep]}


class ItemIndex:
    """Items by the event that names them (their completion; an instance's uid): the first
    item of each event, and which kinds of owner it can be."""

    def __init__(self, pe):
        it = pe.item
        ids = np.flatnonzero(it["fevent"] != 0)
        if pe.n < 2**31:
            ids = ids.astype(np.int32)
        o = ids[np.argsort(it["fevent"][ids], kind="stable")]
        fe = it["fevent"][o]
        first = first_of_runs(fe)
        self.events, self.items = fe[first], o[first]
        kind = it["kind"]
        self.entry = kinds_mask(kind, ENTRY_KINDS)
        self.channel = ((kind == ItemKind.FILL) & pe.has_instances) | (kind == ItemKind.DEP_PART)
        self.copy = (kind == ItemKind.COPY) & pe.has_instances
        self.instance = kind == ItemKind.INSTANCE

    def find(self, events, mask=None):
        """The item named by each event (-1: none, or not of ``mask``)."""
        pos = find_sorted(self.events, events)
        out = np.where(pos >= 0, self.items[np.maximum(pos, 0)], -1)
        if mask is not None:
            out = np.where((out >= 0) & mask[np.maximum(out, 0)], out, -1)
        return out


def marks_of(events, mark):
    """(sorted events, times) of one kind of mark; of several for one event, the last."""
    m = events["marks"]
    sel = np.flatnonzero(m["mark"] == mark)
    o = sel[np.argsort(m["event"][sel], kind="stable")]
    ev = m["event"][o]
    last = np.ones(len(o), bool)
    last[:-1] = ev[1:] != ev[:-1]
    return ev[last], m["time"][o][last]


def mark_of(table, events, default=NO_TIME):
    keys, times = table
    pos = find_sorted(keys, events)
    if len(keys) == 0:
        return np.full(len(pos), default, np.int64)
    return np.where(pos >= 0, times[np.maximum(pos, 0)], default)


@dataclass
class Timing:
    """When each item was created as the rules see it, and by whom: a message by its
    sender's clock (``spawn``), a profiler response as what it profiled (its creation and
    creator), the rest as recorded."""

    creation: np.ndarray
    creator: np.ndarray
    allocated: tuple  # instances' allocation marks (sorted events, times)
    implicit: np.ndarray  # events of implicit tasks (no completion vertex)


def item_timing(pe, index):
    it = pe.item
    creation = it["create"].copy()
    creator = it["creator"].copy()
    msg = np.flatnonzero(it["kind"] == ItemKind.MESSAGE)
    spawn = mark_of(marks_of(pe.events, MARK_SPAWN), it["fevent"][msg])
    creation[msg] = np.where(spawn != NO_TIME, spawn, creation[msg])
    prof = np.flatnonzero(it["kind"] == ItemKind.PROF_TASK)
    owner = index.find(it["creator"][prof])
    has = owner >= 0
    o = owner[has]
    ok = index.entry[o] | index.channel[o] | index.instance[o] | index.copy[o]
    p, o = prof[has][ok], o[ok]
    creation[p] = creation[o]  # (an owner that is itself a profiler response: as patched)
    creator[p] = creator[o]
    implicit = marks_of(pe.events, MARK_IMPLICIT)[0]
    return Timing(creation, creator, marks_of(pe.events, MARK_ALLOCATED), implicit)


def completions_of(pe, index, timing):
    """``build_graph``'s view of items' completions: (event kind, creation, trigger) of the
    item each event names (-1 kind: none; an implicit task's completion is no vertex)."""
    it = pe.item

    def completions(events):
        j = index.find(events)
        hit = np.flatnonzero(j >= 0)
        jj = j[hit]
        kind = np.full(len(events), -1, np.int64)
        kind[hit] = VERTEX_KIND[it["kind"][jj]]
        kind[hit[find_sorted(timing.implicit, events[hit]) >= 0]] = -1
        creation = np.full(len(events), NO_TIME, np.int64)
        creation[hit] = np.where(it["kind"][jj] == ItemKind.PROF_TASK, it["start"][jj],
                                 timing.creation[jj])
        trigger = np.full(len(events), NO_TIME, np.int64)
        trigger[hit] = it["stop"][jj]
        return kind, creation, trigger
    return completions


# the kinds an item that ends a run's path may be
END_KINDS = (*ENTRY_KINDS, *CALL_KINDS, ItemKind.GPU_KERNEL, ItemKind.COPY, ItemKind.FILL,
             ItemKind.DEP_PART)


def last_item(columns):
    """The item that ended last (-1: none), of item ``columns`` (kind, stop)."""
    if len(columns["stop"]) == 0:
        return -1
    cand = np.flatnonzero(kinds_mask(columns["kind"], END_KINDS))
    if len(cand) == 0:
        return -1
    return int(cand[np.argmax(columns["stop"][cand])])
