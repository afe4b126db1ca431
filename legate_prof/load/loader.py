"""Open whatever the user passed: Legion Prof logs (one per rank) or a bundle, into a TraceModel."""

from __future__ import annotations

import hashlib
import os
import stat
import sys

from legate_prof.errors import ProfileError, ProfileWarning
from legate_prof.read.legion_log import MAGIC, LegionProfReader


def _check_regular(path):
    """A FIFO would block forever and a device never ends: refuse all but regular files."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise ProfileError(path, e.strerror or str(e)) from None
    if stat.S_ISDIR(st.st_mode):
        raise ProfileError(path, "is a directory; pass the legate_*.prof files in it")
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device or socket"
        raise ProfileError(path, f"is {kind}, not a file")
    if st.st_size == 0:
        raise ProfileError(path, "is empty (0 bytes)")
    return st


def sniff(path) -> str:
    """'legion', 'bundle', 'runtime', 'text' or 'unknown' from a file's first bytes."""
    _check_regular(path)
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError as e:
        raise ProfileError(path, e.strerror or str(e)) from None
    if head.startswith(MAGIC) or head[:2] == b"\x1f\x8b":
        return "legion"
    from legate_prof.store.bundle import BUNDLE_MAGIC
    if head.startswith(BUNDLE_MAGIC):
        return "bundle"
    from legate_prof.read.runtime_stream import STREAM_MAGIC
    if head.startswith(STREAM_MAGIC):
        return "runtime"
    try:
        head.decode("utf-8")
        return "text"
    except UnicodeDecodeError:
        return "unknown"


def _fingerprint(path, st):
    """Size and a hash of the first and last 64 KiB: equal for copies of one file."""
    h = hashlib.sha256(str(st.st_size).encode())
    with open(path, "rb") as f:
        h.update(f.read(1 << 16))
        if st.st_size > 1 << 17:
            f.seek(-(1 << 16), os.SEEK_END)
            h.update(f.read(1 << 16))
    return h.hexdigest()


def _distinct(paths):
    """The inputs without repeats (the same file twice, or two copies of it), and warnings."""
    seen, out, warnings = {}, [], []
    for p in paths:
        try:
            st = _check_regular(p)
            key = _fingerprint(p, st)
        except (ProfileError, OSError):
            out.append(p)  # reported when read
            continue
        if key in seen:
            same = os.path.samefile(p, seen[key])
            warnings.append(f"warning: {p}: {'the same file as' if same else 'a copy of'} "
                            f"{seen[key]}; read once")
            continue
        seen[key] = p
        out.append(p)
    return out, warnings


def _note(msg):
    print(msg, file=sys.stderr)


def load_profile(paths, progress=None, use_cache=False, stack=True, workers=None,
                 check_files=True, ranked=False):
    """Read every input and merge into one model.

    Unreadable inputs raise ProfileError only when *nothing* could be read; otherwise the
    problem goes into ``model.warnings`` and ``model.errors`` and the rest is shown.
    ``stack=False`` skips stacking lanes into rows (for statistics, diagnosis, comparisons);
    the result is not cached.  Rank files are built in parallel processes when they are big
    enough (``workers``: how many; 1 builds here; default from ``rank_parallel.worker_count``).
    ``check_files=False``: no warnings about the set of files (one rank converted alone).
    ``use_cache="later"`` writes the cache entry in a thread after returning (the viewer).
    ``ranked=True``: per-rank bundles and ranks built by workers come back unmerged, as a
    ``RankedSource`` (the timeline needs no merged copy); otherwise always a ``TraceModel``.
    With ``ranked`` raw logs are built unstacked too: the timeline stacks a lane when it
    first draws it (``TraceModel.stacked_lane``), and ``lanes["rows"]`` says how many rows.
    """
    from legate_prof.assemble.model_builder import build_model
    paths = expand_inputs([os.fspath(p) for p in paths], note=_note)
    if use_cache:
        from legate_prof.store.cache import load_cached
        cached = load_cached(paths, note=_note)
        if cached is not None:  # (entries are written stacked: ``bundle.stacked_layout``)
            return cached.evolve(sources=paths, errors=[])
    logs, streams, texts, bundles = [], [], [], []
    paths, kinds, errors, warnings = plan_inputs(paths)
    legion, n = rank_files_for_workers(paths, kinds, errors, workers)
    if n > 1:
        from legate_prof.load.rank_workers import build_in_parallel
        built = build_in_parallel(legion, stack and not ranked, n, progress, ranked=ranked)
        if built is not None:
            model = built.evolve(warnings=warnings + list(built.warnings))
            return _finish(model, paths, [], [], use_cache, stack, False, ranked)
    for i, path in enumerate(paths):
        if path not in kinds:
            continue
        if progress:
            progress(i, len(paths), f"reading {os.path.basename(path)}")
        try:
            kind = kinds[path]
            if kind == "legion":
                log = LegionProfReader(path).read()
                logs.append(log)
                warnings.extend(log.warnings)
            elif kind == "bundle":
                bundles.append(path)
            elif kind == "runtime":
                from legate_prof.read.runtime_stream import read_runtime_stream
                s = read_runtime_stream(path)
                streams.append(s)
                warnings.extend(s.warnings)
            elif kind == "text":
                texts.append(path)
            else:
                raise ProfileError(path, "not a Legion Prof log, a legate_prof bundle or a "
                                         "runtime event stream")
        except ProfileError as e:
            errors.append(e)
    if bundles:
        if logs or streams:
            errors.append(ProfileError(bundles[0], "bundles open with other bundles only "
                                                   "(convert the .prof files too)"))
        model = _merge_bundles(bundles, errors, ranked)
    elif not logs and not streams:
        if not errors:
            if texts:
                errors.append(ProfileError(texts[0], "not a Legion Prof log (a text file; pass legate's console output with --log)"))
            else:
                raise ProfileError("<none>", "no input files")
        raise errors[0]
    else:
        if progress:
            progress(len(paths), len(paths), "building timeline")
        logs = _one_log_per_rank(logs, errors)
        model = build_model(logs, warnings=[str(w) for w in warnings], streams=streams,
                            stack=stack and not ranked, check_files=check_files)
    return _finish(model, paths, errors, texts, use_cache, stack, bool(bundles), ranked)


def plan_inputs(paths):
    """(the inputs without repeats, the kind of each readable one — see ``sniff`` —, errors of
    the unreadable ones, warnings about repeats)."""
    paths, warnings = _distinct(paths)
    kinds, errors = {}, []
    for path in paths:
        try:
            kinds[path] = sniff(path)
        except ProfileError as e:
            errors.append(e)
    return paths, kinds, errors, warnings


def rank_files_for_workers(paths, kinds, errors, workers=None):
    """(the Legion Prof logs, how many worker processes to build them with): more than one only
    when every input is a readable log and they are big enough (``rank_parallel``)."""
    legion = [p for p in paths if kinds.get(p) == "legion"]
    if errors or len(legion) != len(paths):
        return legion, 1
    from legate_prof.load.rank_workers import worker_count
    return legion, worker_count(legion, sum(os.path.getsize(p) for p in legion), workers)


def _merge_bundles(paths, errors, ranked=False):
    """Per-rank bundles (``convert`` run on each rank's file) as one profile: merged, or
    (``ranked``) a ``RankedSource`` over them, each mapped."""
    from legate_prof.store.bundle import read_bundle
    from legate_prof.assemble.rank_merge import CannotMerge, merge_opened
    ranked = ranked and room_for_open_files(len(paths))
    read, opened = [], []
    for p in paths:  # each checked once here, then opened one at a time to merge
        try:
            m = read_bundle(p)
            read.append(p)
            if ranked or not opened:
                opened.append(m)
        except ProfileError as e:
            errors.append(e)
    if not read:
        raise errors[0]
    if len(read) == 1:
        return opened[0]
    try:
        if ranked:
            from legate_prof.query.ranked_source import RankedSource
            return RankedSource(opened)
        del opened
        return merge_opened(len(read), lambda i: read_bundle(read[i], check=False))
    except CannotMerge:
        errors.append(ProfileError(read[1], "holds ranks that another bundle holds too "
                                            f"({read[0]}); opened {read[0]} alone"))
        return read_bundle(read[0])


def room_for_open_files(n):
    """Whether ``n`` more files can stay open at once — a mapped bundle keeps its file open —,
    raising this process's soft limit toward the hard one where that makes room (it is 1024 on
    many Linux desktops, 256 on macOS).  Where there is no room, callers merge instead, which
    keeps one file open at a time."""
    try:
        import resource
    except ImportError:  # Windows: no such limit
        return True
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = n + 256  # and what else the process has open
    if soft == resource.RLIM_INFINITY or soft >= need:
        return True
    if hard != resource.RLIM_INFINITY and hard < need:
        return False
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    except (ValueError, OSError):
        return False
    return True


def expand_inputs(paths, logs_only=False, note=None):
    """Inputs with each directory replaced by the profile files in it: its bundles
    (``*.lpbundle``) if it has any and none of its Legion Prof logs (``*.prof``,
    ``*.prof.gz``) is newer than they are, else its logs (``logs_only``: always; a rerun
    that left old bundles beside new logs is read from the logs, and ``note`` says so)."""
    out = []
    for p in paths:
        if not os.path.isdir(p):
            out.append(p)
            continue
        names = sorted(os.listdir(p), key=_natural)
        logs = [os.path.join(p, n) for n in names if n.endswith((".prof", ".prof.gz"))]
        bundles = [] if logs_only else [os.path.join(p, n) for n in names
                                        if n.endswith(".lpbundle")]
        if bundles and logs:
            why = ("are newer than its .lpbundle files"
                   if max(map(_mtime, logs)) > min(map(_mtime, bundles))
                   else None if _converted_from(bundles, logs)
                   else "are not the ones its .lpbundle files were converted from")
            if why:
                if note:
                    note(f"legate_prof: note: {p}: its .prof logs {why}; reading the logs "
                         "(convert --per-rank again to reopen fast)")
                bundles = []
        found = bundles or logs
        if not found:
            raise ProfileError(p, "is a directory with no .prof or .lpbundle files in it")
        out.extend(found)
    return out


def _converted_from(bundles, logs):
    """Whether every log is one the bundles say they were converted from, of the same size
    (bundles that do not say: the times decide alone)."""
    from legate_prof.store.bundle import bundle_sources
    sizes = {}
    for b in bundles:
        said = bundle_sources(b)
        if said is None:
            return True
        sizes.update(said)
    for log in logs:
        try:
            if sizes.get(os.path.basename(log)) != os.stat(log).st_size:
                return False
        except OSError:
            return False
    return True


def _mtime(path):
    try:
        return os.stat(path).st_mtime
    except OSError:  # gone meanwhile: reading it will say so
        return 0.0


def _natural(s):
    import re
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def _one_log_per_rank(logs, errors):
    """The first log of each rank.  Legate writes one per rank, so a second is another run's:
    its items would land on the first one's lanes.  It is left out with an error, as a second
    bundle of a rank is."""
    seen, kept = {}, []
    for log in logs:
        md = log.table("MachineDesc")
        rank = int(md[0]["node_id"]) if len(md) else None
        if rank in seen:
            errors.append(ProfileError(
                log.path, f"rank {rank} again (also in {os.path.basename(seen[rank])}): a file "
                          "of another run? Left out; open one run at a time, or compare runs "
                          "with `legate_prof compare`"))
            continue
        if rank is not None:
            seen[rank] = log.path
        kept.append(log)
    return kept


def _finish(model, paths, errors, texts, use_cache, stack, from_bundle, ranked=False):
    """Attach console logs (an OOM report), record sources and errors, cache; stack the
    rows of a model built unstacked (a cache entry) for a caller that reads them."""
    from legate_prof.assemble.oom_report import attach_oom_report
    from legate_prof.query.source import as_model
    if texts:  # (the report's instances join the items, on rows of their own: one model)
        model = as_model(model).as_stacked()
    elif stack and not ranked and not model.stacked:
        model = model.as_stacked()
    for t in texts:
        try:
            model, _ = attach_oom_report(model, t)
        except ProfileError as e:
            errors.append(e)
    model = model.evolve(sources=paths, errors=[str(e) for e in errors])
    if use_cache and stack and not errors and not from_bundle:
        if use_cache == "later":  # the viewer: show the timeline first, write meanwhile
            import atexit
            import threading
            writer = threading.Thread(target=_store, args=(model, paths),
                                      name="legate_prof cache", daemon=False)
            writer.start()
            # `view` closed early ends with os._exit after the atexit handlers: the entry is
            # finished first (else it is lost, and its temporary file stays in the cache)
            atexit.register(writer.join)
        else:
            _store(model, paths)
    return model


def _store(model, paths):
    """Write the cache entry of a model, or of a source (ranks are written one by one:
    ``merged_bundle``)."""
    from legate_prof.store.cache import store_cached
    try:
        store_cached(model, paths, note=_note)
    except (OSError, ProfileError) as e:
        _note(f"legate_prof: note: could not cache the built timeline ({e})")
    except Exception as e:  # noqa: BLE001 - a cache is never worth a traceback
        _note(f"legate_prof: note: could not cache the built timeline "
              f"({e.__class__.__name__}: {e})")


__all__ = ["load_profile", "sniff", "ProfileError", "ProfileWarning"]
