"""What the critical-path rules read of a profile: the columns of every item part in the
profile's numbering (one part: its own arrays, no copy), the items by the event that names
them, and when each item was created as the rules see it."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from legate_prof.model.event_tables import (
    COPY_EVENT, DEP_PART_EVENT, FILL_EVENT, INSTANCE_DELETION, MARK_ALLOCATED, MARK_IMPLICIT,
    MARK_SPAWN, NO_TIME, TASK_EVENT, concat_event_tables)
from legate_prof.model.kinds import ItemKind
from legate_prof.causality.event_graph import find_sorted, first_of_runs
from legate_prof.model.sort_order import stable_order

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


class PartColumns:
    """Item columns of a profile's parts read at a few ids (``ready``, ``lane`` …: not worth
    a copy of the whole column)."""

    def __init__(self, parts):
        self.parts = parts
        end = parts[-1].item_off + parts[-1].model.n_items
        self.offsets = np.array([p.item_off for p in parts] + [end], np.int64)
        self._starts = [p.item_off for p in parts]  # (a walk asks one item a step)

    def one(self, column, i):
        """One item's value of a column, as a Python int (a walk's step: no array work)."""
        return self.row(i, (column,))[column]

    def row(self, i, columns):
        """One item's values of ``columns``, as Python ints, by name."""
        k = bisect.bisect_right(self._starts, i) - 1
        p = self.parts[k]
        it, local = p.model.items, i - p.item_off
        return {c: it[c].item(local) for c in columns}  # (.item: a Python int, no scalar)

    def at(self, column, ids):
        """An item column at ``ids`` only, asked of the parts holding them."""
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


class ProfileEvents:
    """The columns the critical path reads, over all item parts in the profile's numbering
    (one part: its own arrays, no copy)."""

    COLUMNS = ("kind", "fevent", "creator", "critical", "create", "start", "stop")

    def __init__(self, parts):
        self.parts = parts
        self.columns = PartColumns(parts)
        one = len(parts) == 1
        cols = {c: [p.model.items[c] for p in parts] for c in self.COLUMNS}
        self.item = {c: (v[0] if one else np.concatenate(v)) for c, v in cols.items()}
        del cols
        self.n = len(self.item["kind"])
        self.offsets = self.columns.offsets
        self.has_instances = self._joined(_has_instances)
        self.events = concat_event_tables([p.model.events for p in parts])
        self._waits = None

    @property
    def waits(self):
        """The waits on an event, over all parts (read when first asked: the rows of some
        items only, ``link_rows``' ``select``, need none — the idle time a copy explains
        while the waits are still worked out, ``load.early_analysis``)."""
        if self._waits is None:
            w = [_waits_with_events(p) for p in self.parts]
            self._waits = {c: np.concatenate([x[c] for x in w]) for c in w[0]}
        return self._waits

    def release(self):
        """Let go of the joined columns (what the rules needed at once; afterwards ``at``
        answers for a few items)."""
        self.item = None

    def at(self, column, ids):
        return self.columns.at(column, ids)

    def lane_group(self, ids):
        return self.columns.lane_group(ids)

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


FLAGS = {"entry": 1, "channel": 2, "copy": 4, "instance": 8}


def flag_bits(kinds):
    """The ``FLAGS`` bits of one kind of owner ("entry" …) or several."""
    if isinstance(kinds, str):
        return FLAGS[kinds]
    return int(np.bitwise_or.reduce([FLAGS[k] for k in kinds]))


def item_flags(kind, has_instances):
    """Per item, the kinds of owner it can be (``FLAGS``): an entry (task, meta-task,
    message, profiler response), a channel's fill or dependent partitioning (a fill the log
    gave its instances), a copy (likewise) or an instance."""
    flags = _KIND_FLAGS[kind]
    k = np.flatnonzero(has_instances)  # (a few: copies and fills)
    flags[k] |= _INSTANCE_FLAGS[kind[k]]
    return flags


# ``item_flags`` by item kind: what any item of it can be; what one the log gave its
# instances can be besides
_KIND_FLAGS = np.zeros(256, np.uint8)
_KIND_FLAGS[[int(k) for k in ENTRY_KINDS]] = FLAGS["entry"]
_KIND_FLAGS[int(ItemKind.DEP_PART)] = FLAGS["channel"]
_KIND_FLAGS[int(ItemKind.INSTANCE)] = FLAGS["instance"]
_INSTANCE_FLAGS = np.zeros(256, np.uint8)
_INSTANCE_FLAGS[int(ItemKind.FILL)] = FLAGS["channel"]
_INSTANCE_FLAGS[int(ItemKind.COPY)] = FLAGS["copy"]


class ItemIndex:
    """Items by the event that names them (their completion; an instance's uid): the first
    item of each event (``events`` sorted, ``items``), and which kinds of owner each item can
    be (``flags``)."""

    def __init__(self, pe):
        it = pe.item
        ids = np.flatnonzero(it["fevent"] != 0)
        if pe.n < 2**31:
            ids = ids.astype(np.int32)
        fe = it["fevent"][ids]
        order = stable_order(fe)
        o, fe = ids[order], fe[order]
        first = first_of_runs(fe)
        self.events, self.items = fe[first], o[first]
        self.flags = item_flags(it["kind"], pe.has_instances)

    def has(self, kinds, ids):
        """Whether each of ``ids`` (-1: none) can be an owner of ``kinds``."""
        ids = np.asarray(ids)
        return (ids >= 0) & ((self.flags[np.maximum(ids, 0)] & flag_bits(kinds)) != 0)

    def find(self, events, kinds=None):
        """The item named by each event (-1: none, or not of ``kinds``)."""
        pos = find_sorted(self.events, events)
        out = np.where(pos >= 0, self.items[np.maximum(pos, 0)], -1)
        if kinds is not None:
            out = np.where(self.has(kinds, out), out, -1)
        return out


def marks_of(events, mark):
    """(sorted events, times) of one kind of mark; of several for one event, the last."""
    m = events["marks"]
    sel = np.flatnonzero(m["mark"] == mark)
    o = sel[stable_order(m["event"][sel])]
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
    creator), the rest as recorded.  ``base``: the creation before that last step (a
    response's own), what a lookup of the item by its event reads."""

    creation: np.ndarray
    creator: np.ndarray
    base: np.ndarray
    allocated: tuple  # instances' allocation marks (sorted events, times)
    implicit: np.ndarray  # events of implicit tasks (no completion vertex)


def item_timing(pe, index):
    it = pe.item
    base = it["create"].copy()
    msg = np.flatnonzero(it["kind"] == ItemKind.MESSAGE)
    spawn = mark_of(marks_of(pe.events, MARK_SPAWN), it["fevent"][msg])
    base[msg] = np.where(spawn != NO_TIME, spawn, base[msg])
    creation, creator = base, it["creator"]
    prof = np.flatnonzero(it["kind"] == ItemKind.PROF_TASK)
    p, o = profiled_owner(index, it["creator"][prof], prof)
    if len(p):
        creation, creator = base.copy(), creator.copy()
        creation[p] = base[o]  # (an owner that is itself a profiler response: its own)
        creator[p] = it["creator"][o]
    implicit = marks_of(pe.events, MARK_IMPLICIT)[0]
    return Timing(creation, creator, base, marks_of(pe.events, MARK_ALLOCATED), implicit)


def profiled_owner(index, creator, prof):
    """(the profiler responses ``prof`` whose owner ``index`` finds by their ``creator``,
    those owners): what they profiled — an entry, a copy, fill or dependent partitioning,
    or an instance."""
    owner = index.find(creator)
    has = owner >= 0
    o = owner[has]
    ok = index.has(("entry", "channel", "instance", "copy"), o)
    return prof[has][ok], o[ok]


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
