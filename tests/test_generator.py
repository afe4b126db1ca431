"""The generator writes what Legion writes: the reference profiler accepts it and agrees with us.

The reference binary is optional (it lives beside the repository); without it the tests that run
it skip, and ``test_generated_stats_match_committed_reference_golden`` still compares with the
reference's statistics committed by ``fixtures/make_goldens.py``.
"""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from fixtures.make_goldens import DEFAULT_BINARY, GENERATED, generated_golden_path
from fixtures.reference_stats import parse_statistics
from fixtures.synthetic import SCENARIOS, generate
from legate_prof.model.kinds import ItemKind
from legate_prof.load.loader import load_profile
from legate_prof.analyze.stats import compute_stats
from test_reference import _ours_by_kind, _reference_by_kind

BINARY = Path(os.environ.get("LEGION_PROF", DEFAULT_BINARY))
needs_reference = pytest.mark.skipif(
    not BINARY.exists(), reason="the reference legion_prof binary is not beside the repository")


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_generated_profile_reads_cleanly_with_every_kind(tmp_path, scenario):
    paths = generate(tmp_path, ranks=2, items=6000, seed=5, scenario=scenario)
    model = load_profile(paths)
    assert model.warnings == []
    kinds = set(np.unique(model.items["kind"]).tolist())
    assert {ItemKind.TASK, ItemKind.GPU_KERNEL, ItemKind.META, ItemKind.MAPPER_CALL,
            ItemKind.RUNTIME_CALL, ItemKind.COPY, ItemKind.FILL, ItemKind.INSTANCE} <= kinds
    if scenario != "efficient":
        assert model.n_items == 6000
    # every call is nested in the task whose fevent it carries: it is a wait of that task
    calls = np.isin(model.items["kind"], [ItemKind.MAPPER_CALL, ItemKind.RUNTIME_CALL])
    w = model.waits
    call_waits = np.isin(w["start"], model.items["start"][calls]) & (w["ready"] == w["end"])
    assert np.count_nonzero(call_waits) >= np.count_nonzero(calls)


def test_inefficient_scenario_has_the_guides_shapes(tmp_path):
    """Early wide kernels, then micro-kernels; tiny copies later; a framebuffer plateau."""
    model = load_profile(generate(tmp_path, ranks=1, items=20000, seed=2,
                                  scenario="inefficient"))
    it = model.items
    t_end = it["stop"].max()
    k = it["kind"] == ItemKind.GPU_KERNEL
    dur = it["stop"] - it["start"]
    early = k & (it["start"] < t_end / 8)
    late = k & (it["start"] > t_end / 4)
    assert np.median(dur[early]) > 20 * np.median(dur[late])
    assert np.count_nonzero(late) > 10 * np.count_nonzero(early)
    copies = np.flatnonzero((it["kind"] == ItemKind.COPY) & (it["start"] > t_end / 4))
    pos = np.searchsorted(model.transfers["item"], copies)
    assert np.median(model.transfers["size"][pos]) < 64 << 10
    fb = model.utilization_steps[(0, "framebuffer")]
    assert fb.peak_level() > 0.5 * fb.denominator


def test_generated_stats_match_committed_reference_golden():
    """Our stats on a generated profile equal the reference's statistics (committed)."""
    golden = generated_golden_path()
    paths = generate(GENERATED.workdir(), **GENERATED.kwargs)
    ref = _reference_by_kind(parse_statistics(golden.read_text()))
    ours = _ours_by_kind(compute_stats(load_profile(paths)))
    for key, rows in ref.items():
        assert ours[key]["count"] == sum(r["count"] for r in rows), key
        for f in ("total", "running"):
            want = sum(r[f + "_us"] for r in rows)
            tol = sum(r["precision"][f + "_us"] for r in rows) + 0.001 * ours[key]["count"]
            assert abs(ours[key][f + "_ns"] / 1e3 - want) <= tol, (key, f)


@needs_reference
@pytest.mark.parametrize("ranks", [1, 8])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_reference_accepts_generated_files_in_every_mode(tmp_path, ranks, scenario):
    paths = generate(tmp_path / "p", ranks=ranks, items=4000 * ranks, seed=1,
                     scenario=scenario)
    for mode, extra in (("statistics", []), ("dump", []),
                        ("trace", ["-o", str(tmp_path / "t.json")]),
                        ("legacy", ["-o", str(tmp_path / "legacy")])):
        p = subprocess.run([str(BINARY), mode, *extra, *paths], capture_output=True,
                           text=True, timeout=300)
        assert p.returncode == 0, f"{mode}: {p.stderr[-600:]}"
    assert (tmp_path / "t.json").stat().st_size > 0
    assert (tmp_path / "legacy" / "index.html").exists()
