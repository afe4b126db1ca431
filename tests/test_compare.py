"""`legate_prof compare` of the guide's inefficient and efficient runs (recorded for real)."""

import json
import subprocess
import sys
from pathlib import Path

from PySide6 import QtGui


def test_compare_shows_the_drop_in_tasks_at_the_loop_lines(guide_examples, tmp_path):
    (ineff, a), (eff, b) = guide_examples["inefficient.py"], guide_examples["efficient.py"]
    out = tmp_path / "both.png"
    dirs = [str(Path(profiles[0]).parent) for profiles in (a, b)]  # runs as directories
    p = subprocess.run([sys.executable, "-m", "legate_prof", "compare", *dirs, "--json", "-o",
                        str(out)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    c = json.loads(p.stdout)
    lines = {r["line"]: r for r in c["lines"]}
    for n in (21, 22, 23):  # the slice loop: thousands of tasks, none in the efficient run
        tasks_a, tasks_b = lines[f"inefficient.py:{n}"]["tasks"]
        assert tasks_a >= 40 and tasks_b == 0
    total = {r["group"]: r for r in c["groups"]}
    assert total["utility"]["items"][0] > 5 * total["utility"]["items"][1]
    img = QtGui.QImage(str(out))
    assert img.width() == 1600 and img.height() == 1200


def test_compare_text_names_both_runs(guide_examples):
    (ineff, a), (eff, b) = guide_examples["inefficient.py"], guide_examples["efficient.py"]
    p = subprocess.run([sys.executable, "-m", "legate_prof", "compare", a[0], b[0]],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "inefficient.py:21" in p.stdout and "->" in p.stdout and "utility" in p.stdout
