"""The critical path in the exports: every item's critical predecessor (the ``critical_path``
table), the run's critical path (the ``run_critical_path`` table), and the pairs of items the
timeline formats draw as flows (arrows) along that path.

The links are the query API's (``as_source(profile).critical_links()``,
``run_critical_path()``), computed over all ranks at once: the event graph spans them.  They
come in the source's numbering of items, while the exports number items as each rank's model
stacked numbers them (``ranks.by_rank``, ``ranks.merged``: items in (lane, row, start) order);
``export_ids`` maps one to the other, so ``critical_path.item`` is ``items.item``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from legate_prof.export.tables import CRITICAL_TABLES
from legate_prof.model.event_tables import EVENT_KIND_NAMES, NO_TIME
from legate_prof.model.intervals import stack_lanes
from legate_prof.model.sort_order import stable_order, unique_with
from legate_prof.query import as_source
from legate_prof.causality.critical_links import NO_ROW, VIA, note_text

VIA_NAMES = np.array(VIA, dtype=object)
EVENT_KINDS = np.array(EVENT_KIND_NAMES + (None,), dtype=object)  # (-1: none, the last)


def export_ids(profile):
    """The export's id of each item of ``as_source(profile)`` (None: the same ids): a model
    built unstacked is exported stacked, its items reordered lane by lane as
    ``TraceModel.as_stacked`` orders them."""
    maps, same = [], True
    for part in profile.item_parts():
        m = part.model
        local = np.arange(m.n_items, dtype=np.int64)
        if not m.stacked:
            same = False
            bounds = np.searchsorted(m.items["lane"], np.arange(m.n_lanes + 1))
            perm = stack_lanes(m.items["start"], m.items["stop"], bounds)[0]
            local[perm] = np.arange(m.n_items, dtype=np.int64)
        maps.append(local + int(part.item_off))
    return None if same else np.concatenate(maps)


def _mapped(ids, new_id):
    """Ids (-1: none, kept) in the export's numbering."""
    ids = np.asarray(ids, np.int64)
    if new_id is None:
        return ids
    return np.where(ids >= 0, new_id[np.maximum(ids, 0)], -1)


class CriticalTables:
    """The two tables of one profile, computed once, on first use."""

    def __init__(self, profile):
        self.profile = profile
        self._source = None
        self._new_id = False

    @property
    def source(self):
        if self._source is None:
            self._source = as_source(self.profile)
        return self._source

    @property
    def new_id(self):
        if self._new_id is False:
            self._new_id = export_ids(self.profile)
        return self._new_id

    def chunks(self, table, chunk_rows):
        if table == "critical_path":
            return self._links(chunk_rows)
        return iter([self._path()])

    def _links(self, chunk_rows):
        links = self.source.critical_links()
        rows = links.items
        ids = np.flatnonzero(rows.via != NO_ROW)
        item = _mapped(ids, self.new_id)
        order = stable_order(item)
        ids, item = ids[order], item[order]
        notes = _notes(rows, ids)
        for lo in range(0, len(ids), chunk_rows):
            k = ids[lo:lo + chunk_rows]
            pred = _mapped(rows.target[k], self.new_id)
            trig = rows.trigger[k].astype(np.int64)
            kind = rows.kind[k].astype(np.int64)
            ready = links.ready(k).astype(np.int64)
            none = trig == NO_TIME
            yield {
                "item": item[lo:lo + chunk_rows],
                "predecessor": np.ma.masked_array(pred, mask=pred < 0),
                "via": VIA_NAMES[rows.via[k]],
                "event_kind": EVENT_KINDS[np.where(kind >= 0, kind, -1)],
                "trigger_ns": np.ma.masked_array(np.where(none, 0, trig), mask=none),
                "ready_ns": ready,
                "creation_ns": links.creation[k].astype(np.int64),
                "lag_ns": np.ma.masked_array(np.where(none, 0, ready - trig), mask=none),
                "note": notes[lo:lo + chunk_rows],
            }

    def _path(self):
        steps = self.source.run_critical_path()
        col = {c: np.array([getattr(s, c) for s in steps], np.int64)
               for c in ("item", "predecessor", "begin_ns", "end_ns")}
        waits = {c: np.array([-1 if getattr(s, c) is None else getattr(s, c) for s in steps],
                             np.int64) for c in ("wait_from_ns", "wait_to_ns")}
        no_wait = np.array([s.wait_from_ns is None for s in steps], bool)
        pred = _mapped(col["predecessor"], self.new_id)
        return {
            "step": np.arange(len(steps), dtype=np.int32),
            "item": _mapped(col["item"], self.new_id),
            "predecessor": np.ma.masked_array(pred, mask=pred < 0),
            "via": np.array([s.via for s in steps], dtype=object),
            "begin_ns": col["begin_ns"], "end_ns": col["end_ns"],
            **{c: np.ma.masked_array(v, mask=no_wait) for c, v in waits.items()},
        }


def _notes(rows, ids):
    """The reference's note of each row ``ids`` of ``rows``, worded once per distinct
    (note, node, event kind)."""
    key = (rows.note[ids].astype(np.int64) << 40) | (rows.node[ids].astype(np.int64) << 8) \
        | (rows.kind[ids].astype(np.int64) & 0xFF)
    uniq, first, inverse = unique_with(key, index=True, inverse=True)
    words = np.array([note_text(rows, int(ids[f])) for f in first.tolist()] or [""],
                     dtype=object)
    return words[inverse.ravel()] if len(uniq) else np.zeros(0, dtype=object)


@dataclass
class PathFlows:
    """The flows along a run's critical path, one per step that has a predecessor, from the
    item that ended last back: ``pred`` -> ``item``, ``pred_end`` the end of the
    predecessor's piece on the path, ``item_begin`` the begin of the item's, ``via`` how
    the path went from the item to the predecessor.  An item may be on the path more than
    once (a task that waited several times)."""

    pred: np.ndarray
    item: np.ndarray
    pred_end: np.ndarray
    item_begin: np.ndarray
    via: np.ndarray

    def __len__(self):
        return len(self.pred)


def path_flows(model) -> PathFlows:
    """The flows along the run's critical path of ``model`` (a model as the timeline formats
    export it: its ids are theirs)."""
    steps = as_source(model).run_critical_path()
    n = len(steps)
    col = {c: np.array([getattr(s, c) for s in steps], np.int64).reshape(n)
           for c in ("item", "predecessor", "begin_ns", "end_ns")}
    has = np.flatnonzero(col["predecessor"] >= 0)
    pred = col["predecessor"][has]
    # the walk goes on to the predecessor: its piece is the next step's
    nxt = np.minimum(has + 1, max(n - 1, 0))
    follows = (has + 1 < n) & (col["item"][nxt] == pred)
    pred_end = np.where(follows, col["end_ns"][nxt], model.items["stop"][pred])
    via = np.array([steps[k].via for k in has.tolist()], dtype=object)
    return PathFlows(pred, col["item"][has], pred_end, col["begin_ns"][has], via)


__all__ = ["CRITICAL_TABLES", "CriticalTables", "PathFlows", "export_ids", "path_flows"]
