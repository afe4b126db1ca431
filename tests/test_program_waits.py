"""The program waiting for a value: recorded whole by the runtime's stream, drawn on the ops
lane, counted "blocked" on the critical path and named by `insights` with its line.

``fixtures/real/value_wait_1rank``: the guide's efficient example at N = 400 k, one rank;
``z[gt1] += 2.0`` (line 18) waited 475 ms for the count of its mask, and Legion's wait record
of the top-level task held none of it on the path: the path read it as the program's thread
running ("launch")."""

import gzip
import json
from pathlib import Path

import msgpack
import numpy as np
import pytest

from legate_prof.analyze.critical_path import critical_path_report, item_table, path_pieces
from legate_prof.analyze.insights import insights_of_run
from legate_prof.analyze.program_waits import merged
from legate_prof.load.loader import load_profile
from legate_prof.model.kinds import ItemKind
from legate_prof.present.units import format_ns
from legate_prof.query import as_source
from legate_prof.read.runtime_stream import STREAM_MAGIC, read_runtime_stream, stream_columns

RUN = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "value_wait_1rank"
LOG, STREAM = RUN / "legate_0.prof.gz", RUN / "legate_0.runtime.prof"
LINE = "/tmp/blk1/efficient.py:18"


def _reference_records(kind):
    """The reference's dump of the run: its records of ``kind``."""
    out = []
    with gzip.open(RUN / "golden" / "value_wait_1rank.dump.jsonl.gz", "rt") as f:
        for line in f:
            if line.strip() and kind in (d := json.loads(line)):
                out.append(d[kind])
    return out


def _stream_waits():
    """The stream's waits, read with msgpack alone: (start, end) on the log's clock."""
    (zero,) = [r["zero_time"] for r in _reference_records("ZeroTime")]
    with open(STREAM, "rb") as f:
        assert f.read(len(STREAM_MAGIC)) == STREAM_MAGIC
        events = list(msgpack.Unpacker(f, raw=False))[1:]
    return [(e[1] - zero, e[2] - zero) for e in events if e[0] == "wait"]


def _measure(lo, hi, intervals):
    """How much of [lo, hi) the union of ``intervals`` covers (a loop: the check)."""
    total, at = 0, lo
    for s, e in sorted(intervals):
        s, e = max(s, at), min(e, hi)
        if e > s:
            total, at = total + e - s, e
    return total


def test_the_runtime_records_each_wait_for_a_value_with_its_line_and_what_it_waited_for(
        guide_examples):
    """A real run of the guide's efficient example: ``z[gt1] += 2.0`` and ``z[~gt1] -= 2.0``
    count their masks (CountNonzero) and wait for the count; the stream records each wait
    whole, and the program submitted nothing while it waited."""
    prog, profiles = guide_examples["efficient.py"]
    (path,) = [p for p in profiles if str(p).endswith(".runtime.prof")]
    stream = read_runtime_stream(path)
    assert not stream.warnings
    lines = [(site.rsplit(":", 1)[1], stream.ops[op][1]) for _, _, site, op in stream.waits]
    assert lines == [("18", "CountNonzero"), ("19", "CountNonzero")]
    for start, end, _, op in stream.waits:
        assert stream.ops[op][0] <= start < end
        assert not [t for t, *_ in stream.ops if start < t < end]
    cols = stream_columns(stream)
    assert np.all(cols.wait_end > cols.wait_start) and cols.wait_site[0] == f"{prog}:18"


def test_a_wait_is_drawn_on_the_ops_lane_named_for_what_it_waited_for():
    m = load_profile([str(LOG), str(STREAM)])
    it = m.items
    waits = np.flatnonzero(it["kind"] == ItemKind.PROGRAM_WAIT)
    waits = waits[np.argsort(it["start"][waits])]
    assert [m.names[n] for n in it["name"][waits]] == ["Waiting for CountNonzero's result"] * 2
    assert {m.lane_group(int(lane)) for lane in it["lane"][waits]} == {"ops"}
    provs = [m.provenances[p] for p in m.op_provenance(it["op_id"][waits])]
    assert [p.rsplit(":", 1)[1] for p in provs] == ["18", "19"]
    spans = sorted(zip(it["start"][waits].tolist(), it["stop"][waits].tolist()))
    assert spans == sorted(_stream_waits())
    # (Legion's numbers stay the reference's: a stream's waits are none of its items')
    assert not any(w for w in m.warnings if "runtime stream reads" in str(w))


def test_the_program_blocked_in_a_recorded_wait_is_blocked_on_the_path_not_launching():
    """Checked against the path's top-level pieces covered by the reference's waits of the
    top-level task and the stream's (read apart, with msgpack): the two agree to the ns; the
    program's thread's time (launch + blocked) is what it was without the stream."""
    source = as_source(load_profile([str(LOG), str(STREAM)]))
    pieces = path_pieces(source)
    top = item_table(source, pieces.item)["name"] == source.names.index("Toplevel Task")
    legion = [(w["wait_start"], w["wait_end"]) for w in _reference_records("TaskWaitInfo")
              if w["op_id"] == 1]
    waits = legion + _stream_waits()
    expected = sum(_measure(b, e, waits) for b, e in zip(pieces.begin[top], pieces.end[top]))
    with_stream = critical_path_report(source, with_items=False, with_path=False)
    assert with_stream["by_kind"]["blocked"] == expected > 0.3 * with_stream["run_ns"]
    alone = critical_path_report(as_source(load_profile([str(LOG)])), with_items=False,
                                 with_path=False)
    assert alone["by_kind"]["blocked"] < expected / 10
    assert (with_stream["by_kind"]["launch"] + with_stream["by_kind"]["blocked"]
            == alone["by_kind"]["launch"] + alone["by_kind"]["blocked"])
    assert sum(with_stream["by_kind"].values()) == with_stream["run_ns"]


def _stream_waits_of(stream, zero):
    """(start, end, line) of a stream's waits on its log's clock, and when it submitted its
    last operation: read with msgpack alone."""
    with open(stream, "rb") as f:
        assert f.read(len(STREAM_MAGIC)) == STREAM_MAGIC
        events = list(msgpack.Unpacker(f, raw=False))[1:]
    return ([(e[1] - zero, e[2] - zero, e[4]) for e in events if e[0] == "wait"],
            max(e[1] for e in events if e[0] == "op") - zero)


def _expected_held(source, waits):
    """{line: the path's time a line's waits cost}, worked out a piece at a time: a wait the
    program resumed from on the path holds the smaller of the runtime's latency within it
    (pieces clipped to it) and the program's launching on its rank after it, until its next
    wait (pieces that launched an operation: a line, before the last submission)."""
    pieces = path_pieces(source)
    ns, cat, line, item, begin = (np.asarray(a).tolist() for a in pieces.rows)
    end = [b + n for b, n in zip(begin, ns)]
    lanes = [L.rank for L in source.info().lanes]
    rank = [lanes[lane] for lane in item_table(source, np.asarray(item))["lane"].tolist()]
    latency = ("runtime", "gap", "blocked", "waiting")
    held = {}
    for r, (mine, last_submit) in waits.items():
        program = [k for k in range(len(ns)) if rank[k] == r and cat[k] in ("launch", "blocked")]
        for j, (s, e, site) in enumerate(mine):
            nxt = mine[j + 1][0] if j + 1 < len(mine) else float("inf")
            if not any(begin[k] <= e <= end[k] for k in program):
                continue
            lat = [k for k in range(len(ns)) if cat[k] in latency and begin[k] < e and end[k] > s]
            exposed = sum(min(end[k], e) - max(begin[k], s) for k in lat)
            after = [k for k in range(len(ns)) if cat[k] == "launch" and rank[k] == r
                     and line[k] != 0 and begin[k] < last_submit and e <= begin[k] < nxt]
            if exposed <= sum(ns[k] for k in after):  # (a piece in two waits: the later's)
                pick = [k for k in lat if not (j + 1 < len(mine) and end[k] > mine[j + 1][0])]
            else:
                pick = after
            held.setdefault(site, set()).update(pick)
    return {site: sum(ns[k] for k in ks) for site, ks in held.items()}


def test_insights_names_the_line_that_waited_what_for_and_how_not_to():
    """The fixture's wait was mostly the runtime's start-up: the program launched 0.8 ms
    after it before waiting again (line 19), so that is its cost, and the finding says why
    (the guide's fix of both lines saved tens of ms, not the 475 ms waited)."""
    profile = load_profile([str(LOG), str(STREAM)])
    out = insights_of_run(profile)
    (found,) = [f for f in out["findings"] if f["pattern"] == "blocking"]
    assert found["provenance"] == [LINE]
    ev = found["evidence"]
    assert ev["waited_for"] == {"CountNonzero": 1} and ev["waits"] == 1 and ev["ranks"] == 1
    (wait,) = [e - s for s, e in _stream_waits()[:1]]
    assert ev["waited_ns"] == ev["longest_ns"] == wait > 0.8 * out["run_ns"]
    (zero,) = [r["zero_time"] for r in _reference_records("ZeroTime")]
    expected = _expected_held(as_source(profile), {0: _stream_waits_of(STREAM, zero)})
    assert 0 < found["path_ns"] == expected[LINE] < ev["latency_on_path_ns"] == wait
    assert found["wall_ns"] <= found["path_ns"]
    assert f"{format_ns(found['path_ns'])} is theirs on the path" in found["remedy"]
    assert "its start-up among it" in found["remedy"] and "start-up too" in found["title"]
    assert "np.putmask" in found["remedy"] and "np.where" in found["remedy"]
    assert found["processor_ns"] == 0
    # without the stream nothing says what the program waited for: no finding
    alone = insights_of_run(load_profile([str(LOG)]))
    assert not [f for f in alone["findings"] if f["pattern"] == "blocking"]


LOOP = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "read_loop_2ranks"


def test_a_loop_reading_a_value_each_step_is_counted_once_a_run_on_two_ranks():
    """``total += float(x.sum())`` 40 times, on 2 ranks: each rank's stream repeats the
    program's 40 waits; the finding counts them once a run (as the operations and arrays),
    its time the rank that waited longest, and its cost is checked a piece at a time."""
    files = sorted(str(p) for p in LOOP.glob("legate_*.prof*"))
    profile = load_profile(files)
    out = insights_of_run(profile)
    (found,) = [f for f in out["findings"] if f["pattern"] == "blocking"]
    ev = found["evidence"]
    assert ev["waits"] == 40 and ev["ranks"] == 2 and ev["waited_for"] == {"Reduce": 40}
    assert "stopped 40 times on each of 2 ranks" in found["title"]
    # (one rank's time, said so: "in all" read as both ranks', a review)
    assert f"{format_ns(ev['waited_ns'])} on the rank that waited most (" in found["title"]
    zeros = {}
    with gzip.open(LOOP / "golden" / "read_loop_2ranks.dump.jsonl.gz", "rt") as f:
        zero = [json.loads(x)["ZeroTime"]["zero_time"] for x in f if "ZeroTime" in x]
    waits = {}
    for r in (0, 1):  # (the reference's dump lists each file's records in turn)
        zeros[r] = zero[r]
        waits[r] = _stream_waits_of(LOOP / f"legate_{r}.runtime.prof", zeros[r])
        assert len(waits[r][0]) == 40
    assert ev["waited_ns"] == max(sum(e - s for s, e, _ in w) for w, _ in waits.values())
    expected = _expected_held(as_source(profile), waits)
    (site,) = expected
    assert found["provenance"] == [site] and found["path_ns"] == expected[site] > 0
    assert found["path_ns"] <= out["run_ns"]
    # its own reduction waited (a Python number here), not a mask's selection
    assert "returns a Python number" in found["remedy"] and "np.putmask" not in found["remedy"]
    (loop,) = [f for f in out["findings"] if f["pattern"] == "tiny_tasks"]
    assert loop["evidence"]["waits_for_values"] == 40
    assert "stops 40 times to wait for a value" in loop["remedy"]
    # (``x *= 1.0001`` writes into x: not "each making a new array", a review read)
    assert "40 making a new array, 40 writing into one" in loop["title"]


def _stream_with(tmp_path, events):
    path = tmp_path / "legate_0.runtime.prof"
    pack = msgpack.Packer(use_bin_type=True).pack
    path.write_bytes(STREAM_MAGIC + pack({"format": 1, "rank": 0, "ranks": 1, "start_ns": 10})
                     + b"".join(pack(e) for e in events))
    return path


def test_a_damaged_wait_keeps_what_came_before_it(tmp_path):
    ok = [["op", 100, "Reduce", "p.py:3", "", [[1, 4, "new"]]], ["wait", 110, 150, 1, "p.py:4"]]
    for bad, why in ((["wait", 160, -5, 1, "p.py:5"], "bad time"),
                     (["wait", 160, 170, 1, 7], "field of type int"),
                     (["wait", 160], "'wait' event with 2 fields")):
        s = read_runtime_stream(_stream_with(tmp_path, ok + [bad, ["end", 200]]))
        assert s.waits == [(110, 150, "p.py:4", 0)], bad
        assert any(why in str(w) and "kept the 2 before it" in str(w) for w in s.warnings), \
            (bad, [str(w) for w in s.warnings])
    # a wait for an array no operation made: what it waited for is unknown
    s = read_runtime_stream(_stream_with(tmp_path, [["wait", 110, 150, 9, "p.py:4"],
                                                    ["end", 200]]))
    assert s.waits == [(110, 150, "p.py:4", -1)] and not s.warnings


@pytest.mark.parametrize("seed", range(20))
def test_merged_intervals_are_each_rows_union(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 40))
    row = rng.integers(0, 4, n)
    start = rng.integers(0, 100, n) + 1_000_000_000 * row
    end = start + rng.integers(0, 30, n)
    r, s, e = merged(row, start, end)
    for k in range(4):
        mine = [(a, b) for a, b, x in zip(start, end, row) if x == k]
        got = list(zip(s[r == k].tolist(), e[r == k].tolist()))
        assert all(b1 < a2 for (_, b1), (a2, _) in zip(got, got[1:]))  # (apart, in order)
        for t in range(1_000_000_000 * k, 1_000_000_000 * k + 131):
            inside = any(a <= t < b for a, b in mine)
            assert inside == any(a <= t < b for a, b in got)


def test_a_click_on_the_finding_brings_the_wait_into_sight():
    """The Findings dock highlights the line's items and shows one first: for a finding of
    the program waiting, the wait (its line's tasks ran before it began)."""
    from legate_prof.viewer.panels.findings import shown_items
    profile = load_profile([str(LOG), str(STREAM)])
    source = as_source(profile)
    (found,) = [f for f in insights_of_run(profile)["findings"] if f["pattern"] == "blocking"]
    items, first, words = shown_items(source, found)
    assert first is not None and first in items
    assert source.item_facts(first)["kind"] == "program_wait"
    assert source.item_facts(first)["waited_for"] == "CountNonzero"
    assert "1 wait for a value" in words


def test_the_guides_loop_says_how_often_it_stopped_for_its_masks_counts(guide_examples):
    """The guide's inefficient loop (N = 200 k, chunks of 4,096) selects by a mask twice an
    iteration (lines 22 and 23), each selection waiting for its mask's count: the loop's
    finding says how many times and how long (the stream read with msgpack alone)."""
    from legate_prof.analyze.insights import find_insights
    prog, profiles = guide_examples["inefficient.py"]
    (loop,) = [f for f in find_insights(load_profile(profiles)) if f["pattern"] == "tiny_tasks"]
    (stream,) = [p for p in profiles if str(p).endswith(".runtime.prof")]
    with open(stream, "rb") as f:
        f.read(len(STREAM_MAGIC))
        waits = [e for e in list(msgpack.Unpacker(f, raw=False))[1:] if e[0] == "wait"
                 and e[4].rsplit(":", 1)[1] in ("21", "22", "23")]
    assert loop["evidence"]["waits_for_values"] == len(waits) == 2 * -(-200_000 // 4096)
    assert loop["evidence"]["waited_ns"] == sum(e[2] - e[1] for e in waits)


def test_a_second_stream_of_a_rank_is_left_out_not_merged(tmp_path):
    """Two runs' folders given, the second run's stream fitting the first run's time (it began
    within a second of its end): its waits read under the first run's lines (a review). A
    rank has one stream: the one beside its log is kept, the other left out, said so."""
    import shutil
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    shutil.copy(LOG, a / LOG.name)
    shutil.copy(STREAM, a / STREAM.name)
    with open(STREAM, "rb") as f:  # (a second run's: half a second later, not a copy)
        f.read(len(STREAM_MAGIC))
        header, *events = list(msgpack.Unpacker(f, raw=False))
    later = 500_000_000
    header["start_ns"] += later
    events = [[e[0], e[1] + later, *([e[2] + later] if e[0] == "wait" else e[2:3]), *e[3:]]
              for e in events]
    pack = msgpack.Packer(use_bin_type=True).pack
    (b / STREAM.name).write_bytes(STREAM_MAGIC + pack(header) + b"".join(map(pack, events)))
    m = load_profile([str(b / STREAM.name), str(a / LOG.name), str(a / STREAM.name)])
    assert int(np.count_nonzero(m.items["kind"] == ItemKind.PROGRAM_WAIT)) == 2
    said = [str(w) for w in m.warnings if "second runtime stream" in str(w)]
    assert len(said) == 1 and str(b / STREAM.name) in said[0] and str(a / STREAM.name) in said[0]


KILLED_IN_A_WAIT = """import signal
from legate_prof.runtime import numpy as np
x = np.random.default_rng(1).random(300_000)
y = x * 2.0
for i in range(3):
    y = y + 1.0
signal.setitimer(signal.ITIMER_REAL, 0.1)  # (SIGALRM's default: the process dies, waiting)
k = float(y.sum())
print(k)
"""


def test_a_program_killed_while_it_waits_says_what_it_waited_for(legate_run, tmp_path):
    """The stream records a wait as it begins too: a program killed in it (a review's: no
    sign it was waiting) gets a crash marker naming the line and what it waited for, and
    the wait runs to where the stream stops."""
    prog = tmp_path / "killed_in_a_wait.py"
    prog.write_text(KILLED_IN_A_WAIT)
    r = legate_run(str(prog))
    assert r.returncode != 0
    (stream,) = [p for p in r.profiles if str(p).endswith(".runtime.prof")]
    s = read_runtime_stream(stream)
    assert not s.ended and s.waiting is not None and s.waiting[1] == f"{prog}:8"
    assert s.waits[-1][1] == s.last_ns and s.ops[s.waits[-1][3]][1] == "Reduce"
    m = load_profile([str(p) for p in r.profiles])
    (crash,) = [mk for mk in m.markers if mk["kind"] == "crash"]
    assert f"while the program waited for Reduce's result at {prog}:8" in crash["title"]
    assert crash["fields"]["waiting for"] == f"Reduce's result at {prog}:8"


def test_a_final_read_is_no_finding(tmp_path, monkeypatch):
    """``print(z)`` as the program's last line: nothing follows the wait for the program to
    launch meanwhile, so it costs the run nothing and "read values after the loop" would be
    wrong advice (a review: the program's exit after it was counted as its cost). The
    fixture's stream with such a wait added at its end, a tenth of the run and more."""
    import shutil
    with open(STREAM, "rb") as f:
        f.read(len(STREAM_MAGIC))
        header, *events = list(msgpack.Unpacker(f, raw=False))
    profile = load_profile([str(LOG), str(STREAM)])
    top = profile.names.index("Toplevel Task")
    (zero,) = [r["zero_time"] for r in _reference_records("ZeroTime")]
    stop = zero + int(profile.items["stop"][profile.items["name"] == top].max())
    last_op = max(e[1] for e in events if e[0] == "op")
    site = LINE.rsplit(":", 1)[0] + ":21"
    events = [e for e in events if e[0] != "end"] + [
        ["waiting", last_op + 200_000, 3, site], ["wait", last_op + 200_000, stop - 500_000, 3,
                                                   site], ["end", stop - 100_000]]
    pack = msgpack.Packer(use_bin_type=True).pack
    shutil.copy(LOG, tmp_path / LOG.name)
    (tmp_path / STREAM.name).write_bytes(STREAM_MAGIC + pack(header)
                                         + b"".join(map(pack, events)))
    import legate_prof.analyze.insights as insights
    monkeypatch.setattr(insights, "BLOCKING_WAITED", 0.05)  # (the wait: 7 % of the run)
    out = insights_of_run(load_profile([str(tmp_path)]))
    assert (stop - 500_000 - last_op - 200_000) > 0.05 * out["run_ns"]
    lines = [f["provenance"] for f in out["findings"] if f["pattern"] == "blocking"]
    assert [site] not in lines and [LINE] in lines
