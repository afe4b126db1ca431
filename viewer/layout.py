"""Vertical layout of the lane tree: which rows exist, where they sit, what is expanded.

Pure Python over the model's lane table (no Qt), so it is cheap to rebuild on every
expand/collapse and easy to test.
"""

from __future__ import annotations

from dataclasses import dataclass

from legate_prof.kinds import GROUP_TITLE

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


class LaneLayout:
    """Rank headers, then per group a summary row and (when expanded) one block per lane."""

    def __init__(self, model, expanded=None):
        self.model = model
        self.expanded = set(expanded or ())  # {(rank, group)}
        self.hidden_ranks = set()
        self.entries = []
        self.rebuild()

    @classmethod
    def default(cls, model, expand_kinds=None, max_lanes=48):
        """Expand everything when it fits; else only the kinds asked for."""
        ranks = sorted(set(model.lanes["rank"].tolist()))
        pairs = [(r, g) for r in ranks for g, _ in model.groups_present(r)]
        if expand_kinds:
            expanded = {(r, g) for r, g in pairs if g in expand_kinds}
        elif model.n_lanes <= max_lanes:
            # memories with hundreds of stacked instances would crowd out everything else
            expanded = {(r, g) for r, g in pairs
                        if int(model.lanes["rows"][model.lanes_of(g, r)].max()) <= 12}
        else:
            expanded = set()
        return cls(model, expanded)

    def rebuild(self):
        m = self.model
        ranks = sorted(set(m.lanes["rank"].tolist()))
        out = []
        y = 0.0
        if len(ranks) > 1:
            out.append(Entry("header", f"All ranks ({len(ranks)})", y, HEADER_H))
            y += HEADER_H
            for g, title in m.groups_present():
                out.append(Entry("summary", title, y, SUMMARY_H, rank=None, group=g))
                y += SUMMARY_H
        for r in ranks:
            if r in self.hidden_ranks:
                continue
            out.append(Entry("header", f"Rank {r}", y, HEADER_H, rank=r))
            y += HEADER_H
            for g, title in m.groups_present(r):
                lanes = m.lanes_of(g, r)
                exp = (r, g) in self.expanded
                label = f"{title} ({len(lanes)})" if len(lanes) > 1 else title
                out.append(Entry("summary", label, y, SUMMARY_H, rank=r, group=g,
                                 expanded=exp))
                y += SUMMARY_H
                if exp:
                    for L in lanes.tolist():
                        rows = max(int(m.lanes["rows"][L]), 1)
                        h = rows * ROW_H
                        out.append(Entry("lane", m.lanes["name"][L], y, h, rank=r, group=g,
                                         lane=L, rows=rows))
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
        return GROUP_TITLE[group]
