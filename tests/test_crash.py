"""A run that dies of out-of-memory can still be seen: the runtime's event stream + Legate's report."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from legate_prof.errors import ProfileError
from legate_prof.load.loader import load_profile
from legate_prof.read.runtime_stream import STREAM_MAGIC, read_runtime_stream
from legate_prof.query.summary import average_utilization
from legate_prof.query.details import item_facts
from legate_prof.query.search import search_items

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
POOL = 40 * 2**20


@pytest.fixture(scope="module")
def crashed(legate_run):
    run = legate_run("oom.py", cpus=1, sysmem=40, env_extra_key="LEGATE_TEST")
    assert run.returncode != 0
    log = run.workdir / "run.log"
    log.write_text(run.output)
    return run, log


def _files(run):
    return sorted(str(p) for p in run.workdir.glob("legate_*.prof"))


def test_glob_picks_up_the_runtime_stream_and_legions_log(crashed):
    run, _ = crashed
    names = [Path(p).name for p in _files(run)]
    assert names == ["legate_0.prof", "legate_0.runtime.prof"]
    assert (run.workdir / "legate_0.runtime.prof").read_bytes().startswith(STREAM_MAGIC)


def test_crashed_run_shows_memory_rising_to_the_pool_and_the_failing_line(crashed):
    run, log = crashed
    model = load_profile(_files(run) + [str(log)])
    assert any("no timeline records" in str(w) for w in model.warnings)  # Legion's log is empty
    lanes = model.lanes_of("system", 0)
    assert len(lanes) == 1 and model.lanes["capacity"][lanes[0]] == POOL
    t0, t1 = model.time_range()
    u = average_utilization(model, "system", 0, t0, t1, 400)
    assert u.max() >= 0.75  # a, b, c and d: 32 MiB of the 40 MiB pool
    step = model.utilization_steps[(0, "system")]
    assert step.peak_level() >= 4 * 8 * 2**20 - 64  # a is 2 elements short
    # operations up to the crash, with the user's lines
    ops = search_items(model, "oom.py:16")
    assert len(ops) >= 1
    [m] = model.markers
    rep = m["report"]
    assert rep["memory_kind"] == "SYSTEM_MEM" and rep["requested_bytes"] == 8 * 2**20
    assert rep["provenance"] == f"{EXAMPLES / 'oom.py'}:16"
    assert rep["pool_bytes"] == POOL
    sites = {h["allocated_at"] for h in rep["holders"]}
    assert {f"{EXAMPLES / 'oom.py'}:{n}" for n in (4, 7, 13)} <= sites
    # the marker sits at the end of the recorded operations
    assert m["time"] >= int(model.items["start"][ops].max())


def test_stats_names_the_failing_line(crashed):
    run, log = crashed
    p = subprocess.run([sys.executable, "-m", "legate_prof", "stats", *_files(run), "--log",
                        str(log)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "Out of memory" in p.stdout and "oom.py:16" in p.stdout
    assert "SYSTEM_MEM" in p.stdout


def test_screenshot_shows_the_system_lane_and_oom_marker(crashed, tmp_path):
    from PySide6 import QtGui
    from legate_prof.viewer.screenshot import render_screenshot
    run, log = crashed
    model = load_profile(_files(run) + [str(log)])
    out, geo = render_screenshot(model, tmp_path / "oom.png", return_geometry=True)
    img = QtGui.QImage(str(out))
    # the red OOM marker line crosses the system-memory summary at the marker's time
    ya, yb = geo["summaries"][(0, "system")]
    t = model.markers[0]["time"]
    x = geo["x_left"] + (t - geo["t0"]) / (geo["t1"] - geo["t0"]) * (geo["x_right"] - geo["x_left"])
    reds = 0
    for dx in range(-2, 3):
        for y in range(int(ya), int(yb)):
            c = QtGui.QColor(img.pixel(int(x) + dx, y))
            reds += c.red() > 180 and c.green() < 80 and c.blue() < 80
    assert reds > 5


@pytest.mark.parametrize("fixed", ["oom_inplace.py", "oom_stencil_hint.py"])
def test_fixed_versions_show_a_lower_peak(crashed, legate_run, fixed):
    run = legate_run(fixed, cpus=1, sysmem=40, env_extra_key="LEGATE_TEST")
    assert run.returncode == 0
    model = load_profile(_files(run))
    # Legion's instances (the real allocations) never reach the failed run's demand
    crashed_demand = 33_554_408 + 8 * 2**20
    peak = model.utilization_steps[(0, "system")].peak_level()
    assert 0 < peak < crashed_demand
    assert peak <= POOL
    # and the runtime stream adds an Arrays lane beside Legion's memory lane
    assert len(model.lanes_of("arrays", 0)) == 1


def test_cut_stream_reads_with_a_warning(crashed, tmp_path):
    run, _ = crashed
    data = (run.workdir / "legate_0.runtime.prof").read_bytes()
    cut = tmp_path / "legate_0.runtime.prof"
    cut.write_bytes(data[: len(data) - 5])
    s = read_runtime_stream(cut)
    assert len(s.ops) >= 3
    assert any("did not finish" in w.problem for w in s.warnings)
    bad = tmp_path / "x.prof"
    bad.write_bytes(STREAM_MAGIC)
    with pytest.raises(ProfileError, match="no header"):
        read_runtime_stream(bad)


def test_stream_is_not_written_without_profile(legate_run):
    run = legate_run("oom_inplace.py", cpus=1, profile=False)
    assert run.returncode == 0
    assert not list(run.workdir.glob("*.runtime.prof"))


def _record(args, cwd):
    return subprocess.run([sys.executable, "-m", "legate_prof", "record", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def test_record_without_gpus_flag_works_without_a_driver(tmp_path):
    from legate_prof.cuda_stub import real_driver_present
    if real_driver_present():
        pytest.skip("a real NVIDIA driver is present; legate configures GPUs itself")
    prog = tmp_path / "first.py"
    prog.write_text("from legate_prof.runtime import numpy as np\n"
                    "print(float(np.ones((10,)).sum()))\n")
    p = _record(["--cpus", "2", str(prog)], tmp_path)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "10.0" in p.stdout
    assert (tmp_path / "legate_0.prof").exists()


def test_record_reports_a_failed_run_in_one_line_without_claiming_profiles(tmp_path):
    prog = tmp_path / "fails.py"
    prog.write_text("raise SystemExit(3)\n")
    logdir = tmp_path / "logs"
    logdir.mkdir()
    p = _record(["--cpus", "1", "--gpus", "0", "--logdir", str(logdir), str(prog)], tmp_path)
    assert p.returncode == 3
    assert "Profiles have been generated" not in p.stdout + p.stderr
    errors = [l for l in p.stderr.splitlines() if l.startswith("legate_prof: error:")]
    assert len(errors) == 1 and "exited with status 3" in errors[0]


def test_record_of_a_program_that_raised_says_so_and_reports_its_whole_profiles(tmp_path):
    """A Python exception ends the program and legate shuts down as ever: its profiles are
    whole (the reference reads them), yet `record` called them "partial profiles" and its
    report warned "legate_console.log: no out-of-memory report in it" (a review).  It says
    the program raised, keeps legate's output, and reports the profiles without it."""
    prog = tmp_path / "raises.py"
    prog.write_text("from legate_prof.runtime import numpy as np\n"
                    "print(float(np.ones((1000,)).sum()))\n"
                    "raise ValueError('boom')\n")
    p = _record(["--cpus", "1", "--gpus", "0", str(prog)], tmp_path)
    assert p.returncode == 1 and "ValueError: boom" in p.stdout + p.stderr
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("legate_prof: error:")]
    assert len(errors) == 1, p.stderr[-2000:]
    assert "the program raised an exception (its traceback above); its profiles: " \
        "./legate_0.prof" in errors[0] and "partial" not in errors[0]
    assert errors[0].endswith("legate's output kept as ./legate_console.log; their report: "
                              "./legate_prof/index.html"), errors[0]
    assert "out-of-memory" not in p.stderr
    assert "ValueError: boom" in (tmp_path / "legate_console.log").read_text()
    assert "Toplevel Task" in (tmp_path / "legate_prof" / "meta.js").read_text()


def test_record_of_an_out_of_memory_run_keeps_its_output_and_reports_it(tmp_path):
    """The guide's Example 2 recorded: legate exits 250; its out-of-memory report (which
    names what held the memory) was on the terminal only, and no report was written (a
    review: the guide says a run leaves legate_prof/).  Now legate's output is kept beside
    the partial profiles and their report reads it: its findings name the line that failed
    and the array held twice."""
    prog = tmp_path / "oom.py"
    prog.write_text((EXAMPLES / "oom.py").read_text())
    p = _record(["--cpus", "1", "--gpus", "0", "--sysmem", "40", str(prog)], tmp_path)
    assert p.returncode != 0 and "Traceback (most recent call last)" not in p.stderr
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("legate_prof: error:")]
    assert len(errors) == 1 and "partial profiles:" in errors[0], p.stderr[-2000:]
    assert "legate's output kept as ./legate_console.log" in errors[0]
    assert errors[0].endswith("their report with it: ./legate_prof/index.html")
    kept = (tmp_path / "legate_console.log").read_text()
    assert "Failed to allocate" in kept and p.stdout in kept  # (what legate printed, as printed)
    meta = (tmp_path / "legate_prof" / "meta.js").read_text()
    assert "out_of_memory" in meta and "oom.py:16" in meta


def test_record_help_into_a_pipe_closed_early_says_nothing_more(tmp_path):
    """`legate_prof record --help | head`: the reader closing the pipe ends the help, exit 0,
    no traceback (a review's `BrokenPipeError` from record's own usage)."""
    p = subprocess.Popen([sys.executable, "-m", "legate_prof", "record", "--help"],
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL)
    p.stdout.close()  # as `head` does once it has its lines
    err = p.stderr.read().decode()
    assert p.wait(timeout=300) == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_record_without_a_program_says_so_and_starts_no_legate(tmp_path):
    """`legate_prof record --cpus 1` with no program: legate would start its interactive
    Python prompt (stdin a terminal: record looked hung, its prompt unseen in the pipe);
    record says in one line that there is no program, with its usage, exit 2, legate not
    started.  `record --help` shows record's own usage before legate's options."""
    import pty
    main_end, terminal = pty.openpty()  # (stdin a terminal, as a user's)
    try:
        p = subprocess.run([sys.executable, "-m", "legate_prof", "record", "--cpus", "1",
                            "--gpus", "0"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=60, stdin=terminal)
    finally:
        os.close(terminal)
        os.close(main_end)
    assert p.returncode == 2, p.stdout[-2000:] + p.stderr[-2000:]
    assert "Profiles have been generated" not in p.stdout + p.stderr and not p.stdout
    assert p.stderr.startswith("legate_prof: error: no program to run") \
        and len(p.stderr.splitlines()) == 1 and "prog.py" in p.stderr, p.stderr
    h = _record(["--help"], tmp_path)
    assert h.returncode == 0 and h.stdout.startswith("usage: legate_prof record")
    assert "--logdir" in h.stdout  # legate's options follow


def test_record_runs_a_module_or_an_executable_as_legate_would(tmp_path):
    """What legate runs besides a *.py is no "missing program": `-m module` and a program
    not ending in .py (legate's exec mode) are run (neither writes profiles here)."""
    (tmp_path / "mymod.py").write_text("print('module ran')\n")
    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\necho tool ran \"$@\"\n")
    tool.chmod(0o755)
    for args, said in ((["-m", "mymod"], "module ran"), ([str(tool), "--cpus"], "tool ran --cpus")):
        p = _record(["--cpus", "1", "--gpus", "0", *args], tmp_path)
        assert said in p.stdout, p.stdout[-2000:] + p.stderr[-2000:]
        assert "no program" not in p.stderr and "Traceback" not in p.stderr, p.stderr


def _without_a_driver():
    from legate_prof.cuda_stub import real_driver_present
    if real_driver_present():
        pytest.skip("a real NVIDIA driver is present: no CUDA stand-in is built")


@pytest.mark.parametrize("trouble", ["no compiler", "a compiler that fails",
                                     "a cache folder that is a file"])
def test_record_says_in_one_line_why_the_cuda_stand_in_could_not_be_built(tmp_path, trouble):
    """No driver, and the stand-in legate needs (even with --gpus 0) cannot be built: one
    line saying what to do, exit 2, legate not started (a review's three tracebacks)."""
    _without_a_driver()
    (tmp_path / "empty").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "CC"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")  # (none built there yet)
    if trouble == "no compiler":
        env["PATH"], hint = str(tmp_path / "empty"), "install one"
    elif trouble == "a compiler that fails":
        env["CC"], hint = "/bin/false", "set CC to a working C compiler"
    else:
        (tmp_path / "cache").write_text("a file\n")
        hint = "XDG_CACHE_HOME"
    prog = tmp_path / "p.py"
    prog.write_text("print('ran')\n")
    p = subprocess.run([sys.executable, "-m", "legate_prof", "record", "--no-report", "--cpus",
                        "1", str(prog)], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("legate_prof: error:")]
    assert len(errors) == 1 and "stand-in could not be built" in errors[0], p.stderr
    assert hint in errors[0] and "ran" not in p.stdout, errors


def test_record_builds_the_stand_in_in_the_home_cache_where_xdg_cache_home_is_relative(
        tmp_path):
    """XDG_CACHE_HOME=rel is ignored, as the XDG spec says (and the timeline cache does): the
    stand-in was built into the user's folder, ./rel/legate_prof/cuda-stub."""
    _without_a_driver()
    (tmp_path / "home").mkdir()
    work = tmp_path / "work"
    work.mkdir()
    (work / "p.py").write_text("print('ran')\n")
    env = dict(os.environ, XDG_CACHE_HOME="rel", HOME=str(tmp_path / "home"))
    p = subprocess.run([sys.executable, "-m", "legate_prof", "record", "--no-report", "--cpus",
                        "1", "p.py"], cwd=work, env=env, capture_output=True, text=True,
                       timeout=300, stdin=subprocess.DEVNULL)
    assert "ran" in p.stdout, p.stdout[-2000:] + p.stderr[-2000:]
    assert sorted(os.listdir(work)) == ["p.py"]
    assert list((tmp_path / "home" / ".cache" / "legate_prof" / "cuda-stub").glob("*/libcuda.so.1"))


def test_record_interrupted_outside_legates_run_says_so(tmp_path, monkeypatch, capsys):
    """Ctrl-C before legate starts (or while the report is written) is the one line every
    command says, exit 130 (it was 130 and nothing said)."""
    import legate_prof.cuda_stub
    from legate_prof.cli import main

    def interrupted():
        raise KeyboardInterrupt
    monkeypatch.setattr(legate_prof.cuda_stub, "real_driver_present", interrupted)
    monkeypatch.chdir(tmp_path)
    assert main(["record", "--cpus", "1", "p.py"]) == 130
    assert capsys.readouterr().err == "legate_prof: interrupted\n"


def test_record_holds_back_legates_closing_message_however_it_is_wrapped(
        tmp_path, monkeypatch, capsys):
    """Legate's driver prints "Profiles have been generated under DIR, run legate_prof view
    DIR/legate_*.prof to view them" with rich, which wraps at 80 columns where it is not
    told otherwise (legate 26.06 tells it soft_wrap, today): record held back only its first
    line, so "view them" leaked before the rest and legate_*.prof was not renamed.  A
    stand-in launcher prints it wrapped: it comes out as one line, last, renamed."""
    import legate_prof.cuda_stub
    from legate_prof.cli import main
    logs = tmp_path / ("logs_of_a_run_with_a_rather_long_name_" * 2) / "deeper"
    launcher = tmp_path / "legate"
    launcher.write_text(f"#!{sys.executable}\n"
                        "import sys\nfrom pathlib import Path\nfrom rich.console import Console\n"
                        "a = sys.argv\nlogdir = a[a.index('--logdir') + 1]\n"
                        "name = a[a.index('--profile-name') + 1]\n"
                        "Path(logdir, name + '_0.prof').write_text('')\nprint('the program ran')\n"
                        "Console(width=80, soft_wrap=False).print(f'Profiles have been generated"
                        " under {logdir}, run legate_prof view {logdir}/legate_*.prof to view "
                        "them')\n")
    launcher.chmod(0o755)
    monkeypatch.setattr(legate_prof.cuda_stub, "legate_executable", lambda: str(launcher))
    monkeypatch.setattr(legate_prof.cuda_stub, "real_driver_present", lambda: True)
    monkeypatch.chdir(tmp_path)
    assert main(["record", "--no-report", "--profile-name", "mine", "--logdir", str(logs),
                 "prog.py"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["the program ran", f"Profiles have been generated under {logs}, run "
                   f"legate_prof view {logs}/mine_*.prof to view them"], out


def test_record_stopped_kills_the_program_legate_ran_with_legate(tmp_path):
    """Ctrl-C, and a program that ignores INT and TERM: record's last resort kills legate's
    launcher and the program with it (legate's driver starts it in a session of its own and
    passes on only INT, TERM, QUIT and HUP: the launcher killed alone left it running)."""
    prog = tmp_path / "stubborn.py"
    prog.write_text("import os, signal, time\n"
                    "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                    "print('pid', os.getpid(), flush=True)\ntime.sleep(120)\n")
    quick = ("import sys\nfrom legate_prof.cli.commands import record\n"
             "record.STOP_GRACE_S, record.KILL_GRACE_S = 0.5, 2.0\n"
             "from legate_prof.cli import main\nsys.exit(main(sys.argv[1:]))\n")
    p = subprocess.Popen([sys.executable, "-c", quick, "record", "--no-report", "--cpus", "1",
                          "--gpus", "0", str(prog)], cwd=tmp_path, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         # (a suite started in the background ignores SIGINT: so would it)
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    pid = None
    try:
        for line in p.stdout:
            if line.startswith("pid "):
                pid = int(line.split()[1])
                break
        assert pid, p.stderr.read()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
        for _ in range(100):  # (gone, or a zombie no one reaped yet)
            if _state(pid) in ("gone", "Z"):
                break
            time.sleep(0.05)
        assert _state(pid) in ("gone", "Z"), f"the program was left running: {err}"
        assert p.returncode == 130, err
        assert "was killed, with the program it ran" in err, err
    finally:
        p.kill()
        if pid and _state(pid) not in ("gone", "Z"):
            os.kill(pid, signal.SIGKILL)


def _state(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0].decode()
    except (OSError, IndexError):
        return "gone"


def test_memory_lane_at_the_failure_shows_legates_live_instances(crashed):
    """Both instances of b (the slice made for line 10, the full range for line 13), and no
    8 MiB box for d = c + 3, which Legate never allocated."""
    from legate_prof.model.kinds import ItemKind
    run, log = crashed
    model = load_profile(_files(run) + [str(log)])
    [lane] = model.lanes_of("system", 0)
    lo, hi = model.lane_range(lane)
    details = [item_facts(model, i) for i in range(lo, hi)]
    assert all(d["kind"] == "instance" for d in details)
    b = [d for d in details if d["name"].startswith("Instance of oom.py:7 ")]
    assert len(b) == 2 and all("2 instances of this store" in d["name"] for d in b)
    assert sorted(d["provenance"].rsplit("/", 1)[-1] for d in b) == ["oom.py:10", "oom.py:13"]
    assert sorted(d["size_bytes"] for d in b) == [8388592, 8388608]
    big_at_16 = [d for d in details if d["name"].startswith("Instance of oom.py:16")
                 and d["size_bytes"] >= 2**20]
    assert big_at_16 == []
    assert sum(d["size_bytes"] for d in details) == model.markers[0]["report"]["reserved_bytes"]
    # the runtime's arrays moved to their own lane and keep their allocation site
    [arrays] = model.lanes_of("arrays", 0)
    alo, ahi = model.lane_range(arrays)
    sites = {item_facts(model, i)["provenance"].rsplit("/", 1)[-1] for i in range(alo, ahi)}
    assert {"oom.py:4", "oom.py:7", "oom.py:13"} <= sites
    names = {model.names[model.items["name"][i]] for i in range(alo, ahi)}
    assert "Array float64(1048576,) allocated at oom.py:7" in names
    assert (model.items["kind"][alo:ahi] == ItemKind.INSTANCE).all()


def test_stream_whose_header_lost_its_start_begins_at_its_first_event():
    """A damaged header's start time is dropped (a warning); the run then starts at its first
    event, not at the clock's epoch 57 years earlier, where float64 view coordinates cannot
    tell one nanosecond from the next."""
    path = Path(__file__).with_name("fuzz_regressions") / "start_lost.runtime.prof"
    model = load_profile([str(path)])
    assert any("start_ns" in str(w) for w in model.warnings)
    t0, t1 = model.time_range()
    assert 0 <= t0 < t1 < 10**12


def test_a_legion_log_cut_before_its_timeline_is_named_as_such(tmp_path):
    """A Legion log that ends before its first timeline record was read: the picture's banner
    says that log has no timeline and where it was cut, not that no Legion log was read nor
    that a runtime stream is shown."""
    from legate_prof.query import as_source
    from legate_prof.present.units import format_ns
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "efficient_0.prof"
    cut = tmp_path / "legate_0.prof"
    cut.write_bytes(real.read_bytes()[:20000])
    why = as_source(load_profile([str(cut)])).info().timeline_missing
    assert why.startswith("the Legion Prof log holds no timeline records")
    assert "truncated at byte" in why and "event stream" not in why
    assert format_ns(-0.0) == "0 ns" and format_ns(-1) == "-1 ns"


# ---- the guide's Example 2 on two real ranks, both out of memory (fixtures/real/oom2) -------
OOM2 = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "oom2"
POOL2 = 20 * 2**20  # --sysmem 20


def _oom2(log=True):
    return load_profile([str(OOM2)] + ([str(OOM2 / "console.log")] if log else []))


def test_each_ranks_out_of_memory_report_is_read_and_named():
    """Both ranks ran out at oom.py:16, each asking 4,194,304 bytes with 16,777,208 of
    20,971,520 reserved: before, only rank 0's report was read and no text named a rank."""
    model = _oom2()
    oom = [m for m in model.markers if m["kind"] == "oom"]
    assert [m["rank"] for m in oom] == [0, 1]
    assert not [m for m in model.markers if m["kind"] == "crash"]  # the reports explain them
    for m in oom:
        rep, r = m["report"], m["rank"]
        assert m["title"].startswith(f"Out of memory on rank {r}: 4,194,304 bytes in SYSTEM_MEM")
        assert m["title"].endswith("oom.py:16") and m["fields"]["rank"] == str(r)
        assert rep["rank"] == r and rep["memory"] == f"1e000{r}0000000000"
        assert (rep["requested_bytes"], rep["reserved_bytes"], rep["pool_bytes"]) == \
            (4194304, 16777208, POOL2)
        # one entry per store, adding up to what Legate reserved
        held = [v for k, v in m["fields"].items() if k.startswith("held by store ")]
        assert len(held) == len(rep["holders"]) == 4
        assert m["fields"]["held in all"] == "16,777,208 bytes by 4 stores"
        assert sum(i["size"] for h in rep["holders"] for i in h["instances"]) == 16777208
        # rank 1's instances are its half of each array (elements 524288 on)
        ranges = {i["elements"] for h in rep["holders"] for i in h["instances"]}
        assert ("<524288>..<1048575>" in ranges) == (r == 1)


def test_the_out_of_memory_finding_says_in_its_headline_which_array_is_held_twice():
    """What to change (the guide's Example 2: ``b`` held as its slice and as a whole) was one
    field among many of the evidence (a user's review): the finding's headline names the
    array held as several instances, its line and its bytes."""
    from legate_prof.analyze.insights import find_insights
    found = [f for f in find_insights(_oom2()) if f["pattern"] == "out_of_memory"]
    assert len(found) == 2
    for f in found:
        assert f["title"].endswith("; the array made at oom.py:7 is held as 2 instances "
                                   "(8,388,600 bytes)"), f["title"]


def test_the_out_of_memory_finding_shows_memory_filling_up_to_the_failure():
    """A click on the finding zoomed to a 2 us window at the failure: the memory rising to
    it was out of sight (a GUI walk).  Its window runs from the run's first item to past the
    failure, the failure inside it, not at its edge — and no further than the timeline goes
    (a twentieth past the failure ended 17 ms after the run's timeline: "when 1.167 s - 1.603
    s" of a run the timeline shows to 1.588 s)."""
    from legate_prof.analyze.insights import find_insights
    model = _oom2()
    first = int(model.items["start"].min())
    shown_end = model.time_range()[1]
    found = [f for f in find_insights(model) if f["pattern"] == "out_of_memory"]
    oom = sorted(int(m["time"]) for m in model.markers if m.get("kind") == "oom")
    assert len(found) == len(oom) == 2
    for f, t in zip(sorted(found, key=lambda f: f["window_ns"][1]), oom):
        t0, t1 = f["window_ns"]
        assert t0 == first and t0 < t < t1 <= shown_end
        assert t1 == min(t + (t - t0) // 20, shown_end)
    assert any(t + (t - first) // 20 > shown_end for t in oom)  # (the case the clip is for)


def test_a_request_the_free_bytes_cover_says_why_it_failed_still():
    """16,777,208 bytes held and 4,194,304 asked of a 20,971,520-byte pool read as if it fit (a
    user's review): the evidence says the bytes left, and that they are not in one piece;
    a request larger than what is left says nothing of the kind."""
    from legate_prof.analyze.insights import _fits_yet_failed, find_insights
    found = [f for f in find_insights(_oom2()) if f["pattern"] == "out_of_memory"]
    assert len(found) == 2
    for f in found:
        held = int(f["evidence"]["pool"].split(" of ")[0].replace(",", ""))
        left = 20_971_520 - held
        assert f["evidence"]["free"].startswith(f"{left:,} bytes, no fewer than asked, yet not "
                                                "in one piece")
    assert _fits_yet_failed({"requested_bytes": 10, "reserved_bytes": 95,
                             "pool_bytes": 100}) is None
    assert _fits_yet_failed({"requested_bytes": 10}) is None


def test_the_out_of_memory_remedy_gives_the_guides_two_fixes_for_this_run(capsys):
    """The remedy named neither of the guide's fixes as code nor the bigger pool (a review):
    it now prefetches the array held twice by its name (its line's code: ``b = ...``), and
    gives the pool this run needed, per rank: (held + asked) x 1.25, in MiB, rounded up; the
    text lists the stores that held the pool one a line, not as one run-on string."""
    from legate_prof.analyze.insights import find_insights
    from legate_prof.cli import main
    found = [f for f in find_insights(_oom2()) if f["pattern"] == "out_of_memory"]
    need = -(-int((16777208 + 4194304) * 1.25) // 2**20)
    assert need == 25
    for f in found:
        r = f["remedy"]
        assert "b.stencil_hint(low_offsets=(1,), high_offsets=(1,))" in r
        assert "np.multiply(b, 1, out=b)" in r
        assert f"--sysmem {need} or more (MiB; it had 20.0, held 16.0 and asked 4.0)" in r
        assert "per rank, and this run has 2 ranks" in r
    main(["insights", str(OOM2), "--log", str(OOM2 / "console.log")])
    out = capsys.readouterr().out
    held = [line for line in out.splitlines() if line.startswith("     store ")]
    assert len(held) == 8 and "     store 4, allocated at" in out and "oom.py:7: 2 instances, " \
        "8,388,600 bytes" in out
    assert "held by store" not in out


def test_two_stores_of_one_line_stay_two_and_add_up_to_what_was_reserved(tmp_path):
    """A line that allocated two stores (here the report's line 13 store renamed to line 7's,
    as a line like ``c, e = b + 2, b + 3`` makes them): two entries, not one key for both."""
    from legate_prof.assemble.out_of_memory import held_by_stores, oom_marker
    from legate_prof.read.console_log import parse_oom_reports
    text = (OOM2 / "console.log").read_text().replace(
        "LogicalStore allocated at /work/wt_i38/examples/oom.py:13:",
        "LogicalStore allocated at /work/wt_i38/examples/oom.py:7:")
    rep = parse_oom_reports(text)[1]
    held = held_by_stores(rep)
    at7 = [what for what, _, _ in held if what.endswith("oom.py:7") or "oom.py:7 (" in what]
    assert len(at7) == 2 and "second store" in at7[1]
    assert sum(b for _, _, b in held) == rep["reserved_bytes"] == 16777208
    m = oom_marker(rep, _oom2(log=False))
    assert len([k for k in m["fields"] if k.startswith("held by store ")]) == 4


@pytest.mark.parametrize("log", [False, True])
def test_memory_lanes_hold_each_ranks_piece_never_past_the_pool(log):
    """The runtime's stream gives whole arrays (8 MiB each); a rank holds its half: before, rank
    1's system memory 'peaked at 160 % of its 20 MiB' (32 MiB). With the report, each rank's
    system lane holds the instances Legate listed for it (16,777,208 bytes)."""
    model = _oom2(log)
    for r in (0, 1):
        [lane] = model.lanes_of("system", r)
        assert model.lanes["capacity"][lane] == POOL2
        peak = model.utilization_steps[(r, "system")].peak_level()
        assert 0 < peak <= POOL2
        if log:
            assert round(peak) == 16777208
        lo, hi = model.lane_range(lane)
        sizes = {model.transfer_of(i)[0] for i in range(lo, hi)}
        assert max(sizes) <= 4 * 2**20  # pieces: never the 8 MiB array
    from legate_prof.analyze.insights import find_insights
    pressure = [f for f in find_insights(model) if f["pattern"] == "memory_pressure"]
    assert all(f["evidence"]["peak_bytes"] <= f["evidence"]["capacity_bytes"] for f in pressure)


def test_a_crashed_runs_files_are_one_run_and_each_crash_is_named_without_the_log():
    """Legion wrote no timeline for either rank: their logs are not 'files of different runs';
    without the console log each rank's stream still says it stopped, after what."""
    model = _oom2(log=False)
    assert not [w for w in model.warnings if "not of the others' run" in str(w)]
    crash = [m for m in model.markers if m["kind"] == "crash"]
    assert [m["rank"] for m in crash] == [0, 1]
    for m in crash:
        assert f"Rank {m['rank']} stopped before the run's end, after launching BinaryOp at " \
               in m["title"] and m["title"].split(" at ", 1)[1].startswith(
                   "/work/wt_i38/examples/oom.py:16")
        assert "--log" in m["title"]
    from legate_prof.analyze.insights import find_insights
    found = find_insights(model)
    assert [f["evidence"]["rank"] for f in found[:2] if f["pattern"] == "crash"] == ["0", "1"]


def test_stats_and_insights_name_both_ranks_failures():
    for cmd in ("stats", "insights"):
        p = subprocess.run([sys.executable, "-m", "legate_prof", cmd, str(OOM2), "--log",
                            str(OOM2 / "console.log")], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        for r in (0, 1):
            assert f"Out of memory on rank {r}: 4,194,304 bytes in SYSTEM_MEM for BinaryOp" \
                in p.stdout, (cmd, p.stdout)
        assert "not of the others' run" not in p.stderr
        assert "peaked at 1" not in p.stdout  # (no 100 % or more)
    p = subprocess.run([sys.executable, "-m", "legate_prof", "insights", "--json", str(OOM2),
                        "--log", str(OOM2 / "console.log")], capture_output=True, text=True)
    oom = [f for f in json.loads(p.stdout)["findings"] if f["pattern"] == "out_of_memory"]
    assert [f["evidence"]["rank"] for f in oom] == ["0", "1"]
    # the picture's banner (a run without Legion's timeline) names both
    from legate_prof.query import as_source
    why = as_source(_oom2()).info().timeline_missing
    assert "the run ended with: Out of memory on rank 0: " in why
    assert why.endswith("(and rank 1 too)")


def test_a_log_cut_short_beside_a_stream_that_ended_is_no_crash(tmp_path, monkeypatch):
    """A rank's log cut inside a record (a copy not finished) beside its runtime stream, which
    says the run ended, read as "Rank 0 stopped before the run's end: crashed or killed (out
    of memory?)", and its marker was labelled "OOM: 0 B in ?" (a user's review).  It is said
    to be a log cut short, the remedy is to read the whole file, and the marker says so."""
    import gzip
    import shutil
    from PySide6 import QtGui
    from legate_prof.analyze.insights import find_insights
    from legate_prof.viewer.screenshot import render_screenshot
    real = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "mpi2"
    run = tmp_path / "run"
    run.mkdir()
    for f in real.glob("legate_*"):
        shutil.copy(f, run / f.name)
    whole = gzip.decompress((run / "legate_0.prof.gz").read_bytes())
    (run / "legate_0.prof.gz").unlink()
    (run / "legate_0.prof").write_bytes(whole[:len(whole) // 2])
    profile = load_profile([str(p) for p in sorted(run.iterdir())])
    crash = [f for f in find_insights(profile) if f["pattern"] == "crash"]
    assert len(crash) == 1
    assert "log is cut short" in crash[0]["title"] and "out of memory" not in crash[0]["title"]
    assert crash[0]["remedy"].startswith("Read the whole file")
    said = []
    real_text = QtGui.QPainter.drawText
    monkeypatch.setattr(QtGui.QPainter, "drawText",
                        lambda self, *a: said.append(a[-1]) or real_text(self, *a))
    render_screenshot(profile, tmp_path / "cut.png", width=1200, height=700)
    assert "rank 0: its log is cut short here" in said
    assert not any(isinstance(t, str) and t.startswith("OOM") for t in said)


def test_the_no_timeline_warning_says_why_once_the_console_output_does():
    """With legate's console output given, the warning that a rank's log holds no timeline
    still asked "did the run crash or get killed?" (a review): for a rank the output says ran
    out of memory, it says so; without the output, the question stays."""
    with_log, without = _oom2().warnings, _oom2(log=False).warnings
    for r in (0, 1):
        said = [w for w in with_log if f"legate_{r}.prof.gz: no timeline records" in w]
        assert said == [f"warning: {OOM2 / f'legate_{r}.prof.gz'}: no timeline records: rank {r} "
                        f"ran out of memory ({OOM2 / 'console.log'} says so), so Legion never "
                        "wrote them (it writes them at shutdown)"], with_log
        asked = [w for w in without if f"legate_{r}.prof.gz: no timeline records" in w]
        assert len(asked) == 1 and asked[0].endswith("did the run crash or get killed?)")


def test_a_crashed_runs_arrays_in_its_system_memory_are_said_to_be_arrays():
    """A review read oom2's ``stats`` without ``--log`` — "system ... peak 16.0 MiB of
    20.0 MiB" — as Legion's instances, where the items are the program's arrays, drawn in
    the memory they filled for want of any instance (and in their own lane with --log)."""
    import json
    import subprocess
    import sys
    oom = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "oom2"

    def stats(*args):
        return subprocess.run([sys.executable, "-m", "legate_prof", "stats", "--no-cache",
                               *args, str(oom)], capture_output=True, text=True).stdout
    text = stats()
    assert "peak 16.0 MiB of 20.0 MiB (the program's 4 arrays: Legion's log holds no " \
           "instance)" in text, text
    groups = json.loads(stats("--json"))["groups"]
    assert [g.get("arrays") for g in groups if g["kind"] == "system"] == [4, 4]
    logged = json.loads(stats("--json", "--log", str(oom / "console.log")))["groups"]
    assert not any(g.get("arrays") for g in logged)


SIGINT1 = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "sigint_1rank"


def _crash_finding(args, capsys):
    from legate_prof.cli import main
    assert main(["insights", "--json", "--no-cache", *map(str, args)]) in (0, 2)
    out = json.loads(capsys.readouterr().out)
    crash = [f for f in out["findings"] if f["pattern"] == "crash"]
    assert len(crash) == 1
    return crash[0], out


def test_a_run_stopped_by_ctrl_c_is_said_so_once_the_console_output_does(capsys):
    """A run stopped by Ctrl+C (``sigint_1rank``: legate's console output says "Signal 2
    received by node 0") was "crashed or killed (out of memory? give legate's console output
    with --log)" with that output given, and its remedy asked for it again (a review).  Now
    its marker, finding and warning name the signal, and the remedy says the run was stopped
    from outside; without the output, the question stays."""
    log = SIGINT1 / "legate_console.log"
    crash, out = _crash_finding([SIGINT1, "--log", log], capsys)
    assert crash["title"].endswith(": signal 2 (SIGINT): interrupted (Ctrl+C) (legate's "
                                   "console output says so)"), crash["title"]
    assert crash["evidence"]["signal"] == "2 (SIGINT): interrupted (Ctrl+C)"
    assert "stopped from outside" in crash["remedy"] and "--log" not in crash["remedy"]
    model = load_profile([str(SIGINT1), str(log)])
    assert not any("out of memory?" in m["title"] for m in model.markers)
    assert not any("no out-of-memory report in it" in w for w in model.warnings)
    said = [w for w in model.warnings if "no timeline records" in w]
    assert len(said) == 1 and "rank 0 caught signal 2 (SIGINT)" in said[0], said
    crash, _ = _crash_finding([SIGINT1], capsys)
    assert crash["title"].endswith("(out of memory? give legate's console output with --log)")
    assert "Give legate's console output with --log" in crash["remedy"]


def test_a_console_output_naming_no_signal_nor_report_is_not_asked_for_again(tmp_path, capsys):
    """The console output of a crash says nothing of why (legate killed by SIGTERM writes no
    "Signal" line): the crash says the output names neither, and its remedy where to look."""
    log = tmp_path / "legate_console.log"
    log.write_text("".join(line for line in (SIGINT1 / "legate_console.log").read_text()
                           .splitlines(keepends=True) if not line.startswith("Signal ")))
    crash, out = _crash_finding([SIGINT1 / "legate_0.prof.gz",
                                 SIGINT1 / "legate_0.runtime.prof.gz", "--log", log], capsys)
    assert crash["title"].endswith(": crashed or killed; legate's console output names no "
                                   "out-of-memory report and no signal (its last lines may "
                                   "say why)"), crash["title"]
    assert "last lines of legate's console output" in crash["remedy"]
    assert "signal" not in crash["evidence"]


def test_each_ranks_signal_is_read_from_a_console_output_of_several_ranks():
    from legate_prof.read.console_log import parse_signals, read_log_text, signal_words
    assert parse_signals(read_log_text(OOM2 / "console.log")) == {0: 6, 1: 6}
    assert parse_signals(read_log_text(SIGINT1 / "legate_console.log")) == {0: 2}
    assert signal_words(15) == "signal 15 (SIGTERM): asked to end"
    assert signal_words(200) == "signal 200"
    # the out-of-memory reports explain their ranks' abort: no "caught signal 6"
    assert not any("caught signal" in w for w in _oom2().warnings)


def test_record_of_a_run_stopped_by_ctrl_c_reports_it_with_the_signal(tmp_path, capsys):
    """`record` of a run stopped by Ctrl+C wrote its report without legate's output (it had
    no out-of-memory report), and the report said "out of memory? give legate's console
    output with --log" beside that output (a review): the output names the signal, so the
    report reads it."""
    import gzip
    from legate_prof.cli.commands.record import _after_run
    written = []
    for name in ("legate_0.prof", "legate_0.runtime.prof"):
        (tmp_path / name).write_bytes(gzip.decompress((SIGINT1 / f"{name}.gz").read_bytes()))
        written.append(str(tmp_path / name))
    said = (SIGINT1 / "legate_console.log").read_text().splitlines(keepends=True)
    assert _after_run(130, [], str(tmp_path), "legate", written, False, said) != 0
    err = capsys.readouterr().err
    assert err.rstrip().endswith(f"their report with it: {tmp_path / 'legate_prof' / 'index.html'}")
    meta = (tmp_path / "legate_prof" / "meta.js").read_text()
    assert "signal 2 (SIGINT)" in meta and "out of memory?" not in meta


def test_record_takes_o_for_where_the_profiles_go_and_says_a_program_never_profiled(tmp_path):
    """`legate_prof record -o DIR prog.py` (the other commands' `-o`) failed with legate's
    "unrecognized arguments: -o" after a hundred lines of its usage; a program that never
    started the runtime read "legate wrote no profiles ...; usage: ...", a typing mistake's
    answer (a review).  `-o DIR` is legate's `--logdir DIR`; the other says what to check."""
    from legate_prof.cli.commands.record import _output_as_logdir
    assert _output_as_logdir(["--cpus", "1", "-o", "d", "p.py", "-o", "x"], 4) == \
        ["--cpus", "1", "--logdir", "d", "p.py", "-o", "x"]  # (the program's own -o stays)
    assert _output_as_logdir(["--output=d", "p.py"], 1) == ["--logdir=d", "p.py"]
    # (a module's own -o follows its name: an adversarial review)
    assert _output_as_logdir(["-o", "d", "--module", "tool", "-o", "x.csv"], 6) == \
        ["--logdir", "d", "--module", "tool", "-o", "x.csv"]
    prog = tmp_path / "tiny.py"
    prog.write_text("from legate_prof.runtime import numpy as np\n"
                    "print(float(np.ones((10,)).sum()))\n")
    p = _record(["--cpus", "1", "--gpus", "0", "--no-report", "-o", "out", str(prog)], tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert sorted(x.name for x in (tmp_path / "out").iterdir()) == ["legate_0.prof",
                                                                     "legate_0.runtime.prof"]
    plain = tmp_path / "plain.py"
    plain.write_text("print('hello')\n")
    p = _record(["--cpus", "1", "--gpus", "0", "-o", "none", str(plain)], tmp_path)
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("legate_prof: error:")]
    assert p.returncode != 0 and len(errors) == 1, p.stderr[-2000:]
    assert "did the program start Legate's runtime?" in errors[0] and "usage" not in errors[0]


def test_crash_markers_of_a_strangers_bundle_with_odd_fields_are_read_without_a_traceback(
        tmp_path):
    """A bundle's markers are a stranger's: a crash marker without a rank, or whose signal is
    a number, raised KeyError and TypeError in the code that tells a crash's signal; a rank
    "zero" raised ValueError where the timeline says why it is missing (an adversarial
    review).  A marker without a rank reads as a crash of no known rank; a rank or a field
    of another type is a damaged bundle: one line, no traceback."""
    from legate_prof.analyze.insights import find_insights
    from legate_prof.assemble.out_of_memory import attach_oom_report
    from legate_prof.store.bundle import write_bundle
    model = load_profile([str(SIGINT1)])
    (crash,) = [m for m in model.markers if m["kind"] == "crash"]
    for k, (m, ok) in enumerate(((({k: v for k, v in crash.items() if k != "rank"}), True),
                                 ({**crash, "rank": "zero"}, False),
                                 ({**crash, "fields": {"signal": 2}}, False),
                                 ({**crash, "fields": 7}, False))):
        path = tmp_path / f"odd{k}.lpbundle"
        write_bundle(model.evolve(markers=[m]), str(path))
        if not ok:
            with pytest.raises(ProfileError, match="markers damaged"):
                load_profile([str(path)])
            continue
        read = load_profile([str(path)])
        told, _ = attach_oom_report(read, SIGINT1 / "legate_console.log")
        for x in (read, told):
            assert [f["pattern"] for f in find_insights(x)].count("crash") == 1
