"""Every item's critical predecessor (``link_rules``), in the profile's item numbering: one
model is linked at once; the ranks of a ``RankSet`` each alone, then what a rank's rows rest
on of the others' records together (``rank_links``: the same rows as linking all at once,
which it falls back to where it cannot tell)."""

from __future__ import annotations

import numpy as np

from legate_prof.causality.critical_inputs import ItemIndex, ProfileEvents, item_timing, last_item
from legate_prof.model.kinds import ItemKind
from legate_prof.causality.event_graph import (build_graph, positions_in_sorted, run_pass,
                                               sorted_unique)
from legate_prof.causality.link_lookups import ItemTables
from legate_prof.causality.link_rules import (NO_ROW, VIA, VIA_CREATOR, VIA_DEALLOCATION,
                                          VIA_EVENT, VIA_UNKNOWN, LinkRows, link_rows,
                                          note_text)
from legate_prof.model.sort_order import equal_runs, stable_order


class CriticalLinks:
    """Every item's critical predecessor (and every wait's), in the profile's item numbering.

    ``items``/``waits`` are ``LinkRows``; ``wait_item``, ``wait_start``, ``wait_ready``,
    ``wait_end`` say which wait each wait row is; ``creation`` is each item's creation time as
    the rules read it; ``has_data`` is False where the profile holds no event graph (no item
    has a row then, as in the reference) and ``cycle`` where the graph has one (every
    precondition is then unknown).  ``inputs`` reads item columns at a few ids
    (``critical_inputs.PartColumns``), ``lookups`` finds items by event (``link_lookups``)."""

    def __init__(self, items, waits, wait_cols, creation, inputs, lookups, graph_size):
        self.items, self.waits = items, waits
        self.inputs, self.lookups = inputs, lookups
        self.last = -1  # the item that ended last (``critical_inputs.last_item``)
        self.parts = inputs.parts  # the profile's item parts
        self.wait_item, self.wait_start = wait_cols["item"], wait_cols["start"]
        self.wait_ready, self.wait_end = wait_cols["ready"], wait_cols["end"]
        self.wait_event = wait_cols["event"]
        self.creation = creation
        self.has_data, self.cycle, self.n_vertices, self.n_edges = graph_size
        self._by_target = None
        self._inferred = None
        self._waiting = None

    @property
    def n_items(self):
        return len(self.items.via)

    def ready(self, ids):
        """When the items ``ids`` became ready (Realm's own time)."""
        return self.inputs.at("ready", ids)

    def values(self, column, ids):
        """An item column at ``ids`` (``kind``, ``start``, ``stop``, ``creator`` …)."""
        return self.inputs.at(column, ids)

    def value(self, column, i):
        """One item's column value (``values`` for a single item, without array work)."""
        return self.inputs.one(column, int(i))

    def row(self, i, columns):
        """One item's values of ``columns`` by name (a walk's step)."""
        return self.inputs.row(int(i), columns)

    def find_entry(self, events):
        """The task, meta-task, message or profiler response each event names (-1: none)."""
        return self.lookups.find(np.asarray(events, np.uint64), "entry")

    def predecessor(self, i):
        """The item ``i`` waited for or was created by (-1: none, or unknown)."""
        return int(self.items.target[int(i)])

    def successors(self, i):
        """Items whose predecessor is ``i``, sorted."""
        if self._by_target is None:
            t = self.items.target
            o = stable_order(t)
            self._by_target = (t[o], o)
        keys, order = self._by_target
        lo, hi = np.searchsorted(keys, [int(i), int(i) + 1])
        return np.sort(order[lo:hi])

    @property
    def waiting(self):
        """Per item, whether it has a wait row (a walk's step skips the search without)."""
        if self._waiting is None:
            w = np.zeros(self.n_items, bool)
            w[np.asarray(self.wait_item, np.int64)] = True
            self._waiting = w
        return self._waiting

    def inferred(self):
        """(items, waits): the predecessor ``inference`` infers for each row the reference
        leaves at an unknown event (``inference.Inferred``: -1 elsewhere), computed once."""
        if self._inferred is None:
            from legate_prof.causality.inference import Inference
            self._inferred = Inference(self).unknown_rows()
        return self._inferred

    def waits_of(self, i):
        """Rows of ``waits`` that belong to item ``i``."""
        lo, hi = np.searchsorted(self.wait_item, [int(i), int(i) + 1])
        return np.arange(lo, hi)

    def chain_back(self, i, limit=1_000_000):
        """``i``, its predecessor, that one's … until an item has none (or a loop)."""
        out, seen = [], set()
        j = int(i)
        while j >= 0 and j not in seen and len(out) < limit:
            out.append(j)
            seen.add(j)
            j = self.predecessor(j)
        return out


def compute_links(parts) -> CriticalLinks:
    """The critical predecessor of every item of ``parts`` (a profile's ``item_parts()``):
    rank by rank where there are several (``rank_links``), else all at once."""
    if len(parts) > 1:
        from legate_prof.causality.critical_inputs import PartColumns
        from legate_prof.causality.rank_links import link_ranks
        got = link_ranks(parts)
        if got is not None:
            links = CriticalLinks(got.items, got.waits, got.wait_cols, got.creation,
                                  PartColumns(parts), got.lookups, got.graph_size)
            links.last = got.last
            return links
    return link_whole(parts)


def link_whole(parts) -> CriticalLinks:
    """``compute_links`` over all of ``parts`` at once: the graph of every rank's records."""
    return _link_at_once(parts)


def link_for_classes(parts, ids) -> CriticalLinks:
    """The rows of the items ``ids`` only (and of the tasks of the GPU kernels among them,
    which ``classify`` reads instead), of ``parts`` linked at once, as far as what held
    each up goes (``analyze.idle_gaps.classes``: its target's kind and lane group): those of
    ``link_whole``, but where that finds the call a task or meta-task was making, the task
    itself — of the same class: a call runs where its caller does and is no message, copy
    or instance.  So only the calls for which that may not hold are looked up: those made
    by a message, those on another lane group than their caller's.  The calls' index and
    its lookups were 0.9 s of the 4 s of ``stats`` on the guide's N = 10 M example (a
    million runtime calls)."""
    return _link_at_once(parts, np.asarray(ids, np.int64))


def _link_at_once(parts, classes_of=None):
    """``link_whole``, or (``classes_of``: item ids) ``link_for_classes``."""
    pe = ProfileEvents(parts)
    index = ItemIndex(pe)
    timing = item_timing(pe, index)
    kept = None if classes_of is None else \
        (lambda calls: _calls_of_another_class(pe, index, calls))
    items = ItemTables.of(pe, index, timing, calls_kept=kept)
    graph = build_graph(pe.events, items.completions, timing.implicit)
    run_pass(graph)
    select = None
    if classes_of is not None:
        kernel = classes_of[pe.item["kind"][classes_of] == ItemKind.GPU_KERNEL]
        task = items.find(pe.item["creator"][kernel].astype(np.uint64), "entry")
        select = sorted_unique(np.concatenate([classes_of, task[task >= 0]]))
    out, waits, _ = link_rows(pe, graph, items, timing, select=select)
    wait_cols = pe.waits if select is None else _no_waits()  # (the rows of no wait: none)
    links = CriticalLinks(out, waits, wait_cols, timing.creation, pe.columns, items,
                          (graph.has_data, graph.cycle, len(graph.events), graph.n_edges))
    links.last = last_item(pe.item)
    pe.release()  # (the links keep ~40 B per item, not a copy of every rank's columns)
    return links


def _no_waits():
    return {"item": np.zeros(0, np.int64), "start": np.zeros(0, np.int64),
            "ready": np.zeros(0, np.int64), "end": np.zeros(0, np.int64),
            "event": np.zeros(0, np.uint64)}


def _calls_of_another_class(pe, index, calls):
    """Which of ``calls`` (item ids) may not be of their caller's class: made by a message,
    or on another lane group than their caller (a caller not found: never asked)."""
    it = pe.item
    # a task's calls name it one after another: each run of one caller looked up once
    head, runs = equal_runs(it["creator"][calls])
    pos, found = positions_in_sorted(index.events, it["creator"][calls[head]])
    caller = np.full(len(head), -1, np.int64)
    if len(index.events):
        caller[found] = index.items[pos[found]]
    known = np.flatnonzero(caller >= 0)
    keep = np.zeros(len(calls), bool)
    if len(known):
        base = int(pe.offsets[0])
        message = np.zeros(len(head), bool)
        message[known] = it["kind"][caller[known]] == ItemKind.MESSAGE
        group = np.full(len(head), -1, np.int64)
        group[known] = pe.lane_group(caller[known] + base)
        at = np.flatnonzero(np.repeat(caller >= 0, runs))
        keep[at] = np.repeat(message, runs)[at] | (
            pe.lane_group(calls[at].astype(np.int64) + base) != np.repeat(group, runs)[at])
    return keep


__all__ = ["CriticalLinks", "compute_links", "link_for_classes", "link_whole", "LinkRows",
           "NO_ROW", "VIA", "VIA_CREATOR", "VIA_DEALLOCATION", "VIA_EVENT", "VIA_UNKNOWN",
           "note_text"]
