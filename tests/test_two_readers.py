"""A run's files read by two processes (``load.two_readers``): what the forked copy reads is
what this process would have read, its failures come back as they would have been raised,
and where the copy cannot help (it died, a thread runs, little to read) nothing changes."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest

from legate_prof.errors import ProfileError
from legate_prof import output_file
from legate_prof.load import two_readers
from legate_prof.load.inputs import expand_inputs, plan_inputs
from legate_prof.load.loader import _read_one, load_profile

ROOT = Path(__file__).resolve().parents[1]
MPI4 = ROOT / "fixtures" / "real" / "mpi4"
pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this system")


def _planned(folder):
    paths, kinds, _, _ = plan_inputs(expand_inputs([str(folder)]))
    return paths, kinds


def _read_where(path, kind):
    """``_read_one``, and the process that read it."""
    return _read_one(path, kind), os.getpid()


def _tables_equal(a, b):
    assert sorted(a.tables) == sorted(b.tables)
    for name in a.tables:
        x, y = a.tables[name], b.tables[name]
        if isinstance(x, np.ndarray):  # (field by field: padding bytes are nobody's)
            assert x.dtype == y.dtype and len(x) == len(y), name
            for f in x.dtype.names or ():
                assert np.array_equal(x[f], y[f]), (name, f)
        else:
            assert x == y, name
    assert sorted(a.seq) == sorted(b.seq)
    for name in a.seq:
        assert np.array_equal(a.seq[name], b.seq[name])
    assert [str(w) for w in a.warnings] == [str(w) for w in b.warnings]


@pytest.fixture
def always(monkeypatch):
    """Every read worth a copy; a Qt application other tests made is not this process's."""
    monkeypatch.setattr(two_readers, "MIN_WORK", 0)
    monkeypatch.setattr(output_file, "_qt_imported", lambda: False)


def test_the_copy_reads_the_streams_and_some_logs_and_hands_back_the_same(always):
    paths, kinds = _planned(MPI4)
    got = two_readers.read_each(paths, kinds, _read_where)
    alone = two_readers.read_each(paths, kinds, _read_where, workers=1)
    assert list(got) == [p for p in paths if kinds[p] in ("legion", "runtime")]
    where = {p: pid for p, (_, pid) in got.items()}
    copied = {p for p, pid in where.items() if pid != os.getpid()}
    streams = {p for p in paths if kinds[p] == "runtime"}
    assert streams <= copied  # (cheapest to hand back: the copy's first)
    assert copied != set(where)  # (this process reads the costliest log itself)
    assert all(pid == os.getpid() for _, pid in alone.values())
    for p in paths:
        if kinds[p] == "legion":
            _tables_equal(got[p][0], alone[p][0])
        elif kinds[p] == "runtime":
            a, b = (vars(got[p][0]), vars(alone[p][0]))
            assert a.keys() == b.keys() and len(a["op_time"]) > 0
            for k in a:
                assert (np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray)
                        else a[k] == b[k]), k


def _refusing(bad):
    def read(path, kind):
        if path == bad:
            raise ProfileError(path, "not a runtime event stream (damaged at byte 7)")
        return _read_one(path, kind)
    return read


def test_a_file_the_copy_cannot_read_comes_back_as_its_error(always):
    paths, kinds = _planned(MPI4)
    bad = str(MPI4 / "legate_1.runtime.prof")
    got = two_readers.read_each(paths, kinds, _refusing(bad))
    assert isinstance(got[bad], ProfileError)
    assert (got[bad].path, got[bad].problem) == (bad, "not a runtime event stream (damaged "
                                                      "at byte 7)")
    assert str(got[bad]) == f"{bad}: not a runtime event stream (damaged at byte 7)"
    assert sum(isinstance(r, ProfileError) for r in got.values()) == 1


def test_a_cut_log_read_by_the_copy_keeps_its_warning(always, tmp_path):
    import gzip
    for f in MPI4.iterdir():
        if f.is_file():
            (tmp_path / f.name).write_bytes(f.read_bytes())
    cut = tmp_path / "legate_0.prof.gz"
    data = gzip.decompress(cut.read_bytes())
    cut.write_bytes(gzip.compress(data[:len(data) * 2 // 3]))
    paths, kinds = _planned(tmp_path)
    got = two_readers.read_each(paths, kinds, _read_where)
    alone = two_readers.read_each(paths, kinds, _read_one, workers=1)
    log, pid = got[str(cut)]
    assert pid != os.getpid()  # (the smallest log: the copy's)
    assert log.warnings and log.cut
    for p in got:
        if kinds[p] == "legion":
            _tables_equal(got[p][0], alone[p])


def _dies_in_a_copy(parent):
    def read(path, kind):
        if os.getpid() != parent:
            os._exit(7)  # (a copy killed mid-read: no answer on the pipe)
        return _read_where(path, kind)
    return read


def test_a_copy_that_dies_leaves_this_process_to_read_its_files(always):
    paths, kinds = _planned(MPI4)
    got = two_readers.read_each(paths, kinds, _dies_in_a_copy(os.getpid()))
    assert got and all(pid == os.getpid() for _, pid in got.values())


def test_no_copy_while_another_thread_runs_or_where_little_is_read(always, monkeypatch):
    paths, kinds = _planned(MPI4)
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)  # (not a daemon: its locks a fork would copy)
    t.start()
    try:
        got = two_readers.read_each(paths, kinds, _read_where)
    finally:
        stop.set()
        t.join()
    assert all(pid == os.getpid() for _, pid in got.values())
    monkeypatch.setattr(two_readers, "MIN_WORK", 1 << 40)
    got = two_readers.read_each(paths, kinds, _read_where)
    assert all(pid == os.getpid() for _, pid in got.values())


class _QtBeingImported:
    """A PySide6 module another thread is importing: an attribute asked of it waits."""

    def __getattr__(self, name):
        raise AssertionError(f"QtCore.{name} asked for while Qt is imported elsewhere")


def test_whether_to_fork_asks_nothing_of_qt_and_never_outside_the_main_thread(monkeypatch):
    """``view`` loads in a thread while its main thread imports Qt: an attribute of QtCore
    asked for there waited, holding the interpreter's lock, on the import's own lock (the
    window never opened, one start in twenty under load).  Qt imported: no copy; a thread
    but the main one: no copy, Qt not even looked at."""
    import sys
    monkeypatch.setitem(sys.modules, "PySide6.QtCore", _QtBeingImported())
    assert output_file.fork_is_safe() is False
    answers = []
    t = threading.Thread(target=lambda: answers.append(output_file.fork_is_safe()), daemon=True)
    t.start()
    t.join()
    assert answers == [False]
    monkeypatch.delitem(sys.modules, "PySide6.QtCore")
    assert output_file.fork_is_safe() is all(x.daemon for x in threading.enumerate()
                                           if x is not threading.main_thread())


def test_a_run_loaded_through_the_copy_is_the_run_loaded_alone(always, monkeypatch):
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", "")
    both = load_profile([str(MPI4)], use_cache=False)
    monkeypatch.setenv("LEGATE_PROF_WORKERS", "1")
    alone = load_profile([str(MPI4)], use_cache=False)
    for c in alone.items:
        assert np.array_equal(both.items[c], alone.items[c]), c
    assert both.names == alone.names and both.ops.keys() == alone.ops.keys()
    assert [str(w) for w in both.warnings] == [str(w) for w in alone.warnings]
