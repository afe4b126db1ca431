"""``legate_prof critical`` as a user reads it (fresh-eyes review 32): the split by source line
(the program's start and the line the program was at, every row there so they add up), where
the path lies in the run, steps of no time folded, ``--ranks``/``--start``/``--stop``, and the
words of the text and of a mistyped option.  Real recorded runs only (fixtures/real)."""

import json
import re

import numpy as np
import pytest

from fixtures.make_critical_goldens import REAL, rank_files
from legate_prof.cli import main
from legate_prof.present.units import format_ns

MPI2 = str(REAL / "mpi2")


def critical(capsys, *args):
    rc = main(["critical", "-q", *map(str, args)])
    out = capsys.readouterr()
    return rc, out.out, out.err


def critical_json(capsys, *args):
    rc, out, err = critical(capsys, "--json", *args)
    assert rc == 0, err
    return json.loads(out)


def test_startup_is_the_programs_start_and_each_launch_the_line_it_was_at(capsys):
    """mpi2: the top-level task starts at 2.028 s; the program makes its first array (line 6)
    at 3.299 s (the runtime's stream).  That time goes to "(program start)", not to line 9
    (which the old rule, "the next item's line", gave 74 % of the path); lines 6-8 get the
    program's time while it was at them; the rows add up to the run (the runtime's start-up
    before the top-level task, 431.6 ms .. 2.028 s, is the program's start too; after the
    top-level task ended, the shutdown)."""
    doc = critical_json(capsys, MPI2)
    rows = {k.rsplit("/", 1)[-1]: v for k, v in doc["by_provenance"].items()}
    assert sum(rows.values()) == doc["run_ns"]
    startup = doc["by_kind"]["startup"]
    assert startup == doc["path_start_ns"] - doc["run_span_ns"][0]  # 1.596 s
    # 2.028 s .. 3.299 s, less what ran then, and the start-up
    assert 1.2e9 < rows["(program start)"] - startup < 1.3e9
    assert rows["(shutdown)"] == doc["by_kind"]["shutdown"] > 0
    # (line 9 also gets the runtime's work of no operation that led to its operations)
    assert rows["prog_mr.py:9"] < 0.2 * doc["span_ns"] < rows["(program start)"]
    assert all(rows.get(f"prog_mr.py:{n}", 0) > 10e6 for n in (6, 7, 8))
    assert "(no line)" in rows  # runtime work of no operation, no line after it
    # by kind is the split it was (launch is still the program's thread running) but for the
    # shutdown: the program's thread (launch) and the runtime's clean-up after the top-level
    # task ended; and the program's thread's time blocked in a wait, apart (15.1 ms of its
    # 2.08 s; its time inside its calls, a task's inside its body, is not waiting)
    k = doc["by_kind"]
    assert (k["compute"] + k["waiting"], k["copy"], k["fill"], k["dependent_partitioning"],
            k["unknown"], k["gap"]) == (33112045, 17925403, 0, 0, 0, 156063053)
    assert (k["waiting"], k["blocked"]) == (0, 15102211)
    assert k["launch"] + k["blocked"] + k["runtime"] + k["shutdown"] == 2390129336 + 373904560


def test_without_the_stream_and_without_lines_the_rows_still_add_up(capsys):
    """Legion's log alone: the program's start runs to the first item Legion created; a
    profile with no source lines at all still prints the section (program start, no line)."""
    doc = critical_json(capsys, REAL / "efficient_0.prof")
    assert sum(doc["by_provenance"].values()) == doc["run_ns"]
    assert doc["by_provenance"]["(program start)"] > 0
    rc, out, _ = critical(capsys, REAL / "legate26.06_cpu2_myprof_0.prof")
    section = out.split("By source line\n", 1)[1].split("\n\n", 1)[0]
    assert "(no line)" in section and "(program start)" in section, out
    # (its row read "the program until its first operation", of a program that launched
    # long before Legion's first item of it: a review)
    assert doc["operations_recorded"] is False
    rc, out, _ = critical(capsys, REAL / "efficient_0.prof")
    row = next(ln for ln in out.splitlines() if "(program start)  (" in ln)
    assert "until the first item Legion made of the program's work: without the runtime's " \
        "stream, when the program made its first operation is not recorded" in row
    assert "until its first operation" not in row


def test_the_header_says_where_the_path_lies_in_the_run(capsys):
    """The path starts at the top-level task (2.028 s), the run at 431.6 ms: the text says
    so, and the JSON gives the run's span as stats does ([start, stop]) beside the path's."""
    doc = critical_json(capsys, MPI2)
    main(["stats", "-q", "--json", "--no-idle", MPI2])
    stats = json.loads(capsys.readouterr().out)
    assert doc["run_span_ns"] == stats["span_ns"]
    assert doc["path_start_ns"] == 2027811555
    assert doc["path_start_ns"] + doc["span_ns"] == doc["run_span_ns"][1]
    _, out, _ = critical(capsys, MPI2, "--limit", 1)
    first, second = out.splitlines()[:2]
    assert first.startswith("Critical path: 264 items over 2.971 s, from the top-level task's "
                            "start (2.028 s) to the run's end"), first
    assert second == ("The shares below explain 4.567 s of the run's 4.567 s (100.0%), 1.596 s "
                      "the runtime starting before the program (counted in '(program start)' "
                      "below), 310.385 ms the runtime shutting down after it."), second


def test_steps_of_no_time_fold_into_one_line_and_do_not_use_up_the_limit(capsys):
    """mpi2_copies: 47 steps of 0 ns right after the last step filled the listing; now one
    line says what they are, and --limit 10 shows 10 steps that hold time.  The JSON keeps
    every step."""
    doc = critical_json(capsys, REAL / "mpi2_copies")
    zeros = sum(1 for p in doc["path"] if p["on_path_ns"][0] == p["on_path_ns"][1])
    _, out, _ = critical(capsys, REAL / "mpi2_copies", "--limit", 10)
    rows = out.split(" on path ", 1)[1].split("\nLargest steps", 1)[0].splitlines()[1:]
    steps = [r for r in rows if re.match(r"\s+\d", r)]
    folded = [r for r in rows if "steps of 0 ns" in r or "step of 0 ns" in r]
    assert len(steps) == 10 and not any(r.split()[:2] == ["0", "ns"] for r in steps), rows
    assert folded and "… and 47 steps of 0 ns" in folded[0]
    assert len(doc["path"]) == 207 and zeros >= 47


def test_ranks_and_a_window_give_the_runs_path_cut_to_the_window(capsys):
    """``--start/--stop`` cut the profile as insights does, and the run's path to it: the
    path lies inside the window; ``--ranks 0`` reads rank 0 alone and the text says why the
    path stops."""
    doc = critical_json(capsys, MPI2, "--start", "4s", "--stop", "4.5s")
    assert doc["path"] and doc["path_start_ns"] >= 4e9
    assert doc["path_start_ns"] + doc["span_ns"] <= 4.5e9
    assert doc["run_span_ns"][0] >= 4e9 and doc["run_span_ns"][1] <= 4.5e9
    rc, out, err = critical(capsys, MPI2, "--ranks", "0", "--limit", 3)
    assert rc == 0, err
    # (rank 0's own unknown events are inferred on; what rank 1 created stops the chain)
    assert out.startswith("Critical path: 3 items over ")
    assert "rank 1 did (unknown creator on node 1), and that rank was not given" in out, out


def test_a_window_is_explained_by_the_runs_path_as_the_run_is(capsys, tmp_path):
    """A window's own path, walked back from what ended last in it, stopped at the first
    event whose cause the cut left out (mpi2_copies, 1.18-1.605 s: one item, 0 ns of the
    window explained; the guide's 4-rank run, 50-150 s: 0.0 %, a fresh user's review).  The
    run's path cut to the window explains it as it explains the run: its steps are the run's
    steps there, their pieces cut to the window; insights and the report take it too."""
    run = REAL / "mpi2_copies"
    window = ("--start", "1.18s", "--stop", "1.605s")
    doc = critical_json(capsys, run, *window)
    assert doc["explained_ns"] == doc["run_ns"] == 425_000_000
    whole = critical_json(capsys, run)
    there = [(p["name"], p["lane"], max(p["on_path_ns"][0], 1_180_000_000),
              min(p["on_path_ns"][1], 1_605_000_000)) for p in whole["path"]
             if p["on_path_ns"][1] >= 1_180_000_000 and p["on_path_ns"][0] <= 1_605_000_000]
    assert [(p["name"], p["lane"], *p["on_path_ns"]) for p in doc["path"]] == there
    rc, out, _ = critical(capsys, run, *window)
    assert "The shares below explain 425.000 ms of the window's 425.000 ms (100.0%)" in out
    assert main(["insights", "-q", str(run), *window]) == 0
    said = capsys.readouterr().out
    assert said.startswith("The window's 425.000 ms: 425.000 ms (100.0 %) explained"), said
    assert main(["report", "-q", str(run), *window, "--no-pictures", "-o",
                 str(tmp_path / "rep")]) == 0
    meta = (tmp_path / "rep" / "meta.js").read_text()
    meta = json.loads(meta[meta.index("(") + 1: meta.rindex(")")])
    split = meta["critical_split"]
    assert split["explained_ns"] == split["run_ns"] == 425_000_000
    # the report says what `critical` and `insights` say of the window (it said "the run's
    # end", "The run's 425.000 ms", a review found: a shared report read as a 425 ms run)
    assert meta["window"] == [1_180_000_000, 1_605_000_000]
    assert split["header"] == [ln for ln in out.split("\n\n")[0].splitlines() if ln][:3], out
    assert meta["findings"]["explained_words"] == said.split("\n")[0]
    assert all("the run's" not in x.get("cost_words", "") for x in meta["findings"]["findings"])


def test_the_path_stops_at_an_event_of_a_rank_not_given(capsys):
    """Rank 0's log alone with its stream: rank 0's own unknown events are inferred on, and
    the chain ends at what rank 1 (not given) did; the JSON says which rank's and which ranks
    are missing."""
    doc = critical_json(capsys, rank_files(REAL / "mpi2")[0])
    stop = doc["stops_at"]
    assert stop is not None and stop["ranks_not_given"] == [1] and stop["rank"] == 1, stop
    assert not stop["given"]
    assert doc["path"][-1]["via"] == "unknown"
    assert any(p["via"] == "inferred" for p in doc["path"])


def test_a_runtime_stream_alone_is_named_as_such(capsys):
    rc, out, _ = critical(capsys, REAL / "mpi2" / "legate_0.runtime.prof")
    assert rc == 0
    assert "runtime's event stream" in out and "format 1011" not in out
    assert "Critical path: 0 items" not in out and " on path " not in out, out


def test_long_lane_names_are_not_cut_short(capsys):
    """A channel's lane name is longer than the old 40-character column: it is shown whole
    (or cut in its middle), never cut off at its end."""
    _, out, _ = critical(capsys, MPI2, "--limit", 0)
    rows = [r for r in out.splitlines() if "Channel " in r]
    assert rows and all(re.search(r"Channel Node \d .*to .*Memory", r) for r in rows), rows[:3]


def test_a_windows_path_speaks_of_the_window_and_where_it_may_stop(capsys):
    """With --start/--stop the header measures the window, not the run, and a path stopping
    at an unknown event names the window's start as one reason (what came before it is not
    in the profile any more)."""
    rc, out, _ = critical(capsys, MPI2, "--start", "4.6s", "--stop", "4.8s")
    assert rc == 0
    assert "to the window's end (4.800 s)" in out
    assert "the run's end" not in out and "The run spans" not in out
    # (the unknown events in it inferred on, the path spans the whole window)
    assert "over 200.000 ms, from the window's start (4.600 s)" in out
    rc, out, _ = critical(capsys, MPI2, "--start", "4.6s", "--stop", "4.8s", "--ranks", "0")
    assert "or an item before the window's start." in out or "rank 1 did" in out
    rc, out, _ = critical(capsys, MPI2)
    assert "the run's end" in out and "window" not in out


def test_the_shutdown_after_the_top_level_task_is_named_and_counted(capsys):
    """mpi4: the program's top-level task ends at 3.562 s, the run at 4.408 s.  That tail is
    the runtime cleaning up (every rank's Distributed Collectable Downgrade messages): the
    JSON names its work by processor time (checked here against the items themselves), the
    path's pieces after it count as "shutdown", and the text says so."""
    from legate_prof.load.loader import load_profile
    doc = critical_json(capsys, REAL / "mpi4")
    tail = doc["shutdown"]
    profile = load_profile([REAL / "mpi4"], stack=False)
    it, names = profile.items, np.asarray(profile.names, object)
    top = names[it["name"]] == "Toplevel Task"
    assert tail["start_ns"] == int(it["stop"][top].max())
    assert tail["ns"] == doc["run_span_ns"][1] - tail["start_ns"]
    assert doc["by_kind"]["shutdown"] == tail["on_path_ns"] <= tail["ns"]
    work = {w["name"]: w for w in tail["work"]}
    assert "Distributed Collectable Downgrade Response" in work
    w = work["Distributed Collectable Downgrade Response"]
    sel = (names[it["name"]] == w["name"]) & (it["stop"] > tail["start_ns"])
    assert w["count"] == int(sel.sum())
    held = np.minimum(it["stop"][sel], doc["run_span_ns"][1]) - np.maximum(it["start"][sel],
                                                                         tail["start_ns"])
    assert w["busy_ns"] == int(held.sum())
    _, out, _ = critical(capsys, REAL / "mpi4", "--limit", 1)
    assert "Shutdown: after the program's top-level task ended (3.562 s)" in out


def test_what_rests_on_inferred_links_is_measured_and_said(capsys):
    """mpi3's path goes on past two events no profile records: everything before the latest
    inferred link (in time) is reached only through it.  The JSON says where that starts and
    how much of the run lies before it (the rows of the split before it, the start-up not:
    it is before any path); the text says it in words."""
    doc = critical_json(capsys, REAL / "mpi3")
    inf = doc["inferred"]
    steps = doc["path"][::-1]  # (in time order)
    last = max(k for k, s in enumerate(steps) if s["via"] == "inferred")
    assert inf["links"] == sum(s["via"] == "inferred" for s in steps) >= 1
    assert inf["from_ns"] == steps[last]["on_path_ns"][0]
    start = doc["run_span_ns"][0] + doc["by_kind"]["startup"]
    assert 0 < inf["resting_ns"] <= inf["from_ns"] - start
    _, out, _ = critical(capsys, REAL / "mpi3", "--limit", 1)
    assert "is reached through 2 links inferred past events Legion does not record" in out
    # what such a link is, in words, where a pip install has no docs/ (a user's review)
    line = next(ln for ln in out.splitlines() if "links inferred" in ln)
    assert "linked by the items' timing" in line and "estimate" in line and "docs/" not in line


def test_what_rests_on_inferred_links_is_a_part_of_what_is_explained(capsys):
    """A path that stops at an event of a rank not given leaves the time before it unknown:
    that time rests on no link, so what rests on inferred links is a part of the explained
    time (it was counted with the unknown: 3.667 s of mpi2's rank 0 against 0.315 s
    explained, "82 % of it" in the text).  The text says the same."""
    for ranks in ("0", "1"):
        doc = critical_json(capsys, MPI2, "--ranks", ranks)
        assert doc["by_kind"]["unknown"] > 0 and doc["inferred"]["links"] >= 1
        assert 0 < doc["inferred"]["resting_ns"] <= doc["explained_ns"]
        _, out, _ = critical(capsys, MPI2, "--ranks", ranks, "--limit", 1)
        said = re.search(r"explain [^(]+\(([\d.]+)%\).*?\(([\d.]+)%\) of it", out, re.S)
        assert said and float(said.group(2)) <= float(said.group(1)), out


def test_the_shutdown_has_its_own_lane_group_row_and_json_lists_one_item_a_line(capsys):
    """The shutdown is the runtime's clean-up, not the program's thread running: by lane
    group it is its own row (as the start-up is), not io (extern)'s.  ``--json`` lists the
    path and the items one a line (json's C encoder), and reads back as the same data."""
    rc, out, _ = critical(capsys, "--json", REAL / "mpi4")
    doc = json.loads(out)
    assert doc["by_group"]["shutdown"] == doc["by_kind"]["shutdown"] > 0
    lines = out.splitlines()
    at = lines.index(' "items": [')
    assert all(ln.startswith("  {") for ln in lines[at + 1:at + 1 + len(doc["items"])])
    assert len(lines) < 200 + len(doc["items"]) + len(doc["path"])


def test_a_crashed_runs_critical_takes_its_console_log(capsys):
    """oom2 (both ranks out of memory; Legion wrote no timeline): ``critical`` said to give
    the console log with --log, then refused the option; it takes it and names the failure."""
    rc, out, err = critical(capsys, REAL / "oom2", "--log", REAL / "oom2" / "console.log")
    assert rc == 0, err
    assert "Out of memory on rank 0" in out and "No critical path" in out


def test_any_text_given_as_the_console_log_is_taken_with_a_note(capsys, tmp_path):
    """``--log`` with the console output of a run that did not fail (what its program
    printed; Realm's warnings; no "legate" in it) is taken, with a note that it holds no
    out-of-memory report — it was refused, exit 2 (a fresh user's review).  A text named as
    a profile (a log cut short in its header, a file renamed) is still a damaged profile."""
    out = tmp_path / "run.log"
    out.write_text("hello from my program\nresult = 42\n")
    rc = main(["stats", "-q", MPI2, "--log", str(out)])
    err = capsys.readouterr().err
    assert rc == 0 and "read as legate's console output" in err and "no out-of-memory" in err
    named = tmp_path / "legate_9.prof"
    named.write_text("hello from my program\n")
    rc = main(["stats", "-q", MPI2, str(named)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and any("legate_9.prof: not a Legion Prof log" in e for e in err)


def test_stats_names_each_meta_task_whole(capsys):
    """`stats` cut every name to 39 characters with nothing saying so: "Distributed
    Collectable Downgrade Request" and "... Response" read alike (a user's review).  The
    column is as wide as the longest name (up to 63 characters; past that, "...")."""
    assert main(["stats", "-q", MPI2]) == 0
    out = capsys.readouterr().out
    for name in ("Distributed Collectable Downgrade Response",
                 "Logical Dependence Analysis Pipeline stage"):
        assert re.search(rf"^  {re.escape(name)} +\d+ ", out, re.M), name


def test_the_program_starts_row_says_what_it_holds_beside_the_start_up(capsys):
    """"(program start)" holds the runtime starting and then the program until its first
    operation: its row says both (2.626 s beside "1.819 s the runtime starting", unexplained,
    a user's review), and they add up to it."""
    doc = critical_json(capsys, MPI2)
    startup, start = doc["by_kind"]["startup"], doc["by_provenance"]["(program start)"]
    assert 0 < startup < start
    _, out, _ = critical(capsys, MPI2, "--limit", 1)
    row = next(ln for ln in out.splitlines() if ln.rstrip().endswith(")")
               and "(program start)  (the runtime starting" in ln)
    said = re.search(r"the runtime starting ([\d.]+ \w+), then the program until its first "
                     r"operation ([\d.]+ \w+)\)", row)
    assert said, row


def test_each_step_says_where_it_is_on_the_timeline(capsys):
    """The listing gave each step's time on the path but not where it lies: a step could not
    be found in the viewer (a user's review).  Each row says where its piece of the path
    begins, as the JSON's ``on_path_ns``."""
    from legate_prof.present.units import format_ns
    doc = critical_json(capsys, MPI2)
    _, out, _ = critical(capsys, MPI2, "--limit", 5)
    lines = out.splitlines()
    head = next(k for k, ln in enumerate(lines) if ln.split()[:3] == ["on", "path", "from"])
    rows = [ln for ln in lines[head + 1:] if ln.strip() and not ln.strip().startswith(("…",
                                                                                     "..."))]
    path, steps, k = doc["path"], [], 0
    while k < len(path) and len(steps) < 3:  # (a step, then the steps of 0 ns folded)
        steps.append(path[k])
        k += 1
        while k < len(path) and path[k]["on_path_ns"][1] == path[k]["on_path_ns"][0]:
            k += 1
    for row, step in zip(rows[:3], steps):
        assert row[16:28].strip() == format_ns(step["on_path_ns"][0]), (row, step)


def test_time_before_a_path_that_stops_at_a_rank_not_given_is_unknown_in_words(capsys):
    """``--ranks 2-3``: the path stops at what rank 0 did, and the time before it is unknown.
    The sentence listed that unknown time among what the shares "explain", and said the
    inferred links' few milliseconds were "everything before" their time (a user's review):
    the unknown time now stands apart, the links carry the path's part before it, and the
    explained and the unknown time add up to the run's."""
    doc = critical_json(capsys, REAL / "mpi4", "--ranks", "2-3")
    unknown = doc["by_kind"]["unknown"]
    assert unknown > 0 and doc["explained_ns"] + unknown == doc["run_ns"]
    rc, out, _ = critical(capsys, REAL / "mpi4", "--ranks", "2-3")
    line = out.splitlines()[1]
    assert line.startswith("The shares below explain ") and " unknown," not in line, line
    assert ", the path before " in line and "everything before" not in line, line
    assert line.endswith(f"; the other {format_ns(unknown)} is unknown."), line


@pytest.mark.parametrize("start_s, stop_s", [(2.0, 3.0), (3.2, 4.0), (3.5, 3.7), (1.0, 3.4)])
def test_a_windows_lines_are_the_runs_lines_there(start_s, stop_s):
    """Cut to a window, the path's time counts for the lines the whole run's path counts it
    for there.  The window lost the operations made before it and after it: mpi2's 2-3 s,
    the program before its first operation (the run's "(program start)"), read 97 % "(no
    line)" (a user's review), and a gap before a line's work past the window's end lost
    that line."""
    from collections import Counter
    from argparse import Namespace
    from legate_prof.analyze.critical_path import path_pieces
    from legate_prof.analyze.critical_path import given_window
    from legate_prof.cli.common import run_beyond_window, trimmed
    from legate_prof.load.loader import load_profile
    from legate_prof.query import as_source
    a, b = int(start_s * 1e9), int(stop_s * 1e9)
    whole = load_profile([MPI2], ranked=True, stack=False)
    run = as_source(whole)
    ns, _, line, _, begin = (np.asarray(x) for x in path_pieces(run).rows)
    lo, hi = np.maximum(begin, a), np.minimum(begin + ns, b)
    want = Counter()
    for k, d in zip(line[hi > lo].tolist(), (hi - lo)[hi > lo].tolist()):
        want[run.provenances[k] if k > 0 else k] += d
    args = Namespace(start=a, stop=b)
    window = as_source(trimmed(whole, args))
    given_window(window, run_beyond_window(whole, args))
    got = Counter()
    for k, d in zip(*(np.asarray(x).tolist() for x in path_pieces(window).rows[2::-2])):
        got[window.provenances[k] if k > 0 else k] += d
    assert got == want


@pytest.mark.parametrize("start_s, stop_s", [(4.7, 4.9), (4.75, 5.0), (4.5, 4.95), (2.0, 3.0),
                                             (3.5, 3.7), (1.0, 3.4), (2.5, 4.8),
                                             (3.53, 3.9), (4.46, 4.6)])
def test_a_windows_kinds_and_lines_are_the_runs_pieces_clipped_to_it(start_s, stop_s):
    """A window's time by kind and by line is the whole run's path pieces clipped to it
    (a numbers audit): a window after the program's end read the shutdown as the program's
    own thread launching a line's tasks (the guide's 4-rank run, 170-180 s: 100 % "launch"
    for ineff4.py:23, whose tasks had ended), and the time before a window's first step,
    a gap in the run's path, read "unknown"."""
    from collections import Counter
    from argparse import Namespace
    from legate_prof.analyze.critical_path import given_window, path_pieces
    from legate_prof.cli.common import run_beyond_window, trimmed
    from legate_prof.load.loader import load_profile
    from legate_prof.query import as_source
    a, b = int(start_s * 1e9), int(stop_s * 1e9)
    whole = load_profile([MPI2], ranked=True, stack=False)
    run = as_source(whole)
    ns, cat, line, _, begin = (np.asarray(x) for x in path_pieces(run).rows)
    b = min(b, run.summary_model().extent()[1])
    lo, hi = np.maximum(begin, a), np.minimum(begin + ns, b)
    keep = hi > lo
    want = Counter()
    for c, k, d in zip(cat[keep].tolist(), line[keep].tolist(), (hi - lo)[keep].tolist()):
        want[c, run.provenances[k] if k > 0 else k] += d
    args = Namespace(start=a, stop=b)
    window = as_source(trimmed(whole, args))
    given_window(window, run_beyond_window(whole, args))
    got = Counter()
    wns, wcat, wline, _, _ = (np.asarray(x).tolist() for x in path_pieces(window).rows)
    for d, c, k in zip(wns, wcat, wline):
        got[c, window.provenances[k] if k > 0 else k] += d
    assert got == want


def test_a_window_after_the_program_ended_says_when_it_ended(capsys):
    """mpi2's program ended at 4.689 s: `critical` of a window after that is all shutdown
    and says when the program ended, before the window (it said the window's start), and
    what the runtime did in the window."""
    doc = critical_json(capsys, MPI2, "--start", "4.7s", "--stop", "4.99s")
    assert doc["by_kind"]["shutdown"] == doc["run_ns"] == 290_000_000, doc["by_kind"]
    tail = doc["shutdown"]
    assert tail["start_ns"] == 4_700_000_000 and tail["ns"] == 290_000_000
    assert tail["ended_ns"] == 4_688_561_302 < tail["start_ns"], tail
    whole = critical_json(capsys, MPI2)["shutdown"]
    assert whole["ended_ns"] == whole["start_ns"] == tail["ended_ns"]
    _, out, _ = critical(capsys, MPI2, "--start", "4.7s", "--stop", "4.99s")
    assert ("Shutdown: the program's top-level task ended at 4.689 s, before the window; in "
            "it, the runtime spent 290.000 ms cleaning up: ") in out, out


def test_a_window_before_an_inferred_link_says_it_rests_on_it(capsys):
    """A review: the whole run of loops3 says everything before 7.533 s rests on an inferred
    link; its window 5-6 s, the same steps cut to it, said no link was inferred.  The window
    rests on the run's link beyond it: all of its explained time, and the text says so; a
    window after the link rests on none."""
    files = [str(f) for f in rank_files(REAL / "loops3")]
    run = critical_json(capsys, *files)["inferred"]
    assert run["links"] == 1 and run["from_ns"] is not None
    window = critical_json(capsys, *files, "--start", "5s", "--stop", "6s")
    inf = window["inferred"]
    assert inf["links"] == 1 and inf["from_ns"] == run["from_ns"] > 6_000_000_000
    assert 0 < inf["resting_ns"] == window["explained_ns"] <= window["run_ns"]
    text = critical(capsys, *files, "--start", "5s", "--stop", "6s")[1]
    assert f"everything before {format_ns(run['from_ns'])}, is reached through 1 link " \
           "inferred" in text, text
    after = critical_json(capsys, *files, "--start", f"{run['from_ns'] + 1}ns")
    assert after["inferred"]["links"] == 0 and after["inferred"]["resting_ns"] == 0


def test_the_kinds_of_the_programs_thread_are_said_under_by_kind(capsys):
    """loops3: 36 % "launch", read by a review as Python running, is 1.5 s of waits inside
    runtime calls (counted in the call, as the reference does): the legend under "By kind"
    says what launch holds, as it says what blocked is."""
    rc, text, _ = critical(capsys, str(REAL / "loops3"))
    assert rc == 0
    by_kind = text.split("By kind", 1)[1].split("\n\n", 1)[0]
    [launch] = [ln.strip() for ln in by_kind.splitlines() if ln.strip().startswith("(launch:")]
    assert "a runtime call it made, with the waits inside that call" in launch
    assert any(ln.strip().startswith("(blocked:") for ln in by_kind.splitlines())


def test_the_largest_steps_follow_a_listing_that_does_not_show_them_all(capsys):
    """The guide's run: its listing (the last 40 of 134,490 steps, microseconds each) did
    not say where the run went (a review).  After it, the steps that hold the most of the
    path, largest first, as the JSON's path has them; none where the listing shows all."""
    doc = critical_json(capsys, REAL / "mpi4")
    _, out, _ = critical(capsys, REAL / "mpi4")
    head = next(ln for ln in out.splitlines() if ln.startswith("Largest steps: 10 of "))
    rows = out.split(head, 1)[1].splitlines()[2:]
    held = sorted((p["on_path_ns"][1] - p["on_path_ns"][0] for p in doc["path"]),
                  reverse=True)[:10]
    assert [" ".join(r.split()[:2]) for r in rows] == [format_ns(h) for h in held]
    assert f"hold {format_ns(sum(held))} (" in head
    _, every, _ = critical(capsys, REAL / "mpi4", "--limit", 0)
    assert "Largest steps" not in every
