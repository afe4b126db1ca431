"""The lane tree: ranks, lane groups and lanes in display order, named as the reference
viewer names them (``c0``, ``g0d``, ``n0s0-n0f1``; long names for tooltips), with the time
range and what went wrong reading the profile.  Computed once per profile."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from legate_prof.model.kinds import GROUP_KEYS, GROUP_TITLE, GROUPS, MEMORY_GROUPS, PROCESSOR_GROUPS
from legate_prof.present.ranks import format_ranks
from legate_prof.read.runtime_stream import of_a_live_run

class RowCounts:
    """The lanes' row counts (the rows their items stack into), read from the model's lanes
    when first asked: counting them is a pass over every item (0.1 s of the guide's 10 M
    example), which the commands that only name lanes — ``critical``, ``insights`` — never
    ask for."""

    def __init__(self, lanes):
        self._lanes = lanes
        self._counts = None

    def __getitem__(self, lane):
        if self._counts is None:
            self._counts = self._lanes["rows"].tolist()
        return self._counts[lane]


@dataclass(frozen=True)
class LaneInfo:
    """One lane: ``short`` as the reference names it (``c0``, ``g0d``, ``n0s0-n0f1``),
    ``long`` for tooltips (``Node 0 CPU 1 Processor(0x…)``); ``rows``: the rows its items
    stack into (counted when first asked: ``RowCounts``)."""

    lane: int
    rank: int
    group: str
    panel: str
    short: str
    long: str
    capacity: int  # bytes for memories, 0 when unknown or not a memory
    counts: RowCounts = field(repr=False, compare=False)

    @property
    def rows(self) -> int:
        return int(self.counts[self.lane])


@dataclass(frozen=True)
class GroupInfo:
    rank: int
    group: str
    panel: str
    title: str  # display title (e.g. "CPU")
    kind: str  # "processor" | "memory" | "channel" | "other"
    lanes: tuple  # lane ids, in display order
    capacity: int  # processors: lane count; memories: bytes (0 = unknown)
    busy_ns: int = 0  # processors: time their lanes ran, summed (waits left out)


@dataclass(frozen=True)
class ProfileInfo:
    ranks: tuple  # rank numbers
    groups: tuple  # GroupInfo, rank by rank, in display order
    lanes: tuple  # LaneInfo indexed by lane id
    time_range: tuple  # (t0, t1) ns, the initial view
    warnings: tuple  # strings
    errors: tuple  # strings: inputs that could not be read
    sources: tuple  # input paths
    markers: tuple  # dicts: time, rank, kind, title, fields
    n_items: int
    legion_version: str = ""
    timeline_missing: str = ""  # why there is no Legion timeline (a crashed run), or ""
    # what a user comparing boxes across nodes must know (clock skew, a congested network:
    # ``causality.message_latency``), one plain sentence each
    notices: tuple = ()
    # ranks whose records were read, with lanes or without (a log cut before its timeline
    # has none): what ``stats`` counts
    ranks_read: int = 0
    # (group, how many) of the processors of ranks whose logs were not read that the group's
    # all-ranks line counts, idle (``TraceModel.idle_processors_counted``)
    processors_not_read: tuple = ()


def describe(m) -> ProfileInfo:
    """The lane tree of a model: its ranks, lane groups and lanes in display order, named as
    the reference viewer names them, with the time range and what went wrong reading it."""
    L = m.lanes
    group = [GROUP_KEYS[int(g)] for g in L["group"].tolist()]
    rank = L["rank"].tolist()
    counts = RowCounts(L)
    lanes = [LaneInfo(lane=i, rank=int(r), group=g, panel=GROUP_TITLE[g], short=short,
                      long=long, capacity=int(cap), counts=counts)
             for i, (g, r, short, long, cap) in enumerate(zip(
                 group, rank, L["name"], L["title"], L["capacity"].tolist()))]
    # groups in display order: rank by rank, groups in GROUPS order, lanes by short name
    groups = []
    by_group = {}
    for x in lanes:
        by_group.setdefault((x.rank, x.group), []).append(x.lane)
    for r in sorted(set(rank)):
        for gi, gk in enumerate(GROUP_KEYS):
            ids = by_group.get((r, gk))
            if not ids:
                continue
            ids.sort(key=lambda j: _natural(lanes[j].short))
            if gk in PROCESSOR_GROUPS:
                kind, cap = "processor", len(ids)
            elif gk in MEMORY_GROUPS:
                kind, cap = "memory", sum(lanes[j].capacity for j in ids)
            elif gk == "channel":
                kind, cap = "channel", 0
            else:
                kind, cap = "other", 0
            groups.append(GroupInfo(rank=r, group=gk, panel=GROUP_TITLE[gk],
                                    title=GROUPS[gi][1], kind=kind, lanes=tuple(ids),
                                    capacity=cap, busy_ns=int(m.busy_ns.get((r, gk), 0))))
    return ProfileInfo(
        ranks=tuple(sorted(set(rank))), groups=tuple(groups), lanes=tuple(lanes),
        time_range=tuple(m.time_range()), warnings=tuple(str(w) for w in m.warnings),
        errors=tuple(getattr(m, "errors", ()) or ()), sources=tuple(m.sources),
        markers=tuple(m.markers), n_items=m.n_items,
        ranks_read=len(set(rank) | {int(r["rank"]) for r in m.ranks if "rank" in r}),
        timeline_missing=why_timeline_missing(m, group),
        processors_not_read=tuple(sorted(m.idle_processors_counted().items())),
        legion_version=next((r["legion_version"] for r in m.ranks
                             if r.get("legion_version")), ""))

def why_timeline_missing(m, groups):
    """A run seen only through the runtime's event stream has no processor lanes:
    Legion writes its own log at shutdown, which a crashed run never reaches."""
    if any(g in PROCESSOR_GROUPS for g in groups):
        return ""
    errs = list(getattr(m, "errors", ()) or ())
    marks = [mk.get("title", "") for mk in m.markers if mk.get("title")]
    ranks = m.ranks
    stream = "; shown: the runtime's event stream" if any(
        "runtime_end_ns" in r for r in ranks) else ""
    # a run still being written has not reached its shutdown yet; a crashed one never will
    live = of_a_live_run(m.warnings)
    never = "which a run still going has not reached yet" if live else \
        "which a crashed run never reaches"
    if any(r.get("format_version") for r in ranks):  # a Legion log, cut before its timeline
        cut = [str(w).split(": ", 2)[-1] for w in m.warnings if "truncated" in str(w)]
        why = (f"the Legion Prof log holds no timeline records (Legion writes them at "
               f"shutdown, {never})" + (f"; {cut[0]}" if cut else "") + stream)
    else:
        why = f"no Legion Prof log was read (Legion writes it at shutdown, {never})" + stream
    if marks:
        # (each rank that ran out has its marker: the first said, the others' ranks named)
        others = sorted({int(mk.get("rank", 0)) for mk in m.markers[1:] if mk.get("title")}
                        - {int(m.markers[0].get("rank", 0))})
        why += f"; the run ended with: {marks[0]}" + (
            f" (and rank {format_ranks(others)} too)" if others else "")
    elif errs:
        why += f"; {errs[0]}"
    return why

def _natural(s):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]
