"""The report's pictures: a zoomed-out PNG per lane group, drawn by the desktop screenshot (the
caller hands it in: this package draws nothing itself) — where it is safe, in a forked copy
of this process while this one works out the rest of the report.

The report's other work (tiles, the critical path, statistics, findings) keeps one core busy;
its pictures took a fifth of its time (1.5-1.8 s of ~8 s on the guide's 4-rank run) on a
second core left idle.  A fork shares the loaded profile page by page: nothing is read,
built or sent again, and it draws from the same query source the report reads, so each
picture is the one drawn here, to the byte.  A fork is taken only from a process whose one
thread is this one (a fork copies other threads' locks, never the threads) and, the caller
says, where Qt has not started (the copy starts its own).  Where the copy fails, whatever the
reason, the pictures are drawn here as before: the same files, or the same error.
"""

from __future__ import annotations

import shutil
import threading
from concurrent.futures import ThreadPoolExecutor

from legate_prof.output_file import copy_ended, written_in_a_copy

# A report's picture grows to fit its lanes up to this height, not the 16,384 px of a
# screenshot: at 1,000 ranks each of its 11 pictures was 1,600 x 16,384 (105 MB of pixels to
# draw, encode and for a browser to hold) and showed the first hundred ranks all the same;
# a band at a picture's foot says which ranks it holds.
PICTURE_MAX_HEIGHT = 4096


def picture_list(profile):
    """The meta's ``pictures``: one per lane group present, its title and its file."""
    return [{"group": g, "title": title, "file": f"pictures/group_{g}.png"}
            for g, title in profile.summary_model().groups_present()]


def draw_pictures(profile, source, out, render):
    """Draw ``picture_list(profile)`` under ``out``: ``render(source, path, width, height,
    expand, save)``.  Every picture is drawn from the report's own query source, so what it
    worked out once (the lane tree, the messages' clock skew: 0.15 s a picture on the guide's
    4-rank run) is not worked out again per picture; each is encoded and written in a thread
    while the next is drawn (``save``), its error raised here."""
    written = []
    with ThreadPoolExecutor(1, thread_name_prefix="legate_prof-png") as pool:  # (waits)
        for pic in picture_list(profile):
            g = pic["group"]
            render(source, out / pic["file"], width=1600, height=900, expand=[g],
                   fit_at_most=PICTURE_MAX_HEIGHT,
                   save=lambda job: written.append(pool.submit(job)))
    for f in written:  # (the first picture that could not be written: its error)
        f.result()


class Pictures:
    """The report's pictures under ``out / "pictures"``, begun in a forked copy of this
    process when ``aside`` and a fork is safe (see the module), else drawn when asked.
    ``finished()`` returns the meta's list once every picture is written; ``stop()`` (the
    report failed) ends the copy and waits for it."""

    def __init__(self, profile, source, out, render, aside=False):
        self._args = (profile, source, out, render)
        self._child = None
        if aside and threading.active_count() == 1:
            self._child = written_in_a_copy(lambda: draw_pictures(*self._args))

    def finished(self):
        profile, source, out, render = self._args
        child, self._child = self._child, None
        if child is None or copy_ended(child) != 0:  # (not begun, or the copy failed)
            shutil.rmtree(out / "pictures", ignore_errors=True)  # (what it left half-written)
            (out / "pictures").mkdir()
            draw_pictures(profile, source, out, render)
        return picture_list(profile)

    def stop(self):
        child, self._child = self._child, None
        if child is not None:
            copy_ended(child, kill=True)
