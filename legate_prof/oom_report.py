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

from .errors import ProfileError

_FAILED = re.compile(
    r"Failed to allocate (?P<bytes>\d+) bytes on memory (?P<mem>[0-9a-fA-Fx]+) "
    r"\(of kind (?P<kind>\w+)\)(?: for region requirement\(s\) \{(?P<reqs>[^}]*)\})?"
    r"(?: of (?:Task|Operation) (?P<task>[^\s\[]+)(?:\[(?P<prov>[^\]]*)\])?(?: \(UID (?P<uid>\d+)\))?)?")
_STORE_AT = re.compile(r"corresponding to a LogicalStore allocated at (?P<site>\S+)")
_RESERVING = re.compile(r"reserving (?P<used>\d+) of the available (?P<avail>\d+) bytes")
_HOLDER = re.compile(r"^\s*LogicalStore allocated at (?P<site>.+?):?\s*$")
_INSTANCE = re.compile(r"Instance (?P<inst>[0-9a-fA-F]+)(?: at address [0-9a-fA-Fx]+)? of size (?P<size>\d+)"
                       r"(?: covering elements (?P<range>\S+))?")
_CREATED = re.compile(r"created for an operation launched at (?P<site>\S+)")

KIND_GROUP = {"SYSTEM_MEM": "system", "SOCKET_MEM": "socket", "Z_COPY_MEM": "zerocopy",
              "ZCMEM": "zerocopy", "GPU_FB_MEM": "framebuffer", "FBMEM": "framebuffer",
              "REGDMA_MEM": "registered"}


_LOG_PREFIX = re.compile(r"^\[\d+ - [0-9a-fA-F]+\]\s+[\d.]+\s+\{\d+\}\{[\w.]+\}: ?", re.M)
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")


def clean_log(text):
    """Drop Realm's '[0 - 7f..] 0.46 {5}{legate.mapper}: ' prefixes and digit-group commas."""
    return _THOUSANDS.sub("", _LOG_PREFIX.sub("", text))


def parse_oom_report(text: str):
    """The first out-of-memory report in a log, as a dict; None if there is none."""
    text = clean_log(text)
    m = _FAILED.search(text)
    if not m:
        return None
    rep = {
        "requested_bytes": int(m["bytes"]),
        "memory": m["mem"],
        "memory_kind": m["kind"],
        "group": KIND_GROUP.get(m["kind"], "mem_other"),
        "task": m["task"] or "",
        "provenance": m["prov"] or "",
        "uid": int(m["uid"]) if m["uid"] else None,
        "holders": [],
    }
    tail = text[m.end():]
    s = _STORE_AT.search(tail[:2000])
    if s:
        rep["store_allocated_at"] = s["site"]
    r = _RESERVING.search(tail[:4000])
    if r:
        rep["reserved_bytes"] = int(r["used"])
        rep["pool_bytes"] = int(r["avail"])
        holder = None
        for line in tail[r.end():].splitlines()[1:]:
            h = _HOLDER.match(line)
            if h:
                holder = {"allocated_at": h["site"].rstrip(":"), "instances": []}
                rep["holders"].append(holder)
                continue
            i = _INSTANCE.search(line)
            if i and holder is not None:
                holder["instances"].append({"instance": i["inst"], "size": int(i["size"]),
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
    end = model.extra.get("runtime_end_ns")
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
    """Read ``path`` as legate's console output; add an OOM marker if it has a report."""
    text = read_log_text(path)
    if not looks_like_legate_log(text):
        raise ProfileError(path, "not a Legion Prof log, a bundle, a runtime event stream or "
                                 "a legate console log")
    rep = parse_oom_report(text)
    if rep is not None:
        model.markers.append(oom_marker(rep, model))
    return rep
