"""The Realm event graph's records as a model keeps them: three small tables keyed by event
id, never by item, so reordering or merging items leaves them as they are.

* ``records``: one row per record that makes an event (a merger, a trigger, a barrier
  arrival, an instance becoming ready …), in reading order (files in the order given, records
  in file order: the critical path's rules depend on it): the kind of event it makes, the
  event (``result``), the event of what was running when it was made (``creator``; an
  instance's uid for an instance's events), when (``time``: performed / created) and, for an
  external event only, the trigger time the record gives (else ``NO_TIME``).
* ``edges``: precondition -> result, in reading order (within a record: pre0, pre1 …);
  ``update`` 1 where the reference adds no second copy of an edge it already has.
* ``marks``: facts about an item's event that its item columns do not hold: a message's
  ``spawn`` (the sender's clock), an instance's allocation time, an implicit task (a user event
  Legion triggers itself: its completion is not a vertex).

Items carry their own events in ``items["fevent"]``, ``["creator"]``, ``["critical"]``.
"""

from __future__ import annotations

import numpy as np

NO_TIME = np.iinfo(np.int64).min

# Event kinds, numbered as the reference's EventEntryKind (state.rs).
UNKNOWN_EVENT, TASK_EVENT, FILL_EVENT, COPY_EVENT, DEP_PART_EVENT = 0, 1, 2, 3, 4
MERGE_EVENT, TRIGGER_EVENT, POISON_EVENT, ARRIVE_BARRIER, EXTERNAL_HANDSHAKE = 5, 6, 7, 8, 9
RESERVATION_ACQUIRE, INSTANCE_READY, INSTANCE_REDISTRICT, INSTANCE_DELETION = 10, 11, 12, 13
COMPLETION_QUEUE_EVENT, EXTERNAL_EVENT = 14, 15
EVENT_KIND_NAMES = (
    "UnknownEvent", "TaskEvent", "FillEvent", "CopyEvent", "DepPartEvent", "MergeEvent",
    "TriggerEvent", "PoisonEvent", "ArriveBarrier", "ExternalHandshake", "ReservationAcquire",
    "InstanceReady", "InstanceRedistrict", "InstanceDeletion", "CompletionQueueEvent",
    "ExternalEvent")

# Marks.
MARK_SPAWN, MARK_ALLOCATED, MARK_IMPLICIT = 0, 1, 2
N_MARKS = 3

EVENT_TABLES = {
    "records": {"kind": np.uint8, "result": np.uint64, "creator": np.uint64,
                "time": np.int64, "trigger": np.int64},
    "edges": {"src": np.uint64, "dst": np.uint64, "update": np.uint8},
    "marks": {"event": np.uint64, "mark": np.uint8, "time": np.int64},
}


def empty_event_tables():
    """No event records (a profile without them, or made by hand)."""
    return {t: {c: np.zeros(0, dt) for c, dt in cols.items()} for t, cols in EVENT_TABLES.items()}


def event_table(name, **cols):
    """One table of ``EVENT_TABLES`` from columns (any integer arrays, broadcast to one length)."""
    n = max((len(v) for v in cols.values() if np.ndim(v) > 0), default=0)
    return {c: np.ascontiguousarray(np.broadcast_to(np.asarray(cols.get(c, 0)).astype(dt), (n,)))
            for c, dt in EVENT_TABLES[name].items()}


def concat_event_tables(tables):
    """Several models' event tables as one, in the order given (the reading order)."""
    tables = list(tables)
    if len(tables) == 1:
        return tables[0]
    out = {}
    for name, cols in EVENT_TABLES.items():
        out[name] = {c: np.concatenate([np.asarray(t[name][c], dt) for t in tables]
                                       or [np.zeros(0, dt)]) for c, dt in cols.items()}
    return out


def event_table_rows(events):
    """Rows of the event tables (records, edges, marks): the memory benchmark's count."""
    return sum(len(t[next(iter(t))]) for t in events.values())
