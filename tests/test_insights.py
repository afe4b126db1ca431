"""`legate_prof insights` on the guide's Example 1, recorded for real (scaled down to 200k)."""

import json

import numpy as np
import pytest
import os
import subprocess
import sys
from pathlib import Path


from legate_prof.analyze.insights import find_insights
from legate_prof.load.loader import load_profile
from legate_prof.present.units import format_bytes, format_ns

ROOT = Path(__file__).resolve().parents[1]


def by_pattern(findings):
    out = {}
    for f in findings:
        out.setdefault(f["pattern"], []).append(f)
    return out


def test_inefficient_example_names_the_loop_the_scatter_and_the_temporaries(guide_examples):
    prog, profiles = guide_examples["inefficient.py"]
    found = by_pattern(find_insights(load_profile(profiles)))
    line = lambda n: f"{prog}:{n}"  # noqa: E731
    (loop,) = found["tiny_tasks"]
    assert set(loop["provenance"]) == {line(21), line(22), line(23)}  # the slice loop
    ev = loop["evidence"]
    assert ev["tasks"] >= 3 * 40 and ev["median_task_ns"] < ev["launch_latency_ns"]
    # the loop walks slices of z (a view, ``sub``, and masks of it): vectorize it
    assert ev["loop_shape"] == "slices" and loop["remedy"].startswith("Vectorize the loop")
    assert f"{prog}:11" in loop["remedy"]  # z = x + y: the array sliced
    (idx,) = found["advanced_indexing"]
    assert set(idx["provenance"]) == {line(8), line(15)}  # nonzero, then the scatter
    assert {"Nonzero", "Scatter"} <= set(idx["evidence"]["tasks"])
    temps = {p for f in found["temporaries"] for p in f["provenance"]}
    assert line(12) in temps  # z_alt = x * y + 1.0
    assert line(4) in temps  # .astype(...) copies (the guide: "forces an extra copy")
    # the runtime's share depends on the machine's load; when it is named, its numbers hold
    for f in found.get("runtime_overhead", []):
        assert f["evidence"]["utility_busy_ns"] > 1.5 * f["evidence"]["application_busy_ns"]
    costs = [f["cost_ns"] for f in find_insights(load_profile(profiles))]
    assert costs == sorted(costs, reverse=True)


def test_efficient_example_has_no_tiny_task_finding(guide_examples):
    _, profiles = guide_examples["efficient.py"]
    found = by_pattern(find_insights(load_profile(profiles)))
    assert "tiny_tasks" not in found and "runtime_overhead" not in found
    assert "advanced_indexing" not in found


def test_insights_json_schema(guide_examples):
    _, profiles = guide_examples["inefficient.py"]
    p = subprocess.run([sys.executable, "-m", "legate_prof", "insights", "--json", *profiles],
                       capture_output=True, text=True, env=dict(os.environ))
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["findings"]
    for f in doc["findings"]:
        assert set(f) == {"pattern", "title", "provenance", "window_ns", "evidence", "cost_ns",
                          "wall_ns", "processor_ns", "remedy", "path_ns", "lines_ns",
                          "inferred_ns", "counted_under"}
        assert f["inferred_ns"] <= f["wall_ns"] <= f["path_ns"]
        assert f["window_ns"][0] <= f["window_ns"][1] and f["remedy"]
        assert f["cost_ns"] == f["wall_ns"] >= 0 and f["processor_ns"] >= 0


def test_record_without_a_driver_adds_gpus_0_and_reports_a_failed_run(tmp_path):
    ok = tmp_path / "ok.py"
    ok.write_text("from legate_prof.runtime import numpy as np\nprint(float(np.ones(8).sum()))\n")
    p = subprocess.run([sys.executable, "-m", "legate_prof", "record", "--cpus", "1", str(ok)],
                       capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "--gpus 0" in p.stderr and (tmp_path / "legate_0.prof").exists()
    assert (tmp_path / "legate_prof" / "index.html").exists()  # the guide's report, beside
    bad = tmp_path / "bad.py"
    bad.write_text("raise SystemExit(3)\n")
    d = tmp_path / "bad"
    d.mkdir()
    p = subprocess.run([sys.executable, "-m", "legate_prof", "record", "--cpus", "1",
                        str(bad)], capture_output=True, text=True, cwd=d, timeout=600)
    assert p.returncode != 0
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("legate_prof: error:")]
    assert len(errors) == 1 and "legate exited with status" in errors[0]


def test_viewer_findings_dock_zooms_to_a_finding_and_highlights_its_items(guide_examples,
                                                                           qtbot):
    from legate_prof.viewer.app import MainWindow
    from legate_prof.viewer.panels.findings import add_findings_dock
    _, profiles = guide_examples["inefficient.py"]
    model = load_profile(profiles)
    findings = find_insights(model)
    win = MainWindow(model, profiles)
    qtbot.addWidget(win)
    panel = add_findings_dock(win, findings)
    row = next(k for k, f in enumerate(findings) if f["pattern"] == "tiny_tasks")
    panel.show_finding(row)
    qtbot.waitUntil(lambda: not win.busy())  # (its items are found in a thread)
    a, b = win.timeline.time_range()
    t0, t1 = findings[row]["window_ns"]
    assert a <= t0 and t1 <= b and (b - a) < 1.2 * (t1 - t0) + 10_000
    assert win.timeline.item.matches is not None and len(win.timeline.item.matches) >= 100



def test_a_findings_processor_time_is_its_lines_tasks_work_with_their_calls_not_their_waits():
    """A temporaries finding uses the processor time its line's tasks worked: each task's
    span minus its waits, plus the running time of the calls it made (legate runs a task's
    body inside an application call, which ``stats`` counts apart, as the reference does).
    "When" is where those tasks ran.  On the recorded efficient example (with the runtime's
    stream) the tasks of line 14 spend most of their span in their calls."""
    import numpy as np
    from legate_prof.model.kinds import ItemKind
    run = ROOT / "fixtures" / "real" / "efficient_1rank"
    m = load_profile([str(run / "legate_0.prof.gz"), str(run / "legate_0.runtime.prof")])
    (f,) = [f for f in find_insights(m) if f["pattern"] == "temporaries"
            and f["provenance"][0].endswith("efficient.py:14")]
    it = m.items
    prov = np.array(m.provenances, object)[m.op_provenance(it["op_id"])]
    tasks = np.flatnonzero((it["kind"] == int(ItemKind.TASK))
                           & (prov == f["provenance"][0]))
    call_kinds = [int(k) for k in (ItemKind.MAPPER_CALL, ItemKind.RUNTIME_CALL,
                                   ItemKind.APP_CALL)]

    def running(i):
        w = m.waits["item"] == i
        return int(it["stop"][i] - it["start"][i]) - int((m.waits["end"][w]
                                                          - m.waits["start"][w]).sum())
    own = sum(running(i) for i in tasks)
    calls = [c for i in tasks for c in np.flatnonzero(np.isin(it["kind"], call_kinds)
                                                      & (it["creator"] == it["fevent"][i]))]
    work = own + sum(running(c) for c in calls)
    assert f["processor_ns"] == f["evidence"]["task_time_ns"] == work
    assert any(it["kind"][c] == int(ItemKind.APP_CALL) for c in calls) and work > 2 * own
    span = int((it["stop"][tasks] - it["start"][tasks]).sum())
    assert work <= span  # (here they waited on no event: their calls were all of it)
    assert f["window_ns"] == [int(it["start"][tasks].min()), int(it["stop"][tasks].max())]


def test_costs_found_in_a_window_say_they_are_the_windows():
    """`insights --start/--stop` shares out the run's critical path cut to the window: the
    text says "this window's", not "the run's"."""
    from legate_prof.analyze.insights_text import format_insights
    finding = {"pattern": "temporaries", "title": "t", "provenance": ["p.py:6"],
               "window_ns": [0, 10], "wall_ns": 10, "cost_ns": 10, "processor_ns": 20,
               "evidence": {}, "remedy": "r"}
    assert "of the run's wall-clock time" in format_insights([finding])
    assert "of this window's wall-clock time" in format_insights([finding], windowed=True)


def test_a_window_of_a_loop_too_short_to_name_it_says_what_it_did_not_judge():
    """A window of the guide's tiny-task loop (940-980 ms: 39 short tasks, at most 19 from
    one line, where a loop is named from 32) found no tiny tasks and left the window's time
    to other findings without a word (a user's review): the text says what it saw and did
    not judge; the whole run, which names the loop, says nothing of it."""
    run = str(ROOT / "fixtures" / "real" / "inefficient_1rank")
    window = ["--start", "940ms", "--stop", "980ms"]

    def insights(*args):
        p = subprocess.run([sys.executable, "-m", "legate_prof", "insights", "-q", *args],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        return p.stdout
    text = insights(run, *window)
    assert ("Not judged in this window (a wider one may judge it):\n  tiny_tasks: 39 tasks "
            "from 3 line(s) ran shorter than their launch, at most 19 from one line: a loop "
            "is named from 32 tasks of one line") in text, text
    assert json.loads(insights(run, *window, "--json"))["unjudged"][0].startswith("tiny_tasks")
    whole = json.loads(insights(run, "--json"))
    assert "unjudged" not in whole and "tiny_tasks" in [x["pattern"] for x in whole["findings"]]


def test_a_finding_off_the_critical_path_says_so_and_its_idle_time_says_what_it_sums():
    """On the real 2-rank run, a line's arrays whose work ran beside the critical path cost
    none of the run's wall-clock time, and the text says why rather than "costs 0 ns"; the
    idle time before a finding's work is summed over processors (it can exceed the run), and
    the text says so, with what that work mostly waited for."""
    from legate_prof.analyze.insights_text import format_insights
    from legate_prof.present.units import format_bytes, format_ns
    run = ROOT / "fixtures" / "real" / "mpi2"
    profile = load_profile(sorted(str(p) for p in run.glob("legate_*.prof*")), ranked=True)
    found = find_insights(profile)
    text = format_insights(found)
    off = [f for f in found if f["pattern"] != "out_of_memory" and f["wall_ns"] == 0]
    assert off, "the run has findings off its critical path"
    assert "costs 0 ns" not in text
    assert (text.count("none of its work is on the critical path")
            + text.count("its work is not on the critical path")) == len(off)
    # and they come under one line that says they are minor (a user's review: a finding of
    # no cost was listed like a real problem), after every finding that costs
    lines = text.splitlines()
    at = [k for k, ln in enumerate(lines) if ln.startswith("Minor: ")]
    heads = [k for k, ln in enumerate(lines) if ln[:1].isdigit()]
    assert len(at) == 1 and sum(k > at[0] for k in heads) == len(off)
    first, last = profile.summary_model().extent()
    idle = [f for f in found if f["evidence"].get("idle_before_ns")]
    assert any(f["evidence"]["idle_before_ns"] > last - first for f in idle)
    for f in idle:
        waits = f["evidence"]["idle_waiting_for"]
        top = max(waits, key=waits.get)
        line = next(x for x in text.splitlines()
                    if x.startswith("   idle before its work: "
                                    + format_ns(f["evidence"]["idle_before_ns"])))
        assert "summed over the processors that waited (not wall-clock time)" in line
        assert format_ns(waits[top]) in line


def test_findings_counted_above_are_not_called_minor():
    """read_loop_2ranks: its loop's waits for values (38.5 % of the run) hold 84.8 ms of the
    critical path, counted under tiny_tasks; they were listed under "Minor: ... cost none of
    the run's wall-clock time" (a review, on the guide's run: 70 % of it waited, "minor").
    Findings whose share of the path is counted above come under words that say so."""
    from legate_prof.analyze.insights_text import format_insights
    run = ROOT / "fixtures" / "real" / "read_loop_2ranks"
    found = find_insights(load_profile(sorted(str(p) for p in run.glob("legate_*"))))
    counted = [f for f in found if f["wall_ns"] == 0 and f.get("path_ns", 0)]
    assert any(f["pattern"] == "blocking" for f in counted)
    text = format_insights(found)
    assert "Minor:" not in text
    head = next(ln for ln in text.splitlines() if ln.startswith("No time of their own: "))
    assert "counted under a finding above" in head


def test_stats_idle_lines_say_what_they_measure_beside_critical():
    """stats, critical and insights ranked the loop's lines three ways, nothing saying why (a
    review): stats' lines that waited say their time is idle processor time, not the run's
    wall clock, and where each line's share of that is."""
    run = ROOT / "fixtures" / "real" / "read_loop_2ranks"
    p = subprocess.run([sys.executable, "-m", "legate_prof", "stats", "--no-cache", str(run)],
                       capture_output=True, text=True, cwd=ROOT)
    assert ("  by the line that waited (idle processor time, not the run's wall clock: "
            "`critical` gives each line's share of that):") in p.stdout.splitlines()


REAL = ROOT / "fixtures" / "real"


def run_files(name, ranks=None):
    """A recorded run's logs and runtime streams (of ``ranks``: None, all)."""
    files = sorted(str(p) for p in (REAL / name).glob("legate_*.prof*"))
    return [p for p in files if ranks is None
            or int(Path(p).name.split("_")[1].split(".")[0]) in ranks]


def test_temporaries_count_each_array_once_however_many_ranks_hold_it():
    """Every rank runs the program and its stream records the same arrays: on the real
    two-rank runs a line is named with as many arrays as one rank's stream gives it (a
    rank's share of an array, or its copy, is not another array), and the bytes are the
    arrays' own; a line making one array (``x = np.arange(N)``) is not named."""
    from legate_prof.read.runtime_stream import read_runtime_stream
    for name, flagged in (("mpi2", {"prog_mr.py:8": 2}), ("mpi2_util2", {"prog_2b.py:7": 2}),
                          ("mpi2_copies", {"prog_copies.py:10": 8})):
        arrays = list(read_runtime_stream(REAL / name / "legate_0.runtime.prof").arrays.values())
        biggest = max(a["nbytes"] for a in arrays)
        for ranks in (None, {0}):
            found = by_pattern(find_insights(load_profile(run_files(name, ranks), ranked=True)))
            got = {f["provenance"][0].rsplit("/", 1)[-1]: f for f in found["temporaries"]}
            assert {k: f["evidence"]["arrays"] for k, f in got.items()} == flagged, (name, ranks)
            for line, f in got.items():
                mine = [a for a in arrays if a["site"].endswith("/" + line)
                        and a["nbytes"] >= 0.5 * biggest]
                assert f["evidence"]["arrays"] == len(mine)
                assert f["evidence"]["bytes"] == sum(a["nbytes"] for a in mine)
                assert "guess" not in f["evidence"]


def test_without_the_stream_temporaries_name_only_what_legion_can_tell_and_say_it_is_a_guess():
    """From Legion's logs alone the guide's efficient program gets no temporaries finding
    (``np.add(x, y, out=z)`` writes into its output; ``rng.random`` makes one array split over
    two CPUs); ``np.random.random(N).astype(...)`` (a Random and a Convert) is still named, and
    the finding says it is a guess; ``z = x + y`` is not. With the stream, the efficient
    program's ``np.putmask(z, cond, x * y + 1.0)`` (x * y is a temporary) stays the one named."""
    from legate_prof.analyze.insights_text import format_insights
    from legate_prof.assemble.restrict import restrict
    efficient = load_profile([str(REAL / "efficient_0.prof")])
    found = find_insights(efficient)
    assert [f for f in found if f["pattern"] == "temporaries"] == []
    assert {f["pattern"] for f in found} == {"warm_up"}  # (its start-up alone: no slow line)
    assert "[temporaries]" not in format_insights(found)
    # a window holding the arrays' instances but none of the tasks that made them
    window = restrict(efficient, start=1_000_000_000, stop=1_001_000_000)
    assert [f for f in find_insights(window) if f["pattern"] == "temporaries"] == []
    alone = by_pattern(find_insights(load_profile(
        [str(REAL / "inefficient_1rank" / "legate_0.prof.gz")])))
    by_line = {f["provenance"][0].rsplit(":", 1)[-1]: f for f in alone["temporaries"]}
    assert "4" in by_line and "11" not in by_line
    astype = by_line["4"]
    assert astype["evidence"]["guess"] is True
    assert astype["evidence"]["instances_by_operation"].keys() == {"Random", "Convert"}
    assert "a guess" in astype["title"] and "runtime's stream" in astype["title"]
    streamed = find_insights(load_profile(run_files("efficient_1rank")))
    assert [(f["provenance"], f["evidence"]["arrays"]) for f in streamed
            if f["pattern"] == "temporaries"] == [
        (["/work/staging/fixtures/efficient_1rank/efficient.py:14"], 2)]


def test_a_loops_lines_are_one_tiny_tasks_finding_however_few_tasks_each_line_has():
    """On the recorded inefficient example (N = 16,384: 4 iterations) line 23 launches 36
    tasks, line 22 20 and line 21 8, all started among each other's: one loop of three lines
    (line 15's scatter, started just before the loop, is not part of it)."""
    import numpy as np
    from legate_prof.model.kinds import ItemKind
    profile = load_profile(run_files("inefficient_1rank"))
    (loop,) = by_pattern(find_insights(profile))["tiny_tasks"]
    lines = {p.rsplit(":", 1)[-1]: n for p, n in loop["evidence"]["tasks_per_line"].items()}
    assert lines == {"21": 8, "22": 20, "23": 36}
    assert loop["evidence"]["tasks"] == 64 and loop["title"].startswith("64 tiny tasks from 3 ")
    assert [p.rsplit(":", 1)[-1] for p in loop["provenance"]] == ["21", "22", "23"]
    m = profile.merged_model()
    prov = np.array(m.provenances, object)[m.op_provenance(m.items["op_id"])]
    starts = {n: np.sort(m.items["start"][(m.items["kind"] == int(ItemKind.TASK)) & (prov == p)])
              for p in loop["provenance"] for n in [p.rsplit(":", 1)[-1]]}
    assert starts["22"][0] < starts["23"][-1] and starts["23"][0] < starts["22"][-1]


def test_a_window_that_holds_nothing_says_so_rather_than_that_the_run_is_clean():
    """`insights --start 10s` on a 5 s run warns that nothing is left; the answer then says
    the window holds nothing to judge, not that no pattern shows in the profile."""
    p = subprocess.run([sys.executable, "-m", "legate_prof", "insights", str(REAL / "mpi2"),
                        "--start", "10s"], capture_output=True, text=True, env=dict(os.environ),
                       cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert "nothing is left" in p.stderr
    assert p.stdout.strip() == ("No finding: the window (--start/--stop) holds nothing to "
                                "judge (no item of the run is in it).")
    assert "inefficiency patterns" not in p.stdout


def test_messages_across_clocks_far_apart_say_the_clocks_not_the_network():
    """``mpi2_skewed``'s node clocks are 100 s apart: its messages' latencies and the path's
    waits on them measure the clocks, so the finding says so, claims no wall-clock time and
    does not send the user to the network; the same run with its real clocks (``mpi2``)
    still names slow messages with their time on the path.  ``critical`` notes the skew."""
    skewed = by_pattern(find_insights(load_profile(run_files("mpi2_skewed"), ranked=True)))
    f = skewed["message_latency"][0]
    assert "clocks disagree by about 99.999 s" in f["title"] and "network" not in f["remedy"]
    # (its ranks ran on one machine: no clocks of machines to synchronize)
    assert "one machine (vm)" in f["title"] and "NTP" not in f["remedy"]
    assert f["evidence"]["clocks_apart_ns"] > 99e9 and f["wall_ns"] == f["cost_ns"] == 0
    text = subprocess.run([sys.executable, "-m", "legate_prof", "insights",
                           str(REAL / "mpi2_skewed")], capture_output=True, text=True).stdout
    assert "costs an unknown share of the run's wall-clock time" in text
    real = by_pattern(find_insights(load_profile(run_files("mpi2"), ranked=True)))
    g = real["message_latency"][0]
    assert g["title"].startswith("slow messages") and "network" in g["remedy"]
    assert g["wall_ns"] > 0 and "clocks_apart_ns" not in g["evidence"]
    crit = subprocess.run([sys.executable, "-m", "legate_prof", "critical",
                           str(REAL / "mpi2_skewed")], capture_output=True, text=True).stdout
    assert "Note: Clock skew" in crit and "rank 0's clock reads 99.999 s behind rank 1's" in crit


def test_a_long_shutdown_is_a_finding_costed_at_the_paths_shutdown(monkeypatch):
    """After the program's top-level task ended the runtime cleans up what it made; where
    that takes a good share of the run with thousands of items a rank (the guide's loop of
    slices: 44 s of a 247 s run on 4 ranks) it is a finding, costed at the path's shutdown
    pieces, tied to the lines whose items and instances it released.  mpi4's own teardown
    (254 items a rank) is no finding; with the bar lowered it is, with those figures."""
    from fixtures.make_critical_goldens import REAL
    from legate_prof.analyze import insights
    from legate_prof.analyze.critical_path import critical_path_report
    from legate_prof.query import as_source
    profile = load_profile([REAL / "mpi4"], stack=False)
    assert "shutdown" not in [f["pattern"] for f in insights.find_insights(profile)]
    monkeypatch.setattr(insights, "SHUTDOWN_ITEMS_PER_RANK", 100)
    found = insights.insights_of_run(profile)
    tail = next(f for f in found["findings"] if f["pattern"] == "shutdown")
    report = critical_path_report(as_source(profile), with_items=False)
    assert tail["wall_ns"] == report["by_kind"]["shutdown"] == report["shutdown"]["on_path_ns"]
    assert tail["window_ns"] == [report["shutdown"]["start_ns"], report["run_span_ns"][1]]
    assert tail["evidence"]["items"] == report["shutdown"]["items"] == 1014
    assert set(tail["provenance"]) <= set(report["shutdown"]["lines"])
    assert sum(f["wall_ns"] for f in found["findings"]) <= found["explained_ns"] \
        <= found["run_ns"]


def test_each_loop_gets_the_advice_that_fits_its_shape():
    """``loops3`` (``fixtures/programs/loop_shapes.py`` on 3 real ranks): a time loop of
    whole-array operations (line 18), a loop over slices (22) and a loop writing ``out=``
    (25). Before, all three were told to "vectorize the loop ... instead of thousands of
    slices"; each now gets the remedy of its shape, from the runtime stream's operations."""
    found = [f for f in find_insights(load_profile(run_files("loops3")))
             if f["pattern"] == "tiny_tasks"]
    by_line = {f["provenance"][0].rsplit(":", 1)[-1]: f for f in found}
    assert set(by_line) == {"18", "22", "25"}
    shapes = {k: f["evidence"]["loop_shape"] for k, f in by_line.items()}
    assert shapes == {"18": "time_loop", "22": "slices", "25": "out"}
    assert by_line["22"]["remedy"].startswith("Vectorize the loop")
    assert "loop_shapes.py:20" in by_line["22"]["remedy"]  # w, the array written slice by slice
    assert "time loop of whole-array operations" in by_line["18"]["title"]
    assert by_line["18"]["remedy"].startswith("Each step is whole-array operations already")
    assert "out= the array allocated at" in by_line["25"]["title"]
    assert by_line["25"]["remedy"].startswith("The loop already writes in place (out=)")
    for f in (by_line["18"], by_line["25"]):
        assert "Vectorize" not in f["remedy"] and "slices" not in f["title"]


def test_launch_overhead_is_a_latency_the_items_own_times_show():
    """The launch latency is measured from each operation's launch (its box on the ops lane
    starts there) to its first task's start (where the box's first wait ends): the median of
    what the items show, not the utility processors' busy time over the tasks launched (which
    made it "136.927 ms each", teardown included). Every first start is a task of that line
    on that rank, and the tasks run for less: they are tiny."""
    import numpy as np
    from legate_prof.model.kinds import ItemKind
    profile = load_profile(run_files("loops3"))
    found = {f["provenance"][0].rsplit(":", 1)[-1]: f for f in find_insights(profile)
             if f["pattern"] == "tiny_tasks"}
    m = profile.merged_model()
    it = m.items
    prov = np.array(m.provenances, object)[m.op_provenance(it["op_id"])]
    rank = m.lanes["rank"][it["lane"]]
    for line, f in found.items():
        ev = f["evidence"]
        assert ev["launch_measured_from"] == "operation"
        site = f["provenance"][0]
        ops = np.flatnonzero((it["kind"] == ItemKind.RUNTIME_OP) & (prov == site))
        tasks = np.flatnonzero((it["kind"] == ItemKind.TASK) & (prov == site))
        latency = []
        for i in ops.tolist():
            first = m.waits_of(i)[0]  # (start, ready, end): launch -> first ready -> first start
            assert first[0] == it["start"][i]
            mine = tasks[rank[tasks] == rank[i]]
            assert first[2] in set(it["start"][mine].tolist())  # a task of this line and rank
            latency.append(first[2] - first[0])
        assert len(latency) == 3 * ev["operations"]  # every rank's launches
        assert ev["launch_latency_ns"] == int(np.median(latency))
        assert ev["median_task_ns"] < ev["launch_latency_ns"]
    assert "from an operation's launch to its start" in found["18"]["title"]


def test_costs_say_where_a_findings_path_time_went_and_what_rests_on_inference():
    """A piece of the path counts for one finding: a finding whose pieces all went to
    another says so (not "none of its work is on the path"); a finding off the path whose
    lines still hold time there (as launching, runtime work) says how much; the part of a
    cost reached only through inferred links is given and said."""
    from legate_prof.analyze.insights_text import cost_words
    found = find_insights(load_profile(run_files("mpi3")))
    for x in found:
        assert x["inferred_ns"] <= x["wall_ns"] <= x["path_ns"]
        words = cost_words(x)
        if x["wall_ns"] == 0 and x["path_ns"]:
            assert "all of it counted there" in words
        elif x["wall_ns"] == 0 and x["lines_ns"]:
            assert f"its lines hold {format_ns(x['lines_ns'])}" in words
        if x["inferred_ns"]:
            assert f"{format_ns(x['inferred_ns'])} of it through inferred links, an " \
                "estimate" in words


def test_messages_between_ranks_of_one_machine_are_not_called_a_slow_network():
    """Every real multi-rank run here ran on one machine (its ranks' MachineDesc give one
    host name): slow messages there are ranks waiting for a core, and the remedy says so
    instead of "check the network"."""
    found = [x for x in find_insights(load_profile(run_files("mpi2")))
             if x["pattern"] == "message_latency"]
    assert found and found[0]["evidence"]["one_host"]
    assert "share one machine" in found[0]["remedy"] and "Check the network" not in \
        found[0]["remedy"]


def test_a_converted_array_is_told_to_be_made_in_its_type():
    """The guide's ``np.random.random(N).astype(np.float32)``: the temporaries finding's
    remedy is the guide's own fix (make it in the type), before the general one."""
    found = [x for x in find_insights(load_profile(run_files("inefficient_1rank")))
             if x["pattern"] == "temporaries" and x["provenance"][0].endswith(":4")]
    assert found and found[0]["remedy"].startswith("Make the array in the type you need")
    # its size in a unit that shows it: 2 x 16,384 x 4 + 8 bytes was "(0.2 MiB)"; 5,000
    # elements, "(0.0 MiB)" (a review)
    assert f"({format_bytes(found[0]['evidence']['bytes'])})" in found[0]["title"]
    assert "KiB)" in found[0]["title"]


def test_memory_pressure_on_many_ranks_is_one_finding_for_each_memory_kind(tmp_path):
    """At 1,000 ranks a run had 1,202 memories under pressure, a finding each: the other
    findings were buried.  Up to 3 memories of a kind are named one by one; more make one
    finding for the kind — how many ranks, the range of their peaks, the highest named —
    whose evidence is the highest's, with the count."""
    from fixtures.synthetic import generate
    from legate_prof.analyze.insights import find_insights
    from legate_prof.load.loader import load_profile
    files = generate(tmp_path, ranks=24, items=48_000, seed=7)
    model = load_profile([str(p) for p in files], workers=1)
    found = [x for x in find_insights(model) if x["pattern"] == "memory_pressure"]
    kinds = [x["evidence"]["memory"] for x in found]
    assert sorted(kinds) == sorted(set(kinds))  # (one finding a kind)
    for x in found:
        ev = x["evidence"]
        under = []
        for (rank, group), step in model.utilization_steps.items():
            cap = int(model.lanes["capacity"][model.lanes_of(group, rank)].sum())
            if group == ev["memory"] and cap > 0 and step.peak_level() >= 0.8 * cap:
                under.append((step.peak_level() / cap, rank))
        assert ev["ranks"] == len(under) > 3
        assert ev["rank"] == max(under)[1]
        assert x["title"].startswith(f"{ev['memory']} memory peaked at ")
        assert f"on {len(under)} ranks (the highest: rank {ev['rank']}," in x["title"]
    small = [x for x in find_insights(load_profile([str(p) for p in files[:3]], workers=1))
             if x["pattern"] == "memory_pressure"]
    assert small and all(x["title"].startswith("rank ") and "ranks" not in x["evidence"]
                         for x in small)


def test_a_finding_sharing_the_path_names_the_findings_that_count_its_time():
    """Each piece of the path counts for one finding; a finding whose work holds more of the
    path than it counts said "the rest counted under a finding above" without saying which
    (a user's review): it names them, most time first, and they are findings of the run."""
    from legate_prof.analyze.insights_text import format_insights
    run = ROOT / "fixtures" / "real" / "loops3"
    found = find_insights(load_profile(sorted(str(p) for p in run.glob("legate_*.prof*")),
                                       ranked=True))
    patterns = {f["pattern"] for f in found}
    shared = [f for f in found if f["path_ns"] > f["wall_ns"]]
    assert shared
    text = format_insights(found)
    for f in shared:
        assert f["counted_under"] and set(f["counted_under"]) <= patterns - {f["pattern"]}
        named = " and ".join(f["counted_under"][:2])
        assert f"counted under the finding{'s' if len(f['counted_under']) > 1 else ''} " \
               f"{named}" in text
    assert "a finding above" not in text


def test_a_finding_gives_its_lines_figure_beside_its_own_share():
    """One line read 417 ms in insights and 721 ms in `critical`, nothing linking the two (a
    user's review): a finding whose own share differs from its lines' row of `critical`'s
    split says both (its lines' figure the `lines_ns` of its JSON)."""
    from legate_prof.analyze.insights_text import LINES_NOT_ITS_OWN, format_insights
    from legate_prof.present.units import format_bytes, format_ns
    run = ROOT / "fixtures" / "real" / "loops3"
    found = find_insights(load_profile(sorted(str(p) for p in run.glob("legate_*.prof*")),
                                       ranked=True))
    text = format_insights(found)
    differ = [f for f in found if f["wall_ns"] and f["lines_ns"] and f["provenance"]
              and f["lines_ns"] != f["wall_ns"] and f["pattern"] not in LINES_NOT_ITS_OWN]
    assert differ
    for f in differ:
        assert f"its lines hold {format_ns(f['lines_ns'])} of the path in all" in text


def _window_of(run, start_ns, stop_ns):
    """A window of ``run``'s folder as `insights --start/--stop` makes it (the run's path,
    lines, program end and message latency given to it)."""
    from argparse import Namespace
    from legate_prof.analyze.critical_path import given_window
    from legate_prof.cli.common import run_beyond_window, trimmed
    from legate_prof.query import as_source
    whole = load_profile([run], ranked=True, stack=False)
    args = Namespace(start=start_ns, stop=stop_ns)
    window = as_source(trimmed(whole, args))
    given_window(window, run_beyond_window(whole, args))
    return whole, window


def test_a_windows_message_verdict_is_the_runs():
    """Whether the ranks' clocks or the messages make the latency is the run's to say: a
    window of a few messages read its queueing as clocks apart (the guide's 4-rank run,
    160-180 s: "clocks 19.3 ms apart", 12.4 ms over the run) and dropped the cost the run
    gives.  Here the run's latency is made to say "clocks": the window follows it."""
    import dataclasses
    from legate_prof.analyze.insights import insights_of_run
    from legate_prof.causality.message_latency import SkewPair
    from legate_prof.query import as_source
    whole, window = _window_of(REAL / "mpi2", 3_500_000_000, 4_400_000_000)

    def verdict():
        m = [x for x in insights_of_run(window, windowed=True)["findings"]
             if x["pattern"] == "message_latency"]
        return m and ("clocks" if "clocks_apart_ns" in m[0]["evidence"] else "slow")
    assert verdict() == "slow"
    lat = as_source(whole).message_latency()
    apart = dataclasses.replace(lat, pairs=(SkewPair(0, 1, 10, 10.0 * lat.longest_ns, 0.0),))
    window._memo["run_message_latency"] = lambda: apart
    assert verdict() == "clocks"


def test_a_loops_launch_latency_is_the_median_over_all_its_lines_launches():
    """A loop of three lines (the guide's Example 1): the figure is the median over every
    launch of the loop, as docs/insights.md says — it was the mean of the lines' medians by
    their tasks (82.5 ms where the launches' median is 94.5 ms on the 4-rank run, an
    audit found)."""
    import numpy as np
    from legate_prof.model.kinds import ItemKind
    profile = load_profile(run_files("inefficient_1rank"))
    loop = [f for f in find_insights(profile) if f["pattern"] == "tiny_tasks"]
    assert len(loop) == 1 and len(loop[0]["provenance"]) == 3, loop
    ev = loop[0]["evidence"]
    assert ev["launch_measured_from"] == "operation"
    m = profile.merged_model()
    it = m.items
    prov = np.array(m.provenances, object)[m.op_provenance(it["op_id"])]
    latency, to_ready = [], []
    for site in loop[0]["provenance"]:
        for i in np.flatnonzero((it["kind"] == ItemKind.RUNTIME_OP) & (prov == site)).tolist():
            waits = m.waits_of(i)
            if waits and waits[0][2] < it["stop"][i]:  # (matched: its first task started)
                latency.append(waits[0][2] - waits[0][0])
                to_ready.append(waits[0][1] - waits[0][0])
    assert len(latency) == ev["operations"], (len(latency), ev["operations"])
    assert ev["launch_latency_ns"] == int(np.median(latency))
    assert ev["launch_to_ready_ns"] == int(np.median(to_ready))


def test_a_conversion_finding_costs_the_conversion_not_the_lines_first_task():
    """The guide's line 4, ``np.random.random(N).astype(np.float32)``: the finding read
    "costs 324.931 ms, 36.1 %" — the first ``Random`` task's one-time start-up (the same call
    on line 5 takes 0.2 ms), where the conversion took under 1 ms (a review).  Making the
    array in its type saves the conversion: its tasks alone are counted, the line's other
    tasks said apart; the line's whole time on the path stays in ``lines_ns``."""
    from legate_prof.model.kinds import ItemKind
    files = [str(p) for p in sorted((REAL / "inefficient_1rank").glob("legate_0*"))
             if p.name.endswith((".prof", ".prof.gz"))]
    profile = load_profile(files)
    found = [x for x in find_insights(profile) if x["pattern"] == "temporaries"
             and x["provenance"][0].endswith("inefficient.py:4")]
    assert len(found) == 1
    x = found[0]
    it = profile.items
    names = profile.names
    line4 = [k for k, p in enumerate(profile.provenances) if p.endswith("inefficient.py:4")]
    of_line = np.isin(profile.op_provenance(it["op_id"]), line4)
    task = of_line & (it["kind"] == int(ItemKind.TASK))
    convert = task & (it["name"] == names.index("Convert"))
    others = task & ~convert  # (Random)
    dur = (it["stop"] - it["start"]).astype(np.int64)
    assert convert.sum() >= 1 and others.sum() >= 1
    assert x["evidence"]["task_time_ns"] == x["processor_ns"] == int(dur[convert].sum())
    assert x["evidence"]["other_task_time_ns"] == int(dur[others].sum()) > 100e6
    assert x["cost_ns"] <= x["processor_ns"] < 2e6 < 700e6 < x["lines_ns"]
    assert "idle_before_ns" not in x["evidence"]  # (its lines' idle, not the conversion's)
    assert x["window_ns"] == [int(it["start"][convert].min()), int(it["stop"][convert].max())]


def test_a_loop_of_unknown_shape_says_why():
    """The 1-rank run's loop read "a loop" with the generic remedy where the 4-rank run's
    named its slices, and nothing said why (a review): its streams, written by an older
    legate_prof, do not say what each operation did to its arrays; without them given at
    all, the remedy says to give them."""
    from legate_prof.analyze.insights import UNKNOWN_SHAPE_WHY
    run = REAL / "inefficient_1rank"
    with_stream = [str(p) for p in sorted(run.glob("legate_0*"))
                   if p.name.endswith((".prof", ".prof.gz"))]
    for files, why in ((with_stream, UNKNOWN_SHAPE_WHY[True]),
                       ([str(run / "legate_0.prof.gz")], UNKNOWN_SHAPE_WHY[False])):
        tiny = [x for x in find_insights(load_profile(files)) if x["pattern"] == "tiny_tasks"]
        assert len(tiny) == 1 and tiny[0]["remedy"].endswith(why), tiny


def test_the_operations_table_calls_its_tasks_time_what_it_is(capsys):
    """``stats`` printed "running" above the tasks' own running time and, in the operations
    table below, above the operations' tasks' total: the same word, two numbers for one work
    (a review).  The operations' column reads "tasks ran", and its figure is the tasks'
    total where they did not overlap (Convert: 878.769 µs in both)."""
    from legate_prof.cli import main
    main(["stats", str(REAL / "inefficient_1rank")])
    out = capsys.readouterr().out
    tasks, ops = out.split("\nTasks\n", 1)[1].split("\nOperations (", 1)
    assert tasks.splitlines()[0].split() == ["name", "count", "total", "running", "mean",
                                             "min", "max"]
    assert ops.splitlines()[1].split() == ["name", "count", "total", "tasks", "ran", "mean",
                                           "min", "max"]
    convert_task = next(r for r in tasks.splitlines() if r.split()[:1] == ["Convert"])
    convert_op = next(r for r in ops.splitlines() if r.split()[:1] == ["Convert"])
    assert convert_task.split()[2:4] == convert_op.split()[4:6] == ["878.769", "µs"]


def test_findings_of_some_ranks_say_the_path_goes_on_in_the_others():
    """mpi3 without its rank 1: the path stops at an event of that rank, the findings cover
    the part of the run the path explains, and the first line said
    nothing of why (a review read the guide's tiny tasks drop from 75 % to 0.1 % of the run
    with two of its four ranks).  It now names the ranks not read; the whole run says
    nothing of the kind."""
    from legate_prof.analyze.insights import insights_of_run
    from legate_prof.analyze.insights_text import explained_words
    mpi3 = REAL / "mpi3"
    every = sorted(str(p) for p in mpi3.glob("legate_*") if p.name.endswith((".prof", ".gz")))
    some = [p for p in every if "legate_1" not in os.path.basename(p)]
    part = insights_of_run(load_profile(some))
    assert part["ranks_not_given"] == [1], part.get("ranks_not_given")
    assert explained_words(part).endswith(
        "The rest is unknown: the path goes on in a rank whose profile was not read (rank 1: "
        "give every rank's files for the whole run's findings).")
    whole = insights_of_run(load_profile(every))
    assert "ranks_not_given" not in whole and "not read" not in explained_words(whole)


@pytest.mark.parametrize("run", ["mpi2", "mpi3", "mpi4", "mpi2b"])
def test_slow_messages_point_at_the_paths_longest_wait_on_one_message(run):
    """A GUI walk: clicking the slow messages' finding left the view on the whole run (its
    window was every message's, first to last).  Its window is now where the critical path
    waited longest on one message: no longer than the finding's share of the path, and
    ending where a message's piece of the path (``critical --json``) ends, at least as long
    as the longest wait there on one message's step (the time since the step before ended);
    the text says what the window is."""
    def cli(*args):
        r = subprocess.run([sys.executable, "-m", "legate_prof", *args, *run_files(run)],
                           capture_output=True, text=True, cwd=ROOT)
        return r.stdout
    crit = json.loads(cli("critical", "--json", "--limit", "0"))
    found = [f for f in json.loads(cli("insights", "--json"))["findings"]
             if f["pattern"] == "message_latency"]
    assert found
    a, b = found[0]["window_ns"]
    said = found[0]["window_is"]
    assert said.startswith("the critical path's longest stretch on one message: ")
    assert " handling it, " in said and said.endswith(" before it where nothing on the path ran")
    assert 0 < b - a <= found[0]["wall_ns"] < crit["run_ns"]
    steps = sorted(crit["path"], key=lambda s: (s["on_path_ns"][0], s["on_path_ns"][1]))
    waits, before = [], crit["path_start_ns"]
    for s in steps:
        if s["kind"] == "message":
            waits.append((s["on_path_ns"][1] - before, s["on_path_ns"][1]))
        before = max(before, s["on_path_ns"][1])
    assert b in {end for _, end in waits}
    assert b - a >= max(w for w, _ in waits)
    text = cli("insights")
    assert f"when {format_ns(a)} – {format_ns(b)} ({said})" in text


@pytest.mark.parametrize("run", ["inefficient_1rank", "efficient_1rank"])
def test_the_first_runs_start_up_is_a_finding_of_its_own(run):
    """The guide's programs at a test's size spend most of the run in the first ``Random``
    task on each processor (288 ms, where the later ones take under 1 ms): a review read the
    line's share of the path as the line's own cost, no finding saying what it was.  The
    warm-up finding names it; its share of the path is the time the critical path spends in
    those first tasks (from ``critical --json`` and ``sql``: each lane's earliest Random),
    never more than the run."""
    def cli(*args):
        r = subprocess.run([sys.executable, "-m", "legate_prof", *args, *run_files(run)],
                           capture_output=True, text=True, cwd=ROOT)
        assert r.returncode == 0, r.stderr
        return r.stdout
    found = [f for f in json.loads(cli("insights", "--json"))["findings"]
             if f["pattern"] == "warm_up" and "task" in f["title"]]
    assert len(found) == 1 and "the first Random task on each of 2 processors" in \
        found[0]["title"]
    firsts = cli("sql", "SELECT min(start_ns) FROM items WHERE kind = 'task' AND "
                 "name = 'Random' GROUP BY lane")
    starts = {int(x) for x in firsts.split() if x.isdigit()}
    assert len(starts) == 2
    crit = json.loads(cli("critical", "--json", "--limit", "0"))
    on_path = sum(s["on_path_ns"][1] - s["on_path_ns"][0] for s in crit["path"]
                  if s["name"] == "Random" and s["start_ns"] in starts)
    assert found[0]["wall_ns"] == on_path > 0.3 * crit["run_ns"]
    assert found[0]["wall_ns"] <= crit["run_ns"]
    assert found[0]["evidence"]["first_median_ns"] >= 20 * found[0]["evidence"]["later_median_ns"]


@pytest.mark.parametrize("run", ["inefficient_1rank", "efficient_1rank"])
def test_the_runtimes_own_start_up_is_not_its_overhead(run):
    """The guide's programs: the first operation's mapping (one call making the first
    instances, 146-239 ms where the later ones take 0.1-0.5 ms) and its dependence analysis
    (81-108 ms) were counted under runtime_overhead, whose remedy — fewer launches — cannot
    shorten them (a review). They are start-up: the path's time in the runtime's items that
    began before the first task and took 20x their kind's median (worked out here from
    `critical --json` and `sql`), counted for that finding before any other, and no more
    than the run."""
    def cli(*args):
        r = subprocess.run([sys.executable, "-m", "legate_prof", *args, *run_files(run)],
                           capture_output=True, text=True, cwd=ROOT,
                           env=dict(os.environ, LEGATE_PROF_CACHE_DIR=""))
        assert r.returncode == 0, r.stderr
        return r.stdout
    findings = json.loads(cli("insights", "--json"))["findings"]
    [found] = [f for f in findings if f["pattern"] == "warm_up" and "runtime" in f["title"]]
    assert "Deferred Task Mapping" in found["title"]
    assert "Logical Dependence Analysis" in found["title"]
    [first] = json.loads(cli("sql", "--json", "SELECT min(start_ns) AS t FROM items WHERE "
                             "kind = 'task' AND name NOT IN ('Toplevel Task', 'External "
                             "Thread')"))
    first_task = first["t"]
    median = {r["name"]: r["m"] for r in json.loads(cli(
        "sql", "--json", "SELECT name, median(stop_ns - start_ns) AS m FROM items WHERE "
        "kind = 'meta' GROUP BY name"))}
    crit = json.loads(cli("critical", "--json", "--limit", "0"))
    on_path = sum(s["on_path_ns"][1] - s["on_path_ns"][0] for s in crit["path"]
                  if s["kind"] == "meta" and s["start_ns"] < first_task
                  and s["stop_ns"] - s["start_ns"] >= 20 * max(median[s["name"]], 1.0))
    assert found["wall_ns"] == on_path > 0.2 * crit["run_ns"]
    assert found["wall_ns"] <= crit["run_ns"]
    overhead = [f for f in findings if f["pattern"] == "runtime_overhead"]
    assert all("warm_up" in f["counted_under"] for f in overhead if f["path_ns"] > f["wall_ns"])


@pytest.mark.parametrize("run", ["mpi2", "mpi4", "loops3", "oom2", "mpi2_copies"])
def test_no_start_up_finding_where_no_first_task_stands_out(run):
    """Runs whose tasks' first runs are like their later ones have no warm-up finding."""
    assert not [x for x in find_insights(load_profile(run_files(run)))
                if x["pattern"] == "warm_up"]


def test_what_idle_work_waited_for_is_said_in_parts_that_add_up():
    """A review added "mapping on utility 77.922 ms, another task 10.102 ms" and missed the
    1.780 ms of copies in 89.804 ms idle: every part is said (the two largest, the rest in
    one where more than three)."""
    from legate_prof.analyze.insights_text import idle_words
    three = {"idle_before_ns": 89_803_601,
             "idle_waiting_for": {"copy_fill": 1_780_232, "mapping": 77_921_731,
                                  "task": 10_101_638, "message": 0}}
    said = idle_words(three)
    assert said.endswith("waiting for: mapping on utility 77.922 ms, another task 10.102 ms, "
                         "a copy or fill 1.780 ms"), said
    four = {"idle_before_ns": 100, "idle_waiting_for": {"copy_fill": 10, "mapping": 60,
                                                        "task": 20, "message": 7, "memory": 3}}
    assert idle_words(four).endswith(f"waiting for: mapping on utility {format_ns(60)}, "
                                     f"another task {format_ns(20)}, the rest {format_ns(20)}")
    for f in find_insights(load_profile(run_files("inefficient_1rank"))):
        parts = f["evidence"].get("idle_waiting_for") or {}
        if f["evidence"].get("idle_before_ns"):
            assert sum(parts.values()) == f["evidence"]["idle_before_ns"]


def test_a_memory_full_to_the_threshold_as_read_is_under_pressure():
    """The guide's out-of-memory run peaked at 16,777,208 of 20,971,520 bytes ("16.0 of 20.0
    MiB", 79.99996 %) and had no memory-pressure finding (a review): the share is judged as
    read, to 0.1 %."""
    found = [x for x in find_insights(load_profile(run_files("oom2")))
             if x["pattern"] == "memory_pressure"]
    assert sorted(x["evidence"]["rank"] for x in found) == [0, 1]
    for x in found:
        e = x["evidence"]
        assert 0.7999 < e["peak_bytes"] / e["capacity_bytes"] < 0.8


def test_a_lines_arrays_are_not_all_called_intermediates():
    """A review: ``d = x[2:] - x[:-2] * 0.5`` (mpi4's line 7) read "2 full-size arrays made by
    one line: intermediates of an expression", where one of them is ``d`` itself, alive to
    the run's end (`sql` over its arrays): the title says the result is among them."""
    found = [x for x in find_insights(load_profile(run_files("mpi4")))
             if x["pattern"] == "temporaries" and x["provenance"][0].endswith(":7")]
    assert found and found[0]["evidence"]["arrays"] == 2
    assert found[0]["title"].endswith("an expression's result with its intermediates")
    assert "intermediates of an expression" not in found[0]["title"]


def test_findings_of_a_run_without_a_critical_path_say_their_cost_is_unknown():
    """A review: oom2 (no Legion timeline) read "Minor: ... ran beside the critical path" and
    "none of its work is on the critical path"; the report "costs 0 ns" of its failures.
    Without a path a finding's cost is unknown, and said so."""
    import subprocess
    import sys
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "oom2"
    p = subprocess.run([sys.executable, "-m", "legate_prof", "insights", "--no-cache",
                        str(real), "--log", str(real / "console.log")],
                       capture_output=True, text=True)
    assert "Minor:" not in p.stdout and "on the critical path" not in p.stdout, p.stdout
    assert "costs an unknown share of the run's wall-clock time: there is no critical path" \
        in p.stdout
    # (its JSON keeps no private key: "_holds": null leaked, a review found)
    p = subprocess.run([sys.executable, "-m", "legate_prof", "insights", "--no-cache", "--json",
                        str(real)], capture_output=True, text=True)
    found = json.loads(p.stdout)["findings"]
    assert found and all(x["no_path"] and not any(k.startswith("_") for k in x) for x in found)


def test_a_run_whose_clocks_read_apart_says_its_length_holds_the_offset():
    """A GUI walk: mpi2_skewed's headline read "The run's 103.977 s: 103.977 s (100.0 %)
    explained by its critical path", 96 % of it the 99.999 s between the ranks' clocks."""
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    p = subprocess.run([sys.executable, "-m", "legate_prof", "insights", "--no-cache",
                        str(real / "mpi2_skewed")], capture_output=True, text=True)
    head = p.stdout.splitlines()[0]
    assert head.endswith("Its ranks' clocks read 99.999 s apart: the run's length and the "
                         "path's gaps between ranks hold that offset, not the program's "
                         "time."), head
    plain = subprocess.run([sys.executable, "-m", "legate_prof", "insights", "--no-cache",
                            str(real / "mpi2")], capture_output=True, text=True).stdout
    assert "clocks read" not in plain.splitlines()[0]


def test_memory_pressure_names_the_same_lines_with_or_without_legates_report():
    """oom2: the memory under pressure named oom.py:4, 7, 13 and 16 (the stores' lines, from
    the runtime's stream) without `--log`, 10 and 13 with it (the operations that made
    Legate's live instances, as its report names them): one finding, two stories (a review).
    With the report it names the stores' lines too, the operations in `made_by`."""
    def pressure(files):
        return [(f["provenance"], f["evidence"].get("made_by"))
                for f in find_insights(load_profile(files)) if f["pattern"] == "memory_pressure"]
    alone = pressure(run_files("oom2"))
    reported = pressure(run_files("oom2") + [str(REAL / "oom2" / "console.log")])
    assert alone and [lines for lines, _ in reported] == [lines for lines, _ in alone]
    assert [Path(p).name for p in alone[0][0]] == ["oom.py:4", "oom.py:7", "oom.py:13",
                                                  "oom.py:16"]
    assert all([Path(p).name for p in made] == ["oom.py:10", "oom.py:13"]
               for _, made in reported)


def test_the_channel_baseline_holds_its_small_copies_on_the_path_not_every_copy(monkeypatch):
    """A review's 3-rank run: copy_baseline, at the loop's lines, held the path's big copies
    of the gather at line 15 too (advanced_indexing said "the rest counted under
    copy_baseline"). It holds the pieces of its small copies alone. mpi2's copies made small
    here by a lower threshold: its big ones on the path stay out."""
    from legate_prof.analyze import insights as ins
    from legate_prof.model.kinds import ItemKind
    profile = load_profile(run_files("mpi2"))
    f = ins._Facts(profile)
    ids = np.flatnonzero(f.kind == ItemKind.COPY)
    size = f.of_items(ids, "size").astype(np.int64)
    monkeypatch.setattr(ins, "COPY_BASELINE_MIN", 1)
    monkeypatch.setattr(ins, "SMALL_COPY_BYTES", int(np.median(size)) + 1)
    [found] = ins.copy_baseline(f)
    ns, cat, line, item = f.path.pieces()
    held = found["_holds"](ns, cat, line, item)
    sizes = np.zeros(len(f.kind), np.int64)
    sizes[ids] = size
    big_on_path = (cat == "copy") & (sizes[np.asarray(item, np.int64)] >= ins.SMALL_COPY_BYTES)
    assert big_on_path.any() and not (held & big_on_path).any()
    assert held.any() and (sizes[np.asarray(item, np.int64)[held]] < ins.SMALL_COPY_BYTES).all()



def test_no_start_up_finding_in_a_window_that_begins_after_the_run(capsys):
    """A window at 1 s of the bundled example named a mapping there "one-time start-up,
    paid once per run", and one at 900 ms of the guide's run a start-up costing 39 % of it
    (a review): what runs first in a window that begins after the run is no start-up.  Not
    judged there, and said so; a window that holds the run's start finds it as the run does."""
    import json
    from pathlib import Path
    from legate_prof.cli import bundled_example, main
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    for run, window in ((bundled_example(), ["--start", "1s", "--stop", "1100ms"]),
                        (str(real / "inefficient_1rank"), ["--start", "900ms", "--stop", "1s"])):
        assert main(["insights", "--json", "--no-cache", run, *window]) == 0
        got = json.loads(capsys.readouterr().out)
        assert "warm_up" not in {f["pattern"] for f in got["findings"]}, run
        assert any(u.startswith("warm_up: what ran first in this window was slow, but the "
                                "window begins after the run began") for u in got["unjudged"])
    assert main(["insights", "--json", "--no-cache", str(real / "inefficient_1rank"),
                 "--stop", "1s"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert "warm_up" in {f["pattern"] for f in got["findings"]}
    assert not any(u.startswith("warm_up") for u in got.get("unjudged", ()))


def _loop_stream(path, two_ops, rank=0, ranks=1, extra_names=0, held=False, kept=False):
    """A runtime stream of a loop of 4 iterations at p.py:5, as the array runtime writes it:
    ``x = x * 0.5 + 1.0`` (``two_ops``: the product a temporary the sum reads) or
    ``x = x + 1.0`` (one result an iteration, read by the next as its input), each array
    deleted with the statement that rebound ``x`` — but the first input where another name
    ``held`` it, and none where a list ``kept`` them (``xs.append(x)``); ``extra_names``
    operations first (a rank whose string table differs)."""
    import msgpack
    from legate_prof.read.runtime_stream import STREAM_MAGIC
    n, t, events, x, next_id = 1 << 20, 1000, [], 1, 2

    def at():
        nonlocal t
        t += 1000
        return t
    events += [["op", at(), f"Extra{k}", f"p.py:{90 + k}", "", []] for k in range(extra_names)]
    events += [["new", at(), 1, [n], "float64", 8 * n, "p.py:3", "system"],
               ["op", at(), "Fill", "p.py:3", "x = np.ones(N)", [[1, n, "new"]]]]
    for _ in range(4):
        made = []
        src = x
        for _k in range(2 if two_ops else 1):
            events += [["new", at(), next_id, [n], "float64", 8 * n, "p.py:5", "system"],
                       ["op", at(), "BinaryOp", "p.py:5", "x = ...", [[src, n, "in"],
                                                                     [next_id, n, "new"]]]]
            made.append(next_id)
            src, next_id = next_id, next_id + 1
        gone = made[:-1] + ([] if held and x == 1 else [x])
        events += [["del", at(), a] for a in gone if not (kept and a not in made[:-1])]
        x = made[-1]
    events.append(["end", at()])
    pack = msgpack.Packer(use_bin_type=True).pack
    path.write_bytes(STREAM_MAGIC + pack({"format": 1, "rank": rank, "ranks": ranks,
                                          "start_ns": 10}) + b"".join(pack(e) for e in events))
    return path


@pytest.mark.parametrize("two_ops", [True, False])
def test_a_loops_results_are_no_temporaries_and_its_expressions_products_are(tmp_path,
                                                                              two_ops):
    """A review: a loop's line making one array an iteration (``x = x + 1.0``, 200 times)
    read "200 full-size arrays made by one line: an expression's result with its
    intermediates".  The stream's operands say which array the line's next operation read
    with nothing deleted between (a temporary, ``x * 0.5`` of ``x = x * 0.5 + 1.0``), and
    which the next statement read as its input (a result): only temporaries are counted."""
    from legate_prof.read.runtime_stream import (RESULT, TEMPORARY, read_runtime_stream,
                                                 stream_columns)
    path = _loop_stream(tmp_path / "legate_0.runtime.prof", two_ops)
    roles = stream_columns(read_runtime_stream(path)).arr_role.tolist()
    assert roles == [RESULT] + ([TEMPORARY, RESULT] * 4 if two_ops else [RESULT] * 4)
    found = [x for x in find_insights(load_profile([str(path)]))
             if x["pattern"] == "temporaries"]
    if not two_ops:
        assert found == []
        return
    assert len(found) == 1 and found[0]["evidence"]["arrays"] == 4
    assert found[0]["title"].startswith(f"4 full-size temporaries made by one line "
                                        f"({format_bytes(4 * 8 << 20)}): an expression's "
                                        "intermediate results")


def test_the_runs_temporaries_are_counted_once_however_many_ranks():
    """loops3's time loop ``u = u * 0.5 + v``, 6 steps on 3 ranks: 6 temporaries (``u * 0.5``)
    of 2,880,000 bytes, not 12 arrays nor 18; the slice loop's products, a slice's size, are
    no full-size arrays."""
    found = [x for x in find_insights(load_profile(run_files("loops3")))
             if x["pattern"] == "temporaries"]
    assert [x["provenance"][0].rsplit(":", 1)[-1] for x in found] == ["18"]
    assert found[0]["evidence"]["arrays"] == 6
    assert found[0]["evidence"]["bytes"] == 6 * 2_880_000


def test_a_ranks_array_roles_are_read_through_its_own_names(tmp_path):
    """Ranks read apart (per-rank bundles, as `report` and the window open them): each rank's
    ``detail`` ids are its own string table's, and rank 1's (an operation's name more,
    first) read through the run's table named its results temporaries: "8 full-size
    temporaries (64.0 MiB)" and one at ``x = np.ones(N)`` where `insights` of the logs said 4
    (an adversarial review)."""
    from legate_prof.cli import main
    for r in (0, 1):
        _loop_stream(tmp_path / f"legate_{r}.runtime.prof", True, rank=r, ranks=2,
                     extra_names=r)
    assert main(["convert", "--per-rank", "-q", str(tmp_path)]) == 0
    bundles = sorted(str(p) for p in tmp_path.glob("*.lpbundle"))
    profile = load_profile(bundles, ranked=True)
    assert len(profile.item_parts()) == 2
    found = [x for x in find_insights(profile) if x["pattern"] == "temporaries"]
    assert [(x["provenance"], x["evidence"]["arrays"], x["evidence"]["bytes"])
            for x in found] == [(["p.py:5"], 4, 4 * 8 << 20)]


@pytest.mark.parametrize("held,kept", [(True, False), (False, True)])
def test_a_loops_results_another_name_holds_are_no_temporaries(tmp_path, held, kept):
    """``x = x + 1.0`` in a loop whose first input the caller still holds: the second
    statement read the first's result with nothing deleted between, and "1 full-size
    temporary ... not kept" was said; where a list kept each result (never deleted), "3
    full-size temporaries" (an adversarial review).  A temporary is deleted, and a line's
    temporaries are at least half as many as its results."""
    from legate_prof.read.runtime_stream import (RESULT, TEMPORARY, read_runtime_stream,
                                                 stream_columns)
    path = _loop_stream(tmp_path / "legate_0.runtime.prof", False, held=held, kept=kept)
    roles = stream_columns(read_runtime_stream(path)).arr_role.tolist()
    assert roles.count(TEMPORARY) == (1 if held else 0) and RESULT in roles
    assert not [x for x in find_insights(load_profile([str(path)]))
                if x["pattern"] == "temporaries"]


@pytest.mark.parametrize("keys,n", [(40, 20_000), (3, 7), (1, 1), (5_000, 20_000)])
def test_medians_by_key_are_numpys_of_each_keys_values(keys, n):
    """``_medians`` (warm-up's medians by task name, grouped by one sort of small integers
    and a partial sort per group; one sort of all where keys are many) against ``np.median``
    of each key's values."""
    from legate_prof.analyze.insights import _medians
    rng = np.random.default_rng(keys)
    key = rng.integers(0, keys, n).astype(np.int64)
    values = rng.integers(0, 10**6, n)
    sel = rng.random(n) < 0.8
    want = {int(k): float(np.median(values[sel & (key == k)]))
            for k in np.unique(key[sel]).tolist()}
    assert _medians(key, sel, values) == want


def test_a_program_reading_every_few_steps_is_not_told_to(monkeypatch):
    """A stencil reading a sum every 10 steps (31 operations a read) was told "read every k
    iterations rather than each one" by `blocking` and `tiny_tasks` (a review). Where the
    program launches ``READ_EVERY_OPS`` operations or more between two reads, neither says
    so; read_loop_2ranks reads each step (2 operations a read) and is still told."""
    from legate_prof.analyze import insights
    profile = load_profile([str(REAL / "read_loop_2ranks")], use_cache=False)

    def remedies():
        got = {f["pattern"]: f["remedy"] for f in find_insights(profile)}
        return got["blocking"], got["tiny_tasks"]
    blocking, tiny = remedies()
    assert "read every k iterations rather than each one" in blocking
    assert "already launches" not in blocking and "stops 40 times" in tiny
    monkeypatch.setattr(insights, "READ_EVERY_OPS", 1.5)  # (as if a step of 2 were few)
    blocking, tiny = remedies()
    assert "already launches about 2 operations between two of these reads" in blocking
    assert "every k iterations" not in blocking and "stops 40 times" not in tiny
