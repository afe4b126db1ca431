"""An analysis of a run begun while its model is still being built: a forked copy of this
process works it out from the items, lanes, operations and events (``build_model``'s
``early``) while this process goes on to the waits, the utilization and the command's own
work, and hands its answer back through a pipe.

Idle time explained is the case (``stats``): it follows each stretch's item to what held
it up through the event graph, and needs neither waits nor utilization.  On the guide's
10 M example it was 0.6 s of ``stats``' 3.4 s, after the waits and the utilization lines
(0.6 s) that it now runs beside (docs/performance.md).  (``insights`` and ``critical`` walk
the run's path, which needs the waits: they gain nothing so.)

The copy's model has no waits, utilization or warnings (None): an analysis that reads them
fails there, and the command then works it out itself, as without the copy.  Only where a
fork is safe (``output_file.fork_is_safe``); the copy writes nothing but the pipe.
"""

from __future__ import annotations

import importlib
import os
import pickle
import weakref

from legate_prof.output_file import copy_ended, streams_to_nowhere, written_in_a_copy


# What the copy adds to the process tree's memory, per byte of the inputs read: the idle time
# explained of the 10 M example (113 MB of logs) took ~300 MB of its own (docs/performance.md)
COPY_BYTES_PER_INPUT_BYTE = 3
# and the machine keeps at least as much again free: else the work is done after the build
ROOM_FACTOR = 2


def room_for_a_copy(input_bytes):
    """Whether the machine's free memory holds what a copy working on ``input_bytes`` of
    inputs adds (``COPY_BYTES_PER_INPUT_BYTE``), twice over."""
    avail = available_memory()
    return avail is None or avail >= ROOM_FACTOR * COPY_BYTES_PER_INPUT_BYTE * input_bytes


def available_memory():
    """The machine's free memory in bytes (``MemAvailable``), or None where not told."""
    try:
        with open("/proc/meminfo") as f:
            return next((int(line.split()[1]) << 10 for line in f
                         if line.startswith("MemAvailable:")), None)
    except (OSError, ValueError, IndexError):
        return None


class EarlyAnalysis:
    """``function`` ("module:function", of a model) begun in a copy (``begin``, given to
    ``build_model`` as its ``early``), its answer collected once (``answer``)."""

    def __init__(self, function):
        self.function = function
        self.pid = self.pipe = None
        self.got = None

    def begin(self, model):
        r, w = os.pipe()
        pid = written_in_a_copy(lambda: _answer(self.function, model, r, w))
        os.close(w)
        if pid is None:
            os.close(r)
            return
        self.pid, self.pipe = pid, r

    def answer(self):
        """What the copy worked out (waited for), or None: no copy, or it failed."""
        if self.pid is None:
            return self.got
        got = None
        try:
            with os.fdopen(self.pipe, "rb") as pipe:
                got = pickle.load(pipe)
        except Exception:  # noqa: BLE001 - the copy failed or died: the caller works it out
            got = None
        finally:
            copy_ended(self.pid, kill=got is None)
            self.pid = self.pipe = None
        self.got = got
        return got

    def drop(self):
        """The answer no longer wanted: the copy stopped, if it still runs."""
        if self.pid is not None:
            os.close(self.pipe)
            copy_ended(self.pid, kill=True)
            self.pid = self.pipe = None


def _answer(function, model, r, w):
    """In the copy: ``function(model)``, pickled into the pipe ``w``."""
    os.close(r)
    streams_to_nowhere()
    module, name = function.split(":")
    got = getattr(importlib.import_module(module), name)(model)
    with os.fdopen(w, "wb") as pipe:
        pickle.dump(got, pipe, protocol=pickle.HIGHEST_PROTOCOL)


_KEPT = {}  # id of a model's "start" column -> (a weak reference to it, {function: analysis})


def keep(model, analysis):
    """Keep ``analysis`` with ``model`` and every copy of it that shares its items
    (``evolve``) for as long as they live; the copy is stopped when they go."""
    column = model.items["start"]
    key = id(column)

    def gone(_, key=key):
        for a in _KEPT.pop(key, (None, {}))[1].values():
            a.drop()
    entry = _KEPT.get(key)
    if entry is None or entry[0]() is not column:
        entry = _KEPT[key] = (weakref.ref(column, gone), {})
    entry[1][analysis.function] = analysis


def early_answer_of(profile, function):
    """``early_answer`` of a profile or source of one model (a copy begins on a model built
    in this process: never on ranks built apart), else None."""
    parts = profile.item_parts()
    return early_answer(parts[0].model, function) if len(parts) == 1 else None


def early_answer(model, function):
    """What the copy begun on ``model``'s build worked out of it by ``function``
    ("module:function"), or None (none begun, or it failed)."""
    items = getattr(model, "items", None)
    column = items.get("start") if isinstance(items, dict) else None
    entry = _KEPT.get(id(column)) if column is not None else None
    if entry is None or entry[0]() is not column or function not in entry[1]:
        return None
    return entry[1][function].answer()
