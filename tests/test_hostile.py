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
