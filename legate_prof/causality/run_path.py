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
from legate_prof.model.sort_order import lex_order, stable_order

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
    """One item's columns as the walk reads them, ``(kind, start, stop, creator, ready,
    lane)`` as Python ints: read once a step, from the arrays of the part holding it (no
    array work: a walk of 10^5 steps is Python per step)."""

    COLUMNS = ("kind", "start", "stop", "creator", "ready", "lane")

    def __init__(self, links):
        parts = links.parts or []
        self.starts = [p.item_off for p in parts]
        self.columns = [[p.model.items[c] for c in self.COLUMNS] for p in parts]

    def __call__(self, i):
        starts = self.starts
        k = bisect.bisect_right(starts, i) - 1 if len(starts) > 1 else 0
        j = i - starts[k]
        kind, start, stop, creator, ready, lane = self.columns[k]
        return (kind.item(j), start.item(j), stop.item(j), creator.item(j), ready.item(j),
                lane.item(j))


KIND, START, STOP, CREATOR, READY, LANE = range(6)  # (``_Items``' tuple)


class WaitsByEnd:
    """Each item's wait rows that have a critical row, by when they ended (of equal ends,
    the first row first): the last one ended by a time is one search (Python lists: a walk
    asks once a step, where numpy's call costs most)."""

    def __init__(self, links):
        rows = np.flatnonzero(links.waits.via != NO_ROW)
        item = np.asarray(links.wait_item, np.int64)[rows]
        end = np.asarray(links.wait_end, np.int64)[rows]
        o = lex_order((-rows, end, item))
        self.item, self.end, self.row = item[o].tolist(), end[o].tolist(), rows[o].tolist()
        self.waiting = set(self.item)  # (most items have none: no search)

    def last(self, i, h):
        """The last wait row of item ``i`` that ended by ``h`` (-1: none)."""
        if i not in self.waiting:
            return -1
        lo = bisect.bisect_left(self.item, i)
        hi = bisect.bisect_right(self.item, i, lo)
        pos = bisect.bisect_right(self.end, h, lo, hi)
        return self.row[pos - 1] if pos > lo else -1


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
    i = links.last if item is None else int(item)
    if i < 0:
        return []
    col = _Items(links)
    walk = _Walk(links)
    queues = LaneQueues(links)
    v = col(i)
    h = v[STOP]
    steps, seen = [], set()
    while i >= 0 and len(steps) < limit:
        step, nxt, nh = walk.step(i, v, h)
        step, nxt, nh = queues.behind(step, v, nxt, nh)
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
        # within the item, and never past this step (clocks of two nodes differ)
        i, h = nxt, min(max(nh, v[START]), v[STOP], step.begin_ns)
    return steps


class _Walk:
    """A step of the walk: the links' rows read one value at a time (``.item``: a Python
    int, no numpy scalar), the waits searched in ``WaitsByEnd``."""

    def __init__(self, links):
        self.links = links
        self.waits = WaitsByEnd(links) if len(links.wait_item) else None
        rows = links.items
        self.via, self.target = rows.via, rows.target
        self.trigger, self.note = rows.trigger, rows.note

    def step(self, i, v, h):
        """(item ``i``'s step, the next item back or -1, its hand-off time); ``v``: its
        ``_Items`` row, ``h``: when the step after it could go on."""
        links = self.links
        start = v[START]
        w = self.waits.last(i, h) if self.waits is not None else -1
        if w >= 0:
            rows = links.waits
            we = links.wait_end.item(w)
            begin = max(we, start)
            ws = links.wait_start.item(w)
            via, target = rows.via.item(w), rows.target.item(w)
            if via == VIA_EVENT and target >= 0:
                return (PathStep(i, begin, h, "wait", target, ws, we), target,
                        rows.trigger.item(w))
            guess = links.inferred()[1]
            if via == VIA_UNKNOWN and guess.target[w] >= 0:
                t = int(guess.target[w])
                return PathStep(i, begin, h, "inferred", t, ws, we), t, int(guess.trigger[w])
            return PathStep(i, begin, h, "unknown", -1, ws, we), -1, 0
        if v[KIND] in _CALLER_KINDS:  # a call or kernel: on to the task it ran inside
            caller = int(links.find_entry(np.array([v[CREATOR]], np.uint64))[0])
            return PathStep(i, start, h, "caller" if caller >= 0 else "", caller), caller, start
        via, target = self.via.item(i), self.target.item(i)
        if via == VIA_UNKNOWN:
            guess = links.inferred()[0]
            if guess.target[i] >= 0:
                t = int(guess.target[i])
                return PathStep(i, start, h, "inferred", t), t, int(guess.trigger[i])
        if via == NO_ROW or target < 0:  # (the chain stops: at something no profile read holds?)
            stops = via == VIA_UNKNOWN or self.note.item(i) in NOT_LOADED_NOTES
            name = "unknown" if stops else ("" if via == NO_ROW else VIA[via])
            return PathStep(i, start, h, name, -1), -1, 0
        if via == VIA_EVENT:
            nh = self.trigger.item(i)
        elif via == VIA_CREATOR:
            nh = int(links.creation[i])
        else:
            nh = start
        return PathStep(i, start, h, VIA[via], target), target, nh


_CALLER_KINDS = {int(k) for k in (*CALL_KINDS, ItemKind.GPU_KERNEL)}
_QUEUED_VIA = frozenset(("event", "creator", "inferred", ""))


class LaneQueues:
    """The item that ran before another on its lane (processors' top-level items, channels'
    copies and fills), found per lane visited (its items sorted by stop once)."""

    QUEUED_KINDS = (*ENTRY_KINDS, ItemKind.COPY, ItemKind.FILL, ItemKind.DEP_PART)

    def __init__(self, links):
        self.links = links
        self.parts = links.parts or []
        self.starts = [p.item_off for p in self.parts]
        self.lanes = {}

    def behind(self, step, v, nxt, nh):
        """``step`` turned into a queued one when its item (``v``: its ``_Items`` row) was
        ready before ``nh`` (what its link names let it go) and waited for its lane after
        that."""
        if step.via not in _QUEUED_VIA or v[KIND] not in _QUEUED or not self.parts:
            return step, nxt, nh
        i = step.item
        start = v[START]
        ready = v[READY]
        held_until = max(ready, nh) if nxt >= 0 else ready
        j = self._previous(i, v[LANE], held_until)
        if j < 0:
            return step, nxt, nh
        step.via, step.predecessor = "queued", j  # (the step is the walk's own, just made)
        return step, j, start

    def _previous(self, i, lane, after):
        """The item on ``i``'s lane (its part's ``lane``) that stopped last after ``after``
        and by ``i``'s start (-1: none)."""
        starts = self.starts
        k = bisect.bisect_right(starts, i) - 1 if len(starts) > 1 else 0
        found = self.lanes.get((k, lane))
        lo, prev, prev_stop = found if found is not None else self._lane(k, lane)
        off = starts[k]
        j = i - off - lo
        p = prev.item(j)
        return p + off if p >= 0 and prev_stop.item(j) > after else -1

    def _lane(self, k, lane):
        """For one lane of part ``k``, all its items at once: (the lane's first item; for each
        of its items from there, the queued-kind item of the lane, not itself, that stopped
        last by its start, or -1; that one's stop)."""
        m = self.parts[k].model
        lo, hi = m.lane_range(lane)
        ids = lo + np.flatnonzero(_queued_mask(m.items["kind"][lo:hi]))
        prev, prev_stop = np.full(hi - lo, -1, np.int64), np.zeros(hi - lo, np.int64)
        if len(ids):
            stops = m.items["stop"][ids]
            o = stable_order(stops)
            ids, stops = ids[o], stops[o]
            pos = np.searchsorted(stops, m.items["start"][lo:hi], side="right") - 1
            pos[(pos >= 0) & (ids[np.maximum(pos, 0)] == np.arange(lo, hi))] -= 1  # (itself:
            has = pos >= 0  # an empty item stops at its own start; the one before it)
            prev[has], prev_stop[has] = ids[pos[has]], stops[pos[has]]
        self.lanes[(k, lane)] = found = (lo, prev, prev_stop)
        return found


_QUEUED = {int(k) for k in LaneQueues.QUEUED_KINDS}


def _queued_mask(kind):
    return kinds_mask(kind, LaneQueues.QUEUED_KINDS)
