"""Item text, in one place: an item's label, what is known of it, and the rows of its details
panel (with links to follow), for the viewer's tooltip and panel, the report and ``dump``-like
outputs."""

from __future__ import annotations

import re

from dataclasses import dataclass

import numpy as np

from legate_prof.assemble.nested_calls import CALL_KINDS
from legate_prof.assemble.stream_items import RUNTIME_OP_BASE, stream_arrays
from legate_prof.model.kinds import ItemKind
from legate_prof.model.lane_names import memory_name
from legate_prof.present.units import format_bytes, format_ns_us


@dataclass(frozen=True)
class Field:
    """One detail row: ``text`` to show, ``value`` at full precision (ns, bytes, ids),
    ``link`` (kind, target) to follow: ("item", i), ("op", id), ("memory", lane),
    ("provenance", "file:line")."""

    label: str
    text: str
    value: object = None
    link: tuple | None = None


_ALLOCATED_AT = re.compile(r"(?:allocated at |^Instance of )(\S+?)[,)]?(?:\s|$)")


def _allocated_at(name):
    """The line an instance's array was allocated at, as its name says it ("Array
    float64(8,) allocated at prog.py:6 (rows ...)", an out-of-memory report's "Instance of
    oom.py:7 covering ..."), or "": its label names that line, as the report and
    ``insights`` do, not the line of the operation that made the instance (a review read
    "oom.py:10" in a picture, "oom.py:7" in the report, for one instance)."""
    m = _ALLOCATED_AT.search(name)
    return m.group(1) if m else ""


_TITLED_WITH_LINE = (ItemKind.TASK, ItemKind.GPU_KERNEL, ItemKind.RUNTIME_OP,
                     ItemKind.PROGRAM_WAIT)


def item_title(model, i) -> str:
    """The label of one item: a task with its launching line ("Random[prog.py:16]"), an
    instance with its size and allocation site ("Instance 6.00 MiB · prog.py:16", a program's
    array "Array ...") so a memory lane reads without clicking, anything else by its name."""
    i = int(i)
    kind = ItemKind(int(model.items["kind"][i]))
    name = model.names[int(model.items["name"][i])]
    prov = model.provenances[int(model.op_provenance([model.items["op_id"][i]])[0])]
    if kind == ItemKind.INSTANCE:
        t = model.transfer_of(i)
        size = format_bytes(t[0], 2) if t is not None else "?"
        site = (_allocated_at(name) or prov).rsplit("/", 1)[-1]
        # (the runtime stream's arrays are the program's, not Legion's instances: a lane of
        # each read "Instance ..." alike, one above the other, a review)
        what = "Array" if stream_arrays(kind, model.items["op_id"][i]) else "Instance"
        return f"{what} {size}" + (f" · {site}" if site else "")
    if kind in _TITLED_WITH_LINE and prov and prov != name:
        return f"{name}[{prov.rsplit('/', 1)[-1]}]"  # prog.py:16; details keep the path
    return name


def item_facts(model, i, memory_title=None) -> dict:
    """What is known of one item, as plain values (the details, ``dump``-like): times in ns,
    sizes in bytes.  ``memory_title`` names a memory by id (default: ``memory_title`` over this
    model's memories; a rank's model alone knows its own only)."""
    if memory_title is None:
        def memory_title(mem_id):
            return memory_title_of(model, mem_id)
    it = model.items
    i = int(i)
    kind = ItemKind(int(it["kind"][i]))
    lane = int(it["lane"][i])
    start, stop = int(it["start"][i]), int(it["stop"][i])
    create, ready = int(it["create"][i]), int(it["ready"][i])
    op = int(it["op_id"][i])
    d = {
        "title": item_title(model, i),
        "kind": kind.name.lower(),
        "name": model.names[int(it["name"][i])],
        "rank": int(model.lanes["rank"][lane]),
        "lane": model.lanes["title"][lane],
        "start_ns": start, "stop_ns": stop, "duration_ns": stop - start,
    }
    if op and op != 0xFFFFFFFFFFFFFFFF and op < RUNTIME_OP_BASE:
        d["op_id"] = op  # (Legion's: the runtime stream's items are numbered from 2**62 by
        # rank, a number of ours that named nothing: "Operation 4611686018427387904")
    prov = model.provenances[int(model.op_provenance([op])[0])]
    if prov:
        d["provenance"] = prov
    if kind == ItemKind.PROGRAM_WAIT and int(it["detail"][i]):  # (the operation that last
        d["waited_for"] = model.names[int(it["detail"][i])]  # made or wrote the array read)
    if kind in (ItemKind.TASK, ItemKind.GPU_KERNEL, ItemKind.META, ItemKind.MESSAGE,
                ItemKind.COPY, ItemKind.FILL, ItemKind.DEP_PART):
        d["create_ns"], d["ready_ns"] = create, ready
        if ready >= create > 0 or (ready >= create and kind != ItemKind.INSTANCE):
            d["deferred_ns"] = ready - create
            d["delayed_ns"] = start - ready
    if kind in CALL_KINDS:
        _ran_inside(model, i, lane, d)
    variant = model.variant_by_name_group.get(
        (int(it["name"][i]), model.lane_group(lane)))
    if variant:
        d["variant"] = variant
    _waits_and_calls(model, i, stop - start, d)
    t = model.transfer_of(i)
    if t is not None:
        size, src, dst, inst = t
        d["size_bytes"] = size
        if kind == ItemKind.INSTANCE:
            d["memory"] = memory_title(dst)
            d["instance"] = f"0x{inst:x}"
            d["lifetime_ns"] = stop - start
            d["create_ns"], d["ready_ns"] = create, ready
            d["deferred_ns"] = ready - create
        else:
            if src:
                d["source"] = memory_title(src)
            d["destination"] = memory_title(dst)
            if stop > start:
                d["bandwidth_GBps"] = size / (stop - start)
    return d


def _ran_inside(model, i, lane, d):
    """A call's task (``inside``: its index in ``model``, ``inside_title``) and, where the
    call has no line of its own, the task's (``provenance``): Legion records a call with
    the ``fevent`` of the task it runs inside, on the task's lane.  Legate runs a task's body
    as an application call of its name, drawn in full colour over the task's pale box: a
    click on it found no line, operation or path (a GUI walk)."""
    it = model.items
    if "creator" not in it or "fevent" not in it or not int(it["creator"][i]):
        return
    lo, hi = model.lane_range(lane)
    at = np.flatnonzero(np.asarray(it["fevent"][lo:hi]) == it["creator"][i])
    at = [lo + int(k) for k in at if ItemKind(int(it["kind"][lo + int(k)])) not in CALL_KINDS]
    if not at:
        return
    j = at[0]
    d["inside"], d["inside_title"] = j, item_title(model, j)
    prov = model.provenances[int(model.op_provenance([it["op_id"][j]])[0])]
    if prov and "provenance" not in d:
        d["provenance"] = prov


def _waits_and_calls(model, i, duration, d):
    """``d``'s waits of item ``i`` (each: start, ready, end), the time it waited, the time
    inside the calls it made (``in_calls_ns``: the reference folds those into its waits, and
    a task running its body as an application call read as 99 % "Waiting", a review) and
    its running time, the rest: as ``stats``' "running", calls left out (a GUI walk read
    "Running 303 ms" of a mapping whose 89 items ``stats`` said ran 31.5 ms) — running, in
    its calls and waiting add up to its duration."""
    w = model.waits
    lo = int(np.searchsorted(w["item"], i, side="left"))
    hi = int(np.searchsorted(w["item"], i, side="right"))
    if hi == lo:
        return
    rows = np.arange(lo, hi)
    call = model.folded_calls(rows)
    a, r, e = (np.asarray(w[c])[rows] for c in ("start", "ready", "end"))
    d["waits"] = [{"start_ns": int(x), "ready_ns": int(y), "end_ns": int(z)}
                  for x, y, z in zip(a[~call].tolist(), r[~call].tolist(), e[~call].tolist())]
    d["waiting_ns"] = int((e[~call] - a[~call]).sum())
    if call.any():
        d["in_calls_ns"] = int((e[call] - a[call]).sum())
    d["running_ns"] = duration - d["waiting_ns"] - d.get("in_calls_ns", 0)
    if not d["waits"]:
        del d["waits"], d["waiting_ns"]


def memory_title_of(model, mem_id):
    """A memory by its id, named as its lane is (``model.lane_names``)."""
    return memory_name(model.mems, mem_id)


def detail_fields(source, i, critical=True) -> list:
    """Ordered ``Field`` rows for one item, times in µs to the ns, with links (the critical
    path's rows unless ``critical`` is false)."""
    d = source.item_facts(int(i))
    lanes = source.outline().lanes
    lane, _ = source.item_lane(i)
    out = [Field("Title", d["title"], d["title"]), Field("Name", d["name"], d["name"])]
    if "variant" in d:
        out.append(Field("Variant", str(d["variant"]), d["variant"]))
    out.append(Field("Kind", d["kind"], d["kind"]))
    out.extend(_waited_for(d))
    if "inside" in d:
        out.append(Field("Ran inside", d["inside_title"], d["inside"], ("item", d["inside"])))
    if "op_id" in d:
        out.append(Field("Operation", str(d["op_id"]), d["op_id"], ("op", d["op_id"])))
        if d["kind"] in INITIATED:
            out.extend(_initiator_field(source, d["op_id"]))
        if d["kind"] != "instance":
            inst = source.instances_of_op(d["op_id"])
            if len(inst):
                sizes = [source.item_transfer(int(j)) for j in inst[:20]]
                total = sum(t[0] for t in sizes if t is not None)
                out.append(Field("Instances", f"{len(inst)} ({format_bytes(total, 2)}"
                                 f"{' in the first 20' if len(inst) > 20 else ''})",
                                 inst.tolist(), ("items", inst.tolist())))
    out.append(Field("Lane", f"{lanes[lane].short} — {lanes[lane].long}", lane,
                     ("lane", lane)))
    out.append(Field("Rank", str(lanes[lane].rank), lanes[lane].rank))
    if "provenance" in d:
        out.append(Field("Provenance", d["provenance"], d["provenance"],
                         ("provenance", d["provenance"])))
    for key, label in (("create_ns", "Create"), ("ready_ns", "Ready"), ("start_ns", "Start"),
                       ("stop_ns", "Stop"), ("duration_ns", "Duration"),
                       ("running_ns", "Running"), ("in_calls_ns", "In its calls"),
                       ("waiting_ns", "Waiting"),
                       ("deferred_ns", "Deferred"), ("delayed_ns", "Delayed"),
                       ("lifetime_ns", "Lifetime")):
        if key in d:
            out.append(Field(label, format_ns_us(d[key]), int(d[key])))
    if "size_bytes" in d:
        out.append(Field("Size", format_bytes(d["size_bytes"], 2, exact=True), int(d["size_bytes"])))
    for key, label in (("source", "Source"), ("destination", "Destination"),
                       ("memory", "Memory")):
        if key in d:
            out.append(Field(label, d[key], d[key], ("memory", d[key])))
    if "instance" in d:
        out.append(Field("Instance", d["instance"], d["instance"]))
    if "bandwidth_GBps" in d:
        out.append(Field("Bandwidth", f"{d['bandwidth_GBps']:.3f} GB/s",
                         float(d["bandwidth_GBps"])))
    for k, wt in enumerate(d.get("waits", [])):
        out.append(Field(f"Wait {k + 1}",
                         f"{format_ns_us(wt['start_ns'])} – {format_ns_us(wt['end_ns'])} "
                         f"(ready at {format_ns_us(wt['ready_ns'])})",
                         (wt["start_ns"], wt["ready_ns"], wt["end_ns"])))
    if critical:
        out.extend(critical_fields(source, int(i)))
    return out


def _waited_for(d):
    """The field of what a program's wait for a value waited for ([] for other items)."""
    if "waited_for" not in d:
        return []
    return [Field("Waited for", f"{d['waited_for']}'s result (the program read an array's "
                  "values; it waited until the operation that last wrote it had run)",
                  d["waited_for"])]


INITIATED = ("copy", "fill", "instance", "dep_part")  # made for an operation's task
RUNNERS = (ItemKind.TASK, ItemKind.GPU_KERNEL)


def _initiator_field(source, op_id):
    """The task whose operation made a copy, fill or instance (the reference viewer's
    "Initiation"): a link to it, or to them all where an index launch ran several."""
    ran = source.items_of_op(op_id, RUNNERS)
    if not len(ran):
        return []
    if len(ran) == 1:
        j = int(ran[0])
        return [Field("Initiator", item_label(source, j), j, ("item", j))]
    first = item_label(source, int(ran[0]))
    return [Field("Initiator", f"{first} and {len(ran) - 1} more of operation {op_id}",
                  ran.tolist(), ("items", ran.tolist()))]


# how a critical event came to trigger: an item's completion ends, other events are triggered
_COMPLETIONS = ("TaskEvent", "CopyEvent", "FillEvent", "DepPartEvent", "InstanceDeletion")


def item_label(source, j) -> str:
    """An item as a details row names it: "BinaryOp[prog.py:16] on c1", "Copy n0s0-n0f0",
    "Fill into n0s0"; where several ranks are loaded, a processor's or memory's lane says its
    rank ("on u0 of rank 1": every rank has a u0), a channel's names its nodes already."""
    j = int(j)
    info = source.outline()
    lane = info.lanes[source.item_lane(j)[0]]
    title = source.item_title(j)
    if lane.group == "channel":
        return f"Fill into {lane.short[5:]}" if lane.short.startswith("fill ") else \
            f"{title} {lane.short}"
    of_rank = f" of rank {lane.rank}" if len(info.ranks) > 1 else ""
    return f"{title} on {lane.short}{of_rank}"


def critical_fields(source, i) -> list:
    """What held item ``i`` up (its critical predecessor, with a link to follow back) and
    how many items it held up in turn (a link to follow forward)."""
    link = source.critical_predecessor(i)
    out = []
    if link is not None:
        out.append(_predecessor_field(source, link))
    after = source.critical_successors(i)
    if len(after):
        ids = after.tolist()
        text = ("1 item waited for this or was created by it" if len(ids) == 1 else
                f"{len(ids)} items waited for this or were created by it")
        out.append(Field("Held up", text, ids, ("items", ids)))
    return out


def _predecessor_field(source, link):
    j = link.predecessor
    note = f" ({link.note})" if link.note and link.note not in ("deletion",) else ""
    if link.via == "event" and j is not None:
        lag = link.lag_ns
        verb = "ended" if link.event_kind in _COMPLETIONS else "triggered what it waited for"
        when = "" if lag is None else (
            f", {verb} {format_ns_us(lag)} before this became ready" if lag >= 0 else
            f", {verb} {format_ns_us(-lag)} after this became ready (the two clocks differ)")
        return Field("Waited for", item_label(source, j) + when + note, j, ("item", j))
    if link.via == "creator" and j is not None:
        return Field("Created by", f"{item_label(source, j)} at "
                     f"{format_ns_us(link.creation_ns)}; all it waited for had happened by then"
                     + note, j, ("item", j))
    if link.via == "creator" or link.via == "unknown_creator":
        return Field("Created by", f"nothing in the loaded profile{note}", None)
    if link.via == "deallocation":
        return Field("Waited for", "other instances to be freed (its allocation was deferred)",
                     None)
    return Field("Waited for", f"an event no loaded profile records{note}: the critical path "
                 "stops here", None)
