"""One count per thing (issue 38): the program's operations and arrays, from the runtime's
streams, counted once per run however many ranks' streams repeat them, and Legion's instances
apart from them — the same in `stats`, `insights`, the report and the exports.

On ``fixtures/real/loops3`` (``fixtures/programs/loop_shapes.py`` on 3 real ranks): before,
`stats` counted every rank's copy (120 operations, 69 arrays among the instances)."""

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from legate_prof.analyze.insights import find_insights
from legate_prof.analyze.stats import compute_stats
from legate_prof.load.loader import load_profile
from legate_prof.read.legion_log import LegionProfReader
from legate_prof.read.runtime_stream import read_runtime_stream

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "fixtures" / "real" / "loops3"
PROGRAM = RUN / "loop_shapes.py"


def program_counts():
    """What ``loop_shapes.py`` makes, by its own constants and docstring: operations by name,
    arrays."""
    src = PROGRAM.read_text()
    steps, slices, outs = map(int, re.search(r"STEPS, SLICES, OUTS = (\d+), (\d+), (\d+)",
                                             src).groups())
    ops = {"Fill": 3, "BinaryOp": 2 * steps + slices + outs, "Copy": slices, "Reduce": 2}
    return ops, 5 + 2 * steps + slices


def legion_instances():
    """Legion's instances in the run's logs: each rank's, each counted."""
    n = 0
    for p in sorted(RUN.glob("legate_*.prof.gz")):
        n += len(LegionProfReader(str(p)).read().table("InstTimelineInfo"))
    return n


def test_the_program_is_what_the_streams_say():
    ops, arrays = program_counts()
    for p in sorted(RUN.glob("legate_*.runtime.prof")):
        s = read_runtime_stream(p)
        names = {}
        for o in s.ops:
            names[o[1]] = names.get(o[1], 0) + 1
        assert names == ops and len(s.arrays) == arrays, p.name
    assert sum(ops.values()) == 40 and arrays == 23


@pytest.mark.parametrize("ranked", [False, True])
def test_stats_count_operations_and_arrays_once_and_instances_apart(ranked):
    ops, arrays = program_counts()
    s = compute_stats(load_profile([str(RUN)], ranked=ranked), idle=False)
    assert {r["name"]: r["count"] for r in s["operations"]} == ops
    streams = [read_runtime_stream(p) for p in sorted(RUN.glob("legate_*.runtime.prof"))]
    assert s["arrays"] == {"count": arrays, "rank": 0,
                           "bytes": sum(a["nbytes"] for a in streams[0].arrays.values())}
    assert s["instances"]["count"] == legion_instances() > 0
    # the arrays lanes hold each rank's piece: the three ranks' add up to the arrays
    assert s["arrays"]["bytes"] > 0


def test_stats_text_says_how_it_counted():
    ops, arrays = program_counts()
    p = subprocess.run([sys.executable, "-m", "legate_prof", "stats", "--no-idle", str(RUN)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "each once: every rank's stream repeats them, counted in rank 0's" in p.stdout
    assert re.search(rf"^  BinaryOp +{ops['BinaryOp']} ", p.stdout, re.M)
    assert f"arrays: {arrays} made by the program" in p.stdout
    assert f"instances: {legion_instances()} created" in p.stdout


def test_exports_count_as_stats_do(tmp_path):
    """Parquet (and so DuckDB and `sql`, which read the same tables): the instances table is
    Legion's, the arrays table each rank's piece of each array (distinct array ids: the
    program's arrays), the provenance table's operations the program's, once."""
    pq = pytest.importorskip("pyarrow.parquet")
    from legate_prof.export import export
    ops, arrays = program_counts()
    for ranked in (False, True):
        profile = load_profile([str(RUN)], ranked=ranked)
        s = compute_stats(profile, idle=False)
        out = tmp_path / f"pq{ranked}"
        export(profile, "parquet", str(out))

        def table(name):
            files = sorted(out.glob(f"{name}*.parquet"))
            return [pq.read_table(f).to_pydict() for f in files]
        assert sum(len(t["item"]) for t in table("instances")) == s["instances"]["count"]
        arr = table("arrays")
        ids = {i for t in arr for i in t["array_id"]}
        assert len(ids) == arrays == s["arrays"]["count"]
        whole = {i: b for t in arr for i, b in zip(t["array_id"], t["array_bytes"])}
        assert sum(whole.values()) == s["arrays"]["bytes"]
        pieces = {}
        for t in arr:
            for i, b in zip(t["array_id"], t["size_bytes"]):
                pieces[i] = pieces.get(i, 0) + b
        assert pieces == whole  # every rank's pieces add up to the array
        [prov] = table("provenance")
        assert sum(prov["ops"]) == sum(ops.values())
        by_line = {p.rsplit(":", 1)[-1]: n for p, n in zip(prov["provenance"], prov["ops"]) if n}
        assert by_line == {"15": 1, "16": 1, "18": 12, "20": 1, "22": 12, "25": 11, "27": 2}


def test_sql_counts_the_programs_arrays_and_operations():
    pytest.importorskip("duckdb")
    ops, arrays = program_counts()
    p = subprocess.run([sys.executable, "-m", "legate_prof", "sql",
                        "SELECT (SELECT count(DISTINCT array_id) FROM arrays) AS a, "
                        "(SELECT sum(ops) FROM provenance) AS o", str(RUN)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert re.search(rf"^\s*{arrays}\s+{sum(ops.values())}\s*$", p.stdout, re.M), p.stdout


def test_the_report_carries_the_same_counts(tmp_path):
    from legate_prof.report.writer import write_report
    ops, arrays = program_counts()
    profile = load_profile([str(RUN)], ranked=True)
    write_report(profile, tmp_path / "rep")
    text = (tmp_path / "rep" / "meta.js").read_text()
    meta = json.loads(text[text.index("(") + 1:text.rindex(")")])
    s = meta["stats"]
    assert {r["name"]: r["count"] for r in s["operations"]} == ops
    assert s["arrays"]["count"] == arrays
    assert s["instances"]["count"] == legion_instances()
    temps = [f for f in meta["findings"]["findings"] if f["pattern"] == "temporaries"]
    # u = u * 0.5 + v: 2 arrays a step, of which u * 0.5 the temporary (6 steps)
    assert [f["evidence"]["arrays"] for f in temps] == [6]


def test_insights_count_each_loops_operations_once():
    """The tiny-task findings count the program's operations of their lines once (one rank's
    stream), beside the tasks they made on every rank."""
    found = [f for f in find_insights(load_profile([str(RUN)])) if f["pattern"] == "tiny_tasks"]
    by_line = {f["provenance"][0].rsplit(":", 1)[-1]: f["evidence"] for f in found}
    assert {k: v["operations"] for k, v in by_line.items()} == {"18": 12, "22": 12, "25": 11}
    assert {k: v["tasks"] for k, v in by_line.items()} == {"18": 36, "22": 36, "25": 33}


def test_a_ranks_arrays_lane_holds_its_piece_never_the_whole_array():
    """An array of 360,000 rows on 3 ranks: each rank holds 120,000 of them (Legate's block),
    and its arrays lane says which."""
    m = load_profile([str(RUN)]).merged_model()
    from legate_prof.assemble.stream_items import stream_arrays
    arr = np.flatnonzero(stream_arrays(m.items["kind"], m.items["op_id"]))
    sizes = {}
    for i in arr.tolist():
        size = m.transfer_of(i)[0]
        rank = int(m.lanes["rank"][m.items["lane"][i]])
        sizes.setdefault(m.names[int(m.items["name"][i])].split(" (rows")[0], set()).add(
            (rank, size))
    full = [k for k in sizes if "(360000,)" in k]
    assert full
    for k in full:
        assert sizes[k] == {(r, 120_000 * 8) for r in range(3)}, k
    names = {m.names[int(m.items["name"][i])] for i in arr.tolist()}
    assert any("(rows 120000..239999 on rank 1)" in n for n in names)


def test_stats_says_what_a_tasks_running_leaves_out_and_where_its_body_is():
    """A review read "BinaryOp ... 171.744 ms total, 5.944 ms running" as tasks blocked: legate
    runs a task's body as an application call of its name, which running leaves out as the
    reference counts it.  A line under the tasks says so, with the calls' time (the JSON's
    application calls, added up)."""
    mpi4 = ROOT / "fixtures" / "real" / "mpi4"
    doc = json.loads(subprocess.run([sys.executable, "-m", "legate_prof", "stats", "--json",
                                     "--no-idle", str(mpi4)], capture_output=True,
                                    text=True).stdout)
    text = subprocess.run([sys.executable, "-m", "legate_prof", "stats", "--no-idle", str(mpi4)],
                          capture_output=True, text=True).stdout
    from legate_prof.present.units import format_ns
    calls = doc["application_calls"]
    total = sum(c["total_ns"] for c in calls)
    binary = next(c for c in calls if c["name"] == "BinaryOp")
    task = next(t for t in doc["tasks"] if t["name"] == "BinaryOp")
    assert task["running_ns"] + binary["total_ns"] <= task["total_ns"]  # (inside the tasks)
    tasks_part = text.split("\nTasks\n")[1].split("\n\n")[0]
    assert tasks_part.splitlines()[-1] == (
        "  running: waits and the calls a task made left out, as the reference counts it; "
        "legate runs a task's body as an application call of its name "
        f"({format_ns(total)} of application calls: BinaryOp "
        f"{format_ns(binary['total_ns'])}, Reduce 576.710 µs)")
