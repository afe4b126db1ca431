"""Exports (Perfetto, Chrome trace, Parquet, DuckDB) and `legate_prof sql` on real profiles.

Goldens in tests/data: the reference's `legion_prof statistics` output on the bundled example
(command in its first line) and the subset of Perfetto's trace proto the export writes.
"""

import collections
import json
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from legate_prof.cli import main
from legate_prof.export import export
from legate_prof.export.tables import iter_table
from legate_prof.export.threads import thread_name
from legate_prof.load.loader import load_profile

DATA = Path(__file__).parent / "data"
EXAMPLE = Path(__file__).resolve().parents[1] / "legate_prof" / "data" / "example_legate_0.prof"


@pytest.fixture(scope="module")
def example_model():
    return load_profile([str(EXAMPLE)])


def reference_task_totals(path):
    """Per task name, the sum of 'Total time' over its variants in the reference's statistics
    (us)."""
    text = path.read_text().split("Runtime Statistics")[0]
    totals = collections.Counter()
    for name, value in re.findall(r"Task (.+?) Variant .+\n\s+Invocations: \d+\n"
                                  r"\s+Total time: ([0-9.e+]+) us", text):
        totals[name] += float(value)
    return totals


def test_chrome_task_totals_match_reference_statistics(example_model, tmp_path):
    out = tmp_path / "trace.json"
    assert main(["export", str(EXAMPLE), "--format", "chrome", "-o", str(out)]) == 0
    events = json.loads(out.read_text())
    assert all(e["ph"] in ("X", "M") for e in events)
    ours = collections.Counter()
    for e in events:
        if e.get("cat") == "task":
            base = re.sub(r" \((waiting|ready)\)$", "", e["name"])
            ours[re.sub(r" \([^()]*\)$", "", base)] += e["dur"]
    ref = reference_task_totals(DATA / "reference_statistics_example.txt")
    assert len(ref) >= 10 and set(ours) == set(ref)
    for name, total in ref.items():
        # the reference prints 4 significant digits above 1e6 us ('1.235e6')
        tol = 5e-4 * total if "e" in f"{total:g}" or total >= 1e6 else 0.002
        assert ours[name] == pytest.approx(total, abs=tol), name


def test_chrome_splits_waiting_tasks_into_pieces(example_model, tmp_path):
    out = tmp_path / "t.json"
    export(example_model, "chrome", str(out), chunk_rows=997)  # chunk edges mid-profile
    events = [e for e in json.loads(out.read_text()) if e["ph"] == "X"]
    states = collections.Counter(e["args"]["state"] for e in events)
    n_waits = len(example_model.waits["item"])
    assert n_waits > 0
    assert states["waiting"] == states["ready"] == n_waits
    assert states["running"] == example_model.n_items + n_waits
    assert any(e["name"].endswith(" (waiting)") for e in events)
    # per item, the pieces tile [start, stop]
    total = sum(e["dur"] for e in events)
    span = (example_model.items["stop"] - example_model.items["start"]).sum() / 1e3
    assert total == pytest.approx(span, rel=1e-9)


def stats_json(files, capsys):
    assert main(["stats", "--json", *map(str, files)]) == 0
    return json.loads(capsys.readouterr().out)


def parquet_files(folder, table):
    """A table's file, or its ranks' files, in a Parquet export folder."""
    one = Path(folder) / f"{table}.parquet"
    return [one] if one.exists() else sorted(Path(folder).glob(f"{table}_*.parquet"))


def read_parquet(folder, table, columns=None):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    return pa.concat_tables([pq.read_table(f, columns=columns)
                             for f in parquet_files(folder, table)])


@pytest.mark.parametrize("chunk_rows", [1 << 20, 1000])
def test_parquet_row_counts_equal_stats(synthetic_8, tmp_path, capsys, chunk_rows):
    pq = pytest.importorskip("pyarrow.parquet")
    s = stats_json(synthetic_8, capsys)
    model = load_profile([str(p) for p in synthetic_8])
    out = tmp_path / "pq"
    counts = export(model, "parquet", str(out), chunk_rows=chunk_rows)
    rows = {t: sum(pq.read_metadata(f).num_rows for f in parquet_files(out, t)) for t in counts}
    assert rows == counts
    # several ranks: one file per rank of each table of items, one file of each other table
    assert [f.name for f in parquet_files(out, "items")] == \
        [f"items_{r:05d}.parquet" for r in range(8)]
    assert [f.name for f in parquet_files(out, "lanes")] == ["lanes.parquet"]
    assert rows["items"] == s["items"]
    assert rows["ranks"] == s["ranks"] == 8
    assert rows["lanes"] == sum(g["lanes"] for g in s["groups"])
    assert rows["copies"] == s["copies"]["count"] + s["fills"]["count"]
    assert rows["instances"] == s["instances"]["count"]
    items = read_parquet(out, "items", columns=["item", "duration_ns", "kind"])
    assert items.column("item").to_numpy().tolist() == list(range(s["items"]))
    tasks = items.filter(items.column("kind").to_numpy(zero_copy_only=False) == "task")
    assert int(tasks.column("duration_ns").to_numpy().sum()) == sum(
        t["total_ns"] for t in s["tasks"])
    copies = read_parquet(out, "copies")
    assert int(np.sum(copies.column("size_bytes").to_numpy())) == \
        s["copies"]["bytes"] + s["fills"]["bytes"]


def perfetto_classes():
    pytest.importorskip("google.protobuf")
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    fds = descriptor_pb2.FileDescriptorSet.FromString((DATA / "perfetto_subset.desc").read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("perfetto.protos.Trace"))


def unknown_fields(msg):
    from google.protobuf.unknown_fields import UnknownFieldSet
    n = len(UnknownFieldSet(msg))
    for f, v in msg.ListFields():
        if f.message_type is not None:
            for x in (v if getattr(f, "is_repeated", None) or getattr(f, "label", 1) == 3 else [v]):
                n += unknown_fields(x)
    return n


def test_perfetto_parses_back_with_the_trace_proto(example_model, tmp_path):
    Trace = perfetto_classes()
    out = tmp_path / "t.pftrace"
    assert main(["export", str(EXAMPLE), "--format", "perfetto", "-o", str(out)]) == 0
    trace = Trace.FromString(out.read_bytes())
    assert unknown_fields(trace) == 0  # every byte is a field of perfetto_trace.proto
    tracks = {p.track_descriptor.uuid: p.track_descriptor for p in trace.packet
              if p.HasField("track_descriptor")}
    events = [p for p in trace.packet if p.HasField("track_event")]
    assert all(e.track_event.track_uuid in tracks for e in events)
    begins = [e for e in events if e.track_event.type == 1]
    ends = [e for e in events if e.track_event.type == 2]
    assert len(begins) == len(ends) == example_model.n_items
    # BEGIN timestamps are the items' starts, with names and provenance annotations
    assert sorted(e.timestamp for e in begins) == sorted(example_model.items["start"].tolist())
    names = collections.Counter(e.track_event.name for e in begins
                                if list(e.track_event.categories) == ["task"])
    assert names["Random"] == 4
    provs = {a.string_value for e in begins for a in e.track_event.debug_annotations
             if a.name == "provenance"}
    assert "/tmp/rt/example_prog.py:4" in provs
    assert any(a.name == "op_id" and a.uint_value > 0
               for e in begins for a in e.track_event.debug_annotations)
    # per sequence (one per track), timestamps never go back
    last = {}
    for p in trace.packet:
        if p.HasField("track_event"):
            seq = p.trusted_packet_sequence_id
            assert p.timestamp >= last.get(seq, 0)
            last[seq] = p.timestamp
    # process track per rank, counter tracks for utilization and memory in use
    assert any(t.HasField("process") for t in tracks.values())
    counters = [t.name for t in tracks.values() if t.HasField("counter")]
    assert "cpu utilization" in counters and "system in use" in counters
    # flows: each copy with known memories starts a flow ('copy out') that a 'copy in' ends
    out_ids = {f for e in events for f in e.track_event.flow_ids if e.track_event.type == 3}
    in_ids = {f for e in events for f in e.track_event.terminating_flow_ids}
    copy_ids = {f for e in begins for f in e.track_event.flow_ids}
    assert out_ids and out_ids == in_ids == copy_ids


def test_sql_on_a_real_profile(tmp_path, capsys):
    pytest.importorskip("duckdb")
    q = ("SELECT provenance, count(*) AS n, sum(duration_ns) AS total_ns FROM items "
         "WHERE kind = 'task' AND provenance <> '' GROUP BY 1 ORDER BY total_ns DESC")
    assert main(["sql", q, str(EXAMPLE), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["provenance"] == "/tmp/rt/example_prog.py:4"  # the Random calls
    assert sum(r["n"] for r in rows) > 400
    assert main(["sql", "SELECT rank, \"group\", utilization FROM utilization "
                 "WHERE \"group\" = 'cpu'", str(EXAMPLE), "--csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "rank,group,utilization" and lines[1].startswith("0,cpu,0.")
    assert main(["sql", "SELECT count(*) AS n FROM provenance_totals", str(EXAMPLE)]) == 0
    assert "(1 row)" in capsys.readouterr().out


def test_sql_on_a_legate_run(legate_run, capsys):
    pytest.importorskip("duckdb")
    run = legate_run("transfers.py")
    assert run.returncode == 0, run.output[-2000:]
    files = [str(p) for p in run.profiles]
    s = stats_json(files, capsys)
    assert main(["sql", "SELECT count(*) AS n FROM items", *files, "--csv"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == str(s["items"])


def test_duckdb_file_has_tables_and_views(example_model, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    out = tmp_path / "p.duckdb"
    export(example_model, "duckdb", str(out), chunk_rows=4096)
    con = duckdb.connect(str(out), read_only=True)
    names = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables")
             .fetchall()}
    assert {"items", "lanes", "waits", "copies", "instances", "provenance", "ranks",
            "provenance_totals", "utilization", "copy_bandwidth"} <= names
    assert con.execute("SELECT count(*) FROM items").fetchone()[0] == example_model.n_items
    con.close()


def test_missing_extra_is_one_line_naming_it(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "duckdb", None)  # import duckdb -> ImportError
    assert main(["sql", "SELECT 1", str(EXAMPLE)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "legate_prof[sql]" in err
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    assert main(["export", str(EXAMPLE), "--format", "parquet", "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "legate_prof[export]" in err
    assert not (tmp_path / "o").exists()


def test_export_never_writes_an_input_and_leaves_no_temp(tmp_path, capsys):
    src = tmp_path / "legate_0.prof"
    src.write_bytes(EXAMPLE.read_bytes())
    before = src.read_bytes()
    assert main(["export", str(src), "--format", "chrome", "-o", str(src)]) == 2
    assert src.read_bytes() == before
    assert "is one of the inputs" in capsys.readouterr().err
    assert main(["export", str(src), "--format", "chrome", "-o", str(tmp_path / "t.json")]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["legate_0.prof", "t.json"]


def test_tables_stream_in_chunks(example_model):
    chunks = list(iter_table(example_model, "items", chunk_rows=1000))
    assert len(chunks) == -(-example_model.n_items // 1000)
    assert max(len(c["item"]) for c in chunks) == 1000
    waits = np.concatenate([c["waiting_ns"] for c in chunks])
    w = example_model.waits
    assert waits.sum() == (w["end"] - w["start"]).sum()


# -- timeline exports their readers accept: slices of one thread / track nest ------------------
REAL = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "real").glob("*.prof"))
TIMELINE_PROFILES = [EXAMPLE] + REAL


@pytest.fixture(scope="module")
def generated_4(tmp_path_factory):
    """A generated 4-rank profile with GPUs: kernels on concurrent streams cross."""
    from fixtures.synthetic import generate
    return generate(tmp_path_factory.mktemp("gen4"), ranks=4, items=20_000, seed=3)


def crossing_slices(spans):
    """Slices (start, stop) of one thread that cross another instead of nesting in it or
    lying apart: the Trace Event format's rule, as Perfetto applies it (by start, longer first;
    touching is apart)."""
    crossing, open_ends = [], []
    for t0, t1 in sorted(spans, key=lambda s: (s[0], -s[1])):
        while open_ends and open_ends[-1] <= t0:
            open_ends.pop()
        if open_ends and t1 > open_ends[-1]:
            crossing.append((t0, t1))
        else:
            open_ends.append(t1)
    return crossing


def test_crossing_slices_are_found():
    assert crossing_slices([(0, 10), (2, 5), (5, 10), (10, 12)]) == []
    assert crossing_slices([(0, 10), (5, 15)]) == [(5, 15)]
    assert crossing_slices([(0, 10), (2, 4), (3, 6)]) == [(3, 6)]


def chrome_threads(path):
    """(pid, tid) -> [(start ns, stop ns)] of the complete events, and -> thread name."""
    events = json.loads(Path(path).read_text())
    spans, names = collections.defaultdict(list), {}
    for e in events:
        if e["ph"] == "X":
            t0 = round(e["ts"] * 1000)
            spans[(e["pid"], e["tid"])].append((t0, t0 + round(e["dur"] * 1000)))
        elif e["name"] == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    return spans, names


def multi_row_lanes(model):
    return [L for L in range(model.n_lanes) if int(model.lanes["rows"][L]) > 1]


@pytest.mark.parametrize("which", [p.name for p in TIMELINE_PROFILES] + ["generated_4"])
def test_chrome_slices_nest_on_every_thread(which, generated_4, tmp_path):
    files = generated_4 if which == "generated_4" else \
        [p for p in TIMELINE_PROFILES if p.name == which]
    model = load_profile([str(f) for f in files])
    out = tmp_path / "t.json"
    export(model, "chrome", str(out), chunk_rows=1009)
    spans, names = chrome_threads(out)
    assert sum(map(len, spans.values())) >= model.n_items + len(model.waits["item"])
    bad = {k: crossing_slices(v) for k, v in spans.items()}
    bad = {names.get(k, k): v[:3] for k, v in bad.items() if v}
    assert not bad
    assert set(spans) <= set(names)  # every thread is named: its lane, and row after row 0
    tids = collections.Counter(names.values())
    rows = sum(max(int(r), 1) for r in model.lanes["rows"])
    assert len(names) == rows
    for L in multi_row_lanes(model):
        title = model.lanes["title"][L]
        assert tids[title] >= 1 and tids[f"{title} · row 1"] >= 1
    if which == "generated_4":  # where the rule was broken: GPU lanes with crossing kernels
        gpu = [L for L in multi_row_lanes(model) if model.lane_group(L) == "gpu_dev"]
        assert gpu


def perfetto_slices(trace):
    """track uuid -> Counter of (begin, end) slices, as a reader pairs BEGIN and END events (in
    time order, an END closing the innermost open slice of its track), and the ENDs that found
    no open slice."""
    order = sorted(range(len(trace.packet)), key=lambda k: trace.packet[k].timestamp)
    open_, slices, unmatched = collections.defaultdict(list), collections.defaultdict(
        collections.Counter), 0
    for k in order:
        p = trace.packet[k]
        if not p.HasField("track_event"):
            continue
        te = p.track_event
        if te.type == 1:
            open_[te.track_uuid].append(p.timestamp)
        elif te.type == 2:
            if not open_[te.track_uuid]:
                unmatched += 1
                continue
            slices[te.track_uuid][(open_[te.track_uuid].pop(), p.timestamp)] += 1
    return slices, unmatched, sum(map(len, open_.values()))


@pytest.mark.parametrize("which", [p.name for p in TIMELINE_PROFILES] + ["generated_4"])
def test_perfetto_slices_are_the_items_of_their_track(which, generated_4, tmp_path):
    """Each track's slices, as a reader pairs BEGIN and END, are exactly the items of one row of
    one lane (the track's name says which): none crosses another, none is cut."""
    Trace = perfetto_classes()
    files = generated_4 if which == "generated_4" else \
        [p for p in TIMELINE_PROFILES if p.name == which]
    model = load_profile([str(f) for f in files])
    out = tmp_path / "t.pftrace"
    export(model, "perfetto", str(out), chunk_rows=1009)
    trace = Trace.FromString(out.read_bytes())
    slices, unmatched, still_open = perfetto_slices(trace)
    assert unmatched == still_open == 0
    names = {p.track_descriptor.uuid: p.track_descriptor.name for p in trace.packet
             if p.HasField("track_descriptor")}
    ours = collections.defaultdict(collections.Counter)
    for uuid, c in slices.items():
        assert not crossing_slices(list(c.elements())), names[uuid]
        ours[names[uuid]] += c
    it = model.items
    want = collections.defaultdict(collections.Counter)
    for lane, row, t0, t1 in zip(*(it[c].tolist() for c in ("lane", "row", "start", "stop"))):
        want[thread_name(model.lanes["title"][lane], row)][(t0, max(t0, t1))] += 1
    assert ours == want


# -- utilization: the reference's lines (legion_prof legacy, goldens in fixtures/real/golden) --
GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "golden"
# the reference's line "N (Kind)" -> our lane groups; its Channel line also covers dependent
# partitioning, a group of its own (dp) here
REFERENCE_LINES = {"CPU": ("cpu",), "Utility": ("utility",), "External": ("proc_other",),
                   "IO": ("io",), "Python": ("python",), "OpenMP": ("openmp",),
                   "GPU": ("gpu_dev",), "System Memory": ("system",),
                   "Framebuffer Memory": ("framebuffer",), "Zero-Copy Memory": ("zerocopy",),
                   "Channel": ("channel", "dp")}
PRINTED = 0.005  # the reference prints its values to 2 decimals
STRADDLE = {}  # (profile, kind) -> a tolerance where the reference is known to differ


def reference_lines(profile):
    """{(node, kind): (times ns, values)} of the reference's per-node utilization step
    functions (its "all (Kind)" lines are the summaries, not a node's)."""
    import gzip
    stem = profile.name.removesuffix(".prof")
    lines = json.loads(gzip.decompress((GOLDEN / f"{stem}.util.json.gz").read_bytes()))
    out = {}
    for name, rows in lines.items():
        node, kind = name.split(" ", 1)
        if node == "all":
            continue
        out[(int(node), kind.strip("()"))] = (np.round(np.array([r[0] for r in rows]) * 1000),
                                              np.array([r[1] for r in rows]))
    return out


def mean_over(t, v, edges):
    """Mean of the step function (value v[i] on [t[i], t[i+1]), 0 outside) over each bin."""
    area = np.concatenate([[0.0], np.cumsum(v[:-1] * np.diff(t))])
    at = np.interp(edges, t, area, left=0.0, right=area[-1])
    return np.diff(at) / np.maximum(np.diff(edges), 1e-300)


def exported_tables(model, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    out = tmp_path / "u.duckdb"
    export(model, "duckdb", str(out), chunk_rows=4099)
    con = duckdb.connect(str(out), read_only=True)
    util = {(r, g): row for r, g, *row in con.execute(
        'SELECT rank, "group", utilization, busy_ns, lanes, span_start_ns, span_stop_ns '
        'FROM utilization').fetchall()}
    steps = collections.defaultdict(list)
    for r, g, a, b, u in con.execute('SELECT rank, "group", start_ns, stop_ns, utilization '
                                     'FROM utilization_steps ORDER BY start_ns').fetchall():
        steps[(r, g)].append((a, b, u))
    con.close()
    return util, steps


def union_of_active(pieces):
    """(times, values) of a 0/1 line: 1 wherever any of the pieces (start, stop, 1) is."""
    on = sorted((a, b) for a, b, u in pieces if u > 0.5)
    merged = []
    for a, b in on:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    t = [x for ab in merged for x in ab]
    v = [x for _ in merged for x in (1.0, 0.0)]
    return np.array(t or [0], np.float64), np.array(v or [0.0])


@pytest.mark.parametrize("profile", TIMELINE_PROFILES, ids=lambda p: p.name)
def test_duckdb_utilization_is_the_references(profile, tmp_path, capsys):
    """The `utilization` table's mean over the run equals the mean of the reference's legacy
    utilization line (waits cut out, every row of every lane counted), for every line the
    reference draws; its busy_ns is `stats --json`'s."""
    model = load_profile([profile])
    util, steps = exported_tables(model, tmp_path)
    span = next(iter(util.values()))[3:5]
    edges = np.array(span, np.float64)
    ref = reference_lines(profile)
    assert {(0, "CPU"), (0, "Utility"), (0, "External")} <= set(ref)
    for (node, kind), (t, v) in ref.items():
        groups = [g for g in REFERENCE_LINES[kind] if (node, g) in util]
        want = mean_over(t, v, edges)[0]
        if len(groups) == 1:
            got = util[(node, groups[0])][0]
        else:  # Channel with dp: the union of the two 0/1 lines, from utilization_steps
            ut, uv = union_of_active([p for g in groups for p in steps[(node, g)]])
            got = mean_over(ut, uv, edges)[0]
        # a line whose printed values are whole multiples of 1 / lanes is printed exactly
        exact = "Memory" not in kind and np.allclose(v * 4, np.round(v * 4))
        tol = STRADDLE.get((profile.name, kind), 1e-9 if exact else PRINTED)
        assert got == pytest.approx(want, abs=tol), (kind, got, want)
    s = stats_json([profile], capsys)
    busy = {(g["rank"], g["kind"]): g["busy_ns"] for g in s["groups"]}
    assert {k: util[k][1] for k in busy} == busy


@pytest.mark.parametrize("profile", TIMELINE_PROFILES, ids=lambda p: p.name)
def test_utilization_steps_are_the_references_lines(profile, tmp_path):
    """Over every step of the reference's utilization lines, the mean of the exported
    `utilization_steps` is the reference's value (to the 2 decimals it prints)."""
    model = load_profile([profile])
    _, steps = exported_tables(model, tmp_path)
    for (node, kind), (t, v) in reference_lines(profile).items():
        groups = [g for g in REFERENCE_LINES[kind] if (node, g) in steps]
        pieces = [p for g in groups for p in steps[(node, g)]]
        if len(groups) == 1:
            a = np.array([p[0] for p in pieces] + [pieces[-1][1]], np.float64)
            ot, ov = a, np.array([p[2] for p in pieces] + [0.0])
        else:
            ot, ov = union_of_active(pieces)
        ours = mean_over(ot, ov, t)
        step = np.flatnonzero(np.diff(t) > 0)
        bad = step[np.abs(ours[step] - v[step]) > PRINTED + 1e-9]
        assert len(bad) == 0, (kind, [(t[i], v[i], ours[i]) for i in bad[:5]])


# -- a full disk: one line, nothing left behind ----------------------------------------------
@pytest.fixture
def small_disk(tmp_path):
    """A 96 KiB tmpfs (needs root and a kernel that lets this process mount one)."""
    import shutil
    import subprocess
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if not shutil.which("mount") or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root: the full-disk case is not tested here")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", str(mnt)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({p.stderr.strip()[:80]})")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


@pytest.mark.parametrize("fmt", ["chrome", "perfetto", "parquet", "duckdb"])
def test_full_disk_is_one_line_and_leaves_nothing(fmt, small_disk, capsys):
    if fmt in ("parquet", "duckdb"):
        pytest.importorskip("pyarrow")
        pytest.importorskip("duckdb")
    out = small_disk / f"run.{fmt}"
    assert main(["export", str(EXAMPLE), "--format", fmt, "-o", str(out), "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "No space left on device" in err and str(out) in err, err
    assert "Traceback" not in err
    # nothing left but the (empty) list of what this user's commands are writing
    left = [q for q in small_disk.iterdir() if not q.name.startswith("legate_prof_writing_")]
    assert left == [] and not any(small_disk.glob("legate_prof_writing_*/*"))  # no temporary, no write-ahead log


# -- a profile held per rank (convert --per-rank): Parquet files and queries rank by rank --------
GROUP_BY = ('SELECT rank, kind, "group", count(*) AS n, sum(duration_ns) AS total_ns, '
            'sum(waiting_ns) AS waiting_ns, count(DISTINCT provenance) AS lines '
            'FROM items GROUP BY ALL ORDER BY ALL')


@pytest.fixture(scope="module")
def per_rank_bundles(generated_4, tmp_path_factory):
    """The generated 4-rank logs converted one bundle per rank, the bundles in a folder."""
    import shutil
    run = tmp_path_factory.mktemp("run")
    logs = [shutil.copy(p, run) for p in generated_4]
    assert main(["convert", "--per-rank", *map(str, logs), "-q"]) == 0
    folder = tmp_path_factory.mktemp("bundles")
    for b in sorted(run.glob("*.lpbundle")):
        shutil.move(str(b), folder)
    assert len(list(folder.iterdir())) == 4
    return folder


def test_per_rank_bundles_export_and_query_without_merging(per_rank_bundles, generated_4,
                                                           tmp_path, monkeypatch):
    """Parquet, DuckDB and SQL of a folder of per-rank bundles read the ranks one by one (the
    merged model is never made) and give exactly the tables of the merged profile."""
    pytest.importorskip("duckdb")
    from legate_prof.export.duckdb_db import query, query_parquet
    merged = load_profile([str(p) for p in generated_4])
    ranked = load_profile([str(per_rank_bundles)], ranked=True)
    assert len(ranked.item_parts()) == 4 and ranked.n_items == merged.n_items

    def no_merge():
        raise AssertionError("merged the ranks")
    monkeypatch.setattr(ranked, "merged_model", no_merge)
    a, b = tmp_path / "ranked", tmp_path / "merged"
    counts = export(ranked, "parquet", str(a), chunk_rows=777)
    assert counts == export(merged, "parquet", str(b))
    assert counts["items"] == merged.n_items and counts["waits"] > 0
    assert [f.name for f in parquet_files(a, "waits")] == \
        [f"waits_{r:05d}.parquet" for r in range(4)]
    for table in counts:
        ta, tb = read_parquet(a, table), read_parquet(b, table)
        if table == "ranks":  # the bundles were converted from copies of the logs
            assert [Path(f).name for f in ta.column("file").to_pylist()] == \
                [Path(f).name for f in tb.column("file").to_pylist()]
            ta, tb = ta.drop_columns(["file"]), tb.drop_columns(["file"])
        assert ta.equals(tb), table
    want = query(merged, GROUP_BY)
    assert len(want[1]) > 20
    assert query(ranked, GROUP_BY, chunk_rows=777) == want  # through a temporary folder
    assert query_parquet(str(a), GROUP_BY) == want  # the export, where it lies
    db = tmp_path / "r.duckdb"
    export(ranked, "duckdb", str(db), chunk_rows=777)
    import duckdb
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute(GROUP_BY).fetchall() == want[1]
    con.close()


def test_sql_and_parquet_export_of_a_folder_of_bundles(per_rank_bundles, generated_4, tmp_path,
                                                      capsys):
    pytest.importorskip("duckdb")
    assert main(["sql", GROUP_BY, *map(str, generated_4), "--csv", "-q"]) == 0
    want = capsys.readouterr().out
    assert main(["sql", GROUP_BY, str(per_rank_bundles), "--csv", "-q"]) == 0
    assert capsys.readouterr().out == want
    out = tmp_path / "pq"
    assert main(["export", str(per_rank_bundles), "--format", "parquet", "-o", str(out),
                 "-q"]) == 0
    capsys.readouterr()
    assert main(["sql", GROUP_BY, str(out), "--csv"]) == 0  # the export folder itself
    assert capsys.readouterr().out == want
    # written again over an earlier export; a folder of the user's is refused
    assert main(["export", str(per_rank_bundles), "--format", "parquet", "-o", str(out),
                 "-q"]) == 0
    (out / "NOTES.txt").write_text("mine")
    assert main(["export", str(per_rank_bundles), "--format", "parquet", "-o", str(out),
                 "-q"]) == 2
    assert (out / "NOTES.txt").read_text() == "mine"


def test_sql_of_ranks_on_a_full_disk_is_one_line(per_rank_bundles, small_disk, monkeypatch,
                                                  capsys):
    """`sql` on per-rank bundles writes the ranks' tables to a temporary folder: a full disk
    there is one line, and the folder goes."""
    pytest.importorskip("duckdb")
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(small_disk))
    assert main(["sql", GROUP_BY, str(per_rank_bundles), "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "No space left on device" in err and "TMPDIR" in err, err
    # nothing left but the (empty) list of what this user's commands are writing
    left = [q for q in small_disk.iterdir() if not q.name.startswith("legate_prof_writing_")]
    assert left == [] and not any(small_disk.glob("legate_prof_writing_*/*"))
