"""A stranger's folder, round two (issue 37): links planted where outputs go, msgpack that
amplifies, a long name repeated per item, times at 2^63 - 1, a cache folder someone else owns,
`sql` over a received folder, a full stdout, record's Ctrl-C, warnings that blamed the wrong
file.  Each test holds one finding of docs/robustness.md's table and failed before its fix.
"""

import gzip
import hashlib
import shutil
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "fixtures" / "real" / "legate26.06_cpu2_myprof_0.prof"
ENV = dict(os.environ, QT_QPA_PLATFORM="offscreen", LEGATE_PROF_CACHE_DIR="")
ENV.pop("LEGATE_PROF_HIDDEN_WINDOW", None)  # (`view` renders its picture, as for a user)


def cli(*args, cwd=ROOT, env=None, timeout=180, stdout=subprocess.PIPE, **kw):
    # -P: not the working folder on the import path (a received folder may hold a package
    # named legate_prof; the installed command never imports from there)
    return subprocess.run([sys.executable, "-P", "-m", "legate_prof", *map(str, args)],
                          stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=timeout,
                          env=env or ENV, cwd=cwd, **kw)


def one_line_error(p, *words):
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr, p.stderr
    errors = [ln for ln in p.stderr.splitlines() if "error:" in ln]
    assert len(errors) == 1, p.stderr
    for w in words:
        assert w in errors[0], errors[0]
    return errors[0]


def digest(p):
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


def tree(folder):
    """{relative path: bytes or '->target'} of everything under ``folder``."""
    out = {}
    for dirpath, dirs, files in os.walk(folder):
        for n in dirs + files:
            p = Path(dirpath) / n
            rel = str(p.relative_to(folder))
            out[rel] = "->" + os.readlink(p) if p.is_symlink() else \
                (p.read_bytes() if p.is_file() else "dir")
    return out


# -- 1. outputs never through a link out of their folder ----------------------------------------
@pytest.fixture
def received(tmp_path):
    """A received run folder whose default outputs are links into the victim's home: to a
    file (notes.txt), to a folder, and dangling."""
    run, home = tmp_path / "run", tmp_path / "home"
    run.mkdir()
    home.mkdir()
    (run / "legate_0.prof").write_bytes(SAMPLE.read_bytes())
    (home / "notes.txt").write_text("the victim's notes\n")
    (home / "reports").mkdir()
    return run, home


@pytest.mark.parametrize("case", ["convert_per_rank", "convert_default", "view_picture",
                                  "report_default", "screenshot", "chrome", "parquet"])
@pytest.mark.parametrize("dangling", [False, True], ids=["to_a_file", "dangling"])
def test_outputs_never_follow_a_link_out_of_a_received_folder(received, case, dangling):
    """The issue's reproduction: `ln -s ~/notes.txt run/legate_0.lpbundle; legate_prof convert
    --per-rank run` turned the notes into a bundle, and a dangling link made the file.  Every
    writer, the default outputs first, refuses such a link in one line and writes nothing."""
    run, home = received
    folder_out = case in ("report_default", "parquet")
    name, args = {
        "convert_per_rank": ("legate_0.lpbundle", ["convert", "--per-rank", "."]),
        "convert_default": ("legate_0.lpbundle", ["convert", "legate_0.prof"]),
        "view_picture": ("legate_prof_view.png", ["view"]),
        "report_default": ("legate_prof", ["report", "legate_0.prof", "--no-pictures"]),
        "screenshot": ("out.png", ["screenshot", "legate_0.prof", "-o", "out.png"]),
        "chrome": ("trace.json", ["export", "legate_0.prof", "--format", "chrome",
                                  "-o", "trace.json"]),
        "parquet": ("tables", ["export", "legate_0.prof", "--format", "parquet",
                               "-o", "tables"]),
    }[case]
    target = home / ("gone" if dangling else "reports" if folder_out else "notes.txt")
    (run / name).symlink_to(target)
    before = tree(home), digest(run / "legate_0.prof")
    one_line_error(cli(*args, cwd=run), "symbolic link out of its folder", str(target))
    assert (tree(home), digest(run / "legate_0.prof")) == before
    assert (run / name).is_symlink()
    assert not [n for n in os.listdir(run) if n.startswith(".")], os.listdir(run)


def test_a_link_to_a_sibling_or_below_is_still_followed(received):
    """Where the link stays in its folder its target is written, as before (`-o latest.png`
    naming this week's picture)."""
    run, _ = received
    (run / "sub").mkdir()
    (run / "latest.png").symlink_to("sub/week.png")
    r = cli("screenshot", "legate_0.prof", "-o", "latest.png", "--width", "400",
            "--height", "300", cwd=run)
    assert r.returncode == 0, r.stderr
    assert (run / "sub" / "week.png").read_bytes()[:4] == b"\x89PNG"
    assert (run / "latest.png").is_symlink()


def test_dash_o_dev_stdout_writes_into_the_pipe(received):
    """`-o /dev/stdout` leads out of /dev (to a pipe or the shell's file): a descriptor's name,
    written where it leads — into a pipe it was an error before (no such file)."""
    run, _ = received
    r = cli("export", "legate_0.prof", "--format", "chrome", "-o", "/dev/stdout", cwd=run)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("[") and '"ph":"X"' in r.stdout.replace(" ", "")


@pytest.mark.parametrize("output", ["/dev/stdout", "-"])
def test_an_export_to_standard_output_is_the_trace_alone(received, output):
    """The export's "wrote ..." line went to stdout too: piped, it followed the trace (a JSON
    reader stopped at "Extra data"); sent to a file, it overwrote the trace's first bytes (two
    descriptors of one file, each from its start).  It goes to stderr there; ``-o -`` (a file
    named "-" before) is standard output."""
    import json
    run, _ = received
    r = cli("export", "legate_0.prof", "--format", "chrome", "-o", output, cwd=run)
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)) > 10 and "wrote /dev/stdout" in r.stderr
    with open(run / "trace.json", "w") as shell_file:  # (`... -o /dev/stdout > trace.json`)
        r = cli("export", "legate_0.prof", "--format", "chrome", "-o", output, cwd=run,
                stdout=shell_file)
    assert r.returncode == 0, r.stderr
    assert len(json.loads((run / "trace.json").read_text())) > 10
    assert not (run / "-").exists()


@pytest.mark.parametrize("fmt", ["parquet", "duckdb"])
def test_a_folder_or_database_export_to_standard_output_says_it_cannot_go_there(received, fmt):
    """`--format parquet -o -` said "/dev/stdout: exists and is not a folder" (duckdb: "is
    not a regular file"), about a name the user never typed (a user's review): it says that
    this format goes to a path, and which go to standard output."""
    run, _ = received
    r = cli("export", "legate_0.prof", "--format", fmt, "-o", "-", cwd=run)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        f"legate_prof: error: /dev/stdout: is standard output, and a {fmt} export is "
        + ("a folder of files" if fmt == "parquet" else "a database file")
        + ": give -o a path (perfetto and chrome go to standard output)"], r.stderr


# -- 5. a machine description beyond Realm's 16-bit node ids -----------------------------------
def swept_log(tmp_path, record, field, value, name="legate_0.prof", which=0):
    """The sample log with ``record``'s ``field`` (its ``which``-th occurrence) at ``value``."""
    from fixtures.fuzzing import legion_fields, swept
    data = SAMPLE.read_bytes()
    at = [(off, size) for rec, f, off, size in legion_fields(data) if (rec, f) == (record, field)]
    p = tmp_path / name
    p.write_bytes(swept(data, *at[which], value))
    return p


@pytest.mark.parametrize("field, value", [("node_id", 2**31), ("node_id", 2**32 - 1),
                                          ("num_nodes", 2**32 - 1)])
def test_a_machine_description_beyond_16_bit_nodes_is_a_warning(tmp_path, field, value):
    """`MachineDesc.node_id` >= 2^31 was an `OverflowError ... int32` traceback in 13 commands
    (`recording_rank`): the description is damage, the rank comes from the processors."""
    from legate_prof.analyze.stats import compute_stats
    from legate_prof.load.loader import load_profile
    from legate_prof.query import as_source
    p = swept_log(tmp_path, "MachineDesc", field, value)
    model = load_profile([p])
    assert any("MachineDesc is damaged" in str(w) for w in model.warnings)
    assert model.n_items == load_profile([SAMPLE]).n_items
    compute_stats(model)
    as_source(load_profile([p], ranked=True)).run_critical_path()


def test_node_id_at_2_31_through_the_commands(tmp_path):
    p = swept_log(tmp_path, "MachineDesc", "node_id", 2**31)
    for args in (["stats"], ["critical"], ["insights"], ["dump"],
                 ["export", "--format", "chrome", "-o", tmp_path / "t.json"],
                 ["convert", "-o", tmp_path / "b.lpbundle"]):
        r = cli(args[0], p, *args[1:])
        assert r.returncode == 0 and "Traceback" not in r.stderr, (args, r.stderr[-500:])
        assert "MachineDesc is damaged" in r.stderr or args[0] == "dump", (args, r.stderr)


# -- 3. msgpack that amplifies: a budget of Python objects -------------------------------------
def peak_cli(*args, cwd=ROOT):
    """(result, peak resident memory in MiB) of one command, measured in its own process."""
    # (the high-water mark restarted first: a process forked from this one starts with the
    # test process's pages, which ru_maxrss keeps across exec)
    code = ("import sys; open('/proc/self/clear_refs', 'w').write('5'); "
            "from legate_prof.cli import main; rc = main(sys.argv[1:]); "
            "print('MAXRSS', next(int(x.split()[1]) for x in open('/proc/self/status') "
            "if x.startswith('VmHWM:')), file=sys.stderr); sys.exit(rc)")
    r = subprocess.run([sys.executable, "-P", "-c", code, *map(str, args)], capture_output=True,
                       text=True, timeout=300, env=ENV, cwd=cwd)
    peaks = [int(ln.split()[1]) for ln in r.stderr.splitlines() if ln.startswith("MAXRSS")]
    assert peaks, r.stderr[-2000:]
    return r, peaks[0] >> 10


def bundle_with_header(path, head):
    from legate_prof.store.bundle_file import BUNDLE_MAGIC
    path.write_bytes(BUNDLE_MAGIC + len(head).to_bytes(8, "little") + head)
    return path


def test_a_10_mb_bundle_header_of_empty_maps_is_one_line_in_bounded_memory(tmp_path):
    """The issue's reproduction: a 10 MB header of empty maps took 1.48 GB (60 MB: 7.5 GB,
    then a MemoryError traceback).  Now a list longer than the header could honestly hold is
    refused before it is made."""
    n = 10 << 20
    p = bundle_with_header(tmp_path / "b.lpbundle",
                           b"\xdd" + n.to_bytes(4, "big") + b"\x80" * n)
    r, peak = peak_cli("stats", p)
    one_line_error(r, str(p), "damaged bundle", "longer than its header")
    assert peak < 256, peak


@pytest.mark.parametrize("shape", range(4), ids=["list", "names", "lists_of_lists",
                                                 "maps_of_maps"])
def test_bundle_headers_of_nested_empty_maps_stop_at_their_budget(tmp_path, shape):
    """Each of the fuzzer's header bombs (4 MB): lists of 4,096 lists of empty maps pass
    msgpack's length limits and are stopped by the count of what they make."""
    import random
    from fixtures.fuzzing import bundle_header_bomb
    from legate_prof.errors import ProfileError
    from legate_prof.store.bundle_file import read_bundle

    class Big(random.Random):  # the largest of the fuzzer's sizes, the shape asked for
        def choice(self, seq):
            return max(seq)

        def randrange(self, n):
            return shape
    p = tmp_path / "b.lpbundle"
    p.write_bytes(bundle_header_bomb(Big(0), b""))
    with pytest.raises(ProfileError, match="damaged bundle"):
        read_bundle(p)


def test_a_50_mb_runtime_stream_of_nested_maps_keeps_its_events_in_bounded_memory(tmp_path):
    """The issue's reproduction: a 50 MB stream of nested empty maps took 3.6 GB while one
    item was shown.  Now an event is decoded within a budget (65,536 values, 4,096 maps and
    lists): the damaged event is a warning and the events before it are kept."""
    from fixtures.fuzzing import seed_files
    honest = seed_files()["runtime"]
    inner = b"\xdc\x10\x00" + b"\x80" * 4096
    event = b"\x93\xa2op\x01\xdc\x10\x00" + inner * 4096  # 16 MB: 16 M empty maps
    p = tmp_path / "legate_0.runtime.prof"
    p.write_bytes(honest + event * 3)
    r, peak = peak_cli("stats", p)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "damaged event (more than 65,536 values" in r.stderr
    assert peak < 256, peak
    from legate_prof.read.runtime_stream import read_runtime_stream
    q = tmp_path / "honest.runtime.prof"
    q.write_bytes(honest)
    assert len(read_runtime_stream(p).ops) == len(read_runtime_stream(q).ops) > 0


# -- 11. stdout on a full disk -------------------------------------------------------------------
@pytest.mark.parametrize("args", [["stats"], ["stats", "--json"], ["insights"], ["critical"],
                                  ["critical", "--json"], ["dump"], ["sql", "SELECT 1"]],
                         ids=" ".join)
def test_stdout_on_a_full_disk_is_one_line(args):
    """These printed an `OSError [Errno 28]` traceback and exited 1; now one line naming
    standard output, exit 2 (and the interpreter's last flush does not fail again)."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    with open("/dev/full", "w") as full:
        r = cli(*args, SAMPLE, stdout=full)
    assert r.stdout is None
    one_line_error(r, "standard output: could not write (No space left on device)")
    assert "Exception ignored" not in r.stderr, r.stderr


# -- 10, 12. sql: a folder named `*`, a read-only offline database, Ctrl-C, SIGKILL -------------
MPI2 = ROOT / "fixtures" / "real" / "mpi2"
LONG_QUERY = "SELECT sum(a.i * b.i) FROM range(100000000) a(i), range(100000) b(i)"


def count_items(*args, **kw):
    r = cli("sql", "SELECT count(*) AS n FROM items", *args, "--csv", **kw)
    assert r.returncode == 0, r.stderr
    return int(r.stdout.split()[-1])


def test_sql_on_a_parquet_folder_named_star_reads_that_folder_only(tmp_path):
    """DuckDB globbed the path: `sql Q 'x/*'` read every sibling export into the result
    (188 items counted 376).  Now each file is named to Arrow one by one."""
    from legate_prof.export import export
    from legate_prof.load.loader import load_profile
    model = load_profile([SAMPLE])
    for name in ("*", "start", "s[t]"):
        export(model, "parquet", str(tmp_path / name))
    export(load_profile([MPI2], ranked=True), "parquet", str(tmp_path / "other"))
    assert count_items(tmp_path / "*") == count_items(tmp_path / "s[t]") == model.n_items
    assert count_items(tmp_path / "other") == load_profile([MPI2]).n_items


OUTSIDE = ["COPY (SELECT 1) TO '{out}/copied.csv'", "ATTACH '{out}/attached.db'",
           "EXPORT DATABASE '{out}/exported'", "SELECT * FROM read_csv('{secret}')",
           "INSTALL httpfs", "LOAD httpfs", "SET enable_external_access = true",
           "SET lock_configuration = false", "SELECT * FROM '{export}/items.parquet'"]


@pytest.mark.parametrize("what", ["model", "ranks", "export"])
def test_sql_runs_in_a_database_that_reaches_nothing_outside(tmp_path, what):
    """The user's own query, but the database it runs in writes no file, reads no path it
    was not handed, installs and loads no extension (INSTALL tried the network), and none of
    that can be set back; what it was handed it reads."""
    import duckdb
    from legate_prof.export import export
    from legate_prof.export.duckdb_db import query, query_parquet
    from legate_prof.load.loader import load_profile
    (tmp_path / "secret.txt").write_text("a,b\n1,2\n")
    export(load_profile([SAMPLE]), "parquet", str(tmp_path / "pq"))
    out = tmp_path / "out"
    out.mkdir()
    run = {"model": lambda q: query(load_profile([SAMPLE]), q),
           "ranks": lambda q: query(_two_ranks(tmp_path / "ranks"), q),
           "export": lambda q: query_parquet(str(tmp_path / "pq"), q)}[what]
    for q in OUTSIDE:
        with pytest.raises(duckdb.Error):
            run(q.format(out=out, secret=tmp_path / "secret.txt", export=tmp_path / "pq"))
    assert list(out.iterdir()) == []
    assert run("SELECT count(*) FROM items")[1][0][0] > 0


def _two_ranks(folder):
    """A profile held per rank: per-rank bundles (``sql`` writes their tables to its scratch
    folder)."""
    from legate_prof.assemble.rank_set import RankSet
    from legate_prof.load.loader import load_profile
    from legate_prof.store.bundle import write_bundle
    folder.mkdir(exist_ok=True)
    for rank in (0, 1):
        if not (folder / f"legate_{rank}.lpbundle").exists():
            write_bundle(load_profile([MPI2 / f"legate_{rank}.prof.gz"]),
                         folder / f"legate_{rank}.lpbundle")
    profile = load_profile([folder], ranked=True)
    assert isinstance(profile, RankSet) and len(profile.item_parts()) == 2
    return profile


def test_sql_that_reaches_outside_is_one_line(tmp_path):
    """... and says what to do instead: a review tried docs/export.md's
    ``read_parquet('run_parquet/items*.parquet')`` (DuckDB's own form) inside `sql`."""
    one_line_error(cli("sql", f"COPY (SELECT 1) TO '{tmp_path}/x.csv'", SAMPLE),
                   "query:", "disabled by configuration")
    assert list(tmp_path.iterdir()) == []
    p = cli("sql", f"SELECT count(*) FROM read_parquet('{tmp_path}/items*.parquet')", SAMPLE)
    one_line_error(p, "query:", "disabled by configuration")
    assert "query the tables by name (SELECT ... FROM items)" in p.stderr


def _sql_process(args, tmpdir):
    import signal
    env = dict(ENV, TMPDIR=str(tmpdir))
    return subprocess.Popen([sys.executable, "-P", "-m", "legate_prof", "sql", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=ROOT, preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                                       signal.SIG_DFL))


def _wait_for(predicate, proc, what):
    import time
    for _ in range(1200):
        if predicate():
            return
        assert proc.poll() is None, (what, proc.communicate())
        time.sleep(0.1)
    raise AssertionError(f"{what}: not seen in 120 s")


def _scratch(tmpdir):
    return [p for p in Path(tmpdir).iterdir() if p.name.startswith(".legate_prof_sql.lp-")]


def test_ctrl_c_in_sql_ends_it_with_130_and_no_traceback(tmp_path):
    """Ctrl-C printed a `RuntimeError: Query interrupted` traceback (exit 1)."""
    import signal
    p = _sql_process([LONG_QUERY, SAMPLE], tmp_path)
    _wait_for(lambda: _scratch(tmp_path), p, "the query's scratch folder")
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130 and "Traceback" not in err, (p.returncode, err[-2000:])
    assert err.strip().splitlines()[-1] == "legate_prof: interrupted", err[-2000:]
    assert not _scratch(tmp_path)


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP"])
def test_a_command_terminated_stops_its_workers_and_leaves_no_hand_over(tmp_path, signame):
    """SIGTERM (`timeout`, a batch scheduler) or SIGHUP (a terminal closed) in the middle of
    a parallel build ended the process at once: the ranks' bundles stayed in the hand-over
    folder (in memory, /dev/shm) until a later parallel build (a review). Now it ends as
    Ctrl-C does, workers stopped, folder removed, exit 128 + the signal's number; and a
    folder a SIGKILL left is swept by the next command, whatever it is."""
    import signal
    import time
    from fixtures.synthetic import generate
    run = tmp_path / "run"
    generate(run, ranks=4, items=1_000_000, seed=3)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(ENV, TMPDIR=str(tmp), LEGATE_PROF_WORKERS="2")

    def handovers():
        return [p for p in tmp.iterdir() if p.name.startswith("legate_prof_handover_")]
    sig = getattr(signal, signame)
    # (a suite run under nohup, or as a background job, hands its children the signal
    # ignored: the command then rightly keeps it so, and finished, exit 0)
    p = subprocess.Popen([sys.executable, "-m", "legate_prof", "stats", "--no-cache", str(run)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         cwd=ROOT, preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL))
    _wait_for(handovers, p, "the hand-over folder")
    p.send_signal(sig)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 128 + getattr(signal, signame), (p.returncode, err[-2000:])
    assert "Traceback" not in err and not handovers(), (err[-2000:], handovers())
    # SIGKILL: what it leaves goes at the next command (one that builds nothing here)
    p = subprocess.Popen([sys.executable, "-m", "legate_prof", "stats", "--no-cache", str(run)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         cwd=ROOT)
    _wait_for(handovers, p, "the hand-over folder")
    p.kill()
    p.communicate(timeout=120)
    time.sleep(0.2)  # (its workers see their parent gone)
    assert handovers()
    r = subprocess.run([sys.executable, "-m", "legate_prof", "stats", str(SAMPLE)], env=env,
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and not handovers(), (r.stderr[-2000:], handovers())


STUCK_QUERY = """
import sys, time
from legate_prof.export.duckdb_db import _connect, _run
from legate_prof.output_file import scratch_folder

def stuck(x):
    print("stuck", flush=True)
    time.sleep(600)
    return x

with scratch_folder("legate_prof_sql") as scratch:
    con = _connect(scratch)
    con.create_function("stuck", stuck, ["BIGINT"], "BIGINT")
    _run(con, "SELECT stuck(1)")
"""


def test_ctrl_c_ends_a_query_that_does_not_stop(tmp_path):
    """Ctrl-C inside a query left the command waiting in DuckDB (`Executor::CancelTasks`) for
    a task of a large join to end: minutes, deaf to a second Ctrl-C (about 1 run in 100 of
    the test above).  A task that never ends (a function asleep): the command still ends,
    with 130, no traceback, and its scratch folder removed."""
    import signal
    env = dict(ENV, TMPDIR=str(tmp_path))
    p = subprocess.Popen([sys.executable, "-P", "-c", STUCK_QUERY], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert p.stdout.readline() == "stuck\n", p.communicate()
    assert _scratch(tmp_path)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130 and "Traceback" not in err, (p.returncode, err[-2000:])
    assert not _scratch(tmp_path)


def test_sql_stopped_by_sigkill_leaves_a_folder_the_next_command_removes(tmp_path):
    """SIGKILL left `$TMPDIR/legate_prof_sql.*` (34 MB) that nothing removed.  Its scratch
    folder is recorded as the outputs' temporaries are: the next command removes it."""
    import signal
    p = _sql_process([LONG_QUERY, SAMPLE], tmp_path)
    _wait_for(lambda: _scratch(tmp_path), p, "the query's scratch folder")
    p.send_signal(signal.SIGKILL)
    p.communicate(timeout=60)
    left = _scratch(tmp_path)
    assert left
    r = cli("stats", SAMPLE, env=dict(ENV, TMPDIR=str(tmp_path)))
    assert r.returncode == 0, r.stderr
    assert not _scratch(tmp_path) and "removed" in r.stderr and str(left[0]) in r.stderr


# -- 9. the cache folder: whose it is, its modes, and only its own entries evicted ---------------
def _planted(tmp_path, cache):
    """(the victim's inputs, their real item count): a bundle of another profile is planted
    in ``cache`` under the inputs' key."""
    from legate_prof.load.loader import load_profile
    from legate_prof.store.bundle import write_bundle
    from legate_prof.store.cache import entry_path
    victim = tmp_path / "legate_0.prof"
    victim.write_bytes(SAMPLE.read_bytes())
    other = load_profile([MPI2])
    os.environ["LEGATE_PROF_CACHE_DIR"] = str(cache)
    try:
        write_bundle(other, entry_path([victim]))
    finally:
        os.environ["LEGATE_PROF_CACHE_DIR"] = ENV["LEGATE_PROF_CACHE_DIR"]
    assert other.n_items != load_profile([victim]).n_items
    return victim, load_profile([victim]).n_items


@pytest.mark.parametrize("whose", ["open_to_all", "another_users"])
def test_a_cache_folder_someone_else_can_write_is_not_used(tmp_path, monkeypatch, whose):
    """A folder owned by another user and mode 0777 was used silently: an entry planted under
    the victim's key was served (1,242 items shown as 16,374).  Now the folder must be the
    user's and written by no one else, or the cache is not used, with one note."""
    from legate_prof.load.loader import load_profile
    cache = tmp_path / "cache"
    cache.mkdir()
    victim, n = _planted(tmp_path, cache)
    os.chmod(cache, 0o777 if whose == "open_to_all" else 0o755)
    if whose == "another_users":
        if os.getuid() != 0:
            pytest.skip("giving a folder to another user takes root")
        os.chown(cache, 12345, 12345)
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(cache))
    notes = []
    import legate_prof.load.loader as loader
    monkeypatch.setattr(loader, "_note", notes.append)
    assert load_profile([victim], use_cache=True).n_items == n
    said = [x for x in notes if "not using the cache folder" in x]
    assert len(said) == 1 and ("written by others" in said[0] or "another user" in said[0])


def test_cache_entries_and_their_folder_are_the_owners_only(tmp_path, monkeypatch):
    """A 0600 profile was cached 0644 in a 0755 folder."""
    import stat
    from legate_prof.load.loader import load_profile
    from legate_prof.store.cache import entry_path
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(tmp_path / "cache" / "legate_prof"))
    p = tmp_path / "legate_0.prof"
    p.write_bytes(SAMPLE.read_bytes())
    os.chmod(p, 0o600)
    load_profile([p], use_cache=True)
    entry = entry_path([p])
    assert entry.exists()
    for f in (entry.parent, entry, entry.with_suffix(".checked")):
        assert stat.S_IMODE(os.stat(f).st_mode) & 0o077 == 0, (f, oct(os.stat(f).st_mode))


def test_eviction_removes_only_the_caches_own_entries(tmp_path):
    """Eviction deleted any `*.checked`, and over the size limit any `*.lpbundle` in the
    folder.  Now only a regular file of the user's, named as the cache names its entries and
    holding a bundle, counts and goes."""
    from legate_prof.store.bundle import write_bundle
    from legate_prof.load.loader import load_profile
    from legate_prof.store.cache import evict
    d = tmp_path / "c"
    d.mkdir()
    model = load_profile([SAMPLE])
    ours = [d / f"{k:032x}.lpbundle" for k in (1, 2)]
    for e in ours:
        write_bundle(model, e)
        e.with_suffix(".checked").write_text("1 2 3 4 5")
    (tmp_path / "elsewhere.lpbundle").write_bytes(ours[0].read_bytes())
    theirs = {"run.lpbundle": ours[0].read_bytes(), "notes.checked": b"mine",
              f"{3:032x}.lpbundle": b"not a bundle", f"{4:032x}.checked": b"no entry",
              f"{5:032x}.lpbundle": None}
    for name, data in theirs.items():
        if data is None:
            (d / name).symlink_to(tmp_path / "elsewhere.lpbundle")
        else:
            (d / name).write_bytes(data)
    evict(d, 0)
    assert sorted(p.name for p in d.iterdir()) == sorted(theirs)
    assert (tmp_path / "elsewhere.lpbundle").exists()


# -- 7. a long name repeated per item ---------------------------------------------------------
def test_a_long_name_named_by_many_items_is_cut_once_for_every_output(tmp_path):
    """One 10 MB task name used by 300 tasks: Perfetto wanted 23.4 GiB (MemoryError),
    Parquet/DuckDB a pyarrow TypeError at 4.5 GB, Chrome wrote 3.1 GB at 6.25 GB RSS,
    `critical --json` printed 3.9 GB, the report grew to 93 MB.  A name is cut at
    MAX_NAME_CHARS where it is read (a warning): every output stays the size of the honest
    one's, give or take those characters per item."""
    import json
    from fixtures.fuzzing import most_run_task, with_long_strings
    from legate_prof.analyze.critical_path import critical_path_report
    from legate_prof.export import export
    from legate_prof.load.loader import load_profile
    from legate_prof.query import as_source
    from legate_prof.read.legion_log import MAX_NAME_CHARS
    from legate_prof.report import write_report
    data = SAMPLE.read_bytes()
    p = tmp_path / "legate_0.prof"
    p.write_bytes(with_long_strings(data, {"TaskKind", "TaskVariant"}, 4 << 20,
                                   task=most_run_task(data)))
    model = load_profile([p])
    assert [w for w in model.warnings if "longer than 1,000 characters cut" in str(w)]
    assert max(map(len, model.names)) == MAX_NAME_CHARS
    limit = 4 << 20  # (the honest sample's outputs: under 1 MB each)
    for fmt, name in (("perfetto", "t.pftrace"), ("chrome", "t.json"), ("parquet", "t"),
                      ("duckdb", "t.duckdb")):
        export(model if fmt in ("perfetto", "chrome") else load_profile([p], ranked=True),
               fmt, str(tmp_path / name))
        out = tmp_path / name
        size = sum(f.stat().st_size for f in out.iterdir()) if out.is_dir() else \
            out.stat().st_size
        assert size < limit, (fmt, size)
    text = json.dumps(critical_path_report(as_source(load_profile([p], ranked=True)),
                                           with_items=True), default=str)
    assert len(text) < limit
    write_report(load_profile([p], ranked=True), tmp_path / "r", pictures=None)
    assert sum(f.stat().st_size for f in (tmp_path / "r").rglob("*") if f.is_file()) < limit


def test_a_bundle_with_a_name_longer_than_any_log_gives_is_damaged(tmp_path):
    """Bundles are foreign input too: their names are held to the same length."""
    import msgpack
    from legate_prof.errors import ProfileError
    from legate_prof.load.loader import load_profile
    from legate_prof.store.bundle import write_bundle
    from legate_prof.store.bundle_file import ALIGN, BUNDLE_MAGIC, read_bundle
    b = tmp_path / "b.lpbundle"
    write_bundle(load_profile([SAMPLE]), b)
    raw = b.read_bytes()
    n = len(BUNDLE_MAGIC)
    hlen = int.from_bytes(raw[n:n + 8], "little")
    base = -(-(n + 8 + hlen) // ALIGN) * ALIGN
    doc = msgpack.unpackb(raw[n + 8:n + 8 + hlen], raw=False, strict_map_key=False)
    doc["names"][1] = "N" * (1 << 20)
    head = msgpack.packb(doc, use_bin_type=True)
    new_base = -(-(n + 8 + len(head)) // ALIGN) * ALIGN
    out = BUNDLE_MAGIC + len(head).to_bytes(8, "little") + head
    b.write_bytes(out + bytes(new_base - len(out)) + raw[base:])
    with pytest.raises(ProfileError, match="longer than 1,000 characters"):
        read_bundle(b)


# -- 13. record: Ctrl-C, and a legate that prints nothing ----------------------------------------
HANGS = ("import os, time\n"
         "from legate_prof.runtime import numpy as np\n"
         "print('started', float(np.ones((10,)).sum()), flush=True)\n"
         "time.sleep(float(os.environ.get('HANG_S', '3600')))\n")


def test_ctrl_c_in_record_lets_legate_end_and_names_the_partial_profiles(tmp_path):
    """Ctrl-C printed a `KeyboardInterrupt` traceback (`cli/commands/record.py:124`), exit -2, and no
    line about the partial `legate_0.prof`.  A terminal's Ctrl-C reaches the whole group."""
    import signal
    (tmp_path / "hangs.py").write_text(HANGS)
    p = subprocess.Popen([sys.executable, "-P", "-m", "legate_prof", "record", "--no-report",
                          "--cpus", "1", "--gpus", "0", "hangs.py"], cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
                         preexec_fn=lambda: (signal.signal(signal.SIGINT, signal.SIG_DFL),
                                             os.setpgrp()))
    try:
        for line in p.stdout:  # (the program is running)
            if line.startswith("started"):
                break
        os.killpg(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=300)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == 130 and "Traceback" not in err, (p.returncode, err[-2000:])
    said = [ln for ln in err.splitlines() if "stopped (Ctrl-C)" in ln]
    assert len(said) == 1 and "legate ended" in said[0], err
    assert "partial profiles:" in said[0] and "legate_0.prof" in said[0], said


def test_a_legate_that_prints_nothing_is_said_with_what_it_waits_on(tmp_path):
    """A program that hangs left the user in silence for 15 minutes; now each silence of
    LEGATE_PROF_RECORD_QUIET_S (60 s; here 2), then twice as long, is said: legate's pid,
    the program, how long."""
    (tmp_path / "hangs.py").write_text(HANGS)
    env = dict(ENV, LEGATE_PROF_RECORD_QUIET_S="2", HANG_S="7")
    r = subprocess.run([sys.executable, "-P", "-m", "legate_prof", "record", "--no-report",
                        "--cpus", "1", "--gpus", "0", "hangs.py"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    said = [ln for ln in r.stderr.splitlines() if "waiting for legate (pid" in ln]
    assert said and all("running hangs.py" in ln and "nothing printed for" in ln
                        for ln in said), r.stderr
    # each silence said first at 2 s, then after twice as long each time (2, 4, 8 s …):
    # legate's own start, slow on a loaded machine, is a silence too
    import re
    told = [tuple(int(x) for x in re.search(r"for (\d+) s, (\d+) s since", ln).groups())
            for ln in said]
    for (quiet, since), (quiet2, since2) in zip(told, told[1:]):
        same_silence = abs((since2 - since) - (quiet2 - quiet)) <= 1
        assert quiet2 >= 2 * quiet - 1 if same_silence else quiet2 <= 3, told
    assert told[0][0] <= 3, told


# -- 14. warnings that blamed the wrong file --------------------------------------------------
MPI4 = ROOT / "fixtures" / "real" / "mpi4"


def _mpi4_logs(folder, cut_rank0=None):
    """The four real ranks' logs, unpacked into ``folder`` (rank 0 cut to its first
    ``cut_rank0`` bytes, as a run killed while writing it leaves it)."""
    import gzip
    folder.mkdir(exist_ok=True)
    out = []
    for r in range(4):
        data = gzip.decompress((MPI4 / f"legate_{r}.prof.gz").read_bytes())
        if r == 0 and cut_rank0:
            data = data[:cut_rank0]
        (folder / f"legate_{r}.prof").write_bytes(data)
        out.append(folder / f"legate_{r}.prof")
    return out


@pytest.mark.parametrize("keep", [1 / 8, 1 / 3, 2 / 3])
def test_a_rank_log_cut_short_makes_no_other_file_of_another_run(tmp_path, keep):
    """A rank-0 log cut at 200 kB made the same run's intact `legate_3.prof` "not of the
    others' run … files of different runs mixed?".  A file cut short ends before its run
    did: its span does not say where the run ended."""
    import gzip
    from legate_prof.load.loader import load_profile
    size = len(gzip.decompress((MPI4 / "legate_0.prof.gz").read_bytes()))
    paths = _mpi4_logs(tmp_path / "run", int(size * keep))
    model = load_profile(paths)
    said = [str(w) for w in model.warnings]
    assert not [w for w in said if "not of the others' run" in w or "do not overlap" in w], said
    assert any("legate_0.prof" in w and "truncated" in w for w in said), said


@pytest.mark.parametrize("order", ["sample_first", "mpi4_first"])
def test_two_runs_rank_0_keep_the_one_given_first(tmp_path, order):
    """Two runs' rank 0 given together printed an error, kept the second file and dropped
    the first.  Where no other file tells which run is meant, the first given is shown and
    the line says so."""
    import gzip
    from legate_prof.load.loader import load_profile
    mpi4_0 = tmp_path / "b" / "legate_0.prof"
    mpi4_0.parent.mkdir()
    mpi4_0.write_bytes(gzip.decompress((MPI4 / "legate_0.prof.gz").read_bytes()))
    sample = tmp_path / "a" / "legate_0.prof"
    sample.parent.mkdir()
    sample.write_bytes(SAMPLE.read_bytes())
    first, second = (sample, mpi4_0) if order == "sample_first" else (mpi4_0, sample)
    model = load_profile([first, second])
    assert model.n_items == load_profile([first]).n_items
    assert len(model.errors) == 1 and str(second) in model.errors[0]
    assert "which is shown" in model.errors[0]


def test_files_whose_processors_collide_are_said_to_share_lanes(tmp_path):
    """Processor ids colliding between ranks (a copy of rank 0's log whose MachineDesc says
    rank 2) landed on rank 0's lanes without a warning."""
    from fixtures.fuzzing import legion_fields, swept
    from legate_prof.load.loader import load_profile
    paths = _mpi4_logs(tmp_path / "run")
    data = paths[0].read_bytes()
    at = [(o, s) for r, f, o, s in legion_fields(data) if (r, f) == ("MachineDesc", "node_id")]
    paths[2].write_bytes(swept(data, *at[0], 2))
    said = [str(w) for w in load_profile(paths).warnings]
    shared = [w for w in said if "ran on the same processors" in w]
    assert len(shared) == 1 and "legate_0.prof" in shared[0] and "legate_2.prof" in shared[0]
    assert "rank 0's lanes" in shared[0]
    assert not [w for w in [str(w) for w in load_profile(_mpi4_logs(tmp_path / "honest"))
                            .warnings] if "processors" in w]


# -- 8. times at 2^63 - 1 ---------------------------------------------------------------------
def test_a_run_ending_at_2_63_minus_1_goes_through_the_report_and_exports(tmp_path):
    """`report` ended in an `OverflowError` (`report/query.py lane_tile`: a tile's float
    bound near 2^63 - 1 rounds past what an int64 holds) and the Parquet/DuckDB exports
    printed numpy's raw `RuntimeWarning: invalid value encountered in cast`."""
    from fixtures.fuzzing import times_at_the_end
    from legate_prof.load.loader import load_profile
    p = tmp_path / "legate_0.prof"
    p.write_bytes(times_at_the_end(SAMPLE.read_bytes()))
    first, last = load_profile([p]).time_range()
    assert first < last <= 2**63 - 1
    for args in (["report", "--no-pictures", "-o", tmp_path / "r"],
                 ["export", "--format", "parquet", "-o", tmp_path / "t"],
                 ["export", "--format", "duckdb", "-o", tmp_path / "t.duckdb"]):
        r = cli(*args, p)
        assert r.returncode == 0, (args, r.stderr[-1500:])
        assert "Traceback" not in r.stderr and "Warning" not in r.stderr, (args, r.stderr)


# -- times before the clock's zero (the fresh fuzz of 2026-11-28, seed 3707) -------------------
# (a timestamp of 2^63 or more is a long long below zero: with one, two times of the run lie
# further apart than an int64 holds)
BEFORE_ZERO = (2**63 + 12345, 2**63)


def test_a_mapper_call_starting_before_the_clock_s_zero_is_dropped_with_a_warning(tmp_path):
    """The long fuzz's find (seed 3707, input 3456: `huge_value`): a mapper call's start at
    2^63 + 12345 made the run begin 292 years before zero; `critical`, `insights` and the
    report ended in `OverflowError` (`critical_path.py _with_time_before`: the time before the
    path, 2^63 ns and more, put in an int64)."""
    p = swept_log(tmp_path, "MapperCallInfo", "start", 2**63 + 12345)
    for args in (["critical"], ["insights"], ["stats"],
                 ["report", "--no-pictures", "-o", tmp_path / "r"]):
        r = cli(args[0], p, *args[1:])
        assert r.returncode == 0, (args, r.stderr[-1500:])
        assert "Traceback" not in r.stderr and "Warning:" not in r.stderr, (args, r.stderr)
        assert "1 MapperCallInfo record with a time before the clock's zero" in r.stderr, \
            (args, r.stderr)
    assert "-9223372036" not in cli("stats", p).stdout  # (the run starts where it did)


def test_a_bundle_whose_times_are_wider_than_an_int64_is_damaged(tmp_path):
    """The same time in a bundle written with it (its stored extent agreeing): `critical` and
    `insights` ended in the same `OverflowError`; a bundle's item times must lie as a log's
    and a stream's can (within 2^62 below zero, and no two further apart than an int64)."""
    from legate_prof.load.loader import load_profile
    from legate_prof.store.bundle import write_bundle
    model = load_profile([SAMPLE])
    start = np.array(model.items["start"])
    start[int(np.argmin(start))] = -(2**63) + 12345
    model.items["start"] = start
    write_bundle(model, tmp_path / "b.lpbundle")
    for command in ("critical", "insights", "stats"):
        one_line_error(cli(command, tmp_path / "b.lpbundle"), "damaged bundle",
                       "further apart than an int64 holds")


def _times_of_each_record(data):
    """(record, field, which) of every time field of each record kind: its first and last."""
    from fixtures.fuzzing import TIME_FIELDS, legion_fields
    seen = {}
    for rec, f, _, _ in legion_fields(data):
        if f in TIME_FIELDS:
            seen[(rec, f)] = seen.get((rec, f), 0) + 1
    return [(rec, f, which) for (rec, f), n in seen.items() for which in {0, n - 1}]


@pytest.mark.parametrize("value", BEFORE_ZERO, ids=["2^63+12345", "2^63"])
def test_every_time_before_zero_drops_its_record_and_the_run_stays_in_int64(tmp_path, value):
    """Each time field of each record kind (its first and its last), at 2^63 + 12345 or 2^63: before the fix 32 of them ended in the critical path's
    `OverflowError` or numpy's `overflow encountered in scalar subtract` (a duration of more
    than 2^63 ns when a lane was drawn); now the record is dropped with a warning, the run's
    times stay within zero and 2^63 - 1, and the path, the report and every lane are made
    without a numpy warning."""
    import warnings
    from fixtures.fuzzing import _draw_every_lane
    from legate_prof.analyze.critical_path import critical_path_report
    from legate_prof.load.loader import load_profile
    from legate_prof.query import as_source
    from legate_prof.read.legion_log import REQUIRED_FIELDS
    from legate_prof.report import write_report
    honest = load_profile([SAMPLE]).n_items
    cases = _times_of_each_record(SAMPLE.read_bytes())
    assert len(cases) > 20
    for rec, f, which in cases:
        p = swept_log(tmp_path, rec, f, value, which=which)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (numpy's overflow warnings too)
            model = load_profile([p])
            said = [str(w) for w in model.warnings if "before the clock's zero" in str(w)]
            if f in REQUIRED_FIELDS.get(rec, ()):  # (a field the model reads)
                assert said and rec in said[0], (rec, f, which, [str(w) for w in model.warnings])
            first, last = model.time_range()
            assert 0 <= first <= last < 2**63, (rec, f, which, first, last)
            assert model.n_items >= honest - 1, (rec, f, which)
            src = as_source(load_profile([p], ranked=True))
            critical_path_report(src, with_items=True)
            _draw_every_lane(src)
            write_report(src, tmp_path / "r", pictures=False)


# -- 4. many calls sharing one interval (the call tree: assemble/nested_calls.py) ---------------
def _brute_nest(kind, start, stop, fevent, waits):
    """What ``nest_calls`` makes, by scans: {(start, ready, end): sorted items} of the waits.

    Calls of a caller in (start, longest first, given order); a call's depth is its calls
    begun and not yet stopped; its parent the nearest call before it one level up that
    contains it (else the caller).  A caller's wait goes to the last call begun by its start,
    or the first of that call's ancestors that contains it; failing that, the smallest call
    it overlaps (the first of equals); failing that, it stays."""
    from legate_prof.assemble.nested_calls import CALL_KINDS, CALLER_KINDS
    callers = {int(fevent[i]): i for i in range(len(kind)) if kind[i] in CALLER_KINDS}
    by_caller, parent_of = {}, {}
    for i in range(len(kind)):
        if kind[i] in CALL_KINDS and int(fevent[i]) in callers:
            by_caller.setdefault(callers[int(fevent[i])], []).append(i)
    for caller, calls in by_caller.items():
        calls.sort(key=lambda i: (start[i], -(stop[i] - start[i])))
        depth = [max(k - sum(1 for j in calls if stop[j] <= start[i]), 0)
                 for k, i in enumerate(calls)]
        for k, i in enumerate(calls):
            p = next((calls[j] for j in range(k - 1, -1, -1) if depth[j] == depth[k] - 1),
                     None)
            ok = p is not None and start[p] <= start[i] and stop[i] <= stop[p]
            parent_of[i] = p if ok else None
    out = {}
    for item, ws, wr, we in zip(*(waits[k].tolist() for k in ("item", "start", "ready",
                                                                "end"))):
        calls = by_caller.get(item, [])
        began = [i for i in calls if start[i] <= ws]
        c = began[-1] if began else None
        while c is not None and not (start[c] <= ws and we <= stop[c]):
            c = parent_of[c]
        if c is None:  # straddling: the innermost call open at its start (the last started;
            # of identical ones the first), unless one started inside it is shorter
            cut = [i for i in calls if start[i] <= ws and start[i] < we and stop[i] > ws]
            o = cut[-1] if cut else None
            if o is not None:
                o = next(i for i in cut if (start[i], stop[i]) == (start[o], stop[o]))
            inside = [i for i in calls if ws < start[i] < we]
            a = min(inside, key=lambda i: (stop[i] - start[i], calls.index(i))) if inside \
                else None
            c = a if o is None or (a is not None and stop[a] - start[a] < stop[o] - start[o]) \
                else o
        out.setdefault((ws, wr, we), []).append(item if c is None else c)
    for i, p in parent_of.items():
        caller = callers[int(fevent[i])]
        out.setdefault((int(start[i]), int(stop[i]), int(stop[i])), []).append(
            caller if p is None else p)
    return {k: sorted(v) for k, v in out.items()}


def test_the_call_tree_is_found_as_a_scan_finds_it():
    """`nest_calls` found each level's parents in a pass of its own, climbed a wait's
    ancestors a step a pass and scanned every call for each wait straddling one: 100,000
    calls sharing one start and stop nest 100,000 deep (issue 37: 79 s for `stats`); 40,000
    such calls and as many waits took 43 s, or 94 s straddling.  One search finds the tree,
    jumps of 2^k ancestors the call holding a wait, a Fenwick tree the smallest call a wait
    overlaps — the same as the scans, on calls nested, in a row, identical, overlapping
    without nesting, and waits inside, across and outside them.  (A wait across calls goes
    to the shortest it overlaps where the calls nest, as Legion's calls of one caller do;
    where they overlap without nesting, to the innermost open at its start.)"""
    from legate_prof.assemble.nested_calls import nest_calls
    from legate_prof.model.kinds import ItemKind
    rng = np.random.default_rng(37)
    for trial in range(400):
        n_callers, n, n_waits = (int(rng.integers(1, 4)), int(rng.integers(0, 40)),
                                 int(rng.integers(0, 12)))
        kind = np.concatenate([np.full(n_callers, int(ItemKind.TASK)),
                               np.full(n, int(ItemKind.RUNTIME_CALL))]).astype(np.uint8)
        fevent = np.concatenate([np.arange(1, n_callers + 1),
                                 rng.integers(1, n_callers + 2, n)]).astype(np.uint64)
        start = np.concatenate([np.zeros(n_callers), rng.integers(0, 12, n)]).astype(np.int64)
        stop = start + np.concatenate([np.full(n_callers, 100), rng.integers(0, 12, n)])
        ws = rng.integers(0, 24, n_waits)
        we = ws + rng.integers(0, 10, n_waits)
        waits = {"item": np.sort(rng.integers(0, n_callers, n_waits)), "start": ws,
                 "ready": we, "end": we}
        got, _, _ = nest_calls(kind, start, stop, fevent, waits)
        made = {}
        for item, a, r, b in zip(*(got[k].tolist() for k in ("item", "start", "ready",
                                                              "end"))):
            made.setdefault((a, r, b), []).append(item)
        assert {k: sorted(v) for k, v in made.items()} == \
            _brute_nest(kind, start, stop, fevent, waits), trial


def test_a_million_identical_calls_nest_into_one_chain():
    """2^20 calls of one task sharing one start and stop: each waits on the one before it
    (the first on the task) — found in one search, not a pass per level."""
    from legate_prof.assemble.nested_calls import nest_calls
    from legate_prof.model.kinds import ItemKind
    n = 1 << 20
    kind = np.full(n + 1, int(ItemKind.RUNTIME_CALL), np.uint8)
    kind[0] = int(ItemKind.TASK)
    start = np.full(n + 1, 10, np.int64)
    stop = np.full(n + 1, 20, np.int64)
    start[0], stop[0] = 0, 100
    empty = {k: np.zeros(0, np.int64) for k in ("item", "start", "ready", "end")}
    waits, orphans, _ = nest_calls(kind, start, stop, np.ones(n + 1, np.uint64), empty)
    assert orphans == 0 and len(waits["item"]) == n
    assert np.array_equal(np.sort(waits["item"]), np.arange(n))  # task 0, then each call


def test_ctrl_c_while_duckdb_reads_a_table_from_python_ends_with_130(tmp_path, monkeypatch,
                                                                       capsys):
    """Ctrl-C that lands while DuckDB reads one of our tables back from Python comes out of
    the query as DuckDB's own error ("Invalid Input Error: … failed: KeyboardInterrupt"):
    that was said as a query error, exit 2, not a stop (130)."""
    import duckdb
    from legate_prof.cli import main
    from legate_prof.export import duckdb_db

    def interrupted(model, sql):
        raise duckdb.InvalidInputException(
            "Invalid Input Error: counting the rows of the object registered as '_chunk' "
            "failed: KeyboardInterrupt: ")
    monkeypatch.setattr(duckdb_db, "query", interrupted)
    assert main(["sql", "SELECT 1", str(SAMPLE)]) == 130
    assert "error" not in capsys.readouterr().err
    monkeypatch.setattr(duckdb_db, "query", lambda model, sql: (_ for _ in ()).throw(
        duckdb.ParserException("Parser Error: syntax error at or near \"SELEC\"")))
    assert main(["sql", "SELEC 1", str(SAMPLE)]) == 2


def test_a_log_whose_name_is_not_utf8_is_read_kept_and_converted(tmp_path):
    """`legate_\\xff0.prof` (a tarball from another locale) crashed every command that keys
    the cache or writes a bundle: the name was encoded as UTF-8 (a stranger's-folder
    review).  It is kept as its bytes; what its bundle says of it reads back the same."""
    run = tmp_path / "run"
    run.mkdir()
    name = os.fsdecode(b"legate_\xff0.prof")
    (run / name).write_bytes(SAMPLE.read_bytes())
    env = {**ENV, "LEGATE_PROF_CACHE_DIR": str(tmp_path / "cache")}
    for argv in (["stats", run], ["stats", run], ["critical", run],
                 ["convert", run, "-o", tmp_path / "all.lpbundle"], ["convert", "--per-rank", run],
                 ["stats", tmp_path / "all.lpbundle"]):
        p = cli(*argv, env=env)
        assert p.returncode == 0 and "Traceback" not in p.stderr, (argv, p.stderr[-1500:])
    from legate_prof.store.bundle_file import bundle_sources, read_bundle
    assert bundle_sources(run / os.fsdecode(b"legate_\xff0.lpbundle")) == {
        name: SAMPLE.stat().st_size}
    assert [os.path.basename(s) for s in read_bundle(tmp_path / "all.lpbundle").sources] == [name]


def _without_root_override():
    """The command prefix that runs as root does without its power over file modes (a
    folder of mode 000 is then unlistable, as for a user); [] where this is not root."""
    import shutil
    if os.geteuid() != 0:
        return []
    if not shutil.which("setpriv"):
        pytest.skip("root reads any folder, and setpriv is missing to drop that")
    caps = "-dac_override,-dac_read_search,-fowner"
    return ["setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}"]


def test_a_folder_that_cannot_be_listed_is_one_line(tmp_path):
    """A received folder of mode 000 gave a PermissionError traceback (a stranger's-folder
    review): one line naming it, exit 2."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "legate_0.prof").write_bytes(SAMPLE.read_bytes())
    run.chmod(0)
    try:
        p = subprocess.run([*_without_root_override(), sys.executable, "-P", "-m",
                            "legate_prof", "stats", str(run)], capture_output=True, text=True,
                           timeout=180, env=ENV, cwd=ROOT)
    finally:
        run.chmod(0o755)
    one_line_error(p, str(run), "cannot list the folder (Permission denied)")


def test_a_named_pipe_at_a_default_output_name_is_one_line_not_a_hang(received):
    """A received folder holding FIFOs named legate_prof_view.png and legate_0.lpbundle hung
    `view` (its picture, without a display) and `convert --per-rank` for ever (a
    stranger's-folder review): a pipe nothing reads is refused, one line, exit 2."""
    run, _ = received
    os.mkfifo(run / "legate_prof_view.png")
    os.mkfifo(run / "legate_0.lpbundle")
    one_line_error(cli("view", cwd=run, timeout=120), "legate_prof_view.png",
                   "is a named pipe that nothing reads")
    one_line_error(cli("convert", "--per-rank", run, timeout=120), "legate_0.lpbundle",
                   "is a named pipe that nothing reads")


def test_a_named_pipe_with_a_reader_is_written_into(received, tmp_path):
    """`-o FIFO` with its reader there first (`cat FIFO > trace.json`) streams the export
    into it, as before; the check for a reader does not end the reader's input early."""
    import json
    import shutil
    if not shutil.which("cat"):
        pytest.skip("no cat")
    run, _ = received
    fifo = tmp_path / "trace.fifo"
    os.mkfifo(fifo)
    # (a descriptor that reads nothing holds the pipe open for reading: `cat` is there when
    # the export looks, whenever it started)
    present = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with open(tmp_path / "trace.json", "wb") as out:
            cat = subprocess.Popen(["cat", str(fifo)], stdout=out)
            p = cli("export", "legate_0.prof", "--format", "chrome", "-o", fifo, cwd=run)
            cat.wait(timeout=60)
    finally:
        os.close(present)
    assert p.returncode == 0, p.stderr
    assert len(json.loads((tmp_path / "trace.json").read_bytes())) > 10


def test_a_named_pipe_named_as_a_bundle_beside_the_logs_blocks_nothing(tmp_path):
    """A FIFO `legate_0.lpbundle` newer than the logs beside it hung every command on the
    folder (its header was read to see what it was converted from): the folder's logs are
    read, with a note saying why."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "legate_0.prof").write_bytes(SAMPLE.read_bytes())
    os.mkfifo(run / "legate_0.lpbundle")
    p = cli("stats", run, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "legate_0.lpbundle is not a regular file; reading the logs" in p.stderr, p.stderr


@pytest.mark.skipif(not os.path.exists("/proc/self/pagemap"), reason="no /proc/self/pagemap")
def test_a_log_that_is_a_link_to_an_endless_file_of_size_0_is_one_line(tmp_path):
    """`legate_1.prof -> /proc/self/pagemap` (size 0, yet it reads on for ever) hung every
    command with the cache on: a small input was hashed to its end, not to its size."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "legate_0.prof").write_bytes(SAMPLE.read_bytes())
    (run / "legate_1.prof").symlink_to("/proc/self/pagemap")
    env = {**ENV, "LEGATE_PROF_CACHE_DIR": str(tmp_path / "cache")}
    p = cli("stats", run, env=env, timeout=120)
    one_line_error(p, "legate_1.prof", "is empty")


def test_long_names_are_one_line_or_written(tmp_path):
    """A received log of a legal 252-character name made `convert --per-rank` write a
    256-character bundle name, and `-o` of 300 characters failed in a link check: tracebacks;
    a legal 240-character `-o` was refused, its temporary's name too long (a
    stranger's-folder review)."""
    run = tmp_path / "run"
    run.mkdir()
    log = run / ("c" * 245 + "_0.prof")
    log.write_bytes(SAMPLE.read_bytes())
    one_line_error(cli("convert", "--per-rank", run), "_0.lpbundle",
                   "its name is 256 bytes, longer than the file system allows (255)")
    one_line_error(cli("screenshot", log, "-o", tmp_path / ("a" * 296 + ".png")),
                   "its name is 300 bytes, longer than the file system allows (255)")
    out = tmp_path / ("b" * 236 + ".png")
    p = cli("screenshot", log, "-o", out, "--width", "400", "--height", "300")
    assert p.returncode == 0, p.stderr
    assert out.read_bytes()[:4] == b"\x89PNG" and sorted(os.listdir(tmp_path)) == sorted(
        [out.name, "run"])


def test_view_without_a_display_in_a_read_only_folder_renders_elsewhere_and_says_where(tmp_path):
    """`view` without a display renders its picture into the folder it runs in: in a
    read-only run folder it failed, "is not writable", and showed nothing (a stranger's-folder
    review); the picture goes to a folder of its own in the temporary folder, and the note
    says where."""
    import re
    run = tmp_path / "run"
    run.mkdir()
    (run / "legate_0.prof").write_bytes(SAMPLE.read_bytes())
    run.chmod(0o555)
    try:
        p = subprocess.run([*_without_root_override(), sys.executable, "-P", "-m",
                            "legate_prof", "view"], capture_output=True, text=True,
                           timeout=300, env=ENV, cwd=run)
    finally:
        run.chmod(0o755)
    assert p.returncode == 0, p.stderr
    out = re.search(r"rendering the view to (\S+legate_prof_view\.png) instead", p.stderr)
    assert out and Path(out.group(1)).read_bytes()[:4] == b"\x89PNG", p.stderr
    assert os.listdir(run) == ["legate_0.prof"]
    shutil.rmtree(Path(out.group(1)).parent)


def test_a_log_named_as_a_bundle_among_bundles_is_the_one_named(tmp_path):
    """A folder of a sound bundle and a Legion Prof log named legate_1.lpbundle blamed the
    sound one ("legate_0.lpbundle: bundles open with other bundles only"): the log is named."""
    run = tmp_path / "run"
    run.mkdir()
    assert cli("convert", SAMPLE, "-o", run / "legate_0.lpbundle").returncode == 0
    (run / "legate_1.lpbundle").write_bytes(SAMPLE.read_bytes())
    p = cli("stats", run)
    line = one_line_error(p, "legate_1.lpbundle", "is a Legion Prof log named as a bundle")
    assert "legate_0.lpbundle" not in line and "timeline items" in p.stdout


CUT_WHILE_READ = '''
import os
from legate_prof.read import legion_log
real = legion_log.LegionProfReader.parse_header
cut = set()


def parse_header(self, raw):  # the log cut to half its size (whole pages: a map's next page
    if self.path not in cut:  # is then beyond the file) once read begins, as legate run again
        cut.add(self.path)  # into the folder truncates it
        os.truncate(self.path, os.path.getsize(self.path) // 2 // 4096 * 4096)
    return real(self, raw)


legion_log.LegionProfReader.parse_header = parse_header
'''


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_log_cut_short_while_it_is_read_is_read_up_to_the_cut(tmp_path, workers):
    """A plain log was mapped: cut short under the map (legate run again into the folder
    being viewed), its next page read killed the process with SIGBUS, exit 135, no line (a
    stranger's-folder review).  One process reads a copy; a rank worker still maps, and when
    one dies of it, its parent reads the ranks again itself."""
    run = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "mpi2"
    for log in sorted(run.glob("legate_[0-9].prof.gz")):  # (plain: a gzip is inflated whole)
        (tmp_path / log.stem).write_bytes(gzip.decompress(log.read_bytes()))
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(CUT_WHILE_READ)
    p = subprocess.run([sys.executable, "-m", "legate_prof", "stats", "--no-cache",
                        str(tmp_path / "legate_0.prof"), str(tmp_path / "legate_1.prof")],
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "LEGATE_PROF_WORKERS": workers,
                            "PYTHONPATH": os.pathsep.join([str(hook), os.environ.get(
                                "PYTHONPATH", "")])})
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])  # (the tree before: -7, SIGBUS)
    assert "Traceback" not in p.stderr and "timeline items" in p.stdout
    if workers == "1":  # (read whole before the cut: nothing lost)
        assert "truncated" not in p.stderr and p.stdout.startswith("2 rank(s), 1514 timeline")
    else:  # (read again by the parent after the cut: up to it)
        assert "legate_0.prof: last BacktraceDesc record is truncated" in p.stderr


@pytest.mark.parametrize("gz_first", [False, True], ids=["folder", "gzip_given_first"])
def test_a_gzip_of_a_log_beside_it_is_a_copy_read_once(tmp_path, gz_first):
    """A folder's legate_0.prof.gz, a gzip of the legate_0.prof beside it, was "rank 0 again
    (also in legate_0.prof ...): a file of another run?", exit 2; a plain copy was "a copy
    of ...; read once".  A gzip of the same log is the same log: one warning, exit 0."""
    run = tmp_path / "c"
    run.mkdir()
    for log in sorted(MPI2.glob("legate_[0-9].prof.gz")):
        (run / log.stem).write_bytes(gzip.decompress(log.read_bytes()))
    shutil.copy(MPI2 / "legate_0.prof.gz", run / "legate_0.prof.gz")
    args = [run / "legate_0.prof.gz", run / "legate_0.prof", run / "legate_1.prof"] \
        if gz_first else [run]
    p = cli("stats", "--no-cache", *args)
    assert p.returncode == 0, p.stderr
    assert "error" not in p.stderr and "Traceback" not in p.stderr, p.stderr
    dropped, kept = ("legate_0.prof", "legate_0.prof.gz") if gz_first else \
        ("legate_0.prof.gz", "legate_0.prof")
    line, = [ln for ln in p.stderr.splitlines() if "read once" in ln]
    assert f"{run / dropped}: the same log as {run / kept}" in line, line
    assert p.stdout.startswith("2 rank(s), 1514 timeline items"), p.stdout[:200]


def test_a_gzip_of_another_log_of_the_rank_is_still_another_run(tmp_path):
    """The same rank's log gzipped but not the same (cut short): still "rank 0 again"."""
    run = tmp_path / "c"
    run.mkdir()
    plain = gzip.decompress((MPI2 / "legate_0.prof.gz").read_bytes())
    (run / "legate_0.prof").write_bytes(plain)
    (run / "legate_1.prof").write_bytes(gzip.decompress((MPI2 / "legate_1.prof.gz").read_bytes()))
    (run / "legate_0.prof.gz").write_bytes(gzip.compress(plain[:len(plain) * 3 // 4]))
    p = cli("stats", "--no-cache", run)
    assert "read once" not in p.stderr and "rank 0 again" in p.stderr, p.stderr


def test_a_forged_gzip_beside_a_huge_file_of_zeros_reads_neither_whole(tmp_path, monkeypatch):
    """A review: a gzip of zeros whose trailer says the size of a 100 GB sparse file beside
    it (their first 64 KiB alike) had that file read whole for its CRC-32: 141 s to refuse
    both.  A CRC is worked out only of a Legion Prof log's start; a file of zeros is no
    text either."""
    import struct
    from legate_prof.cli import main
    from legate_prof.load import inputs
    run = tmp_path / "c"
    run.mkdir()
    forged = bytearray(gzip.compress(b"\0" * (1 << 17)))
    forged[-4:] = struct.pack("<I", 0)
    (run / "legate_0.prof.gz").write_bytes(bytes(forged))
    with open(run / "legate_0.prof", "wb") as f:
        f.truncate(1 << 32)  # (a multiple of 2^32: the trailer's size mod 2^32, 0)
    shutil.copy(MPI2 / "legate_1.prof.gz", run / "legate_1.prof.gz")
    read = []
    monkeypatch.setattr(inputs, "_plain_crc", lambda path: read.append(path))
    assert main(["stats", "--no-cache", str(run)]) == 2
    assert read == []
    assert inputs.sniff(run / "legate_0.prof") == "unknown"


def test_a_copy_cut_short_beside_the_whole_log_is_the_one_left_out(tmp_path):
    """A review: a plain copy of legate_0.prof.gz cut at 300 kB was shown, and the whole
    gzip called "rank 0 again ... a file of another run?".  Of one run's logs of a rank (their
    clocks started alike), the one holding most is shown and the other said cut short."""
    run = tmp_path / "c"
    run.mkdir()
    for f in ("legate_0.prof.gz", "legate_1.prof.gz"):
        shutil.copy(MPI2 / f, run / f)
    (run / "legate_0.prof").write_bytes(
        gzip.decompress((MPI2 / "legate_0.prof.gz").read_bytes())[:300_000])
    p = cli("stats", "--no-cache", run)
    assert p.stdout.startswith("2 rank(s), 1514 timeline items"), p.stdout[:200]
    errors = [ln for ln in p.stderr.splitlines() if "error:" in ln]
    assert len(errors) == 1 and errors[0].endswith(
        f"{run / 'legate_0.prof'}: rank 0 again, of the same run (its clock started as "
        "legate_0.prof.gz's, which is shown and holds more): a copy cut short? Left out"), errors


def _per_rank_bundles(folder, cut_rank1=True):
    """mpi2's logs and their per-rank bundles in ``folder``, legate_1.lpbundle cut short
    (its time kept: a copy cut short, not a rerun)."""
    shutil.copytree(MPI2, folder, ignore=shutil.ignore_patterns("golden", "command.txt"))
    assert cli("convert", "--per-rank", folder).returncode == 0
    bundle = folder / "legate_1.lpbundle"
    st = bundle.stat()
    if cut_rank1:
        os.truncate(bundle, 100_000)
        os.utime(bundle, ns=(st.st_atime_ns, st.st_mtime_ns))
    return bundle


def test_a_damaged_bundle_beside_its_rank_s_logs_reads_the_logs(tmp_path):
    """Per-rank bundles, legate_1.lpbundle cut short, its logs intact beside it: "damaged
    bundle ...; convert again", exit 2, and rank 1 simply missing.  The rank is read from the
    logs it was converted from, with one line naming the damaged bundle."""
    whole = tmp_path / "whole"
    _per_rank_bundles(whole, cut_rank1=False)
    expected = cli("stats", whole)
    assert expected.returncode == 0 and expected.stderr == "", expected.stderr
    run = tmp_path / "run"
    bundle = _per_rank_bundles(run)
    p = cli("stats", run)
    assert p.returncode == 0 and "error" not in p.stderr, p.stderr
    line, = p.stderr.splitlines()
    assert line.startswith(f"warning: {bundle}: damaged bundle") and \
        "read from legate_1.prof.gz, legate_1.runtime.prof beside it instead" in line, line
    assert p.stdout == expected.stdout


def test_a_damaged_bundle_without_its_logs_is_an_error_and_its_rank_said_missing(tmp_path):
    """The damaged bundle's logs are not there: its error stays, and the run's "ranks have
    no readable file" names rank 1 (before: rank 1 missing without a word)."""
    run = tmp_path / "run"
    bundle = _per_rank_bundles(run)
    for log in run.glob("*.prof*"):
        log.unlink()
    p = cli("stats", run)
    one_line_error(p, str(bundle), "damaged bundle")
    assert "1 of the run's 2 ranks has no readable file" in p.stderr and \
        "rank 1)" in p.stderr, p.stderr
    assert p.stdout.startswith("1 rank(s)"), p.stdout[:200]


def test_dump_reads_each_log_once(tmp_path):
    """A review: ``dump RUN RUN/legate_1.prof.gz`` dumped rank 1 twice (8,752 lines for 5,880);
    every other command reads a file given twice once, and says so."""
    def lines(*args):
        p = cli("dump", *args)
        assert p.returncode == 0, p.stderr
        return p.stdout.count("\n"), p.stderr
    whole, _ = lines(MPI2)
    again, said = lines(MPI2, MPI2 / "legate_1.prof.gz", MPI2 / "legate_1.prof.gz")
    assert again == whole and "read once" in said, said


def test_a_newline_in_a_folders_name_prints_no_line_of_its_own(tmp_path):
    """A review: ``compare`` of a folder named "run\\nB = fake" printed "B = fake" as a line
    of its own (``say`` splits its text into lines): a name is escaped as errors escape it."""
    run = tmp_path / "run\nB = fake"
    run.mkdir()
    for f in MPI2.glob("legate_*"):
        shutil.copy(f, run / f.name)
    p = cli("compare", run, MPI2)
    assert p.returncode == 0, p.stderr
    head = p.stdout.splitlines()[:2]
    assert head == [f"A = {tmp_path}/run\\nB = fake", f"B = {MPI2}"], head
    out = tmp_path / "pic\nwrote x.png"
    p = cli("screenshot", MPI2, "-o", out)
    assert p.returncode == 0 and p.stdout.splitlines() == [f"wrote {tmp_path}/pic\\nwrote x.png"], p.stdout
