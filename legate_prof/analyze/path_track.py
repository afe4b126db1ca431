"""The run's critical path as a track a picture can draw at any size: every piece of the run's
time (``critical_path.path_pieces``: the same pieces and kinds ``legate_prof critical``
splits by) with when it was, its kind, and which rank and lane group held it — so a view
too wide to draw 40,000 steps one by one still shows, at each moment, where the path was and
what kind of work held it.  With it, how much of the run the path explains and how much of
that rests on inferred links (``docs/critical_path.md``), in words.

The viewer reads no analysis itself (it reads ``legate_prof.query``): the command line hands
``path_track`` to it, as it hands it the findings.
"""

from __future__ import annotations

import numpy as np

from legate_prof.analyze.critical_path import KINDS, item_table, path_pieces
from legate_prof.model.kinds import GROUP_KEYS
from legate_prof.model.sort_order import stable_order, unique_with
from legate_prof.present.units import format_ns

# kinds no lane holds (as ``critical_path.splits`` counts them): the run's own row only
OWN_KINDS = ("gap", "unknown", "startup", "shutdown")


def path_track(source, steps=None) -> dict:
    """The pieces of ``source``'s run critical path in time order, as columns:
    ``begin``/``end`` (ns), ``kind`` (an index into ``kinds``), ``row`` (an index into
    ``rows``, the (rank, lane group) pairs that hold a piece, by rank then group; -1: no
    lane holds it — a gap, the start-up, the shutdown, the unknown); the run, how much of it
    the path explains, and where it rests on inferred links (``inferred_from_ns``: every
    piece before it is reached only through one; ``resting_ns`` of it), and ``words`` saying
    so."""
    pieces = path_pieces(source, steps)
    ns, cat, _line, item = pieces.pieces()
    begin = np.asarray(pieces.rows[4], np.int64)
    order = stable_order(begin)
    ns, cat, item, begin = (np.asarray(ns, np.int64)[order], np.asarray(cat, object)[order],
                            np.asarray(item, np.int64)[order], begin[order])
    kind_of = {k: i for i, k in enumerate(KINDS)}
    kind = np.array([kind_of.get(c, kind_of["unknown"]) for c in cat.tolist()], np.int8)
    held = ~np.isin(cat, OWN_KINDS) & (item >= 0)
    row = np.full(len(ns), -1, np.int32)
    rows = []
    if held.any():
        uniq, inv = unique_with(item[held], inverse=True)
        lanes = source.info().lanes
        lane = item_table(source, uniq)["lane"].tolist()
        pair = [(lanes[L].rank, lanes[L].group) for L in lane]
        rows = sorted(set(pair), key=lambda rg: (rg[0], _group_order(rg[1])))
        index = {rg: k for k, rg in enumerate(rows)}
        row[held] = np.array([index[rg] for rg in pair], np.int32)[inv]
    run = (int(pieces.run[0]), int(pieces.run[1]))
    resting = pieces.resting_on_inference()
    at = pieces.inferred_from_ns
    # (what rests on the links starts after the unknown time before them: a path that stops
    # at a rank not given leaves the run's first seconds unknown, not inferred)
    unknown = (cat == "unknown") & (begin + ns <= (at if at is not None else run[0]))
    out = {"kinds": list(KINDS), "begin": begin, "end": begin + ns, "kind": kind, "row": row,
           # (the item holding each piece, -1: none — a gap, the start-up, the shutdown,
           # the unknown hold none; its tooltip names it)
           "item": np.where(held, item, -1),
           "rows": rows, "run": run, "run_ns": run[1] - run[0],
           "explained_ns": int(pieces.explained_ns), "steps": len(pieces.steps),
           "inferred_links": len(pieces.inferred),
           "inferred_from_ns": at,
           "resting_from_ns": max(run[0], int((begin + ns)[unknown].max()) if unknown.any()
                                  else run[0]),
           "resting_ns": int(np.asarray(pieces.rows[0])[resting].sum())}
    out["words"] = explained_words(out)
    return out


def _group_order(group):
    return GROUP_KEYS.index(group) if group in GROUP_KEYS else len(GROUP_KEYS)


def explained_words(track) -> str:
    """'explains 247.282 s of the run's 247.282 s (100.0 %); 200.893 s of it (81.2 %),
    everything before 203.210 s, rests on 280 inferred links' ("the path before", where
    unknown time comes first)."""
    run, explained = track["run_ns"], track["explained_ns"]
    share = f" ({100.0 * explained / run:.1f} %)" if run else ""
    out = f"explains {format_ns(explained)} of the run's {format_ns(run)}{share}"
    at, links = track["inferred_from_ns"], track["inferred_links"]
    if at is not None and links:
        rest = track["resting_ns"]
        part = f" ({100.0 * rest / run:.1f} %)" if run else ""
        before = ("everything before" if track.get("resting_from_ns", track["run"][0])
                  <= track["run"][0] else "the path before")
        out += (f"; {format_ns(rest)} of it{part}, {before} {format_ns(at)}, rests "
                f"on {links:,} inferred link{'' if links == 1 else 's'}")
    return out
