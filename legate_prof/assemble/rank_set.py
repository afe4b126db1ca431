"""Several ranks' models held as one profile, unmerged.

A folder of per-rank bundles (``convert --per-rank`` where each rank's file lies) or the ranks
that worker processes built are each a complete model of their ranks.  ``RankSet`` numbers
them as one profile — lanes and items by offsets in rank order (as one merged model numbers
them), names and provenances by the union of the ranks' string tables, operations by one
table of all ranks' (a rank's meta-tasks and messages often serve an operation another rank
described: its provenance is found there, as in the merged model) — and answers the
profile protocol a ``TraceModel`` answers: ``item_parts()`` (the ranks' models, read one after
the other by analyses), ``summary_model()`` (everything but the items, all ranks) and
``merged_model()`` (one model, merged once, for what needs one).  Nothing is copied per item.
"""

from __future__ import annotations

import copy
import threading

import numpy as np

from legate_prof.assemble.rank_merge import MergePlan, ModelSummary, merge_opened, sorted_ops
from legate_prof.model.item_parts import ItemPart
from legate_prof.model.lazy_table import LazyTable, Stripes


class RankSet:
    """Models of disjoint ranks as one profile (``MergePlan`` raises ``CannotMerge`` when they
    are not disjoint)."""

    def __init__(self, parts):
        plan = MergePlan([ModelSummary(m, keep=True) for m in parts])
        own = [parts[k] for k in plan.order]
        self._own_parts = own  # as given: what a merge concatenates
        ops = profile_ops(own, plan.prov_maps)
        # each rank's model answers provenances from all ranks' operations, by the union's ids
        self.parts = [m.evolve(ops=ops, provenances=plan.provenances) for m in own]
        self.item_off = plan.item_off
        self.lane_off = plan.lane_off
        self.name_maps = [np.asarray(x, np.int64) for x in plan.name_maps]
        self.prov_maps = [np.arange(len(plan.provenances), dtype=np.int64)] * len(own)
        self._merged = [None]  # shared with evolved copies: one merge
        self._merge_lock = threading.Lock()
        # lanes, strings, steps and extent of all ranks, their operations; no items
        self._summary = plan.model(*plan.empty_columns(sizes=False)).evolve(ops=ops)

    def rank_models(self):
        """The ranks' models as given (in rank order), each with its own operations table."""
        return list(self._own_parts)

    @property
    def n_items(self):
        return int(self.item_off[-1])

    def item_parts(self):
        return [ItemPart(m, int(self.item_off[k]), int(self.lane_off[k]), self.name_maps[k],
                         None) for k, m in enumerate(self.parts)]

    def summary_model(self):
        return self._summary

    @property
    def merged_yet(self) -> bool:
        """Whether ``merged_model`` has merged the ranks (drawing and analyses never do)."""
        return self._merged[0] is not None

    def merged_model(self):
        with self._merge_lock:
            if self._merged[0] is None:
                self._merged[0] = merge_opened(len(self._own_parts),
                                               lambda k: self._own_parts[k])
            out = self._merged[0]
        o = self._summary
        return out.evolve(sources=o.sources, errors=o.errors, warnings=o.warnings)

    def evolve(self, **changes) -> "RankSet":
        """A copy whose description (``sources``, ``errors``, ``warnings``) has ``changes``."""
        new = copy.copy(self)
        new._summary = self._summary.evolve(**changes)
        return new

    @property
    def sources(self):
        return self._summary.sources

    @property
    def errors(self):
        return self._summary.errors

    @property
    def warnings(self):
        return self._summary.warnings

    @property
    def markers(self):
        return self._summary.markers

    # -- numbering ------------------------------------------------------------------------------
    def rank_of_lane(self, lane):
        """(index of the rank's model holding lane ``lane``, its number there)."""
        return self._locate(self.lane_off, lane, "lane")

    def rank_of_item(self, i):
        """(index of the rank's model holding item ``i``, its number there)."""
        return self._locate(self.item_off, i, "item")

    def _locate(self, offsets, i, what):
        k = int(np.searchsorted(offsets, int(i), side="right")) - 1
        if not 0 <= k < len(self.parts) or i >= offsets[-1]:
            raise IndexError(f"{what} {i} out of range")
        return k, int(i) - int(offsets[k])


def profile_ops(models, prov_maps):
    """All ranks' operations as one table (op id sorted, the first rank's row of an op id
    that repeats, provenances by the union's ids), made when first read: a merged model's
    ops table, without merging anything else."""
    def make():
        cols = {}
        for c in models[0].ops:
            pieces = [np.asarray(m.ops[c]) for m in models]
            if c == "provenance":
                pieces = [np.asarray(pm)[p].astype(p.dtype) for pm, p in zip(prov_maps, pieces)]
            cols[c] = np.concatenate(pieces)
        return sorted_ops(cols)

    def stripes():  # (each rank's own ops, where Legion's numbering keeps them apart)
        runs = [{c: (np.asarray(pm)[np.asarray(m.ops[c])].astype(np.int32)
                     if c == "provenance" else np.asarray(m.ops[c])) for c in m.ops}
                for m, pm in zip(models, prov_maps)]
        return Stripes.of(runs, "op_id")
    return LazyTable(make, "op_id", stripes=stripes)
