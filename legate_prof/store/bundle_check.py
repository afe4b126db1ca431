"""Validation of a bundle's contents before a model is made of it.

A bundle is our own file, but it is a file: cut, bit-flipped or edited, it must give one
``ProfileError`` (or, for the cache, a rebuild), never an exception deep in the viewer or
``stats``.  Checks are over whole columns (min/max, monotonic) so they cost a few passes over
the index columns, not Python per item.  ``values=False`` keeps the checks whose cost does not
grow with the items (structure, types, lengths, small tables): for a cache entry that was fully
checked, or written by us, and has not changed since (``cache.py``).
"""

from __future__ import annotations

import math

import numpy as np

from legate_prof.read.legion_log import MAX_NAME_CHARS
from legate_prof.model.intervals import StepIntegral
from legate_prof.model.kinds import GROUP_KEYS, ItemKind
from legate_prof.model.event_tables import EVENT_TABLES, N_MARKS
from legate_prof.model.trace_model import ITEM_COLUMNS, LANE_COLUMNS

TABLES = {
    "items": ITEM_COLUMNS,
    "lanes": LANE_COLUMNS,
    "ops": {"op_id": np.uint64, "kind": np.int32, "provenance": np.int32, "parent": np.uint64},
    "waits": {"item": np.int64, "start": np.int64, "ready": np.int64, "end": np.int64,
              "event": np.uint64},
    "transfers": {"item": np.int64, "size": np.uint64, "src": np.uint64, "dst": np.uint64,
                  "inst": np.uint64},
    "procs": {"proc_id": np.uint64, "kind": np.int32, "rank": np.int32},
    "mems": {"mem_id": np.uint64, "kind": np.int32, "capacity": np.int64, "rank": np.int32},
}
RANK_FIELDS = {"rank": int, "file": str, "hostname": str, "num_nodes": int,
               "legion_version": str, "format_version": str, "zero_time": int, "records": int}


class BundleDamage(ValueError):
    """What is wrong, in a few words (the caller names the file)."""


def _fail(what):
    raise BundleDamage(what)


def _int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _list_of(v, typ, what):
    if not isinstance(v, list) or not all(isinstance(x, typ) for x in v):
        _fail(f"{what} is not a list of {typ.__name__}")


def _table(d, name, schema=None):
    t = d.get(name)
    if not isinstance(t, dict):
        _fail(f"table {name!r} missing")
    n = None
    for col, dt in (schema or TABLES[name]).items():
        a = t.get(col)
        if not isinstance(a, np.ndarray) or a.dtype != np.dtype(dt) or a.ndim != 1:
            _fail(f"column {name}.{col} missing or of the wrong type")
        if n is None:
            n = len(a)
        elif len(a) != n:
            _fail(f"columns of {name} differ in length")
    return t, n


def _in_range(a, lo, hi, what):
    if len(a) and (int(a.min()) < lo or int(a.max()) >= hi):
        _fail(f"{what} out of range")


def _sorted(a, what):
    if len(a) > 1 and np.any(a[1:] < a[:-1]):
        _fail(f"{what} not in order")


def _step(s, what, values=True):
    if not isinstance(s, dict):
        _fail(f"{what} is not a map")
    t, integral, den = s.get("t"), s.get("integral"), s.get("denominator")
    for a in (t, integral):
        if not isinstance(a, np.ndarray) or a.ndim != 1 or a.dtype.kind not in "fiu":
            _fail(f"{what} arrays missing")
    if len(t) != len(integral) or len(t) == 0:
        _fail(f"{what} arrays differ in length")
    coarse = s.get("coarse")
    if coarse is not None and (not isinstance(coarse, np.ndarray) or coarse.ndim != 1
                               or len(coarse) != -(-len(t) // StepIntegral.BLOCK)):
        _fail(f"{what} coarse index")
    sampled = _sampled(s, t, coarse, what)
    if values:
        if not np.all(np.isfinite(t)) or not np.all(np.isfinite(integral)):
            _fail(f"{what} has infinite values")
        _sorted(t, what)
        dt, di = np.diff(t.astype(np.float64)), np.diff(integral.astype(np.float64))
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            level = di / dt  # an integral of a finite level: no jump at one time
        if np.any((dt == 0) & (di != 0)) or not np.all(np.isfinite(level[dt > 0])):
            _fail(f"{what} has infinite levels")
        if coarse is not None and not np.array_equal(coarse, t[::StepIntegral.BLOCK]):
            _fail(f"{what} coarse index")
        if sampled is not None and not np.array_equal(
                sampled, StepIntegral(t, integral, 1.0).sampled_integral()[2]):
            _fail(f"{what} sampled integral")
    if not isinstance(den, (int, float)) or isinstance(den, bool) or not (
            math.isfinite(den) and den > 0):
        _fail(f"{what} denominator")
    return s


def _sampled(s, t, coarse, what):
    """A step's sampled integral (``StepIntegral.sampled_integral``), or None: only with its
    coarse index, of the cells its breakpoints make."""
    sampled = s.get("sampled")
    if sampled is None and "sampled_cell" not in s and "sampled_first" not in s:
        return None
    cell, first = s.get("sampled_cell"), s.get("sampled_first")
    if not isinstance(sampled, np.ndarray) or sampled.ndim != 1 or sampled.dtype != np.float64 \
            or coarse is None or len(t) < StepIntegral.SAMPLED_MIN \
            or not isinstance(cell, float) or isinstance(first, bool) or not isinstance(first, int) \
            or not (np.isfinite(t[0]) and np.isfinite(t[-1])) \
            or (cell, first, len(sampled)) != StepIntegral.sampled_cells(t[0], t[-1]):
        _fail(f"{what} sampled integral")
    return sampled


RANKS_LIMIT = 1 << 16  # a rank is a node id, 16 bits of a Realm id (``kinds.node_of_id``)


def _check_rank_numbers(d, lanes):
    """Every rank number a rank's table holds is a node id: analyses size arrays by the
    largest (a fuzzed bundle's lane of rank 4,194,304 made ``stats`` of 188 items take
    35 MiB)."""
    for what, table in (("lane", lanes), ("processor", d.get("procs")),
                        ("memory", d.get("mems"))):
        if isinstance(table, dict) and "rank" in table:
            _in_range(np.asarray(table["rank"]), 0, RANKS_LIMIT, f"{what} rank")
    for r in d.get("ranks") or ():
        if isinstance(r, dict) and _int(r.get("rank")) and not 0 <= r["rank"] < RANKS_LIMIT:
            _fail("rank number out of range")


def check_bundle(d, values=True):
    """Raise BundleDamage unless ``d`` (the unpacked document) makes a sound model
    (``values=False``: without the per-item value checks; see above)."""
    if not isinstance(d, dict):
        _fail("header is not a map")
    items, n, lanes = _check_tables(d)
    _check_rank_numbers(d, lanes)
    stacked = d.get("stacked", True)
    if values:
        _check_item_values(d, items, lanes, n, len(d["names"]), len(d["provenances"]))
        if not stacked and n:  # (lane, start) order, on row 0: each lane stacks when drawn
            lane_step = np.diff(items["lane"])
            if np.any(items["row"] != 0) or np.any(lane_step < 0) or np.any(
                    (lane_step == 0) & (np.diff(items["start"]) < 0)):
                _fail("unstacked items out of their order")
    if d.get("index") is not None:  # absent in a rank's model on its way to be merged, and
        if not stacked:  # in a model built unstacked (it stacks the lanes it draws)
            _fail("index of an unstacked bundle")
        _check_index(d.get("index"), items, lanes, n, values)
    _check_events(d.get("events"), values)
    _check_ranks_and_steps(d, values)
    _check_extra(d.get("extra"), items, n, values)


def _check_tables(d):
    """(items, item count, lanes): the tables are there, the string tables are strings, the
    lanes are named and grouped."""
    items, n = _table(d, "items")
    lanes, n_lanes = _table(d, "lanes")
    for t in ("ops", "waits", "transfers", "procs", "mems"):
        _table(d, t)
    for key in ("names", "provenances", "warnings", "sources"):
        _list_of(d.get(key), str, key)
    if not d["names"] or not d["provenances"]:
        _fail("string tables empty")
    for key in ("names", "provenances"):  # (each repeated in every output line of its items)
        if max(map(len, d[key])) > MAX_NAME_CHARS:
            _fail(f"a string of {key} longer than {MAX_NAME_CHARS:,} characters")
    _list_of(lanes.get("name"), str, "lane names")
    _list_of(lanes.get("title"), str, "lane titles")
    if len(lanes["name"]) != n_lanes or len(lanes["title"]) != n_lanes:
        _fail("lane names and lanes differ in length")
    _in_range(lanes["group"], 0, len(GROUP_KEYS), "lane group")
    _in_range(lanes["rows"], 1, 1 << 15, "lane rows")
    if not isinstance(d.get("stacked", True), bool):
        _fail("stacked flag damaged")
    return items, n, lanes


def _check_ranks_and_steps(d, values):
    """Ranks, utilization step functions (each rank's and all ranks'), markers."""
    ranks = d.get("ranks")
    if not isinstance(ranks, list) or not ranks:
        _fail("ranks missing")
    for r in ranks:
        if not isinstance(r, dict) or not all(isinstance(r.get(k), t) for k, t in
                                              RANK_FIELDS.items()):
            _fail("rank entry damaged")
    steps = d.get("steps")
    if not isinstance(steps, list):
        _fail("utilization steps missing")
    for s in steps:
        _step(s, "utilization step", values)
        if not _int(s.get("rank")) or s.get("group") not in GROUP_KEYS:
            _fail("utilization step key")
    all_steps = d.get("all_steps")
    if not isinstance(all_steps, list):
        _fail("all-ranks steps missing")
    for s in all_steps:
        _step(s, "all-ranks step", values)
        if s.get("group") not in GROUP_KEYS:
            _fail("all-ranks step group")
    markers = d.get("markers")
    if not isinstance(markers, list) or not all(
            isinstance(m, dict) and _int(m.get("time")) and isinstance(m.get("title"), str)
            and _int(m.get("rank", 0)) and isinstance(m.get("fields", {}), dict)
            and all(isinstance(v, str) for v in m.get("fields", {}).values())
            for m in markers):  # (a rank or a field of another type: a traceback where read)
        _fail("markers damaged")


def _check_extra(ex, items, n, values):
    """Busy times, variants, the runtime's end, the lines' code, the items' extent."""
    if not isinstance(ex, dict):
        _fail("extra missing")
    for key, types in (("busy_ns", (int, str, int)), ("variants", (int, str, str))):
        rows = ex.get(key, [])
        if not isinstance(rows, list) or not all(
                isinstance(r, list) and len(r) == 3
                and all(isinstance(v, t) for v, t in zip(r, types)) for r in rows):
            _fail(f"extra {key} damaged")
    if "runtime_end_ns" in ex and not _int(ex["runtime_end_ns"]):
        _fail("extra runtime_end_ns damaged")
    line_text = ex.get("line_text", {})
    if not isinstance(line_text, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in line_text.items()):
        _fail("extra line_text damaged")
    extent = ex.get("extent")
    if extent is not None:
        if not (isinstance(extent, list) and len(extent) == 2 and all(map(_int, extent))):
            _fail("extra extent damaged")
        if values and extent != ([int(items["start"].min()), int(items["stop"].max())]
                                 if n else [0, 0]):
            _fail("extra extent is not the items'")


def _check_events(events, values):
    """The event graph's tables (``model.event_tables``): keyed by event, so only their types,
    lengths and small codes can be wrong; whatever ids they hold, the critical path copes
    (an unknown event ends a chain there)."""
    if not isinstance(events, dict):
        _fail("event tables missing")
    for name, schema in EVENT_TABLES.items():
        _table(events, name, schema)
    if values:
        _in_range(events["records"]["kind"], 0, 16, "event record kind")
        _in_range(events["marks"]["mark"], 0, N_MARKS, "event mark")
        _in_range(events["edges"]["update"], 0, 2, "event edge flag")


def _check_item_values(d, items, lanes, n, n_names, n_provs):
    """Every index column points inside its table, and tables are in their order."""
    _in_range(items["lane"], 0, len(lanes["rows"]), "item lane")
    _in_range(items["name"], 0, n_names, "item name")
    _in_range(items["detail"], 0, n_names, "item detail")
    _in_range(items["kind"], 0, max(ItemKind) + 1, "item kind")
    if n:
        if int(items["row"].min()) < 0 or np.any(items["row"] >= lanes["rows"][items["lane"]]):
            _fail("item row out of range")
        if np.any(items["stop"] < items["start"]):
            _fail("item stops before it starts")
        # (a log's times are in [0, 2^63 - 1], a stream's within 2^62 of its rank's zero: any
        # wider, two times of the run are further apart than an int64 holds)
        first = min(int(items[c].min()) for c in ("create", "ready", "start"))
        if first < -(2**62) or int(items["stop"].max()) - first > 2**63 - 1:
            _fail("item times further apart than an int64 holds")
    ops = d["ops"]
    _in_range(ops["provenance"], 0, n_provs, "op provenance")
    _sorted(ops["op_id"], "op ids")
    w = d["waits"]
    _in_range(w["item"], 0, n, "wait item")
    _sorted(w["item"], "waits")
    tr = d["transfers"]
    _in_range(tr["item"], 0, n, "transfer item")
    _sorted(tr["item"], "transfers")


def _check_index(index, items, lanes, n, values=True):
    if not isinstance(index, dict):
        _fail("index missing")
    off, bounds, perm = (index.get(k) for k in ("sub_offset", "sub_bounds", "dur_perm"))
    for a in (off, bounds, perm):
        if not isinstance(a, np.ndarray) or a.ndim != 1 or a.dtype.kind not in "iu":
            _fail("index columns missing")
    rows = lanes["rows"].astype(np.int64)
    if len(off) != len(rows) + 1 or np.any(off != np.concatenate([[0], np.cumsum(rows)])):
        _fail("index offsets")
    if len(bounds) != int(off[-1]) + 1 or (len(bounds) and (bounds[0] != 0 or bounds[-1] != n)):
        _fail("index bounds")
    if len(perm) != n:
        _fail("duration index length")
    if not values:
        return
    _sorted(bounds, "index bounds")
    _in_range(perm, 0, n, "duration index")
    row_at = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
    if np.any(row_at[perm] != row_at):  # each row's order holds that row's items
        _fail("duration index crosses rows")
    # items must be ordered by (lane, row, start): bounds are only right then
    key = off[items["lane"]] + items["row"]
    _sorted(key, "items")
