"""`legate_prof report`: an offline folder (index.html + pictures) that never clobbers a folder."""

import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

from PySide6 import QtGui

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "legate_prof" / "data" / "example_legate_0.prof"


class _Refs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs, self.text = [], []

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k in ("src", "href"):
                self.refs.append(v)

    def handle_data(self, data):
        self.text.append(data)


def report(*args, cwd=None):
    # the installed command, as a user runs it (`python -m` would import ./legate_prof)
    exe = str(Path(sys.executable).with_name("legate_prof"))
    return subprocess.run([exe, "report", *map(str, args)],
                          capture_output=True, text=True, timeout=300, cwd=cwd,
                          env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))


def test_report_is_an_offline_folder_with_findings_stats_and_pictures(tmp_path):
    out = tmp_path / "legate_prof"
    r = report(EXAMPLE, "-o", out)
    assert r.returncode == 0, r.stderr
    page = (out / "index.html").read_text()
    p = _Refs()
    p.feed(page)
    assert p.refs and all(not ref.startswith(("http:", "https:", "//")) for ref in p.refs)
    for ref in p.refs:  # every picture is in the folder and is a real image
        assert not QtGui.QImage(str(out / ref)).isNull(), ref
    assert {"timeline.png", "group_cpu.png", "group_utility.png"} <= set(p.refs)
    text = " ".join(p.text)
    assert "tiny_tasks" in text and "example_prog.py:21" in text  # the insights findings
    assert "Random" in text and "Mapper calls" in text  # the statistics tables
    # a second report replaces the first as a whole
    r = report(EXAMPLE, "-o", out)
    assert r.returncode == 0 and not list(tmp_path.glob(".legate_prof_report.*"))


def test_report_never_replaces_a_folder_that_is_not_a_report(tmp_path):
    src = tmp_path / "legate_prof"
    src.mkdir()
    (src / "__init__.py").write_text("# somebody's package\n")
    r = report(EXAMPLE, cwd=tmp_path)  # default folder: ./legate_prof
    assert r.returncode == 2 and "is not a legate_prof report" in r.stderr
    assert (src / "__init__.py").read_text() == "# somebody's package\n"
    assert "Traceback" not in r.stderr
