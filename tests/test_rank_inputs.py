"""Which ranks, which times: ``--ranks 0-3,7`` (the reference's ``--nodes``) and
``--start/--stop`` (its trims), and bad sets of rank files — another run's file, a rank
missing, a rank twice, clocks so far apart that the ranks do not overlap — each said in one
line while what can be shown is shown.  On real multi-rank runs."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fixtures.make_goldens import node_filter_golden, real_runs
from legate_prof.analyze.stats import compute_stats
from legate_prof.assemble.rank_set import RankSet
from legate_prof.cli import main
from legate_prof.load.loader import load_profile
from legate_prof.present.ranks import format_ranks, parse_ranks
from test_reference import _assert_stats_agree, assert_utilization_is_the_references

ROOT = Path(__file__).resolve().parents[1]
RUNS = {r.name: r for r in real_runs()}


def _copy(run, dest, ranks=None, streams=True):
    dest.mkdir(exist_ok=True)
    for p in (*run.files, *(run.streams if streams else ())):
        if ranks is None or int(Path(p).name.split("_")[1].split(".")[0]) in ranks:
            shutil.copy(p, dest)
    return dest


def _cli(*args, cwd=ROOT, env=None):
    """``legate_prof ARGS`` as a user runs it: (exit status, stdout, stderr lines)."""
    p = subprocess.run([sys.executable, "-m", "legate_prof", *map(str, args)],
                       capture_output=True, text=True, cwd=cwd, timeout=300, env=env)
    return p.returncode, p.stdout, [ln for ln in p.stderr.splitlines() if ln.strip()]


# -- the rank list --------------------------------------------------------------------------
def test_rank_lists_are_the_references_syntax():
    assert parse_ranks("0-3,7") == (0, 1, 2, 3, 7)
    assert parse_ranks(" 7, 2-2 ,0-1") == (0, 1, 2, 7)
    assert parse_ranks("5") == (5,)
    for bad, why in (("", "no ranks"), ("1,,2", "empty part"), ("3-1", "backwards"),
                     ("a", "not a rank"), ("-1", "not a rank"), ("1-", "not a rank"),
                     ("70000", "go up to")):
        with pytest.raises(ValueError, match=why):
            parse_ranks(bad)
    assert format_ranks((0, 1, 2, 3, 7)) == "0-3,7"
    assert format_ranks([9, 1, 2]) == "1,2,9"
    for text in ("0-3,7", "1,2,9", "0-65535"):
        assert format_ranks(parse_ranks(text)) == text


def test_a_bad_rank_list_is_one_line_before_anything_is_read():
    rc, out, err = _cli("stats", "--ranks", "2-1", RUNS["mpi4"].folder)
    assert rc == 2 and out == "" and err == [
        "legate_prof: error: argument --ranks: '2-1' runs backwards (write 1-2)"]


# -- --ranks --------------------------------------------------------------------------------
def test_which_files_hold_the_ranks_asked_for(tmp_path):
    """Names are hints the files confirm: a file named for another rank is not opened, one
    named for a listed rank but holding another is left out with a note, one without a rank
    in its name says its rank from its head; legate's console log stays."""
    from legate_prof.load.rank_files import files_of_ranks
    run = RUNS["mpi3"]
    shutil.copy(run.files[0], tmp_path / "legate_0.prof.gz")
    shutil.copy(run.files[2], tmp_path / "legate_1.prof.gz")  # rank 2's, named for rank 1
    shutil.copy(run.files[1], tmp_path / "mystery.prof.gz")  # rank 1's
    (tmp_path / "legate_2.prof").write_bytes(b"never opened")
    (tmp_path / "console.log").write_text("legate: out of memory\n")
    paths = [str(tmp_path / n) for n in ("legate_0.prof.gz", "legate_1.prof.gz",
                                         "mystery.prof.gz", "legate_2.prof", "console.log")]
    kept, notes = files_of_ranks(paths, (1,))  # (legate_2.prof, if opened, would stay: text)
    assert [Path(p).name for p in kept] == ["mystery.prof.gz", "console.log"]
    assert notes == [f"warning: {paths[1]}: named for rank 1 but holds rank 2; left out of "
                     "--ranks"]
    kept, notes = files_of_ranks(paths, (0,))
    assert [Path(p).name for p in kept] == ["legate_0.prof.gz", "console.log"] and notes == []


def test_files_named_for_each_others_ranks_are_read_for_the_rank_they_hold(tmp_path):
    """Two logs named for each other's ranks: ``--ranks 0`` left both out ("hold none of the
    ranks asked for (0); the files are of ranks 0,1", a user's review); a name found wrong
    makes the files passed over say their ranks, and a lone file named for another rank
    says its own where nothing else holds the rank asked for."""
    from legate_prof.load.rank_files import files_of_ranks
    run = RUNS["mpi3"]
    shutil.copy(run.files[0], tmp_path / "legate_1.prof.gz")  # rank 0's
    shutil.copy(run.files[1], tmp_path / "legate_0.prof.gz")  # rank 1's
    shutil.copy(run.files[2], tmp_path / "legate_2.prof.gz")
    paths = [str(tmp_path / f"legate_{r}.prof.gz") for r in range(3)]
    kept, notes = files_of_ranks(paths, (0,))
    assert kept == [paths[1]] and notes == [
        f"warning: {paths[0]}: named for rank 0 but holds rank 1; left out of --ranks",
        f"warning: {paths[1]}: named for rank 1 but holds rank 0; read for --ranks"]
    kept, notes = files_of_ranks(paths[1:2], (0,))
    assert kept == [paths[1]] and len(notes) == 1
    kept, notes = files_of_ranks(paths, (2,))  # (names right for what is asked: trusted)
    assert kept == [paths[2]] and notes == []
    rc, out, err = _cli("stats", "--json", "--ranks", "0", str(tmp_path))
    assert rc == 0 and len(err) == 2
    rc0, alone, _ = _cli("stats", "--json", run.files[0])
    assert rc0 == 0 and json.loads(out)["items"] == json.loads(alone)["items"]


@pytest.mark.parametrize("name,nodes", [("mpi4", "1-2"), ("mpi3", "0,2")])
def test_ranks_reads_only_their_files_and_agrees_with_the_references_nodes(name, nodes,
                                                                            tmp_path, capsys):
    """``stats --ranks LIST`` reads the listed ranks' files only — the others here are
    damaged, and nothing says so — and its statistics are the reference's ``--nodes LIST``
    (which reads every file and keeps the listed nodes' records); so are its processor and
    memory utilization lines (channel lines: docs/reference_differences.md)."""
    run = RUNS[name]
    wanted = parse_ranks(nodes)
    d = _copy(run, tmp_path / name)
    for p in d.iterdir():
        if int(p.name.split("_")[1].split(".")[0]) not in wanted:
            p.write_bytes(b"\x1f\x8b damaged: must not be read")
    assert main(["stats", "--json", "--ranks", nodes, str(d)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    stats = json.loads(out)
    assert stats["ranks"] == len(wanted) and stats["errors"] == []
    assert sorted({g["rank"] for g in stats["groups"]}) == list(wanted)
    _assert_stats_agree(node_filter_golden(run, nodes, "statistics.txt").read_text(), stats)
    only = load_profile([d], ranks=wanted)
    assert assert_utilization_is_the_references(
        only, node_filter_golden(run, nodes, "util.json.gz"), skip=("Channel",)) > 500


def test_ranks_of_per_rank_bundles_and_of_one_merged_bundle_are_those_of_the_logs(tmp_path,
                                                                                  capsys):
    """The same ranks from per-rank bundles (only theirs opened), from one bundle of all
    ranks (cut lane by lane) and from the logs: the same statistics, lanes and steps."""
    run = RUNS["mpi4"]
    logs = _copy(run, tmp_path / "logs")
    bundles = _copy(run, tmp_path / "bundles")
    assert main(["convert", "--per-rank", str(bundles)]) == 0
    assert main(["convert", *map(str, sorted(logs.iterdir())), "-o",
                 str(tmp_path / "all.lpbundle")]) == 0
    capsys.readouterr()
    wanted = (1, 3)
    from_logs = load_profile([logs], ranks=wanted)
    per_rank = load_profile([bundles], ranks=wanted, ranked=True)
    merged = load_profile([tmp_path / "all.lpbundle"], ranks=wanted, ranked=True)
    assert isinstance(per_rank, RankSet)
    assert [Path(s).name for s in per_rank.sources] == ["legate_1.lpbundle", "legate_3.lpbundle"]
    want = compute_stats(from_logs)
    for other in (per_rank, merged):
        got = compute_stats(other)
        if other is merged:  # it knows the operations of every rank: their provenances too,
            # and every rank's events: what the ranks' items waited for (idle time explained)
            for table in ("tasks", "meta_tasks", "mapper_calls", "runtime_calls"):
                for g, w in zip(got[table], want[table]):
                    assert set(w["provenances"]) <= set(g["provenances"])
                    g["provenances"] = w["provenances"]
            assert got["idle"]["span_ns"] == want["idle"]["span_ns"]
            got["idle"] = want["idle"]
        assert {k: v for k, v in got.items() if k != "files"} == \
            {k: v for k, v in want.items() if k != "files"}
        a, b = other.summary_model(), from_logs
        for c in ("rank", "group", "ref", "ref2", "rows"):
            assert np.array_equal(a.lanes[c], b.lanes[c]), c
        assert a.lanes["name"] == b.lanes["name"]
        assert a.utilization_steps.keys() == b.utilization_steps.keys()
        for k, s in b.utilization_steps.items():
            assert np.array_equal(a.utilization_steps[k].t, s.t), k
    assert sorted(r["rank"] for r in from_logs.ranks) == [1, 3]
    assert not any("no readable file" in w for w in from_logs.warnings)


def test_ranks_on_every_command_that_reads_a_profile(tmp_path):
    """view (drawn to a picture without a display), screenshot, stats, insights, report and
    export take --ranks; what they show is those ranks only."""
    d = _copy(RUNS["mpi2_copies"], tmp_path / "run")
    rc, out, err = _cli("export", d, "--format", "chrome", "-o", tmp_path / "t.json",
                        "--ranks", "1")
    assert rc == 0, err
    events = json.loads((tmp_path / "t.json").read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    assert {e.get("pid") for e in events if e.get("ph") == "X"} == {1}
    rc, out, err = _cli("insights", "--json", "--ranks", "1", d)
    assert rc == 0, err
    rc, out, err = _cli("report", d, "-o", tmp_path / "rep", "--ranks", "0", "--no-pictures")
    assert rc == 0 and (tmp_path / "rep" / "index.html").exists(), err
    pytest.importorskip("pytestqt")
    for cmd in (["screenshot", d, "-o", tmp_path / "one.png", "--ranks", "1"],
                ["screenshot", d, "-o", tmp_path / "both.png"]):
        rc, out, err = _cli(*cmd)
        assert rc == 0, err
    import os
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["PYTHONPATH"] = str(ROOT)
    rc, out, err = _cli("view", d, "--ranks", "1", "--no-cache", cwd=tmp_path, env=env)
    assert rc == 0, err  # no display: the view drawn to legate_prof_view.png
    from PySide6 import QtGui
    one, both, view = (QtGui.QImage(str(tmp_path / f))
                       for f in ("one.png", "both.png", "legate_prof_view.png"))
    assert one.height() < both.height()  # one rank's lanes
    assert view == one


# -- --start/--stop -------------------------------------------------------------------------
def test_a_window_keeps_what_runs_in_it_cut_to_it(tmp_path, capsys):
    """``stats --start A --stop B``: the items that run in [A, B] (the reference's trim keeps
    those), each cut to it with its waits; the utilization inside the window is the whole
    run's; the same from per-rank bundles."""
    run = RUNS["mpi3"]
    whole = load_profile(list(run.files))
    first, last = whole.extent()
    a, b = first + (last - first) // 3, first + (last - first) // 2
    assert main(["stats", "--json", "--start", f"{a}", "--stop", f"{b}ns",
                 *map(str, run.files)]) == 0
    stats = json.loads(capsys.readouterr().out)
    it = whole.items
    inside = (it["stop"] >= a) & (it["start"] <= b)
    assert stats["items"] == int(inside.sum()) < whole.n_items
    assert stats["span_ns"] == [max(a, int(it["start"][inside].min())),
                                min(b, int(it["stop"][inside].max()))]
    tasks = [r for r in stats["tasks"]]
    for row in tasks + stats["meta_tasks"]:
        assert 0 <= row["running_ns"] <= row["total_ns"] <= row["count"] * (b - a)
    from legate_prof.assemble.restrict import within
    cut = within(whole, a, b)
    t = np.array([a, b], float)
    for key, step in whole.utilization_steps.items():
        if key in cut.utilization_steps and key[1] in ("cpu", "utility", "proc_other",
                                                       "system", "channel"):
            assert np.allclose(cut.utilization_steps[key].average(t), step.average(t)), key
    d = _copy(run, tmp_path / "b", streams=False)
    assert main(["convert", "--per-rank", str(d)]) == 0
    capsys.readouterr()
    assert main(["stats", "--json", "--start", f"{a}", "--stop", f"{b}ns", str(d)]) == 0
    from_bundles = json.loads(capsys.readouterr().out)
    assert {k: v for k, v in from_bundles.items() if k != "files"} == \
        {k: v for k, v in stats.items() if k != "files"}


def test_a_window_on_insights_report_and_export(tmp_path):
    run = RUNS["mpi2"]
    whole = load_profile(list(run.files))
    first, last = whole.extent()
    a, b = first + (last - first) // 4, first + (last - first) // 2
    rc, out, err = _cli("export", *run.files, "--format", "chrome", "-o", tmp_path / "t.json",
                        "--start", f"{a}ns", "--stop", f"{b}ns")
    assert rc == 0, err
    ev = json.loads((tmp_path / "t.json").read_text())
    ev = [e for e in (ev["traceEvents"] if isinstance(ev, dict) else ev) if e.get("ph") == "X"]
    assert ev and all(a / 1e3 - 1e-3 <= e["ts"] and e["ts"] + e["dur"] <= b / 1e3 + 1e-3
                      for e in ev if e["dur"] >= 0)
    rc, out, err = _cli("insights", *run.files, "--start", f"{a}ns", "--stop", f"{b}ns")
    assert rc == 0, err
    rc, out, err = _cli("report", *run.files, "-o", tmp_path / "r", "--no-pictures",
                        "--start", f"{a}ns", "--stop", f"{b}ns")
    assert rc == 0, err
    rc, out, err = _cli("stats", *run.files, "--start", "2s", "--stop", "1s")
    assert rc == 2 and out == "" and err == [
        "legate_prof: error: --start/--stop: --start (2.000 s) must come before --stop "
        "(1.000 s)"]


# -- bad sets of rank files -----------------------------------------------------------------
def _one_line(err, *words):
    assert len(err) == 1, err
    for w in words:
        assert w in err[0], err[0]


def test_a_rank_file_of_a_run_of_another_size_is_one_line_and_shown(tmp_path):
    d = _copy(RUNS["mpi3"], tmp_path / "run")
    shutil.copy(RUNS["mpi4"].files[3], d)  # legate_3 of a 4-rank run
    shutil.copy(RUNS["mpi4"].streams[3], d)
    rc, out, err = _cli("stats", "--json", d)
    assert rc == 0
    _one_line(err, "legate_3.prof.gz is not of the others' run",
              "of a 4-rank run, the others of a 3-rank run")
    assert json.loads(out)["ranks"] == 4


def test_a_rank_file_of_a_later_run_of_the_same_size_is_one_line_and_shown(tmp_path):
    d = _copy(RUNS["mpi2b"], tmp_path / "run", ranks=(0,))
    _copy(RUNS["mpi2_util2"], d, ranks=(1,))  # the same program, recorded 20 s later
    rc, out, err = _cli("stats", "--json", d)
    assert rc == 0
    _one_line(err, "legate_1.prof.gz is not of the others' run", "after the others' run ended")
    assert json.loads(out)["ranks"] == 2
    # and the runtime stream of the other run's rank: left out, one line of its own
    shutil.copy(RUNS["mpi2b"].streams[1], d)
    rc, out, err = _cli("stats", d)
    assert rc == 0 and len(err) == 2
    assert any("legate_1.runtime.prof: not of the run of" in e and "left out" in e for e in err)


def test_a_rank_missing_is_one_line_and_the_others_are_shown(tmp_path):
    d = _copy(RUNS["mpi3"], tmp_path / "run", ranks=(0, 2))
    rc, out, err = _cli("stats", "--json", d)
    assert rc == 0
    _one_line(err, "1 of the run's 3 ranks has no readable file (not given, or not readable: rank 1)")
    stats = json.loads(out)
    assert stats["ranks"] == 2 and {g["rank"] for g in stats["groups"]} == {0, 2}
    assert main(["convert", "--per-rank", str(d)]) == 0  # the same from bundles
    rc, out2, err2 = _cli("stats", "--json", d)
    assert rc == 0 and err2 == err
    assert json.loads(out2)["items"] == stats["items"]


def test_a_rank_twice_is_one_line_and_the_rest_is_shown(tmp_path):
    d = _copy(RUNS["mpi2b"], tmp_path / "run", streams=False)
    shutil.copy(RUNS["mpi2_util2"].files[1], d / "again_1.prof.gz")
    rc, out, err = _cli("stats", "--json", d)
    assert rc == 2
    _one_line(err, "again_1.prof.gz: rank 1 again (also in legate_1.prof.gz, which is shown)",
              "Left out")
    alone = compute_stats(load_profile(list(RUNS["mpi2b"].files)))
    assert json.loads(out)["items"] == alone["items"]
    # two runs' folders: the file shown is named with its folder (both are legate_0.prof.gz)
    other = _copy(RUNS["mpi2_util2"], tmp_path / "other", streams=False)
    rc, _, err = _cli("stats", d, other)
    assert rc == 2 and any(f"rank 0 again (also in {d / 'legate_0.prof.gz'}, which is shown)"
                           in ln for ln in err), err
    # per-rank bundles: the second bundle of rank 1 is left out, the others are opened
    b = _copy(RUNS["mpi2b"], tmp_path / "bundles", streams=False)
    assert main(["convert", "--per-rank", str(b)]) == 0
    shutil.copy(RUNS["mpi2_util2"].files[1], tmp_path / "legate_1.prof.gz")
    assert main(["convert", str(tmp_path / "legate_1.prof.gz"), "-o",
                 str(b / "again_1.lpbundle")]) == 0
    rc, out, err = _cli("stats", "--json", *sorted(b.glob("*.lpbundle")))
    assert rc == 2
    _one_line(err, "again_1.lpbundle: rank 1 again (also in legate_1.lpbundle)", "Left out")
    assert json.loads(out)["items"] == alone["items"]


def test_ranks_whose_clocks_are_too_far_apart_to_overlap_are_one_line_and_shown(tmp_path):
    """``mpi2_skewed``: rank 1's clock 100 s off.  One line says the ranks do not overlap and
    how far apart they are; both ranks are shown, with the numbers of the unskewed run (the
    reference's too)."""
    skewed, plain = RUNS["mpi2_skewed"], RUNS["mpi2"]
    rc, out, err = _cli("stats", "--json", skewed.folder)
    assert rc == 0
    _one_line(err, "the ranks' timelines do not overlap", "rank 0: ", "rank 1: ",
              "at least 95.", "s apart")
    stats = json.loads(out)
    assert stats["ranks"] == 2
    _assert_stats_agree(plain.golden("statistics.txt").read_text(), stats)
    _assert_stats_agree(skewed.golden("statistics.txt").read_text(), stats)
    model = load_profile(list(skewed.files))
    first, last = model.extent()
    assert last - first > 100e9
    pytest.importorskip("pytestqt")
    rc, out, err = _cli("screenshot", skewed.folder, "-o", tmp_path / "s.png")
    assert rc == 0 and len(err) == 1 and (tmp_path / "s.png").stat().st_size > 10_000


def test_a_log_given_without_the_runtime_stream_beside_it_says_so(capsys):
    """`stats legate_0.prof` where `record` also wrote legate_0.runtime.prof: a note names
    the stream left out (its operations and arrays are missing); the folder or both files
    read it, and no note is said."""
    run = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "inefficient_1rank"
    log, stream = run / "legate_0.prof.gz", run / "legate_0.runtime.prof"
    assert main(["stats", str(log)]) == 0
    err = capsys.readouterr().err
    assert "the array runtime's stream beside it (legate_0.runtime.prof) was not given" in err
    main(["stats", str(log), str(log)])  # (the file given twice: said once)
    assert capsys.readouterr().err.count("was not given") == 1
    for given in ([str(run)], [str(log), str(stream)]):
        assert main(["stats", *given]) == 0
        out = capsys.readouterr()
        assert "was not given" not in out.err and "Operations" in out.out
        # what its figures are summed over is said where they are
        assert "busy: processors, summed over their lanes" in out.out
        assert "(summed over each group's lanes" in out.out and "  io (extern)  " in out.out


def test_ranks_given_twice_add_up(capsys):
    """``--ranks 0 --ranks 2`` kept rank 2 alone, without a word (a review): each adds its
    ranks."""
    run = RUNS["mpi3"]
    assert main(["stats", "--json", "--no-cache", "--ranks", "0", "--ranks", "2",
                 str(run.folder)]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["ranks"] == 2 and sorted({g["rank"] for g in stats["groups"]}) == [0, 2]


def test_ranks_asked_for_count_their_own_processors_in_the_all_ranks_lines_once_drawn():
    """Ranks 1 and 2's logs describe the other nodes' processors too: read alone, their
    "all (CPU)" line counts those (as the reference does); with ``--ranks 1-2`` only theirs,
    even where the line was drawn before the cut (a model's lines came along with it)."""
    from legate_prof.assemble.restrict import restrict
    run = RUNS["mpi4"]
    alone = load_profile([run.files[1], run.files[2]])
    assert alone.all_ranks_step("cpu").denominator > 2  # (drawn: 2 read, others described)
    assert restrict(alone, ranks=(1, 2)).all_ranks_step("cpu").denominator == 2


@pytest.mark.parametrize("name,nodes", [("mpi4", "1-2"), ("mpi3", "0,2")])
@pytest.mark.parametrize("workers", [1, 2])
def test_ranks_keep_no_line_of_a_rank_not_asked_for_and_no_channel_above_the_reference(
        name, nodes, workers):
    """A listed node's fill into an unlisted node's memory made that node a channel line of
    its own, and "all (Channel)" read 1.0 where the reference's ``--nodes`` reads 0 (a fresh
    recording's review).  No line of a rank not asked for is kept; the all-ranks channel
    line is never above the reference's (below it where only an unlisted node recorded a
    copy: docs/reference_differences.md)."""
    from test_reference import our_line
    run = RUNS[name]
    wanted = parse_ranks(nodes)
    only = load_profile([run.folder], ranks=wanted, ranked=workers > 1, workers=workers)
    assert {r for r, _ in only.summary_model().utilization_steps} <= set(wanted)
    import gzip as _gzip
    ref = json.loads(_gzip.decompress(node_filter_golden(run, nodes, "util.json.gz")
                                      .read_bytes()).decode())
    rows = ref["all (Channel)"]
    t = np.round(np.array([r[0] for r in rows]) * 1000)
    v = np.array([r[1] for r in rows])
    avg = our_line(only, "all", "Channel").average(t)
    steps = np.flatnonzero(np.diff(t) > 0)
    assert len(steps) > 10 and np.all(avg[steps] <= v[steps] + 0.005 + 1e-9)
