"""Ranks built in parallel processes, per-rank bundles: the same model as one build of all."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from legate_prof.load.loader import load_profile
from legate_prof.query import as_source


def _same_model(a, b):
    """The same model — string ids compared as the strings they name (two builds may intern
    names in another order: a rank's runtime stream comes after all logs in one build, after
    its own log in a rank's bundle)."""
    strings = {("items", "name"): "names", ("items", "detail"): "names",
               ("ops", "provenance"): "provenances"}
    for table in ("items", "waits", "transfers", "ops", "procs", "mems", "lanes"):
        ta, tb = getattr(a, table), getattr(b, table)
        assert ta.keys() == tb.keys(), table
        for k in ta:
            if isinstance(ta[k], list):
                assert ta[k] == tb[k], (table, k)
            elif (table, k) in strings:
                sa, sb = (np.array(getattr(m, strings[(table, k)]), object) for m in (a, b))
                assert np.array_equal(sa[np.asarray(ta[k])], sb[np.asarray(tb[k])]), (table, k)
                assert ta[k].dtype == tb[k].dtype, (table, k)
            else:
                assert np.array_equal(ta[k], tb[k]), (table, k)
                assert ta[k].dtype == tb[k].dtype, (table, k)
    assert sorted(a.names) == sorted(b.names) and sorted(a.provenances) == sorted(b.provenances)
    assert a.busy_ns == b.busy_ns
    assert {(a.names[n], g): v for (n, g), v in a.variant_by_name_group.items()} == \
        {(b.names[n], g): v for (n, g), v in b.variant_by_name_group.items()}
    assert a.ranks == b.ranks and sorted(a.warnings) == sorted(b.warnings)
    assert a.utilization_steps.keys() == b.utilization_steps.keys()
    for k, s in a.utilization_steps.items():
        assert np.array_equal(s.t, b.utilization_steps[k].t)
        assert np.allclose(s.integral, b.utilization_steps[k].integral)


@pytest.mark.parametrize("stack", [True, False])
def test_ranks_built_in_parallel_give_the_model_of_one_build(synthetic_8, stack):
    serial = load_profile(synthetic_8, workers=1, stack=stack)
    parallel = load_profile(synthetic_8, workers=2, stack=stack)
    _same_model(serial, parallel)
    assert parallel.stacked is stack


def test_the_ranks_built_so_far_are_handed_over_once_while_the_rest_builds(synthetic_8,
                                                                           monkeypatch):
    """A window shows the ranks built so far while the rest builds (``partial``): once, after
    the first round of jobs, where another round is left; each rank it holds is the full
    profile's rank, item for item (the same mapped bundle), and the full profile comes after."""
    from legate_prof.load import rank_workers
    monkeypatch.setattr(rank_workers, "PARTIAL_MIN_S", 0.0)  # (small ranks build fast)
    given = []

    def partial(ranks, files):
        given.append(ranks)
        assert files == 8
    full = load_profile(synthetic_8, workers=2, stack=False, ranked=True, partial=partial)
    assert len(given) == 1
    so_far = given[0]
    ranks = [r["rank"] for r in so_far.summary_model().ranks]
    assert 2 <= len(ranks) <= 6 and set(ranks) < {r["rank"] for r in full.summary_model().ranks}
    assert so_far.sources == full.sources and so_far.errors == [] == so_far.warnings
    # (its all-ranks lines over the ranks it holds: the others' processors, described by
    # their logs too, counted as idle there: a review)
    assert so_far.summary_model().processors_not_read() == {}
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "mpi4"
    logs = sorted(str(f) for f in real.glob("legate_*.prof.gz"))  # (they describe the others)
    mpi4 = []
    load_profile(logs, workers=2, stack=False, ranked=True,
                 partial=lambda ranks, files: mpi4.append(ranks))
    (part,) = mpi4
    shown = part.summary_model()
    assert 0 < len(shown.ranks) < 4 and shown.processors_not_read() == {}
    assert shown.all_ranks_step("cpu").denominator == len(shown.ranks)  # (a cpu each)
    whole = {m.ranks[0]["rank"]: m for m in full.rank_models()}
    for m in so_far.rank_models():
        assert m.items["start"] is whole[m.ranks[0]["rank"]].items["start"]  # (one mapping)
    # no preview where the rest is quick (the default: a round under PARTIAL_MIN_S), none
    # for a command's workers preparing an analysis, none without workers
    monkeypatch.setattr(rank_workers, "PARTIAL_MIN_S", 60.0)
    load_profile(synthetic_8, workers=2, stack=False, ranked=True, partial=partial)
    monkeypatch.setattr(rank_workers, "PARTIAL_MIN_S", 0.0)
    load_profile(synthetic_8, workers=1, stack=False, ranked=True, partial=partial)
    from legate_prof.analyze.idle_ranks import PREPARE
    load_profile(synthetic_8, workers=2, stack=False, ranked=True, prepare=PREPARE,
                 partial=partial)
    assert len(given) == 1
    assert rank_workers.partial_due(1.0, 2, 10, 2) and not rank_workers.partial_due(1.0, 1, 10, 2)
    assert not rank_workers.partial_due(1.0, 2, 3, 2)  # (one job left: it is under way)


def test_merged_ops_are_sorted_when_first_asked_not_before_the_first_frame(synthetic_8):
    """The merged ranks' ops (sorted by op id: half a second at 10 M items) are made when
    something first reads them — not by the lane tree, tiles and summaries of a first
    frame — and are then those of one build."""
    from legate_prof.query import as_source
    from legate_prof.model.trace_model import LazyTable
    parallel = load_profile(synthetic_8, workers=2)
    assert isinstance(parallel.ops, LazyTable) and parallel.ops._columns is None
    src = as_source(parallel)
    info = src.info()
    t0, t1 = parallel.time_range()
    for lane in info.lanes[:8]:
        src.lane_tile(lane.lane, t0, t1, 800)
    assert parallel.ops._columns is None
    serial = load_profile(synthetic_8, workers=1)
    rng = np.random.default_rng(0)
    ids = np.concatenate([rng.choice(parallel.items["op_id"], 3000), [0, 2**63, 999_999_999]])
    assert np.array_equal(parallel.op_provenance(ids), serial.op_provenance(ids))  # the runs
    assert parallel.ops._columns is None
    for k, v in serial.ops.items():
        assert np.array_equal(v, parallel.ops[k]) and v.dtype == parallel.ops[k].dtype, k
    assert parallel.ops._columns is not None


def test_per_rank_bundles_open_as_one_profile(synthetic_8, tmp_path, capsys):
    """`convert --per-rank` writes a bundle beside each rank's file (on a cluster, where it
    lies); the bundles, in any order or as their directory, open as the whole profile."""
    from legate_prof.cli import main
    files = [shutil.copy(p, tmp_path) for p in synthetic_8]
    assert main(["convert", "--per-rank", *files]) == 0
    assert "have no file" not in capsys.readouterr().err  # a rank alone is not a warning
    bundles = sorted(tmp_path.glob("*.lpbundle"))
    assert [b.stem for b in bundles] == sorted(Path(f).stem for f in files)
    whole = load_profile(files, workers=1)
    merged = load_profile(bundles[::-1])
    _same_model(whole, merged.evolve(sources=whole.sources))
    in_dir = load_profile([tmp_path])  # bundles win over the .prof files beside them
    assert in_dir.sources == [str(b) for b in bundles] and in_dir.n_items == whole.n_items
    # a rank in two bundles: one line says so, and the first bundle still opens
    assert main(["convert", *files[:2], "-o", str(tmp_path / "both.lpbundle")]) == 0
    twice = load_profile([tmp_path / "both.lpbundle", bundles[0]])
    assert len(twice.errors) == 1 and "rank 0 again (also in both.lpbundle)" in twice.errors[0]
    assert twice.n_ranks == 2


def test_a_second_file_of_one_rank_is_left_out_with_an_error(synthetic_8, tmp_path):
    """Legate writes one file per rank: a second file of rank 0 is another run's.  It is left
    out with one error (its items would land on rank 0's lanes), with or without workers,
    for the timeline too, and the rest is what those files alone give."""
    other = tmp_path / "again.prof"
    shutil.copy(synthetic_8[0], other)
    with open(other, "ab") as f:
        f.write(b"\0")  # not a byte-identical copy, so it is not dropped as a duplicate
    files = list(synthetic_8[:2]) + [other]
    alone = load_profile(list(synthetic_8[:2]), workers=1)
    for kw in ({"workers": 1}, {"workers": 2}, {"workers": 2, "ranked": True}):
        m = load_profile(files, **kw)
        assert len(m.errors) == 1 and "rank 0 again" in m.errors[0], kw
        assert m.errors[0].startswith(str(other)), kw
        assert as_source(m).info().n_items == alone.n_items, kw
    _same_model(load_profile(files, workers=1), load_profile(files, workers=2))


def test_damaged_rank_files_give_what_one_build_gives(synthetic_8, tmp_path):
    """A truncated rank file and one with garbage inside: the workers' result (or the
    fallback to one build) is exactly what one build of the same files gives."""
    files = [shutil.copy(p, tmp_path) for p in synthetic_8[:4]]
    data = Path(files[1]).read_bytes()
    Path(files[1]).write_bytes(data[: len(data) * 3 // 5])
    data = bytearray(Path(files[2]).read_bytes())
    data[len(data) // 2: len(data) // 2 + 64] = b"\xff" * 64
    Path(files[2]).write_bytes(bytes(data))
    serial = load_profile(files, workers=1)
    parallel = load_profile(files, workers=2)
    _same_model(serial, parallel)
    assert serial.warnings  # the damage is said
    # and `stats`, which adds up the ranks' parts where the ranks' lanes allow it
    import json
    import os
    import subprocess
    import sys
    out = []
    for workers in (1, 2):
        r = subprocess.run([sys.executable, "-m", "legate_prof", "stats", "--json", *files],
                           capture_output=True, text=True, timeout=300,
                           env={**os.environ, "LEGATE_PROF_WORKERS": str(workers)})
        assert r.returncode == 0 and "Traceback" not in r.stderr
        s = json.loads(r.stdout)
        s["warnings"] = sorted(s["warnings"])
        out.append(s)
    assert out[0] == out[1]


def test_a_damaged_bundle_among_per_rank_bundles_is_one_error(synthetic_8, tmp_path):
    from legate_prof.cli import main
    files = [shutil.copy(p, tmp_path) for p in synthetic_8[:3]]
    assert main(["convert", "--per-rank", *files]) == 0
    bad = tmp_path / "legate_1.lpbundle"
    data = bytearray(bad.read_bytes())
    data[100:140] = b"\0" * 40
    bad.write_bytes(bytes(data))
    # its log beside it (a header that names none: the bundle's name's) is read instead
    m = load_profile([tmp_path])
    assert m.errors == [] and m.n_ranks == 3
    assert any(w.startswith(f"warning: {bad}: damaged bundle") and "read from legate_1.prof "
               "beside it instead" in w for w in m.warnings), m.warnings
    os.unlink(tmp_path / "legate_1.prof")  # (no log beside it: the bundle's error stays)
    m = load_profile([tmp_path])
    assert len(m.errors) == 1 and "legate_1.lpbundle" in m.errors[0]
    assert m.n_ranks == 2
    # the command says which file it could not read first, then what that leaves out
    r = subprocess.run([sys.executable, "-m", "legate_prof", "stats", str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert "legate_1.lpbundle: damaged bundle" in lines[0]
    assert any("ranks have no readable file (not given, or not readable: rank 1, 3," in x for x in lines[1:])


def test_a_directory_of_logs_newer_than_its_bundles_is_read_from_the_logs(synthetic_8,
                                                                          tmp_path, capsys):
    """A run repeated where an older run was converted: the directory's bundles are older
    than its logs, so the logs are read, with a note; `convert --per-rank DIR` converts the
    directory's logs, each beside itself."""
    from legate_prof.cli import main
    from legate_prof.load.loader import expand_inputs
    files = [Path(shutil.copy(p, tmp_path)) for p in synthetic_8[:3]]
    assert main(["convert", "--per-rank", str(tmp_path)]) == 0
    bundles = sorted(tmp_path.glob("*.lpbundle"))
    assert [b.stem for b in bundles] == [f.stem for f in files]
    assert expand_inputs([str(tmp_path)]) == [str(b) for b in bundles]
    later = max(b.stat().st_mtime for b in bundles) + 10
    os.utime(files[1], (later, later))  # the run again, over the old logs
    notes = []
    assert expand_inputs([str(tmp_path)], note=notes.append) == [str(f) for f in files]
    assert len(notes) == 1 and "newer than its .lpbundle" in notes[0]
    capsys.readouterr()
    assert main(["stats", "--json", str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["files"] == [str(f) for f in files]
    assert out.err.count("newer than its .lpbundle") == 1


def test_statistics_added_up_from_the_ranks_workers_are_those_of_one_build(synthetic_8):
    """`stats` on big multi-rank logs sums per-rank parts computed in the workers (no model of
    all ranks); the result is the one of a single build, number for number."""
    import json
    import os
    import subprocess
    import sys

    def stats(workers):
        env = {**os.environ, "LEGATE_PROF_WORKERS": str(workers)}
        r = subprocess.run([sys.executable, "-m", "legate_prof", "stats", "--json",
                            *map(str, synthetic_8)], capture_output=True, text=True, env=env,
                           timeout=300)
        assert r.returncode == 0, r.stderr
        s = json.loads(r.stdout)
        s["warnings"] = sorted(s["warnings"])
        return s
    one, summed = stats(1), stats(2)
    assert summed["tasks"] and summed["groups"] and summed["ranks"] == 8
    assert summed == one


def test_statistics_parts_add_up_like_the_whole():
    """Timings combined pairwise (counts, sums, extremes, the variance's sums of squares)
    equal the timings of the whole, whatever the split."""
    import numpy as np
    from legate_prof.analyze.stats import _combine, _part, _timing_row, _timings
    rng = np.random.default_rng(3)
    dur = rng.integers(1, 10**7, 5000)
    run = dur - rng.integers(0, 1000, 5000)
    whole = _timing_row(_part(0, _timings(np.zeros(5000, np.int64), 1, dur, run)))
    for cut in (1, 17, 2500, 4999):
        parts = [_part(0, _timings(np.zeros(len(d), np.int64), 1, d, r))
                 for d, r in ((dur[:cut], run[:cut]), (dur[cut:], run[cut:]))]
        got = _timing_row(_combine(dict(parts[0], provenances=[]), dict(parts[1], provenances=[])))
        assert got == {**whole, "stddev_ns": got["stddev_ns"]}
        assert abs(got["stddev_ns"] - whole["stddev_ns"]) <= 1e-3


def test_statistics_of_per_rank_bundles_are_those_of_the_logs(synthetic_8, tmp_path, capsys):
    """`stats DIR` of per-rank bundles adds up each bundle's parts (no model of all ranks)
    and says what `stats` of the logs says."""
    import json
    from legate_prof.cli import main
    files = [shutil.copy(p, tmp_path) for p in synthetic_8]
    assert main(["convert", "--per-rank", *files]) == 0
    capsys.readouterr()
    assert main(["stats", "--json", *files]) == 0
    logs = json.loads(capsys.readouterr().out)
    assert main(["stats", "--json", str(tmp_path)]) == 0
    bundles = json.loads(capsys.readouterr().out)
    assert bundles.pop("files") != logs.pop("files")
    assert bundles == logs


def test_an_op_in_two_ranks_tables_is_kept_once_from_the_first():
    """Ops tables of several ranks merge into one sorted by op id; an op that two ranks
    recorded keeps the first rank's row, with or without the merge's copy threads."""
    from concurrent.futures import ThreadPoolExecutor
    from legate_prof.assemble.record_items import first_by_key
    rng = np.random.default_rng(1)
    runs = [np.unique(rng.integers(0, 5000, 800)).astype(np.uint64) for _ in range(5)]
    ops = {"op_id": np.concatenate(runs)}
    ops["provenance"] = np.arange(len(ops["op_id"]), dtype=np.int32)  # which row it came from
    ids, first_row = np.unique(ops["op_id"], return_index=True)
    assert len(ids) < len(ops["op_id"])  # there are repeats
    with ThreadPoolExecutor(2) as pool:
        for p in (None, pool):
            out = first_by_key(ops, "op_id", p)
            assert np.array_equal(out["op_id"], ids)
            assert np.array_equal(out["provenance"], ops["provenance"][first_row])


def test_handover_directories_of_dead_processes_are_swept(tmp_path):
    """A process killed outright leaves its workers' directory; the next one on this host
    removes the directories whose process no longer runs, and only those: not a live
    process's, not another host's, not other programs' that merely look alike."""
    import os
    import subprocess
    import sys
    from legate_prof.load.rank_workers import Handover, _host, sweep_orphans
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    p = Handover.PREFIX
    dead = tmp_path / f"{p}ranks_{_host()}_{gone}_abc_d"
    keep = [tmp_path / f"{p}ranks_{_host()}_{os.getppid()}_xyz",  # alive
            tmp_path / f"{p}stats_otherhost_{gone}_q1",  # another host's
            tmp_path / f"{p}fuzz_{_host()}_{gone}_q2",  # not a kind of ours
            tmp_path / f"legate_prof_fuzz_{gone}_q3",  # another program of ours
            tmp_path / f"{p}ranks_{_host()}_notapid_q4"]
    for d in (dead, *keep):
        d.mkdir()
        (d / "0.lpbundle").write_bytes(b"x" * 100)
    sweep_orphans(str(tmp_path))
    assert not dead.exists() and all(d.exists() for d in keep)


def test_ending_mid_build_stops_the_workers_and_removes_their_files(tmp_path):
    """`view` closed while it loads ends with os._exit after the atexit handlers: the rank
    workers are stopped and their hand-over directory removed then, not left running and
    their files behind."""
    import os
    import subprocess
    import sys
    import time
    from fixtures.synthetic import generate
    from legate_prof.load.rank_workers import Handover
    files = generate(tmp_path / "p", ranks=4, items=600_000, seed=2)
    script = """
import atexit, os, sys, tempfile, threading, time
from legate_prof.load.loader import load_profile
threading.Thread(target=load_profile, args=(sys.argv[1:],), kwargs={"workers": 2},
                 daemon=True).start()
from legate_prof.load.rank_workers import _host, handover_bases
prefix = PREFIX + "ranks_%s_%d_" % (_host(), os.getpid())
bases = handover_bases()
for _ in range(400):  # until the workers have started and written something
    found = [os.path.join(b, n) for b in bases if os.path.isdir(b) for n in os.listdir(b)
             if n.startswith(prefix)]
    if found and os.listdir(found[0]):
        break
    time.sleep(0.02)
print(found[0], flush=True)
atexit._run_exitfuncs()
os._exit(0)
""".replace("PREFIX", repr(Handover.PREFIX))
    r = subprocess.run([sys.executable, "-c", script, *files], capture_output=True, text=True,
                       timeout=120, cwd=Path(__file__).resolve().parents[1])
    assert r.returncode == 0, r.stderr
    handover = r.stdout.strip()
    assert Handover.PREFIX in handover
    time.sleep(0.5)
    assert not os.path.exists(handover)
    running = []
    for pid in os.listdir("/proc"):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if handover in cmd:
            running.append(cmd)
    assert running == []


def test_merged_ops_can_be_made_while_the_interpreter_shuts_down():
    """The cache's writer may make the merged ops after the main thread has ended, when no
    thread pool can start any more: they are then made alone, without a traceback."""
    import subprocess
    import sys
    script = (
        "import threading, time\n"
        "import numpy as np\n"
        "from legate_prof.assemble.rank_merge import sorted_ops\n"
        "from legate_prof.model.trace_model import LazyTable\n"
        "ops = {'op_id': np.array([3, 1, 2, 1], np.uint64), 'kind': np.zeros(4, np.int32),\n"
        "       'provenance': np.arange(4, dtype=np.int32), 'parent': np.zeros(4, np.uint64)}\n"
        "table = LazyTable(lambda: sorted_ops(ops), 'op_id')\n"
        "def later():\n"
        "    time.sleep(0.3)\n"
        "    print(table['op_id'].tolist(), table['provenance'].tolist(), flush=True)\n"
        "threading.Thread(target=later).start()\n")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=60, cwd=Path(__file__).resolve().parents[1])
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert r.stdout.strip() == "[1, 2, 3] [1, 2, 0]"


def _same_answers(ranked, whole):
    """A ``RankedSource`` answers every query as the source of the merged model does."""
    from dataclasses import fields

    from legate_prof.query import as_source
    a, b = ranked, as_source(whole)
    ia, ib = a.info(), b.info()
    for f in ("ranks", "groups", "lanes", "time_range", "n_items", "markers", "legion_version"):
        assert getattr(ia, f) == getattr(ib, f), f
    assert sorted(ia.warnings) == sorted(ib.warnings)
    t0, t1 = ia.time_range
    windows = [(t0, t1, 1600), (t0 + (t1 - t0) * 0.4, t0 + (t1 - t0) * 0.401, 900)]
    # every lane of each window asked together (a report's tile) as well as one by one
    together = {w: a.lane_tiles([lane.lane for lane in ia.lanes], *w) for w in windows}
    for k, lane in enumerate(ia.lanes):
        for w0, w1, px in windows:
            tb = b.lane_tile(lane.lane, w0, w1, px)
            for ta in (a.lane_tile(lane.lane, w0, w1, px), together[w0, w1, px][k]):
                assert ta.lane == tb.lane and len(ta.rows) == len(tb.rows)
                for ra, rb in zip(ta.rows, tb.rows):
                    for f in fields(ra):
                        va, vb = getattr(ra, f.name), getattr(rb, f.name)
                        if f.name in ("box_name", "piece_name"):  # ids of two string tables
                            va, vb = [a.name_of(x) for x in va], [b.name_of(x) for x in vb]
                        assert np.array_equal(va, vb), (lane.short, f.name)
                    # the labels the boxes carry
                    assert [a.item_title(i) for i in ra.box_item[:20].tolist()] == \
                        [b.item_title(i) for i in rb.box_item[:20].tolist()]
            ta = a.lane_tile(lane.lane, w0, w1, px)  # (the tile a click is answered from)
            for row in ta.rows[:1]:
                for x in (row.box_x0[:3].tolist() + row.band_x0[:3].tolist()):
                    assert a.hit(lane.lane, row.row, x + 0.5) == b.hit(lane.lane, row.row, x + 0.5)
            if ta.rows:
                lo, hi = a.lane_item_range(lane.lane)
                assert (lo, hi) == b.lane_item_range(lane.lane)
    for g in ia.groups:
        for rank in (g.rank, None):
            assert np.allclose(a.summary_tile(g.group, rank, t0, t1, 700),
                               b.summary_tile(g.group, rank, t0, t1, 700))
    n = ia.n_items
    ids = np.random.default_rng(1).choice(n, 400, replace=False)
    ca, cb = a.items_columns(ids), b.items_columns(ids)
    ca["name"] = [a.name_of(x) for x in ca["name"]]
    cb["name"] = [b.name_of(x) for x in cb["name"]]
    assert all(np.array_equal(ca[k], cb[k]) for k in cb)
    for i in ids[:60].tolist() + [0, n - 1]:
        assert a.item_details(i) == b.item_details(i)
        assert a.item_title(i) == b.item_title(i) and a.item_lane(i) == b.item_lane(i)
        assert a.name_of(a.item_name_id(i)) == b.name_of(b.item_name_id(i))
        assert a.item_extent(i) == b.item_extent(i)
    for text in ("task", "copy", "nothing like it", "Instance"):
        assert np.array_equal(a.search(text), b.search(text)), text
        assert np.array_equal(a.search(text, limit=7), b.search(text, limit=7)), text
    _same_model(whole, a.merged_model().evolve(sources=whole.sources))
    # the merge let go of the ranks' mapped pages (``release_pages``): they read the same
    for lane in ia.lanes[::5]:
        ta, tb = a.lane_tile(lane.lane, t0, t1, 1600), b.lane_tile(lane.lane, t0, t1, 1600)
        for ra, rb in zip(ta.rows, tb.rows):
            assert np.array_equal(ra.box_item, rb.box_item)
            assert np.array_equal(ra.band_count, rb.band_count)


def test_ranks_built_by_workers_are_queried_without_a_merged_copy(synthetic_8):
    """`view` and `screenshot` ask for the ranks unmerged: the workers' models answer the
    query API as one profile — the same lanes, tiles, summaries, details and search as the
    merged model — and nothing is merged until an analysis of all items asks."""
    from legate_prof.assemble.rank_set import RankSet
    from legate_prof.query import RankedSource
    ranked = load_profile(synthetic_8, workers=2, ranked=True)
    assert isinstance(ranked, RankSet) and len(ranked.parts) == 8
    assert not ranked.merged_yet
    assert not any(m.stacked for m in ranked.parts)  # lanes are stacked when drawn
    # (item ids follow the unstacked order: tests/test_model.py checks it draws as stacked)
    whole = load_profile(synthetic_8, workers=1, stack=False)
    src = as_source(ranked)
    cpus = [x.lane for x in src.info().lanes if x.short.startswith("c")]
    src.prepare_lanes(cpus)  # each to its rank's model
    assert sum(len(m._ix.lane_rows) for m in ranked.parts) == len(cpus) > 8
    _same_answers(src, whole)
    # unmerged parts are not copies of columns: each is its worker's mapped bundle
    assert sum(m.n_items for m in ranked.parts) == whole.n_items


def test_findings_of_ranks_are_read_rank_by_rank_without_a_merged_copy(synthetic_8):
    """The findings of a ``RankedSource`` are those of one build of all files, and finding
    them merges nothing (their columns are read from each rank's model)."""
    from legate_prof.analyze.insights import find_insights
    ranked = load_profile(synthetic_8, workers=2, ranked=True)
    found = find_insights(ranked)
    assert not ranked.merged_yet
    assert found and found == find_insights(load_profile(synthetic_8, workers=1))
    patterns = {f["pattern"] for f in found}
    # (no temporaries: the generated instances' operations have no tasks, so from Legion
    # alone nothing tells what made them; docs/insights.md)
    assert {"memory_pressure", "advanced_indexing"} <= patterns, patterns


def test_per_rank_bundles_are_queried_without_a_merged_copy(synthetic_8, tmp_path, capsys):
    """A directory of per-rank bundles opens for drawing as a ``RankedSource``, which answers
    as the merged model does."""
    from legate_prof.cli import main
    from legate_prof.assemble.rank_set import RankSet
    from legate_prof.query import RankedSource
    files = [shutil.copy(p, tmp_path) for p in synthetic_8]
    assert main(["convert", "--per-rank", *files]) == 0
    bundles = sorted(tmp_path.glob("*.lpbundle"))
    ranked = load_profile([tmp_path], ranked=True)
    assert isinstance(ranked, RankSet)
    assert ranked.sources == [str(b) for b in bundles]
    _same_answers(as_source(ranked), load_profile(files, workers=1))
    pytest.importorskip("pytestqt")
    import os
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    assert main(["screenshot", str(tmp_path), "-o", str(tmp_path / "dir.png")]) == 0
    assert (tmp_path / "dir.png").stat().st_size > 10_000


def _renamed(model, seed):
    """``model`` with its string table of names shuffled (and every name id with it): ranks
    whose tables differ, as ranks that registered their tasks in another order."""
    n = len(model.names)
    perm = np.random.default_rng(seed).permutation(n)  # old id -> new id
    names = [None] * n
    for old, new in enumerate(perm.tolist()):
        names[new] = model.names[old]
    items = dict(model.items)
    for c in ("name", "detail"):
        items[c] = perm[items[c]].astype(items[c].dtype)
    return model.evolve(items=items, names=names, variant_by_name_group={
        (int(perm[i]), g): v for (i, g), v in model.variant_by_name_group.items()})


@pytest.fixture
def ranks_named_apart(synthetic_8):
    """The 8 ranks' models (workers' bundles), three of them with their names shuffled."""
    parts = load_profile(synthetic_8, workers=2, ranked=True).parts
    return [_renamed(m, k) if k in (1, 4, 6) else m for k, m in enumerate(parts)]


def test_ranks_with_different_name_tables_answer_as_their_merge(ranks_named_apart):
    from legate_prof.assemble.rank_merge import merge_opened
    from legate_prof.assemble.rank_set import RankSet
    from legate_prof.query import RankedSource
    parts = ranks_named_apart
    ranked = RankedSource(RankSet(parts))
    assert any(not np.array_equal(m, np.arange(len(m))) for m in ranked.rank_set.name_maps)
    _same_answers(ranked, merge_opened(len(parts), lambda k: parts[k]))


def test_name_times_of_ranks_unmerged_are_their_merges(ranks_named_apart):
    """The time each task name took in a window (a picture's legend order) is the merged
    model's, name by name, whatever each rank's name table; a window cuts items at its ends."""
    from legate_prof.assemble.rank_merge import merge_opened
    from legate_prof.assemble.rank_set import RankSet
    from legate_prof.model.kinds import ItemKind
    from legate_prof.query import ProfileSource, RankedSource
    parts = ranks_named_apart
    ranked = RankedSource(RankSet(parts))
    merged = ProfileSource(merge_opened(len(parts), lambda k: parts[k]))
    a, b = merged.summary_model().extent()
    for t0, t1 in ((a, b), (a + (b - a) // 3, a + (b - a) // 2)):
        got = dict(zip(ranked.names, ranked.name_times(t0, t1).tolist()))
        want = dict(zip(merged.names, merged.name_times(t0, t1).tolist()))
        assert {k: v for k, v in got.items() if v} == {k: v for k, v in want.items() if v}
    it = merged.merged_model().items
    task = np.flatnonzero(it["kind"] == ItemKind.TASK)
    k = task[np.argmax(it["stop"][task] - it["start"][task])]
    s, e = int(it["start"][k]), int(it["stop"][k])
    inside = merged.name_times(s + 1, s + 2)  # a window of 1 ns inside the longest task
    assert inside[it["name"][k]] >= 1 and inside.sum() < e - s


def test_ranks_unmerged_draw_the_picture_of_their_merge(ranks_named_apart, tmp_path):
    """What `view` and `screenshot` draw from ranks unmerged (CPU, GPU and memory lanes
    expanded, ranks whose name tables differ) is the merged model's picture, pixel for pixel."""
    pytest.importorskip("pytestqt")
    from PySide6 import QtGui

    from legate_prof.assemble.rank_merge import merge_opened
    from legate_prof.assemble.rank_set import RankSet
    from legate_prof.query import RankedSource
    from legate_prof.viewer.screenshot import render_screenshot
    parts = ranks_named_apart
    ranked = RankedSource(RankSet(parts))
    kw = dict(expand=["cpu", "gpu_dev", "framebuffer"], width=1400, height=1400)
    a = QtGui.QImage(render_screenshot(ranked, tmp_path / "ranked.png", **kw))
    b = QtGui.QImage(render_screenshot(merge_opened(len(parts), lambda k: parts[k]),
                                       tmp_path / "merged.png", **kw))
    assert not a.isNull() and a.size() == b.size()
    assert a == b
    assert not ranked.rank_set.merged_yet  # drawing merged nothing


def test_ranks_can_be_merged_while_the_interpreter_shuts_down(tmp_path):
    """`view` merges its ranks for the cache entry and the findings after the first frame, in
    a thread that may still run when the main thread has ended and no thread pool can start:
    the merge then copies alone, without a traceback, and gives the same model."""
    import subprocess
    import sys
    from fixtures.synthetic import generate
    files = generate(tmp_path, ranks=3, items=6_000, seed=3)
    script = (
        "import sys, threading, time\n"
        "from legate_prof.load.loader import load_profile\n"
        "files = sys.argv[1:]\n"
        "ranked = load_profile(files, workers=2, ranked=True)\n"
        "assert type(ranked).__name__ == 'RankSet'\n"
        "def later():\n"
        "    time.sleep(0.3)\n"
        "    m = ranked.merged_model()\n"
        "    print(m.n_items, int(m.items['start'].sum()), flush=True)\n"
        "threading.Thread(target=later).start()\n")
    r = subprocess.run([sys.executable, "-c", script, *map(str, files)], capture_output=True,
                       text=True, timeout=120, cwd=Path(__file__).resolve().parents[1])
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    whole = load_profile(files, workers=1)
    assert r.stdout.split() == [str(whole.n_items), str(int(whole.items["start"].sum()))]


@pytest.mark.skipif(not hasattr(__import__("os"), "getuid"), reason="POSIX limits")
def test_ranks_stay_unmerged_only_where_their_files_can_stay_open(synthetic_8, tmp_path,
                                                                   monkeypatch):
    """Each mapped bundle keeps its file open: past the hard limit on open files (1,000 ranks
    on a machine that allows 256) the bundles are merged instead, one open at a time; below
    it, the soft limit is raised to make room."""
    import resource

    from legate_prof.cli import main
    from legate_prof.assemble.rank_set import RankSet
    from legate_prof.query import RankedSource
    from legate_prof.model.trace_model import TraceModel
    files = [shutil.copy(p, tmp_path) for p in synthetic_8]
    assert main(["convert", "--per-rank", "--quiet", *files]) == 0
    raised = []
    monkeypatch.setattr(resource, "setrlimit", lambda what, lim: raised.append(lim))
    monkeypatch.setattr(resource, "getrlimit", lambda what: (100, 200))
    merged = load_profile([tmp_path], ranked=True)
    assert isinstance(merged, TraceModel) and raised == []
    monkeypatch.setattr(resource, "getrlimit", lambda what: (100, 100_000))
    assert isinstance(load_profile([tmp_path], ranked=True), RankSet)
    assert raised == [(8 + 256, 100_000)]


def test_report_of_per_rank_bundles_is_the_report_of_their_logs(synthetic_8, tmp_path,
                                                                monkeypatch):
    """`report DIR` of per-rank bundles reads the ranks one by one — tiles from their
    tiles, statistics from their parts, findings from their columns — and writes what the
    report of one build of the logs writes, tile for tile; nothing is merged."""
    import json

    from legate_prof.cli import main
    from legate_prof.assemble.rank_set import RankSet
    from legate_prof.query import RankedSource
    from legate_prof.report import write_report
    files = [shutil.copy(p, tmp_path) for p in synthetic_8]
    assert main(["convert", "--per-rank", *files]) == 0
    ranked = load_profile([tmp_path], ranked=True)
    assert isinstance(ranked, RankSet)
    write_report(ranked, tmp_path / "ranks", pictures=False)
    assert not ranked.merged_yet
    write_report(load_profile(files, workers=1), tmp_path / "logs", pictures=False)

    def meta(out):
        text = (out / "meta.js").read_text()
        m = json.loads(text[text.index("(") + 1: text.rindex(")")])
        m.pop("files"), m.pop("files_label"), m["stats"].pop("files")
        return m
    a, b = meta(tmp_path / "ranks"), meta(tmp_path / "logs")
    assert a["findings"] and a["stats"]["items"] > 0 and a["tree"]
    assert a == b
    tiles = sorted(p.name for p in (tmp_path / "logs" / "tiles").iterdir())
    assert tiles and tiles == sorted(p.name for p in (tmp_path / "ranks" / "tiles").iterdir())
    for t in tiles:
        assert (tmp_path / "ranks" / "tiles" / t).read_bytes() == \
            (tmp_path / "logs" / "tiles" / t).read_bytes(), t
    # and the command: `report DIR` exits 0 with the same tiles
    assert main(["report", str(tmp_path), "-o", str(tmp_path / "cli"), "--no-pictures"]) == 0
    assert sorted(p.name for p in (tmp_path / "cli" / "tiles").iterdir()) == tiles


@pytest.mark.parametrize("per_rank_bundles", [False, True], ids=["workers", "bundles"])
def test_ranks_are_written_as_one_bundle_without_a_merged_copy(synthetic_8, tmp_path,
                                                               per_rank_bundles):
    """The cache entry of ranks left unmerged (the workers' unstacked models, or per-rank
    bundles) is written rank by rank, and is byte for byte the bundle of one build of all
    the logs — items, waits, transfers, ops, index; nothing is merged."""
    from legate_prof.store.bundle import write_bundle
    from legate_prof.cli import main
    from legate_prof.assemble.rank_set import RankSet
    from legate_prof.query import RankedSource
    files = [shutil.copy(p, tmp_path) for p in synthetic_8]
    if per_rank_bundles:
        assert main(["convert", "--per-rank", *files]) == 0
        ranked = load_profile([tmp_path], ranked=True)
    else:
        ranked = load_profile(files, workers=2, ranked=True)
    assert isinstance(ranked, RankSet)
    write_bundle(ranked, tmp_path / "ranks.lpbundle")
    assert not ranked.merged_yet
    whole = load_profile(files, workers=1)
    write_bundle(whole.evolve(sources=ranked.sources), tmp_path / "whole.lpbundle")
    assert (tmp_path / "ranks.lpbundle").read_bytes() == (tmp_path / "whole.lpbundle").read_bytes()


def test_read_ahead_reads_files_in_order_a_window_ahead_and_stops(tmp_path):
    """The parent reads the rank files into the page cache in the workers' order, at most
    ``ahead`` files before the ranks done (a 1,000-rank run is not read into memory at once),
    and stops when the build ends, failed or not."""
    import threading
    from legate_prof.load.rank_workers import _ReadAhead
    paths = []
    for i in range(5):
        paths.append(tmp_path / f"legate_{i}.prof")
        paths[-1].write_bytes(bytes([i]) * (3 * _ReadAhead.CHUNK // 2))
    seen, got = [], threading.Semaphore(0)

    class Recorded(_ReadAhead):
        def _read(self, path, buf):
            super()._read(path, buf)
            seen.append((path, bytes(buf[:1])))
            got.release()

    ra = Recorded([str(p) for p in paths], ahead=2)
    for _ in range(2):
        assert got.acquire(timeout=30)
    assert not got.acquire(timeout=0.3)  # the window is full: no third file yet
    ra.file_done()
    assert got.acquire(timeout=30)
    assert [p for p, _ in seen] == [str(p) for p in paths[:3]]
    assert [b for _, b in seen] == [bytes([i]) for i in (0, 1, 2)]  # each file its own bytes
    ra.stop()
    ra.thread.join(timeout=30)
    assert not ra.thread.is_alive() and len(seen) == 3


def test_rank_workers_yield_the_cores_to_the_process_that_waits():
    """A worker lowers its own priority before it builds, so the window opening meanwhile
    (and its progress) gets the cores when it needs them."""
    import os
    import subprocess
    import sys
    from legate_prof.load.rank_workers import WORKER_NICENESS
    out = subprocess.run([sys.executable, "-c", "import os\n"
                          "from legate_prof.load.rank_workers import _worker\n"
                          "_worker([], 'flat'); print(os.nice(0))"],
                         capture_output=True, text=True, check=True).stdout
    assert int(out) == min(19, os.nice(0) + WORKER_NICENESS) > os.nice(0)


def test_read_ahead_leaves_pipes_alone(tmp_path):
    """A rank 'file' that is a pipe is not read ahead: its bytes are the worker's, and opening
    a pipe with no writer would block the read-ahead for good."""
    import os
    import threading
    from legate_prof.load.rank_workers import _ReadAhead
    pipe, log = tmp_path / "legate_0.prof", tmp_path / "legate_1.prof"
    os.mkfifo(pipe)
    log.write_bytes(b"x" * 1000)
    done = threading.Semaphore(0)

    class Recorded(_ReadAhead):
        def _read(self, path, buf):
            super()._read(path, buf)
            done.release()

    ra = Recorded([str(pipe), str(log)], ahead=2)
    assert done.acquire(timeout=30) and done.acquire(timeout=30)
    ra.thread.join(timeout=30)
    assert not ra.thread.is_alive()


def test_a_log_copied_in_with_an_older_time_is_read_not_its_stale_bundle(synthetic_8,
                                                                          tmp_path):
    """Bundles say which logs, of which size, they were converted from: a log of another size
    copied over with an older time (`cp -p`, `rsync -a`) is read instead of the stale
    bundles, with a note; a log not converted at all is read too."""
    from legate_prof.cli import main
    from legate_prof.load.loader import expand_inputs
    files = [Path(shutil.copy(p, tmp_path)) for p in synthetic_8[:2]]
    assert main(["convert", "--per-rank", str(tmp_path)]) == 0
    bundles = sorted(str(b) for b in tmp_path.glob("*.lpbundle"))
    assert expand_inputs([str(tmp_path)]) == bundles
    earlier = min(os.stat(b).st_mtime for b in bundles) - 100
    files[1].write_bytes(Path(synthetic_8[3]).read_bytes()[:-64])  # another run's (size)
    os.utime(files[1], (earlier, earlier))
    notes = []
    assert expand_inputs([str(tmp_path)], note=notes.append) == [str(f) for f in files]
    assert len(notes) == 1 and "not the ones its .lpbundle files were converted from" in notes[0]
    shutil.copy(synthetic_8[1], files[1])  # the converted bytes again, still older
    os.utime(files[1], (earlier, earlier))
    assert expand_inputs([str(tmp_path)]) == bundles
    extra = Path(shutil.copy(synthetic_8[2], tmp_path))  # a rank never converted
    os.utime(extra, (earlier, earlier))
    notes = []
    assert expand_inputs([str(tmp_path)], note=notes.append) == \
        [str(f) for f in files] + [str(extra)]
    assert len(notes) == 1 and \
        f"its .lpbundle files were not converted from {extra.name}" in notes[0]


def test_striped_ops_answer_as_the_table_of_all_ranks():
    """Ranks' operations numbered node + k * nodes (as Legion does) are looked up in the one
    rank of each id's class, with the answers of the table of all ranks (the first rank's row
    of an id, none for 0 or an unknown id); ranks whose ids share a class, or a rank's table
    out of order, are not striped (the table of all ranks is made instead)."""
    import numpy as np
    from legate_prof.assemble.record_items import first_by_key
    from legate_prof.model.lazy_table import Stripes, sorted_lookup
    rng = np.random.default_rng(3)
    runs = []
    for node in range(4):
        ids = np.sort(rng.choice(5000, 800, replace=False)).astype(np.uint64) * 4 + node
        runs.append({"op_id": ids, "provenance": rng.integers(0, 50, len(ids), dtype=np.int32)})
    runs.append({"op_id": np.zeros(0, np.uint64), "provenance": np.zeros(0, np.int32)})
    whole = first_by_key({c: np.concatenate([r[c] for r in runs]) for c in runs[0]}, "op_id")
    keys = np.concatenate([rng.integers(0, 20_500, 5000).astype(np.uint64),
                           np.zeros(100, np.uint64)])
    stripes = Stripes.of(runs, "op_id")
    assert stripes is not None and stripes.stride == 4
    got = stripes.lookup(keys, "provenance", 0)
    want = sorted_lookup(whole["op_id"], whole["provenance"], keys, 0)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert (got[keys == 0] == 0).all() and (got != 0).any()
    shared = runs[:2] + [{c: v[:10] for c, v in runs[0].items()}]  # ids of rank 0 again
    assert Stripes.of(shared, "op_id") is None
    shuffled = [{c: v[::-1] for c, v in runs[1].items()}] + runs[2:]
    assert Stripes.of(shuffled, "op_id") is None


def test_the_ranks_are_handed_over_in_memory_only_where_there_is_room(monkeypatch, tmp_path):
    """The workers' bundles go to the memory folder (tmpfs) where it and the machine have room
    for twice them, else to the temporary folder — always there when TMPDIR names one."""
    import tempfile
    from legate_prof.load import rank_workers as rw
    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", None)
    if rw.handover_bases()[0] == rw.MEMORY_FOLDER:  # (a machine with /dev/shm)
        assert rw.handover_base(1 << 20) == rw.MEMORY_FOLDER
    assert rw.handover_base(1 << 60) == tempfile.gettempdir()  # more than any machine has
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    assert rw.handover_bases() == [str(tmp_path)]
    assert rw.handover_base(1 << 20) == str(tmp_path)
    assert rw.bundle_room([str(tmp_path / "none.prof")]) == 0


@pytest.mark.parametrize("run", ["mpi4", "loops3"])
def test_ranks_with_their_runtime_streams_are_built_in_one_process(run):
    """A run's folder of logs and runtime streams is built in one process, its logs alone by
    workers: built one rank per worker, each with its stream, the guide's 4-rank run took
    stats 8.9 s instead of 3.4 s (its ranks then linked rank by rank; docs/performance.md)."""
    from legate_prof.load import loader
    from legate_prof.load.inputs import expand_inputs, plan_inputs
    folder = Path(__file__).resolve().parents[1] / "fixtures" / "real" / run
    paths, kinds, errors, _ = plan_inputs(expand_inputs([str(folder)]))
    assert any(k == "runtime" for k in kinds.values())
    assert loader.rank_files_for_workers(paths, kinds, errors, workers=2)[1] == 1
    logs = [p for p in paths if kinds[p] == "legion"]
    assert loader.rank_files_for_workers(logs, kinds, errors, workers=2)[1] == 2


def test_small_ranks_are_built_in_jobs_of_consecutive_ranks(tmp_path):
    """A worker's job is a run of consecutive ranks (by the numbers in the names: legate_10
    after legate_3) of at least the batch's bytes; what is left joins the job before when
    under half a batch; a batch of 0 is a rank a job; a gzipped log counts ten times."""
    from legate_prof.load.rank_workers import rank_jobs
    paths = []
    for rank, size in ((2, 60), (10, 10), (1, 30), (0, 30), (3, 10)):
        p = tmp_path / f"legate_{rank}.prof"
        p.write_bytes(b"x" * size)
        paths.append(str(p))

    def names(jobs):
        return [[Path(paths[i]).name.split(".")[0][7:] for i in job] for job in jobs]
    assert names(rank_jobs(paths, 60)) == [["0", "1"], ["2", "3", "10"]]
    assert names(rank_jobs(paths, 0)) == [["0"], ["1"], ["2"], ["3"], ["10"]]
    assert names(rank_jobs(paths, 1000)) == [["0", "1", "2", "3", "10"]]
    gz = tmp_path / "legate_11.prof.gz"
    gz.write_bytes(b"x" * 6)
    paths.append(str(gz))
    assert names(rank_jobs(paths, 60)) == [["0", "1"], ["2"], ["3", "10", "11"]]  # (60 bytes)


def test_jobs_of_several_ranks_give_the_model_and_statistics_of_one_build(synthetic_8):
    """Ranks built a few to a worker's job (``rank_jobs``) — the ranks' models are then
    jobs' models, and the idle time is explained over all ranks, not added up from what a
    rank's worker prepared — give the model, the query answers (the window's) and the
    statistics of one build."""
    from legate_prof.analyze.idle_ranks import PREPARE
    from legate_prof.analyze.stats import compute_stats
    from legate_prof.assemble.rank_set import RankSet
    from legate_prof.load.rank_workers import build_in_parallel, rank_jobs
    paths = [str(p) for p in synthetic_8]
    batch = sum(os.path.getsize(p) for p in paths) // 3
    assert [len(j) for j in rank_jobs(paths, batch)] == [3, 3, 2]
    serial = load_profile(paths, workers=1, stack=False)
    jobs = build_in_parallel(paths, stack=False, workers=2, ranked=True, prepare=PREPARE,
                             batch_bytes=batch)
    assert isinstance(jobs, RankSet) and len(jobs.item_parts()) == 3
    _same_answers(as_source(build_in_parallel(paths, stack=False, workers=2, ranked=True,
                                              batch_bytes=batch)), serial)
    _same_model(serial, jobs.merged_model())

    def stats(profile):
        s = compute_stats(profile)
        s["warnings"] = sorted(s["warnings"])
        s.pop("files")  # (the loader's to say: ``build_in_parallel`` is a step of it)
        return json.loads(json.dumps(s, sort_keys=True, default=str))
    got = stats(jobs)
    assert got["idle"]["groups"] and got == stats(serial)


def test_a_ranks_bundle_in_the_handover_is_written_without_sweeping_the_folder(
        synthetic_8, tmp_path, monkeypatch):
    """A rank's bundle goes straight into the run's own hand-over folder: no temporary, no
    record of it, no pass over the folder for others' leftovers (at 1,000 ranks, one over
    2,000 files for each rank); an output elsewhere still gets all three."""
    from legate_prof import output_file
    from legate_prof.store.bundle import write_bundle
    model = load_profile([synthetic_8[0]], workers=1, stack=False)
    swept = []
    monkeypatch.setattr(output_file, "sweep_stale_outputs", lambda *a, **k: swept.append(a))
    write_bundle(model, tmp_path / "0.lpbundle", indexes=False, handover=True)
    assert swept == [] and os.listdir(tmp_path) == ["0.lpbundle"]
    write_bundle(model, tmp_path / "out.lpbundle", indexes=False)
    assert len(swept) == 1
    assert (tmp_path / "0.lpbundle").read_bytes() == (tmp_path / "out.lpbundle").read_bytes()


def test_a_rank_given_twice_is_left_out_whichever_way_the_ranks_are_built(tmp_path):
    """Copies of a rank 0 cut short before its first item (no lanes to collide) were merged
    by the rank workers as that many ranks, exit 0, and left out in one process, exit 2 (a
    stranger's-folder review): the workers' build gives way to the one that says so."""
    from legate_prof.load.rank_workers import build_in_parallel
    sample = Path(__file__).resolve().parents[1] / "fixtures" / "real" / \
        "legate26.06_cpu2_myprof_0.prof"
    paths = []
    for k in range(4):  # (cut at different places: not copies of one file, read once)
        p = tmp_path / f"legate_{k}.prof"
        p.write_bytes(sample.read_bytes()[:40_000 + 1000 * k])  # (its machine, no item yet)
        paths.append(str(p))
    assert build_in_parallel(paths, stack=False, workers=2, ranked=True,
                             batch_bytes=40_000) is None
    assert build_in_parallel(paths, stack=False, workers=2, batch_bytes=40_000) is None
    outs = []
    for workers in ("1", "2"):
        p = subprocess.run([sys.executable, "-m", "legate_prof", "stats", *paths],
                           capture_output=True, text=True, timeout=300,
                           env={**os.environ, "LEGATE_PROF_WORKERS": workers,
                                "LEGATE_PROF_CACHE_DIR": ""})
        outs.append((p.returncode, p.stdout.splitlines()[:1], p.stderr.count("rank 0 again")))
    assert outs[0] == outs[1] and outs[0][0] == 2 and outs[0][2] == 3, outs


def test_insights_reads_the_ranks_its_workers_built_apart(monkeypatch, capsys):
    """`insights` merged the ranks its workers built into one model (`critical`, `report` and
    the window read them apart): 10 x 1 M items 20.3-20.6 s and 3.85 GiB, apart 18.0-18.4 s
    and 3.35 GiB (docs/performance.md).  Its answer is one process's, without a merge."""
    from fixtures.make_critical_goldens import REAL, rank_files
    from legate_prof.assemble import rank_merge
    from legate_prof.cli import main
    files = [str(f) for f in rank_files(REAL / "mpi4")]
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", "")
    monkeypatch.setenv("LEGATE_PROF_WORKERS", "1")
    assert main(["insights", "--json", *files]) == 0
    alone = json.loads(capsys.readouterr().out)
    monkeypatch.setenv("LEGATE_PROF_WORKERS", "2")

    def merged(*a, **k):
        raise AssertionError("the ranks merged")
    monkeypatch.setattr(rank_merge, "merge_opened", merged)
    assert main(["insights", "--json", *files]) == 0
    assert json.loads(capsys.readouterr().out) == alone


def test_each_rank_is_linked_by_its_worker_not_again_by_the_parent(monkeypatch, capsys):
    """`critical`, `insights` and `report` linked every rank alone in the parent, one after
    the other, once the workers were done (10 x 1 M items: 5 s of `critical`'s 10 s). Each
    rank's worker now links it (``rank_links.PREPARE``); the parent joins what rests on
    other ranks, and the answer is one process's, to the byte."""
    from fixtures.make_critical_goldens import REAL, rank_files
    from legate_prof.causality import rank_links
    from legate_prof.cli import main
    files = [str(f) for f in rank_files(REAL / "mpi4")]
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", "")
    monkeypatch.setenv("LEGATE_PROF_WORKERS", "1")
    assert main(["critical", "--json", *files]) == 0
    alone = capsys.readouterr().out
    monkeypatch.setenv("LEGATE_PROF_WORKERS", "2")

    def linked_here(*a, **k):
        raise AssertionError("a rank linked in the parent")
    monkeypatch.setattr(rank_links, "RankPass", linked_here)
    assert main(["critical", "--json", *files]) == 0
    assert capsys.readouterr().out == alone


def test_a_ranks_links_from_its_worker_are_those_linked_here(monkeypatch):
    """What ``link_ranks`` reads of a pass its worker linked (``PreparedPass``) is what a
    pass here gives: every item's and wait's row, creation time, the wait columns in the
    profile's numbering, the residual rows joined, the item that ended last."""
    from fixtures.make_critical_goldens import REAL, rank_files
    from legate_prof.causality.critical_links import compute_links
    from legate_prof.causality.rank_links import PREPARE, PreparedPass
    from legate_prof.load.loader import load_profile
    files = [str(f) for f in rank_files(REAL / "mpi4")]
    monkeypatch.setenv("LEGATE_PROF_WORKERS", "2")
    got = []
    for prepare in (PREPARE, None):
        profile = load_profile(files, use_cache=False, stack=False, ranked=True,
                               prepare=prepare)
        parts = profile.item_parts()
        assert len(parts) == 4
        assert [PreparedPass.of(p) is not None for p in parts] == [prepare is not None] * 4
        got.append(compute_links(parts))
    a, b = got
    for rows in ("items", "waits"):
        for f in ("via", "target", "kind", "trigger", "note", "node"):
            assert np.array_equal(getattr(getattr(a, rows), f), getattr(getattr(b, rows), f))
    assert np.array_equal(a.creation, b.creation) and a.last == b.last
    assert a.wait_item.tolist() == b.wait_item.tolist() and len(a.wait_item)
    assert (a.has_data, a.n_vertices, a.n_edges) == (b.has_data, b.n_vertices, b.n_edges)


def test_a_rank_cut_before_its_first_item_among_ranks_built_apart(tmp_path, monkeypatch,
                                                                  capsys):
    """A rank whose log was cut before its first timeline record, built by a worker beside
    whole ranks (any big run with one rank cut short), crashed the join of the
    ranks' links (`ItemTables.has` of a rank of no items): `critical` and `insights` answer
    as one process does, the cut said."""
    import gzip
    from fixtures.make_critical_goldens import REAL
    from legate_prof.cli import main
    shutil.copy(REAL / "mpi2" / "legate_0.prof.gz", tmp_path)
    with gzip.open(REAL / "mpi2" / "legate_1.prof.gz") as f:
        (tmp_path / "legate_1.prof").write_bytes(f.read(240_000))
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", "")
    for command in ("critical", "insights"):
        got = []
        for workers in ("1", "2"):
            monkeypatch.setenv("LEGATE_PROF_WORKERS", workers)
            assert main([command, str(tmp_path)]) == 0
            got.append(capsys.readouterr())
        assert got[0].out == got[1].out and "legate_1.prof" in got[1].err


def test_ranks_asked_for_are_linked_by_their_workers_too(monkeypatch):
    """``--ranks``: each rank kept whole is linked by its worker, as without it (the links
    were made again in the parent)."""
    from fixtures.make_critical_goldens import REAL, rank_files
    from legate_prof.causality.rank_links import PREPARE, PreparedPass
    files = [str(f) for f in rank_files(REAL / "mpi4")]
    monkeypatch.setenv("LEGATE_PROF_WORKERS", "2")
    profile = load_profile(files, use_cache=False, stack=False, ranked=True, prepare=PREPARE,
                           ranks=[1, 3])
    parts = profile.item_parts()
    assert len(parts) == 2 and all(PreparedPass.of(p) is not None for p in parts)


def test_a_runs_logs_below_the_workers_threshold_are_built_in_one_process(tmp_path):
    """Workers start only from ``PARALLEL_MIN_BYTES`` of logs: a real 3-rank run of 107 MB
    took `stats` 2.5 s with them and 1.6 s without (its ranks' open events joined in the
    parent), where they had started from 48 MB."""
    from legate_prof.load import rank_workers
    paths = []
    for k in range(6):
        p = tmp_path / f"legate_{k}.prof"
        with open(p, "wb") as f:
            f.truncate(36 << 20)  # (sparse: only the sizes count here)
        paths.append(str(p))
    assert rank_workers.worker_count(paths[:3], 3 * (36 << 20)) == 1
    if len(os.sched_getaffinity(0)) >= 2:  # (216 MB: workers, one a core)
        assert rank_workers.worker_count(paths, 6 * (36 << 20)) == 2
