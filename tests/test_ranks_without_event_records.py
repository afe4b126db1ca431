"""Per-rank bundles of logs that hold no event-graph records (an older Legion, or records left
out) and no implicit tasks: a rank's event graph has no vertex at all (issue 37, point 6).

After `convert --per-rank`, `stats`, `critical`, `report`, `screenshot --critical-path` and the
Parquet/DuckDB exports ended in an IndexError in `link_rules.critical_entry`; the logs
themselves loaded.  The bundles now answer as the logs do.
"""

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures.fuzzing import without_records

ROOT = Path(__file__).resolve().parents[1]
MPI2 = ROOT / "fixtures" / "real" / "mpi2"
EVENT_RECORDS = {"EventMergerInfo", "CompletionQueueInfo", "EventTriggerInfo", "EventPoisonInfo",
                 "BarrierArrivalInfo", "ReservationAcquireInfo", "InstanceReadyInfo",
                 "InstanceRedistrictInfo", "ExternalEventInfo", "EventWaitInfo",
                 "ImplicitTaskInfo"}


@pytest.fixture(scope="module")
def run_without_events(tmp_path_factory):
    """(folder of the two ranks' logs without event records, folder of their per-rank
    bundles)."""
    from legate_prof.load.loader import load_profile
    from legate_prof.store.bundle import write_bundle
    logs, bundles = tmp_path_factory.mktemp("logs"), tmp_path_factory.mktemp("bundles")
    for rank in (0, 1):
        data = gzip.decompress((MPI2 / f"legate_{rank}.prof.gz").read_bytes())
        (logs / f"legate_{rank}.prof").write_bytes(without_records(data, EVENT_RECORDS))
        write_bundle(load_profile([logs / f"legate_{rank}.prof"]),
                     bundles / f"legate_{rank}.lpbundle")
    return logs, bundles


ENV = dict(os.environ, QT_QPA_PLATFORM="offscreen", LEGATE_PROF_CACHE_DIR="")


def cli(*args):
    return subprocess.run([sys.executable, "-m", "legate_prof", *map(str, args)],
                          capture_output=True, text=True, timeout=300, env=ENV)


def test_per_rank_bundles_without_event_records_walk_the_path_the_logs_walk(
        run_without_events):
    """The bundles are held rank by rank (the links made in each rank's pass, where the graph
    had no vertex); the logs are merged: the same path, said the same way."""
    from legate_prof.load.loader import load_profile
    logs, bundles = run_without_events
    assert len(load_profile([bundles], ranked=True).item_parts()) == 2
    got, want = cli("critical", bundles), cli("critical", logs)
    assert got.returncode == 0, got.stderr[-1500:]
    assert want.returncode == 0, want.stderr[-1500:]
    assert "no event graph records" in got.stdout and got.stdout == want.stdout


def test_per_rank_bundles_without_event_records_through_the_commands(run_without_events,
                                                                     tmp_path):
    _, bundles = run_without_events
    for args in (["stats"], ["critical"], ["report", "-o", tmp_path / "r", "--no-pictures"],
                 ["screenshot", "--critical-path", "-o", tmp_path / "s.png", "--width", "400",
                  "--height", "300"],
                 ["export", "--format", "parquet", "-o", tmp_path / "t"]):
        r = cli(*args, bundles)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (args, r.stderr[-1500:])


def test_a_log_cut_before_its_events_is_said_so_and_its_time_before_is_unknown(tmp_path):
    """A log cut short (300 kB of rank 0's) holds none of its event records: ``critical``
    said "Legion writes them from format 1011 on" of a 1011 log, and, the walk by creators
    ending at a shutdown meta-task, booked the 4 s before it as the runtime starting up (a
    user's review).  Now the cut is named and that time is unknown; a log without the
    records but whole is said to be so, and its top-level task still starts the run."""
    data = gzip.decompress((MPI2 / "legate_0.prof.gz").read_bytes())
    (tmp_path / "legate_0.prof").write_bytes(data[:300_000])
    r = cli("critical", tmp_path / "legate_0.prof")
    assert r.returncode == 0 and "truncated" in r.stderr, r.stderr
    assert ("No critical path: the profile holds no event graph records, though its format "
            "(1011) has them; a log ends early (see its warning): they were cut off with it; "
            "what is shown follows creators only.") in r.stdout, r.stdout
    assert " startup" not in r.stdout and " unknown" in r.stdout, r.stdout
