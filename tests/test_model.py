"""Trace model: multi-rank merge, stacking, utilization and the per-view draw list."""

from pathlib import Path

import numpy as np
import pytest

from legate_prof.model.intervals import (StepIntegral, _greedy_rows, _matched_rows, _rows_are_valid,
                                         stack_rows)
from legate_prof.model.kinds import ItemKind
from legate_prof.load.loader import load_profile
from legate_prof.query.summary import average_utilization
from legate_prof.query.level_of_detail import draw_rows
from legate_prof.query.details import item_facts
from legate_prof.query.level_of_detail import items_in
from legate_prof.query.search import search_items

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"


def test_synthetic_ranks_merge_with_gpu_and_memory_lanes(synthetic_8):
    model = load_profile(synthetic_8)
    assert model.n_ranks == 8
    assert model.n_items == 40_000
    for r in range(8):
        groups = dict(model.groups_present(r))
        for key in ("cpu", "utility", "gpu_dev", "gpu_host", "io", "python", "system",
                    "framebuffer", "zerocopy", "channel", "dp"):
            assert key in groups, (r, key)
    # every item sits on a lane of its own rank's processors/memories
    lanes = model.items["lane"]
    assert np.all(np.diff(lanes) >= 0)
    # a copy channel to the next rank exists
    titles = [model.lanes["title"][L] for L in model.lanes_of("channel", 0)]
    assert any("to Node 1" in t for t in titles), titles


def test_rows_never_overlap(synthetic_8):
    model = load_profile(synthetic_8)
    it = model.items
    for L in range(model.n_lanes):
        for row in range(int(model.lanes["rows"][L])):
            lo, hi = model.sublane(L, row)
            s, e = it["start"][lo:hi], it["stop"][lo:hi]
            assert np.all(s[1:] >= e[:-1]), (L, row)


def test_stack_rows_nested_and_crossing():
    # nested: task [0,100) with calls [10,20) and [30,40)
    rows = stack_rows(np.array([0, 10, 30]), np.array([100, 20, 40]))
    assert rows.tolist() == [0, 1, 1]
    # crossing intervals need the greedy fallback
    s = np.array([0, 1, 2, 4])
    e = np.array([10, 3, 12, 5])
    rows = stack_rows(s, e)
    for r in set(rows.tolist()):
        idx = np.flatnonzero(rows == r)
        assert np.all(s[idx][1:] >= e[idx][:-1])


def _overlaps_on_a_row(rows, start, stop):
    order = np.lexsort((start, rows))
    r, s, e = rows[order], start[order], stop[order]
    return int(np.sum((r[1:] == r[:-1]) & (s[1:] < e[:-1])))


@pytest.mark.parametrize("seed", range(40))
def test_vectorized_stacking_is_valid_and_as_compact_as_the_greedy(seed):
    """Big crossing lanes are stacked without a Python loop: rows never overlap and there are
    exactly as many as the lowest-free-row greedy (the depth of the deepest moment)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    start = np.sort(rng.integers(0, 10_000, n))
    stop = start + rng.integers(0, 2_000, n) * (rng.random(n) < 0.9)  # some empty ones
    rows = _matched_rows(start, stop)
    assert _overlaps_on_a_row(rows, start, stop) == 0
    assert rows.max() == _greedy_rows(start, stop).max()
    assert set(np.unique(rows).tolist()) == set(range(int(rows.max()) + 1))


def test_statistics_do_not_need_stacked_rows(synthetic_8):
    """stack=False (stats, insights, compare) gives the same items, waits and utilization,
    items on row 0 in start order; each lane's row count is still the stacking's."""
    from legate_prof.analyze.stats import compute_stats
    flat = load_profile(synthetic_8, stack=False)
    full = load_profile(synthetic_8)
    assert not flat.stacked and (flat.items["row"] == 0).all()
    assert (full.lanes["rows"] > 1).any()
    assert np.array_equal(flat.lanes["rows"], full.lanes["rows"])
    a, b = compute_stats(flat), compute_stats(full)
    assert a == b


def _same_model_columns(a, b):
    for table in ("items", "waits", "transfers", "lanes"):
        ta, tb = getattr(a, table), getattr(b, table)
        assert ta.keys() == tb.keys(), table
        for c in ta:
            va, vb = ta[c], tb[c]
            same = (np.array_equal(va, vb) if isinstance(va, np.ndarray) else va == vb)
            assert same, f"{table}.{c}"


def test_lanes_stacked_when_drawn_draw_what_a_stacked_build_draws(synthetic_8):
    """A model built unstacked stacks each lane when it is first drawn: every lane's boxes,
    bands, items in a window and rows are the stacked build's (item ids map through the
    order), and stacking all of it gives the stacked build itself."""
    flat = load_profile(synthetic_8, stack=False)
    full = load_profile(synthetic_8)
    restacked = flat.as_stacked()
    assert restacked.stacked and restacked is not flat
    _same_model_columns(restacked, full)
    assert not flat._ix.lane_rows  # nothing stacked until drawn
    draw_rows(flat, 3, *full.time_range(), 800)
    assert set(flat._ix.lane_rows) == {3}
    # the item id in the stacked build of each item of the flat one
    to_full = np.empty(flat.n_items, np.int64)
    to_full[restacked_order(flat)] = np.arange(flat.n_items)
    assert np.array_equal(full.items["start"][to_full], flat.items["start"])
    t0, t1 = full.time_range()
    shown = 0
    for lane in range(full.n_lanes):
        for a, b, w in ((t0, t1, 1500), (t0 + (t1 - t0) * 0.4, t0 + (t1 - t0) * 0.41, 900)):
            got, want = draw_rows(flat, lane, a, b, w), draw_rows(full, lane, a, b, w)
            assert [r.row for r in got] == [r.row for r in want]
            for g, x in zip(got, want):
                assert np.array_equal(to_full[g.box_item], x.box_item)
                assert np.array_equal(to_full[g.band_first], x.band_first)
                for c in ("box_x0", "box_x1", "band_x0", "band_x1", "band_count"):
                    assert np.array_equal(getattr(g, c), getattr(x, c)), c
                shown += len(g.box_item)
            assert np.array_equal(np.sort(to_full[items_in(flat, lane, a, b)]),
                                  np.sort(items_in(full, lane, a, b)))
        lo, hi = flat.lane_range(lane)
        assert np.array_equal(flat.rows_of(np.arange(lo, hi)), full.items["row"][to_full[lo:hi]])
    assert shown > 1000
    # after enough scans a lane gets its duration order (wide items found without a scan):
    # the same boxes and bands
    lane = int(np.argmax(np.bincount(flat.items["lane"])))
    t0, t1 = full.time_range()
    for _ in range(40):
        draw_rows(flat, lane, t0, t1, 1200)
    assert flat.stacked_lane(lane).dur_perm is not None
    for a, b, w in ((t0, t1, 1200), (t0 + (t1 - t0) * 0.3, t0 + (t1 - t0) * 0.31, 700)):
        for g, x in zip(draw_rows(flat, lane, a, b, w), draw_rows(full, lane, a, b, w)):
            assert np.array_equal(to_full[g.box_item], x.box_item)
            assert np.array_equal(g.band_count, x.band_count)


def restacked_order(flat):
    """The (lane, row, start) order of a model built unstacked, as a stacked build has it."""
    return np.concatenate([flat.stacked_lane(L).ids for L in range(flat.n_lanes)])


def test_the_model_is_frozen_and_typed(synthetic_8):
    """Nothing is added to a model after it is built: stages make a new one (evolve)."""
    import dataclasses
    m = load_profile(synthetic_8)
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.items = {}
    assert not hasattr(m, "extra")
    assert m.busy_ns and all(isinstance(v, int) for v in m.busy_ns.values())
    e = m.evolve(errors=["x: damaged"])
    assert e.errors == ["x: damaged"] and m.errors == [] and e.items is m.items


def test_step_integral_matches_brute_force():
    rng = np.random.default_rng(3)
    s = rng.integers(0, 10_000, 500)
    e = s + rng.integers(1, 500, 500)
    step = StepIntegral.from_intervals(s, e, None, denominator=4)
    edges = np.linspace(0, 11_000, 23)
    t = np.arange(0, 11_000)
    level = ((t[:, None] >= s[None, :]) & (t[:, None] < e[None, :])).sum(1)
    for i in range(len(edges) - 1):
        a, b = edges[i], edges[i + 1]
        sel = (t >= a) & (t + 1 <= b)
        # compare on whole-ns bins inside each edge pair
        if sel.sum() > 10:
            ia, ib = int(np.ceil(a)), int(np.floor(b))
            want = level[ia:ib].mean() / 4
            got_i = step.average(np.array([ia, ib], dtype=float))[0]
            assert got_i == pytest.approx(want, abs=1e-9)


def test_blocked_search_of_mapped_steps_is_the_binary_search():
    """Big step functions of a mapped bundle are searched through their coarse index (few
    cold pages); in memory, by a binary search.  Both give the same integrals."""
    rng = np.random.default_rng(5)
    s = np.sort(rng.integers(0, 10**9, 40_000))
    e = s + rng.integers(1, 10**6, 40_000)
    step = StepIntegral.from_intervals(s, e, None, denominator=3)
    assert len(step.t) >= StepIntegral.COARSE_MIN
    mapped = StepIntegral(step.t, step.integral, 3, mapped=True)
    for edges in (np.linspace(-10, 1.2e9, 2001), np.sort(rng.uniform(0, 1e9, 700)),
                  np.array([float(step.t[0]), float(step.t[-1])])):
        assert np.allclose(step.integral_at(edges), mapped.integral_at(edges), rtol=1e-12)
    assert mapped._coarse is not None and step._coarse is None


def _blocked_integral(step, times):
    """``StepIntegral.integral_at`` of a mapped step as it was computed before it searched
    a frame's dense queries in one binary search: every query through its coarse block."""
    from legate_prof.model.intervals import blocked_searchsorted
    t, integral, n = step.t, step.integral, len(step.t)
    times = np.asarray(times, dtype=np.float64)
    k = np.clip(blocked_searchsorted(t, t[::step.BLOCK], step.BLOCK, 0, n, times, "right") - 1,
                0, n - 2)
    t0, t1 = t[k], t[k + 1]
    with np.errstate(over="ignore"):
        frac = np.clip((times - t0) / np.maximum(t1 - t0, 1e-300), 0.0, 1.0)
    out = integral[k] + (integral[k + 1] - integral[k]) * frac
    out[times <= t[0]] = 0.0
    out[times >= t[-1]] = integral[-1]
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_a_mapped_step_searched_in_one_binary_search_gives_the_same_bits(dtype):
    """A frame's bins over a mapped step function: where they are at least one per page of
    the breakpoints between the first and the last, one binary search over those (over all
    of them, where they are that dense over the whole); else a block per query.  Each way,
    the integrals are the block search's to the bit: repeated times, queries before, at and
    after every breakpoint, in and out of order, an edge on the first and the last."""
    rng = np.random.default_rng(17)
    t = np.sort(rng.integers(0, 10**9, 200_000)).astype(dtype)
    t[1000:1100] = t[1000]  # a time repeated (a sum of ranks' steps kept as is)
    integral = np.concatenate([[0.0], np.cumsum(rng.random(len(t) - 1) * 1e6)])
    big = StepIntegral(t, integral, 4, mapped=True)
    small = StepIntegral(t[:5000].copy(), integral[:5000].copy(), 4, mapped=True)
    lo, hi = float(t[0]), float(t[-1])
    cases = {
        "dense over all": (small, np.linspace(float(small.t[0]) - 5, float(small.t[-1]) + 5,
                                              961)),
        "dense over a part": (big, np.linspace(float(t[50_000]), float(t[52_000]), 300)),
        "sparse": (big, np.linspace(lo - 1e6, hi + 1e6, 200)),
        "out of order, with repeats": (big, rng.permutation(np.concatenate(
            [t[990:1110].astype(float), t[::4000].astype(float) + 0.5, [lo, hi, lo - 1]]))),
        "before all": (big, np.linspace(lo - 1e9, lo - 1, 50)),
        "after all": (big, np.linspace(hi + 1, hi + 1e9, 50)),
        "one": (big, np.array([float(t[1000])])),
        "none": (big, np.zeros(0)),
    }
    for what, (step, q) in cases.items():
        got, want = step.integral_at(q), _blocked_integral(step, q)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), what
        assert np.array_equal(step._search(np.asarray(q, np.float64)),
                              np.searchsorted(step.t, q, side="right")), what


def test_processor_utilization_excludes_waits_and_counts_idle(tmp_path):
    from legate_prof.read.legion_writer import LegionProfWriter
    p = tmp_path / "legate_0.prof"
    cpu0, cpu1 = 0x1D00000000000000, 0x1D00000000000001
    with LegionProfWriter(p) as w:
        w.write("MachineDesc", node_id=0, num_nodes=1, hostname="h", host_id=1, process_id=2)
        w.write("ProcDesc", proc_id=cpu0, kind=2, uuid_size=16)
        w.write("ProcDesc", proc_id=cpu1, kind=2, uuid_size=16)  # idle
        w.write("TaskKind", task_id=1, name="BinaryOp", overwrite=False)
        w.write("TaskInfo", op_id=5, task_id=1, variant_id=1, proc_id=cpu0, create=0, ready=0,
                start=0, stop=1000, creator=0, critical=0, fevent=1)
        w.write("TaskWaitInfo", op_id=5, task_id=1, variant_id=1, wait_start=200,
                wait_ready=300, wait_end=600, wait_event=9)
    model = load_profile([p])
    u = average_utilization(model, "cpu", 0, 0, 1000, 10)
    # busy 0-200 and 600-1000 on one of two CPUs
    assert u.tolist() == pytest.approx([0.5, 0.5, 0, 0, 0, 0, 0.5, 0.5, 0.5, 0.5])
    task = int(np.flatnonzero(model.items["kind"] == ItemKind.TASK)[0])
    d = item_facts(model, task)
    assert d["waiting_ns"] == 400 and d["running_ns"] == 600
    assert d["waits"] == [{"start_ns": 200, "ready_ns": 300, "end_ns": 600}]


def _conserved(model, lane, t0, t1, width):
    rows = draw_rows(model, lane, t0, t1, width)
    shown = sum(len(r.box_item) + int(r.band_count.sum()) for r in rows)
    return shown, len(items_in(model, lane, t0, t1)), rows


@pytest.mark.parametrize("zoom", [1, 10, 1000])
def test_draw_list_accounts_for_every_item_at_any_zoom(synthetic_8, zoom):
    model = load_profile(synthetic_8)
    t0, t1 = model.time_range()
    span = (t1 - t0) // zoom
    mid = (t0 + t1) // 2
    a, b = mid - span // 2, mid + span // 2
    for lane in model.lanes_of("cpu", 0)[:2]:
        shown, total, rows = _conserved(model, lane, a, b, 1200)
        assert shown == total
        for r in rows:
            assert np.all(r.band_x1 - r.band_x0 >= 3)  # nothing narrower than min_px
            assert np.all(r.box_x1 - r.box_x0 >= 1)
        n_draw = sum(len(r.box_item) + len(r.band_count) for r in rows)
        assert n_draw <= 1200  # bounded by pixels, not items


def _same_draw_rows(a, b):
    assert [r.row for r in a] == [r.row for r in b]
    for x, y in zip(a, b):
        for f in ("box_x0", "box_x1", "box_item", "band_x0", "band_x1", "band_count",
                  "band_first"):
            assert np.array_equal(np.sort(getattr(x, f)), np.sort(getattr(y, f))), f


def test_first_drawings_scan_and_later_ones_use_the_duration_order(synthetic_8):
    """A lane's first drawings scan its items in view (the first frames sort nothing); once
    they have scanned as much as a sort costs, the per-row duration order finds the wide
    items.  Both draw the same."""
    model = load_profile(synthetic_8)
    t0, t1 = model.time_range()
    lanes = [int(L) for L in range(model.n_lanes) if model.lane_range(L)[1] > model.lane_range(L)[0]]
    assert any(model.lanes["rows"][L] > 1 for L in lanes)  # stacked lanes are among them
    for zoom in (1, 7, 300):
        span = (t1 - t0) // zoom
        a = (t0 + t1) // 2 - span // 2
        fresh = load_profile(synthetic_8)
        for L in lanes:
            first = draw_rows(fresh, L, a, a + span, 900)  # scanned
            assert L not in fresh._ix.lane_dur_perm
            fresh.note_scanned(L, fresh.SCANS_BEFORE_SORT * model.n_items)  # as if drawn often
            sorted_ = draw_rows(fresh, L, a, a + span, 900)  # builds the order
            assert L in fresh._ix.lane_dur_perm
            _same_draw_rows(first, sorted_)


def test_zoomed_out_merges_and_zoomed_in_splits(synthetic_8):
    model = load_profile(synthetic_8)
    lane = model.lanes_of("cpu", 0)[0]
    t0, t1 = model.time_range()
    full = draw_rows(model, lane, t0, t1, 800)
    assert sum(int(r.band_count.sum()) for r in full) > 0.5 * len(items_in(model, lane, t0, t1))
    it = model.items
    lo, hi = model.sublane(lane, 0)
    i = lo + (hi - lo) // 2
    a, b = int(it["start"][i]), int(it["stop"][i])
    pad = (b - a) * 2
    near = draw_rows(model, lane, a - pad, b + pad, 800)
    assert sum(len(r.band_count) for r in near) == 0
    assert i in np.concatenate([r.box_item for r in near])


def test_search_matches_names_and_provenance(synthetic_8):
    model = load_profile(synthetic_8)
    hits = search_items(model, "putmask")
    assert len(hits) > 0
    assert all(model.names[model.items["name"][h]] == "PutMask" for h in hits[:50])
    by_line = search_items(model, "synthetic_prog.py:42")
    assert len(by_line) > 0
    provs = model.op_provenance(model.items["op_id"][by_line])
    own = np.array([model.provenances[p] == "synthetic_prog.py:42" for p in provs.tolist()])
    assert own.any()
    # the rest are calls made inside the line's items (found by the task they ran in)
    it = model.items
    callers = set(it["fevent"][by_line[own]].tolist())
    assert set(it["kind"][by_line[~own]].tolist()) <= {int(ItemKind.MAPPER_CALL),
                                                       int(ItemKind.RUNTIME_CALL),
                                                       int(ItemKind.APP_CALL)}
    assert set(it["creator"][by_line[~own]].tolist()) <= callers


def test_a_search_for_a_line_finds_the_task_bodies_run_as_application_calls():
    """A GUI walk: searching the guide's line lit its tasks' boxes but not the bodies drawn
    inside them (application calls, which have no operation of their own).  Each call found
    lies within a task of that line on the same lane; every call made inside such a task is
    found."""
    model = load_profile([str(REAL / "inefficient_1rank")], use_cache=False)
    it = model.items
    hits = search_items(model, "inefficient.py:11")
    kind = it["kind"][hits]
    tasks = hits[kind == int(ItemKind.TASK)]
    calls = hits[kind == int(ItemKind.APP_CALL)]
    assert len(tasks) and len(calls)
    for c in calls.tolist():
        inside = tasks[(it["lane"][tasks] == it["lane"][c]) & (it["start"][tasks] <= it["start"][c])
                       & (it["stop"][tasks] >= it["stop"][c])]
        assert len(inside) == 1, c
    every_app_call = np.flatnonzero(it["kind"] == int(ItemKind.APP_CALL))
    made_inside = every_app_call[np.isin(it["creator"][every_app_call], it["fevent"][tasks])]
    assert set(made_inside.tolist()) == set(calls.tolist())


def test_memory_utilization_is_live_bytes_over_capacity(synthetic_8):
    model = load_profile(synthetic_8)
    t0, t1 = model.time_range()
    u = average_utilization(model, "framebuffer", 0, t0, t1, 50)
    assert 0 < u.max() <= 1.0
    all_ranks = average_utilization(model, "framebuffer", None, t0, t1, 50)
    per = np.mean([average_utilization(model, "framebuffer", r, t0, t1, 50) for r in range(8)], axis=0)
    assert all_ranks == pytest.approx(per)  # equal capacities: plain mean


def test_meta_task_waits_attach_to_the_last_matching_meta_task(tmp_path):
    from legate_prof.read.legion_writer import LegionProfWriter
    p = tmp_path / "legate_0.prof"
    util = 0x1D00000000000000
    with LegionProfWriter(p) as w:
        w.write("MachineDesc", node_id=0, num_nodes=1, hostname="h", host_id=1, process_id=2)
        w.write("ProcDesc", proc_id=util, kind=3, uuid_size=16)
        w.write("MetaDesc", kind=7, message=False, ordered_vc=False, name="Deferred Mapping")
        w.write("MetaDesc", kind=8, message=False, ordered_vc=False, name="Scheduler")
        for start, kind in ((0, 7), (1000, 8), (2000, 7)):
            w.write("MetaInfo", op_id=0, lg_id=kind, proc_id=util, create=start, ready=start,
                    start=start, stop=start + 900, creator=0, critical=0, fevent=start + 1)
        # a wait of the second 'Deferred Mapping' (the last one of that kind started before)
        w.write("MetaWaitInfo", op_id=0, lg_id=7, wait_start=2100, wait_ready=2200,
                wait_end=2500, wait_event=5)
    model = load_profile([p])
    assert len(model.waits["item"]) == 1
    i = int(model.waits["item"][0])
    assert model.items["start"][i] == 2000
    assert model.names[model.items["name"][i]] == "Deferred Mapping"
    u = average_utilization(model, "utility", 0, 2000, 2900, 9)
    assert u.tolist() == pytest.approx([1, 0, 0, 0, 0, 1, 1, 1, 1])


@pytest.mark.parametrize("profile", ["efficient_0.prof", "legate26.06_cpu2_myprof_0.prof"])
def test_calls_fold_the_same_with_packed_or_ranked_time_keys(profile, monkeypatch):
    """Calls are nested with (caller, time) keys packed into one integer; where times span
    too much to pack, their rank among all times is used instead.  Both fold the same waits."""
    from pathlib import Path
    from legate_prof.assemble import nested_calls
    path = Path(__file__).resolve().parents[1] / "fixtures" / "real" / profile
    packed = load_profile([path], stack=False)
    monkeypatch.setattr(nested_calls, "PACKED_KEY_LIMIT", 0)
    ranked = load_profile([path], stack=False)
    assert len(packed.waits["item"]) > 0
    for k, v in packed.waits.items():
        assert np.array_equal(v, ranked.waits[k]), k


def test_unique_inverse_is_numpys_for_every_key_shape():
    """The build's unique + codes (lookup table, equality passes or search, by the keys'
    range and count) give exactly np.unique's result, dtype included."""
    from legate_prof.assemble.record_items import unique_inverse
    rng = np.random.default_rng(3)
    cases = [rng.integers(-32768, 32767, 5000).astype(np.int16),  # full int16 range
             rng.integers(0, 2**64 - 1, 5000, dtype=np.uint64),  # many large values
             (rng.integers(0, 50, 5000) + np.uint64(2**63 + 7)).astype(np.uint64),
             rng.integers(-10**15, -10**15 + 300, 5000),  # small range, far from 0
             rng.integers(0, 5, 5000).astype(np.uint64) * np.uint64(2**61),  # few, large
             np.zeros(0, np.int32), np.array([7], np.int64),
             rng.integers(0, 10**9, 5000).astype(np.int32), rng.integers(0, 3, 5000).astype(np.uint8),
             np.array([2.5, np.nan, 1.0, np.nan, 2.5])]
    for keys in cases:
        uniq, inv = unique_inverse(keys)
        want_u, want_i = np.unique(keys, return_inverse=True)
        assert uniq.dtype == keys.dtype and np.array_equal(uniq, want_u, equal_nan=True)
        assert np.array_equal(inv, want_i.ravel())


def test_lane_keys_part_by_part_are_the_sorted_distinct_keys_of_all_items():
    """Each item's lane is the index of its (rank, group, ref, ref2) among the sorted distinct
    keys of all items and of the idle processors' lanes, whatever mix of constant, few-valued
    and wide columns the record tables have (processor and memory ids, explicit ranks)."""
    from legate_prof.assemble.lane_layout import LANE_KEY, _lane_keys
    from legate_prof.model.kinds import node_of_id
    from legate_prof.assemble.record_items import ItemParts
    rng = np.random.default_rng(5)
    procs = (np.uint64(0x1D00000000000000) + (rng.integers(0, 3, 8).astype(np.uint64) << 40)
             + rng.integers(0, 6, 8).astype(np.uint64))
    mems = np.uint64(0x1E00000000000000) + rng.integers(0, 2**30, 5, dtype=np.uint64)
    parts = ItemParts()
    for n, ref, ref2, group, rank in (
            (900, procs[rng.integers(0, 8, 900)], None, rng.integers(0, 4, 900), None),
            (300, procs[2], None, 5, None),  # a constant processor
            (400, mems[rng.integers(0, 5, 400)], mems[rng.integers(0, 5, 400)], 7,
             rng.integers(0, 3, 400).astype(np.int32)),  # copies: two memories, their rank
            (200, np.uint64(0), mems[rng.integers(0, 5, 200)], 7, 1),  # fills
            (50, np.uint64(2), None, 9, 2),  # a rank's own lane
            (1, procs[0], None, 1, None)):
        t = np.sort(rng.integers(0, 10**6, n))
        parts.add(start=t, stop=t + 5, group=group, ref=ref, ref2=ref2, rank=rank, name=0,
                  kind=ItemKind.TASK)
    extra = np.array([(0, 3, int(procs[7]), 0), (4, 2, 123, 0)], LANE_KEY)
    lane_tab, lane = _lane_keys(parts.parts, extra)

    keys = np.empty(sum(len(p["start"]) for p in parts.parts), LANE_KEY)
    at = 0
    for p in parts.parts:
        n = len(p["start"])
        keys["ref"][at:at + n] = p["ref"]
        keys["ref2"][at:at + n] = 0 if p["ref2"] is None else p["ref2"]
        keys["group"][at:at + n] = p["group"]
        keys["rank"][at:at + n] = (node_of_id(np.broadcast_to(p["ref"], (n,))) if p["rank"]
                                   is None else p["rank"])
        at += n
    every = np.concatenate([keys, extra])
    o = np.lexsort((every["ref2"], every["ref"], every["group"], every["rank"]))
    first = np.concatenate([[True], every[o][1:] != every[o][:-1]])
    assert np.array_equal(lane_tab, every[o][first])
    assert lane.dtype == np.int32 and np.array_equal(lane_tab[lane], keys)
    assert _lane_keys([], extra[:0])[1].shape == (0,) and len(_lane_keys([], extra)[0]) == 2


@pytest.mark.parametrize("side", ["left", "right"])
def test_blocked_searchsorted_is_numpys(side):
    """The coarse-then-bisect search equals np.searchsorted on any slice, with repeats,
    queries outside the values and at block edges."""
    from legate_prof.model.intervals import blocked_searchsorted
    rng = np.random.default_rng(11)
    arr = np.sort(rng.integers(0, 5000, 20_000)).astype(np.float64)  # many repeats
    for block in (4, 32):
        coarse = arr[::block]
        for lo, hi in ((0, len(arr)), (37, 12_345), (block * 3, block * 9), (5, 6), (8, 8)):
            v = np.concatenate([rng.uniform(-10, 5010, 500), arr[lo:hi][::97], [-1.0, 1e9]])
            want = np.searchsorted(arr[lo:hi], v, side=side)
            got = blocked_searchsorted(arr, coarse, block, lo, hi, v, side)
            assert np.array_equal(got, want), (block, lo, hi)


def test_lanes_about_to_be_shown_are_stacked_together(synthetic_8):
    """``prepare_lanes`` stacks the lanes a frame will draw (threads over the cores) and the
    tiles are the ones a lane stacked alone gives; a stacked model has nothing to do."""
    from legate_prof.query import ProfileSource
    flat, alone = (load_profile(synthetic_8, stack=False) for _ in range(2))
    src, ref = ProfileSource(flat), ProfileSource(alone)
    lanes = [int(L) for L in flat.lanes_of("cpu")]
    src.prepare_lanes(lanes)
    assert sorted(flat._ix.lane_rows) == sorted(lanes) and not alone._ix.lane_rows
    t0, t1 = flat.time_range()
    for L in lanes:
        a, b = src.lane_tile(L, t0, t1, 1000), ref.lane_tile(L, t0, t1, 1000)
        assert [r.row for r in a.rows] == [r.row for r in b.rows]
        for ra, rb in zip(a.rows, b.rows):
            assert np.array_equal(ra.box_item, rb.box_item)
            assert np.array_equal(ra.band_count, rb.band_count)
    stacked = load_profile(synthetic_8)
    ProfileSource(stacked).prepare_lanes(lanes)
    assert not stacked._ix.lane_rows


@pytest.mark.parametrize("span", [10_000, 2**43], ids=["packed", "long-run"])
def test_rows_needed_is_what_stacking_gives(span):
    """The row counts of a model built unstacked (found without stacking) are the rows the
    stacking gives, lane by lane: empty intervals, equal starts, stops before starts, and
    runs longer than the 73 minutes packed keys hold."""
    from legate_prof.model.intervals import group_start_order, rows_needed, stack_lanes
    rng = np.random.default_rng(11)
    for trial in range(400):
        n, lanes = int(rng.integers(1, 80)), int(rng.integers(1, 6))
        lane = rng.integers(0, lanes, n).astype(np.int32)
        start = rng.integers(0, 40, n) * (span // 40)
        dur = rng.integers(-2, 25, n) * (span // 100)
        dur[rng.random(n) < 0.25] = 0
        order = group_start_order(lane, start, start + dur)
        s, e = start[order], (start + dur)[order]
        bounds = np.searchsorted(lane[order], np.arange(lanes + 1))
        assert np.array_equal(rows_needed(s, e, bounds), stack_lanes(s, e, bounds)[2]), trial
    big = 30_000  # one lane past the greedy: the vectorized matching
    s = np.sort(rng.integers(0, span, big))
    e = s + rng.integers(0, span // 500, big)
    assert rows_needed(s, e, np.array([0, big]))[0] == stack_lanes(s, e, np.array([0, big]))[2][0]


def test_a_run_longer_than_packed_keys_opens_unstacked(tmp_path):
    """A profile over two hours (times past 2**42 ns) builds unstacked for the timeline and
    for statistics as it builds stacked."""
    from fixtures.synthetic import generate
    from legate_prof.analyze.stats import compute_stats
    files = generate(tmp_path, ranks=2, items=4000, seed=1, duration_ns=2**43)
    flat, full = load_profile(files, stack=False), load_profile(files)
    assert int(full.items["stop"].max()) > 2**42
    assert np.array_equal(flat.lanes["rows"], full.lanes["rows"])
    _same_columns(flat.as_stacked(), full)
    assert compute_stats(flat) == compute_stats(full)


def _same_columns(a, b):
    for table in ("items", "waits", "transfers"):
        for k, v in getattr(b, table).items():
            assert np.array_equal(v, getattr(a, table)[k]), (table, k)


def test_a_sum_of_steps_kept_with_repeated_times_reads_as_the_distinct_sum():
    """The all-ranks step a bundle stores keeps a time shared by several ranks once per rank
    (``distinct=False``); read back (mapped, through the coarse index) it gives the distinct
    sum's integrals, without a warning, before, inside and after its times."""
    import warnings

    rng = np.random.default_rng(4)
    steps = []
    for _ in range(3):
        s = np.sort(rng.integers(0, 10**6, 3000)) * 10
        steps.append(StepIntegral.from_intervals(s, s + 7, None, denominator=2))
    steps += [StepIntegral(s.t.copy(), s.integral.copy(), 2) for s in steps]  # same times
    kept = StepIntegral.sum(steps, distinct=False)
    assert len(kept.t) == StepIntegral.sum_length(steps) > len(StepIntegral.sum(steps).t)
    read = StepIntegral(kept.t, kept.integral, kept.denominator, mapped=True)
    exact = StepIntegral.sum(steps)
    q = np.concatenate([[-1e12, 0.0], exact.t[::7].astype(float) + 3, [exact.t[-1], 1e12]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = read.integral_at(q)
    assert np.allclose(got, exact.integral_at(q))


def _aligned_edges(cell, first, count, rng):
    """A view's bin edges as the viewer asks them: ``linspace`` over whole bins of a power
    of two times ``cell``, anchored to absolute time, reaching past the step each side."""
    bin_ns = cell * 2 ** int(rng.integers(0, 5))
    a = (np.floor(first * cell / bin_ns) - int(rng.integers(0, 3))) * bin_ns
    n = int((first + count) * cell / bin_ns - a / bin_ns) + int(rng.integers(1, 4))
    return np.linspace(a, a + n * bin_ns, n + 1)


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_a_sampled_integral_gives_the_bits_of_the_search(dtype):
    """A step's sampled integral (a bundle keeps it) answers bins of a multiple of its cell
    with the very floats the search of the mapped step gives — before its first time (0),
    inside, after its last (the total) — for a rank's step, a sum of ranks' steps with
    repeated times, and a busy/idle union; bins of another size are searched as before."""
    rng = np.random.default_rng(9)
    steps = []
    for k in range(3):
        s = np.sort(rng.integers(0, 10**9, 12_000)).astype(dtype)
        steps.append(StepIntegral.from_intervals(s, s + rng.integers(1, 10**4, 12_000).astype(
            dtype), None, denominator=k + 1))
    for step in (StepIntegral.sum(steps, distinct=False), StepIntegral.sum(steps),
                 StepIntegral.any_active(steps)):
        assert len(step.t) >= StepIntegral.SAMPLED_MIN
        cell, first, values = step.sampled_integral()
        assert StepIntegral.SAMPLED_CELLS < len(values) <= 2 * StepIntegral.SAMPLED_CELLS + 2
        assert first * cell <= step.t[0] and (first + len(values) - 1) * cell >= step.t[-1]
        searched = StepIntegral(step.t, step.integral, step.denominator, mapped=True)
        sampled = StepIntegral(step.t, step.integral, step.denominator, mapped=True)
        sampled.adopt_sampled_integral(cell, first, values)
        for _ in range(20):
            edges = _aligned_edges(cell, first, len(values), rng)
            if len(edges) > StepIntegral.MOST_LOOKUPS:
                continue
            assert sampled._from_sampled(edges) is not None
            assert sampled.quick_at(edges[1] - edges[0], len(edges) - 1)
            assert np.array_equal(sampled.average(edges), searched.average(edges))
        off = np.linspace(0.5 * cell, 1000.5 * cell, 301)  # (not on the cells: searched)
        assert sampled._from_sampled(off) is None and not sampled.quick_at(cell / 2, 300)
        assert np.array_equal(sampled.integral_at(off), searched.integral_at(off))
        far = np.array([-1e300, 0.0, 1e300])  # (whole multiples no int64 of cells holds)
        assert sampled._from_sampled(far) is None
        assert np.array_equal(sampled.integral_at(far), searched.integral_at(far))
    small = StepIntegral.from_intervals(np.arange(10), np.arange(10) + 3)
    assert small.sampled_integral() is None and small.quick_at(1.0, 10)


def test_the_initial_view_of_a_late_one_nanosecond_run_is_wide_enough_to_draw():
    """However late a damaged log puts a run of a single nanosecond, the initial view spans
    thousands of distinct float64 positions (the viewer's and the tiles' coordinates)."""
    from legate_prof.model.trace_model import time_range_of
    for first in (0, 10**6, 2**40 + 3, 1795351394079597442, 2**62 - 7):
        t0, t1 = time_range_of(first, first + 1)
        assert t0 <= first and t1 >= first + 1
        assert (float(t1) - float(t0)) / float(np.spacing(float(t1))) >= 2**11


def test_record_columns_are_the_record_tables_columns():
    """A packed record table's columns read by runs of adjacent 8-byte fields (one transposed
    copy each) are its columns, value for value and type for type: mixed signed and unsigned
    runs, narrow fields between them, more rows than one transposed block, none, one, and a
    strided view of a table."""
    from legate_prof.assemble.record_items import record_columns
    dt = np.dtype([("a", "<u8"), ("b", "<i8"), ("c", "<u4"), ("d", "<i8"), ("e", "<u8"),
                   ("f", "<u8"), ("g", "u1"), ("h", "<i8"), ("i", "<u2")])  # packed: 55 bytes
    assert dt.itemsize == 55
    rng = np.random.default_rng(2)
    for n in (0, 1, 3, 40000):
        raw = rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).tobytes()
        table = np.frombuffer(raw, dt)
        for t in (table, table[::3]):
            cols = record_columns(t)
            assert list(cols) == list(dt.names)
            for name in dt.names:
                assert cols[name].dtype == dt.fields[name][0]
                assert np.array_equal(cols[name], t[name]) and cols[name].flags.c_contiguous


def test_group_start_order_is_the_three_key_lexsort():
    """The lanes' and calls' (group, start, longest first, then as given) order by one packed
    sort is ``np.lexsort((start - stop, start, group))``: ties on start, equal intervals,
    negative starts, and spans too wide to pack (the lexsort itself)."""
    from legate_prof.model.intervals import group_start_order
    rng = np.random.default_rng(8)
    for n, groups, span in ((5000, 3, 50), (5000, 400, 10**6), (3000, 2, 2**61),
                            (1, 1, 1), (0, 1, 1)):
        group = rng.integers(0, groups, n).astype(np.int32)
        start = rng.integers(-span // 2, span // 2 + 1, n).astype(np.int64)
        stop = start + rng.integers(0, 5, n)
        want = np.lexsort((start - stop, start, group))
        assert np.array_equal(group_start_order(group, start, stop), want)


def test_stripes_group_their_keys_by_run_as_a_pass_per_run_does():
    """``Stripes.lookup`` asks each run (a rank's operations) only of its own keys: the
    grouping (one stable sort) gives each run present, in order, with the positions a pass
    per run finds — with no key of any run (-1), one run only, and many runs."""
    from legate_prof.model.item_parts import positions_by_part
    rng = np.random.default_rng(7)
    for n, runs in ((0, 3), (1, 1), (40, 1), (1000, 4), (3000, 1000)):
        for run in (rng.integers(-1, runs, n), np.full(n, runs - 1), np.full(n, -1)):
            want = [(j, np.flatnonzero(run == j)) for j in range(runs) if (run == j).any()]
            got = positions_by_part(run, runs)
            assert [j for j, _ in got] == [j for j, _ in want]
            assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(got, want))


def _nested_calls_case(rng, n_callers=4, zero_length=False):
    """Tasks with calls that nest (a caller's call stack), and waits of the tasks anywhere in
    or around them: (kind, start, stop, fevent, waits)."""
    from legate_prof.model.kinds import ItemKind
    kind, start, stop, fevent = [], [], [], []
    for c in range(n_callers):
        s0 = int(rng.integers(0, 1000))
        e0 = s0 + int(rng.integers(50, 400))
        kind.append(int(ItemKind.TASK)), start.append(s0), stop.append(e0), fevent.append(c + 1)
        calls = []
        for _ in range(int(rng.integers(0, 12))):
            a, b = (s0, e0) if not calls else calls[int(rng.integers(0, len(calls)))]
            x = int(rng.integers(a, b))
            y = int(rng.integers(x + (0 if zero_length else 1), b + 1))
            if rng.random() < 0.15:
                x, y = a, b  # (an identical interval: the later one is inside)
            if y <= x and not zero_length:
                continue
            if all(y <= p or x >= q or p <= x <= y <= q or x <= p <= q <= y for p, q in calls):
                calls.append((x, y))
                kind.append(int(ItemKind.RUNTIME_CALL)), start.append(x), stop.append(y)
                fevent.append(c + 1)
    kind, start, stop = np.array(kind, np.uint8), np.array(start), np.array(stop)
    tasks = np.flatnonzero(kind == int(ItemKind.TASK))
    m = int(rng.integers(0, 3 * n_callers + 1))
    item = rng.choice(tasks, m) if m else np.zeros(0, np.int64)
    ws = start[item] + rng.integers(0, 400, m)
    we = ws + rng.integers(0, 100, m)
    waits = {"item": item.astype(np.int64), "start": ws, "ready": we, "end": we,
             "event": np.arange(1, m + 1).astype(np.uint64)}
    return kind, start, stop, np.array(fevent, np.uint64), waits


def test_waits_move_into_the_smallest_call_as_a_scan_finds_it():
    """A task's wait moves into the smallest call of its task that contains it (of identical
    ones, the inner: the later in call order), else the smallest it overlaps (the first in
    call order), else stays — as a scan of every call finds, on random call stacks with
    identical intervals, waits inside, across and outside calls."""
    from legate_prof.assemble.nested_calls import nest_calls
    rng = np.random.default_rng(21)
    for trial in range(600):
        kind, start, stop, fevent, waits = _nested_calls_case(rng, int(rng.integers(1, 6)))
        got, _, _ = nest_calls(kind, start, stop, fevent, {k: v.copy() for k, v in waits.items()})
        moved = {int(ev): int(i) for ev, i in zip(got["event"], got["item"]) if ev}
        calls = np.flatnonzero(kind != kind[0])
        order = calls[np.lexsort((calls, start[calls] - stop[calls], start[calls]))]
        for w, ev in enumerate(waits["event"].tolist()):
            task, ws, we = int(waits["item"][w]), int(waits["start"][w]), int(waits["end"][w])
            mine = [int(c) for c in order if fevent[c] == fevent[task]]
            inside = [c for c in mine if start[c] <= ws and we <= stop[c]]
            over = [c for c in mine if start[c] < we and stop[c] > ws]
            dur = {c: int(stop[c] - start[c]) for c in mine}
            if inside:
                want = [c for c in inside if dur[c] == min(dur[c] for c in inside)][-1]
            elif over:
                want = [c for c in over if dur[c] == min(dur[c] for c in over)][0]
            else:
                want = task
            assert moved[ev] == want, (trial, w)


def test_a_calls_parent_is_the_same_found_a_level_at_a_time_or_by_one_sort(monkeypatch):
    """Where calls nest a few levels deep their parents are found a pass a level, deeper by
    one sort: on random call stacks (up to a dozen levels) both give the same waits."""
    from legate_prof.assemble import nested_calls
    levels = []
    search = nested_calls._last_one_level_up
    monkeypatch.setattr(nested_calls, "_last_one_level_up",
                        lambda depth, kids: levels.append(int(depth.max())) or search(depth, kids))
    rng = np.random.default_rng(34)
    for trial in range(300):
        kind, start, stop, fevent, waits = _nested_calls_case(rng, int(rng.integers(1, 6)))
        got = []
        for shallow in (0, 3, 100):  # (by one sort; a pass a level up to 3; always a pass)
            monkeypatch.setattr(nested_calls, "SHALLOW", shallow)
            got.append(nested_calls.nest_calls(kind, start, stop, fevent,
                                               {k: v.copy() for k, v in waits.items()})[0])
        assert all(np.array_equal(got[0][k], g[k]) for g in got[1:] for k in got[0]), trial
    assert max(levels) > 3 and min(levels) == 1


def test_waits_into_calls_nested_deep_or_in_a_long_row_are_found_in_a_few_passes():
    """Calls nested 2^17 deep, and 2^17 calls in a row with waits between them: each wait
    finds its call by a descent (log passes), not by a step up the call tree a round (a pass
    over the waits per level of nesting: quadratic)."""
    from legate_prof.assemble.nested_calls import nest_calls
    from legate_prof.model.kinds import ItemKind
    n, m = 1 << 17, 20_000
    rng = np.random.default_rng(2)
    for shape in ("deep", "row"):
        if shape == "deep":  # call i: [i, 2n - i], each inside the one before
            start, stop = np.arange(n + 1), 2 * (n + 1) - np.arange(n + 1)
            ws = np.sort(rng.integers(0, n - 3, m))
        else:  # call i: [10 i, 10 i + 5] inside the task [0, 10 (n + 2)]
            start, stop = np.arange(n + 1) * 10, np.arange(n + 1) * 10 + 5
            start[0], stop[0] = 0, 10 * (n + 2)
            ws = np.sort(rng.integers(1, n, m)) * 10 + 6  # (between two calls)
        kind = np.full(n + 1, int(ItemKind.RUNTIME_CALL), np.uint8)
        kind[0] = int(ItemKind.TASK)
        waits = {"item": np.zeros(m, np.int64), "start": ws, "ready": ws + 3, "end": ws + 3,
                 "event": np.arange(1, m + 1).astype(np.uint64)}
        got, _, _ = nest_calls(kind, start, stop, np.ones(n + 1, np.uint64), waits)
        mine = got["event"] != 0
        order = np.argsort(got["event"][mine])
        want = ws if shape == "deep" else np.zeros(m, np.int64)  # (the innermost: call ws)
        assert np.array_equal(got["item"][mine][order], want), shape


def _many_rows_log(path, n=600, seed=5):
    """One processor's log of ``n`` meta-tasks that overlap at random: stacked, a lane of
    dozens of rows of several items each, wide and narrow at any zoom."""
    from legate_prof.read.legion_writer import LegionProfWriter
    rng = np.random.default_rng(seed)
    proc = 0x1D00000000000000
    with LegionProfWriter(path) as w:
        w.write("MachineDesc", node_id=0, num_nodes=1, hostname="h", host_id=1, process_id=2)
        w.write("ZeroTime", zero_time=0)
        w.write("MetaDesc", kind=1, message=False, ordered_vc=False, name="Scheduler")
        w.write("ProcDesc", proc_id=proc, kind=3, uuid_size=16, cuda_device_uuid=b"")
        starts = np.sort(rng.integers(0, 2_000_000, n))
        lengths = (10 ** rng.uniform(1, 6, n)).astype(np.int64)
        for op, (s, d) in enumerate(zip(starts.tolist(), lengths.tolist())):
            w.write("MetaInfo", op_id=op, lg_id=1, proc_id=proc, create=s, ready=s, start=s,
                    stop=s + d, fevent=op + 1)


def test_a_lane_of_many_rows_is_drawn_at_once_as_row_by_row(tmp_path, monkeypatch):
    """A lane of many small rows is drawn in one pass over its items (``_small_rows``: a
    memory's 10,499 instances, a row each, took 49,658 passes for the report's tiles of the
    N = 10 M example); the rows, boxes, bands, counts and busy shares are those the
    row-by-row rule draws, at every zoom and width."""
    import legate_prof.query.level_of_detail as lod
    p = tmp_path / "legate_0.prof"
    _many_rows_log(p)
    model = load_profile([p])
    lane = int(np.argmax(model.lanes["rows"]))
    rows = int(model.lanes["rows"][lane])
    lo, hi = model.lane_range(lane)
    assert rows >= lod.MANY_ROWS and hi - lo <= lod.SMALL_ROW_ITEMS * rows
    assert hi - lo > 2 * rows  # (rows of several items: bands of several)
    t0, t1 = model.time_range()
    rng = np.random.default_rng(0)
    bands = 0
    for trial in range(80):
        a = rng.uniform(t0, t1)
        b = a + (t1 - t0) * 10 ** rng.uniform(-5, 0)
        a, b = (t0, t1) if trial % 9 == 0 else (a, b)
        w = int(rng.integers(40, 2500))
        at_once = lod.draw_rows(model, lane, a, b, w)
        monkeypatch.setattr(lod, "MANY_ROWS", 10**9)
        one_by_one = lod.draw_rows(model, lane, a, b, w)
        monkeypatch.undo()
        assert [r.row for r in at_once] == [r.row for r in one_by_one]
        for x, y in zip(at_once, one_by_one):
            for f in ("box_x0", "box_x1", "box_item", "band_x0", "band_x1", "band_count",
                      "band_first"):
                u, v = getattr(x, f), getattr(y, f)
                assert u.dtype == v.dtype and np.array_equal(u, v), (trial, x.row, f)
            assert np.allclose(x.band_busy, y.band_busy, atol=1e-6)
            bands += int((x.band_count > 1).sum())
    assert bands > 0


def _many_lanes_log(path, seed=7):
    """One node of 41 processors: lanes one row deep, lanes of tasks nesting, lanes of
    items crossing at random (no nesting depth fits them), processors with no items, and
    one lane of 4,500 items (more than ``draw_lanes`` draws together); some items wait."""
    from legate_prof.read.legion_writer import LegionProfWriter
    rng = np.random.default_rng(seed)
    with LegionProfWriter(path) as w:
        w.write("MachineDesc", node_id=0, num_nodes=1, hostname="h", host_id=1, process_id=2)
        w.write("ZeroTime", zero_time=0)
        w.write("MetaDesc", kind=1, message=False, ordered_vc=False, name="Scheduler")
        op = 0
        for p in range(41):
            proc = 0x1D00000000000000 + p
            w.write("ProcDesc", proc_id=proc, kind=3, uuid_size=16, cuda_device_uuid=b"")
            mode, n = p % 4, (4500 if p == 40 else int(rng.integers(1, 300)))
            if mode == 3 and p != 40:
                continue  # a processor with no items
            if mode == 0 or p == 40:  # one after another, some touching, some overlapping
                starts = np.cumsum(rng.integers(0, 3000, n))
                stops = starts + rng.integers(0, 4000 if p == 40 else 2500, n)
            elif mode == 1:  # parents and the children nested in them
                parents = np.cumsum(rng.integers(10_000, 40_000, max(n // 5, 1)))
                starts, stops = [], []
                for a in parents.tolist():
                    starts.append(a)
                    stops.append(a + 9_000)
                    for c in range(4):
                        starts.append(a + 100 + 2_000 * c)
                        stops.append(a + 100 + 2_000 * c + int(rng.integers(0, 1_900)))
                starts, stops = np.array(starts), np.array(stops)
            else:  # crossing at random
                starts = np.sort(rng.integers(0, 2_000_000, n))
                stops = starts + (10 ** rng.uniform(1, 6, n)).astype(np.int64)
            for s, e in zip(starts.tolist(), stops.tolist()):
                w.write("MetaInfo", op_id=op, lg_id=1, proc_id=proc, create=s, ready=s,
                        start=s, stop=e, fevent=op + 1)
                if op % 7 == 0 and e - s > 10:  # a wait inside it
                    a = s + (e - s) // 3
                    w.write("MetaWaitInfo", op_id=op, lg_id=1, wait_start=a,
                            wait_ready=a + (e - s) // 6, wait_end=a + (e - s) // 3)
                op += 1


def test_lanes_stacked_together_are_those_stacked_alone(tmp_path):
    """``stacked_together`` (one pass over many lanes: a report of 1,000 ranks stacked
    19,000 lanes one at a time) gives each lane exactly what stacking it alone gives,
    crossing lanes (stacked alone) and lanes of one item included."""
    from legate_prof.model.stacking import StackedLane, stacked_together
    p = tmp_path / "legate_0.prof"
    _many_lanes_log(p)
    model = load_profile([p], ranked=True)
    assert not model.stacked
    ranges = [model.lane_range(L) for L in range(model.n_lanes)]
    ranges = [r for r in ranges if r[1] > r[0]] + [(ranges[0][0], ranges[0][0] + 1)]
    rows = [int(model.lanes["rows"][model.items["lane"][a]]) for a, _ in ranges]
    rows[-1] = 1
    together = stacked_together(model.items["start"], model.items["stop"], ranges, rows)
    crossing = 0
    for (a, b), n, got in zip(ranges, rows, together):
        alone = StackedLane(a, model.items["start"][a:b], model.items["stop"][a:b], n)
        for f in ("ids", "bounds", "start", "stop", "row_of"):
            u, v = getattr(got, f), getattr(alone, f)
            assert u.dtype == v.dtype and np.array_equal(u, v), (a, f)
        s, e = model.items["start"][a:b], model.items["stop"][a:b]
        depth = np.arange(b - a) - np.searchsorted(np.sort(e), s, side="right")
        crossing += int(not _rows_are_valid(np.maximum(depth, 0).astype(np.int16), s, e))
    assert len(ranges) > 25 and max(rows) > 10 and crossing >= 5


def _drawn_alike(got, want, where):
    assert [(r.lane, r.row) for r in got] == [(r.lane, r.row) for r in want], where
    for x, y in zip(got, want):
        for f in ("box_x0", "box_x1", "box_item", "band_x0", "band_x1", "band_count",
                  "band_first", "band_busy"):
            u, v = getattr(x, f), getattr(y, f)
            assert u.dtype == v.dtype and np.array_equal(u, v), (where, x.row, f)


@pytest.mark.parametrize("ranked", [False, True])
def test_lanes_drawn_together_are_those_drawn_one_by_one(tmp_path, ranked):
    """``draw_lanes`` draws the lanes of few items in one pass over all their rows: the
    boxes, bands, counts and busy shares of each lane are exactly those ``draw_rows``
    draws of it alone, for a model stacked at build and one stacked when drawn (there the
    lanes stacked together, one by one in the other model), at every zoom and width."""
    from legate_prof.query.level_of_detail import draw_lanes
    p = tmp_path / "legate_0.prof"
    _many_lanes_log(p)
    together, alone = (load_profile([p], ranked=ranked) for _ in range(2))
    lanes = list(range(together.n_lanes))
    t0, t1 = together.time_range()
    rng = np.random.default_rng(3)
    bands = boxes = 0
    for trial in range(40):
        a = rng.uniform(t0, t1)
        b = a + (t1 - t0) * 10 ** rng.uniform(-5, 0)
        a, b = (t0, t1) if trial % 9 == 0 else (a, b)
        w = int(rng.integers(40, 2500))
        got = draw_lanes(together, lanes, a, b, w)
        for L, rows in zip(lanes, got):
            want = draw_rows(alone, L, a, b, w)
            _drawn_alike(rows, want, (trial, L))
            bands += sum(int((r.band_count > 1).sum()) for r in rows)
            boxes += sum(len(r.box_item) for r in rows)
    assert bands > 100 and boxes > 1000


def test_report_tiles_of_many_lanes_are_those_of_each_lane(tmp_path):
    """The report's tile rows of many lanes asked together (``ReportQueries.lane_tiles``)
    are those of each lane asked alone: boxes, their waiting and ready pieces (with the box
    each shades) and bands, to the byte of their JSON."""
    import json
    from legate_prof.report.query import ReportQueries
    p = tmp_path / "legate_0.prof"
    _many_lanes_log(p)
    together = ReportQueries(load_profile([p], ranked=True))
    alone = ReportQueries(load_profile([p], ranked=True))
    lanes = list(range(len(together.source.info().lanes)))
    t0, t1 = together.t0, together.t1
    shaded = 0
    for a, b, w in ((t0, t1, 512), (t0, t0 + (t1 - t0) / 7, 512), (t0 + (t1 - t0) / 3,
                                                                  t0 + (t1 - t0) / 2, 2048)):
        got = together.lane_tiles(lanes, a, b, w)
        for L, rows in zip(lanes, got):
            want = alone.lane_tile(L, a, b, w)
            assert json.dumps(rows) == json.dumps(want), L
            shaded += sum(len(r["w"]) for r in rows)
    assert shaded > 0


def test_lanes_of_a_rank_and_its_groups_are_those_a_scan_of_the_lanes_finds(synthetic_8):
    """``lanes_of(group, rank)`` and ``groups_present(rank)`` answer from an index made once
    (each rank's question was a pass over every lane: ranks x ranks at 1,000 ranks): the
    lanes, in order, and groups a scan finds, ranks without lanes and a copy each time
    included."""
    from legate_prof.model.kinds import GROUP_KEYS, GROUP_TITLE
    model = load_profile(synthetic_8)
    lanes = model.lanes
    ranks = sorted(set(lanes["rank"].tolist()))
    assert len(ranks) >= 8
    for r in ranks + [max(ranks) + 1, -1]:
        for i, g in enumerate(GROUP_KEYS):
            want = np.flatnonzero((lanes["group"] == i) & (lanes["rank"] == r))
            got = model.lanes_of(g, np.int32(r) if r % 2 else r)
            assert got.dtype == np.int64 and np.array_equal(got, want), (r, g)
        present = set(lanes["group"][lanes["rank"] == r].tolist())
        assert model.groups_present(r) == [(k, GROUP_TITLE[k]) for i, k in enumerate(GROUP_KEYS)
                                           if i in present]
    some = model.lanes_of("cpu", ranks[0])
    some[:] = -5  # (the caller's own array)
    assert np.all(model.lanes_of("cpu", ranks[0]) >= 0)
    assert np.array_equal(model.lanes_of("cpu"), np.flatnonzero(lanes["group"] ==
                                                                GROUP_KEYS.index("cpu")))


def test_busy_time_of_every_lane_at_once_is_each_lanes_own(tmp_path, monkeypatch):
    """``lanes_busy`` finds small lanes' busy intervals many at once (times keyed by lane);
    they are exactly each lane's own (``_lane_busy``: the union of its items, or with waits
    the reference's count), lanes with waits, touching, empty and crossing items included,
    in one batch or several, a big lane alone; where the times do not pack under a lane key
    it goes lane by lane."""
    import legate_prof.assemble.utilization as util
    p = tmp_path / "legate_0.prof"
    _many_lanes_log(p)
    model = load_profile([p])
    lanes = list(range(model.n_lanes))
    waited = set(model.items["lane"][model.waits["item"]].tolist())
    assert len(waited) > 5 and len(waited) < len([L for L in lanes if model.lane_range(L)[1] >
                                                  model.lane_range(L)[0]])
    for at_once in (util.LANES_AT_ONCE_ITEMS, 1000):  # (one batch; batches, a lane alone)
        monkeypatch.setattr(util, "LANES_AT_ONCE_ITEMS", at_once)
        got = util.lanes_busy(model, lanes[::-1])
        assert sorted(got) == lanes
        for L in lanes:
            want = util._lane_busy(model, L)
            assert all(a.dtype == b.dtype and np.array_equal(a, b)
                       for a, b in zip(got[L], want)), (at_once, L)
    monkeypatch.undo()
    calls = []
    monkeypatch.setattr(util, "_lane_busy", lambda m, L, drop=None: calls.append(L) or (L, L))
    far = model.evolve(items={**model.items, "stop": model.items["stop"] + np.where(
        np.arange(model.n_items) == 0, 2**43, 0)})
    assert util.lanes_busy(far, lanes) == {L: (L, L) for L in lanes} and calls == lanes


def test_lane_rows_of_a_model_built_unstacked_are_counted_when_first_read(monkeypatch):
    """``stats`` of a model built unstacked never counts its lanes' rows; whatever reads
    them — by name, the lanes whole, a copy, a pickle — gets what a stacked build counts."""
    import copy
    import pickle

    from legate_prof.analyze.stats import compute_stats
    from legate_prof.assemble import lane_layout
    counted = []
    count = lane_layout.rows_needed
    monkeypatch.setattr(lane_layout, "rows_needed",
                        lambda *a: counted.append(1) or count(*a))
    from pathlib import Path
    run = [str(Path(__file__).parents[1] / "fixtures" / "real" / "inefficient_1rank")]
    built_stacked = load_profile(run, stack=True)
    stacked = built_stacked.lanes["rows"]
    for read in (lambda L: L["rows"], lambda L: dict(L)["rows"], lambda L: {**L}["rows"],
                 lambda L: pickle.loads(pickle.dumps(L))["rows"], lambda L: L.get("rows"),
                 lambda L: copy.deepcopy(L)["rows"], lambda L: dict(L.items())["rows"],
                 lambda L: list(L.values())[list(L).index("rows")]):
        model = load_profile(run, stack=False)
        compute_stats(model)
        assert counted == [] and list(model.lanes) == list(built_stacked.lanes)
        assert np.array_equal(read(model.lanes), stacked) and counted == [1]
        assert np.array_equal(model.lanes["rows"], stacked) and counted == [1]  # (once)
        counted.clear()
    # the lane tree (``info``): its lanes named, grouped and ranked without their rows,
    # which are counted when a lane's are first asked for, once for all lanes
    from legate_prof.analyze.critical_path import critical_path_report
    from legate_prof.query import as_source
    model = load_profile(run, stack=False)
    source = as_source(model)
    info = source.info()
    critical_path_report(source, with_items=False)
    assert counted == [] and {L.group for L in info.lanes} and info.groups
    assert [L.rows for L in info.lanes] == stacked.tolist() and counted == [1]
    assert [L.rows for L in as_source(built_stacked).info().lanes] == stacked.tolist()
    assert counted == [1]


def test_a_call_and_its_wait_on_one_lane_cancel_in_the_busy_count():
    """An item and a wait of the same interval on one lane change the reference's busy count
    (+1 at starts and wait ends, -1 at stops and wait starts, every +1 first at a time) by
    nothing: left out, the busy intervals are the same — on random lanes with empty
    intervals, equal times, waits outside items and counts below zero."""
    from legate_prof.assemble.utilization import busy_by_count
    rng = np.random.default_rng(35)
    for trial in range(2000):
        n, m, span = int(rng.integers(0, 12)), int(rng.integers(0, 6)), int(rng.integers(1, 30))
        s = rng.integers(0, span, n)
        e = s + rng.integers(0, 8, n)
        ws = rng.integers(0, span, m)
        we = ws + rng.integers(0, 8, m)
        pairs = rng.choice(n, int(rng.integers(0, n + 1)), replace=False) if n else []
        ps, pe = s[pairs], e[pairs]  # (each item of ``pairs`` with a wait of its interval)
        got = busy_by_count(s[np.isin(np.arange(n), pairs, invert=True)],
                            e[np.isin(np.arange(n), pairs, invert=True)], ws, we)
        want = busy_by_count(s, e, np.r_[ws, ps], np.r_[we, pe])
        assert all(np.array_equal(a, b) for a, b in zip(got, want)), trial


def test_utilization_of_a_build_is_the_count_of_every_call_and_wait():
    """The build leaves out the calls folded into waits on their own lane (``_cancelled``):
    busy time and utilization lines are those counted with every call and wait."""
    from pathlib import Path

    from legate_prof.assemble.utilization import with_utilization
    for name in ("inefficient_1rank", "mpi2_utility2", "loops3"):
        built = load_profile([str(Path(__file__).parents[1] / "fixtures" / "real" / name)],
                             stack=False)
        counted = with_utilization(built.evolve())
        assert built.busy_ns == counted.busy_ns and len(built.busy_ns) > 2, name
        for key, step in built.utilization_steps.items():
            other = counted.utilization_steps[key]
            assert np.array_equal(step.t, other.t) and np.array_equal(step.integral,
                                                                      other.integral), key


def test_lazy_columns_are_a_dict_in_every_other_way():
    """Its later column is in its place from the start, made once on first read, replaced
    for good by what is set or updated, gone when deleted; compared, copied and pickled as
    the plain dict it stands for."""
    import copy
    import pickle

    from legate_prof.model.lazy_table import LazyColumns
    made = []

    def table():
        return LazyColumns({"a": 1, "rows": None, "z": 2},
                           {"rows": lambda: made.append(1) or [3, 4]})
    t = table()
    assert list(t) == ["a", "rows", "z"] and len(t) == 3 and "rows" in t and made == []
    assert t == {"a": 1, "rows": [3, 4], "z": 2} and not t != dict(t) and made == [1]
    assert t["rows"] == [3, 4] and made == [1]
    for change in (lambda t: t.__setitem__("rows", 7), lambda t: t.update(rows=7),
                   lambda t: t.update({"rows": 7})):
        t = table()
        change(t)
        assert t["rows"] == 7 and dict(t) == {"a": 1, "rows": 7, "z": 2}
    t = table()
    del t["rows"]
    assert "rows" not in t and t.get("rows", 0) == 0 and dict(t) == {"a": 1, "z": 2}
    for same in (lambda t: pickle.loads(pickle.dumps(t)), copy.copy, copy.deepcopy,
                 lambda t: t.copy(), lambda t: {**t}, lambda t: t | {}):
        got = same(table())
        assert type(got) is dict and got == {"a": 1, "rows": [3, 4], "z": 2}
