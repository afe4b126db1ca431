"""The array runtime on Legate: NumPy results, and the seed guide's programs under legate --profile."""

import json
import subprocess
import sys
from pathlib import Path

import pytest


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _stats(paths, *extra):
    p = subprocess.run([sys.executable, "-m", "legate_prof", "stats", "--json", *extra,
                        *map(str, paths)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_results_equal_numpy(legate_run):
    run = legate_run("runtime_vs_numpy.py")
    assert run.returncode == 0, run.output[-3000:]
    failed = [k for k, ok in run.manifest["checks"].items() if not ok]
    assert failed == []
    assert len(run.manifest["checks"]) >= 25


@pytest.fixture(scope="module")
def small_examples(tmp_path_factory):
    """The seed's Example 1 programs with N shrunk so the suite stays fast (import unchanged)."""
    d = tmp_path_factory.mktemp("examples")
    out = {}
    for name in ("inefficient.py", "efficient.py"):
        src = (EXAMPLES / name).read_text()
        assert "from legate_prof.runtime import numpy as np" in src
        assert "N = 10_000_000" in src
        (d / name).write_text(src.replace("N = 10_000_000", "N = 400_000"))
        out[name] = d / name
    return out


def test_inefficient_launches_10x_the_tasks_of_efficient(legate_run, small_examples):
    counts = {}
    for name, path in small_examples.items():
        run = legate_run(str(path))
        assert run.returncode == 0, run.output[-3000:]
        s = _stats(run.profiles)
        mine = [t for t in s["tasks"] if t["name"] not in ("Toplevel Task", "External Thread")]
        counts[name] = sum(t["count"] for t in mine)
        # every task's provenance points into the example file
        for t in mine:
            assert t["provenances"], t["name"]
            assert all(p.startswith(str(path) + ":") for p in t["provenances"]), t
    assert counts["inefficient.py"] >= 10 * counts["efficient.py"], counts
    # the 4096-element loop is the barcode: hundreds of tasks at the loop's lines
    s = _stats(legate_run(str(small_examples["inefficient.py"])).profiles)
    loop_lines = {f"{small_examples['inefficient.py']}:{n}" for n in (21, 22, 23)}
    in_loop = sum(t["count"] for t in s["tasks"] if set(t["provenances"]) & loop_lines)
    assert in_loop >= 400_000 // 4096 * 3


def test_task_names_say_what_ran(legate_run, small_examples):
    run = legate_run(str(small_examples["inefficient.py"]))
    names = {t["name"] for t in _stats(run.profiles)["tasks"]}
    assert {"BinaryOp", "Compare", "Nonzero", "Gather", "Scatter", "Random", "Convert",
            "BoolMaskSelect", "BoolMaskAssign"} <= names
    run = legate_run(str(small_examples["efficient.py"]))
    names = {t["name"] for t in _stats(run.profiles)["tasks"]}
    assert "PutMask" in names and "Nonzero" not in names


def test_oom_example_fails_with_legates_report(legate_run):
    run = legate_run("oom.py", cpus=1, sysmem=40, env_extra_key="LEGATE_TEST")
    assert run.returncode != 0
    out = run.output
    assert "Failed to allocate" in out and "of kind SYSTEM_MEM" in out
    assert "BinaryOp[" in out and "oom.py:16]" in out
    for line in (4, 7, 13):
        assert f"LogicalStore allocated at {EXAMPLES / 'oom.py'}:{line}" in out


@pytest.mark.parametrize("fixed", ["oom_stencil_hint.py", "oom_prefetch.py", "oom_inplace.py"])
def test_fixed_oom_versions_succeed_with_the_same_pool(legate_run, fixed):
    run = legate_run(fixed, cpus=1, sysmem=40, env_extra_key="LEGATE_TEST")
    assert run.returncode == 0, run.output[-3000:]
    assert "Failed to allocate" not in run.output
