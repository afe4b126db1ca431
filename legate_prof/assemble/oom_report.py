"""Legate's out-of-memory report, read from a saved console log and marked on the timeline.

Legate prints, when an instance cannot be allocated::

    Failed to allocate 8388608 bytes on memory 1e00000000000000 (of kind SYSTEM_MEM) for region
    requirement(s) {1} of Task cupynumeric::BinaryOpTask[/path/oom.py:16] (UID 8)
    corresponding to a LogicalStore allocated at /path/oom.py:16 There is not enough space because
    Legate is reserving 33554400 of the available 41943040 bytes for the following LogicalStores:
    LogicalStore allocated at /path/oom.py:13:
      Instance 4000000000000003 of size 8388608 covering elements <0>..<1048575>
          created for an operation launched at /path/oom.py:13
"""

from __future__ import annotations

import re

import numpy as np

from legate_prof.errors import ProfileError

# Every pattern is linear in its input: quantifiers are bounded or over classes that the next
# token cannot also match, nothing crosses a line, and lines are cut at MAX_LINE characters
# before any pattern sees them (a console log is untrusted input: tests/test_hostile.py feeds
# each pattern a megabyte of its worst case).
MAX_LINE = 8192  # legate's lines are a few hundred characters; a path is at most 4096
_NUM = r"\d{1,256}"  # digits of a count; _count bounds the value
_FAILED = re.compile(
    rf"Failed to allocate (?P<bytes>{_NUM}) bytes on memory (?P<mem>[0-9a-fA-Fx]{{1,256}}) "
    r"\(of kind (?P<kind>\w{1,64})\)(?: for region requirement\(s\) \{(?P<reqs>[^}\n]{0,4096})\})?"
    r"(?: of (?:Task|Operation) (?P<task>[^\s\[]{1,4096})(?:\[(?P<prov>[^\]\n]{0,4096})\])?"
    rf"(?: \(UID (?P<uid>{_NUM})\))?)?")
_STORE_AT = re.compile(r"corresponding to a LogicalStore allocated at (?P<site>\S{1,4096})")
_RESERVING = re.compile(rf"reserving (?P<used>{_NUM}) of the available (?P<avail>{_NUM}) bytes")
# (the site's trailing colon and blanks are stripped in Python: a lazy '.+?' before ':?\s*$'
# was quadratic on a long run of spaces)
_HOLDER = re.compile(r"[ \t]{0,64}LogicalStore allocated at (?P<site>[^\n]{1,4096})")
_INSTANCE = re.compile(rf"Instance (?P<inst>[0-9a-fA-F]{{1,256}})"
                       rf"(?: at address [0-9a-fA-Fx]{{1,256}})? of size (?P<size>{_NUM})"
                       rf"(?: covering elements (?P<range>\S{{1,4096}}))?")
_CREATED = re.compile(r"created for an operation launched at (?P<site>\S{1,4096})")

KIND_GROUP = {"SYSTEM_MEM": "system", "SOCKET_MEM": "socket", "Z_COPY_MEM": "zerocopy",
              "ZCMEM": "zerocopy", "GPU_FB_MEM": "framebuffer", "FBMEM": "framebuffer",
              "REGDMA_MEM": "registered"}


_LOG_PREFIX = re.compile(r"^\[\d{1,256} - [0-9a-fA-F]{1,256}\][ \t]{1,64}[\d.]{1,256}[ \t]{1,64}"
                         r"\{\d{1,256}\}\{[\w.]{1,256}\}: ?", re.M)
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_LONG_LINE = re.compile(rf"^([^\n]{{{MAX_LINE}}})[^\n]+", re.M)


MAX_COUNT = 2**62  # sizes and ids beyond this in a console log are damage, not data


def _count(text):
    """A byte count or id from the log (digits, maybe with thousands commas), bounded."""
    v = int(str(text).replace(",", ""))
    return v if 0 <= v < MAX_COUNT else MAX_COUNT - 1


def clean_log(text):
    """Lines cut at MAX_LINE; Realm's '[0 - 7f..] 0.46 {5}{legate.mapper}: ' prefixes and
    digit-group commas dropped."""
    return _THOUSANDS.sub("", _LOG_PREFIX.sub("", _LONG_LINE.sub(r"\1", text)))


def parse_oom_report(text: str):
    """The first out-of-memory report in a log, as a dict; None if there is none."""
    text = clean_log(text)
    m = _FAILED.search(text)
    if not m:
        return None
    rep = {
        "requested_bytes": _count(m["bytes"]),
        "memory": m["mem"],
        "memory_kind": m["kind"],
        "group": KIND_GROUP.get(m["kind"], "mem_other"),
        "task": m["task"] or "",
        "provenance": m["prov"] or "",
        "uid": _count(m["uid"]) if m["uid"] else None,
        "holders": [],
    }
    tail = text[m.end():]
    s = _STORE_AT.search(tail[:2000])
    if s:
        rep["store_allocated_at"] = s["site"]
    r = _RESERVING.search(tail[:4000])
    if r:
        rep["reserved_bytes"] = _count(r["used"])
        rep["pool_bytes"] = _count(r["avail"])
        holder = None
        for line in tail[r.end():].splitlines()[1:]:
            h = _HOLDER.match(line)
            site = h["site"].rstrip() if h else ""
            if site.rstrip(":"):
                holder = {"allocated_at": site.rstrip(":"), "instances": []}
                rep["holders"].append(holder)
                continue
            i = _INSTANCE.search(line)
            if i and holder is not None:
                holder["instances"].append({"instance": i["inst"], "size": _count(i["size"]),
                                            "elements": i["range"] or ""})
                continue
            c = _CREATED.search(line)
            if c and holder is not None and holder["instances"]:
                holder["instances"][-1]["created_at"] = c["site"]
                continue
            if line.strip() and not line.startswith(" ") and holder is not None:
                break
    return rep


def read_log_text(path):
    try:
        with open(path, "rb") as f:
            data = f.read(64 << 20)
    except OSError as e:
        raise ProfileError(path, e.strerror or str(e)) from None
    return data.decode("utf-8", "replace")


def looks_like_legate_log(text):
    return bool(_FAILED.search(text)) or "legate" in text.lower() or "legion" in text.lower()


def oom_marker(rep, model):
    """A timeline marker for the failed allocation (at the end of what was recorded)."""
    t_fail = model.time_range()[1] if model.n_items else 0
    t_fail = max(t_fail - t_fail // 201, 0)
    end = model.runtime_end_ns
    if end:
        t_fail = end
    fields = {
        "memory kind": rep["memory_kind"],
        "requested": f"{rep['requested_bytes']:,} bytes",
        "task": rep["task"] + (f"[{rep['provenance']}]" if rep["provenance"] else ""),
        "failing line": rep["provenance"] or rep.get("store_allocated_at", ""),
    }
    if "pool_bytes" in rep:
        fields["pool"] = f"{rep['reserved_bytes']:,} of {rep['pool_bytes']:,} bytes reserved"
    for h in rep["holders"]:
        total = sum(i["size"] for i in h["instances"])
        fields[f"held by store from {h['allocated_at']}"] = (
            f"{len(h['instances'])} instance(s), {total:,} bytes")
    return {"time": int(t_fail), "rank": 0, "kind": "oom", "group": rep["group"],
            "title": f"Out of memory: {rep['requested_bytes']:,} bytes in {rep['memory_kind']}"
                     + (f" for {rep['task']}" if rep["task"] else "")
                     + (f" at {rep['provenance']}" if rep["provenance"] else ""),
            "fields": fields, "report": rep}


def attach_oom_report(model, path):
    """Read ``path`` as legate's console output: (model with an OOM marker and the live
    instances when it has a report, else ``model``; the report or None)."""
    text = read_log_text(path)
    if not looks_like_legate_log(text):
        raise ProfileError(path, "not a Legion Prof log, a bundle, a runtime event stream or "
                                 "a legate console log")
    rep = parse_oom_report(text)
    if rep is not None:
        marker = oom_marker(rep, model)
        model = model.evolve(markers=model.markers + [marker])
        model = show_live_instances(model, rep, marker["time"])
    return model, rep


def _short(site):
    return site.rsplit("/", 1)[-1]


def show_live_instances(model, rep, t_fail):
    """Draw Legate's own list of live instances on the failing memory's lane.

    A crashed run has no Legion instance records, so that lane showed the runtime's arrays —
    including the one the failing line (``d = c + 3``) asked for and never got, and one box per
    array where Legate held two instances of ``b`` (the slice and the full range).  Here the
    lane gets one box per instance of the report (store, allocation site, covered range, the
    operation that made it, size), from that operation's launch to the failure; the arrays move
    to their own Arrays lane, where they still carry their allocation site.  Returns the new
    model (``model`` itself when there is nothing to show).
    """
    from legate_prof.model.kinds import GROUP_INDEX, ItemKind
    from legate_prof.assemble.stream_items import RUNTIME_OP_BASE
    from legate_prof.assemble.utilization import with_utilization
    insts = [(h, i) for h in rep.get("holders", []) for i in h["instances"]]
    lanes = {k: (list(v) if isinstance(v, list) else v.copy()) for k, v in model.lanes.items()}
    hit = np.flatnonzero((lanes["group"] == GROUP_INDEX.get(rep["group"], -1))
                         & (lanes["rank"] == 0))
    if not insts or len(hit) == 0 or model.n_items == 0:
        return model
    L = int(hit[0])
    it = model.items
    lo, hi = model.lane_range(L)
    on_lane = np.arange(lo, hi)
    moved = on_lane[it["op_id"][on_lane] >= np.uint64(RUNTIME_OP_BASE)]
    if len(moved) != hi - lo:  # Legion's instances are there: they are the truth already
        return model
    prov = model.op_provenance(it["op_id"])
    names, provenances = list(model.names), list(model.provenances)
    site_of = {s: k for k, s in enumerate(provenances)}
    ops_items = np.flatnonzero(it["kind"] == ItemKind.RUNTIME_OP)

    def first_launch(site):
        k = site_of.get(site)
        sel = ops_items[prov[ops_items] == k] if k is not None else ops_items[:0]
        return int(it["start"][sel].min()) if len(sel) else None

    n_new = len(insts)
    start = np.empty(n_new, np.int64)
    for j, (h, i) in enumerate(insts):
        t = first_launch(i.get("created_at", "")) or first_launch(h["allocated_at"])
        start[j] = min(t if t is not None else t_fail - 1, t_fail - 1)
    labels = [f"Instance of {_short(h['allocated_at'])} covering {i['elements']}"
             + (f" ({len(h['instances'])} instances of this store)"
                if len(h["instances"]) > 1 else "") for h, i in insts]
    name_idx = []
    for s in labels:
        names.append(s)
        name_idx.append(len(names) - 1)
    prov_idx = []
    for h, i in insts:
        s = i.get("created_at") or h["allocated_at"]
        if s not in site_of:
            provenances.append(s)
            site_of[s] = len(provenances) - 1
        prov_idx.append(site_of[s])
    ops = model.ops
    base = int(max(int(ops["op_id"].max()) if len(ops["op_id"]) else 0, RUNTIME_OP_BASE)) + 1
    new_ops = np.arange(base, base + n_new, dtype=np.uint64)
    new_ops_table = {"op_id": np.concatenate([ops["op_id"], new_ops]),
                     "kind": np.concatenate([ops["kind"], np.zeros(n_new, ops["kind"].dtype)]),
                     "provenance": np.concatenate([ops["provenance"],
                                                   np.array(prov_idx, ops["provenance"].dtype)]),
                     "parent": np.concatenate([ops["parent"], np.zeros(n_new, np.uint64)])}
    # the arrays get their own lane; the memory lane gets the instances, one row each
    arrays_lane = model.n_lanes
    for k, v in {"group": GROUP_INDEX["arrays"], "rank": 0, "ref": 0, "ref2": 0,
                 "capacity": int(lanes["capacity"][L]), "rows": int(lanes["rows"][L])}.items():
        lanes[k] = np.append(lanes[k], np.array(v, lanes[k].dtype))
    lanes["name"].append("arrays0")
    lanes["title"].append("Rank 0 Arrays (runtime)")
    lanes["rows"][L] = n_new
    new = {"start": start, "stop": np.full(n_new, t_fail, np.int64),
           "create": start, "ready": start, "lane": np.full(n_new, L),
           "row": np.arange(n_new), "name": np.array(name_idx),
           "kind": np.full(n_new, int(ItemKind.INSTANCE)), "op_id": new_ops,
           "detail": np.zeros(n_new, np.int32)}
    cols = {k: np.concatenate([v, new[k].astype(v.dtype) if k in new
                               else np.zeros(n_new, v.dtype)]) for k, v in it.items()}
    cols["lane"][moved] = arrays_lane
    order = np.lexsort((cols["start"], cols["row"], cols["lane"]))
    inv = np.empty_like(order)
    inv[order] = np.arange(len(order))
    new_items = {k: v[order] for k, v in cols.items()}
    mem_ref = lanes["ref"][L]
    t = model.transfers
    n_old = len(it["start"])
    t_item = np.concatenate([inv[t["item"]], inv[np.arange(n_old, n_old + n_new)]])
    t_new = {"size": np.array([i["size"] for _, i in insts], np.uint64),
             "src": np.zeros(n_new, np.uint64), "dst": np.full(n_new, mem_ref, np.uint64),
             "inst": np.array([int(i["instance"], 16) & (2**64 - 1) for _, i in insts],
                              np.uint64)}
    o = np.argsort(t_item, kind="stable")
    transfers = {"item": t_item[o], **{k: np.concatenate([t[k], t_new[k]])[o]
                                       for k in t_new}}
    w = waits = model.waits
    if w and len(w.get("item", [])):
        wi = inv[w["item"]]
        o = np.argsort(wi, kind="stable")
        waits = {"item": wi[o], **{k: v[o] for k, v in w.items() if k != "item"}}
    oom_instances = [
        {"store_allocated_at": h["allocated_at"], "instance": i["instance"], "size": i["size"],
         "elements": i["elements"], "created_at": i.get("created_at", ""),
         "several_instances": len(h["instances"]) > 1} for h, i in insts]
    return with_utilization(model.evolve(
        items=new_items, lanes=lanes, names=names, provenances=provenances, ops=new_ops_table,
        transfers=transfers, waits=waits, oom_instances=oom_instances))
