"""Vertical layout of the lane tree: which rows exist, where they sit, what is expanded.

Pure Python over the model's lane table (no Qt), so it is cheap to rebuild on every
expand/collapse and easy to test.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from legate_prof.present.group_words import group_words
from legate_prof.present.limits import MAX_LANE_H, MAX_LANES_EXPANDED, MAX_ROWS_EXPANDED
from legate_prof.query import GROUP_ORDER, as_source

SUMMARY_H = 3.0  # height of a group's utilization row, in row units
ROW_H = 1.0  # one stacking row of a lane
HEADER_H = 1.2  # "Rank N" / "All ranks" header
# the critical path's summary track (``path_track``), at the top while the path is drawn:
# what its colours mean, the whole run, then a thin row per (rank, lane group) it visits
PATH_LEGEND_H, PATH_ALL_H, PATH_ROW_H = 1.2, 1.0, 1.0


@dataclass
class Entry:
    kind: str  # "header" | "summary" | "lane" | "path" (a row of the path's track)
    label: str
    y: float
    height: float
    rank: int | None = None  # None = all ranks
    group: str | None = None
    lane: int | None = None
    rows: int = 1
    expanded: bool = False
    tooltip: str = ""  # the lane's long name (reference viewer's)
    track_row: object = None  # a "path" row's key in its ``PathTrack`` ("legend", "all", k)

    @property
    def row_h(self):
        """Height of one stacking row: ROW_H, less when the lane's rows are packed."""
        return self.height / max(self.rows, 1) if self.kind == "lane" else self.height


ALL_RANKS = -1  # the "All ranks" block's key among collapsed ranks


def _not_read_words(info, group):
    """What an all-ranks row counts beside the ranks shown: the processors of the group the
    logs read describe on ranks whose logs were not given, idle, as the reference counts
    them (the row read 0.2 where the ranks shown were busier: a review)."""
    n = dict(info.processors_not_read).get(group, 0)
    if not n:
        return ""
    return (f"; it counts {n:,} more processor{'s' if n != 1 else ''} of this kind, idle: "
            "the logs read describe them on ranks whose logs were not given (as Legion Prof "
            "counts every processor the logs describe)")


def busiest_processors(groups):
    """The processor group that ran longest over all ranks (None: no processors): what a
    collapsed rank shows, the same on every rank (the guide's run works on its utility
    processors; its CPUs, first in display order, sat idle)."""
    busy = {}
    for g in groups:
        if g.kind == "processor":
            busy[g.group] = busy.get(g.group, 0) + g.busy_ns
    return max(busy, key=lambda k: (busy[k], -GROUP_ORDER.index(k))) if busy else None


def first_processors(groups, prefer=None):
    """What a collapsed rank still shows: the utilization of its ``prefer`` group
    (``busiest_processors``) where it has it, else of its first processor group (in display
    order; else its first group), so a screen of collapsed ranks compares them."""
    if not groups:
        return []
    return [next((g for g in groups if g.group == prefer),
                 next((g for g in groups if g.kind == "processor"), groups[0]))]


class LaneLayout:
    """Rank headers, then per group a summary row and (when expanded) one block per lane.

    What is shown: ``expanded`` {(rank, group)} lanes open under their group row;
    ``collapsed_ranks`` ranks (``ALL_RANKS`` for the all-ranks block) shown as their header
    only; ``hidden_ranks`` (the rank filter) and ``hidden_groups`` (the kind toggles) left out.
    """

    def __init__(self, model, expanded=None, state=None):
        self.source = as_source(model)
        self.expanded = set(expanded or ())  # {(rank, group)}
        state = state or {}
        self.hidden_ranks = set(state.get("hidden_ranks", ()))
        self.hidden_groups = set(state.get("hidden_groups", ()))
        self.collapsed_ranks = set(state.get("collapsed_ranks", ()))
        self.path_track = None  # the track's rows: [(key, label, tooltip)], or None
        # the track's rows' height in row units: taller where the rows are made a few pixels
        # tall (compact: a GUI walk read its labels over each other, some rows unnamed)
        self.path_scale = 1.0
        # the last "Collapse ranks" (True) or "Expand ranks" (False) asked of it, or None: a
        # profile with more ranks laid out after it does as the user asked of every rank
        self.all_ranks_collapsed = None
        # what was asked of every rank, in order: ("ranks", collapsed) and ("kind", group or
        # None for all, expanded): the ranks a later layout has besides get it too
        # (``ask_again``: the ranks built since those shown so far)
        self.asked = []
        self.entries = []
        self.rebuild()
    @classmethod
    def default(cls, model, expand_kinds=None, max_lanes=MAX_LANES_EXPANDED):
        """Expand everything when it fits; else only the kinds asked for."""
        info = as_source(model).outline()
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

    def state(self) -> dict:
        """What the user chose to show (expanded groups, collapsed ranks, filters), to lay
        out another picture of the same profile the same way (File → Export PNG)."""
        return {"expanded": set(self.expanded), "hidden_ranks": set(self.hidden_ranks),
                "hidden_groups": set(self.hidden_groups),
                "collapsed_ranks": set(self.collapsed_ranks)}

    @classmethod
    def with_state(cls, model, state):
        """A layout of ``state`` (``state()``'s), laid out once (1,000 ranks: 20-25 ms a
        layout, and Export PNG laid its picture out four times)."""
        return cls(model, state.get("expanded"), state)

    def rebuild(self):
        info = self.source.outline()
        ranks = [r for r in info.ranks if r not in self.hidden_ranks]
        out = []
        y = self._path_block(out) if self.path_track else 0.0
        if len(info.ranks) > 1:
            y = self._all_ranks_block(info, out, y)
        groups_of = {}
        for g in info.groups:
            groups_of.setdefault(g.rank, []).append(g)
        busiest = busiest_processors(info.groups)
        for r in ranks:
            groups = [g for g in groups_of.get(r, ()) if g.group not in self.hidden_groups]
            closed = r in self.collapsed_ranks
            out.append(Entry("header", f"Rank {r}", y, HEADER_H, rank=r, expanded=not closed,
                             tooltip=f"Rank {r}: {len(groups)} lane groups "
                                     f"({'collapsed to its busiest processors' if closed else 'shown'})"))
            y += HEADER_H
            for g in (first_processors(groups, busiest) if closed else groups):
                y = self._group_block(info, g, out, y, closed)
        self.entries = out
        self.height = y
        self._tops = [e.y for e in out]
        self._by_key = {(e.kind, e.lane if e.kind == "lane" else (e.rank, e.group)): e
                        for e in out}

    def set_path_track(self, rows):
        """Show the critical path's track at the top (``rows``: [(key, label, tooltip)], as
        ``path_track_rows`` makes them), or not (None)."""
        self.path_track = list(rows) if rows else None
        self.rebuild()

    def _path_block(self, out):
        y = 0.0
        for key, label, tip in self.path_track:
            h = self.path_scale * (PATH_LEGEND_H if key == "legend" else PATH_ALL_H
                                   if key == "all" else PATH_ROW_H)
            out.append(Entry("path", label, y, h, tooltip=tip, track_row=key))
            y += h
        return y

    def path_entries(self):
        """[(track row key, entry)] of the track's rows shown."""
        return [(e.track_row, e) for e in self.entries if e.kind == "path"]

    def _all_ranks_block(self, info, out, y):
        """The "All ranks" header and its summary rows (one per kind present)."""
        closed = ALL_RANKS in self.collapsed_ranks
        n = len(info.ranks)
        hidden = len(set(info.ranks) & self.hidden_ranks)
        label = f"All ranks ({n})" if not hidden else f"All {n} ranks ({n - hidden} below)"
        out.append(Entry("header", label, y, HEADER_H, rank=None, expanded=not closed,
                         tooltip=f"All {n} ranks: one summary per kind"
                                 + (f", of every rank ({hidden} filtered out below)"
                                    if hidden else "")))
        y += HEADER_H
        seen = {}
        for g in info.groups:
            if g.group not in self.hidden_groups:
                seen.setdefault(g.group, g)
        shown = sorted(seen.values(), key=lambda g: GROUP_ORDER.index(g.group))
        for g in (first_processors(shown, busiest_processors(info.groups)) if closed
                  else shown):
            out.append(Entry("summary", g.panel, y, SUMMARY_H, rank=None, group=g.group,
                             tooltip=f"All ranks · {g.panel}: {group_words(g.group, g.title)}"
                             + _not_read_words(info, g.group)))
            y += SUMMARY_H
        return y

    def _group_block(self, info, g, out, y, summary_only=False):
        """A group's summary row and, when expanded (and not ``summary_only``: its rank is
        collapsed), its lanes."""
        r = g.rank
        exp = (r, g.group) in self.expanded and not summary_only
        label = f"{g.panel} ({len(g.lanes)})" if len(g.lanes) > 1 else g.panel
        out.append(Entry("summary", label, y, SUMMARY_H, rank=r, group=g.group,
                         expanded=exp,
                         tooltip=f"Rank {r} · {g.panel}: {group_words(g.group, g.title)}"))
        y += SUMMARY_H
        if exp:
            for L in g.lanes:
                lane = info.lanes[L]
                rows = max(lane.rows, 1)
                h = min(rows * ROW_H, MAX_LANE_H)
                out.append(Entry("lane", lane.short, y, h, rank=r, group=g.group, lane=L,
                                 rows=rows, tooltip=f"Rank {r} · {g.panel} · {lane.short}\n"
                                                    f"{lane.long}"))
                y += h
        return y

    def toggle_rank(self, rank):
        """Collapse a rank to its header and its busiest processors' utilization, or open it
        again (None: the all-ranks block)."""
        key = ALL_RANKS if rank is None else rank
        self.collapsed_ranks ^= {key}
        self.rebuild()

    def set_ranks_collapsed(self, collapsed):
        """Collapse (or open) every rank, the all-ranks block too."""
        info = self.source.outline()
        self.collapsed_ranks = ({ALL_RANKS, *info.ranks} if collapsed else set())
        self.all_ranks_collapsed = bool(collapsed)
        self.asked.append(("ranks", bool(collapsed)))
        self.rebuild()

    def set_kind_expanded(self, group, expanded, rank=None):
        """Open (or close) the lanes of one kind (None: of every kind) on every rank (or
        one)."""
        keys = {(g.rank, g.group) for g in self.source.outline().groups
                if (group is None or g.group == group) and (rank is None or g.rank == rank)}
        self.expanded = self.expanded | keys if expanded else self.expanded - keys
        if rank is None:
            self.asked.append(("kind", group, bool(expanded)))
        self.rebuild()

    def ask_again(self, state, asked, ranks):
        """``state`` (``state()``'s, of this layout's profile) with what another layout of
        some of its ranks was asked of every rank (its ``asked``, in order) done again on
        ``ranks``, the ones it did not hold (the ranks built since those shown so far:
        "Collapse all groups" there closes theirs too); the ranks it held as they are in
        ``state``.  Laid out as ``with_state`` (once)."""
        ranks = set(ranks)
        keys = [(g.rank, g.group) for g in self.source.outline().groups if g.rank in ranks]
        state = dict(state)
        for ask in asked:
            if ask[0] == "ranks":
                state["collapsed_ranks"] = (state["collapsed_ranks"] | ranks if ask[1]
                                            else state["collapsed_ranks"] - ranks)
            else:
                kind, expanded = ask[1], ask[2]
                mine = {k for k in keys if kind is None or k[1] == kind}
                state["expanded"] = (state["expanded"] | mine if expanded
                                     else state["expanded"] - mine)
        return state

    def header_at(self, y):
        """The header of the rank block that holds ``y`` (the all-ranks block's: rank None),
        or None above the first."""
        k = bisect.bisect_right(self._tops, y) - 1
        while k >= 0 and self.entries[k].kind != "header":
            k -= 1
        return self.entries[k] if k >= 0 else None

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
        k = bisect.bisect_right(self._tops, y) - 1
        if k >= 0:
            e = self.entries[k]
            if e.y <= y < e.y + e.height:
                return e
        return None

    def visible(self, y0, y1):
        k = max(bisect.bisect_right(self._tops, y0) - 1, 0)
        end = bisect.bisect_left(self._tops, y1)
        return [e for e in self.entries[k:end] if e.y + e.height > y0 and e.y < y1]

    def find_lane(self, lane):
        return self.lane_entry(lane)

    def lane_entry(self, lane):
        """The lane's row, or None where it is not shown."""
        return self._by_key.get(("lane", lane))

    def summary_entry(self, rank, group):
        """A group's utilization row, or None where it is not shown."""
        return self._by_key.get(("summary", (rank, group)))

    def header_entry(self, rank):
        """A rank's header (None: the all-ranks block's), or None where it is not shown."""
        return self._by_key.get(("header", (rank, None)))

    def path_track_rows(self, track):
        """The rows of a ``path_track.PathTrack``: (key, label, tooltip) each."""
        one = len(self.source.outline().ranks) <= 1
        rows = [("legend", "critical path",
                 "the run's critical path at each moment: which rank and lane group held "
                 "it, coloured by kind (legate_prof critical's split)"),
                ("all", "the whole run", "what kind of work held the path at each moment, on any rank")]
        for k, (rank, group) in enumerate(track.rows):
            title = self.group_title(group)
            rows.append((k, title if one else f"r{rank} · {title}",
                         f"the path on rank {rank}'s {title} lanes, by kind"))
        return rows

    def group_title(self, group):
        return next((g.panel for g in self.source.outline().groups if g.group == group), group)
