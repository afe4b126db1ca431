"""`report` asked again of the same run writes the folder it wrote, without reading the logs
(``cli.answers.folder_answered``): the guide's N = 10 M example's report asked again drew its
tiles and pictures again (8 s). Never for another question, a changed input or other code;
never a folder kept from a report Qt could not draw pictures for; a kept folder that is not
one (a path leaving it) is not written, and the report is made again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from legate_prof.cli import main
from test_answers import _unreadable, run_copy  # noqa: F401 - (mpi4 copied; logs unreadable)


def ask(capsys, *argv):
    """(exit status, stdout, stderr) of ``argv``; stderr without the cache folder's first-use
    note and the note of a report replaced (said only where there was one)."""
    from legate_prof.store.cache import FIRST_USE_NOTE
    code = main([*map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, "".join(line for line in out.err.splitlines(keepends=True)
                                  if not line.startswith(FIRST_USE_NOTE)
                                  and "written there before" not in line)


def folder(path):
    """{path inside: bytes} of every file under ``path``, and its folders."""
    path = Path(path)
    return ({str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()},
            sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_dir()))


def test_asked_again_the_same_folder_without_the_logs(capsys, monkeypatch, run_copy, tmp_path):
    """Pictures and all: the same files, byte for byte, the same words and exit status, at
    the same place (replacing it) or another (``-o`` is not part of the question)."""
    first = ask(capsys, "report", run_copy, "-o", tmp_path / "a")
    assert first[0] == 0 and first[1] == f"wrote {tmp_path / 'a' / 'index.html'}\n"
    made = folder(tmp_path / "a")
    assert any(p.startswith("pictures/group_") for p in made[0]), sorted(made[0])[:5]
    _unreadable(monkeypatch)
    assert ask(capsys, "report", run_copy, "-o", tmp_path / "a") == first
    assert folder(tmp_path / "a") == made
    again = ask(capsys, "report", run_copy, "-o", tmp_path / "b")
    assert again == (first[0], first[1].replace(str(tmp_path / "a"), str(tmp_path / "b")),
                     first[2])
    assert folder(tmp_path / "b") == made
    # (a folder of the user's there is still refused, before anything is written)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    code, _, err = ask(capsys, "report", run_copy, "-o", tmp_path / "mine")
    assert code == 2 and "is not a legate_prof report" in err
    assert os.listdir(tmp_path / "mine") == ["notes.txt"]


def test_another_question_a_changed_input_or_other_code_are_worked_out_again(
        capsys, monkeypatch, run_copy, tmp_path):
    import legate_prof.store.results as results
    ask(capsys, "report", run_copy, "--no-pictures", "-o", tmp_path / "a")
    _unreadable(monkeypatch)
    assert ask(capsys, "report", run_copy, "--no-pictures", "-o", tmp_path / "b")[0] == 0
    for argv in ([], ["--no-pictures", "--stop", "1s"], ["--no-pictures", "--ranks", "0-1"]):
        with pytest.raises(AssertionError, match="read again"):  # (pictures: another question)
            ask(capsys, "report", run_copy, *argv, "-o", tmp_path / "c")
    monkeypatch.setattr(results, "_CODE", "another version")
    with pytest.raises(AssertionError, match="read again"):
        ask(capsys, "report", run_copy, "--no-pictures", "-o", tmp_path / "c")
    monkeypatch.setattr(results, "_CODE", None)  # (this code's stamp again)
    assert ask(capsys, "report", run_copy, "--no-pictures", "-o", tmp_path / "c")[0] == 0
    with (run_copy / "legate_0.runtime.prof").open("ab") as f:
        f.write(b"\x00")  # (a changed input: another run's question)
    with pytest.raises(AssertionError, match="read again"):
        ask(capsys, "report", run_copy, "--no-pictures", "-o", tmp_path / "d")


def test_a_report_without_its_pictures_for_want_of_qt_is_not_kept(capsys, monkeypatch,
                                                                 run_copy, tmp_path):
    from legate_prof.cli.commands import report
    monkeypatch.setattr(report, "picture_renderer",
                        lambda: (None, "pictures skipped: no Qt here", False))
    assert ask(capsys, "report", run_copy, "-o", tmp_path / "a")[0] == 0
    monkeypatch.undo()
    _unreadable(monkeypatch)
    with pytest.raises(AssertionError, match="read again"):
        ask(capsys, "report", run_copy, "-o", tmp_path / "a")


def test_a_kept_folder_that_is_not_one_is_not_written(capsys, run_copy, tmp_path):
    """A path leaving the folder, paths that collide (a file where a folder goes), folders
    not a list, a marker that does not list the files, bytes that are not: nothing is
    written (the report is then made from the logs); a review found the collision failing
    every later ask, exit 2."""
    from legate_prof.report.folder import MARKER, report_folder, write_again
    assert ask(capsys, "report", run_copy, "--no-pictures", "--no-cache", "-o",
               tmp_path / "made")[0] == 0
    good = report_folder(tmp_path / "made")
    assert good is not None and MARKER in good["files"] and "tiles" in good["dirs"]
    files = good["files"]
    for bad in ({**good, "files": {**files, "../out.txt": b"x"}},
                {**good, "files": {**files, "/tmp/out.txt": b"x"}},
                {**good, "dirs": ["tiles/../../up"]},
                {**good, "files": {**files, "index.html/x": b"junk"}},
                {**good, "dirs": "tiles"},
                {**good, "files": {**files, "extra.txt": b"not in the marker"}},
                {**good, "files": {k: v for k, v in files.items() if k != MARKER}},
                {**good, "files": {**files, "index.html": "text"}},
                {"files": None}, None):
        assert write_again(bad, tmp_path / "r") is False, sorted(bad or ())
        assert not (tmp_path / "r").exists() and not (tmp_path / "out.txt").exists()
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".r")]  # (no temporary)
    assert write_again(good, tmp_path / "r") is True
    assert folder(tmp_path / "r") == folder(tmp_path / "made")


def test_this_processs_own_notes_are_not_said_again(capsys, monkeypatch, run_copy, tmp_path):
    """A report that replaced an earlier one says so; asked again elsewhere, nothing is
    replaced and nothing says it was (the process's notes are not the answer's)."""
    argv = ("report", run_copy, "--no-pictures")
    assert ask(capsys, *argv, "--no-cache", "-o", tmp_path / "a")[0] == 0
    code = main([*map(str, argv), "-o", str(tmp_path / "a")])  # (worked out, replacing)
    assert code == 0 and "replaced the legate_prof report" in capsys.readouterr().err
    _unreadable(monkeypatch)
    code = main([*map(str, argv), "-o", str(tmp_path / "b")])
    err = capsys.readouterr().err
    assert code == 0 and "legate_prof: note:" not in err, err


def test_kept_results_are_bounded_in_bytes(tmp_path, monkeypatch):
    """A report folder is kept whole (up to 64 MB): the results' folder keeps at most
    ``MAX_RESULTS_TOTAL`` bytes of them, the least recently used going first."""
    import legate_prof.store.results as results
    monkeypatch.setattr(results, "MAX_RESULTS_TOTAL", 3 << 20)
    (tmp_path / "x").write_bytes(b"a run")
    (tmp_path / "cache").mkdir(mode=0o700)
    kept = results.RunResults([str(tmp_path / "x")], directory=tmp_path / "cache")
    for k in range(5):
        kept.put("folder-report", {"bytes": b"x" * (1 << 20)}, {"k": k})
        p = kept.path("folder-report", {"k": k})
        os.utime(p, (1000 + k, 1000 + k))
    kept.put("answer-stats", {"out": "small"}, {})
    assert [k for k in range(5) if kept.path("folder-report", {"k": k}).exists()] == [3, 4]
    assert kept.get("answer-stats", {}) == {"out": "small"}


def test_a_date_asked_for_is_another_question(capsys, monkeypatch, run_copy, tmp_path):
    """``SOURCE_DATE_EPOCH``: the pictures' time asked for. A folder kept from a report made
    without it said when it was drawn (a review: "2026-12-02 16:52" where `--no-cache` said
    "2023-11-14 22:13 UTC"); asked with it, the report is made again, and kept for it."""
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    ask(capsys, "report", run_copy, "--no-pictures", "-o", tmp_path / "a")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    _unreadable(monkeypatch)
    with pytest.raises(AssertionError, match="read again"):
        ask(capsys, "report", run_copy, "--no-pictures", "-o", tmp_path / "b")
