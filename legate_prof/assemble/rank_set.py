"""Several ranks' models held as one profile, unmerged.

A folder of per-rank bundles (``convert --per-rank`` where each rank's file lies) or the ranks
that worker processes built are each a complete model of their ranks.  ``RankSet`` numbers
them as one profile — lanes and items by offsets in rank order (as one merged model numbers
them), names and provenances by the union of the ranks' string tables — and answers the
profile protocol a ``TraceModel`` answers: ``item_parts()`` (the ranks' models, read one after
the other by analyses), ``summary_model()`` (everything but the items, all ranks) and
``merged_model()`` (one model, merged once, for what needs one).  Nothing is copied per item.
"""

from __future__ import annotations

import copy
import threading

import numpy as np

from legate_prof.assemble.rank_merge import MergePlan, ModelSummary, merge_opened
from legate_prof.model.item_parts import ItemPart


class RankSet:
    """Models of disjoint ranks as one profile (``MergePlan`` raises ``CannotMerge`` when they
    are not disjoint)."""

    def __init__(self, parts):
        plan = MergePlan([ModelSummary(m, keep=True) for m in parts])
        self.parts = [parts[k] for k in plan.order]
        self.item_off = plan.item_off
        self.lane_off = plan.lane_off
        self.name_maps = [np.asarray(x, np.int64) for x in plan.name_maps]
        self.prov_maps = [np.asarray(x, np.int64) for x in plan.prov_maps]
        self._merged = [None]  # shared with evolved copies: one merge
        self._merge_lock = threading.Lock()
        # lanes, strings, steps and extent of all ranks; no items
        self._summary = plan.model(*plan.empty_columns(sizes=False))

    @property
    def n_items(self):
        return int(self.item_off[-1])

    def item_parts(self):
        return [ItemPart(m, int(self.item_off[k]), int(self.lane_off[k]), self.name_maps[k],
                         self.prov_maps[k]) for k, m in enumerate(self.parts)]

    def summary_model(self):
        return self._summary

    @property
    def merged_yet(self) -> bool:
        """Whether ``merged_model`` has merged the ranks (drawing and analyses never do)."""
        return self._merged[0] is not None

    def merged_model(self):
        with self._merge_lock:
            if self._merged[0] is None:
                self._merged[0] = merge_opened(len(self.parts), lambda k: self.parts[k])
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
