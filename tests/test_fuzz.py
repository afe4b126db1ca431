"""Thousands of damaged inputs of every format: each is read, a warning or one ProfileError.

Fixed seeds, so a failure here is reproducible with ``benchmarks/fuzz.py --seed S --only I``.
The long run (50,000+ inputs, each batch in its own process so signals and hangs are caught)
is ``benchmarks/fuzz.py``; its figures are in docs/robustness.md.
"""

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from fixtures.fuzzing import (FORMATS, HOSTILE, mutated, peak_rss, run_input, seed_files,
                              write_outputs)

SEED = 20261122
COUNT = 3000
REGRESSIONS = Path(__file__).with_name("fuzz_regressions")


@pytest.fixture(scope="module")
def seeds():
    return seed_files()


def test_thousands_of_mutated_inputs_give_ok_warning_or_one_error(tmp_path, seeds):
    outcomes, crashes = Counter(), []
    for i in range(COUNT):
        fmt, how, data = mutated(SEED, i, seeds)
        p = tmp_path / f"input{i % 8}"
        p.write_bytes(data)
        outcome, detail = run_input(p, fmt)
        outcomes[outcome] += 1
        if outcome == "crash":
            crashes.append(f"#{i} {fmt} {how}: {detail}")
    assert not crashes, f"{len(crashes)} crashes, e.g. " + "; ".join(crashes[:5])
    # the mutations do reach every outcome (a fuzzer that only makes errors tests little)
    assert outcomes["ok"] > COUNT * 0.05 and outcomes["warning"] > COUNT * 0.1
    assert outcomes["error"] > COUNT * 0.1


def test_damaged_inputs_that_still_load_also_render(tmp_path, seeds):
    """Painting must survive whatever loading lets through (an exception in paint kills Qt)."""
    from legate_prof.load.loader import load_profile
    from legate_prof.viewer.screenshot import render_screenshot
    rendered = 0
    for i in range(0, COUNT, 7):
        fmt, how, data = mutated(SEED + 1, i, seeds)
        if fmt in ("garbage", "console"):
            continue
        p = tmp_path / "input"
        p.write_bytes(data)
        if run_input(p, fmt)[0] not in ("ok", "warning"):
            continue
        out = tmp_path / "shot.png"
        render_screenshot(load_profile([p]), out, width=400, height=260,
                          expand=["cpu", "utility", "system"])
        assert out.stat().st_size > 0, f"#{i} {fmt} {how}"
        rendered += 1
        if rendered == 40:
            break
    assert rendered == 40


def test_hostile_inputs_of_every_kind_give_ok_warning_or_one_error(tmp_path, seeds):
    """Gzip bombs and members, lines of 200,000 characters, msgpack lengths of GiB and deep
    nesting, preamble lines of 100 KB (the long run mixes them in; here each kind thrice)."""
    import random
    rng = random.Random(SEED)
    for fmt, mutators in HOSTILE.items():
        for m in mutators:
            for k in range(3):
                p = tmp_path / f"{m.__name__}{k}"
                p.write_bytes(m(rng, seeds[fmt]))
                outcome, detail = run_input(p, fmt)
                assert outcome != "crash", f"{m.__name__} #{k}: {detail}"


def test_damaged_inputs_that_load_go_through_every_output(tmp_path, seeds):
    """The report and each export of what loading lets through (the long run: every input)."""
    done = Counter()
    for i in range(600):
        fmt, how, data = mutated(SEED + 3, i, seeds)
        if fmt == "garbage" or done[fmt] == 2:
            continue
        p = tmp_path / "input"
        p.write_bytes(data)
        if run_input(p, fmt)[0] not in ("ok", "warning"):
            continue
        outcome, detail = write_outputs(p, fmt, tmp_path, picture=False)
        assert outcome != "crash", f"#{i} {fmt} {how}: {detail}"
        done[fmt] += 1
    assert sorted(done.values()) == [2] * (len(FORMATS) - 1)


def test_cli_on_damaged_inputs_exits_0_or_2_without_traceback(tmp_path, seeds):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    for i in range(len(FORMATS) * 2):
        fmt, how, data = mutated(SEED + 2, i, seeds)
        p = tmp_path / f"input{i}"
        p.write_bytes(data)
        before = p.read_bytes()
        for cmd in (["stats"], ["screenshot", "-o", str(tmp_path / "s.png"), "--width", "300",
                                "--height", "200"]):
            if fmt == "console":
                cmd = cmd + ["--log"]
            r = subprocess.run([sys.executable, "-m", "legate_prof", *cmd, str(p)]
                               if fmt != "console" else
                               [sys.executable, "-m", "legate_prof", *cmd, str(p),
                                str(Path(__file__).parents[1] / "fixtures" / "fuzz_seeds" /
                                    "oom.runtime.prof")],
                               capture_output=True, text=True, timeout=120, env=env)
            assert r.returncode in (0, 2), f"#{i} {fmt} {how} {cmd[0]}: {r.returncode}"
            assert "Traceback" not in r.stderr, f"#{i} {fmt} {how}: {r.stderr[-500:]}"
        assert p.read_bytes() == before


REGRESSION_INPUTS = sorted(p for p in REGRESSIONS.rglob("*") if p.is_file()
                           and p.suffix != ".json")


@pytest.mark.parametrize("path", REGRESSION_INPUTS,
                         ids=lambda p: str(p.relative_to(REGRESSIONS)))
def test_regression_inputs(path, tmp_path):
    """Inputs that once crashed or hung a reader, or cost too much memory
    (docs/robustness.md), read in bounded time and memory; those the long fuzz found (not
    under ``readers/``) that load go through every output as there (the report, each
    export), where some crashed (`time_before_zero.prof`: the critical path).

    ``readers/`` holds inputs that crashed the first readers (kept gzipped, one per crash
    site); they are unpacked to their own name first, so each meets the reader it broke.
    """
    import gzip
    name = path.name
    if name.endswith(".gz"):
        name = name[:-3]
        (tmp_path / name).write_bytes(gzip.decompress(path.read_bytes()))
        path = tmp_path / name
    fmt = "bundle" if name.endswith(".lpbundle") else (
        "runtime" if ".runtime." in name else "legion")
    (outcome, detail), added = peak_rss(run_input, path, fmt)
    assert outcome in ("ok", "warning", "error"), detail
    # small files all: none may cost much memory (a gzip bomb after a log took 145 MiB)
    assert added is None or added < 64 << 20, f"{added >> 20} MiB"
    if outcome != "error" and REGRESSIONS / "readers" not in path.parents:
        out = tmp_path / "out"
        out.mkdir()
        outcome, detail = write_outputs(path, fmt, out, picture=False)
        assert outcome in ("ok", "error"), detail
