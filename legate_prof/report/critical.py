"""The critical path in the report's files: the run's path (``path.js``) and, for the items a
page can show (the path's steps, then the boxes of the tiles, longest first) and the items they
link to, each one's critical link in lookup files by item id (``links/C{k}.js``), within a
byte budget like the tiles'.  Loaded through <script> tags as the tiles are (no fetch/XHR).

A record holds what the page needs to name an item and its link in the details' own words
(``query.details``: "Waited for", "Created by", "Held up"; report.js composes them, a
browser test holds the two to the same text): where the item is (lane, row, start, stop),
its name and line, and its link (how, to what, the lag, the creation time, the note).
"""

from __future__ import annotations

import json

import numpy as np

from legate_prof.analyze.critical_path import critical_path_report
from legate_prof.analyze.critical_text import WINDOW_LINE, header, skew_note
from legate_prof.model.event_tables import EVENT_KIND_NAMES
from legate_prof.model.kinds import GROUP_TITLE, ItemKind
from legate_prof.causality.critical_links import VIA, note_text
from legate_prof.causality.run_path import PATH_VIA, PATH_VIA_WORDS
from legate_prof.model.sort_order import lex_order, stable_order, unique_values, unique_with

CHUNK = 4096  # item ids per lookup file
RECORD_BYTES = 90  # about what one record costs in a lookup file
MAX_PATH_STEPS = 20_000  # the run's path is written from its end back, this many steps at most
LINK_BYTES_PER_ITEM = 40  # lookup files: 512 KiB .. 4 MiB, this much per item between (as tiles)
LINK_BUDGET = (512 << 10, 4 << 20)
COMPLETIONS = ("TaskEvent", "CopyEvent", "FillEvent", "DepPartEvent", "InstanceDeletion")
TOP_LINES = 20  # source lines of the path's split the page lists (the rest: one sum)


def _js(call, *args):
    return f"{call}({','.join(json.dumps(a, separators=(',', ':')) for a in args)});\n"


def lanes_of(source, ids):
    """The lane of each item id (a lane's items are the contiguous ids lane_item_range)."""
    lanes = [L.lane for L in source.info().lanes]
    if not len(ids) or not lanes:
        return np.zeros(len(ids), np.int64)
    lo = np.array([source.lane_item_range(L)[0] for L in lanes], np.int64)
    order = stable_order(lo)
    k = np.searchsorted(lo[order], ids, side="right") - 1
    return np.asarray(lanes, np.int64)[order][np.clip(k, 0, len(lanes) - 1)]


def link_budget(n_items):
    lo, hi = LINK_BUDGET
    return min(hi, max(lo, LINK_BYTES_PER_ITEM * n_items))


def write_critical(q, out, shown, progress=None):
    """Write ``path.js`` and the lookup files for ``shown`` (item ids the tiles draw as boxes)
    under ``out``; returns the report meta's ``critical`` entry."""
    src = q.source
    try:
        links = src.critical_links()
        steps = src.run_critical_path()
    except Exception as e:  # noqa: BLE001 - the report is written without it, saying why
        return {"available": False, "why": f"{type(e).__name__}: {e}"}
    if not links.has_data:  # (a crashed run's: why its timeline is missing, as `critical`
        return {"available": False,  # says it; not "no event records" of 28 items: a review)
                "why": src.info().timeline_missing or "the profile holds no event records"}
    path = _path(src, steps[:MAX_PATH_STEPS])
    (out / "path.js").write_text(_js("LP_path", path))
    ids = _record_ids(src, links, path["item"], shown, link_budget(src.info().n_items))
    chunks, notes, written = _write_records(src, links, ids, out)
    return {"available": True, "steps": len(steps), "steps_written": len(path["item"]),
            "via": list(VIA), "path_via": list(PATH_VIA), "path_via_words": PATH_VIA_WORDS,
            "notes": notes, "chunk": CHUNK,
            "chunks": chunks, "records": int(len(ids)), "bytes": written,
            "completions": list(COMPLETIONS)}


def critical_summary(src, top=TOP_LINES, window=False):
    """The report meta's ``critical_split``: the run's time split by kind, lane group and
    source line along its critical path (the shares add up to the run), as ``legate_prof
    critical`` prints it (its own function, called: the rules
    of what counts where are its); the first ``top`` lines, the rest as a count and a sum.
    ``window``: the profile is a window of the run (--start/--stop): ``critical``'s words
    for one."""
    try:
        rep = critical_path_report(src, with_items=False, with_path=False)
    except Exception as e:  # noqa: BLE001 - the report is written without it, saying why
        return {"available": False, "why": f"{type(e).__name__}: {e}"}
    lines = [[k, int(v)] for k, v in rep["by_provenance"].items() if v]
    note = skew_note(src.message_latency())
    words = (([WINDOW_LINE] if window else [])
             + [x for x in header(rep, window) if x] + ([note] if note else []))
    return {"available": True, "span_ns": rep["span_ns"], "steps": rep["steps"],
            "run_ns": rep["run_ns"], "explained_ns": rep["explained_ns"],
            "header": words,  # (``critical``'s own lines: where the path lies in the run)
            "event_records": bool(src.critical_links().has_data),
            "by_kind": {k: int(v) for k, v in rep["by_kind"].items() if v},
            "by_group": [{"group": k, "title": GROUP_TITLE.get(k, k), "ns": int(v)}
                         for k, v in rep["by_group"].items() if v],
            "by_line": lines[:top], "lines": len(lines),
            "lines_rest_ns": sum(v for _, v in lines[top:])}


def _path(src, steps):
    """The run's path, last step first, as columns."""
    item = np.array([s.item for s in steps], np.int64)
    rows = src.items_columns(item)["row"] if len(item) else np.zeros(0, np.int64)
    return {"item": item.tolist(), "begin": [int(s.begin_ns) for s in steps],
            "end": [int(s.end_ns) for s in steps],
            "via": [PATH_VIA.index(s.via) if s.via in PATH_VIA else 0 for s in steps],
            "lane": lanes_of(src, item).tolist(), "row": np.asarray(rows).tolist()}


def _record_ids(src, links, path_items, shown, budget):
    """Which items get a record: the path's, then the shown ones longest first, and what
    each of those links to (back and forward), within ``budget`` bytes."""
    shown = unique_values(np.asarray(shown, np.int64))
    if len(shown):
        cols = src.items_columns(shown, ("start", "stop"))
        shown = shown[stable_order(-(cols["stop"] - cols["start"]))]
    primary = np.concatenate([np.asarray(path_items, np.int64), shown])
    _, first = unique_with(primary, index=True)
    primary = primary[np.sort(first)]
    cap = max(budget // RECORD_BYTES, 1)
    k = min(len(primary), cap)
    # (each item's neighbours found once, not again for each shorter prefix tried: a pass
    # over every item's link a try, 9 tries and 3.6 s of a report of 10 M items)
    pred, nxt = _neighbours(links, primary)
    while True:
        both = np.concatenate([pred[:k], nxt[:k]])
        ids = unique_values(np.concatenate([primary[:k], both[both >= 0]]))
        if len(ids) <= cap or k <= 1:
            return ids[:cap] if len(ids) > cap else ids
        k = max(k * cap // len(ids) - 1, 1)


def _neighbours(links, ids):
    """(the predecessor, the first successor by start) of each of ``ids`` (-1: none)."""
    ids = np.asarray(ids, np.int64)
    once = unique_values(ids)
    nxt = _first_successors(links, once)[np.searchsorted(once, ids)]
    return links.items.target[ids], nxt


def _first_successors(links, ids):
    """Per id (sorted, each once): the item that waited for it (or was created by it) that
    started first; -1: none."""
    target = links.items.target
    cand = np.flatnonzero(np.isin(target, ids))
    first = np.full(len(ids), -1, np.int64)
    if len(cand):
        starts = links.values("start", cand)
        order = lex_order((starts, target[cand]))
        keys, at = unique_with(target[cand][order], index=True)
        first[np.searchsorted(ids, keys)] = cand[order][at]
    return first


def _held(links, ids):
    keys = np.sort(links.items.target)
    return np.searchsorted(keys, ids, side="right") - np.searchsorted(keys, ids)


def _notes(rows, ids):
    """Per id an index into the returned list of note texts (-1: none), computed once per
    distinct (note, node, event kind)."""
    code = rows.note[ids].astype(np.int64)
    key = np.stack([code, rows.node[ids].astype(np.int64), rows.kind[ids].astype(np.int64)], 1)
    uniq, inv = np.unique(key, axis=0, return_inverse=True) if len(ids) else (key, ids)
    texts, index = [], []
    for u in range(len(uniq)):
        k = int(np.flatnonzero(inv.ravel() == u)[0])
        t = note_text(rows, int(ids[k]))
        index.append(-1 if not t else len(texts))
        if t:
            texts.append(t)
    return (np.asarray(index, np.int64)[inv.ravel()] if len(ids) else
            np.zeros(0, np.int64)), texts


def _write_records(src, links, ids, out):
    """One lookup file per CHUNK ids: columns of the records; returns (chunks, notes,
    bytes)."""
    ids = np.asarray(ids, np.int64)
    rows = links.items
    cols = src.items_columns(ids)
    trig = rows.trigger[ids]
    ready = links.ready(ids)
    no_time = np.iinfo(np.int64).min
    lag = [None if t == no_time else int(r - t) for t, r in zip(trig.tolist(), ready.tolist())]
    kind = rows.kind[ids].astype(np.int64)
    done = np.array([0 <= k < len(EVENT_KIND_NAMES) and EVENT_KIND_NAMES[k] in COMPLETIONS
                     for k in kind.tolist()], bool)
    note, notes = _notes(rows, ids)
    titles = _instance_titles(src, links, ids)
    rec = {"id": ids, "lane": lanes_of(src, ids), "row": cols["row"], "start": cols["start"],
           "stop": cols["stop"], "name": cols["name"], "prov": src.items_provenance(ids),
           "via": rows.via[ids], "pred": rows.target[ids], "creation": links.creation[ids],
           "done": done.astype(np.int64), "note": note, "held": _held(links, ids),
           "next": _first_successors(links, ids)}
    (out / "links").mkdir()
    chunks, total = [], 0
    for c in unique_values(ids // CHUNK).tolist():
        sel = np.flatnonzero(ids // CHUNK == c)
        data = {k: np.asarray(v)[sel].astype(np.int64).tolist() for k, v in rec.items()}
        data["lag"] = [lag[i] for i in sel.tolist()]
        data["title"] = {str(int(ids[i])): titles[int(ids[i])] for i in sel.tolist()
                         if int(ids[i]) in titles}
        text = _js("LP_links", c, data)
        (out / "links" / f"C{c}.js").write_text(text)
        chunks.append(c)
        total += len(text)
    return chunks, notes, total


def _instance_titles(src, links, ids):
    """Titles the page cannot compose from name and line (instances: size and site)."""
    inst = ids[links.values("kind", ids) == int(ItemKind.INSTANCE)] if len(ids) else ids
    return {int(i): src.item_title(int(i)) for i in inst.tolist()}

