"""The msgpack bundle and the cache of built timelines that `view` keeps."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from legate_prof.store.bundle_file import read_bundle
from legate_prof.store.bundle import write_bundle
from legate_prof.store.cache import entry_path
from legate_prof.errors import ProfileError
from legate_prof.load.loader import load_profile
from legate_prof.query.summary import average_utilization
from legate_prof.query.level_of_detail import draw_rows


def test_bundle_round_trips_the_model(synthetic_8, tmp_path):
    model = load_profile(synthetic_8)
    out = tmp_path / "run.lpbundle"
    write_bundle(model, out)
    again = load_profile([out])
    for table in ("items", "waits", "transfers", "ops"):
        for k, v in getattr(model, table).items():
            assert np.array_equal(v, getattr(again, table)[k]), (table, k)
    assert again.names == model.names and again.lanes["title"] == model.lanes["title"]
    t0, t1 = model.time_range()
    for key in model.utilization_steps:
        assert np.allclose(average_utilization(model, key[1], key[0], t0, t1, 100),
                           average_utilization(again, key[1], key[0], t0, t1, 100))
    lane = model.lanes_of("cpu", 3)[1]
    a = draw_rows(model, lane, t0, t1, 700)
    b = draw_rows(again, lane, t0, t1, 700)
    assert [len(r.box_item) for r in a] == [len(r.box_item) for r in b]


def test_view_builds_unstacked_and_keeps_a_stacked_cache_entry(synthetic_8, tmp_path,
                                                              monkeypatch):
    """`view` builds raw logs unstacked (lanes stacked when drawn) and its cache entry is
    written stacked, column by column: it reopens with every lane ready to draw, as a
    stacked build; a damaged unstacked bundle is refused like any other."""
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(tmp_path / "cache"))
    shown = load_profile(synthetic_8, use_cache=True, ranked=True)
    assert not shown.stacked
    entry = entry_path(list(map(str, synthetic_8)))
    assert entry.exists()
    built = load_profile(synthetic_8)
    for ranked in (True, False):
        reopened = load_profile(synthetic_8, use_cache=True, ranked=ranked)
        assert reopened.stacked and reopened._ix.dur_perm is not None  # stored, not rebuilt
        _same_model_columns(reopened, built)
        ia, ib = reopened.stored_indexes(), built.stored_indexes()
        assert all(np.array_equal(x, y) for x, y in zip(ia, ib))
    whole = load_profile(synthetic_8, stack=False)
    # an unstacked bundle whose items left their order is damaged, not drawn wrong
    items = dict(whole.items, row=whole.items["row"].copy())
    items["row"][5] = 1
    write_bundle(whole.evolve(items=items), tmp_path / "moved.lpbundle", indexes=False)
    with pytest.raises(ProfileError, match="unstacked items out of their order"):
        read_bundle(tmp_path / "moved.lpbundle")
    lo, hi = whole.lane_range(int(np.argmax(np.bincount(whole.items["lane"]))))
    items = {c: a.copy() for c, a in whole.items.items()}
    for a in items.values():  # a lane's items in reverse: its starts out of order
        a[lo:hi] = a[lo:hi][::-1].copy()
    write_bundle(whole.evolve(items=items), tmp_path / "shuffled.lpbundle", indexes=False)
    with pytest.raises(ProfileError, match="unstacked items out of their order"):
        read_bundle(tmp_path / "shuffled.lpbundle")


def _same_model_columns(a, b):
    for table in ("items", "waits", "transfers", "ops"):
        for k, v in getattr(b, table).items():
            assert np.array_equal(v, getattr(a, table)[k]), (table, k)


def test_convert_cli_and_stats_on_bundle(synthetic_8, tmp_path):
    out = tmp_path / "run.lpbundle"
    run = lambda *a: subprocess.run([sys.executable, "-m", "legate_prof", *map(str, a)],
                                    capture_output=True, text=True)
    p = run("convert", *synthetic_8, "-o", out)
    assert p.returncode == 0, p.stderr
    s1 = json.loads(run("stats", "--json", *synthetic_8).stdout)
    s2 = json.loads(run("stats", "--json", out).stdout)
    s1.pop("files"), s2.pop("files")
    assert s1 == s2


def test_damaged_bundle_is_a_one_line_error(tmp_path, synthetic_8):
    out = tmp_path / "run.lpbundle"
    write_bundle(load_profile(synthetic_8[:1]), out)
    data = out.read_bytes()
    out.write_bytes(data[: len(data) // 2])
    with pytest.raises(ProfileError, match="damaged bundle"):
        read_bundle(out)


@pytest.mark.parametrize("command", ["stats", "critical", "insights"])
def test_the_first_command_to_keep_a_timeline_says_where(tmp_path, command):
    """`stats`, `critical` and `insights` made the cache folder for their kept answers before
    the timeline's entry was looked up, so the note for its first use was never said (a
    review): up to 2 GiB kept without a word. Said once; the next command says nothing."""
    import subprocess
    import sys
    sample = Path(__file__).parents[1] / "fixtures" / "real" / "legate26.06_cpu2_myprof_0.prof"
    env = dict(os.environ, LEGATE_PROF_CACHE_DIR=str(tmp_path / "cache"))

    def said():
        r = subprocess.run([sys.executable, "-m", "legate_prof", command, str(sample)],
                           capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        return r.stderr.count("keeping built timelines in")
    assert said() == 1 and (tmp_path / "cache").is_dir()
    assert said() == 0


def test_view_cache_is_used_then_rebuilt_when_stale(tmp_path, monkeypatch, capsys):
    from fixtures.synthetic import generate
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(tmp_path / "cache"))
    paths = generate(tmp_path / "p", ranks=2, items=3000, seed=3)
    before = {p: (os.path.getmtime(p), Path(p).read_bytes()) for p in paths}
    m1 = load_profile(paths, use_cache=True)
    entry = entry_path(paths)
    assert entry.exists() and entry.parent == tmp_path / "cache"
    assert "keeping built timelines in" in capsys.readouterr().err  # said once, the first time
    m2 = load_profile(paths, use_cache=True)
    assert m2.n_items == m1.n_items
    assert "keeping built timelines" not in capsys.readouterr().err
    assert {p: (os.path.getmtime(p), Path(p).read_bytes()) for p in paths} == before
    assert not list((tmp_path / "p").glob(".legate_prof*"))  # nothing beside the user's data
    # the data changes: the key changes, the cache is rebuilt
    generate(tmp_path / "p", ranks=2, items=4000, seed=3)
    m3 = load_profile(paths, use_cache=True)
    assert m3.n_items == 4000 and entry_path(paths) != entry
    # a damaged entry is dropped, said, and rebuilt
    c = entry_path(paths)
    c.write_bytes(b"LPBUNDLEgarbage")
    m4 = load_profile(paths, use_cache=True)
    assert "rebuilding" in capsys.readouterr().err
    assert m4.n_items == 4000 and read_bundle(c).n_items == 4000


def test_cache_entry_changed_in_place_is_fully_checked_again(tmp_path, monkeypatch, capsys):
    """An unchanged entry (its stamp matches) skips the per-item value checks; any write to
    it, even one that keeps its size and mtime, changes its ctime: the values are checked
    again, the damage is found and the timeline rebuilt."""
    from fixtures.synthetic import generate
    from legate_prof.store import bundle_check
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(tmp_path / "cache"))
    paths = generate(tmp_path / "p", ranks=1, items=3000, seed=5)
    built = load_profile(paths, use_cache=True)
    entry = entry_path(paths)
    assert entry.with_suffix(".checked").exists()
    checked = []
    real = bundle_check._check_item_values
    monkeypatch.setattr(bundle_check, "_check_item_values",
                        lambda *a: (checked.append(1), real(*a)))
    again = load_profile(paths, use_cache=True)
    assert checked == [] and np.array_equal(again.items["lane"], built.items["lane"])
    # every item's lane index set past the lane table, in place, size and mtime kept
    doc = read_bundle(entry)
    lane = doc.items["lane"]
    raw = bytearray(entry.read_bytes())
    needle = np.ascontiguousarray(lane).tobytes()
    at = raw.find(needle)
    assert at > 0
    raw[at:at + len(needle)] = np.full(len(lane), 10**6, np.int32).tobytes()
    st = os.stat(entry)
    del doc, lane
    with open(entry, "r+b") as f:
        f.write(raw)
    os.utime(entry, ns=(st.st_atime_ns, st.st_mtime_ns))
    capsys.readouterr()
    rebuilt = load_profile(paths, use_cache=True)
    assert checked, "the changed entry's values were not checked"
    assert "rebuilding" in capsys.readouterr().err
    assert np.array_equal(rebuilt.items["lane"], built.items["lane"])


def test_replaced_file_with_same_size_and_mtime_is_not_served_stale(tmp_path, monkeypatch):
    from fixtures.synthetic import generate
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(tmp_path / "cache"))
    a = generate(tmp_path / "a", ranks=1, items=3000, seed=1)[0]
    b = generate(tmp_path / "b", ranks=1, items=3000, seed=2)[0]
    st = os.stat(a)
    first = load_profile([a], use_cache=True)
    data = Path(b).read_bytes()[: st.st_size].ljust(st.st_size, b"\0")
    Path(a).write_bytes(data)  # other content, same size ...
    os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns))  # ... and the same mtime
    again = load_profile([a], use_cache=True)
    assert not np.array_equal(again.items["start"][:100], first.items["start"][:100])


def test_cache_is_bounded_least_recently_used_first(tmp_path):
    from legate_prof.store.cache import evict
    d = tmp_path / "c"
    d.mkdir()
    from legate_prof.store.bundle_file import BUNDLE_MAGIC
    names = [f"{i:032x}.lpbundle" for i in range(3)]  # (named as the cache names its entries)
    for name, age in zip(names, (300, 100, 200)):
        p = d / name
        p.write_bytes(BUNDLE_MAGIC + b"x" * 992)
        os.utime(p, (1_700_000_000 - age, 1_700_000_000 - age))
    assert evict(d, 2000) == 2000
    assert sorted(p.name for p in d.iterdir()) == names[1:]


def test_cache_can_be_turned_off(tmp_path, monkeypatch):
    from fixtures.synthetic import generate
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", "")
    paths = generate(tmp_path / "p", ranks=1, items=500, seed=1)
    load_profile(paths, use_cache=True)
    assert entry_path(paths) is None


def test_bundle_keeps_the_extent_and_coarse_step_indexes(synthetic_8, tmp_path):
    """A reopened bundle answers the time range and searches its big step functions without
    reading every page of the items' times or of the steps (stored, then adopted); a damaged
    stored index is found by the full check."""
    from legate_prof.model.intervals import StepIntegral
    model = load_profile(synthetic_8)
    out = tmp_path / "run.lpbundle"
    write_bundle(model, out)
    again = read_bundle(out)
    assert again._ix.extent == (int(model.items["start"].min()), int(model.items["stop"].max()))
    assert again.time_range() == model.time_range()
    big = [s for s in again.utilization_steps.values() if len(s.t) >= StepIntegral.COARSE_MIN]
    assert big, "the profile has no step function big enough to test"
    for s in big:
        assert s._coarse is not None and np.array_equal(s._coarse, s.t[::StepIntegral.BLOCK])
    t0, t1 = model.time_range()
    for key, s in model.utilization_steps.items():
        assert np.allclose(average_utilization(model, key[1], key[0], t0, t1, 333),
                           average_utilization(again, key[1], key[0], t0, t1, 333))
    # one coarse index damaged in place: the full check refuses the bundle
    coarse = big[0]._coarse
    raw = bytearray(out.read_bytes())
    at = raw.find(coarse.tobytes())
    assert at > 0
    raw[at:at + 8] = np.float64(-1.0).tobytes()
    del again, big, coarse
    damaged = tmp_path / "damaged.lpbundle"
    damaged.write_bytes(bytes(raw))
    with pytest.raises(ProfileError, match="coarse index"):
        read_bundle(damaged)


def test_bundle_keeps_sampled_integrals_that_answer_a_whole_runs_bins(synthetic_8, tmp_path,
                                                                      monkeypatch):
    """A bundle with indexes keeps the sampled integral of each big step function (the
    ranks' own and the all-ranks sums and unions it stores): reopened, a view's bins of a
    multiple of its cell are read from it, equal to the bit to the search of a bundle without
    them; a damaged one is refused (its values by the full check, its cells by any)."""
    from legate_prof.model.intervals import StepIntegral
    from legate_prof.query.source import ProfileSource
    monkeypatch.setattr(StepIntegral, "SAMPLED_CELLS", 64)  # (this profile's steps are small)
    monkeypatch.setattr(StepIntegral, "SAMPLED_MIN", 256)
    model = load_profile(synthetic_8)
    out, plain = tmp_path / "run.lpbundle", tmp_path / "plain.lpbundle"
    write_bundle(model, out)
    again = read_bundle(out)
    with monkeypatch.context() as m:
        m.setattr(StepIntegral, "SAMPLED_MIN", 1 << 60)  # (none kept)
        write_bundle(model, plain)
    searched = read_bundle(plain)
    steps = list(again.utilization_steps.items()) + [
        ((None, g), s) for g, s in again._ix.all_ranks_steps.items() if s is not None]
    sampled = [(k, s) for k, s in steps if s._sampled is not None]
    assert {k[0] is None for k, _ in sampled} == {True, False}, "no step big enough to test"
    assert all(s._sampled is None for s in searched.utilization_steps.values())
    src, plain_src = ProfileSource(again), ProfileSource(searched)
    t0, t1 = model.time_range()
    for (rank, group), s in sampled:
        cell = s._sampled[0]
        for bin_ns in (cell, 4 * cell):
            a, b = np.floor(t0 / bin_ns) - 1, np.ceil(t1 / bin_ns) + 1
            assert src.summary_at_hand(group, rank, bin_ns, int(b - a))
            assert not plain_src.summary_at_hand(group, rank, bin_ns, int(b - a))
            got = average_utilization(again, group, rank, a * bin_ns, b * bin_ns, int(b - a))
            want = average_utilization(searched, group, rank, a * bin_ns, b * bin_ns,
                                       int(b - a))
            assert np.array_equal(got, want), (rank, group, bin_ns)
    # one sampled value damaged in place: the full check refuses the bundle
    values = sampled[0][1]._sampled[2]
    raw = bytearray(out.read_bytes())
    at = raw.find(values[len(values) // 2:].tobytes())
    assert at > 0
    raw[at:at + 8] = np.float64(-1.0).tobytes()
    damaged = tmp_path / "damaged.lpbundle"
    damaged.write_bytes(bytes(raw))
    with pytest.raises(ProfileError, match="sampled integral"):
        read_bundle(damaged)
    read_bundle(damaged, check="structure")  # (a value only the full check reads)
    # its cells other than the step's times make: refused by any check
    monkeypatch.setattr(StepIntegral, "SAMPLED_CELLS", 128)
    for check in (True, "structure"):
        with pytest.raises(ProfileError, match="sampled integral"):
            read_bundle(out, check=check)
    del again, searched, sampled, values, src, plain_src


def test_eviction_removes_entries_half_written_by_a_killed_process(tmp_path):
    import time
    from legate_prof.store.cache import STALE_TMP_S, evict
    from legate_prof.store.bundle_file import BUNDLE_MAGIC
    old = tmp_path / f".{1:032x}.lpbundle.x1y2.tmp"
    new = tmp_path / f".{2:032x}.lpbundle.z3w4.tmp"
    for p in (old, new):
        p.write_bytes(BUNDLE_MAGIC + b"x" * 92)
    past = time.time() - STALE_TMP_S - 60
    os.utime(old, (past, past))
    evict(tmp_path, 1 << 30)
    assert not old.exists() and new.exists()  # another process may be writing that one


def test_view_closed_while_its_cache_entry_is_written_ends_and_leaves_no_part_of_it(
        tmp_path, sample_profile):
    """`view` writes its cache entry after the first frame; closed while it is written (and
    the findings still run), the process ends at once, without waiting for the entry: the
    writer is stopped and no part of an entry is left (a later `view` writes it; issue 36:
    close means gone)."""
    cache = tmp_path / "cache"
    child = tmp_path / "close_after_frame.py"
    child.write_text(
        "import sys, time\n"
        "from PySide6 import QtCore, QtWidgets\n"
        "app = QtWidgets.QApplication(['legate_prof'])\n"
        "from legate_prof import cli\nfrom legate_prof.store import cache\nfrom legate_prof.analyze import insights\n"
        "from legate_prof.viewer.app import MainWindow\n"
        "store = cache.store_cached\n"
        "cache.store_cached = lambda *a, **k: (time.sleep(1.5), store(*a, **k))[1]\n"
        "find = insights.find_insights\n"
        "insights.find_insights = lambda m: (time.sleep(5), find(m))[1]\n"
        "def poll():\n"
        "    for w in QtWidgets.QApplication.topLevelWidgets():\n"
        "        if isinstance(w, MainWindow) and w.isVisible() and w.timeline is not None \\\n"
        "                and not w.showing_ranks_so_far:\n"
        "            w.close()\n"
        "t = QtCore.QTimer(); t.timeout.connect(poll); t.start(10)\n"
        "sys.exit(cli.main(['view', '--quiet', sys.argv[1]]))\n")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", LEGATE_PROF_CACHE_DIR=str(cache))
    p = subprocess.run([sys.executable, str(child), str(sample_profile)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    # (the critical path's thread still working: no "Signal source has been deleted")
    assert "Traceback" not in p.stderr and "RuntimeError" not in p.stderr, p.stderr[-2000:]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LEGATE_PROF_CACHE_DIR", str(cache))
        entry = entry_path([str(sample_profile)])
    assert not entry.exists()
    assert not list(cache.glob(".*.tmp")) and not list(cache.glob("*.checked"))


def test_all_ranks_summaries_are_summed_as_they_are_written(synthetic_8, tmp_path):
    """A bundle keeps each group's all-ranks step function (a frame reads one, not every
    rank's), summed while it is written and not kept by the model after (at 10 M items they
    are as big as the ranks' own); the summaries read from it are the ranks' summed."""
    model = load_profile(synthetic_8)
    write_bundle(model, tmp_path / "run.lpbundle")
    assert not model._ix.all_ranks_steps  # nothing held once written
    again = read_bundle(tmp_path / "run.lpbundle")
    groups = {g for _, g in model.utilization_steps}
    assert set(again._ix.all_ranks_steps) == groups and "cpu" in groups
    t0, t1 = model.time_range()
    for g in groups:
        assert np.allclose(average_utilization(again, g, None, t0, t1, 300),
                           average_utilization(model, g, None, t0, t1, 300), rtol=1e-9, atol=1e-12), g
        stored = again._ix.all_ranks_steps[g]
        summed = model.all_ranks_step(g)
        assert np.array_equal(np.unique(stored.t), summed.t)
        assert np.allclose(stored.integral_at(summed.t), summed.integral)


def test_a_cached_open_writes_nothing_unless_its_last_use_is_old_or_its_values_unchecked(
        tmp_path, monkeypatch):
    """A cached open records its use (the entry's mtime, for eviction; then its stamp, which
    holds the ctime that changes) only when the last recorded use is older than
    ``USED_RESOLUTION_S``; an entry whose values had to be checked in full gets its stamp
    whatever its age, so the next open checks only its structure."""
    from fixtures.synthetic import generate
    from legate_prof.store import bundle_check, cache
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(tmp_path / "cache"))
    paths = generate(tmp_path / "p", ranks=1, items=2000, seed=3)
    load_profile(paths, use_cache=True)
    entry = entry_path(paths)
    stamp = entry.with_suffix(".checked")

    def seen():
        return os.stat(entry).st_mtime_ns, os.stat(stamp).st_ino, os.stat(stamp).st_mtime_ns
    before = seen()
    load_profile(paths, use_cache=True)
    assert seen() == before  # used just now: nothing written
    old = time.time() - cache.USED_RESOLUTION_S - 60
    os.utime(entry, (old, old))
    assert not cache._stamp_matches(entry)  # (utime changed the ctime the stamp holds)
    checked = []
    real = bundle_check._check_item_values
    monkeypatch.setattr(bundle_check, "_check_item_values",
                        lambda *a: (checked.append(1), real(*a)))
    load_profile(paths, use_cache=True)
    assert checked and os.stat(entry).st_mtime > old + 60  # checked in full, use recorded
    assert cache._stamp_matches(entry)
    # a stamp gone (another version's, a crash): checked in full, stamped, the use kept
    stamp.unlink()
    mtime = os.stat(entry).st_mtime_ns
    checked.clear()
    load_profile(paths, use_cache=True)
    assert checked and cache._stamp_matches(entry) and os.stat(entry).st_mtime_ns == mtime
    checked.clear()
    load_profile(paths, use_cache=True)
    assert not checked


def test_a_relative_xdg_cache_home_is_ignored(monkeypatch, tmp_path):
    """XDG_CACHE_HOME=relative/path put the cache in the folder the command ran in (a
    received run's, a stranger's-folder review): the XDG spec says a relative one is
    ignored; the home's .cache is used."""
    from legate_prof.store.cache import cache_dir
    monkeypatch.delenv("LEGATE_PROF_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")
    assert cache_dir() == tmp_path / ".cache" / "legate_prof"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "legate_prof"


def test_a_bundle_naming_a_rank_past_a_node_id_is_refused(tmp_path):
    """A fuzzed bundle (seed 75) gave one lane the rank 4,194,304: the statistics of its 188
    items sized per-rank arrays by it (35 MiB). A rank is a node id, 16 bits of a Realm
    id: a bundle with a rank past that is damaged, one line, as the CLI says it."""
    import gzip
    src = Path(__file__).parent / "fuzz_regressions" / "rank_past_a_node_id.lpbundle.gz"
    path = tmp_path / "legate_0.lpbundle"
    path.write_bytes(gzip.decompress(src.read_bytes()))
    r = subprocess.run([sys.executable, "-m", "legate_prof", "stats", str(path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "damaged bundle (lane rank out of range)" in r.stderr, r.stderr
