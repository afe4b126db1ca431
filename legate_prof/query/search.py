"""Search: the items whose name or launching line (provenance) holds a text."""

from __future__ import annotations

import numpy as np


def search_items(model, text, limit=100_000):
    """Items whose name or provenance contains ``text`` (case-insensitive)."""
    q = text.lower()
    name_hit = np.array([q in n.lower() for n in model.names], dtype=bool)
    prov_hit = np.array([bool(p) and q in p.lower() for p in model.provenances], dtype=bool)
    sel = name_hit[model.items["name"]]
    if prov_hit.any():
        sel |= prov_hit[model.op_provenance(model.items["op_id"])]
    return np.flatnonzero(sel)[:limit]

