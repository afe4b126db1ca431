"""Open whatever the user passed: Legion Prof logs (one per rank) or a bundle, into a TraceModel."""

from __future__ import annotations

import os
import sys

import numpy as np

from legate_prof.errors import ProfileError, ProfileWarning
from legate_prof.load.inputs import expand_inputs, plan_inputs, streams_left_beside
from legate_prof.model.sort_order import unique_values
from legate_prof.present.terminal import terminal_safe
from legate_prof.read.legion_log import LegionProfReader


# a text file opened alone: the words fit the command line and the window's File → Open
TEXT_ALONE = ("not a Legion Prof log but a text file (legate's console output is read with "
              "the run's .prof files: open them together, or give it as --log FILE on the "
              "command line)")


def _text_alone(path):
    """Why a text file opened alone shows nothing: a program (to record), legate's console
    output (with the run's logs), or some other text (a /etc/hosts was told to give itself
    as --log)."""
    from legate_prof.read.console_log import looks_like_legate_log, read_log_text
    if path.endswith(".py"):
        return ("is a Python program, not a profile: record one with `legate_prof record "
                f"--cpus 2 --gpus 0 {os.path.basename(path)}` (it writes legate_*.prof files), "
                "then open them")
    try:
        console = looks_like_legate_log(read_log_text(path)[:1 << 20])
    except ProfileError:
        console = False
    return TEXT_ALONE if console else "not a Legion Prof log but a text file"


def _note(msg):
    print(terminal_safe(msg), file=sys.stderr)  # (a folder's file names are a stranger's)


def load_profile(paths, progress=None, use_cache=False, stack=True, workers=None,
                 check_files=True, ranked=False, ranks=None, prepare=None, early=None,
                 partial=None):
    """Read every input and merge into one model.

    Unreadable inputs raise ProfileError only when *nothing* could be read; otherwise the
    problem goes into ``model.warnings`` and ``model.errors`` and the rest is shown.
    ``stack=False`` skips stacking lanes into rows (for statistics, diagnosis, comparisons);
    the result is not cached.  Rank files are built in parallel processes when they are big
    enough (``workers``: how many; 1 builds here; default from ``rank_workers.worker_count``).
    ``check_files=False``: no warnings about the set of files (one rank converted alone).
    ``use_cache="later"`` writes the cache entry in a thread after returning (the viewer).
    ``ranked=True``: per-rank bundles and ranks built by workers come back unmerged, as a
    ``RankSet`` (the timeline needs no merged copy); otherwise always a ``TraceModel``.
    With ``ranked`` raw logs are built unstacked too: the timeline stacks a lane when it
    first draws it (``TraceModel.stacked_lane``), and ``lanes["rows"]`` says how many rows.
    ``ranks`` (rank numbers): only those ranks — only their files are read where each file is
    one rank's (``load.rank_files``), and what holds others too is cut (``assemble.restrict``).
    ``prepare`` ("module:function"): what the workers building a ``RankSet``'s ranks also make
    of each rank's model for an analysis (``rank_workers.prepared_of``); a shortcut only.
    ``early`` ("module:function"): an analysis of the whole model begun in a forked copy while
    a model built here is finished (``early_analysis``; its answer: ``early_answer``); a
    shortcut only.
    ``partial(profile, files)``: where rank workers build a ``RankSet`` and the rest takes a
    while yet, the ranks built so far and how many rank files the whole has, once, before
    this returns (``rank_workers.partial_due``): a window shows them meanwhile (no warnings:
    the whole says them); never cached, never with ``ranks``.  Where ``partial`` also has
    ``building_again()``, that is called once when the workers' builds cannot be used (a
    worker failed or was killed, a bundle cut, a rank in two jobs) and the ranks are read
    and built again in this process, slower, before the first of them is read: the window
    says so (``building_again``), never guessing it from a progress step's words.
    """
    paths = expand_inputs([os.fspath(p) for p in paths], note=_note)
    if check_files:
        for line in streams_left_beside(paths):
            _note(line)
    if ranks is None:
        return _load(paths, progress, use_cache, stack, workers, check_files, ranked, prepare,
                     early, partial)
    from legate_prof.assemble.restrict import restrict
    from legate_prof.load.rank_files import files_of_ranks
    from legate_prof.present.ranks import format_ranks
    given = paths
    paths, notes = files_of_ranks(paths, ranks)
    if not paths:
        from legate_prof.load.rank_files import name_rank
        named = sorted({r for r in map(name_rank, given) if r is not None})
        have = (f"; the files are of rank{'s' if len(named) > 1 else ''} "
                f"{format_ranks(named)}" if named else "")
        raise ProfileError(given[0] if len(given) == 1 else f"{len(given)} inputs",
                           f"{'holds' if len(given) == 1 else 'hold'} none of the ranks asked "
                           f"for ({format_ranks(ranks)}){have}")
    # (``prepare``'s arrays still hold for a rank the restriction keeps whole: its model's
    # items are the same arrays; for one it cuts, the analysis reads the model instead)
    model = restrict(_load(paths, progress, use_cache, stack, workers, check_files, ranked,
                           prepare), ranks=ranks)
    return model.evolve(warnings=notes + list(model.warnings))


def _load(paths, progress, use_cache, stack, workers, check_files, ranked, prepare=None,
          early=None, partial=None):
    """``load_profile`` of ``paths`` (folders expanded)."""
    if use_cache:
        from legate_prof.store.cache import load_cached, wait_for_entry
        cached = load_cached(paths, note=_note)
        if cached is None and wait_for_entry(paths):  # (being written: reopened once there)
            cached = load_cached(paths, note=_note)
        if cached is not None:  # (entries are written stacked: ``bundle.stacked_layout``)
            return cached.evolve(sources=paths, errors=[])
    # (the builder imported past the cache: 15 ms of a cached first frame's 180)
    from legate_prof.assemble.model_builder import build_model
    # The one decision on stacking: a drawing of few lanes of a big profile stacks a lane
    # when it first draws it (``ranked``); a merged model read row by row is stacked at build.
    stack_now = stack and not ranked
    given = paths  # (kept under the key looked up: a log given twice was never found again)
    paths, kinds, errors, warnings = plan_inputs(paths)
    kept_as = _entry_as_read(given, kinds) if use_cache else None
    legion, n = rank_files_for_workers(paths, kinds, errors, workers)
    if n > 1:
        built = _built_by_workers(legion, paths, n, workers, stack_now, progress, ranked,
                                  prepare, partial)
        if built is not None:
            model = built.evolve(warnings=warnings + list(built.warnings))
            return _finish(model, paths, [], [], use_cache, stack, False, ranked, kept_as)
        _say_building_again(partial)
    logs, streams, texts, bundles = _read_inputs(paths, kinds, progress, errors, warnings)
    if bundles:
        if logs or streams:
            errors.append(_given_with_bundles((logs or streams)[0]))
        model = _merge_bundles(bundles, errors, ranked, warnings)
        model = model.evolve(warnings=[str(w) for w in warnings] + list(model.warnings))
    elif not logs and not streams:
        if not errors:
            if texts:
                errors.append(ProfileError(texts[0], _text_alone(texts[0])))
            else:
                raise ProfileError("<none>", "no input files")
        raise errors[0]
    else:
        if progress:
            progress(len(paths), len(paths), "building timeline")
        logs = _one_log_per_rank(logs, errors)
        from legate_prof.assemble.rank_checks import streams_of_their_runs
        streams, other_runs = streams_of_their_runs(logs, streams)
        begun = _early_analysis(early, logs)
        try:
            model = build_model(logs, warnings=[str(w) for w in warnings] + other_runs,
                                streams=streams, stack=stack_now, check_files=check_files,
                                early=begun and begun.begin)
        except BaseException:
            if begun is not None:
                begun.drop()
            raise
        if begun is not None:
            from legate_prof.load.early_analysis import keep
            keep(model, begun)
    return _finish(model, paths, errors, texts, use_cache, stack, bool(bundles), ranked,
                   kept_as)


def _built_by_workers(legion, paths, n, workers, stack, progress, ranked, prepare, partial):
    """``rank_workers.build_in_parallel`` of the logs ``legion`` in ``n`` workers (None: to
    be built here), the ranks built so far handed to ``partial`` as the whole is described
    (``paths``; no warnings: the whole says them)."""
    from legate_prof.load.rank_workers import build_in_parallel, job_bytes
    so_far = None if partial is None else (
        lambda ranks, files: partial(_described_as_built(ranks).evolve(
            sources=paths, errors=[], warnings=[]), files))
    return build_in_parallel(legion, stack, n, progress, ranked=ranked, prepare=prepare,
                             batch_bytes=job_bytes(workers), partial=so_far)


def _say_building_again(partial):
    """Tell ``partial`` (``load_profile``'s) that the workers' builds are given up and every
    rank is built again in this process, where it has ``building_again()``: a structured
    step of its own, not one of ``progress``' texts (its "reading FILE" is a file read, in
    any load)."""
    again = getattr(partial, "building_again", None)
    if again is not None:
        again()


def _described_as_built(ranks):
    """The ranks built so far (a ``RankSet``) with the processors of those ranks alone: the
    others' are described by their logs too, and their all-ranks lines counted them as idle
    (0.006 where the whole reads 0.010, a review), a truth neither of the ranks shown nor
    of the run."""
    import numpy as np
    summary = ranks.summary_model()
    keep = np.isin(np.asarray(summary.procs["rank"]),
                   sorted({int(r["rank"]) for r in summary.ranks}))
    return ranks if keep.all() else ranks.evolve(
        procs={c: np.asarray(v)[keep] for c, v in summary.procs.items()})


def _early_analysis(function, logs):
    """An ``EarlyAnalysis`` of ``function`` where one is asked for, a fork is safe and the
    machine has the memory for it (as the logs' size tells)."""
    from legate_prof.output_file import fork_is_safe
    if not function or not fork_is_safe():
        return None
    from legate_prof.load.early_analysis import EarlyAnalysis, room_for_a_copy
    if not room_for_a_copy(sum(log.byte_size for log in logs)):
        return None
    return EarlyAnalysis(function)


def _read_inputs(paths, kinds, progress, errors, warnings):
    """(Legion logs read, runtime streams read, text files, bundles) of the inputs; what
    cannot be read goes to ``errors``, what was wrong but read to ``warnings``."""
    from legate_prof.load.rank_workers import forced_workers
    from legate_prof.load.two_readers import read_each
    logs, streams, texts, bundles = [], [], [], []
    read = read_each(paths, kinds, _read_one, progress, forced_workers())
    for path in paths:
        if path not in kinds:
            continue
        try:
            kind = kinds[path]
            if kind in ("legion", "runtime"):
                got = read[path]
                if isinstance(got, ProfileError):
                    raise got
                (logs if kind == "legion" else streams).append(got)
                warnings.extend(got.warnings)
            elif kind == "bundle":
                bundles.append(path)
            elif kind == "text":
                texts.append(path)
            else:
                from legate_prof.load.inputs import other_format
                raise ProfileError(path, "not a Legion Prof log, a legate_prof bundle or a "
                                         "runtime event stream"
                                   + (f": {what}" if (what := other_format(path)) else ""))
        except ProfileError as e:
            errors.append(e)
    return logs, streams, texts, bundles


def _read_one(path, kind):
    """A Legion Prof log, or a runtime stream's columns (``StreamColumns``: made where it is
    read, a copy's hand-over the smaller), read."""
    if kind == "legion":
        return LegionProfReader(path).read()
    from legate_prof.read.runtime_stream import read_runtime_stream, stream_columns
    return stream_columns(read_runtime_stream(path))


def rank_files_for_workers(paths, kinds, errors, workers=None):
    """(the Legion Prof logs, how many worker processes to build them with): more than one only
    when every input is a readable log and they are big enough (``rank_workers``).  A run's
    logs with their runtime streams are built in one process: built one rank per worker
    (each with its stream) they were slower, not faster — the guide's 4-rank run: stats
    3.4 -> 8.9 s, critical 5.3 -> 8.3 s, its ranks then linked rank by rank (docs/performance.md)."""
    legion = [p for p in paths if kinds.get(p) == "legion"]
    if errors or len(legion) != len(paths):
        return legion, 1
    from legate_prof.load.rank_workers import worker_count
    return legion, worker_count(legion, sum(os.path.getsize(p) for p in legion), workers)


def _merge_bundles(paths, errors, ranked, warnings):
    """Per-rank bundles (``convert`` run on each rank's file) as one profile: merged, or
    (``ranked``) a ``RankSet`` of them, each mapped.  A bundle holding a rank an earlier one
    holds (another run's, or the same rank converted twice) is left out with an error; a
    damaged one has its rank read from its logs where they lie beside it (``warnings``
    says so), else it is left out and the ranks missing are said."""
    from legate_prof.assemble.rank_checks import cross_file_problems
    from legate_prof.assemble.rank_merge import CannotMerge, merge_opened
    from legate_prof.store.bundle_file import read_bundle, room_for_open_files
    ranked = ranked and room_for_open_files(len(paths))
    found = _open_bundles(paths, errors, ranked, warnings)
    order = same_run_first(found, lambda f: min(f[1], default=None), lambda f: f[2])
    keep, held = set(), {}
    for k in order:
        p, held_here = found[k][0], found[k][1]
        again = sorted(held_here & set(held))
        if again:
            errors.append(ProfileError(p, f"rank {', '.join(map(str, again[:5]))} again (also "
                                          f"in {os.path.basename(held[again[0]])}): a bundle "
                                          "of another run? Left out"))
            continue
        held.update((r, p) for r in held_here)
        keep.add(k)
    kept = [f for k, f in enumerate(found) if k in keep]
    del found

    def opened(i):  # (mapped where kept open, or built from logs; else mapped again)
        return kept[i][3] if kept[i][3] is not None else read_bundle(kept[i][0], check=False)
    if not kept:
        raise errors[0]
    if len(kept) == 1:
        m = opened(0)  # (the others damaged or left out: which ranks are missing is said)
        lines = [w for w in cross_file_problems(m.ranks) if w not in m.warnings] \
            if len(paths) > 1 else []
        return m.evolve(warnings=list(m.warnings) + lines) if lines else m
    try:
        if ranked:
            from legate_prof.assemble.rank_set import RankSet
            return RankSet([opened(i) for i in range(len(kept))])
        return merge_opened(len(kept), opened)
    except CannotMerge:
        first = kept[0][0]
        errors.append(ProfileError(kept[1][0], "holds ranks that another bundle holds too "
                                               f"({first}); opened {first} alone"))
        return opened(0)


def _open_bundles(paths, errors, ranked, warnings):
    """[(path, ranks it holds, its clock's start, the model where kept open or built)] of
    the bundles that open: each checked once here (then opened one at a time to merge, unless
    ``ranked``); a damaged one's rank built from its logs beside it where they lie there."""
    from legate_prof.store.bundle_file import read_bundle
    found = []
    for p in paths:
        try:
            m, built = read_bundle(p), False
        except ProfileError as e:
            m, built = _logs_instead(p, e, errors, warnings), True
            if m is None:
                continue
        held_here = set(unique_values(np.asarray(m.lanes["rank"])).tolist()) | {
            int(r["rank"]) for r in m.ranks}
        zt = min((int(r["zero_time"]) for r in m.ranks if r.get("zero_time")), default=None)
        found.append((p, held_here, zt, m if ranked or built else None))
        del m  # (a mapped bundle keeps its file open: only a RankSet keeps them all)
    return found


def _logs_instead(bundle, damage, errors, warnings):
    """The model of a damaged bundle's rank built from the logs it was converted from, where
    they lie beside it as they were (one line says so; a rank cut short by a bundle cut short
    was simply missing), or None (the bundle's error kept)."""
    from legate_prof.load.inputs import sniff
    from legate_prof.load.rank_files import logs_of_bundle
    try:  # (logs only: a bundle named as a log, damaged too, named itself again and again)
        logs = logs_of_bundle(bundle)
        kinds = [sniff(q) for q in logs]
        m = _load(logs, None, False, True, 1, False, False) if "legion" in kinds and set(
            kinds) <= {"legion", "runtime"} else None
    except ProfileError:
        m = None
    if m is None:
        errors.append(damage)
        return None
    for e in m.errors:  # (a stream beside it unreadable: said, the log kept)
        path = next((q for q in logs if e.startswith(q + ": ")), None)
        errors.append(ProfileError(path, e[len(path) + 2:]) if path else ProfileError(bundle, e))
    names = ", ".join(os.path.basename(q) for q in logs[:3]) + (" …" if len(logs) > 3 else "")
    warnings.append(f"warning: {bundle}: {damage.problem.removesuffix('; convert again')}; "
                    f"read from {names} beside it instead (convert again to reopen fast)")
    return m.evolve(errors=[])


def _given_with_bundles(log):
    """The error of a log among bundles, naming it (not a sound bundle beside it: a log
    named ``legate_1.lpbundle`` blamed ``legate_0.lpbundle``)."""
    odd = getattr(log, "path", None) or str(log)
    return ProfileError(odd, ("is a Legion Prof log named as a bundle; "
                              if odd.endswith(".lpbundle") else "is a log given with bundles; ")
                        + "bundles open with other bundles only (convert the .prof files "
                          "too), so it is left out")


def _one_log_per_rank(logs, errors):
    """One log of each rank.  Legate writes one per rank, so a second is another run's: its
    items would land on the first one's lanes.  Of a rank's logs the one of the run most
    files are of is kept (``same_run_first``; the first given where that does not tell), the
    others are left out with an error, as a second bundle of a rank is."""
    def rank_of(log):
        md = log.table("MachineDesc")
        return int(md[0]["node_id"]) if len(md) else None

    def zero_time(log):
        zt = log.table("ZeroTime")
        return int(zt["zero_time"][0]) if len(zt) else None
    order = _longest_copy_first(same_run_first(logs, rank_of, zero_time), logs, rank_of,
                                zero_time)
    seen, keep = {}, set()
    for k in order:
        rank = rank_of(logs[k])
        if rank in seen:
            first = seen[rank]
            other = first.path  # (named by its folder too where it lies in another)
            if os.path.dirname(other) == os.path.dirname(logs[k].path):
                other = os.path.basename(other)
            errors.append(ProfileError(logs[k].path, (
                f"rank {rank} again, of the same run (its clock started as {other}'s, which "
                "is shown and holds more): a copy cut short? Left out"
                if zero_time(first) == zero_time(logs[k]) is not None else
                f"rank {rank} again (also in {other}, which is shown): a file of another "
                "run? Left out; open one run at a time, or compare runs with `legate_prof "
                "compare`")))
            continue
        if rank is not None:
            seen[rank] = logs[k]
        keep.add(k)
    return [log for k, log in enumerate(logs) if k in keep]


def _longest_copy_first(order, logs, rank_of, zero_time):
    """``order``, where a rank's logs are of one run (their clocks started alike), the one
    holding the most records first: a copy cut short beside the whole log was shown, the
    whole one called "another run" (a review)."""
    def size(k):
        return sum(len(t) for t in logs[k].tables.values())
    by_rank = {}
    for k in order:
        by_rank.setdefault(rank_of(logs[k]), []).append(k)
    out = []
    for rank, ks in by_rank.items():
        if rank is not None and len(ks) > 1:
            same = [k for k in ks if zero_time(logs[k]) == zero_time(logs[ks[0]])]
            best = max(same, key=size)  # (alike: the first, as ``order`` has it)
            ks = [best] + [k for k in ks if k != best]
        out += ks
    return out


def same_run_first(inputs, rank_of, zero_time):
    """The indices of ``inputs``, those of a rank given more than once ordered so that the one
    whose clock started nearest the others' (the median ``ZeroTime`` of the ranks given once)
    comes first; where no other rank tells, the first given (two runs' rank 0 kept the
    second)."""
    count = {}
    for x in inputs:
        count[rank_of(x)] = count.get(rank_of(x), 0) + 1
    zts = sorted(z for x in inputs if count[rank_of(x)] == 1
                 for z in (zero_time(x),) if z is not None)
    if not zts:
        return list(range(len(inputs)))
    mid = zts[len(zts) // 2]

    def key(k):
        z = zero_time(inputs[k])
        twice = count[rank_of(inputs[k])] > 1 and z is not None
        return (abs(z - mid) if twice else 0, k)
    return sorted(range(len(inputs)), key=key)


def _entry_as_read(paths, kinds):
    """The cache entry of ``paths`` as they are before they are read (``store.cache``'s
    key: their names, times and contents), or None (bundles, kept as they are; a file that
    cannot be keyed).  The entry written later (after the answer, or in a thread) is this
    one: keyed when it is written, files changed meanwhile (the run recorded again into the
    same folder) had the old run's timeline kept under the new files' key, and the next
    command showed it."""
    if any(k == "bundle" for k in kinds.values()):
        return None
    from legate_prof.store.cache import entry_path
    try:
        return entry_path(paths)
    except (OSError, ProfileError):
        return None


def _finish(model, paths, errors, texts, use_cache, stack, from_bundle, ranked=False,
            kept_as=None):
    """Attach console logs (an OOM report), record sources and errors, cache (as
    ``kept_as``: ``_entry_as_read``); stack the rows of a model built unstacked (a cache
    entry) for a caller that reads them."""
    from legate_prof.assemble.out_of_memory import attach_oom_report
    if texts:  # (the report's instances join the items, on rows of their own: one model)
        model = model.merged_model().as_stacked()
    elif stack and not ranked and not model.stacked:
        model = model.as_stacked()
    for t in texts:
        try:
            model, _ = attach_oom_report(model, t)
        except ProfileError as e:
            errors.append(e)
    model = model.evolve(sources=paths, errors=[str(e) for e in errors])
    from legate_prof.read.runtime_stream import of_a_live_run
    if use_cache and (stack or use_cache == "after") and not errors and not from_bundle \
            and not of_a_live_run(model.warnings) and _whole(model):  # (a live run's: it
        # will change; ranks a worker handed over in part, ``prepare``'s: not the timeline)
        if use_cache == "later":  # the viewer: show the timeline first, write meanwhile
            _write_later(model, paths, kept_as)
        elif use_cache == "after":  # a command: its answer first (``store_after_answer``)
            _AFTER.append((model, paths, kept_as))
        else:
            _store(model, paths, entry=kept_as)
    return model


def _whole(model):
    """Whether every item column of ``model`` (a model or a ``RankSet``) is there."""
    from legate_prof.model.trace_model import ITEM_COLUMNS
    return all(set(ITEM_COLUMNS) <= set(p.model.items) for p in model.item_parts())


_AFTER = []  # (model, its inputs, its entry): cache entries written once the answer is out


def store_after_answer(then=None):
    """Write the cache entries of what a command loaded with ``use_cache="after"``, in a
    forked copy of the process that outlives it: the command has printed its answer and
    ends at once; the next command on the same run (another question: ``insights`` after
    ``stats``) reopens the run's timeline from the entry instead of building it again (the
    guide's N = 10 M example: 0.01 s against ~3 s).  The copy reads nothing and writes
    nothing the user sees (its standard streams go nowhere); an entry appears whole or not
    at all (``store_cached``).  Where no copy can be made safely (another thread runs, whose
    locks a fork would copy; no ``fork``), no entry is written: a command never waits for
    one.  ``then()``: what the copy does once the entries are written (the command line
    answers ahead the questions a user asks next: ``cli.answers.answer_ahead``).  Returns
    the copy's process id, or None."""
    import threading
    from legate_prof.output_file import written_in_a_copy
    from legate_prof.store.cache import cache_dir
    queued, _AFTER[:] = list(_AFTER), []
    if not queued or threading.active_count() != 1 or cache_dir() is None:
        return None  # (no cache, LEGATE_PROF_CACHE_DIR='': no copy at all)

    def store():
        kept = True
        for model, paths, entry in queued:  # (every entry written: else no answer ahead)
            kept = _store(model, paths, entry=entry) is not None and kept
        del queued[:]  # (the built timeline: what follows reads the entry)
        if then is not None and kept:  # (never built from the logs a second time)
            then()
    pid = written_in_a_copy(store, quiet=True)
    if pid:
        _WRITERS.append(pid)
    return pid


_WRITERS = []  # the copies ``store_after_answer`` made that may still write


def wait_for_writers(timeout_s=60.0):
    """Wait for the copies this process made to keep a command's timeline (a process that
    runs commands one after the other in itself — a test session — before what must not
    share the machine with them: a recording whose timing is measured).  True when none is
    left."""
    import time
    end = time.monotonic() + timeout_s
    while _WRITERS:
        pid = _WRITERS[0]
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _WRITERS.pop(0)
        elif time.monotonic() > end:
            return False
        else:
            time.sleep(0.02)
    return True


_LATER = []  # (writer thread, its stop event) of the cache entries written "later"
STOP_WAIT_S = 0.1  # how long a process that ends waits for its writers to give up


def _write_later(model, paths, entry=None):
    """The cache entry written in a thread while the caller goes on (the viewer shows the
    timeline).  A process that ends meanwhile (the window closed) stops it
    (``stop_cache_writers``): the entry is dropped, never left half-written, and the
    process does not wait for it."""
    import atexit
    import threading
    stop = threading.Event()
    writer = threading.Thread(target=_store, args=(model, paths, stop, entry),
                              name="legate_prof cache", daemon=False)
    _LATER[:] = [w for w in _LATER if w[0].is_alive()] + [(writer, stop)]
    writer.start()
    atexit.unregister(stop_cache_writers)  # (once, however many entries)
    atexit.register(stop_cache_writers)


def stop_cache_writers(wait_s=STOP_WAIT_S):
    """Stop the cache entries being written "later": each writer ends at its next piece and
    removes its temporary file; waits at most ``wait_s`` in all.  True when none is left."""
    import time
    if all(stop.is_set() for _, stop in _LATER):
        wait_s = 0.0  # (stopped before: they had their time)
    deadline = time.monotonic() + wait_s
    for _, stop in _LATER:
        stop.set()
    for writer, _ in _LATER:
        writer.join(max(deadline - time.monotonic(), 0.0))
    return not any(w.is_alive() for w, _ in _LATER)


def _store(model, paths, stop=None, entry=None):
    """Write the cache entry of a model, or of a source (ranks are written one by one:
    ``store.ranks_bundle``); ``stop`` (an event): written in a thread of its own, that
    gives way to the process's others (the viewer's window) and ends when it is set.
    Returns the entry written, or None."""
    from legate_prof.store.bundle_file import WriteStopped
    from legate_prof.store.cache import store_cached
    if stop is not None:
        from legate_prof.load.rank_workers import lower_this_thread
        lower_this_thread()
    try:
        return store_cached(model, paths, note=_note,
                            stop=None if stop is None else stop.is_set, entry=entry)
    except WriteStopped:
        pass  # (the process is ending: the entry is written by a later one)
    except (OSError, ProfileError) as e:
        _note(f"legate_prof: note: could not cache the built timeline ({e})")
    except Exception as e:  # noqa: BLE001 - a cache is never worth a traceback
        _note(f"legate_prof: note: could not cache the built timeline "
              f"({e.__class__.__name__}: {e})")


__all__ = ["load_profile", "ProfileError", "ProfileWarning"]
