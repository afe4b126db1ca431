"""The run's critical path: from the item that ended last, back along what held each item
up, to where the chain stops — a step per item with the part of the timeline it holds.

Walking back from an item at a hand-off time h (when the next item on the path could go on):

* if the item waited (a wait with an event) and resumed by h, the last such wait is what
  held it: the item's piece is [end of that wait, h], and the path goes on to what the wait
  waited for, at the time its event triggered;
* else the item's piece is [its start, h], and the path goes on to its own critical
  predecessor: what it waited for ("event", at that event's trigger time) or the call or
  entry that created it ("creator", at its creation);
* an item that was ready before the item its link names let it go, and that started only
  when an earlier item on its processor (or channel) finished, queued behind that item: the
  path goes on to it ("queued", at the start) — the reference's link knows only events;
* a mapper, runtime or application call, or a GPU kernel, goes on to the task it ran
  inside ("caller", at its start);
* past an event no loaded profile records, the path goes on to the predecessor
  ``inference`` infers ("inferred", at the time it acted);
* the chain stops at an item without a predecessor, or at an unknown event where nothing
  can be inferred ("unknown").

Pieces never overlap: each ends where the next one (later in time) begins, or earlier (a
piece squeezed by two nodes' clocks is empty); what lies between two pieces is time no item
on the path was running (a gap).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from legate_prof.model.kinds import ItemKind
from legate_prof.causality.critical_inputs import (CALL_KINDS, END_KINDS, ENTRY_KINDS, kinds_mask,
                                               last_item)
from legate_prof.causality.critical_links import NO_ROW, VIA, VIA_CREATOR, VIA_EVENT, VIA_UNKNOWN
from legate_prof.causality.link_rules import NOT_LOADED_NOTES

MAX_STEPS = 1_000_000
# how a step goes on to the one before it (``PathStep.via``), and that in words, "later …
# earlier" (the viewer's and the report's walk along the path say it so)
PATH_VIA = ("", "event", "creator", "wait", "queued", "caller", "deallocation", "unknown",
            "inferred")
PATH_VIA_WORDS = {"event": "waited for", "creator": "was created by",
                  "wait": "waited (in one of its waits) for", "queued": "queued behind",
                  "caller": "ran inside", "deallocation": "waited for memory freed by",
                  "inferred": "likely waited for (inferred: an event no profile records)"}
# where the walk starts: the last of these to end (instances and the runtime's operations
# live on to the end without holding anything up)


@dataclass(slots=True)
class PathStep:
    """One item on the run's critical path, and the time it holds there: ``begin_ns`` to
    ``end_ns`` (within its own start and stop).  ``via`` says how the path went on to the
    ``predecessor`` (-1: none): "event", "creator", "wait" (through one of its waits),
    "queued" (behind the item before it on its processor or channel), "caller" (a call or
    kernel to its task), "deallocation", "unknown" (an event no profile records; the chain
    stops) or "" (nothing before it)."""

    item: int
    begin_ns: int
    end_ns: int
    via: str
    predecessor: int
    wait_from_ns: int | None = None  # "wait": the wait the item resumed from, start and end
    wait_to_ns: int | None = None
    # (not frozen: a walk makes one a step, and a frozen dataclass's __init__ costs 3x)


class _Items:
    """One item's columns, asked of its part as the walk needs them (the last few asked
    kept: a step reads its item three times)."""

    COLUMNS = ("kind", "start", "stop", "creator", "ready", "lane")

    def __init__(self, links):
        self.links = links
        self.kept = {}

    def __call__(self, i):
        v = self.kept.get(i)
        if v is None:
            if len(self.kept) > 8:
                self.kept.clear()
            v = self.kept[i] = self.links.row(i, self.COLUMNS)
        return v


_NO_WAIT = np.iinfo(np.int64).min


def steps_as_arrays(steps):
    """The steps as named columns (to keep them: ``steps_of_arrays`` gives them back)."""
    def col(f, default=0):
        return np.array([default if (v := getattr(s, f)) is None else v for s in steps],
                        np.int64)
    return {"item": col("item"), "begin": col("begin_ns"), "end": col("end_ns"),
            "via": np.array([PATH_VIA.index(s.via) for s in steps], np.int8),
            "predecessor": col("predecessor"), "wait_from": col("wait_from_ns", _NO_WAIT),
            "wait_to": col("wait_to_ns", _NO_WAIT)}


def steps_of_arrays(a):
    """``PathStep``s of ``steps_as_arrays`` columns."""
    def opt(v):
        return None if v == _NO_WAIT else v
    return [PathStep(i, b, e, PATH_VIA[v], p, opt(wf), opt(wt)) for i, b, e, v, p, wf, wt in
            zip(*(np.asarray(a[k]).tolist() for k in ("item", "begin", "end", "via",
                                                       "predecessor", "wait_from", "wait_to")))]


def walk_back(links, item=None, limit=MAX_STEPS):
    """The path ending with ``item`` (default: the item that ended last), last step first."""
    col = _Items(links)
    i = links.last if item is None else int(item)
    if i < 0:
        return []
    h = col(i)["stop"]
    steps, seen = [], set()
    queues = LaneQueues(links, col)
    while i >= 0 and len(steps) < limit:
        step, nxt, nh = _step(links, col, i, h)
        step, nxt, nh = queues.behind(step, nxt, nh)
        if step.begin_ns > step.end_ns:  # (two nodes' clocks: a piece never runs backwards)
            step.begin_ns = step.end_ns
        key = (i, step.via, step.wait_from_ns)
        if key in seen:  # (a loop in damaged data: stop where it closes)
            break
        seen.add(key)
        steps.append(step)
        if nxt < 0:
            break
        v = col(nxt)
        lo, hi = v["start"], v["stop"]
        # within the item, and never past this step (clocks of two nodes differ)
        i, h = nxt, min(max(nh, lo), hi, step.begin_ns)
    return steps


def _step(links, col, i, h):
    """(this item's step, the next item back or -1, its hand-off time)."""
    v = col(i)
    start = v["start"]
    w = _last_wait(links, i, h)
    if w >= 0:
        rows = links.waits
        begin = max(int(links.wait_end[w]), start)
        ws, we = int(links.wait_start[w]), int(links.wait_end[w])
        if rows.via[w] == VIA_EVENT and rows.target[w] >= 0:
            return (PathStep(i, begin, h, "wait", int(rows.target[w]), ws, we),
                    int(rows.target[w]), int(rows.trigger[w]))
        guess = links.inferred()[1]
        if rows.via[w] == VIA_UNKNOWN and guess.target[w] >= 0:
            t = int(guess.target[w])
            return PathStep(i, begin, h, "inferred", t, ws, we), t, int(guess.trigger[w])
        return PathStep(i, begin, h, "unknown", -1, ws, we), -1, 0
    if v["kind"] in _CALLER_KINDS:  # a call or kernel: on to the task it ran inside
        caller = int(links.find_entry(np.array([v["creator"]], np.uint64))[0])
        return PathStep(i, start, h, "caller" if caller >= 0 else "", caller), caller, start
    via, target = int(links.items.via[i]), int(links.items.target[i])
    guess = links.inferred()[0]
    if via == VIA_UNKNOWN and guess.target[i] >= 0:
        t = int(guess.target[i])
        return PathStep(i, start, h, "inferred", t), t, int(guess.trigger[i])
    if via == NO_ROW or target < 0:  # (the chain stops: at something no profile read holds?)
        stops = via == VIA_UNKNOWN or int(links.items.note[i]) in NOT_LOADED_NOTES
        name = "unknown" if stops else ("" if via == NO_ROW else VIA[via])
        return PathStep(i, start, h, name, -1), -1, 0
    nh = int(links.items.trigger[i]) if via == VIA_EVENT else int(links.creation[i])
    if via not in (VIA_EVENT, VIA_CREATOR):
        nh = start
    return PathStep(i, start, h, VIA[via], target), target, nh


_CALLER_KINDS = {int(k) for k in (*CALL_KINDS, ItemKind.GPU_KERNEL)}


def _last_wait(links, i, h):
    """The last wait of item ``i`` with a critical row that ended by ``h`` (-1: none)."""
    if not links.waiting[i]:  # (most items have none: no search)
        return -1
    rows = links.waits_of(i)
    if len(rows) == 0:
        return -1
    ok = rows[(links.wait_end[rows] <= h) & (links.waits.via[rows] != NO_ROW)]
    if len(ok) == 0:
        return -1
    return int(ok[np.argmax(links.wait_end[ok])])


class LaneQueues:
    """The item that ran before another on its lane (processors' top-level items, channels'
    copies and fills), found per lane visited (its items sorted by stop once)."""

    QUEUED_KINDS = (*ENTRY_KINDS, ItemKind.COPY, ItemKind.FILL, ItemKind.DEP_PART)

    def __init__(self, links, col=None):
        self.links = links
        self.col = col or _Items(links)
        self.parts = links.parts or []
        self.starts = [p.item_off for p in self.parts]
        self.lanes = {}

    def behind(self, step, nxt, nh):
        """``step`` turned into a queued one when its item was ready before ``nh`` (what
        its link names let it go) and waited for its lane after that."""
        i = step.item
        v = self.col(i)
        if step.via not in ("event", "creator", "inferred", "") or v["kind"] not in _QUEUED:
            return step, nxt, nh
        start = v["start"]
        ready = v["ready"]
        held_until = max(ready, nh) if nxt >= 0 else ready
        j = self._previous(i, v["lane"], held_until, start)
        if j < 0:
            return step, nxt, nh
        return PathStep(i, step.begin_ns, step.end_ns, "queued", j), j, start

    def _previous(self, i, lane, after, before):
        """The item on ``i``'s lane (its part's ``lane``) that stopped last in (after,
        before] (-1: none)."""
        if len(self.parts) == 0:
            return -1
        k = bisect.bisect_right(self.starts, i) - 1
        stops, ids = self._lane(k, lane)
        lo = bisect.bisect_right(stops, after)
        hi = bisect.bisect_right(stops, before)
        for pos in range(hi - 1, lo - 1, -1):  # (the last that is not ``i`` itself)
            j = ids[pos] + self.starts[k]
            if j != i:
                return j
        return -1

    def _lane(self, k, lane):
        key = (k, lane)
        if key not in self.lanes:
            m = self.parts[k].model
            lo, hi = m.lane_range(lane)
            ids = np.arange(lo, hi)
            ids = ids[_queued_mask(m.items["kind"][lo:hi])]
            stops = m.items["stop"][ids]
            o = np.argsort(stops, kind="stable")
            # (Python lists: a walk asks one time a step, where numpy's call costs most)
            self.lanes[key] = (stops[o].tolist(), ids[o].tolist())
        return self.lanes[key]


_QUEUED = {int(k) for k in LaneQueues.QUEUED_KINDS}


def _queued_mask(kind):
    return kinds_mask(kind, LaneQueues.QUEUED_KINDS)
