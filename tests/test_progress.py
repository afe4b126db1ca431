"""Terminal progress: a bar on a terminal, nothing in pipes (so --json output stays clean)."""

import io
import subprocess
import sys

from legate_prof.progress import TerminalProgress


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_terminal_gets_a_bar_with_counts_and_the_step(monkeypatch):
    monkeypatch.setattr(TerminalProgress, "DELAY_S", 0.0)
    out = _Terminal()
    p = TerminalProgress(out)
    p(1, 4, "built legate_0.prof (1 of 4 ranks)")
    p(3, 4, "built legate_2.prof (3 of 4 ranks)")
    p.close()
    text = out.getvalue()
    assert "3/4" in text and "legate_2.prof" in text


def test_a_pipe_gets_nothing(monkeypatch):
    monkeypatch.setattr(TerminalProgress, "DELAY_S", 0.0)
    out = io.StringIO()
    p = TerminalProgress(out)
    p(1, 2, "reading legate_0.prof")
    p.close()
    assert out.getvalue() == ""


def test_stats_json_on_a_pipe_has_clean_output(synthetic_8):
    r = subprocess.run([sys.executable, "-m", "legate_prof", "stats", "--json", *map(str, synthetic_8)],
                       capture_output=True, text=True, timeout=300,
                       env={**__import__("os").environ, "LEGATE_PROF_WORKERS": "2"})
    assert r.returncode == 0
    assert r.stdout.lstrip().startswith("{") and "\r" not in r.stderr and "\x1b" not in r.stderr
