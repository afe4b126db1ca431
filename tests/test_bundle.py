"""The msgpack bundle and the cache `view` keeps beside raw logs."""

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from legate_prof.bundle import cache_locations, read_bundle, write_bundle
from legate_prof.errors import ProfileError
from legate_prof.loader import load_profile


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
        assert np.allclose(model.utilization(key[1], key[0], t0, t1, 100),
                           again.utilization(key[1], key[0], t0, t1, 100))
    lane = model.lanes_of("cpu", 3)[1]
    a = model.draw_list(lane, t0, t1, 700)
    b = again.draw_list(lane, t0, t1, 700)
    assert [len(r.box_item) for r in a] == [len(r.box_item) for r in b]


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


def test_view_cache_is_used_then_rebuilt_when_stale(tmp_path):
    from fixtures.synthetic import generate
    paths = generate(tmp_path / "p", ranks=2, items=3000, seed=3)
    before = {p: os.path.getmtime(p) for p in paths}
    m1 = load_profile(paths, use_cache=True)
    beside = cache_locations(paths)[0]
    assert beside.exists()
    m2 = load_profile(paths, use_cache=True)
    assert m2.n_items == m1.n_items
    assert {p: os.path.getmtime(p) for p in paths} == before  # inputs untouched
    # the data changes: the key changes, the cache is rebuilt
    time.sleep(0.01)
    generate(tmp_path / "p", ranks=2, items=4000, seed=3)
    m3 = load_profile(paths, use_cache=True)
    assert m3.n_items == 4000 and cache_locations(paths)[0] != beside
    # an unreadable cache file is dropped and rebuilt
    c = cache_locations(paths)[0]
    c.write_bytes(b"LPBUNDLEgarbage")
    m4 = load_profile(paths, use_cache=True)
    assert m4.n_items == 4000 and read_bundle(c).n_items == 4000


def test_cache_goes_to_user_dir_when_beside_is_not_writable(tmp_path, monkeypatch):
    from fixtures.synthetic import generate
    d = tmp_path / "data"
    paths = generate(d, ranks=1, items=500, seed=1)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (d / ".legate_prof_cache").write_text("not a directory")  # mkdir there fails, even as root
    first = load_profile(paths, use_cache=True)
    assert cache_locations(paths)[1].exists()
    assert load_profile(paths, use_cache=True).n_items == first.n_items
