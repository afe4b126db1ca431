"""Our numbers against the reference profiler's, on every real profile in the repository.

Goldens are the output of the reference ``legion_prof`` (same Legion commit as PyPI legate
26.6.1), made by ``fixtures/make_goldens.py``.  Deliberate differences are listed in
``docs/reference_differences.md`` and named here.
"""

import gzip
import json
import os
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest

from fixtures.make_goldens import (DEFAULT_BINARY, golden_paths, read_golden, real_profiles,
                                  run_reference, state_golden_paths)
from fixtures.reference_stats import parse_statistics
from legate_prof.read.dump import records_of
from legate_prof.model.kinds import ItemKind, index_of_proc
from legate_prof.read.legion_log import LegionProfReader
from legate_prof.load.loader import load_profile
from legate_prof.analyze.stats import compute_stats

PROFILES = real_profiles()
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


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_stats_agree_with_reference_statistics_on_every_kind(profile):
    golden, _ = golden_paths(profile)
    ref = _reference_by_kind(parse_statistics(golden.read_text()))
    ours = _ours_by_kind(compute_stats(load_profile([profile])))
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
    if v is None or v == -1:  # an absent time or id: the reference says null, the file -1
        return 0
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


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_dump_has_every_record_of_the_reference_with_the_same_values(profile):
    _, golden = golden_paths(profile)
    ref = defaultdict(list)
    for line in gzip.decompress(golden.read_bytes()).decode().splitlines():
        (name, fields), = json.loads(line).items()
        ref[name].append(_canon(name, fields))
    ours = defaultdict(list)
    for name, rec in records_of(LegionProfReader(str(profile)).read()):
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
@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_goldens_are_what_the_reference_prints_now(profile):
    binary = os.environ.get("LEGION_PROF", DEFAULT_BINARY)
    stats_golden, _ = golden_paths(profile)
    assert run_reference(binary, "statistics", profile) == stats_golden.read_text()
    from fixtures.make_goldens import _reference_outputs
    trace, util = _reference_outputs(binary, profile)
    assert (trace, util) == tuple(read_golden(p) for p in state_golden_paths(profile))


# -- shading and utilization: the reference's trace and legacy outputs -----------------------
STATE_PROFILES = PROFILES
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


def _reference_pieces(profile):
    pieces = Counter()
    for e in json.loads(read_golden(state_golden_paths(profile)[0])):
        name = e["name"]
        state = ("waiting" if name.endswith(" (waiting)") else
                 "ready" if name.endswith(" (ready)") else "running")
        pieces[(e["pid"], e["tid"], state, round(e["ts"] * 1000), round(e["dur"] * 1000))] += 1
    return pieces


@pytest.mark.parametrize("profile", STATE_PROFILES, ids=lambda p: p.name)
def test_shading_pieces_are_the_references(profile):
    """Every running / waiting / ready piece the reference's trace draws (a task is 'waiting'
    while a call it made runs) is one the model's waits give, and no other: the viewer's shades
    and the utilization lines are cut from these same waits."""
    ours = _state_pieces(load_profile([profile]))
    ref = _reference_pieces(profile)
    assert sum(ref.values()) > 100
    assert not (ref - ours) and not (ours - ref), (
        sorted(ref - ours)[:5], sorted(ours - ref)[:5])


# legacy utilization file "N (Kind)" -> our group(s); the reference's "Channel" line also
# covers dependent partitioning, which is its own group (dp) in ours
UTIL_GROUPS = {"CPU": ("cpu",), "Utility": ("utility",), "External": ("proc_other",),
               "IO": ("io",), "Python": ("python",), "OpenMP": ("openmp",),
               "GPU": ("gpu_dev",), "System Memory": ("system",),
               "Framebuffer Memory": ("framebuffer",), "Zero-Copy Memory": ("zerocopy",),
               "Channel": ("channel", "dp")}


def _our_step(model, rank, groups):
    if len(groups) == 1:
        return model.utilization_steps[(rank, groups[0])]
    from legate_prof.model.intervals import StepIntegral, union_sorted
    from legate_prof.assemble.utilization import busy_intervals
    lanes = [L for g in groups if (rank, g) in model.utilization_steps
             for L in model.lanes_of(g, rank)]
    per_lane = busy_intervals(model, lanes)
    s = np.concatenate([p[1] for p in per_lane])
    e = np.concatenate([p[2] for p in per_lane])
    o = np.argsort(s, kind="stable")
    us, ue = union_sorted(s[o], e[o])
    return StepIntegral.from_intervals(us, ue, None, 1)


@pytest.mark.parametrize("profile", STATE_PROFILES, ids=lambda p: p.name)
def test_utilization_lines_are_the_references(profile):
    """On every step of the reference's utilization functions (processors: busy processors /
    processors, nested calls' waits cut out; memories: live bytes / capacity; channels: any
    active), our step function has the same value, to the 2 decimals it prints."""
    model = load_profile([profile])
    ref = json.loads(read_golden(state_golden_paths(profile)[1]))
    assert {"0 (CPU)", "0 (Utility)"} <= set(ref)
    for name, rows in ref.items():
        node, kind = name.split(" ", 1)
        step = _our_step(model, int(node), UTIL_GROUPS[kind.strip("()")])
        t = np.round(np.array([r[0] for r in rows]) * 1000)
        v = np.array([r[1] for r in rows])
        avg = step.average(t)  # our mean value over each of the reference's steps
        steps = np.flatnonzero(np.diff(t) > 0)
        bad = steps[np.abs(avg[steps] - v[steps]) > 0.005 + 1e-9]
        assert len(bad) == 0, (name, [(t[i], v[i], avg[i]) for i in bad[:5]])
