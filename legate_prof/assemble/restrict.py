"""A profile restricted to some ranks (``--ranks``) or to a time window (``--start/--stop``).

Ranks: where the inputs are one file per rank, only the listed ranks' files are read
(``load.rank_files``); what holds several ranks (a merged bundle) is cut here, lane by lane.
Window: the reference's trim (``State::trim_time_range``): an item that ends before the window
or starts after it is gone, the others are cut to it — here its waits too (the reference
leaves waits and a message's spawn unshifted, and panics on the statistics that follow), and
times keep their place on the timeline (the reference shifts them to start at 0).  Utilization
and busy time are made again from what is left.  A ``RankSet`` is restricted rank by rank:
nothing is merged.
"""

from __future__ import annotations

import numpy as np

from legate_prof.assemble.rank_checks import cross_file_problems
from legate_prof.assemble.utilization import with_utilization
from legate_prof.errors import ProfileError


def _take(model, item_sel, lane_keep=None):
    """``model`` with the items ``item_sel`` (a mask) and, with ``lane_keep``, those lanes
    only (every kept item on a kept lane): waits and transfers follow their items."""
    it = model.items
    new_id = np.cumsum(item_sel) - 1
    items = {c: np.asarray(v)[item_sel] for c, v in it.items()}
    lanes = model.lanes
    if lane_keep is not None:
        lane_id = (np.cumsum(lane_keep) - 1).astype(np.int32)
        items["lane"] = lane_id[items["lane"]]
        lanes = {c: ([x for x, k in zip(v, lane_keep.tolist()) if k] if isinstance(v, list)
                     else np.asarray(v)[lane_keep]) for c, v in model.lanes.items()}
    out = {}
    for name in ("waits", "transfers"):
        table = getattr(model, name)
        if len(table["item"]) == 0:
            out[name] = {c: np.asarray(v) for c, v in table.items()}
            continue
        sel = item_sel[np.asarray(table["item"])]
        out[name] = {c: np.asarray(v)[sel] for c, v in table.items()}
        out[name]["item"] = new_id[out[name]["item"]].astype(table["item"].dtype)
    return items, lanes, out["waits"], out["transfers"]


def keep_ranks(model, wanted):
    """The model of the ranks ``wanted`` of ``model`` (their lanes, items, waits; utilization
    made again), or ``model`` itself where it holds no other."""
    wanted = set(int(r) for r in wanted)
    lane_keep = np.isin(np.asarray(model.lanes["rank"]), sorted(wanted))
    held = {int(r["rank"]) for r in model.ranks}
    # (the processors a log describes on other nodes are not the ranks asked for: the
    # reference's --nodes counts none of them in its "all" lines)
    proc_keep = np.isin(np.asarray(model.procs["rank"]), sorted(wanted))
    if lane_keep.all() and held <= wanted:
        if proc_keep.all() and all(r in wanted for r, _ in model.utilization_steps):
            return model
        return _lines_of(model.evolve(
            procs={c: np.asarray(v)[proc_keep] for c, v in model.procs.items()}), wanted)
    item_sel = lane_keep[np.asarray(model.items["lane"])]
    items, lanes, waits, transfers = _take(model, item_sel, lane_keep)
    ranks = [r for r in model.ranks if int(r["rank"]) in wanted]
    new = model.evolve(items=items, lanes=lanes, waits=waits, transfers=transfers, ranks=ranks,
                       procs={c: np.asarray(v)[proc_keep] for c, v in model.procs.items()},
                       markers=[m for m in model.markers if int(m.get("rank", -1)) in wanted
                                or "rank" not in m],
                       utilization_steps={}, busy_ns={})
    return _lines_of(with_utilization(new), wanted)


def _lines_of(model, wanted):
    """``model`` with the utilization lines of the ranks ``wanted`` only: a listed node's
    fill into an unlisted node's memory made that node a channel line, which the reference's
    --nodes drops ("all (Channel)" 1.0 where it reads 0: a fresh recording's review)."""
    steps = {k: v for k, v in model.utilization_steps.items() if k[0] in wanted}
    return model if len(steps) == len(model.utilization_steps) else \
        model.evolve(utilization_steps=steps)


def _in_window(model, start, stop):
    """(t0, t1, the items of ``model`` a window [``start``, ``stop``] keeps: a mask, or None
    where it holds the whole model)."""
    first, last = model.extent()
    t0 = first if start is None else int(start)
    t1 = last if stop is None else int(stop)
    if t0 <= first and t1 >= last:
        return t0, t1, None
    s, e = np.asarray(model.items["start"]), np.asarray(model.items["stop"])
    return t0, t1, (e >= t0) & (s <= t1)


def within(model, start=None, stop=None):
    """The model cut to [``start``, ``stop``] (ns on the timeline; None: its edge)."""
    t0, t1, item_sel = _in_window(model, start, stop)
    if item_sel is None:
        return model
    items, lanes, waits, transfers = _take(model, item_sel)
    for c in ("start", "stop", "create", "ready"):
        items[c] = np.clip(items[c], t0, t1)
    if len(waits["item"]):
        # each wait within the window and within its item as cut: a wait Legion recorded
        # from before its task began (TaskWaitInfo 19.7 us before its task, in mpi2) outlasted
        # the item the window cut, and its running time read -29.855 us (a review)
        owner = np.asarray(waits["item"], np.int64)
        lo = np.maximum(items["start"][owner], t0)
        hi = np.minimum(items["stop"][owner], t1)
        for c in ("start", "ready", "end"):
            waits[c] = np.clip(waits[c], lo, np.maximum(hi, lo))
        keep = waits["end"] > waits["start"]
        waits = {c: v[keep] for c, v in waits.items()}
    new = model.evolve(items=items, lanes=lanes, waits=waits, transfers=transfers,
                       markers=[m for m in model.markers if t0 <= int(m.get("time", t0)) <= t1],
                       utilization_steps={}, busy_ns={})
    return with_utilization(new)


def window_ids(profile, start=None, stop=None):
    """Each item's id in ``restrict(profile, start=start, stop=stop)`` by its id in
    ``profile`` (-1: cut away): what ``within`` keeps of each model, in their order."""
    from legate_prof.assemble.rank_set import RankSet
    models = profile.rank_models() if isinstance(profile, RankSet) else [profile]
    out, at = [], 0
    for m in models:
        keep = _in_window(m, start, stop)[2]
        keep = np.ones(m.n_items, bool) if keep is None else keep
        ids = np.full(len(keep), -1, np.int64)
        ids[keep] = at + np.arange(int(np.count_nonzero(keep)))
        at += int(np.count_nonzero(keep))
        out.append(ids)
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def restrict(profile, ranks=None, start=None, stop=None):
    """``profile`` (a model or a ``RankSet``) restricted to ``ranks`` and to [start, stop].
    ``ProfileError`` when none of ``ranks`` is in it.  The warnings about the set of files are
    those of the ranks asked for (no "rank 3 missing" when only 0-1 were asked)."""
    from legate_prof.assemble.rank_set import RankSet
    if ranks is None and start is None and stop is None:
        return profile
    ranked = isinstance(profile, RankSet)
    models = profile.rank_models() if ranked else [profile]
    out = []
    for m in models:
        if ranks is not None:
            if not {int(r["rank"]) for r in m.ranks} & set(ranks) and \
                    not np.isin(np.asarray(m.lanes["rank"]), sorted(ranks)).any():
                continue
            m = keep_ranks(m, ranks)
        if start is not None or stop is not None:
            m = within(m, start, stop)
        out.append(m)
    if not out:
        raise ProfileError(", ".join(map(str, profile.sources[:3])) or "<inputs>",
                           f"holds none of the ranks asked for ({format_rank_list(ranks)})")
    kept = RankSet(out) if len(out) > 1 else out[0]
    warnings = list(profile.warnings)
    if ranks is not None:
        before = profile.summary_model().ranks if ranked else profile.ranks
        after = [r for m in out for r in m.ranks]
        known = set(cross_file_problems(before)) | set(cross_file_problems(after))
        warnings = [w for w in kept.warnings if w not in known] + cross_file_problems(
            after, ranks)
        absent = sorted(set(ranks) - {int(r["rank"]) for r in after})
        if absent:
            warnings.append(f"warning: --ranks {format_rank_list(ranks)}: no input holds rank "
                            f"{format_rank_list(absent)}")
    return kept.evolve(sources=profile.sources, errors=profile.errors, warnings=warnings)


def format_rank_list(ranks):
    from legate_prof.present.ranks import format_ranks
    return format_ranks(ranks)
