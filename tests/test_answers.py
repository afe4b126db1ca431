"""A command asked again of the same run answers from what it kept (``cli/answers.py``,
``store/results.py``): the same output, warnings and exit status, without reading the logs;
never for a changed input, other options, a window or a subset of ranks; and the run's
critical path, walked by one command, is not walked again by the next."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from fixtures.make_critical_goldens import REAL
from legate_prof.cli import main


def ask(capsys, *argv):
    """(exit status, stdout, stderr) of the command ``argv``; stderr without the cache
    folder's first-use note, said by whichever command first used the folder
    (``test_the_first_command_to_keep_a_timeline_says_where``)."""
    from legate_prof.store.cache import FIRST_USE_NOTE
    code = main([*map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, "".join(line for line in out.err.splitlines(keepends=True)
                                  if not line.startswith(FIRST_USE_NOTE))


@pytest.fixture
def run_copy(tmp_path):
    """mpi4's logs and streams, copied: a test may change them."""
    d = tmp_path / "run"
    shutil.copytree(REAL / "mpi4", d, ignore=shutil.ignore_patterns("golden", "*.py", "*.txt"))
    return d


def _unreadable(monkeypatch):
    """Reading any profile fails from now on: only a kept answer can answer."""
    import legate_prof.load.loader as loader

    def refuse(*a, **k):
        raise AssertionError("the logs were read again")
    monkeypatch.setattr(loader, "_load", refuse)


@pytest.mark.parametrize("argv", [("stats",), ("stats", "--json"), ("critical",),
                                  ("critical", "--json"), ("insights",),
                                  ("insights", "--json")])
def test_asked_again_the_same_answer_without_the_logs(capsys, monkeypatch, run_copy, argv):
    first = ask(capsys, *argv, run_copy)
    assert first[0] == 0 and first[1]
    _unreadable(monkeypatch)
    assert ask(capsys, *argv, run_copy) == first


def test_a_changed_input_other_options_or_a_window_are_worked_out_again(capsys, monkeypatch,
                                                                       run_copy):
    ask(capsys, "critical", run_copy)
    text = ask(capsys, "critical", "--limit", "3", run_copy)  # (another question)
    assert text[1].count("\n") < ask(capsys, "critical", run_copy)[1].count("\n")
    log = sorted(run_copy.glob("legate_3.prof*"))[0]
    os.utime(log, ns=(1, 1))  # (the same bytes, another mtime: another run for all we know)
    calls = []
    import legate_prof.load.loader as loader
    real = loader._load
    monkeypatch.setattr(loader, "_load", lambda *a, **k: calls.append(1) or real(*a, **k))
    ask(capsys, "critical", run_copy)
    ask(capsys, "critical", "--start", "3s", run_copy)
    ask(capsys, "critical", "--start", "3s", run_copy)
    ask(capsys, "critical", "--ranks", "0-1", run_copy)
    assert len(calls) == 4


def test_the_path_walked_by_one_command_serves_the_next(capsys, monkeypatch, run_copy,
                                                      tmp_path):
    """``critical`` walks the run's path and keeps it; ``insights`` on the same run takes it
    (walking is refused) and costs its findings as it does when it walks the path itself."""
    import legate_prof.query.critical as qc
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(tmp_path / "elsewhere"))
    walked = ask(capsys, "insights", "--json", run_copy)
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(tmp_path / "here"))
    assert ask(capsys, "critical", run_copy)[0] == 0

    def refuse(*a, **k):
        raise AssertionError("walked again")
    monkeypatch.setattr(qc, "walk_back", refuse)
    assert ask(capsys, "insights", "--json", run_copy) == walked
    assert '"wall_ns"' in walked[1]


def test_critical_after_another_command_needs_no_links(capsys, monkeypatch, run_copy, tmp_path):
    """``critical``'s text needs the run's path and whether the run has an event graph: with
    a path kept by ``insights``, it computes no links (they were computed to ask whether the
    graph has an edge: half of ``critical`` after ``insights``) and says what it says when it
    walks the path itself."""
    import legate_prof.query.critical as qc
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(tmp_path / "elsewhere"))
    walked = ask(capsys, "critical", run_copy)
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(tmp_path / "here"))
    assert ask(capsys, "insights", run_copy)[0] == 0

    def refuse(*a, **k):
        raise AssertionError("links computed")
    monkeypatch.setattr(qc, "compute_links", refuse)
    assert ask(capsys, "critical", run_copy) == walked


def test_an_answer_of_other_code_is_not_read(capsys, monkeypatch, run_copy):
    """The answers are keyed by a hash of legate_prof's sources: another version's answer
    (here: the hash changed) is worked out again, not replayed."""
    import legate_prof.store.results as results
    first = ask(capsys, "stats", run_copy)
    monkeypatch.setattr(results, "_CODE", "another version")
    _unreadable(monkeypatch)
    with pytest.raises(AssertionError, match="read again"):
        ask(capsys, "stats", run_copy)
    assert first[0] == 0


def test_answers_are_kept_only_in_a_folder_of_the_users_alone(capsys, monkeypatch, run_copy,
                                                              tmp_path):
    """Kept answers trust their folder as cache entries do: in a folder others may write, none
    is read or kept (a planted answer would be printed as the run's); in the user's own, they
    are the owner's only, and dropping the oldest touches no other file there."""
    import stat
    import legate_prof.store.results as results
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(shared))
    assert ask(capsys, "stats", run_copy)[0] == 0
    assert not list(shared.glob("*" + results.RESULT_SUFFIX))
    own = tmp_path / "own"
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(own))
    assert ask(capsys, "stats", run_copy)[0] == 0
    kept = list(own.glob("*" + results.RESULT_SUFFIX))
    assert kept and all(stat.S_IMODE(p.stat().st_mode) & 0o077 == 0 for p in kept)
    theirs = own / "notes.result"
    theirs.write_text("mine")
    monkeypatch.setattr(results, "MAX_RESULTS", 0)
    results._drop_oldest(own)
    assert theirs.exists() and not [p for p in kept if p.exists()]


def _kept_entries(cache, wait_s=120):
    """The cache entries in ``cache`` once a command's copy has written them (it goes on
    after the command ends): none after ``wait_s``."""
    import time
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        entries = sorted(cache.glob("*.lpbundle"))
        if entries and not any(p.name.startswith(".") for p in cache.iterdir()):
            return entries
        time.sleep(0.05)
    return []


def test_another_command_reopens_the_timeline_a_first_one_kept(capsys, monkeypatch, tmp_path,
                                                              run_copy):
    """A command keeps the run's timeline once its answer is out (a forked copy writes the
    cache entry: the command does not wait for it); the next command asking another question
    of the same run reopens it instead of reading the logs, and answers to the byte as from
    the logs."""
    import subprocess
    import sys
    cache = tmp_path / "cache"
    env = {**os.environ, "LEGATE_PROF_CACHE_DIR": str(cache), "QT_QPA_PLATFORM": "offscreen"}
    first = subprocess.run([sys.executable, "-m", "legate_prof", "stats", str(run_copy)],
                           capture_output=True, text=True, env=env, timeout=600)
    assert first.returncode == 0 and first.stdout, first.stderr
    assert len(_kept_entries(cache)) == 1
    from_logs = {argv: ask(capsys, *argv, "--no-cache", run_copy)
                 for argv in (("critical", "--json", "--limit", "0"), ("insights",))}
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(cache))
    import legate_prof.read.legion_log as legion_log
    reads = []
    real_read = legion_log.LegionProfReader.read
    monkeypatch.setattr(legion_log.LegionProfReader, "read",
                        lambda self: reads.append(self) or real_read(self))
    for argv, answer in from_logs.items():
        assert ask(capsys, *argv, run_copy) == answer
    assert reads == []  # (the timeline came from the cache entry)


def test_no_cache_neither_reads_nor_keeps_the_timeline(capsys, monkeypatch, tmp_path, run_copy):
    """``--no-cache`` (or no cache folder: ``LEGATE_PROF_CACHE_DIR=''``): the logs are read,
    and no copy is made to keep what was built (with no folder, one was made for nothing)."""
    def no_fork():
        raise AssertionError("a copy was made to keep the timeline")
    monkeypatch.setattr(os, "fork", no_fork)
    for argv in (("stats",), ("critical",), ("insights", "--json")):
        code, out, _ = ask(capsys, *argv, "--no-cache", run_copy)
        assert code == 0 and out
    assert list(Path(os.environ["LEGATE_PROF_CACHE_DIR"]).glob("*.lpbundle")) == []
    # nor an answer: asked again, it is worked out again (a benchmark timed a kept one)
    assert list(Path(os.environ["LEGATE_PROF_CACHE_DIR"]).glob("*.result")) == []
    with monkeypatch.context() as m:
        m.setenv("LEGATE_PROF_CACHE_DIR", "")
        for argv in (("stats",), ("critical",)):
            code, out, _ = ask(capsys, *argv, run_copy)
            assert code == 0 and out
    monkeypatch.undo()  # (the fork back: the same command without the option keeps it)
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(tmp_path / "cache"))
    assert ask(capsys, "stats", run_copy)[0] == 0
    assert len(_kept_entries(tmp_path / "cache")) == 1


@pytest.mark.parametrize("first, then", [("stats", "insights"), ("insights", "stats")])
def test_the_idle_time_explained_by_one_command_serves_the_next(capsys, monkeypatch, run_copy,
                                                                tmp_path, first, then):
    """``stats`` and ``insights`` explain the same idle time: the second on a run takes it as
    the first worked it out (explaining it again is refused) and answers as it does alone."""
    import legate_prof.analyze.idle_gaps as idle_module
    import legate_prof.analyze.idle_ranks as ranks_module
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(tmp_path / "alone"))
    alone = ask(capsys, then, "--json", run_copy)
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(tmp_path / "here"))
    assert ask(capsys, first, "--json", run_copy)[0] == 0

    def refuse(*a, **k):
        raise AssertionError("the idle time explained again")
    monkeypatch.setattr(idle_module, "idle_gaps", refuse)
    monkeypatch.setattr(ranks_module, "idle_of_ranks", refuse)
    assert ask(capsys, then, "--json", run_copy) == alone
    assert '"idle"' in alone[1] or '"idle_before_ns"' in alone[1]


def test_a_path_kept_on_the_logs_numbering_is_not_read_on_the_caches(capsys, monkeypatch,
                                                                     run_copy, tmp_path):
    """The run's path is kept by item id; built from its logs and reopened from the cache
    (stacked) the same run numbers its items otherwise: ``critical`` after ``insights`` read
    the path ``insights`` walked on the logs against the cache's items and named other items
    (by source line: 108.7 s for a line of 101.1 s).  A path is taken only where the items
    are numbered as where it was walked; else walked again — the answer as from the logs."""
    import subprocess
    import sys
    cache = tmp_path / "cache"
    env = {**os.environ, "LEGATE_PROF_CACHE_DIR": str(cache), "QT_QPA_PLATFORM": "offscreen"}
    first = subprocess.run([sys.executable, "-m", "legate_prof", "insights", str(run_copy)],
                           capture_output=True, text=True, env=env, timeout=600)
    assert first.returncode == 0, first.stderr
    assert len(_kept_entries(cache)) == 1 and list(cache.glob("*.path.result"))
    alone = ask(capsys, "critical", "--json", "--limit", "0", "--no-cache", run_copy)
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(cache))
    import legate_prof.read.legion_log as legion_log
    monkeypatch.setattr(legion_log.LegionProfReader, "read",
                        lambda self: (_ for _ in ()).throw(AssertionError("logs read")))
    assert ask(capsys, "critical", "--json", "--limit", "0", run_copy) == alone


def _kept_answers(cache, n, wait_s=120):
    """The kept answers in ``cache`` once there are ``n`` of them and nothing is being
    written (a copy of the command answers ahead after it ends), or those there after
    ``wait_s``."""
    import time
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        kept = sorted(cache.glob("*.answer-*.result"))
        if len(kept) >= n and not any(p.name.startswith(".") for p in cache.iterdir()):
            return kept
        time.sleep(0.05)
    return sorted(cache.glob("*.answer-*.result"))


def test_the_next_questions_are_answered_ahead_as_they_would_be(capsys, monkeypatch, tmp_path,
                                                                run_copy):
    """Once ``stats`` has answered, the copy that keeps the run's timeline answers the run's
    other questions as a user types them next (``insights``, ``critical``: the same files, no
    option) from the entry it wrote; asked, they print at once what they print worked out
    from the logs, nothing read or worked out again."""
    import subprocess
    import sys
    cache = tmp_path / "cache"
    env = {**os.environ, "LEGATE_PROF_CACHE_DIR": str(cache), "QT_QPA_PLATFORM": "offscreen"}
    first = subprocess.run([sys.executable, "-m", "legate_prof", "stats", str(run_copy)],
                           capture_output=True, text=True, env=env, timeout=600)
    assert first.returncode == 0 and first.stdout, first.stderr
    assert len(_kept_answers(cache, 3)) == 3  # (stats', and the two answered ahead)
    from_logs = {argv: ask(capsys, *argv, "--no-cache", run_copy)
                 for argv in (("insights",), ("critical",))}
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(cache))
    _unreadable(monkeypatch)
    import legate_prof.analyze.insights as insights_module
    monkeypatch.setattr(insights_module, "insights_of_run",
                        lambda *a, **k: (_ for _ in ()).throw(AssertionError("worked out")))
    for argv, answer in from_logs.items():
        assert ask(capsys, *argv, run_copy) == answer


@pytest.mark.parametrize("argv", [("--ranks", "0,1"), ("--start", "0.1ms")])
def test_a_run_not_read_whole_is_not_answered_ahead(capsys, run_copy, argv):
    """A command on some ranks or a window keeps nothing of the run's other questions."""
    assert ask(capsys, "stats", *argv, run_copy)[0] == 0
    from legate_prof.load.loader import wait_for_writers
    assert wait_for_writers()
    assert list(Path(os.environ["LEGATE_PROF_CACHE_DIR"]).glob("*.answer-*.result")) == []


@pytest.mark.parametrize("writer_s, waited", [(0.6, True), (5.0, False)])
def test_a_command_waits_for_the_timeline_another_process_is_keeping(monkeypatch, run_copy,
                                                                     writer_s, waited):
    """A command that finds the run's entry being written (by the copy of the command before
    it, typed at once; by a viewer) reopens it once written instead of building the timeline
    beside the writer (twice the time, both at work); a writer slower than the wait allowed
    (stopped, a slow disk) is not waited for longer: the logs are read."""
    import threading
    import time
    import legate_prof.read.legion_log as legion_log
    from legate_prof.load.inputs import expand_inputs
    from legate_prof.load.loader import load_profile
    from legate_prof.store import cache
    paths = expand_inputs([str(run_copy)], note=lambda _: None)
    model = load_profile(paths, stack=False)
    entry = cache.entry_path(paths)
    holding = threading.Event()

    def writer():
        with cache._writing(entry):
            holding.set()
            time.sleep(writer_s)
            cache.store_cached(model, paths, note=lambda _: None)
    monkeypatch.setattr(cache, "WAIT_FOR_WRITER_S", 2.0)
    reads = []
    real_read = legion_log.LegionProfReader.read
    monkeypatch.setattr(legion_log.LegionProfReader, "read",
                        lambda self: reads.append(self) or real_read(self))
    t = threading.Thread(target=writer)
    t.start()
    holding.wait()
    got = load_profile(paths, stack=False, use_cache=True)
    t.join()
    assert (reads == []) == waited
    assert got.n_items == model.n_items
    assert not entry.with_suffix(cache.WRITING_SUFFIX).exists()  # (gone with its writer)


def test_a_path_kept_on_one_numbering_of_the_run_is_read_on_the_other(run_copy, tmp_path,
                                                                       monkeypatch):
    """Built from its logs and reopened from the cache (stacked) the run numbers its items
    otherwise; a path kept on one is read on the other by each item's lane, start and stop
    (``critical`` typed at once after ``insights`` reopens the entry: it walked the path
    again) — the path walked there, step for step; an item not found is walked again."""
    import numpy as np
    from legate_prof.causality.run_path import steps_as_arrays
    from legate_prof.cli import answers
    from legate_prof.load.inputs import expand_inputs
    from legate_prof.load.loader import load_profile
    from legate_prof.query import as_source
    from legate_prof.store import cache
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(tmp_path / "cache"))
    paths = expand_inputs([str(run_copy)], note=lambda _: None)
    built = load_profile(paths, stack=False)
    from_logs = as_source(built)
    cache.store_cached(built, paths, note=lambda _: None)
    reopened = as_source(cache.load_cached(paths, note=lambda _: None))
    assert answers.item_numbering(from_logs) != answers.item_numbering(reopened)

    class Kept(dict):
        def get(self, name, options=None):
            return dict.get(self, name)

        def put(self, name, value, options=None):
            self[name] = value
    kept = Kept()
    from_logs.run_critical_path()
    answers._Keep(kept, from_logs).keep()
    walked = steps_as_arrays(reopened.run_critical_path())
    read = answers._renumbered(kept["path"], reopened)
    assert read is not None and len(walked["item"]) > 10
    for c in walked:
        assert np.array_equal(np.asarray(read[c]), walked[c]), c
    assert not np.array_equal(read["item"], kept["path"]["item"])  # (other ids: renumbered)
    lost = {**kept["path"], "start": np.asarray(kept["path"]["start"]) + 1}
    assert answers._renumbered(lost, reopened) is None


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this system")
@pytest.mark.parametrize("later", ["after", "later"])
def test_a_run_changed_before_its_timeline_is_kept_is_kept_under_what_was_read(run_copy, later):
    """The run recorded again into its folder while the last command's copy (or the
    window's thread) still keeps its timeline: the entry is that of the files as they were
    read, never the new files' (whose next command would show the old run)."""
    from legate_prof.load import loader
    from legate_prof.load.inputs import expand_inputs
    from legate_prof.output_file import copy_ended
    from legate_prof.store import cache
    paths = expand_inputs([str(run_copy)], note=lambda _: None)
    read = cache.entry_path(paths)
    loader.load_profile(paths, stack=later == "later", ranked=True, use_cache=later)
    stream = sorted(run_copy.glob("legate_3.runtime.prof"))[0]
    stream.write_bytes(stream.read_bytes()[:-100])  # (another run's, for all we know)
    now = cache.entry_path(paths)
    assert now != read
    if later == "after":
        copy_ended(loader.store_after_answer())
    else:
        import threading
        for t in threading.enumerate():
            if t.name == "legate_prof cache":
                t.join(60)
    assert read.exists() and not now.exists()
    assert cache.load_cached(paths) is None  # (the files as they are: built again)


@pytest.fixture
def full_cache(tmp_path, monkeypatch):
    """The cache on a tmpfs with no room left (needs root and a kernel that lets this
    process mount one): a full home directory, common on shared clusters."""
    from conftest import small_tmpfs
    with small_tmpfs(tmp_path / "cache", "64k") as mnt:
        (mnt / "cache").mkdir(mode=0o700)  # (the cache's own folder: the mount's is open to all)
        with open(mnt / "filler", "wb") as f:  # (no room left for anything)
            with pytest.raises(OSError):
                f.write(b"\0" * (1 << 20))
                f.flush()
        monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(mnt / "cache"))
        yield mnt / "cache"


@pytest.mark.parametrize("argv", [("stats",), ("critical",), ("insights",)])
def test_a_full_cache_keeps_nothing_and_the_answer_is_shown(capsys, full_cache, run_copy,
                                                             argv):
    """A result that cannot be kept (the cache full) ended the command before it printed
    anything, exit 2, naming a cache file (a stranger's-folder review): the answer is shown,
    exit 0, as without the cache."""
    code, out, err = ask(capsys, *argv, run_copy)
    plain = ask(capsys, *argv, "--no-cache", run_copy)
    assert (code, out) == plain[:2] and code == 0 and out, err
    assert "could not write" not in err and ".result" not in err, err


def test_a_stream_put_beside_a_log_later_is_said_not_replayed_stale(capsys, monkeypatch,
                                                                   run_copy):
    """A review: a kept answer of logs given alone replayed its stderr after their runtime
    streams were copied in beside them, without the note ``--no-cache`` gives ("the array
    runtime's stream beside it ... was not given").  What lies beside the inputs is part of
    the question."""
    streams = sorted(run_copy.glob("legate_*.runtime.prof"))
    aside = run_copy.parent / "aside"
    aside.mkdir()
    for s in streams:
        s.rename(aside / s.name)
    logs = sorted(p for p in run_copy.glob("legate_*.prof*") if "runtime" not in p.name)
    first = ask(capsys, "stats", *logs)
    assert first[0] == 0 and "was not given" not in first[2]
    for s in streams:
        (aside / s.name).rename(s)
    again = ask(capsys, "stats", *logs)
    assert "legate_0.runtime.prof) was not given" in again[2], again[2]
    assert again[2] == ask(capsys, "stats", "--no-cache", *logs)[2]


_IMPORTS = """
import sys
from legate_prof.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
print("numpy imported:", "numpy" in sys.modules, "query imported:",
      "legate_prof.query" in sys.modules)
"""


@pytest.mark.parametrize("argv", [("stats",), ("insights", "--json"), ("critical",),
                                  ("report", "--no-pictures")])
def test_an_answer_asked_again_imports_no_numpy(run_copy, tmp_path, argv):
    """A command asked again of the same run reads what it kept and nothing that works an
    answer out: numpy's import was half of its 0.2 s (the guide's 10 M example: `stats`
    asked again 0.20-0.24 s, then 0.06-0.08 s; `report` 0.28-0.33 s, then 0.14-0.15 s).
    The answer is the same, and numpy is imported where it is worked out."""
    import subprocess
    import sys
    env = dict(os.environ, LEGATE_PROF_CACHE_DIR=str(tmp_path / "cache"))
    out = ["-o", str(tmp_path / "report")] if argv[0] == "report" else []

    def asked():
        p = subprocess.run([sys.executable, "-c", _IMPORTS, *argv, str(run_copy), *out],
                           capture_output=True, text=True, env=env, timeout=300)
        assert p.returncode == 0, p.stderr
        *answer, imports = p.stdout.splitlines()
        return answer, imports
    first, imported = asked()
    assert imported == "numpy imported: True query imported: True"
    again, imported = asked()
    assert imported == "numpy imported: False query imported: False"
    assert again == first


def test_the_command_asks_numpy_for_no_huge_pages_before_it_is_imported_not_its_workers():
    """Said in the environment numpy reads as it is imported (``cli._no_huge_pages``): numpy
    imported after the command began asks for none; the rank workers it starts keep numpy's
    default, as before; a setting of the user's is theirs."""
    import subprocess
    import sys
    script = ("import os, sys\nfrom legate_prof.cli import main\n"
              "assert main(['stats', '--no-cache', sys.argv[1]]) == 0\n"
              "import numpy\nfrom legate_prof.load.rank_workers import _worker_env\n"
              "print(numpy._core.multiarray._set_madvise_hugepage(True),"
              " _worker_env().get('NUMPY_MADVISE_HUGEPAGE'),"
              " os.environ.get('NUMPY_MADVISE_HUGEPAGE'))\n")
    sample = REAL / "mpi4"
    # (a command run in a caller's process leaves its environment as it was: a later
    # `record` there would hand the setting to legate, a review found)
    for users, expected in ((None, "False None None"), ("1", "True 1 1")):
        env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
        if users:
            env["NUMPY_MADVISE_HUGEPAGE"] = users
        p = subprocess.run([sys.executable, "-c", script, str(sample)], capture_output=True,
                           text=True, env=env, timeout=300)
        assert p.returncode == 0, p.stderr
        assert p.stdout.splitlines()[-1] == expected
