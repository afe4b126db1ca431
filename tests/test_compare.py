"""`legate_prof compare` of the guide's inefficient and efficient runs (recorded for real)."""

import json
import os
import subprocess
import sys
from pathlib import Path

from PySide6 import QtGui


def test_compare_shows_the_drop_in_tasks_at_the_loop_lines(guide_examples, tmp_path):
    (ineff, a), (eff, b) = guide_examples["inefficient.py"], guide_examples["efficient.py"]
    out = tmp_path / "both.png"
    dirs = [str(Path(profiles[0]).parent) for profiles in (a, b)]  # runs as directories
    p = subprocess.run([sys.executable, "-m", "legate_prof", "compare", *dirs, "--json", "-o",
                        str(out)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    c = json.loads(p.stdout)
    lines = {r["a"]: r for r in c["lines"] if r["a"]}
    for n in (21, 22, 23):  # the slice loop: thousands of tasks, a few whole-array ones in the
        # efficient run's lines that do the same (paired as edited lines, said uncertain)
        row = lines[f"inefficient.py:{n}"]
        tasks_a, tasks_b = row["tasks"]
        assert tasks_a >= 40 and tasks_b < tasks_a / 10
        assert row["paired_by"] in ("edited", None)
    total = {r["group"]: r for r in c["groups"]}
    assert total["utility"]["items"][0] > 5 * total["utility"]["items"][1]
    img = QtGui.QImage(str(out))
    assert img.width() == 1600 and img.height() >= 1200  # taller where the lanes need it


def test_compare_text_names_both_runs(guide_examples):
    (ineff, a), (eff, b) = guide_examples["inefficient.py"], guide_examples["efficient.py"]
    p = subprocess.run([sys.executable, "-m", "legate_prof", "compare", a[0], b[0]],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "inefficient.py:21" in p.stdout and "->" in p.stdout and "utility" in p.stdout


def test_compare_reads_run_folders_whatever_the_run_was_named(tmp_path):
    """Folders that `record --profile-name NAME` fills (NAME_0.prof, NAME_0.runtime.prof) are
    runs as `stats DIR` reads them: logs and runtime streams, so lines pair by their code."""
    import shutil
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    runs = []
    for name, src in (("runA", "inefficient_1rank"), ("runB", "efficient_1rank")):
        d = tmp_path / name
        d.mkdir()
        for f in (real / src).glob("legate_0*"):
            shutil.copy(f, d / f.name.replace("legate_", f"{name}_"))
        runs.append(str(d))
    p = subprocess.run([sys.executable, "-m", "legate_prof", "compare", *runs, "--json"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    assert got["lines"] and any(g["group"] == "ops" for g in got["groups"]), got["groups"]


def test_compare_writes_its_picture_when_the_table_reader_stops_early(tmp_path):
    """`compare A B -o x.png | head`: the reader closing the pipe stops the table, not the
    picture asked for."""
    import os
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    out = tmp_path / "both.png"
    p = subprocess.Popen([sys.executable, "-m", "legate_prof", "compare",
                          str(real / "efficient_0.prof"), str(real / "transfers_0.prof"),
                          "-o", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
    p.stdout.close()  # as `head` does once it has its lines
    err = p.stderr.read().decode()
    assert p.wait(timeout=300) == 0, err
    assert "Traceback" not in err
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_compare_picture_gives_each_run_the_height_its_lanes_need(tmp_path):
    """Runs with many lanes are not squeezed into half of a fixed picture each: it grows, as
    a screenshot does, so no lane of either run is cut off."""
    from fixtures.synthetic import generate
    from legate_prof.load.loader import load_profile
    from legate_prof.query import as_source
    from legate_prof.viewer.timeline.layout import LaneLayout
    from legate_prof.viewer.screenshot import (CHROME_PX, FIT_ROW_PX, LEGEND_H,
                                               render_comparison)
    a = load_profile(generate(tmp_path / "a", ranks=2, items=20000, seed=1), ranked=True)
    b = load_profile(generate(tmp_path / "b", ranks=2, items=10000, seed=2), ranked=True)
    need = sum(int(LaneLayout.default(as_source(m)).height * FIT_ROW_PX) + CHROME_PX + 24
               for m in (a, b)) + LEGEND_H
    assert need > 1200  # the case: more than the default picture
    out = render_comparison([a, b], tmp_path / "both.png", ("a", "b"))
    assert QtGui.QImage(out).height() >= need


HEAT = """from legate_prof.runtime import numpy as np

N = 1 << 14
x = np.random.random(N)
y = np.random.random(N)
t = x + y
u = t * 2.0
m = u > 1.0
z = np.where(m, u, t)
s = float(z.sum())
w = x * y
k = int(np.count_nonzero(m))
print(s, k)
"""


def test_compare_pairs_lines_of_a_renamed_and_edited_script(legate_run, tmp_path):
    """The fixed script under another name, a line added at the top, one line deleted and one
    edited: every line pairs with its own (by its code, which the runtime records), the
    deleted line is said to be in A only, the edited one is paired and said uncertain, and
    no line is compared with another's operation."""
    from legate_prof.analyze.compare import compare, format_compare
    from legate_prof.load.loader import load_profile
    lines = HEAT.split("\n")
    fixed = ["# the fixed version"] + [l.replace("m = u > 1.0", "m = u >= 1.0")
                                       for l in lines if not l.startswith("w = ")]
    runs = []
    for name, text in (("heat.py", HEAT), ("heat_fixed.py", "\n".join(fixed))):
        prog = tmp_path / name
        prog.write_text(text)
        r = legate_run(str(prog))
        assert r.returncode == 0, r.output[-2000:]
        runs.append(load_profile(r.profiles, stack=False))
    c = compare(*runs)
    rows = {(r["a"], r["b"]): r for r in c["lines"]}
    for a, b in ((4, 5), (5, 6), (6, 7), (7, 8), (9, 10), (10, 11), (12, 12)):  # unchanged
        row = rows[(f"heat.py:{a}", f"heat_fixed.py:{b}")]
        assert row["paired_by"] == "code" and row["tasks"][0] == row["tasks"][1] >= 1
    assert rows[("heat.py:11", None)]["paired_by"] is None  # w = x * y, deleted
    edited = rows[("heat.py:8", "heat_fixed.py:9")]
    assert edited["paired_by"] == "edited" and edited["operations"] == ["Compare"]
    for r in c["lines"]:  # never two different operations compared
        assert r["paired_by"] in (None, "run") or len(r["operations"]) == 1 or r["a"] is None
    text = format_compare(c, ("heat", "heat_fixed"))
    assert "heat.py:11: in A only" in text and "'m = u > 1.0' -> 'm = u >= 1.0'" in text
    assert "Compare" in text and "Random" in text  # operations named in the rows


def test_compare_puts_each_line_at_its_share_of_the_wall_clock():
    """Each run's time by source line from its critical path (the path, the start-up, the
    shutdown: the rows add up to the run), the lines that changed most first; a lane group's
    busy time is also given as the share of its lanes' time, never past the whole."""
    from pathlib import Path
    from legate_prof.analyze.compare import compare, format_compare
    from legate_prof.load.loader import load_profile
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    runs = [load_profile([real / name], stack=False)
            for name in ("inefficient_1rank", "efficient_1rank")]
    c = compare(*runs)
    for side in (0, 1):
        assert sum(r["wall_ns"][side] for r in c["lines"]) == c["run_ns"][side]
        assert c["explained_ns"][side] <= c["run_ns"][side]
    change = [abs(r["wall_ns"][0] - r["wall_ns"][1]) for r in c["lines"]]
    assert change == sorted(change, reverse=True)
    assert {r["line"] for r in c["lines"] if r["paired_by"] == "run"} >= {"(program start)",
                                                                            "(shutdown)"}
    for g in c["groups"]:
        assert all(0 <= s <= 1 for s in g["busy_share"]), g
    for r in c["lines"]:  # (copies and fills apart, as stats counts them)
        assert {"copies", "copy_bytes", "fills", "fill_bytes"} <= set(r)
    text = format_compare(c)
    assert "wall clock" in text and "the largest change in wall clock first" in text


def test_wide_values_in_the_compare_table_never_run_into_the_next_column():
    """A count of tens of thousands beside a cut list of operations read
    "BinaryOp, BoolMa…21978 -> 3675" (a user's review): every column keeps two spaces from
    the next, whatever its value's width."""
    from legate_prof.analyze.compare import compare, format_compare
    from legate_prof.load.loader import load_profile
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    runs = [load_profile(sorted(str(p) for p in (real / r).glob("legate_*.prof*")))
            for r in ("mpi2", "mpi4")]
    c = compare(*runs)
    row = c["lines"][0]
    row.update(operations=["BinaryOp", "BoolMaskSelect", "Convert"], tasks=[219780, 36750],
               task_ns=[123_456_789_012, 9_876_543], copies=[123456, 7890],
               copy_bytes=[123_456_789_012, 1], fills=[1234567, 7654])
    text = format_compare(c)
    line = next(ln for ln in text.splitlines() if "219780 -> 36750" in ln)
    for value in ("219780 -> 36750", "123456 -> 7890", "1234567 -> 7654"):
        at = line.index(value)
        assert line[at - 2:at] == "  ", (value, line)
    assert "…  " in line  # (the cut operations, then the tasks)


def test_compare_says_which_findings_the_change_fixed(guide_examples):
    """The guide's change (Example 1) is the story `compare` tells: the findings of each run
    (`insights`), each with its wall clock on its run's critical path, and which the change
    fixed (found in A only) — the tiny tasks of the slice loop."""
    (ineff, a), (eff, b) = guide_examples["inefficient.py"], guide_examples["efficient.py"]
    dirs = [str(Path(profiles[0]).parent) for profiles in (a, b)]
    p = subprocess.run([sys.executable, "-m", "legate_prof", "compare", *dirs, "--json"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    c = json.loads(p.stdout)
    found = {r["pattern"]: r for r in c["findings"]}
    tiny = found["tiny_tasks"]
    assert tiny["wall_ns"][0] > 0 and tiny["wall_ns"][1] is None and tiny["title"][0]
    assert tiny["wall_ns"][0] <= c["run_ns"][0]  # (a part of the run)
    text = subprocess.run([sys.executable, "-m", "legate_prof", "compare", *dirs],
                          capture_output=True, text=True, timeout=300).stdout
    row = next(ln for ln in text.splitlines() if ln.strip().startswith("tiny_tasks"))
    assert row.endswith("-> not found  fixed"), row


def test_the_compare_picture_lays_both_runs_out_alike(monkeypatch, tmp_path):
    """A run small enough to expand every group was drawn expanded under a big run drawn
    collapsed, which could not be compared (a user's review): both are laid out alike —
    expanded only where every run's lanes fit."""
    import legate_prof.present.limits as limits
    import legate_prof.viewer.screenshot as shot
    from legate_prof.load.loader import load_profile
    from legate_prof.query import as_source
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    runs = [load_profile(sorted(str(p) for p in (real / r).glob("legate_*.prof*")), ranked=True)
            for r in ("mpi4", "mpi2")]
    lanes = [len(as_source(r).outline().lanes) for r in runs]
    assert lanes[0] > lanes[1]
    states, real_make = [], shot.make_timeline

    def make(*a, **k):
        states.append(k.get("state"))
        return real_make(*a, **k)
    monkeypatch.setattr(shot, "make_timeline", make)
    monkeypatch.setattr(limits, "MAX_LANES_EXPANDED", lanes[1])  # (the small one fits alone)
    shot.render_comparison(runs, tmp_path / "both.png", ("a", "b"))
    assert states == [{"expanded": set()}] * 2
    states.clear()
    monkeypatch.setattr(limits, "MAX_LANES_EXPANDED", lanes[0])  # (both fit: each its default)
    shot.render_comparison(runs, tmp_path / "both2.png", ("a", "b"))
    assert states == [None, None]


def test_compare_says_when_the_runs_ran_on_different_numbers_of_ranks():
    """A run of 2 ranks against one of 1 (a user compared 4 ranks with 1): said, with how
    many each had; runs of as many ranks say nothing of it."""
    from pathlib import Path
    from legate_prof.analyze.compare import compare, format_compare
    from legate_prof.load.loader import load_profile
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    one, two, two_b = (load_profile([real / n], stack=False)
                       for n in ("inefficient_1rank", "mpi2", "mpi2b"))
    c = compare(two, one)
    assert c["ranks"] == [2, 1]
    assert "ranks: 2 -> 1: the runs ran on different numbers of ranks" in format_compare(c)
    assert "ranks:" not in format_compare(compare(two, two_b))


def test_compare_counts_the_runtime_streams_items_once_as_stats_does():
    """Every rank's runtime stream repeats the program's operations and arrays: `compare`
    summed the ranks' lanes (the guide's 4-rank run: 8,872 arrays where `stats` said
    2,218).  Their items are counted once, as `stats` counts them; their busy time stays
    each rank's (an operation is busy while its tasks run there)."""
    from legate_prof.analyze.compare import compare, format_compare
    from legate_prof.analyze.stats import compute_stats
    from legate_prof.load.loader import load_profile
    m = load_profile([str(Path(__file__).resolve().parents[1] / "fixtures" / "real" / "mpi4")],
                     stack=False)
    c = compare(m, m)
    groups = {r["group"]: r for r in c["groups"]}
    s = compute_stats(m, idle=False)
    assert groups["arrays"]["items"] == [s["arrays"]["count"]] * 2
    ops = [op for op in s["operations"]]
    assert groups["ops"]["items"][0] == sum(op["count"] for op in ops) > 0
    assert groups["ops"]["lanes"][0] == len(m.ranks) == 4  # (busy over every rank's lane)
    assert "each once" in format_compare(c)
    # (a review read "ops 19 -> 3" beside 4 ranks' busy time summed as a mismatch: said)
    assert "their busy time each rank's, while an operation's tasks ran there" in \
        format_compare(c)


def test_a_run_compared_with_itself_pairs_every_line_for_sure():
    """``compare RUN RUN``: lines without recorded code pair by file name and line number,
    said uncertain ("~", "check that it is the same line") — of the very same files (a
    user's review).  The same files pair them for sure; other files at the same place stay
    uncertain."""
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    run = str(real / "mpi2")
    p = subprocess.run([sys.executable, "-m", "legate_prof", "compare", run, run],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "~" not in p.stdout.split("Lines,")[1].split("lane group")[0], p.stdout
    assert "check that it is the same line" not in p.stdout
    p = subprocess.run([sys.executable, "-m", "legate_prof", "compare", run, run, "--json"],
                       capture_output=True, text=True, timeout=300)
    got = {r["paired_by"] for r in json.loads(p.stdout)["lines"]}
    assert "same files" in got and "line" not in got, got
    p = subprocess.run([sys.executable, "-m", "legate_prof", "compare", run,
                        str(real / "mpi2b"), "--json"], capture_output=True, text=True,
                       timeout=300)
    assert "same files" not in {r["paired_by"] for r in json.loads(p.stdout)["lines"]}


def test_compare_says_when_no_line_of_one_run_pairs_with_the_other():
    """Two programs (the bundled example against mpi2's): no line pairs, yet every finding
    read "fixed" and the run "faster"; a run without its runtime streams names no line.
    Both said first among the notes."""
    from legate_prof.analyze.compare import compare
    from legate_prof.load.loader import load_profile
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    example = Path(__file__).resolve().parents[1] / "legate_prof" / "data" / "example_legate_0.prof"
    a = load_profile([example], stack=False)
    c = compare(a, load_profile([real / "mpi2"], stack=False))
    assert c["notes"][0].startswith("no line of A pairs with a line of B: two different "
                                    "programs?"), c["notes"]
    c = compare(a, load_profile([real / "legate26.06_cpu2_myprof_0.prof"], stack=False))
    assert c["notes"][0] == ("run B names no source line (its .runtime.prof files not "
                             "given?): no line is compared"), c["notes"]
    assert not any(n.startswith(("no line", "run ")) for n in compare(a, a)["notes"])


def test_two_programs_compared_get_their_figures_and_no_verdict():
    """The bundled example against mpi2's (no line pairs): the text said "46.0x faster" and
    every finding "fixed", "less" or "worse", its doubt printed last; now it says first that
    these look like two programs, shows both runs' figures, and draws no verdict."""
    from legate_prof.analyze.compare import compare, format_compare
    from legate_prof.load.loader import load_profile
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    example = Path(__file__).resolve().parents[1] / "legate_prof" / "data" / "example_legate_0.prof"
    a, b = load_profile([example], stack=False), load_profile([real / "mpi2"], stack=False)
    c = compare(a, b)
    assert c["same_program"] is False and c["findings"]
    text = format_compare(c).splitlines()
    assert text[2].startswith("two different programs? No line of A pairs"), text[:4]
    assert not any(w in line for line in text for w in ("faster", "slower")), text[:5]
    found = text[text.index(next(t for t in text if t.startswith("Findings"))) + 1:]
    found = found[:found.index("")]
    assert found and all(line.split()[-1] in ("only", "ns", "found") for line in found), found
    assert not any(w in line.split() for line in found for w in ("fixed", "new", "worse", "less"))
    same = compare(b, b)
    assert same["same_program"] is True
    assert "two different programs?" not in format_compare(same)


def _compare_json(a, b):
    """``compare --json`` of two committed real runs (fixtures/real/A, B), as a user runs it."""
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    p = subprocess.run([sys.executable, "-m", "legate_prof", "compare", "--json",
                        str(real / a), str(real / b)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_two_programs_sharing_one_operation_are_not_paired_as_an_edit():
    """A review: efficient.py against mpi4's prog_small.py paired ``np.add(x, y, out=z)``
    with the other program's only BinaryOp line as "edited" (136.951 µs -> 938.032 ms) and
    called them one program.  Uncertain pairs alone, under half of the shorter program's
    lines, say two programs."""
    c = _compare_json("efficient_1rank", "mpi4")
    assert c["same_program"] is False
    assert not [r for r in c["lines"] if r["a"] and r["b"] and r["paired_by"] != "run"]
    assert c["notes"][0].startswith("no line of A pairs with a line of B")


def test_the_guides_two_programs_pair_on_the_code_read_beside_their_runs():
    """Runs recorded without their lines' code (these fixtures' streams) paired only by file
    name and line number, so the guide's own comparison, inefficient.py against
    efficient.py, read "two different programs?" and judged nothing (a review).  The code is
    now read from each program's file beside its run: the guide's pairs (the sum written
    into its output 11 -> 10, the loop's lines 21-23 -> 17-19) pair as edited lines, and the
    runs are judged."""
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    p = subprocess.run([sys.executable, "-m", "legate_prof", "compare", "--json",
                        str(real / "inefficient_1rank"), str(real / "efficient_1rank")],
                       capture_output=True, text=True, timeout=300)
    c = json.loads(p.stdout)
    assert c["same_program"] is True
    pairs = {r["a"].rsplit("/", 1)[-1]: (r["b"].rsplit("/", 1)[-1], r["paired_by"])
             for r in c["lines"] if r["a"] and r["b"] and ".py:" in r["a"]}
    for a, b in (("inefficient.py:11", "efficient.py:10"), ("inefficient.py:21", "efficient.py:17"),
                 ("inefficient.py:22", "efficient.py:18"), ("inefficient.py:23", "efficient.py:19")):
        assert pairs.get(a) == (b, "edited"), pairs
    codes = {r["a"].rsplit("/", 1)[-1]: r["code"] for r in c["lines"] if r["a"]}
    assert codes["inefficient.py:11"][0].split() == ["z", "=", "x", "+", "y"]


def test_a_programs_file_is_read_only_where_it_is_a_small_regular_file(tmp_path):
    """A stranger's profile names any path as its program: a device, a pipe, a folder, a
    huge or binary file is not read (nor blocks); a file of that name beside the run is."""
    from legate_prof.load.source_code import MAX_SOURCE_BYTES, code_of_lines
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    (tmp_path / "big.py").write_bytes(b"x = 1\n" * (MAX_SOURCE_BYTES // 6 + 10))
    (tmp_path / "bin.py").write_bytes(b"x = 1\n\0\0\n")
    (tmp_path / "dir.py").mkdir()
    beside = tmp_path / "run"
    beside.mkdir()
    (beside / "prog.py").write_text("import numpy as np\n  y = np.ones(3)  \n")
    provs = [f"{fifo}:1", "/dev/zero:1", f"{tmp_path / 'big.py'}:1", f"{tmp_path / 'bin.py'}:1",
             f"{tmp_path / 'dir.py'}:1", "/nowhere/prog.py:2", "/nowhere/prog.py:9",
             "no line", "/nowhere/prog.py:0"]
    assert code_of_lines(provs, [str(beside)]) == {"/nowhere/prog.py:2": "y = np.ones(3)"}
    (beside / "long.py").write_text("x = [" + "1, " * 100_000 + "]\n")
    long = code_of_lines(["/nowhere/long.py:1"], [str(beside)])["/nowhere/long.py:1"]
    assert len(long) == 400 and long.endswith("…")
    # (a review: a forged log naming the user's own file had its line printed; only the
    # run's own files are read: not the path named, nor a link beside the run)
    secret = tmp_path / "secret.py"
    secret.write_text("password = 'correct horse'\n")
    assert code_of_lines([f"{secret}:1"], [str(beside)]) == {}
    (beside / "linked.py").symlink_to(secret)
    assert code_of_lines(["/nowhere/linked.py:1"], [str(beside)]) == {}
    assert code_of_lines([f"{secret}:1"], [str(tmp_path)]) == {
        f"{secret}:1": "password = 'correct horse'"}  # (beside the run: the run's own)


RENDER = """
import os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from legate_prof.load.loader import load_profile
if sys.argv[2] == "app first":
    from legate_prof.viewer.screenshot import app_instance
    app_instance()
from legate_prof.viewer.screenshot import render_comparison
ex = sys.argv[3]
render_comparison([load_profile([ex]), load_profile([ex])], sys.argv[1], ("A", "B"))
"""


def test_the_comparison_picture_is_drawn_in_the_applications_font(tmp_path):
    """`compare -o` drew its bands' titles and its legend in a bold serif font where a
    screenshot uses the application's (a review): its painter began before the application
    was made.  Drawn first thing in a process, it is now the picture drawn once the
    application exists, pixel for pixel."""
    from PySide6 import QtGui
    example = Path(__file__).resolve().parents[1] / "legate_prof" / "data" / "example_legate_0.prof"
    shots = []
    for how in ("first thing", "app first"):
        out = tmp_path / f"{how.replace(' ', '_')}.png"
        subprocess.run([sys.executable, "-c", RENDER, str(out), how, str(example)], check=True,
                       capture_output=True, timeout=300)
        shots.append(QtGui.QImage(str(out)))
    assert not shots[0].isNull() and shots[0] == shots[1]


def test_a_finding_off_the_path_in_both_runs_says_so():
    """mpi2 against mpi2_utility2 printed "temporaries  0 ns -> 0 ns" and no word (a
    review): a finding found in both runs and off the critical path in both says so; one
    whose time did not change says "the same"."""
    from legate_prof.analyze.compare import _findings_lines
    rows = [{"pattern": "temporaries", "wall_ns": [0, 0]},
            {"pattern": "tiny_tasks", "wall_ns": [5, 5]},
            {"pattern": "copy_baseline", "wall_ns": [5, 3]}]
    said = [line.split("  ")[-1] for line in _findings_lines(rows, True)[2:]]
    assert said == ["in both, off the critical path", "the same", "less"]
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    p = subprocess.run([sys.executable, "-m", "legate_prof", "compare", str(real / "mpi2"),
                        str(real / "mpi2_utility2")], capture_output=True, text=True, timeout=300)
    assert "temporaries" in p.stdout and "0 ns -> 0 ns  in both, off the critical path" in p.stdout


def test_start_up_is_no_finding_a_change_of_the_code_fixes_or_worsens():
    """The guide's two programs: "warm_up 324.580 ms -> 349.169 ms worse", and a run where
    it was not found read "fixed" (a review) — start-up is paid once a run whatever the
    code; its line says so in either case, and the other findings keep their verdicts."""
    from legate_prof.analyze.compare import _findings_lines
    rows = [{"pattern": "warm_up", "wall_ns": [5, 9]},
            {"pattern": "warm_up", "wall_ns": [5, None]},
            {"pattern": "tiny_tasks", "wall_ns": [5, None]}]
    said = [line.split("  ")[-1] for line in _findings_lines(rows, True)[2:]]
    assert said == ["start-up, paid once a run: no change of the code's"] * 2 + ["fixed"]
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    p = subprocess.run([sys.executable, "-m", "legate_prof", "compare",
                        str(real / "inefficient_1rank"), str(real / "efficient_1rank")],
                       capture_output=True, text=True, timeout=300)
    [line] = [ln for ln in p.stdout.splitlines() if ln.strip().startswith("warm_up")]
    assert line.endswith("start-up, paid once a run: no change of the code's"), line


def test_a_run_that_cannot_tell_a_finding_is_not_said_to_have_fixed_it():
    """A review: B given without its runtime stream read "temporaries ... not found  fixed"
    (B has the finding with its stream), and a run whose ranks' clocks read 100 s apart read
    "message_latency 326.266 ms -> 0 ns  less" where insights says its cost is unknown.
    Neither draws a verdict now: "not judged" and "unknown", saying why."""
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"

    def compare(*runs):
        out = []
        for extra in ([], ["--json"]):
            p = subprocess.run([sys.executable, "-m", "legate_prof", "compare",
                                *map(str, runs), *extra], capture_output=True, text=True,
                               timeout=300)
            assert p.returncode == 0, p.stderr
            out.append(p.stdout)
        rows = {ln.split()[0]: ln for ln in out[0].split("Findings (")[1].splitlines()[1:]
                if ln.startswith("  ") and not ln.startswith("   ")}
        return rows, {r["pattern"]: r for r in json.loads(out[1])["findings"]}
    rows, found = compare(real / "inefficient_1rank", real / "efficient_1rank" / "legate_0.prof.gz")
    assert found["temporaries"]["not_judged"] == [False, True]
    assert rows["temporaries"].endswith("-> not judged  B's runtime stream not given: it "
                                        "cannot tell"), rows["temporaries"]
    assert rows["tiny_tasks"].endswith("-> not found  fixed")  # (judged from Legion's log)
    rows, found = compare(real / "efficient_1rank" / "legate_0.prof.gz", real / "efficient_1rank")
    assert "temporaries" in found and found["temporaries"]["not_judged"] == [True, False]
    assert "new" not in rows["temporaries"]
    rows, found = compare(real / "mpi2", real / "mpi2_skewed")
    assert found["message_latency"]["unknown"] == [False, True]
    assert rows["message_latency"].endswith("-> unknown  its cost unknown where the ranks' "
                                            "clocks read apart"), rows["message_latency"]


def test_compares_peak_memory_is_the_runs_not_its_largest_ranks():
    """A review: `compare mpi2 mpi4` read the arrays' peak as 30.5 -> 5.7 MiB (one rank's),
    where the runs held 61.0 -> 22.9 MiB at once.  The peak is the most in use at once over
    all ranks: here, from `sql` over the arrays table (each rank's piece, its lifetime)."""
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"

    def held_at_once(run):
        p = subprocess.run([sys.executable, "-m", "legate_prof", "sql", "--json",
                            "SELECT size_bytes, start_ns, stop_ns FROM arrays", str(run)],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        rows = json.loads(p.stdout)
        events = sorted([(r["start_ns"], r["size_bytes"]) for r in rows]
                        + [(r["stop_ns"], -r["size_bytes"]) for r in rows],
                        key=lambda e: (e[0], e[1]))  # (a piece freed as another is made)
        level = peak = 0
        for _, d in events:
            level += d
            peak = max(peak, level)
        return peak
    p = subprocess.run([sys.executable, "-m", "legate_prof", "compare", "--json",
                        str(real / "mpi2"), str(real / "mpi4")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    arrays = next(g for g in json.loads(p.stdout)["groups"] if g["group"] == "arrays")
    assert arrays["peak_bytes"] == [held_at_once(real / "mpi2"), held_at_once(real / "mpi4")]


def test_a_run_whose_clocks_read_apart_gets_no_faster_or_slower_verdict():
    """A review: mpi2 against itself with a rank's clock shifted by 100 s read "run length:
    4.567 s -> 103.977 s (22.8x slower)".  Where a run's ranks' clocks, not its messages, make
    the latencies, its length measures them too: the header says so, no verdict; runs whose
    clocks agree keep theirs."""
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"

    def header(a, b):
        p = subprocess.run([sys.executable, "-m", "legate_prof", "compare", str(real / a),
                            str(real / b)], capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        return next(ln for ln in p.stdout.splitlines() if ln.startswith("run length: "))
    said = header("mpi2", "mpi2_skewed")
    assert said.endswith("(no verdict: B's ranks' clocks read 99.999 s apart, so its length "
                         "measures them too)"), said
    assert "slower" not in said
    assert header("mpi2", "mpi2b").endswith(("x faster)", "x slower)"))


def test_clocks_apart_by_less_than_the_runs_differ_keep_the_verdict():
    """A 3-rank run whose clocks read 58.7 ms apart against a run 66x shorter: "no verdict"
    (a review) — an offset that small cannot make a 364 s difference. The verdict stays,
    the offset said beside it; an offset as large as the difference still takes it."""
    from legate_prof.analyze.compare import _verdict
    c = {"span_ns": [370_224_000_000, 5_580_000_000], "clocks_apart_ns": [58_696_000, 0]}
    assert _verdict(c, True) == (" (66.3x faster; A's ranks' clocks read 58.696 ms apart: "
                                 "less than the runs differ)")
    c = {"span_ns": [5_000_000_000, 4_900_000_000], "clocks_apart_ns": [0, 200_000_000]}
    assert _verdict(c, True).startswith(" (no verdict: B's ranks' clocks read 200.000 ms")


def test_a_line_that_assigns_the_same_name_pairs_across_an_edit():
    """A review: the guide's ``x = np.random.random(N).astype(np.float32)`` (line 4) and
    ``x = rng.random(N, dtype=np.float32)`` (line 5 of the efficient program) stood apart,
    "782 ms -> 0 ns" read as the line saved where it went 782 -> 710 ms.  Lines at the same
    place that assign the same name and launched some of the same operations pair, marked
    uncertain, and the notes say how."""
    from legate_prof.analyze.compare import assigned_name
    assert [assigned_name(c) for c in ("x = np.ones(3)", "  z += 1.0", "x == y", "a[1] = 2",
                                       "np.add(x, y, out=z)", "t //= 2", "")] == \
        ["x", "z", "", "", "", "t", ""]
    c = _compare_json("inefficient_1rank", "efficient_1rank")
    rows = {(r["a"] or "").rsplit("/", 1)[-1]: r for r in c["lines"]}
    x, y = rows["inefficient.py:4"], rows["inefficient.py:5"]
    assert x["b"].endswith("efficient.py:5") and x["paired_by"] == "assigned"
    assert y["b"].endswith("efficient.py:6") and y["paired_by"] == "assigned"
    assert any(n.startswith("inefficient.py:4 ~ efficient.py:5: the code changed") and
               "assigns x and launched some of the same operations" in n for n in c["notes"])
    assert rows["inefficient.py:11"]["paired_by"] == "edited"  # (the same operations: as was)


def test_a_run_without_a_critical_path_gets_no_verdict_and_says_why():
    """A review: oom2 (crashed: no Legion timeline) against efficient.py read "1.8x slower",
    its 419 ms all "(no line)" beside "0.0 % of A explained".  No verdict now, and the wall
    clock line says that A has no critical path."""
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    p = subprocess.run([sys.executable, "-m", "legate_prof", "compare",
                        str(real / "oom2"), str(real / "efficient_1rank")],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    head = p.stdout.splitlines()[:6]
    length = next(x for x in head if x.startswith("run length:"))
    assert "slower" not in length and "(no verdict: A has no critical path" in length, head
    wall = next(x for x in head if x.startswith("wall clock:"))
    assert "A has no critical path, its 419.304 ms all under '(unknown)'" in wall, wall
    assert "100.0 % of B explained" in wall


def test_each_runs_band_in_the_picture_names_its_own_time_range():
    """A review: the band over efficient.py's run (0.82 s) beside mpi4's read "0 - 4.430 s",
    the shared axis's end."""
    from legate_prof.load.loader import load_profile
    from legate_prof.query import as_source
    from legate_prof.viewer.screenshot import run_band_text
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    info = as_source(load_profile([real / "efficient_1rank"], stack=False)).info()
    assert run_band_text("A", info) == "A   —   1 rank(s), 1,113 items, 0 – 813.615 ms"


def test_lines_that_changed_alike_come_by_their_wall_clock():
    """A review: a run compared with itself listed "530.117 µs" before "9.121 ms" under
    "the largest change in wall clock first": changes alike (none), the bigger line first."""
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    p = subprocess.run([sys.executable, "-m", "legate_prof", "compare", "--json",
                        str(real / "efficient_1rank"), str(real / "efficient_1rank")],
                       capture_output=True, text=True, timeout=300)
    walls = [r["wall_ns"][0] for r in json.loads(p.stdout)["lines"]]
    assert walls == sorted(walls, reverse=True), walls


def test_findings_of_runs_without_a_critical_path_are_unknown_not_off_it():
    """A review: oom2 against itself read "crash 0 ns -> 0 ns in both, off the critical
    path": a crash's stream alone has no path, so what its findings cost is unknown."""
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    p = subprocess.run([sys.executable, "-m", "legate_prof", "compare", str(real / "oom2"),
                        str(real / "oom2")], capture_output=True, text=True, timeout=300)
    found = p.stdout[p.stdout.index("Findings"):].splitlines()[1:3]
    assert found and all("unknown -> unknown  its cost unknown: A and B have no critical path"
                         in line for line in found), found
    assert "off the critical path" not in p.stdout


def test_a_finding_is_compared_by_all_its_work_holds_on_the_path():
    """A 2-rank run of the guide's inefficient program waited 70 s on messages, most of it
    counted under tiny_tasks, and compare read "message_latency 109.798 ms -> 803.956 ms
    worse" against the efficient one (a review): a finding's line compares what its work
    holds on each path (``path_ns``), not its share counted once; ``wall_ns`` stays in the
    JSON."""
    from legate_prof.analyze.compare import _findings_lines
    rows = [{"pattern": "message_latency", "wall_ns": [109_798_000, 803_956_000],
             "path_ns": [70_193_000_000, 803_956_000]},
            {"pattern": "advanced_indexing", "wall_ns": [0, None], "path_ns": [733_000_000, None]}]
    said = _findings_lines(rows, True)[2:]
    assert said[0].split()[1:5] == ["70.193", "s", "(own", "109.798"] and said[0].endswith("less")
    # its own part (insights' cost of it) beside, where less: one finding read 165.526 s in
    # compare and 2.427 s in insights (a later review)
    assert "70.193 s (own 109.798 ms) -> 803.956 ms  less" in said[0], said[0]
    assert said[1].endswith("733.000 ms (own 0 ns) -> not found  fixed"), said[1]
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    p = subprocess.run([sys.executable, "-m", "legate_prof", "compare", "--json",
                        str(real / "inefficient_1rank"), str(real / "efficient_1rank")],
                       capture_output=True, text=True, timeout=300)
    for f in json.loads(p.stdout)["findings"]:
        assert all(w is None or w <= h for w, h in zip(f["wall_ns"], f["path_ns"])), f


def test_a_difference_mostly_in_the_programs_start_is_said_so():
    """mpi2 against mpi2_utility2 read "2.6x faster", 2.2 s of its 2.8 s the program's start
    (the runtime starting, the machine's more than the code's: a review): a line says so
    and what the runs take without it; none where the start is not most of the change."""
    from legate_prof.analyze.compare import compare, format_compare
    from legate_prof.load.loader import load_profile
    from legate_prof.present.units import format_ns
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    c = compare(load_profile([str(real / "mpi2")]), load_profile([str(real / "mpi2_utility2")]))
    start = next(r["wall_ns"] for r in c["lines"] if r["line"] == "(program start)")
    (ra, rb), text = c["run_ns"], format_compare(c)
    assert 2 * (start[0] - start[1]) > ra - rb > 0
    said = next(ln for ln in text.splitlines() if ln.startswith("  most of it, "))
    assert (f"{format_ns(start[0] - start[1])} of {format_ns(ra - rb)}, is the program's "
            "start") in said
    assert said.endswith(f"without it: {format_ns(ra - start[0])} -> "
                         f"{format_ns(rb - start[1])} ({(ra - start[0]) / (rb - start[1]):.1f}x "
                         "faster)")
    other = format_compare(compare(load_profile([str(real / "inefficient_1rank")]),
                                   load_profile([str(real / "efficient_1rank")])))
    assert "is the program's start" not in other


def test_no_ratio_after_no_verdict_and_a_start_larger_than_the_change_is_said_so():
    """After "no verdict" (B crashed: no critical path; B's clocks 100 s apart), a line read
    "without it: 1.700 s -> 419.304 ms (4.1x faster)"; of mpi2 against mpi4 "most of it,
    1.577 s of 502.380 ms, is the program's start" — a part larger than its whole (a
    review).  No ratio where no verdict is drawn; a start that moved by more than the run
    says so, and what the rest did."""
    from legate_prof.analyze.compare import compare, format_compare
    from legate_prof.load.loader import load_profile
    from legate_prof.present.units import format_ns
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    runs = {n: load_profile([str(real / n)]) for n in ("mpi2", "oom2", "mpi2_skewed")}
    for b in ("oom2", "mpi2_skewed"):
        text = format_compare(compare(runs["mpi2"], runs[b]))
        assert "(no verdict: B" in text and "without it" not in text, b
        assert "x faster" not in text and "x slower" not in text, b
    from legate_prof.analyze.compare import _start_up_words
    ms = 1_000_000
    c = {"lines": [{"line": "(program start)", "wall_ns": [2867 * ms, 1290 * ms]}],
         "run_ns": [4567 * ms, 4065 * ms], "span_ns": [4567 * ms, 4065 * ms],
         "explained_ns": [4567 * ms, 4065 * ms], "clocks_apart_ns": [0, 0]}
    (said,) = _start_up_words(c)  # (mpi2 against mpi4's figures, as the review read them)
    assert "most of it" not in said
    assert f"({format_ns(1577 * ms)} against {format_ns(502 * ms)}): the rest went the other " \
        "way" in said
    assert said.endswith(f"without it: {format_ns(1700 * ms)} -> {format_ns(2775 * ms)}"
                         f" ({2775 / 1700:.1f}x slower)")
    c["lines"][0]["wall_ns"] = [2867 * ms, 2500 * ms]  # (most of the change, not more)
    assert "most of it, 367.000 ms of 502.000 ms, is the program's start" in \
        _start_up_words(c)[0]


def test_a_crashed_run_judges_no_finding_fixed_or_new():
    """Against a crashed run (no Legion timeline, no critical path), mpi2's message_latency
    read "326.266 ms -> not found  fixed" and the other way "new"; and the crashed run,
    its streams given, "names no source line (its .runtime.prof files not given?)" (a
    review).  It cannot tell: "not judged", and why."""
    from legate_prof.analyze.compare import compare, format_compare
    from legate_prof.load.loader import load_profile
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    a, b = load_profile([str(real / "mpi2")]), load_profile([str(real / "oom2")])
    for c, crashed in ((compare(a, b), 1), (compare(b, a), 0)):
        rows = {r["pattern"]: r for r in c["findings"]}
        latency = rows["message_latency"]
        assert latency["wall_ns"][crashed] is None and latency["not_judged"][crashed]
        text = format_compare(c)
        assert " fixed" not in text and "  new" not in text.replace("  new ", "")
        name = "AB"[crashed]
        assert f"{name} has no critical path (no Legion timeline: a run that crashed?): it " \
            "cannot tell" in text
        assert f"run {name} has no critical path" in text and ".runtime.prof files" not in text


def test_lines_slower_in_b_are_named_after_the_table():
    """The guide's fix made one line slower (743 ms -> 1.666 s) and nothing said so among
    the table's rows (a review): after it, the lines in both runs whose wall clock grew by
    1 % of A's run or more, the most first; none where none did."""
    from legate_prof.present.units import format_ns
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    eff, ineff = (str(real / n) for n in ("efficient_1rank", "inefficient_1rank"))

    def cli(*args):
        p = subprocess.run([sys.executable, "-m", "legate_prof", "compare", *args],
                           capture_output=True, text=True, timeout=300)
        return p.stdout
    c = json.loads(cli("--json", eff, ineff))
    grew = sorted(((r["wall_ns"][1] - r["wall_ns"][0], r["b"]) for r in c["lines"]
                   if r["a"] and r["b"] and not r["a"].startswith("(")
                   and r["wall_ns"][1] - r["wall_ns"][0] >= 0.01 * c["run_ns"][0]),
                  reverse=True)
    assert len(grew) >= 2
    said = next(ln for ln in cli(eff, ineff).splitlines()
                if ln.startswith("  slower in B (by 1 % of A's run or more): "))
    assert said.endswith(", ".join(f"{b} +{format_ns(d)}" for d, b in grew)), said
    assert "slower in B" not in cli(ineff, eff)


def test_two_short_programs_whose_lines_pair_by_their_operations_alone_are_two_programs(
        capsys):
    """A 3-line program against a 7-line one, two of their lines paired only because they
    launched the same operations ("u = u * 0.5 + v" ~ "x *= 1.0001"), read as one program's
    versions: "2.4x faster" (a review; prog_mr.py against prog_small.py likewise).  The
    uncertain pairs must hold half the longer program's lines; the guide's two versions
    (6 pairs of 8 and 9 lines) stay one program's."""
    from legate_prof.cli import main
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"

    def compared(a, b):
        assert main(["compare", "--json", str(real / a), str(real / b)]) == 0
        return json.loads(capsys.readouterr().out)
    for a, b in (("loops3", "read_loop_2ranks"), ("mpi2", "mpi4")):
        c = compared(a, b)
        assert not c["same_program"], (a, b)
        assert not any(r["paired_by"] not in (None, "run") for r in c["lines"]), (a, b)
        assert main(["compare", str(real / a), str(real / b)]) == 0
        text = capsys.readouterr().out
        assert "two different programs?" in text and "x faster" not in text, (a, b)
    c = compared("inefficient_1rank", "efficient_1rank")
    assert c["same_program"] and sum(r["paired_by"] in ("edited", "assigned")
                                     for r in c["lines"]) == 6


def test_the_lines_copies_fills_and_tasks_add_up_to_the_runs(capsys):
    """The lines' copies added up to 6 of `stats`' 24 and their fills to 27 of 36: the work
    of no line was left out, its "(no line)" row showing 0 (a review).  Over the rows, each
    run's tasks, copies and fills, and their bytes, are `stats`' own."""
    from legate_prof.cli import main
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    a, b = real / "inefficient_1rank", real / "efficient_1rank"
    assert main(["compare", "--json", str(a), str(b)]) == 0
    c = json.loads(capsys.readouterr().out)
    for k, run in enumerate((a, b)):
        assert main(["stats", "--json", "--no-cache", str(run)]) == 0
        s = json.loads(capsys.readouterr().out)
        total = {f: sum(r[f][k] for r in c["lines"]) for f in
                 ("tasks", "copies", "copy_bytes", "fills", "fill_bytes")}
        assert total == {"tasks": sum(t["count"] for t in s["tasks"]),
                         "copies": s["copies"]["count"], "copy_bytes": s["copies"]["bytes"],
                         "fills": s["fills"]["count"], "fill_bytes": s["fills"]["bytes"]}, run
    unlined = next(r for r in c["lines"] if r["line"] == "(no line)")
    assert unlined["copies"][0] > 0


def test_a_line_its_runtime_stream_records_is_the_runs_line_whatever_legion_says():
    """A review: ``y = np.ones(N)`` is realized lazily by Legate, its Legion fill carrying the
    next line's provenance, so the line held no Legion item: a run whose path did not charge
    it had no such line ("mr2.py:3: in A only", the other order "in B only"), and runs whose
    paths both did paired it by its number alone ("~", "the line's code was not recorded").
    Every line the run's stream records is the run's line, with the operations launched
    there and its code; Legion's figures stay where Legion put them (they still add up to
    the run's: "(no line)" keeps the work no line launched)."""
    from legate_prof.analyze.compare import NO_LINE, per_line
    from legate_prof.load.loader import load_profile
    from legate_prof.model.kinds import ItemKind
    from legate_prof.query import as_source
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    m = load_profile([real / "mpi2"], stack=False)
    lines = per_line(m, source=as_source(m))
    ones = lines["/tmp/multirank/prog_mr.py:7"]  # (y = np.ones(N, dtype=np.float64))
    assert ones["operations"] == {"Fill"}
    assert [ones[f] for f in ("tasks", "copies", "fills")] == [0, 0, 0]
    kind = m.items["kind"]
    for n_key, kinds in (("tasks", (ItemKind.TASK, ItemKind.GPU_KERNEL)),
                         ("copies", (ItemKind.COPY,)), ("fills", (ItemKind.FILL,))):
        assert sum(r[n_key] for r in lines.values()) == int(
            sum((kind == int(k)).sum() for k in kinds)), n_key
    assert lines[NO_LINE]["tasks"] > 0
    c = _compare_json("mpi2", "mpi2_utility2")  # (the code read beside the runs)
    rows = {r["line"]: r for r in c["lines"]}
    ones = rows["prog_mr.py:7"]
    assert (ones["paired_by"], ones["operations"]) == ("code", ["Fill"]), ones
    assert ones["code"] == ["y = np.ones(N, dtype=np.float64)"] * 2
    assert not [n for n in c["notes"] if n.startswith("prog_mr.py:7")], c["notes"]
