"""The critical path in the window: computed in a thread after the first frame (never in the
window's own), walked item by item (``[`` back to what an item waited for, ``]`` forward to
the first item it held up) — or, while the run's path is drawn and the item is on it, step by
step along that path (``step_on_path``) — and the run's path as arrays the timeline draws over
its lanes.

Everything here reads the query API only: ``prepare_critical_path``, ``critical_predecessor``,
``critical_successors``, ``run_critical_path`` and the details' "Waited for" / "Created by"
rows (the same words as the details panel).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
from PySide6 import QtCore

from legate_prof.query import PATH_VIA_WORDS

from ..background import emit, hold_until_ended, lower_this_thread
from .path_track import PathTrack

LINK_LABELS = ("Waited for", "Created by")
NO_EVENTS = "no critical path: this profile records no Realm events (Legion's timeline is "\
    "missing, or the run predates them)"


@dataclass
class RunPath:
    """The run's critical path (``run_critical_path``), last step first, as columns: each
    step's item, the piece of the timeline it holds [begin, end], how the path went on
    (``via``) and the item's lane; ``stops_unknown`` when the chain ends at an event no loaded
    profile records (a rank not given, a damaged graph)."""

    item: np.ndarray
    begin: np.ndarray
    end: np.ndarray
    lane: np.ndarray
    via: list
    stops_unknown: bool
    track: PathTrack | None = None  # the summary track (the command line's ``path_track``)
    track_error: str | None = None  # why there is none where it was asked

    @classmethod
    def from_steps(cls, source, steps, summarize=None):
        """The path of ``steps`` (``run_critical_path``'s); ``summarize(source)`` (the
        command line's ``analyze.path_track.path_track``) gives its summary track."""
        item = np.array([s.item for s in steps], np.int64)
        path = cls(item=item,
                   begin=np.array([s.begin_ns for s in steps], np.int64),
                   end=np.array([s.end_ns for s in steps], np.int64),
                   lane=lanes_of(source, item), via=[s.via for s in steps],
                   stops_unknown=bool(steps) and steps[-1].via == "unknown")
        if summarize is not None and len(item):
            try:
                path.track = PathTrack(summarize(source))
            except Exception as e:  # noqa: BLE001 - the steps are drawn; the status says why
                path.track_error = f"{type(e).__name__}: {e}"
        return path

    @property
    def inferred(self):
        """Per step: whether the path went on from it through an inferred link (the step
        after it in these columns, earlier in time, is reached only through a guess)."""
        if not hasattr(self, "_inferred"):
            self._inferred = np.array([v == "inferred" for v in self.via], bool)
        return self._inferred

    def __len__(self):
        return len(self.item)

    @property
    def sorted_items(self):
        """The path's items, sorted (to highlight them as search matches are)."""
        if not hasattr(self, "_sorted"):
            self._sorted = np.unique(self.item)
        return self._sorted

    def link_starts(self):
        """Where each step's link begins: the end of the step before it in time (the next
        one in these columns); the earliest step's own begin."""
        return np.append(self.end[1:], self.begin[-1:]) if len(self) else self.end

    def span_ns(self):
        return int(self.end[0] - self.begin[-1]) if len(self) else 0


def lanes_of(source, items):
    """The lane of each item: a lane's items are the contiguous ids ``lane_item_range``."""
    lanes = source.outline().lanes
    if not len(items) or not lanes:
        return np.zeros(len(items), np.int64)
    lo = np.array([source.lane_item_range(L.lane)[0] for L in lanes], np.int64)
    ids = np.array([L.lane for L in lanes], np.int64)
    order = np.argsort(lo, kind="stable")
    k = np.searchsorted(lo[order], items, side="right") - 1
    return ids[order][np.clip(k, 0, len(lanes) - 1)]


def lane_of_item(source, i):
    """The lane of one item, without stacking it (``lanes_of``)."""
    return int(lanes_of(source, np.array([int(i)], np.int64))[0])


class CriticalPathWorker(QtCore.QObject):
    """Computes ``source``'s critical path in a thread: every item's predecessor
    (``prepare_critical_path``), then the run's path; ``done(source, RunPath | Exception)``
    arrives in the window's thread."""

    done = QtCore.Signal(object, object)

    def __init__(self, source, summarize=None):
        super().__init__()
        self.source = source
        self.summarize = summarize  # the command line's ``path_track`` (or None: no track)
        self.thread = threading.Thread(target=self._run, name="legate_prof-critical",
                                       daemon=True)

    def start(self):
        hold_until_ended(self.thread, self)
        self.thread.start()

    def _run(self):
        lower_this_thread()  # (it gives way to the window's thread)
        try:
            self.source.prepare_critical_path()
            result = RunPath.from_steps(self.source, self.source.run_critical_path(),
                                        self.summarize)
        except Exception as e:  # noqa: BLE001 - said in the status bar, never a traceback
            result = e
        emit(self.done, self.source, result)  # (unless the window closed meanwhile)


def step_on_path(source, path, i, at=None, forward=False):
    """(the item of the step of ``path`` before (``forward``: after) item ``i``'s step — its
    step ``at`` when that is ``i``'s, else its latest (forward: earliest) — or None at the
    path's end; that step (at the end: ``i``'s), None where ``i`` is not on the path; a
    sentence saying which, or why the path ends there).  Steps that hold no time on the
    path (thousands in a row on a busy run) are passed over to the next one that does, and
    the sentence says how many."""
    n = len(path)
    if at is None or not 0 <= at < n or int(path.item[at]) != int(i):
        hits = np.flatnonzero(path.item == int(i))
        if not len(hits):
            return None, None, ""
        at = int(hits[-1] if forward else hits[0])  # (steps: last first)
    step = -1 if forward else 1
    nxt = at + step
    title = source.item_title(int(i))
    if nxt < 0:
        return None, at, (f"{title}: step {n:,} of {n:,} of the critical path, its last (it "
                          "ended last)")
    if nxt >= n:
        why = (": the chain stops at an event no loaded profile records (unknown)"
               if path.stops_unknown else "")
        return None, at, f"{title}: step 1 of {n:,} of the critical path, its first{why}"
    passed = _steps_of_no_time(path, nxt, step)
    nxt += passed * step
    j = int(path.item[nxt])
    verb = PATH_VIA_WORDS.get(path.via[min(at, nxt)], path.via[min(at, nxt)])
    where = f"step {n - nxt:,} of {n:,} of the critical path: {source.item_title(j)}"
    if passed:
        guessed = int(path.inferred[min(at, nxt):max(at, nxt)].sum())
        said = (f"{'→' if forward else '←'} {where}, passing {passed:,} step"
                f"{'' if passed == 1 else 's'} of no time"
                + (f" ({guessed:,} of the links on the way inferred: an event no profile "
                   "records)" if guessed else ""))
    elif j == int(i) and path.via[min(at, nxt)] == "wait":  # (a task's pieces either side
        # of a wait: "X waited for it" read as waiting on itself, a GUI walk)
        said = (f"→ {where} (the same item, after one of its waits)" if forward else
                f"← {where} (the same item, before the wait it went on from)")
    else:
        said = f"→ {where} (it {verb} {title})" if forward else f"← {where} ({title} {verb} it)"
    if path.end[nxt] <= path.begin[nxt]:  # (a step of no time: see ``critical``'s listing)
        said += "; it holds no time on the path: the step it led to had begun by the time it ran"
    return j, nxt, said


def path_notes(path, i):
    """An item's place on the drawn critical path, for its tooltip: which steps it holds and
    whether a link to or from them was inferred past an event no profile records (the
    lanes draw such a link dashed); [] where it is not on the path."""
    ks = np.flatnonzero(path.item == int(i))
    if not len(ks):
        return []
    n = len(path)
    steps = ", ".join(f"{n - k:,}" for k in ks[:5].tolist()) + (", …" if len(ks) > 5 else "")
    out = [f"on the critical path: step{'' if len(ks) == 1 else 's'} {steps} of {n:,}"]
    if path.inferred[ks].any():
        out.append("inferred: what held it up is a guess past an event no profile records "
                   "(its link dashed)")
    before = ks[ks > 0] - 1
    if path.inferred[before].any():
        out.append("inferred: it is guessed to have held up the next step (an event no "
                   "profile records; the link dashed)")
    return out


def _steps_of_no_time(path, k, step):
    """How many steps from ``k`` on (by ``step``) hold no time on the path and are followed
    by another step: a walk passes over them (it stops on the path's last one)."""
    n = len(path)
    none = path.end <= path.begin
    if not none[k]:
        return 0
    run = none[k:n] if step > 0 else none[k::-1]
    first = np.flatnonzero(~run)
    return int(first[0]) if len(first) else len(run) - 1


def step_back(source, i):
    """(the item ``i`` waited for or was created by, or None; a sentence saying which, in the
    details' words, or why the chain stops there)."""
    if not source.critical_links().has_data:
        return None, NO_EVENTS
    link = source.critical_predecessor(i)
    title = source.item_title(i)
    if link is None:
        return None, (f"{title}: no critical predecessor (calls, kernels and the top-level "
                      "task have none)")
    field = next((f for f in source.item_details(i) if f.label in LINK_LABELS), None)
    said = f"{field.label}: {field.text}" if field is not None else link.via
    if link.predecessor is None:
        stops = "" if "stops here" in said else ": the chain stops here"
        return None, f"{said}{stops} (unknown)"
    return int(link.predecessor), f"← {said}"


def step_forward(source, i):
    """(the first item — by start — that waited for ``i`` or was created by it, or None; a
    sentence saying so, and how many it held up)."""
    if not source.critical_links().has_data:
        return None, NO_EVENTS
    after = np.asarray(source.critical_successors(i), np.int64)
    title = source.item_title(i)
    if not len(after):
        return None, f"{title}: nothing waited for it or was created by it (the chain ends)"
    starts = source.items_columns(after, ("start",))["start"]
    j = int(after[int(np.argmin(starts))])
    more = (f"; the first of {len(after)} it held up (Details → Held up lists them)"
            if len(after) > 1 else "")
    link = source.critical_predecessor(j)
    how = "was created by" if link is not None and link.via == "creator" else "waited for"
    return j, f"→ {source.item_title(j)} {how} {title}{more}"
