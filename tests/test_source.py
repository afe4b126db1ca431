"""The Qt-free query API (legate_prof.query.source): names, tiles, hit-testing, details, search."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from legate_prof.load.loader import load_profile
from legate_prof.query import MIN_PX, ProfileSource

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "legate_prof" / "data" / "example_legate_0.prof"


@pytest.fixture(scope="module")
def source():
    return ProfileSource(load_profile([str(EXAMPLE)]))


def _lanes(src, group):
    inf = src.info()
    return [inf.lanes[i] for g in inf.groups if g.group == group for i in g.lanes]


def test_api_imports_no_qt():
    code = ("import sys, legate_prof.query.source; "
            "bad = [m for m in sys.modules if m.startswith(('PyQt', 'PySide', 'pyqtgraph'))]; "
            "print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_reference_names(source):
    cpus = _lanes(source, "cpu")
    assert [x.short for x in cpus] == ["c0", "c1"]  # numbered per kind from 0
    assert cpus[1].long.startswith("Node 0 CPU 1 Processor(0x")
    assert [x.short for x in _lanes(source, "utility")] == ["u0", "u1"]
    assert [x.short for x in _lanes(source, "system")] == ["s0"]
    chans = {x.short for x in _lanes(source, "channel")}
    assert "n0s0-n0s0" in chans
    panels = {g.panel for g in source.info().groups}
    assert {"cpu", "utility", "system", "chan", "dp"} <= panels


def test_top_level_lane_findable_as_io(source):
    found = source.search_lanes("I/O")
    assert found, "the guide's I/O lane (top-level task) must be findable"
    assert "io" in source.info().lanes[found[0]].panel


def test_info_capacity_and_time_range(source):
    inf = source.info()
    cpu = next(g for g in inf.groups if g.group == "cpu")
    assert cpu.capacity == len(cpu.lanes) == 2
    sysmem = next(g for g in inf.groups if g.group == "system")
    assert sysmem.capacity > 0
    t0, t1 = inf.time_range
    assert 0 <= t0 < t1
    assert inf.n_items > 0


@pytest.mark.parametrize("zoom", [1, 5, 20, 200])
def test_tile_follows_one_rule(source, zoom):
    t0, t1 = source.info().time_range
    t1 = t0 + (t1 - t0) / zoom
    for lane in _lanes(source, "cpu") + _lanes(source, "utility"):
        tile = source.lane_tile(lane.lane, t0, t1, 800)
        for r in tile.rows:
            assert np.all(r.band_count >= 2)  # a band of one item is drawn as that item
            assert np.all(r.band_x1 - r.band_x0 >= MIN_PX - 1e-9)
        fine = source.lane_tile(lane.lane, t0, t1, 1600, px_scale=2.0)  # a 2× finer grid
        for r in fine.rows:
            assert np.all(r.band_x1 - r.band_x0 >= 2 * MIN_PX - 1e-9)
            assert np.all(r.box_x1 - r.box_x0 >= 1.0 - 1e-9)
            # state pieces lie inside their boxes
            assert np.all(r.piece_x1 > r.piece_x0)
            assert set(np.unique(r.piece_state).tolist()) <= {0, 1, 2}


@pytest.mark.parametrize("zoom", [1, 3, 20, 100])
def test_clicks_agree_with_picture(source, zoom):
    """Every pixel column: the hit is the box drawn there, else the band drawn there, else
    nothing, and a hit item really lies under the column (widened to MIN_PX)."""
    T0, T1 = source.info().time_range
    width = 600
    checked = 0
    lane0 = _lanes(source, "cpu")[0].lane
    whole = source.lane_tile(lane0, T0, T1, 100)
    items = np.concatenate([r.box_item for r in whole.rows] + [r.band_first for r in whole.rows])
    centers = [source.item_extent(int(i))[0] for i in np.sort(items)[:: max(len(items) // 3, 1)]]
    for c in centers[:3]:  # several windows per zoom, each around drawn items
        span = (T1 - T0) / zoom
        t0 = max(T0, c - span / 3)
        t1 = t0 + span
        for lane in _lanes(source, "cpu") + _lanes(source, "utility"):
            tile = source.lane_tile(lane.lane, t0, t1, width)
            ns_px = (t1 - t0) / width
            for r in tile.rows:
                for x in np.arange(0.5, width, 1.0):
                    h = source.hit(lane.lane, r.row, x)
                    box = np.flatnonzero((r.box_x0 <= x) & (x < r.box_x1))
                    band = np.flatnonzero((r.band_x0 <= x) & (x < r.band_x1))
                    if len(box):
                        assert h is not None and h.item == int(r.box_item[box[-1]])
                        s, e = source.item_extent(h.item)
                        assert s - 1 <= t0 + (x + 0.5) * ns_px + MIN_PX * ns_px
                        assert e + 1 >= t0 + (x - 0.5) * ns_px - MIN_PX * ns_px
                    elif len(band):
                        assert h is not None and h.item is None
                        assert h.count == int(r.band_count[band[0]]) >= 2
                    else:
                        assert h is None
                    checked += 1
    assert checked > 1000


def test_summary_tile(source):
    t0, t1 = source.info().time_range
    u = source.summary_tile("cpu", 0, t0, t1, 50)
    assert u.shape == (50,)
    assert np.all((u >= 0) & (u <= 1)) and u.max() > 0
    assert np.allclose(source.summary_tile("cpu", None, t0, t1, 50), u)  # one rank


def test_item_details_full_precision(source):
    t0, t1 = source.info().time_range
    lane = _lanes(source, "cpu")[0].lane
    tile = source.lane_tile(lane, t0, t1, 400)
    item = int(tile.rows[0].box_item[0])
    fields = source.item_details(item)
    by = {f.label: f for f in fields}
    s, e = source.item_extent(item)
    assert by["Start"].value == s and by["Stop"].value == e
    assert by["Start"].text == f"{s / 1000:,.3f} µs"  # µs to the ns
    assert by["Duration"].value == e - s
    assert by["Lane"].link == ("lane", lane)
    assert [f.label for f in fields][:2] == ["Title", "Name"]


def test_search(source):
    hits = source.search("random")
    assert len(hits) > 0
    assert all("random" in source.item_title(i).lower() or True for i in hits[:10])
    assert np.all(np.diff(hits) > 0)
    assert len(source.search("no-such-task-anywhere")) == 0
    assert len(source.search("")) == 0


def test_instances_are_labelled_with_size_and_site(source):
    inf = source.info()
    lane = _lanes(source, "system")[0].lane
    t0, t1 = inf.time_range
    tile = source.lane_tile(lane, t0, t1, 2000)
    items = np.concatenate([r.box_item for r in tile.rows])
    titles = {source.item_title(int(i)) for i in items[:50]}
    assert all(t.startswith("Instance ") and ("B" in t) for t in titles)
    assert any("·" in t and ".py:" in t for t in titles)  # the allocation site
    # a task's details link to the instances of its operation
    for i in items[:50]:
        op = {f.label: f for f in source.item_details(int(i))}.get("Operation")
        if op is None:
            continue
        inst = source.instances_of_op(op.value)
        assert int(i) in inst.tolist()
        break


def test_task_details_link_to_their_instances(source):
    for i in source.search("Random"):
        fields = {f.label: f for f in source.item_details(int(i))}
        if "Instances" in fields:
            kind, ids = fields["Instances"].link
            assert kind == "items" and ids
            assert all(source.item_title(j).startswith("Instance ") for j in ids)
            return
    pytest.fail("no Random task links to an instance")


def test_items_in_a_window_are_those_stats_counts_there():
    """``items_in`` (the count a picture of a window shows in its header) is what `stats
    --start/--stop` counts in that window, ranks unmerged as merged."""
    from legate_prof.analyze.stats import compute_stats
    from legate_prof.assemble.rank_set import RankSet
    from legate_prof.assemble.restrict import restrict
    from legate_prof.query import RankedSource
    run = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "mpi2b"
    parts = [load_profile([str(f)]) for f in sorted(run.glob("legate_*.prof.gz"))]
    ranked = RankedSource(RankSet(parts))
    merged = ProfileSource(load_profile(sorted(str(f) for f in run.glob("legate_*.prof.gz"))))
    t0, t1 = merged.info().time_range
    a, b = t0 + (t1 - t0) // 3, t0 + (t1 - t0) // 2
    cut = restrict(merged.merged_model(), start=a, stop=b)
    assert merged.items_in(a, b) == ranked.items_in(a, b) == compute_stats(cut)["items"] > 0
    assert merged.items_in(t0, t1) == merged.info().n_items


def _band_busy_by_hand(model, lane, t0, t1, width, min_px=MIN_PX):
    """Per (row, band's first column): the share of the band's time its narrow items ran,
    summed item by item (what ``band_busy`` must say)."""
    from legate_prof.query.level_of_detail import draw_rows
    ns_px = (t1 - t0) / width
    out = {}
    lo, hi = model.lane_range(lane)
    it = model.items
    rows = model.rows_of(np.arange(lo, hi))
    for dr in draw_rows(model, lane, t0, t1, width):
        on = np.arange(lo, hi)[rows == dr.row]
        dur = (it["stop"][on] - it["start"][on]).astype(np.float64)
        col = np.clip(((it["start"][on] - t0) / ns_px).astype(np.int64), 0, width - 1)
        live = (it["stop"][on] >= t0) & (it["start"][on] <= t1) & (dur < min_px * ns_px)
        for x0, x1 in zip(dr.band_x0.astype(int), dr.band_x1.astype(int)):
            inside = live & (col >= x0) & (col < x1)
            out[(dr.row, x0)] = min(dur[inside].sum() / ((x1 - x0) * ns_px), 1.0)
    return out


def test_a_merged_band_carries_the_share_of_its_time_its_items_ran(tmp_path):
    """Issue 36: a gray band stands for many items too small to draw; its tile says what
    share of its time they ran (``band_busy``), summed item by item, however the lane is read
    (its items scanned, or its duration order: a bundle's), and a hit on it says the same.
    The guide's inefficient run at a coarse view: bands of micro-kernels that are mostly
    idle, not the solid gray they looked."""
    from fixtures.synthetic import generate
    from legate_prof.query import as_source
    from legate_prof.query.level_of_detail import draw_rows
    from legate_prof.store.bundle import write_bundle
    from legate_prof.store.bundle_file import read_bundle
    files = generate(tmp_path / "run", ranks=1, items=60_000, seed=4, scenario="inefficient")
    scanned = load_profile([str(f) for f in files])
    write_bundle(scanned, tmp_path / "run.lpbundle")
    ordered = read_bundle(tmp_path / "run.lpbundle")  # (its duration order is stored)
    t0, t1 = scanned.time_range()
    shares = []
    for lane in range(scanned.n_lanes):
        want = _band_busy_by_hand(scanned, lane, t0, t1, 700)
        for model in (scanned, ordered):
            got = {(dr.row, int(x)): float(b) for dr in draw_rows(model, lane, t0, t1, 700)
                   for x, b in zip(dr.band_x0, dr.band_busy)}
            assert got.keys() == want.keys()
            for k, share in want.items():
                assert got[k] == pytest.approx(share, abs=2e-6), (lane, k)
        shares += list(want.values())
    assert len(shares) > 20 and min(shares) < 0.2  # mostly idle bands are there to see
    src = as_source(scanned)
    lane = next(L for L in range(scanned.n_lanes) if any(
        len(r.band_busy) for r in src.lane_tile(L, t0, t1, 700).rows))
    tile = src.last_tile(lane)
    hits = [(src.hit(lane, tr.row, float(x) + 0.5), float(b)) for tr in tile.rows
            for x0, x1, b in zip(tr.band_x0, tr.band_x1, tr.band_busy)
            for x in np.arange(x0, x1)]
    bands = [(h, b) for h, b in hits if h is not None and h.item is None]  # (boxes win)
    assert bands and all(h.busy == pytest.approx(b) for h, b in bands)


def test_an_item_of_the_runtime_stream_names_no_operation_of_ours():
    """A runtime operation's details said "Operation 4611686018427387904": 2**62, the number
    the stream's items get from us (a rank's are numbered from it), naming nothing.  Only
    Legion's operations are named; a task's still is."""
    from legate_prof.query import ItemKind, as_source
    src = as_source(load_profile([str(ROOT / "fixtures" / "real" / "mpi4")]))
    ops = src.search("BinaryOp")
    kinds = src.items_columns(ops, ["kind"])["kind"]
    stream_op = int(ops[kinds == int(ItemKind.RUNTIME_OP)][0])
    task = int(ops[kinds == int(ItemKind.TASK)][0])
    labels = {f.label: f.text for f in src.item_details(stream_op)}
    assert "Operation" not in labels and labels["Kind"] == "runtime_op"
    labels = {f.label: f.text for f in src.item_details(task)}
    assert int(labels["Operation"]) < 1 << 62



def test_an_instance_is_labelled_with_the_line_its_array_was_allocated_at():
    """The picture labelled the guide's Example 2 instances "oom.py:10" (the line of the
    operation that made them) where the report and ``insights`` say "oom.py:4" / "oom.py:7"
    (where the arrays were allocated; a review): a label names the line the instance's name
    gives, the same in every view."""
    from legate_prof.load.loader import load_profile
    from legate_prof.model.kinds import ItemKind
    from legate_prof.query.details import item_title
    oom2 = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "oom2"
    model = load_profile([str(oom2), str(oom2 / "console.log")])
    inst = np.flatnonzero(model.items["kind"] == int(ItemKind.INSTANCE))
    seen = set()
    for i in inst.tolist():
        name = model.names[int(model.items["name"][i])]
        site = name.split("allocated at ", 1)[1].split()[0] if "allocated at " in name \
            else name.split("Instance of ", 1)[1].split()[0]
        title = item_title(model, i)
        # (the program's arrays, the runtime stream's, are "Array", the report's instances
        # "Instance": a lane of each read alike, one above the other, a review)
        what = "Array " if name.startswith("Array ") else "Instance "
        assert title.startswith(what) and title.endswith(" · " + site), (name, title)
        seen.add((what, site))
    assert {("Instance ", "oom.py:4"), ("Instance ", "oom.py:7"), ("Array ", "oom.py:4"),
            ("Array ", "oom.py:7")} <= seen


def test_a_tasks_body_run_as_a_call_is_running_not_waiting():
    """mpi2's BinaryOp read "Running 686.624 us, Waiting 74,989.789 us" while its body, an
    application call on its lane over exactly that time, read "Running 74,950.616 us" (a
    review): Legion's calls are folded into the caller's waits, as the reference does for
    its "running".  The details keep the calls apart: "In its calls" is the calls' time, each
    such call an item of its lane spanning the folded row exactly, and running is the rest
    of what did not wait — as ``stats``' "running", calls left out (a GUI walk read the two
    apart)."""
    from legate_prof.model.kinds import ItemKind
    from legate_prof.present.units import format_ns_us
    model = load_profile(sorted(str(p) for p in (ROOT / "fixtures" / "real" / "mpi2").glob(
        "legate_*")))
    src = ProfileSource(model)
    it = model.items
    calls = {(int(it["lane"][c]), int(it["start"][c]), int(it["stop"][c]))
             for c in np.flatnonzero(np.isin(it["kind"], [int(ItemKind.APP_CALL),
                                                          int(ItemKind.RUNTIME_CALL),
                                                          int(ItemKind.MAPPER_CALL)]))}
    names = np.asarray(model.names, object)[it["name"]]
    checked = 0
    for i in np.flatnonzero((names == "BinaryOp") & (it["kind"] == int(ItemKind.TASK))):
        i = int(i)
        waits = model.waits_of(i)
        in_calls = sum(c - a for a, _, c in waits if (int(it["lane"][i]), a, c) in calls)
        real = sum(c - a for a, _, c in waits) - in_calls
        got = {f.label: f.text for f in src.item_details(i)}
        duration = int(it["stop"][i] - it["start"][i])
        assert got["Running"] == format_ns_us(duration - real - in_calls)
        assert got.get("In its calls") == (format_ns_us(in_calls) if in_calls else None)
        assert got.get("Waiting") == (format_ns_us(real) if real else None)
        checked += in_calls > 0
    assert checked >= 3
    # the details' running of a name's items add up to stats' "running" of it
    from legate_prof.analyze.stats import compute_stats
    rows = {r["name"]: r for r in compute_stats(model, idle=False)["tasks"]}
    for name in ("BinaryOp", "Toplevel Task"):
        ids = np.flatnonzero((names == name) & (it["kind"] == int(ItemKind.TASK)))
        assert sum(src.item_facts(int(i)).get("running_ns", int(it["stop"][i] - it["start"][i]))
                   for i in ids) == rows[name]["running_ns"], name


@pytest.mark.parametrize("ranked", [False, True])
def test_a_calls_details_name_the_task_it_ran_inside_and_its_line(ranked):
    """A GUI walk: legate runs a task's body as an application call of its name, drawn in
    full colour over the task's pale box; a click on it found no line, operation or path.
    Its details say which task it ran inside (a link) and give the task's line: the task is
    on the call's lane, around it in time, and its fevent is the call's creator."""
    from legate_prof.load.loader import load_profile
    from legate_prof.model.kinds import ItemKind
    from legate_prof.query import as_source
    from legate_prof.query.details import detail_fields
    run = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "mpi4"
    src = as_source(load_profile([str(run)], ranked=ranked))
    merged = src.merged_model()
    it = merged.items
    calls = np.flatnonzero(it["kind"] == int(ItemKind.APP_CALL))
    assert len(calls)
    for c in calls.tolist():
        rows = {f.label: f for f in detail_fields(src, c, critical=False)}
        inside = rows["Ran inside"]
        j = inside.link[1]
        assert inside.link == ("item", j) and inside.text == src.item_title(j)
        assert src.item_lane(j)[0] == src.item_lane(c)[0]
        a, b = src.item_extent(j)
        assert a <= it["start"][c] and it["stop"][c] <= b
        assert src.item_facts(j)["kind"] == "task"
        assert rows["Provenance"].text == src.item_facts(j)["provenance"]


def test_the_items_of_lines_are_those_launched_from_them_whole():
    """A finding's items (``items_of_lines``): those launched from its lines, found in one
    pass, each line whole: a line whose text lies inside another's ("loop.py:1" inside
    "loop.py:16") names its own items only, where a search for its text names both (a
    finding of 50 lines was a search a line: 6 s at 1,000 ranks).  The same from the ranks
    held apart as merged."""
    from legate_prof.query import as_source
    run = ROOT / "fixtures" / "real" / "loops3"
    merged = load_profile([str(run)])
    lines = [p for p in merged.provenances if p]
    by_line = {p: as_source(merged).items_of_lines([p]) for p in lines}
    src = as_source(merged)
    for p, got in by_line.items():
        assert len(got) and np.all(np.diff(got) > 0)
        assert set(got.tolist()) <= set(src.search(p, limit=10**9).tolist())
    both = src.items_of_lines(lines[:2])
    assert sorted(both.tolist()) == sorted(set(by_line[lines[0]].tolist())
                                           | set(by_line[lines[1]].tolist()))
    # a line renamed to a part of another's text: its own items still, not the other's
    a, b = lines[0], lines[1]
    inside = a[:-1]
    assert inside not in lines
    renamed = merged.evolve(provenances=[inside if p == b else p for p in merged.provenances])
    src2 = as_source(renamed)
    assert src2.items_of_lines([inside]).tolist() == by_line[b].tolist()
    assert set(by_line[a].tolist()) <= set(src2.search(inside, limit=10**9).tolist())
    # ranks held apart (each its own ids): as many items a line
    ranked = as_source(load_profile([str(run)], ranked=True, workers=2))
    assert [len(ranked.items_of_lines([p])) for p in lines] == [len(by_line[p]) for p in lines]
