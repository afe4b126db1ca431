"""``legate_prof insights``: the patterns the guide teaches by eye, found in the numbers.

Each finding names the pattern, the evidence in numbers, the time window, the user's source
lines (provenance ``file:line``) that cause it and the guide's remedy, and what it costs:
``wall_ns``, the wall-clock time it holds on the run's critical path (``analyze.critical_path``:
each piece of the path counts for one finding at most, so the findings' sum never exceeds the
run), and ``processor_ns``, the processor time its items ran (summed over processors, so it
can exceed the run).  Findings are ranked by ``wall_ns`` (``cost_ns``: the same), an
out-of-memory failure first.  Everything is computed over the model's columns; a clean run gets
no finding.  JSON form: ``{"findings": [{"pattern", "title", "provenance", "window_ns",
"evidence", "cost_ns", "wall_ns", "processor_ns", "remedy"}]}`` (docs/insights.md).
"""

from __future__ import annotations

import numpy as np

from legate_prof.model.kinds import MEMORY_GROUPS, PROCESSOR_GROUPS, ItemKind
from legate_prof.assemble.rank_merge import release_pages
from legate_prof.assemble.stream_items import stream_arrays
from legate_prof.model.item_parts import by_part
from legate_prof.model.sort_order import stable_order, unique_values, unique_with
from legate_prof.read.runtime_stream import RESULT, TEMPORARY
from legate_prof.analyze.critical_text import plural
from legate_prof.analyze.path_lines import SHUTDOWN
from legate_prof.present.units import format_bytes, format_ns
from legate_prof.causality.critical_inputs import CALL_KINDS, ENTRY_KINDS, kinds_mask
from legate_prof.causality.event_graph import find_sorted

TINY_TASK_MIN_COUNT = 32  # launches from one line before a loop is worth naming
RUNTIME_BUSY_RATIO = 1.5  # utility busy / application-processor busy that is "confetti"
RUNTIME_MIN_TASKS = 100  # and enough launches for it to be the launching, not start-up
SMALL_COPY_BYTES = 64 << 10
COPY_BASELINE_MIN = 50
PARTITION_MIN = 100
MEMORY_PRESSURE = 0.8
ADVANCED_INDEXING_TASKS = ("Nonzero", "Gather", "Scatter", "Advanced Indexing")
APP_PROC_GROUPS = ("cpu", "gpu_dev", "omp", "io", "python")


def _running(model):
    """Each item's processor time: its span minus its waits — and a task's (or meta-task's)
    also the running time of the calls it made.  ``stats`` counts a call apart from its
    caller, as the reference does; but the calls ran on the caller's processor, for it, and
    legate runs a task's body inside an application call (a BoolMaskSelect of 253 µs: 178
    µs of it its body's call), so a line's processor time without them says its tasks
    hardly ran."""
    from legate_prof.analyze.stats import waited_ns
    it = model.items
    run = (it["stop"] - it["start"]).astype(np.int64)
    waited = waited_ns(model)
    if waited is not None:
        run -= waited.astype(np.int64)
    kind = np.asarray(it["kind"])
    calls = np.flatnonzero(kinds_mask(kind, CALL_KINDS))
    if len(calls) == 0:
        return run
    callers = np.flatnonzero(kinds_mask(kind, ENTRY_KINDS))  # (what makes calls)
    fevent = np.asarray(it["fevent"], np.uint64)
    o = callers[stable_order(fevent[callers])]
    caller = np.asarray(it["creator"], np.uint64)[calls]  # (a call's: its caller's event)
    at = find_sorted(fevent[o], caller)
    hit = at >= 0
    return run + np.bincount(o[at[hit]], weights=run[calls[hit]].astype(np.float64),
                             minlength=len(run)).astype(np.int64)




class _Facts:
    """Per-item columns the detectors share, over every part of the profile's items (one
    model, or the ranks of a ``RankSet`` read one after the other: no merged copy),
    and what is not per item (names, lanes, step functions, markers) from the source."""

    def __init__(self, profile):
        from legate_prof.query import as_source
        self.source = as_source(profile)
        self.profile = profile
        self._path = self._idle = self._launches = self._app_lines = None
        self.unjudged = []  # what a detector saw but could not judge here, in words
        self.whole = "run"  # what the findings' shares are of: "window" for --start/--stop
        self.parts = profile.item_parts()
        self.m = profile.summary_model()  # names, provenances, lanes, steps, busy, markers
        last = self.parts[-1]
        self.offsets = np.array([p.item_off for p in self.parts]
                                + [last.item_off + last.model.n_items], np.int64)
        self.kind = self._joined(lambda p: p.model.items["kind"])
        self.start = self._joined(lambda p: p.model.items["start"])
        self.stop = self._joined(lambda p: p.model.items["stop"])
        # processor time: waits out, the calls a task made in (``_running``)
        self.run = self._joined(lambda p: _running(p.model))
        self.prov = self._joined(lambda p: p.provenances())
        self.name = self._joined(lambda p: p.names())
        self.busy = self.m.busy_ns
        self.app = np.isin(self.kind, [int(ItemKind.TASK), int(ItemKind.GPU_KERNEL)])
        # the top-level task and its thread are not launches
        top = [i for i, n in enumerate(self.m.names) if n in ("Toplevel Task", "External Thread")]
        self.app &= ~np.isin(self.name, top)

    @property
    def path(self):
        """The run's critical path, in pieces (``critical_path.path_pieces``), made once."""
        if self._path is None:
            from legate_prof.analyze.critical_path import path_pieces
            self._path = path_pieces(self.source)
        return self._path

    @property
    def launches(self):
        """``operation_launches``, made once."""
        if self._launches is None:
            self._launches = operation_launches(self)
        return self._launches

    @property
    def idle(self):
        if self._idle is None:
            from legate_prof.analyze.idle_ranks import shared_idle_gaps
            self._idle = shared_idle_gaps(self.source)
        return self._idle

    @property
    def run_span(self):
        first, last = self.m.extent()
        return int(last) - int(first)

    def _joined(self, column):
        if len(self.parts) == 1:
            return column(self.parts[0])
        out = np.concatenate([column(p) for p in self.parts])
        for p in self.parts:  # copied: the ranks' mapped pages need not stay resident
            release_pages(p.model)
        return out

    def of_items(self, ids, what):
        """``what`` ("op_id", "lane", "part": which part holds it, "size": a copy's, fill's
        or instance's bytes (a runtime array's: the rank's piece), "src": a runtime array's
        whole bytes, or "inst": its instance id, for a runtime array its number in its
        rank's stream) of the items ``ids``, asked of the part that holds each."""
        ids = np.asarray(ids, np.int64)
        out = np.zeros(len(ids), np.int64 if what in ("lane", "part") else np.uint64)
        for k, sel, local in by_part(self.offsets, ids):
            p = self.parts[k]
            if what == "part":
                out[sel] = k
            elif what in ("size", "inst", "src"):
                t = p.model.transfers
                if len(t["item"]):
                    j = np.clip(np.searchsorted(t["item"], local), 0, len(t["item"]) - 1)
                    out[sel] = np.where(t["item"][j] == local, t[what][j], 0)
            elif what == "lane":
                out[sel] = p.model.items["lane"][local].astype(np.int64) + p.lane_off
            elif what == "detail" and p.name_map is not None:  # (a name id: the part's
                out[sel] = p.name_map[p.model.items["detail"][local]]  # own, mapped)
            else:
                out[sel] = p.model.items[what][local]
        return out

    @property
    def app_lines(self):
        """``AppLines`` of this profile, made once."""
        if self._app_lines is None:
            self._app_lines = AppLines(self)
        return self._app_lines

    def group_busy(self, keys):
        return sum(v for (r, g), v in self.busy.items() if g in keys)

    def line(self, p):
        return self.m.provenances[int(p)]

    def window(self, sel):
        """The span of the items ``sel`` (a mask, or ids)."""
        some = len(sel) > 0 if sel.dtype != bool else np.any(sel)
        return [int(self.start[sel].min()), int(self.stop[sel].max())] if some else [0, 0]


class AppLines:
    """The application's tasks (``_Facts.app``) by source line: each line's ids, increasing,
    and their creation and ready times — from one sort of their lines and one look-up of
    those columns in the parts, not a mask of every item and a look-up per line (50 lines
    of 10 M items: 1.8 s of ``tiny_tasks``)."""

    def __init__(self, f):
        ids = np.flatnonzero(f.app)
        prov = f.prov[ids]
        order = stable_order(prov)
        self.ids = ids[order]  # (by line; within a line, increasing)
        self.lines, first = unique_with(prov[order], index=True)
        self.bounds = np.append(first, len(order))
        self._at = {int(p): k for k, p in enumerate(self.lines.tolist())}
        self._f, self._columns = f, {}

    def of(self, p):
        """The ids of line ``p``'s tasks (none: empty)."""
        k = self._at.get(int(p))
        return self.ids[:0] if k is None else self.ids[self.bounds[k]:self.bounds[k + 1]]

    def column(self, p, what):
        """``_Facts.of_items`` of line ``p``'s tasks."""
        got = self._columns.get(what)
        if got is None:
            got = self._columns[what] = self._f.of_items(self.ids, what)
        k = self._at.get(int(p))
        return got[:0] if k is None else got[self.bounds[k]:self.bounds[k + 1]]


def _finding(pattern, title, provenance, window, evidence, cost, remedy, holds=None):
    """A finding; ``cost``: the processor time it uses; ``holds(path)``: which pieces of the
    run's critical path (a ``critical_path.PathPieces``) it holds (a mask), None: none."""
    return {"pattern": pattern, "title": title, "provenance": provenance,
            "window_ns": [int(window[0]), int(window[1])], "evidence": evidence,
            "processor_ns": int(max(cost, 0)), "remedy": remedy, "_holds": holds}


def _on_lines(f, lines, categories=None):
    """``holds`` for the pieces of the critical path (``PathPieces.pieces``) that count for
    the source lines ``lines`` (provenance ids: a launch or a gap counts for the line it led
    to), of ``categories`` (None: any)."""
    lines = np.asarray(sorted(lines), np.int64)

    def holds(ns, cat, line, item):
        m = np.isin(line, lines)
        return m if categories is None else m & np.isin(cat, list(categories))
    return holds


def _of_category(*categories):
    def holds(ns, cat, line, item):
        return np.isin(cat, list(categories))
    return holds


LOOP_BUSY_SHARE = 0.5  # a loop whose processors ran its tasks more of its span is not tiny


def _launch_latency(f, p):
    """(launch -> start, launch -> ready, ready -> start, where from) of the tasks of line
    ``p``, each the median of ``_launch_times``."""
    *gaps, measured = _launch_times(f, p)
    return (*(float(np.median(g)) if len(g) else 0.0 for g in gaps), measured)


def _launch_times(f, p):
    """(launch -> start, launch -> ready, ready -> start: one each a launch, where from) of
    the tasks of line ``p``: from the program's launch of each operation (the runtime
    stream's, on every rank) to its first task's ready and start, as the operation's box
    shows them (``assemble.operation_spans``: waiting, then ready); without the stream, from
    each task's creation (when Legion launched it) to its ready and start, as its details
    show them (``deferred``, ``delayed``)."""
    ops = f.launches.get(p)
    if ops is not None:
        launch, ready, start = ops
        return start - launch, ready - launch, start - ready, "operation"
    create = f.app_lines.column(p, "create").astype(np.int64)
    ready = f.app_lines.column(p, "ready").astype(np.int64)
    start = f.start[f.app_lines.of(p)]
    known = (create > 0) & (create <= ready) & (ready <= start)
    c, r, s = create[known], ready[known], start[known]
    return s - c, r - c, s - r, "task"


def operation_launches(f):
    """{line: (launch, first task ready, first task start)} of the runtime stream's
    operations whose tasks are known (``assemble.operation_spans`` gave each its first wait:
    from its launch until its first task was ready, and started), every rank's."""
    out = {}
    for part in f.parts:
        m = part.model
        ops = np.flatnonzero(np.asarray(m.items["kind"]) == int(ItemKind.RUNTIME_OP))
        w = m.waits
        if len(ops) == 0 or len(w["item"]) == 0:
            continue
        j = np.minimum(np.searchsorted(w["item"], ops), len(w["item"]) - 1)
        stop = np.asarray(m.items["stop"])[ops]
        # matched: its first wait ends at its first task's start, before the box's end
        ok = (w["item"][j] == ops) & (w["end"][j] < stop)
        line = part.provenances(ops[ok]).astype(np.int64)
        cols = (np.asarray(m.items["start"])[ops[ok]], w["ready"][j[ok]], w["end"][j[ok]])
        for p in unique_values(line).tolist():
            mine = line == p
            old = out.get(p)
            new = tuple(c[mine].astype(np.int64) for c in cols)
            out[p] = new if old is None else tuple(np.concatenate(x) for x in zip(old, new))
    return out


def _busy_share(f, ids):
    """How much of the span of the tasks ``ids`` their processors spent running them, each
    task counted at the median (a few stragglers — a task whose thread the machine's other
    work held off, seconds on an oversubscribed node — do not make a loop busy)."""
    lanes = len(unique_values(f.of_items(ids, "lane")))
    span = int(f.stop[ids].max()) - int(f.start[ids].min())
    return float(np.median(f.run[ids])) * len(ids) / max(span * lanes, 1)


def tiny_tasks(f):
    """Loops of tasks shorter than their launch (the guide's "barcode"): a line's tasks run
    for less than the median time from their launch to their start, and its loop's
    processors sat idle most of the loop.  The advice fits the loop's shape, from the runtime
    stream's operations (``loop_shape``): slices of one array, a time loop of whole-array
    operations, or a loop writing ``out=``."""
    lines = []  # lines of short tasks, launched more than once: (line, ids, tasks, median)
    for p in f.app_lines.lines.tolist():
        ids = f.app_lines.of(p)
        n = len(ids)
        med = float(np.median(f.run[ids])) if n else 0.0
        if p and n >= 2 and med < max(_launch_latency(f, p)[0], 1.0):
            lines.append((p, ids, n, med))
    most, total = max((x[2] for x in lines), default=0), sum(x[2] for x in lines)
    if most < TINY_TASK_MIN_COUNT <= total:  # (a short window of a long loop: said, not judged)
        f.unjudged.append(
            f"tiny_tasks: {total:,} tasks from {len(lines)} line(s) ran shorter than their "
            f"launch, at most {most:,} from one line: a loop is named from "
            f"{TINY_TASK_MIN_COUNT} tasks of one line")
    out = []
    for loop in _loops(f, lines):
        sel = np.sort(np.concatenate([x[1] for x in loop]))  # (the loop's tasks' ids)
        if _busy_share(f, sel) >= LOOP_BUSY_SHARE:
            continue  # its processors were busy: the tasks were fed as fast as they ran
        out.append(_tiny_tasks_finding(f, loop, sel))
    return out


def _tiny_tasks_finding(f, loop, sel):
    n = len(sel)
    med = float(np.median(f.run[sel]))
    lat = [_launch_times(f, x[0]) for x in loop]
    # (the median over the loop's launches, every line's together: a mean of the lines'
    # medians by their tasks read 82.5 ms where the launches' median is 94.5 ms)
    latency, mapping, queued = (float(np.median(g)) if len(g) else 0.0 for g in (
        np.concatenate([x[k] for x in lat]) for k in range(3)))
    measured = {x[3] for x in lat if len(x[0])} or {lat[0][3]}
    provs = [f.line(x[0]) for x in loop]
    shape = loop_shape(f, [x[0] for x in loop])
    runtime = f.kind == ItemKind.META
    runtime &= np.isin(f.prov, [x[0] for x in loop])  # the runtime's work for their launches
    evidence = {"tasks": n, "median_task_ns": int(med), "launch_latency_ns": int(latency),
                "launch_to_ready_ns": int(mapping), "ready_to_start_ns": int(queued),
                "launch_measured_from": "/".join(sorted(measured)),
                "busy_share": round(_busy_share(f, sel), 3), "task_time_ns": int(f.run[sel].sum()),
                "runtime_time_ns": int(f.run[runtime].sum()),
                "tasks_per_line": {f.line(x[0]): x[2] for x in loop}}
    if shape["operations"]:
        evidence.update(operations=shape["operations"], loop_shape=shape["shape"],
                        operations_by_shape=shape["by_shape"])
    evidence.update(_loop_waits(f, [x[0] for x in loop]))
    words, remedy = LOOP_ADVICE[shape["shape"]]
    if shape["shape"] == "unknown":  # (why it cannot tell: a review read a 1-rank run's
        remedy += UNKNOWN_SHAPE_WHY[bool(shape["operations"])]  # loop as vaguer than 4 ranks')
    if evidence.get("waits_for_values") and not (  # (reading every few steps already)
            shape["operations"] >= READ_EVERY_OPS * evidence["waits_for_values"]):
        remedy += LOOP_WAITS.format(n=evidence["waits_for_values"],
                                    ns=format_ns(evidence["waited_ns"]))
    return _finding(
        "tiny_tasks",
        f"{n:,} tiny tasks from {len(provs)} line(s) of {words.format(**shape)}: median "
        f"{format_ns(med)} each, {format_ns(latency)} from "
        f"{'an operation' if 'operation' in measured else 'a task'}'s launch to its start",
        provs, f.window(sel), evidence, int(f.run[sel].sum() + f.run[runtime].sum()),
        remedy.format(**shape), holds=_on_lines(f, [x[0] for x in loop]))


def _loop_waits(f, lines):
    """{"waits_for_values", "waited_ns"} of the program's recorded waits at a loop's lines
    (``program_waits.waits_by_line``; {} where none: no stream, or it waited for nothing):
    the guide's inefficient loop stops at each chunk's masks for their counts."""
    from legate_prof.analyze.program_waits import waits_by_line
    mine = [x for p, x in waits_by_line(f.source).items() if p in set(lines)]
    if not mine:
        return {}
    return {"waits_for_values": sum(x["waits"] for x in mine),
            "waited_ns": sum(x["waited_ns"] for x in mine)}


LOOP_WAITS = (" The loop also stops {n:,} times to wait for a value ({ns} in all; `blocking` "
              "says what each line waited for): each stop drains the runtime's pipeline, so "
              "read values after the loop or every k iterations.")
# a loop's shape -> (its words in the title, the remedy that fits it)
LOOP_ADVICE = {
    "slices": (
        "a loop over slices of arrays ({operations:,} operations, {sliced:,} of them on slices "
        "of the array(s) allocated at {array})",
        "Vectorize the loop: one whole-array operation on the array(s) allocated at {array} "
        "instead of one per slice (guide, Example 1: avoid per-slice 'tiny task' loops on big "
        "arrays)."),
    "time_loop": (
        "a time loop of whole-array operations ({operations:,} operations, {made})",
        "Each step is whole-array operations already (each step needs the one before: there "
        "is nothing to vectorize); its tasks are shorter than their launch, so give each more "
        "to do: larger arrays per rank (fewer ranks or processors for arrays this size), "
        "fewer operations per step (fuse expressions), and out= to reuse an array instead of "
        "making a new one each step."),
    "out": (
        "a loop writing into an array it was given ({operations:,} operations, out= the array "
        "allocated at {array})",
        "The loop already writes in place (out=); its tasks are shorter than their launch, so "
        "give each more to do: larger arrays per rank (fewer ranks or processors for arrays "
        "this size), or fewer steps (fold repeated operations into one, e.g. one multiply by "
        "a power instead of a multiply per step)."),
    "unknown": (
        "a loop",
        "Launch fewer, larger operations: a loop over slices of an array becomes one "
        "whole-array operation (guide, Example 1); a loop whose steps are whole-array "
        "operations needs larger arrays per task or fewer operations per step."),
}


# why a loop's shape is unknown: (no operations of the runtime's stream at its lines, some)
UNKNOWN_SHAPE_WHY = {
    False: " (This run's runtime streams were not given: give the run's folder, or its "
           "legate_N.runtime.prof files, to tell which.)",
    True: " (This run's runtime streams do not say what each operation did to its arrays: "
          "they were written by an older legate_prof; record the program again to tell "
          "which.)"}


def loop_shape(f, provs):
    """What the program's operations at the lines ``provs`` did to their arrays, from the
    runtime stream (``read.runtime_stream.operation_shape``), each counted once (one rank's
    stream, ``run_counts``): {"shape", "operations", "by_shape", "array"}.  The shape is
    "slices" where most operations of one of its lines read or wrote a slice (the loop walks
    an array: its masks and temporaries are whole, small arrays), else "out" where most of
    every line's wrote into an array given (``out=``), else "time_loop" (whole arrays), or
    "unknown" (no stream, or it did not say); "array": where the arrays sliced (at most 3,
    most sliced first) or written into were allocated."""
    from legate_prof.analyze.run_counts import counting_rank, joined_counts, rank_of_items
    from legate_prof.read.runtime_stream import OUT, SLICE, WHOLE
    words = {}  # (line, shape word) -> operations
    rank = counting_rank(joined_counts(f.profile))
    for part in f.parts:
        m = part.model
        ops = np.flatnonzero(np.asarray(m.items["kind"]) == int(ItemKind.RUNTIME_OP))
        ops = ops[rank_of_items(m, ops) == rank]
        line = part.provenances(ops).astype(np.int64)
        ops, line = ops[np.isin(line, provs)], line[np.isin(line, provs)]
        detail = np.asarray(m.items["detail"])[ops].astype(np.int64)
        for (p, d), c in zip(*np.unique(np.stack([line, detail], 1), axis=0,
                                        return_counts=True)) if len(ops) else ():
            key = (int(p), m.names[int(d)] if d else "")
            words[key] = words.get(key, 0) + int(c)
    kinds = {"slices": SLICE, "out": OUT, "time_loop": WHOLE}

    def count(p, kind):
        return sum(c for (q, w), c in words.items()
                   if (p is None or q == p) and w.startswith(kinds[kind]))

    lines = {p for p, _ in words}
    most = {p: sum(c for (q, _), c in words.items() if q == p) for p in lines}
    shape = ("slices" if any(2 * count(p, "slices") > most[p] for p in lines) else
             "out" if lines and all(2 * count(p, "out") > most[p] for p in lines) else
             "time_loop" if count(None, "time_loop") + count(None, "out") else "unknown")
    prefix = {"slices": SLICE, "out": OUT}.get(shape, "")
    arrays = {}
    for (_, w), c in words.items():
        if prefix and w.startswith(prefix):
            arrays[w[len(prefix):]] = arrays.get(w[len(prefix):], 0) + c
    top = sorted(arrays, key=lambda a: (-arrays[a], a))[:3 if shape == "slices" else 1]
    new, into = count(None, "time_loop"), count(None, "out")
    # (what its operations did: a review read "each making a new array" of a loop whose half
    # wrote into its array, ``x *= 1.0001``)
    made = "each making a new array" if not into else (
        f"{new:,} making a new array, {into:,} writing into one (out=, +=)")
    return {"shape": shape, "operations": sum(most.values()), "made": made,
            "by_shape": {k: count(None, k) for k in kinds if count(None, k)},
            "sliced": count(None, "slices"), "array": ", ".join(top)}


def _loops(f, lines):
    """The loops among ``lines`` (``(provenance, items, tasks, median)`` of lines of short
    tasks): each from a line of at least ``TINY_TASK_MIN_COUNT`` tasks, with the lines whose
    launches (tasks' creation) interleave with the loop's, however few tasks each has."""
    launches = [np.sort(f.app_lines.column(x[0], "create").astype(np.int64)) for x in lines]
    seeds = sorted((k for k, x in enumerate(lines) if x[2] >= TINY_TASK_MIN_COUNT),
                   key=lambda k: launches[k][0])
    taken, loops = set(), []
    for seed in seeds:
        if seed in taken:
            continue
        loop, grew = [seed], True
        while grew:
            ours = np.sort(np.concatenate([launches[k] for k in loop]))
            join = [k for k in range(len(lines)) if k not in taken and k not in loop
                    and _interleave(launches[k], ours)]
            loop += join
            grew = bool(join)
        taken.update(loop)
        loops.append([lines[k] for k in sorted(loop, key=lambda k: launches[k][0])])
    return loops


LOOP_SHARE = 0.25  # of a loop's launch span, a line's launches must share to be one of its own


def _interleave(theirs, ours):
    """Whether launches ``theirs`` interleave with a loop's ``ours`` (both sorted): they fall
    between two different pairs of the loop's launches, and over a quarter of the loop's
    span (a line run once, with a piece launched late, does not)."""
    gap = np.searchsorted(ours, theirs, "right")
    gaps = len(unique_values(gap[(gap > 0) & (gap < len(ours))]))
    shared = min(theirs[-1], ours[-1]) - max(theirs[0], ours[0])
    return gaps >= 2 and shared >= LOOP_SHARE * (ours[-1] - ours[0])


def runtime_overhead(f):
    """The runtime busier than the application: utility 'confetti' with a plateau."""
    util = f.group_busy(("utility",))
    app = f.group_busy(APP_PROC_GROUPS)
    metas = f.kind == ItemKind.META
    if util <= RUNTIME_BUSY_RATIO * max(app, 1) or not np.any(metas) \
            or np.count_nonzero(f.app) < RUNTIME_MIN_TASKS:
        return []
    counts = {}
    for p in f.prov[f.app].tolist():
        if p:
            counts[p] = counts.get(p, 0) + 1
    top = sorted(counts, key=counts.get, reverse=True)[:5]
    return [_finding(
        "runtime_overhead",
        f"the runtime was busy {util / max(app, 1):.1f}x as long as the application "
        f"({format_ns(util)} of utility work against {format_ns(app)})",
        [f.line(p) for p in top], f.window(metas),
        {"utility_busy_ns": int(util), "application_busy_ns": int(app),
         "meta_tasks": int(np.count_nonzero(metas)),
         "tasks_launched": int(np.count_nonzero(f.app))},
        util,
        "Launch fewer, larger operations (whole-array expressions, no per-slice loops); each "
        "launch costs the runtime mapping, dependence analysis and scheduling.",
        holds=_of_category("runtime"))]


def advanced_indexing(f):
    """nonzero + scatter/gather: index arrays and extra passes where a boolean mask does."""
    ids = [i for i, n in enumerate(f.m.names) if n in ADVANCED_INDEXING_TASKS]
    sel = f.app & np.isin(f.name, ids)
    if not np.any(sel):
        return []
    provs = sorted({int(p) for p in f.prov[sel].tolist() if p})
    by_name = {}
    for n in f.name[sel].tolist():
        by_name[f.m.names[n]] = by_name.get(f.m.names[n], 0) + 1
    by_name = dict(sorted(by_name.items()))  # (by name, not by which the model stores first)
    return [_finding(
        "advanced_indexing",
        f"nonzero + scatter/gather: {int(np.count_nonzero(sel))} index tasks taking "
        f"{format_ns(f.run[sel].sum())}",
        [f.line(p) for p in provs], f.window(sel),
        {"tasks": by_name, "task_time_ns": int(f.run[sel].sum())},
        int(f.run[sel].sum()),
        "Use a boolean mask instead of nonzero(...) + advanced indexing: np.putmask(z, cond, "
        "v) or np.where(cond, a, b) (guide, Example 1).",
        holds=_on_lines(f, provs, ("compute", "waiting", "runtime", "copy",
                                    "dependent_partitioning")))]


def _mask(n, where):
    """A boolean mask of ``n`` items, true at ``where``."""
    m = np.zeros(n, bool)
    m[where] = True
    return m


def temporaries(f):
    """Expressions that materialize intermediates: several full-size arrays from one line.

    With the runtime's event stream the arrays are the program's own, each counted once
    however many ranks hold it; from Legion alone a line is named only where operations of
    different kinds (task names) made its full-size instances: pieces of one operation split
    over processors or ranks, or an operation writing into an output it was given, are one
    kind, and two operations of one kind cannot be told from one split in more pieces.
    """
    inst = np.flatnonzero(f.kind == ItemKind.INSTANCE)
    if len(inst) == 0:
        return []
    size = f.of_items(inst, "size")
    runtime = stream_arrays(f.kind[inst], f.of_items(inst, "op_id"))
    guess = not runtime.any()
    if not guess:  # the program's arrays: every rank numbers them alike in its stream
        inst = inst[runtime]
        size = f.of_items(inst, "src")  # (the whole array's, not the rank's piece)
        array = f.of_items(inst, "inst").astype(np.int64)
    else:  # Legion's instances: the kinds of operation that made them, where known
        array = _operation_kinds(f, inst)
        known = array >= 0  # (an operation whose task is not in view cannot be told)
        inst, size, array = inst[known], size[known], array[known]
        if len(inst) == 0:
            return []
    big = size >= 0.5 * size.max()
    role = None if guess else _array_roles(f, inst)
    out = []
    for p in unique_values(f.prov[inst[big]]).tolist():
        here = np.flatnonzero(big & (f.prov[inst] == p))
        said = role is not None and bool((role[here] >= 0).any())  # (the stream said which
        if said:  # arrays are temporaries: those alone)
            results = len(unique_values(array[here[role[here] == RESULT]]))
            here = here[role[here] == TEMPORARY]
        kinds, first = unique_with(array[here], index=True)
        if not p or len(kinds) < (1 if said else 2):
            continue
        if said and 2 * len(kinds) <= results:  # (an expression makes one or more a result;
            continue  # a loop's first result whose input another name held reads as one)
        # an array's bytes once (not once per rank); Legion's pieces add up to their arrays
        b = int(size[here].sum() if guess else size[here[first]].sum())
        tasks = f.app & (f.prov == p)
        out.append(_temporaries_finding(f, p, len(kinds), b, tasks, inst[here],
                                        _made_by(f, array[here]) if guess else None,
                                        said))
    return out


def _array_roles(f, inst):
    """What each of the stream's arrays ``inst`` was to the line that made it (``RESULT``,
    ``TEMPORARY``; -1: not said, a stream without operands): a loop's line made one result
    an iteration, and its arrays read "an expression's result with its intermediates" (a
    review)."""
    from legate_prof.assemble.stream_items import ARRAY_ROLE_WORDS
    detail = f.of_items(inst, "detail").astype(np.int64)
    out = np.full(len(inst), -1, np.int64)
    for k in unique_values(detail).tolist():
        word = str(f.m.names[k]) if k else ""
        for role, said in ARRAY_ROLE_WORDS.items():
            if word == said:
                out[detail == k] = role
    return out


def _operation_kinds(f, inst):
    """Which kind of operation made each instance: the name id of its operation's task, -1
    where no task of that operation is in the profile (or in its window)."""
    op = f.of_items(inst, "op_id")
    part = f.of_items(inst, "part")
    tasks = np.flatnonzero(f.app)
    t_op, t_part = f.of_items(tasks, "op_id"), f.of_items(tasks, "part")
    kind = np.full(len(inst), -1, np.int64)
    for k in unique_values(part).tolist():
        mine = np.flatnonzero(part == k)
        theirs = t_part == k
        order = stable_order(t_op[theirs])
        ops, names = t_op[theirs][order], f.name[tasks[theirs]][order]
        if len(ops) == 0:
            continue
        j = np.clip(np.searchsorted(ops, op[mine]), 0, len(ops) - 1)
        hit = ops[j] == op[mine]
        kind[mine[hit]] = names[j[hit]]
    return kind


def _made_by(f, kinds):
    """Instances by the kind of operation that made them, in words."""
    out = {}
    for k in kinds.tolist():
        out[f.m.names[k]] = out.get(f.m.names[k], 0) + 1
    return out


def _temporaries_finding(f, p, arrays, nbytes, tasks, instances, made_by, temporaries=False):
    """A temporaries finding; ``made_by`` (a guess from Legion's instances alone): the
    instances by the kind of operation that made them, None where the stream counted;
    ``temporaries``: the stream said which arrays were (its operations' operands), and
    ``arrays`` counts those alone."""
    evidence = {"arrays": int(arrays), "bytes": nbytes, "task_time_ns": int(f.run[tasks].sum())}
    if made_by is None and temporaries:
        title = (f"{arrays:,} full-size temporar{'y' if arrays == 1 else 'ies'} made by one "
                 f"line ({format_bytes(nbytes)}): an expression's intermediate "
                 f"result{'s' if arrays != 1 else ''}, read by the line's next operation "
                 "and not kept")
    elif made_by is None:
        # (the line's result is among them: "intermediates" alone read `d = x[2:] -
        # x[:-2]*0.5`'s two arrays as two temporaries, where d lives on; a review)
        title = (f"{arrays:,} full-size arrays made by one line ({format_bytes(nbytes)}): "
                 "an expression's result with its intermediates")
    else:
        evidence.update(guess=True, instances_by_operation=made_by)
        title = (f"{arrays:,} kinds of operation ({', '.join(sorted(made_by))}) made full-size "
                 f"instances at one line ({format_bytes(nbytes)}): intermediates of an "
                 "expression? (a guess from Legion's instances: without the runtime's stream, "
                 "legate_N.runtime.prof, the arrays cannot be counted)")
    ran = {f.m.names[k] for k in unique_values(f.name[tasks]).tolist()} if tasks.any() else set()
    remedy = ("Write into a preallocated output (np.add(x, y, out=z), np.multiply(x, y, "
              "out=t); t += 1.0) instead of materializing temporaries; fewer live instances "
              "also means less memory pressure.")
    holds = _on_lines(f, [p], ("compute", "waiting"))
    if "Convert" in ran:  # (x = np.random.random(N).astype(np.float32): two arrays of N)
        remedy = ("Make the array in the type you need instead of converting it "
                  "(rng = np.random.default_rng(); rng.random(N, dtype=np.float32), not "
                  "np.random.random(N).astype(np.float32)): the conversion is a second "
                  "full-size array and a pass over it. " + remedy)
        tasks, holds = _conversion_alone(f, p, tasks, evidence)
    return _finding(
        "temporaries", title, [f.line(p)],
        f.window(tasks if tasks.any() else _mask(len(f.kind), instances)), evidence,
        int(f.run[tasks].sum()), remedy, holds=holds)


def _conversion_alone(f, p, tasks, evidence):
    """(the line's conversion tasks, ``holds`` for their pieces of the path): what making the
    array in its type saves is the conversion; the line's other tasks stay in the line made
    so (a review: the guide's line 4 "cost" 36 % of the run, the first ``Random`` task's
    one-time start-up, where the conversion took under 1 ms)."""
    convert = tasks & (f.name == f.m.names.index("Convert"))
    evidence["task_time_ns"] = int(f.run[convert].sum())
    evidence["other_task_time_ns"] = int(f.run[tasks & ~convert].sum())  # (not counted)
    lines = _on_lines(f, [p], ("compute", "waiting"))

    def holds(ns, cat, line, item):
        return lines(ns, cat, line, item) & convert[np.asarray(item, np.int64)]
    return convert, holds


def copy_baseline(f):
    """A thin persistent channel baseline of small copies."""
    sel = f.kind == ItemKind.COPY
    n = int(np.count_nonzero(sel))
    if n < COPY_BASELINE_MIN:
        return []
    size = f.of_items(np.flatnonzero(sel), "size")
    med = float(np.median(size))
    if med >= SMALL_COPY_BYTES:
        return []
    busy = int(f.run[sel].sum())
    mine = np.zeros(len(f.kind), bool)  # (its small copies: a gather's big copies on other
    mine[np.flatnonzero(sel)[size < SMALL_COPY_BYTES]] = True  # lines were its, a review)
    small = f.prov[sel][(size < SMALL_COPY_BYTES) & (f.prov[sel] != 0)].astype(np.int64)
    counts = np.bincount(small) if len(small) else np.zeros(0, np.int64)
    provs = [int(p) for p in stable_order(-counts) if counts[p]]  # (most first)
    return [_finding(
        "copy_baseline",
        f"{n:,} small copies (median {format_bytes(med)}) keep the channels busy",
        [f.line(p) for p in provs][:10], f.window(sel),
        {"copies": n, "median_bytes": int(med), "bytes": int(size.sum()),
         "effective_bandwidth_gbs": round(float(size.sum()) / max(busy, 1), 3)},
        busy,
        "Avoid scatter/gather and per-slice access that move many small pieces; prefetch "
        "whole arrays once (guide: a thin persistent channel baseline).",
        holds=_of_items(mine, ("copy",)))]


def partition_overhead(f):
    sel = f.kind == ItemKind.DEP_PART
    n = int(np.count_nonzero(sel))
    if n < PARTITION_MIN:
        return []
    provs = sorted({int(p) for p in f.prov[sel].tolist() if p})
    return [_finding(
        "partition_overhead", f"{n:,} dependent-partitioning operations",
        [f.line(p) for p in provs][:10], f.window(sel),
        {"dp_events": n, "dp_time_ns": int(f.run[sel].sum())}, int(f.run[sel].sum()),
        "Index with slices or boolean masks of whole arrays; data-dependent indexing "
        "(nonzero, fancy indexing) makes the runtime partition at run time.",
        holds=_of_category("dependent_partitioning"))]


# memories of one kind under pressure named one by one; more, one finding for the kind (at
# 1,000 ranks a run had 1,202 memories under pressure: as many findings buried the others)
PRESSURE_NAMED = 3
_PRESSURE_REMEDY = ("Fewer live temporaries (out=, in-place updates), prefetch or stencil_hint "
                    "so one store does not get several instances, or a larger pool (--sysmem "
                    "/ --fbmem).")


def memory_pressure(f):
    """Each memory whose peak reached ``MEMORY_PRESSURE`` of its capacity; where more than
    ``PRESSURE_NAMED`` of one kind did (on as many ranks), one finding for that kind, the
    highest named."""
    hits = {}  # memory kind -> [(rank, peak, capacity, its instances)], in the run's order
    instances = np.flatnonzero(f.kind == ItemKind.INSTANCE)
    instance_lanes = None  # asked of the parts once, when a memory is found under pressure
    for (rank, group), step in f.m.utilization_steps.items():
        if group not in MEMORY_GROUPS:
            continue
        lanes = f.m.lanes_of(group, rank)
        cap = int(f.m.lanes["capacity"][lanes].sum())
        if cap <= 0:
            continue
        peak = float(step.peak_level())
        # (as a user reads the share, to 0.1 %: the guide's out-of-memory run peaked at
        # 16,777,208 of 20,971,520 bytes, "16.0 of 20.0 MiB", and was 79.99996 %: no finding)
        if round(1000 * peak / cap) < 1000 * MEMORY_PRESSURE:
            continue
        # (the instances sorted by lane once: a pass over all of them for each memory
        # group was ranks x ranks at 1,000 ranks)
        if instance_lanes is None:
            instance_lanes = f.of_items(instances, "lane")
            by_lane = stable_order(instance_lanes)
            instance_lanes = instance_lanes[by_lane]
        a = np.searchsorted(instance_lanes, lanes, side="left").tolist()
        b = np.searchsorted(instance_lanes, lanes, side="right").tolist()
        mine = np.sort(np.concatenate([by_lane[x:y] for x, y in zip(a, b)] or
                                      [np.zeros(0, np.int64)]))
        hits.setdefault(group, []).append((int(rank), peak, cap, instances[mine]))
    out = []
    for group, rows in hits.items():
        if len(rows) <= PRESSURE_NAMED:
            out += [_pressure(f, group, [row], row) for row in rows]
        else:
            out.append(_pressure(f, group, rows, max(rows, key=lambda r: (r[1] / r[2], -r[0]))))
    return out


def _pressure(f, group, rows, top):
    """The finding of memories ``rows`` of kind ``group`` under pressure (``top``: the one
    named: the highest)."""
    inst = np.concatenate([r[3] for r in rows])
    lines = [f.line(p) for p in sorted({int(p) for p in f.prov[inst].tolist() if p})]
    rank, peak, cap, _ = top
    evidence = {"peak_bytes": int(peak), "capacity_bytes": cap, "rank": rank, "memory": group}
    reported = [i for i in getattr(f.m, "oom_instances", None) or ()
                if i["rank"] in {r[0] for r in rows} and i.get("store_allocated_at")]
    if reported:  # (Legate's report of what the pool held: its instances' items are named by
        # the operations that made them; the stores' lines are what the stream names without
        # the report — oom2 read 10 and 13 with --log, 4, 7, 13 and 16 without, a review)
        lines = _by_line({i["store_allocated_at"] for i in reported})
        evidence["made_by"] = _by_line({i["created_at"] for i in reported if i["created_at"]})
    if len(rows) == 1:
        title = (f"rank {rank} {group} memory peaked at {peak / cap:.0%} of its "
                 f"{cap / 2**20:.0f} MiB")
    else:
        low = min(r[1] / r[2] for r in rows)
        title = (f"{group} memory peaked at {low:.0%}–{peak / cap:.0%} of its capacity on "
                 f"{len(rows):,} ranks (the highest: rank {rank}, {peak / cap:.0%} of its "
                 f"{cap / 2**20:.0f} MiB)")
        evidence["ranks"] = len(rows)
    return _finding("memory_pressure", title, lines[:10],
                    f.window(_mask(len(f.kind), inst)), evidence, 0, _PRESSURE_REMEDY)


def _by_line(sites):
    """Source lines ("prog.py:13") in their file's order."""
    def key(site):
        path, _, line = site.rpartition(":")
        return (path, int(line)) if line.isdigit() else (site, 0)
    return sorted(sites, key=key)


def _held_twice(rep):
    """The guide's Example 2 in a failure's headline: the stores held as several instances
    (a slice and the whole array), which is what to change — it was one field of the
    evidence among many (a user's review)."""
    said = []
    for h in rep.get("holders") or []:
        n = len(h.get("instances") or [])
        if n > 1:
            size = sum(int(i.get("size", 0)) for i in h["instances"])
            site = str(h.get("allocated_at", "")).rsplit("/", 1)[-1] or "an unknown line"
            said.append(f"the array made at {site} is held as {n} instances ({size:,} bytes)")
    return ("; " + "; ".join(said[:3])) if said else ""


def _fits_yet_failed(rep):
    """Why a request that the pool's free bytes cover still failed, in words (the numbers
    alone read as if it fit: 16,777,208 held + 4,194,304 asked <= 20,971,520, a user's
    review), or None."""
    try:
        asked, held, pool = (int(rep[k]) for k in ("requested_bytes", "reserved_bytes",
                                                   "pool_bytes"))
    except (KeyError, TypeError, ValueError):
        return None
    left = pool - held
    if not 0 < asked <= left:
        return None
    return (f"{left:,} bytes, no fewer than asked, yet not in one piece: the free space lies "
            "between instances, or is lost to their alignment")


def out_of_memory(f):
    """Each rank's out-of-memory report (legate's console output, ``--log``), and each rank
    that stopped before the run's end without one (``crash``: its stream or Legion's log
    says so; the console output tells why)."""
    out = []
    for mk in f.m.markers:
        if mk.get("kind") == "crash":
            cut = mk.get("fields", {}).get("log") == "cut short"
            out.append(_finding(
                "crash", mk.get("title", "crashed"), [], [mk["time"], mk["time"]],
                {k: str(v) for k, v in mk.get("fields", {}).items()}, 0,
                _crash_remedy(mk.get("fields", {}), cut)))
        if mk.get("kind") != "oom":
            continue
        rep = mk.get("report", {}) or {}
        fields = mk.get("fields", {})
        prov = [rep["provenance"]] if rep.get("provenance") else []
        evidence = {k: str(v) for k, v in fields.items()}
        if (free := _fits_yet_failed(rep)) is not None:
            evidence["free"] = free
        out.append(_finding(
            "out_of_memory", mk.get("title", "out of memory") + _held_twice(rep), prov,
            _up_to(f, mk["time"]), evidence, 0, _oom_remedy(f, rep)))
    return out


# signals a process gets from outside (a user, a job's scheduler), not from a fault of its own
SIGNALS_FROM_OUTSIDE = ("SIGINT", "SIGTERM", "SIGQUIT", "SIGHUP", "SIGKILL")


def _crash_remedy(fields, cut):
    """What to do of a rank that stopped early: as far as legate's console output (``--log``)
    told why (``out_of_memory._crashes_told``: the signal it caught, or none)."""
    if cut:
        return ("Read the whole file: copy the log again (its end, with the timeline Legion "
                "writes at shutdown, is missing), then look again.")
    signal = str(fields.get("signal", ""))  # (a marker is read from a stranger's bundle)
    if any(f"({s})" in signal for s in SIGNALS_FROM_OUTSIDE):
        return ("The run was stopped from outside, not by a fault of its own or a lack of "
                "memory: run it to its end for the whole timeline (Legion writes it at "
                "shutdown); what is shown is what its runtime stream recorded until then.")
    if signal:
        return ("The backtrace after the signal in legate's console output says where it "
                "failed: its first frames in legate's or your program's code.")
    if "console output" in fields:
        return ("Read the last lines of legate's console output for why: a job's time "
                "limit, or the system's out-of-memory killer (the kernel's log, dmesg, "
                "names the process it killed).")
    return ("Give legate's console output with --log: an out-of-memory report there names "
            "the memory, the bytes asked and the stores that held the pool.")


# the memory kinds an out-of-memory report names, and legate's flag that sizes each, per rank
POOL_FLAGS = {"SYSTEM_MEM": "--sysmem", "FBMEM": "--fbmem", "Z_COPY_MEM": "--zcmem",
              "ZCMEM": "--zcmem", "SOCKET_MEM": "--numamem"}
POOL_HEADROOM = 1.25  # (held + asked, and room for instances' alignment: the guide's run
# failed with 8 bytes more free than it asked)


def _oom_remedy(f, rep):
    """What to change, from the report: the store held twice prefetched once, whole (the
    guide's ``stencil_hint`` or a whole-array touch in place, naming the array where its
    line's code says it), in-place updates; or a bigger pool, per rank — the guide's first
    fix, with the size this run needed (a review: the remedy named neither)."""
    twice = [h for h in rep.get("holders") or [] if len(h.get("instances") or []) > 1]
    site = str(twice[0].get("allocated_at", "")) if twice else ""
    name = _assigned_name(f.m.line_text.get(site, "")) or "arr"
    at = f" made at {site.rsplit('/', 1)[-1]}" if site else ""
    words = []
    if twice:
        words.append(f"Prefetch the array{at} once, whole, before its slices are used: "
                     f"{name}.stencil_hint(low_offsets=(1,), high_offsets=(1,)) right after "
                     f"making it (the halo its slices reach), or touch it whole in place first, "
                     f"np.multiply({name}, 1, out={name}); write results into arrays you "
                     "have (np.add(x, 3, out=x) rather than y = x + 3) (guide, Example 2, B).")
    else:
        words.append("Keep fewer instances of one store alive: prefetch the whole array "
                     "before using slices, give stencil_hint for halo access, update in place "
                     "(guide, Example 2).")
    flag = POOL_FLAGS.get(str(rep.get("memory_kind", "")))
    try:
        need = (int(rep["reserved_bytes"]) + int(rep["requested_bytes"])) * POOL_HEADROOM
        pool = int(rep["pool_bytes"])
    except (KeyError, TypeError, ValueError):
        need = pool = None
    if flag and need:
        ranks = len(f.m.ranks)
        words.append(f"Or give each rank a bigger pool: {flag} {max(-(-int(need) // 2**20), 1)} "
                     f"or more (MiB; it had {pool / 2**20:.1f}, held "
                     f"{int(rep['reserved_bytes']) / 2**20:.1f} and asked "
                     f"{int(rep['requested_bytes']) / 2**20:.1f}): the flag is per rank"
                     + (f", and this run has {ranks} ranks: that much memory {ranks} times "
                        "over where they share a machine" if ranks > 1 else "")
                     + " (guide, Example 2, A).")
    return " ".join(words)


def _assigned_name(code):
    """The name a line of code assigns (``b = np.zeros(...)``: "b"), or ""."""
    head = code.split("=", 1)[0].strip() if "=" in code and "==" not in code.split("=", 2)[0]         else ""
    return head if head.isidentifier() else ""


def _up_to(f, t):
    """The window that shows memory filling up to the failure at ``t``: from the run's first
    item, and a twentieth of that past it (a click on the finding zoomed to 2 us, the rise
    out of sight) — no further than the timeline goes (it ended 17 ms past the timeline of
    the guide's out-of-memory run: a "when" after the run's end)."""
    first = int(f.start.min()) if len(f.start) else int(t)
    first = min(first, int(t))
    shown_end = int(f.m.time_range()[1])
    return [first, min(int(t) + max((int(t) - first) // 20, 1), max(shown_end, int(t) + 1))]


def message_latency(f):
    """Messages between nodes slow enough to matter: the network looks congested (the
    reference's warning) and the critical path waits on messages for a share of the run —
    unless the nodes' clocks disagree by more than a slow message takes and by half the
    slowest latency or more: then times across nodes mostly measure the clocks, and the
    finding says that instead (its wall-clock cost unknown)."""
    lat = f.source.message_latency()
    if not lat.congested:
        return []
    pieces = f.path.pieces()
    wall = int(pieces[0][_messages_on_path(f)(*pieces)].sum())
    if wall < MESSAGE_WALL_SHARE * max(f.run_span, 1):
        return []
    msgs = f.kind == ItemKind.MESSAGE
    evidence = {"messages": lat.messages, "slow_messages": lat.slow,
                "percent_slow": round(lat.percent_slow, 2), "longest_ns": lat.longest_ns,
                "skewed_messages": lat.skewed}
    judged = _run_latency(f)
    apart = judged.clocks_apart_ns
    one_host = lat.one_host  # (no network between them: the ranks wait for each other's cores)
    if one_host:
        evidence["one_host"] = one_host
    if judged.clocks_make_latencies:  # (the clocks make most of it)
        evidence["clocks_apart_ns"] = int(apart)
        return [_waited_on_most(f, _finding(
            "message_latency",
            f"the {'ranks' if one_host else 'nodes'}' clocks disagree by about "
            f"{format_ns(int(apart))} ({lat.skewed:,} of {lat.messages:,} messages arrived "
            "before they were sent" + (f"; every rank ran on one machine ({one_host}), their "
                                       "clocks started apart" if one_host else "")
            + f"): the messages' latencies (the slowest {format_ns(lat.longest_ns)}) and the "
            f"critical path's waits on messages ({format_ns(wall)}) measure the clocks, not "
            + ("the messages" if one_host else "the network"),
            [], f.window(msgs), evidence, int(f.run[msgs].sum()),
            "Compare each rank's timeline on its own clock: on one machine the ranks' clocks "
            "start apart, and times across ranks are off by that here." if one_host else
            "Compare each node's timeline on its own clock, or record again with the nodes' "
            "clocks synchronized (NTP or PTP on every node): times across nodes are off here."))]
    where = (f"between the {len(f.m.ranks)} ranks, all on one machine "
             f"({one_host})" if one_host else "")
    return [_waited_on_most(f, _finding(
        "message_latency",
        f"slow messages{' ' + where if where else ''}: {lat.slow:,} of {lat.messages:,} took "
        f"{format_ns(lat.threshold_ns)} or more (the slowest {format_ns(lat.longest_ns)}); "
        f"the critical path waits on messages for {format_ns(wall)} (their handling, which "
        f"`critical` counts as runtime, and their time in flight, which it counts as gap)",
        [], f.window(msgs), evidence, int(f.run[msgs].sum()),
        ("The ranks share one machine, so no network is slow: a message waits for its rank's "
         "threads to get a core. Run fewer ranks than the machine has cores to spare (each "
         "rank runs several threads), or spread them over machines; fewer, larger operations "
         "send fewer messages." if one_host else
         "Check the network between the nodes (congestion, a slow interconnect or transport); "
         "fewer, larger operations across nodes send fewer messages."),
        holds=_messages_on_path(f)))]


MESSAGE_WALL_SHARE = 0.01  # of the run: a message finding below this is not worth naming


def _waited_on_most(f, finding):
    """``finding`` with its window at the critical path's longest wait on one message (its
    time in flight and its handling), ``window_is`` saying so: the messages' own window is
    the whole run, where a click on the finding left the view (a GUI walk)."""
    ns, cat, line, item = f.path.pieces()
    held = np.flatnonzero(_messages_on_path(f)(ns, cat, line, item) & (ns > 0))
    if len(held) == 0:
        return finding
    begin = np.asarray(f.path.rows[4], np.int64)[held]
    which, at = np.unique(np.asarray(item)[held], return_inverse=True)
    worst = at == int(np.argmax(np.bincount(at, weights=ns[held], minlength=len(which))))
    finding["window_ns"] = [int(begin[worst].min()), int((begin[worst] + ns[held][worst]).max())]
    # (its parts said: "the slowest 14.600 ms" beside a window of 92 ms read as a contradiction,
    # a review; the window is mostly the message's handling, which the slowest's time omits)
    kind = np.asarray(cat)[held][worst]
    flight = int(ns[held][worst][kind == "gap"].sum())
    handling = int(ns[held][worst][kind != "gap"].sum())
    finding["window_is"] = (f"the critical path's longest stretch on one message: "
                            f"{format_ns(handling)} handling it, {format_ns(flight)} before it "
                            "where nothing on the path ran")
    return finding


def _messages_on_path(f):
    """Messages on the path and the gaps before them (in flight)."""
    def holds(ns, cat, line, item):
        return (f.kind[item] == ItemKind.MESSAGE) & np.isin(cat, ["runtime", "gap"])
    return holds


# findings whose lines' idle stretches say nothing of them (the shutdown's lines are what it
# released: the work that waited after idle stretches ran long before)
NO_IDLE_EVIDENCE = ("shutdown",)
# findings whose lines made what they spent time on, later: the shutdown's lines made the
# arrays it released; their own row of the path is time before the shutdown
LINES_ARE_CAUSES = ("shutdown",)
SHUTDOWN_SHARE = 0.05  # of the run: a shutdown shorter than this is not worth naming
SHUTDOWN_ITEMS_PER_RANK = 2000  # fewer: the runtime's own teardown (a few hundred a rank)


WARM_UP_RATIO = 20  # a first task this many times its later ones' median is start-up
WARM_UP_SHARE = 0.05  # of the run, on the critical path: less is not worth naming
NAMED_SHARE = 0.01  # of the run: the runtime's start-up work of a kind named in the title


def warm_up(f):
    """A task's first run on each processor far slower than its later runs there: one-time
    start-up (what the task uses loaded and initialized on first use), paid once per run
    whatever the problem's size.  The guide's Example 1 at a test's size: the first
    ``Random`` tasks 288 ms, the later ones 0.2 ms, 64 % of the run (a review read the
    line's 782 ms of the path as the line's, with no finding saying what it was).  The
    runtime's own first work likewise (``_runtime_warm_up``).  Not in a window that begins
    after the run did: what runs first there is no start-up (a window at 1 s of the bundled
    example named a mapping there "one-time start-up", a review)."""
    ids = np.flatnonzero(f.app)
    out = []
    for n, (a, b, slow, usual) in _slow_first_runs(f, ids, f.run[ids]).items():
        mine = np.zeros(len(f.kind), bool)
        mine[a] = True
        if _held_on_path(f, mine, ("compute", "waiting")) >= WARM_UP_SHARE * max(f.run_span, 1):
            out.append(_warm_up_finding(f, n, a, b, slow, usual))
    out += _runtime_warm_up(f)
    if out and f.source.computed("window_starts_late"):
        f.unjudged.append("warm_up: what ran first in this window was slow, but the window "
                          "begins after the run began; start-up is judged in a window that "
                          "holds the run's start")
        return []
    return out


def _slow_first_runs(f, ids, values):
    """{name: (its first items on each lane, its later ones, their medians of ``values``)}
    of the items ``ids`` whose names' first runs on a lane take ``WARM_UP_RATIO`` times their
    later ones (names run more than once on a lane)."""
    if len(ids) < 2:
        return {}
    lane, name = f.of_items(ids, "lane"), f.name[ids].astype(np.int64)
    # (a sort numpy runs with the interpreter's lock let go: one by the (name, lane) keys,
    # radix sorted, took 0.5 s not 1-2 s, but held the lock — the window's event loop
    # stopped 110-135 ms while its findings were worked out, `benchmarks/freeze_probe.py`)
    order = np.lexsort((f.start[ids], lane, name))
    first = np.zeros(len(ids), bool)  # (each name's earliest item on each lane)
    first[order[np.r_[True, (name[order][1:] != name[order][:-1])
                      | (lane[order][1:] != lane[order][:-1])]]] = True
    slow, usual = _medians(name, first, values), _medians(name, ~first, values)
    return {n: (ids[(name == n) & first], ids[(name == n) & ~first], slow[n], usual[n])
            for n in sorted(set(slow) & set(usual))
            if slow[n] >= WARM_UP_RATIO * max(usual[n], 1.0)}


def _held_on_path(f, mine, categories):
    """The critical path's time in the items ``mine`` (a mask), pieces of ``categories``."""
    pieces = f.path.pieces()
    return int(pieces[0][_of_items(mine, categories)(*pieces)].sum())


def _of_items(mine, categories):
    """``holds`` for the pieces of the critical path in the items ``mine`` (a mask), of
    ``categories``."""
    def holds(ns, cat, line, item):
        return mine[np.asarray(item, np.int64)] & np.isin(cat, list(categories))
    return holds


def _runtime_warm_up(f):
    """The runtime's work before the program's first task began, each item far slower than
    its kind's median (``WARM_UP_RATIO``): the first operation's dependence analysis, its
    mapping making the first instances in a memory — the guide's Example 1, a mapping of
    239 ms (its kind's median 0.3 ms) counted as the runtime's overhead, whose remedy (fewer
    launches) cannot help it (a review)."""
    meta = f.kind == ItemKind.META
    if not np.any(f.app) or not np.any(meta):
        return []
    took = (f.stop - f.start).astype(np.float64)  # (not its running: mapping is in its calls)
    ids = np.flatnonzero(meta)
    usual = _medians(f.name[ids].astype(np.int64), np.ones(len(ids), bool), took[ids])
    early = ids[f.start[ids] < f.start[f.app].min()]
    mine, names = np.zeros(len(f.kind), bool), {}
    for n in np.unique(f.name[early]).tolist():
        of_name = ids[f.name[ids] == n]
        a = early[(f.name[early] == n) & (took[early] >= WARM_UP_RATIO * max(usual[n], 1.0))]
        if len(a) and len(of_name) - len(a) >= 2:  # (a kind seen again: its usual cost known)
            mine[a] = True
            names[n] = (a, of_name[~np.isin(of_name, a)], usual[n])
    if not names or _held_on_path(f, mine, ("runtime",)) < WARM_UP_SHARE * max(f.run_span, 1):
        return []
    return [_runtime_warm_up_finding(f, mine, names, took)]


def _runtime_warm_up_finding(f, mine, names, took):
    order = sorted(names, key=lambda n: -took[names[n][0]].sum())
    first = {n: int(np.median(took[names[n][0]])) for n in order}
    said = [f"{f.m.names[n]} {format_ns(first[n])}, {plural(len(names[n][1]), 'later one')} "
            f"{format_ns(int(names[n][2]))}" for n in order
            if n == order[0] or took[names[n][0]].sum() >= NAMED_SHARE * f.run_span]
    provs = sorted({int(p) for p in f.prov[mine].tolist() if p})
    return _finding(
        "warm_up",
        "the runtime's first work took far longer than its later work of the same kind "
        f"(median): {'; '.join(said[:3])}{'; …' if len(said) < len(order) else ''} — one-time "
        "start-up, paid once per run",
        [f.line(p) for p in provs][:10], f.window(mine),
        {"first_items": int(np.count_nonzero(mine)),
         "work": {f.m.names[n]: {"first": len(names[n][0]), "later": len(names[n][1]),
                                 "first_median_ns": first[n],
                                 "later_median_ns": int(names[n][2])} for n in order},
         "time_ns": int(took[mine].sum())},
        int(sum(took[names[n][0]].sum() - names[n][2] * len(names[n][0]) for n in order)),
        "Not a slow line: the runtime's later work of the same kind shows its steady cost. "
        "A run's first operations set the runtime up (its first dependence analysis, the "
        "first instances made in each memory); that does not grow with the problem, so a "
        "short run is mostly start-up, and fewer launches would not shorten it. Profile a "
        "run long enough for it to be a small share.",
        holds=_of_items(mine, ("runtime",)))


MEDIANS_ONE_BY_ONE = 4096  # keys at most whose medians are each found apart (else one sort)


def _medians(key, sel, values):
    """{key: the median of ``values`` where ``sel``} over whole columns (as ``np.median``:
    the two middle values' mean for an even count).  The keys (task names: a few dozen)
    grouped by one stable sort of small integers, each group's middle found by a partial
    sort: a sort of all values by (key, value) was 2 of `insights`' 22 s at 10 M items."""
    key, v = key[sel], np.asarray(values, np.float64)[sel]
    if len(key) == 0:
        return {}
    o = stable_order(key)
    k, v = key[o], v[o]
    head = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    ends = np.r_[head[1:], len(k)]
    if len(head) > MEDIANS_ONE_BY_ONE:  # (many keys: one sort of each group's values)
        v = v[np.lexsort((v, k))]
        count = ends - head
        mid = (v[head + (count - 1) // 2] + v[head + count // 2]) / 2
        return dict(zip(k[head].tolist(), mid.tolist()))
    return {int(k[a]): float(np.median(v[a:b])) for a, b in zip(head.tolist(), ends.tolist())}


def _warm_up_finding(f, n, first, later, slow, usual):
    name = f.m.names[n]
    provs = sorted({int(p) for p in f.prov[first].tolist() if p})
    mine = np.zeros(len(f.kind), bool)
    mine[first] = True
    return _finding(
        "warm_up",
        f"the first {name} task"
        + (f" on each of {len(first):,} processors took {format_ns(int(slow))} (median)"
           if len(first) > 1 else f" took {format_ns(int(slow))}")
        + f", the {plural(len(later), 'later one')} {format_ns(int(usual))} (median): "
        f"{slow / max(usual, 1.0):,.0f}x — one-time start-up, paid once per run (unless "
        "that first task was given that much more work than the later ones)",
        [f.line(p) for p in provs][:10], f.window(mine),
        {"first_tasks": int(len(first)), "first_median_ns": int(slow),
         "later_tasks": int(len(later)), "later_median_ns": int(usual),
         "task_time_ns": int(f.run[first].sum())},
        int(f.run[first].sum() - usual * len(first)),
        f"Not a slow line: {name}'s later tasks show its steady cost. A task's first run on a "
        "processor loads and initializes what it uses; that does not grow with the problem, "
        "so a short run is mostly start-up. Profile a run long enough for it to be a small "
        f"share, or run {name}'s operation once on a small array before the part you measure.",
        holds=_of_items(mine, ("compute", "waiting")))


def shutdown(f):
    """The runtime cleaning up after the program's top-level task ended, for a good share
    of the run: named by what ran, tied to the lines whose arrays and operations it
    released (``critical_path.shutdown_tail``)."""
    from legate_prof.analyze.critical_path import shutdown_tail
    path = f.path
    run = path.run[1] - path.run[0]
    if path.shutdown_ns is None or run <= 0:
        return []
    ns, cat, _, _ = path.pieces()
    on_path = int(ns[cat == "shutdown"].sum())
    if on_path < SHUTDOWN_SHARE * run:
        return []
    tail = shutdown_tail(f.source, path.shutdown_ns, path.run[1], on_path, path.program_end_ns)
    if tail["items"] < SHUTDOWN_ITEMS_PER_RANK * max(len(f.m.ranks), 1):
        return []
    work = ", ".join(f"{w['count']:,} {w['name']}" for w in tail["work"][:3])
    return [_finding(
        "shutdown",
        f"the runtime cleaned up for {format_ns(tail['ns'])} after the program ended "
        f"({100.0 * tail['ns'] / run:.1f} % of the {f.whole}): {work}",
        list(tail["lines"])[:5], (path.shutdown_ns, path.run[1]),
        {"items": tail["items"], "busy_ns": tail["busy_ns"],
         "work": {w["name"]: w["count"] for w in tail["work"]},
         "lines": tail["lines"]},
        tail["busy_ns"],
        "Make fewer short-lived arrays: when the program ends the runtime releases every "
        "array, slice and partition it made, on every rank (each release a round of "
        "messages); a loop that makes thousands of temporaries (slices, masks, index "
        "results) leaves thousands to clean up. Operate on whole arrays, reuse outputs "
        "(out=, +=) and index with boolean masks of whole arrays.",
        holds=_of_category("shutdown"))]


BLOCKING_SHARE = 0.02  # of the run, on the critical path: a line's waits holding less
BLOCKING_WAITED = 0.10  # of the run: or the program waiting there this long (however little
#                         of the path the waits hold: a finding of no cost, said so)
# the operations that select by a mask, each sizing its result by the mask's count
MASK_SELECTIONS = ("BoolMaskSelect", "BoolMaskAssign")
REDUCTIONS = ("Reduce", "Sum")  # (the runtime's full reductions: they wait where they are)


def blocking(f):
    """The program stopped to wait for a value (``.item()``, ``float(a)``, ``if a:``, a
    boolean mask's selection counting its mask): nothing more is launched until every
    operation the value depends on has run.  Found with the runtime's stream, which records
    each such wait whole (``analyze.program_waits``), counted once a run.  Its share of the
    critical path, a lower bound: a wait at a time, the smaller of the runtime's latency it
    exposed and the program's launching after it, which a program not waiting would have
    overlapped (``program_waits.held_by_waits``).  A line whose waits are the program's last
    (begun after its last submission in the run: a final print, nothing follows to overlap)
    is no finding.  In a window, every figure is the window's: its waits cut to it, its
    path's pieces; a wait still going on at its end saves what lies beyond, said so."""
    from legate_prof.analyze.program_waits import (blocked_in_waits, held_by_waits,
                                                   waits_by_line, waits_going_on)
    by_line = waits_by_line(f.source)
    if not by_line:
        return []
    held, counted = held_by_waits(f.source, f.path.rows)
    blocked = blocked_in_waits(f.source, f.path.rows)
    late = waits_going_on(f.source, f.path.run[1]) if f.whole == "window" else {}
    ns = f.path.pieces()[0]
    run = max(f.run_span, 1)
    first_task = _first_task_end(f)
    out = []
    for p, x in sorted(by_line.items()):
        mine = held.get(p, np.zeros(len(ns), bool))
        latency, final = counted.get(p, (0, False))
        cost = int(ns[mine].sum())  # (what it holds: every rank's waits, as its path_ns)
        if final or (cost < BLOCKING_SHARE * run and x["waited_ns"] < BLOCKING_WAITED * run):
            continue
        what = sorted(x["for"].items(), key=lambda kv: (-kv[1], kv[0]))
        start_up = x["window"][0] < first_task
        evidence = {"waits": x["waits"], "waited_ns": x["waited_ns"],
                    "longest_ns": x["longest_ns"], "ranks": x["ranks"],
                    "waited_for": {w or "unknown": n for w, n in what},
                    "latency_on_path_ns": latency, "blocked_on_path_ns": blocked.get(p, 0)}
        if late.get(p):
            evidence["going_on_at_end"] = late[p]
        out.append(_finding(
            "blocking", _blocking_title(f, x, what, run, start_up), [f.line(p)], x["window"],
            evidence, 0, _mostly_latency(latency, cost, start_up, late.get(p, 0))
            + _blocking_remedy(f, p, what[0][0], _operations_per_read(f, x)),
            holds=lambda *a, mine=mine: mine))
    return out


def _first_task_end(f):
    """When the program's first task ended: the run's (``path_lines.Made``), for a window
    too — a window's own first task is any later one, and every wait in a window of a loop
    read as the runtime's start-up."""
    from legate_prof.analyze.path_lines import run_operations_made
    first = run_operations_made(f.source).first_task_end
    return int(first) if first is not None else int(
        f.stop[f.app].min(initial=np.iinfo(np.int64).max))


def _blocking_title(f, x, what, run, in_start_up):
    named = ", ".join(f"{w or 'a value'}" + ("'s result" if w else "") for w, _ in what[:3])
    times = "once" if x["waits"] == 1 else f"{x['waits']:,} times"
    ranks = f" on each of {x['ranks']} ranks" if x["ranks"] > 1 else ""
    start = (f"; the first began before the program's first task had run: it waited for the "
             "runtime's start-up too" if in_start_up else "")
    # (a run's count is its rank's that waited the most: "on each of 2 ranks ... in all" read
    # as both ranks' time, a review)
    total = "in all" if x["ranks"] <= 1 else "on the rank that waited most"
    return (f"the program stopped {times}{ranks} to wait for a value, "
            f"{format_ns(x['waited_ns'])} {total} ({100.0 * x['waited_ns'] / run:.1f} % of the "
            f"{f.whole}; longest {format_ns(x['longest_ns'])}{start}): {named}")


def _mostly_latency(latency, cost, in_start_up, late=0):
    """Why a long wait costs the run little: the runtime's latency it exposed could only be
    overlapped with the program's launching after it, that much and no more is counted; in
    a window, ``late`` waits still went on at its end: what they save lies beyond it."""
    them = "it" if late == 1 else "them"
    beyond = (f" {late:,} of these waits still went on at the window's end: what the "
              f"program launched after {them} lies beyond the window and counts nothing here "
              f"(a window reaching past {them} counts it)." if late else "")
    if cost >= latency or latency <= 0:  # (the window's end still said: a review)
        return beyond.lstrip() + (" " if beyond else "")
    return (f"Of the runtime's latency these waits exposed on the critical path "
            f"({format_ns(latency)}{', its start-up among it' if in_start_up else ''}), "
            f"{format_ns(cost)} is theirs on the path: what the program launched after "
            "each before it waited again, which it could have launched meanwhile (a lower "
            "bound: with more operations in flight the runtime overlaps its own work too; a "
            f"profile of the changed program shows it).{beyond} ")


# operations the program launches between two reads of a value from which it reads "every
# k iterations" already (a loop's step is a few operations): advising so read as wrong to a
# review (a stencil reading a sum every 10 steps, 31 operations a read)
READ_EVERY_OPS = 10


def _operations_per_read(f, x):
    """How many operations the program launched per wait of ``x`` (a line's waits,
    ``waits_by_line``) while they went on: the runtime stream's operations begun within the
    waits' window, each rank's counted once (0: none recorded)."""
    lo, hi = x["window"]
    ops = np.count_nonzero((f.kind == ItemKind.RUNTIME_OP) & (f.start >= lo) & (f.start <= hi))
    return ops / max(x["ranks"], 1) / max(x["waits"], 1)


def _blocking_remedy(f, p, waited_for, per_read=0.0):
    """The remedy of line ``p``'s waits: a mask's selection (the line selects by a mask:
    its stream's operations say so), a full reduction (the line's own reduction waited: in
    this array runtime it returns a Python number), or a value read; where the program
    already launches ``READ_EVERY_OPS`` operations or more between two reads (``per_read``),
    not "read every k iterations", which it does."""
    ops = (f.kind == ItemKind.RUNTIME_OP) & (f.prov == p)
    names = f.m.names
    if np.isin(f.name[ops], [k for k, n in enumerate(names) if n in MASK_SELECTIONS]).any():
        return ("A boolean mask's selection (a[mask], a[mask] += v) sizes its result by "
                "counting the mask, so the program stops until the mask is computed and "
                "counted, and launches nothing meanwhile. Update under the mask without "
                "selecting: np.putmask(z, mask, z + 2.0), or for a two-way update "
                "z += np.where(mask, 2.0, -2.0).")
    if per_read >= READ_EVERY_OPS:
        return (f"The program already launches about {per_read:,.0f} operations between two "
                "of these reads (a read every few steps, not each one): reading less often "
                "would save no more than what the waits hold of the critical path, above. "
                "Where that is small, the time waited is the runtime catching up with the "
                "work launched before, not these reads.")
    if waited_for in REDUCTIONS and np.isin(
            f.name[ops], [k for k, n in enumerate(names) if n == waited_for]).any():
        return ("Here a full reduction (x.sum(), x.max(), np.any(x)) returns a Python number: "
                "legate_prof.runtime has no deferred scalar, so the program waits at the "
                "reduction itself, and nothing more is launched meanwhile. Reduce and read "
                "every k iterations rather than each one (a convergence test every 10 steps), "
                "or keep per-step results in an array and reduce it once after the loop.")
    return ("A value read into Python (.item(), float(a), int(a), if a > t:, print(a), "
            "np.count_nonzero) stops the program until every operation it depends on has "
            "run, and nothing more is launched meanwhile. Read values after the loop, or "
            "every k iterations (a convergence test); keep decisions in arrays (np.where) "
            "instead of Python's if.")


DETECTORS = (out_of_memory, tiny_tasks, runtime_overhead, advanced_indexing, temporaries,
             copy_baseline, partition_overhead, memory_pressure, message_latency, shutdown,
             warm_up, blocking)


def find_insights(profile):
    """All findings of a profile (a model, or a ``RankSet`` read rank by rank), with their
    wall-clock and processor time, by wall-clock time (an out-of-memory failure, or a crash,
    first)."""
    return insights_of_run(profile)["findings"]


def _run_latency(f):
    """The run's messages' latency (a window's source is given its run's: the clocks'
    verdict is the run's — a window's few messages read its queueing as the clocks, the
    guide's 4-rank run, 160-180 s: "clocks 19.3 ms apart", 12.4 ms in all)."""
    of_run = f.source.computed("run_message_latency")
    return of_run() if of_run is not None else f.source.message_latency()


def _path_leaves_the_ranks(f):
    """The run's ranks not read where the path stops at an event of one of them (``--ranks``
    or files left out): the findings then cover only the part of the run the path explains
    (a review read the guide's tiny tasks drop from 75 % to 0.1 % of the run with two of its
    four ranks, and nothing said why); else []."""
    from legate_prof.analyze.critical_path import stops_at
    steps = f.path.steps
    at = stops_at(f.source, steps[0]) if steps else None
    return list(at["ranks_not_given"]) if at and not at["given"] else []


def insights_of_run(profile, windowed=False):
    """{"findings": ``find_insights``, "run_ns": the run's span, "explained_ns": how much
    of it the critical path's shares give a cause (the findings' ``wall_ns`` are parts of
    it, never more in all)}; of a window (``windowed``: --start/--stop), "unjudged" too,
    where a detector saw what it could not judge there (too few: a window of a long loop;
    a whole run's lines of few short tasks are no loop)."""
    f = _Facts(profile)
    if windowed:
        f.whole = "window"
    found = [x for d in DETECTORS for x in d(f)]
    _wall_clock(found, f.path)
    _lines_on_path(found, f)
    _idle_evidence(found, f)
    found.sort(key=lambda x: (x["pattern"] not in ("out_of_memory", "crash"), -x["wall_ns"],
                              -x["processor_ns"]))
    run = f.path.run
    out = {"findings": found, "run_ns": int(run[1] - run[0]),
           "explained_ns": f.path.explained_ns,
           # (the runtime's streams read: what some patterns count from)
           "streams": bool(np.any(f.kind == ItemKind.RUNTIME_OP))}
    from legate_prof.analyze.program_waits import waits_recorded
    out["waits_recorded"] = out["streams"] and waits_recorded(f.source)
    stop = _path_leaves_the_ranks(f)
    if stop:  # (the findings of some ranks: the rest of the path is on ranks not read)
        out["ranks_not_given"] = stop
    apart = _run_latency(f).clocks_offset_ns
    if apart:  # (the run's length holds the clocks' offset: a GUI walk read mpi2_skewed's
        out["clocks_apart_ns"] = apart  # 104 s as a run the path explains)
    where = f.source.computed("run_path_where")  # (a window the run's path misses)
    if not f.path.steps and where is not None and where() is not None:
        out["run_path_where"] = where()
    elif not f.path.explained_ns:  # (no path at all: a crash's stream alone — no finding's
        for x in found:            # work is "beside the critical path", a review found)
            x["no_path"] = True
    if windowed and f.unjudged:
        out["unjudged"] = list(f.unjudged)
    return out


# findings whose pieces of the path count for them before any other's: start-up is the
# one cause of its pieces, where the runtime's overhead holds any runtime work (a review read
# the first mapping's 239 ms under "launch fewer operations")
CLAIMS_FIRST = ("warm_up",)


def _wall_clock(found, path):
    """Each finding's share of the critical path: the pieces it holds (with the gap before
    each), a piece going to the finding holding most of the path among those that hold it,
    so no time counts twice and the sum stays within the run."""
    pieces = path.pieces()
    dur = pieces[0]
    resting = path.resting_on_inference()  # (reached only through an inferred link)
    holds = [x.pop("_holds", None) for x in found]  # (None too: never in the JSON)
    masks = [h(*pieces) if h else np.zeros(len(dur), bool) for h in holds]
    taken = np.zeros(len(dur), bool)
    owner = np.full(len(dur), -1, np.int64)  # (the finding each piece counts for)
    for k in sorted(range(len(found)), key=lambda k: (found[k]["pattern"] not in CLAIMS_FIRST,
                                                      -int(dur[masks[k]].sum()))):
        mine = masks[k] & ~taken
        found[k]["wall_ns"] = int(dur[mine].sum())
        found[k]["path_ns"] = int(dur[masks[k]].sum())  # (shared ones included)
        found[k]["inferred_ns"] = int(dur[mine & resting].sum())
        taken |= mine
        owner[mine] = k
    for k, x in enumerate(found):
        x["cost_ns"] = x["wall_ns"]
        # the findings its other pieces count for, most time first: named in its words
        other = masks[k] & (owner != k) & (owner >= 0)
        by = np.bincount(owner[other], weights=np.asarray(dur, np.float64)[other],
                         minlength=len(found))
        held = np.flatnonzero(np.bincount(owner[other], minlength=len(found)))
        x["counted_under"] = [found[j]["pattern"]
                              for j in held[np.argsort(-by[held], kind="stable")].tolist()]


def _lines_on_path(found, f):
    """Each finding's lines' time on the critical path, whatever the work (their row of
    ``critical``'s split by source line): what a finding whose own work is off the path
    still counts for there."""
    ids = {}
    for k, p in enumerate(f.source.provenances):
        ids.setdefault(p, k)
    ns, _, line, _ = f.path.pieces()
    for x in found:
        mine = [ids[p] for p in x["provenance"] if p in ids]
        if x["pattern"] in LINES_ARE_CAUSES:  # (their time is the "(shutdown)" row's)
            mine = [SHUTDOWN]
        x["lines_ns"] = int(ns[np.isin(line, mine)].sum()) if mine else 0


def _idle_evidence(found, f):
    """Evidence from the idle time explained (``analyze.idle_gaps``): how long processors sat
    idle before work of the finding's lines, by what that work waited for."""
    if not any(x["provenance"] for x in found):
        return
    by_line = {r["provenance"]: r for r in f.idle["by_provenance"]}
    for x in found:
        if x["pattern"] in NO_IDLE_EVIDENCE or "other_task_time_ns" in x["evidence"]:
            continue  # (a finding of some of its lines' tasks: the idle is the lines')
        rows = [by_line[p] for p in x["provenance"] if p in by_line]
        if not rows:
            continue
        x["evidence"]["idle_before_ns"] = int(sum(r["idle_ns"] for r in rows))
        x["evidence"]["idle_waiting_for"] = {w: int(sum(r["by_wait"][w] for r in rows))
                                             for w in rows[0]["by_wait"]}


def holds_items(profile):
    """Whether the profile (a model or a ``RankSet``, maybe cut to a window) has any item."""
    return any(p.model.n_items for p in profile.item_parts())


__all__ = ["find_insights", "insights_of_run", "holds_items", "DETECTORS", "PROCESSOR_GROUPS"]
