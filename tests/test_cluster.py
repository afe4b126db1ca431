"""The cluster path on real multi-rank runs: each rank converted where its log lies
(``convert --per-rank``, under ``mpirun`` one process per rank), and the per-rank bundles
opened together are the run — the items, numbers and lanes of its logs — without a merged
copy."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fixtures.make_goldens import real_runs
from legate_prof.analyze.stats import compute_stats
from legate_prof.assemble.rank_set import RankSet
from legate_prof.cli import main
from legate_prof.cli.launcher import launcher_share
from legate_prof.load.loader import load_profile
from legate_prof.query import as_source
from test_parallel import _same_answers
from test_reference import _assert_stats_agree, assert_utilization_is_the_references

ROOT = Path(__file__).resolve().parents[1]
MULTI = [r for r in real_runs() if len(r.files) > 1 and not r.reference_panics
         and not r.crashed]


def _copy_run(run, dest):
    dest.mkdir()
    for p in (*run.files, *run.streams):
        shutil.copy(p, dest)
    return dest


def _without_files(stats):
    return {k: v for k, v in stats.items() if k != "files"}


@pytest.mark.parametrize("run", MULTI, ids=lambda r: r.name)
def test_per_rank_bundles_of_a_real_run_are_the_run(run, tmp_path, capsys):
    """A rank's log holds copies between its node and others (the same channel is recorded
    by both ends in ``mpi2_copies``): each rank's bundle holds its own rank's lanes only, so
    the bundles open together — as the logs' lanes, items, details, statistics and
    utilization lines, which agree with the reference's — and nothing is merged."""
    d = _copy_run(run, tmp_path / run.name)
    assert main(["convert", "--per-rank", str(d)]) == 0
    bundles = sorted(d.glob("*.lpbundle"))
    assert [b.name for b in bundles] == [f"legate_{k}.lpbundle" for k in range(len(run.files))]
    capsys.readouterr()
    ranked = load_profile([d], ranked=True)
    assert isinstance(ranked, RankSet) and len(ranked.parts) == len(run.files)
    assert ranked.errors == []
    logs = load_profile([d / Path(p).name for p in (*run.files, *run.streams)])
    stats = compute_stats(ranked)
    assert _without_files(stats) == _without_files(compute_stats(logs))
    _assert_stats_agree(run.golden("statistics.txt").read_text(), stats)
    assert assert_utilization_is_the_references(ranked, run.golden("util.json.gz")) > 1000
    assert main(["stats", "--json", str(d)]) == 0
    assert _without_files(json.loads(capsys.readouterr().out)) == _without_files(stats)
    assert not ranked.merged_yet  # (the check below merges them, to compare the models too)
    _same_answers(as_source(ranked), logs)


def test_cross_node_copies_are_on_the_recording_ranks_lanes_and_both_nodes_lines():
    """``mpi2_copies``: each log records copies in both directions between the two nodes; each
    rank's lanes hold its own log's copies, and each node's channel line counts every copy
    from or to it, whoever recorded it."""
    from legate_prof.model.kinds import ItemKind, node_of_id
    run = next(r for r in MULTI if r.name == "mpi2_copies")
    model = load_profile(list(run.files))
    it, lanes = model.items, model.lanes
    copies = np.flatnonzero(it["kind"] == int(ItemKind.COPY))
    src = node_of_id(lanes["ref"][it["lane"][copies]])
    dst = node_of_id(lanes["ref2"][it["lane"][copies]])
    rank = lanes["rank"][it["lane"][copies]]
    across = src != dst
    assert across.sum() == 17
    assert {(int(r), int(s), int(t)) for r, s, t in zip(rank[across], src[across],
                                                        dst[across])} == {
        (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 0)}
    for node in (0, 1):
        step = model.utilization_steps[(node, "channel")]
        mine = copies[(src == node) | (dst == node)]
        mid = (it["start"][mine] + it["stop"][mine]) / 2
        assert np.all(step.average(np.stack([mid - 0.5, mid + 0.5]).T.ravel())[::2] == 1.0)


def test_launcher_share_comes_from_the_launchers_variables():
    assert launcher_share({}) is None
    assert launcher_share({"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "4"}) == (2, 4)
    assert launcher_share({"PMI_RANK": "0", "PMI_SIZE": "3"}) == (0, 3)
    assert launcher_share({"SLURM_PROCID": "5", "SLURM_STEP_NUM_TASKS": "8",
                           "SLURM_NTASKS": "8"}) == (5, 8)  # srun
    # a batch script's own shell: the job's task count, but one process, not a step's task
    assert launcher_share({"SLURM_PROCID": "0", "SLURM_NTASKS": "4"}) is None
    assert launcher_share({"SLURM_PROCID": "0", "SLURM_STEP_NUM_TASKS": "1"}) is None  # one
    assert launcher_share({"PMI_RANK": "4", "PMI_SIZE": "4"}) is None  # not a share
    assert launcher_share({"PMI_RANK": "x", "PMI_SIZE": "4",
                           "SLURM_PROCID": "1", "SLURM_STEP_NUM_TASKS": "2"}) == (1, 2)


def test_a_process_reads_only_its_own_ranks_files(tmp_path, monkeypatch):
    """Under a launcher a process reads the heads of its own ranks' files only (the names
    say which are another's), and pairs each log with its runtime stream."""
    from legate_prof.load import rank_files
    from legate_prof.load.inputs import expand_inputs, plan_inputs
    run = next(r for r in MULTI if r.name == "mpi4")
    d = _copy_run(run, tmp_path / "mpi4")
    paths, kinds, _, _ = plan_inputs(expand_inputs([str(d)], logs_only=True))
    opened = []
    real = rank_files.head_ranks
    monkeypatch.setattr(rank_files, "head_ranks",
                        lambda p, k: opened.append(Path(p).name) or real(p, k))
    jobs, notes = rank_files.per_rank_jobs(paths, kinds, share=(2, 4))
    assert notes == []
    assert [(j.rank, [Path(p).name for p in j.files]) for j in jobs] == [
        (2, ["legate_2.prof.gz", "legate_2.runtime.prof"])]
    assert sorted(opened) == ["legate_2.prof.gz", "legate_2.runtime.prof"]
    jobs, _ = rank_files.per_rank_jobs(paths, kinds, share=(1, 3))  # 3 processes, 4 ranks
    assert [j.rank for j in jobs] == [1]
    jobs, _ = rank_files.per_rank_jobs(paths, kinds, share=(0, 3))
    assert [j.rank for j in jobs] == [0, 3]


def test_a_file_named_for_another_rank_is_converted_by_the_name_s_process(tmp_path):
    """Names are hints the files confirm: a log renamed to another rank's name is still
    converted once (by the process its name points to), with a warning."""
    from legate_prof.load import rank_files
    from legate_prof.load.inputs import plan_inputs
    run = next(r for r in MULTI if r.name == "mpi3")
    d = tmp_path / "d"
    d.mkdir()
    shutil.copy(run.files[0], d / "legate_0.prof.gz")
    shutil.copy(run.files[2], d / "legate_1.prof.gz")  # rank 2's log, named for rank 1
    paths, kinds, _, _ = plan_inputs([str(d / "legate_0.prof.gz"), str(d / "legate_1.prof.gz")])
    got = [rank_files.per_rank_jobs(paths, kinds, share=(k, 2)) for k in (0, 1)]
    assert [[j.rank for j in jobs] for jobs, _ in got] == [[0], [2]]
    assert got[1][1] == [f"warning: {d / 'legate_1.prof.gz'}: named for rank 1 but holds "
                         "rank 2"]


def _mpirun():
    return shutil.which("mpirun")


@pytest.mark.skipif(_mpirun() is None, reason="Open MPI's mpirun is not installed (./dev test "
                                               "installs openmpi-bin when run as root)")
def test_mpirun_converts_each_rank_once_by_its_own_process(tmp_path, capsys):
    """``mpirun -n 4 legate_prof convert --per-rank DIR`` on a real 4-rank run: four bundles,
    each written once, by the process of its rank; `stats DIR` of them is `stats` of the
    logs, and `view DIR` opens them unmerged."""
    run = next(r for r in MULTI if r.name == "mpi4")
    d = _copy_run(run, tmp_path / "mpi4")
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "PYTHONPATH": str(ROOT)}
    for var in ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE",
                "SLURM_PROCID", "SLURM_STEP_NUM_TASKS"):
        env.pop(var, None)
    p = subprocess.run([_mpirun(), "-n", "4", "--oversubscribe", sys.executable, "-m",
                        "legate_prof", "convert", "--per-rank", "-q", str(d)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    # (mpirun forwards the processes' lines as they come: look for each, not line by line)
    wrote = sorted(re.findall(r"wrote (\S+) \(\d+ items\) \[process (\d) of 4\]", p.stdout))
    assert wrote == [(str(d / f"legate_{k}.lpbundle"), str(k)) for k in range(4)], p.stdout
    assert sorted(b.name for b in d.glob("*.lpbundle")) == [f"legate_{k}.lpbundle"
                                                            for k in range(4)]
    capsys.readouterr()
    assert main(["stats", "--json", str(d)]) == 0
    from_bundles = json.loads(capsys.readouterr().out)
    assert from_bundles["files"] == [str(d / f"legate_{k}.lpbundle") for k in range(4)]
    logs = load_profile([d / Path(p).name for p in (*run.files, *run.streams)])
    assert _without_files(from_bundles) == _without_files(compute_stats(logs))
    ranked = load_profile([d], ranked=True)
    assert isinstance(ranked, RankSet)
    assert as_source(ranked).info().lanes == as_source(logs).info().lanes


@pytest.mark.skipif(_mpirun() is None, reason="Open MPI's mpirun is not installed")
def test_one_bundle_under_mpirun_is_written_once(tmp_path):
    """Without --per-rank, under a launcher, the first process writes the one bundle and the
    others leave it to it."""
    run = next(r for r in MULTI if r.name == "mpi2b")
    d = _copy_run(run, tmp_path / "mpi2b")
    out = tmp_path / "all.lpbundle"  # (beside the run's folder: in it, it is refused)
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "PYTHONPATH": str(ROOT)}
    p = subprocess.run([_mpirun(), "-n", "2", "--oversubscribe", sys.executable, "-m",
                        "legate_prof", "convert", "-q", str(d), "-o", str(out)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert re.findall(r"wrote \S+ \(\d+ items\) \[process \d of 2\]", p.stdout) == [
        f"wrote {out} ({load_profile([out]).n_items} items) [process 0 of 2]"]


def test_view_of_per_rank_bundles_draws_the_picture_of_the_logs(tmp_path, capsys):
    """What `view DIR` draws from a real run's per-rank bundles — every rank's processors,
    memories and channels expanded, the copies recorded at both ends of one channel — is the
    picture of its logs, pixel for pixel, without merging them."""
    pytest.importorskip("pytestqt")
    from PySide6 import QtGui

    from legate_prof.viewer.screenshot import render_screenshot
    run = next(r for r in MULTI if r.name == "mpi2_copies")
    d = _copy_run(run, tmp_path / run.name)
    assert main(["convert", "--per-rank", str(d)]) == 0
    ranked = load_profile([d], ranked=True)
    logs = load_profile([d / Path(p).name for p in (*run.files, *run.streams)], ranked=True)
    kw = dict(expand=["cpu", "utility", "proc_other", "system", "channel"], width=1400,
              height=1200, title_files=["run"])
    a = QtGui.QImage(render_screenshot(ranked, tmp_path / "bundles.png", **kw))
    b = QtGui.QImage(render_screenshot(logs, tmp_path / "logs.png", **kw))
    assert not a.isNull() and a.size() == b.size() and a == b
    assert not ranked.merged_yet


def test_under_a_launcher_other_processes_files_are_not_opened(tmp_path, monkeypatch, capsys):
    """`convert --per-rank DIR` as process 1 of 2 of a 3-rank run: only the files named for
    rank 1 are looked at (checked, sniffed, their heads read), and they are converted."""
    from legate_prof.load import inputs, rank_files
    run = next(r for r in MULTI if r.name == "mpi3")
    d = _copy_run(run, tmp_path / "mpi3")
    looked, headed = [], []
    plan, head = inputs.plan_inputs, rank_files.head_ranks
    monkeypatch.setattr(inputs, "plan_inputs", lambda ps: looked.extend(ps) or plan(ps))
    monkeypatch.setattr(rank_files, "head_ranks", lambda p, k: headed.append(p) or head(p, k))
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "1")
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "2")
    assert main(["convert", "--per-rank", str(d)]) == 0
    out, err = capsys.readouterr()
    assert err == "" and out.strip().endswith("[process 1 of 2]")
    own = [str(d / "legate_1.prof.gz"), str(d / "legate_1.runtime.prof")]
    assert sorted(looked) == own and sorted(headed) == own
    assert sorted(p.name for p in d.glob("*.lpbundle")) == ["legate_1.lpbundle"]
