"""Search results grouped by rank: every rank with a match has its row and its count (no cap
hides a rank); a rank's first results are listed when it is opened, the rest are highlighted
in the timeline."""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtWidgets

from legate_prof.present.units import format_ns
from legate_prof.query import KIND_WORDS, ItemKind, kinds_counted

PER_RANK = 200  # results listed under one rank (all of them are highlighted)
OPEN_RANKS = 8  # with up to this many ranks matching, all are opened at once
ITEM_ROLE = QtCore.Qt.ItemDataRole.UserRole
LISTED_FIRST = np.full(256, 2, np.int64)  # by kind: the order results are listed in
LISTED_FIRST[[int(ItemKind.TASK), int(ItemKind.GPU_KERNEL)]] = 0
LISTED_FIRST[int(ItemKind.APP_CALL)] = 1
RANK_ROLE = QtCore.Qt.ItemDataRole.UserRole + 1


def lanes_of_items(source, ids):
    """The lane of each item id: items are numbered lane by lane, so the lanes' item ranges
    give it in one search (numpy over the lanes, not per item; no lane is stacked for it)."""
    lanes = source.outline().lanes
    lo = np.array([source.lane_item_range(x.lane)[0] for x in lanes], np.int64)
    order = np.argsort(lo, kind="stable")
    k = np.searchsorted(lo[order], np.asarray(ids, np.int64), side="right") - 1
    return order[np.clip(k, 0, len(order) - 1)] if len(order) else np.zeros(len(ids), int)


def ranks_of_items(source, ids):
    """The rank of each item id (``lanes_of_items``)."""
    rank = np.array([x.rank for x in source.outline().lanes], np.int64)
    return rank[lanes_of_items(source, ids)]


def group_by_rank(source, hits):
    """{rank: its hits} of sorted item ids, ranks in order (numpy over the hits: what a
    search's thread hands the results list)."""
    if len(hits) == 0:
        return {}
    ranks = ranks_of_items(source, hits)
    return {r: hits[ranks == r] for r in np.unique(ranks).tolist()}


def result_lines(source, ids):
    """[(the line listing a result, its id)] of the first ``PER_RANK`` of ``ids``, tasks
    (and GPU kernels) first, then the application calls, then the rest (a line's search
    listed two "Profiler Response" items above its task: a GUI walk); each an item's
    title, 65 µs: a search's thread makes those of the ranks opened at once."""
    lanes = source.outline().lanes
    listed = np.asarray(ids)
    kinds = source.items_columns(listed, ["kind"])["kind"] if len(listed) else np.zeros(0, int)
    first = np.argsort(LISTED_FIRST[np.asarray(kinds, np.int64)], kind="stable")[:PER_RANK]
    listed, kinds = listed[first], np.asarray(kinds)[first].tolist()
    out = []
    for i, L, k in zip(listed.tolist(), lanes_of_items(source, listed).tolist(), kinds):
        lane = lanes[L]  # (its lane, not its row: no lane is stacked to list a result)
        what = KIND_WORDS.get(k, "")  # (a task and the application call it made read alike)
        out.append((f"{source.item_title(i)}{f' · {what}' if what else ''}"
                    f"  @ {format_ns(source.item_extent(i)[0])}  ({lane.short}: {lane.long})",
                    i))
    return out


def kinds_in_words(source, hits):
    """What the hits are, most first ("58 tasks, 58 application calls"): a task's name is
    often its application call's too, and a count of both read as twice ``stats``'s."""
    if len(hits) == 0:
        return ""
    counts = np.bincount(np.asarray(source.items_columns(hits, ["kind"])["kind"], np.int64))
    return kinds_counted({k: int(counts[k]) for k in np.flatnonzero(counts).tolist()})


def opened_lines(source, groups):
    """{rank: ``result_lines``} of the ranks a results list opens at once (all of them
    where there are at most ``OPEN_RANKS``)."""
    if len(groups) > OPEN_RANKS:
        return {}
    return {r: result_lines(source, ids) for r, ids in groups.items()}


class SearchResults(QtWidgets.QTreeWidget):
    """One row per rank ("Rank 3 — 306 matches"), its results beneath."""

    def __init__(self):
        super().__init__()
        self.setHeaderHidden(True)
        self.setUniformRowHeights(True)
        self.itemExpanded.connect(self._fill)
        self.source = None
        self._by_rank = {}
        self._lines = {}  # rank -> its listing, made by the search's thread
        self.counts = {}  # rank -> matches

    def clear_results(self):
        self.clear()
        self._by_rank = {}
        self._lines = {}
        self.counts = {}

    def show_results(self, source, hits):
        """Group ``hits`` (sorted item ids) by rank; returns {rank: count}."""
        return self.show_groups(source, group_by_rank(source, hits))

    def show_groups(self, source, groups, lines=None):
        """List hits grouped by rank (``group_by_rank``; ``lines``: the listing of ranks
        made elsewhere, ``opened_lines``); returns {rank: count}."""
        self.clear_results()
        self.source = source
        self._lines = dict(lines or {})
        for r, ids in groups.items():
            self._by_rank[r] = ids
            self.counts[r] = int(len(ids))
        for r, n in self.counts.items():
            top = QtWidgets.QTreeWidgetItem([f"Rank {r} — {n:,} match{'es' if n != 1 else ''}"])
            top.setData(0, RANK_ROLE, r)
            top.setChildIndicatorPolicy(
                QtWidgets.QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator)
            self.addTopLevelItem(top)
        if len(self.counts) <= OPEN_RANKS:
            for k in range(self.topLevelItemCount()):
                self.topLevelItem(k).setExpanded(True)
        return dict(self.counts)

    def _fill(self, top):
        """List a rank's first results when it is opened."""
        r = top.data(0, RANK_ROLE)
        if r is None or top.childCount():
            return
        ids = self._by_rank.get(r, np.zeros(0, np.int64))
        lines = self._lines.pop(r, None)
        for text, i in (result_lines(self.source, ids) if lines is None else lines):
            it = QtWidgets.QTreeWidgetItem([text])
            it.setData(0, ITEM_ROLE, i)
            top.addChild(it)
        if len(ids) > PER_RANK:
            more = QtWidgets.QTreeWidgetItem(
                [f"… {len(ids) - PER_RANK:,} more in rank {r} (all highlighted in the "
                 "timeline; refine the search to list them)"])
            more.setFlags(QtCore.Qt.ItemFlag.ItemIsEnabled)
            top.addChild(more)

    def result_items(self):
        """The listed results' item ids, in order (for tests and keyboard walking)."""
        out = []
        for k in range(self.topLevelItemCount()):
            top = self.topLevelItem(k)
            for j in range(top.childCount()):
                i = top.child(j).data(0, ITEM_ROLE)
                if i is not None:
                    out.append(int(i))
        return out
