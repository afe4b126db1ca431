"""`stats` of ranks built by workers: each worker makes its rank's part of the statistics
(``stats_ranks.PREPARE``) and hands over only what is left to read of its rank (``PARENT_COLUMNS``,
the spawn marks, the small tables): the statistics are those of one load of every rank, on
real multi-rank runs and on a generated run of jobs of several ranks."""

import json
import os

import numpy as np
import pytest

from fixtures.make_critical_goldens import REAL, rank_files
from legate_prof.analyze import stats as S
from legate_prof.analyze import stats_ranks as R
from legate_prof.assemble.rank_set import RankSet
from legate_prof.load.loader import load_profile
from legate_prof.load.rank_workers import prepared_of

# real runs given their Legion logs alone (a run's folder with its runtime streams is built
# in one process: ``loader.rank_files_for_workers``)
RUNS = ["read_loop_2ranks", "mpi4", "mpi2_skewed", "mpi2_copies", "oom2"]


def _json(s):
    s = dict(s)
    s.pop("files", None)  # (the loader's to say)
    return json.loads(json.dumps(s, sort_keys=True, default=str))


def _no_fallback(monkeypatch):
    """Idle time explained over all ranks at once fails the test: the workers' parts tell."""
    import legate_prof.analyze.idle_gaps as idle_gaps

    def no(source):
        raise AssertionError("explained over all ranks at once, not from the workers")
    monkeypatch.setattr(idle_gaps, "idle_gaps", no)


def _handed_over(files, prepare=R.PREPARE, **kw):
    ranks = load_profile(files, ranked=True, prepare=prepare, workers=2, stack=False, **kw)
    assert isinstance(ranks, RankSet) and len(ranks.rank_models()) >= 2
    for m in ranks.rank_models():
        assert R.PART in prepared_of(m)
        assert sorted(m.items) == sorted(R.PARENT_COLUMNS)  # (the rest stayed in the worker)
        assert all(len(v) == 0 for v in m.waits.values()) and not m.utilization_steps
    return ranks


@pytest.mark.parametrize("run", RUNS)
def test_stats_from_the_workers_parts_are_one_loads(run, monkeypatch):
    files = [str(f) for f in rank_files(REAL / run)]
    ranks = _handed_over(files)
    whole = _json(S.compute_stats(load_profile(files, workers=1, stack=False)))
    with monkeypatch.context() as m:
        _no_fallback(m)
        assert _json(R.compute_stats(ranks)) == whole
    no_idle = _json(R.compute_stats(_handed_over(files, R.PREPARE_NO_IDLE), idle=False))
    assert no_idle == {**whole, "idle": None}


def test_a_ranks_part_names_by_id_the_operations_another_rank_describes():
    """A task on rank 1 launched by an operation rank 0 describes: its worker cannot name the
    task's source line, so it says the operation by id and the parent names it from all
    ranks' operations (without, 2 lines were missing from read_loop_2ranks' rows)."""
    import msgpack
    files = [str(f) for f in rank_files(REAL / "read_loop_2ranks")]
    ranks = _handed_over(files)
    said = set()
    for m in ranks.rank_models():
        part = msgpack.unpackb(np.asarray(prepared_of(m)[R.PART]).tobytes(),
                               strict_map_key=False)
        own = set(np.asarray(m.ops["op_id"]).tolist())
        for table in part["tables"].values():
            for p in table.values():
                ids = set(p.get("elsewhere", ()))
                assert not ids & own and 0 not in ids
                said |= ids
    assert said  # (the case is the run's: hundreds of tasks of each rank)
    whole = load_profile(files, workers=1, stack=False)
    lines = {whole.provenances[q] for q in whole.op_provenance(sorted(said)).tolist() if q}
    got = R.compute_stats(ranks)
    shown = {p for key, _, _ in S.TABLES for row in got[key] for p in row["provenances"]}
    assert lines and lines <= shown


def test_jobs_of_several_ranks_give_one_loads_stats(tmp_path, monkeypatch):
    from fixtures.synthetic import generate
    import legate_prof.load.rank_workers as rank_workers
    files = [str(f) for f in generate(tmp_path / "run", ranks=7, items=14000, seed=5)]
    monkeypatch.setattr(rank_workers, "worker_count", lambda paths, size, workers=None: 2)
    monkeypatch.setattr(rank_workers, "BATCH_BYTES", 2 * os.path.getsize(files[0]))
    ranks = load_profile(files, ranked=True, prepare=R.PREPARE, stack=False)
    assert 2 <= len(ranks.rank_models()) < len(files)
    assert all(sorted(m.items) == sorted(R.PARENT_COLUMNS) for m in ranks.rank_models())
    whole = _json(S.compute_stats(load_profile(files, workers=1, stack=False)))
    assert _json(R.compute_stats(ranks)) == whole and whole["idle"]["groups"]


def test_stats_loads_the_ranks_whole_where_the_parts_fall_short(monkeypatch, capsys):
    """Where what the workers prepared cannot explain the idle time (an operation two ranks
    describe, a kernel's task on another node: here made so), `stats` loads the ranks again
    whole and says what one load says, once."""
    from legate_prof.analyze import idle_ranks
    from legate_prof.cli import main
    files = [str(f) for f in rank_files(REAL / "mpi4")]
    assert main(["stats", "--json", "--no-cache", *files]) == 0  # (small: one process)
    first = capsys.readouterr()
    whole = json.loads(first.out)
    monkeypatch.setenv("LEGATE_PROF_WORKERS", "2")
    called = []
    monkeypatch.setattr(idle_ranks, "idle_of_ranks", lambda *a: called.append(1))
    assert main(["stats", "--json", "--no-cache", *files]) == 0
    out = capsys.readouterr()
    assert called and json.loads(out.out) == whole
    assert out.err == first.err and out.err.count("legate_0.prof") == 1
    assert R.handed_over_thin(_handed_over(files).rank_models())
    with pytest.raises(R.WholeRanksNeeded):
        R.compute_stats(_handed_over(files))


def test_stats_keeping_the_timeline_hands_over_the_ranks_whole(tmp_path, monkeypatch, capsys):
    """`stats` keeps the run's timeline in the cache once its answer is out (the next command
    reopens it): its workers then hand over their ranks whole, and the entry is the run's
    whole timeline (a review: the ranks handed over in part were kept, and the next command
    found the entry damaged and built the run again); with `--no-cache` only what is left
    to read is handed over, and nothing is kept."""
    from legate_prof.cli import main
    from legate_prof.load import loader
    from legate_prof.store.cache import load_cached
    files = [str(f) for f in rank_files(REAL / "mpi4")]
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LEGATE_PROF_WORKERS", "2")
    handed = []
    real = R.compute_stats

    def spy(profile, idle=True):
        handed.append(R.handed_over_thin([p.model for p in profile.item_parts()]))
        return real(profile, idle)
    monkeypatch.setattr(R, "compute_stats", spy)
    assert main(["stats", "--json", "--no-cache", *files]) == 0
    assert handed == [True]
    assert not list((tmp_path / "cache").glob("*.lpbundle"))
    assert main(["stats", "--json", *files]) == 0
    assert handed == [True, False]
    loader.wait_for_writers()
    notes = []
    kept = load_cached(files, note=notes.append)
    assert kept is not None and not notes
    whole = load_profile(files, workers=1, stack=False)
    assert kept.n_items == whole.n_items
    assert all(sorted(p.model.items) == sorted(whole.items) for p in kept.item_parts())
    capsys.readouterr()


def test_ranks_handed_over_in_part_are_never_kept_in_the_cache(tmp_path, monkeypatch):
    from legate_prof.load import loader
    files = [str(f) for f in rank_files(REAL / "mpi4")]
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(tmp_path / "cache"))
    ranks = load_profile(files, ranked=True, prepare=R.PREPARE, workers=2, stack=False,
                         use_cache="after")
    assert R.handed_over_thin(ranks.rank_models())
    assert not loader._AFTER


@pytest.mark.parametrize("cut", [31913])
def test_a_rank_cut_before_its_processors_reads_as_in_one_process(tmp_path, monkeypatch,
                                                                   capsys, cut):
    """A rank's log cut short before its processors: built alone (a worker) it had none
    ("processors: -"); read with the other ranks' logs, which name them, it has them. The
    workers now leave such a run to one process: the same answer either way (a review's
    damaged inputs, four of 190)."""
    import gzip
    from legate_prof.cli import main
    run = REAL / "mpi2_copies"
    (tmp_path / "legate_0.prof").write_bytes(gzip.open(run / "legate_0.prof.gz").read())
    (tmp_path / "legate_1.prof").write_bytes(gzip.open(run / "legate_1.prof.gz").read()[:cut])
    files = [str(tmp_path / "legate_0.prof"), str(tmp_path / "legate_1.prof")]
    said = {}
    for workers in ("1", "2"):
        monkeypatch.setenv("LEGATE_PROF_WORKERS", workers)
        assert main(["stats", "--no-cache", *files]) in (0, 2)
        said[workers] = capsys.readouterr()
    assert said["1"] == said["2"]
    assert "rank 1: processors: 1 cpu" in said["2"].out
