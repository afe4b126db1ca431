"""The critical path through the query API: an item's critical predecessor as plain values
(``CriticalLink``), the items that waited for it, and the run's critical path; computed once
per source, on first use (``ProfileSource.prepare_critical_path`` computes it ahead, e.g. in
a thread after the first frame)."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from legate_prof.model.event_tables import EVENT_KIND_NAMES, NO_TIME
from legate_prof.causality.critical_links import NO_ROW, VIA, compute_links, note_text
from legate_prof.causality.run_path import walk_back


@dataclass(frozen=True)
class CriticalLink:
    """What held item ``item`` up: ``via`` "event" (it waited for ``predecessor``'s
    completion, or for an event ``predecessor`` triggered), "creator" (``predecessor``, a
    task, meta-task or the call it was in, created it after every precondition had
    triggered), "unknown_event" (an event no loaded profile records), "unknown_creator" or
    "deallocation" (an instance waited for others to be freed).  ``predecessor`` is None
    where there is no item to link to.  Times in ns, in the logs' clock: ``trigger_ns``
    when the critical event triggered, ``ready_ns`` when the item became ready,
    ``creation_ns`` when it was created (a message: by its sender's clock); ``lag_ns`` =
    ready − trigger (negative across nodes whose clocks differ).  ``note`` is the
    reference's note ("deferred allocation", "unknown creator on node 1", ...)."""

    item: int
    via: str
    predecessor: int | None
    event_kind: str | None
    trigger_ns: int | None
    ready_ns: int
    creation_ns: int
    note: str

    @property
    def lag_ns(self):
        return None if self.trigger_ns is None else self.ready_ns - self.trigger_ns


class CriticalPaths:
    """The critical-path answers of one source, computed once (thread-safe)."""

    def __init__(self, parts_of):
        self._parts_of = parts_of
        self._links = None
        self._path = None  # the run's path (from the item that ended last), once walked
        self._has_event_graph = None  # (kept with a path walked before: ``prime``)
        self._lock = threading.Lock()
        self._walk_lock = threading.Lock()  # (the window's threads ask at once: one walk)

    def links(self):
        with self._lock:
            if self._links is None:
                self._links = compute_links(self._parts_of())
            return self._links

    @property
    def ready(self):
        return self._links is not None

    def predecessor(self, i):
        L = self.links()
        i = int(i)
        if not 0 <= i < L.n_items or L.items.via[i] == NO_ROW:
            return None
        rows = L.items
        target = int(rows.target[i])
        trig = int(rows.trigger[i])
        kind = int(rows.kind[i])
        return CriticalLink(
            item=i, via=VIA[int(rows.via[i])], predecessor=target if target >= 0 else None,
            event_kind=EVENT_KIND_NAMES[kind] if 0 <= kind < len(EVENT_KIND_NAMES) else None,
            trigger_ns=None if trig == NO_TIME else trig,
            ready_ns=int(L.ready([i])[0]), creation_ns=int(L.creation[i]),
            note=note_text(rows, i))

    def successors(self, i):
        return self.links().successors(i)

    def run_path(self, item=None):
        if item is not None:
            return walk_back(self.links(), item)
        with self._walk_lock:
            if self._path is None:
                self._path = walk_back(self.links())
        return self._path

    @property
    def walked(self):
        return self._path is not None

    def prime(self, steps, has_event_graph=None):
        """The run's path as walked before (``store.results``: a command on the same run), and
        whether the links it was walked on had an event graph (None: not known)."""
        self._path = list(steps)
        self._has_event_graph = has_event_graph

    def has_event_graph(self):
        """Whether the profile holds an event graph (the links' ``has_data``): as kept with a
        path walked before, else from the links (computed for it)."""
        known = self._has_event_graph
        return self.links().has_data if known is None else known


__all__ = ["CriticalLink", "CriticalPaths"]
