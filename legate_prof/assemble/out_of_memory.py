"""Legate's out-of-memory reports (``read.console_log``: one per rank that ran out) marked on
the timeline: a marker at each rank's failure, and the live instances Legate listed drawn on
that rank's failing memory's lane."""

from __future__ import annotations

import numpy as np

from legate_prof.assemble.stream_items import CRASH_ASKS_FOR_LOG, REPORT_OP_BASE, stream_arrays
from legate_prof.assemble.utilization import with_utilization
from legate_prof.errors import ProfileError
from legate_prof.model.kinds import GROUP_INDEX, ItemKind
from legate_prof.model.lane_names import lane_names
from legate_prof.model.sort_order import lex_order, stable_order
from legate_prof.read.console_log import (looks_like_legate_log, parse_oom_reports,
                                         parse_signals, read_log_text, signal_words)


def held_by_stores(rep):
    """(what, bytes) of each store the report lists as held, one per store however many
    stores one line allocated (their bytes add up to what Legate said it reserved)."""
    out, seen = [], {}
    for h in rep["holders"]:
        site = h["allocated_at"]
        seen[site] = seen.get(site, 0) + 1
        n, total = len(h["instances"]), sum(i["size"] for i in h["instances"])
        out.append((f"store {len(out) + 1}, allocated at {site}"
                    + (f" (its {_ordinal(seen[site])} store)" if seen[site] > 1 else ""),
                    f"{n} instance{'s' if n != 1 else ''}, {total:,} bytes", total))
    return out


def _ordinal(k):
    return {1: "first", 2: "second", 3: "third"}.get(k, f"{k}th")


def oom_marker(rep, model):
    """A timeline marker for a rank's failed allocation: at the end of what its runtime stream
    recorded (else of the run's recorded items)."""
    t_fail = model.time_range()[1] if model.n_items else 0
    t_fail = max(t_fail - t_fail // 201, 0)
    rank = int(rep.get("rank", 0))
    ends = [r.get("runtime_end_ns") for r in model.ranks if r.get("rank") == rank]
    end = next((e for e in ends if e), None) or model.runtime_end_ns
    if end:
        t_fail = end
    fields = {
        "rank": str(rank),
        "memory kind": rep["memory_kind"],
        "requested": f"{rep['requested_bytes']:,} bytes",
        "task": rep["task"] + (f"[{rep['provenance']}]" if rep["provenance"] else ""),
        "failing line": rep["provenance"] or rep.get("store_allocated_at", ""),
    }
    if "pool_bytes" in rep:
        fields["pool"] = f"{rep['reserved_bytes']:,} of {rep['pool_bytes']:,} bytes reserved"
    held = held_by_stores(rep)
    for what, words, _ in held:
        fields[f"held by {what}"] = words
    if held:
        fields["held in all"] = (f"{sum(b for _, _, b in held):,} bytes by {len(held)} "
                                 f"store{'s' if len(held) != 1 else ''}")
    return {"time": int(t_fail), "rank": rank, "kind": "oom", "group": rep["group"],
            "title": f"Out of memory on rank {rank}: {rep['requested_bytes']:,} bytes in "
                     f"{rep['memory_kind']}"
                     + (f" for {rep['task']}" if rep["task"] else "")
                     + (f" at {rep['provenance']}" if rep["provenance"] else ""),
            "fields": fields, "report": rep}


def attach_oom_report(model, path):
    """Read ``path`` as legate's console output: (model with a marker for each rank's
    out-of-memory report and that rank's live instances, else ``model``; the reports, one
    per rank that ran out, by rank).  Any text given is taken for it (a run that did not fail
    prints what its program printed, and maybe never "legate"), with a note when it does not
    look like legate's; a text named as a profile is a damaged profile, not a console log."""
    text = read_log_text(path)
    if not looks_like_legate_log(text):
        if str(path).endswith((".prof", ".prof.gz", ".lpbundle")):
            raise ProfileError(path, "not a Legion Prof log, a bundle or a runtime event "
                                     "stream: it holds text")
        return model.evolve(warnings=list(model.warnings) + [
            f"{path}: read as legate's console output (it does not look like one): no "
            "out-of-memory report in it"]), []
    reports = parse_oom_reports(text)
    signals = {r: n for r, n in parse_signals(text).items()
               if r not in {int(rep.get("rank", 0)) for rep in reports}}
    if not reports and not _crashed_ranks(model):  # (a crash's marker says what it told)
        # (a README given as --log read as nothing, and said nothing: a review)
        model = model.evolve(warnings=list(model.warnings) + [
            f"{path}: no out-of-memory report in it (read as legate's console output)"])
    model = _answered_why_no_timeline(model, reports, signals, path)
    model = _crashes_told(model, signals, path)
    for rep in reports:
        marker = oom_marker(rep, model)
        # (a rank the report names is no longer an unexplained crash)
        kept = [m for m in model.markers
                if not (m.get("kind") == "crash" and m.get("rank") == marker["rank"])]
        model = model.evolve(markers=kept + [marker])
        model = show_live_instances(model, rep, marker["time"])
    return model, reports


def _crashed_ranks(model):
    return {_rank_of(m) for m in model.markers if m.get("kind") == "crash"} - {None}


def _rank_of(marker):
    """A marker's rank (None: none, or damaged: a marker is read from a stranger's bundle)."""
    try:
        return int(marker.get("rank"))
    except (TypeError, ValueError, OverflowError):
        return None


def _crashes_told(model, signals, path):
    """Each crash the console output answers (a rank's marker asked for it with ``--log``):
    the signal its rank caught, as Realm said there ("out of memory?" of a run stopped by
    Ctrl+C, and asked for the output given: a review), else that the output names none."""
    out = []
    for m in model.markers:
        title = m.get("title", "")
        if m.get("kind") != "crash" or not title.endswith(CRASH_ASKS_FOR_LOG):
            out.append(m)
            continue
        rank, base = _rank_of(m), title[:-len(CRASH_ASKS_FOR_LOG)]
        fields = {**(m.get("fields") if isinstance(m.get("fields"), dict) else {}),
                  "console output": str(path)}
        if rank in signals:
            words = signal_words(signals[rank])
            fields["signal"] = words.removeprefix("signal ")
            title = f"{base}: {words} (legate's console output says so)"
        else:
            title = (f"{base}: crashed or killed; legate's console output names no "
                     "out-of-memory report and no signal (its last lines may say why)")
        out.append({**m, "title": title, "fields": fields})
    return model.evolve(markers=out) if out != list(model.markers) else model


def _answered_why_no_timeline(model, reports, signals, path):
    """The warning that a rank's log holds no timeline asked "did the run crash or get
    killed?" (or took a log that stops early for a copy cut short) even beside the console
    output saying it ran out of memory or caught a signal (reviews): for a rank that did, it
    says so instead."""
    from legate_prof.assemble.model_builder import NO_TIMELINE_CRASHED, NO_TIMELINE_CUT
    out_ranks = {int(r.get("rank", 0)) for r in reports}
    files = {str(r.get("file")): int(r.get("rank", -1)) for r in model.ranks if r.get("file")}
    kept = []
    for w in model.warnings:
        text = str(w)
        for asked, early in ((NO_TIMELINE_CRASHED, ""),
                             (NO_TIMELINE_CUT, ", and the file stops where it did")):
            head, _, tail = text.rpartition(": " + asked)
            rank = files.get(head.removeprefix("warning: "), -1) if not tail and head else -1
            why = ("ran out of memory" if rank in out_ranks else
                   f"caught {signal_words(signals[rank])}" if rank in signals else None)
            if why:
                w = (f"{head}: no timeline records: rank {rank} {why} ({path} says so), so "
                     f"Legion never wrote them (it writes them at shutdown){early}")
                break
        kept.append(w)
    return model.evolve(warnings=kept) if kept != list(model.warnings) else model


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
    insts = [(h, i) for h in rep.get("holders", []) for i in h["instances"]]
    rank = int(rep.get("rank", 0))
    hit = np.flatnonzero((model.lanes["group"] == GROUP_INDEX.get(rep["group"], -1))
                         & (model.lanes["rank"] == rank))
    if not insts or len(hit) == 0 or model.n_items == 0:
        return model
    L = int(hit[0])
    lo, hi = model.lane_range(L)
    on_lane = np.arange(lo, hi)
    moved = on_lane[stream_arrays(model.items["kind"][on_lane], model.items["op_id"][on_lane])]
    if len(moved) != hi - lo:  # Legion's instances are there: they are the truth already
        return model
    names, provenances, ops, new = _instance_items(model, insts, L, t_fail)
    lanes = _with_arrays_lane(model, L, len(insts), rank)
    cols = {k: np.concatenate([v, new[k].astype(v.dtype) if k in new
                               else np.zeros(len(insts), v.dtype)])
            for k, v in model.items.items()}
    cols["lane"][moved] = model.n_lanes  # (the arrays lane, added last)
    order = lex_order((cols["start"], cols["row"], cols["lane"]))
    inv = np.empty_like(order)
    inv[order] = np.arange(len(order))
    transfers, waits = _renumbered_side_tables(model, insts, inv, lanes["ref"][L])
    oom_instances = list(model.oom_instances) + [
        {"rank": rank, "store_allocated_at": h["allocated_at"], "instance": i["instance"],
         "size": i["size"],
         "elements": i["elements"], "created_at": i.get("created_at", ""),
         "several_instances": len(h["instances"]) > 1} for h, i in insts]
    return with_utilization(model.evolve(
        items={k: v[order] for k, v in cols.items()}, lanes=lanes, names=names,
        provenances=provenances, ops=ops, transfers=transfers, waits=waits,
        oom_instances=oom_instances))


def _instance_items(model, insts, lane, t_fail):
    """(names, provenances, ops table, item columns) with one item per instance of the report
    on ``lane``: from its operation's first launch (else just before the failure) to it."""
    it = model.items
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
    name_idx, prov_idx = [], []
    for h, i in insts:
        names.append(f"Instance of {_short(h['allocated_at'])} covering {i['elements']}"
                     + (f" ({len(h['instances'])} instances of this store)"
                        if len(h["instances"]) > 1 else ""))
        name_idx.append(len(names) - 1)
        s = i.get("created_at") or h["allocated_at"]
        if s not in site_of:
            provenances.append(s)
            site_of[s] = len(provenances) - 1
        prov_idx.append(site_of[s])
    ops = model.ops
    base = int(max(int(ops["op_id"].max()) if len(ops["op_id"]) else 0, REPORT_OP_BASE - 1)) + 1
    new_ops = np.arange(base, base + n_new, dtype=np.uint64)
    ops = {"op_id": np.concatenate([ops["op_id"], new_ops]),
           "kind": np.concatenate([ops["kind"], np.zeros(n_new, ops["kind"].dtype)]),
           "provenance": np.concatenate([ops["provenance"],
                                         np.array(prov_idx, ops["provenance"].dtype)]),
           "parent": np.concatenate([ops["parent"], np.zeros(n_new, np.uint64)])}
    new = {"start": start, "stop": np.full(n_new, t_fail, np.int64),
           "create": start, "ready": start, "lane": np.full(n_new, lane),
           "row": np.arange(n_new), "name": np.array(name_idx),
           "kind": np.full(n_new, int(ItemKind.INSTANCE)), "op_id": new_ops,
           "detail": np.zeros(n_new, np.int32)}
    return names, provenances, ops, new


def _with_arrays_lane(model, lane, n_rows, rank):
    """The lane table with an arrays lane for ``rank`` added last (named as every lane is; no
    capacity: the memory's lane holds what the pool held), and ``lane`` holding ``n_rows``
    rows: one per instance of the report."""
    lanes = {k: (list(v) if isinstance(v, list) else v.copy()) for k, v in model.lanes.items()}
    for k, v in {"group": GROUP_INDEX["arrays"], "rank": rank, "ref": rank, "ref2": 0,
                 "capacity": 0, "rows": int(lanes["rows"][lane])}.items():
        lanes[k] = np.append(lanes[k], np.array(v, lanes[k].dtype))
    short, long = lane_names([GROUP_INDEX["arrays"]], [rank], [rank], [0], model.mems)
    lanes["name"].append(short[0])
    lanes["title"].append(long[0])
    lanes["rows"][lane] = n_rows
    return lanes


def _renumbered_side_tables(model, insts, inv, mem_ref):
    """(transfers with the report's instances added, waits), item ids through ``inv``."""
    t = model.transfers
    n_old, n_new = model.n_items, len(insts)
    t_item = np.concatenate([inv[t["item"]], inv[np.arange(n_old, n_old + n_new)]])
    t_new = {"size": np.array([i["size"] for _, i in insts], np.uint64),
             "src": np.zeros(n_new, np.uint64), "dst": np.full(n_new, mem_ref, np.uint64),
             "inst": np.array([int(i["instance"], 16) & (2**64 - 1) for _, i in insts],
                              np.uint64)}
    o = stable_order(t_item)
    transfers = {"item": t_item[o], **{k: np.concatenate([t[k], t_new[k]])[o]
                                       for k in t_new}}
    w = waits = model.waits
    if w and len(w.get("item", [])):
        wi = inv[w["item"]]
        o = stable_order(wi)
        waits = {"item": wi[o], **{k: v[o] for k, v in w.items() if k != "item"}}
    return transfers, waits
