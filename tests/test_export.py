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
from legate_prof.export.perfetto import CRITICAL_FLOW
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
    assert all(e["ph"] in ("X", "M", "s", "f") for e in events)  # (s, f: critical path flows)
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
    # (the critical path's flows: test_perfetto_critical_path_flows_bind_to_their_slices)
    out_ids = {f for e in events for f in e.track_event.flow_ids if e.track_event.type == 3}
    in_ids = {f for e in events for f in e.track_event.terminating_flow_ids
              if f < CRITICAL_FLOW}
    copy_ids = {f for e in begins for f in e.track_event.flow_ids if f < CRITICAL_FLOW}
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
    # the lines by what they cost, most first (the view came back in no order)
    assert main(["sql", "SELECT total_ns FROM provenance_totals", str(EXAMPLE), "--json"]) == 0
    totals = [r["total_ns"] for r in json.loads(capsys.readouterr().out)]
    assert len(totals) > 3 and totals == sorted(totals, reverse=True)


def test_sql_of_several_statements_says_whose_result_it_shows(capsys):
    """``sql "SELECT 1; SELECT 2"`` printed the last statement's rows alone, without a word
    (a user's review): DuckDB runs them all (``SET`` or a view, then a query, is useful) and
    the note says the result is the last one's; one statement says nothing."""
    pytest.importorskip("duckdb")
    assert main(["sql", "SELECT 1 AS a; SELECT 2 AS b", str(EXAMPLE), "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out) == [{"b": 2}]
    assert out.err.strip().splitlines()[-1] == (
        "legate_prof: the query holds 2 statements; the result below is the last one's (run "
        "each alone for its own)")
    assert main(["sql", "SELECT ';' AS a", str(EXAMPLE), "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out) == [{"a": ";"}] and "statements" not in out.err


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
    from conftest import small_tmpfs
    with small_tmpfs(tmp_path / "disk", "96k") as mnt:
        yield mnt


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


# -- the critical path: flows along the run's path, the critical_path tables -------------------
RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "real"
CRITICAL_RUNS = {p.name: [p] for p in TIMELINE_PROFILES}
CRITICAL_RUNS.update({d: sorted((RUNS / d).glob("legate_*.prof.gz"))
                      for d in ("mpi2", "mpi2_skewed", "mpi3", "mpi4", "inefficient_1rank")})


def critical_steps(model, begin=False):
    """(predecessor, item) of each step of the run's critical path that has one, in order
    (``begin``: and where the item's piece on the path begins)."""
    from legate_prof.query import as_source
    steps = as_source(model).run_critical_path()
    return [(s.predecessor, s.item) + ((s.begin_ns,) if begin else ())
            for s in steps if s.predecessor >= 0]


def perfetto_flow_events(trace, names):
    """flow id -> [(kind, track name, its slice (begin, end), event time)] of each event that
    carries it: kind "start" (flow_ids) or "end" (terminating_flow_ids), the slice paired as a
    reader pairs a track's BEGIN and END in time order."""
    order = sorted(range(len(trace.packet)), key=lambda k: trace.packet[k].timestamp)
    open_, out = collections.defaultdict(list), collections.defaultdict(list)
    for k in order:
        p = trace.packet[k]
        te = p.track_event
        if not p.HasField("track_event") or te.type not in (1, 2):
            continue
        if te.type == 1:
            open_[te.track_uuid].append((p.timestamp, list(te.flow_ids)))
            continue
        begin, starts = open_[te.track_uuid].pop()
        where = (names[te.track_uuid], (begin, p.timestamp))
        for f in starts:
            out[f].append(("start", *where, begin))
        for f in te.terminating_flow_ids:
            out[f].append(("end", *where, p.timestamp))
    return out


@pytest.mark.parametrize("which", list(CRITICAL_RUNS))
def test_perfetto_critical_path_flows_bind_to_their_slices(which, tmp_path):
    """One flow per step of the run's critical path, from the predecessor's slice to the
    item's, each on the track of its item's lane row: a reader taking events in time order
    starts each flow (at one slice's BEGIN) before it ends it (at the other's END)."""
    Trace = perfetto_classes()
    model = load_profile([str(f) for f in CRITICAL_RUNS[which]])
    out = tmp_path / "t.pftrace"
    export(model, "perfetto", str(out), chunk_rows=1009)  # chunk edges mid-path
    trace = Trace.FromString(out.read_bytes())
    assert unknown_fields(trace) == 0
    names = {p.track_descriptor.uuid: p.track_descriptor.name for p in trace.packet
             if p.HasField("track_descriptor")}
    flows = {f: v for f, v in perfetto_flow_events(trace, names).items() if f >= CRITICAL_FLOW}
    steps = critical_steps(model)
    assert len(steps) > 20
    # (a step from a task's wait to the task itself has no arrow: a slice to itself)
    assert sorted(flows) == [CRITICAL_FLOW + k for k, (p, i) in enumerate(steps) if p != i]
    it = model.items

    def slice_of(i):
        return (thread_name(model.lanes["title"][it["lane"][i]], int(it["row"][i])),
                (int(it["start"][i]), max(int(it["start"][i]), int(it["stop"][i]))))
    for k, (pred, item) in enumerate(steps):
        if pred == item:
            continue
        events = flows[CRITICAL_FLOW + k]
        assert sorted(e[0] for e in events) == ["end", "start"], (k, events)
        start, end = sorted(events)[::-1]  # ("start", ...), ("end", ...)
        assert {start[1:3], end[1:3]} == {slice_of(pred), slice_of(item)}, k
        assert start[3] <= end[3]  # started before it ends: a reader keeps it
        # it starts at whichever slice begins first (Perfetto draws it from that one)
        assert start[1:3] == min(slice_of(pred), slice_of(item), key=lambda s: s[1][0])


def chrome_flow_events(path):
    """(complete events per thread sorted by start: (start ns, stop ns, name)), thread names,
    and flow id -> {"s" / "f": (thread, time ns, the event)}."""
    events = json.loads(Path(path).read_text())
    slices, names, flows = collections.defaultdict(list), {}, collections.defaultdict(dict)
    for e in events:
        thread = (e.get("pid"), e.get("tid"))
        if e["ph"] == "X":
            t0 = round(e["ts"] * 1000)
            slices[thread].append((t0, t0 + round(e["dur"] * 1000), e["name"]))
        elif e["ph"] == "M" and e["name"] == "thread_name":
            names[thread] = e["args"]["name"]
        elif e["ph"] in ("s", "f"):
            assert e["ph"] not in flows[e["id"]]
            flows[e["id"]][e["ph"]] = (thread, round(e["ts"] * 1000), e)
    for v in slices.values():
        v.sort()
    return slices, names, flows


def bound_slice(slices, thread, t):
    """The slice a reader binds a flow event at ``t`` to: the last one on its thread to begin
    by then (Perfetto's importer keeps it open until another begins)."""
    s = slices[thread]
    k = np.searchsorted([x[0] for x in s], t, side="right") - 1
    assert k >= 0
    return s[k]


@pytest.mark.parametrize("which", list(CRITICAL_RUNS))
def test_chrome_critical_path_flows_bind_to_their_pieces(which, tmp_path):
    """Chrome trace: each step's flow binds to a piece of the predecessor (the one that runs
    up to its end on the path) and to the piece of the item where it begins on the path,
    each on its item's lane-row thread, strictly inside it (but in pieces under 2 ns); the
    "s" comes first, in the predecessor: every arrow points forward in time, but where two
    nodes' clocks put the whole predecessor after the item went on."""
    from legate_prof.export.chrome import pieces_of
    model = load_profile([str(f) for f in CRITICAL_RUNS[which]])
    out = tmp_path / "t.json"
    export(model, "chrome", str(out), chunk_rows=997)
    slices, names, flows = chrome_flow_events(out)
    steps = critical_steps(model, begin=True)
    assert len(steps) > 20 and sorted(flows) == list(range(1, len(steps) + 1))
    it = model.items
    for k, (pred, item, begin) in enumerate(steps, 1):
        (s_thread, s_t, s_event), (f_thread, f_t, f_event) = flows[k]["s"], flows[k]["f"]
        assert f_event.get("bp") == "e" and s_event["name"] == f_event["name"]
        assert s_t < f_t  # a reader meets the start first
        bound = {}
        for thread, t in ((s_thread, s_t), (f_thread, f_t)):
            t0, t1, name = bound_slice(slices, thread, t)
            assert t0 < t < t1 or (t1 - t0 < 2 and t == t0)  # away from ties at a bound
            bound[(thread, t0, t1)] = name
        assert len(bound) == 2  # two slices (a task's wait to itself: two of its pieces)
        for i in (pred, item):  # a bound slice is a piece of each, on its row's thread
            _, p0, p1, _ = pieces_of(model, [i])
            lane, row = it["lane"][i], int(it["row"][i])
            mine = [key for key in bound if names[key[0]] == thread_name(
                model.lanes["title"][lane], row) and key[1:] in set(zip(p0.tolist(),
                                                                         p1.tolist()))]
            assert len(mine) == (2 if pred == item else 1), (k, i)
            assert bound[mine[0]].startswith(model.names[it["name"][i]] or "(unnamed)")
        s_slice = bound_slice(slices, s_thread, s_t)
        f_slice = bound_slice(slices, f_thread, f_t)
        _, p0, p1, _ = pieces_of(model, [pred])
        if it["start"][pred] <= begin:  # the predecessor ran before the item went on:
            assert s_slice[:2] in set(zip(p0.tolist(), p1.tolist())), k  # from it
            assert s_slice[0] <= f_slice[0], k  # forward (Perfetto orders them so)


def api_links(src, n):
    """The API's critical link of every item that has one, as the table's columns."""
    out = {}
    for i in range(n):
        link = src.critical_predecessor(i)
        if link is not None:
            out[i] = {"predecessor": link.predecessor, "via": link.via,
                      "event_kind": link.event_kind, "trigger_ns": link.trigger_ns,
                      "ready_ns": link.ready_ns, "creation_ns": link.creation_ns,
                      "lag_ns": link.lag_ns, "note": link.note}
    return out


def api_path(src):
    return [{"step": k, "item": s.item, "predecessor": None if s.predecessor < 0 else
             s.predecessor, "via": s.via, "begin_ns": s.begin_ns, "end_ns": s.end_ns,
             "wait_from_ns": s.wait_from_ns, "wait_to_ns": s.wait_to_ns}
            for k, s in enumerate(src.run_critical_path())]


@pytest.mark.parametrize("which", ["example_legate_0.prof", "transfers_0.prof", "mpi2",
                                   "mpi4"])
def test_critical_path_tables_are_the_apis_links(which, tmp_path):
    """``critical_path`` holds one row per item with a critical predecessor, equal to the
    query API's link on every column; ``run_critical_path`` the API's steps — in Parquet
    (pyarrow) and in the DuckDB file."""
    duckdb = pytest.importorskip("duckdb")
    from legate_prof.query import as_source
    model = load_profile([str(f) for f in CRITICAL_RUNS[which]])
    src = as_source(model)
    want = api_links(src, model.n_items)
    assert len(want) > 50 and {v["via"] for v in want.values()} >= {"event", "creator"}
    path = api_path(src)
    export(model, "parquet", str(tmp_path / "pq"), chunk_rows=1000)
    export(model, "duckdb", str(tmp_path / "db"), chunk_rows=1000)
    con = duckdb.connect(str(tmp_path / "db"), read_only=True)
    cur = con.execute("SELECT * FROM critical_path ORDER BY item")
    cols = [d[0] for d in cur.description]
    from_duckdb = [dict(zip(cols, r)) for r in cur.fetchall()]
    cur = con.execute("SELECT * FROM run_critical_path ORDER BY step")
    cols = [d[0] for d in cur.description]
    path_duckdb = [dict(zip(cols, r)) for r in cur.fetchall()]
    con.close()
    from_parquet = read_parquet(tmp_path / "pq", "critical_path").to_pylist()
    for rows in (from_parquet, from_duckdb):
        assert [r["item"] for r in rows] == sorted(want)
        assert {r.pop("item"): r for r in rows} == want
    assert read_parquet(tmp_path / "pq", "run_critical_path").to_pylist() == path
    assert path_duckdb == path and len(path) > 20


def test_critical_path_of_ranks_held_apart_is_numbered_as_the_items(generated_4, tmp_path):
    """A profile held per rank (each rank's model built unstacked, as worker processes build
    them): the links are computed over all ranks, and the tables name the items by the
    export's numbers (``items.item``), exactly as the merged profile's export does."""
    duckdb = pytest.importorskip("duckdb")
    from legate_prof.assemble.rank_set import RankSet
    from legate_prof.export.critical import export_ids
    from legate_prof.export.duckdb_db import query
    from legate_prof.query import as_source
    ranked = RankSet([load_profile([str(f)], ranked=True) for f in generated_4])
    assert not any(p.model.stacked for p in ranked.item_parts())
    new_id = export_ids(ranked)
    assert new_id is not None and (new_id != np.arange(len(new_id))).any()  # renumbered
    merged = load_profile([str(f) for f in generated_4])
    a, b = tmp_path / "ranked", tmp_path / "merged"
    counts = export(ranked, "parquet", str(a), chunk_rows=777)
    assert counts == export(merged, "parquet", str(b))
    assert counts["critical_path"] > 10_000 and counts["run_critical_path"] > 0
    for table in ("critical_path", "run_critical_path"):
        assert read_parquet(a, table).equals(read_parquet(b, table)), table
    # the rows name, by the items table's numbers, the items the API links in its own numbers
    src = as_source(ranked)
    n = src.info().n_items
    cols = src.items_columns(np.arange(n))

    def key(i):
        return None if i is None else (src.item_lane(i)[0], int(cols["start"][i]),
                                       int(cols["stop"][i]))
    want = {key(i): (v["via"], key(v["predecessor"])) for i, v in api_links(src, n).items()}
    q = ("SELECT i.lane, i.start_ns, i.stop_ns, c.via, p.lane, p.start_ns, p.stop_ns "
         "FROM critical_path c JOIN items i ON i.item = c.item "
         "LEFT JOIN items p ON p.item = c.predecessor")
    rows = query(ranked, q, chunk_rows=777)[1]
    got = {tuple(r[:3]): (r[3], None if r[4] is None else tuple(r[4:])) for r in rows}
    assert len(got) == len(rows) == len(want) and got == want


def test_sql_reads_the_critical_path_tables(tmp_path, capsys):
    pytest.importorskip("duckdb")
    q = ("SELECT c.via, count(*) AS n, count(c.predecessor) AS linked FROM critical_path c "
         "JOIN items i USING (item) GROUP BY 1 ORDER BY 1")
    assert main(["sql", q, str(EXAMPLE), "--json"]) == 0
    rows = {r["via"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["event"]["n"] == rows["event"]["linked"] > 100
    assert rows["unknown_event"]["linked"] == 0
    out = tmp_path / "pq"
    assert main(["export", str(EXAMPLE), "--format", "parquet", "-o", str(out), "-q"]) == 0
    capsys.readouterr()
    assert main(["sql", q, str(out), "--json"]) == 0  # the export folder, where it lies
    assert {r["via"]: r for r in json.loads(capsys.readouterr().out)} == rows
    assert main(["sql", "SELECT count(*) AS steps, min(step) AS first FROM run_critical_path",
                 str(out), "--csv"]) == 0
    steps, first = capsys.readouterr().out.splitlines()[1].split(",")
    assert int(steps) > 100 and first == "0"
    with pytest.raises(SystemExit):
        main(["sql", "--help"])
    text = capsys.readouterr().out
    assert "critical_path: item, predecessor, via" in text and "run_critical_path: step" in text


def test_the_provenance_table_of_ranks_reads_their_shared_operations_once(per_rank_bundles):
    """Every rank of a ``RankSet`` answers from one table of all ranks' operations: the
    export's count of operations per source line reads it once, not once per rank (1,000
    ranks concatenated 1,000 copies of 1.4 M operations: the export was killed for memory).
    The counts are the merged profile's, each operation once."""
    import tracemalloc
    from legate_prof.export.ranks import summary_of, whole_table
    ranked = load_profile([str(per_rank_bundles)], ranked=True)
    parts = ranked.item_parts()
    ops = parts[0].model.ops
    assert len(parts) == 4 and all(p.model.ops is ops for p in parts)
    one = sum(np.asarray(ops[c]).nbytes for c in ops)
    tracemalloc.start()
    rows = list(whole_table(ranked, "provenance", 1 << 16))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1.5 * one, (peak, one)  # (a copy per rank: 4 copies and a sort of them)
    counts = np.bincount(np.asarray(ops["provenance"], np.int64),
                         minlength=len(summary_of(ranked).provenances))
    got = np.concatenate([np.asarray(r["ops"]) for r in rows])
    assert int(np.sum(got)) == len(ops["op_id"]) == int(counts.sum())


def test_items_kinds_keep_arrays_apart_from_instances(capsys):
    """mpi2's `kind = 'instance'` counted 35 where `stats` counts 21 instances: the runtime
    stream's 14 arrays were "instance" too (a user's review); they are "array" now, and
    `provenance_totals` (time spent per line, the costliest first) leaves out what instances
    and arrays hold, whose lifetimes topped it."""
    pytest.importorskip("duckdb")
    run = str(Path(__file__).resolve().parents[1] / "fixtures" / "real" / "mpi2")
    s = stats_json([run], capsys)
    assert main(["sql", "SELECT kind, count(*) AS n FROM items WHERE kind IN "
                 "('instance', 'array') GROUP BY kind ORDER BY kind", run, "--json"]) == 0
    got = {r["kind"]: r["n"] for r in json.loads(capsys.readouterr().out)}
    assert got["instance"] == s["instances"]["count"] == 21, (got, s["instances"])
    assert got["array"] == 14
    assert main(["sql", "SELECT DISTINCT kind FROM provenance_totals", run, "--json"]) == 0
    kinds = {r["kind"] for r in json.loads(capsys.readouterr().out)}
    # (nor operations' lifetimes, from submission to completion: loops3's topped the view
    # with 38 s of an 8.3 s run, every rank's stream repeating them — a review)
    assert kinds and not kinds & {"instance", "array", "runtime_op"}, kinds


def test_chrome_names_the_runtimes_arrays_as_the_items_table_does(tmp_path, capsys):
    """A review: the Chrome export put mpi2's 14 arrays under ``"cat": "instance"``, where the
    items table says ``kind = 'array'`` and ``stats`` counts 21 instances."""
    run = str(Path(__file__).resolve().parents[1] / "fixtures" / "real" / "mpi2")
    out = tmp_path / "t.json"
    assert main(["export", "--format", "chrome", run, "-o", str(out)]) == 0
    cats = [e.get("cat") for e in json.loads(out.read_text()) if e.get("ph") == "X"]
    assert cats.count("array") == 14 and cats.count("instance") == 21, \
        (cats.count("array"), cats.count("instance"))
    out = tmp_path / "t.pftrace"  # (and the Perfetto trace's categories)
    assert main(["export", "--format", "perfetto", run, "-o", str(out)]) == 0
    trace = perfetto_classes().FromString(out.read_bytes())
    cats = collections.Counter(tuple(p.track_event.categories) for p in trace.packet
                               if p.HasField("track_event") and p.track_event.type == 1)
    assert cats[("array",)] == 14 and cats[("instance",)] == 21, cats
