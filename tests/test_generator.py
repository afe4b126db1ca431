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

from fixtures.make_goldens import DEFAULT_BINARY, GENERATED, GENERATED_8, generated_golden_path
from fixtures.reference_stats import parse_statistics
from fixtures.synthetic import SCENARIOS, generate
from legate_prof.model.kinds import ItemKind
from legate_prof.load.loader import load_profile
from legate_prof.analyze.stats import compute_stats
from test_reference import _assert_stats_agree, assert_utilization_is_the_references

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


@pytest.mark.parametrize("gen", [GENERATED, GENERATED_8], ids=lambda g: f"{g.kwargs['ranks']}ranks")
def test_generated_stats_match_committed_reference_golden(gen, tmp_path):
    """Our stats on a generated profile equal the reference's statistics (committed), in
    every kind: count, total, running, min, max — on 8 ranks too, with messages, their waits,
    the startup barrier, copies between nodes and skewed clocks."""
    paths = generate(tmp_path, **gen.kwargs)
    _assert_stats_agree(generated_golden_path(gen).read_text(),
                        compute_stats(load_profile(paths)))


def test_generated_ranks_have_the_traits_of_real_multi_rank_runs(tmp_path):
    """As the real runs (fixtures/real/mpi*): message meta-tasks sent by another node's task
    (spawn on the sender's clock), some appearing to be sent before they were created (clocks
    apart); the startup barrier message on every rank but 0, with a long wait; waits of
    meta-tasks and messages right after their record; the channel from a node to the next
    recorded at both ends."""
    from legate_prof.model.kinds import node_of_id
    from legate_prof.read.legion_log import LegionProfReader
    paths = generate(tmp_path, **GENERATED_8.kwargs)
    logs = [LegionProfReader(p).read() for p in paths]
    skewed, channels = 0, {}
    for node, log in enumerate(logs):
        names = {r["kind"]: r["name"] for r in log.table("MetaDesc") if r["message"]}
        m = log.table("MessageInfo")
        assert len(m) > 100
        creator_node = (m["creator"].astype(np.uint64) >> np.uint64(47)) & np.uint64(0xFFFF)
        assert not np.any(creator_node == node)
        skewed += int(np.sum(m["spawn"] > m["create"]))
        barrier = [k for k, x in enumerate(m["lg_id"].tolist())
                   if names[x] == "Startup Barrier Message"]
        assert len(barrier) == (node > 0)
        waits = log.table("MetaWaitInfo")
        assert len(waits) > 10
        # each wait right after a MetaInfo / MessageInfo of its kind (Legion writes them so)
        pos = {rec: log.positions(rec) for rec in ("MetaInfo", "MessageInfo", "MetaWaitInfo")}
        owner = {int(p): int(x) for rec in ("MetaInfo", "MessageInfo")
                 for p, x in zip(pos[rec], log.table(rec)["lg_id"])}
        for p, lg in zip(pos["MetaWaitInfo"], waits["lg_id"]):
            back = int(p) - 1
            while back not in owner:
                back -= 1
            assert owner[back] == int(lg)
        cii = log.table("CopyInstInfo")
        for s, d in zip(node_of_id(cii["src"]).tolist(), node_of_id(cii["dst"]).tolist()):
            if s != d:
                channels.setdefault((s, d), set()).add(node)
    assert skewed > 50
    assert all(recorders == {s, d} for (s, d), recorders in channels.items())
    assert len(channels) == 8


@needs_reference
@pytest.mark.parametrize("ranks", [1, 8])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_reference_accepts_generated_files_in_every_mode(tmp_path, ranks, scenario):
    paths = generate(tmp_path / "p", ranks=ranks, items=4000 * ranks, seed=1,
                     scenario=scenario)
    for mode, extra in (("statistics", []), ("dump", []), ("critical", []),
                        ("trace", ["-o", str(tmp_path / "t.json")]),
                        ("legacy", ["-o", str(tmp_path / "legacy")])):
        p = subprocess.run([str(BINARY), mode, *extra, *paths], capture_output=True,
                           text=True, timeout=300)
        assert p.returncode == 0, f"{mode}: {p.stderr[-600:]}"
    assert (tmp_path / "t.json").stat().st_size > 0
    assert (tmp_path / "legacy" / "index.html").exists()


@needs_reference
def test_generated_8_ranks_utilization_is_the_references(tmp_path):
    """Every step of the reference's utilization lines of a generated 8-rank profile (GPU,
    channels recorded at both ends, skewed clocks) is ours."""
    import gzip
    import json
    paths = generate(tmp_path / "p", **GENERATED_8.kwargs)
    p = subprocess.run([str(BINARY), "legacy", "-f", "-o", str(tmp_path / "legacy"), *paths],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-600:]
    steps = {}
    for f in sorted((tmp_path / "legacy" / "tsv").glob("* (*)_util.tsv")):
        rows = [ln.split("\t") for ln in f.read_text().splitlines()[1:] if ln.strip()]
        steps[f.name[:-len("_util.tsv")]] = [[float(t), float(v)] for t, v in rows]
    golden = tmp_path / "util.json.gz"
    golden.write_bytes(gzip.compress(json.dumps(steps).encode()))
    assert assert_utilization_is_the_references(load_profile(paths), golden) > 10_000
