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
import contextlib
import gc
from dataclasses import dataclass

import numpy as np

from legate_prof.model.kinds import ItemKind
from legate_prof.causality.critical_inputs import CALL_KINDS, ENTRY_KINDS, kinds_mask
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
    """The path ending with ``item`` (default: the item that ended last), last step first.

    A walk of 10^5 steps is Python per step: its values are read as Python ints from
    memoryviews (``_Walker``), and the cycle collector waits while it runs."""
    i = links.last if item is None else int(item)
    if i < 0:
        return []
    with _collector_paused():
        return _walk(links, i, limit)


@contextlib.contextmanager
def _collector_paused():
    """Python's cycle collector paused: a walk makes a step object and a tuple or two a step
    and no cycle, and the collections those set off were a fifth of a walk's time."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _walk(links, i, limit):
    """``walk_back`` from item ``i``: a step a turn (the module's notes say the rules), each
    value read as a Python int (``_Walker``)."""
    walker = _Walker(links)
    waits, starts, several = walker.waits, walker.starts, len(walker.starts) > 1
    waiting = waits.waiting if waits is not None else frozenset()
    k = bisect.bisect_right(starts, i) - 1 if several else 0  # (the part holding item i,
    j = i - starts[k]  # and its place there)
    kind_a, start_a, stop_a, creator_a, ready_a, lane_a = walker.columns[k]
    start, h = start_a[j], stop_a[j]
    steps, seen = [], set()
    while i >= 0 and len(steps) < limit:
        wf = wt = None
        w = waits.last(i, h) if i in waiting else -1
        kind = kind_a[j]
        if w >= 0:
            name, nxt, nh, begin, wf, wt = walker.wait_step(w, start)
        else:
            begin = start
            name, nxt, nh = walker.item_step(i, kind, creator_a[j], start)
        if name in _QUEUED_VIA and kind in _QUEUED:
            p = walker.queued_behind(k, j, lane_a[j], ready_a[j], nxt, nh)
            if p >= 0:
                name, nxt, nh = "queued", p, start
        if begin > h:  # (two nodes' clocks: a piece never runs backwards)
            begin = h
        key = (i, name, wf)
        if key in seen:  # (a loop in damaged data: stop where it closes)
            break
        seen.add(key)
        steps.append(PathStep(i, begin, h, name, nxt, wf, wt))
        if nxt < 0:
            break
        i = nxt
        if several:
            k = bisect.bisect_right(starts, i) - 1
            kind_a, start_a, stop_a, creator_a, ready_a, lane_a = walker.columns[k]
        j = i - starts[k]
        start = start_a[j]
        # within the item, and never past this step (clocks of two nodes differ)
        h = min(max(nh, start), stop_a[j], begin)
    return steps


class _Walker:
    """A walk's columns and rows, read a value at a time as Python ints (memoryviews: an
    index ~0.1 us against ``ndarray.item``'s ~0.2, 10^5 steps of a few reads each), and the
    rules of a step that the module's notes give."""

    def __init__(self, links):
        self.links = links
        parts = links.parts or []
        self.parts = parts
        self.starts = [p.item_off for p in parts]
        self.columns = [[_values(p.model.items[c]) for c in _COLUMNS] for p in parts]
        self.waits = WaitsByEnd(links) if len(links.wait_item) else None
        rows = links.items
        self.via, self.target, self.trigger, self.note = (
            _values(a) for a in (rows.via, rows.target, rows.trigger, rows.note))
        self.lanes = {}  # (part, lane) -> ``_lane_table``
        self.callers = {}  # a call's creator event -> the item it ran inside (-1: none)

    def wait_step(self, w, start):
        """(name, next item, hand-off, begin, wait start, wait end) of a step resumed from
        its wait row ``w`` (its item started at ``start``)."""
        links, rows = self.links, self.links.waits
        wt, wf = links.wait_end.item(w), links.wait_start.item(w)
        via, nxt = rows.via.item(w), rows.target.item(w)
        if via == VIA_EVENT and nxt >= 0:
            return "wait", nxt, rows.trigger.item(w), max(wt, start), wf, wt
        guess = links.inferred()[1]
        if via == VIA_UNKNOWN and guess.target[w] >= 0:
            return ("inferred", int(guess.target[w]), int(guess.trigger[w]), max(wt, start),
                    wf, wt)
        return "unknown", -1, 0, max(wt, start), wf, wt

    def item_step(self, i, kind, creator, start):
        """(name, next item, hand-off) of item ``i``'s step through its own link (or, a call
        or kernel, to the task it ran inside)."""
        links = self.links
        if kind in _CALLER_KINDS:
            nxt = self.callers.get(creator)
            if nxt is None:  # (a task's calls name it one after another: looked up once)
                nxt = self.callers[creator] = int(links.find_entry(
                    np.array([creator], np.uint64))[0])
            return ("caller" if nxt >= 0 else ""), nxt, start
        via, nxt = self.via[i], self.target[i]
        if via == VIA_UNKNOWN:
            guess = links.inferred()[0]
            if guess.target[i] >= 0:
                return "inferred", int(guess.target[i]), int(guess.trigger[i])
        if via == NO_ROW or nxt < 0:  # (the chain stops: at something no profile read holds?)
            stops = via == VIA_UNKNOWN or self.note[i] in NOT_LOADED_NOTES
            return ("unknown" if stops else ("" if via == NO_ROW else VIA[via])), -1, 0
        if via == VIA_EVENT:
            return VIA[via], nxt, self.trigger[i]
        return VIA[via], nxt, (int(links.creation[i]) if via == VIA_CREATOR else start)

    def queued_behind(self, k, j, lane, ready, nxt, nh):
        """The item that item ``j`` of part ``k`` queued behind on its ``lane``, ready before
        what its link names let it go (``nxt`` at ``nh``) and waiting for its lane after
        that: the one that stopped last by its start (-1: none)."""
        if not self.parts:
            return -1
        held_until = max(ready, nh) if nxt >= 0 else ready
        found = self.lanes.get((k, lane))
        lo, prev, prev_stop = found if found is not None else self._lane_table(k, lane)
        p = prev[j - lo]
        return p + self.starts[k] if p >= 0 and prev_stop[j - lo] > held_until else -1

    def _lane_table(self, k, lane):
        """For one lane of part ``k``, all its items at once: (the lane's first item; for each
        of its items from there, the queued-kind item of the lane, not itself, that stopped
        last by its start, or -1; that one's stop — memoryviews)."""
        m = self.parts[k].model
        lo, hi = m.lane_range(lane)
        ids = lo + np.flatnonzero(kinds_mask(m.items["kind"][lo:hi], QUEUED_KINDS))
        prev, prev_stop = np.full(hi - lo, -1, np.int64), np.zeros(hi - lo, np.int64)
        if len(ids):
            stops = m.items["stop"][ids]
            o = stable_order(stops)
            ids, stops = ids[o], stops[o]
            pos = np.searchsorted(stops, m.items["start"][lo:hi], side="right") - 1
            pos[(pos >= 0) & (ids[np.maximum(pos, 0)] == np.arange(lo, hi))] -= 1  # (itself:
            has = pos >= 0  # an empty item stops at its own start; the one before it)
            prev[has], prev_stop[has] = ids[pos[has]], stops[pos[has]]
        self.lanes[(k, lane)] = found = (lo, memoryview(prev), memoryview(prev_stop))
        return found


_COLUMNS = ("kind", "start", "stop", "creator", "ready", "lane")  # (what a step reads)


def _values(column):
    """A column whose values a step reads one at a time, as Python ints: a memoryview (an
    index twice as fast as ``ndarray.item``'s), or a list of a column with no buffer."""
    column = np.asarray(column)
    try:
        return memoryview(column)
    except (TypeError, ValueError):  # (no buffer numpy hands out)
        return column.tolist()


_CALLER_KINDS = {int(k) for k in (*CALL_KINDS, ItemKind.GPU_KERNEL)}
_QUEUED_VIA = frozenset(("event", "creator", "inferred", ""))


# the kinds a step may queue behind on its lane (processors' top-level items, channels' copies
# and fills)
QUEUED_KINDS = (*ENTRY_KINDS, ItemKind.COPY, ItemKind.FILL, ItemKind.DEP_PART)
_QUEUED = {int(k) for k in QUEUED_KINDS}
