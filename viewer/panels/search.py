"""Search results grouped by rank: every rank with a match has its row and its count (no cap
hides a rank); a rank's first results are listed when it is opened, the rest are highlighted
in the timeline."""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtWidgets

from legate_prof.present.units import format_ns

PER_RANK = 200  # results listed under one rank (all of them are highlighted)
OPEN_RANKS = 8  # with up to this many ranks matching, all are opened at once
ITEM_ROLE = QtCore.Qt.ItemDataRole.UserRole
RANK_ROLE = QtCore.Qt.ItemDataRole.UserRole + 1


def ranks_of_items(source, ids):
    """The rank of each item id: items are numbered lane by lane, so the lanes' item
    ranges give it in one search (numpy over the lanes, not per item)."""
    lanes = source.info().lanes
    lo = np.array([source.lane_item_range(x.lane)[0] for x in lanes], np.int64)
    rank = np.array([x.rank for x in lanes], np.int64)
    order = np.argsort(lo, kind="stable")
    k = np.searchsorted(lo[order], np.asarray(ids, np.int64), side="right") - 1
    return rank[order][np.clip(k, 0, len(order) - 1)]


def group_by_rank(source, hits):
    """{rank: its hits} of sorted item ids, ranks in order (numpy over the hits: what a
    search's thread hands the results list)."""
    if len(hits) == 0:
        return {}
    ranks = ranks_of_items(source, hits)
    return {r: hits[ranks == r] for r in np.unique(ranks).tolist()}


class SearchResults(QtWidgets.QTreeWidget):
    """One row per rank ("Rank 3 — 306 matches"), its results beneath."""

    def __init__(self):
        super().__init__()
        self.setHeaderHidden(True)
        self.setUniformRowHeights(True)
        self.itemExpanded.connect(self._fill)
        self.source = None
        self._by_rank = {}
        self.counts = {}  # rank -> matches

    def clear_results(self):
        self.clear()
        self._by_rank = {}
        self.counts = {}

    def show_results(self, source, hits):
        """Group ``hits`` (sorted item ids) by rank; returns {rank: count}."""
        return self.show_groups(source, group_by_rank(source, hits))

    def show_groups(self, source, groups):
        """List hits grouped by rank (``group_by_rank``); returns {rank: count}."""
        self.clear_results()
        self.source = source
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
        src = self.source
        lanes = src.info().lanes
        for i in ids[:PER_RANK].tolist():
            lane = lanes[src.item_lane(i)[0]]
            it = QtWidgets.QTreeWidgetItem(
                [f"{src.item_title(i)}  @ {format_ns(src.item_extent(i)[0])}"
                 f"  ({lane.short}: {lane.long})"])
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
