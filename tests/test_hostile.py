"""A profile from a stranger (issue 27): inputs made to hurt, not damaged by accident.

Each test holds one attack of docs/robustness.md's table: patterns fed a megabyte of their worst
case, streams longer than one buffer, gzip bombs, outputs over a user's folder, temporaries
left by a killed writer, a full disk, a cache entry swapped under us, escapes for a terminal.
"""

import os
import sys
from pathlib import Path

import pytest

from fixtures.hostile import oom_cases, preamble_cases

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "fixtures" / "real" / "legate26.06_cpu2_myprof_0.prof"


# -- patterns: linear on anything -----------------------------------------------------------------
@pytest.mark.parametrize("name, text, check", oom_cases(1 << 20), ids=lambda c: c
                         if isinstance(c, str) and len(c) < 40 else "")
def test_each_console_log_pattern_reads_a_megabyte_of_its_worst_case(name, text, check):
    """The OOM report's patterns were quadratic on a long run of spaces (80k: 15.6 s); now
    each is bounded or unambiguous and lines are cut at MAX_LINE, so a megabyte is read (in
    milliseconds: benchmarks/bench_hostile.py) and gives what the check says."""
    from legate_prof.build.oom_report import parse_oom_report
    assert check(parse_oom_report(text)), name


def test_a_console_log_of_long_blank_lines_is_read_by_stats(tmp_path):
    """The issue's reproduction: a 300 KB ``--log`` ran for more than a minute."""
    from fixtures.hostile import HEAD
    from legate_prof.load.loader import load_profile
    log = tmp_path / "run.log"
    log.write_text("legate\n" + HEAD + ("LogicalStore allocated at x" + " " * 40_000 + "y\n") * 8)
    model = load_profile([ROOT / "fixtures" / "fuzz_seeds" / "oom.runtime.prof", log])
    assert model.oom_instances == [] and any(m["kind"] == "oom" for m in model.markers)


@pytest.mark.parametrize("name, data", preamble_cases(1 << 20),
                         ids=lambda c: c if isinstance(c, str) else "")
def test_a_preamble_line_of_a_megabyte_is_one_error(name, data, tmp_path):
    from legate_prof.errors import ProfileError
    from legate_prof.read.legion_log import LegionProfReader
    p = tmp_path / "legate_0.prof"
    p.write_bytes(data)
    with pytest.raises(ProfileError, match="damaged preamble line 3"):
        LegionProfReader(p).read()


# -- streams of any length ---------------------------------------------------------------------------
def test_a_runtime_stream_over_100_mib_reads_fully(tmp_path):
    """The issue's reproduction: valid events past msgpack's one-buffer limit (100 MiB) were a
    BufferFull traceback; now read a megabyte at a time, every event kept."""
    from fixtures.hostile import write_long_stream
    from legate_prof.read.runtime_stream import read_runtime_stream
    p = tmp_path / "legate_0.runtime.prof"
    n_ops = write_long_stream(p, mib=101)
    assert p.stat().st_size > 100 << 20
    s = read_runtime_stream(p)
    assert (len(s.ops), s.ended, s.warnings) == (n_ops, True, [])
    assert len({id(o[2]) for o in s.ops[:1000]}) == 40  # sites shared, not one copy per event


def test_an_event_larger_than_the_limit_keeps_the_events_before_it(tmp_path, monkeypatch):
    import msgpack
    from legate_prof.read import runtime_stream
    monkeypatch.setattr(runtime_stream, "MAX_EVENT", 2 << 20)
    pack = msgpack.Packer(use_bin_type=True).pack
    p = tmp_path / "legate_0.runtime.prof"
    p.write_bytes(runtime_stream.STREAM_MAGIC + pack({"rank": 0, "start_ns": 1})
                  + pack(["op", 5, "a", "x.py:1"]) + pack(["op", 6, "b", "y" * (3 << 20)])
                  + pack(["end", 7]))
    s = runtime_stream.read_runtime_stream(p)
    assert [o[1] for o in s.ops] == ["a"] and not s.ended
    assert "larger than 2 MiB" in str(s.warnings[0])


# -- gzip bombs --------------------------------------------------------------------------------------
def _zeros_gzip(mib, members=1):
    """``members`` gzip members of ``mib`` MiB of zeros each (zeros inflate about 1000x)."""
    import gzip
    one = gzip.compress(bytes(mib << 20), compresslevel=9, mtime=0)
    return one * members


def test_a_gzip_bomb_is_one_line_naming_the_file_with_memory_bounded(tmp_path):
    """The issue's reproduction: 3.1 MB that inflate to 3 GiB made ``stats`` peak at 6.3 GB
    (a MemoryError traceback under a limit).  Now inflating stops at 32x the file (at least
    16 MiB), one line; the command runs under a 1.5 GiB address-space limit."""
    import resource
    import subprocess
    bomb = tmp_path / "legate_0.prof.gz"
    bomb.write_bytes(_zeros_gzip(1, members=3072))  # 3 GiB from ~3 MB, member after member
    assert bomb.stat().st_size < 4 << 20

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))
    r = subprocess.run([sys.executable, "-m", "legate_prof", "stats", str(bomb)],
                       capture_output=True, text=True, timeout=300, preexec_fn=limit,
                       env=dict(os.environ, LEGATE_PROF_CACHE_DIR="", OPENBLAS_NUM_THREADS="1"))
    errors = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(errors) == 1, r.stderr[-2000:]
    assert str(bomb) in errors[0] and "gzip bomb" in errors[0] and "32x" in errors[0]


def test_a_one_member_bomb_stops_at_the_floor(tmp_path):
    from legate_prof.errors import ProfileError
    from legate_prof.read.legion_log import MIN_GZIP_LIMIT, LegionProfReader
    bomb = tmp_path / "legate_0.prof.gz"
    bomb.write_bytes(_zeros_gzip(64))
    with pytest.raises(ProfileError, match=f"more than {MIN_GZIP_LIMIT:,} bytes"):
        LegionProfReader(bomb).read()


def test_honest_gzipped_logs_read_whole_and_damaged_ones_keep_what_inflates(tmp_path):
    """Many members (``cat a.gz b.gz``), a broken checksum (every byte still read), a cut."""
    import gzip
    from legate_prof.read.legion_log import LegionProfReader
    raw = SAMPLE.read_bytes()
    whole = LegionProfReader(SAMPLE).read()
    g = gzip.compress(raw, mtime=0)
    cases = {"split": gzip.compress(raw[:30000], mtime=0) + gzip.compress(raw[30000:], mtime=0),
             "checksum": g[:-8] + bytes([g[-8] ^ 0xFF]) + g[-7:], "cut": g[:len(g) // 2]}
    got = {}
    for name, data in cases.items():
        p = tmp_path / f"{name}.prof.gz"
        p.write_bytes(data)
        log = LegionProfReader(p).read()
        got[name] = (log.record_count, [w.problem[:39] for w in log.warnings])
    assert got["split"] == (whole.record_count, [])
    assert got["checksum"] == (whole.record_count, ["gzip data is damaged at compressed byte"])
    assert got["cut"][0] < whole.record_count and got["cut"][1][0].startswith("gzip stream is truncated")
