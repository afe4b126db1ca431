"""Perfetto's native protobuf trace (perfetto_trace.proto), encoded by hand (protowire).

Tracks: one process track per rank; under it one track per lane row (processors, channels,
memories, ...), named as the Chrome export names its threads, so that the slices of a track
never cross (a lane's rows never overlap); counter tracks for each lane group's utilization (processors, 0..1) and bytes
in use (memories).  Items are BEGIN/END slice pairs carrying op id and provenance as debug
annotations; copies whose source and destination memories are known get a flow from an
instant on the source memory's track through the copy to an instant on the destination's.
The run's critical path is a flow per step, from the predecessor's slice to the item's
(``critical_flows``).  Each track has its own packet sequence, in which timestamps only grow,
so nothing is sorted.
"""

from __future__ import annotations

import numpy as np

from legate_prof.model.kinds import GROUP_KEYS, GROUP_TITLE, MEMORY_GROUPS, ItemKind
from legate_prof.export import protowire as pw
from legate_prof.export.critical import path_flows
from legate_prof.export.tables import CATEGORY_NAMES, item_categories
from legate_prof.export.threads import row_offsets, thread_name
from legate_prof.model.sort_order import stable_order
from legate_prof.output_file import atomic_output

CHUNK_ROWS = 1 << 16
NO_OP = np.uint64(0xFFFFFFFFFFFFFFFF)

# field numbers from protos/perfetto/trace/perfetto_trace.proto
PACKET = 1                                       # Trace.packet
P_TIMESTAMP, P_SEQ, P_TRACK_EVENT, P_DESCRIPTOR = 8, 10, 11, 60  # TracePacket
TD_UUID, TD_NAME, TD_PROCESS, TD_PARENT, TD_COUNTER = 1, 2, 3, 5, 8  # TrackDescriptor
PD_PID, PD_NAME = 1, 6                           # ProcessDescriptor
CD_UNIT, CD_UNIT_NAME = 3, 6                     # CounterDescriptor
UNIT_SIZE_BYTES = 3
TE_TYPE, TE_TRACK, TE_NAME, TE_CATEGORIES, TE_ANNOT = 9, 11, 23, 22, 4  # TrackEvent
TE_DOUBLE_COUNTER, TE_FLOW, TE_TERM_FLOW = 44, 47, 48
SLICE_BEGIN, SLICE_END, INSTANT, COUNTER = 1, 2, 3, 4
DA_NAME, DA_UINT, DA_INT, DA_STRING = 10, 3, 4, 6  # DebugAnnotation

RANK_UUID = 1 << 40
ROW_UUID = 2 << 40
COUNTER_UUID = 3 << 40
FLOW_SEQ = 1 << 30
COUNTER_SEQ = 1 << 29
CRITICAL_FLOW = 1 << 62  # flow ids of the critical path's steps (copies' are 1, 2, ...)


def _packet(body: bytes) -> bytes:
    return pw.field_bytes(PACKET, body)


def _descriptor(**fields) -> bytes:
    return _packet(pw.field_bytes(P_DESCRIPTOR, b"".join(fields.values())))


def _descriptors(model, offset, out):
    ranks = sorted({int(r) for r in model.lanes["rank"]} | {int(r["rank"]) for r in model.ranks})
    for r in ranks:
        out.write(_descriptor(
            uuid=pw.field_bytes(TD_UUID, RANK_UUID + r),
            process=pw.field_bytes(TD_PROCESS, pw.field_bytes(PD_PID, r + 1)
                                   + pw.field_bytes(PD_NAME, f"Rank {r}"))))
    for lane in range(model.n_lanes):
        rank = int(model.lanes["rank"][lane])
        title = model.lanes["title"][lane]
        for row in range(int(offset[lane + 1] - offset[lane])):
            out.write(_descriptor(
                uuid=pw.field_bytes(TD_UUID, ROW_UUID + int(offset[lane]) + row),
                name=pw.field_bytes(TD_NAME, thread_name(title, row)),
                parent=pw.field_bytes(TD_PARENT, RANK_UUID + rank)))


def _annotation(name, value_bytes) -> bytes:
    return pw.field_bytes(TE_ANNOT, pw.field_bytes(DA_NAME, name) + value_bytes)


def critical_flows(model):
    """The run's critical path as flows (ids ``CRITICAL_FLOW + k``, k counting the steps that
    have a predecessor other than their own item): ((items whose BEGIN starts a flow, their
    flow ids), (items whose END ends one, theirs)), each by item.

    A reader takes events in time order and binds a flow id to the slice of the event that
    carries it: the first event starts the flow (``flow_ids``), the other ends it
    (``terminating_flow_ids``; one that comes first is dropped).  So the flow starts at the
    BEGIN of whichever of the two slices begins first and ends at the END of the other,
    which never comes before.  (Perfetto orients a flow from the slice that begins first:
    where an item began before its predecessor — a task that waited for work it launched —
    the arrow points from the item.)"""
    f = path_flows(model)
    k = np.flatnonzero(f.pred != f.item)  # (a task that went on through its own wait: no
    ids = CRITICAL_FLOW + k.astype(np.uint64)  # arrow from its slice to itself)
    pred, item = f.pred[k], f.item[k]
    start = model.items["start"]
    pred_first = start[pred] <= start[item]
    first = np.where(pred_first, pred, item)
    other = np.where(pred_first, item, pred)
    return _by_item(first, ids), _by_item(other, ids)


def _by_item(items, ids):
    order = stable_order(items)
    return np.asarray(items, np.int64)[order], ids[order]


def _flow_field(field, flows, lo, hi):
    """The repeated ``field`` of items [lo, hi) from (sorted items, flow ids); None if none."""
    items, ids = flows
    a, b = np.searchsorted(items, [lo, hi])
    if a == b:
        return None
    return pw.repeated_fixed64_field(field, hi - lo, items[a:b] - lo, ids[a:b])


def _slices(model, offset, out, chunk_rows, flow_of_item, critical):
    it = model.items
    names = pw.table([pw.field_bytes(TE_NAME, n or "(unnamed)") for n in model.names])
    provs = pw.table([b""] + [_annotation("provenance", pw.field_bytes(DA_STRING, p))
                              for p in model.provenances[1:]])
    kinds = pw.table([pw.field_bytes(TE_CATEGORIES, k) for k in CATEGORY_NAMES])
    op_name = pw.field_bytes(DA_NAME, "op_id")
    wait_name = pw.field_bytes(DA_NAME, "waiting_ns")
    w = model.waits
    for lo in range(0, model.n_items, chunk_rows):
        hi = min(lo + chunk_rows, model.n_items)
        n = hi - lo
        lane = it["lane"][lo:hi].astype(np.int64)
        track = ROW_UUID + offset[lane] + it["row"][lo:hi]
        seq = 1 + offset[lane] + it["row"][lo:hi]
        op = it["op_id"][lo:hi]
        has_op = (op != NO_OP) & (op != 0)
        a, b = np.searchsorted(w["item"], [lo, hi])
        waiting = np.zeros(n, np.int64)
        np.add.at(waiting, (w["item"][a:b] - lo).astype(np.int64), w["end"][a:b] - w["start"][a:b])
        flow = _flows_in(flow_of_item, lo, hi)
        begin_event = pw.message_field(P_TRACK_EVENT, [
            pw.varint_field(TE_TYPE, np.full(n, SLICE_BEGIN)),
            pw.varint_field(TE_TRACK, track),
            pw.pick(names, it["name"][lo:hi]),
            pw.pick(kinds, item_categories(it["kind"][lo:hi], op)),
            pw.message_field(TE_ANNOT, [pw.const(n, op_name), pw.varint_field(DA_UINT, op)],
                             present=has_op),
            pw.pick(provs, model.op_provenance(op)),
            pw.message_field(TE_ANNOT, [pw.const(n, wait_name), pw.varint_field(DA_INT, waiting)],
                             present=waiting > 0),
            pw.fixed64_field(TE_FLOW, flow, present=flow != 0),
            _flow_field(TE_FLOW, critical[0], lo, hi),
        ])
        end_event = pw.message_field(P_TRACK_EVENT, [
            pw.varint_field(TE_TYPE, np.full(n, SLICE_END)),
            pw.varint_field(TE_TRACK, track),
            _flow_field(TE_TERM_FLOW, critical[1], lo, hi)])
        common = lambda t: [pw.varint_field(P_TIMESTAMP, t), pw.varint_field(P_SEQ, seq)]  # noqa: E731
        begin = pw.message_field(PACKET, common(it["start"][lo:hi]) + [begin_event])
        stop = np.maximum(it["stop"][lo:hi], it["start"][lo:hi])  # (a damaged item: empty)
        end = pw.message_field(PACKET, common(stop) + [end_event])
        # begin_i, end_i, begin_i+1, ...: each record is an item's two packets
        out.write(pw.flatten(pw.concat([begin, end])))


def _copy_flows(model, offset, out):
    """(sorted copy items, their flow ids) after writing the memory-side flow instants."""
    it, t = model.items, model.transfers
    is_copy = it["kind"][t["item"]] == int(ItemKind.COPY)
    mem_lane = {}
    for lane in range(model.n_lanes):
        if GROUP_KEYS[int(model.lanes["group"][lane])] in MEMORY_GROUPS:
            mem_lane.setdefault(int(model.lanes["ref"][lane]), lane)
    if not mem_lane or not is_copy.any():
        return None
    mem_ids = np.array(sorted(mem_lane), np.uint64)
    mem_track = np.array([ROW_UUID + offset[mem_lane[int(m)]] for m in mem_ids], np.uint64)

    def track_of(mem):
        p = np.clip(np.searchsorted(mem_ids, mem), 0, len(mem_ids) - 1)
        return np.where(mem_ids[p] == mem, mem_track[p], 0)

    src = track_of(t["src"].astype(np.uint64))
    dst = track_of(t["dst"].astype(np.uint64))
    sel = np.flatnonzero(is_copy & (src != 0) & (dst != 0))
    if len(sel) == 0:
        return None
    item = t["item"][sel].astype(np.int64)
    order = np.argsort(item)
    flow_items, flow_ids = item[order], (order + 1).astype(np.uint64)
    flow = np.arange(1, len(sel) + 1, dtype=np.uint64)  # flow id of copy k = k + 1
    for key, times, tracks, field in (("out", it["start"][item], src[sel], TE_FLOW),
                                      ("in", it["stop"][item], dst[sel], TE_TERM_FLOW)):
        order = stable_order(times)
        n = len(order)
        seq = FLOW_SEQ + (0 if key == "out" else 1)
        event = pw.message_field(P_TRACK_EVENT, [
            pw.varint_field(TE_TYPE, np.full(n, INSTANT)),
            pw.varint_field(TE_TRACK, tracks[order]),
            pw.const(n, pw.field_bytes(TE_NAME, f"copy {key}")),
            pw.fixed64_field(field, flow[order])])
        out.write(pw.flatten(pw.message_field(PACKET, [
            pw.varint_field(P_TIMESTAMP, times[order]), pw.varint_field(P_SEQ, np.full(n, seq)),
            event])))
    return flow_items, flow_ids


def _flows_in(flows, lo, hi):
    """Flow id of items [lo, hi) (0 = none), from the sorted (item, flow id) of copies."""
    out = np.zeros(hi - lo, np.uint64)
    if flows is not None:
        items, ids = flows
        a, b = np.searchsorted(items, [lo, hi])
        out[items[a:b] - lo] = ids[a:b]
    return out


def _counters(model, out):
    """Utilization (processor groups, fraction) and bytes in use (memory groups)."""
    for k, ((rank, group), step) in enumerate(sorted(model.utilization_steps.items(),
                                                     key=lambda kv: (kv[0][0], kv[0][1]))):
        if rank is None or len(step.t) < 2:
            continue
        uuid = COUNTER_UUID + k
        memory = group in MEMORY_GROUPS
        title = GROUP_TITLE.get(group, group)
        counter = pw.field_bytes(CD_UNIT, UNIT_SIZE_BYTES) if memory \
            else pw.field_bytes(CD_UNIT_NAME, "fraction")
        out.write(_descriptor(
            uuid=pw.field_bytes(TD_UUID, uuid),
            name=pw.field_bytes(TD_NAME, f"{title} {'in use' if memory else 'utilization'}"),
            parent=pw.field_bytes(TD_PARENT, RANK_UUID + int(rank)),
            counter=pw.field_bytes(TD_COUNTER, counter)))
        t = np.asarray(step.t, np.float64)
        level = np.diff(step.integral) / np.maximum(np.diff(t), 1e-300)
        if not memory and step.denominator:
            level = level / step.denominator
        value = np.concatenate([level, [0.0]])
        n = len(t)
        event = pw.message_field(P_TRACK_EVENT, [
            pw.varint_field(TE_TYPE, np.full(n, COUNTER)),
            pw.varint_field(TE_TRACK, np.full(n, uuid)),
            pw.double_field(TE_DOUBLE_COUNTER, value)])
        out.write(pw.flatten(pw.message_field(PACKET, [
            pw.varint_field(P_TIMESTAMP, np.maximum(t, 0).astype(np.uint64)),
            pw.varint_field(P_SEQ, np.full(n, COUNTER_SEQ + k)), event])))


def write(model, out, chunk_rows=CHUNK_ROWS):
    model = model.as_stacked()  # rows are read from the items
    offset = row_offsets(model)
    critical = critical_flows(model)
    with atomic_output(out) as tmp, open(tmp, "wb") as f:
        _descriptors(model, offset, f)
        _counters(model, f)
        flows = _copy_flows(model, offset, f)
        _slices(model, offset, f, chunk_rows, flows, critical)
    return {}
