"""The loader's own step where the rank workers' builds are given up and the ranks are built
again in one process (``partial.building_again()``), and how ``legate_prof view`` hands it
to the window (``cli.commands.view``: ``EarlyLoad``, ``window_hand_over``): the window no
longer guesses it from a progress text's words."""

import argparse
import shutil
import threading
from pathlib import Path

import pytest

from legate_prof.load import loader, rank_workers
from legate_prof.load.loader import load_profile


class Window:
    """What a window hands a load: progress steps, the ranks so far, the rebuild said."""

    def __init__(self, then=None):
        self.said = []
        self._then = then

    def __call__(self, done, total, what):
        self.said.append(("step", what))

    def partial(self, profile, files):
        self.said.append(("so far", files))

    def building_again(self):
        self.said.append(("again",))
        if self._then is not None:
            self._then()

    def steps_after_again(self):
        k = self.said.index(("again",))
        return [x[1] for x in self.said[k:] if x[0] == "step"]


@pytest.fixture
def cut_rank(synthetic_8, tmp_path, monkeypatch):
    """synthetic_8's logs with rank 7's cut before its machine description (its worker
    fails, built last: the smallest), built by 2 workers, the ranks so far handed over."""
    files = [shutil.copy(f, tmp_path) for f in synthetic_8]
    Path(files[7]).write_bytes(Path(files[7]).read_bytes()[:2000])
    monkeypatch.setattr(rank_workers, "PARTIAL_MIN_S", 0.0)
    return files


def test_the_loader_says_it_builds_the_ranks_again_as_a_step_of_its_own(cut_rank,
                                                                          synthetic_8):
    """Once, after the ranks so far and before the first file is read again; never where
    the workers' builds are used; a ``partial`` without ``building_again`` is called as
    ever."""
    from legate_prof.cli.commands.view import window_hand_over
    win = Window()
    model = load_profile(cut_rank, workers=2, ranked=True, progress=win,
                         partial=window_hand_over(win))
    assert [x for x in win.said if x[0] != "step"] == [("so far", 8), ("again",)]
    before = [x[1] for x in win.said[:win.said.index(("again",))] if x[0] == "step"]
    assert not any(w.startswith("reading ") for w in before), before
    assert win.steps_after_again()[0].startswith("reading ")
    assert type(model).__name__ == "TraceModel"  # (built in this process)
    fine = Window()
    load_profile(synthetic_8, workers=2, ranked=True, progress=fine,
                 partial=window_hand_over(fine))
    assert ("again",) not in fine.said and ("so far", 8) in fine.said
    plain = []
    load_profile(cut_rank, workers=2, ranked=True, partial=lambda p, n: plain.append(n))
    assert plain == [8]
    assert window_hand_over(lambda done, total, what: None) is None


def test_view_hands_building_again_to_a_window_that_comes_after_it(cut_rank, monkeypatch):
    """``view``'s load begins before the window: the loader's step said before the window
    takes the load over is handed to it then, after the ranks so far, once."""
    from legate_prof.cli.commands.view import EarlyLoad
    monkeypatch.setenv("LEGATE_PROF_WORKERS", "2")
    reading, go = threading.Event(), threading.Event()
    read = loader._read_inputs

    def held(*a, **k):  # (the rest read once the window has been told)
        reading.set()
        go.wait(60)
        return read(*a, **k)
    monkeypatch.setattr(loader, "_read_inputs", held)
    early = EarlyLoad(cut_rank, argparse.Namespace(cache=False, ranks=None, quiet=True))
    assert reading.wait(60)
    win = Window(then=go.set)
    model = early.wait(win)
    assert [x for x in win.said if x[0] != "step"] == [("so far", 8), ("again",)]
    assert any(w.startswith("reading ") for w in win.steps_after_again())
    assert len(model.ranks) == 7  # (rank 7's file cannot be read)
