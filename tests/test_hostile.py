"""A profile from a stranger (issue 27): inputs made to hurt, not damaged by accident.

Each test holds one attack of docs/robustness.md's table: patterns fed a megabyte of their worst
case, streams longer than one buffer, gzip bombs, outputs over a user's folder, temporaries
left by a killed writer, a full disk, a cache entry swapped under us, escapes for a terminal.
"""

import os
import sys
from pathlib import Path
import numpy as np

import pytest

from fixtures.hostile import oom_cases, preamble_cases

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "fixtures" / "real" / "legate26.06_cpu2_myprof_0.prof"


# -- patterns: linear on anything --------------------------------------------------------------
@pytest.mark.parametrize("name, text, check", oom_cases(1 << 20), ids=lambda c: c
                         if isinstance(c, str) and len(c) < 40 else "")
def test_each_console_log_pattern_reads_a_megabyte_of_its_worst_case(name, text, check):
    """The OOM report's patterns were quadratic on a long run of spaces (80k: 15.6 s); now
    each is bounded or unambiguous and lines are cut at MAX_LINE, so a megabyte is read (in
    milliseconds: benchmarks/bench_hostile.py) and gives what the check says."""
    from legate_prof.read.console_log import parse_oom_report
    assert check(parse_oom_report(text)), name


@pytest.mark.parametrize("text", ["Signal 2 received by node " + "1" * (1 << 20),
                                  "Signal 2 received by node 1, process\n" * (1 << 15),
                                  "Signal " * (1 << 17), " " * (1 << 20)])
def test_the_signal_pattern_reads_a_megabyte_of_its_worst_case(text):
    """Realm's "Signal N received by node R" (``console_log.parse_signals``) is bounded:
    a megabyte of digits, of repeated lines or of its prefix is read, each rank once."""
    from legate_prof.read.console_log import parse_signals
    got = parse_signals(text)
    assert got == ({1: 2} if text.endswith("process\n") else {})


def test_a_console_log_of_long_blank_lines_is_read_by_stats(tmp_path):
    """The issue's reproduction: a 300 KB ``--log`` ran for more than a minute."""
    from fixtures.hostile import HEAD
    from legate_prof.load.loader import load_profile
    log = tmp_path / "run.log"
    log.write_text("legate\n" + HEAD + ("LogicalStore allocated at x" + " " * 40_000 + "y\n") * 8)
    model = load_profile([ROOT / "fixtures" / "fuzz_seeds" / "oom.runtime.prof", log])
    assert model.oom_instances == [] and any(m["kind"] == "oom" for m in model.markers)


@pytest.mark.parametrize("name, data", preamble_cases(1 << 20),
                         ids=lambda c: c if isinstance(c, str) else "")
def test_a_preamble_line_of_a_megabyte_is_one_error(name, data, tmp_path):
    from legate_prof.errors import ProfileError
    from legate_prof.read.legion_log import LegionProfReader
    p = tmp_path / "legate_0.prof"
    p.write_bytes(data)
    with pytest.raises(ProfileError, match="damaged preamble line 3"):
        LegionProfReader(p).read()


# -- streams of any length ---------------------------------------------------------------------
def test_a_runtime_stream_over_100_mib_reads_fully(tmp_path):
    """The issue's reproduction: valid events past msgpack's one-buffer limit (100 MiB) were a
    BufferFull traceback; now read a megabyte at a time, every event kept."""
    from fixtures.hostile import write_long_stream
    from legate_prof.read.runtime_stream import read_runtime_stream
    p = tmp_path / "legate_0.runtime.prof"
    n_ops = write_long_stream(p, mib=101)
    assert p.stat().st_size > 100 << 20
    s = read_runtime_stream(p)
    assert (len(s.ops), s.ended, s.warnings) == (n_ops, True, [])
    assert len({id(o[2]) for o in s.ops[:1000]}) == 40  # sites shared, not one copy per event


def test_an_event_larger_than_the_limit_keeps_the_events_before_it(tmp_path, monkeypatch):
    import msgpack
    from legate_prof.read import runtime_stream
    monkeypatch.setattr(runtime_stream, "MAX_EVENT", 2 << 20)
    pack = msgpack.Packer(use_bin_type=True).pack
    p = tmp_path / "legate_0.runtime.prof"
    p.write_bytes(runtime_stream.STREAM_MAGIC + pack({"rank": 0, "start_ns": 1})
                  + pack(["op", 5, "a", "x.py:1"]) + pack(["op", 6, "b", "y" * (3 << 20)])
                  + pack(["end", 7]))
    s = runtime_stream.read_runtime_stream(p)
    assert [o[1] for o in s.ops] == ["a"] and not s.ended
    assert "larger than 2 MiB" in str(s.warnings[0])



_TIME, _NAME, _ID = [True, -1, 1 << 63, 1.0, None], [True, 1, None, []], [True, 1.0, None, []]
_WRONG_FIELDS = {  # per field after the kind: values that make the event damage
    "op": [_TIME, _NAME, _NAME],
    "del": [_TIME, _ID],
    "new": [_TIME, _ID, [True, "s", [True], [-1], [1.0], [1 << 63]], _NAME,
            [True, -1, 1.0, "s", 1 << 63], _NAME, _NAME],
}
_WELL_FORMED = [["op", 5, "add", "x.py:3"], ["del", 7, 3], ["del", 7, "a3"],
                ["new", 9, 3, [10, 2], "float64", 160, "x.py:1", "SYSTEM_MEM"]]


@pytest.mark.parametrize("event", _WELL_FORMED, ids=lambda e: f"{e[0]}-{type(e[2]).__name__}")
def test_an_event_with_any_field_wrong_is_damage_and_the_events_before_are_kept(tmp_path,
                                                                               event):
    """Each field of a well-formed event of each kind made a value of a wrong type or range
    (a bool for a number, a negative time or size, a shape of bools): that event is damage,
    named in one warning; the events before it are kept (a check made fast must refuse
    exactly what the whole check refuses)."""
    import msgpack
    from legate_prof.read.runtime_stream import STREAM_MAGIC, read_runtime_stream
    pack = msgpack.Packer(use_bin_type=True).pack
    head = STREAM_MAGIC + pack({"rank": 0, "start_ns": 1}) + pack(["op", 4, "a", "x:1"])
    p = tmp_path / "legate_0.runtime.prof"
    p.write_bytes(head + pack(event) + pack(["end", 99]))
    whole = read_runtime_stream(p)
    assert whole.ended and whole.warnings == []
    for field, wrongs in enumerate(_WRONG_FIELDS[event[0]], start=1):
        for wrong in wrongs:
            bad = list(event)
            bad[field] = wrong
            p.write_bytes(head + pack(bad) + pack(["end", 99]))
            s = read_runtime_stream(p)
            assert [o[1] for o in s.ops] == ["a"] and not s.ended, (field, wrong)
            assert "event 2 is damaged" in str(s.warnings[0]), (field, wrong)


@pytest.mark.parametrize("bad", [b"\xdb\x7f\xff\xff\xff", b"\xdd\x7f\xff\xff\xff",
                                 b"\xdf\x7f\xff\xff\xff", b"\x91" * 100_000],
                         ids=["str-2GiB", "array-2G", "map-2G", "nested-100k"])
def test_msgpack_lengths_of_gigabytes_and_deep_nesting_cost_nothing(tmp_path, bad):
    """A length field is a promise, not an allocation: a 5-byte event claiming 2 GiB (or two
    billion items) is damage, as is nesting 100,000 deep; the events before it are kept."""
    import msgpack
    from fixtures.fuzzing import peak_rss
    from legate_prof.read.runtime_stream import STREAM_MAGIC, read_runtime_stream
    pack = msgpack.Packer(use_bin_type=True).pack
    p = tmp_path / "legate_0.runtime.prof"
    p.write_bytes(STREAM_MAGIC + pack({"rank": 0, "start_ns": 1}) + pack(["op", 5, "a", "x:1"])
                  + bad + pack(["end", 9]))
    s, added = peak_rss(read_runtime_stream, p)
    assert [o[1] for o in s.ops] == ["a"] and not s.ended and s.warnings
    assert added is None or added < 64 << 20  # (None: no /proc/self/clear_refs here)

# -- gzip bombs --------------------------------------------------------------------------------
def _zeros_gzip(mib, members=1):
    """``members`` gzip members of ``mib`` MiB of zeros each (zeros inflate about 1000x)."""
    import gzip
    one = gzip.compress(bytes(mib << 20), compresslevel=9, mtime=0)
    return one * members


def test_a_gzip_bomb_is_one_line_naming_the_file_with_memory_bounded(tmp_path):
    """The issue's reproduction: 3.1 MB that inflate to 3 GiB made ``stats`` peak at 6.3 GB
    (a MemoryError traceback under a limit).  Now inflating stops at 32x the file (at least
    8 MiB), one line; the command runs under a 1.5 GiB address-space limit."""
    import resource
    import subprocess
    bomb = tmp_path / "legate_0.prof.gz"
    bomb.write_bytes(_zeros_gzip(1, members=3072))  # 3 GiB from ~3 MB, member after member
    assert bomb.stat().st_size < 4 << 20

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))
    r = subprocess.run([sys.executable, "-m", "legate_prof", "stats", str(bomb)],
                       capture_output=True, text=True, timeout=300, preexec_fn=limit,
                       env=dict(os.environ, LEGATE_PROF_CACHE_DIR="", OPENBLAS_NUM_THREADS="1"))
    errors = [ln for ln in r.stderr.splitlines()
              if ln.strip() and not ln.startswith("legate_prof: note: removed")]
    assert r.returncode == 2 and len(errors) == 1, r.stderr[-2000:]
    assert str(bomb) in errors[0] and "gzip bomb" in errors[0] and "32x" in errors[0]


def test_a_one_member_bomb_stops_at_the_floor(tmp_path):
    from legate_prof.errors import ProfileError
    from legate_prof.read.legion_log import MIN_GZIP_LIMIT, LegionProfReader
    bomb = tmp_path / "legate_0.prof.gz"
    bomb.write_bytes(_zeros_gzip(64))
    with pytest.raises(ProfileError, match=f"more than {MIN_GZIP_LIMIT:,} bytes"):
        LegionProfReader(bomb).read()


def test_honest_gzipped_logs_read_whole_and_damaged_ones_keep_what_inflates(tmp_path):
    """Many members (``cat a.gz b.gz``), a broken checksum (every byte still read), a cut."""
    import gzip
    from legate_prof.read.legion_log import LegionProfReader
    raw = SAMPLE.read_bytes()
    whole = LegionProfReader(SAMPLE).read()
    g = gzip.compress(raw, mtime=0)
    cases = {"split": gzip.compress(raw[:30000], mtime=0) + gzip.compress(raw[30000:], mtime=0),
             "checksum": g[:-8] + bytes([g[-8] ^ 0xFF]) + g[-7:], "cut": g[:len(g) // 2]}
    got = {}
    for name, data in cases.items():
        p = tmp_path / f"{name}.prof.gz"
        p.write_bytes(data)
        log = LegionProfReader(p).read()
        got[name] = (log.record_count, [w.problem[:39] for w in log.warnings])
    assert got["split"] == (whole.record_count, [])
    assert got["checksum"] == (whole.record_count, ["gzip data is damaged at compressed byte"])
    assert got["cut"][0] < whole.record_count
    assert got["cut"][1][0].startswith("gzip stream is truncated")


# -- outputs: the user's folders, temporaries, a full disk -------------------------------------
def cli(*args, env=None, timeout=180, preexec_fn=None):
    import subprocess
    e = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "LEGATE_PROF_CACHE_DIR": "", **(env or {})}
    return subprocess.run([sys.executable, "-m", "legate_prof", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=e, cwd=ROOT,
                          preexec_fn=preexec_fn)


def one_line_error(r, *words):
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    lines = [ln for ln in r.stderr.splitlines()  # (a note of a sweep may come first)
             if ln.strip() and not ln.startswith("legate_prof: note: removed")]
    assert len(lines) == 1 and "error:" in lines[0], r.stderr
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def test_report_over_its_own_earlier_report_replaces_it_and_says_so(tmp_path):
    out = tmp_path / "R"
    assert cli("report", "--no-pictures", SAMPLE, "-o", out).returncode == 0
    r = cli("report", "--no-pictures", SAMPLE, "-o", out)
    assert r.returncode == 0, r.stderr
    assert f"{out}: replaced the legate_prof report written there before" in r.stderr
    assert (out / "index.html").is_file()


@pytest.mark.parametrize("change", ["notes", "folder", "edited"])
def test_report_never_replaces_a_report_folder_holding_the_users_files(tmp_path, change):
    """The issue's reproduction: re-running ``report -o R`` deleted ``R/NOTES.txt`` and
    ``R/mydata/`` without a word.  Now it refuses, as the Parquet export does, and says what
    is not the report's; nothing in R changes."""
    out = tmp_path / "R"
    assert cli("report", "--no-pictures", SAMPLE, "-o", out).returncode == 0
    if change == "notes":
        (out / "NOTES.txt").write_text("mine")
    elif change == "folder":
        (out / "mydata").mkdir()
        (out / "mydata" / "a.csv").write_text("1,2\n")
    else:
        (out / "index.html").write_text("<p>my annotations</p>")
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    named = {"notes": "NOTES.txt", "folder": "mydata", "edited": "index.html"}[change]
    one_line_error(cli("report", "--no-pictures", SAMPLE, "-o", out), "nothing was changed",
                   named)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_report_of_an_earlier_version_is_recognised_by_its_layout(tmp_path):
    from legate_prof.report.folder import MARKER, earlier_report
    d = tmp_path / "R"
    (d / "tiles").mkdir(parents=True)
    (d / MARKER).write_text("written by legate_prof report\n")
    for name in ("index.html", "meta.js", "report.js", "tiles/L0_0.js"):
        (d / name).write_text("x")
    assert earlier_report(d) is True
    (d / "thesis.tex").write_text("keep")
    assert earlier_report(d) == "thesis.tex"
    assert earlier_report(tmp_path) is False  # no marker: not ours at all


def test_a_strangers_report_folder_huge_or_deep_gets_one_line(tmp_path):
    """A review: ``report`` into a received folder's ``legate_prof/`` whose marker is a
    100 GB sparse file read whole (MemoryError), or that is 3,000 folders deep
    (``Path.rglob``: RecursionError), ended in a traceback.  One line now, nothing changed."""
    from legate_prof.report.folder import MARKER, earlier_report
    huge = tmp_path / "huge"
    huge.mkdir()
    with open(huge / MARKER, "wb") as f:
        f.truncate(100 << 30)
    one_line_error(cli("report", "--no-pictures", SAMPLE, "-o", huge),
                   "is not a legate_prof report")
    deep = tmp_path / "deep"
    deep.mkdir()
    (deep / MARKER).write_text("written by legate_prof report\n")
    d = str(deep)
    os.chdir(d)  # (paths of 3,000 parts are too long for the kernel: go down relatively)
    try:
        for _ in range(3000):
            os.mkdir("a")
            os.chdir("a")
    finally:
        os.chdir(tmp_path)
    try:
        assert earlier_report(deep).startswith("a, a/a, a/a/a and ")  # (as deep as paths go)
        one_line_error(cli("report", "--no-pictures", SAMPLE, "-o", deep),
                       "nothing was changed", "a")
    finally:  # (pytest's own removal of old temporaries recurses: it would fail on this)
        _remove_deep(deep, 3000)


def _remove_deep(top, depth):
    """Remove ``top``/a/a/... (``depth`` deep) from the bottom up, going down relatively."""
    here = os.getcwd()
    os.chdir(top)
    try:
        for _ in range(depth):
            os.chdir("a")
        for _ in range(depth):
            os.chdir("..")
            os.rmdir("a")
    finally:
        os.chdir(here)


@pytest.mark.parametrize("command", ["stats", "compare"])
def test_a_folder_named_as_a_rank_inside_a_run_is_not_read_as_the_rank(tmp_path, command):
    """A review: ``stats`` and ``compare`` expanded a run folder twice, so a link
    ``legate_1.prof`` -> another run's folder anywhere on disk was read as the run's rank 1
    (mpi4's four ranks shown); an empty folder so named printed nothing at all.  Every
    command reads a folder once: that entry is one line, the run's own rank is shown."""
    import shutil
    real = ROOT / "fixtures" / "real"
    run = tmp_path / "run"
    run.mkdir()
    for f in ("legate_0.prof.gz", "legate_0.runtime.prof"):
        shutil.copy(real / "mpi2" / f, run / f)
    (run / "legate_1.prof").symlink_to(real / "mpi4")
    args = [run, real / "mpi2"] if command == "compare" else [run, "--json"]
    r = cli(command, *args)
    assert r.returncode == 2
    errors = [ln for ln in r.stderr.splitlines() if "error:" in ln]
    assert len(errors) == 1 and "legate_1.prof: is a directory" in errors[0], r.stderr
    if command == "stats":
        import json
        assert json.loads(r.stdout)["ranks"] == 1
    else:
        assert r.stdout.startswith(f"A = {run}")


def test_a_report_named_as_a_profile_in_the_run_folder_is_refused(tmp_path):
    """A review: ``report RUN -o RUN/legate_9.prof`` was written, and every later command
    of the run then failed on that folder; the exports refused it.  So does the report."""
    import shutil
    run = tmp_path / "run"
    shutil.copytree(ROOT / "fixtures" / "real" / "mpi2", run,
                    ignore=shutil.ignore_patterns("golden"))
    one_line_error(cli("report", "--no-pictures", run, "-o", run / "legate_9.prof"),
                   "is in the run's folder being read")
    assert not (run / "legate_9.prof").exists()
    assert cli("stats", run).returncode == 0


def test_a_log_with_a_huge_sparse_tail_keeps_its_records_under_a_memory_limit(tmp_path):
    """A review: under ``prlimit --as`` a log with a 100 GB sparse tail could not be mapped
    ("Cannot allocate memory") and its rank was lost; a 3 GB tail kept its 2,872 records.
    As much of its start as fits is mapped, and the warning says so."""
    import gzip
    import resource
    run = tmp_path / "run"
    run.mkdir()
    real = ROOT / "fixtures" / "real" / "mpi2"
    (run / "legate_0.prof.gz").write_bytes((real / "legate_0.prof.gz").read_bytes())
    with open(run / "legate_1.prof", "wb") as f:
        f.write(gzip.decompress((real / "legate_1.prof.gz").read_bytes()))
        f.truncate(100 << 30)

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    r = cli("stats", "--no-cache", run, preexec_fn=limit)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("2 rank(s), 1514 timeline items"), r.stdout[:200]
    assert "could be mapped (this process's memory limit)" in r.stderr
    assert "kept 2872 records" in r.stderr and "error" not in r.stderr, r.stderr


@pytest.mark.parametrize("command", ["export", "screenshot", "report"])
def test_an_output_that_is_a_loop_of_links_is_refused_and_left(tmp_path, command):
    """A review: ``export -o loopA`` (loopA -> loopB -> loopA) replaced the link with the
    export, exit 0.  A loop of links is refused as a link out of the folder is."""
    (tmp_path / "loopA").symlink_to("loopB")
    (tmp_path / "loopB").symlink_to("loopA")
    out = tmp_path / "loopA"
    args = {"export": ["export", "--format", "chrome", SAMPLE, "-o", out],
            "screenshot": ["screenshot", SAMPLE, "-o", out],
            "report": ["report", "--no-pictures", SAMPLE, "-o", out]}[command]
    one_line_error(cli(*args), "is a loop of symbolic links")
    assert out.is_symlink() and os.readlink(out) == "loopB"


STOP_AT_RENAME = """
import os, signal, sys
from legate_prof.cli import main
sig = getattr(signal, sys.argv[1])
if sig != signal.SIGKILL:  # (a suite run under nohup: SIGHUP ignored, and inherited)
    signal.signal(sig, signal.SIG_DFL)
os.replace = lambda *a: os.kill(os.getpid(), sig)  # stopped with the output fully written
main(sys.argv[2:])
"""


@pytest.mark.parametrize("sig, args, target", [
    ("SIGKILL", ["export", "--format", "chrome", "-o"], "x.json"),
    ("SIGTERM", ["convert", "-o"], "b.lpbundle"),
    ("SIGHUP", ["report", "--no-pictures", "-o"], "rep"),
])
def test_temporaries_of_a_writer_stopped_by_a_signal_go_at_the_next_command(tmp_path, sig,
                                                                           args, target):
    """The issue's reproduction: ``.chrome.json.*.tmp`` (154 MB), ``.b.lpbundle.*.tmp``,
    ``.rep.*.tmp/`` stayed after SIGKILL / SIGTERM / SIGHUP.  Their names now hold the host
    and the process id, so the next command of any kind (here ``stats``) removes them."""
    import subprocess
    env = {"TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    out = tmp_path / "out"
    out.mkdir()
    e = dict(os.environ, QT_QPA_PLATFORM="offscreen", LEGATE_PROF_CACHE_DIR="", **env)
    r = subprocess.run([sys.executable, "-c", STOP_AT_RENAME, sig, *args, str(out / target),
                        str(SAMPLE)], env=e, capture_output=True, text=True, timeout=180)
    assert r.returncode == -getattr(__import__("signal"), sig), r.stderr[-2000:]
    left = [p.name for p in out.iterdir()]
    assert len(left) == 1 and left[0].startswith(f".{target}.lp-"), left
    r = cli("stats", SAMPLE, env=env)
    assert r.returncode == 0 and f"removed {out / left[0]}" in r.stderr, r.stderr
    assert list(out.iterdir()) == []


def test_the_sweep_removes_only_temporaries_it_owns(tmp_path, monkeypatch):
    """Not a live process's, not another host's, not a name that only looks like ours, not
    what a record points at when the name there is not the recorded process's."""
    import subprocess
    import tempfile
    from legate_prof import output_file
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    host = output_file._host()
    d = tmp_path / "out"
    d.mkdir()
    dead = [d / f".x.json.lp-{host}-{gone}-ab12.tmp", d / f".rep.lp-{host}-{gone}-cd34.tmp",
            d / f".x.duckdb.lp-{host}-{gone}-ef56.tmp.wal"]
    keep = [d / f".x.json.lp-{host}-{os.getppid()}-ab12.tmp",  # alive
            d / f".x.json.lp-otherhost-{gone}-ab12.tmp",  # another host's
            d / f".x.json.{gone}.tmp", d / f"x.json.lp-{host}-{gone}-ab12.tmp",  # look-alikes
            d / "NOTES.txt"]
    for p in dead + keep:
        p.write_text("x") if "rep" not in p.name else p.mkdir()
    (d / f".rep.lp-{host}-{gone}-cd34.tmp" / "tiles").mkdir()
    reg = output_file._registry()
    os.symlink(d / "NOTES.txt", reg / f"{host}-{gone}-0001")  # a record pointing elsewhere
    os.symlink(keep[0], reg / f"{host}-{gone}-0002")  # at another process's temporary
    removed = output_file.sweep_stale_outputs(d, note=lambda m: None)
    assert sorted(removed) == sorted(map(str, dead))
    assert not any(p.exists() for p in dead) and all(p.exists() for p in keep)
    assert list(reg.iterdir()) == []  # records of ended processes go


WRITERS = [
    ("screenshot", ["screenshot", "--width", "800", "--height", "600", "-o"], "s.png"),
    ("convert", ["convert", "-o"], "b.lpbundle"),
    ("chrome", ["export", "--format", "chrome", "-o"], "x.json"),
    ("perfetto", ["export", "--format", "perfetto", "-o"], "x.pftrace"),
    ("parquet", ["export", "--format", "parquet", "-o"], "pq"),
    ("report", ["report", "-o"], "rep"),
    ("compare", ["compare", ROOT / "fixtures" / "real" / "transfers_0.prof", "-o"], "c.png"),
]


def _writers_into(folder, env=None, preexec_fn=None):
    """Each writer into ``folder``: (name, the CLI's result)."""
    for name, args, target in WRITERS:
        if name == "parquet":
            pytest.importorskip("pyarrow")
        yield name, cli(*args, folder / target, ROOT / "fixtures" / "real" / "efficient_0.prof",
                        env=env, preexec_fn=preexec_fn)


def test_a_full_disk_is_one_line_from_every_writer_and_leaves_nothing(tmp_path):
    """Writes past a file size limit fail as on a full disk (EFBIG, as ENOSPC): one line,
    exit 2, and nothing left where the output was going."""
    import resource

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (16 << 10, 16 << 10))
    for name, r in _writers_into(tmp_path, preexec_fn=small_files):
        one_line_error(r, "could not write", "File too large")
        assert list(tmp_path.iterdir()) == [], name


def test_a_full_file_system_is_one_line_from_every_writer_and_leaves_nothing(tmp_path):
    """The same on a real full file system: a small tmpfs (root only), almost filled."""
    import subprocess
    mnt = tmp_path / "small"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs",
                                            str(mnt)], capture_output=True).returncode != 0:
        pytest.skip("needs root to mount a small tmpfs")
    try:
        (mnt / "fill").write_bytes(bytes(1000 << 10))
        for name, r in _writers_into(mnt):
            one_line_error(r, "could not write", "No space left on device")
            assert [p.name for p in mnt.iterdir()] == ["fill"], name
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def test_an_output_to_dev_full_is_one_line():
    one_line_error(cli("export", "--format", "chrome", "-o", "/dev/full", SAMPLE),
                   "No space left on device")


# -- the cache ---------------------------------------------------------------------------------
def test_a_run_given_with_repeats_is_found_in_the_cache_again(tmp_path, monkeypatch):
    """A folder holding a log and a gzip of it (or a file given twice): the entry was kept
    under the inputs without their repeats and looked up under them all, so every command
    built the run again and kept one more entry (a review)."""
    import gzip
    import shutil
    from legate_prof.load.inputs import expand_inputs
    from legate_prof.load.loader import load_profile
    from legate_prof.store.cache import load_cached
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(tmp_path / "cache"))
    run = tmp_path / "dup"
    run.mkdir()
    shutil.copy(SAMPLE, run / "legate_0.prof")
    (run / "legate_0.prof.gz").write_bytes(gzip.compress(SAMPLE.read_bytes()))
    for given in ([run], [run / "legate_0.prof", run / "legate_0.prof"]):
        load_profile(given, use_cache=True)
        paths = expand_inputs([str(p) for p in given])
        assert len(paths) == 2 and load_cached(paths, note=lambda *_: None) is not None, given
    assert len(list((tmp_path / "cache").glob("*.lpbundle"))) == 2


def test_a_cache_that_cannot_be_written_still_serves_its_timeline(tmp_path):
    """A full cache disk (writes past a file size limit fail as there): an entry reopened
    after a while rewrites its stamp, and that failed write ended `stats` with "could not
    write", exit 2, nothing shown (a review, on a full tmpfs): the answer is shown from the
    entry, exit 0."""
    import resource
    import shutil
    from legate_prof.load.loader import load_profile
    from legate_prof.store.cache import entry_path
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(SAMPLE, run / "legate_0.prof")
    env = {"LEGATE_PROF_CACHE_DIR": str(tmp_path / "cache")}
    os.environ.update(env)
    try:
        load_profile([run], use_cache=True)  # (the entry written here, at once)
        entry = entry_path([str(run / "legate_0.prof")])
    finally:
        del os.environ["LEGATE_PROF_CACHE_DIR"]
    assert entry.exists()
    old = entry.stat().st_mtime - 7200  # (used two hours ago: reopening it stamps it again)
    os.utime(entry, (old, old))
    plain = cli("stats", run)

    def no_room():
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    r = cli("stats", run, env=env, preexec_fn=no_room)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert r.stdout == plain.stdout and "could not write" not in r.stderr, r.stderr


def test_a_log_changed_in_place_keeping_size_inode_ends_and_mtime_is_not_served_stale(
        tmp_path, monkeypatch):
    """The issue's reproduction: the old key hashed only the first and last 64 KiB, so an edit
    between them (size, inode and mtime kept) was served from the cache (232 items shown as
    1,242).  The key now has the ctime and blocks sampled across the file."""
    from fixtures.synthetic import generate
    from legate_prof.load.loader import load_profile
    from legate_prof.store.cache import WHOLE_BYTES, entry_path
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(tmp_path / "cache"))
    a = Path(generate(tmp_path / "a", ranks=1, items=60_000, seed=1)[0])
    b = Path(generate(tmp_path / "b", ranks=1, items=60_000, seed=2)[0])
    size = a.stat().st_size
    assert size > WHOLE_BYTES  # sampled, not hashed whole
    first = load_profile([a], use_cache=True)
    entry = entry_path([a])
    st = a.stat()
    old, other = a.read_bytes(), b.read_bytes().ljust(size, b"\0")
    edited = old[:1 << 16] + other[1 << 16:size - (1 << 16)] + old[size - (1 << 16):]
    with open(a, "r+b") as f:  # in place: the same inode
        f.write(edited)
    os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (a.stat().st_ino, a.stat().st_size, a.stat().st_mtime_ns) == \
        (st.st_ino, st.st_size, st.st_mtime_ns)
    again = load_profile([a], use_cache=True)
    fresh = load_profile([a])
    assert entry_path([a]) != entry
    assert again.n_items == fresh.n_items and not np.array_equal(
        again.items["start"][:1000], first.items["start"][:1000])


def test_sampled_blocks_reach_across_the_file(tmp_path):
    """Besides the ctime (which only root can set back), a change in any sampled block
    changes the key: blocks are spread over the whole file, not only its ends."""
    from legate_prof.store import cache
    import hashlib
    size = 100 << 20
    step = (size - cache.SAMPLE_BYTES) // (cache.SAMPLES + 1)
    p = tmp_path / "f"
    digests = set()
    for at in (0, 20 * step + 5, 50 * step + 5, size - 1, None):  # first, between, last
        data = bytearray(size)
        if at is not None:
            data[at] = 1
        h = hashlib.sha256()
        p.write_bytes(data)
        with open(p, "rb") as f:
            cache._sample(f, size, h)
        digests.add(h.hexdigest())
    assert len(digests) == 5


def test_the_key_of_a_big_log_reads_a_few_hundred_kib_of_it(tmp_path, monkeypatch):
    """A cached ``view`` of ten 126 MB logs computed its key before anything else: 66 blocks
    of 64 KiB a log, 42 MB through CRC-32, 30 ms of CPU of a first frame's 190 ms.  Blocks of
    4 KiB, as spread: a log written again differs in all of them (the ctime guards edits)."""
    from legate_prof.store import cache
    p = tmp_path / "big.prof"
    with open(p, "wb") as f:
        f.truncate(126 << 20)  # (sparse: nothing written)
    read = []
    opened = cache.open_regular

    class Counting:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def readinto(self, b):
            n = self.f.readinto(b)
            read.append(n)
            return n

        def read(self, n=-1):
            data = self.f.read(n)
            read.append(len(data))
            return data

        def seek(self, *a):
            return self.f.seek(*a)
    monkeypatch.setattr(cache, "open_regular", lambda path: (lambda f, st: (Counting(f), st))(
        *opened(path)))
    key = cache.cache_key([p])
    assert 0 < sum(read) <= 512 << 10
    with open(p, "r+b") as f:  # a block sampled in the middle of the file
        f.seek(32 * ((126 << 20) - cache.SAMPLE_BYTES) // (cache.SAMPLES + 1) + 7)
        f.write(b"x")
    assert cache.cache_key([p]) != key


def test_a_settled_input_is_hashed_once_a_process_and_a_fresh_one_every_time(tmp_path,
                                                                              monkeypatch):
    """A command asks its run's key three times (its cache entry, its kept answers, the
    answer's): 0.3-1.0 s each for 1,000 ranks' logs, every file read again.  A file whose
    times are older than ``SETTLED_NS`` is read once a process; one changed more recently
    is read every time (rewritten within the clock's tick, its times stay as they were:
    only its contents tell)."""
    from legate_prof.store import cache
    sampled = []
    real = cache._sample
    monkeypatch.setattr(cache, "_sample", lambda f, size, h: (sampled.append(f.name),
                                                             real(f, size, h)))
    files = [tmp_path / "legate_0.prof", tmp_path / "legate_1.prof"]
    for f in files:
        f.write_bytes(b"a" * 1000)
    monkeypatch.setattr(cache, "SETTLED_NS", 10 ** 18)  # (both just written)
    key = cache.cache_key(files)
    assert cache.cache_key(files[::-1]) == key and len(sampled) == 4
    monkeypatch.setattr(cache, "SETTLED_NS", 0)  # (both settled)
    assert cache.cache_key(files) == key and len(sampled) == 6
    assert cache.cache_key(files) == key and len(sampled) == 6  # (remembered)
    with open(files[1], "ab") as f:
        f.write(b"b")
    assert cache.cache_key(files) != key and len(sampled) == 7  # (the one changed)


PLANTED = """
import os, sys
from legate_prof.load.loader import load_profile
from legate_prof.store.cache import entry_path
paths = sys.argv[2:]
which = sys.argv[1]
first = load_profile(paths, use_cache=True)
e = entry_path(paths)
target = {"entry": e, "stamp": e.with_suffix(".checked"), "writing": e.with_suffix(".writing")}[which]
os.unlink(e if which == "writing" else target)  # (no entry: a writer's lock is looked for)
os.mkfifo(target)
again = load_profile(paths, use_cache=True)  # must not block on the FIFO
print(again.n_items == first.n_items, os.path.exists(e) and not os.path.islink(e))
"""


@pytest.mark.parametrize("which", ["entry", "stamp", "writing"])
def test_a_fifo_planted_as_a_cache_entry_is_never_opened(tmp_path, which):
    """The issue's reproduction: a FIFO planted as a cache entry blocked ``view``; planted
    as the lock of an entry being written, neither its reader nor its writer waits on it."""
    import subprocess
    e = dict(os.environ, LEGATE_PROF_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-c", PLANTED, which, str(SAMPLE)], env=e, timeout=120,
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.split() == ["True", "True"], r.stderr[-2000:]
    if which == "entry":
        assert "is not a regular file; removed it, rebuilding" in r.stderr


def test_a_fifo_input_with_the_cache_on_is_one_error_not_a_hang(tmp_path):
    import subprocess
    fifo = tmp_path / "legate_0.prof"
    os.mkfifo(fifo)
    e = dict(os.environ, LEGATE_PROF_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-c", "import sys; from legate_prof.load.loader import "
                        "load_profile; load_profile(sys.argv[1:], use_cache=True)", str(fifo)],
                       env=e, timeout=120, capture_output=True, text=True)
    assert r.returncode != 0 and "is a FIFO" in r.stderr.splitlines()[-1]


# -- text for a terminal -----------------------------------------------------------------------
ESCAPES = {"set-title": "\x1b]0;pwned\x07", "clear-line": "\x1b[2K\r", "clipboard":
           "\x1b]52;c;ZWNobyBvd25lZA==\x07", "c1-csi": "\x9b2J", "bidi": "\u202egnp.exe",
           "newline": "\nlegate_prof: error: fake", "nul": "a\x00b", "surrogate": "x\udcff",
           "del": "\x7f", "line-separator": "a\u2028b", "private": "\ue000"}


@pytest.mark.parametrize("name", ESCAPES)
def test_terminal_safe_shows_every_control_as_a_visible_escape(name):
    from legate_prof.present.terminal import terminal_safe
    s = terminal_safe("task " + ESCAPES[name] + " at prog.py:3")
    assert s.isprintable() and s.startswith("task ") and s.endswith(" at prog.py:3")
    s.encode("utf-8")  # (a lone surrogate would raise here, as print would)
    assert "\\" in s


def test_terminal_safe_keeps_plain_text_of_every_script_as_it_is():
    from legate_prof.present.terminal import terminal_safe
    for text in ("cupynumeric::BinaryOpTask[/p/a.py:3]", "café ✓ 日本語 Ω → ≤", "",
                 "a b"):
        assert terminal_safe(text) == text
    assert terminal_safe("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m"
    assert terminal_safe(b"\x1b]52;c;x\x07") == "\\x1b]52;c;x\\x07"
    assert terminal_safe(3) == "3"
    long = "\x1b" * (1 << 20)  # a megabyte of escapes: one pass
    assert terminal_safe(long) == "\\x1b" * (1 << 20)


def _hostile_log(path):
    """The guide's inefficient run (it has findings whose lines ``insights`` prints) with a
    set-title and a clear-line in its provenance (the same lengths, so the log stays whole),
    and a runtime stream with every escape in names."""
    import gzip
    import msgpack
    from legate_prof.read.runtime_stream import STREAM_MAGIC
    raw = gzip.decompress((ROOT / "fixtures" / "real" / "inefficient_1rank"
                           / "legate_0.prof.gz").read_bytes())
    path.write_bytes(raw.replace(b"/work/staging/fixtures/",
                                 b"/\x1b[2K/staging/\x1b]0;pwn\x07/"))
    pack = msgpack.Packer(use_bin_type=True).pack
    evs = [["op", 10 + i, "Task" + v, v + "prog.py:3"] for i, v in enumerate(ESCAPES.values())
           if "\udcff" not in v]  # (msgpack strings are UTF-8: no lone surrogates)
    stream = path.with_name("legate_0.runtime.prof")
    stream.write_bytes(STREAM_MAGIC + pack({"rank": 0, "start_ns": 1}) + b"".join(map(pack, evs))
                       + pack(["end", 99]))
    return [path, stream]


@pytest.mark.parametrize("cmd", ["stats", "insights"])
def test_names_from_a_file_reach_the_terminal_escaped(tmp_path, cmd):
    """The issue's reproduction: task names and provenance with set-title, clear-line and an
    OSC 52 clipboard write reached the terminal raw in ``stats`` and ``insights``."""
    files = _hostile_log(tmp_path / "legate_0.prof")
    r = cli(cmd, *(files if cmd == "stats" else files[:1]))
    assert r.returncode == 0, r.stderr
    out = r.stdout + r.stderr
    assert "efficient.py" in out and not any(c in out for c in "\x1b\x9b\x07\x00\u202e")
