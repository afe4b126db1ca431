"""Our numbers against the reference profiler's, on every real profile in the repository:
single files and whole runs of one, two, three and four ranks (``fixtures/real/RUN/``).

Goldens are the output of the reference ``legion_prof`` (same Legion commit as PyPI legate
26.6.1) given all of a profile's logs together, made by ``fixtures/make_goldens.py``.
Deliberate differences are listed in ``docs/reference_differences.md`` and named here.
"""

import gzip
import json
import os
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest

from fixtures.make_goldens import (DEFAULT_BINARY, FILE_SUBSETS, NODE_FILTERS, file_subset,
                                  file_subset_golden, node_filter_golden,
                                  read_golden, real_profiles, real_runs, reference_state,
                                  reference_warnings, run_reference)
from fixtures.reference_stats import parse_statistics
from legate_prof.read.dump import records_of
from legate_prof.model.kinds import ItemKind, index_of_proc
from legate_prof.read.legion_log import LegionProfReader
from legate_prof.load.loader import load_profile
from legate_prof.analyze.stats import compute_stats, format_stats
from legate_prof.present.units import format_ns

PROFILES = real_profiles()
RUNS = [p for p in PROFILES if p.is_run]


def _ids(p):
    return p.name
SECTION = {"Task": "tasks", "GPU Kernel": "gpu_kernels", "Meta-Task": "meta_tasks", "Message": "meta_tasks",
           "Other": "meta_tasks", "Runtime Call": "runtime_calls",
           "Mapper Call": "mapper_calls", "Application Call": "application_calls"}
FIELDS = ("total", "running", "mean", "stddev", "min", "max")


def _ours_by_kind(stats):
    """(section, name, qualifier) -> timings row; qualifier '' for the whole name."""
    out = {}
    for section in set(SECTION.values()):
        for row in stats.get(section, []):
            out[(section, row["name"], "")] = row
            for by in ("by_variant", "by_mapper"):
                for sub in row.get(by, []):
                    out[(section, row["name"], sub[by[3:]])] = sub
    return out


def _reference_by_kind(rows):
    """Reference rows keyed like ours: per name (summed) and per variant / mapper."""
    per_name = defaultdict(list)
    keyed = {}
    for r in rows:
        section = SECTION[r["kind"]]
        per_name[(section, r["name"], "")].append(r)
        if r["kind"] in ("Task", "GPU Kernel"):  # two task ids may share a name: we merge them (by name)
            keyed.setdefault((section, r["name"], r["qualifier"]), []).append(r)
        elif r["kind"] == "Mapper Call":  # "NAME on proc PROC": we key by the mapper's name
            mapper = r["qualifier"].rsplit(" on proc ", 1)[0]
            keyed.setdefault((section, r["name"], mapper), []).append(r)
    keyed.update(per_name)
    return keyed


def _assert_stats_agree(golden_text, stats):
    """Every reference statistics row (per task, variant, meta-task, message, mapper and
    runtime call) has our row with the same count, total, running time, min and max (and mean
    and std dev where one reference row is one of ours), to the precision it prints."""
    ref = _reference_by_kind(parse_statistics(golden_text))
    ours = _ours_by_kind(stats)
    assert ref, "golden has no rows"
    for key, rows in ref.items():
        assert key in ours, f"{key} missing from stats --json"
        o = ours[key]
        assert o["count"] == sum(r["count"] for r in rows), key
        if len(rows) == 1:
            compare = FIELDS
        else:  # several reference rows summed into one of ours: sums, min and max still hold
            compare = ("total", "running", "min", "max")
        for f in compare:
            if f in ("total", "running"):
                want = sum(r[f + "_us"] for r in rows)
                tol = sum(r["precision"][f + "_us"] for r in rows)
            elif f in ("min", "max"):
                pick = min if f == "min" else max
                r = pick(rows, key=lambda r: r[f + "_us"])
                want, tol = r[f + "_us"], r["precision"][f + "_us"]
            else:
                want, tol = rows[0][f + "_us"], rows[0]["precision"][f + "_us"]
            got = o[f + "_ns"] / 1e3
            # ours are whole ns: add 1 ns (0.001 µs) for our own rounding
            assert abs(got - want) <= tol + 0.001 * len(rows), (key, f, got, want)


@pytest.mark.parametrize("profile", PROFILES, ids=_ids)
def test_stats_agree_with_reference_statistics_on_every_kind(profile):
    _assert_stats_agree(profile.golden("statistics.txt").read_text(),
                        compute_stats(load_profile(list(profile.files))))


@pytest.mark.parametrize("run", RUNS, ids=_ids)
def test_stats_json_of_a_run_folder_agrees_with_the_reference(run, capsys):
    """``legate_prof stats --json RUN/`` — the folder as a user gives it: every rank's log
    (gzipped) and the array runtime's streams beside them, which the reference does not read
    and which add the operations only."""
    from legate_prof.cli import main
    assert main(["stats", "--json", str(run.folder)]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["ranks"] == len(run.files) and stats["errors"] == []
    assert len(stats["files"]) == len(run.files) + len(run.streams)
    assert bool(stats["operations"]) == bool(run.streams)
    _assert_stats_agree(run.golden("statistics.txt").read_text(), stats)


# The reference names a few fields by its own words, not the preamble's (which we use), and
# prints absent ids as null, flags as booleans and uuids as byte lists.
FIELD_RENAMES = {
    "Provenance": {"pid": "provenance", "provenance": "prov"},
    "IndexSpaceRectDesc": {"ispace_id": "unique_id"},
    "IndexSpaceSizeDesc": {"ispace_id": "unique_id"},
    "IndexSpacePointDesc": {"ispace_id": "unique_id"},
    "IndexSpaceEmptyDesc": {"ispace_id": "unique_id"},
    "EventWaitInfo": {"event": "wait_event"},
    "PhysicalInstRegionDesc": {"fevent": "inst_uid"},
    "PhysicalInstLayoutDesc": {"fevent": "inst_uid"},
    "PhysicalInstDimOrderDesc": {"fevent": "inst_uid"},
    "PhysicalInstanceSpaces": {"fevent": "inst_uid"},
    "InstTimelineInfo": {"fevent": "inst_uid"},
    "PhysicalInstanceUsage": {"inst_event": "inst_uid", "privilege": "mode"},
}


# Legion's privilege modes (legion_config.h) by the reference's names for them
PRIVILEGES = {"NoAccess": 0, "ReadOnly": 1, "Reduce": 4, "ReadWrite": 7}


def _normal(v):
    if v is None or v == -1 or v == (1 << 64) - 1:  # an absent time or id: the reference
        return 0  # says null, the file -1 (or all 64 bits set: a root operation's parent)
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, list) and all(isinstance(x, int) for x in v):
        return "".join(f"{x:02x}" for x in v)
    return v


def _canon(name, fields):
    ren = FIELD_RENAMES.get(name, {})
    out = {ren.get(k, k): _normal(v) for k, v in fields.items()}
    if isinstance(out.get("mode"), str):
        out["mode"] = PRIVILEGES[out["mode"]]
    elif isinstance(out.get("mode"), dict):  # {"Reduce": redop}: mode 4 and its redop
        (priv, redop), = out["mode"].items()
        out["mode"], out["redop"] = PRIVILEGES[priv], redop
    return out


@pytest.mark.parametrize("profile", PROFILES, ids=_ids)
def test_dump_has_every_record_of_the_reference_with_the_same_values(profile):
    ref = defaultdict(list)
    for line in read_golden(profile.golden("dump.jsonl.gz")).splitlines():
        (name, fields), = json.loads(line).items()
        ref[name].append(_canon(name, fields))
    ours = defaultdict(list)
    for path in profile.files:
        for name, rec in records_of(LegionProfReader(str(path)).read()):
            ours[name].append(rec)
    assert {k: len(v) for k, v in ours.items()} == {k: len(v) for k, v in ref.items()}
    for name, rows in ref.items():
        common = sorted(set(rows[0]) & set(ours[name][0]))
        assert common, name
        def key(r):
            return json.dumps([_normal(r.get(k)) for k in common])
        # Legion writes records in one order, the reference keeps it; we group by type
        assert sorted(map(key, ours[name])) == sorted(map(key, rows)), name


@pytest.mark.skipif(not Path(os.environ.get("LEGION_PROF", DEFAULT_BINARY)).exists(),
                    reason="the reference legion_prof binary is not beside the repository "
                           "(../shared/reference/legion_prof/bin); goldens are used instead")
@pytest.mark.parametrize("profile", PROFILES, ids=_ids)
def test_goldens_are_what_the_reference_prints_now(profile):
    binary = os.environ.get("LEGION_PROF", DEFAULT_BINARY)
    assert run_reference(binary, "statistics", profile) == \
        profile.golden("statistics.txt").read_text()
    assert reference_warnings(binary, profile) == profile.golden("warnings.txt").read_text()
    trace, util = reference_state(binary, profile)
    assert trace == read_golden(profile.golden("trace.json.gz"))
    assert util == read_golden(profile.golden("util.json.gz"))
    for ranks in FILE_SUBSETS.get(profile.name, ()):
        part = file_subset(profile, ranks)
        assert run_reference(binary, "statistics", part) == \
            file_subset_golden(profile, ranks, "statistics.txt").read_text()
        assert reference_state(binary, part)[1] == \
            read_golden(file_subset_golden(profile, ranks, "util.json.gz"))
    for nodes in NODE_FILTERS.get(profile.name, ()):
        from fixtures.make_goldens import _run
        assert _run(binary, profile, "statistics", "--nodes", nodes).stdout == \
            node_filter_golden(profile, nodes, "statistics.txt").read_text()
        assert reference_state(binary, profile, "--nodes", nodes)[1] == \
            read_golden(node_filter_golden(profile, nodes, "util.json.gz"))


def test_every_run_in_the_repository_is_compared():
    """Each folder of real logs under fixtures/real is a profile with goldens (one the
    reference rejects says so in its reference_panic.txt, one that crashed before Legion wrote
    a timeline in its crashed.txt), and each golden is of a profile."""
    runs = real_runs()
    assert {r.name for r in runs} >= {"mpi2", "mpi2_utility2", "mpi2b", "mpi2_util2",
                                       "mpi2_copies", "mpi3", "mpi4", "panics_cq_fevent0",
                                       "efficient_1rank", "inefficient_1rank"}
    for r in runs:
        assert [int(p.name.split("_")[1].split(".")[0]) for p in r.files] == \
            list(range(len(r.files))), r.name
        assert r.reference_panics or r.crashed or all(
            r.golden(w).exists() for w in ("statistics.txt", "dump.jsonl.gz", "trace.json.gz",
                                           "util.json.gz", "warnings.txt")), r.name
    assert max(len(r.files) for r in runs) >= 4


def test_the_run_the_reference_rejects_is_read_whole():
    """``panics_cq_fevent0``: the reference panics on a CompletionQueueInfo with fevent 0
    (``serialize.rs:343``, an unwrap); we read both ranks, that record included, and give the
    statistics of every item."""
    run = next(r for r in real_runs() if r.name == "panics_cq_fevent0")
    assert run.reference_panics and len(run.files) == 2
    cq = [rec for path in run.files for name, rec in records_of(LegionProfReader(str(path)).read())
          if name == "CompletionQueueInfo"]
    assert len(cq) == 77 and sum(1 for r in cq if r["fevent"] == 0) == 1
    logs = [LegionProfReader(str(p)).read() for p in run.files]
    model = load_profile(list(run.files))
    assert model.errors == [] and model.n_ranks == 2
    stats = compute_stats(model)
    assert stats["ranks"] == 2 and stats["items"] == model.n_items > 1000
    assert sum(r["count"] for r in stats["tasks"]) == sum(
        log.count(t) for log in logs for t in ("TaskInfo", "ImplicitTaskInfo", "GPUTaskInfo"))
    assert sum(r["count"] for r in stats["meta_tasks"]) == sum(
        log.count(t) for log in logs for t in ("MetaInfo", "MessageInfo", "ProfTaskInfo"))


# -- shading and utilization: the reference's trace and legacy outputs -----------------------
PROCESSOR_ITEM_KINDS = (ItemKind.TASK, ItemKind.META, ItemKind.MESSAGE, ItemKind.MAPPER_CALL,
                        ItemKind.RUNTIME_CALL, ItemKind.APP_CALL, ItemKind.PROF_TASK)


def _state_pieces(model):
    """(node, processor index, state, start ns, duration ns) of every running / waiting / ready
    piece, from the model's waits, by the reference's rule: running [start, ws), waiting
    [ws, wr), ready [wr, we), running again from the wait's end."""
    it, w = model.items, model.waits
    by_item = defaultdict(list)
    for i, ws, wr, we in zip(*(w[k].tolist() for k in ("item", "start", "ready", "end"))):
        by_item[i].append((ws, wr, we))
    pieces = Counter()
    sel = np.flatnonzero(np.isin(it["kind"], [int(k) for k in PROCESSOR_ITEM_KINDS]))
    for i in sel.tolist():
        lane = int(it["lane"][i])
        where = (int(model.lanes["rank"][lane]),
                 int(index_of_proc(np.uint64(model.lanes["ref"][lane]))))
        cur, stop = int(it["start"][i]), int(it["stop"][i])
        for ws, wr, we in sorted(by_item.get(i, [])):
            pieces[where + ("running", cur, ws - cur)] += 1
            pieces[where + ("waiting", ws, wr - ws)] += 1
            pieces[where + ("ready", wr, we - wr)] += 1
            cur = max(cur, we)
        pieces[where + ("running", cur, stop - cur)] += 1
    return pieces


# The reference draws a wait that begins before its task (the external thread's implicit task
# on multi-rank runs, one per node) as a running piece of negative length wrapped around 64
# bits: its ``dur`` is ~1.8e16 µs, printed to a double's precision.  Such a piece is matched by
# (node, processor, state, start) and a negative length.
NEGATIVE = "negative"


def _reference_pieces(profile):
    pieces = Counter()
    for e in json.loads(read_golden(profile.golden("trace.json.gz"))):
        name = e["name"]
        state = ("waiting" if name.endswith(" (waiting)") else
                 "ready" if name.endswith(" (ready)") else "running")
        dur = round(e["dur"] * 1000)
        pieces[(e["pid"], e["tid"], state, round(e["ts"] * 1000),
                NEGATIVE if dur > 1 << 63 else dur)] += 1
    return pieces


@pytest.mark.parametrize("profile", PROFILES, ids=_ids)
def test_shading_pieces_are_the_references(profile):
    """Every running / waiting / ready piece the reference's trace draws (a task is 'waiting'
    while a call it made runs) is one the model's waits give, and no other: the viewer's shades
    and the utilization lines are cut from these same waits."""
    ours = _state_pieces(load_profile(list(profile.files)))
    ours = Counter({(k[:4] + (NEGATIVE,) if k[4] < 0 else k): v for k, v in ours.items()})
    ref = _reference_pieces(profile)
    assert sum(ref.values()) > 100
    assert not (ref - ours) and not (ours - ref), (
        sorted(ref - ours, key=str)[:5], sorted(ours - ref, key=str)[:5])


# legacy utilization file "N (Kind)" -> our group(s); the reference's "Channel" line also
# covers dependent partitioning, which is its own group (dp) in ours
UTIL_GROUPS = {"CPU": ("cpu",), "Utility": ("utility",), "External": ("proc_other",),
               "IO": ("io",), "Python": ("python",), "OpenMP": ("openmp",),
               "GPU": ("gpu_dev",), "GPU Device": ("gpu_dev",), "GPU Host": ("gpu_host",),
               "System Memory": ("system",),
               "Framebuffer Memory": ("framebuffer",), "Zero-Copy Memory": ("zerocopy",),
               "Channel": ("channel", "dp")}


def our_line(profile, node, kind):
    """Our step function for the reference's line "NODE (KIND)" (node "all": the all-ranks
    summary the viewer shows), from what the profile stores (a model, or a ``RankSet``'s
    summary): channels and dependent partitioning together as their union."""
    from legate_prof.model.intervals import StepIntegral
    summary = profile.summary_model()
    groups = UTIL_GROUPS[kind]
    if node == "all":
        steps = [summary.all_ranks_step(g) for g in groups]
    else:
        steps = [summary.utilization_steps.get((int(node), g)) for g in groups]
    steps = [s for s in steps if s is not None]
    if not steps:
        return StepIntegral.from_intervals(np.zeros(0), np.zeros(0), None, 1)
    return steps[0] if len(steps) == 1 else StepIntegral.any_active(steps)


def assert_utilization_is_the_references(profile, golden, skip=()):
    """On every step of the reference's utilization functions (processors: busy processors /
    processors, nested calls' waits cut out; memories: live bytes / capacity; channels: any
    active, a copy between two nodes on both nodes' lines; "all": over every node), our step
    function has the same value, to the 2 decimals it prints.  Returns the steps compared.
    ``skip``: kinds of lines left out (a deliberate difference, named by the caller)."""
    ref = json.loads(read_golden(golden))
    assert {"all (CPU)", "all (Utility)"} <= set(ref)
    assert any(k.endswith(" (CPU)") and k[0].isdigit() for k in ref)
    n = 0
    for name, rows in ref.items():
        node, kind = name.split(" ", 1)
        if kind.strip("()") in skip:
            continue
        step = our_line(profile, node, kind.strip("()"))
        t = np.round(np.array([r[0] for r in rows]) * 1000)
        v = np.array([r[1] for r in rows])
        avg = step.average(t)  # our mean value over each of the reference's steps
        steps = np.flatnonzero(np.diff(t) > 0)
        bad = steps[np.abs(avg[steps] - v[steps]) > 0.005 + 1e-9]
        assert len(bad) == 0, (name, [(t[i], v[i], avg[i]) for i in bad[:5]])
        n += len(steps)
    return n


@pytest.mark.parametrize("profile", PROFILES, ids=_ids)
def test_utilization_lines_are_the_references(profile):
    assert assert_utilization_is_the_references(
        load_profile(list(profile.files)), profile.golden("util.json.gz")) > 100


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("run,ranks", [(r, k) for r in sorted(FILE_SUBSETS)
                                       for k in FILE_SUBSETS[r]])
def test_some_ranks_logs_alone_give_the_references_lines_and_statistics(run, ranks, workers):
    """Ranks 1 and 3 of 5 given alone: "all (CPU)" read 0.5 where the reference reads 0.2,
    "all (Utility)" 0.25 for 0.1 (a fresh recording's review): each log describes the other
    nodes' processors too, and the reference counts every processor the logs describe.
    Built in one process and as the viewer opens them (ranks built by workers, held apart);
    ``--ranks`` of all the files still counts the ranks asked for alone (its own test)."""
    profile = next(p for p in RUNS if p.name == run)
    part = file_subset(profile, ranks)
    got = load_profile(list(part.files), ranked=workers > 1, workers=workers)
    assert [int(r["rank"]) for r in got.summary_model().ranks] == list(ranks)
    assert assert_utilization_is_the_references(
        got, file_subset_golden(profile, ranks, "util.json.gz")) > 100
    _assert_stats_agree(file_subset_golden(profile, ranks, "statistics.txt").read_text(),
                        compute_stats(got))


@pytest.mark.parametrize("workers", [1, 2])
def test_a_rank_whose_cpu_ran_nothing_counts_in_the_all_ranks_line(workers):
    """Rank 1's only CPU ran nothing (``mpi2_idle_cpu``): its cpu group is hidden, yet the
    reference counts it in "all (CPU)", 0.5 while rank 0's CPU runs (we read 1.0: a fresh
    recording's review), built in one process and as the viewer opens it (ranks built by
    workers, held apart)."""
    run = next(p for p in RUNS if p.name == "mpi2_idle_cpu")
    profile = load_profile(list(run.files), ranked=workers > 1, workers=workers)
    summary = profile.summary_model()
    assert "cpu" not in dict(summary.groups_present(1))
    assert summary.all_ranks_step("cpu").denominator == 2
    assert assert_utilization_is_the_references(profile, run.golden("util.json.gz")) > 100
    # and `stats` says so (the group hidden, its table had no row of it: a review)
    machine = compute_stats(profile)["machine"]
    assert [m["processors_idle"] for m in machine] == [{}, {"cpu": 1}]
    text = format_stats(compute_stats(profile))
    assert "rank 1: processors: 1 cpu (it ran nothing)," in text
    # its first line gives the timeline's range too, which pictures and the report show
    t0, t1 = compute_stats(profile)["time_range_ns"]
    assert f"; the timeline shows {format_ns(t0)} to {format_ns(t1)})" in text.splitlines()[0]
