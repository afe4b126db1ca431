"""Which source line each piece of time on the run's critical path counts for.

* a task's, copy's, ... piece: its item's line (a meta-task: its operation's);
* before the program made its first operation on its rank (from the top-level task's start):
  the program's thread running (a launch), a gap, and runtime work of no line count for
  "(program start)" — Python starting, imports, whatever ran before the first line that
  made something;
* after that, the program's thread running: where the array runtime's stream says when each
  operation (and array) was made, the line of the latest one made at or before each instant
  (the piece is cut at those times) — the line the program was at; without the stream, the
  line of the next item on the path that has one (the work it led to);
* a gap (and the wait for an unknown event where the chain stops): the line of the next item
  on the path that has one;
* runtime work of no operation (pipeline stages, messages): the line of the next item on the
  path that has one (the operation the work led to); no line where none comes after it;
* from the end of the program's top-level task on, everything on the path counts for
  "(shutdown)": the runtime cleaning up what the program made, after the program was done.

Without the stream, "the first operation" is the first item Legion created that is not the
top-level task: Legate hands operations to Legion in batches, so this can be later than
the program made it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from legate_prof.assemble.stream_items import RUNTIME_OP_BASE
from legate_prof.model.kinds import ItemKind
from legate_prof.model.sort_order import stable_order, unique_with

PROGRAM_START = -1  # the line id of the time before the program's first operation
SHUTDOWN = -2  # ... and of the time after its top-level task ended
UNKNOWN = -3  # ... and, in the split by line, of the time whose cause is unknown
NO_LINE = 0
PROGRAM_START_TITLE = "(program start)"
SHUTDOWN_TITLE = "(shutdown)"
UNKNOWN_TITLE = "(unknown)"
NO_LINE_TITLE = "(no line)"
TOP_LEVEL_NAMES = ("Toplevel Task", "External Thread")  # the program's own thread
_LEGION_MADE = (ItemKind.TASK, ItemKind.COPY, ItemKind.FILL, ItemKind.DEP_PART)


def line_title(line, provenances):
    """The row name of a line id in the path's split by line."""
    if line == PROGRAM_START:
        return PROGRAM_START_TITLE
    if line == SHUTDOWN:
        return SHUTDOWN_TITLE
    if line == UNKNOWN:
        return UNKNOWN_TITLE
    return provenances[line] if line else NO_LINE_TITLE


class Made(NamedTuple):
    """``operations_made``: what the program made, and when it launched its last operation
    and its first task ended — a window's source is given the run's (``given_window``): cut
    to the window, a wait before the program's last submission beyond it read as its final
    read, and a wait in a window of the loop as the runtime's start-up (``insights``'
    ``blocking``)."""

    times: dict  # {rank: (times, lines)} of what it made, sorted by time
    streamed: set  # the ranks whose runtime stream says what each operation was made for
    submitted: dict  # {rank: when the program submitted its last operation (the stream's)}
    first_task_end: int | None = None  # when the program's first task ended (None: none)


def operations_made(source):
    """``Made``: {rank: (times, lines)}: when the program made each operation or array (the
    runtime's stream; sorted by time), or (without the stream) ([when Legion created its
    first item], [no line]); and when it submitted its last operation, its first task ended."""
    lane_rank = np.array([L.rank for L in source.info().lanes] or [0], np.int64)
    top = np.flatnonzero(np.isin(np.asarray(source.names, object), TOP_LEVEL_NAMES))
    made, legion, submitted, first = {}, {}, {}, []
    for p in source.item_parts():
        it = p.model.items
        if len(it["start"]) == 0:
            continue
        rank = lane_rank[it["lane"].astype(np.int64) + p.lane_off]
        ours = it["op_id"] >= np.uint64(RUNTIME_OP_BASE)
        prov = np.zeros(len(ours), np.int64)  # (the lines of those only: few of all items)
        at = np.flatnonzero(ours)
        prov[at] = p.provenances(at)
        ours &= prov != 0
        not_top = ~np.isin(p.names(), top)
        created = (np.isin(it["kind"], [int(k) for k in _LEGION_MADE]) & ~ours
                   & not_top & (it["create"] > 0))
        tasks = np.isin(it["kind"], [int(ItemKind.TASK), int(ItemKind.GPU_KERNEL)]) & not_top
        first += [int(it["stop"][tasks].min())] if tasks.any() else []
        for r, sel in _by_rank(rank, ours):
            t, ln = made.get(r, ((), ()))
            made[r] = (np.concatenate([t, it["start"][sel]]), np.concatenate([ln, prov[sel]]))
        for r, sel in _by_rank(rank, created):
            t = int(it["create"][sel].min())
            legion[r] = min(t, legion.get(r, t))
        for r, sel in _by_rank(rank, np.asarray(it["kind"]) == int(ItemKind.RUNTIME_OP)):
            t = int(it["start"][sel].max())
            submitted[r] = max(t, submitted.get(r, t))
    out = {r: (np.array([t], np.int64), np.array([NO_LINE], np.int64))
           for r, t in legion.items()}
    for r, (t, ln) in made.items():
        o = stable_order(t)
        out[r] = (np.asarray(t, np.int64)[o], np.asarray(ln, np.int64)[o])
    return Made(out, set(made), submitted, min(first) if first else None)


def run_operations_made(source):
    """``operations_made`` of the run, once a source: a window's source is given the whole
    run's (``critical_path.given_window``: ``computed_once("operations_made")``) — cut to
    the window, the operations made before it and the first one, made after it, were gone,
    and a window of the program's start read "(no line)" where the whole run reads "(program
    start)"."""
    if hasattr(source, "computed_once"):
        return source.computed_once("operations_made", lambda: operations_made(source))
    return operations_made(source)


def _by_rank(rank, mask):
    """(rank, the positions where ``mask`` holds on it, in order) for each rank there, in
    rank order: one sort, not a pass over every item a rank (1,000 ranks of a merged model:
    1.4 s)."""
    at = np.flatnonzero(mask)
    o = stable_order(rank[at])
    at, r = at[o], rank[at][o]
    cut = np.flatnonzero(r[1:] != r[:-1]) + 1
    return [(int(r[a]), at[a:b]) for a, b in zip(np.concatenate(([0], cut)).tolist(),
                                                 np.concatenate((cut, [len(at)])).tolist())
            if b > a]


def program_end(source):
    """When the program's top-level task ended (the last to end, of every rank's), or None:
    what runs after it is the runtime shutting down."""
    ids = np.flatnonzero(np.asarray(source.names, object) == TOP_LEVEL_NAMES[0])
    end = None
    for p in source.item_parts():
        it = p.model.items
        top = np.flatnonzero(np.isin(p.names(), ids) & (it["kind"] == ItemKind.TASK))
        if len(top):
            t = int(it["stop"][top].max())
            end = t if end is None else max(end, t)
    return end


def line_rows(steps, made, shutdown_ns=None):
    """(ns, category, line, item, begin) of every piece of time on the path (``steps``: per
    step in time order ``begin``, ``end``, ``gap`` (before it), ``category``, ``own`` (its
    item's line), ``ahead`` (its or the next step's line), ``rank``, ``item``, and
    ``unknown_ns`` before the first); ``made``: ``operations_made``; from ``shutdown_ns`` on
    (the program's top-level task had ended) every piece is the shutdown's.  Rows of no time
    are left out."""
    s = steps
    n = len(s["begin"])
    if n == 0:
        z = np.zeros(0, np.int64)
        return z, np.zeros(0, object), z, z, z
    cat = np.asarray(s["category"], object)
    launch = cat == "launch"
    a = np.concatenate([s["begin"], s["begin"] - s["gap"], s["begin"][:1] - s["unknown_ns"]])
    b = np.concatenate([s["end"], s["begin"], s["begin"][:1]])
    c = np.concatenate([cat, np.full(n, "gap", object), np.array(["unknown"], object)])
    # the program's thread, and runtime work of no operation, count for the line they led to
    led = launch | (np.asarray(s["own"]) == NO_LINE)
    line = np.concatenate([np.where(led, s["ahead"], s["own"]), s["ahead"], s["ahead"][:1]])
    rank = np.concatenate([s["rank"], s["rank"], s["rank"][:1]])
    item = np.concatenate([s["item"], s["item"], s["item"][:1]])
    lineless = (c == "launch") | (c == "gap") | (c == "unknown") | (
        np.concatenate([s["own"], s["own"], s["own"][:1]]) == NO_LINE)
    ranks, at = unique_with(rank, inverse=True)  # (per rank once, not per row)
    first = np.array([made[0][r][0][0] if r in made[0] else np.iinfo(np.int64).min
                      for r in ranks.tolist()], np.int64)[np.ravel(at)]
    cut = np.where(lineless, np.clip(first, a, b), a)  # before it: the program's start
    rows = [(a, cut, c, np.full(len(a), PROGRAM_START), item),
            *_by_operation(cut, b, c, line, rank, item, made)]
    lo, hi = (np.concatenate([r[k] for r in rows]).astype(np.int64) for k in (0, 1))
    cat_, line_, item_ = (np.concatenate([r[k] for r in rows]) for k in (2, 3, 4))
    line_ = line_.astype(np.int64)
    item_ = item_.astype(np.int64)
    if shutdown_ns is not None:
        lo, hi, cat_, line_, item_ = _shutdown_apart(lo, hi, cat_, line_, item_, shutdown_ns)
    ns = hi - lo
    keep = ns > 0
    return ns[keep], cat_[keep], line_[keep], item_[keep], lo[keep]


def _shutdown_apart(lo, hi, cat, line, item, at):
    """Rows cut at ``at``: the part from it on is the shutdown's (category and line)."""
    split = (lo < at) & (hi > at)
    after = np.flatnonzero(split)
    lo = np.concatenate([lo, np.full(len(after), at, np.int64)])
    hi = np.concatenate([np.where(split, at, hi), hi[after]])
    cat = np.concatenate([cat, cat[after]])
    line = np.concatenate([line, line[after]])
    item = np.concatenate([item, item[after]])
    tail = lo >= at
    cat = np.where(tail & (cat != "unknown"), "shutdown", cat)
    line = np.where(tail, SHUTDOWN, line)
    return lo, hi, cat, line, item


def _by_operation(a, b, c, line, rank, item, made):
    """Rows (from, to, category, line, item) of [a, b]: a launch on a rank the stream
    describes cut where the program made an operation, each part for the line of the latest
    one made by its start; the rest whole."""
    ops, streamed = made[0], made[1]
    mine = (c == "launch") & np.isin(rank, sorted(streamed)) & (b > a)
    rows = [(a, np.where(mine, a, b), c, line, item)]
    for r in sorted(streamed):
        k = np.flatnonzero(mine & (rank == r))
        if len(k) == 0:
            continue
        t, ln = ops[r]
        j0 = np.searchsorted(t, a[k], side="right") - 1  # the latest made by the start
        j1 = np.searchsorted(t, b[k], side="left")  # made strictly before the end
        count = np.maximum(j1 - j0, 1)
        at = np.repeat(k, count)
        j = np.repeat(j0, count) + (np.arange(count.sum()) - np.repeat(np.cumsum(count) - count,
                                                                      count))
        lo = np.maximum(a[at], t[np.clip(j, 0, len(t) - 1)])
        hi = np.minimum(b[at], np.where(j + 1 < len(t), t[np.clip(j + 1, 0, len(t) - 1)],
                                        b[at]))
        rows.append((lo, np.maximum(hi, lo), c[at],
                     np.where(j >= 0, ln[np.clip(j, 0, len(t) - 1)], PROGRAM_START), item[at]))
    return rows
