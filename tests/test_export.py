"""Exports: Chrome trace totals equal the reference's statistics; tables equal `stats` counts."""

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from fixtures.make_goldens import golden_paths
from fixtures.reference_stats import parse_statistics
from legate_prof.errors import ProfileError
from legate_prof.loader import load_profile
from legate_prof.stats import compute_stats

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "fixtures" / "real" / "legate26.06_cpu2_myprof_0.prof"
EXAMPLE = ROOT / "legate_prof" / "data" / "example_legate_0.prof"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "legate_prof", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("profile", [SAMPLE, EXAMPLE], ids=lambda p: p.name)
def test_chrome_trace_task_totals_equal_the_reference_statistics(profile, tmp_path):
    out = tmp_path / "trace.json"
    r = cli("export", "--format", "chrome", profile, "-o", out)
    assert r.returncode == 0, r.stderr
    totals = Counter()
    for e in json.loads(out.read_text())["traceEvents"]:
        if e["ph"] == "X":
            totals[e["name"].removesuffix(" (waiting)").removesuffix(" (ready)")] += e["dur"]
    rows = [r for r in parse_statistics(golden_paths(profile)[0].read_text())
            if r["kind"] == "Task"]
    want, tol = Counter(), Counter()
    for row in rows:  # the reference's trace names a task "name (variant)"
        key = f"{row['name']} ({row['qualifier']})"
        want[key] += row["total_us"]
        tol[key] += row["precision"]["total_us"] + 0.001 * row["count"]
    assert want
    for key, us in want.items():
        assert abs(totals[key] - us) <= tol[key] + 0.01, (key, totals[key], us)


def test_parquet_tables_have_the_counts_of_stats(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "tables"
    r = cli("export", "--format", "parquet", EXAMPLE, "-o", out)
    assert r.returncode == 0, r.stderr
    s = compute_stats(load_profile([EXAMPLE]))
    rows = {p.stem: pq.read_table(p).num_rows for p in out.glob("*.parquet")}
    assert rows["items"] == s["items"]
    assert rows["copies"] == s["copies"]["count"] + s["fills"]["count"]
    assert rows["instances"] == s["instances"]["count"]
    assert rows["ranks"] == s["ranks"]
    items = pq.read_table(out / "items.parquet").to_pydict()
    tasks = sum(1 for k in items["kind"] if k == 0)
    assert tasks == sum(t["count"] for t in s["tasks"])
    assert sum(items["duration_ns"][i] for i in range(len(items["kind"]))
               if items["kind"][i] == 0) == sum(t["total_ns"] for t in s["tasks"])


def test_duckdb_file_has_tables_and_views(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    out = tmp_path / "run.duckdb"
    r = cli("export", "--format", "duckdb", EXAMPLE, "-o", out)
    assert r.returncode == 0, r.stderr
    con = duckdb.connect(str(out), read_only=True)
    n = con.execute("SELECT count(*) FROM items").fetchone()[0]
    assert n == load_profile([EXAMPLE]).n_items
    top = con.execute("SELECT provenance, total_ns FROM provenance_totals LIMIT 1").fetchone()
    assert top[0].endswith(".py:22") or top[0].endswith(".py:23")
    assert con.execute("SELECT count(*) FROM group_utilization").fetchone()[0] >= 3


def test_sql_on_a_real_legate_run_counts_the_tasks_launched(legate_run):
    pytest.importorskip("duckdb")
    run = legate_run("chain.py")
    assert run.returncode == 0, run.output[-2000:]
    r = cli("sql", "SELECT p.text AS line, count(*) AS tasks FROM items i JOIN provenance p "
            "USING (provenance) WHERE i.kind = 0 AND i.provenance > 0 GROUP BY 1 ORDER BY 1", *run.profiles, "--json")
    assert r.returncode == 0, r.stderr
    got = {Path(x["line"]).name: x["tasks"] for x in json.loads(r.stdout)}
    want = Counter()
    for prov, n in run.manifest["provenance_counts"].items():
        want[Path(prov).name] += n
    assert got == dict(want)


def test_sql_errors_and_missing_extras_are_one_line(monkeypatch):
    r = cli("sql", "SELECT nonsense FROM nowhere", SAMPLE)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len([ln for ln in r.stderr.splitlines() if "error:" in ln]) == 1
    from legate_prof.export import columnar
    monkeypatch.setitem(sys.modules, "duckdb", None)
    with pytest.raises(ProfileError, match=r"legate_prof\[sql\]"):
        columnar.run_sql(load_profile([SAMPLE]), "SELECT 1")


def test_export_never_writes_onto_an_input(tmp_path):
    copy = tmp_path / "legate_0.json"
    copy.write_bytes(SAMPLE.read_bytes())
    before = copy.read_bytes()
    r = cli("export", "--format", "chrome", copy, "-o", copy)
    assert r.returncode == 2 and "is one of the inputs" in r.stderr
    assert copy.read_bytes() == before
