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
  line of the next item on the path; runtime work of no operation for "(no line)"; the time
  whose cause is unknown (``unknown``) for "(unknown)", as by kind and lane group.

JSON (``legate_prof critical --json``, docs/query_api.md): ``{"span_ns", "path_start_ns",
"run_span_ns", "path": [{"name",
"kind", "lane", "start_ns", "stop_ns", "provenance", "via", "on_path_ns"}, ...] (from the item
that ended last back), "by_kind", "by_group", "by_provenance", "items": [...]}``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from legate_prof.analyze.path_lines import (PROGRAM_START, TOP_LEVEL_NAMES, UNKNOWN, line_rows,
                                            line_title, program_end, run_operations_made)
from legate_prof.analyze.program_waits import (clipped, item_ranks, joined, merged,
                                               program_waits, waits_of_rows)
from legate_prof.model.item_parts import by_part
from legate_prof.model.kinds import GROUP_KEYS, ItemKind
from legate_prof.model.sort_order import stable_order, unique_values, unique_with

KINDS = ("compute", "waiting", "launch", "blocked", "runtime", "copy", "fill",
         "dependent_partitioning", "startup", "shutdown", "unknown", "gap")
# a task's time on the path while it was not running (blocked in a wait or ready for its
# processor, as Legion's wait records say) is "waiting", not "compute"; the program's own
# thread's is "blocked", not "launch" (``waiting_apart``)
NOT_RUNNING = {"compute": "waiting", "launch": "blocked"}
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
    every piece of the run's time with the source line it counts for (``rows``:
    ``path_lines.line_rows``, and the time before the path)."""

    steps: list
    item: np.ndarray
    begin: np.ndarray
    end: np.ndarray
    gap_before: np.ndarray
    category: list
    group: list
    rows: tuple  # (ns, category, line, item, begin): ``pieces()`` and where each begins
    unknown_ns: int  # waiting for an unknown event before the first step
    span: tuple  # the path's (first ns, last ns)
    run: tuple = (0, 0)  # the run's (first ns, last ns): what the rows add up to
    shutdown_ns: int | None = None  # when the program's top-level task ended (a window's
    # start, where it ended before it: all of a window after the program's end is shutdown)
    program_end_ns: int | None = None  # when it ended (with ``shutdown_ns``)
    # a window's: where the run's path (not only its piece in the window) rests on inferred
    # links, and how many of the run's inferred links lie at or after the window's start
    run_inferred: tuple | None = None
    _inferred: np.ndarray | None = field(default=None, repr=False, compare=False)

    def pieces(self):
        """(ns, category, line, item) of every piece of the run's time: the steps' own
        pieces (a launch cut where the program made an operation; from the top-level task's
        end on, "shutdown"), the gaps ("gap"), the wait for an unknown event before the
        first step and what came before it where the chain stops there ("unknown"), or the
        runtime starting up before the program where it ends at the top-level task's start
        ("startup"); a line id is a provenance id, ``path_lines.PROGRAM_START``,
        ``path_lines.SHUTDOWN`` or 0 (none).  They add up to the run."""
        return self.rows[:4]

    @property
    def explained_ns(self):
        """The run's time with a cause: all but what is "unknown"."""
        ns, cat = self.rows[0], self.rows[1]
        return int(ns.sum() - ns[cat == "unknown"].sum())

    @property
    def inferred(self):
        """The steps (in time order) whose predecessor ``inference`` inferred, found once."""
        if self._inferred is None:
            self._inferred = np.flatnonzero(np.array([s.via == "inferred" for s in self.steps],
                                                     bool))
        return self._inferred

    @property
    def inferred_from_ns(self):
        """Where the path starts to rest on an inferred link: the latest (in time) step
        whose predecessor ``inference`` inferred begins there, and every piece before that
        time was reached through it (None: no inferred link)."""
        if self.run_inferred is not None:  # (a window: the run's, its link maybe beyond)
            return self.run_inferred[0]
        last = self.inferred
        return int(self.begin[last[-1]]) if len(last) else None

    @property
    def inferred_links(self):
        """How many inferred links the path rests on: its own; a window's, the run's at or
        after its start (a link past the window's end holds up all of it: a review read
        "0 inferred links" of a window whose every step rests on one)."""
        return self.run_inferred[1] if self.run_inferred is not None else len(self.inferred)

    def resting_on_inference(self):
        """Per row of ``pieces()``: whether it lies before ``inferred_from_ns`` (the path's
        cause of it rests on an inferred link; the start-up, before any path, does not, nor
        does time whose cause is unknown: the share is of the explained time)."""
        at = self.inferred_from_ns
        ns, cat, begin = self.rows[0], self.rows[1], self.rows[4]
        if at is None:
            return np.zeros(len(ns), bool)
        return (begin < at) & (cat != "startup") & (cat != "unknown")


def path_in_window(steps, ids, start=None, stop=None):
    """The run's critical path ``steps`` (as walked: from the item that ended last back) cut
    to the window [``start``, ``stop``]: the steps whose piece of the path lies in it, their
    pieces cut to it, their items renumbered by ``ids`` (``assemble.restrict.window_ids``: the
    items of the profile cut to the window).  A window's own path, walked back from what
    ended last in it, stopped at the first event whose cause the cut had left out (the
    guide's 4-rank run, 50-150 s: one item, 0.0 % of the window explained); the run's path
    goes on through it, and explains it as it explains the run."""
    from legate_prof.causality.run_path import PathStep
    lo = -(1 << 62) if start is None else int(start)
    hi = (1 << 62) if stop is None else int(stop)
    out = []
    for s in steps:
        if s.end_ns < lo or s.begin_ns > hi or ids[s.item] < 0:
            continue
        pred = int(ids[s.predecessor]) if s.predecessor >= 0 else -1
        out.append(PathStep(int(ids[s.item]), max(s.begin_ns, lo), min(s.end_ns, hi), s.via,
                            pred, s.wait_from_ns, s.wait_to_ns))
    return out


def path_pieces(source, steps=None) -> PathPieces:
    """The pieces of ``source``'s run critical path (``steps``: a path already walked), and
    the run's time before it; of the run's own path, worked out once per source."""
    if steps is None and hasattr(source, "computed_once"):
        return source.computed_once("path_pieces", lambda: _pieces(source, None))
    return _pieces(source, steps)


def _pieces(source, steps):
    steps = list(reversed(source.run_critical_path() if steps is None else steps))
    n = len(steps)
    run = tuple(int(t) for t in source.summary_model().extent())
    if n == 0:
        z = np.zeros(0, np.int64)
        rows = (np.array([run[1] - run[0]], np.int64), np.array(["unknown"], object),
                np.zeros(1, np.int64), np.full(1, -1, np.int64), np.array([run[0]], np.int64))
        return PathPieces([], z, z, z, z, [], [], rows, 0, (0, 0), run)
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
    lanes = source.info().lanes
    category = _categories(tab["kind"], tab["name"], source.names).tolist()
    lane_group = np.array([L.group for L in lanes] or [""], object)
    group = lane_group[tab["lane"]].tolist()
    unknown, first = 0, steps[0]
    if first.via == "unknown":  # the chain stopped at an event nothing records
        link = source.critical_predecessor(first.item)
        since = first.wait_from_ns if first.wait_from_ns is not None else (
            link.creation_ns if link is not None else begin[0])
        unknown = max(int(begin[0]) - int(since), 0)
    rank = np.array([L.rank for L in lanes] or [0], np.int64)[tab["lane"]]
    ahead = _lines_forward(tab["prov"])
    after = source.computed("line_after") if hasattr(source, "computed") else None
    if after:  # (a window's last steps: the line of the run's next step, past its end)
        ahead[ahead == 0] = after
    ended = run_program_end(source)
    # (a window after the program's end: all of it the shutdown's)
    shutdown = max(ended, run[0]) if ended is not None and ended < run[1] else None
    rows = waiting_apart(line_rows({"begin": begin, "end": end, "gap": gap,
                                    "category": category, "own": tab["prov"], "ahead": ahead,
                                    "rank": rank, "item": item, "unknown_ns": unknown},
                                   run_operations_made(source), shutdown), source)
    start = int(begin[0]) - unknown
    # (nothing held the first step up: known with the event graph; without it, of the
    # top-level task alone — a log cut before its events, walked back by creators, ended at a
    # shutdown meta-task, and the 4 s before it read as the runtime starting)
    startup = first.via == "" and (category[0] == "launch" or source.has_event_graph())
    rows = _with_time_before(rows, run[0], start, first.item, startup, ahead[0],
                             hasattr(source, "computed")
                             and bool(source.computed("path_goes_on_before")))
    return PathPieces(steps, item, begin, end, gap, category, group, rows, unknown,
                      (start, int(end[-1])), run, shutdown,
                      program_end_ns=ended if shutdown is not None else None,
                      run_inferred=(source.computed("run_inferred")
                                    if hasattr(source, "computed") else None))


def waiting_apart(rows, source):
    """``rows`` (``line_rows``) with each task's and the program's thread's piece cut where
    its item was not running, those parts ``NOT_RUNNING``'s (their line and item kept).  Where
    the walk does not follow a wait (an event no record names, a collective of the ranks'
    top-level tasks), the piece spans it: the guide's 4-rank run's 26.6 s of "launch" were
    5.3 s of the program's thread blocked.  The calls an item made (``_real_waits``) are not
    waiting; the program waiting for a value is, recorded by Legion or not
    (``program_waits``)."""
    ns, cat, line, item, lo = rows
    cut = np.flatnonzero(np.isin(cat, list(NOT_RUNNING)) & (ns > 0))
    row, w0, w1 = _waits_within(source, item[cut], lo[cut], lo[cut] + ns[cut])
    row, w0, w1 = _with_program_waits(source, (row, w0, w1), cut, cat, item, lo, ns)
    if not len(row):
        return rows
    r = cut[row]  # (each wait's row: waits of a row in time order, never overlapping)
    first = np.r_[True, r[1:] != r[:-1]]
    last = np.r_[r[1:] != r[:-1], True]
    # the running parts: before each wait (from the row's start or the wait before it's
    # end), and after its last wait
    run_lo = np.concatenate([np.where(first, lo[r], np.r_[0, w1[:-1]]), w1[last]])
    run_hi = np.concatenate([w0, lo[r[last]] + ns[r[last]]])
    run_of = np.concatenate([r, r[last]])
    of = np.concatenate([run_of, r])
    lo_new = np.concatenate([run_lo, w0])
    ns_new = np.concatenate([run_hi - run_lo, w1 - w0])
    cat_new = np.concatenate([cat[run_of], _not_running(cat[r])])
    keep = np.ones(len(ns), bool)
    keep[r] = False
    out = (np.concatenate([ns[keep], ns_new]), np.concatenate([cat[keep], cat_new]),
           np.concatenate([line[keep], line[of]]), np.concatenate([item[keep], item[of]]),
           np.concatenate([lo[keep], lo_new]))
    good = out[0] > 0
    return tuple(a[good] for a in out)


def _with_program_waits(source, waits, cut, cat, item, lo, ns):
    """``waits`` (row, start, end of Legion's waits of the rows ``cut``) with the program's
    own waits for values (``program_waits``) in its pieces ("launch"), merged."""
    program = _of_the_run(source, "program_waits", program_waits)
    launch = np.flatnonzero(cat[cut] == "launch")
    if not program or not len(launch):
        return waits
    rows = cut[launch]
    row, w0, w1 = waits_of_rows(program, item_ranks(source, item[rows]), lo[rows],
                                lo[rows] + ns[rows])
    if not len(row):
        return waits
    return merged(np.concatenate([waits[0], launch[row]]), np.concatenate([waits[1], w0]),
                  np.concatenate([waits[2], w1]))


def _not_running(cat):
    out = np.empty(len(cat), object)
    for c, w in NOT_RUNNING.items():
        out[cat == c] = w
    return out


def _waits_within(source, items, lo, hi):
    """(row, start, end) of each wait of ``items[row]`` (profile ids) overlapping [lo, hi)
    of that row, clipped to it, by row and then time: the waits of the rows' items, part by
    part (``item_parts``), searched by item and time at once."""
    found = []
    if len(items) == 0:
        return joined(found)
    parts = source.item_parts()
    offsets = np.array([p.item_off for p in parts] + [parts[-1].item_off
                                                      + parts[-1].model.n_items], np.int64)
    for k, sel, local in by_part(offsets, np.asarray(items, np.int64)):
        wi, ws, we = _real_waits(parts[k].model, local)
        if len(wi) == 0:
            continue
        at = np.arange(len(items))[sel]
        # (sorted by item, then start: a task's waits never overlap, so their ends are in
        # order too; a row's waits are those from the first ending after its start to the
        # last starting before its end)
        first_w = np.searchsorted(wi, local, "left")
        end_w = np.searchsorted(wi, local, "right")
        found.append(clipped(at, _search_within(we, first_w, end_w, lo[at], "right"),
                             _search_within(ws, first_w, end_w, hi[at], "left"), ws, we, lo, hi))
    row, w0, w1 = joined(found)
    o = np.lexsort((w0, row))
    return row[o], w0[o], np.maximum(w1[o], w0[o])


def _real_waits(model, items):
    """(item, start, end) of the waits of ``items`` (a model's ids) but the calls folded into
    them (``TraceModel.folded_calls``: a task running its body, the program's thread inside
    a runtime call, is not waiting), sorted and disjoint (``_disjoint_waits``)."""
    w = model.waits
    wi = np.asarray(w["item"], np.int64)
    u = unique_values(np.asarray(items, np.int64))
    first, end = np.searchsorted(wi, u, "left"), np.searchsorted(wi, u, "right")
    n = end - first
    rows = np.repeat(first, n) + (np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n))
    rows = rows[~model.folded_calls(rows)]
    return _disjoint_waits(wi[rows], np.asarray(w["start"], np.int64)[rows],
                           np.asarray(w["end"], np.int64)[rows])


def _disjoint_waits(item, start, end):
    """The waits by item, then start, none overlapping another of its item, as Legion writes
    them (every real run here); a damaged or a stranger's file's are sorted and merged (a
    loop: only there), so that no piece of the path counts one moment of waiting twice."""
    end = np.maximum(end, start)
    if len(item) > 1 and not np.all((item[1:] > item[:-1]) | (
            (item[1:] == item[:-1]) & (start[1:] >= end[:-1]))):
        o = np.lexsort((start, item))
        item, start, end = item[o], start[o].copy(), end[o].copy()
        for k in range(1, len(item)):  # (the latest end so far, within an item)
            if item[k] == item[k - 1] and start[k] < end[k - 1]:
                start[k] = end[k - 1]
                end[k] = max(end[k], start[k])
    return item, start, end


def _search_within(values, first, end, keys, side):
    """``np.searchsorted`` of each of ``keys`` in its own slice ``values[first:end]`` (each
    slice sorted), as positions in ``values``: a binary search of all slices at once."""
    lo, hi = first.copy(), end.copy()
    while True:
        open_ = lo < hi
        if not open_.any():
            return lo
        mid = (lo + hi) // 2
        v = values[np.minimum(mid, len(values) - 1)]
        right = (v <= keys) if side == "right" else (v < keys)
        go = open_ & right
        lo = np.where(go, mid + 1, lo)
        hi = np.where(open_ & ~right, mid, hi)


def beyond_window(run, ids, start=None, stop=None):
    """What a window of the run needs of the run beyond it, for ``given_window``: the run's
    path cut to the window (``path_in_window``; ``ids``: ``assemble.restrict.window_ids``),
    when the program made each operation, and the line the path leads to past its end."""
    steps = run.run_critical_path()
    return {"path": path_in_window(steps, ids, start, stop),
            # (the run's path goes on before the window: the time before its first step there
            # is the gap the run's path has, not an unknown cause)
            "goes_on_before": bool(steps) and start is not None and steps[-1].begin_ns < start,
            # (the run began before the window: what ran first in it is no start-up)
            "starts_late": start is not None and start > run.summary_model().extent()[0],
            "inferred": _inferred_of_run(steps, start),
            "made": run_operations_made(run), "end": run_program_end(run),
            "latency": run.message_latency,  # (asked only where a window's finding needs it)
            "after": line_after(run, stop) if stop is not None else "",
            "where": lambda: _run_path_where(run, steps)}  # (asked where the path misses it)


def _run_path_where(run, steps):
    """Where the run's path lies ({"run_path_ns": [its first piece's start, its last
    one's end], "stops_at": where it stops, ``stops_at``}; None: the run has none), for a
    window the path misses: a review read "no item to walk back from" and "the profile holds
    no Legion timeline" of a window of mpi4's rank 1 (``--ranks 1``), whose path there lies
    after the window, and before it, on a rank not given."""
    if not steps:
        return None
    span = path_pieces(run).span  # (as the run's own report says it)
    return {"run_path_ns": [int(span[0]), int(span[1])], "stops_at": stops_at(run, steps[-1])}


def _inferred_of_run(steps, start):
    """(where the run's path starts to rest on inferred links, how many of them lie at or
    after ``start``) for a window's ``PathPieces.run_inferred``; None: the run has none."""
    begins = [int(s.begin_ns) for s in steps if s.via == "inferred"]
    if not begins:
        return None
    return max(begins), sum(b >= (start if start is not None else -(1 << 62)) for b in begins)


def given_window(source, beyond):
    """Give a window's ``source`` what ``beyond_window`` took of its run: the window's lines
    are then the run's lines there (nothing where ``beyond`` is None: no window)."""
    if beyond is None:
        return
    source.use_run_critical_path(beyond["path"])
    source.computed_once("operations_made", lambda: beyond["made"])
    source.computed_once("program_end", lambda: beyond["end"])
    source.computed_once("path_goes_on_before", lambda: beyond["goes_on_before"])
    source.computed_once("window_starts_late", lambda: beyond["starts_late"])
    source.computed_once("run_inferred", lambda: beyond["inferred"])
    source.computed_once("run_message_latency", lambda: beyond["latency"])
    source.computed_once("run_path_where", lambda: beyond["where"])
    if beyond["after"] in source.provenances:
        source.computed_once("line_after", lambda: source.provenances.index(beyond["after"]))


def line_after(source, stop):
    """The source line of the first step of ``source``'s run path that has one and begins at
    or after ``stop``, by its title ("": none): what a window's last steps lead to, beyond it
    (``path_lines``: a gap or a launch counts for the line of the next step with one)."""
    steps = source.run_critical_path()
    later = [s.item for s in steps if s.begin_ns >= stop]  # (the path: last step first)
    if not later:
        return ""
    prov = np.asarray(item_table(source, np.array(later[::-1], np.int64))["prov"])
    lined = np.flatnonzero(prov != 0)
    return source.provenances[int(prov[lined[0]])] if len(lined) else ""


def run_program_end(source):
    """``path_lines.program_end`` of the run: a window's source is given the whole run's
    (``computed_once("program_end")``) — a window after the program's end has no top-level
    task, and read its shutdown as the program's own thread launching a line's tasks."""
    return _of_the_run(source, "program_end", program_end)


def _of_the_run(source, key, compute):
    """``compute(source)`` once per source under ``key``, where ``given_window`` may have
    given a window's source the run's answer instead."""
    if hasattr(source, "computed_once"):
        return source.computed_once(key, lambda: compute(source))
    return compute(source)


def _with_time_before(rows, run_start, path_start, first_item, startup, line, gap=False):
    """``rows`` and the run's time before the path: the runtime starting up where the chain
    ends at an item nothing held up (``startup``: the top-level task's start), a gap where
    the run's path goes on before a window (``gap``), else unknown."""
    before = path_start - run_start
    if before <= 0:
        return rows
    cat = "gap" if gap else "startup" if startup else "unknown"
    startup = startup and not gap
    extra = (np.array([before], np.int64), np.array([cat], object),
             np.array([PROGRAM_START if startup else line], np.int64),
             np.array([first_item], np.int64), np.array([run_start], np.int64))
    return tuple(np.concatenate([a, b]) for a, b in zip(rows, extra))


def _categories(kind, name, names):
    """Each step's ``KINDS`` category by its item's kind and name id: "launch" for the
    program's own thread (the top-level task), else by kind (``_CATEGORY``)."""
    table = np.full(256, "compute", object)
    for k, c in _CATEGORY.items():
        table[int(k)] = c
    out = table[np.asarray(kind, np.int64)]
    top = np.flatnonzero(np.isin(np.asarray(names, object), TOP_LEVEL_NAMES))
    out[(np.asarray(kind) == ItemKind.TASK) & np.isin(name, top)] = "launch"
    return out


def _lines_forward(prov):
    """Each step's own line, or the next step's with one (0: none after it either)."""
    prov = np.asarray(prov)
    n = len(prov)
    # each step's next step with a line (itself where it has one; n: none), from the end
    at = np.where(prov != 0, np.arange(n), n)
    at = np.minimum.accumulate(at[::-1])[::-1]
    return np.append(prov, 0).astype(prov.dtype)[at]


def splits(pieces: PathPieces, provenances):
    """(by kind, by lane group, by source line): ns each of the run's time — the path's
    pieces, its gaps, the time before it and the shutdown — adding up to the run; by line,
    the time whose cause is unknown is "(unknown)", as it is "unknown" by kind and lane
    group (where the path stops at a rank not given, 4.989 s unknown read as 5.030 s of
    "(no line)", the work no line launched: a review).  (Sums per key over whole columns;
    each dict in the order its keys first come, as a walk over the rows would make it,
    before it is sorted.)"""
    ns, cat, line, item = pieces.pieces()
    ns = np.asarray(ns, np.int64)
    group = np.where(np.isin(cat, _OWN_GROUP), cat, _group_of(pieces, item))
    by_kind = dict.fromkeys(KINDS, 0)
    by_kind.update(_sums_in_order(cat, ns))
    by_line = {}
    line = np.where(np.asarray(cat, object) == "unknown", UNKNOWN, np.asarray(line, np.int64))
    for k, v in _sums_in_order(line, ns).items():
        name = line_title(k, provenances)
        by_line[name] = by_line.get(name, 0) + v
    order = sorted(by_line.items(), key=lambda kv: (-kv[1], kv[0]))
    groups = sorted(((g, v) for g, v in _sums_in_order(group, ns).items() if v),
                    key=lambda kv: -kv[1])
    return by_kind, dict(groups), dict(order)


def _group_of(pieces, item):
    """The lane group of each of ``item`` as a step of the path holds it (an item on it
    twice: its later step's), "unknown" for one not on it."""
    on_path = np.asarray(pieces.item, np.int64)
    o = stable_order(on_path)
    keys = on_path[o]
    last = np.r_[keys[1:] != keys[:-1], True] if len(keys) else np.zeros(0, bool)
    keys, groups = keys[last], np.append(np.asarray(pieces.group, object)[o][last], "unknown")
    pos = np.searchsorted(keys, item)
    hit = pos < len(keys)
    hit[hit] = keys[pos[hit]] == np.asarray(item)[hit]
    return groups[np.where(hit, pos, len(keys))]


def _sums_in_order(key, ns):
    """{key: the sum of ``ns`` over its rows} (Python ints), keys in the order they first
    come."""
    if len(key) == 0:
        return {}
    values, first, at = unique_with(key, index=True, inverse=True)
    total = np.zeros(len(values), np.int64)
    np.add.at(total, np.ravel(at), ns)
    order = stable_order(first)
    return dict(zip(values[order].tolist(), total[order].tolist()))


_OWN_GROUP = ("gap", "unknown", "startup", "shutdown")  # time no lane group holds (the
# shutdown: the program's thread waiting in the runtime's clean-up, not the program running)


def critical_path_report(source, with_items=True, with_path=True, rows_as_read=False) -> dict:
    """``legate_prof critical --json``; ``with_path=False``: of the path, its first step
    only (``steps`` says how many: a summary of the splits, 10^5 steps not listed);
    ``rows_as_read``: the path's rows a ``PathRows``, each made when read (a text shows
    forty of them)."""
    pieces = path_pieces(source)
    by_kind, by_group, by_line = splits(pieces, source.provenances)
    listed = np.arange(len(pieces.steps)) if with_path else np.arange(min(len(pieces.steps), 1))
    path = PathRows(source, pieces, listed)
    if not rows_as_read:
        path = path[:]
    run = pieces.run  # (stats' span_ns)
    inferred = pieces.inferred_links
    resting = pieces.resting_on_inference()
    out = {"span_ns": int(pieces.span[1] - pieces.span[0]), "path_start_ns": int(pieces.span[0]),
           "run_span_ns": [int(run[0]), int(run[1])], "run_ns": int(run[1] - run[0]),
           "explained_ns": pieces.explained_ns, "path": path, "by_kind": by_kind,
           "by_group": by_group, "by_provenance": by_line,
           "inferred": {"links": int(inferred), "from_ns": pieces.inferred_from_ns,
                        "resting_ns": int(pieces.rows[0][resting].sum())},
           "shutdown": (shutdown_tail(source, pieces.shutdown_ns, run[1], by_kind["shutdown"],
                                      pieces.program_end_ns)
                        if pieces.shutdown_ns is not None else None),
           "stops_at": stops_at(source, pieces.steps[0]) if pieces.steps else None,
           # (whether the runtime's stream says when the program made its first operation:
           # without it, the first item Legion created stands for it, later where Legate
           # hands operations over in batches: ``path_lines``)
           "operations_recorded": any(bool(np.any(p.model.items["kind"] == ItemKind.RUNTIME_OP))
                                      for p in source.item_parts())}
    where = source.computed("run_path_where")  # (a window: where the run's path lies)
    if not pieces.steps and where is not None and where() is not None:
        out["run_path_where"] = where()
    if not with_path:
        out["steps"] = len(pieces.steps)
    if with_items:
        out["items"] = linked_items(source)
    return out


class PathRows(Sequence):
    """The path's rows of ``critical --json`` (from the item that ended last back: name,
    kind, lane, start, stop, provenance, via, the piece on the path), each made when read:
    the columns of the steps ``listed`` (in time order) looked up at once, a row's values
    picked out of them (a dict a step for 10^5 steps was most of a text's report)."""

    def __init__(self, source, pieces, listed):
        named = {int(k): k.name.lower() for k in ItemKind}
        self._kind_names = [named.get(k, "") for k in range(256)]
        self._lanes = [L.long for L in source.info().lanes]
        self._names, self._provs = source.names, source.provenances
        back = slice(None, None, -1)  # (from the item that ended last)
        tab = item_table(source, pieces.item[listed])  # (a column read per step: 10^5 steps)
        self._columns = tuple(np.ascontiguousarray(tab[c][back]) for c in
                              ("name", "kind", "lane", "start", "stop", "prov"))
        self._steps = [pieces.steps[k] for k in listed[back].tolist()]
        self._begin = np.ascontiguousarray(pieces.begin[listed][back])
        self._end = np.ascontiguousarray(pieces.end[listed][back])

    def __len__(self):
        return len(self._steps)

    def __getitem__(self, k):
        if isinstance(k, slice):
            lo, hi, step = k.indices(len(self))
            if step == 1:
                return self._rows(lo, max(lo, hi))
            return [self[i] for i in range(lo, hi, step)]
        n = len(self)
        if not -n <= k < n:
            raise IndexError("path row out of range")
        return self._rows(k % n, k % n + 1)[0]

    def __iter__(self):
        for lo in range(0, len(self), 4096):
            yield from self._rows(lo, min(lo + 4096, len(self)))

    def _rows(self, lo, hi):
        """The rows ``lo`` to ``hi``: each column's slice as Python values at once."""
        name, kind, lane, start, stop, prov = (c[lo:hi].tolist() for c in self._columns)
        names, kinds, lanes, provs = self._names, self._kind_names, self._lanes, self._provs
        return [{"name": names[nm], "kind": kinds[kd], "lane": lanes[ln] if lanes else "",
                 "start_ns": a, "stop_ns": b, "provenance": provs[pv] or "", "via": st.via,
                 "on_path_ns": [p, q]}
                for nm, kd, ln, a, b, pv, st, p, q in zip(
                    name, kind, lane, start, stop, prov, self._steps[lo:hi],
                    self._begin[lo:hi].tolist(), self._end[lo:hi].tolist())]


SHUTDOWN_KINDS = (ItemKind.META, ItemKind.MESSAGE, ItemKind.COPY, ItemKind.FILL,
                  ItemKind.DEP_PART)
SHUTDOWN_NAMES = 5  # the kinds of work named


def shutdown_tail(source, start, end, on_path_ns, ended=None):
    """What the runtime did after the program's top-level task ended (``start``; a window's
    start where it ended before, at ``ended``) until the run's end: its meta-tasks, messages,
    copies … by name (how many, processor time within the tail, the busiest first), and per
    source line how many of them, and of the instances deleted then, were that line's (the
    clean-up of what the line made)."""
    names = np.asarray(source.names, object)
    count, busy, lines = {}, {}, {}
    kinds = [int(k) for k in SHUTDOWN_KINDS]
    for p in source.item_parts():
        it = p.model.items
        sel = np.flatnonzero(np.isin(it["kind"], kinds) & (it["stop"] > start)
                             & (it["start"] < end))
        if len(sel) == 0:
            continue
        held = (np.minimum(it["stop"][sel], end) - np.maximum(it["start"][sel], start))
        nm = p.names(sel)
        for k, c in zip(*unique_with(nm, counts=True)):
            count[int(k)] = count.get(int(k), 0) + int(c)
        for k, v in _sums_in_order(nm, held.astype(np.int64)).items():
            busy[k] = busy.get(k, 0) + v
        freed = np.flatnonzero((it["kind"] == ItemKind.INSTANCE) & (it["stop"] > start)
                               & (it["stop"] <= end))  # (instances the clean-up deleted)
        for sel_ in (sel, freed):
            pv = p.provenances(sel_)
            for k, c in zip(*unique_with(pv[pv != 0], counts=True)):
                lines[int(k)] = lines.get(int(k), 0) + int(c)
    top = sorted(busy, key=lambda k: -busy[k])
    return {"start_ns": int(start), "ns": int(end - start), "on_path_ns": int(on_path_ns),
            "ended_ns": int(start if ended is None else ended),
            "work": [{"name": str(names[k]), "count": count[k], "busy_ns": int(busy[k])}
                     for k in top[:SHUTDOWN_NAMES]],
            "items": int(sum(count.values())), "busy_ns": int(sum(busy.values())),
            "lines": {source.provenances[k]: v for k, v in
                      sorted(lines.items(), key=lambda kv: -kv[1])}}


def linked_items(source):
    """Every item with a critical row: name, kind, lane, start, stop, via, predecessor; lane
    by lane in time order (not the order a model stores its items in: a run built from its
    logs, rank by rank, and reopened from the cache, stacked, list them alike)."""
    from legate_prof.causality.critical_links import NO_ROW, VIA
    links = source.critical_links()
    ids = np.flatnonzero(links.items.via != NO_ROW)
    tab = item_table(source, ids)
    target = links.items.target[ids]
    pred = item_table(source, np.maximum(target, 0))
    names = source.names
    name_ids = unique_values(np.concatenate([tab["name"], pred["name"]]))
    by_text = np.empty(len(name_ids), np.int64)  # (a name's place among the names' texts)
    by_text[sorted(range(len(name_ids)), key=lambda k: names[int(name_ids[k])])] = \
        np.arange(len(name_ids))

    def text_rank(col):
        return by_text[np.searchsorted(name_ids, col)]
    has_pred = target >= 0
    order = np.lexsort([np.where(has_pred, c, -1) for c in (
        text_rank(pred["name"]), pred["stop"], pred["start"], pred["lane"])] + [
        links.items.via[ids], tab["kind"], text_rank(tab["name"]), tab["stop"], tab["start"],
        tab["lane"]])
    ids, has_pred = ids[order], has_pred[order]
    tab, pred = ({c: v[order] for c, v in t.items()} for t in (tab, pred))
    lanes = source.info().lanes
    kind_names = {int(k): k.name.lower() for k in ItemKind}
    preds = [None] * len(ids)
    for k in np.flatnonzero(has_pred).tolist():
        preds[k] = {"name": names[int(pred["name"][k])], "lane": lanes[int(pred["lane"][k])].long,
                    "start_ns": int(pred["start"][k]), "stop_ns": int(pred["stop"][k])}
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
