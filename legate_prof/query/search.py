"""Search: the items whose name or launching line (provenance) holds a text."""

from __future__ import annotations

import numpy as np

from legate_prof.model.kinds import ItemKind
from legate_prof.model.sort_order import search_sorted, stable_order


def search_items(model, text, limit=100_000):
    """Items whose name or provenance contains ``text`` (case-insensitive).  A call has no
    operation of its own: it is found by the line of the task it ran inside (a search for
    a line lit the task's box but not the task's body, run as an application call; the
    runtime and mapper calls a task makes are the runtime's work, left out: 24 of them
    buried the line's one task in the results)."""
    q = text.lower()
    name_hit = np.array([q in n.lower() for n in model.names], dtype=bool)
    prov_hit = np.array([bool(p) and q in p.lower() for p in model.provenances], dtype=bool)
    sel = name_hit[model.items["name"]]
    if prov_hit.any():
        sel |= _launched_from(model, prov_hit)
    return np.flatnonzero(sel)[:limit]


def items_of_lines(model, lines):
    """Items launched from one of ``lines`` (provenance strings, as the run recorded them)
    and the application calls made inside them: what a finding of those lines names.  One
    pass over the items for all the lines (a search for each line's text took a pass each:
    a finding of 50 lines, 6 s at 1,000 ranks), and each line whole (its text inside
    another's, "a.py:1" in "a.py:12", is not that line)."""
    wanted = set(lines)
    prov_hit = np.array([bool(p) and p in wanted for p in model.provenances], dtype=bool)
    if not prov_hit.any():
        return np.zeros(0, np.int64)
    return np.flatnonzero(_launched_from(model, prov_hit))


def _launched_from(model, prov_hit):
    """Which items an operation of a provenance in ``prov_hit`` launched, and the
    application calls made inside them."""
    it = model.items
    by_line = prov_hit[model.op_provenance(it["op_id"])]
    return by_line | _calls_inside(it, by_line)


def _calls_inside(it, hit):
    """Which items are application calls made inside an item of ``hit``: Legion records a
    call with the ``fevent`` of the task it runs inside (its ``creator`` here,
    ``assemble.nested_calls``)."""
    out = np.zeros(len(hit), bool)
    if "creator" not in it or "fevent" not in it:
        return out
    kind = np.asarray(it["kind"])
    calls = np.flatnonzero(kind == int(ItemKind.APP_CALL))
    found = np.flatnonzero(hit)
    if len(calls) == 0 or len(found) == 0:
        return out
    fevent = np.asarray(it["fevent"])[found]
    order = stable_order(fevent)
    keys = fevent[order]
    creator = np.asarray(it["creator"])[calls]
    pos = np.clip(search_sorted(keys, creator), 0, len(keys) - 1)
    out[calls[(keys[pos] == creator) & (creator != 0)]] = True
    return out
