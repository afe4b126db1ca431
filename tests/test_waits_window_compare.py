"""The program's waits for values (``PROGRAM_WAIT``) in a window and in ``compare``.

* ``insights --start/--stop``: the window's critical path is the run's cut to it; a line's
  `blocking` finding is judged on that path — where it holds the program blocked in the
  line's waits, the finding says so (it read "not on the critical path", or was left out
  as a "final read" of the window, or said "start-up" of every window of the loop), and
  none of its figures counts a wait's time outside the window.
* ``compare``: a line that launched nothing and only waited (a final ``print(z)``) pairs as
  any line does, and shows its waiting.

Every figure is checked against the runtime streams read with msgpack alone and the path's
pieces walked one at a time."""

import gzip
import json
import shutil
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import msgpack
import numpy as np
import pytest

from legate_prof.analyze.critical_path import (critical_path_report, given_window,
                                               item_table, path_pieces)
from legate_prof.analyze.insights import insights_of_run
from legate_prof.analyze.insights_text import cost_words, format_insights
from legate_prof.cli.common import run_beyond_window, trimmed
from legate_prof.load.loader import load_profile
from legate_prof.model.kinds import ItemKind
from legate_prof.present.units import format_ns
from legate_prof.query import as_source
from legate_prof.read.runtime_stream import STREAM_MAGIC

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
LOOP = REAL / "read_loop_2ranks"
LOOP_LINE = "/tmp/rl/read_loop.py:8"
VALUE = REAL / "value_wait_1rank"


def _zeros(run, name):
    """Each rank's zero time, from the reference's dump (its files' records in rank order)."""
    with gzip.open(run / "golden" / f"{name}.dump.jsonl.gz", "rt") as f:
        return [json.loads(x)["ZeroTime"]["zero_time"] for x in f if "ZeroTime" in x]


def _events(stream):
    with open(stream, "rb") as f:
        assert f.read(len(STREAM_MAGIC)) == STREAM_MAGIC
        return list(msgpack.Unpacker(f, raw=False))


def _loop_streams():
    """{rank: ([(start, end, line)] of its waits, its last operation's submission)} on the
    log's clock, read with msgpack alone."""
    out = {}
    for r, zero in enumerate(_zeros(LOOP, "read_loop_2ranks")):
        events = _events(LOOP / f"legate_{r}.runtime.prof")[1:]
        out[r] = ([(e[1] - zero, e[2] - zero, e[4]) for e in events if e[0] == "wait"],
                  max(e[1] for e in events if e[0] == "op") - zero)
    return out


def _window(start, stop):
    """The loop's run cut to [start, stop] as `insights --start/--stop` cuts it."""
    whole = load_profile([str(LOOP)], ranked=True, stack=False)
    args = Namespace(start=start, stop=stop)
    window = as_source(trimmed(whole, args))
    given_window(window, run_beyond_window(whole, args))
    return whole, window


def _blocked_in(window, waits):
    """The window's path's "blocked" pieces within the waits of their own rank, a piece at a
    time (``waits``: {rank: [(start, end)]}, clipped to the window)."""
    ns, cat, _, item, begin = (np.asarray(a).tolist() for a in path_pieces(window).rows)
    lanes = [L.rank for L in window.info().lanes]
    rank = [lanes[x] for x in item_table(window, np.asarray(item))["lane"].tolist()]
    total = 0
    for k in range(len(ns)):
        if cat[k] == "blocked":
            for s, e in waits.get(rank[k], []):
                total += max(0, min(e, begin[k] + ns[k]) - max(s, begin[k]))
    return total


# windows inside the loop holding waits of line 8, whose path holds the program blocked in
# them (1.70-1.74 s: one wait a rank, all of the window; the program resumed past its end)
@pytest.mark.parametrize("ms", [(1700, 1740), (2000, 2300), (2150, 2400), (3180, 3210)])
def test_a_windows_blocking_finding_is_judged_on_the_windows_path(ms):
    start, stop = ms[0] * 1_000_000, ms[1] * 1_000_000
    _, window = _window(start, stop)
    streams = _loop_streams()
    waits = {r: [(max(s, start), min(e, stop)) for s, e, site in w
                 if site == LOOP_LINE and e > start and s < stop]
             for r, (w, _) in streams.items()}
    # none of them began after its rank's last submission: no final read
    assert all(s < submit for r, (w, submit) in streams.items() for s, e, _ in w
               if e > start and s < stop)
    blocked = _blocked_in(window, waits)
    report = critical_path_report(window, with_items=False, with_path=False)
    assert 0 < blocked <= report["by_kind"]["blocked"]  # (what `critical` shows there)
    out = insights_of_run(window, windowed=True)
    (found,) = [f for f in out["findings"] if f["pattern"] == "blocking"]
    ev = found["evidence"]
    assert ev["blocked_on_path_ns"] == blocked
    # the window's, never more: its waits cut to it, its path's pieces
    assert ev["waits"] == max(len(w) for w in waits.values())
    assert ev["waited_ns"] == max(sum(e - s for s, e in w) for w in waits.values())
    assert ev["longest_ns"] == max(e - s for w in waits.values() for s, e in w)
    assert ev["latency_on_path_ns"] <= ev["waited_ns"] <= stop - start
    assert found["path_ns"] <= out["run_ns"] == stop - start
    assert start <= found["window_ns"][0] <= found["window_ns"][1] <= stop
    late = max(sum(e >= stop for _, e in w) for w in waits.values())
    assert ev.get("going_on_at_end", 0) == late
    words = cost_words(found, "this window's", out["run_ns"])
    assert "not on the critical path" not in words and "none of its work" not in words
    if found["wall_ns"] == 0 and found["path_ns"] == 0:
        assert f"blocked in these waits for {format_ns(blocked)}" in words
    if "is counted as their cost" in found["remedy"]:
        assert f"{format_ns(found['path_ns'])} is counted as their cost" in found["remedy"]
    if late:
        assert "still went on at the window's end" in found["remedy"]
    # the run's first task ended before the window: no wait in it waited for the start-up
    m = load_profile([str(LOOP)])
    top = [k for k, n in enumerate(m.names) if n in ("Toplevel Task", "External Thread")]
    tasks = (m.items["kind"] == int(ItemKind.TASK)) & ~np.isin(m.items["name"], top)
    assert int(m.items["stop"][tasks].min()) < start
    assert "start-up" not in found["title"] and "start-up" not in found["remedy"]
    assert "not on the critical path" not in format_insights(out["findings"], windowed=True)


def test_a_wait_going_on_at_the_windows_end_is_said_with_no_latency_counted():
    """1.45-1.50 s: a wait of line 8 goes on past the window's end and none of the runtime's
    latency it exposed is on the window's path: the remedy still says what it saves lies
    beyond the window (it said nothing of it where no latency was counted: a review)."""
    _, window = _window(1_450_000_000, 1_500_000_000)
    out = insights_of_run(window, windowed=True)
    (found,) = [f for f in out["findings"] if f["pattern"] == "blocking"]
    assert found["evidence"]["going_on_at_end"] == 1
    assert found["evidence"]["latency_on_path_ns"] == 0
    assert found["remedy"].startswith("1 of these waits still went on at the window's end")


def test_a_windows_final_read_is_the_runs():
    """A wait is the program's final read where it began after its rank's last submission in
    the run, not in the window: 3.30-3.33 s holds line 8's last wait (after the last Reduce:
    no finding); 1.70-1.74 s ends before the next submission (a finding, above)."""
    streams = _loop_streams()
    start, stop = 3_300_000_000, 3_330_000_000
    inside = [(s, submit) for w, submit in streams.values() for s, e, _ in w
              if e > start and s < stop]
    assert inside and all(s >= submit for s, submit in inside)
    _, window = _window(start, stop)
    assert not [f for f in insights_of_run(window, windowed=True)["findings"]
                if f["pattern"] == "blocking"]


def _with_a_final_print(folder):
    """The value-wait run (efficient.py at N = 400 k) with a line 20, ``print(z)``, that
    launched nothing and waited for z: its program file and stream given the line and the
    wait, after the last submission and before the top-level task ended (as the runtime
    writes it); the wait's length."""
    folder.mkdir()
    shutil.copy(VALUE / "legate_0.prof.gz", folder)
    (folder / "efficient.py").write_text((VALUE / "efficient.py").read_text() + "print(z)\n")
    header, *events = _events(VALUE / "legate_0.runtime.prof")
    (zero,) = _zeros(VALUE, "value_wait_1rank")
    m = load_profile([str(VALUE / "legate_0.prof.gz")])
    top = m.items["name"] == m.names.index("Toplevel Task")
    stop = zero + int(m.items["stop"][top].max())
    last_op = max(e[1] for e in events if e[0] == "op")
    site = events[[e[0] for e in events].index("wait")][4].rsplit(":", 1)[0] + ":20"
    wait = ["wait", last_op + 200_000, stop - 500_000, 3, site]
    events = [e for e in events if e[0] != "end"] + [wait, ["end", stop - 100_000]]
    pack = msgpack.Packer(use_bin_type=True).pack
    (folder / "legate_0.runtime.prof").write_bytes(STREAM_MAGIC + pack(header)
                                                   + b"".join(map(pack, events)))
    return wait[2] - wait[1]


def _compare(a, b, *more):
    p = subprocess.run([sys.executable, "-m", "legate_prof", "compare", str(a), str(b),
                        *more], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout) if more else p.stdout


def test_compare_pairs_a_line_that_only_waited_and_shows_its_waiting(tmp_path):
    """Two copies of one run whose last line, ``print(z)``, only waited: every line pairs
    for sure (by its code), nothing changed, and the line shows what it waited; against
    the run without it, the line is B's only."""
    took = _with_a_final_print(tmp_path / "a")
    assert _with_a_final_print(tmp_path / "b") == took
    c = _compare(tmp_path / "a", tmp_path / "b", "--json")
    assert {r["paired_by"] for r in c["lines"]} <= {"code", "run"} and not c["notes"]
    (row,) = [r for r in c["lines"] if r["line"] == "efficient.py:20"]
    assert row["a"] == row["b"] == "efficient.py:20" and row["code"] == ["print(z)"] * 2
    assert row["tasks"] == [0, 0] and row["waits"] == [1, 1] and row["waited_ns"] == [took] * 2
    (zero,) = _zeros(VALUE, "value_wait_1rank")
    for e in _events(VALUE / "legate_0.runtime.prof")[1:]:  # (the lines that also launched)
        if e[0] == "wait":
            (r,) = [r for r in c["lines"] if r["line"] == "efficient.py:" + e[4].rsplit(":")[1]]
            assert r["waited_ns"] == [e[2] - e[1]] * 2 and r["waits"] == [1, 1]
    assert all(r["wall_ns"][0] == r["wall_ns"][1] for r in c["lines"])
    text = _compare(tmp_path / "a", tmp_path / "b")
    table = text.split("Lines,")[1].split("lane group")[0]
    assert "waited for values" in table and "~" not in table and "Pairing" not in text
    (line,) = [x for x in table.splitlines() if x.startswith("efficient.py:20")]
    assert format_ns(took) in line and "->" not in line
    alone = _compare(VALUE, tmp_path / "b", "--json")
    (row,) = [r for r in alone["lines"] if r["b"] == "efficient.py:20"]
    assert row["a"] is None and row["waited_ns"] == [0, took]
    assert "efficient.py:20: in B only" in alone["notes"]


def test_a_loop_compared_with_a_copy_of_itself_pairs_its_waits(tmp_path):
    """read_loop_2ranks (2 ranks, 40 waits a rank at line 8) and a copy: every line pairs,
    and line 8's waiting is counted once a run (the rank that waited longest)."""
    shutil.copytree(LOOP, tmp_path / "copy")
    c = _compare(LOOP, tmp_path / "copy", "--json")
    assert {r["paired_by"] for r in c["lines"]} <= {"code", "run"} and not c["notes"]
    (row,) = [r for r in c["lines"] if r["line"] == "read_loop.py:8"]
    waited = max(sum(e - s for s, e, _ in w) for w, _ in _loop_streams().values())
    assert row["waits"] == [40, 40] and row["waited_ns"] == [waited] * 2


def _recording_waits(src, dst):
    """A copy of run ``src`` whose streams' headers say they record the program's waits (as
    the runtime's have since they did): none recorded then means the program waited for none."""
    shutil.copytree(src, dst)
    for path in dst.glob("*.runtime.prof"):
        data = path.read_bytes()
        un = msgpack.Unpacker(raw=False)
        un.feed(data[len(STREAM_MAGIC):])
        header = next(un)
        header["records_waits"] = True
        path.write_bytes(STREAM_MAGIC + msgpack.packb(header)
                         + data[len(STREAM_MAGIC) + un.tell():])


def test_a_run_whose_streams_predate_waits_cannot_say_a_wait_is_gone(tmp_path):
    """The guide's efficient example with its waits recorded (value_wait_1rank) against an
    older recording of it (efficient_1rank, whose stream was written before waits were
    recorded: it holds none): `compare` read "blocking ... not found  fixed" and the waited
    lines "475.488 ms -> 0 ns". Now B cannot tell: "not judged", its waits "?", said why;
    with B's header saying it records waits, its none are none: "fixed"."""
    old = REAL / "efficient_1rank"
    c = _compare(VALUE, old, "--json")
    assert c["waits_recorded"] == [True, False]
    (row,) = [r for r in c["findings"] if r["pattern"] == "blocking"]
    assert row["not_judged"] == [False, True] and row["path_ns"][1] is None
    assert row["not_judged_why"][1] == "records no waits for values"
    text = _compare(VALUE, old)
    (said,) = [x for x in text.splitlines() if x.strip().startswith("blocking")]
    assert said.endswith("-> not judged  B's runtime streams record no waits for values "
                         "(written before legate_prof recorded them, or a rank's not given): "
                         "it cannot tell"), said
    waited = [x for x in text.split("Lines,")[1].split("lane group")[0].splitlines()
              if x.startswith("efficient.py:18")]
    assert waited and " -> ?" in waited[0] and "-> 0 ns" not in waited[0], waited
    assert "(?: run B's runtime streams record no waits for values" in text
    # (the other way round: A cannot tell, B's waits are "new" to nobody)
    back = _compare(old, VALUE, "--json")
    (row,) = [r for r in back["findings"] if r["pattern"] == "blocking"]
    assert row["not_judged"] == [True, False]
    # a stream that says it records waits and holds none: the program waited for none
    _recording_waits(old, tmp_path / "new")
    c = _compare(VALUE, tmp_path / "new", "--json")
    assert c["waits_recorded"] == [True, True]
    (row,) = [r for r in c["findings"] if r["pattern"] == "blocking"]
    assert row["not_judged"] == [False, False] and row["path_ns"][1] is None
    (said,) = [x for x in _compare(VALUE, tmp_path / "new").splitlines()
               if x.strip().startswith("blocking")]
    assert said.endswith("fixed"), said
    # without B's stream at all: "not given", as for the stream's other patterns
    c = _compare(VALUE, old / "legate_0.prof.gz", "--json")
    (row,) = [r for r in c["findings"] if r["pattern"] == "blocking"]
    assert row["not_judged"] == [False, True] and row["not_judged_why"][1] == "not given"


def test_a_run_says_it_records_waits_by_its_streams_or_what_it_holds():
    """A rank built before streams said so (a bundle converted then: no ``records_waits``)
    records waits where it holds one (a review: such a bundle of value_wait_1rank compared
    with its own logs read "475.488 ms -> ?"); a rank given without its stream cannot say."""
    from legate_prof.analyze.program_waits import waits_recorded
    for run, holds in ((VALUE, True), (REAL / "efficient_1rank", False)):
        model = load_profile([str(p) for p in sorted(run.glob("legate_*"))])
        assert waits_recorded(as_source(model)) is holds
        for r in model.ranks:
            r.pop("records_waits", None)
        assert waits_recorded(as_source(model)) is holds, run
    files = [str(p) for p in sorted(LOOP.glob("legate_*")) if p.name != "legate_1.runtime.prof"]
    assert not waits_recorded(as_source(load_profile(files)))


@pytest.mark.parametrize("run", ["mpi2", "mpi3", "mpi4", "loops3"])
def test_a_windows_waits_lie_within_their_items_and_no_running_time_is_negative(run):
    """Legion records some waits from before their task began (mpi2: a TaskWaitInfo 19.7 us
    before its task); a window cut the task and the wait to it alike, the wait outlasted
    the task, and `stats --start 2000ms --stop 3000ms` read the External Thread running
    "-29.855 us" (a review).  In any window each wait lies within its item as cut, and every
    name's running time is between 0 and its total."""
    from legate_prof.analyze.stats import compute_stats
    from legate_prof.assemble.restrict import restrict
    whole = load_profile([REAL / run])
    first, last = whole.extent()
    for k in range(4):
        a = first + (last - first) * k // 5
        cut = restrict(whole, start=a, stop=a + (last - first) // 4)
        w, it = cut.waits, cut.items
        owner = np.asarray(w["item"], np.int64)
        assert np.all(w["start"] >= it["start"][owner]) and np.all(w["end"] <= it["stop"][owner])
        s = compute_stats(cut)
        for section in ("tasks", "meta_tasks", "mapper_calls", "runtime_calls",
                        "application_calls"):
            for row in s[section]:
                assert 0 <= row["running_ns"] <= row["total_ns"], (run, a, section, row)
