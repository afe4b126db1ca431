"""A profile's export tables rank by rank, without a merged model.

A profile of several ranks may be held as one model (all ranks merged) or as the models of its
ranks (per-rank bundles, ranks built by worker processes), which a profile object hands out
through ``item_parts()`` (each rank's model with the offsets that number its items and lanes in
the whole profile) and ``summary_model()`` (lanes, strings, step functions: no items).  The
tables of items (``ITEM_TABLES``) are made one rank at a time, numbered as one merged model
numbers them; the others from the summary.  So a writer holds one rank's model at a time, and a
1,000-rank profile is exported (or queried, through these files) in the memory of one rank.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from legate_prof.export.critical import CriticalTables
from legate_prof.analyze.run_counts import operations_per_line
from legate_prof.export.tables import (CRITICAL_TABLES, ITEM_TABLES, TABLES, iter_table,
                                       provenance_table)
from legate_prof.model.sort_order import unique_values, unique_with


@dataclass
class RankItems:
    """The items of one rank: ``model``'s items [lo, hi), whose item and lane numbers in the
    whole profile are theirs plus ``item_off`` and ``lane_off``."""

    model: object
    lo: int
    hi: int
    item_off: int
    lane_off: int
    rank: int

    def chunks(self, table, chunk_rows):
        """Chunks of one of ``ITEM_TABLES`` for these items, numbered in the whole profile."""
        for chunk in iter_table(self.model, table, chunk_rows, items=(self.lo, self.hi)):
            if self.item_off:
                chunk["item"] = chunk["item"] + self.item_off
            if self.lane_off and "lane" in chunk:
                chunk["lane"] = chunk["lane"] + np.int32(self.lane_off)
            yield chunk


def summary_of(profile):
    """Everything of the profile but its items (the model itself when it is one)."""
    return profile.summary_model() if hasattr(profile, "summary_model") else profile


def merged(profile):
    """The profile as one model, stacked (what the timeline exports read)."""
    model = profile.merged_model() if hasattr(profile, "merged_model") else profile
    return model.as_stacked()


def ranks_of(profile):
    """The ranks that have lanes, in order."""
    return sorted(set(summary_of(profile).lanes["rank"].tolist()))


def by_rank(profile, cut=True):
    """``RankItems`` of each rank, in rank order: one rank's model open at a time (a model of
    several ranks is cut where its lanes, sorted by rank, change rank).  ``cut=False``: a
    model's items whole, whatever ranks it holds (fewer, longer runs of rows, where one file
    or table takes all ranks)."""
    if not hasattr(profile, "item_parts"):
        yield from _cut_by_rank(profile.as_stacked(), 0, 0, cut)
        return
    from legate_prof.assemble.rank_merge import release_pages
    parts = profile.item_parts()
    for part in parts:  # what opening the ranks read (their checks) is not needed until then
        release_pages(part.model)
    for part in parts:
        model = part.model.as_stacked()
        yield from _cut_by_rank(model, int(part.item_off), int(part.lane_off), cut)
        release_pages(part.model)  # a mapped bundle's pages: read, no longer needed here
        del model


def _cut_by_rank(model, item_off, lane_off, cut=True):
    rank = np.asarray(model.lanes["rank"])
    if len(rank) == 0:
        return
    if not cut or np.any(np.diff(rank) < 0):  # (the latter never in a model we build) whole
        yield RankItems(model, 0, model.n_items, item_off, lane_off, int(rank.min()))
        return
    lane = model.items["lane"]
    for r in unique_values(rank).tolist():
        a, b = np.searchsorted(rank, [r, r + 1])
        lo, hi = np.searchsorted(lane, [a, b])
        yield RankItems(model, int(lo), int(hi), item_off, lane_off, int(r))


def whole_tables(profile, chunk_rows):
    """(table, its chunks) of each table that describes the whole profile (not in
    ``ITEM_TABLES``), in ``TABLES`` order; the critical path computed once, over all ranks."""
    critical = CriticalTables(profile)
    for table in TABLES:
        if table not in ITEM_TABLES:
            yield table, whole_table(profile, table, chunk_rows, critical)


def whole_table(profile, table, chunk_rows, critical=None):
    """Chunks of a table that describes the whole profile (not in ``ITEM_TABLES``);
    ``critical``: the profile's ``CriticalTables``, if made already."""
    if table in CRITICAL_TABLES:
        return (critical or CriticalTables(profile)).chunks(table, chunk_rows)
    summary = summary_of(profile)
    if table == "provenance" and hasattr(profile, "item_parts") and \
            len(profile.item_parts()) > 1:
        ops = operations_per_line(profile, len(summary.provenances))  # (the program's, once)
        return provenance_table(summary, ops if ops is not None
                                else _ops_per_provenance(profile, summary))
    return iter_table(summary, table, chunk_rows)


def _ops_per_provenance(profile, summary):
    """Operations per provenance string over all ranks' models, each operation once (the
    first rank that has it, as a merge keeps it).  A ``RankSet``'s ranks share one table of
    all ranks' operations: it is read once (concatenated once per rank, 1,000 ranks of 1.4 M
    operations each took the machine's memory)."""
    parts = profile.item_parts()
    n = len(summary.provenances)
    first_ops = parts[0].model.ops
    if all(p.model.ops is first_ops and p.prov_map is None for p in parts):
        prov = np.asarray(first_ops["provenance"], np.int64)
        return np.bincount(prov, minlength=n)[:n].astype(np.int64)
    ids, provs = [], []
    for part in parts:
        ops = part.model.ops
        p = np.asarray(ops["provenance"], np.int64)
        ids.append(np.asarray(ops["op_id"], np.uint64))
        provs.append(p if part.prov_map is None else np.asarray(part.prov_map)[p])
    if not ids or not sum(map(len, ids)):
        return np.zeros(n, np.int64)
    _, first = unique_with(np.concatenate(ids), index=True)
    return np.bincount(np.concatenate(provs)[first], minlength=n)[:n].astype(np.int64)


__all__ = ["ITEM_TABLES", "RankItems", "by_rank", "merged", "ranks_of", "summary_of",
           "whole_table", "whole_tables"]
