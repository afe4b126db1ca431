"""Vertical layout of the lane tree: which rows exist, where they sit, what is expanded.

Pure Python over the model's lane table (no Qt), so it is cheap to rebuild on every
expand/collapse and easy to test.
"""

from __future__ import annotations

from dataclasses import dataclass

from legate_prof.present.limits import MAX_LANE_H, MAX_LANES_EXPANDED, MAX_ROWS_EXPANDED
from legate_prof.query import GROUP_ORDER, as_source

SUMMARY_H = 3.0  # height of a group's utilization row, in row units
ROW_H = 1.0  # one stacking row of a lane
HEADER_H = 1.2  # "Rank N" / "All ranks" header


@dataclass
class Entry:
    kind: str  # "header" | "summary" | "lane"
    label: str
    y: float
    height: float
    rank: int | None = None  # None = all ranks
    group: str | None = None
    lane: int | None = None
    rows: int = 1
    expanded: bool = False
    tooltip: str = ""  # the lane's long name (reference viewer's)

    @property
    def row_h(self):
        """Height of one stacking row: ROW_H, less when the lane's rows are packed."""
        return self.height / max(self.rows, 1) if self.kind == "lane" else self.height


class LaneLayout:
    """Rank headers, then per group a summary row and (when expanded) one block per lane."""

    def __init__(self, model, expanded=None):
        self.source = as_source(model)
        self.expanded = set(expanded or ())  # {(rank, group)}
        self.hidden_ranks = set()
        self.entries = []
        self.rebuild()

    @classmethod
    def default(cls, model, expand_kinds=None, max_lanes=MAX_LANES_EXPANDED):
        """Expand everything when it fits; else only the kinds asked for."""
        info = as_source(model).info()
        pairs = [(g.rank, g.group) for g in info.groups]
        if expand_kinds:
            expanded = {(r, g) for r, g in pairs if g in expand_kinds}
        elif len(info.lanes) <= max_lanes:
            # memories with hundreds of stacked instances would crowd out everything else
            expanded = {(g.rank, g.group) for g in info.groups
                        if max(info.lanes[i].rows for i in g.lanes) <= MAX_ROWS_EXPANDED}
        else:
            expanded = set()
        return cls(model, expanded)

    def rebuild(self):
        info = self.source.info()
        ranks = list(info.ranks)
        out = []
        y = 0.0
        if len(ranks) > 1:
            out.append(Entry("header", f"All ranks ({len(ranks)})", y, HEADER_H))
            y += HEADER_H
            seen = []
            for g in info.groups:
                if g.group not in [s.group for s in seen]:
                    seen.append(g)
            for g in sorted(seen, key=lambda g: GROUP_ORDER.index(g.group)):
                out.append(Entry("summary", g.panel, y, SUMMARY_H, rank=None, group=g.group))
                y += SUMMARY_H
        groups_of = {}
        for g in info.groups:
            groups_of.setdefault(g.rank, []).append(g)
        for r in ranks:
            if r in self.hidden_ranks:
                continue
            out.append(Entry("header", f"Rank {r}", y, HEADER_H, rank=r))
            y += HEADER_H
            for g in groups_of.get(r, ()):
                exp = (r, g.group) in self.expanded
                label = f"{g.panel} ({len(g.lanes)})" if len(g.lanes) > 1 else g.panel
                out.append(Entry("summary", label, y, SUMMARY_H, rank=r, group=g.group,
                                 expanded=exp, tooltip=g.title))
                y += SUMMARY_H
                if exp:
                    for L in g.lanes:
                        lane = info.lanes[L]
                        rows = max(lane.rows, 1)
                        h = min(rows * ROW_H, MAX_LANE_H)
                        out.append(Entry("lane", lane.short, y, h, rank=r, group=g.group,
                                         lane=L, rows=rows, tooltip=lane.long))
                        y += h
        self.entries = out
        self.height = y

    def toggle(self, rank, group):
        key = (rank, group)
        if rank is None:
            return
        if key in self.expanded:
            self.expanded.discard(key)
        else:
            self.expanded.add(key)
        self.rebuild()

    def entry_at(self, y):
        for e in self.entries:
            if e.y <= y < e.y + e.height:
                return e
        return None

    def visible(self, y0, y1):
        return [e for e in self.entries if e.y + e.height > y0 and e.y < y1]

    def find_lane(self, lane):
        for e in self.entries:
            if e.kind == "lane" and e.lane == lane:
                return e
        return None

    def group_title(self, group):
        return next((g.panel for g in self.source.info().groups if g.group == group), group)
