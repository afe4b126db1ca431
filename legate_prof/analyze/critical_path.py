"""The run's critical path and where its time went: ``legate_prof critical``, the insights'
wall-clock costs.

The path (``query.run_path``) is a chain of items, each holding a piece of the timeline;
between pieces lie gaps (no item on the path was running: a message in flight, a task
waiting for its processor's scheduler, clocks of two nodes).  Time is split

* by kind: ``compute`` (tasks, kernels, application calls), ``launch`` (the program's own
  thread — the top-level task — running between the operations it launches), ``runtime``
  (mapping and runtime meta-work: meta-tasks, messages, mapper and runtime calls, profiler
  responses), ``copy``, ``fill``, ``dependent_partitioning``, ``unknown`` (waiting for an
  event no loaded profile records: where the chain stops) and ``gap``;
* by lane group (``gap`` and ``unknown`` apart);
* by source line: a piece counts for its item's line (a meta-task: its operation's); the
  top-level task launching and a gap count for the line of the next item on the path that
  has one — the work they led to; runtime work of no operation (pipeline stages) for none.

JSON (``legate_prof critical --json``, docs/query_api.md): ``{"span_ns", "path": [{"name",
"kind", "lane", "start_ns", "stop_ns", "provenance", "via", "on_path_ns"}, ...] (from the item
that ended last back), "by_kind", "by_group", "by_provenance", "items": [...]}``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from legate_prof.model.item_parts import by_part
from legate_prof.model.kinds import GROUP_KEYS, GROUP_TITLE, ItemKind

KINDS = ("compute", "launch", "runtime", "copy", "fill", "dependent_partitioning", "unknown",
         "gap")
TOP_LEVEL_NAMES = ("Toplevel Task", "External Thread")  # the program's own thread
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
    clipped so pieces never overlap), the gap before it, its kind category, lane group, the
    source line its piece counts for and the line the gap before it counts for (0: none)."""

    steps: list
    item: np.ndarray
    begin: np.ndarray
    end: np.ndarray
    gap_before: np.ndarray
    category: list
    group: list
    line: np.ndarray
    gap_line: np.ndarray
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
        """(ns, category, line) of every piece of time on the path: each step's own piece,
        then the gaps (category "gap", counting for the next step's line) and the wait for an
        unknown event before the first step ("unknown")."""
        n = len(self.steps)
        ns = np.concatenate([self.end - self.begin, self.gap_before,
                             [self.unknown_ns] if n else []]).astype(np.int64)
        cat = list(self.category) + ["gap"] * n + (["unknown"] if n else [])
        line = np.concatenate([self.line, self.gap_line,
                               self.gap_line[:1] if n else []]).astype(np.int64)
        item = np.concatenate([self.item, self.item, self.item[:1] if n else []])
        return ns, np.asarray(cat, object), line, item.astype(np.int64)


def path_pieces(source, steps=None) -> PathPieces:
    """The pieces of ``source``'s run critical path (``steps``: a path already walked)."""
    steps = list(reversed(source.run_critical_path() if steps is None else steps))
    n = len(steps)
    if n == 0:
        z = np.zeros(0, np.int64)
        return PathPieces([], z, z, z, z, [], [], z, z, 0, (0, 0))
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
    ahead = _lines_forward(tab["prov"])
    line = np.where(np.asarray(category, object) == "launch", ahead, tab["prov"])
    return PathPieces(steps, item, begin, end, gap, category, group, line.astype(np.int64),
                      ahead, unknown, (int(begin[0]) - unknown, int(end[-1])))


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
        if p and v:
            by_line[provenances[p]] = by_line.get(provenances[p], 0) + v
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
    path = []
    for k in range(len(pieces.steps) - 1, -1, -1):  # from the item that ended last back
        st = pieces.steps[k]
        f = source.item_facts(st.item)
        path.append({"name": f["name"], "kind": f["kind"],
                     "lane": lanes[source.item_lane(st.item)[0]].long,
                     "start_ns": f["start_ns"], "stop_ns": f["stop_ns"],
                     "provenance": f.get("provenance", ""), "via": st.via,
                     "on_path_ns": [int(pieces.begin[k]), int(pieces.end[k])]})
    out = {"span_ns": int(pieces.span[1] - pieces.span[0]), "path": path, "by_kind": by_kind,
           "by_group": by_group, "by_provenance": by_line}
    if with_items:
        out["items"] = linked_items(source)
    return out


def linked_items(source):
    """Every item with a critical row: name, kind, lane, start, stop, via, predecessor."""
    from legate_prof.query.critical_links import NO_ROW, VIA
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


def _pct(part, whole):
    return f"{100.0 * part / whole:5.1f}%" if whole else "    -"


_LANE_ID = re.compile(r"\(0x[0-9a-fA-F]{1,16}\)")


def format_critical_path(report, limit=40) -> str:
    """The text form: the splits, then the path from the item that ended last back."""
    from legate_prof.present.units import format_ns_ascii
    span = report["span_ns"]
    path = report["path"]
    lines = [f"Critical path: {len(path)} items over {format_ns_ascii(span)} "
             "(from the item that ended last back to where the chain stops)", ""]
    groups = {GROUP_TITLE.get(k, k): v for k, v in report["by_group"].items()}
    for title, table in (("By kind", report["by_kind"]), ("By lane group", groups),
                         ("By source line", report["by_provenance"])):
        rows = [(k, v) for k, v in table.items() if v]
        if not rows:
            continue
        lines.append(title)
        for k, v in rows[:15]:
            lines.append(f"  {_pct(v, span)} {format_ns_ascii(v):>12}  {k}")
        lines.append("")
    lines.append(f"  {'on path':>12}  {'item':<44}{'lane':<40}via")
    shown = path if not limit else path[:limit]
    for p in shown:
        a, b = p["on_path_ns"]
        label = p["name"] + (f" [{p['provenance'].rsplit('/', 1)[-1]}]" if p["provenance"]
                             else "")
        # (its id in hex and what the lane is for: the same on every row of the lane)
        lane = _LANE_ID.sub("", p["lane"]).split(" — ")[0]
        lines.append(f"  {format_ns_ascii(b - a):>12}  {label[:43]:<44}{lane[:39]:<40}"
                     f"{p['via']}")
    if len(shown) < len(path):
        lines.append(f"  ... {len(path) - len(shown)} more (--limit 0 shows all, --json too)")
    return "\n".join(lines)


__all__ = ["critical_path_report", "format_critical_path", "path_pieces", "splits", "KINDS",
           "GROUP_KEYS", "item_table"]
