"""Progress while a profile loads: on the terminal (stderr, a TTY only) and in the window."""

import io
import json
import os
import pty
import subprocess
import sys
import threading

import pytest

from legate_prof.load.loader import load_profile
from legate_prof.cli.progress import MAX_FILE_LINES, TerminalProgress, _Phases, wants_progress


class _Tty(io.StringIO):
    def isatty(self):
        return True


# ---- the terminal --------------------------------------------------------------------------

def test_phases_one_line_per_file_with_its_bytes_then_building():
    ph = _Phases({"legate_0.prof": 100, "legate_1.prof": 300})
    assert ph.call(0, 2, "reading legate_0.prof") == [
        ("begin", ("read", 0), "reading legate_0.prof", 100)]
    assert ph.call(1, 2, "reading legate_1.prof") == [
        ("finish", ("read", 0)), ("begin", ("read", 1), "reading legate_1.prof", 300)]
    assert ph.call(2, 2, "building timeline") == [
        ("finish", ("read", 1)), ("begin", ("build", "building timeline"), "building timeline",
                                  None)]


def test_phases_many_files_share_one_reading_line_counting_all_bytes():
    n = MAX_FILE_LINES + 2
    ph = _Phases({f"legate_{k}.prof": 10 * (k + 1) for k in range(n)})
    events = [ev for k in range(n) for ev in ph.call(k, n, f"reading legate_{k}.prof")]
    begins = [ev for ev in events if ev[0] == "begin"]
    assert begins == [("begin", ("read", "all"), f"reading {n} files", sum(10 * (k + 1)
                                                                              for k in range(n)))]
    # before file k: the bytes of files 0..k-1 are done
    advances = [ev[2] for ev in events if ev[0] == "advance"]
    assert advances == [sum(10 * (j + 1) for j in range(k)) for k in range(n)]
    assert ph.call(n, n, "building timeline")[0] == ("finish", ("read", "all"))


def test_no_progress_off_a_terminal_or_when_quiet():
    assert not wants_progress(io.StringIO())
    assert wants_progress(_Tty())
    assert not wants_progress(_Tty(), quiet=True)


def test_a_terminal_sees_each_phase_of_a_real_load(sample_profile):
    out = _Tty()
    with TerminalProgress([sample_profile], stream=out, delay_s=0) as bar:
        load_profile([sample_profile], progress=bar)
    text = out.getvalue()
    assert f"reading {sample_profile.name}" in text
    assert "building timeline" in text
    size = os.path.getsize(sample_profile)
    assert f"{size / 1024:.1f}/{size / 1024:.1f} KiB" in text  # the file's bytes, all done


def test_not_a_terminal_gets_nothing(sample_profile):
    out = io.StringIO()
    with TerminalProgress([sample_profile], stream=out, delay_s=0) as bar:
        load_profile([sample_profile], progress=bar)
    assert out.getvalue() == ""


def _stats_with_stderr_on_a_tty(args):
    """Run ``legate_prof stats --json`` with stderr on a pseudo-terminal: (stdout, terminal)."""
    master, slave = pty.openpty()
    env = dict(os.environ, LEGATE_PROF_PROGRESS_DELAY_S="0", TERM="xterm", COLUMNS="120")
    p = subprocess.Popen([sys.executable, "-m", "legate_prof", "stats", "--json", *args],
                         stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    seen = []

    def drain():
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed its end
                return
            if not chunk:
                return
            seen.append(chunk)
    t = threading.Thread(target=drain)
    t.start()
    stdout, _ = p.communicate(timeout=300)
    t.join(60)
    os.close(master)
    assert p.returncode == 0
    return stdout, b"".join(seen).decode("utf-8", "replace")


def test_stats_json_stays_clean_while_the_terminal_shows_progress(sample_profile):
    stdout, tty = _stats_with_stderr_on_a_tty([str(sample_profile)])
    assert "building timeline" in tty and f"reading {sample_profile.name}" in tty
    assert isinstance(json.loads(stdout), dict)  # stdout holds the JSON alone
    assert b"building" not in stdout and b"\x1b" not in stdout


def test_quiet_draws_nothing_on_the_terminal(sample_profile):
    stdout, tty = _stats_with_stderr_on_a_tty(["--quiet", str(sample_profile)])
    assert json.loads(stdout)
    assert "reading" not in tty and "building" not in tty


# ---- the window ----------------------------------------------------------------------------

pytest.importorskip("pytestqt")


def test_window_shows_progress_before_the_timeline(qtbot, sample_profile):
    """The window is up with a progress panel while the real loader runs in a worker thread;
    each step waits for the test, so what the window shows mid-load is checked, not raced."""
    from legate_prof.analyze.insights import find_insights
    from legate_prof.viewer.app import MainWindow
    go = threading.Semaphore(0)

    def load(progress):
        def step(i, n, what):
            progress(i, n, what)
            go.acquire(timeout=60)
        return load_profile([sample_profile], progress=step)
    win = MainWindow(files=[sample_profile], load=load, findings=find_insights)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    assert win.timeline is None and win.centralWidget() is win.loading
    assert sample_profile.name in win.loading.title.text()
    assert not win.search.isEnabled()
    win.start_loading()

    qtbot.waitUntil(lambda: win.loading.step.text() == f"reading {sample_profile.name}")
    assert (win.loading.bar.minimum(), win.loading.bar.maximum(), win.loading.bar.value()) == \
        (0, 1, 0)
    assert win.timeline is None and win.loading.isVisible()
    go.release()

    qtbot.waitUntil(lambda: win.loading.step.text() == "building timeline")
    assert win.loading.bar.maximum() == 0  # busy: building has no steps to count
    assert win.timeline is None and win.loading.isVisible()
    go.release()

    qtbot.waitUntil(lambda: win.timeline is not None and not win.showing_ranks_so_far,
                    timeout=60_000)
    assert win.loading is None and win.centralWidget() is not None
    assert win.search.isEnabled()
    assert win.source.info().lanes  # the timeline has the profile's lanes
    assert not win.grab().isNull()
    qtbot.waitUntil(lambda: win.findings is not None, timeout=60_000)  # the dock follows
    assert win.findings.findings == find_insights(win.model)


def test_view_shows_the_timeline_when_loaded_and_exits_0(qtbot, sample_profile, monkeypatch):
    """``legate_prof view`` in-process: the window loads in the background, then shows the
    timeline and the findings; closing it ends the command with 0."""
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    rc, lanes = _view_until_shown(sample_profile, with_findings=True)
    assert rc == 0 and lanes > 0


def test_view_of_per_rank_bundles_shows_them_unmerged_with_the_findings_of_all(
        qtbot, synthetic_8, tmp_path, monkeypatch):
    """``legate_prof view DIR`` of per-rank bundles: the timeline draws the ranks unmerged,
    and the findings dock says what the findings of the whole profile say, with their costs
    (``costed_findings``: each one's wall-clock cost and share of the run)."""
    import shutil

    from legate_prof.analyze.costed_findings import costed_findings
    from legate_prof.assemble.rank_set import RankSet
    from legate_prof.query import RankedSource
    from legate_prof.viewer.app import MainWindow
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    files = [shutil.copy(p, tmp_path) for p in synthetic_8]
    from legate_prof.cli import main as cli_main
    assert cli_main(["convert", "--per-rank", "--quiet", *files]) == 0
    bundles = tmp_path / "bundles"
    bundles.mkdir()
    for b in tmp_path.glob("*.lpbundle"):
        b.rename(bundles / b.name)
    shown = []
    real = MainWindow._found

    def found(self, findings):
        shown.append((self.model, findings))
        real(self, findings)
    monkeypatch.setattr(MainWindow, "_found", found)
    rc, lanes = _view_until_shown(bundles, with_findings=True)
    assert rc == 0 and lanes > 0
    (model, findings), = shown
    assert isinstance(model, RankSet)
    assert findings == costed_findings(load_profile(files, workers=1))
    assert findings["findings"] and all("cost_words" in f for f in findings["findings"])


def _view_until_shown(profile, with_findings=False):
    """Run ``legate_prof view`` in this process until its window shows the timeline (and the
    findings), then close it: (exit status, lanes shown)."""
    from PySide6 import QtCore, QtWidgets

    from legate_prof import cli
    from legate_prof.viewer.app import MainWindow
    seen = {}

    def poll():
        for w in QtWidgets.QApplication.topLevelWidgets():
            if (isinstance(w, MainWindow) and w.isVisible() and w.timeline is not None
                    and not w.showing_ranks_so_far and (w.findings is not None or not with_findings)):
                seen["lanes"] = len(w.source.info().lanes)
                w.close()
    timer = QtCore.QTimer()
    timer.timeout.connect(poll)
    timer.start(20)
    QtCore.QTimer.singleShot(120_000, QtWidgets.QApplication.instance().quit)  # if it hangs
    rc = cli.main(["view", "--no-cache", "--quiet", str(profile)])
    timer.stop()
    return rc, seen.get("lanes", 0)


@pytest.mark.parametrize("content", [None, b"not a profile\n"])
def test_view_of_bad_input_prints_one_line_naming_the_file_and_exits_2(tmp_path, content):
    path = tmp_path / "legate_0.prof"
    if content is not None:
        path.write_bytes(content)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    p = subprocess.run([sys.executable, "-m", "legate_prof", "view", str(path)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 2
    errors = [ln for ln in p.stderr.splitlines() if "error" in ln]
    assert len(errors) == 1 and str(path) in errors[0]
    assert "Traceback" not in p.stderr


def test_closing_the_window_while_it_loads_ends_the_process_cleanly(tmp_path, sample_profile):
    """Whenever the window closes (here: as soon as it is up, the worker reading, building or
    looking for findings), ``view`` exits 0 and does not abort."""
    child = tmp_path / "close_early.py"
    child.write_text(
        "import sys\n"
        "from PySide6 import QtCore, QtWidgets\n"
        "app = QtWidgets.QApplication(['legate_prof'])\n"
        "from legate_prof import cli\n"
        "from legate_prof.viewer.app import MainWindow\n"
        "def poll():\n"
        "    for w in QtWidgets.QApplication.topLevelWidgets():\n"
        "        if isinstance(w, MainWindow) and w.isVisible():\n"
        "            w.close()\n"
        "t = QtCore.QTimer(); t.timeout.connect(poll); t.start(0)\n"
        "sys.exit(cli.main(['view', '--no-cache', sys.argv[1]]))\n")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    for _ in range(3):
        p = subprocess.run([sys.executable, str(child), str(sample_profile)], env=env,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]
        assert "Traceback" not in p.stderr and "terminate" not in p.stderr


def test_phases_rank_files_built_by_workers_share_one_line():
    """The workers' ticks ("building ranks", every 100 ms) and each rank done make one line
    that says the last rank done, not one line per call."""
    from legate_prof.cli.progress import _Phases
    ph = _Phases()
    begins = []
    for i, msg in [(0, "building ranks")] * 5 + [(1, "built legate_0.prof (1 of 2 ranks)"),
                                                  (1, "built legate_0.prof (1 of 2 ranks)"),
                                                  (2, "built legate_1.prof (2 of 2 ranks)")]:
        begins += [e for e in ph.call(i, 2, msg) if e[0] == "begin"]
    assert len(begins) == 1 and begins[0][1] == ("ranks",)
    assert ph.call(2, 2, "built legate_1.prof (2 of 2 ranks)")[-1][3].startswith("built legate_1")


def test_view_starts_reading_before_the_window_is_made(monkeypatch, sample_profile):
    """`view` starts loading before it imports Qt and makes the window, so the rank files
    are read and built meanwhile; the window then shows that model."""
    import threading

    from legate_prof import cli
    from legate_prof.cli.commands import view as cli_view
    from legate_prof.load import loader
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    entered, order = threading.Event(), []
    real = loader.load_profile

    def spy(*a, **k):
        entered.set()
        return real(*a, **k)
    monkeypatch.setattr(loader, "load_profile", spy)
    monkeypatch.setattr(cli_view, "_window_problem", lambda: order.append(entered.wait(60)))
    rc, lanes = _view_until_shown(sample_profile)
    assert order == [True]  # loading had begun when the window's Qt work started
    assert rc == 0 and lanes > 0
