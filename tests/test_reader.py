"""LegionProfReader on real and damaged files."""

import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from legate_prof.errors import ProfileError
from legate_prof.read.legion_log import LegionProfReader, read_legion_log
from legate_prof.read.legion_writer import LegionProfWriter


def _cli(*args):
    p = subprocess.run([sys.executable, "-m", "legate_prof", *map(str, args)],
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def test_real_sample_reads_to_the_end(sample_profile):
    log = read_legion_log(sample_profile)
    assert log.warnings == []
    assert log.version == "1011"
    assert log.legion_version.startswith("legion-")
    # counts checked against the file by hand (see docs/format.md)
    assert log.count("TaskInfo") == 6
    assert log.count("MetaDesc") == 417
    assert log.count("PhysicalInstanceUsage") == 9
    names = {r["task_id"]: r["name"] for r in log.table("TaskKind")}
    assert sorted(names[int(t)] for t in log.table("TaskInfo")["task_id"]) == \
        ["add_task"] * 3 + ["fill_task"] * 3
    # start <= stop for every task, times in ns after runtime start
    t = log.table("TaskInfo")
    assert np.all(t["create"] <= t["ready"]) and np.all(t["start"] <= t["stop"])


def test_gzipped_copy_reads_the_same(sample_profile, tmp_path):
    gz = tmp_path / "legate_0.prof.gz"
    gz.write_bytes(gzip.compress(sample_profile.read_bytes()))
    a, b = read_legion_log(sample_profile), read_legion_log(gz)
    assert b.warnings == []
    assert a.record_count == b.record_count
    for name, table in a.tables.items():
        if isinstance(table, np.ndarray):
            assert np.array_equal(table, b.tables[name]), name
        else:
            assert table == b.tables[name], name


def test_file_cut_in_the_middle_reads_with_a_warning(sample_profile, tmp_path):
    raw = sample_profile.read_bytes()
    cut = tmp_path / "legate_0.prof"
    cut.write_bytes(raw[: len(raw) - 37])  # inside the last records, not on a boundary
    log = read_legion_log(cut)
    full = read_legion_log(sample_profile)
    assert 0 < log.record_count < full.record_count
    assert any("truncated" in w.problem for w in log.warnings)
    rc, out, err = _cli("stats", cut)
    assert rc == 0
    assert "warning" in err and str(cut) in err
    assert "Tasks" in out


def test_truncated_gzip_reads_with_a_warning(sample_profile, tmp_path):
    data = gzip.compress(sample_profile.read_bytes())
    cut = tmp_path / "legate_0.prof.gz"
    cut.write_bytes(data[: len(data) // 2])
    log = read_legion_log(cut)
    assert log.record_count > 0
    assert any("gzip" in w.problem for w in log.warnings)


def test_unknown_record_type_in_preamble_is_skipped(sample_profile, tmp_path):
    raw = sample_profile.read_bytes()
    end = raw.index(b"\n\n")
    extra = b"\nFancyNewInfo {id:200, a:unsigned:4, label:string:-1, t:timestamp_t:8}"
    body = raw[end + 2:]
    rec = (200).to_bytes(4, "little") + (7).to_bytes(4, "little") + b"hello\0" + \
        (99).to_bytes(8, "little")
    # put two of the new records in the middle of the body, on a record boundary
    full = read_legion_log(sample_profile)
    p = tmp_path / "legate_0.prof"
    p.write_bytes(raw[:end] + extra + b"\n\n" + rec + rec + body)
    log = read_legion_log(p)
    assert log.warnings == []
    assert log.count("FancyNewInfo") == 2
    assert log.table("FancyNewInfo")[0] == {"a": 7, "label": "hello", "t": 99}
    assert log.record_count == full.record_count + 2
    assert log.count("TaskInfo") == full.count("TaskInfo")


def test_unknown_record_id_in_body_keeps_what_was_read(sample_profile, tmp_path):
    raw = sample_profile.read_bytes()
    p = tmp_path / "legate_0.prof"
    p.write_bytes(raw + (4242).to_bytes(4, "little") + b"\0" * 20)
    log = read_legion_log(p)
    assert log.count("TaskInfo") == 6
    assert any("unknown record id 4242" in w.problem for w in log.warnings)


def test_redop_is_read_only_for_reduction_mode(tmp_path):
    p = tmp_path / "legate_0.prof"
    with LegionProfWriter(p) as w:
        w.write("MachineDesc", node_id=0, num_nodes=1, hostname="h", host_id=1, process_id=2)
        for mode, redop in ((7, 0), (4, 13), (1, 0), (4, 21), (2, 0)):
            w.write("PhysicalInstanceUsage", inst_uid=1, fevent=2, op_id=3, start=10, stop=20,
                    index_expr=5, field=1, index=0, mode=mode, redop=redop)
        w.write("ZeroTime", zero_time=123)
    log = read_legion_log(p)
    assert log.warnings == []
    u = log.table("PhysicalInstanceUsage")
    assert u["mode"].tolist() == [7, 4, 1, 4, 2]
    assert u["redop"].tolist() == [0, 13, 0, 21, 0]
    assert log.table("ZeroTime")["zero_time"].tolist() == [123]


@pytest.mark.parametrize("run", [3, 63, 64, 65, 200])
def test_runs_of_usages_are_cut_where_a_reduction_carries_its_redop(tmp_path, run):
    """Runs shorter and longer than those counted one record at a time, a reduction first,
    inside, last and right after the count; and a reduction cut short at the file's end."""
    p = tmp_path / "legate_0.prof"
    modes = []
    for k in range(4):
        modes += [1] * run
        modes[len(modes) - run + min(k * 31, run - 1)] = 4
    modes += [4, 4, 2, 4]
    with LegionProfWriter(p) as w:
        w.write("MachineDesc", node_id=0, num_nodes=1, hostname="h", host_id=1, process_id=2)
        for i, mode in enumerate(modes):
            w.write("PhysicalInstanceUsage", inst_uid=i, fevent=2, op_id=3, start=10, stop=20,
                    index_expr=5, field=1, index=0, mode=mode, redop=100 + i if mode == 4 else 0)
            if i % (run + 7) == run + 6:
                w.write("ZeroTime", zero_time=i)
    log = read_legion_log(p)
    assert log.warnings == []
    u = log.table("PhysicalInstanceUsage")
    assert u["inst_uid"].tolist() == list(range(len(modes)))
    assert u["mode"].tolist() == modes
    assert u["redop"].tolist() == [100 + i if m == 4 else 0 for i, m in enumerate(modes)]
    import pickle  # (a copy of the process reads some logs and hands them back pickled)
    again = pickle.loads(pickle.dumps(log))
    assert again.table("PhysicalInstanceUsage").tobytes() == u.tobytes()
    cut = tmp_path / "cut.prof"
    cut.write_bytes(p.read_bytes()[:-2])  # (the last reduction's redop cut short)
    log = read_legion_log(cut)
    assert log.table("PhysicalInstanceUsage")["mode"].tolist() == modes[:-1]
    assert any("last PhysicalInstanceUsage record is truncated" in w.problem
               for w in log.warnings)


def test_old_header_generation_is_read(sample_profile, tmp_path):
    """`FileType: BinaryLegionProf v: 1.0` (no Legion version line; MachineDesc has version)."""
    raw = sample_profile.read_bytes()
    first = raw.index(b"\n")
    second = raw.index(b"\n", first + 1)
    p = tmp_path / "old.prof"
    p.write_bytes(b"FileType: BinaryLegionProf v: 1.0" + raw[second:])
    log = read_legion_log(p)
    assert log.version == "1.0" and log.legion_version == ""
    assert log.count("TaskInfo") == 6


def test_runs_of_interleaved_record_types(tmp_path):
    """Alternating record types (no long runs) decode the same as grouped ones."""
    p = tmp_path / "legate_0.prof"
    n = 300
    with LegionProfWriter(p) as w:
        for i in range(n):
            w.write("TaskInfo", op_id=i, task_id=1, variant_id=1, proc_id=7, create=i,
                    ready=i + 1, start=i + 2, stop=i + 3, creator=0, critical=0, fevent=i)
            if i % 3 == 0:
                w.write("MetaInfo", op_id=i, lg_id=2, proc_id=8, create=i, ready=i, start=i,
                        stop=i + 1, creator=0, critical=0, fevent=i)
    log = read_legion_log(p)
    assert log.count("TaskInfo") == n and log.count("MetaInfo") == 100
    assert log.table("TaskInfo")["stop"].tolist() == [i + 3 for i in range(n)]


def test_not_a_profile_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "notes.bin"
    bad.write_bytes(b"\x00\x01\x02garbage\xff" * 10)
    rc, out, err = _cli("stats", bad)
    assert rc == 2
    assert err.count("\n") == 1 and str(bad) in err and "Traceback" not in err
    empty = tmp_path / "empty.prof"
    empty.write_bytes(b"")
    rc, out, err = _cli("stats", empty)
    assert rc == 2 and str(empty) in err and err.count("\n") == 1
    rc, out, err = _cli("stats", tmp_path / "missing.prof")
    assert rc == 2 and "missing.prof" in err and err.count("\n") == 1
    with pytest.raises(ProfileError, match="not a Legion Prof"):
        LegionProfReader(bad).read()


def test_bad_file_among_good_ones_still_shows_the_good(sample_profile, tmp_path):
    bad = tmp_path / "legate_1.prof"
    bad.write_text("hello\n")
    rc, out, err = _cli("stats", "--json", sample_profile, bad)
    assert rc == 2
    assert str(bad) in err
    assert json.loads(out)["ranks"] == 1


def test_crashed_run_without_timeline_warns(sample_profile, tmp_path):
    """A run killed before shutdown leaves descriptors only."""
    p = tmp_path / "legate_0.prof"
    with LegionProfWriter(p) as w:
        w.write("MachineDesc", node_id=0, num_nodes=1, hostname="h", host_id=1, process_id=2)
        w.write("ProcDesc", proc_id=0x1D00000000000002, kind=2, uuid_size=16)
        w.write("TaskKind", task_id=1, name="BinaryOp", overwrite=False)
    rc, out, err = _cli("stats", p)
    assert rc == 0
    assert "no timeline records" in err


def test_dump_writes_one_json_line_per_record(sample_profile):
    rc, out, err = _cli("dump", sample_profile)
    assert rc == 0
    lines = out.splitlines()
    assert len(lines) == read_legion_log(sample_profile).record_count
    recs = [json.loads(x) for x in lines]
    tasks = [r for r in recs if r["record"] == "TaskInfo"]
    assert len(tasks) == 6 and all(r["start"] <= r["stop"] for r in tasks)


def test_dump_of_a_folder_written_by_record_dumps_its_logs_and_skips_the_stream(
        sample_profile, tmp_path):
    """`dump DIR` (or `dump legate_*.prof`, which also matches legate_N.runtime.prof): the
    Legion logs' records, the runtime's stream skipped — with a note where the user named
    it, silently where a folder held it; a stream alone is an error."""
    import shutil
    seeds = Path(__file__).resolve().parents[1] / "fixtures" / "fuzz_seeds"
    shutil.copy(sample_profile, tmp_path / "legate_0.prof")
    shutil.copy(seeds / "legate_0.runtime.prof", tmp_path / "legate_0.runtime.prof")
    for args in ([tmp_path], sorted(tmp_path.glob("legate_*.prof"))):
        rc, out, err = _cli("dump", *args)
        assert rc == 0, err
        assert len(out.splitlines()) == read_legion_log(sample_profile).record_count
        named = args != [tmp_path]
        assert ("runtime's event stream" in err and "skipped" in err) == named, err
    rc, out, err = _cli("dump", tmp_path / "legate_0.runtime.prof")
    assert rc == 2 and out == "" and "the array runtime's event stream: dump reads Legion " \
        "Prof logs" in err


WRITER = """
import sys, time
f = open(sys.argv[1], "ab")  # a run's process, still writing its log
print("open", flush=True)
time.sleep(600)
"""


def test_a_run_still_being_written_is_called_so_not_a_crash(tmp_path):
    """Issue 36: `stats` on the logs of a run still going said "showing events up to the
    crash … did the run crash or get killed?".  A runtime stream without its end event, or a
    Legion log without its timeline, that a process still has open for writing is "still
    being written (last event at …)"; once no process writes it, it is a run that did not
    finish."""
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "mpi2"
    data = (real / "legate_0.runtime.prof").read_bytes()
    stream = tmp_path / "legate_0.runtime.prof"
    stream.write_bytes(data[: len(data) - 5])  # (its end event not written yet)
    legion = tmp_path / "legate_1.prof"
    with LegionProfWriter(legion) as w:  # (Legion writes its timeline at shutdown)
        w.write("MachineDesc", node_id=1, num_nodes=2, hostname="h", host_id=1, process_id=2)
        w.write("ProcDesc", proc_id=0x1D00010000000002, kind=2, uuid_size=16)
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(p)], stdout=subprocess.PIPE,
                                text=True) for p in (stream, legion)]
    try:
        for w in writers:
            assert w.stdout.readline().strip() == "open"
        rc, _out, live = _cli("stats", stream, legion)
    finally:
        for w in writers:
            w.kill()
            w.wait()
    rc2, _out, dead = _cli("stats", stream, legion)
    assert rc == 0 and rc2 == 0
    assert "crash" not in live and "killed" not in live, live
    assert "the run is still being written (no end event yet; last event at " in live
    assert "into the run" in live and "no timeline records yet: the run is still being " \
        "written" in live
    assert "showing events up to the crash" in dead and "did the run crash or get killed" in dead


def test_a_variable_records_numbers_are_read_as_numpy_reads_them():
    """A record with strings is decoded field by field; its numbers come from a
    ``struct.Struct`` per type and size (numpy's one-value arrays took ~3x the time): the
    same value as ``np.frombuffer`` of ``scalar_dtype`` gives, for every type the preamble
    names, at the extremes of each size."""
    import struct
    from legate_prof.read.legion_log import _SIGNED_4, _SIGNED_8, _scalar, scalar_dtype
    kinds = [("bool", 1), ("unsigned char", 1), ("unsigned short", 2), ("uint", 4),
             ("ProcID", 8)] + [(t, 4) for t in _SIGNED_4] + [(t, 8) for t in _SIGNED_8]
    rng = np.random.default_rng(0)
    for name, size in kinds:
        for raw in [bytes(size), b"\xff" * size, b"\x80" + bytes(size - 1),
                    bytes(size - 1) + b"\x80"] + [rng.bytes(size) for _ in range(20)]:
            raw = b"pad" + raw  # (at an offset, as in a log)
            want = np.frombuffer(raw, dtype=scalar_dtype(name, size), count=1, offset=3)[0]
            got = _scalar(name, size).unpack_from(raw, 3)[0]
            assert type(got) is int and got == int(want), (name, size, raw)
    with pytest.raises(ValueError):
        _scalar("float", 3)
    assert isinstance(_scalar("uint", 4), struct.Struct)


def test_a_log_cut_short_before_its_timeline_is_said_to_be_cut_not_crashed(tmp_path):
    """A review: a rank's log cut at 150 kB (inside a record, before Legion's timeline, which
    it writes at shutdown) read "no timeline records (... did the run crash or get killed?)"
    though the reader saw the file end inside a record.  It says the file stops early, cut
    short or damaged; a whole log without a timeline still asks about a crash."""
    import gzip
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "mpi2"
    cut = tmp_path / "legate_0.prof"
    cut.write_bytes(gzip.decompress((real / "legate_0.prof.gz").read_bytes())[:150_000])
    rc, _out, said = _cli("stats", cut)
    assert rc == 0
    assert "record is truncated at byte" in said
    assert "no timeline records, and the file stops early, cut short or damaged (a copy not " \
           "finished, a disk that filled?)" in said, said
    assert "crash" not in said and "killed" not in said, said


def test_a_run_folder_gzipped_whole_reads_as_the_run(tmp_path, capsys):
    """``gzip run/*.prof`` gzips the runtime streams too: each was read as a Legion Prof log
    ("not a Legion Prof binary log", exit 2) and the run shown without its operations (a
    review: 26,905 items of 28,357, the findings' costs 5.7 s of 8.7 s).  A gzipped stream
    is read as the stream, and beside a log given alone it is named as the plain one is."""
    import shutil
    from legate_prof.cli import main
    run = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "read_loop_2ranks"
    gz = tmp_path / "gz"
    gz.mkdir()
    for f in run.glob("legate_*"):
        shutil.copy(f, gz / f.name)
    for f in gz.glob("*.runtime.prof"):
        f.with_name(f.name + ".gz").write_bytes(gzip.compress(f.read_bytes()))
        f.unlink()
    assert sorted(p.name for p in gz.iterdir()) == [
        "legate_0.prof.gz", "legate_0.runtime.prof.gz", "legate_1.prof.gz",
        "legate_1.runtime.prof.gz"]

    def stats(folder):
        assert main(["stats", "--json", "--no-cache", str(folder)]) == 0
        s = json.loads(capsys.readouterr().out)
        s.pop("files")
        return s
    assert stats(gz) == stats(run)
    assert main(["stats", "--no-cache", str(gz / "legate_0.prof.gz")]) == 0
    assert "the array runtime's stream beside it (legate_0.runtime.prof.gz) was not given" in \
        capsys.readouterr().err
    # the gzipped stream given, its plain copy beside it: nothing left out, nothing said (a
    # review read "legate_1.runtime.prof was not given" of a run read whole)
    shutil.copy(run / "legate_0.runtime.prof", gz / "legate_0.runtime.prof")
    assert main(["stats", "--no-cache", str(gz / "legate_0.prof.gz"),
                 str(gz / "legate_0.runtime.prof.gz")]) == 0
    assert "was not given" not in capsys.readouterr().err


def test_a_gzipped_stream_damaged_or_a_bomb_says_so_in_one_line(tmp_path, capsys):
    """A gzipped stream cut short keeps the events before the cut, with the gzip's problem
    as its warning; one that inflates past the inputs' bound (``gzip_input``) is refused in
    one line naming it, exit 2, as a gzipped log is."""
    from legate_prof.cli import main
    from legate_prof.file_signatures import RUNTIME_STREAM
    from legate_prof.read.runtime_stream import read_runtime_stream
    run = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "read_loop_2ranks"
    plain = read_runtime_stream(run / "legate_0.runtime.prof")
    packed = gzip.compress((run / "legate_0.runtime.prof").read_bytes())
    cut = tmp_path / "legate_0.runtime.prof.gz"
    cut.write_bytes(packed[:len(packed) // 2])
    got = read_runtime_stream(cut)
    assert 0 < len(got.ops) < len(plain.ops) and got.ops == plain.ops[:len(got.ops)]
    assert "gzip stream is truncated; reading the " in str(got.warnings[0])
    bomb = tmp_path / "bomb" / "legate_0.runtime.prof.gz"
    bomb.parent.mkdir()
    bomb.write_bytes(gzip.compress(RUNTIME_STREAM + bytes(200 << 20), 9))
    assert main(["stats", "--no-cache", str(bomb)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(bomb) in err[0] and "refused as a likely gzip bomb" in err[0]


def test_a_gzipped_stream_of_several_members_or_cut_in_its_magic_is_sniffed_as_a_stream(
        tmp_path, capsys):
    """A fuzz: a stream gzipped as an empty member then the rest, or its first 4 bytes in a
    member of their own (`gzip -t` passes, `zcat` gives the stream), was read as a Legion
    log ("not a Legion Prof binary log", exit 2); a gzip of the magic's first bytes was
    called a log too; an empty gzip "a Legion Prof log cut short inside its first line".
    The inflated start, member after member, says what a gzip holds."""
    from legate_prof.cli import main
    from legate_prof.file_signatures import RUNTIME_STREAM
    from legate_prof.load.inputs import sniff
    run = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "read_loop_2ranks"
    raw = (run / "legate_0.runtime.prof").read_bytes()
    cases = {"empty_first": gzip.compress(b"") + gzip.compress(raw),
             "split4": gzip.compress(raw[:4]) + gzip.compress(raw[4:])}
    for name, data in cases.items():
        f = tmp_path / f"{name}.runtime.prof.gz"
        f.write_bytes(data)
        assert sniff(f) == "runtime", name
        assert main(["stats", "--json", "--no-cache", str(f)]) == 0, name
        assert json.loads(capsys.readouterr().out)["items"] > 100
    cut = tmp_path / "cut.runtime.prof.gz"
    cut.write_bytes(gzip.compress(RUNTIME_STREAM[:5]))
    assert sniff(cut) == "runtime"
    assert main(["stats", "--no-cache", str(cut)]) == 2
    assert capsys.readouterr().err.strip().endswith("not a legate_prof runtime event stream")
    empty = tmp_path / "empty.prof.gz"
    empty.write_bytes(gzip.compress(b""))
    assert main(["stats", "--no-cache", str(empty)]) == 2
    assert capsys.readouterr().err.strip().endswith("an empty gzip: it inflates to nothing")
