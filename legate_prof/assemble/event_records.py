"""The Realm event graph of Legion Prof logs as the model keeps it (``model.event_tables``):
which record makes which event, the edges between events, and the few facts about items'
events that their columns do not hold.  Read as the reference reads them (``state.rs``
``process_record``); everything over whole columns."""

from __future__ import annotations

import numpy as np

from legate_prof.model.event_tables import (
    ARRIVE_BARRIER, COMPLETION_QUEUE_EVENT, EXTERNAL_EVENT, EXTERNAL_HANDSHAKE, INSTANCE_READY,
    INSTANCE_REDISTRICT, MARK_ALLOCATED, MARK_IMPLICIT, MARK_SPAWN, MERGE_EVENT, NO_TIME,
    POISON_EVENT, RESERVATION_ACQUIRE, TRIGGER_EVENT, concat_event_tables, empty_event_tables,
    event_table)
from legate_prof.model.sort_order import stable_order

# record -> (kind of the event it makes, its creator field, its precondition fields, whether a
# second copy of an edge is added), for the records whose event is made by what ran
# ``creator`` at ``performed``
_MADE_BY = {
    "EventMergerInfo": (MERGE_EVENT, "fevent", ("pre0", "pre1", "pre2", "pre3"), False),
    "CompletionQueueInfo": (COMPLETION_QUEUE_EVENT, "fevent", ("pre0", "pre1", "pre2", "pre3"),
                            False),
    "EventPoisonInfo": (POISON_EVENT, "fevent", (), False),
    "ReservationAcquireInfo": (RESERVATION_ACQUIRE, "fevent", ("precondition",), False),
    "InstanceReadyInfo": (INSTANCE_READY, "inst_uid", ("precondition",), False),
    "InstanceRedistrictInfo": (INSTANCE_REDISTRICT, "previous", ("precondition",), False),
}


def event_node(events):
    """Node that made each event id (Realm's id layout: barriers bits 44..59, other events
    bits 47..62)."""
    e = np.ascontiguousarray(events, np.uint64)  # a record table's column: read it once
    barrier = (e >> np.uint64(60)) == np.uint64(2)
    shift = np.where(barrier, np.uint64(44), np.uint64(47))
    return ((e >> shift) & np.uint64(0xFFFF)).astype(np.int64)


def _table(log, name):
    t = log.table(name)
    return t if isinstance(t, np.ndarray) and len(t) else None


def _edges_of(t, result, pre_fields, update):
    """Edges precondition -> result of a record table, record by record (pre0, pre1 … within
    a record), zero preconditions left out."""
    if not pre_fields:
        return None
    src = np.stack([t[f] for f in pre_fields], axis=1).astype(np.uint64).ravel()
    dst = np.repeat(np.asarray(result, np.uint64), len(pre_fields))
    upd = np.broadcast_to(np.asarray(update, np.uint8), (len(t),))
    upd = np.repeat(upd, len(pre_fields))
    keep = src != 0
    return event_table("edges", src=src[keep], dst=dst[keep], update=upd[keep])


def _log_event_tables(log):
    """One log's records, edges and marks, in its reading order (records of one kind keep
    their file order; the rules never compare records of two kinds for one event)."""
    records, edges = [], []
    for name, (kind, creator, pres, update) in _MADE_BY.items():
        t = _table(log, name)
        if t is None:
            continue
        records.append(event_table("records", kind=kind, result=t["result"],
                                   creator=t[creator], time=t["performed"], trigger=NO_TIME))
        edges.append(_edges_of(t, t["result"], pres, update))
    t = _table(log, "EventTriggerInfo")
    if t is not None:  # a trigger of another node's event: no second copy of its edge
        remote = event_node(t["result"]) != event_node(t["fevent"])
        records.append(event_table("records", kind=TRIGGER_EVENT, result=t["result"],
                                   creator=t["fevent"], time=t["performed"], trigger=NO_TIME))
        edges.append(_edges_of(t, t["result"], ("precondition",), remote))
    t = _table(log, "BarrierArrivalInfo")
    if t is not None:  # an arrival with its own barrier as fevent: an external handshake
        handshake = t["fevent"] == t["result"]
        records.append(event_table(
            "records", kind=np.where(handshake, EXTERNAL_HANDSHAKE, ARRIVE_BARRIER),
            result=t["result"], creator=np.where(handshake, 0, t["fevent"]),
            time=t["performed"], trigger=NO_TIME))
        edges.append(_edges_of(t, t["result"], ("precondition",), True))
    t = _table(log, "ExternalEventInfo")
    if t is not None:
        records.append(event_table("records", kind=EXTERNAL_EVENT, result=t["external"],
                                   creator=t["fevent"], time=t["created"],
                                   trigger=t["trigger"]))
    return {"records": _joined("records", records), "edges": _joined("edges", edges),
            "marks": _marks(log)}


def _joined(name, tables):
    tables = [t for t in tables if t is not None]
    if not tables:
        return event_table(name)
    if len(tables) == 1:
        return tables[0]
    return {c: np.concatenate([t[c] for t in tables]) for c in tables[0]}


def _marks(log):
    """Messages' spawn times, instances' allocation times (a profiler response that is not a
    completion names the instance it allocated), implicit tasks' events."""
    parts = []
    t = _table(log, "MessageInfo")
    if t is not None and {"spawn", "fevent"} <= set(t.dtype.names):
        parts.append(event_table("marks", event=t["fevent"], mark=MARK_SPAWN, time=t["spawn"]))
    t = _table(log, "ProfTaskInfo")
    if t is not None and {"creator", "completion"} <= set(t.dtype.names):
        alloc = t["completion"] == 0
        parts.append(event_table("marks", event=t["creator"][alloc], mark=MARK_ALLOCATED,
                                 time=t["start"][alloc]))
    t = _table(log, "ImplicitTaskInfo")
    if t is not None and "fevent" in t.dtype.names:
        parts.append(event_table("marks", event=t["fevent"], mark=MARK_IMPLICIT, time=NO_TIME))
    return _joined("marks", parts)


def event_tables(logs):
    """The event tables of several logs, in the order given."""
    if not logs:
        return empty_event_tables()
    return concat_event_tables([_log_event_tables(log) for log in logs])


def instance_criticals(log):
    """Per InstTimelineInfo row, the precondition that made the instance ready: its
    InstanceReadyInfo's, else that of the InstanceRedistrictInfo whose ``next`` it is (0:
    none; the first record wins)."""
    insts = log.table("InstTimelineInfo")
    out = np.zeros(len(insts), np.uint64)
    for name, field in (("InstanceRedistrictInfo", "next"), ("InstanceReadyInfo", "inst_uid")):
        t = _table(log, name)
        if t is None:
            continue
        uid = t[field].astype(np.uint64)
        pre = t["precondition"].astype(np.uint64)
        keep = pre != 0
        uid, pre = uid[keep], pre[keep]
        # first record per instance: sort stably, keep the first of each run
        o = stable_order(uid)
        u = uid[o]
        first = np.concatenate([[True], u[1:] != u[:-1]]) if len(u) else np.zeros(0, bool)
        u, p = u[first], pre[o][first]
        if len(u) == 0:
            continue
        pos = np.clip(np.searchsorted(u, insts["inst_uid"]), 0, len(u) - 1)
        hit = u[pos] == insts["inst_uid"]
        out = np.where(hit, p[pos], out)  # (the ready record's, where both name it)
    return out


def prof_task_events(t):
    """A profiler response's events: its own, the event of what it profiled as creator, and
    that event again as its critical one when it reports a completion."""
    names = t.dtype.names
    if "fevent" not in names or "creator" not in names:
        return {}
    completion = t["completion"] != 0 if "completion" in names else np.zeros(len(t), bool)
    return {"fevent": t["fevent"], "creator": t["creator"],
            "critical": np.where(completion, t["creator"], 0).astype(np.uint64)}
