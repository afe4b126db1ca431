"""A command's answer kept for the run it read: asked again of the same run, with the same
options, ``stats``, ``critical`` and ``insights`` print what they printed (stdout and the
notes and warnings on stderr) and exit as they did, without reading the logs again
(``store.results``: keyed by the inputs' contents, the options and the code).  Progress bars
are not part of an answer.  The run's critical path is kept too, so that a command asking
another question of the same run (``insights`` after ``critical``, the report after either)
does not walk it again; and the run's idle time explained (``stats`` after ``insights``, or
the other way round).  Only runs read whole and ended are kept: ``--ranks``, ``--start`` and
``--stop``, and a run still being written, answer from the logs every time.  Once a command
has ended, the copy that keeps the run's timeline answers ahead the questions a user asks
next (``answer_ahead``).  ``report`` keeps the folder it wrote, and asked again of the same
run writes it again (``folder_answered``), wherever ``-o`` puts it.
"""

from __future__ import annotations

import io
import os
import sys

# options that do not change an answer
_NOT_ASKED = ("func", "quiet")


class _Tee(io.TextIOBase):
    """A text stream that writes through to ``real`` and keeps a copy."""

    def __init__(self, real):
        self.real = real
        self.kept = io.StringIO()

    def write(self, s):
        self.kept.write(s)
        return self.real.write(s)

    def flush(self):
        self.real.flush()

    def isatty(self):
        return self.real.isatty()

    @property
    def encoding(self):
        return getattr(self.real, "encoding", "utf-8")

    def fileno(self):
        return self.real.fileno()


def results_for(args, command):
    """The kept results of the run ``args`` names (``store.results.RunResults``), or None
    where it is not read whole or nothing can be kept."""
    if any(getattr(args, k, None) is not None for k in ("ranks", "start", "stop")):
        return None
    if os.environ.get("LEGATE_PROF_CACHE_DIR") == "" or getattr(args, "cache", None) is False:
        return None  # (--no-cache: nothing read, nothing kept — an answer neither)
    from legate_prof.cli.common import input_files
    from legate_prof.load.inputs import expand_inputs
    from legate_prof.store.results import RunResults
    try:
        paths = expand_inputs([os.fspath(f) for f in input_files(args)], note=lambda _: None)
        if not paths:
            return None
        return RunResults(paths)
    except Exception:  # noqa: BLE001 - an input that cannot be keyed is read as it is
        return None


def answered(args, command, run):
    """``run(args)``, or its kept answer: what it printed and its exit status."""
    results = results_for(args, command)
    if results is None:
        return run(args)
    asked = {k: v for k, v in sorted(vars(args).items()) if k not in _NOT_ASKED}
    # (what the answer says of files beside the inputs, not among them: a runtime stream
    # copied in beside a log later left the kept answer without its note, a review found)
    from legate_prof.cli.common import input_files
    from legate_prof.load.inputs import inputs_notes
    asked["left_beside"] = inputs_notes(input_files(args))
    kept = results.get("answer-" + command, asked)
    if kept is not None:
        sys.stderr.write(kept["err"])
        sys.stdout.write(kept["out"])
        return kept["status"]
    out, err = _Tee(sys.stdout), _Tee(sys.stderr)
    sys.stdout, sys.stderr = out, err
    try:
        args.kept_results = results
        code = run(args)
    finally:
        sys.stdout, sys.stderr = out.real, err.real
    from legate_prof.read.runtime_stream import of_a_live_run
    if of_a_live_run([err.kept.getvalue()]):
        return code  # (a run still going: asked again, the same files may say it crashed)
    results.put("answer-" + command, {"out": out.kept.getvalue(), "err": _said_again(err),
                                      "status": int(code or 0)}, asked)
    return code


def folder_answered(args, command, made_by, run, read_back, write_again):
    """``run(args)`` of a command whose answer is a folder it writes (``report``), or the
    folder it wrote for the same question of the same run written again (``write_again(
    kept)``), with what it said on stderr and its exit status: the guide's N = 10 M example's
    report asked again took 8 s, its tiles and pictures drawn again.  Where the answer is
    written (``-o``) is not part of the question; ``made_by``, what besides this package's
    sources made it (the page's scripts, the viewer's drawing).  ``run`` returns (exit
    status, whether its folder is the question's whole answer: not where something it needs
    was missing, Qt for the pictures); ``read_back()`` the folder written, as ``write_again``
    takes it, or None where it is too large to keep."""
    results = results_for(args, command)
    if results is None:
        return run(args)[0]
    from legate_prof.cli.common import input_files
    from legate_prof.load.inputs import inputs_notes
    asked = {k: v for k, v in sorted(vars(args).items()) if k not in _NOT_ASKED + ("output",)}
    asked["left_beside"] = inputs_notes(input_files(args))
    asked["made_by"] = made_by
    kept = results.get("folder-" + command, asked)
    if isinstance(kept, dict) and isinstance(kept.get("err"), str) \
            and isinstance(kept.get("status"), int) and write_again(kept.get("folder")):
        sys.stderr.write(kept["err"])
        return kept["status"]
    err = _Tee(sys.stderr)
    sys.stderr = err
    try:
        code, whole = run(args)
    finally:
        sys.stderr = err.real
    from legate_prof.read.runtime_stream import of_a_live_run
    folder = read_back() if whole and not of_a_live_run([err.kept.getvalue()]) else None
    if folder is not None:
        results.put("folder-" + command, {"folder": folder, "err": _said_again(err),
                                          "status": int(code or 0)}, asked)
    return code


# what a command says of this process's own work, not of the run: a folder replaced, a
# stopped command's leftovers removed, the cache's notes — said again with a kept answer,
# untrue (a review: "removed ..., left by a legate_prof that was stopped" at every ask)
OWN_NOTES = ("written there before", "left by a legate_prof that was stopped",
             "cached timeline was unreadable", "could not cache the built timeline",
             "not using the cache folder", "; removed it, rebuilding")


def _said_again(err):
    """What an answer shown again says on stderr: what it said, but the cache folder's
    first use (said once, by the command that made it) and this process's own notes
    (``OWN_NOTES``)."""
    from legate_prof.store.cache import FIRST_USE_NOTE
    return "".join(line for line in err.kept.getvalue().splitlines(keepends=True)
                   if not line.startswith(FIRST_USE_NOTE)
                   and not (line.startswith("legate_prof: note: ")
                            and any(n in line for n in OWN_NOTES)))


def kept_idle(args):
    """The run's idle time explained (``stats --json``'s ``idle``), as an earlier command on
    the same run worked it out, or None."""
    results = getattr(args, "kept_results", None)
    return None if results is None else results.get("idle")


def keep_idle(args, idle):
    """Keep the run's idle time explained for the next command (``stats`` and ``insights``
    explain the same: a second of the guide's N = 10 M example)."""
    results = getattr(args, "kept_results", None)
    if results is not None and idle is not None:
        results.put("idle", idle)


def source_with_path(args, ranked=False):
    """(the inputs' profile cut to ``--start/--stop``, its source, the path's keeper:
    ``shared_path``) — the source holding the run's critical path cut to the window, or the
    one an earlier command kept: where ``critical`` and ``insights`` start."""
    from legate_prof.analyze.critical_path import given_window
    from legate_prof.cli.common import (input_files, load_with_progress, run_beyond_window,
                                        trimmed)
    from legate_prof.causality.rank_links import PREPARE as LINKED_BY_WORKERS
    from legate_prof.query import as_source
    from legate_prof.query.source import LATENCY_EARLY
    whole = load_with_progress(input_files(args), args, stack=False, ranked=ranked,
                               prepare=LINKED_BY_WORKERS if ranked else None,
                               early=LATENCY_EARLY)
    profile = trimmed(whole, args)
    source = as_source(profile)
    given_window(source, run_beyond_window(whole, args))
    return profile, source, shared_path(args, source)


def shared_path(args, source):
    """Give ``source`` the run's critical path kept by an earlier command (``answered``
    keeps the results on ``args``), or keep the one it walks: call before and after."""
    results = getattr(args, "kept_results", None)
    if results is None:
        return _Keep(None, source)
    from legate_prof.causality.run_path import steps_of_arrays
    kept = results.get("path")
    if kept is not None and kept.get("numbering") != item_numbering(source):
        kept = _renumbered(kept, source)
    if kept is not None:
        graph = kept.get("has_event_graph")
        source.use_run_critical_path(steps_of_arrays(kept),
                                     None if graph is None else bool(graph))
        return _Keep(None, source)
    return _Keep(results, source)


class _Keep:
    """``keep()`` stores the source's path where it was walked for this command."""

    def __init__(self, results, source):
        self.results, self.source = results, source

    def keep(self):
        if self.results is None or not self.source.run_critical_path_walked:
            return
        from legate_prof.causality.run_path import steps_as_arrays
        steps = steps_as_arrays(self.source.run_critical_path())
        named = _named_items(steps)
        self.results.put("path", {**steps, "has_event_graph":
                                  bool(self.source.has_event_graph()),
                                  "numbering": item_numbering(self.source),
                                  "named": named, **_places(self.source, named)})


def _named_items(steps):
    """The items a path's steps name (as steps and as predecessors), once each."""
    import numpy as np
    from legate_prof.model.sort_order import unique_values
    ids = np.concatenate([steps["item"], steps["predecessor"]])
    return unique_values(ids[ids >= 0])


def _places(source, ids=None):
    """Where items are: lane, start and stop (a run's items numbered any way), of ``ids`` or
    of all."""
    import numpy as np
    parts = source.item_parts()
    cols = {"lane": [], "start": [], "stop": []}
    for p in parts:
        it = p.model.items
        cols["lane"].append(it["lane"].astype(np.int64) + p.lane_off)
        cols["start"].append(it["start"].astype(np.int64))
        cols["stop"].append(it["stop"].astype(np.int64))
    whole = {c: np.concatenate(v) if v else np.zeros(0, np.int64) for c, v in cols.items()}
    return whole if ids is None else {c: v[ids] for c, v in whole.items()}


def _renumbered(kept, source):
    """A path kept on another numbering of the same run's items (built from its logs, or
    reopened from the cache, stacked) with its items named in ``source``'s: each found by
    its lane, start and stop, or None where one is not found or not alone there (walked
    again)."""
    import numpy as np
    from legate_prof.model.sort_order import lex_order
    try:
        named = np.asarray(kept["named"], np.int64)
        wanted = [np.asarray(kept[c], np.int64) for c in ("lane", "start", "stop")]
        if any(len(w) != len(named) for w in wanted):
            return None
    except (KeyError, ValueError, TypeError):
        return None
    here = _places(source)
    near = np.flatnonzero(np.isin(here["start"], wanted[1]))  # (the few that can match)
    # the candidates and the wanted sorted together: a group of equal places holds exactly
    # one candidate where a wanted item is found, and alone
    cols = [np.concatenate([here[c][near], w]) for c, w in zip(("lane", "start", "stop"),
                                                                  wanted)]
    order = lex_order((cols[2], cols[1], cols[0]))
    new = np.zeros(len(order), bool)
    new[:1] = True
    for c in cols:
        v = c[order]
        new[1:] |= v[1:] != v[:-1]
    group = np.empty(len(order), np.int64)
    group[order] = np.cumsum(new) - 1
    here_group, wanted_group = group[:len(near)], group[len(near):]
    found = np.bincount(here_group, minlength=int(group.max(initial=-1)) + 1)
    if len(named) and (found[wanted_group] != 1).any():
        return None
    item_of_group = np.full(len(found), -1, np.int64)
    item_of_group[here_group] = near
    ids = item_of_group[wanted_group]

    def mapped(col):
        col = np.asarray(col, np.int64)
        out = col.copy()
        known = col >= 0
        k = np.searchsorted(named, col[known])
        if (k >= len(named)).any() or (named[np.minimum(k, len(named) - 1)] != col[known]).any():
            raise ValueError("a step names an item the path does not")
        out[known] = ids[k]
        return out
    try:
        return {**kept, "item": mapped(kept["item"]),
                "predecessor": mapped(kept["predecessor"])}
    except ValueError:
        return None


NUMBERING_SAMPLES = 64


def item_numbering(source):
    """What names the order of ``source``'s items (their count, and the lane, start and stop
    of items at evenly spaced ids): a path is kept by item id, and the same run numbers its
    items one way built from its logs and another reopened from the cache, stacked — a path
    walked on one and read on the other named other items (a wrong answer, found this
    session).  A path kept on the other numbering is read through its items' places
    (``_renumbered``)."""
    import hashlib
    import numpy as np
    from legate_prof.analyze.critical_path import item_table
    from legate_prof.model.sort_order import unique_values
    n = sum(p.model.n_items for p in source.item_parts())
    ids = unique_values(np.linspace(0, max(n - 1, 0), NUMBERING_SAMPLES).astype(np.int64))
    tab = item_table(source, ids[:n]) if n else {c: ids[:0] for c in ("lane", "start", "stop")}
    h = hashlib.sha256(str(n).encode())
    for c in ("lane", "start", "stop"):
        h.update(np.ascontiguousarray(tab[c], np.int64).tobytes())
    return h.hexdigest()


# the questions answered ahead, in this order: the run's path walked for the first serves
# the second; the third takes the idle time the first explained
AHEAD = ("insights", "critical", "stats")
# the commands after which they are (each names the run by its ``files``)
AFTER = {"stats", "insights", "critical", "report", "screenshot"}


def answer_ahead(args, parse):
    """Answer the run's other questions before they are asked: in the copy of the process
    that kept the run's timeline (``load.loader.store_after_answer``), once the command has
    ended, ``insights``, ``critical`` and ``stats`` as a user types them next (the same
    files, no option) are worked out from the entry just written and kept
    (``answered``): asked, each is printed at once.  A question already kept is not asked
    again; a run not read whole (``--ranks``, a window) is not answered ahead.  The copy is
    niced and its streams go nowhere; what it keeps is what the command would print.
    ``parse``: the command line's parser (a list of words -> the options of a command)."""
    if getattr(args, "cmd", None) not in AFTER or getattr(args, "log", None) \
            or results_for(args, args.cmd) is None:
        return  # (a console log joins the run's entry: the questions without it read logs)
    for command in AHEAD:
        asked = parse([command, "--", *map(os.fspath, args.files)])
        asked.func(asked)  # (``answered``: kept, or worked out and kept)
