"""A command's answer kept for the run it read: asked again of the same run, with the same
options, ``stats``, ``critical`` and ``insights`` print what they printed (stdout and the
notes and warnings on stderr) and exit as they did, without reading the logs again
(``store.results``: keyed by the inputs' contents, the options and the code).  Progress bars
are not part of an answer.  The run's critical path is kept too, so that a command asking
another question of the same run (``insights`` after ``critical``, the report after either)
does not walk it again; and the run's idle time explained (``stats`` after ``insights``, or
the other way round).  Only runs read whole and ended are kept: ``--ranks``, ``--start`` and
``--stop``, and a run still being written, answer from the logs every time.
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
    if os.environ.get("LEGATE_PROF_CACHE_DIR") == "":
        return None
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
    results.put("answer-" + command, {"out": out.kept.getvalue(), "err": err.kept.getvalue(),
                                      "status": int(code or 0)}, asked)
    return code


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


def shared_path(args, source):
    """Give ``source`` the run's critical path kept by an earlier command (``answered``
    keeps the results on ``args``), or keep the one it walks: call before and after."""
    results = getattr(args, "kept_results", None)
    if results is None:
        return _Keep(None, source)
    from legate_prof.causality.run_path import steps_of_arrays
    kept = results.get("path")
    if kept is not None and kept.get("numbering") == item_numbering(source):
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
        self.results.put("path", {**steps_as_arrays(self.source.run_critical_path()),
                                  "has_event_graph": bool(self.source.has_event_graph()),
                                  "numbering": item_numbering(self.source)})


NUMBERING_SAMPLES = 64


def item_numbering(source):
    """What names the order of ``source``'s items (their count, and the lane, start and stop
    of items at evenly spaced ids): a path is kept by item id, and the same run numbers its
    items one way built from its logs and another reopened from the cache, stacked — a path
    walked on one and read on the other named other items (a wrong answer, found this
    session)."""
    import hashlib
    import numpy as np
    from legate_prof.analyze.critical_path import item_table
    n = sum(p.model.n_items for p in source.item_parts())
    ids = np.unique(np.linspace(0, max(n - 1, 0), NUMBERING_SAMPLES).astype(np.int64))
    tab = item_table(source, ids[:n]) if n else {c: ids[:0] for c in ("lane", "start", "stop")}
    h = hashlib.sha256(str(n).encode())
    for c in ("lane", "start", "stop"):
        h.update(np.ascontiguousarray(tab[c], np.int64).tobytes())
    return h.hexdigest()
