"""Ranks built in parallel processes, per-rank bundles: the same model as one build of all."""

import shutil
from pathlib import Path

import numpy as np
import pytest

from legate_prof.loader import load_profile


def _same_model(a, b):
    for table in ("items", "waits", "transfers", "ops", "procs", "mems", "lanes"):
        ta, tb = getattr(a, table), getattr(b, table)
        assert ta.keys() == tb.keys(), table
        for k in ta:
            if isinstance(ta[k], list):
                assert ta[k] == tb[k], (table, k)
            else:
                assert np.array_equal(ta[k], tb[k]), (table, k)
                assert ta[k].dtype == tb[k].dtype, (table, k)
    assert a.names == b.names and a.provenances == b.provenances
    assert a.busy_ns == b.busy_ns and a.variant_by_name_group == b.variant_by_name_group
    assert a.ranks == b.ranks and sorted(a.warnings) == sorted(b.warnings)
    assert a.utilization_steps.keys() == b.utilization_steps.keys()
    for k, s in a.utilization_steps.items():
        assert np.array_equal(s.t, b.utilization_steps[k].t)
        assert np.allclose(s.integral, b.utilization_steps[k].integral)


@pytest.mark.parametrize("stack", [True, False])
def test_ranks_built_in_parallel_give_the_model_of_one_build(synthetic_8, stack):
    serial = load_profile(synthetic_8, workers=1, stack=stack)
    parallel = load_profile(synthetic_8, workers=2, stack=stack)
    _same_model(serial, parallel)
    assert parallel.stacked is stack


def test_per_rank_bundles_open_as_one_profile(synthetic_8, tmp_path):
    """`convert` runs per rank file where it lies; the bundles open together as the profile."""
    from legate_prof.cli import main
    bundles = []
    for p in map(Path, synthetic_8):
        out = tmp_path / (p.name.removesuffix(".prof") + ".lpbundle")
        assert main(["convert", str(p), "-o", str(out)]) == 0
        bundles.append(out)
    whole = load_profile(synthetic_8, workers=1)
    merged = load_profile(bundles[::-1])  # any order
    _same_model(whole, merged.evolve(sources=whole.sources))
    # a directory of them too
    assert load_profile([tmp_path]).n_items == whole.n_items


def test_two_files_of_one_rank_are_built_together(synthetic_8, tmp_path):
    """Lanes of one rank in two files cannot be concatenated: the files are built together
    (and the user is warned), exactly as without workers."""
    other = tmp_path / "again.prof"
    shutil.copy(synthetic_8[0], other)
    with open(other, "ab") as f:
        f.write(b"\0")  # not a byte-identical copy, so it is not dropped as a duplicate
    files = list(synthetic_8[:2]) + [other]
    serial = load_profile(files, workers=1)
    parallel = load_profile(files, workers=2)
    assert any("rank 0 is in 2 files" in w for w in parallel.warnings)
    _same_model(serial, parallel)
