"""Wrong command lines and odd inputs, through the real CLI: one line, exit 2, inputs intact."""

import hashlib
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from fixtures.synthetic import generate

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "fixtures" / "real" / "legate26.06_cpu2_myprof_0.prof"
ENV = dict(os.environ, QT_QPA_PLATFORM="offscreen", LEGATE_PROF_CACHE_DIR="")


def cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "legate_prof", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=ENV, cwd=ROOT)


def digest(p):
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


def one_line_error(p, *words):
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    errors = [ln for ln in p.stderr.splitlines() if "error:" in ln]
    assert len(errors) == 1, p.stderr
    for w in words:
        assert w in errors[0], errors[0]
    return errors[0]


@pytest.fixture
def sample(copy_of):
    p = copy_of(SAMPLE, "legate_0.prof")
    return p, digest(p)


@pytest.mark.parametrize("cmd", ["screenshot", "convert"])
def test_output_onto_an_input_is_refused_and_the_input_is_untouched(sample, cmd):
    p, before = sample
    one_line_error(cli(cmd, p, "-o", p), "is one of the inputs")
    assert digest(p) == before


@pytest.fixture
def run_folder(tmp_path):
    """A run's folder: two ranks' logs (a copy: the command may write into it)."""
    import gzip
    run = Path(tmp_path) / "run"
    run.mkdir()
    for rank in (0, 1):
        (run / f"legate_{rank}.prof").write_bytes(
            gzip.decompress((Path(MPI2) / f"legate_{rank}.prof.gz").read_bytes()))
    return run


@pytest.mark.parametrize("cmd, fmt, name", [
    ("export", "chrome", "legate_0.prof"), ("export", "duckdb", "legate_1.prof"),
    ("screenshot", None, "legate_1.prof"), ("convert", None, "legate_0.lpbundle")])
def test_output_onto_a_file_of_a_run_given_as_its_folder_is_refused(run_folder, cmd, fmt, name):
    """`export RUN --format chrome -o RUN/legate_0.prof` replaced the rank's log with the
    export (`wrote ...`, exit 0): a run given as its folder, its files are the inputs — a
    bundle beside the logs too (the folder is read from it the next time); and so through
    the working folder (`.`)."""
    if cmd == "convert":
        assert cli("convert", "--per-rank", run_folder).returncode == 0
    before = {p.name: digest(p) for p in run_folder.iterdir()}
    opts = ["--format", fmt] if fmt else []
    error = one_line_error(cli(cmd, run_folder, *opts, "-o", run_folder / name),
                           "is one of the inputs", "the run's folder")
    r = subprocess.run([sys.executable, "-m", "legate_prof", cmd, ".", *opts, "-o", name],
                       capture_output=True, text=True, timeout=120, env=ENV, cwd=run_folder)
    one_line_error(r, "is one of the inputs")
    assert {p.name: digest(p) for p in run_folder.iterdir()} == before, error


def test_a_bundle_written_into_the_run_folder_it_reads_is_refused(run_folder, tmp_path):
    """`convert RUN -o RUN/all.lpbundle`: the next `stats RUN` read the merged bundle with the
    ranks' own ("rank 1 again ... Left out").  Converting the folder rank by rank again
    writes over the bundles it made (they are its outputs, not what it reads)."""
    one_line_error(cli("convert", run_folder, "-o", run_folder / "all.lpbundle"),
                   "the run's folder being read")
    assert not (run_folder / "all.lpbundle").exists()
    for _ in range(2):
        r = cli("convert", "--per-rank", run_folder)
        assert r.returncode == 0 and r.stderr == "", r.stderr
    r = cli("convert", run_folder, "-o", Path(tmp_path) / "all.lpbundle")
    assert r.returncode == 0, r.stderr
    r = cli("export", run_folder, "--format", "chrome", "-o", run_folder / "trace.json")
    assert r.returncode == 0, r.stderr  # (a file no folder read takes: written there)


def test_output_onto_an_input_through_another_name_is_refused(sample, tmp_path):
    p, before = sample
    link = tmp_path / "alias.png"
    os.link(p, link)  # the same file under an image name
    one_line_error(cli("screenshot", p, "-o", link), "is one of the inputs")
    assert digest(p) == before
    # a symbolic link to it, out of its folder: refused as an input, and said so (it said
    # only "a link out of its folder", a rule a link to another file elsewhere also meets)
    (tmp_path / "elsewhere").mkdir()
    sym = tmp_path / "elsewhere" / "shot.png"
    sym.symlink_to(p)
    one_line_error(cli("screenshot", p, "-o", sym), "is one of the inputs through a symbolic link")
    assert digest(p) == before


def test_unknown_output_extension_is_refused_before_anything_is_written(sample, tmp_path):
    p, _ = sample
    other = tmp_path / "notes.xyz"
    other.write_text("keep me")
    one_line_error(cli("screenshot", p, "-o", other), "unknown picture format", ".png")
    assert other.read_text() == "keep me"
    one_line_error(cli("convert", p, "-o", tmp_path / "x.png"), "unknown bundle format")


def test_missing_output_directory_is_one_line(sample, tmp_path):
    p, _ = sample
    one_line_error(cli("screenshot", p, "-o", tmp_path / "nope" / "a.png"), "does not exist")
    one_line_error(cli("screenshot", p, "-o", tmp_path), "is a directory")
    # the report's folder too: a typo in -o made the folders on the way (a user's review)
    one_line_error(cli("report", p, "-o", tmp_path / "nope" / "deeper" / "rep"),
                   "does not exist")
    assert not (tmp_path / "nope").exists()


@pytest.mark.parametrize("args, words", [
    (["--width", "0"], ["200 to 16384"]),
    (["--width", "100"], ["200 to 16384"]),
    (["--width", "100000", "--height", "100000"], ["200 to 16384"]),
    (["--width", "16384", "--height", "16384"], ["at most 120,000,000 pixels"]),
    (["--start", "inf"], ["not a time"]),
    (["--start", "nan"], ["not a time"]),
    (["--start", "soon"], ["not a time"]),
    (["--start", "4.5"], ["'4.5' needs a unit", "4.5s"]),  # (not 4 ns)
    (["--stop", "12"], ["'12' needs a unit"]),
    (["--start", "2ms", "--stop", "1ms"], ["must come before"]),
    (["--expand", "bogus"], ["no lane group", "cpu"]),
    (["--expand"], ["--expand: expected at least one"]),  # (it expanded what no --expand does)
    (["--start", "-1s"], ["--start: expected one argument", "0 or more", "reads as an option"]),
])
def test_bad_screenshot_options_are_one_line(sample, tmp_path, args, words):
    p, before = sample
    one_line_error(cli("screenshot", p, "-o", tmp_path / "a.png", *args), *words)
    assert not (tmp_path / "a.png").exists()
    assert digest(p) == before


@pytest.mark.parametrize("limit, words", [("-1", ["'-1' is below 0", "0: all"]),
                                          ("many", ["'many' is not a whole number"])])
def test_a_step_limit_that_is_no_count_is_one_line(sample, limit, words):
    """``critical --limit -1`` printed every step but the last, as if that were asked."""
    p, _ = sample
    one_line_error(cli("critical", p, "--limit", limit), *words)


@pytest.mark.parametrize("head, words", [
    (b"\xe7\x24\x02\xe9\x2f\xc4\x3c\xe4DUCK\xe7\x03\0\0", ["a DuckDB database",
                                                                   "duckdb FILE"]),
    (b"PAR1\x15\x04\x15\x80", ["a Parquet file", "export --format parquet"]),
    (b"SQLite format 3\0", ["an SQLite database"])])
def test_an_export_given_back_says_what_it_is(tmp_path, head, words):
    """``export --format duckdb`` wrote a file ``sql`` then called "not a Legion Prof log";
    a Parquet file's first bytes read as text ("a text file: legate's console output?")."""
    f = tmp_path / "out.bin"
    f.write_bytes(head + bytes(range(256)) * 4)
    for command in (("stats",), ("sql", "SELECT 1")):
        one_line_error(cli(*command, f), "not a Legion Prof log", *words)


def test_special_and_empty_files_are_refused_without_blocking(tmp_path):
    fifo = tmp_path / "legate_0.prof"
    os.mkfifo(fifo)
    one_line_error(cli("stats", fifo, timeout=30), "FIFO")
    empty = tmp_path / "empty.prof"
    empty.write_bytes(b"")
    one_line_error(cli("stats", empty), "is empty")
    (tmp_path / "nothing").mkdir()
    one_line_error(cli("stats", tmp_path / "nothing"), "is a directory with no .prof")
    # a directory's .prof files are its inputs: an empty one and a FIFO, refused, never read
    one_line_error(cli("stats", tmp_path, timeout=30), "empty.prof: is empty")


def test_log_that_is_not_a_console_log_is_refused(sample):
    p, _ = sample
    one_line_error(cli("stats", p, "--log", p), "--log takes legate's console output")


def test_the_same_file_twice_is_read_once(sample, tmp_path):
    import json
    p, _ = sample
    copy = tmp_path / "copy_of_rank0.prof"
    copy.write_bytes(Path(p).read_bytes())
    once = json.loads(cli("stats", "--json", p).stdout)
    r = cli("stats", "--json", p, p, copy)
    assert r.returncode == 0
    twice = json.loads(r.stdout)
    assert twice["items"] == once["items"] and twice["ranks"] == 1
    assert "the same file as" in r.stderr and "a copy of" in r.stderr


def test_missing_ranks_and_mixed_runs_are_named(tmp_path):
    three = generate(tmp_path / "a", ranks=3, items=1500, seed=1)
    r = cli("stats", three[0], three[2])
    assert r.returncode == 0
    assert "1 of the run's 3 ranks has no readable file (not given, or not readable: rank 1)" in r.stderr
    other = generate(tmp_path / "b", ranks=2, items=1000, seed=2)
    r = cli("stats", three[0], other[1])
    assert "files of different runs mixed?" in r.stderr
    # ranks asked for that no file holds: which ranks the files are of (a user's review)
    one_line_error(cli("stats", *three, "--ranks", "7"), "none of the ranks asked for (7)",
                   "the files are of ranks 0-2")


def test_dump_of_a_runtime_stream_says_what_it_is(tmp_path):
    """dump reads Legion Prof logs; the runtime's stream was "not a Legion Prof binary log"."""
    stream = ROOT / "fixtures" / "real" / "mpi2" / "legate_0.runtime.prof"
    one_line_error(cli("dump", stream), "the array runtime's event stream",
                   "dump reads Legion Prof logs")


def test_concurrent_screenshots_to_one_path_leave_a_whole_picture(sample, tmp_path):
    from PySide6 import QtGui
    p, _ = sample
    out = tmp_path / "shot.png"
    results = []

    def shoot(width):
        results.append(cli("screenshot", p, "-o", out, "--width", width, "--height", 300))
    threads = [threading.Thread(target=shoot, args=(w,)) for w in (700, 900)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    img = QtGui.QImage(str(out))
    assert not img.isNull() and img.width() in (700, 900) and img.height() >= 300
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_expand_given_several_times_adds_up():
    """`--expand cpu --expand gpu_dev` expands both, as `--expand cpu gpu_dev` does."""
    from legate_prof.cli.parser import build_parser
    parser = build_parser()
    for cmd in (["screenshot", "x.prof", "-o", "x.png"], ["compare", "a", "b"]):
        apart = parser.parse_args([*cmd, "--expand", "cpu", "--expand", "gpu_dev"])
        together = parser.parse_args([*cmd, "--expand", "cpu", "gpu_dev"])
        assert apart.expand == together.expand == ["cpu", "gpu_dev"]
        assert parser.parse_args(cmd).expand == []  # and the default is not shared


def test_an_output_through_a_link_replaces_the_links_target_and_keeps_the_link(sample, tmp_path):
    p, before = sample
    target = tmp_path / "real.png"
    target.write_bytes(b"old")
    link = tmp_path / "link.png"
    link.symlink_to(target)
    r = cli("screenshot", p, "-o", link, "--width", "400", "--height", "300")
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert digest(p) == before


def test_an_output_that_is_a_pipe_is_written_into_not_replaced(sample, tmp_path):
    """`-o /dev/stdout`, a FIFO, `/dev/null`: written straight to; a rename would have put a
    regular file in the device's or pipe's place."""
    import json
    import stat
    p, _ = sample
    fifo = tmp_path / "trace.json"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    r = cli("export", p, "--format", "chrome", "-o", fifo)
    assert r.returncode == 0, r.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    reader.join(timeout=60)
    assert got and len(json.loads(got[0])) > 10
    assert sorted(x.name for x in tmp_path.iterdir()) == ["legate_0.prof", "trace.json"]


@pytest.mark.parametrize("cmd, out", [
    ("convert", "/proc/x.lpbundle"), ("report", "/proc/legate_prof_report"),
    ("screenshot", "/proc/x.png"), ("export", "/proc/x.json"),
])
def test_an_output_where_nothing_can_be_written_is_one_line(sample, cmd, out):
    p, before = sample
    extra = ["--format", "chrome"] if cmd == "export" else []
    one_line_error(cli(cmd, p, "-o", out, *extra), "could not write")
    assert digest(p) == before


def test_convert_of_a_runs_folder_asks_where_rather_than_writing_above_it(sample, tmp_path):
    """``convert DIR`` wrote ``DIR.lpbundle`` beside the folder: in the folder above the run,
    a place the user never named (a user's review).  One line, exit 2, nothing written; a
    single file is still converted beside itself."""
    p, _ = sample
    run = Path(p).parent
    before = sorted(os.listdir(run.parent))
    one_line_error(cli("convert", run), "give -o")
    assert sorted(os.listdir(run.parent)) == before
    assert cli("convert", p).returncode == 0 and Path(p).with_suffix(".lpbundle").exists()


def test_export_into_a_missing_folder_is_one_line(sample, tmp_path):
    p, _ = sample
    one_line_error(cli("export", p, "--format", "perfetto", "-o", tmp_path / "no" / "x.pftrace"),
                   "does not exist")


def test_a_parquet_export_never_replaces_a_folder_it_did_not_write(sample, tmp_path):
    pytest.importorskip("pyarrow")
    p, _ = sample
    mine = tmp_path / "documents"
    mine.mkdir()
    (mine / "thesis.tex").write_text("keep me")
    one_line_error(cli("export", p, "--format", "parquet", "-o", mine), "is not a Parquet export")
    assert (mine / "thesis.tex").read_text() == "keep me"
    out = tmp_path / "tables"
    for _ in range(2):  # an earlier export is replaced
        r = cli("export", p, "--format", "parquet", "-o", out)
        assert r.returncode == 0, r.stderr
    assert (out / "items.parquet").is_file()
    assert oct(out.stat().st_mode & 0o777) == oct(0o777 & ~_umask())


def _umask():
    m = os.umask(0)
    os.umask(m)
    return m


def test_expand_takes_group_titles_and_io_includes_legates_extern_thread():
    """Groups go by key or by the title the picture shows; `io` (the guide's I/O lane) also
    expands `io (extern)`, where legate 26.06 runs the top-level task."""
    from legate_prof.cli.arguments import expanded as _expanded
    from legate_prof.cli.parser import build_parser
    args = build_parser().parse_args(["screenshot", "x.prof", "-o", "x.png", "--expand",
                                      "gpu dev", "chan", "io (extern)", "omp"])
    assert args.expand == ["gpu_dev", "channel", "proc_other", "openmp"]
    assert _expanded(["cpu", "io"]) == ["cpu", "io", "proc_other"]
    assert _expanded(["io", "proc_other"]) == ["io", "proc_other"]
    # `all`: every group (it was "no lane group 'all'": a user's review)
    from legate_prof.model.kinds import GROUP_KEYS
    args = build_parser().parse_args(["screenshot", "x.prof", "-o", "x.png", "--expand", "all"])
    assert _expanded(args.expand) == list(GROUP_KEYS)


def test_view_without_a_display_of_a_missing_file_is_one_line(tmp_path):
    """No display: `view` renders a picture instead and says so, but only once it has
    something to show; a file that cannot be read is its one error line."""
    env = {k: v for k, v in ENV.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    r = subprocess.run([sys.executable, "-m", "legate_prof", "view", str(tmp_path / "no.prof")],
                       capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0, r.stderr
    assert "No such file" in r.stderr and not (tmp_path / "legate_prof_view.png").exists()


def test_view_without_a_display_says_it_replaces_an_earlier_picture(tmp_path):
    """`view` without a display wrote legate_prof_view.png over the last one without a word
    (a review): the second time, its note says it replaces it."""
    said = []
    env = {k: v for k, v in ENV.items() if k != "LEGATE_PROF_HIDDEN_WINDOW"}  # (a picture)
    for _ in range(2):
        r = subprocess.run([sys.executable, "-m", "legate_prof", "view", str(SAMPLE)],
                           capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        said.append(next(ln for ln in r.stderr.splitlines() if "rendering the view to" in ln))
    assert "replacing" not in said[0]
    assert said[1].endswith("legate_prof_view.png instead (replacing the one there)"), said[1]


def test_every_argument_of_every_command_says_what_it_is():
    """`legate_prof CMD --help` explains each argument; the files say what they may be;
    `sql --help` lists the tables and their columns."""
    import argparse

    from legate_prof.cli.parser import build_parser
    from legate_prof.export.tables import SCHEMAS
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    silent = [f"{name} {a.option_strings or a.dest}" for name, sp in sub.choices.items()
              for a in sp._actions if not a.help and not isinstance(a, argparse._HelpAction)]
    assert not silent, silent
    for name, sp in sub.choices.items():
        files = [a for a in sp._actions if a.dest == "files"]
        if files and name != "dump":
            assert ".lpbundle" in files[0].help and "folder" in files[0].help, name
    text = sub.choices["sql"].format_help()
    for table, cols in SCHEMAS.items():
        assert f"{table}: " in text and cols[0][0] in text


def test_a_mistyped_command_or_option_gets_a_suggestion():
    r = subprocess.run([sys.executable, "-m", "legate_prof", "stat", "x.prof"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.strip().endswith("did you mean stats?"), r.stderr
    r = subprocess.run([sys.executable, "-m", "legate_prof", "stats", "x.prof", "--jsn"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.strip().endswith("did you mean --json?"), r.stderr
    assert r.stderr.count("\n") == 1  # one line


MPI2 = str(ROOT / "fixtures" / "real" / "mpi2")


@pytest.mark.parametrize("args,words", [
    (["critical", MPI2, "--critical-path"], "`critical` has no option --critical-path"),
    (["dump", MPI2, "--json"], "`dump` has no option --json"),
    (["critical", MPI2, "--limt", "3"], "did you mean --limit?"),
    (["compare", MPI2], "compare needs two runs: legate_prof compare RUN_A RUN_B"),
])
def test_an_option_the_command_lacks_is_named_not_suggested_back(capsys, args, words):
    """The suggestion was the option typed ("--start ...; did you mean --start?"): now an
    option of another command is said to be missing, and a typo gets the command's own."""
    from legate_prof.cli import main
    with pytest.raises(SystemExit) as e:
        main(args)
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.strip().endswith(words), err
    assert err.count("\n") == 1


def test_a_text_file_alone_is_told_for_what_it_is(tmp_path):
    """Any text file opened alone was told to be given as `--log FILE` (legate's console
    output), a Python program and /etc/hosts alike: the program is told how to record it,
    other text is only said to be text, and console output keeps its hint."""
    tmp = Path(tmp_path)
    prog, hosts, console = tmp / "prog.py", tmp / "hosts", tmp / "run.log"
    prog.write_text("from legate_prof.runtime import numpy as np\nx = np.ones(10)\n")
    hosts.write_text("127.0.0.1 localhost\n")
    console.write_text("[0 - 7f] legate: Failed to allocate 100 bytes on memory 1e00 "
                       "(SYSTEM_MEM)\n")
    line = one_line_error(cli("stats", prog), "is a Python program")
    assert "legate_prof record" in line and "prog.py" in line and "--log" not in line
    line = one_line_error(cli("stats", hosts), "not a Legion Prof log but a text file")
    assert "--log" not in line
    one_line_error(cli("stats", console), "--log FILE")


@pytest.mark.parametrize("size", [4, 20, 29])
def test_a_log_cut_inside_its_first_line_is_said_cut_not_text(tmp_path, size):
    """The first 20 bytes of a real log ("FileType: BinaryLegi") were called "not a Legion
    Prof log but a text file" (a review): the start of a log is a log cut short."""
    cut = tmp_path / "legate_0.prof"
    cut.write_bytes(SAMPLE.read_bytes()[:size])
    one_line_error(cli("stats", cut), "Legion Prof log cut short", f"({size} bytes)")


def test_a_log_cut_before_its_timeline_says_no_span(tmp_path):
    """A log cut before Legion wrote its timeline read "span 0 ns (0 ns to 0 ns)", and each
    processor "ran nothing" (a review): no item was read, and the first line says so."""
    cut = tmp_path / "legate_0.prof"
    cut.write_bytes(SAMPLE.read_bytes()[:SAMPLE.stat().st_size * 3 // 10])
    p = cli("stats", cut)
    assert p.returncode == 0 and "no timeline records" in p.stderr, p.stderr
    first = p.stdout.splitlines()[0]
    assert "0 timeline items, no span: no timeline item was read" in first, first
    assert "span 0 ns" not in p.stdout and "ran nothing" not in p.stdout


def test_a_crashed_runs_processors_are_not_said_to_have_run_nothing():
    """oom2: Legion wrote no timeline (the run ran out of memory), its items the runtime
    stream's alone; every processor was said to have "run nothing" (a review of the report):
    a rank none of whose processors ran anything is not judged."""
    from legate_prof.analyze.stats import compute_stats
    from legate_prof.load.loader import load_profile
    run = ROOT / "fixtures" / "real" / "oom2"
    s = compute_stats(load_profile([str(run)]))
    assert s["items"] > 0 and [m["processors_idle"] for m in s["machine"]] == [{}, {}]


@pytest.mark.parametrize("closed", ["1", "2", "1 2"])
def test_a_command_with_its_output_closed_ends_without_a_traceback(closed):
    """``legate_prof stats RUN >&-``: Python has no object for a stream closed before it
    starts; the command's flush of it was a traceback (exit 1). What would go there goes
    nowhere; the command still reads the run, writes its cache entry, and ends as it would."""
    closes = " ".join(f"{fd}>&-" for fd in closed.split())
    p = subprocess.run(["sh", "-c", f'exec "$0" -m legate_prof stats "$1" {closes}',
                        sys.executable, str(ROOT / "fixtures" / "real" / "mpi4")],
                       capture_output=True, text=True, timeout=120, env=ENV, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    if "2" not in closed.split():
        assert p.stdout == ""  # (nothing came through the closed stream)


def test_the_command_asks_numpy_for_no_huge_pages_unless_the_user_chose(monkeypatch):
    """Huge pages asked for each big array made the kernel compact memory at its first touch
    (a third of `stats` of the 10 M example, in the kernel): the command's process asks for
    none; NUMPY_MADVISE_HUGEPAGE set by the user decides instead."""
    import numpy
    from legate_prof import cli
    flag = numpy._core.multiarray._set_madvise_hugepage  # (returns the setting it replaces)
    before = flag(True)
    try:
        monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
        cli._no_huge_pages()
        assert flag(True) is False
        monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "1")
        cli._no_huge_pages()
        assert flag(True) is True
    finally:
        flag(before)


_BLAS = """
import os, sys
from legate_prof.cli import main
main({argv})
from legate_prof.load.rank_workers import _worker_env
print(os.environ.get("OPENBLAS_NUM_THREADS"), _worker_env().get("OPENBLAS_NUM_THREADS"))
"""


@pytest.mark.parametrize("users, expected", [(None, "1 1"), ("3", "3 3")])
def test_the_command_and_its_workers_start_one_blas_thread_unless_the_user_chose(
        users, expected):
    """numpy's OpenBLAS started a thread per core in every process (the command's, each rank
    worker's), each spinning ~0.1 s of a core, and no command multiplies matrices: one,
    set before numpy is imported and inherited by the rank workers; the user's number kept.
    (``record`` leaves it as the user had it: legate's program does multiply matrices.)"""
    env = {k: v for k, v in ENV.items() if k != "OPENBLAS_NUM_THREADS"}
    if users:
        env["OPENBLAS_NUM_THREADS"] = users
    got = subprocess.run([sys.executable, "-c", _BLAS.format(argv=["stats", str(SAMPLE)])],
                         capture_output=True, text=True, env=env, timeout=120)
    assert got.returncode == 0, got.stderr
    assert got.stdout.splitlines()[-1] == expected


_ENDS = """
import atexit, sys
class Teardown:
    def __del__(self):
        sys.stdout.write("torn down\\n")
kept = Teardown()  # (freed by the interpreter's teardown only)
atexit.register(lambda: sys.stdout.write("exit handler\\n"))
sys.argv = ["legate_prof", *sys.argv[1:]]
from legate_prof.cli import main
main({argv})
print("main returned")
"""


@pytest.mark.parametrize("args, rc", [(["stats", "--json"], 0), (["dump"], 0),
                                      (["stats", "--json", "no_such_file.prof"], 2)])
def test_the_command_line_ends_once_its_answer_is_out_with_its_exit_handlers_run(args, rc):
    """Called as the program (no arguments given to ``main``): the answer whole, the exit
    handlers run, the exit status kept, no interpreter teardown (freeing a big profile's
    objects one by one took 50-90 ms); called with arguments, ``main`` returns."""
    got = subprocess.run([sys.executable, "-c", _ENDS.format(argv=""), *args, str(SAMPLE)],
                         capture_output=True, text=True, env=ENV, timeout=120)
    assert got.returncode == rc, got.stderr
    assert got.stdout.endswith("exit handler\n") and "torn down" not in got.stdout
    assert "main returned" not in got.stdout
    if args[:2] == ["stats", "--json"]:
        assert '"schema"' in got.stdout.split("exit handler")[0]
    given = subprocess.run([sys.executable, "-c", _ENDS.format(argv=[*args, str(SAMPLE)])],
                           capture_output=True, text=True, env=ENV, timeout=120)
    assert given.returncode == 0 and "main returned" in given.stdout
    assert given.stdout.endswith("exit handler\ntorn down\n")


def test_a_log_without_an_out_of_memory_report_says_so(tmp_path):
    """A text given as --log that holds no out-of-memory report (the repository's README, a
    run that did not fail) was read as nothing and said nothing (a review): one warning
    names it; a log with a report says nothing of the kind."""
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real"
    r = cli("stats", real / "mpi2", "--log", real / "README.md")
    assert r.returncode == 0
    assert f"warning: {real / 'README.md'}: no out-of-memory report in it" in r.stderr
    r = cli("stats", real / "oom2", "--log", real / "oom2" / "console.log")
    assert "no out-of-memory report" not in r.stderr


def test_sql_with_the_query_after_the_folder_says_the_query_comes_first():
    """``sql run/ "show tables"`` read the query as a file: "show tables: No such file or
    directory" (a review).  One line says the order, exit 2; the right order still runs."""
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "mpi2"
    r = cli("sql", real, "show tables")
    one_line_error(r, "the query comes first: legate_prof sql 'show tables' ")
    assert cli("sql", "show tables", real).returncode == 0
