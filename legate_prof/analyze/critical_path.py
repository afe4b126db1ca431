"""The run's critical path and where its time went: ``legate_prof critical``, the insights'
wall-clock costs.

The path (``causality.run_path``) is a chain of items, each holding a piece of the timeline;
between pieces lie gaps (no item on the path was running: a message in flight, a task
waiting for its processor's scheduler, clocks of two nodes).  Time is split

* by kind: ``compute`` (tasks, kernels, application calls), ``launch`` (the program's own
  thread — the top-level task — running between the operations it launches), ``runtime``
  (mapping and runtime meta-work: meta-tasks, messages, mapper and runtime calls, profiler
  responses), ``copy``, ``fill``, ``dependent_partitioning``, ``unknown`` (waiting for an
  event no loaded profile records: where the chain stops) and ``gap``;
* by lane group (``gap`` and ``unknown`` apart);
* by source line (``analyze.path_lines``): a piece counts for its item's line (a meta-task:
  its operation's); time before the program's first operation for "(program start)"; the
  program's thread running for the line it was at (the runtime's stream says when each
  operation was made; without it, the line of the next item on the path); a gap for the
  line of the next item on the path; runtime work of no operation for "(no line)".

JSON (``legate_prof critical --json``, docs/query_api.md): ``{"span_ns", "path_start_ns",
"run_span_ns", "path": [{"name",
"kind", "lane", "start_ns", "stop_ns", "provenance", "via", "on_path_ns"}, ...] (from the item
that ended last back), "by_kind", "by_group", "by_provenance", "items": [...]}``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from legate_prof.analyze.path_lines import (TOP_LEVEL_NAMES, line_rows, line_title,
                                            operations_made)
from legate_prof.model.item_parts import by_part
from legate_prof.model.kinds import GROUP_KEYS, ItemKind

KINDS = ("compute", "launch", "runtime", "copy", "fill", "dependent_partitioning", "unknown",
         "gap")
_CATEGORY = {ItemKind.TASK: "compute", ItemKind.GPU_KERNEL: "compute",
             ItemKind.APP_CALL: "compute", ItemKind.META: "runtime",
             ItemKind.MESSAGE: "runtime", ItemKind.PROF_TASK: "runtime",
             ItemKind.MAPPER_CALL: "runtime", ItemKind.RUNTIME_CALL: "runtime",
             ItemKind.COPY: "copy", ItemKind.FILL: "fill",
             ItemKind.DEP_PART: "dependent_partitioning", ItemKind.INSTANCE: "gap",
             ItemKind.RUNTIME_OP: "runtime"}


def item_table(profile, ids):
    """Plain columns of the items ``ids`` (in the profile's numbering), asked of the part
    holding each: kind, name id, lane (profile numbering), start, stop, provenance id."""
    ids = np.asarray(ids, np.int64)
    parts = profile.item_parts()
    offsets = np.array([p.item_off for p in parts] + [parts[-1].item_off
                                                      + parts[-1].model.n_items], np.int64)
    out = {c: np.zeros(len(ids), np.int64) for c in ("kind", "name", "lane", "start", "stop",
                                                     "prov")}
    for k, sel, local in by_part(offsets, ids):
        p = parts[k]
        it = p.model.items
        out["kind"][sel] = it["kind"][local]
        out["name"][sel] = p.names(local)
        out["lane"][sel] = it["lane"][local].astype(np.int64) + p.lane_off
        out["start"][sel], out["stop"][sel] = it["start"][local], it["stop"][local]
        out["prov"][sel] = p.provenances(local)
    return out


@dataclass
class PathPieces:
    """The path in time order: per step its item, the piece it holds (``begin``..``end``,
    clipped so pieces never overlap), the gap before it, its kind category, lane group; and
    every piece of time with the source line it counts for (``path_lines.line_rows``)."""

    steps: list
    item: np.ndarray
    begin: np.ndarray
    end: np.ndarray
    gap_before: np.ndarray
    category: list
    group: list
    rows: tuple  # (ns, category, line, item): ``pieces()``
    unknown_ns: int  # waiting for an unknown event before the first step
    span: tuple  # (first ns, last ns)

    def holds_ns(self, mask):
        """Time each step holds on the path — its piece and the gap before it (the first:
        the wait for an unknown event too) — for the steps of ``mask`` (None: all)."""
        dur = self.end - self.begin + self.gap_before
        if len(dur):
            dur = dur.copy()
            dur[0] += self.unknown_ns
        return dur if mask is None else dur[mask]

    def pieces(self):
        """(ns, category, line, item) of every piece of time on the path: the steps' own
        pieces (a launch cut where the program made an operation), the gaps (category "gap")
        and the wait for an unknown event before the first step ("unknown"); a line id is a
        provenance id, ``path_lines.PROGRAM_START`` or 0 (none).  They add up to the span."""
        return self.rows


def path_pieces(source, steps=None) -> PathPieces:
    """The pieces of ``source``'s run critical path (``steps``: a path already walked)."""
    steps = list(reversed(source.run_critical_path() if steps is None else steps))
    n = len(steps)
    if n == 0:
        z = np.zeros(0, np.int64)
        return PathPieces([], z, z, z, z, [], [], (z, np.zeros(0, object), z, z), 0, (0, 0))
    item = np.array([s.item for s in steps], np.int64)
    tab = item_table(source, item)
    begin = np.array([s.begin_ns for s in steps], np.int64)
    end = np.array([s.end_ns for s in steps], np.int64)
    end[:-1] = np.minimum(end[:-1], begin[1:])  # (a piece never runs past the next one)
    end = np.maximum.accumulate(np.maximum(end, begin))
    begin = np.minimum(begin, end)
    begin[1:] = np.maximum(begin[1:], end[:-1])
    gap = np.zeros(n, np.int64)
    gap[1:] = begin[1:] - end[:-1]
    names = source.names
    lanes = source.info().lanes
    category = [_category(int(k), names[int(nm)]) for k, nm in zip(tab["kind"], tab["name"])]
    group = [lanes[int(L)].group for L in tab["lane"]]
    unknown, first = 0, steps[0]
    if first.via == "unknown":  # the chain stopped at an event nothing records
        link = source.critical_predecessor(first.item)
        since = first.wait_from_ns if first.wait_from_ns is not None else (
            link.creation_ns if link is not None else begin[0])
        unknown = max(int(begin[0]) - int(since), 0)
    rank = np.array([lanes[int(L)].rank for L in tab["lane"]], np.int64)
    rows = line_rows({"begin": begin, "end": end, "gap": gap, "category": category,
                      "own": tab["prov"], "ahead": _lines_forward(tab["prov"]), "rank": rank,
                      "item": item, "unknown_ns": unknown}, operations_made(source))
    return PathPieces(steps, item, begin, end, gap, category, group, rows, unknown,
                      (int(begin[0]) - unknown, int(end[-1])))


def _category(kind, name):
    if kind == ItemKind.TASK and name in TOP_LEVEL_NAMES:
        return "launch"
    return _CATEGORY.get(ItemKind(kind), "compute")


def _lines_forward(prov):
    """Each step's own line, or the next step's with one (0: none after it either)."""
    out = prov.copy()
    for k in range(len(out) - 2, -1, -1):
        if out[k] == 0:
            out[k] = out[k + 1]
    return out


def splits(pieces: PathPieces, provenances):
    """(by kind, by lane group, by source line): ns each, gaps and waits included."""
    by_kind = dict.fromkeys(KINDS, 0)
    by_group, by_line = {}, {}
    dur = pieces.end - pieces.begin
    for k in range(len(pieces.steps)):
        by_kind[pieces.category[k]] += int(dur[k])
        by_group[pieces.group[k]] = by_group.get(pieces.group[k], 0) + int(dur[k])
    ns, cat, line, _ = pieces.pieces()
    by_kind["gap"] = int(pieces.gap_before.sum())
    by_kind["unknown"] += pieces.unknown_ns
    for p, v in zip(line.tolist(), ns.tolist()):
        name = line_title(p, provenances)
        by_line[name] = by_line.get(name, 0) + v
    if by_kind["gap"]:
        by_group["gap"] = by_kind["gap"]
    if pieces.unknown_ns:
        by_group["unknown"] = pieces.unknown_ns
    order = sorted(by_line.items(), key=lambda kv: (-kv[1], kv[0]))
    return by_kind, dict(sorted(by_group.items(), key=lambda kv: -kv[1])), dict(order)


def critical_path_report(source, with_items=True) -> dict:
    """``legate_prof critical --json``."""
    pieces = path_pieces(source)
    by_kind, by_group, by_line = splits(pieces, source.provenances)
    lanes = source.info().lanes
    tab = item_table(source, pieces.item)  # (a column read per step: 10^5 steps)
    names, provs = source.names, source.provenances
    kind_names = {int(k): k.name.lower() for k in ItemKind}
    path = [{"name": names[int(tab["name"][k])], "kind": kind_names[int(tab["kind"][k])],
             "lane": lanes[int(tab["lane"][k])].long,
             "start_ns": int(tab["start"][k]), "stop_ns": int(tab["stop"][k]),
             "provenance": provs[int(tab["prov"][k])] or "", "via": pieces.steps[k].via,
             "on_path_ns": [int(pieces.begin[k]), int(pieces.end[k])]}
            for k in range(len(pieces.steps) - 1, -1, -1)]  # (from the item that ended last)
    run = source.summary_model().extent()  # (stats' span_ns)
    out = {"span_ns": int(pieces.span[1] - pieces.span[0]), "path_start_ns": int(pieces.span[0]),
           "run_span_ns": [int(run[0]), int(run[1])], "path": path, "by_kind": by_kind,
           "by_group": by_group, "by_provenance": by_line,
           "stops_at": stops_at(source, pieces.steps[0]) if pieces.steps else None}
    if with_items:
        out["items"] = linked_items(source)
    return out


def linked_items(source):
    """Every item with a critical row: name, kind, lane, start, stop, via, predecessor."""
    from legate_prof.causality.critical_links import NO_ROW, VIA
    links = source.critical_links()
    ids = np.flatnonzero(links.items.via != NO_ROW)
    tab = item_table(source, ids)
    target = links.items.target[ids]
    has = target >= 0
    ptab = item_table(source, target[has])
    names, lanes = source.names, source.info().lanes
    kind_names = {int(k): k.name.lower() for k in ItemKind}
    preds = [None] * len(ids)
    for j, k in enumerate(np.flatnonzero(has).tolist()):
        preds[k] = {"name": names[int(ptab["name"][j])], "lane": lanes[int(ptab["lane"][j])].long,
                    "start_ns": int(ptab["start"][j]), "stop_ns": int(ptab["stop"][j])}
    return [{"name": names[int(tab["name"][j])], "kind": kind_names[int(tab["kind"][j])],
             "lane": lanes[int(tab["lane"][j])].long, "start_ns": int(tab["start"][j]),
             "stop_ns": int(tab["stop"][j]), "via": VIA[int(links.items.via[i])],
             "predecessor": preds[j]} for j, i in enumerate(ids.tolist())]


def stops_at(source, step):
    """Where the chain stops at an event no profile records (``step``: the path's first, a
    ``PathStep``): {"rank": the node the event is of, "given": whether that rank's profile
    was read, "note": the reference's note, "ranks_not_given": the run's ranks whose
    profiles were not read}; None where it stops at an item."""
    from legate_prof.causality.link_rules import note_text
    if step.via != "unknown":
        return None
    links = source.critical_links()
    rows, k = links.items, step.item
    if step.wait_from_ns is not None:
        w = links.waits_of(step.item)
        w = w[links.wait_start[w] == step.wait_from_ns]
        if len(w) == 0:
            return None
        rows, k = links.waits, int(w[0])
    node = int(rows.node[k])
    ranks = source.summary_model().ranks
    size = max([int(r.get("num_nodes", 0) or 0) for r in ranks] + [len(ranks)])
    given = {int(r["rank"]) for r in ranks}
    return {"rank": node, "given": node in given, "note": note_text(rows, k),
            "ranks_not_given": sorted(set(range(size)) - given)}


__all__ = ["critical_path_report", "path_pieces", "splits", "stops_at", "KINDS",
           "GROUP_KEYS", "item_table"]
