"""Shared fixtures: real legate runs (once per session) and synthetic multi-rank profiles."""

import atexit
import contextlib
import json
import os
import shutil
import tempfile
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
# offscreen, on a desktop's screen (1920×1200): the window opens at its default size, as the
# tests' windows assume (offscreen's own 800×800 screen would cap it: ``app.first_size``)
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen:configfile="
                      + str(ROOT / "tests" / "data" / "offscreen_screen.json"))
# pictures drawn a minute apart stay the same picture (their header's clock): pixel comparisons
# must not depend on when the minute turns (test_screenshot_date_is_reproducible says it works)
os.environ["SOURCE_DATE_EPOCH"] = "1764000000"
# `view` opens its window on the offscreen platform too (the tests drive it); a user's
# `view` there renders a picture instead (test_view_on_a_hidden_platform_writes_a_picture)
os.environ["LEGATE_PROF_HIDDEN_WINDOW"] = "1"
# Temporaries and the registry of those being written (legate_prof_writing_UID, under
# $TMPDIR): never the user's, one per test session -- a test that kills a writer on purpose
# must not leave a note for the user's next command, nor a test read the user's
_TESTS_TMP = Path(tempfile.gettempdir()) / f"legate_prof_tests_{os.getuid()}"
_TESTS_TMP.mkdir(mode=0o700, exist_ok=True)
os.environ["TMPDIR"] = str(_TESTS_TMP)  # (pytest's own folders too: it keeps the last three)
tempfile.tempdir = None
# The cache of built timelines: never the user's, one per test session (gone with it: each
# session left one behind)
os.environ["LEGATE_PROF_CACHE_DIR"] = tempfile.mkdtemp(prefix="legate_prof_test_cache_")
atexit.register(shutil.rmtree, os.environ["LEGATE_PROF_CACHE_DIR"], ignore_errors=True)



@pytest.fixture(autouse=True)
def own_cache(tmp_path_factory, monkeypatch):
    """Each test its own cache folder: a command's kept answer (``cli/answers.py``) is keyed
    by its inputs, options and code, not by what a test patched, so no test may read
    another's."""
    monkeypatch.setenv("LEGATE_PROF_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    yield
    # a command run in this process left a copy writing its cache entry: done before the next
    # test (a legate run recorded beside it came out otherwise: a viewer test read its bands)
    from legate_prof.load.loader import wait_for_writers
    wait_for_writers()


@pytest.fixture(autouse=True)
def qt_garbage_collected():
    """Once Qt runs in this process, what a test dropped in reference cycles (widgets,
    timeline items, their timers) is collected as the test ends, not whenever the collector
    next runs: collected later, in the middle of another test's Qt calls, it crashed the
    whole suite (a segfault, twice at the same test of test_viewer_responsive 1,134 tests
    in, in teardown and in the call; none in a run collecting after every test)."""
    yield
    core = sys.modules.get("PySide6.QtCore")
    if core is not None and core.QCoreApplication.instance() is not None:
        import gc
        gc.collect()


SAMPLE = ROOT / "fixtures" / "real" / "legate26.06_cpu2_myprof_0.prof"
PROGRAMS = ROOT / "fixtures" / "programs"


@pytest.fixture(scope="session")
def sample_profile():
    """A real legate 26.06 profile (2 CPUs, a small program), kept in the repository."""
    return SAMPLE


@pytest.fixture(scope="session")
def legate_run(tmp_path_factory):
    """Run a fixture program under the real `legate --cpus 2 --gpus 0 --profile`, cached."""
    from fixtures.legate_run import run_legate
    cache = {}

    def run(name, env_extra_key=None, **kw):
        key = (name, env_extra_key, tuple(sorted(kw.items())))
        if key not in cache:
            work = tmp_path_factory.mktemp(Path(name).stem)
            manifest = work / "manifest.json"
            prog = Path(name) if Path(name).is_absolute() else (
                PROGRAMS / name if (PROGRAMS / name).exists() else ROOT / "examples" / name)
            env = {"FIXTURE_MANIFEST": str(manifest)}
            if env_extra_key:
                env[env_extra_key] = "1"
            r = run_legate(prog, work, env_extra=env, **kw)
            r.manifest = json.loads(manifest.read_text()) if manifest.exists() else None
            cache[key] = r
        return cache[key]

    return run


@pytest.fixture(scope="session")
def synthetic_8(tmp_path_factory):
    """An 8-rank synthetic profile with GPUs, in the real format."""
    from fixtures.synthetic import generate
    d = tmp_path_factory.mktemp("syn8")
    return generate(d, ranks=8, items=40_000, seed=7)


@pytest.fixture
def copy_of(tmp_path):
    def copy(src, name=None):
        dst = tmp_path / (name or Path(src).name)
        shutil.copy(src, dst)
        return dst
    return copy


@pytest.fixture(scope="session")
def guide_examples(legate_run, tmp_path_factory):
    """inefficient.py and efficient.py with N scaled down; lines are the guide's."""
    d = tmp_path_factory.mktemp("examples")
    runs = {}
    for name in ("inefficient.py", "efficient.py"):
        src = (ROOT / "examples" / name).read_text()
        assert "N = 10_000_000" in src
        prog = d / name
        prog.write_text(src.replace("N = 10_000_000", "N = 200_000"))
        r = legate_run(str(prog))
        assert r.returncode == 0, r.output[-2000:]
        runs[name] = (prog, r.profiles)
    return runs


@contextlib.contextmanager
def small_tmpfs(mnt, size):
    """A tmpfs of ``size`` ("96k") mounted at the folder ``mnt`` (made here) while the block
    runs; the test is skipped where this process cannot mount one (not root, no mount)."""
    import subprocess
    mnt.mkdir()
    if not shutil.which("mount") or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root: a full file system is not tested here")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({p.stderr.strip()[:80]})")
    try:
        yield mnt
    finally:
        if subprocess.run(["umount", str(mnt)], capture_output=True).returncode != 0:
            # (busy: a copy of the test's process still keeping a timeline there — it had
            # left the mount behind, pytest then failing to remove its folder)
            from legate_prof.load.loader import wait_for_writers
            wait_for_writers()
            if subprocess.run(["umount", str(mnt)], capture_output=True).returncode != 0:
                subprocess.run(["umount", "-l", str(mnt)], check=False)
