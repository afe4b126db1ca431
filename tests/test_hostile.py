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
